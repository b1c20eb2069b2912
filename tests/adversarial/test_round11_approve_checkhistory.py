"""Round 11, who may make a plan run: ``plangate check`` against the controller where the
deciding fact lives outside the plan's own first-parent history.

Each variant: a pull request (``pr-<vid>``) is checked with ``plangate check --as
alice@example.com`` (CI), then Alice merges it ``--no-ff``; the controller passes. The
prediction must match: ``start`` iff the plan started.

- ``rej-in-branch``: the plan is the agent's, frozen; in the pull request branch Bob (an
  approver) sets ``rejected``, then the agent sets ``approved``. A withdrawal on a merged
  branch wins (round 8).
- ``copy-of-alices``: Alice wrote ``plans/copy-of-alices-orig`` (frozen, never approved); the
  pull request copies it to ``plans/copy-of-alices`` and sets ``approved``. Plan text under
  another name is its writer's.
- ``draft-elsewhere``: Alice committed ``plans/drafts/alice.yml`` (plan text) on main; the
  pull request writes it as ``plans/draft-elsewhere/PLAN.yml``, freezes it and sets
  ``approved``.
- ``nested-merge``: the pull request branch merges a branch of Alice's that changed a param
  of the plan, then the agent freezes and sets ``approved``.

Control: ``plain`` (the agent's plan): predicted start, started.

Results (round 11): the controller held all four (``rej-in-branch`` stays unstarted,
the others ``E_SELF_APPROVAL``); ``check`` agreed for ``rej-in-branch`` (``none``) and
``nested-merge`` (``refuse``, E_SELF_APPROVAL) and **broke** for ``copy-of-alices`` and
``draft-elsewhere`` (strict xfails): ``outcome: start`` with Alice counted, because it reads
only the histories of the plans the pull request touches; only ``E_VERSION_WITHDRAWN`` under
another name is documented as outside its reach.
Fixed (round 43): ``copy-of-alices`` and ``draft-elsewhere`` pass: ``check`` reads the whole
history the controller reads (one index builder for check and approve/reject/abort
``--config``), so the writers of the same content under another name count.
"""

from __future__ import annotations

import json

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

VIDS = ["rej-in-branch", "copy-of-alices", "draft-elsewhere", "nested-merge"]
#: run through `plangate check` (suite time: rej-in-branch, ``none``, and the control,
#: ``start``, agreed when tried and are left out)
CHECKED = ["copy-of-alices", "draft-elsewhere", "nested-merge"]


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 11: {what}")


CHECK_BROKEN: dict[str, object] = {}  # both fixed in round 43 (see "Fixed")


def _freeze(lab: Lab, slug: str) -> None:
    out = lab.cli("freeze", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
    assert out.returncode == 0, out.stderr


def prepare(lab: Lab) -> None:
    """Before the first pass of the lab shared with test_round11_approve_checkstate.py."""
    for vid in ["rej-in-branch", "nested-merge", "hplain"]:
        lab.write(vid, plan_text(vid, params="note: v1\n"))
    lab.commit("agent adds plans", AGENT)
    lab.write("copy-of-alices-orig", plan_text("copy-of-alices"))
    lab.write("drafts", plan_text("draft-elsewhere"), filename="alice.yml")
    lab.commit("alice drafts", ALICE)


def branches(lab: Lab) -> dict[str, str]:
    """The pull request branches (off main, everything frozen); checked and merged by the
    shared lab's build."""
    branches = {}
    # rej-in-branch
    lab.git("checkout", "-q", "-b", "pr-rej-in-branch", "main")
    lab.set_status("rej-in-branch", "rejected")
    lab.commit("bob rejects", BOB)
    lab.approve("rej-in-branch", AGENT)
    branches["rej-in-branch"] = "pr-rej-in-branch"
    # copy-of-alices
    lab.git("checkout", "-q", "-b", "pr-copy-of-alices", "main")
    lab.write("copy-of-alices", lab.read("copy-of-alices-orig"))
    lab.set_status("copy-of-alices", "approved")
    lab.commit("agent copies", AGENT)
    branches["copy-of-alices"] = "pr-copy-of-alices"
    # draft-elsewhere
    lab.git("checkout", "-q", "-b", "pr-draft-elsewhere", "main")
    lab.write("draft-elsewhere", plan_text("draft-elsewhere"))
    lab.commit("agent writes", AGENT)
    _freeze(lab, "draft-elsewhere")
    lab.approve("draft-elsewhere", AGENT)
    branches["draft-elsewhere"] = "pr-draft-elsewhere"
    # nested-merge
    lab.git("checkout", "-q", "-b", "alice-edit", "main")
    lab.write("nested-merge", lab.read("nested-merge").replace("note: v1", "note: v2"))
    lab.commit("alice edits", ALICE)
    lab.git("checkout", "-q", "-b", "pr-nested-merge", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", "alice-edit", who=AGENT)
    _freeze(lab, "nested-merge")
    lab.commit("agent freezes", AGENT)
    lab.approve("nested-merge", AGENT)
    branches["nested-merge"] = "pr-nested-merge"
    # plain
    lab.git("checkout", "-q", "-b", "pr-hplain", "main")
    lab.approve("hplain", AGENT)
    branches["hplain"] = "pr-hplain"
    lab.git("checkout", "-q", "main")

    return branches


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    from test_round11_approve_checkstate import _build

    return shared_lab(tmp_path_factory, "r11-checkstate", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("hplain")) == 1, lab.codes("hplain")


@pytest.mark.parametrize("vid", VIDS)
def test_nothing_runs(lab: Lab, vid: str) -> None:
    tag = "copy-of-alices" if vid == "copy-of-alices" else vid
    assert lab.calls(tag) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def _row(lab: Lab, vid: str) -> dict:
    out = json.loads((lab.root / "checks_history.json").read_text())[vid]
    return next(r for r in json.loads(out)["plans"] if r["plan"] == f"plans/{vid}")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=CHECK_BROKEN.get(v, [])) for v in CHECKED]
)
def test_check_predicted_what_the_controller_did(lab: Lab, vid: str) -> None:
    row = _row(lab, vid)
    assert (row["outcome"] == "start") == lab.started(vid), row
