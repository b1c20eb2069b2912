"""Round 37, one hostile tool output never starves the pass (disk and memory bound): a small
result whose *shape* makes an approved output query write far more than the result.

A result is cut at ``limits.max_result_bytes`` (64 KiB) and one action's resolved params at
``limits.max_params_bytes`` (1 MiB); round 13 bounded the *time* of a JSONPath query (one
descendant segment at most). A descendant query (``$..*``, ``$..a``: "everything under the
answer") returns every node *with its subtree*, so a result nested ``D`` levels deep (the
tool chooses ``D``, up to the intake's 100) comes back about ``D`` times over. The captured
outputs are journaled (and held in memory) whole.

One lab; ``emit`` is an exec tool printing a fixed 60 KB JSON document (the data a tool
brings in: the attacker's); each plan is one ``emit`` action, approved by Alice with the
honest ``zz`` in one commit, one pass:

- ``amp-desc``: the document is a 60,000-character string under 95 levels of alternating
  ``[...]`` / ``{"a": ...}``; the action declares two outputs ``$.json..*``;
- ``amp-name``: the string under 95 levels of ``{"a": ...}``; two outputs ``$.json..a``;
- ``flat`` (control): the same document, two outputs ``$.json`` (the result itself).

Round 13 bounded a query's cost "by its form": at most one descendant segment. A segment
with a *union* of selectors (RFC 9535 keeps duplicates: ``$[0,0]`` is the node twice)
multiplies too, with no descendant at all:

- ``union-wild``: the document is a 400-character string under 15 levels of ``[...]`` (about
  450 bytes); one output ``$.json[*,*][*,*]...`` (15 segments, 81 characters): 2^15 copies;
- ``union-index``: the same with ``[0,0]``;
- ``union-one`` (control): ``[*]`` 15 times: one match.

Asserted per plan: the plan's journal in the state directory stays within 8 MiB (8 times
``max_params_bytes``, 128 times the result limit), or the action failed with
``E_LIMIT_EXCEEDED``; and the honest ``zz`` ran once in the same pass.

**Broke** (round 37): ``amp-desc`` and ``amp-name`` complete and write an 11.5 MB journal each
from a 60 KB result (about 5.7 MB per output; by hand, 60 outputs: a 343 MB journal and the
controller at 1 GB resident for one ``run --once``; ``max_actions`` 500 multiplies it
further). ``union-wild`` and ``union-index`` complete with a ~13 MB journal from a 450-byte result;
by hand, 19 segments wrote 525 MB in one ``run --once`` (each more segment doubles it:
25 segments, 32 GB). Should: count matches/bytes against a budget while evaluating (or
refuse duplicate selectors in a union at validation) and fail ``E_LIMIT_EXCEEDED``; bound
what the outputs of one action may hold. Also by hand (not a test: no duration asserts), the
same union query (20 segments) in a precondition's ``expect`` over a 21-level ``["x"]``
result took the pass from about 1 s to 13 s before ``E_PRECONDITION_FAILED``, doubling per
segment. Held: ``flat``, ``union-one``, ``zz``.

Fixed (the same session): one evaluation of a query may make at most
``jsonpaths.MAX_NODES`` nodes (every selector and descent, filters' queries included), and
one action's outputs together at most ``limits.max_params_bytes`` characters of JSON; past
either the action fails ``E_LIMIT_EXCEEDED`` before anything is recorded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

LEAF = "x" * 60000
DEPTH = 95
OUTPUTS = 2
BOUND = 8 * 1048576


UNION = 15


def _doc(kind: str) -> object:
    if kind == "list":
        small: object = "x" * 400
        for _ in range(UNION):
            small = [small]
        return small
    doc: object = LEAF
    for i in range(DEPTH):
        doc = {"a": doc} if (kind == "name" or i % 2) else [doc]
    return doc


VARIANTS = {
    "amp-desc": ("desc", "$.json..*", OUTPUTS),
    "amp-name": ("name", "$.json..a", OUTPUTS),
    "flat": ("desc", "$.json", OUTPUTS),
    "union-wild": ("list", "$.json" + "[*,*]" * UNION, 1),
    "union-index": ("list", "$.json" + "[0,0]" * UNION, 1),
    "union-one": ("list", "$.json" + "[*]" * UNION, 1),
}


def _plan(slug: str, path: str, count: int) -> str:
    outs = "\n".join(f"      - {{name: o{i}, path: '{path}'}}" for i in range(count))
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}]\n"
        "actions:\n  - id: 1\n    tool: emit\n    why: w\n"
        f"    params: {{doc: {slug}}}\n    outputs:\n{outs}\n"
    )


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    docs = root / "docs"
    docs.mkdir()
    for slug, (kind, _, _) in VARIANTS.items():
        (docs / f"{slug}.json").write_text(json.dumps(_doc(kind)))
    emit = root / "emit.py"
    emit.write_text(
        "import sys\nsys.stdout.write(open(sys.argv[1] + '/' + sys.argv[2] + '.json').read())\n"
    )
    argv = json.dumps([sys.executable, str(emit), str(docs), "{doc}"])
    lab = Lab(root / "lab", tools=f"emit: {{kind: exec, argv: {argv}}}\n")
    for slug, (_, path, count) in VARIANTS.items():
        lab.write(slug, _plan(slug, path, count))
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*VARIANTS, "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-runs-outamp", lambda root: _build(root / "o"))


def _journal_bytes(lab: Lab, slug: str) -> int:
    folder = lab.state / "journal" / quote(f"plans/{slug}", safe="")
    return sum(p.stat().st_size for p in folder.glob("*.jsonl")) if folder.exists() else 0


@pytest.mark.parametrize(
    "slug",
    [
        "amp-desc",
        "amp-name",
        "flat",
        "union-wild",
        "union-index",
        "union-one",
    ],
)
def test_outputs_bounded(lab: Lab, slug: str) -> None:
    execution = lab.plan(slug).get("execution") or {}
    assert execution.get("status") in ("completed", "failed")
    size = _journal_bytes(lab, slug)
    assert size > 0
    assert size <= BOUND, size
    if slug.startswith(("amp-", "union-")) and slug != "union-one":
        # refused, said, and nothing amplified recorded (fixed: the outputs' size bound and
        # a node budget per query evaluation)
        assert "E_LIMIT_EXCEEDED" in lab.codes(slug), lab.codes(slug)
        assert execution.get("status") == "failed", execution


def test_honest_plan_ran(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert (lab.plan("zz").get("execution") or {}).get("status") == "completed"
