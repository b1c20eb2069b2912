"""Round 74, bursts: exactly once after a SIGKILL mid-burst, with this round's first-start
rules in play (a new state directory, the old ``commit.key`` alone) and the agent's
respelled squash (``test_round74_burst_squashspell.py``'s ``dq``) put on the killed line.

Lab (one, local mode). The agent adds ``k-01``..``k-24`` and ``k-25``; a pass freezes them;
Alice's review merge approves ``k-01``..``k-24`` (``k-25`` never). The daemon starts the burst
and is SIGKILLed once it has made 8 calls; the operator clears the locks the kill left and
resets the work tree. Cloned once per state:

- ``live`` (control): a copy of the killed controller's state directory (its lock gone);
- ``key``: a new state directory holding only the old ``commit.key`` (the rest lost);
- ``new``: an empty one (refused ``E_STORAGE``: the branch holds sealed commits; the operator
  says ``--take-over``, as documented);
- ``sqlive`` (attack): the live copy, on a branch the agent replaced (while the controller
  lay killed) by one parentless commit of its own whose plan files' owned keys are
  double-quoted: the live state must hold it (no run of anything already called).

Each clone then takes three passes. Asserted per clone (``<state>-<v>``):

- ``start``: every pass exits 0 (``new``: after ``E_STORAGE`` and the take-over; ``sqlive``:
  refused or holding, never crashing);
- ``once``: no ``k-*`` called twice in all (the kill's calls included);
- ``all``: every approved ``k-*`` ran once, or (state lost: ``key``, ``new``) its row says
  ``failed`` in doubt (a run begun with no journal: docs/operations.md); ``sqlive``: nothing
  called after the squash that was already called;
- ``unapproved``: ``k-25`` never ran;
- ``audit``: ``plangate audit --json`` on a fresh clone calls at most one run of each ``k-*``
  valid (``live``: exactly the tool's calls; with the state lost a run failed in doubt is a
  valid start the tool never made), none of ``k-25``.

Seen (round 74): no break. The daemon killed after 8 calls had committed the starts of all 24
(``k-09``..``k-24`` started, their tool never called): ``live`` ran each of the 16 once on the
next pass; ``key`` (the key verifies the seals: adopted) and ``new`` (``E_STORAGE``, then
``--take-over``) failed the 16 ``E_ACTION_IN_DOUBT`` as documented (a resume approval runs
them), called nothing twice; ``sqlive``: the live state on the agent's respelled squash called
nothing again and ran none of the open starts (the files' ``executing`` "(from nothing)",
ignored); ``k-25`` never ran, no audit called more than one run of a plan valid.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from advkit import Lab, cases, clone_audit, plan_text
from burstkit import daemon, date_steps, review_merge
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone
from test_round74_burst_squashspell import _key_only, _squash

K = [f"k-{i:02d}" for i in range(1, 26)]
APPROVED = K[:24]
CLONES = ["live", "key", "new", "sqlive"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1793000000)
    date()
    for v in K:
        lab.write(v, plan_text(v))
    lab.commit("agent plans")
    lab.run()
    date()
    review_merge(lab, APPROVED, date, "approve the burst of 24")
    lab.log.touch()
    lab.git_date = None
    with daemon(lab, root) as d:
        d.wait_for_calls(8, 90)
        killed_at = d.ran()
    lab.killed_at = killed_at  # type: ignore[attr-defined]
    git_dir = lab.repo / ".git"
    for lock in [*(git_dir / "refs" / "heads").glob("*.lock"), *git_dir.glob("*.lock")]:
        lock.unlink()
    lab.git("reset", "-q", "--hard", "HEAD")
    out: dict = {}
    for name in CLONES:
        clone = Clone(lab, root, name, root / name / "state")
        if name in ("live", "sqlive"):
            shutil.copytree(lab.state, clone.state, symlinks=True)
            if (clone.state / "lock").exists():
                (clone.state / "lock").unlink()
        elif name == "key":
            _key_only(lab, clone)
        if name == "sqlive":
            _squash(clone, "dq", "")
        before = {t: clone.count(t) for t in K}
        first = clone.run()
        res: dict = {"first": {"rc": first.returncode, "err": first.stderr[-2500:]}}
        if first.returncode != 0 and "E_STORAGE" in first.stderr and name == "new":
            first = clone.run("--take-over")
            res["take"] = {"rc": first.returncode, "err": first.stderr[-2500:]}
        rcs = [first.returncode]
        for _ in range(2):
            rcs.append(clone.run().returncode)
        res["rcs"] = rcs
        res["before"] = before
        res["ran"] = {t: clone.count(t) for t in K}
        res["rows"] = clone.rows()
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
    return shared(tmp_path_factory, "r74-killsquash", _build)


def test_the_kill_cut_the_burst(lab: Lab) -> None:
    killed = lab.killed_at  # type: ignore[attr-defined]
    assert 8 <= len(killed) < 24, killed
    assert "k-25" not in killed, killed


VS = ["start", "once", "all", "unapproved", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_killed_burst_runs_each_once(lab: Lab, vid: str) -> None:
    state, v = vid.split("-", 1)
    out = lab.out[state]  # type: ignore[attr-defined]
    ran, rows, runs = out["ran"], out["rows"], out["runs"]
    said = (out["rcs"], out["first"]["err"][-900:], out.get("take"), ran, rows)
    if v == "start":
        assert out["rcs"][1:] == [0, 0], said
        if state == "new":
            assert "E_STORAGE" in out["first"]["err"] and out["take"]["rc"] == 0, said
        elif state != "sqlive":
            assert out["first"]["rc"] == 0, said
    elif v == "once":
        assert all(ran[t] <= 1 for t in K), said
    elif v == "all":
        if state == "sqlive":
            assert all(ran[t] == out["before"][t] for t in K if out["before"][t]), said
            return
        for t in APPROVED:
            if ran[t] == 1:
                continue
            row = rows.get(t, {})
            lost = state in ("key", "new") and row.get("status") == "failed"
            assert lost and "E_ACTION_IN_DOUBT" in json.dumps(row), (t, said)
    elif v == "unapproved":
        assert ran["k-25"] == 0 and runs["k-25"] == 0, said
    elif v == "audit":
        assert all(runs[t] <= 1 for t in K), (runs, said)
        if state == "live":  # a run in doubt (state lost) is a valid start the tool never made
            assert all(runs[t] == ran[t] for t in K), (runs, said)
