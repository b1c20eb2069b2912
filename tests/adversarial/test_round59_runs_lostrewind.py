"""Round 59 (runs): the rewind of ``test_round59_runs_lostreset.py`` through an ask and a resume.

The attack: the same as ``_lostreset.py`` (``index.sqlite``, a cache, and the plan's
journal lost; the agent ``git reset --hard``s the branch to the approver's answer before the
controller's last record and expires the reflog), where the answer is not a gate approval
but Alice's answer to an ``on_failure: ask`` pause (``ask``) or her resume of a failed plan
(``resume``). Action 2 is ``flaky`` (exec, ``idempotent: false``): it fails its first call
and succeeds after (it records every call).

Lab ``lw`` (local mode): each plan: action 1 ``rec``, action 2 ``flaky`` (``ask``:
``on_failure: ask``; ``resume``: ``on_failure: stop``), action 3 ``rec`` with
``requires_approval``. Alice approves (action 1 runs, action 2 fails: the ask plan waits,
the resume plan is ``failed``), Alice answers both in one commit (action 2 succeeds, both
pause at gate 3); then the losses (``ask-kept``: its journal kept) and the reset to her
answer; two passes.

Asserted: action 1 ran once, ``flaky`` twice (the failure and the success), action 3 never.

Broke: none. Held: all 3. ``ask`` and ``resume``: the controller's record at her answer
shows action 2 ``failed``, so the run after the loss fails ``E_ACTION_IN_DOUBT`` and nothing
runs (round 52's rule; the rewind of ``_lostreset.py`` needs a record of only succeeded
actions before the answer, as a gate has). ``ask-kept`` (journal kept): recovered from the
journal, paused at gate 3 again, nothing twice.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

FLAKY = """\
import json, os, sys
data = sys.stdin.read()
tag = sys.argv[1]
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
mark = os.environ["REC_LOG"] + "." + tag
if not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit(1)
print(json.dumps({"ok": True}))
"""

PLANS = {"ask": "ask", "resume": "stop", "ask-kept": "ask"}


def _plan(tag: str, on_failure: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}, {{name: flaky}}]
actions:
  - {{id: 1, tool: rec, why: first, params: {{tag: {tag}-1}}}}
  - {{id: 2, tool: flaky, why: second, idempotent: false, on_failure: {on_failure},
     params: {{tag: {tag}-2}}}}
  - {{id: 3, tool: rec, why: third, requires_approval: true, params: {{tag: {tag}-3}}}}
"""


def _build(root: Path) -> Lab:
    (root / "flaky.py").write_text(FLAKY)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / "lw" / "ran.log"))
    lab = Lab(
        root / "lw",
        tools=f"flaky: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'flaky.py'))}, "
        f"'{{tag}}'], env: {{REC_LOG: {log}}}}}\n",
    )
    for vid, policy in PLANS.items():
        lab.write(vid, _plan(vid, policy))
    lab.commit("plans")
    lab.run()
    for vid in PLANS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()  # action 1, action 2 fails: ask waits, resume failed
    lab.failed = {v: lab.plan(v)["plan"]["status"] for v in PLANS}  # type: ignore[attr-defined]
    for vid in PLANS:
        lab.set_status(vid, "approved")
    answer = lab.commit("answer the ask / resume", ALICE)
    lab.run()  # action 2 succeeds, gate 3
    lab.before = {v: lab.plan(v)["plan"]["status"] for v in PLANS}  # type: ignore[attr-defined]
    lab.flaky_before = {v: len(lab.calls(f"{v}-2")) for v in PLANS}  # type: ignore[attr-defined]
    for vid in ["ask", "resume"]:
        shutil.rmtree(lab.state / "journal" / f"plans%2F{vid}")
    (lab.state / "index.sqlite").unlink()
    lab.git("reset", "-q", "--hard", answer)
    lab.git("reflog", "expire", "--expire=now", "--all")
    lab.run()
    lab.run()
    lab.after = {v: lab.plan(v)["plan"]["status"] for v in PLANS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-lostrewind", _build)


def test_each_plan_waited_at_gate_3_before_the_reset(lab: Lab) -> None:
    assert lab.failed == {
        "ask": "awaiting_approval",
        "resume": "failed",
        "ask-kept": "awaiting_approval",
    }, lab.failed  # type: ignore[attr-defined]
    assert set(lab.before.values()) == {"awaiting_approval"}, lab.before  # type: ignore[attr-defined]
    assert set(lab.flaky_before.values()) == {2}, lab.flaky_before  # type: ignore[attr-defined]


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(PLANS), list(PLANS), BROKEN))
def test_flaky_never_runs_a_third_time(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-1")) == 1, lab.calls(f"{vid}-1")
    assert len(lab.calls(f"{vid}-2")) == 2, (
        lab.after,
        lab.calls(f"{vid}-2"),
        lab.codes(vid)[-1200:],
    )  # type: ignore[attr-defined]
    assert lab.calls(f"{vid}-3") == [], lab.calls(f"{vid}-3")
