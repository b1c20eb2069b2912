# ruff: noqa: E501
"""Round 12, stall the controller and what is recorded: a *folder* where the controller
writes a plan's EXECUTION_LOG.md.

docs/threat-model.md ("One bad entry stalls every plan"): each bad entry "costs only its plan
a code in ``status``". Round 1 put a symlink or a FIFO at ``EXECUTION_LOG.md``; here it is a
directory, which the file system and git both accept, and which can even be a plan of its own:

- ``dir-plan``: the agent commits ``plans/a/PLAN.yml`` and ``plans/a/EXECUTION_LOG.md/PLAN.yml``
  (a second, valid plan: ``plans/a/EXECUTION_LOG.md``, frozen by the controller) beside an
  honest ``plans/h``; Alice approves ``a`` and ``h`` in one commit.
- ``convert-dir``: the daemon's conversion (docs/formats.md) writes ``PLAN.yml`` (and a nested
  plan's ``step-2/PLAN.yml``) beside a committed ``PLAN.json``; the agent committed a folder
  at each of those names (``plans/x/PLAN.yml/notes.txt``, ``plans/y/step-2/PLAN.yml/notes.txt``).
- ``dir-tree``: nothing hostile committed; after Alice's approval the agent only runs
  ``mkdir plans/a/EXECUTION_LOG.md`` (plus a file in it) in the shared working tree (local mode).

Then one more ``run --once``; Alice approves ``m`` with ``plangate approve`` and a third plan
``k`` the plain-git way (``git add plans/k && git commit``), and a last pass.

Defence asserted: every pass exits 0 with no internal error; ``a`` and ``h`` each run exactly
once and are ``completed``; no controller commit deletes a file the agent committed (the
other plan); the controller leaves no staged change in the shared index (``git diff --cached``
is empty after its passes); and Alice's later commit of ``k`` carries nothing of the
controller's: ``plangate audit`` finds nothing in it.

``convert-dir`` **stalls**: the first pass dies after committing the conversion but before the
tree is written; Alice approves ``a`` and ``h`` in the stale working tree (``h`` lacks its
``frozen:`` block there, so her commit drops it, and her commit also carries the staged
source files back in), the source is converted again and every pass dies (four of four):
``a`` stays ``executing`` without running, ``h`` and then ``k`` are refused "never frozen",
nothing runs (``a`` runs only after two more passes with nobody committing).

``dir-gate`` (below): the folder in a plan whose action 2 waits at a gate: the pass dies at the
pause; later passes succeed but never bring the shared working tree up to date (its PLAN.yml
still says ``executing``, HEAD says ``awaiting_approval``); Alice approves the gate there as
usual and is refused (``plangate: refuse plans/g``): the gated action never runs.

Observed (round 12), every variant (``convert-dir``: the pass that converts dies the same
way, and the ``plangate: convert plans/x`` commit deletes the agent's ``plans/x/PLAN.yml/notes.txt``):
- the pass that completes ``a`` dies: exit 2, ``plangate: internal error: IsADirectoryError:
  [Errno 21] Is a directory: '.../plans/a/EXECUTION_LOG.md'`` (the daemon logs
  ``plan.execute_crashed``); the next pass recovers and runs ``h`` (held: nothing runs twice);
- ``dir-plan``: the controller's ``plangate: complete plans/a`` commit deletes
  ``plans/a/EXECUTION_LOG.md/PLAN.yml``, the agent's frozen plan (the audit calls it clean);
- the crash leaves the shared index staged with the pre-outcome tree (``D
  plans/a/EXECUTION_LOG.md``, ``A plans/a/EXECUTION_LOG.md/PLAN.yml``, ``MM plans/a/PLAN.yml``);
  Alice's next ordinary commit (``git add plans/k; git commit``) therefore deletes the
  controller's EXECUTION_LOG.md of ``a`` and sets ``a`` back to ``executing`` under her name:
  ``plangate audit`` exits 1 blaming her (``log-changed``, ``owned-block-changed``,
  ``illegal: alice@example.com set status executing (from completed)``): git history now
  says the approver tampered with the record, which she never did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = ["dir-plan", "dir-tree", "convert-dir"]


def _build_one(root: Path, vid: str) -> dict[str, Any]:
    lab = Lab(root)
    lab.write("a", plan_text(f"{vid}-a"))
    lab.write("h", plan_text(f"{vid}-h"))
    lab.write("k", plan_text(f"{vid}-k"))
    lab.write("m", plan_text(f"{vid}-m"))
    if vid == "dir-plan":
        lab.write("a/EXECUTION_LOG.md", plan_text(f"{vid}-inner"))
    if vid == "convert-dir":  # sources the daemon converts, where it must write a folder sits
        from test_round4_runs_convert import _nested

        lab.write("x", json.dumps(_nested(f"{vid}-x")), filename="PLAN.json")
        lab.write("x/PLAN.yml", "a folder where the converted plan goes\n", filename="notes.txt")
        lab.write("y", json.dumps(_nested(f"{vid}-y")), filename="PLAN.json")
        lab.write(
            "y/step-2/PLAN.yml", "a folder where the nested plan goes\n", filename="notes.txt"
        )
    lab.commit("submit")
    passes = [lab.run(check=False)]
    lab.set_status("a", "approved")
    lab.set_status("h", "approved")
    lab.git("add", "plans/a/PLAN.yml", "plans/h/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve a and h", who=ALICE)
    if vid == "dir-tree":
        (lab.repo / "plans/a/EXECUTION_LOG.md").mkdir()
        (lab.repo / "plans/a/EXECUTION_LOG.md/x").write_text("x\n")
    passes += [lab.run(check=False), lab.run(check=False)]
    staged = lab.git("diff", "--cached", "--name-status")
    if vid == "dir-tree":  # the agent tidies its folder away again
        import shutil

        shutil.rmtree(lab.repo / "plans/a/EXECUTION_LOG.md", ignore_errors=True)
    approve_m = subprocess.run(
        [sys.executable, "-m", "controller", "approve", "plans/m", "--config", str(lab.config)],
        cwd=lab.repo,
        env=lab.env(ALICE),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    m_files = (
        lab.git("show", "--name-only", "--format=", "HEAD").split()
        if approve_m.returncode == 0
        else ["<approve failed>"]
    )
    lab.set_status("k", "approved")
    lab.git("add", "plans/k")
    lab.git("commit", "-q", "-m", "approve k", who=ALICE)
    alice_k = lab.head()
    passes.append(lab.run(check=False))
    rc, report = lab.audit()
    deleted = []
    for row in lab.log_rows("%H%x00%ae%x01"):
        if row[1] == BOT[1]:
            out = lab.git("show", "--name-status", "--format=", row[0])
            deleted += [line for line in out.splitlines() if line.startswith("D")]
    return {
        "passes": [(p.returncode, "internal error" in p.stderr, p.stderr[-400:]) for p in passes],
        "calls": {t: len(lab.calls(f"{vid}-{t}")) for t in ("a", "h", "k", "m", "inner")},
        "status": {k: v["status"] for k, v in lab.status().items()},
        "staged": staged,
        "m_files": m_files,
        "deleted": deleted,
        "audit_rc": rc,
        "alice_findings": [f for f in report.get("findings", []) if f.get("commit") == alice_k],
    }


def _builder(vid: str) -> Any:
    def build(root: Path) -> Lab:
        lab = Lab.__new__(Lab)
        lab.result = _build_one(root, vid)  # type: ignore[attr-defined]
        return lab

    return build


class _Results(dict):  # one build per variant (one lab each), shared by both xdist workers
    def __init__(self, factory: pytest.TempPathFactory) -> None:
        super().__init__()
        self.factory = factory

    def __missing__(self, vid: str) -> dict[str, Any]:
        self[vid] = shared(self.factory, f"r12-runs-logdir-{vid}", _builder(vid)).result  # type: ignore[attr-defined]
        return self[vid]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _Results(tmp_path_factory)


BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 12: a folder where the controller writes a file (EXECUTION_LOG.md, a converted PLAN.yml) kills the pass (IsADirectoryError) and leaves the shared index and tree with the controller's half-written state",
)
STALL = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 12: every pass dies on the converted sources, the started plan stays executing, and Alice's approvals, made on the stale working tree, are refused (never frozen): no approved plan runs",
)


def _vids(broken: dict[str, Any]) -> list[Any]:
    """Round 12's strict xfails (BROKE, STALL) are gone: fixed since (a folder or special file
    where the controller writes: the log is left out, any other file makes that plan wait
    E_UNSAFE_PATH; nothing is committed over it: committing._unwritable)."""
    return [pytest.param(v, id=v) for v in VARIANTS]


@pytest.mark.parametrize("vid", _vids({"convert-dir": STALL}))
def test_each_plan_runs_once_and_completes(results: dict[str, Any], vid: str) -> None:
    r = results[vid]
    assert r["calls"]["a"] == 1 and r["calls"]["h"] == 1 and r["calls"]["k"] == 1, r["calls"]
    assert r["calls"]["inner"] == 0
    if vid == "convert-dir":
        assert (
            r["status"].get("plans/x") != "completed" and r["status"].get("plans/y") != "completed"
        )
    assert r["status"]["plans/a"] == "completed" and r["status"]["plans/h"] == "completed", r[
        "status"
    ]


@pytest.mark.parametrize("vid", ["dir-plan", "dir-tree"])
def test_plangate_approve_commits_only_the_plan_it_approves(
    results: dict[str, Any], vid: str
) -> None:
    """Held: ``plangate approve plans/m`` after the crash commits plans/m/PLAN.yml alone (the
    stale index is not swept in), and m runs once."""
    assert results[vid]["m_files"] == ["plans/m/PLAN.yml"], results[vid]["m_files"]
    assert results[vid]["calls"]["m"] == 1


@pytest.mark.parametrize("vid", _vids(dict.fromkeys(VARIANTS, BROKE)))
def test_no_pass_dies_on_a_log_folder(results: dict[str, Any], vid: str) -> None:
    for code, internal, tail in results[vid]["passes"]:
        assert code == 0 and not internal, tail


@pytest.mark.parametrize("vid", _vids(dict.fromkeys(VARIANTS, BROKE)))
def test_the_controller_leaves_no_staged_change_in_the_shared_index(
    results: dict[str, Any], vid: str
) -> None:
    assert results[vid]["staged"] == "", results[vid]["staged"]


@pytest.mark.parametrize("vid", _vids({"dir-plan": BROKE, "dir-tree": BROKE}))
def test_alices_next_commit_carries_nothing_of_the_controllers(
    results: dict[str, Any], vid: str
) -> None:
    assert results[vid]["alice_findings"] == [], json.dumps(results[vid]["alice_findings"])[:600]


@pytest.mark.parametrize("vid", ["dir-plan", "convert-dir"])
def test_no_controller_commit_deletes_the_agents_files(results: dict[str, Any], vid: str) -> None:
    assert not any(
        d.endswith(("EXECUTION_LOG.md/PLAN.yml", "notes.txt")) for d in results[vid]["deleted"]
    ), results[vid]["deleted"]


GATE = """\
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params:
      tag: "dir-gate-2"
"""


def _build_gate(root: Path) -> Lab:
    """``dir-gate``: the same folder in a plan whose action 2 waits at a gate; after the pass
    that dies at the pause, one more (clean) pass; then Alice approves the gate the usual way,
    in the shared working tree (edit ``plan.status`` to ``approved``, ``git add`` that file,
    commit)."""
    lab = Lab(root)
    lab.write("g", plan_text("dir-gate-1", extra_actions=GATE))
    lab.write("g/EXECUTION_LOG.md", "x\n", filename="notes.txt")
    lab.commit("submit")
    lab.run(check=False)
    lab.set_status("g", "approved")
    lab.git("add", "plans/g/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve g", who=ALICE)
    lab.run(check=False)
    lab.run(check=False)
    lab.tree_status = next(x for x in lab.read("g").split("\n") if "status:" in x)  # type: ignore[attr-defined]
    lab.head_status = lab.plan("g")["plan"]["status"]  # type: ignore[attr-defined]
    lab.set_status("g", "approved")
    lab.git("add", "plans/g/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve the gate of g", who=ALICE)
    lab.run(check=False)
    lab.result = {
        "calls": [len(lab.calls("dir-gate-1")), len(lab.calls("dir-gate-2"))],
        "status": lab.status()["plans/g"]["status"],
    }  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r12-runs-logdir-gate", _build_gate)


def test_gate_action_one_ran_once(gate: Lab) -> None:
    assert gate.result["calls"][0] == 1  # type: ignore[attr-defined]
    assert gate.head_status == "awaiting_approval"  # type: ignore[attr-defined]


def test_gate_approved_in_the_working_tree_runs_the_gated_action(gate: Lab) -> None:
    assert "awaiting_approval" in gate.tree_status, gate.tree_status  # type: ignore[attr-defined]
    assert gate.result["calls"] == [1, 1], gate.result  # type: ignore[attr-defined]
