# ruff: noqa: E501
"""Round 45, exactly the approved values: a guard on a sensitive param is tested over the
value *as recorded* (secrets masked, round 43), but the tool gets the real value. Whoever
writes the outside data and knows one masked value (a partner API that the plan sends its own
key to, a catalog credential) can wrap forbidden text in the redactor's "gapped", "wrapped"
and HTML views of that value: the masked view is ``***@customer.example`` and passes the
guard, the real value, with an attacker's address inside, reaches the tool.

Lab ``gm`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wx3Yv7Ut2``; the catalog has
``inbox`` (exec, untrusted output: prints ``<root>/inbox/<box>.json``, the outside data; it
gets ``key: $<secrets.TOK>``, so its author knows the key) and ``send`` (exec, the ``rec``
recorder, ``sensitive: [to]``), and ``legacy`` (exec, ``env: {API_PASSWORD: Hx7Kp2Mq9Wz4}``:
a catalog credential the redactor hides in every output). Each plan: action 1 ``inbox``
with output ``from: $.json.from``; action 2 ``send`` with ``to: $<actions[1].outputs.from>``
and the guard from docs/plan-format.md ``matches: "^[^@\\s]+@customer\\.example$"``. Alice
approves every plan; one pass.

The inbox's ``from`` per variant (``S`` = the key's characters):

- ``control``: ``ops@customer.example`` (sent once, held).
- ``honest-evil``: ``boss@evil.example`` (guard fails, nothing sent: held).
- ``tag-gap``: ``Z<evil@attacker.example>q<b>8<b>...2@customer.example`` (S's characters
  separated by tags, the first holding an address).
- ``at-gap``: S's characters joined by ``@`` then ``@customer.example``.
- ``blank-gap``: S's characters joined by blanks.
- ``wrap``: S hard-wrapped by a line end and indentation (a header-injection shape).
- ``html-gap``: S's characters joined by ``&#64;`` (masked too, but the real value has no
  raw ``@`` either: the pattern holds for it; held).
- ``catalog-cred``: the same tag gap over the catalog credential ``Hx7Kp2Mq9Wz4`` (no plan
  secret involved: knowing an operator's password is enough).
- ``default-cred``: the same over ``postgres``, the password of the catalog tool ``db``'s
  URL ``postgres://postgres:postgres@db/app`` (a well-known default: the outside data's
  author needs to know nothing secret at all).
- ``query-filter``: no guard; the plan's own output query selects only customer addresses,
  ``$.json.list[?match(@.a, '[^@ ]+@customer[.]example')].a``, over
  ``[{a: ops@customer.example}, {a: <tag-gap value>}]`` and hands the list to ``rec``.

Asserted: ``send``/``rec`` ran at most once, and every value it got for ``to`` (each element
for ``query-filter``) matches the plan's pattern: a guard (or filter) the reviewers approved
holds for the value the tool really got.

Broke (round 45): ``tag-gap``, ``at-gap``, ``blank-gap``, ``wrap``,
``catalog-cred``, ``default-cred``, ``query-filter``: the guard (filter) held over ``***@customer.example``
and the tool got e.g. ``Z<evil@attacker.example>q<b>8...2@customer.example`` (two ``@``, an
attacker's address, a newline); PLAN.yml and EXECUTION_LOG.md record the output as
``***@customer.example``, hiding the injected address from the reviewers too. A guard should
hold for the value the tool gets (e.g. both views must pass, or a value the redactor changed
fails the guard closed).

Fixed (round 45, issue 11): a guard still reads the value as recorded (round 43: it must not
test a secret), but where the redaction changed the value it reads (the recorded value is not
the one the tool would get) the guard fails closed, ``E_GUARD_FAILED`` with the remedy "the
value held a secret's text", and EXECUTION_LOG.md marks that guard "FAILED closed (the value
held a secret's text ...)" without quoting the real value (``controller/plan/guards.py``:
``check_values``). An output query's filter treats an element the redaction changed as not
matching (``controller/execution/results.py``: ``changed_by_redaction``;
``controller/plan/jsonpaths.py``): ``query-filter`` sends only ``ops@customer.example``.
``html-gap`` is held too now (its masked view differs from the real one), where it was
held before only because the real value had no raw ``@``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

SECRET = "Zq8Wx3Yv7Ut2"
CRED = "Hx7Kp2Mq9Wz4"
PATTERN = r"^[^@\s]+@customer\.example$"


def _tag_gap(value: str) -> str:
    return value[0] + "<evil@attacker.example>" + "<b>".join(value[1:]) + "@customer.example"


FROM = {
    "control": "ops@customer.example",
    "honest-evil": "boss@evil.example",
    "tag-gap": _tag_gap(SECRET),
    "at-gap": "@".join(SECRET) + "@customer.example",
    "blank-gap": " ".join(SECRET) + "@customer.example",
    "wrap": SECRET[:6] + "\n   " + SECRET[6:] + "@customer.example",
    "html-gap": "&#64;".join(SECRET) + "@customer.example",
    "catalog-cred": _tag_gap(CRED),
    "default-cred": _tag_gap("postgres"),
}
VARIANTS = [*FROM, "query-filter"]

INBOX = """\
import json, os, sys
sys.stdin.read()
print(open(os.path.join(os.environ["INBOX"], sys.argv[1] + ".json"), encoding="utf-8").read())
"""


def _plan(vid: str) -> str:
    if vid == "query-filter":
        return f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: inbox}}, {{name: rec}}]
actions:
  - id: 1
    tool: inbox
    why: read the customer's list
    params: {{box: {vid}, key: "$<secrets.TOK>"}}
    outputs: [{{name: to, path: "$.json.list[?match(@.a, '[^@ ]+@customer[.]example')].a"}}]
  - id: 2
    tool: rec
    why: record who we write to
    params: {{tag: {vid}, to: "$<actions[1].outputs.to>"}}
"""
    return f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: inbox}}, {{name: send}}]
actions:
  - id: 1
    tool: inbox
    why: read the customer's mail
    params: {{box: {vid}, key: "$<secrets.TOK>"}}
    outputs: [{{name: from, path: "$.json.from"}}]
  - id: 2
    tool: send
    why: reply to the customer
    params: {{tag: {vid}, to: "$<actions[1].outputs.from>"}}
    guards: [{{param: to, matches: "^[^@\\\\s]+@customer\\\\.example$"}}]
"""


def _build(root: Path) -> Lab:
    (root / "gm").mkdir()
    box = root / "inbox"
    box.mkdir()
    for vid, value in FROM.items():
        (box / f"{vid}.json").write_text(json.dumps({"from": value}))
    (box / "query-filter.json").write_text(
        json.dumps({"list": [{"a": "ops@customer.example"}, {"a": _tag_gap(SECRET)}]})
    )
    (root / "inbox.py").write_text(INBOX)
    secrets = root / "secrets.yml"
    secrets.write_text(f"TOK: {SECRET}\n")
    py = json.dumps(sys.executable)
    rec = json.dumps(str(root / "gm" / "rec.py"))
    log = json.dumps(str(root / "gm" / "ran.log"))
    tools = (
        f"inbox: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'inbox.py'))}, '{{box}}'],"
        f" env: {{INBOX: {json.dumps(str(box))}}}}}\n"
        f"send: {{kind: exec, argv: [{py}, {rec}, '{{tag}}'], env: {{REC_LOG: {log}}}, sensitive: [to]}}\n"
        f"legacy: {{kind: exec, argv: [/bin/true], env: {{API_PASSWORD: {CRED}}}}}\n"
        'db: {kind: exec, argv: [/bin/true, "postgres://postgres:postgres@db/app"]}\n'
    )
    lab = Lab(root / "gm", extra=f"secrets: {{file: {secrets}}}\n", tools=tools)
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r45-guardmask", _build)


@pytest.mark.parametrize("vid", VARIANTS)
def test_the_tool_gets_only_values_the_guard_allows(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    assert len(calls) <= 1, calls
    for call in calls:
        to = json.loads(call["stdin"])["to"]
        for value in to if isinstance(to, list) else [to]:
            assert re.fullmatch(PATTERN, value), f"the tool got {value!r}"


def test_the_plans_were_valid_and_ran(lab: Lab) -> None:
    """The bench itself: the plans passed validation (the guard covers the flow) and ran."""
    assert len(lab.calls("control")) == 1
    assert json.loads(lab.calls("control")[0]["stdin"])["to"] == "ops@customer.example"
    assert lab.calls("honest-evil") == []
    assert "E_GUARD_FAILED" in lab.codes("honest-evil")
    assert lab.calls("query-filter"), lab.codes("query-filter")


@pytest.mark.parametrize(
    "vid", ["tag-gap", "at-gap", "blank-gap", "wrap", "catalog-cred", "default-cred"]
)
def test_a_guard_over_a_value_holding_a_secret_fails_closed_and_says_so(lab: Lab, vid: str) -> None:
    """The record no longer hides it: the guard failed closed, and the log says why, quoting
    no real value (the secret's characters never appear)."""
    assert lab.calls(vid) == []
    assert "E_GUARD_FAILED" in lab.codes(vid)
    log = lab.read(vid, "EXECUTION_LOG.md")
    assert "FAILED closed (the value held a secret's text" in log
    for text in (lab.read(vid), log):
        assert SECRET not in text and CRED not in text
        assert "attacker.example" not in text
