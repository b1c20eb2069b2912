# ruff: noqa: E501
"""Round 17, what ``plangate show`` tells the reviewer a failure does vs what the run does.

docs/plan-format.md: a top-level ``on_failure`` (``stop``/``skip``/``retry``/``ask``) is "the
default ``on_failure`` of every action"; an action's own ``on_failure`` defaults to "the
plan's ``on_failure``". A nested plan "may use checks, retries, fallbacks". The reviewer's
text view (``plangate show``, and ``--format markdown`` for a pull-request comment) prints a
line ``on failure: ...`` per action. One lab, one pass to freeze, Alice approves all, one pass
to run. ``boom`` is an exec tool that records its call to ``ran.log`` and exits 1.

- ``plan-skip``: top-level ``on_failure: skip``; action 1 ``boom``, action 2 ``rec``.
  **Broke**: ``show`` prints ``on failure: stop (plan default)`` for both actions; the run
  skips action 1's failure, runs action 2 and commits the plan ``completed``.
- ``plan-retry``: top-level ``on_failure: retry``; action 1 ``boom`` with ``retry:
  {attempts: 2, delay: 0}``. **Broke**: ``show`` prints ``on failure: stop (plan default)``;
  the non-idempotent ``boom`` is called 3 times.
- ``markdown-skip``: the ``plan-skip`` plan through ``show --format markdown`` (the PR
  comment's table). **Broke**: the table's "on failure" column says ``stop (plan default)``.
- ``nested-skip``: a parent pins a nested plan whose own top-level ``on_failure: skip``
  makes its action 2 run after its action 1 (``boom``) fails. **Broke**: ``show`` of the
  parent prints ``on failure: stop (plan default)`` under ``[1/1]``; the nested action 2
  runs.
- ``action-skip`` (control): the action's own ``on_failure: skip``: held, shown as ``skip``.

And what ``show`` says a nested plan's actions get as ``$<inputs.*>``:

- ``nested-inputs``: a parent pins ``plans/sub-in`` (``inputs: {to: ops@example.com}``, its
  action sends ``to: "$<inputs.to>"``) and passes ``inputs: {to: evil@attacker.example}``.
  **Broke**: ``show`` heads the nested actions with ``its actions ("sub-in", inputs {"to":
  "ops@example.com"})``, the defaults the run does not use; the tool gets
  ``evil@attacker.example``. Asserted: the inputs ``show`` lists for the nested actions are
  the ones they run with.

Each variant asserts that the policy ``show`` prints for the failing action is the one the
run applied (and, for ``plan-retry``, that ``boom`` ran as often as ``show`` allows: once).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

BOOM = """import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
sys.exit(1)
"""


def _plan(tag: str, top: str = "", first: str = "", status: str = "pending_approval") -> str:
    return f"""plan:
  name: "{tag}"
  task: "t"
  status: {status}
{top}available_tools:
  - name: boom
  - name: rec
actions:
  - id: 1
    tool: boom
    why: "fails"
{first}    params: {{tag: "{tag}-boom"}}
  - id: 2
    tool: rec
    why: "after the failure"
    params: {{tag: "{tag}-after"}}
"""


PLANS = {
    "plan-skip": _plan("plan-skip", top="on_failure: skip\n"),
    "plan-retry": _plan(
        "plan-retry", top="on_failure: retry\n", first="    retry: {attempts: 2, delay: 0}\n"
    ),
    "action-skip": _plan("action-skip", first="    on_failure: skip\n"),
}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "boom.py").write_text(BOOM)
    lab = Lab(root / "lab")
    boom = json.dumps([sys.executable, str(root / "boom.py"), "{tag}"])
    lab.write_config(
        tools=f"boom: {{kind: exec, argv: {boom}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for slug, text in PLANS.items():
        lab.write(slug, text)
    lab.write("sub-skip", _plan("sub-skip", top="on_failure: skip\n", status="draft"))
    lab.commit("plans", AGENT)
    pin = lab.cli("hash", str(lab.repo / "plans/sub-skip")).stdout.strip().split()[-1]
    lab.write(
        "nested-skip",
        f"""plan:
  name: "nested-skip"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    plan: {{path: plans/sub-skip, hash: "{pin}"}}
    why: "the shared sub-plan"
  - id: 2
    tool: rec
    why: "after"
    params: {{tag: "nested-skip-parent-after"}}
""",
    )
    lab.write(
        "sub-in",
        """plan:
  name: "sub-in"
  task: "t"
  status: draft
inputs:
  to: ops@example.com
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "notify"
    params: {tag: "sub-in", to: "$<inputs.to>"}
""",
    )
    lab.commit("parent", AGENT)
    pin_in = lab.cli("hash", str(lab.repo / "plans/sub-in")).stdout.strip().split()[-1]
    lab.write(
        "nested-inputs",
        f"""plan:
  name: "nested-inputs"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    plan: {{path: plans/sub-in, hash: "{pin_in}"}}
    why: "notify"
    inputs: {{to: "evil@attacker.example"}}
""",
    )
    lab.commit("parent with inputs", AGENT)
    shows = {}
    for slug in (*PLANS, "nested-skip", "nested-inputs"):
        shows[slug] = lab.cli(
            "show", "--config", str(lab.config), str(lab.repo / "plans" / slug)
        ).stdout
    shows["markdown-skip"] = lab.cli(
        "show",
        "--format",
        "markdown",
        "--config",
        str(lab.config),
        str(lab.repo / "plans/plan-skip"),
    ).stdout
    lab.shows = shows  # type: ignore[attr-defined]
    lab.run()
    for slug in (*PLANS, "nested-skip", "nested-inputs"):
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-showpolicy", _build)


def _policy(text: str, head: str) -> str:
    """The ``on failure:`` line of the block that starts with ``head`` in show's text."""
    block = text.split(head, 1)[1]
    match = re.search(r"on failure: ([^\n]*)", block)
    assert match, text
    return match.group(1)


# round 17: every BROKE variant broke when found; fixed since (the plan-level on_failure in
# show and in the estimate, a verify's polls counted, nested inputs shown as run)
FIXED = True
BROKE = {
    v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 17: {why}")
    for v, why in {
        "plan-skip": "show says 'on failure: stop (plan default)' under a top-level on_failure: skip; the run skips the failure and goes on",
        "plan-retry": "show says 'on failure: stop (plan default)' under a top-level on_failure: retry; the tool is called 3 times",
        "markdown-skip": "show --format markdown's table says 'stop (plan default)' under a top-level on_failure: skip",
        "nested-inputs": "show heads a nested plan's actions with its default inputs; the run uses the parent's (another recipient)",
        "nested-skip": "show prints 'stop (plan default)' for a nested plan's actions whose own top-level on_failure is skip; the run goes on after the failure",
    }.items()
}


def _p(vid: str) -> object:
    return pytest.param(vid, id=vid, marks=[BROKE[vid]] if vid in BROKE and not FIXED else [])


@pytest.mark.parametrize(
    "vid",
    [_p(v) for v in ("plan-skip", "plan-retry", "markdown-skip", "nested-skip", "action-skip")],
)
def test_show_names_the_failure_policy_the_run_applies(lab: Lab, vid: str) -> None:
    shows: dict[str, str] = lab.shows  # type: ignore[attr-defined]
    if vid == "plan-skip" or vid == "action-skip":
        assert len(lab.calls(f"{vid}-boom")) == 1
        assert len(lab.calls(f"{vid}-after")) == 1, "the run went on after the failure"
        shown = _policy(shows[vid], "[1] boom")
        assert shown.startswith("skip"), f"show says {shown!r}; the run skipped the failure"
    elif vid == "plan-retry":
        calls = len(lab.calls("plan-retry-boom"))
        shown = _policy(shows[vid], "[1] boom")
        if shown.startswith("stop"):
            assert calls == 1, f"show says {shown!r}, boom was called {calls} times"
        else:
            assert shown.startswith("retry"), shown
    elif vid == "markdown-skip":
        assert len(lab.calls("plan-skip-after")) == 1
        row = next(line for line in shows[vid].splitlines() if line.startswith("| 1 |"))
        assert "skip" in row and "stop" not in row, f"the PR comment says {row!r}"
    else:
        assert len(lab.calls("sub-skip-boom")) == 1
        assert len(lab.calls("sub-skip-after")) == 1, "the nested plan went on after the failure"
        shown = _policy(shows[vid], "[1/1] boom")
        assert shown.startswith("skip"), f"show says {shown!r} for [1/1]; the run skipped it"


@pytest.mark.parametrize("vid", [_p("nested-inputs")])
def test_show_lists_the_inputs_nested_actions_run_with(lab: Lab, vid: str) -> None:
    calls = lab.calls("sub-in")
    assert len(calls) == 1
    sent = json.loads(calls[0]["stdin"])["to"]
    assert sent == "evil@attacker.example"
    text: str = lab.shows[vid]  # type: ignore[attr-defined]
    head = re.search(r'its actions \("sub-in", inputs (\{.*\})\)', text)
    assert head, text
    listed = json.loads(head.group(1))
    assert listed.get("to") == sent, (
        f"show lists inputs {listed} for the nested actions; the tool got {sent!r}"
    )
