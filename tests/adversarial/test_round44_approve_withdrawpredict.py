"""Round 44, ``plangate reject --config`` / ``abort --config`` (round 43: they read the
controller's whole index) versus round 20's rule "an author may withdraw only the version at
stake": a non-approver's edit (and its undo) gives no right to withdraw.

docs/approvals.md: with a config "they first say what the controller would say, and commit
nothing: ... ``reject`` or ``abort`` by someone who is neither an approver nor an author of
the plan (the controller would ignore it)". Mallory is no approver and never wrote the
agent's version. The agent writes each plan; the controller freezes it. Then, in a clone,
Mallory runs the command (her git identity) after:

- ``co-rej``: (pending plan) her edit of the task and its restore (``git checkout <old> --``,
  two commits, net nothing), a pass; ``reject --config -m no``.
- ``revert-rej``: (pending) her edit, a pass (the controller freezes her version), her
  ``git revert``, a pass (the agent's version frozen again); ``reject --config``.
- ``edit-abort``: (Alice approved; action 1 ran; paused at the gate) her edit of the paused
  run's task, a pass; ``abort --config``.
- ``co-abort``: (paused) her edit and its restore, a pass; ``abort --config``.
- ``plain-rej``: (pending) nothing; ``reject --config`` (control of the known rule).
- ``agent-abort``: (paused) the agent, the run's producer, runs ``abort --config``
  (control: it commits).

Gate approvals, ``approve --config`` against the controller (both run: the prediction in the
clone, then the same approval on main and a pass):

- ``gate-carol``: Carol (an approver) wrote the plan; Alice approved; paused; Carol approves
  the gate.
- ``gate-bob-edit``: the agent's paused plan; Bob (an approver) edits its task and the agent
  restores it (net nothing), a pass; Bob approves the gate.

Asserted (the defence): Mallory's command exits non-zero (``E_APPROVER_NOT_ALLOWED``) and
commits nothing; the agent's commits; ``approve --config`` commits exactly when the
controller then runs the gated action. (The controller's own verdicts on the withdrawals
are round 20's.)

Seen: all held (Mallory refused ``E_APPROVER_NOT_ALLOWED`` with nothing committed; the
gate approvals predicted ``E_SELF_APPROVAL``, as the controller then refused them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, identity, plan_text
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
PENDING = ["co-rej", "revert-rej", "plain-rej"]
PAUSED = ["edit-abort", "co-abort", "agent-abort"]
GATES = {"gate-carol": CAROL, "gate-bob-edit": BOB}
WHO = {v: MALLORY for v in PENDING + PAUSED} | {"agent-abort": AGENT} | GATES

#: what round 44 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _edit(lab: Lab, slug: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    old = 'task: "attack variant ' + slug + '"'
    assert old in text, text
    path.write_text(text.replace(old, old[:-1] + ' (mallory)"'))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for slug in PENDING:
        lab.write(slug, plan_text(slug))
    for slug in PAUSED:
        lab.write(slug, plan_text(slug, extra_actions=GATE.format(tag=slug)))
    lab.write(
        "gate-bob-edit", plan_text("gate-bob-edit", extra_actions=GATE.format(tag="gate-bob-edit"))
    )
    lab.commit("agent adds plans", AGENT)
    lab.write("gate-carol", plan_text("gate-carol", extra_actions=GATE.format(tag="gate-carol")))
    lab.commit("carol adds her plan", CAROL)
    lab.run()  # freeze
    for slug in [*PAUSED, *GATES]:
        lab.approve(slug, ALICE)
    lab.run()  # action 1, then the gate
    for slug in ("co-rej", "co-abort"):
        old = lab.head()
        _edit(lab, slug)
        lab.commit(f"mallory edits {slug}", MALLORY)
        lab.git("checkout", old, "--", f"plans/{slug}/PLAN.yml")
        lab.commit(f"mallory restores {slug}", MALLORY)
    old = lab.head()
    _edit(lab, "gate-bob-edit")
    lab.commit("bob edits gate-bob-edit", BOB)
    lab.git("checkout", old, "--", "plans/gate-bob-edit/PLAN.yml")
    lab.commit("agent restores gate-bob-edit", AGENT)
    _edit(lab, "edit-abort")
    lab.commit("mallory edits edit-abort", MALLORY)
    _edit(lab, "revert-rej")
    edit = lab.commit("mallory edits revert-rej", MALLORY)
    lab.run()
    lab.git("revert", "--no-edit", edit, who=MALLORY)
    lab.run()
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for slug, who in WHO.items():
        lab.extra_env = identity(who)  # type: ignore[attr-defined]
        before = lab.git("-C", str(chk), "rev-parse", "HEAD").strip()
        cmd = ["reject", "-m", "no"] if slug in PENDING else ["abort"]
        if slug in GATES:
            cmd = ["approve"]
        out = lab.cli(*cmd, f"plans/{slug}", "--config", str(lab.config), cwd=chk)
        after = lab.git("-C", str(chk), "rev-parse", "HEAD").strip()
        report[slug] = {
            "rc": out.returncode,
            "committed": before != after,
            "text": (out.stdout + out.stderr)[-1500:],
        }
        if before != after:
            lab.git("-C", str(chk), "reset", "-q", "--hard", before)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.report = report  # type: ignore[attr-defined]
    for slug, who in GATES.items():
        lab.approve(slug, who)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-withdrawpredict", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("slug", _p([s for s in WHO if s != "agent-abort" and s not in GATES]))
def test_a_non_approver_who_edited_is_told_no(lab: Lab, slug: str) -> None:
    row = lab.report[slug]  # type: ignore[attr-defined]
    assert not row["committed"], row
    assert row["rc"] != 0, row
    assert "E_APPROVER_NOT_ALLOWED" in row["text"], row
    assert "Traceback" not in row["text"], row


def test_the_producer_may_abort(lab: Lab) -> None:
    row = lab.report["agent-abort"]  # type: ignore[attr-defined]
    assert row["committed"] and row["rc"] == 0, row


@pytest.mark.parametrize("slug", _p(list(GATES)))
def test_approve_config_predicts_the_gate(lab: Lab, slug: str) -> None:
    row = lab.report[slug]  # type: ignore[attr-defined]
    ran = len(lab.calls(f"{slug}-gated"))
    assert ran <= 1, lab.codes(slug)
    assert row["committed"] == bool(ran), (row, lab.codes(slug))
