"""Round 33, who may reject or abort a parent plan: the writers of the plans it pins.

docs/approvals.md: whoever committed any file into a pinned plan's folder is a writer of the
parent (round 23), and an author of a plan may reject or abort it. Whether or not a pinned
plan's writer is entitled, the controller, ``plangate status`` and the fresh-clone
``plangate audit`` must agree on it.

Config: the bench's (approvers Alice and ``*@ops.example.com``; Mallory and Nina are no
approvers). Per variant the child (``status: draft``, ``rec`` tagged ``<vid>-child``) lives in
``plans/lib-<vid>``; the agent adds the parent ``<vid>`` pinning it (action 1) and, for the
``*-abort`` variants, a gated action 2 (``rec`` tagged ``<vid>-gated``):

- ``m-rej``: Mallory wrote the child's PLAN.yml; she rejects the pending parent; Alice
  approves it.
- ``m-notes-rej``: the agent wrote the child, Mallory only a ``NOTES.md`` in its folder; she
  rejects; Alice approves.
- ``m-abort``: Mallory wrote the child; Alice approves the parent (the child runs, action 2
  pauses at its gate); Mallory aborts; Alice approves the gate.
- ``n-rej``: control: Nina, who wrote nothing, rejects; Alice approves (runs once).

Asserted per variant: the controller's verdict (the parent, or its gated action, ran or not)
is what the fresh clone's audit says of the withdrawal: a withdrawal that stopped the plan is
listed under ``decisions``; one that did not is flagged ``withdraw-not-allowed`` and not
listed. ``n-rej`` runs once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

NINA = ("Nina", "nina@example.com")
VIDS = ["m-rej", "m-notes-rej", "m-abort", "n-rej"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _parent(vid: str, digest: str) -> str:
    text = f"""\
plan:
  name: "{vid}"
  task: "attack variant {vid}"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    plan: {{path: plans/lib-{vid}, hash: "{digest}"}}
    why: "run the shared child"
"""
    if vid.endswith("abort"):
        text += f"""\
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params:
      tag: "{vid}-gated"
"""
    return text


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in ["m-rej", "m-abort"]:
        lab.write(f"lib-{vid}", plan_text(f"{vid}-child", status="draft"))
    lab.commit("mallory writes children", MALLORY)
    for vid in ["m-notes-rej", "n-rej"]:
        lab.write(f"lib-{vid}", plan_text(f"{vid}-child", status="draft"))
    lab.commit("agent writes children", AGENT)
    lab.write("lib-m-notes-rej", "a note\n", filename="NOTES.md")
    lab.commit("mallory's notes", MALLORY)
    for vid in VIDS:
        digest = lab.cli("hash", f"plans/lib-{vid}", cwd=lab.repo).stdout.strip().split()[-1]
        lab.write(vid, _parent(vid, digest))
    lab.commit("agent adds parents", AGENT)
    lab.run()
    for vid in ["m-rej", "m-notes-rej"]:
        lab.set_status(vid, "rejected")
        lab.commit(f"reject {vid}", MALLORY)
    lab.set_status("n-rej", "rejected")
    lab.commit("reject n-rej", NINA)
    lab.run()
    lab.approve("m-abort", ALICE)
    lab.run()
    lab.set_status("m-abort", "aborted")
    lab.commit("abort m-abort", MALLORY)
    lab.run()
    for vid in VIDS:
        if lab.read(vid).split("status: ", 1)[1].split("\n", 1)[0] in (
            "rejected",
            "aborted",
        ):
            lab.git("checkout", "-q", "HEAD", "--", f"plans/{vid}/PLAN.yml")
        lab.set_status(vid, "approved")
        lab.commit(f"approve {vid}", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r33-pinveto", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def _ran(lab: Lab, vid: str) -> bool:
    tag = f"{vid}-gated" if vid.endswith("abort") else f"{vid}-child"
    return bool(lab.calls(tag))


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("n-rej-child")) == 1, lab.codes("n-rej")


@pytest.mark.parametrize("vid", _p(["m-rej", "m-notes-rej", "m-abort"]))
def test_the_fresh_clone_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    _, report = lab.audit()
    decided = {(d["plan"], d["by"]) for d in report.get("decisions", [])}
    listed = (f"plans/{vid}", MALLORY[1]) in decided
    flagged = any(
        f.get("kind") == "withdraw-not-allowed" and f.get("plan") == f"plans/{vid}"
        for f in report.get("findings", [])
    )
    ran = _ran(lab, vid)
    assert listed == (not ran), (ran, report.get("decisions"), lab.codes(vid))
    assert flagged == ran, (ran, report.get("findings"), lab.codes(vid))
