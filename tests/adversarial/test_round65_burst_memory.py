"""Round 65, bursts: the controller's memory of its own commits (docs/performance.md: "its own
last commit of a file, with only its own commits since, is the record") against commits made
to LOOK like the controller's, and a SIGKILL of the daemon in the middle of a burst.

Lab (one, local mode, fake commit dates for the ``--once`` part):

Part A, ``run --once`` passes. 12 plans, each ``rec`` action 1 then ``rec`` action 2 behind a
gate (``requires_approval``). Alice approves all in one commit; a pass starts them (a batched
start) and each pauses at its gate (batched ``await-approval``). Then the agent commits, as
``plangate <plangate@localhost>`` (author AND committer, the controller's name, message in
the batched shape ``plangate: 3 plan events`` with ``Plan:``/``Plan-Event:`` groups naming
the attacked plans), one commit changing:

- ``forge-params``: action 2's ``target`` to ``prod-DROP`` (hashed content);
- ``forge-exec``: the ``execution:`` block: action 2 recorded ``succeeded`` (never ran);
- ``forge-done``: ``plan.status: completed`` and ``execution.status: completed``.

A second forged commit between two later controller commits (after a pass) touches nothing
of the plans (``interleave``: an empty commit under the controller's name naming ``h-01``).
Alice then approves every gate in one commit; two passes; a fresh-clone audit.

Asserted: ``forge-params`` never runs ``prod-DROP``; ``forge-exec``'s action 2 is not taken as
done without running (never ``completed`` with ``forge-exec-2`` uncalled; the controller's
last commit does not say ``succeeded`` for it unless it ran); ``forge-done`` is not
``completed`` in ``status`` while action 2 never ran; the audit explains no forged commit as
the controller's (flags each attacked plan; no valid completed record built on them); the
honest ``h-01``..``h-08`` run each action exactly once, ``completed``, valid in the audit.

Part B, the daemon. 12 plans ``k-01``..``k-12`` of two ``rec`` actions, frozen; Alice approves
all in one commit; ``plangate run`` (the daemon, its own session) is SIGKILLed (the whole
process group, by the id we started) once 8 tool calls are in ``ran.log``; then three
``run --once`` passes. Asserted: no action ran twice; a plan none of whose actions ran before
the kill ran each exactly once and is ``completed``; every plan is ``completed`` or ``failed``
with E_ACTION_IN_DOUBT (never ``executing``/``approved`` left behind).

``forge-abort``: a second forged commit, ``plangate: abort plans/forge-abort`` (one-plan
shape, ``Plan-Status: aborted``, ``Aborted-By: alice@example.com``), setting that paused plan
``aborted`` under the controller's name (author and committer); Alice then approves its gate.
Asserted: the plan runs action 2 once, ``completed``; the audit with the config lists no run
of it aborted by Alice, flags the forged commit, and blames neither her approval nor the
controller's start.

Result. HELD: ``forge-params`` (refused, action 2 never ran, the target never reached the
tool), ``forge-exec`` (action 2 ran once for real, then ``completed``), ``forge-done`` (stays
``awaiting_approval``: E_ILLEGAL_TRANSITION, ignored), the three flagged
``controller-unexplained`` at the forged commit by the audit; the forged empty batch naming
``h-01`` changed nothing; the 8 honest gated plans ran each action once, valid; ``forge-abort``
on the live controller (ignored, ran on her gate approval); the SIGKILL: every ``k-*`` action
ran at most once and every plan ended ``completed``. BROKE (strict xfail,
``forge-abort-audit``): ``plangate audit --config`` (and on a fresh clone) takes the forged
abort as the controller's: the execution is listed with outcome ``abort``, ``aborted_by``
alice, nothing is flagged at the forged commit, and it flags Alice's gate approval (illegal,
from ``aborted``) and the controller's own later start (``start-without-approval``,
``started-twice``), while ``status`` says ``completed``: the readers disagree and the audit
blames the honest record. Should: the audit with the config knows the controller's commits by
``<state_dir>/commits`` (as the live controller does) and flags the forged commit; at least a
controller that went on after an "abort" is evidence the abort was not its.

Fixed (2026-11-29): ``forge-abort-audit``. The audit reads the controller's commits as the
controller does: ``audit --config`` with its state directory by its record of the commits it
made (``<state_dir>/commits``, the history index's ``own_commit``), and by git alone
(a fresh clone) a commit under its name (author and committer) that records an ``abort`` of
a plan with no abort request open (an allowed aborter's own commit setting ``aborted``; an
``Aborted-By:`` trailer is a claim) is not the controller's: the controller aborts only on
such a request. Either way the commit is read as anyone's (its ``aborted`` ignored: the
plan stays paused, her gate approval and the controller's start are valid) and flagged
``controller-unexplained`` at each plan it changes or names (``Lifecycle.disowned``). The
test now asserts both readers: no run aborted by Alice, the runs ``await-approval`` then
``complete``, valid, and the only findings of the plan at the forged commit.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, clone_audit, valid_runs
from burstkit import batch_message, bot_commit, daemon, date_steps, findings_of, gated, status_row
from test_round2_execution_kit import shared

FORGED = ["forge-params", "forge-exec", "forge-done"]
HONEST = [f"h-{i:02d}" for i in range(1, 9)]
DENY = ["forge-abort"]
KILLED = [f"k-{i:02d}" for i in range(1, 13)]
BROKEN: dict[str, object] = {}


def two(tag: str) -> str:
    return gated(tag).replace("    requires_approval: true\n", "")


def forged_message(slugs: list[str], event: str) -> str:
    return batch_message([(s, event, "awaiting_approval") for s in slugs])


def _build(root: Path) -> Lab:
    lab = Lab(root)
    date = date_steps(lab, int(time.time()) - 7200)
    for v in [*FORGED, *HONEST, *DENY]:
        lab.write(v, gated(v))
    for v in KILLED:
        lab.write(v, two(v))
    date()
    lab.commit("agent plans", AGENT)
    lab.run()
    date()
    for v in [*FORGED, *HONEST, *DENY]:
        lab.set_status(v, "approved")
    lab.commit("approve the gated batch", ALICE)
    lab.run()  # action 1 of each, paused at the gate
    lab.paused = {v: lab.plan(v)["plan"]["status"] for v in [*FORGED, *HONEST, *DENY]}  # type: ignore[attr-defined]
    # the forged commit under the controller's name
    p = lab.repo / "plans" / "forge-params" / "PLAN.yml"
    p.write_text(p.read_text().replace('target: "staging"', 'target: "prod-DROP"'))
    p = lab.repo / "plans" / "forge-exec" / "PLAN.yml"
    data = lab.plan("forge-exec")
    text = p.read_text()
    exec_at = text.index("\nexecution:")
    text = text[: exec_at + 1] + "execution:\n" + _exec_block(data["execution"], done2=True)
    p.write_text(text)
    p = lab.repo / "plans" / "forge-done" / "PLAN.yml"
    text = p.read_text().replace("\n  status: awaiting_approval", "\n  status: completed", 1)
    data = lab.plan("forge-done")
    exec_at = text.index("\nexecution:")
    text = (
        text[: exec_at + 1]
        + "execution:\n"
        + _exec_block(data["execution"], done2=True, status="completed")
    )
    p.write_text(text)
    date()
    lab.forged_sha = bot_commit(lab, forged_message(FORGED, "checkpoint"))  # type: ignore[attr-defined]
    p = lab.repo / "plans" / "forge-abort" / "PLAN.yml"
    text = p.read_text().replace("\n  status: awaiting_approval", "\n  status: aborted", 1)
    p.write_text(text.replace("\n  status: awaiting_approval", "\n  status: aborted"))
    date()
    lab.abort_sha = bot_commit(  # type: ignore[attr-defined]
        lab,
        "plangate: abort plans/forge-abort\n\nPlan: plans/forge-abort\n"
        "Plan-Status: aborted\nAborted-By: alice@example.com\n",
    )
    lab.run()
    date()
    lab.git("commit", "-q", "--allow-empty", "-m", forged_message(["h-01"], "checkpoint"), who=BOT)
    lab.run()
    date()
    for v in [*FORGED, *HONEST]:
        if lab.plan(v)["plan"]["status"] == "awaiting_approval":
            lab.set_status(v, "approved")
    lab.set_status("forge-abort", "approved")
    lab.commit("approve the gates", ALICE)
    lab.run()
    date()
    lab.run()
    lab.git_date = None
    lab.statusA = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    lab.report, lab.valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    _code, lab.creport = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    # Part B: the daemon killed mid-burst
    for v in KILLED:
        lab.set_status(v, "approved")
    with daemon(lab, root) as burst:
        lab.commit("approve the burst", ALICE)
        burst.wait_for_calls(8, 60)
    lab.at_kill = burst.ran()  # type: ignore[attr-defined]
    if len(lab.at_kill) < 8:  # type: ignore[attr-defined]
        from advkit import BenchError

        raise BenchError(f"the daemon ran {len(lab.at_kill)} calls in 60 s")  # type: ignore[attr-defined]
    for _ in range(3):
        lab.run()
    lab.statusB = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


def _exec_block(block: dict, done2: bool, status: str | None = None) -> str:
    import io

    from ruamel.yaml import YAML

    block = json.loads(json.dumps(block, default=str))
    if status:
        block["status"] = status
    acts = block.setdefault("actions", [])
    ids = {a.get("id") for a in acts}
    if 2 not in ids:
        acts.append({"id": 2, "status": "succeeded", "attempts": 1})
    for a in acts:
        if a.get("id") == 2:
            a["status"] = "succeeded"
    block.pop("gate", None)
    out = io.StringIO()
    y = YAML()
    y.dump(block, out)
    return "".join("  " + line + "\n" for line in out.getvalue().splitlines())


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-memory", _build)


def test_the_gated_burst_paused_at_the_gates(lab: Lab) -> None:
    assert set(lab.paused.values()) == {"awaiting_approval"}, lab.paused  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(FORGED, FORGED, BROKEN))  # type: ignore[arg-type]
def test_a_commit_made_to_look_like_the_controllers_is_not_its_record(lab: Lab, vid: str) -> None:
    second = lab.calls(f"{vid}-2")
    assert all("prod-DROP" not in c["stdin"] for c in second), second
    assert len(lab.calls(f"{vid}-1")) == 1
    r = status_row(lab.statusA, vid)  # type: ignore[attr-defined]
    if not second:
        assert r.get("status") != "completed", r
        assert f"plans/{vid}" not in lab.valid or not any(  # type: ignore[attr-defined]
            e.get("status") == "completed"
            for e in valid_runs(lab.report, vid)  # type: ignore[attr-defined]
        ), valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    findings = json.dumps(lab.report.get("findings", []))  # type: ignore[attr-defined]
    assert lab.forged_sha[:12] in findings or lab.forged_sha in findings, findings[:2000]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_the_honest_gated_plans_run_each_action_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-1")) == 1 and len(lab.calls(f"{vid}-2")) == 1, status_row(
        lab.statusA, vid
    )  # type: ignore[attr-defined]
    assert status_row(lab.statusA, vid).get("status") == "completed"  # type: ignore[attr-defined]
    assert valid_runs(lab.report, vid), lab.report.get("findings")  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(DENY, DENY, BROKEN))  # type: ignore[arg-type]
def test_a_forged_abort_under_the_controllers_name_does_not_stop_her_plan(
    lab: Lab, vid: str
) -> None:
    assert len(lab.calls(f"{vid}-2")) == 1, status_row(lab.statusA, vid)  # type: ignore[attr-defined]
    assert status_row(lab.statusA, vid).get("status") == "completed"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "vid",
    cases(["forge-abort-audit"], ["forge-abort"], BROKEN),  # type: ignore[arg-type]
)
def test_the_audit_with_the_config_credits_the_controllers_record_not_the_forgery(
    lab: Lab, vid: str
) -> None:
    # with the config (its record of its commits) and on a fresh clone (git alone)
    for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
        runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
        assert not any(e.get("aborted_by") == ALICE[1] for e in runs), runs
        assert [e.get("outcome") for e in runs] == ["await-approval", "complete"], runs
        assert all(e.get("approval_valid") for e in runs), runs
        mine = findings_of(report, vid)
        blamed = [f for f in mine if f.get("commit") != lab.abort_sha]  # type: ignore[attr-defined]
        assert blamed == [], blamed
        assert any(
            f.get("commit") == lab.abort_sha and f.get("kind") == "controller-unexplained"  # type: ignore[attr-defined]
            for f in mine
        ), mine


@pytest.mark.parametrize("vid", cases(KILLED, KILLED, BROKEN))  # type: ignore[arg-type]
def test_a_sigkill_mid_burst_runs_every_action_at_most_once(lab: Lab, vid: str) -> None:
    one, two_ = lab.calls(f"{vid}-1"), lab.calls(f"{vid}-2")
    assert len(one) <= 1 and len(two_) <= 1, (one, two_)
    r = status_row(lab.statusB, vid)  # type: ignore[attr-defined]
    if f"{vid}-1" not in lab.at_kill:  # type: ignore[attr-defined]
        assert len(one) == 1 and len(two_) == 1, r
    if r.get("status") != "completed":
        assert r.get("status") == "failed" and "E_ACTION_IN_DOUBT" in json.dumps(r), r
    else:
        assert len(one) == 1 and len(two_) == 1, r
