# ruff: noqa: E501
"""Round 55 (runs): a plan's ``limits.max_runtime`` against the waits a run makes besides a
tool call. docs/configuration.md: "one run (from its start, or its resume ...) may take this
long (a tool still running then is stopped), and a plan's estimated seconds may not exceed
it". The estimate counts a tool's catalog ``estimate``, verify polls and retry waits, so an
approved plan fits on paper; a tool slower than its estimate then pushes the verify polling,
the retry back-off, the fallback step and the next action past the budget. Round 54 tested
``max_runtime`` of a pinned child only; nobody ran past a plan's own.

Lab ``rt`` (``execution.max_concurrent_plans: 5``): ``slow`` (estimate 0 s, not idempotent)
notes ``<tag>-start``, sleeps ``secs``, notes ``<tag>-end`` and exits 1 for a ``fail`` tag;
``chk`` (idempotent, low risk) notes each poll and answers ``{ok: false}``. Each plan has
``limits: {max_runtime: 4}``:

- ``verify``: ``slow`` 3 s, then ``verify: {tool: chk, timeout: 3, interval: 1}`` (never
  holds): polling would run to 6 s.
- ``retry``: ``slow`` 3 s that fails, ``retry: {attempts: 1, delay: 2}``: the second call
  would start at 5 s.
- ``fallback``: ``slow`` 3 s that fails, a fallback step ``slow`` 3 s: it would run to 6 s.
- ``tool``: ``slow`` 7 s (``timeout: 30``): it would end at 7 s.
- ``next``: ``slow`` 3 s, then another ``slow`` 3 s action.

Alice approves all; one pass. Asserted: no step made after the budget ran out ended (the
``-end`` note of the tool that would run past 4 s is absent: it was stopped or never
started), no poll or call counted past it beyond the one running at the deadline, and the
plan is ``failed`` naming E_LIMIT_EXCEEDED (or E_TIMEOUT for the stopped tool).

Broke (1): ``verify``: the polling kept its own 3 s timeout from the tool's end: the check
tool was called at 3.0, 4.1 and 5.2 s after the run's start and the plan failed
E_VERIFY_FAILED at about 6 s, never E_LIMIT_EXCEEDED (a verify ``timeout`` should be
shortened to what is left of the run, as a tool's is). Held: ``retry`` (the second call
refused, E_LIMIT_EXCEEDED "5.0 s at action 1": the back-off itself slept past the cap),
``fallback`` and ``tool`` (stopped at 4 s), ``next`` (action 2 stopped at 4 s).

Fixed (2026-11-29): every wait of a run takes its time from the run's ``CapBudget``
(``controller/execution/caps.py``): verify polling stops at the cap (when the next poll
would come after it, before the verify's own ``timeout``, it waits for the cap and ends
the action E_LIMIT_EXCEEDED, which stops the plan whatever ``on_failure`` says), a check
tool's timeout is cut to the time left and none is called once it is spent, and a retry's
back-off is cut to the time left so the next try meets the cap instead of sleeping past it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

SLOW = """\
import json, os, sys, time
tag, secs = sys.argv[1], float(sys.argv[2])
def note(what):
    with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps({"argv": [f"{tag}-{what}"], "t": time.time()}) + "\\n")
note("start")
time.sleep(secs)
note("end")
sys.exit(1 if "fail" in tag else 0)
"""
CHK = """\
import json, os, sys, time
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [sys.argv[1] + "-poll"], "t": time.time()}) + "\\n")
print(json.dumps({"ok": False}))
"""
HEAD = "plan:\n  name: {n}\n  task: t\n  status: pending_approval\nlimits: {{max_runtime: 4}}\navailable_tools: [{{name: slow}}, {{name: chk}}]\nactions:\n"


def _act(i: int | str, tag: str, secs: float, extra: str = "") -> str:
    return f"  - id: {i}\n    tool: slow\n    why: w\n    params: {{tag: {tag}, secs: {secs}}}\n{extra}"


PLANS = {
    "verify": _act(
        1,
        "verify-a",
        3,
        "    verify: {tool: chk, params: {tag: verify}, expect: {path: $.json.ok, equals: true}, timeout: 3, interval: 1}\n",
    ),
    "retry": _act(
        1, "retry-fail", 3, "    on_failure: retry\n    retry: {attempts: 1, delay: 2}\n"
    ),
    "fallback": _act(
        1,
        "fallback-fail",
        3,
        "    on_failure: fallback\n    fallback:\n      - {id: '1.1', tool: slow, why: w, params: {tag: fallback-b, secs: 3}}\n",
    ),
    "tool": _act(1, "tool-a", 7, "    timeout: 30\n"),
    "next": _act(1, "next-a", 3) + _act(2, "next-b", 3),
}
VIDS = list(PLANS)
BROKEN: dict[str, Any] = {}


def _build(root: Path) -> Lab:
    (root / "slow.py").write_text(SLOW)
    (root / "chk.py").write_text(CHK)
    lab = Lab(root / "rt")
    log = json.dumps(str(lab.log))
    slow = json.dumps([sys.executable, str(root / "slow.py"), "{tag}", "{secs}"])
    chk = json.dumps([sys.executable, str(root / "chk.py"), "{tag}"])
    lab.write_config(
        tools=f"slow: {{kind: exec, argv: {slow}, env: {{REC_LOG: {log}}}, estimate: {{seconds: 0}}}}\n"
        f"chk: {{kind: exec, argv: {chk}, env: {{REC_LOG: {log}}}, idempotent: true, risk: low, output_trust: trusted}}\n",
        extra="execution: {max_concurrent_plans: 5}\n",
    )
    for vid, body in PLANS.items():
        lab.write(vid, HEAD.format(n=vid) + body)
    lab.commit("plans")
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    began = time.time()
    lab.run(timeout=240)
    lab.took = time.time() - began  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-runtime", _build)


def _notes(lab: Lab) -> list[str]:
    return [
        json.loads(line)["argv"][0] for line in lab.log.read_text().splitlines() if line.strip()
    ]


def test_every_plan_was_approved_and_started(lab: Lab) -> None:
    for vid in VIDS:
        assert lab.started(vid), lab.codes(vid)[:800]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_nothing_runs_past_the_budget(lab: Lab, vid: str) -> None:
    notes = _notes(lab)
    plan = lab.plan(vid)
    text = json.dumps(plan.get("execution"), default=str)
    assert plan["plan"]["status"] == "failed", (plan["plan"], text[:800])
    assert "E_LIMIT_EXCEEDED" in text or "E_TIMEOUT" in text, text[:1000]
    if vid == "verify":
        assert notes.count("verify-a-end") == 1
        assert notes.count("verify-poll") <= 2, notes
    elif vid == "retry":
        assert notes.count("retry-fail-start") == 1, notes
    elif vid == "fallback":
        assert "fallback-b-end" not in notes, notes
    elif vid == "tool":
        assert "tool-a-end" not in notes, notes
    else:
        assert "next-b-end" not in notes, notes
