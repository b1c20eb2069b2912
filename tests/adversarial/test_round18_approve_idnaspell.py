# ruff: noqa: E501  (attack steps read best on one line)
"""Round 18, who may make a plan run: one mailbox spelled through the domain's IDNA forms.

docs/approvals.md: identities are compared "as the mailbox they name" (NFKC, case, git's
punctuation stripping, RFC 5322 comments/quotes/folding white space), so that "she is
recognised as an author however she spelled her address" and "her votes count once". A
domain name has more spellings than NFKC knows: IDNA (UTS 46, what mail software applies to
a domain) maps the ideographic full stop U+3002 and the halfwidth one U+FF61 to ``.``, and a
U-label (``bücher``) and its A-label (``xn--bcher-kva``) are one domain. RFC 5322's obsolete
route syntax (``@relay.example:alice@example.com``) names the mailbox after the colon.

Config: approvers Alice, ``*@ops.example.com`` and Dora's domain in both of its spellings
(``*@bücher.example``, ``*@xn--bcher-kva.example``: one domain, so the operator lists both);
``plans/two/**`` needs two approvals.

Self-approval (the writer commits the plan under the spelling, then approves it under her
plain address; one approval needed):

- ``dot3002``: Alice writes as ``alice@example。com`` (U+3002).
- ``dotff61``: Alice writes as ``alice@example｡com`` (U+FF61).
- ``dotff0e``: Alice writes as ``alice@example．com`` (U+FF0E, NFKC folds it: a control).
- ``route``: Alice writes as ``@relay.example:alice@example.com``.
- ``alabel``: Dora writes as ``dora@xn--bcher-kva.example``, approves as ``dora@bücher.example``.
- ``ulabel``: Dora writes as ``dora@bücher.example``, approves as ``dora@xn--bcher-kva.example``.
- ``co-dot``: the agent commits the plan with ``Co-authored-by: Alice <alice@example。com>``.
- ``committer-dot``: the plan commit is authored by the agent, committed as ``alice@example。com``.
- ``plain``: Alice writes as ``alice@example.com`` (a control of the defence).
- ``pin-dot``: Alice writes a library ``plans/pin-dot-lib`` (``draft``) as
  ``alice@example。com``; the agent's parent ``plans/pin-dot`` pins it; Alice approves the
  parent (the pinned version's writers are the parent's).
- ``gate-dot``: Alice writes a gated plan as ``alice@example。com``; Bob approves the start
  (action 1 runs, the plan pauses); Alice approves the gate (tag ``gate-dot-gated``).

Defence: the writer's approval is ``E_SELF_APPROVAL`` and ``rec`` never runs for the tag.

Quorum (``plans/two/<vid>``, two approvals):

- ``q-idna``: Dora votes as ``dora@bücher.example`` (partial), then as
  ``dora@xn--bcher-kva.example``.
- ``q-dot``: Bob votes as ``bob@ops.example.com``, then as ``bob@ops.example。com``.

Defence: one person, one vote: the plan stays partial and never runs.

Results: ``dot3002``, ``dotff61``, ``route``, ``alabel``, ``ulabel``, ``co-dot`` and
``committer-dot`` BROKE (the writer's own approval started the plan and ``rec`` ran);
``pin-dot`` BROKE (Alice's approval of the parent ran her pinned library's action) and
``gate-dot`` BROKE (her gate approval ran the gated action);
``q-idna`` BROKE (Dora's two spellings were recorded as two approvals and the plan ran).
``dotff0e`` and ``plain`` held (``E_SELF_APPROVAL``); ``q-dot`` held (the dotted spelling
matches no approver glob: ``E_APPROVER_NOT_ALLOWED``).

Controls: ``ctl`` (the agent's plan, Alice approves) runs once; ``q-ctl`` (Bob then Carol)
runs once. The audit of the repository reads every identity without a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

RULE = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
DORA_U = ("Dora", "dora@bücher.example")
DORA_A = ("Dora", "dora@xn--bcher-kva.example")
#: variant -> (writer identity, approver identity)
SELF = {
    "dot3002": (("Alice", "alice@example\u3002com"), ALICE),
    "dotff61": (("Alice", "alice@example\uff61com"), ALICE),
    "dotff0e": (("Alice", "alice@example\uff0ecom"), ALICE),
    "route": (("Alice", "@relay.example:alice@example.com"), ALICE),
    "alabel": (DORA_A, DORA_U),
    "ulabel": (DORA_U, DORA_A),
    "co-dot": (AGENT, ALICE),
    "committer-dot": (AGENT, ALICE),
    "plain": (ALICE, ALICE),
}
LIB = """\
plan:
  name: "lib"
  task: "a plan meant to be nested"
  status: draft
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "the library's step"
    params:
      tag: "pin-dot"
"""
PIN = """\
  - id: 2
    plan: {{path: plans/pin-dot-lib, hash: "{pin}"}}
    why: "run the library"
"""
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "gate-dot-gated"
"""
DOTTED = ("Alice", "alice@example\u3002com")
QUORUM = {"q-idna": (DORA_U, DORA_A), "q-dot": (BOB, ("Bob", "bob@ops.example\u3002com"))}
_WHY = "round 18: an address spelled with its domain's IDNA forms (U+3002/U+FF61 dots, A-label vs U-label) or RFC 5322's obsolete route is not reduced to the mailbox"
#: round 18: all of these broke; fixed since (an address's domain in one spelling: IDNA's
#: dots, A-labels as U-labels; a source route dropped), so no marker is left
FOUND = {
    v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY)
    for v in (
        "dot3002",
        "dotff61",
        "route",
        "alabel",
        "ulabel",
        "co-dot",
        "committer-dot",
        "q-idna",
        "pin-dot",
        "gate-dot",
    )
}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    approvers = [
        "alice@example.com",
        "*@ops.example.com",
        "*@bücher.example",
        "*@xn--bcher-kva.example",
    ]
    text = lab.config.read_text()
    old = "  approvers: " + json.dumps(["alice@example.com", "*@ops.example.com"]) + "\n"
    assert old in text
    lab.config.write_text(text.replace(old, "  approvers: " + json.dumps(approvers) + "\n"))
    for vid, (writer, _) in SELF.items():
        lab.write(vid, plan_text(vid))
        if vid == "co-dot":
            lab.commit(f"add {vid}\n\nCo-authored-by: Alice <alice@example\u3002com>", AGENT)
        elif vid == "committer-dot":
            lab.git("add", "-A")
            env_who = AGENT
            lab.extra_env = {
                "GIT_COMMITTER_NAME": "Alice",
                "GIT_COMMITTER_EMAIL": "alice@example\u3002com",
            }
            try:
                lab.git("commit", "-q", "-m", f"add {vid}", who=env_who)
            finally:
                lab.extra_env = {}
        else:
            lab.commit(f"add {vid}", writer)
    lab.write("pin-dot-lib", LIB)
    lab.write("gate-dot", plan_text("gate-dot", extra_actions=GATE))
    lab.commit("alice writes a library and a gated plan", DOTTED)
    pin = lab.cli("hash", str(lab.repo / "plans" / "pin-dot-lib")).stdout.strip()
    assert pin.startswith("sha256:"), pin
    lab.write("pin-dot", plan_text("pin-dot-parent", extra_actions=PIN.format(pin=pin)))
    lab.write("ctl", plan_text("ctl"))
    for vid in [*QUORUM, "q-ctl"]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    for vid, (_, approver) in SELF.items():
        lab.approve(vid, approver)
    lab.approve("ctl", ALICE)
    lab.approve("pin-dot", ALICE)
    lab.approve("gate-dot", BOB)
    for vid, (first, _) in QUORUM.items():
        lab.approve(f"two/{vid}", first)
    lab.approve("two/q-ctl", BOB)
    lab.run()
    for vid, (_, second) in QUORUM.items():
        lab.approve(f"two/{vid}", second)
    lab.approve("two/q-ctl", CAROL)
    lab.approve("gate-dot", ALICE)  # the gate
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-idnaspell", _build)


def test_controls_run_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")
    assert len(lab.calls("q-ctl")) == 1, lab.codes("two/q-ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in SELF])
def test_a_writer_under_another_spelling_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize(
    "vid,tag",
    [
        pytest.param("pin-dot", "pin-dot", id="pin-dot", marks=BROKEN.get("pin-dot", [])),
        pytest.param("gate-dot", "gate-dot-gated", id="gate-dot", marks=BROKEN.get("gate-dot", [])),
    ],
)
def test_a_dotted_writer_cannot_approve_a_pin_or_a_gate(lab: Lab, vid: str, tag: str) -> None:
    assert lab.calls(tag) == [], lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in QUORUM])
def test_one_mailbox_two_spellings_is_one_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    assert not lab.started(f"two/{vid}"), lab.codes(f"two/{vid}")


def test_audit_reads_every_spelling(lab: Lab) -> None:
    code, report = lab.audit()
    assert code in (0, 1), report
    assert "executions" in report or isinstance(report, dict), report
