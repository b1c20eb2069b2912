"""Round 53 (runs): flags of a converted source that are not JSON booleans, and source
fields that vanish in conversion (docs/formats.md: "Nothing is dropped silently. A source
field is either mapped, kept in metadata, or refused with E_CONVERT_UNSUPPORTED").

PLAN.yml itself is strict: ``requires_approval: "true"``, ``1`` or ``"yes"`` is
E_SCHEMA_INVALID (checked by hand). The converters read a source's flags as "true only when
the JSON value is ``true``" and drop anything else without a word. Round 4 attacked hostile
sources; nobody fed them flags of the wrong type.

Part 1, ``plangate convert`` (the same converter the daemon runs), one source per variant,
built from the shipped examples (``examples/formats/``). Asserted per variant: the
conversion is refused (exit 1 with an ``E_`` code naming the field) or the field is carried
into PLAN.yml (a gate, ``idempotent: false``, the param, the verify).

- ``ap-req-*`` (agent-plan, step 3 ``requires_approval``): ``"true"``, ``1``, ``"yes"``,
  ``[true]``. **Broke** (4): converted, exit 0, no ``requires_approval`` and no note: the
  step the source gates runs at once.
- ``pc-req-*`` (plan-contract, step s2 ``requires_approval``): ``"true"``, ``1``.
  **Broke** (2), the same.
- ``acp-idem-*`` (actionplan, step 1 ``idempotent``): ``"false"``, ``0``. **Broke** (2):
  no ``idempotent: false`` and no note; the catalog's ``idempotent: true`` then decides, so
  after a crash the step the source called not idempotent is run again instead of in doubt.
- ``ap-payload-args``: an agent-plan ``Custom`` kind with both ``payload`` and ``args``.
  **Broke**: ``args`` vanishes (the tool gets the payload only, no note).
- ``acp-verify-notype``: ActionPlan ``verification: {strategy: {}, timeout_ms: 5000}``.
  **Broke**: converted with no verify at all and no note (``null`` and a string strategy
  are refused with E_SCHEMA_INVALID, the control).
- ``acp-verify-none-extra``: ``strategy: {type: none, rule_id: must.check}``. **Broke**:
  ``rule_id`` vanishes (every other unknown field of a strategy's siblings is refused).
- Held (controls): agent-plan ``requires_approval: true`` (a gate), a step ``condition``
  (agent-plan and toon-plan: E_CONVERT_UNSUPPORTED), ActionPlan ``require_approval``
  (``on_failure: ask``), a retry's unknown ``jitter`` (E_CONVERT_UNSUPPORTED), a string
  ``depends_on`` (E_SCHEMA_INVALID), a null verification strategy (E_SCHEMA_INVALID).

Part 2, the daemon (lab ``cf``): the agent commits ``plans/<v>/PLAN.json`` (agent-plan, two
``Custom`` steps calling ``rec``, step 2 with ``requires_approval`` set to ``"true"`` /
``1``; the control ``true``); the controller converts and freezes; Alice approves; a pass.
Asserted: the plan pauses ``awaiting_approval`` at action 2 and step 2's tool is not called.
**Broke** (``daemon-str``, ``daemon-one``): the converted plan runs both steps and completes;
the control held.

Fixed (2026-11-29): every converter reads a source object through one door,
``common.Ctx.fields``, against the format's declared *shape* (each field it knows with its
JSON type, beside the converter). A field outside the shape is E_CONVERT_UNSUPPORTED, a value
of another type E_SCHEMA_INVALID with its location and remedy; a flag (``requires_approval``,
``idempotent``, toon-plan's ``parallel_execution``/``error_recovery``) accepts only a JSON
boolean, so ``"true"``, ``1``, ``"yes"``, ``[true]``, ``"false"`` and ``0`` are refused (all 8
``*-req-*``/``acp-idem-*`` variants, and the daemon's ``PLAN.json`` stays unconverted, its
code shown by ``status``: ``daemon-str``, ``daemon-one``). A ``Custom`` kind with both
``payload`` and ``args`` is refused at ``args`` (``ap-payload-args``); a verification
strategy needs its ``type`` (E_SCHEMA_INVALID, ``acp-verify-notype``), and ``type: none``
takes no other strategy field (``rule_id``: E_CONVERT_UNSUPPORTED, ``acp-verify-none-extra``;
its ``timeout_ms``/``description`` are noted). ``tests/plan/test_convert_strict.py`` walks
every boolean field of every format with non-boolean values and plants an unknown field in
every object of every format.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, load_yaml
from test_round2_execution_kit import shared

EX = Path(__file__).resolve().parents[2] / "examples" / "formats"


def _agent() -> dict[str, Any]:
    return json.loads((EX / "agent-plan.json").read_text())


def _contract() -> dict[str, Any]:
    text = (EX / "plan-contract-reply.md").read_text()
    match = re.search(r"```json\n(.*)```", text, re.S)
    assert match
    return json.loads(match.group(1))


def _actionplan() -> dict[str, Any]:
    return json.loads((EX / "actionplan.json").read_text())


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


# vid -> (format, document, check): check(plan) is True when the field was carried
VARIANTS: dict[str, tuple[str, Any, Any]] = {
    "ap-req-strtrue": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 0, "requires_approval"], "true"),
        lambda p: p["actions"][0].get("requires_approval") is True,
    ),
    "ap-req-one": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 0, "requires_approval"], 1),
        lambda p: p["actions"][0].get("requires_approval") is True,
    ),
    "ap-req-yes": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 0, "requires_approval"], "yes"),
        lambda p: p["actions"][0].get("requires_approval") is True,
    ),
    "ap-req-list": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 0, "requires_approval"], [True]),
        lambda p: p["actions"][0].get("requires_approval") is True,
    ),
    "pc-req-strtrue": (
        "plan-contract",
        lambda: _set(_contract(), ["steps", 1, "requires_approval"], "true"),
        lambda p: p["actions"][1].get("requires_approval") is True,
    ),
    "pc-req-one": (
        "plan-contract",
        lambda: _set(_contract(), ["steps", 1, "requires_approval"], 1),
        lambda p: p["actions"][1].get("requires_approval") is True,
    ),
    "acp-idem-strfalse": (
        "actionplan",
        lambda: _set(_actionplan(), ["steps", 0, "idempotent"], "false"),
        lambda p: p["actions"][0].get("idempotent") is False,
    ),
    "acp-idem-zero": (
        "actionplan",
        lambda: _set(_actionplan(), ["steps", 0, "idempotent"], 0),
        lambda p: p["actions"][0].get("idempotent") is False,
    ),
    "ap-payload-args": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 2, "tool", "kind", "Custom", "args"], {"dry_run": False}),
        lambda p: "dry_run" in p["actions"][2].get("params", {}),
    ),
    "acp-verify-notype": (
        "actionplan",
        lambda: _set(
            _actionplan(), ["steps", 0, "verification"], {"strategy": {}, "timeout_ms": 5000}
        ),
        lambda p: "verify" in p["actions"][0],
    ),
    "acp-verify-none-extra": (
        "actionplan",
        lambda: _set(
            _actionplan(),
            ["steps", 0, "verification"],
            {"strategy": {"type": "none", "rule_id": "must.check"}},
        ),
        lambda p: "must.check" in json.dumps(p),
    ),
    # controls
    "ap-req-true": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 0, "requires_approval"], True),
        lambda p: p["actions"][0].get("requires_approval") is True,
    ),
    "ap-condition": (
        "agent-plan",
        lambda: _set(_agent(), ["steps", 1, "condition"], "only if the page loaded"),
        lambda p: False,
    ),
    "acp-require-approval": (
        "actionplan",
        lambda: _set(_actionplan(), ["steps", 0, "on_failure"], {"strategy": "require_approval"}),
        lambda p: p["actions"][0].get("on_failure") == "ask",
    ),
    "acp-retry-jitter": (
        "actionplan",
        lambda: _set(
            _actionplan(),
            ["steps", 0, "on_failure"],
            {"strategy": "retry", "max_attempts": 3, "jitter": True},
        ),
        lambda p: False,
    ),
    "acp-verify-null": (
        "actionplan",
        lambda: _set(_actionplan(), ["steps", 0, "verification"], {"strategy": None}),
        lambda p: False,
    ),
    "pc-depends-str": (
        "plan-contract",
        lambda: _set(_contract(), ["steps", 1, "depends_on"], "s1"),
        lambda p: p["actions"][1].get("needs") == [1],
    ),
}

BROKEN: dict[str, Any] = {}  # all fixed (2026-11-29), see the module docstring


def _convert(lab_root: Path, vid: str) -> tuple[int, str, str]:
    from tests.support import clifork

    fmt, build, _ = VARIANTS[vid]
    src = lab_root / f"{vid}.json"
    src.write_text(json.dumps(build()))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PLANGATE_"))}
    result = clifork.run(["convert", "--from", fmt, str(src)], cwd=lab_root, env=env, timeout=60)
    return result.returncode, result.stdout, result.stderr


@pytest.mark.parametrize("vid", cases(list(VARIANTS), list(VARIANTS), BROKEN))
def test_a_converted_flag_is_carried_or_refused(tmp_path: Path, vid: str) -> None:
    code, out, err = _convert(tmp_path, vid)
    assert "Traceback" not in err, err[-2000:]
    if code == 0 and out.strip():
        plan = load_yaml(out)
        assert VARIANTS[vid][2](plan), f"converted without the field:\n{out[-1500:]}"
    else:
        assert re.search(r"E_[A-Z_]+", out + err), (code, out[-800:], err[-800:])


# -- part 2: the daemon converts a PLAN.json with such a gate -----------------------------

DAEMON = {"daemon-str": "true", "daemon-one": 1, "daemon-true": True}
DAEMON_BROKEN: dict[str, Any] = {}  # fixed (2026-11-29)


def _agent_source(vid: str, flag: Any) -> dict[str, Any]:
    def step(n: int, **extra: Any) -> dict[str, Any]:
        return {
            "id": f"s{n}",
            "title": f"step {n}",
            "detail": "record it",
            "tool": {"kind": {"Custom": {"name": "rec", "payload": {"tag": f"{vid}-{n}"}}}},
            "validations": [],
            **extra,
        }

    return {
        "title": vid,
        "description": "convert gate",
        "steps": [step(1), step(2, requires_approval=flag)],
    }


def _build(root: Path) -> Lab:
    lab = Lab(root / "cf")
    for vid, flag in DAEMON.items():
        lab.write(vid, json.dumps(_agent_source(vid, flag)), filename="PLAN.json")
    lab.commit("agent plans as json")
    lab.run()
    lab.run()
    for vid in DAEMON:  # the converted plan writes `plan:` as one flow mapping
        path = lab.repo / "plans" / vid / "PLAN.yml"
        if not path.exists():  # refused: the source stays unconverted (asserted below)
            continue
        text = path.read_text()
        assert 'status: "pending_approval"' in text, text[:400]
        path.write_text(text.replace('status: "pending_approval"', 'status: "approved"', 1))
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r53-convertflags", _build)


@pytest.mark.parametrize("vid", cases(list(DAEMON), list(DAEMON), DAEMON_BROKEN))
def test_the_daemon_keeps_the_sources_gate(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-2") == [], lab.calls(f"{vid}-2")
    if not (lab.repo / "plans" / vid / "PLAN.yml").exists():
        # refused: nothing runs, and `status` names the code of the field
        assert lab.calls(f"{vid}-1") == [], lab.calls(f"{vid}-1")
        row = json.dumps(lab.status().get(f"plans/{vid}", {}))
        assert "E_SCHEMA_INVALID" in row and "requires_approval" in row, row
        return
    assert len(lab.calls(f"{vid}-1")) == 1, lab.calls(f"{vid}-1")
    assert lab.plan(vid)["plan"]["status"] == "awaiting_approval", lab.plan(vid)["plan"]


def test_the_gate_written_as_a_boolean_still_converts(lab: Lab) -> None:
    """The control must take the converted path (else the refusal branch above hides it)."""
    assert (lab.repo / "plans" / "daemon-true" / "PLAN.yml").exists()
