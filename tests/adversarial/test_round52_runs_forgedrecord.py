"""Round 52 (runs): a forged ``execution:`` block read as the truth after a journal loss.

docs/execution.md, "A plan at a gate (or failed) when the journal is lost" (round 45): when a
gate or resume approval finds no journal, "the committed record is then the truth for what
already ran": actions the plan's committed ``execution:`` block records as ``succeeded`` are
journaled ``recovered`` with "the outputs the record shows", and the run goes on. The
``execution:`` block is not hashed and any writer of the repository can commit a change to
it (the audit flags ``owned-block-changed``; ``show`` takes the blocks from the controller's
own last commit of the file and warns ``E_OWNED_BLOCK_CHANGED``).

Lab ``fr`` (local mode), three shapes of plan, three plans of each:

- gate plans ``gate-*``: action 1 ``rec`` (param ``who: real-<id>@example.net``, output
  ``who`` = ``$.json.echo.who``), action 2 ``rec`` gated (``requires_approval``) with
  ``to: $<actions[1].outputs.who>``, action 3 ``rec``. Alice approves; the run pauses at
  the gate after action 1.
- resume plans ``resume-*``: action 1 ``rec``, action 2 ``boom`` (an exec tool that records
  its call and exits 1; output ``x``), action 3 ``rec`` with ``to: $<actions[2].outputs.x>``.
  Alice approves; the run ends ``failed`` at action 2.
- ask plans ``ask-*``: the resume plan with ``on_failure: ask`` on action 2: the run waits
  (``awaiting_approval``) at action 2; the agent's edit is the resume plans' one.

Then the agent (no approver) commits one edit of every plan's ``execution:`` block only:
for gate plans, action 1's recorded output ``who`` (and the ``gate:`` preview's ``to``)
becomes ``evil@attacker.example``; for resume plans, action 2 becomes ``succeeded`` with
output ``x: evil@attacker.example``. Then, per suffix:

- ``-control``: nothing lost; Bob approves the gate / a resume / the ask; two passes.
- ``-journal``: the plan's journal folder is gone (a restored backup without it), then the
  same.
- ``-state``: the whole state directory is gone (a rebuilt host; done last), then the same.

Asserted: no tool call of the plan ever receives the agent's value (``evil@attacker.example``):
the values that run are what the tools produced (or the run fails closed), never bytes a
person wrote into the controller's record; the pass finishes.

Broke (strict xfails): ``gate-journal`` and ``gate-state``: the gate approval after the
loss ran action 2 with ``to: evil@attacker.example``, read from the agent's edit of the
committed ``execution:`` block (the controller's own commit of the file said
``real-...@example.net``; ``show`` warned E_OWNED_BLOCK_CHANGED and showed the real one).
``resume-journal`` and ``resume-state``: the resume after the loss took action 2 as
succeeded (never ran it again) and ran action 3 with the agent's ``x``. ``ask-journal``:
the same through Bob's answer to the ask. ``ask-state``: Bob's answer re-ran the run from
action 1 (action 1 twice; the class of test_round52_runs_lostask.py, no forgery needed).
Should: recover only from the controller's own last commit of the file (as ``show`` does)
or fail closed (E_ACTION_IN_DOUBT / E_OWNED_BLOCK_CHANGED), never run with a person's record.

Fixed (2026-11-29): a run whose journal was lost goes on only from the controller's own
record: the ``execution:`` block of its last commit of the plan that wrote the block (a
pause, a failure: its own by its record of the commits it made, not by name), before the
run's start commit, and only when the branch's block is that record
(``PlanRun._committed_record``, read by ``Outcomes._record_source`` through
``controller/git/ownrecord.py``, which ``show`` reads the record with too). Here the agent's
edit is on the branch: every ``-journal`` and ``-state`` plan journals what the controller's
record shows finished (action 1), then fails E_ACTION_IN_DOUBT naming the controller's
commit, nothing runs, and the outcome commit writes the controller's record back. An
``on_failure: ask`` or gate approval after a state loss goes on as a continued run (never
from action 1; ``Job.continued``), the pause it answers read from the controller's record
(``starting._committed_gate``).
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from ruamel.yaml import YAML
from test_round2_execution_kit import shared

EVIL = "evil@attacker.example"
SUFFIXES = ["control", "journal", "state"]
GATES = [f"gate-{s}" for s in SUFFIXES]
RESUMES = [f"resume-{s}" for s in SUFFIXES]
ASKS = [f"ask-{s}" for s in SUFFIXES]

BOOM = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
sys.exit(1)
"""

#: all fixed on 2026-11-29 (see the module docstring)
BROKEN: dict[str, str] = {}


def _gate_plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: read the recipient
    params: {{tag: {tag}-1, who: real-{tag}@example.net}}
    outputs: [{{name: who, path: $.json.echo.who}}]
  - id: 2
    tool: rec
    why: send to it after a second look
    requires_approval: true
    params: {{tag: {tag}-2, to: "$<actions[1].outputs.who>"}}
  - id: 3
    tool: rec
    why: last
    params: {{tag: {tag}-3}}
"""


def _resume_plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}, {{name: boom}}]
actions:
  - id: 1
    tool: rec
    why: first
    params: {{tag: {tag}-1}}
  - id: 2
    tool: boom
    why: fails
    params: {{tag: {tag}-2}}
    outputs: [{{name: x, path: $.json.x}}]
  - id: 3
    tool: rec
    why: uses 2's output
    params: {{tag: {tag}-3, to: "$<actions[2].outputs.x>"}}
"""


def _ask_plan(tag: str) -> str:
    return _resume_plan(tag).replace(
        "    outputs: [{name: x, path: $.json.x}]\n",
        "    outputs: [{name: x, path: $.json.x}]\n    on_failure: ask\n",
    )


def _forge(lab: Lab, slug: str) -> None:
    """The agent's edit of the ``execution:`` block only (round-trip YAML)."""
    yaml = YAML()
    yaml.preserve_quotes = True
    path = lab.repo / "plans" / slug / "PLAN.yml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    ex = data["execution"]
    if slug.startswith("gate-"):
        ex["actions"][0]["outputs"]["who"] = EVIL
        if "gate" in ex:
            ex["gate"]["params"]["to"] = EVIL
    else:
        second = ex["actions"][1]
        for k in ("error", "code"):
            second.pop(k, None)
        second["status"] = "succeeded"
        second["attempts"] = 1
        second["started_at"] = ex["actions"][0].get("started_at", "2026-01-01T00:00:00Z")
        second["duration_ms"] = 40
        second["outputs"] = {"x": EVIL}
        ex["status"] = "failed" if slug.startswith("resume-") else ex["status"]
    out = io.StringIO()
    yaml.dump(data, out)
    path.write_text(out.getvalue(), encoding="utf-8")


def _answer(lab: Lab, slugs: list[str], take_over: bool = False) -> None:
    for slug in slugs:
        lab.set_status(slug, "approved")
    lab.commit("gate / resume " + " ".join(slugs), BOB)
    lab.run(take_over=take_over)  # a state directory lost for good: told (round 70)
    lab.run()


def _build(root: Path) -> Lab:
    (root / "boom.py").write_text(BOOM)
    py = json.dumps(sys.executable)
    lab = Lab(
        root / "fr",
        tools=f"boom: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'boom.py'))}, "
        f"'{{tag}}'], env: {{REC_LOG: {json.dumps(str(root / 'fr' / 'ran.log'))}}}}}\n",
    )
    for slug in GATES:
        lab.write(slug, _gate_plan(slug))
    for slug in RESUMES:
        lab.write(slug, _resume_plan(slug))
    for slug in ASKS:
        lab.write(slug, _ask_plan(slug))
    lab.commit("plans")
    lab.run()
    for slug in GATES + RESUMES + ASKS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.before = {s: lab.plan(s)["plan"]["status"] for s in GATES + RESUMES + ASKS}  # type: ignore[attr-defined]
    for slug in GATES + RESUMES + ASKS:
        _forge(lab, slug)
    lab.commit("tidy the records", AGENT)
    lab.shown = {  # type: ignore[attr-defined]
        s: lab.cli("show", f"plans/{s}/PLAN.yml", "--config", str(lab.config), cwd=lab.repo).stdout
        for s in GATES
    }
    _answer(lab, ["gate-control", "resume-control", "ask-control"])
    for slug in ("gate-journal", "resume-journal", "ask-journal"):
        shutil.rmtree(lab.state / "journal" / f"plans%2F{slug}")
    _answer(lab, ["gate-journal", "resume-journal", "ask-journal"])
    shutil.rmtree(lab.state)
    _answer(lab, ["gate-state", "resume-state", "ask-state"], take_over=True)
    lab.final = {s: lab.plan(s)["plan"]["status"] for s in GATES + RESUMES + ASKS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-forgedrecord", _build)


def test_setup_paused_and_failed(lab: Lab) -> None:
    before = lab.before  # type: ignore[attr-defined]
    assert {before[s] for s in GATES} == {"awaiting_approval"}, before
    assert {before[s] for s in RESUMES} == {"failed"}, before
    assert {before[s] for s in ASKS} == {"awaiting_approval"}, before


@pytest.mark.parametrize("slug", GATES)
def test_show_promised_the_real_value(lab: Lab, slug: str) -> None:
    """What the gate's reviewer read: the controller's own record, with a warning."""
    shown = lab.shown[slug]  # type: ignore[attr-defined]
    assert f"real-{slug}@example.net" in shown, shown[-2000:]
    assert "E_OWNED_BLOCK_CHANGED" in shown, shown[-2000:]


def _marks(slug: str) -> list[pytest.MarkDecorator]:
    if slug in BROKEN:
        return [
            pytest.mark.xfail(
                strict=True, raises=AssertionError, reason=f"round 52: {BROKEN[slug]}"
            )
        ]
    return []


@pytest.mark.parametrize(
    "slug", [pytest.param(s, id=s, marks=_marks(s)) for s in GATES + RESUMES + ASKS]
)
def test_no_tool_gets_the_agents_value(lab: Lab, slug: str) -> None:
    calls = [c for n in (1, 2, 3) for c in lab.calls(f"{slug}-{n}")]
    forged = [c for c in calls if EVIL in c["stdin"]]
    assert not forged, (forged, lab.final)  # type: ignore[attr-defined]
    assert len(lab.calls(f"{slug}-1")) == 1, lab.calls(f"{slug}-1")


@pytest.mark.parametrize("slug", [pytest.param(s, id=s, marks=_marks(s)) for s in GATES])
def test_the_gated_action_ran_at_most_once_with_the_real_value(lab: Lab, slug: str) -> None:
    sent = lab.calls(f"{slug}-2")
    assert len(sent) <= 1, sent
    for call in sent:
        assert json.loads(call["stdin"])["to"] in (f"real-{slug}@example.net",), call


@pytest.mark.parametrize("slug", GATES + RESUMES + ASKS)
def test_the_controller_commits_its_own_record_back(lab: Lab, slug: str) -> None:
    """After the answer, the plan's record is the controller's again: the agent's value is no
    longer in it (the outcome commit writes what the controller recorded, never the edit)."""
    block = json.dumps(lab.plan(slug).get("execution"))
    assert EVIL not in block, (lab.final[slug], block[:1500])  # type: ignore[attr-defined]
    if slug.endswith(("-journal", "-state")):
        assert lab.final[slug] == "failed", lab.final  # type: ignore[attr-defined]
        assert "E_ACTION_IN_DOUBT" in lab.codes(slug), lab.codes(slug)[-1500:]
