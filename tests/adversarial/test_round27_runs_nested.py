# ruff: noqa: E501
"""Round 27, exactly the approved actions, at most once: nested plans across a resume, a
nested plan's own plan-level checks, a graph whose sibling fails while a gate or an ``ask``
waits, and ``show`` of a nested plan whose file changed in the shared working tree.

One lab, every plan written by the agent, approved by Alice in one commit, then passes:

- ``nest-resume``: parent ``nres`` = action 1 ``rec`` (``nr-p1``), action 2 the pinned nested
  draft ``plans/common/cres`` (``rec`` ``nr-n1``, ``flaky``, ``rec`` ``nr-n3``), action 3
  ``rec`` (``nr-p3``). ``flaky`` fails until a flag file exists, so the plan fails at nested
  action 2/2. The flag is created, Alice approves the resume (``failed`` -> ``approved``).
  Asserted: every ``rec`` call ran exactly once (the nested ``2/1`` is not run again by the
  resume), ``flaky`` was called twice (the failed try and the resumed one), the plan completed.
- ``nest-precondition``: the pinned nested draft ``plans/common/cpre`` has a *plan-level*
  precondition (check tool ``chk`` returning ``{"ok": false}``); the reviewer sees it in
  ``show``. Asserted: none of its actions ran, nor the parent's next action; the plan failed
  with ``E_PRECONDITION_FAILED``.
- ``graph-gatefail``: graph plan: 1 ``rec`` and 2 ``slowfail`` (1.5 s, then exit 1) start at
  once; 3 (``rec``, ``needs: [1]``, ``requires_approval``) would pause while 2 still runs.
  ``graph-askfail``: 1 fails at once with ``on_failure: ask`` while 2 (``slowfail`` 1.5 s) runs;
  3 needs 1. ``graph-failgate``: 2 fails at once, 3 (gated) needs 1. After the pass Bob
  approves every plan left ``awaiting_approval``. Asserted: the gated / asked action's
  dependent never ran; the plan is ``failed`` (a ``stop`` failure is not turned into a
  pause a second approval could answer).
- ``nest-show-tree``: parent ``nshow`` pins ``plans/common/cshow`` (``rec`` ``EVIL``); the
  agent then rewrites the nested file in the working tree only (``benign``). Asserted:
  ``plangate show`` (with and without ``--config``) never displays ``benign`` as what runs
  and names the pin mismatch.

All held (round 27).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

FLAKY = 'import json,os,sys\nopen(sys.argv[2],"a").write("call\\n")\nif not os.path.exists(sys.argv[1]): sys.exit(3)\nprint(json.dumps({"ok": True}))\n'
CHK = 'import json\nprint(json.dumps({"ok": False}))\n'
SLOWFAIL = "import sys,time\ntime.sleep(float(sys.argv[1]))\nsys.exit(1)\n"

CRES = """plan:
  name: cres
  task: nested
  status: draft
available_tools:
  - name: rec
  - name: flaky
actions:
  - {id: 1, tool: rec, why: w, params: {tag: nr-n1}}
  - {id: 2, tool: flaky, why: w}
  - {id: 3, tool: rec, why: w, params: {tag: nr-n3}}
"""
CPRE = """plan:
  name: cpre
  task: nested
  status: draft
available_tools:
  - name: rec
  - name: chk
preconditions:
  - {tool: chk, params: {}, expect: {path: $.json.ok, equals: true}}
actions:
  - {id: 1, tool: rec, why: w, params: {tag: np-n1}}
"""
CSHOW = """plan:
  name: cshow
  task: nested
  status: draft
available_tools:
  - name: rec
actions:
  - {id: 1, tool: rec, why: w, params: {tag: EVIL}}
"""
GRAPHS = {
    "graph-gatefail": """  - {id: 1, tool: rec, why: w, needs: [], params: {tag: graph-gatefail-1}}
  - {id: 2, tool: slowfail, why: w, needs: [], params: {s: "1.5"}}
  - {id: 3, tool: rec, why: w, needs: [1], requires_approval: true, params: {tag: graph-gatefail-3}}
""",
    "graph-askfail": """  - {id: 1, tool: slowfail, why: w, needs: [], on_failure: ask, params: {s: "0"}}
  - {id: 2, tool: slowfail, why: w, needs: [], params: {s: "1.5"}}
  - {id: 3, tool: rec, why: w, needs: [1], params: {tag: graph-askfail-3}}
""",
    "graph-failgate": """  - {id: 1, tool: rec, why: w, needs: [], params: {tag: graph-failgate-1}}
  - {id: 2, tool: slowfail, why: w, needs: [], params: {s: "0"}}
  - {id: 3, tool: rec, why: w, needs: [1], requires_approval: true, params: {tag: graph-failgate-3}}
""",
}


def _parent(name: str, pin_path: str, pin: str, tag: str) -> str:
    return f"""plan:
  name: {name}
  task: t
  status: pending_approval
available_tools:
  - name: rec
actions:
  - {{id: 1, tool: rec, why: before, params: {{tag: {tag}-p1}}}}
  - id: 2
    plan: {{path: {pin_path}, hash: "{pin}"}}
    why: nested
  - {{id: 3, tool: rec, why: after, params: {{tag: {tag}-p3}}}}
"""


def _graph(name: str, body: str) -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: t\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: slowfail\nactions:\n" + body
    )


def _build(root: Path) -> Lab:
    for name, text in (("flaky.py", FLAKY), ("chk.py", CHK), ("slowfail.py", SLOWFAIL)):
        (root / name).write_text(text)
    py = sys.executable
    flag, count = root / "flag", root / "flaky.log"
    lab = Lab(
        root,
        tools=f"""
        flaky: {{kind: exec, argv: {json.dumps([py, str(root / "flaky.py"), str(flag), str(count)])}}}
        chk: {{kind: exec, argv: {json.dumps([py, str(root / "chk.py")])}, idempotent: true, risk: low}}
        slowfail: {{kind: exec, argv: {json.dumps([py, str(root / "slowfail.py"), "{s}"])}}}
        """,
    )
    for slug, text in (("common/cres", CRES), ("common/cpre", CPRE), ("common/cshow", CSHOW)):
        lab.write(slug, text)
    lab.commit("nested drafts")
    pins = {
        s: lab.cli("hash", str(lab.repo / "plans" / s)).stdout.strip().split()[-1]
        for s in ("common/cres", "common/cpre", "common/cshow")
    }
    lab.write("nres", _parent("nres", "plans/common/cres", pins["common/cres"], "nr"))
    lab.write("npre", _parent("npre", "plans/common/cpre", pins["common/cpre"], "np"))
    lab.write("nshow", _parent("nshow", "plans/common/cshow", pins["common/cshow"], "ns"))
    for name, body in GRAPHS.items():
        lab.write(name, _graph(name, body))
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    for slug in ("nres", "npre", *GRAPHS, "zz"):
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    lab.first = {k: v["status"] for k, v in lab.status().items()}  # type: ignore[attr-defined]
    flag.write_text("x")
    lab.set_status("nres", "approved")
    for name in GRAPHS:
        if lab.status()[f"plans/{name}"]["status"] == "awaiting_approval":
            lab.set_status(name, "approved")
    lab.commit("resume nres, answer gates", ALICE)
    lab.run()
    lab.run()
    lab.flaky_calls = len(count.read_text().splitlines())  # type: ignore[attr-defined]
    # the agent rewrites the pinned nested file in the working tree only
    lab.write("common/cshow", CSHOW.replace("EVIL", "benign"))
    target = str(lab.repo / "plans" / "nshow")
    lab.shows = [  # type: ignore[attr-defined]
        (r.returncode, r.stdout + r.stderr)
        for r in (
            lab.cli("show", "--config", str(lab.config), target, cwd=lab.repo),
            lab.cli("show", target, cwd=lab.repo),
        )
    ]
    lab.write("common/cshow", CSHOW)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r27-runs-nested", _build)


def test_nest_resume(lab: Lab) -> None:
    assert lab.first["plans/nres"] == "failed"  # type: ignore[attr-defined]
    counts = [len(lab.calls(t)) for t in ("nr-p1", "nr-n1", "nr-n3", "nr-p3")]
    assert counts == [1, 1, 1, 1]
    assert lab.flaky_calls == 2  # type: ignore[attr-defined]
    assert lab.status()["plans/nres"]["status"] == "completed"


def test_nest_precondition(lab: Lab) -> None:
    assert [len(lab.calls(t)) for t in ("np-p1", "np-n1", "np-p3")] == [1, 0, 0]
    assert lab.status()["plans/npre"]["status"] == "failed"
    assert "E_PRECONDITION_FAILED" in lab.codes("npre")


@pytest.mark.parametrize("name", list(GRAPHS))
def test_graph_sibling_failure(lab: Lab, name: str) -> None:
    assert lab.calls(f"{name}-3") == []
    assert lab.status()[f"plans/{name}"]["status"] == "failed"


def test_nest_show_tree(lab: Lab) -> None:
    for code, text in lab.shows:  # type: ignore[attr-defined]
        assert "benign" not in text or code != 0
        assert "pinned" in text and code != 0


def test_bystander(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
