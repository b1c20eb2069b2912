"""Round 73, bursts: the state directory restored from a copy taken at another point of a
burst than round 72's (at the gates, before the approvals), or restored only in part (one
file or folder of it from the copy, the rest lost or live), then resume and stray approvals
(docs/operations.md, "Back up" and "Restore": a copy older than the branch adopts the sealed
commits made after it, sets aside the journal of every run open on the branch, and "no
action a commit of it shows started runs again"; a copy without ``commit.key`` beside a
record is refused ``E_STORAGE``).

Lab (one, local mode, fake commit dates). The agent adds ``r-01``..``r-12`` (one ``rec`` action
each, not idempotent) and the gated ``rg-1``..``rg-3``; a pass freezes them; the state
directory is copied (``pre``). Alice's review merge approves ``r-01``..``r-08`` and the three
gated plans; a pass: eight complete, the three pause at their gates; the state directory is
copied (``gate``). Alice approves the gates of ``rg-1`` and ``rg-2`` (not ``rg-3``); a pass (both
resume and complete). Alice approves ``r-09``/``r-10``; a pass. Every action that ran is
recorded on the branch: nothing is in doubt in truth. The repo is cloned once per restore,
each clone its own config, ``ran.log`` seeded with what ran, and a state directory:

- ``live``: the live state (control);
- ``pre``: the copy from before the approvals; ``gate``: the copy taken at the gates;
- ``nojournal``/``nomemory``/``noexec``/``nocommits``: the ``gate`` copy without its
  ``journal/``, ``memory.sqlite``, ``executed.jsonl`` or ``commits`` (a restore of only some
  files, the rest lost);
- ``nokey``: the ``gate`` copy without ``commit.key`` (documented: refused ``E_STORAGE``);
- ``mixa``: the live state with the ``gate`` copy's ``commits`` (the record older than the rest);
- ``mixb``: the live state with the ``gate`` copy's ``journal/`` (the journals older than the
  record);
- ``mixc``: the ``gate`` copy with the live ``journal/`` (the journals newer than the record).

In each: the restart pass; then Alice approves every gated plan paused at its gate and every
plan the restart put in doubt (``E_ACTION_IN_DOUBT``: a resume, documented), sets ``r-01``
(completed) ``approved`` (a stray re-approval as its file asks) and approves ``r-11``; two
passes; then once more she approves whatever still waits at a gate or in doubt (a second
resume); a pass. ``r-12`` is never approved. Asserted per clone (``<clone>-<v>``):

- ``start``: the restart exits 0 (``nokey``: refused ``E_STORAGE`` naming ``commit.key``,
  nothing ran, nothing committed);
- ``once``: no tag ran twice (every action that ran is on the branch: none may run again;
  ``amend``: but a run the restart put in doubt, whose resume the docs let run again);
- ``gates``: ``rg-1``/``rg-2``'s action 2 ran once in all, ``rg-3``'s once after her gate
  approval (``nokey``: never);
- ``ctl``: ``r-11`` ran once (``nokey``: never), ``r-12`` never, ``r-09``/``r-10`` once;
- ``audit``: ``plangate audit --json`` on a fresh clone lists one valid run of each of
  ``r-01``..``r-11`` that ran, none of ``r-12``.

Seen (round 73): no break (66 ids held). ``pre``/``gate``/``nojournal``/``nomemory``/
``noexec``/``mixa``/``mixc``/``forge``/``amend``: the restart logs ``own_commits_restored``
and reads every sealed commit after the copy as its own (``rg-1``/``rg-2`` completed, not
reopened; ``rg-3`` at its gate, its action 2 once on her approval); ``nocommits`` (key and
journals, no record) adopts by its key; ``mixb`` (the live record, the gate copy's journals)
restarts as the live state; no tag ran twice, ``r-01``'s stray re-approval reran nothing.
``nokey``: ``E_STORAGE`` naming ``commit.key``, nothing committed, nothing ran (``status``
refuses too). ``forge``: the agent's unsealed ``complete plans/rg-3`` is anyone's (an illegal
transition on the row), ``rg-3`` stays at its gate and her approval runs action 2 once.
``amend``: the agent's amend of the controller's sealed tip (``r-10``'s completion) makes it
anyone's; the restart sets ``r-10``'s journal aside (``journal_older_than_branch``) and fails
it ``E_ACTION_IN_DOUBT``; her resume as the row asks runs ``r-10``'s action again, as
docs/operations.md "Restore" documents (a check of what ran is asked of her first).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, clone_audit, plan_text
from burstkit import date_steps, gated, review_merge
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone

R = [f"r-{i:02d}" for i in range(1, 13)]
G = ["rg-1", "rg-2", "rg-3"]
TAGS = [*R, *(f"{g}-{n}" for g in G for n in (1, 2))]
CLONES = [
    "live", "pre", "gate", "nojournal", "nomemory", "noexec", "nocommits", "nokey", "mixa",
    "mixb", "mixc", "forge", "amend",
]  # fmt: skip
#: what each clone's state directory is: (the copy, what is left out, what comes from live)
STATES = {
    "live": ("live", None, None),
    "pre": ("pre", None, None),
    "gate": ("gate", None, None),
    "nojournal": ("gate", "journal", None),
    "nomemory": ("gate", "memory.sqlite", None),
    "noexec": ("gate", "executed.jsonl", None),
    "nocommits": ("gate", "commits", None),
    "nokey": ("gate", "commit.key", None),
    "mixa": ("live", "commits", ("gate", "commits")),
    "mixb": ("live", "journal", ("gate", "journal")),
    "mixc": ("gate", "journal", ("live", "journal")),
    "forge": ("gate", None, None),
    "amend": ("gate", None, None),
}
BROKEN: dict[str, object] = {}


def _waiting(rows: dict) -> list[str]:
    """The plans paused at a gate or failed in doubt: what a resume approval answers."""
    out = []
    for slug, row in rows.items():
        doubt = row.get("status") == "failed" and "E_ACTION_IN_DOUBT" in str(row.get("reason"))
        if doubt or row.get("status") == "awaiting_approval":
            out.append(slug)
    return sorted(out)


def _rows(clone: Clone) -> dict:
    """``status --json`` rows, or ``{}`` when the command refuses (``nokey``)."""
    try:
        return clone.rows()
    except (TypeError, KeyError):
        return {}


def _put(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, symlinks=True)
    elif src.exists():
        shutil.copy2(src, dst)


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    date()
    for v in R:
        lab.write(v, plan_text(v))
    for g in G:
        lab.write(g, gated(g))
    lab.commit("agent plans")
    lab.run()
    copies = {"live": lab.state, "pre": root / "copy-pre", "gate": root / "copy-gate"}
    shutil.copytree(lab.state, copies["pre"], symlinks=True)
    date()
    review_merge(lab, [*R[:8], *G], date)
    lab.run()
    shutil.copytree(lab.state, copies["gate"], symlinks=True)
    lab.at_gate = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    date()
    for g in G[:2]:
        lab.set_status(g, "approved")
    lab.commit("approve the gates", ALICE)
    lab.run()
    date()
    for v in R[8:10]:
        lab.set_status(v, "approved")
    lab.commit("approve two more", ALICE)
    lab.run()
    lab.first = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    out: dict = {}
    for name in CLONES:
        base, drop, bring = STATES[name]
        date()
        clone = Clone(lab, root, name, root / name / "state")
        shutil.copytree(copies[base], clone.state, symlinks=True)
        if drop:
            gone = clone.state / drop
            shutil.rmtree(gone) if gone.is_dir() else gone.unlink()
        if bring:
            _put(copies[bring[0]] / bring[1], clone.state / bring[1])
        if name == "forge":  # the agent's unsealed completion of rg-3 (paused) at the tip
            path = clone.repo / "plans" / "rg-3" / "PLAN.yml"
            path.write_text(
                path.read_text().replace("status: awaiting_approval", "status: completed", 1)
            )
            clone.git("add", "-A")
            clone.git("commit", "-q", "-m", "plangate: complete plans/rg-3", who=BOT)
        elif name == "amend":  # the agent's amend of the controller's sealed tip, as it
            (clone.repo / "NOTES").write_text("agent\n")
            clone.git("add", "-A")
            clone.git("commit", "-q", "--amend", "--no-edit", who=BOT)
        lock = clone.state / "lock"
        if lock.exists():
            lock.unlink()
        head0 = clone.git("rev-parse", "HEAD").strip()
        s = clone.run()
        res: dict = {"start": {"rc": s.returncode, "err": s.stderr[-2500:]}}
        res["moved"] = clone.git("rev-parse", "HEAD").strip() != head0
        res["rows_start"] = _rows(clone)
        res["ran_start"] = {t: clone.count(t) for t in TAGS}
        date()
        first = _waiting(res["rows_start"])
        res["asked1"] = first
        clone.approve([*first, "r-01", "r-11"])
        a = clone.run()
        date()
        b = clone.run()
        rows = _rows(clone)
        second = _waiting(rows)
        res["asked2"] = second
        c = None
        if second:
            date()
            clone.approve(second)
            c = clone.run()
        rcs = [a.returncode, b.returncode, *([c.returncode] if c else [])]
        errs = a.stderr + b.stderr + (c.stderr if c else "")
        res["after"] = {"rc": rcs, "err": errs[-2500:]}
        res["ran"] = {t: clone.count(t) for t in TAGS}
        res["rows"] = _rows(clone)
        report, _ = clone_audit(clone, clone.root)  # type: ignore[arg-type]
        res["runs"] = {
            t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                    and e.get("approval_valid")])
            for t in [*R, *G]
        }  # fmt: skip
        out[name] = res
    lab.out = out  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-restorepoints", _build)


def test_the_lab(lab: Lab) -> None:
    at_gate, first = lab.at_gate, lab.first  # type: ignore[attr-defined]
    want = {**{t: 1 for t in R[:8]}, **{f"{g}-1": 1 for g in G}}
    assert all(at_gate[t] == want.get(t, 0) for t in TAGS), at_gate
    want.update({"r-09": 1, "r-10": 1, "rg-1-2": 1, "rg-2-2": 1})
    assert all(first[t] == want.get(t, 0) for t in TAGS), first


VS = ["start", "once", "gates", "ctl", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_restore_reruns_nothing(lab: Lab, vid: str) -> None:
    name, v = vid.split("-", 1)
    out = lab.out[name]  # type: ignore[attr-defined]
    ran, rows = out["ran"], out["rows"]
    said = (ran, rows, out["asked1"], out["asked2"], out["start"]["err"][-900:],
            out["after"]["err"][-700:])  # fmt: skip
    nokey = name == "nokey"
    if v == "start":
        if nokey:
            assert out["start"]["rc"] != 0 and "E_STORAGE" in out["start"]["err"], said
            assert "commit.key" in out["start"]["err"] and not out["moved"], said
            assert out["ran_start"] == lab.first, said  # type: ignore[attr-defined]
        else:
            assert out["start"]["rc"] == 0 and set(out["after"]["rc"]) == {0}, said
    elif v == "once":
        # ``amend``: a run whose outcome commit the agent's amend made anyone's is in doubt;
        # her resume approval runs its action again, as documented (not counted here)
        doubt = set(out["asked1"]) if name == "amend" else set()
        assert all(n <= 1 for t, n in ran.items() if t not in doubt), said
    elif v == "gates":
        assert ran["rg-1-2"] == 1 and ran["rg-2-2"] == 1, said
        assert ran["rg-3-2"] == (0 if nokey else 1), said
    elif v == "ctl":
        want = {"r-09": 1, "r-10": 1, "r-11": 0 if nokey else 1, "r-12": 0}
        doubt = set(out["asked1"]) if name == "amend" else set()  # a resume (documented)
        assert {s: ran[s] for s in want if s not in doubt} == {
            s: n for s, n in want.items() if s not in doubt
        }, said
        assert all(ran.get(s, 0) <= 2 for s in doubt), said
    elif v == "audit":
        runs = out["runs"]
        for s in R:
            assert runs[s] == (1 if ran[s] else 0), (s, runs, said)
