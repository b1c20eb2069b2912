"""Round 13, what runs and how often: a JSONPath query the controller evaluates in its own
process over a tool's result.

A plan's ``outputs[].path`` and ``verify.expect[].path`` are RFC 9535 queries the controller
runs over the tool's result (untrusted data) inside the pass, outside the tool's timeout.
Regex checks are bounded (0.1 s, docs/plan-format.md); query cost is not. A result of
95 nested lists of 60 zeros each (about 7 KB, depth under the 100-level I-JSON limit) and a
query with three descendant segments (``$..*..*..*``, cubic in the result) keep the pass
busy for minutes: the plan stays ``executing``, later plans in the pass never run, and an
abort cannot be honoured (nothing yields).

- ``outputs-descendant``: action 1 captures ``outputs: [{name: v, path: "$..*..*..*"}]``;
  ``zz-ctl`` (an honest plan, sorted after it) is approved in the same pass.
- ``verify-descendant``: ``verify: {expect: {path: "$..*..*..*", equals: 1}}`` (own lab).
- ``outputs-match-redos``: ``path: '$.json.s[?match(@, "(a|aa)+")]'`` over twenty strings of
  40 ``a`` and a ``!``: RFC 9535's ``match()`` (an I-Regexp) backtracks, unbounded, where a
  guard's or an ``expect``'s ``matches`` is cut at 0.1 s. (``search(@, "(a|aa)+$")`` stalls
  the same way; tried by hand, left out for suite time.)

Defence asserted: the pass ends within 15 s (the hostile plan recorded as failed or
completed, never left ``executing``), and the honest plan runs exactly once.
All three broke (round 13): the pass is still busy when it is killed after 4 s (by hand:
over 40 s for the descendant query, over 15 s for the match).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from advkit import Lab, plan_text
from test_round2_execution_kit import shared

GEN = """\
import json, sys
d, w = int(sys.argv[1]), int(sys.argv[2])
x = []
for _ in range(d):
    x = [0] * w + [x]
out = {"v": x, "s": ["a" * 40 + "!"] * 20}
print(json.dumps(out, separators=(",", ":")))
"""
QUERY = "$..*..*..*"
LIMIT = 15.0  # a stall is minutes; the bounded pass takes about 1.5 s (more on a loaded machine)


def _plan(tag: str, extra: str) -> str:
    return f"""\
plan:
  name: "{tag}"
  task: "a query over a tool result"
  status: pending_approval
available_tools:
  - name: gen
  - name: rec
actions:
  - id: 1
    tool: gen
    why: "produce nested data"
    params: {{d: "95", w: "60"}}
{textwrap.indent(extra, "    ")}  - id: 2
    tool: rec
    why: "record that {tag} went on"
    params: {{tag: "{tag}"}}
"""


def _build(root: Path, slug: str, extra: str) -> Lab:
    (root).mkdir(parents=True, exist_ok=True)
    gen = root / "gen.py"
    gen.write_text(GEN)
    argv = json.dumps([sys.executable, str(gen), "{d}", "{w}"])
    lab = Lab(root, tools=f"gen: {{kind: exec, argv: {argv}, idempotent: true, risk: low}}\n")
    lab.write(slug, _plan(slug, extra))
    lab.write("zz-ctl", plan_text("zz-ctl"))
    lab.commit("plans")
    lab.run()
    lab.approve(slug)
    lab.approve("zz-ctl")
    try:  # a stall is for ever: the bound only tells it apart (short for the open variant)
        bound = LIMIT if "redos" in slug else 60.0
        result = lab.cli("run", "--once", "--config", str(lab.config), timeout=bound)
        lab.pass_ended = result.returncode == 0
    except subprocess.TimeoutExpired:
        lab.pass_ended = False
    return lab


VARIANTS = {
    "outputs-descendant": f'outputs: [{{name: v, path: "{QUERY}"}}]\n',
    "verify-descendant": f'verify: {{expect: {{path: "{QUERY}", equals: 1}}}}\n',
    "outputs-match-redos": "outputs: [{name: v, path: '$.json.s[?match(@, \"(a|aa)+\")]'}]\n",
}


# round 13: all three broke (BROKE was their strict xfail); fixed since: more than one
# descendant segment is refused at validation, and match()/search() in a query share one
# time budget (plan.jsonpaths.REGEX_BUDGET) that ends the action with E_LIMIT_EXCEEDED.
@pytest.mark.parametrize("slug", list(VARIANTS))
def test_query_cost_is_bounded(tmp_path_factory: pytest.TempPathFactory, slug: str) -> None:
    lab = shared(
        tmp_path_factory,
        f"r13-jsonpath-{slug}",
        lambda root: _build(root / "lab", slug, VARIANTS[slug]),
    )
    assert lab.pass_ended, f"the pass was still evaluating the query after {LIMIT:g} s"
    assert len(lab.calls("zz-ctl")) == 1, "the honest plan after it never ran"
    assert lab.status()[f"plans/{slug}"]["status"] != "executing"
    if "redos" in slug:
        assert "E_LIMIT_EXCEEDED" in lab.codes(slug), lab.codes(slug)
