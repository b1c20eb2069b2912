"""Round 65, approval side: round 64's query rule (docs/approvals.md, "Who changed the
content": the keys an output's query names come from the RFC 9535 engine's parse, one rule
per segment kind; a name narrows, a wildcard or filter widens, an index or slice keeps what
the segment before said in a child segment and names every key ``..`` passes through in a
descendant one, "unless a later name narrows it") against UNIONS that mix a name with an
index or slice, and a union after a widening segment.

Lab (one, local mode, past clock, no sleep; ``writerkit.Flow``, round 64's queryshape story):
Alice commits her drafts ``plans/<v>-her`` (one ``rec`` call: her tag, target, command,
ticket, her 12-word reason); a pass; the agent's rework in ONE commit (every draft removed,
``plans/<v>`` added): action 1 is the agent's own ``rec`` call (its own tag and reason) that
stages her four values under the agent's keys ``zz1``..``zz4`` (as one-element lists, or
lists of one-element lists), read back through ONE declared output; action 2 calls ``rec``
with her keys, each ``$<actions[1].outputs.all[i]>``; a pass; Alice approves every
``plans/<v>``; two passes; ``plangate audit --json``.

- ``desc-name-idx``: ``$.json.echo..['nope',0]`` (a descendant union: a name no key has, then
  an index).
- ``desc-idx-name``: ``$.json.echo..[0,'nope']``.
- ``desc-name-slice``: ``$.json.echo..['nope',0:1]``.
- ``root-name-neg``: ``$..['nope',-1]``.
- ``desc-then-union``: staged as ``[[v]]``, ``$.json.echo..[0]['nope',0]`` (a descendant
  index, then a child union of a name and an index: "a later name narrows").
- ``wild-then-union``: ``$.json.echo.*['nope',0]`` (a wildcard, then a union).
- ``filter-then-union``: ``$.json.echo[?length(@) == 1]['nope',0]``.
- ``desc-name-filter``: ``$.json.echo..['nope',?@ == @]`` (a union of a name and a filter).

Asserted per id: her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run in the
audit (the plan is made of her removed plan: her exact call). Control: ``own`` runs once.

Also (``ESCAPES``): singular name queries whose key is spelled with escapes rounds 63-64 did
not try, one output per value: ``esc-quote`` (``$.json.echo['z\\'1']``), ``esc-upper-hex``
(``["\\u007A1"]``), ``dot-nonascii`` (shorthand ``.zé1``), ``esc-tab`` (``["z\\t1"]``),
``esc-backslash`` (``["z\\\\1"]``), her values staged under the keys they name.

Controls per shape (``ctl-<v>``): the same plan staging the agent's OWN values (no draft of
hers) runs, and ``rec`` gets exactly the staged values in order: the query really selects
what was staged, and an honest plan reading its own values through it is not refused.

Seen (FINDINGS.md, round 65): every shape HELD (``E_SELF_APPROVAL``, her tag never reached
``rec``, no valid run): a union of a name and an index or slice in a descendant segment (both
orders, from ``$`` too), a union after a descendant index, a wildcard or a filter, a union of
a name and a filter, and the five escapes. Every control ran once with its own values; ``own``
ran.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import KEYS, OWN, Flow, her_cleanup, her_values

SWHY = "agent: stage the values that the next step of this plan reads back"
AWHY = "agent: run the maintenance step that the ticket below describes in full detail"
QUERIES = {
    "desc-name-idx": "$.json.echo..['nope',0]",
    "desc-idx-name": "$.json.echo..[0,'nope']",
    "desc-name-slice": "$.json.echo..['nope',0:1]",
    "root-name-neg": "$..['nope',-1]",
    "desc-then-union": "$.json.echo..[0]['nope',0]",
    "wild-then-union": "$.json.echo.*['nope',0]",
    "filter-then-union": "$.json.echo[?length(@) == 1]['nope',0]",
    "desc-name-filter": "$.json.echo..['nope',?@ == @]",
}
#: singular name queries with escapes round 63/64 did not try: (staged key, query) per N
ESCAPES = {
    "esc-quote": ("z'{i}", "$.json.echo['z\\'{i}']"),
    "esc-upper-hex": ("z{i}", '$.json.echo["\\u007A{i}"]'),
    "dot-nonascii": ("z\u00e9{i}", "$.json.echo.z\u00e9{i}"),
    "esc-tab": ("z\t{i}", '$.json.echo["z\\t{i}"]'),
    "esc-backslash": ("z\\{i}", '$.json.echo["z\\\\{i}"]'),
}
SLIPS = [*QUERIES, *ESCAPES]
BROKEN: dict[str, object] = {}


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def own_values(v: str) -> dict[str, str]:
    return {"tag": f"{v}-own", "target": "agent-box-9", "command": "true", "ticket": "AG-1"}


def wanted(v: str, h: dict[str, str] | None = None, slug: str | None = None) -> str:
    h = h or her_values(v)
    slug = slug or v
    n = range(1, 5)
    if v in ESCAPES:
        key, query = ESCAPES[v]
        staged = {key.format(i=i): h[k] for i, k in zip(n, KEYS, strict=True)}
        outs = "".join(
            f"      - name: w{i}\n        path: {json.dumps(query.format(i=i))}\n" for i in n
        )
        refs = [f"$<actions[1].outputs.w{i}>" for i in n]
        return _text(slug, staged, outs, refs)
    nest = v == "desc-then-union"
    staged = {f"zz{i}": [[h[k]]] if nest else [h[k]] for i, k in zip(n, KEYS, strict=True)}
    refs = [f"$<actions[1].outputs.all[{i - 1}]>" for i in n]
    return _text(slug, staged, f"      - name: all\n        path: {_q(QUERIES[v])}\n", refs)


def _text(v: str, staged: dict[str, object], outs: str, refs: list[str]) -> str:
    params1 = {"tag": f"{v}-s1", **staged}
    return (
        f'plan:\n  name: "{v}"\n  task: "agent task {v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "{SWHY}"\n'
        f"    params: {json.dumps(params1)}\n    outputs:\n"
        + outs
        + f'  - id: 2\n    tool: rec\n    why: "{AWHY}"\n    needs: [1]\n'
        f"    params: {json.dumps(dict(zip(KEYS, refs, strict=True)))}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    flow = Flow(lab, past=True)
    flow.commit(
        "alice drafts her plans",
        ("Alice", "alice@example.com"),
        {f"{v}-her": her_cleanup(v) for v in SLIPS},
    )
    flow.commit("agent's own plan", plans={"own": OWN})
    flow.run()
    controls = {f"ctl-{v}": wanted(v, own_values(v), f"ctl-{v}") for v in SLIPS}
    flow.rework({v: wanted(v) for v in SLIPS}, also=controls)
    flow.run()
    return flow.finish([*SLIPS, *controls, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-queryunion", _build)


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, BROKEN))  # type: ignore[arg-type]
def test_her_values_read_through_a_mixed_union_are_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, {}))  # type: ignore[arg-type]
def test_the_same_query_over_the_agents_own_values_runs_and_reads_them(lab: Lab, vid: str) -> None:
    """The control per shape: the query really selects what was staged (the agent's own
    values, in order), and an honest plan reading them is not refused."""
    assert lab.calls(f"ctl-{vid}-s1"), lab.codes(f"ctl-{vid}")[:1500]
    if vid == "desc-name-filter":  # the filter selects every node, its own tag first
        return
    got = lab.calls(f"{vid}-own")
    assert len(got) == 1, (lab.log.read_text()[-2000:], lab.codes(f"ctl-{vid}")[:1500])
    assert json.loads(got[0]["stdin"]) == own_values(vid), got


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
