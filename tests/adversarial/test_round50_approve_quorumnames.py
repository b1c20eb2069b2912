"""Round 50, quorum: other people named in ONE vote's commit, votes of twin plans at two
paths, and a recorded ``partial`` undone or forged.

Config: the bench's plus ``plans/q/**`` needs two approvals. Each plan ``plans/q/<vid>`` is
the agent's; the controller freezes; then:

- ``coauthor``: Alice approves with ``Co-authored-by: Bob <bob@ops.example.com>``;
- ``committer``: Alice's approval commit has Bob as its committer (``identity: author``);
- ``signoff``: Alice approves with ``Signed-off-by: Bob <bob@ops.example.com>``;
- ``inner``: Alice's unsigned approval on a branch, merged ``--no-ff`` by Bob;
- ``pr-coauthor``: the agent's commit on a branch sets ``approved`` with
  ``Co-authored-by: Alice``; Bob merges (``plangate check --as bob`` recorded first);
- ``merge-coauthor``: the agent's branch sets ``approved``; Bob's merge message carries
  ``Co-authored-by: Carol <carol@ops.example.com>``;
- ``twin``: two identical plans ``plans/q/twa`` and ``plans/q/twb`` (one frozen hash);
  Alice approves ``twa``; Bob approves ``twb`` through a branch he merges
  (``plangate check --as bob`` recorded first);
- ``revert``: Alice approves (``partial``); the agent reverts the controller's
  ``partial`` commit (its change to that plan's file: the status back to ``approved``,
  the recorded vote block gone);
- ``forged``: Alice approves (``partial``); the agent adds a vote by Bob to the recorded
  ``approval.approvals`` list and sets ``approved`` in one commit.

Controls: ``ctl`` (Alice, then Bob on main) and ``revert-bob`` (Bob reverts the controller's
``partial`` commit: his own approval after Alice's vote) run once.

Asserted (the defence): one person's commit is one vote, votes count per plan, a vote record
is the controller's: ``rec`` never runs for the attacks (``partial`` with one vote, or the
agent's request refused ``E_APPROVER_NOT_ALLOWED``); ``check`` predicts ``partial``; a fresh
clone's ``plangate audit`` lists exactly the two controls' runs.

Seen: all held.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BOT, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

RULE = "rules:\n  - {match: {paths: ['plans/q/**']}, require: [{count: 2}]}\n"
ONE_COMMIT = ["coauthor", "committer", "signoff"]
BRANCHES = ["inner", "pr-coauthor", "merge-coauthor"]
RECORD = ["revert", "forged"]
ATTACKS = ONE_COMMIT + BRANCHES + ["twin"] + RECORD
CONTROLS = ["ctl", "revert-bob"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _undo_partial(lab: Lab, slug: str, who: tuple[str, str]) -> None:
    """Undo the controller's last commit of ``plans/<slug>`` (its ``partial``: the commit
    may be batched, so only that plan's file is reverted, as ``git revert`` would)."""
    path = f"plans/{slug}/PLAN.yml"
    commit = lab.git("log", "-1", "--format=%H", f"--author={BOT[1]}", "--", path).strip()
    if not commit:
        raise BenchError(f"no controller commit for {slug}")
    diff = lab.git("diff", f"{commit}^", commit, "--", path)
    lab.git("apply", "-R", "--index", input=diff)
    lab.git(
        "commit", "-q", "-m", f"Revert the partial of {slug}\n\nThis reverts {commit}.", who=who
    )


def _check(lab: Lab, head: str, slug: str) -> dict[str, object]:
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", head,
        "--as", BOB[1], "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    rows = json.loads(out.stdout).get("plans", []) if out.stdout.strip() else []
    mine = [r for r in rows if r.get("plan") == f"plans/{slug}"]
    return {"rc": out.returncode, "row": mine[0] if mine else None, "err": out.stderr[-1500:]}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in CONTROLS + ONE_COMMIT + BRANCHES + RECORD:
        lab.write(f"q/{vid}", plan_text(vid))
    lab.write("q/twa", plan_text("twin"))
    lab.write("q/twb", plan_text("twin"))
    lab.commit("agent adds plans")
    lab.run()
    time.sleep(1.05)
    for vid in ["ctl", "twa", "revert", "forged", "revert-bob"]:
        lab.approve(f"q/{vid}", ALICE)
    lab.set_status("q/coauthor", "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "approve\n\nCo-authored-by: Bob <bob@ops.example.com>", who=ALICE)
    lab.set_status("q/committer", "approved")
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": BOB[0], "GIT_COMMITTER_EMAIL": BOB[1]}  # type: ignore[attr-defined]
    lab.git("commit", "-q", "-m", "approve (bob commits)", who=ALICE)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.set_status("q/signoff", "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "approve\n\nSigned-off-by: Bob <bob@ops.example.com>", who=ALICE)
    lab.git("checkout", "-q", "-b", "pr-inner")
    lab.approve("q/inner", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-inner", "pr-inner", who=BOB)
    lab.run()
    time.sleep(1.05)
    lab.approve("q/ctl", BOB)
    _undo_partial(lab, "q/revert", AGENT)
    _undo_partial(lab, "q/revert-bob", BOB)
    file = lab.repo / "plans/q/forged/PLAN.yml"
    text = file.read_text(encoding="utf-8")
    fake = f"  - {{by: bob@ops.example.com, at: '2026-01-01T00:00:00Z', commit: {lab.head()}}}\n"
    file.write_text(text.replace("  approvals:\n", "  approvals:\n" + fake, 1), encoding="utf-8")
    lab.set_status("q/forged", "approved")
    lab.commit("agent records a vote", AGENT)
    checks = {}
    lab.git("checkout", "-q", "-b", "pr-pr-coauthor")
    lab.set_status("q/pr-coauthor", "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "approve\n\nCo-authored-by: Alice <alice@example.com>", who=AGENT)
    lab.git("checkout", "-q", "-b", "pr-twin", "main")
    lab.approve("q/twb", BOB)
    lab.git("checkout", "-q", "-b", "pr-merge-coauthor", "main")
    lab.approve("q/merge-coauthor", AGENT)
    lab.git("checkout", "-q", "main")
    checks["pr-coauthor"] = _check(lab, "pr-pr-coauthor", "q/pr-coauthor")
    checks["twin"] = _check(lab, "pr-twin", "q/twb")
    lab.check_out = checks  # type: ignore[attr-defined]
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-coauthor", "pr-pr-coauthor", who=BOB)
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-twin", "pr-twin", who=BOB)
    msg = "merge pr-merge-coauthor\n\nCo-authored-by: Carol <carol@ops.example.com>"
    lab.git("merge", "--no-ff", "-q", "-m", msg, "pr-merge-coauthor", who=BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r50-quorumnames", _build)


def _p(vids: list[str], prefix: str = "") -> list[object]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


@pytest.mark.parametrize("vid", CONTROLS)
def test_the_controls_ran_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(f"q/{vid}")


@pytest.mark.parametrize("vid", _p(ATTACKS))
def test_one_vote_is_one_vote(lab: Lab, vid: str) -> None:
    slugs = ["q/twa", "q/twb"] if vid == "twin" else [f"q/{vid}"]
    assert lab.calls(vid) == [], [lab.codes(s) for s in slugs]
    for slug in slugs:
        approval = lab.plan(slug).get("approval") or {}
        assert approval.get("status") in ("partial", "refused"), (slug, approval)
        if approval.get("status") == "partial":
            assert len(approval.get("approvals") or []) == 1, (slug, approval)


@pytest.mark.parametrize("vid", _p(["pr-coauthor", "twin"], "check-"))
def test_check_predicts_partial(lab: Lab, vid: str) -> None:
    got = lab.check_out[vid.removeprefix("check-")]  # type: ignore[attr-defined]
    assert "Traceback" not in str(got["err"]), got
    assert got["row"] is not None, got
    assert got["row"]["outcome"] == "partial", got  # type: ignore[index]


def test_the_audit_lists_the_controls_only(lab: Lab) -> None:
    _code, report = lab.audit()
    runs = sorted(str(e.get("plan")) for e in report.get("executions", []))
    assert runs == sorted(f"plans/q/{v}" for v in CONTROLS), report
