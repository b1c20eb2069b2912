"""Round 47, exactly the approved values: round 46 keeps mapping keys that redaction makes
equal apart in the recorded view, naming each masked key that reads like another ``***~1``,
``***~2`` ... A tool can write those placeholder names itself, as real keys. Whoever writes
the outside data and knows the secret (a partner API the plan sends its key to) then makes
a placeholder the controller invents collide with a key the tool wrote.

Lab ``tk`` (local mode): ``secrets.file`` holds ``TOK: Zq8Wx3Yv7Ut2`` (``S``; ``s`` is it in
lower case); the catalog tool ``inbox`` (exec) prints ``<root>/inbox/<box>.json`` and gets
``key: $<secrets.TOK>``. Each plan: action 1 ``inbox`` with one output ``o`` (the query
below); action 2 ``rec`` with ``o: $<actions[1].outputs.o>`` (``result-ref``: ``o:
$<actions[1].result.json['***~1']>``). Alice approves all; one pass. Per variant:

- ``tilde-after``: ``{"***": "a", S: "EVIL", "***~1": "safe"}``, ``$.json['***~1']``.
- ``tilde-before``: ``{"***~1": "safe", "***": "a", S: "EVIL"}``, same query.
- ``tilde-two``: ``{"***": "a", S: "EVIL", s: "EVIL2", "***~1": "safe", "***~2": "safe2"}``,
  ``$.json['***~2']``.
- ``tilde-alone``: ``{S: "EVIL", "***~1": "safe"}``, ``$.json['***~1']``.
- ``result-ref``: ``{"***": "a", S: "EVIL", "***~1": "safe"}``, action 2 reads
  ``$<actions[1].result.json['***~1']>``.
- ``nested``: ``{"l": [{"***": "a", S: "EVIL", "***~1": "safe"}]}``, ``$.json.l[0]['***~1']``.
  Asserted for all: ``rec`` never gets ``EVIL``/``EVIL2``/the secret (the query names a key
  the tool wrote, holding ``safe``: ``rec`` gets that, or nothing, failing closed).
- ``record-parses``: the committed PLAN.yml of every variant still reads as YAML (a
  recorded mapping with two keys named ``***~1`` would be a duplicate key, which the plan
  loader refuses) and the control plan ``ctl`` ran; a second pass exits cleanly.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

S = "Zq8Wx3Yv7Ut2"
s = S.lower()

DATA = {
    "tilde-after": ({"***": "a", S: "EVIL", "***~1": "safe"}, "$.json['***~1']"),
    "tilde-before": ({"***~1": "safe", "***": "a", S: "EVIL"}, "$.json['***~1']"),
    "tilde-two": (
        {"***": "a", S: "EVIL", s: "EVIL2", "***~1": "safe", "***~2": "safe2"},
        "$.json['***~2']",
    ),
    "tilde-alone": ({S: "EVIL", "***~1": "safe"}, "$.json['***~1']"),
    "result-ref": ({"***": "a", S: "EVIL", "***~1": "safe"}, "$.json['***']"),
    "nested": ({"l": [{"***": "a", S: "EVIL", "***~1": "safe"}]}, "$.json.l[0]['***~1']"),
}
EXPECT = {"tilde-two": "safe2"}

INBOX = """\
import os, sys
sys.stdin.read()
print(open(os.path.join(os.environ["INBOX"], sys.argv[1] + ".json"), encoding="utf-8").read())
"""


def _plan(vid: str, path: str) -> str:
    ref = "$<actions[1].outputs.o>"
    if vid == "result-ref":
        ref = "$<actions[1].result.json['***~1']>"
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
    outputs: [{{name: o, path: "{path}"}}]
  - id: 2
    tool: rec
    why: record what was selected
    params: {{tag: {vid}, o: "{ref}"}}
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
    lab = Lab(root / "tk", extra=f"secrets: {{file: {secrets}}}\n", tools=tools)
    for vid, (data, path) in DATA.items():
        (box / f"{vid}.json").write_text(json.dumps(data))
        lab.write(vid, _plan(vid, path))
    lab.write("ctl", plan_text("ctl"))
    lab.commit("plans")
    lab.run()
    for vid in [*DATA, "ctl"]:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.first = lab.run()  # type: ignore[attr-defined]
    lab.second = lab.run(check=False)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-tildekeys", _build)


def _got(lab: Lab, vid: str) -> list[object]:
    calls = lab.calls(vid)
    assert len(calls) <= 1, calls
    return [json.loads(c["stdin"])["o"] for c in calls]


@pytest.mark.parametrize("vid", list(DATA))
def test_the_tool_gets_the_value_under_the_key_the_tool_wrote(lab: Lab, vid: str) -> None:
    got = _got(lab, vid)
    text = json.dumps(got)
    assert "EVIL" not in text and S not in text and s not in text, f"{vid}: rec got {got!r}"
    if got:
        assert got == [EXPECT.get(vid, "safe")], f"{vid}: rec got {got!r}"


@pytest.mark.parametrize("vid", list(DATA))
def test_the_record_still_reads(lab: Lab, vid: str) -> None:
    text = lab.git("show", f"HEAD:plans/{vid}/PLAN.yml")
    from advkit import load_yaml

    assert isinstance(load_yaml(text), dict)


def test_the_pass_went_on(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1
    second = lab.second  # type: ignore[attr-defined]
    assert second.returncode == 0 and "Traceback" not in second.stderr, second.stderr[-2000:]
