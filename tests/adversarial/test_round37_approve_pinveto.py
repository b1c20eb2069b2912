"""Round 37, who may reject or abort: the writer of a plan's pinned child.

docs/approvals.md: whoever committed into a pinned plan's folder "is a writer of the parent
too" (an author: she may not approve it); "The authors who may reject or abort a plan are
the producers of the version at stake" (the people in every commit that made that version).
The child's writer made the child, not the parent: she may not withdraw the parent.

Config: the bench's (approvers Alice and ``*@ops.example.com``). Mallory (no approver) writes
a library ``plans/lib-<vid>`` (``status: draft``, one ``rec`` action tagged
``<vid>-lib``). The agent writes ``plans/<vid>`` pinning it (action 1 ``rec``, action 2 the
library, gated for ``abort``); the controller freezes.

- ``reject``: Mallory sets the parent ``rejected``; Alice approves it.
- ``abort``: Alice approves; action 1 runs; the plan pauses at its gate (action 2); Mallory
  sets it ``aborted``; Alice approves the gate.
- ``reject-child``: Mallory sets the library ``rejected`` (it is ``draft``: nothing to
  reject); Alice approves the parent.

Asserted: Mallory's withdrawal is ignored: the library's action runs once.

Results: every variant held (Mallory's withdrawal ignored; the library ran once).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["reject", "abort", "reject-child"]
FOUND: dict[str, pytest.MarkDecorator] = {}
PIN = """\
  - id: 2
    plan: {{path: plans/lib-{vid}, hash: "{digest}"}}
    why: "the library"
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(f"lib-{vid}", plan_text(f"{vid}-lib", status="draft"))
    lab.commit("mallory writes libraries", MALLORY)
    for vid in VIDS:
        digest = lab.cli("hash", f"plans/lib-{vid}", cwd=lab.repo).stdout.strip().split()[-1]
        pin = PIN.format(vid=vid, digest=digest)
        if vid == "abort":
            pin = pin.replace(
                '    why: "the library"\n', '    why: "the library"\n    requires_approval: true\n'
            )
        lab.write(vid, plan_text(vid, extra_actions=pin))
    lab.commit("agent writes parents", AGENT)
    lab.run()
    lab.set_status("abort", "approved")
    lab.commit("alice approves abort", ALICE)
    lab.run()
    lab.set_status("reject", "rejected")
    lab.set_status("abort", "aborted")
    lab.set_status("lib-reject-child", "rejected")
    lab.commit("mallory withdraws", MALLORY)
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-pinveto", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_child_writer_cannot_withdraw_the_parent(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert len(lab.calls(f"{vid}-lib")) == 1, lab.codes(vid)
