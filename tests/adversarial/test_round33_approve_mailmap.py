"""Round 33, identity spellings through git's mailmap: a committed ``.mailmap`` (and a
``mailmap.file`` in the shared ``.git/config``) maps one address to another in git's
mailmap-aware output (``%aE``, ``git shortlog``, ``git blame``, ``log --use-mailmap``). The
controller must read the identities the commits carry.

Config: the bench's (approvers Alice and ``*@ops.example.com``). The agent commits a
``.mailmap`` at the repository root, before the plans, mapping:

- ``alice@example.com`` to ``agent@example.com`` (``mm-self``: Alice writes the plan, as
  herself; the controller freezes it; Alice approves: ``E_SELF_APPROVAL``);
- ``mallory@example.com`` to ``alice@example.com`` (``mm-approver``: the agent writes the
  plan; Mallory approves as herself: ``E_APPROVER_NOT_ALLOWED``);
- ``plangate@localhost`` to ``agent@example.com`` and ``bob@ops.example.com`` to
  ``carol@ops.example.com`` via ``mailmap.file`` in ``.git/config`` (``mm-bob``: Bob writes
  the plan; Bob approves: ``E_SELF_APPROVAL``).

``ctl``: the agent writes, Alice approves: runs once, the controller's commits are still its
own (the fresh-clone audit, which sees the committed ``.mailmap`` too, flags no start).

Asserted: nothing of the mapped variants runs and each is refused with its code; ``ctl``
runs once; the fresh clone's audit has no ``start-without-approval``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

WANT = {
    "mm-self": "E_SELF_APPROVAL",
    "mm-approver": "E_APPROVER_NOT_ALLOWED",
    "mm-bob": "E_SELF_APPROVAL",
}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (lab.repo / ".mailmap").write_text(
        "Agent <agent@example.com> <alice@example.com>\n"
        "Alice <alice@example.com> <mallory@example.com>\n"
        "Agent <agent@example.com> <plangate@localhost>\n"
    )
    lab.commit("mailmap", AGENT)
    extra = root / "mailmap-extra"
    extra.write_text("Carol <carol@ops.example.com> <bob@ops.example.com>\n")
    lab.git("config", "mailmap.file", str(extra))
    lab.write("mm-self", plan_text("mm-self"))
    lab.commit("alice adds mm-self", ALICE)
    lab.write("mm-bob", plan_text("mm-bob"))
    lab.commit("bob adds mm-bob", BOB)
    for vid in ["mm-approver", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    lab.approve("mm-self", ALICE)
    lab.approve("mm-approver", MALLORY)
    lab.approve("mm-bob", BOB)
    lab.approve("ctl", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r33-mailmap", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(list(WANT)))
def test_the_mailmap_changes_nobody(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.refusal(vid) == WANT[vid], lab.codes(vid)


def test_the_fresh_clone_audit_flags_no_start(lab: Lab) -> None:
    clone = lab.root / "fresh"
    if not clone.exists():
        lab.git("clone", "-q", str(lab.repo), str(clone))
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    import json

    report = json.loads(result.stdout)
    kinds = {(f["kind"], f.get("plan")) for f in report.get("findings", [])}
    assert not {k for k in kinds if k[0] == "start-without-approval"}, kinds
    runs = {e["plan"] for e in report.get("executions", [])}
    assert "plans/ctl" in runs, report
