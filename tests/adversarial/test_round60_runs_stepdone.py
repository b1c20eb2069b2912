"""Round 60 (runs): an ActionPlan ``step_completed`` precondition converted into a note.

The attack: docs/formats.md (``actionplan``): "precondition ``step_completed``: kept as a
note when it names an earlier step (steps run in order and a failed step stops the plan)".
The reason holds only under ``on_failure: stop``. A source whose step 1 says ``skip`` (its
own or the plan's ``on_failure``) or ``fallback`` (a fallback that ends well records the
step ``skipped``) goes on after step 1 FAILED, and the converted plan has lost the one
check the source wrote to keep step 2 from running then ("only after step 1 completed"):
the tool's failure, not the approval, decides whether step 2's effect happens against what
the agent committed. ``plangate convert`` exits 0, the note (shown to the reviewer) says
the check "holds by order".

Lab ``sd`` (local mode): catalog ``bad`` (exec: records its call, exits 1) and ``rec``.
One ActionPlan JSON source per variant, turned into ``plans/<vid>/PLAN.yml`` by
``plangate convert -o`` (``json-skip``: committed as ``plans/<vid>/PLAN.json`` for the
controller to convert itself); Alice approves every plan; one pass. Controls: ``stop``
(step 1 aborts the plan: step 2 never runs, the note is true) and ``ok`` (step 1 succeeds:
step 2 runs) and ``retry`` (step 1's retries run out: the plan stops, step 2 never runs).
Also tried: ``step_completed`` naming a later step (``later``), the step itself
(``itself``), and the failed step from its own fallback step's preconditions (``fb-pre``:
the fallback runs exactly because step 1 did not complete).

Asserted: per attack, step 2 (``<vid>-2``) never ran: the check was kept (the plan fails
``E_PRECONDITION_FAILED``-like, or ends before step 2) or the source was refused at
conversion (nothing to run).

Broke: all 5 attacks (``skip``, ``plan-skip``, ``fallback``, ``far``, ``json-skip``): step
1's tool failed (E_TOOL_FAILED), the step was recorded ``skipped``, step 2 ran and the plan
``completed``; ``plangate convert`` exited 0 each time, its only word the note "holds by
order: steps run one after another and a failed step stops the plan". Should: keep the check
(e.g. refuse ``step_completed`` naming a step that can end without completing, or convert
it to a form the engine checks), or refuse the source. Held: ``later``, ``itself``,
``fb-pre`` (each refused at conversion, ``E_CONVERT_UNSUPPORTED`` "step_completed must name
an earlier step of this plan", nothing ran) and the 3 controls.

Fixed (2026-11-29): all 5 pass: PLAN.yml has no check on an earlier action's status, so the
converter drops ``step_completed`` only when the named step's failure stops the plan (its
``on_failure``, else the plan's, is abort, retry or require_approval); when it is skip or
fallback the source is refused ``E_CONVERT_UNSUPPORTED`` naming the step, why it may end
without completing and the remedy (``convert`` exits non-zero, the controller records the
PLAN.json as "cannot convert", writing no PLAN.yml), so nothing runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

BAD = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
print(json.dumps({"ok": False}))
sys.exit(1)
"""


def _step(n: int, tool: str, tag: str, **extra: Any) -> dict[str, Any]:
    return {
        "step_number": n,
        "step_id": f"step:{str(n) * 16}",
        "action": {"type": "custom", "action_type": tool, "payload": {"tag": tag}},
        "description": f"step {n}",
        **extra,
    }


DONE1 = {"preconditions": [{"type": "step_completed", "step_id": "step:" + "1" * 16}]}


def _source(vid: str) -> dict[str, Any]:
    plan: dict[str, Any] = {"plan_version": 1, "title": vid, "workspace_id": "/w"}
    first = "rec" if vid == "ok" else "bad"
    skip = {"on_failure": {"strategy": "skip"}}
    if vid in ("skip", "json-skip"):
        steps = [_step(1, first, f"{vid}-1", **skip), _step(2, "rec", f"{vid}-2", **DONE1)]
    elif vid == "plan-skip":
        plan["on_failure"] = {"strategy": "skip"}
        steps = [_step(1, first, f"{vid}-1"), _step(2, "rec", f"{vid}-2", **DONE1)]
    elif vid == "fallback":
        fb = {"strategy": "fallback", "steps": [_step(1, "rec", f"{vid}-fb")]}
        steps = [_step(1, first, f"{vid}-1", on_failure=fb), _step(2, "rec", f"{vid}-2", **DONE1)]
    elif vid == "fb-pre":  # the fallback of step 1 runs because step 1 failed
        fb = {"strategy": "fallback", "steps": [_step(1, "rec", f"{vid}-2", **DONE1)]}
        steps = [_step(1, first, f"{vid}-1", on_failure=fb), _step(2, "rec", f"{vid}-after")]
    elif vid == "later":  # names a later step: refused, the docs say
        later = {"preconditions": [{"type": "step_completed", "step_id": "step:" + "2" * 16}]}
        steps = [_step(1, "rec", f"{vid}-2", **later), _step(2, "rec", f"{vid}-b")]
    elif vid == "itself":
        steps = [_step(1, "rec", f"{vid}-2", **DONE1)]
    elif vid == "retry":  # control: retries run out, the plan stops (the note is true)
        rt = {
            "strategy": "retry",
            "max_attempts": 2,
            "initial_delay_ms": 0,
            "max_delay_ms": 0,
            "backoff_multiplier": 1.0,
        }
        steps = [_step(1, first, f"{vid}-1", on_failure=rt), _step(2, "rec", f"{vid}-2", **DONE1)]
    elif vid == "far":
        steps = [
            _step(1, first, f"{vid}-1", **skip),
            _step(2, "rec", f"{vid}-mid"),
            _step(3, "rec", f"{vid}-2", **DONE1),
        ]
    else:  # stop, ok
        steps = [_step(1, first, f"{vid}-1"), _step(2, "rec", f"{vid}-2", **DONE1)]
    plan["steps"] = steps
    return plan


ATTACKS = ["skip", "plan-skip", "fallback", "far", "json-skip", "fb-pre", "later", "itself"]
CONTROLS = ["stop", "ok", "retry"]


def _build(root: Path) -> Lab:
    (root / "bad.py").write_text(BAD)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / "sd" / "ran.log"))
    lab = Lab(
        root / "sd",
        tools=f"bad: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'bad.py'))}, '{{tag}}'], "
        f"env: {{REC_LOG: {log}}}}}\n",
    )
    lab.converted = {}  # type: ignore[attr-defined]
    src = root / "src"
    src.mkdir()
    for vid in ATTACKS + CONTROLS:
        text = json.dumps(_source(vid), indent=1)
        if vid == "json-skip":
            lab.write(vid, text, "PLAN.json")
            lab.converted[vid] = "committed as PLAN.json"  # type: ignore[attr-defined]
            continue
        (src / vid).mkdir()
        (src / vid / "PLAN.json").write_text(text)
        got = lab.cli(
            "convert",
            "--config",
            str(lab.config),
            "-o",
            str(lab.repo / "plans"),
            str(src / vid / "PLAN.json"),
        )
        lab.converted[vid] = f"exit {got.returncode}: {got.stdout[-400:]} {got.stderr[-400:]}"  # type: ignore[attr-defined]
    lab.commit("plans")
    lab.run()
    for vid in ATTACKS + CONTROLS:
        path = lab.repo / "plans" / vid / "PLAN.yml"
        if path.exists():  # the converter writes `status: "pending_approval"` in a flow map
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace('status: "pending_approval"', "status: approved", 1))
    lab.commit("approve", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-stepdone", _build)


BROKEN: dict[str, Any] = {}


def test_controls(lab: Lab) -> None:
    assert lab.calls("stop-1") and not lab.calls("stop-2"), lab.codes("stop")[-800:]
    assert len(lab.calls("ok-2")) == 1, lab.codes("ok")[-800:]
    assert len(lab.calls("retry-1")) >= 2 and not lab.calls("retry-2"), lab.codes("retry")[-800:]


@pytest.mark.parametrize("vid", cases(ATTACKS, ATTACKS, BROKEN))
def test_step_completed_still_guards_step_two(lab: Lab, vid: str) -> None:
    ran_first = lab.calls(f"{vid}-1")
    assert lab.calls(f"{vid}-2") == [], (
        f"step 1 failed ({len(ran_first)} call) and step 2 ran anyway; "
        f"convert: {lab.converted[vid]}; {lab.codes(vid)[-600:]}"  # type: ignore[attr-defined]
    )
