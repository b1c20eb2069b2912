"""Round 14, who may make a plan run: ``plangate check`` (the pull request's prediction, run
``--as`` the merger) against what the controller then does, for merges earlier rounds did not
predict. For each variant the PR branch is made, ``check --base main --head <branch> --as
<merger>`` is recorded, the merger merges ``--no-ff``, one pass runs; ``start`` must be
predicted exactly when a new ``plangate: start`` of the plan followed the merge.

Lab ``main`` (bench config: approvers Alice and ``*@ops.example.com``):

- ``gate``: a gated plan paused at its gate on main; the branch sets ``approved`` (agent);
  Alice merges (a gate approval by merge).
- ``added-approved``: the branch adds a new plan already ``approved``; Alice merges (not
  frozen: the controller must not start it; check must not say ``start``).
- ``self-freeze``: the branch adds a plan, the agent freezes it with ``plangate freeze`` and
  sets ``approved``; Alice merges (a documented request: Alice's merge approves it; it runs).
- ``moved``: a frozen plan on main; the branch ``git mv``s it to ``plans/moved2`` and sets
  ``approved``; Alice merges.

Lab ``committer`` (``approval.identity: committer``):

- ``c-merge``: the branch sets ``approved`` (agent); Alice merges. The merge's committer is
  Alice; check's simulated merge is made ``--as`` Alice.
- ``c-author-only``: the same, but the merge commit is authored by Alice and committed by
  Mallory (``GIT_COMMITTER_*``): under ``committer`` Mallory approves, not Alice: the
  controller must refuse (check, run ``--as`` Alice, cannot know the committer: not compared).

Control: ``plain`` (branch approves, Alice merges) runs once and was predicted ``start``.

Results: every prediction agreed with the controller; ``added-approved`` never ran;
``c-author-only`` was refused. A fresh-clone audit of both labs agreed too (tried by hand).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
MAIN = ["gate", "added-approved", "self-freeze", "moved", "plain"]
COMMITTER = ["c-merge", "c-author-only"]
BROKEN: dict[str, object] = {}


def _check(lab: Lab, branch: str, email: str) -> dict[str, object]:
    result = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", branch,
        "--as", email, "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return dict(json.loads(result.stdout))


def _starts(lab: Lab, slug: str) -> int:
    return len([s for s in lab.subjects(slug) if s.startswith("plangate: start")])


def _pr(lab: Lab, vid: str, slug: str, merger: tuple[str, str], make, **env: str) -> None:
    lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
    make(lab)
    lab.git("checkout", "-q", "main")
    check = _check(lab, f"pr-{vid}", merger[1])
    before = _starts(lab, slug)
    lab.extra_env = env  # type: ignore[attr-defined]
    lab.git("merge", "-q", "--no-ff", "--no-edit", f"pr-{vid}", who=merger)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.run()
    row = next((r for r in check.get("plans", []) if r["plan"] == f"plans/{slug}"), {})
    out = {"check": row, "before": before, "after": _starts(lab, slug)}
    (lab.root / f"{vid}.json").write_text(json.dumps(out, default=str))


def _approve_on_branch(slug: str):
    def make(lab: Lab) -> None:
        lab.set_status(slug, "approved")
        lab.commit(f"approve {slug}", AGENT)

    return make


def _build_main(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("gate", plan_text("gate", extra_actions=GATE.format(tag="gate")))
    for slug in ("moved", "plain"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    lab.approve("gate", ALICE)
    lab.run()  # paused at the gate
    _pr(lab, "gate", "gate", ALICE, _approve_on_branch("gate"))
    _pr(lab, "plain", "plain", ALICE, _approve_on_branch("plain"))

    def added(lab: Lab) -> None:
        lab.write("added-approved", plan_text("added-approved", status="approved"))
        lab.commit("agent adds an approved plan", AGENT)

    _pr(lab, "added-approved", "added-approved", ALICE, added)

    def self_freeze(lab: Lab) -> None:
        lab.write("self-freeze", plan_text("self-freeze"))
        res = lab.cli("freeze", str(lab.repo / "plans/self-freeze"))
        assert res.returncode == 0, res.stderr
        lab.commit("agent adds and freezes", AGENT)
        lab.set_status("self-freeze", "approved")
        lab.commit("agent approves", AGENT)

    _pr(lab, "self-freeze", "self-freeze", ALICE, self_freeze)

    def moved(lab: Lab) -> None:
        lab.git("mv", "plans/moved", "plans/moved2")
        lab.set_status("moved2", "approved")
        lab.commit("agent moves and approves", AGENT)

    _pr(lab, "moved", "moved2", ALICE, moved)

    return lab


def _build_committer(root: Path) -> Lab:
    lab = Lab(root, approval="identity: committer\n")
    for slug in COMMITTER:
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    _pr(lab, "c-merge", "c-merge", ALICE, _approve_on_branch("c-merge"))
    _pr(
        lab, "c-author-only", "c-author-only", ALICE, _approve_on_branch("c-author-only"),
        GIT_COMMITTER_NAME=MALLORY[0], GIT_COMMITTER_EMAIL=MALLORY[1],
    )  # fmt: skip
    return lab


@pytest.fixture(scope="module")
def main_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-checkmerge-main", _build_main)


@pytest.fixture(scope="module")
def committer_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-checkmerge-committer", _build_committer)


def _agree(lab: Lab, vid: str, slug: str) -> None:
    out = json.loads((lab.root / f"{vid}.json").read_text())
    started = out["after"] > out["before"]
    assert out["check"], out
    assert (out["check"].get("outcome") == "start") == started, (out, lab.codes(slug))


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in MAIN])
def test_check_predicted_the_merge(main_lab: Lab, vid: str) -> None:
    _agree(main_lab, vid, "moved2" if vid == "moved" else vid)


def test_check_predicted_the_merge_by_committer(committer_lab: Lab) -> None:
    _agree(committer_lab, "c-merge", "c-merge")


def test_the_control_ran_once(main_lab: Lab) -> None:
    assert len(main_lab.calls("plain")) == 1, main_lab.codes("plain")


def test_nothing_unfrozen_ran(main_lab: Lab) -> None:
    assert main_lab.calls("added-approved") == [], main_lab.codes("added-approved")


def test_a_merge_committed_by_mallory_is_not_alices(committer_lab: Lab) -> None:
    assert committer_lab.calls("c-author-only") == [], committer_lab.codes("c-author-only")
    assert len(committer_lab.calls("c-merge")) == 1, committer_lab.codes("c-merge")
