"""Round 75, bursts: exactly once under SIGKILLs, when the burst's plan files are laid out in
the ways round 74's one checked edit must keep (its start and outcome records written at the
root mapping's column, read back before writing) and the kills fall between those writes.

Lab (one, local mode, a new repository). The agent adds ``k-01``..``k-24`` and ``k-25``, one
one-action plan each, their layouts cycling through ``test_round75_burst_checkededit.py``'s
accepted ones (``plain``, ``doc``, ``docend``, ``dir``, ``cmt``, ``nofin``, ``bom``, ``crlf``,
``long``, ``blk``, ``dq``, ``flowp``, ``ind2``, ``escp``, ``tabcmt``, ``crlfnofin``,
``sqval``); a pass freezes them. Alice approves ``k-01``..``k-24`` in one commit, each status
value changed in place (``k-25`` never). The daemon starts the burst and is SIGKILLed once it
has made 6 calls; the operator clears the locks the kill left and resets the work tree; a
second daemon is SIGKILLed at 14 calls; the same. Cloned once per state:

- ``live`` (control): a copy of the killed controller's state directory;
- ``key``: a new state directory holding only the old ``commit.key``;
- ``new``: an empty one (``E_STORAGE``, then ``--take-over`` as documented).

Each clone then takes three passes. Asserted per clone (``<state>-<v>``):

- ``start``: the later passes exit 0 (``new``: after ``E_STORAGE`` and the take-over);
- ``once``: no ``k-*`` called twice in all (the kills' calls included);
- ``all``: every approved ``k-*`` ran once, or (state lost: ``key``, ``new``) its row says
  ``failed`` ``E_ACTION_IN_DOUBT`` (a run begun with no journal: docs/operations.md);
- ``unapproved``: ``k-25`` never ran;
- ``readable``: no row ``unreadable`` and no controller commit (the kills' included) left a
  plan file that parses otherwise than the agent's document (owned blocks and ``plan.status``
  set aside);
- ``audit``: ``plangate audit --json`` on a fresh clone calls at most one run of each ``k-*``
  valid (``live``: exactly the tool's calls), none of ``k-25``.

Seen (round 75): no break. The two daemons killed at 6 and 14 calls: ``live`` ran the other
ten once; ``key`` (adopted by its seals) and ``new`` (``E_STORAGE``, then ``--take-over``) failed
the open starts ``E_ACTION_IN_DOUBT`` as documented and called nothing twice; ``k-25`` never
ran; no controller commit (the kills' included) left a file unreadable or changed what it
parses to, whatever its layout; no audit called two runs of a plan valid.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, clone_audit
from burstkit import daemon, date_steps
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone
from test_round74_burst_squashspell import _key_only
from test_round75_burst_checkededit import _meaning, layout

K = [f"k-{i:02d}" for i in range(1, 26)]
APPROVED = K[:24]
CYCLE = ["plain", "doc", "docend", "dir", "cmt", "nofin", "bom", "crlf", "long", "blk", "dq",
         "flowp", "ind2", "escp", "tabcmt", "crlfnofin", "sqval"]  # fmt: skip
LAYOUT = {k: CYCLE[i % len(CYCLE)] for i, k in enumerate(K)}
CLONES = ["live", "key", "new"]
BROKEN: dict[str, object] = {}


def _unlock(lab: Lab) -> None:
    git_dir = lab.repo / ".git"
    for lock in [*(git_dir / "refs" / "heads").glob("*.lock"), *git_dir.glob("*.lock")]:
        lock.unlink()
    lab.git("reset", "-q", "--hard", "HEAD")


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1795000000)
    date()
    for k in K:
        lab.write(k, layout(k, LAYOUT[k]))
    agent = lab.commit("agent plans")
    lab.run()
    date()
    for k in APPROVED:
        path = lab.repo / "plans" / k / "PLAN.yml"
        raw = path.read_bytes()
        assert raw.count(b"pending_approval") == 1, (k, raw[:200])
        path.write_bytes(raw.replace(b"pending_approval", b"approved"))
    lab.commit("approve the burst of 24", ALICE)
    lab.log.touch()
    lab.git_date = None
    kills = []
    for at in (6, 14):
        with daemon(lab, root) as d:
            d.wait_for_calls(at - len([t for k in kills for t in k]), 90)
            kills.append(d.ran())
        _unlock(lab)
    lab.kills = kills  # type: ignore[attr-defined]
    out: dict = {}
    for name in CLONES:
        clone = Clone(lab, root, name, root / name / "state")
        if name == "live":
            shutil.copytree(lab.state, clone.state, symlinks=True)
            if (clone.state / "lock").exists():
                (clone.state / "lock").unlink()
        elif name == "key":
            _key_only(lab, clone)
        first = clone.run()
        res: dict = {"first": {"rc": first.returncode, "err": first.stderr[-2500:]}}
        if first.returncode != 0 and "E_STORAGE" in first.stderr and name == "new":
            first = clone.run("--take-over")
            res["take"] = {"rc": first.returncode, "err": first.stderr[-2500:]}
        rcs = [first.returncode]
        for _ in range(2):
            rcs.append(clone.run().returncode)
        res["rcs"] = rcs
        res["ran"] = {t: clone.count(t) for t in K}
        res["rows"] = clone.rows()
        bad = []
        bot = clone.git("log", "--format=%H", f"--author={BOT[1]}", f"{agent}..HEAD").split()
        for k in K:
            want = _meaning(layout(k, LAYOUT[k]).encode())
            for c in bot:
                raw = clone.git("show", f"{c}:plans/{k}/PLAN.yml")
                if _meaning(raw.encode()) != want:
                    bad.append((k, LAYOUT[k], c[:8]))
        res["bad"] = bad
        report, _ = clone_audit(clone, clone.root)  # type: ignore[arg-type]
        res["runs"] = {
            t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                    and e.get("approval_valid")])
            for t in K
        }  # fmt: skip
        out[name] = res
    lab.out = out  # type: ignore[attr-defined]
    (root.parent / f"{root.name}-out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-killlayouts", _build)


def test_the_kills_cut_the_burst(lab: Lab) -> None:
    kills = lab.kills  # type: ignore[attr-defined]
    done = [t for k in kills for t in k]
    assert len(kills[0]) >= 6 and len(done) < 24, kills
    assert "k-25" not in done and len(set(done)) == len(done), kills


VS = ["start", "once", "all", "unapproved", "readable", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_killed_burst_of_layouts_runs_each_once(lab: Lab, vid: str) -> None:
    state, v = vid.split("-", 1)
    out = lab.out[state]  # type: ignore[attr-defined]
    ran, rows, runs = out["ran"], out["rows"], out["runs"]
    said = (out["rcs"], out["first"]["err"][-900:], out.get("take"), ran, rows)
    if v == "start":
        assert out["rcs"][1:] == [0, 0], said
        if state == "new":
            assert "E_STORAGE" in out["first"]["err"] and out["take"]["rc"] == 0, said
        else:
            assert out["first"]["rc"] == 0, said
    elif v == "once":
        assert all(ran[t] <= 1 for t in K), said
    elif v == "all":
        for t in APPROVED:
            if ran[t] == 1:
                continue
            row = rows.get(t, {})
            lost = state in ("key", "new") and row.get("status") == "failed"
            assert lost and "E_ACTION_IN_DOUBT" in json.dumps(row), (t, LAYOUT[t], said)
    elif v == "unapproved":
        assert ran["k-25"] == 0 and runs["k-25"] == 0, said
    elif v == "readable":
        assert all(r.get("status") != "unreadable" for r in rows.values()), said
        assert out["bad"] == [], out["bad"]
    elif v == "audit":
        assert all(runs[t] <= 1 for t in K), (runs, said)
        assert runs["k-25"] == 0, (runs, said)
        if state == "live":
            assert all(runs[t] == ran[t] for t in K), (runs, said)
