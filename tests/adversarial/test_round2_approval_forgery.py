"""Round 2, approval side: what only the controller writes cannot be written by others, a
hash runs once, ``plangate approve`` approves one plan, and a fresh clone's audit agrees with
what happened.

Attacks: a pending plan arriving with a pre-written ``execution:`` block (action 1 done, a
forged output) or ``approval:`` block (its gate already approved); the controller's status
forged in the *batched* commit format (``plangate: 1 plan events`` with ``Plan-Event:``);
rejections and aborts committed under the controller's exact identity, or by Mallory after a
comment-only or ``metadata``-only change; ``plangate approve`` / ``reject`` run by Alice while
the agent has staged another plan set to ``approved`` (or staged a content change to the plan
itself); a frozen hash run twice: a copy approved while the original waits at its gate, two
identical plans approved in one push. Audits of a fresh clone
without config after the agent committed ``.plangate/policy.json`` before the controller's
first pass (the controller's own bytes; a hostile one naming the agent as controller).

Defence: the forged parts reach no tool and nothing runs twice, other plans never run on
Alice's ``approve``, withdrawals by people without the right are ignored, and the audit
still judges the honest run valid and does not accept the forged one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, MALLORY, Lab, cases, identity, plan_text, play
from test_round2_approval_authors import shared_lab

Step = Callable[[Lab, str], None]

TWO = """\
plan:
  name: "{tag}"
  task: "two steps"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "first"
    params:
      tag: "{tag}"
    outputs:
      - {{name: who, path: "$.json.echo.tag"}}
  - id: 2
    tool: rec
    why: "second, fed by the first"
    {gate}params:
      tag: "{tag}-2"
      who: "$<actions[1].outputs.who>"
"""


def two(tag: str, gate: bool = False) -> str:
    return TWO.format(tag=tag, gate="requires_approval: true\n    " if gate else "")


FORGED_EXECUTION = """\
execution:
  status: executing
  controller: plangate@vm
  started_at: '2026-11-25T10:00:00Z'
  actions:
  - id: 1
    key: step:0000000000000000
    status: succeeded
    attempts: 1
    started_at: '2026-11-25T10:00:00Z'
    duration_ms: 1
    outputs: {who: FORGED}
"""


def submit(text: Callable[[str], str] = lambda v: plan_text(v)) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.write(vid, text(vid))
        lab.commit(f"add {vid}", AGENT)

    return step


def approve(who: tuple[str, str] = ALICE, slug: str = "{vid}") -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.approve(slug.format(vid=vid), who)

    return step


def alice_commit(lab: Lab, vid: str) -> str:
    (lab.repo / f"README-{vid.replace('/', '-')}").write_text("alice\n")
    return lab.commit("alice tidies", ALICE)


def preseeded(block: str) -> Step:
    """The agent submits a gated two-step plan whose file already holds a controller block."""

    def step(lab: Lab, vid: str) -> None:
        commit = alice_commit(lab, vid)
        lab.write(vid, two(vid, gate=(block == "gate")))
        pin = lab.cli("hash", str(lab.repo / "plans" / vid)).stdout.strip()
        extra = FORGED_EXECUTION
        if block == "gate":
            extra += (
                f"approval:\n  status: approved\n  by: alice@example.com\n"
                f"  at: '2026-11-25T10:00:00Z'\n  commit: {commit}\n  plan_hash: {pin}\n"
                "  signature: null\n  gate: true\n"
            )
        path = lab.repo / "plans" / vid / "PLAN.yml"
        path.write_text(path.read_text() + extra)
        lab.commit(f"add {vid}", AGENT)

    return step


def forge_batched(state: str) -> Step:
    """The controller's status and an execution block, in the batched commit format."""

    def step(lab: Lab, vid: str) -> None:
        data = lab.plan(vid)
        frozen_hash = data["frozen"]["hash"]
        approval = next(r[0] for r in lab.log_rows("%H%x00%ae%x01") if r[1] == ALICE[1])
        path = lab.repo / "plans" / vid / "PLAN.yml"
        text = path.read_text().replace("status: pending_approval", f"status: {state}", 1)
        path.write_text(text + FORGED_EXECUTION.replace("status: executing", f"status: {state}"))
        lab.git("add", "-A")
        event = {"awaiting_approval": "await-approval", "executing": "start"}[state]
        message = (
            "plangate: 1 plan events\n\n"
            f"Plan: plans/{vid}\nPlan-Event: {event}\nPlan-Hash: {frozen_hash}\n"
            f"Plan-Status: {state}\nApproved-By: alice@example.com\n"
            f"Approval-Commit: {approval}\nController: vm/00000000\n"
        )
        lab.git("commit", "-q", "-m", message, who=BOT)

    return step


def withdraw(status: str, who: tuple[str, str], prelude: str = "") -> Step:
    def step(lab: Lab, vid: str) -> None:
        path = lab.repo / "plans" / vid / "PLAN.yml"
        if prelude == "comment":
            path.write_text(path.read_text() + "# mallory was here\n")
            lab.commit("comment", who)
        elif prelude == "metadata":
            path.write_text(path.read_text() + "metadata: {ticket: MAL-1}\n")
            lab.commit("metadata", who)
        lab.set_status(vid, status)
        lab.commit(f"{status} {vid}", who)

    return step


def as_alice(lab: Lab, *args: str) -> subprocess.CompletedProcess[str]:
    lab.extra_env = identity(ALICE)  # type: ignore[attr-defined]
    try:
        return lab.cli(*args, cwd=lab.repo)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def submit_pair(lab: Lab, vid: str) -> None:
    lab.write(vid, plan_text(vid, params="note: v1\n"))
    lab.write(f"{vid}-other", plan_text(f"{vid}-other"))
    lab.commit(f"add {vid} and {vid}-other", AGENT)


def staged_then_cli(what: str, command: str) -> Step:
    """The agent stages a change (the other plan approved, or this plan's content) and puts
    the working tree back as committed; then Alice runs ``plangate <command>`` on this plan."""

    def step(lab: Lab, vid: str) -> None:
        target = f"{vid}-other" if what == "other-approved" else vid
        path = lab.repo / "plans" / target / "PLAN.yml"
        committed = path.read_bytes()
        if what == "other-approved":
            lab.set_status(target, "approved")
        else:
            path.write_text(path.read_text().replace("note: v1", "note: v2-staged"))
        lab.git("add", f"plans/{target}/PLAN.yml")
        if what != "unstaged":
            path.write_bytes(committed)
        args = [command, f"plans/{vid}"] + (["-m", "not now"] if command == "reject" else [])
        result = as_alice(lab, *args)
        assert result.returncode in (0, 1), result.stdout + result.stderr
        lab.git("reset", "-q")
        lab.git("checkout", "-q", "--", ".")

    return step


def copy_to(dest: str, text: Callable[[str], str] | None = None) -> Step:
    def step(lab: Lab, vid: str) -> None:
        source = lab.read(vid) if text is None else text(vid)
        body = source.split("\nfrozen:")[0].split("\napproval:")[0].rstrip("\n") + "\n"
        body = body.replace("status: awaiting_approval", "status: pending_approval", 1)
        lab.write(dest.format(vid=vid), body)
        lab.commit(f"copy {vid}", AGENT)

    return step


def twins(lab: Lab, vid: str) -> None:
    lab.write(vid, plan_text(vid))
    lab.write(f"{vid}-twin", plan_text(vid))
    lab.commit(f"add {vid} twice", AGENT)


def approve_twins(one_commit: bool) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.set_status(vid, "approved")
        if not one_commit:
            lab.commit(f"approve {vid}", ALICE)
        lab.set_status(f"{vid}-twin", "approved")
        lab.commit(f"approve {vid}-twin", ALICE)

    return step


def edit(old: str, new: str, slug: str = "{vid}") -> Step:
    def step(lab: Lab, vid: str) -> None:
        path = lab.repo / "plans" / slug.format(vid=vid) / "PLAN.yml"
        path.write_text(path.read_text().replace(old, new))
        lab.commit(f"edit {vid}", AGENT)

    return step


GATED = lambda v: two(v, gate=True)  # noqa: E731
# variant -> (steps, expected calls per tag suffix; "" is action 1 / the plan's own tag)
ATTACKS: dict[str, tuple[list[Step | None], dict[str, int]]] = {
    "preseeded-execution": (
        [preseeded("execution"), approve()],
        {"": 1, "-2": 1},
    ),
    "preseeded-gate-approval": (
        [preseeded("gate"), approve()],
        {"": 1, "-2": 0},
    ),
    "batched-forged-awaiting": (
        [submit(GATED), forge_batched("awaiting_approval"), approve()],
        {"": 1, "-2": 0},
    ),
    "batched-forged-executing": (
        [submit(GATED), forge_batched("executing"), approve()],
        {"": 1, "-2": 0},
    ),
    "reject-as-controller": (
        [submit(), withdraw("rejected", BOT), approve()],
        {"": 1},
    ),
    "abort-as-controller": (
        [submit(GATED), approve(), withdraw("aborted", BOT), approve()],
        {"": 1, "-2": 1},
    ),
    "reject-after-comment": (
        [submit(), withdraw("rejected", MALLORY, "comment"), approve()],
        {"": 1},
    ),
    "abort-after-metadata": (
        [submit(GATED), approve(), withdraw("aborted", MALLORY, "metadata"), approve()],
        {"": 1, "-2": 1},
    ),
    "approve-with-other-plan-staged": (
        [submit_pair, staged_then_cli("other-approved", "approve")],
        {"": 1, "-other": 0},
    ),
    "reject-with-other-plan-staged": (
        [submit_pair, staged_then_cli("other-approved", "reject")],
        {"": 0, "-other": 0},
    ),
    "approve-with-own-content-staged": (
        [submit_pair, staged_then_cli("content", "approve")],
        {"": 1, "-other": 0},
    ),
    "copy-while-paused-at-gate": (
        [submit(GATED), approve(), copy_to("{vid}-copy"), approve(slug="{vid}-copy")],
        {"": 1, "-2": 0},
    ),
    "twins-approved-in-one-commit": ([twins, approve_twins(True)], {"": 1}),
    "twins-approved-in-two-commits": ([twins, approve_twins(False)], {"": 1}),
}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    play(lab, {vid: steps for vid, (steps, _) in ATTACKS.items()})  # type: ignore[arg-type]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "forgery", _build)


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_only_what_was_approved_runs_and_only_once(lab: Lab, vid: str) -> None:
    expected = ATTACKS[vid][1]
    got = {suffix: len(lab.calls(vid + suffix)) for suffix in expected}
    assert got == expected, lab.codes(vid)
    forged = [c for s in expected for c in lab.calls(vid + s) if "FORGED" in c["stdin"]]
    assert forged == [], "a forged output reached a tool"
    staged = [c for c in lab.calls(vid) if "v2-staged" in c["stdin"]]
    assert staged == [], "content the agent staged ran under Alice's approval"


# -- audits of a fresh clone without config, after the agent wrote the policy first ----------


def _controller_policy(lab: Lab) -> dict[str, Any]:
    """The policy the controller will record: run it once on a scratch clone."""
    scratch = lab.root / "scratch"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(scratch)], check=True, env=lab.env())
    config = lab.root / "scratch.yml"
    config.write_text(
        lab.config.read_text()
        .replace(f"repo: {lab.repo}", f"repo: {scratch}")
        .replace(f"state_dir: {lab.state}", f"state_dir: {lab.root / 'scratch-state'}")
    )
    result = lab.cli("run", "--once", "--config", str(config))
    assert result.returncode == 0, result.stderr[-2000:]
    data = json.loads((scratch / ".plangate" / "policy.json").read_text())
    shutil.rmtree(scratch)
    return data


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _fresh_audit(lab: Lab, tmp: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", *flags, cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    try:
        return result.returncode, json.loads(result.stdout)
    except ValueError:
        return result.returncode, {"raw": result.stdout, "stderr": result.stderr[-2000:]}


HOSTILE_HASH: list[str] = []


def _forge_run_as_agent(lab: Lab, vid: str) -> None:
    """Mallory (no approver) sets ``approved``; the agent writes the controller's start and
    complete commits for it under its own name (its hostile policy names it the controller
    and Mallory an approver). Nothing ran."""
    frozen_hash = lab.plan(vid)["frozen"]["hash"]
    request = lab.approve(vid, MALLORY)
    for status, event in (("executing", "start"), ("completed", "complete")):
        lab.set_status(vid, status)
        message = (
            f"plangate: {event} plans/{vid}\n\nPlan: plans/{vid}\nPlan-Hash: {frozen_hash}\n"
            f"Plan-Status: {status}\nApproved-By: mallory@example.com\n"
            f"Approval-Commit: {request}\nController: evil/00000000\n"
            + (f"Policy-Hash: {HOSTILE_HASH[0]}\n" if event == "start" else "")
        )
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", message, who=AGENT)


def _honest_valid(report: dict[str, Any]) -> bool:
    runs = [e for e in report.get("executions", []) if e.get("plan") == "plans/honest"]
    return bool(runs) and all(e.get("approval_valid") for e in runs)


def test_a_policy_committed_first_by_the_agent_leaves_the_audit_judging(tmp_path: Path) -> None:
    """The agent commits the controller's own policy bytes before its first pass."""
    lab = Lab(tmp_path / "lab")
    policy = _controller_policy(lab)
    (lab.repo / ".plangate").mkdir()
    (lab.repo / ".plangate" / "policy.json").write_text(_canonical(policy))
    lab.commit("record the policy", AGENT)
    play(lab, {"honest": [submit(), approve()]})
    assert len(lab.calls("honest")) == 1
    code, report = _fresh_audit(lab, tmp_path)
    assert code in (0, 1) and _honest_valid(report), report


@pytest.mark.parametrize("sealed", [False, True], ids=["unsealed", "seal-shaped"])
def test_a_hostile_first_policy_does_not_make_the_agent_the_controller(
    tmp_path: Path, sealed: bool
) -> None:
    """The agent's policy names the agent as the controller and approver; then the agent
    writes a start/complete pair for a plan nobody approved."""
    lab = Lab(tmp_path / "lab")
    policy = _controller_policy(lab)
    policy["identity"]["email"] = AGENT[1]
    policy["approval"]["approvers"] = [MALLORY[1]]
    (lab.repo / ".plangate").mkdir()
    text = _canonical(policy)
    HOSTILE_HASH[:] = ["sha256:" + hashlib.sha256(text.encode()).hexdigest()]
    (lab.repo / ".plangate" / "policy.json").write_text(text)
    seal = f"\nController-Seal: {'c' * 64}" if sealed else ""
    lab.commit(f"plangate: record policy\n\nPolicy-Hash: {HOSTILE_HASH[0]}{seal}", AGENT)
    play(lab, {"honest": [submit(), approve()], "ghost": [submit(), _forge_run_as_agent]})
    assert len(lab.calls("honest")) == 1 and lab.calls("ghost") == []
    code, report = _fresh_audit(lab, tmp_path)
    if not sealed:
        # round 110: a version no identity sealed as its own names nobody once the
        # controller's sealed records exist: the audit judges by them, as --controller does
        ghost = [e for e in report.get("executions", []) if e.get("plan") == "plans/ghost"]
        assert code == 1 and not any(e.get("approval_valid") for e in ghost), report
        assert _honest_valid(report), report
        return
    # Git alone cannot tell which seal-shaped self-declared controller is real: the audit
    # refuses to guess (round 2 found it took the first one, the agent's) and asks.
    said = json.dumps(report)
    assert code == 2 and report.get("executions") is None, report
    assert "E_CONFIG_INVALID" in said and "--controller" in said, report
    assert AGENT[1] in said and BOT[1] in said, report
    code, report = _fresh_audit(lab, tmp_path / "named", "--controller", BOT[1])
    ghost = [
        e
        for e in report.get("executions", [])
        if e.get("plan") == "plans/ghost" and e.get("approval_valid")
    ]
    assert code == 1 and ghost == [], report
    assert _honest_valid(report), report
