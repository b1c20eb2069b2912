# ruff: noqa: E501
"""Round 23, what runs and what the reviewer is shown: the gate preview (``execution.gate``,
fresh in round 22) when the values at a pause are many or large, secrets inside the cut
values, and tool outputs aimed at fields that decide how often or whether an action runs.

One lab: one pass to freeze, Alice approves every plan in one commit, one pass (each gated
plan pauses), ``plangate show --config`` of each gated plan, Bob approves every gate, one
more pass.

docs/execution.md ("Gate"): at the pause the engine records "what approving runs with ...:
the action's params, for a nested plan its inputs and each of its actions' params ..., and
the params of the action's preconditions and verify tool"; "a value not known yet says
why"; "Before approving the gate, ``plangate show PATH`` prints it".

- ``nest-1`` (control): the gated action 2 is a pinned nested plan of 1 action whose param
  is ``"QQ..Q$<inputs.to>"`` (900 Q), ``inputs: {to: "$<actions[1].outputs.o>"}``, the
  output being ``NVAL-1``. Asserted: the preview after "WAITING HERE" shows the input value,
  or says the values are not shown. Held (``many-params``, ``checks-60``, ``inputs-40``
  held too: each own param reads "(not shown: this pause's values are too many for
  PLAN.yml)", or the values are shown).
- ``nest-60``: the same with a nested plan of 60 such actions. Asserted likewise.
  **Broke**: PLAN.yml's record is ``gate: {action: 2, params: {}}``: no ``inputs``, no
  ``actions``, no "not shown" note (20 such actions are still recorded, cut); ``show``
  prints "WAITING HERE: approving the gate runs it with these values:" followed by nothing.
  Bob's approval then runs 60 nested calls, each receiving 900 Q + ``NVAL-60``.
- ``many-params`` (control of the size bound): the gated action has 300 literal params of
  1,900 characters. Asserted likewise (the record says "(not shown: ...too many...)").
- ``checks-60``: the gated action has 60 preconditions whose check tool takes a 900-char
  literal and ``$<actions[1].outputs.o>`` (``CVAL-60``). Asserted likewise.
- ``inputs-40``: the nested plan declares 40 inputs; the parent passes 39 literals of 1,000
  characters and ``i0`` from the output (``IVAL-40``). Asserted likewise.
- ``nest-300-small``: 300 nested actions with the short param ``v: "$<inputs.to>"``
  (``NVAL-300``); its gate is left waiting. **Broke** the same way (the record is dropped
  for the number of actions, not only for long values).
After Bob's gate approval, every gated tool is called once per step with the values
(checked for ``nest-60``: 60 calls each receiving ``NVAL-60``).

Secrets in cut values (PLANGATE_SECRET_PIN = ``483920``):

- ``secret-sha``: the gated param is 2,100 ``A`` then ``$<secrets.PIN>``; the preview cuts it
  and gives the SHA-256 of its RFC 8785 form. Asserted: that digest is of the redacted
  value, never of the real one (a 6-digit PIN would fall to 10^6 guesses), and the PIN is
  in no committed byte. Held.
- ``secret-cut-N``: the PIN placed so that the preview's cut falls inside it. Asserted: no
  3+ character start of the PIN before the cut mark. Held.

``gate-breaks``: the output at the gate holds NEL, U+2028, U+2029, a CR, a NUL and a BOM
(characters plangate refuses raw in a plan file). Asserted: the plan stays readable at the
pause (the record writes them escaped), ``show`` prints them escaped, the gated action
receives them exactly, the plan completes. Held.

Tool outputs never decide which actions run or how often: a reference in ``timeout``,
``retry.attempts``, ``requires_approval``, ``on_failure`` (``ref-timeout``, ``ref-attempts``,
``ref-gate``, ``ref-onfail``, and ``verify.interval``, ``retry.delay``, ``needs``,
``idempotent``: ``ref-interval``, ``ref-delay``, ``ref-needs``, ``ref-idempotent``). Asserted: the plan is refused (invalid) and ``rec`` never
runs for it. Held.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

R23 = "round 23: "
PIN = "483920"
Q = "Q" * 900
NESTS = {"nest-1": 1, "nest-60": 60, "nest-300-small": 300}
SMALL = {"nest-300-small"}
EXPECT = {
    "nest-1": "NVAL-1",
    "nest-60": "NVAL-60",
    "nest-300-small": "NVAL-300",
    "many-params": None,
    "checks-60": "CVAL-60",
    "inputs-40": "IVAL-40",
}
BREAKS = "a\u0085b\u2028c\rd\u2029e\x00f\ufeffg"
CUTS = {"secret-cut-a": 1996, "secret-cut-b": 1998, "secret-cut-c": 2000}
REFS = {
    "ref-timeout": 'timeout: "$<actions[1].outputs.t>"',
    "ref-attempts": 'on_failure: retry, retry: {attempts: "$<actions[1].outputs.t>"}',
    "ref-gate": 'requires_approval: "$<actions[1].outputs.b>"',
    "ref-onfail": 'on_failure: "$<actions[1].outputs.f>"',
    "ref-interval": 'verify: {tool: rec, params: {tag: v}, expect: {path: "$.exit_code", equals: 0}, interval: "$<actions[1].outputs.t>", timeout: 5}',
    "ref-delay": 'on_failure: retry, retry: {attempts: 2, delay: "$<actions[1].outputs.t>"}',
    "ref-needs": 'needs: ["$<actions[1].outputs.t>"]',
    "ref-idempotent": 'idempotent: "$<actions[1].outputs.b>"',
}


def _child(slug: str, n: int, tag: str) -> str:
    pad = "" if slug.startswith(tuple(SMALL)) else Q
    acts = "\n".join(
        f'  - {{id: {i}, tool: rec, why: w, params: {{tag: {tag}, v: "{pad}$<inputs.to>"}}}}'
        for i in range(1, n + 1)
    )
    return f'plan:\n  name: {slug}\n  task: t\n  status: draft\ninputs: {{to: "d"}}\navailable_tools: [{{name: rec}}]\nactions:\n{acts}\n'


def _parent(slug: str, pin: str, child: str, value: str, inputs: str) -> str:
    return f"""plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {slug}-1, x: "{value}"}}, outputs: [{{name: o, path: "$.json.echo.x"}}]}}
  - id: 2
    plan: {{path: plans/{child}, hash: "{pin}"}}
    why: w
    requires_approval: true
    inputs: {inputs}
"""


def _gated(slug: str, params: str, extra: str = "", value: str = "v") -> str:
    return f"""plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}, {{name: chk}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {slug}-1, x: "{value}"}}, outputs: [{{name: o, path: "$.json.echo.x"}}]}}
  - id: 2
    tool: rec
    why: w
    requires_approval: true
    params: {{tag: {slug}-2, {params}}}
{extra}"""


GRAPH = """plan:
  name: graph-gate
  task: t
  status: pending_approval
available_tools: [{name: rec}]
actions:
  - {id: 1, tool: rec, why: w, needs: [], params: {tag: gg-1}}
  - {id: 2, tool: rec, why: w, needs: [], requires_approval: true, params: {tag: gg-2}}
  - {id: 3, tool: rec, why: w, needs: [1], params: {tag: gg-3}}
  - {id: 4, tool: rec, why: w, needs: [], params: {tag: gg-4}}
  - {id: 5, tool: rec, why: w, needs: [2, 3], params: {tag: gg-5}}
"""


def _pin(lab: Lab, slug: str) -> str:
    return lab.cli("hash", str(lab.repo / "plans" / slug)).stdout.split()[0]


def _build(root: Path) -> Lab:
    rec = json.dumps([sys.executable, str(root / "lab" / "rec.py"), "{tag}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    lab = Lab(
        root / "lab",
        tools=f"chk: {{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}, idempotent: true, risk: low}}\n",
    )
    lab.extra_env = {"PLANGATE_SECRET_PIN": PIN}  # type: ignore[attr-defined]
    for slug, n in NESTS.items():
        lab.write(f"{slug}-child", _child(f"{slug}-child", n, f"{slug}-c"))
    ins = ", ".join(f"i{k}: d" for k in range(40))
    lab.write(
        "inputs-40-child",
        f'plan:\n  name: c\n  task: t\n  status: draft\ninputs: {{{ins}}}\navailable_tools: [{{name: rec}}]\nactions:\n  - {{id: 1, tool: rec, why: w, params: {{tag: inputs-40-c, v: "$<inputs.i0>"}}}}\n',
    )
    lab.commit("children")
    for slug, n in NESTS.items():
        lab.write(
            slug,
            _parent(
                slug,
                _pin(lab, f"{slug}-child"),
                f"{slug}-child",
                f"NVAL-{n}",
                '{to: "$<actions[1].outputs.o>"}',
            ),
        )
    passed = ", ".join(
        ['i0: "$<actions[1].outputs.o>"'] + [f'i{k}: "{"I" * 1000}"' for k in range(1, 40)]
    )
    lab.write(
        "inputs-40",
        _parent(
            "inputs-40",
            _pin(lab, "inputs-40-child"),
            "inputs-40-child",
            "IVAL-40",
            "{" + passed + "}",
        ),
    )
    many = ", ".join(f'p{i}: "{chr(65 + i % 26) * 1900}"' for i in range(300))
    lab.write("many-params", _gated("many-params", many))
    checks = "    preconditions:\n" + "".join(
        f'      - {{tool: chk, params: {{tag: checks-60-k, n: {i}, pad: "{Q}", v: "$<actions[1].outputs.o>"}}, expect: {{path: "$.exit_code", equals: 0}}}}\n'
        for i in range(60)
    )
    lab.write("checks-60", _gated("checks-60", "a: 1", checks, value="CVAL-60"))
    lab.write("secret-sha", _gated("secret-sha", f'v: "{"A" * 2100}$<secrets.PIN>"'))
    for slug, pad in CUTS.items():
        lab.write(slug, _gated(slug, f'v: "{"A" * pad}$<secrets.PIN>{"B" * 300}"'))
    for slug, line in REFS.items():
        lab.write(
            slug,
            f"""plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {slug}-1, t: 5, b: false, f: skip}}, outputs: [{{name: t, path: "$.json.echo.t"}}, {{name: b, path: "$.json.echo.b"}}, {{name: f, path: "$.json.echo.f"}}]}}
  - {{id: 2, tool: rec, why: w, {line}, params: {{tag: {slug}-2}}}}
""",
        )
    lab.write("graph-gate", GRAPH)
    lab.write(
        "gate-breaks",
        _gated("gate-breaks", 'to: "$<actions[1].outputs.o>"', value=json.dumps(BREAKS)[1:-1]),
    )
    lab.commit("plans")
    lab.run()
    gated = [*EXPECT, "secret-sha", *CUTS, "graph-gate", "gate-breaks"]
    for slug in [*gated, *REFS]:
        if lab.status()[f"plans/{slug}"]["status"] == "pending_approval":
            lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    previews = {}
    for slug in gated:
        out = lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / slug))
        previews[slug] = out.stdout + out.stderr
    for slug in gated:
        if slug in SMALL:
            continue  # left waiting: 300 calls would cost suite time
        if lab.status()[f"plans/{slug}"]["status"] == "awaiting_approval":
            lab.set_status(slug, "approved")
            lab.commit(f"gate {slug}", BOB, f"plans/{slug}/PLAN.yml")
    lab.run()
    lab.results = {  # type: ignore[attr-defined]
        "previews": previews,
        "history": lab.git("log", "--all", "-p", "--format=%H%n%B"),
        "status": lab.status(),
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-gatebounds", _build)


#: Fixed: the record keeps inputs and says what it leaves out (a note).
NEST_FOUND = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=R23
    + "a gated nested plan whose preview is over the record's room is recorded as `params: {}`: "
    "no inputs, no actions, no 'not shown' note; show prints 'runs it with these values:' and nothing",
)
BROKEN: dict[str, Any] = {}


def _waiting(text: str) -> str:
    i = text.find("WAITING HERE")
    assert i >= 0, text[-2000:]
    return text[i : i + 6000]


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=BROKEN.get(s, ())) for s in EXPECT])
def test_the_gate_preview_shows_the_values_or_says_it_does_not(lab: Lab, slug: str) -> None:
    shown = _waiting(lab.results["previews"][slug])  # type: ignore[attr-defined]
    value = EXPECT[slug]
    assert (value is not None and value in shown) or "not shown" in shown, shown[:1500]


def test_the_approved_gate_then_runs_each_nested_step_once(lab: Lab) -> None:
    got = [json.loads(c["stdin"])["v"] for c in lab.calls("nest-60-c")]
    assert len(got) == 60 and all(v == Q + "NVAL-60" for v in got), len(got)


def test_a_gate_in_a_graph_runs_every_action_once(lab: Lab) -> None:
    counts = {t: len(lab.calls(t)) for t in ("gg-1", "gg-2", "gg-3", "gg-4", "gg-5")}
    assert set(counts.values()) == {1}, counts
    assert lab.results["status"]["plans/graph-gate"]["status"] == "completed"  # type: ignore[attr-defined]


def test_line_breaks_yaml_refuses_in_a_gate_value_keep_the_plan_readable(lab: Lab) -> None:
    shown = _waiting(lab.results["previews"]["gate-breaks"])  # type: ignore[attr-defined]
    assert "\\u2028" in shown and "\\x85" in shown, shown[:400]
    got = [json.loads(c["stdin"])["to"] for c in lab.calls("gate-breaks-2")]
    assert got == [BREAKS], got
    assert lab.results["status"]["plans/gate-breaks"]["status"] == "completed"  # type: ignore[attr-defined]


def test_the_cut_digest_is_of_the_redacted_value(lab: Lab) -> None:
    real = hashlib.sha256(json.dumps("A" * 2100 + PIN).encode()).hexdigest()
    history = lab.results["history"]  # type: ignore[attr-defined]
    plan = lab.read("secret-sha") + lab.results["previews"]["secret-sha"]  # type: ignore[attr-defined]
    assert real not in history and real not in plan
    assert PIN not in history and PIN not in plan


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=BROKEN.get(s, ())) for s in CUTS])
def test_a_cut_inside_a_secret_keeps_none_of_it(lab: Lab, slug: str) -> None:
    shown = _waiting(lab.results["previews"][slug])  # type: ignore[attr-defined]
    history = lab.results["history"]  # type: ignore[attr-defined]
    for text in (shown, history):
        for k in range(3, len(PIN) + 1):
            assert "A" + PIN[:k] not in text, (slug, k)


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=BROKEN.get(s, ())) for s in REFS])
def test_an_output_never_decides_how_an_action_runs(lab: Lab, slug: str) -> None:
    row = lab.results["status"][f"plans/{slug}"]  # type: ignore[attr-defined]
    assert row["status"] == "invalid", row
    assert lab.calls(f"{slug}-1") == [] and lab.calls(f"{slug}-2") == []
