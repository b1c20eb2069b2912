"""Round 16, who may reject: withdraw rights gained by producing a plan's content elsewhere.

docs/approvals.md: a rejection counts only from an allowed approver or an *author* of the
plan, and "a withdrawn version stays withdrawn": a version rejected by someone entitled is
remembered by its hash, and a new approval of that exact version is refused
``E_VERSION_WITHDRAWN`` wherever it comes back (copied under another name, moved...). The
index also keeps, per hash, everyone who ever produced that exact content, on any path.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). Bob (ops)
writes every plan; the controller freezes them. Mallory is no approver and wrote none of
them. Each variant then lets Mallory act, and finally Alice approves Bob's plan at its
original path. Defence: Mallory's rejection withdraws nothing of Bob's version; Alice's
approval starts it and the tool runs exactly once.

- ``ctl``: Mallory commits ``status: rejected`` on Bob's plan directly (control: ignored,
  ``E_APPROVER_NOT_ALLOWED``).
- ``note``: Mallory first commits ``NOTES.md`` into the plan's folder (a "writer" of the
  folder), then ``rejected``.
- ``copy``: Mallory copies Bob's folder (same bytes, same hash) to ``plans/copy-m`` and
  commits it; the controller sees it; she then rejects *her copy* (she is its author). The
  version is remembered as withdrawn by hash, so Bob's original must not be vetoed by it.
- ``copy-draft``: as ``copy`` but her copy is a ``draft`` she sets ``rejected`` from
  ``pending_approval`` in two commits.
- ``side-copy``: on a side branch Mallory adds the copy and rejects it; the agent merges the
  branch ``--no-ff`` (a merged-branch withdrawal; her copy arrives already rejected).
- ``copy-orig``: Mallory copies Bob's plan (so she produced that exact content), then rejects
  Bob's original.
- ``copy-gone``: as ``copy-orig`` but she deletes her copy before rejecting the original.
- ``born-rejected``: Mallory adds her copy already ``rejected`` in one first-parent commit.
- ``pin``: Mallory writes a parent plan pinning Bob's version and rejects her parent.
- ``pinned``: Bob's shared sub-plan ``plans/pinned-lib`` (``draft``, nested only) pinned by
  Bob's parent ``plans/pinned``; Mallory copies the sub-plan as ``pending_approval``
  (frozen by the controller), rejects her copy; Alice approves Bob's parent. Defence: the
  pinned actions run once.
- ``copy-gate``: Bob's gated plan paused at its gate after Alice's approval; Mallory copies it
  and aborts Bob's original; Alice approves the gate. Defence: the gated action runs once.

Results: ``copy``, ``copy-draft``, ``side-copy`` and ``pinned`` broke (strict xfails): Alice's
approval is refused ``E_VERSION_WITHDRAWN`` ("plans/copy-m was set rejected by
mallory@example.com ...; a copy, a re-add or a pin of it is not approved again"), nothing
runs. Mallory becomes an author only of her own copy (a withdrawer of that path), but her
withdrawal is remembered by hash, so it vetoes the same version everywhere: a non-approver
vetoes any version (and every parent pinning it) by copying it. Held: ``ctl``, ``note``,
``copy-orig``, ``copy-gone``, ``born-rejected``, ``pin``, ``copy-gate``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = [
    "ctl",
    "note",
    "copy",
    "copy-draft",
    "side-copy",
    "copy-orig",
    "copy-gone",
    "born-rejected",
    "pin",
]
GATED = (
    plan_text("{tag}")
    + """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
)
FOUND = ["copy", "copy-draft", "side-copy", "pinned"]
# round 16: every BROKEN variant broke (strict xfails, kept as found); fixed since: only an
# allowed approver's withdrawal vetoes a version everywhere (Lifecycle._veto)
FIXED: dict[str, list[pytest.MarkDecorator]] = {}  # nothing broken now: no marks
BROKEN: dict[str, list[pytest.MarkDecorator]] = {
    v: [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason="round 16: a non-approver copies a plan, rejects her copy (she is its "
            "author), and the version is withdrawn by hash for everyone: Alice's approval of "
            "the original is refused E_VERSION_WITHDRAWN",
        )
    ]
    for v in FOUND
}


def _copy(lab: Lab, vid: str) -> None:
    src = lab.repo / "plans" / vid
    dst = lab.repo / "plans" / f"{vid}-m"
    shutil.copytree(src, dst)


def _parent(name: str, path: str, digest: str) -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "wrap a plan"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n"
        f'    plan: {{path: {path}, hash: "{digest}"}}\n    why: "run the pinned plan"\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.write("copy-gate", GATED.replace("{tag}", "copy-gate"))
    lab.write("pinned-lib", plan_text("pinned-lib", status="draft"))
    res = lab.cli("hash", str(lab.repo / "plans/pinned-lib"), cwd=lab.repo)
    lab.write("pinned", _parent("pinned", "plans/pinned-lib", res.stdout.strip()))
    lab.commit("bob adds plans", BOB)
    lab.run()  # freeze
    lab.approve("copy-gate", ALICE)
    lab.run()  # action 1 runs, the gate pauses
    for vid in ("copy-orig", "copy-gone", "copy-gate"):
        _copy(lab, vid)
        lab.set_status(f"{vid}-m", "pending_approval")
        lab.commit(f"mallory copies {vid}", MALLORY)
    lab.git("rm", "-q", "-r", "plans/copy-gone-m")
    lab.commit("mallory removes her copy", MALLORY)
    lab.run()
    for vid in ("copy-orig", "copy-gone"):
        lab.set_status(vid, "rejected")
        lab.commit(f"mallory rejects bob's {vid}", MALLORY)
    lab.set_status("copy-gate", "aborted")
    lab.commit("mallory aborts bob's copy-gate", MALLORY)
    lab.run()
    lab.approve("copy-gate", ALICE)  # the gate
    # Mallory's first moves
    lab.write("note", "I looked at this.\n", filename="NOTES.md")
    lab.commit("mallory notes", MALLORY)
    _copy(lab, "copy")
    lab.commit("mallory copies copy", MALLORY)
    _copy(lab, "copy-draft")
    lab.commit("mallory copies copy-draft", MALLORY)
    lab.git("checkout", "-q", "-b", "side", "main")
    _copy(lab, "side-copy")
    lab.commit("mallory copies side-copy", MALLORY)
    lab.set_status("side-copy-m", "rejected")
    lab.commit("mallory rejects her copy", MALLORY)
    lab.git("checkout", "-q", "main")
    shutil.copytree(lab.repo / "plans/born-rejected", lab.repo / "plans/born-rejected-m")
    lab.set_status("born-rejected-m", "rejected")
    lab.commit("mallory adds a rejected copy", MALLORY)
    pin = lab.plan("pin")["frozen"]["hash"]
    lab.write("pin-m", _parent("pin-m", "plans/pin", pin))
    lab.commit("mallory wraps pin", MALLORY)
    shutil.copytree(lab.repo / "plans/pinned-lib", lab.repo / "plans/pinned-lib-m")
    lab.set_status("pinned-lib-m", "pending_approval")
    lab.commit("mallory copies bob's shared sub-plan", MALLORY)
    lab.run()
    lab.set_status("pinned-lib-m", "rejected")
    lab.commit("mallory rejects her copy of the sub-plan", MALLORY)
    lab.set_status("pin-m", "rejected")
    lab.commit("mallory rejects her wrapper", MALLORY)
    lab.set_status("ctl", "rejected")
    lab.commit("mallory rejects ctl", MALLORY)
    lab.set_status("note", "rejected")
    lab.commit("mallory rejects note", MALLORY)
    lab.set_status("copy-m", "rejected")
    lab.commit("mallory rejects her copy", MALLORY)
    lab.set_status("copy-draft-m", "draft")
    lab.commit("mallory drafts her copy", MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()
    lab.set_status("copy-draft-m", "pending_approval")
    lab.commit("mallory resubmits her copy", MALLORY)
    lab.run()
    lab.set_status("copy-draft-m", "rejected")
    lab.commit("mallory rejects her copy", MALLORY)
    lab.run()
    for vid in [*VIDS, "pinned"]:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r16-vetoes", _build)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=FIXED.get(v, [])) for v in VIDS])
def test_a_non_approver_cannot_veto_bobs_version(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_a_non_approver_cannot_abort_bobs_paused_run(lab: Lab) -> None:
    assert len(lab.calls("copy-gate")) == 1
    assert len(lab.calls("copy-gate-gated")) == 1, lab.codes("copy-gate")


@pytest.mark.parametrize(
    "vid", [pytest.param("pinned", id="pinned", marks=FIXED.get("pinned", []))]
)
def test_a_non_approver_cannot_veto_a_shared_sub_plan(lab: Lab, vid: str) -> None:
    assert len(lab.calls("pinned-lib")) == 1, lab.codes("pinned")
