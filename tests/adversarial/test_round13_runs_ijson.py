"""Round 13, what is recorded and handed on: a tool result whose JSON object repeats a
member name.

docs/execution.md (step 5, "Take the result in"): a result enters the run "only as a value of
the canonical value tree ... I-JSON data (RFC 7493)"; anything else is E_TOOL_OUTPUT_INVALID
and "nothing of the result is used or recorded". RFC 7493 §2.3: I-JSON objects MUST NOT
have members with duplicate names (the plan side refuses duplicate YAML keys for the same
reason: reviewers must see every value written out). A first-wins reader of the recorded
stdout (a person, or another parser) sees one value, the controller hands on the other.

- ``dup-plain``: stdout ``{"v": "approved-value", "v": "other-value"}``;
- ``dup-escaped``: stdout ``{"v": "approved-value", "\\u0076": "other-value"}`` (the same
  name, spelled with an escape).

Action 1 captures ``outputs: [{name: v, path: "$.json.v"}]``, action 2 hands it to ``rec``.
Defence asserted: action 1 fails with E_TOOL_OUTPUT_INVALID, action 2 never runs.
**Broke** (2, round 13): the result is taken in, last member wins; ``rec`` receives
``other-value`` while the log's recorded stdout shows ``approved-value`` first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import Lab, plan_text
from test_round2_execution_kit import shared

OUTPUTS = {
    "dup-plain": '{"v": "approved-value", "v": "other-value"}',
    "dup-escaped": '{"v": "approved-value", "\\u0076": "other-value"}',
}
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 13: duplicate member names in a tool's JSON are taken in (last wins), not"
    " E_TOOL_OUTPUT_INVALID as I-JSON (RFC 7493) requires",
)


def _plan(slug: str) -> str:
    return f"""\
plan:
  name: "{slug}"
  task: "a result that repeats a member name"
  status: pending_approval
available_tools:
  - name: dup
  - name: rec
actions:
  - id: 1
    tool: dup
    why: "print a JSON object"
    params: {{which: "{slug}"}}
    outputs: [{{name: v, path: "$.json.v"}}]
  - id: 2
    tool: rec
    why: "hand the value on"
    params: {{tag: "{slug}", v: "$<actions[1].outputs.v>"}}
"""


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    dup = root / "dup.py"
    dup.write_text("import sys\nprint(" + repr(OUTPUTS) + "[sys.argv[1]])\n")
    argv = json.dumps([sys.executable, str(dup), "{which}"])
    lab = Lab(root, tools=f"dup: {{kind: exec, argv: {argv}}}\n")
    for slug in OUTPUTS:
        lab.write(slug, _plan(slug))
    lab.write("zz-ctl", plan_text("zz-ctl"))
    lab.commit("plans")
    lab.run()
    for slug in [*OUTPUTS, "zz-ctl"]:
        lab.approve(slug)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r13-ijson", lambda root: _build(root / "lab"))


def test_control_ran(lab: Lab) -> None:
    assert len(lab.calls("zz-ctl")) == 1


# round 13: BROKE was its strict xfail; fixed since (tools.strict_json)
@pytest.mark.parametrize("slug", list(OUTPUTS))
def test_duplicate_member_names_are_refused(lab: Lab, slug: str) -> None:
    ran = lab.calls(slug)
    assert ran == [], f"the value was handed on: {ran}"
    assert "E_TOOL_OUTPUT_INVALID" in lab.codes(slug)
