# ruff: noqa: E501
"""Round 43, secrets never reaching git: the plan's own output queries used as an *oracle* over
a result that holds a secret. The redactor masks every printed form of a secret in what is
recorded, but an action's ``outputs`` (RFC 9535 queries with ``match()``/``search()``,
comparisons and ``length()`` in filters) are evaluated over the tool's result *before* it is
redacted, and which queries matched (their names, the non-secret value they select) is then
committed in PLAN.yml's ``execution`` block and EXECUTION_LOG.md. The plan chooses the queries,
so it chooses a function of the secret that reaches git (``docs/execution.md``: "a plan cannot
choose how a tool prints").

Lab ``q`` (local mode), ``secrets.file`` holding ``TOK: Zq8Wx3Yv7Ut2``; one plan per variant,
all approved by Alice and run in one pass. Action 1 sends ``w: [{s: "$<secrets.TOK>", n: hit}]``
to a tool that hands its params back (the catalog's ``echo``, or the exec ``rec`` tool, whose
stdout JSON echoes its stdin), and declares optional outputs selecting ``n`` (a plain word)
only when a filter over ``s`` holds:

- ``match-per-char``: one output per (position, character) ``p<i>_<c>`` for the first 3
  positions, ``$.w[?match(@.s, '.{i}c.*')].n``: the recorded output names spell the secret;
- ``search-prefix``: one output ``$.w[?search(@.s, 'Zq8W')].n`` (a guessed part confirmed; round 55: no ``^``, a character in an I-Regexp);
- ``compare-order``: ``$.w[?@.s > 'Y' && @.s < 'a'].n`` (string order: a binary search);
- ``length``: ``$.w[?length(@.s) == 12].n`` (the secret's length);
- ``exec-search``: as ``search-prefix`` over the exec tool's ``$.json.echo`` (tool kind exec);
- ``pattern-from-data``: the ``match()`` pattern is read from the params (``ps``: one
  ``{p: ".{i}c.*", c: hit<c>}`` per position and character, positions last-first), one output
  ``$.ps[?match($.w[0].s, @.p)].c``: its recorded *value* is the secret's first 3
  characters, reversed (``[hit8, hitq, hitZ]``), past every printed form the redactor reads
  (12 positions at once exceed the 0.5 s match budget; one action per 3 positions does not);
- ``direct`` (control): output ``$.w[0].s`` selects the secret itself (recorded as ``***``).

``guard-bits``: two actions each sending ``s: "$<secrets.TOK>"`` to ``echo`` with
``on_failure: skip`` and a guard ``matches: "Z.*"`` (action 1) or ``"Y.*"`` (action 2): which one
ran and which was skipped (committed) is a bit of the secret per action. Asserted: both have
the same recorded status (over the masked value neither guard holds).

Asserted: the plan completed, and no output recorded for action 1 (PLAN.yml ``execution``
at HEAD) holds ``hit``: evaluated over the result as recorded (the secret masked) none of
these filters holds, so whatever was recorded must not depend on the secret; the secret's text
is in no commit (``log --all -p``).

Broke (round 43): every oracle variant: the outputs are recorded (``p0_Z: [hit]``, ``p1_q:
[hit]``, ``p2_8: [hit]``; ``hit`` for the prefix, order and length filters; ``chars: [hit8, hitq, hitZ]``). The controller
should run the output queries over the redacted result (the one it records), or refuse
filters that read a value a secret reached.

Fixed (round 43): output queries run over the result as it is recorded (the run's redactor:
``results.extract_outputs`` with ``redact``), so which nodes a filter selects never depends on
a secret; a selected node's value is then the tool's own at the same place (a later action
gets what the tool handed back; it is recorded ``***``). ``expect`` (verify, checks) reads
results as recorded too, and guards test the resolved params as recorded (``steps``:
``before_tool``, ``guarded``): both ``guard-bits`` actions are skipped. A guard over a
``$<secrets.*>`` param is not refused at validation: run over the masked value it tests
nothing of the secret, and this plan (asserted to complete) stays valid.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from advkit import ALICE, Lab, WindowClosed, with_widening_window
from test_round2_execution_kit import shared

SECRET = "Zq8Wx3Yv7Ut2"
VARIANTS = [
    "match-per-char",
    "search-prefix",
    "compare-order",
    "length",
    "exec-search",
    "pattern-from-data",
    "direct",
]
#: ``pattern-from-data``: the patterns come from the params, one per (position, character),
#: positions last-first, so one output's value lists the secret's characters reversed.
PATTERNS = [
    {"p": f".{{{i}}}{c}.*", "c": f"hit{c}"}
    for i in reversed(range(3))
    for c in string.ascii_letters + string.digits
]


#: the budget the controller gives every match()/search() over one result is wall-clock
#: time (0.5 s): on a loaded machine the 186 ``match-per-char`` (or ``pattern-from-data``)
#: filters over one result can outrun it and the action fails before its outputs are
#: recorded. The lab then rebuilds with the same filters spread over 2, 4, ... 32 actions (each
#: its own result and budget; advkit's widening window), every action's outputs asserted.
SPLIT = 1


def _chunks(items: list[str], n: int) -> list[list[str]]:
    size = -(-len(items) // n)
    return [items[i : i + size] for i in range(0, len(items), size)]


def _outputs(vid: str, split: int = 1) -> tuple[str, list[tuple[str, str]]]:
    """(tool, per action: (output lines at 6-space indent, the ``ps`` param))."""
    if vid == "match-per-char":
        lines = [
            f"- {{name: p{i}_{c}, path: \"$.w[?match(@.s, '.{{{i}}}{c}.*')].n\", optional: true}}"
            for i in range(3)
            for c in string.ascii_letters + string.digits
        ]
        return "echo", [("\n".join(part), "[]") for part in _chunks(lines, split)]
    if vid == "search-prefix":
        return "echo", [
            ("- {name: hit, path: \"$.w[?search(@.s, 'Zq8W')].n\", optional: true}", "[]")
        ]
    if vid == "compare-order":
        return "echo", [
            ("- {name: hit, path: \"$.w[?@.s > 'Y' && @.s < 'a'].n\", optional: true}", "[]")
        ]
    if vid == "length":
        return "echo", [('- {name: hit, path: "$.w[?length(@.s) == 12].n", optional: true}', "[]")]
    if vid == "exec-search":
        return "rec", [
            (
                "- {name: hit, path: \"$.json.echo.w[?search(@.s, 'Zq8W')].n\", optional: true}",
                "[]",
            )
        ]
    if vid == "pattern-from-data":
        out = '- {name: chars, path: "$.ps[?match($.w[0].s, @.p)].c", optional: true}'
        size = -(-len(PATTERNS) // split)
        parts = [PATTERNS[i : i + size] for i in range(0, len(PATTERNS), size)]
        return "echo", [(out, json.dumps(part)) for part in parts]
    return "echo", [('- {name: val, path: "$.w[0].s", optional: true}', "[]")]


def _plan(vid: str, split: int = 1) -> str:
    tool, actions = _outputs(vid, split)
    body = ""
    for n, (outs, ps) in enumerate(actions, 1):
        outs = "\n".join("      " + line for line in outs.splitlines())
        body += f"""\
  - id: {n}
    tool: {tool}
    why: "hand back the token"
    params:
      tag: "{vid}"
      w:
        - {{s: "$<secrets.TOK>", n: "hit"}}
      ps: {ps}
    outputs:
{outs}
"""
    return f"""\
plan:
  name: "{vid}"
  task: "secret oracle {vid}"
  status: pending_approval
available_tools:
  - name: {tool}
actions:
{body}"""


GUARD_PLAN = """\
plan:
  name: "guard-bits"
  task: "secret oracle through guards"
  status: pending_approval
available_tools:
  - name: echo
actions:
""" + "".join(
    f"""\
  - id: {n}
    tool: echo
    why: "guess {guess}"
    on_failure: skip
    params: {{s: "$<secrets.TOK>"}}
    guards:
      - {{param: s, matches: "{guess}.*"}}
"""
    for n, guess in ((1, "Z"), (2, "Y"))
)


def _build(root: Path, split: int) -> Lab:
    (root / "q").mkdir()
    secrets = root / "secrets.yml"
    secrets.write_text(f"TOK: {SECRET}\n")
    lab = Lab(root / "q", extra=f"secrets: {{file: {secrets}}}\n")
    for vid in VARIANTS:
        lab.write(vid, _plan(vid, split))
    lab.write("guard-bits", GUARD_PLAN)
    lab.commit("oracle plans")
    lab.run()
    for vid in [*VARIANTS, "guard-bits"]:
        lab.set_status(vid, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    for vid in VARIANTS:  # the filters outran the wall-clock budget: a slow bench, rebuild
        execution = lab.plan(vid).get("execution") or {}
        if execution.get("status") == "failed" and "took over" in json.dumps(execution):
            raise WindowClosed(f"{vid}: its match() filters outran the budget in {split} actions")
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(
        tmp_path_factory, "r43-secretquery", with_widening_window(_build, first=SPLIT, tries=6)
    )


@pytest.mark.parametrize(
    "vid",
    VARIANTS,
)
def test_outputs_recorded_never_depend_on_a_secret(lab: Lab, vid: str) -> None:
    data = lab.plan(vid)
    execution = data.get("execution") or {}
    assert execution.get("status") == "completed", execution
    outputs = json.dumps([a.get("outputs") or {} for a in execution["actions"]])
    assert SECRET not in lab.git("log", "--all", "-p")
    if vid == "direct":
        assert "***" in outputs and SECRET not in outputs
        return
    assert "hit" not in outputs, f"outputs that only a secret can select were committed: {outputs}"


def test_guard_outcomes_never_depend_on_a_secret(lab: Lab) -> None:
    execution = lab.plan("guard-bits").get("execution") or {}
    assert execution.get("status") == "completed", execution
    states = [a["status"] for a in execution["actions"]]
    assert states[0] == states[1], (
        f"the guards' outcomes spell the secret's first character: {states}"
    )
