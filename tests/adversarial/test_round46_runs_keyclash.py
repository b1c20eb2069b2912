# ruff: noqa: E501
"""Round 46, exactly the approved values: output queries decide over the result *as recorded*
(secrets masked, round 43) and take the value from the tool's own result "at that place". A
mapping KEY holding a secret's text is masked too (``"Zq8Wx3Yv7Ut2"`` and, since a secret of 8+
characters is hidden in any case, ``"zq8wx3yv7ut2"`` both become ``"***"``), so two different
keys of the tool's result, or a secret-named key and a key literally named ``***``, become ONE
key of the recorded view: the later one wins, the other disappears. Whoever writes the outside
data and knows the secret (a partner API the plan sends its own key to) picks which real value
the approved query hands on, or makes values vanish from an "every value" query.

Lab ``kc`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wx3Yv7Ut2``; the catalog tool
``inbox`` (exec) prints ``<root>/inbox/<box>.json`` (the outside data) and gets ``key:
$<secrets.TOK>``. Each plan: action 1 ``inbox`` with one output ``o``; action 2 ``rec`` with
``o: $<actions[1].outputs.o>``. Alice approves all; one pass. ``S`` = the secret, ``s`` = it
in lower case. Per variant, the outside data and the approved output query:

- ``literal-first``: ``{"***": {"v": "safe"}, S: {"v": "EVIL"}}``, ``$.json['***'].v``.
- ``literal-last`` (control): ``{S: {"v": "EVIL"}, "***": {"v": "safe"}}``, same query.
  Asserted for both: ``rec`` never gets ``EVIL``: the query names the key written ``***``,
  which the tool's result holds with ``safe``; the value under the secret-named key is at a
  place the reviewers' query does not name.
- ``every-value``: ``{S: "safe", s: "EVIL", "x": "x"}``, ``$.json.*`` (every value). Asserted:
  if ``rec`` ran, it got every value of the tool's mapping (three), not a silent subset.
- ``key-order``: two plans, ``order-a`` ``{S: "safe", s: "EVIL"}`` and ``order-b`` ``{s:
  "EVIL", S: "safe"}`` (the same JSON object, keys in another order: RFC 8259 says the order
  carries no meaning), query ``$.json['***']``. Asserted: both plans hand ``rec`` the same
  thing (or neither runs): the order of keys in a tool's output does not choose the value.
- ``filter`` (control, round 45's fix): ``$.json.l[?@.k == '***'].v`` over an element whose
  ``k`` is the secret: not selected (``E_OUTPUT_MISSING``, ``rec`` never runs). Held.
- ``secret-value`` (control): ``$.json.a[0]`` where that element IS the secret: never handed
  on. Held.
- ``verify-none-failed``: ``{"web": "ok", S: "failed", s: "ok"}``; action 1 has ``verify:
  {expect: [{path: "$.json.*", equals: [ok, ok]}]}`` (the two services report
  ``ok``); action 2 runs only when it holds. Asserted: ``rec`` never runs (the tool's result holds
  ``failed``).
- ``descend`` (control): ``{S: {"v": "EVIL"}, "***": {"w": "safe"}}``, ``$.json..v``: the
  recorded view lost ``v`` (fails closed, ``E_OUTPUT_MISSING``): ``rec`` never gets ``EVIL``.
  Held (a denial only).

Broke (round 46): ``literal-first``: ``rec`` got ``EVIL``, the value under the key ``S``,
while the tool's result holds the key the query names, ``***``, with ``safe``
(``literal-last`` got ``safe``). ``every-value``: ``rec`` got ``["EVIL", "x"]``: ``safe``
silently dropped. ``verify-none-failed``: the verify held (it read ``["ok", "ok"]``, the
recorded view, where the tool returned ``ok, failed, ok``) and action 2 ran: a hostile answer
turned a failing check into a passing one, changing which actions run. ``key-order``: ``order-a`` handed on ``EVIL``,
``order-b`` ``safe``. The recorded view should not merge keys the redaction makes equal (e.g. keep them apart, or fail
the query closed when two keys of one mapping collapse), so that the value handed on is the
one at the place the approved query names in the tool's result.

Fixed (round 46): the redacted view keeps every member of a mapping (``Redactor.data``): a
key the masking did not change keeps its name, and each masked key that reads like another
key is kept under a placeholder of its own (``***~1``, ``***~2``). For queries and checks
(``Redactor.view``) such a mapping is read only by the names of its other keys: a name
selector naming ``***`` selects the key the tool wrote as ``***`` (``literal-first`` and
``literal-last`` both get ``safe``; ``order-a`` and ``order-b`` both ``E_OUTPUT_MISSING``:
neither has such a key), and a wildcard, a descendant segment, a filter or a placeholder
that reaches a member under a masked key fails the query closed with
``E_TOOL_OUTPUT_INVALID`` (``every-value`` and ``descend``; the ``verify`` of
``verify-none-failed`` could not be evaluated and fails: ``rec`` never runs).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

S = "Zq8Wx3Yv7Ut2"

DATA = {
    "literal-first": ({"***": {"v": "safe"}, S: {"v": "EVIL"}}, "$.json['***'].v"),
    "literal-last": ({S: {"v": "EVIL"}, "***": {"v": "safe"}}, "$.json['***'].v"),
    "every-value": ({S: "safe", S.lower(): "EVIL", "x": "x"}, "$.json.*"),
    "order-a": ({S: "safe", S.lower(): "EVIL"}, "$.json['***']"),
    "order-b": ({S.lower(): "EVIL", S: "safe"}, "$.json['***']"),
    "filter": ({"l": [{"k": S, "v": "A"}, {"k": "zz", "v": "B"}]}, "$.json.l[?@.k == '***'].v"),
    "secret-value": ({"a": [S, "EVIL"]}, "$.json.a[0]"),
    "descend": ({S: {"v": "EVIL"}, "***": {"w": "safe"}}, "$.json..v"),
    "verify-none-failed": ({"web": "ok", S: "failed", S.lower(): "ok"}, "$.json.web"),
}

INBOX = """\
import os, sys
sys.stdin.read()
print(open(os.path.join(os.environ["INBOX"], sys.argv[1] + ".json"), encoding="utf-8").read())
"""


def _plan(vid: str, path: str) -> str:
    verify = ""
    if vid == "verify-none-failed":
        verify = '\n    verify: {expect: [{path: "$.json.*", equals: [ok, ok]}]}'
    return f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: inbox}}, {{name: rec}}]
actions:
  - id: 1
    tool: inbox
    why: read the partner's answer
    params: {{box: {vid}, key: "$<secrets.TOK>"}}
    outputs: [{{name: o, path: "{path}"}}]{verify}
  - id: 2
    tool: rec
    why: record what was selected
    params: {{tag: {vid}, o: "$<actions[1].outputs.o>"}}
"""


def _build(root: Path) -> Lab:
    box = root / "inbox"
    box.mkdir()
    (root / "inbox.py").write_text(INBOX)
    secrets = root / "secrets.yml"
    secrets.write_text(f"TOK: {S}\n")
    py = json.dumps(sys.executable)
    tools = (
        f"inbox: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'inbox.py'))}, '{{box}}'],"
        f" env: {{INBOX: {json.dumps(str(box))}}}}}\n"
    )
    lab = Lab(root / "kc", extra=f"secrets: {{file: {secrets}}}\n", tools=tools)
    for vid, (data, path) in DATA.items():
        (box / f"{vid}.json").write_text(json.dumps(data))
        lab.write(vid, _plan(vid, path))
    lab.commit("plans")
    lab.run()
    for vid in DATA:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r46-keyclash", _build)


def _got(lab: Lab, vid: str) -> list[object]:
    calls = lab.calls(vid)
    assert len(calls) <= 1, calls
    return [json.loads(c["stdin"])["o"] for c in calls]


@pytest.mark.parametrize(
    "vid",
    [
        "literal-first",
        "literal-last",
        "filter",
        "secret-value",
        "descend",
    ],
)
def test_the_tool_never_gets_a_value_from_a_key_the_query_does_not_name(lab: Lab, vid: str) -> None:
    got = _got(lab, vid)
    assert "EVIL" not in json.dumps(got), f"{vid}: rec got {got!r}"
    assert S not in json.dumps(got)


def test_a_check_over_every_value_sees_every_value(lab: Lab) -> None:
    assert _got(lab, "verify-none-failed") == [], lab.codes("verify-none-failed")[:600]


def test_every_value_means_every_value_of_the_tools_mapping(lab: Lab) -> None:
    got = _got(lab, "every-value")
    if got:
        assert sorted(got[0]) == ["EVIL", "safe", "x"], f"rec got {got[0]!r}"


def test_the_order_of_keys_in_a_tool_result_does_not_choose_the_value(lab: Lab) -> None:
    assert _got(lab, "order-a") == _got(lab, "order-b")


def test_the_bench_ran(lab: Lab) -> None:
    """The plans were valid and the safe variant ran."""
    assert _got(lab, "literal-last") == ["safe"], lab.codes("literal-last")
    assert "E_OUTPUT_MISSING" in lab.codes("filter")
