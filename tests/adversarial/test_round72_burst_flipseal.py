"""Round 72, bursts: what a new state directory adopts when the agent puts its unsealed
forgeries "before the first seal" (round 71: a key adopts what it verifies, plus the unsealed
history older than its first seal), and when it hides every seal off the first-parent line.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds ``t-01``..
``t-10`` and the gated ``g-01`` in one commit (``P0``, before any seal); the first controller
(state ``S1``) freezes them (its first sealed commit). Alice's merge approves ``t-01``..``t-03``
and ``g-01``: they complete, ``g-01`` pauses at its gate. Then the agent, under the
controller's name (author and committer ``plangate@localhost``), with NO ``Controller-Seal:``:

- ``dated``: a ``complete`` of the never-approved ``t-04`` at the tip, both dates 1990 (older
  than the first seal by its dates, not by its place);
- ``side``: a ``complete`` of the never-approved ``t-05`` made on a commit whose parent is
  ``P0`` (older than the first seal by ancestry: it descends from no seal), merged into main by
  the agent (``--no-ff``, main first parent);
- phase B only, ``flip``: a ``complete`` of ``t-06`` and a ``start`` of ``t-07`` on a commit
  whose parent is ``P0``, then the agent's merge of main INTO it (its own forgery the first
  parent), main fast-forwarded to that merge: main's first-parent line is now merge, forgery,
  ``P0``, and not one sealed commit stands on it (all behind the second parent).

Clones (each its own config, state and ``ran.log`` seeded with what ran before), phase A (the
``dated`` and ``side`` forgeries) and phase B (all three):

- ``keyA``/``keyB``: a new state directory holding only ``S1``'s ``commit.key``
  (docs/operations.md: "adopts only what its key verifies, plus the unsealed history older
  than its first seal");
- ``newA``/``newB``: a NEW empty state directory, no option: must refuse ``E_STORAGE`` (sealed
  controller commits on the branch its key verifies none of), nothing ran, nothing committed;
  then started ``--take-over`` (trust on first use, the documented limit: never twice);
- ``restB``: ``S1`` itself restored from a copy taken before the forgeries.

In each started clone Alice approves ``t-04``..``t-07``, the gate of ``g-01`` and the control
``t-08`` in one commit; two passes. Asserted per clone (``<clone>-<v>``): ``t-04``..``t-07``
ran exactly once (anyone's forged completion is an illegal transition, the approval runs the
plan), ``g-01`` action 2 once and action 1 never again, ``t-01``..``t-03`` never again,
``t-08`` once (control), ``t-09``/``t-10`` (never approved) never; and ``<clone>-audit-<v>``:
``plangate audit --json`` on a fresh clone of that clone lists one valid run of each plan
that ran and none of ``t-09``/``t-10``. ``newA``/``newB`` (``take-over``) assert never twice
for the forged plans. ``refuse-*``: the new directories' refusal. ``restB`` first meets the
foxtrot: its pass must hold (``E_HISTORY_REWRITTEN``, nothing ran); the operator then follows the
remedy it prints (main back to the tip it last read, the agent's line merged again ``--no-ff``)
and the clone goes on as the others.

Fixed (2026-11-30, r72foxtrot): the 11 ids below pass, markers removed. The controller only
ever commits on its branch's first-parent line, so a first start (no record: ``newB``, or the
key alone: ``keyB``) on a branch where a sealed commit under its name is reachable from the head
but not on that line refuses ``E_HISTORY_REWRITTEN`` (``seals_off_the_line``), ``--take-over``
included, naming the newest such commit and the remedies (``ControllerCore.
_refuse_seals_off_the_line``, docs/operations.md "A new state directory"). Expectations changed
by the rule (documented): ``keyB``/``newB`` first meet the foxtrot refused (``foxtrot-*``: rc,
code, nothing ran or was committed, and ``--take-over`` refused too), then follow the remedy it
prints as ``restB`` does (main back to the foxtrot merge's second parent, the agent's line merged
again ``--no-ff``) and go on as ``keyA``/``newA``: ``refuse-newB-code`` asserts the foxtrot's
``E_HISTORY_REWRITTEN`` and, once the line is back, round 70's ``E_STORAGE``; ``-names`` the
``--take-over`` both name; ``newB-dated``/``-side`` are trust on first use after ``--take-over``
(never twice), as ``newA``'s. ``keyB-audit``/``newB-audit`` (the limit) pass now, markers
removed: with the line put back the fresh clone's first parents are the controller's again.

Seen (round 72): BROKEN (11 ids, 1 class: a foxtrot hides every seal from a new state directory),
and 2 ids of a known limit (``keyB-audit``, ``newB-audit``). The agent makes a commit under the
controller's name with no seal on ``P0`` (before the first seal; its tree main's, with ``t-06``
``completed`` and ``t-07`` ``executing``), merges main INTO it and fast-forwards main to that
merge: every sealed commit now stands behind the second parent, the first-parent line holds one
controller-named commit, the forgery. ``refuse-newB-code``/``-names``/``-nothing``: a NEW empty
state directory starts with no ``E_STORAGE`` (round 70's refusal never fires) and commits;
``keyB-*`` (the old ``commit.key`` alone) logs ``own_commits_adopted`` ``by: trust on first use``
``count: 1``: both adopt the forgery as the controller's own. ``keyB-dated``/``-side``/``-flipc``,
``newB-dated``/``-side``/``-flipc``: ``t-04``, ``t-05``, ``t-06`` (never approved, never run) read
``completed`` approver alice, her approvals ignored "from completed", never run. ``keyB-gate``,
``newB-gate`` (honest work refused): Alice's paused ``g-01`` is failed ``E_ACTION_IN_DOUBT`` ("no
commit of the controller's (by its record) wrote the execution: block"), action 2 never runs.
Should (docs/operations.md, "A new state directory": a branch holding sealed controller commits
refuses a new state directory until a restore or ``--take-over``; one holding the old key "adopts
only what its key verifies"; SPEC §15): the seals reachable from the tip count, wherever they
stand, and a foxtrot is held as the live controller holds it (``E_HISTORY_REWRITTEN``, ``restB``):
``keyB``/``newB`` refuse or adopt the sealed commits, never the forgery. Known limit (strict xfails
of class ``limit``; rounds 8 and 29, docs/threat-model.md): ``keyB-audit``, ``newB-audit``:
``plangate audit --json`` on a fresh clone lists no run of ``t-01``..``t-03``, which ran (it flags
the forgery ``controller-unexplained`` but reads only the first-parent line, where no real run
stands).
HELD: ``dated`` (an unsealed forgery at the tip dated 1990) and ``side`` (one on a commit
descending from no seal, merged ``--no-ff``) are anyone's for the key alone (``keyA``: each ran
once on her approval) and for the restored record; ``newA`` refuses ``E_STORAGE`` naming
``--take-over``, nothing ran or was committed, then ``--take-over`` adopts them (the documented
trust on first use: ``t-04`` never ran, nothing twice); ``restB`` holds the foxtrot
``E_HISTORY_REWRITTEN`` and after the remedy runs every forged plan once, the gate's action 2
once; ``t-01``..``t-03`` never again, ``t-09``/``t-10`` never, the control ``t-08`` once in every
clone; the fresh-clone audit agrees wherever the first-parent line is the controller's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, clone_audit, plan_text
from burstkit import date_steps, gated, review_merge
from test_round2_execution_kit import shared

T = [f"t-{i:02d}" for i in range(1, 11)]
TAGS = [*T, "g-01-1", "g-01-2"]
#: round 72's 11 ids and the 2 audit ids of the known limit were fixed or made moot by
#: r72foxtrot (2026-11-30): see the module docstring's "Seen (round 72)"
BROKEN: dict[str, object] = {}


class Clone:
    """One clone of the lab's repo with its own config, state directory and ran.log."""

    def __init__(self, lab: Lab, root: Path, name: str, state: Path) -> None:
        self.lab, self.name = lab, name
        self.root = root / name
        self.repo = self.root / "repo"
        self.root.mkdir(parents=True)
        subprocess.run(["git", "clone", "-q", str(lab.repo), str(self.repo)], check=True)
        self.git("remote", "remove", "origin")
        self.state = state
        self.log = self.root / "ran.log"
        shutil.copy(lab.log, self.log)
        self.config = self.root / "plangate.yml"
        text = lab.config.read_text()
        text = text.replace(str(lab.repo), str(self.repo)).replace(str(lab.state), str(state))
        self.config.write_text(text.replace(json.dumps(str(lab.log)), json.dumps(str(self.log))))

    def git(self, *args: str, who: tuple[str, str] | None = None) -> str:
        return subprocess.run(
            ["git", *args], cwd=self.repo, env=self.lab.env(who), capture_output=True,
            text=True, check=True,
        ).stdout  # fmt: skip

    def cli(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        from tests.support import clifork

        env = self.lab.env()
        env["REC_LOG"] = str(self.log)
        return clifork.run(list(args), cwd=cwd or self.root, env=env, timeout=120)

    def run(self, *extra: str) -> subprocess.CompletedProcess[str]:
        return self.cli("run", "--once", *extra, "--config", str(self.config))

    def count(self, tag: str) -> int:
        rows = [json.loads(x) for x in self.log.read_text().splitlines() if x.strip()]
        return sum(1 for r in rows if r["argv"][:1] == [tag])

    def approve(self, slugs: list[str]) -> None:
        for slug in slugs:
            path = self.repo / "plans" / slug / "PLAN.yml"
            lines = path.read_text().split("\n")
            for i, line in enumerate(lines):
                if line.startswith("  status:") and i < 6:
                    lines[i] = "  status: approved"
                    break
            path.write_text("\n".join(lines))
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "approve " + " ".join(slugs), who=ALICE)

    def rows(self) -> dict[str, dict]:
        out = self.cli("status", "--json", "--config", str(self.config)).stdout
        try:
            got = json.loads(out)
        except ValueError:
            return {"_raw": {"out": out[-500:]}}
        keys = ("status", "approver", "last_event", "waiting", "reason")
        return {r["plan"][len("plans/") :]: {k: r.get(k) for k in keys} for r in got}


def _forged_tree(lab: Lab, edits: dict[str, str]) -> str:
    """main's tree with each plan of ``edits`` set to that status (the work tree put back)."""
    for slug, status in edits.items():
        lab.set_status(slug, status)
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    lab.git("reset", "-q", "--hard", "HEAD")
    return tree


def _message(lab: Lab, slug: str, event: str, status: str, approval: str) -> str:
    h = lab.plan(slug)["frozen"]["hash"]
    return (
        f"plangate: {event} plans/{slug}\n\nPlan: plans/{slug}\nPlan-Hash: {h}\n"
        f"Plan-Status: {status}\nApproved-By: alice@example.com\nApproval-Commit: {approval}\n"
        "Controller: vm/3f2a9c1b\n"
    )


def _commit_tree(lab: Lab, tree: str, parents: list[str], msg: str, who: tuple[str, str]) -> str:
    args = ["commit-tree", tree]
    for p in parents:
        args += ["-p", p]
    return lab.git(*args, "-m", msg, who=who).strip()


def _refused(clone: Clone, *extra: str) -> dict:
    head0 = clone.git("rev-parse", "HEAD").strip()
    r = clone.run(*extra)
    return {
        "rc": r.returncode,
        "err": r.stderr[-1500:],
        "head_same": clone.git("rev-parse", "HEAD").strip() == head0,
        "ran": {t: clone.count(t) for t in TAGS},
    }


def _line_back(clone: Clone) -> None:
    """The remedy a first start's refusal of a foxtrot names (round 72, r72foxtrot): the
    branch back to the tip whose first-parent line holds the seals (the foxtrot merge's
    second parent), the other line merged again with a merge commit."""
    tip = clone.git("rev-parse", "HEAD").strip()
    clone.git("reset", "-q", "--hard", clone.git("rev-parse", "HEAD^2").strip())
    clone.git("merge", "-q", "--no-ff", "-m", "merge the fix again", tip,
              who=("Agent", "agent@example.com"))  # fmt: skip


def _start(clone: Clone, name: str, out: dict, date) -> None:  # type: ignore[no-untyped-def]
    res: dict = {}
    if name.endswith("B") and name != "restB":  # a first start on the foxtrot: refused
        res["foxtrot"] = _refused(clone)
        res["foxtrot_taken"] = _refused(clone, "--take-over")
        _line_back(clone)
    if name.startswith("new"):
        res["refuse"] = _refused(clone)
        s = clone.run("--take-over")
    elif name == "restB":
        held = clone.run()
        res["held"] = {"rc": held.returncode, "err": held.stderr[-1500:],
                       "ran": {t: clone.count(t) for t in TAGS}}  # fmt: skip
        # the documented remedy: main back to the tip it last read, the rest merged again
        tip = clone.git("rev-parse", "HEAD").strip()
        clone.git("reset", "-q", "--hard", clone.lab.read_tip)  # type: ignore[attr-defined]
        clone.git("merge", "-q", "--no-ff", "-m", "merge the fix again", tip,
                  who=("Agent", "agent@example.com"))  # fmt: skip
        s = clone.run()
    else:
        s = clone.run()
    res["start"] = {"rc": s.returncode, "err": s.stderr[-2500:]}
    res["rows_start"] = clone.rows()
    date()
    clone.approve(["t-04", "t-05", "t-06", "t-07", "g-01", "t-08"])
    a = clone.run()
    date()
    b = clone.run()
    res["after"] = {"rc": [a.returncode, b.returncode], "err": (a.stderr + b.stderr)[-1500:]}
    res["ran"] = {t: clone.count(t) for t in TAGS}
    res["rows"] = clone.rows()
    report, valid = clone_audit(clone, clone.root)  # type: ignore[arg-type]
    res["valid"] = sorted(valid)
    res["runs"] = {
        t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                and e.get("approval_valid")])
        for t in [*T, "g-01"]
    }  # fmt: skip
    out[name] = res


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    date()
    for v in T:
        lab.write(v, plan_text(v))
    lab.write("g-01", gated("g-01"))
    p0 = lab.commit("agent plans")
    lab.run()
    date()
    review_merge(lab, ["t-01", "t-02", "t-03", "g-01"], date)
    approval = lab.head()
    lab.run()
    lab.first = {t: len(lab.calls(t)) for t in TAGS}  # type: ignore[attr-defined]
    lab.read_tip = lab.head()  # type: ignore[attr-defined]
    bak = root / "bak"
    shutil.copytree(lab.state, bak, symlinks=True)
    # dated: an unsealed complete of t-04 at the tip, dated 1990
    keep = lab.git_date
    lab.git_date = "@631152000 +0000"
    tree = _forged_tree(lab, {"t-04": "completed"})
    c = _commit_tree(lab, tree, [lab.head()], _message(lab, "t-04", "complete", "completed",
                                                       approval), BOT)  # fmt: skip
    lab.git("reset", "-q", "--hard", c)
    lab.git_date = keep
    date()
    # side: an unsealed complete of t-05 on a commit whose parent is P0, merged --no-ff
    tree = _forged_tree(lab, {"t-05": "completed"})
    side = _commit_tree(lab, tree, [p0], _message(lab, "t-05", "complete", "completed",
                                                  approval), BOT)  # fmt: skip
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", side, who=("Agent", "agent@example.com"))
    lab.forged = {"dated": c, "side": side}  # type: ignore[attr-defined]
    date()
    out: dict = {}
    clones_a = {
        "keyA": Clone(lab, root, "keyA", root / "keyA" / "state"),
        "newA": Clone(lab, root, "newA", root / "newA" / "state"),
    }
    # flip: an unsealed complete of t-06 and start of t-07 on P0, main merged INTO it
    tree = _forged_tree(lab, {"t-06": "completed", "t-07": "executing"})
    flip = _commit_tree(lab, tree, [p0], _message(lab, "t-06", "complete", "completed",
                                                  approval), BOT)  # fmt: skip
    date()
    merged = _commit_tree(lab, tree, [flip, lab.head()], "merge main into fix",
                          ("Agent", "agent@example.com"))  # fmt: skip
    lab.git("reset", "-q", "--hard", merged)
    lab.forged["flip"] = flip  # type: ignore[attr-defined]
    clones_b = {
        "keyB": Clone(lab, root, "keyB", root / "keyB" / "state"),
        "newB": Clone(lab, root, "newB", root / "newB" / "state"),
        "restB": Clone(lab, root, "restB", bak),
    }
    for name in ("keyA", "keyB"):
        st = root / name / "state"
        st.mkdir(mode=0o700)
        shutil.copy(lab.state / "commit.key", st / "commit.key")
        os.chmod(st / "commit.key", 0o600)
    for name, clone in {**clones_a, **clones_b}.items():
        date()
        _start(clone, name, out, date)
    lab.out = out  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-flipseal", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    want = {"t-01": 1, "t-02": 1, "t-03": 1, "g-01-1": 1}
    assert {k: first[k] for k in want} == want, first
    assert all(first[k] == 0 for k in TAGS if k not in want), first


NEW = ["newA", "newB"]
REFUSE = [f"refuse-{n}-{w}" for n in NEW for w in ("code", "names", "nothing")]


@pytest.mark.parametrize("vid", cases(REFUSE, REFUSE, BROKEN))  # type: ignore[arg-type]
def test_a_new_state_directory_refuses(lab: Lab, vid: str) -> None:
    """``newA``: round 70's E_STORAGE. ``newB`` (r72foxtrot): first the foxtrot, refused
    E_HISTORY_REWRITTEN (the branch, not the state directory, is what is wrong), naming the
    remedies (``--take-over`` among them, for once the line is back); with the line put back,
    round 70's E_STORAGE as for ``newA``. Nothing ran or was committed by either refusal."""
    _, name, what = vid.split("-")
    out = lab.out[name]  # type: ignore[attr-defined]
    r = out["refuse"]
    fox = out.get("foxtrot")
    if what == "code":
        assert r["rc"] != 0 and "E_STORAGE" in r["err"], r
        if fox is not None:
            assert fox["rc"] != 0 and "E_HISTORY_REWRITTEN" in fox["err"], fox
    elif what == "names":
        assert "--take-over" in r["err"], r
        if fox is not None:
            assert "--take-over" in fox["err"] and "merge" in fox["err"], fox
    else:
        assert r["head_same"] and r["ran"] == lab.first, r  # type: ignore[attr-defined]
        if fox is not None:
            assert fox["head_same"] and fox["ran"] == lab.first, fox  # type: ignore[attr-defined]


FOX = [f"foxtrot-{n}-{w}" for n in ("keyB", "newB") for w in ("code", "taken", "nothing")]


@pytest.mark.parametrize("vid", FOX)
def test_a_first_start_refuses_a_foxtrot(lab: Lab, vid: str) -> None:
    """r72foxtrot: a new or key-only state directory refuses the foxtrotted branch
    E_HISTORY_REWRITTEN, naming the newest sealed commit off the line; ``--take-over`` too
    (it decides who made the sealed commits, never whose line the branch is); nothing ran or
    was committed."""
    _, name, what = vid.split("-")
    out = lab.out[name]  # type: ignore[attr-defined]
    r = out["foxtrot"] if what != "taken" else out["foxtrot_taken"]
    assert r["rc"] != 0 and "E_HISTORY_REWRITTEN" in r["err"], r
    if what == "nothing":
        assert r["head_same"] and r["ran"] == lab.first, r  # type: ignore[attr-defined]
        assert "seals_off_the_line" in r["err"], r


CLONES = ["keyA", "newA", "keyB", "newB", "restB"]


def test_the_restored_state_holds_the_foxtrot(lab: Lab) -> None:
    held = lab.out["restB"]["held"]  # type: ignore[attr-defined]
    assert held["rc"] != 0 and "E_HISTORY_REWRITTEN" in held["err"], held
    assert held["ran"] == lab.first, held  # type: ignore[attr-defined]


#: what each plan must have run, in total, after Alice's one approval commit
WANT = {"dated": {"t-04": 1}, "side": {"t-05": 1}, "flipc": {"t-06": 1}, "flips": {"t-07": 1},
        "gate": {"g-01-1": 1, "g-01-2": 1}, "done": {"t-01": 1, "t-02": 1, "t-03": 1},
        "ctl": {"t-08": 1}, "never": {"t-09": 0, "t-10": 0}}  # fmt: skip
PHASE_A = {"dated", "side", "gate", "done", "ctl", "never"}
IDS = [f"{c}-{v}" for c in CLONES for v in WANT if c.endswith("B") or v in PHASE_A]
#: a take-over adopts the forgeries as trust on first use (docs/threat-model.md): never twice
TOFU = {f"{n}-{v}" for n in ("newA", "newB") for v in ("dated", "side")}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_what_alice_approved_ran_once(lab: Lab, vid: str) -> None:
    name, v = vid.split("-", 1)
    out = lab.out[name]  # type: ignore[attr-defined]
    assert out["start"]["rc"] == 0, out["start"]
    got = {k: out["ran"][k] for k in WANT[v]}
    said = (got, out["rows"], out["start"]["err"][-900:], out["after"])
    if vid in TOFU:
        assert all(n <= 1 for n in got.values()), said
    else:
        assert got == WANT[v], said


AUD = [f"{c}-audit" for c in CLONES]


@pytest.mark.parametrize("vid", cases(AUD, AUD, BROKEN))  # type: ignore[arg-type]
def test_a_fresh_clone_agrees(lab: Lab, vid: str) -> None:
    name = vid.split("-")[0]
    out = lab.out[name]  # type: ignore[attr-defined]
    ran = out["ran"]
    for t in T:
        assert out["runs"][t] == (1 if ran[t] else 0), (t, out["runs"], ran)
    assert out["runs"]["g-01"] == 2, out["runs"]  # its start and its gate's resume
