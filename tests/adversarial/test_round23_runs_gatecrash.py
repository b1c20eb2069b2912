# ruff: noqa: E501
"""Round 23, at most once around a gate with the controller killed (SIGKILL through the
documented test hook ``PLANGATE_TEST_CRASH_AT``, docs/execution.md) at the pause and after
the gate's approval. The gate's record (``execution.gate``, round 22) is written at the pause.

Each plan: action 1 (``rec``) outputs ``K-VAL``; action 2 is gated, takes that output and
``$<secrets.PIN>``; action 3 follows. Alice approves; the steps of each variant run in their
own passes (the hook kills the first plan reaching its point):

- ``crash-pause``: killed ``after-end:1`` (action 1 journaled, the pause not yet recorded);
  a pass without the hook; Bob approves the gate; two passes. Asserted: the plan waits at
  the gate with a preview showing ``K-VAL`` and ``***`` (never the PIN); then each action
  ran once and the plan completed. Held.
- ``crash-gated-start``: paused, Bob approves the gate, killed ``after-start:2``; one more
  pass. Asserted: action 2's tool ran at most once, action 3 never, the plan failed (in
  doubt). Held.
- ``crash-gated-end``: paused, Bob approves, killed ``after-end:2``; one more pass.
  Asserted: action 2 ran once, action 3 once, completed. Held.

A nested plan (3 actions ``2/1``..``2/3``, then parent action 3), killed at
``after-end:2/2`` (``nc-end``), ``after-start:2/2`` (``nc-start``), ``after-tool:2/2``
(``nc-tool``: the tool returned, its end not journaled), ``after-end:2`` (``nc-parent``), then
two passes. Asserted: nothing ran twice; a nested step left in doubt fails the plan
(E_ACTION_IN_DOUBT) and nothing after it runs; otherwise the plan completes. Held.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

PIN = "483920"
SLUGS = ["crash-pause", "crash-gated-start", "crash-gated-end"]
#: nested-plan crash variants: hook point, expected calls of p-1, c-1, c-2, c-3, p-3, status
NESTED = {
    "nc-end": ("after-end:2/2", [1, 1, 1, 1, 1], "completed"),
    "nc-start": ("after-start:2/2", [1, 1, 0, 0, 0], "failed"),
    "nc-tool": ("after-tool:2/2", [1, 1, 1, 0, 0], "failed"),
    "nc-parent": ("after-end:2", [1, 1, 1, 1, 1], "completed"),
}


def _nested(lab: Lab, slug: str) -> None:
    child = "".join(
        f'  - {{id: {i}, tool: rec, why: w, params: {{tag: {slug}-c-{i}, v: "$<inputs.to>"}}}}\n'
        for i in (1, 2, 3)
    )
    lab.write(
        f"{slug}-child",
        f'plan:\n  name: c\n  task: t\n  status: draft\ninputs: {{to: "d"}}\navailable_tools: [{{name: rec}}]\nactions:\n{child}',
    )
    lab.commit(f"child {slug}")
    pin = lab.cli("hash", str(lab.repo / "plans" / f"{slug}-child")).stdout.split()[0]
    lab.write(
        slug,
        f"""plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {slug}-p-1}}}}
  - id: 2
    plan: {{path: plans/{slug}-child, hash: "{pin}"}}
    why: w
    inputs: {{to: "x"}}
  - {{id: 3, tool: rec, why: w, params: {{tag: {slug}-p-3}}}}
""",
    )


def _plan(slug: str) -> str:
    return f"""plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {slug}-1, x: "K-VAL"}}, outputs: [{{name: o, path: "$.json.echo.x"}}]}}
  - {{id: 2, tool: rec, why: w, requires_approval: true, params: {{tag: {slug}-2, to: "$<actions[1].outputs.o>", s: "$<secrets.PIN>"}}}}
  - {{id: 3, tool: rec, why: w, params: {{tag: {slug}-3}}}}
"""


def _crash(lab: Lab, point: str) -> None:
    lab.extra_env["PLANGATE_TEST_CRASH_AT"] = point  # type: ignore[attr-defined]
    lab.run(check=False)
    del lab.extra_env["PLANGATE_TEST_CRASH_AT"]  # type: ignore[attr-defined]


def _gate(lab: Lab, slug: str) -> None:
    lab.set_status(slug, "approved")
    lab.commit(f"gate {slug}", BOB, f"plans/{slug}/PLAN.yml")


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    lab.extra_env = {"PLANGATE_SECRET_PIN": PIN}  # type: ignore[attr-defined]
    for slug in SLUGS:
        lab.write(slug, _plan(slug))
    for slug in NESTED:
        _nested(lab, slug)
    lab.commit("plans")
    lab.run()
    lab.approve("crash-pause", ALICE)
    _crash(lab, "after-end:1")
    lab.run()
    out = lab.cli("show", "plans/crash-pause", "--config", str(lab.config), cwd=lab.repo)
    preview = out.stdout + out.stderr
    paused = lab.status()["plans/crash-pause"]["status"]
    _gate(lab, "crash-pause")
    lab.run()
    lab.run()
    for slug, point in (("crash-gated-start", "after-start:2"), ("crash-gated-end", "after-end:2")):
        lab.approve(slug, ALICE)
        lab.run()
        _gate(lab, slug)
        _crash(lab, point)
        lab.run()
        lab.run()
    for slug, (point, _, _) in NESTED.items():
        lab.approve(slug, ALICE)
        _crash(lab, point)
        lab.run()
        lab.run()
    lab.results = {  # type: ignore[attr-defined]
        "preview": preview,
        "paused": paused,
        "history": lab.git("log", "--all", "-p"),
        "status": lab.status(),
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-gatecrash", _build)


def _counts(lab: Lab, slug: str) -> list[int]:
    return [len(lab.calls(f"{slug}-{i}")) for i in (1, 2, 3)]


def test_crash_pause(lab: Lab) -> None:
    r = lab.results  # type: ignore[attr-defined]
    assert r["paused"] == "awaiting_approval"
    shown = r["preview"].split("approving the gate runs it with these values:", 1)[-1][:300]
    assert "K-VAL" in shown and "***" in shown and PIN not in r["preview"], shown
    assert PIN not in r["history"]
    assert _counts(lab, "crash-pause") == [1, 1, 1]
    assert r["status"]["plans/crash-pause"]["status"] == "completed"


def test_crash_gated_start(lab: Lab) -> None:
    c = _counts(lab, "crash-gated-start")
    assert c[0] == 1 and c[1] <= 1 and c[2] == 0, c
    assert lab.results["status"]["plans/crash-gated-start"]["status"] == "failed"  # type: ignore[attr-defined]


def test_crash_gated_end(lab: Lab) -> None:
    assert _counts(lab, "crash-gated-end") == [1, 1, 1]
    assert lab.results["status"]["plans/crash-gated-end"]["status"] == "completed"  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", list(NESTED))
def test_a_crash_inside_a_nested_plan_runs_nothing_twice(lab: Lab, slug: str) -> None:
    _, want, status = NESTED[slug]
    tags = [f"{slug}-p-1", f"{slug}-c-1", f"{slug}-c-2", f"{slug}-c-3", f"{slug}-p-3"]
    assert [len(lab.calls(t)) for t in tags] == want
    assert lab.results["status"][f"plans/{slug}"]["status"] == status  # type: ignore[attr-defined]
