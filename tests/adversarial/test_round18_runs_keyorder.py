# ruff: noqa: E501
"""Round 18, hash vs what reaches the tool: the order of a mapping's keys.

The plan hash is SHA-256 over RFC 8785 JSON, which sorts mapping keys, so two files that
differ only in key order have one hash. The engine hands a tool its params in the file's
order (JSON on stdin, compact JSON in an exec ``{param}`` argv element, python keyword
arguments). So the order is not approved, yet it reaches the tool.

Each variant: an exec tool ``recv`` whose catalog argv is ``[rec.py, "{tag}", "{steps}"]``;
the plan passes ``steps: {first: "delete", second: "backup"}``; one pass freezes, Alice
approves; then the agent commits the same plan with the keys swapped (``plangate hash``
is unchanged); one pass runs.

- ``ord-argv``: the plan itself.
- ``ord-nested``: a pinned nested plan holds that action; the agent swaps the keys in the
  nested plan's file after Alice approved the parent (the pin still matches).
- ``num`` (control): ``n: 1`` edited to ``n: 1.0`` after the approval (also one hash): held,
  the tool gets ``1`` either way.

Asserted: the tool receives exactly the approved text (argv element
``{"first":"delete","second":"backup"}``, the same order on stdin), or the edited plan does
not run on the earlier approval. **Broke** (``ord-argv``, ``ord-nested``): the tool gets
``{"second":"backup","first":"delete"}`` in argv and on stdin, the plan is ``completed`` on
Alice's approval, and ``plangate audit`` is clean (exit 0, no finding). A tool that reads its
params in order (steps to run, a python ``**kw`` loop, a text match on the argv) is steered by
an edit nobody approved.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared

APPROVED = 'steps: {first: "delete", second: "backup"}'
SWAPPED = 'steps: {second: "backup", first: "delete"}'
R18 = "round 18: key order is outside the hash but reaches the tool"


def _action_plan(name: str, status: str, line: str) -> str:
    return f"""plan: {{name: {name}, task: t, status: {status}}}
available_tools: [{{name: recv}}]
actions:
  - id: 1
    tool: recv
    why: w
    params:
      tag: {name}
      {line}
"""


def _approve(lab: Lab, slug: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))


def _edit(lab: Lab, slug: str, old: str, new: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def _build(root: Path) -> Lab:
    argv = json.dumps([sys.executable, str(root / "rec.py"), "{tag}", "{steps}"])
    lab = Lab(
        root,
        tools=f"recv: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(root / 'ran.log'))}}}}}\n",
    )
    lab.write("ord-argv", _action_plan("ord-argv", "pending_approval", APPROVED))
    lab.write("num", _action_plan("num", "pending_approval", APPROVED + "\n      n: 1"))
    lab.write("inner", _action_plan("ord-nested", "draft", APPROVED))
    lab.commit("inner and plans")
    pin = lab.cli("hash", str(lab.repo / "plans" / "inner"), cwd=lab.repo).stdout.split()[-1]
    lab.write(
        "ord-nested",
        f"""plan: {{name: ord-nested-parent, task: t, status: pending_approval}}
available_tools: [{{name: recv}}]
actions:
  - {{id: 1, plan: {{path: plans/inner, hash: "{pin}"}}, why: w}}
""",
    )
    lab.commit("parent")
    lab.run()
    for slug in ("ord-argv", "num", "ord-nested"):
        _approve(lab, slug)
    lab.commit("approve", ALICE)
    hashes = {}
    for slug, (old, new) in {
        "ord-argv": (APPROVED, SWAPPED),
        "inner": (APPROVED, SWAPPED),
        "num": ("n: 1", "n: 1.0"),
    }.items():
        before = lab.cli("hash", f"plans/{slug}", cwd=lab.repo).stdout.strip()
        _edit(lab, slug, old, new)
        hashes[slug] = (before, lab.cli("hash", f"plans/{slug}", cwd=lab.repo).stdout.strip())
    lab.hashes = hashes  # type: ignore[attr-defined]
    lab.commit("tidy the params", AGENT)
    lab.run()
    lab.audit_result = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-keyorder", _build)


def test_the_edits_keep_the_hash(lab: Lab) -> None:
    for slug, (before, after) in lab.hashes.items():  # type: ignore[attr-defined]
        assert before == after, slug


#: round 18: both broke (the tool got the keys in the order the file wrote them); fixed since:
#: params are built in the hash's key order (RFC 8785), whatever order the file writes
FOUND = {"ord-argv": R18, "ord-nested": R18}
BROKEN: dict[str, object] = {}  # every FOUND variant holds now


@pytest.mark.parametrize(
    "slug", cases(["ord-argv", "ord-nested", "num"], ["ord-argv", "ord-nested", "num"], BROKEN)
)
def test_the_tool_gets_the_approved_bytes(lab: Lab, slug: str) -> None:
    calls = lab.calls(slug)
    assert len(calls) <= 1, calls
    if not calls:  # refused or held: the edit did not run on the old approval
        return
    argv, stdin = calls[0]["argv"], calls[0]["stdin"]
    assert argv[1] == '{"first":"delete","second":"backup"}', argv
    assert list(json.loads(stdin)["steps"]) == ["first", "second"], stdin
    if slug == "num":
        assert json.loads(stdin)["n"] == 1 and "1.0" not in stdin


def test_the_audit_reads_the_history(lab: Lab) -> None:
    _rc, report = lab.audit_result  # type: ignore[attr-defined]
    assert "executions" in report, report
