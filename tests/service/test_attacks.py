"""Adversarial tests of the approval path (SPEC §4, §5, §7) against real repos.

Each test is an attack an agent (or a careless approver) could make; it fails if the attack
succeeds: something runs that no valid approval covers, or ``plangate audit`` misses it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from controller.approval import approvals
from controller.plan import plans
from controller.settings import ApprovalSettings
from controller.settings.models import default_state_dir
from tests.support.gitenv import identity, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
    PLAN,
    approve,
    commit_all,
    controller,
    edit_status,
    git,
    head_plan,
    make_config,
    run_once,
    subjects,
    submitted,
    write_plan,
)

AUDIT_CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
  require_signed: {signed}
  allowed_signers: {signers}
tools:
  greet: {{kind: echo}}
"""


def _audit(repo: Path, *, signed: bool = False, signers: Path | None = None) -> dict[str, Any]:
    config = repo.parent / "plangate.yml"
    config.write_text(
        AUDIT_CONFIG.format(signed=str(signed).lower(), signers=json.dumps(str(signers or "")))
        if signers
        else AUDIT_CONFIG.format(signed=str(signed).lower(), signers="null")
    )
    shutil.rmtree(default_state_dir(repo), ignore_errors=True)
    result = run_cli("audit", "--json", "--config", str(config))
    assert result.returncode in (0, 1), result.stderr
    report = dict(json.loads(result.stdout))
    report["exit"] = result.returncode
    return report


def _kinds(report: dict[str, Any]) -> set[str]:
    return {f["kind"] for f in report["findings"]}


def _ran(repo: Path) -> bool:
    """Did the controller run anything? Every run begins with a start commit."""
    return any(s.startswith("plangate: start") for s in _controller_subjects(repo, real=True))


def _controller_subjects(repo: Path, real: bool = False) -> list[str]:
    """Subjects of commits under the controller's identity (``real``: with the trailer the
    controller writes and the forgeries in these tests do not)."""
    out = git(repo, "log", "--format=%ae%x00%s%x00%(trailers:key=Controller,valueonly)%x01")
    rows = [r.strip("\n").split("\0") for r in out.split("\x01") if r.strip()]
    return [s for email, s, ctl in rows if email == BOT[1] and (ctl.strip() or not real)]


def _frozen_text(text: str) -> str:
    """What an agent writes to fake a freeze: the real frozen.hash of ``text``."""
    loaded = plans.validate_text(text, Path("plans/greet/PLAN.yml"))
    return plans.freeze_text(loaded).text


def _commit_as(repo: Path, message: str, who: tuple[str, str]) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, env=identity(*who))
    return git(repo, "rev-parse", "HEAD").strip()


def _plan_file(repo: Path, slug: str = "greet") -> Path:
    return repo / "plans" / slug / "PLAN.yml"


def _set(repo: Path, old: str, new: str, slug: str = "greet") -> None:
    path = _plan_file(repo, slug)
    path.write_text(path.read_text().replace(old, new))


# --- self-approval ------------------------------------------------------------------------


@pytest.mark.parametrize("approvers", [None, ["*@example.com"]])
def test_new_plan_committed_already_approved_is_refused(
    repo: Path, approvers: list[str] | None
) -> None:
    write_plan(repo, text=_frozen_text(PLAN).replace("pending_approval", "approved"))
    commit_all(repo, "add an approved plan", AGENT)
    extra = {} if approvers is None else {"approvers": approvers}
    run_once(repo, **extra)
    plan = head_plan(repo)
    assert not _ran(repo)
    assert plan["plan"]["status"] == "pending_approval"
    expected = "E_APPROVER_NOT_ALLOWED" if approvers is None else "E_SELF_APPROVAL"
    assert plan["approval"]["code"] == expected


# --- forging the controller's identity ----------------------------------------------------


def _forge_executing(repo: Path, subject: str, seal: str = "") -> None:
    """``seal``: a ``Controller-Seal:`` line (by git alone a start without one is anyone's,
    round 69; one of the right shape cannot be checked without the key)."""
    edit_status(repo, "greet", "executing")
    path = _plan_file(repo)
    path.write_text(
        path.read_text() + "approval: {status: approved, by: alice@example.com, commit: deadbeef}\n"
    )
    _commit_as(repo, f"{subject}\n\nPlan: plans/greet\n{seal}", BOT)


@pytest.mark.parametrize("subject", ["plangate: start plans/greet", "routine cleanup"])
def test_forged_controller_start_never_runs_and_is_flagged(repo: Path, subject: str) -> None:
    submitted(repo)
    _forge_executing(repo, subject)
    run_once(repo)
    assert subjects(repo)[0] == subject
    assert "execution" not in head_plan(repo)
    report = _audit(repo)
    assert report["exit"] == 1, report
    assert _kinds(report) & {"start-without-approval", "controller-unexplained"}


@pytest.mark.parametrize("subject", ["plangate: complete plans/greet", "tidy"])
def test_forged_controller_completed_is_flagged(repo: Path, subject: str) -> None:
    submitted(repo)
    edit_status(repo, "greet", "completed")
    _commit_as(repo, subject, BOT)
    run_once(repo)
    assert not _ran(repo)
    report = _audit(repo)
    assert report["exit"] == 1, report


def test_forged_controller_refreeze_after_approval_never_runs_edited_content(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    # The agent swaps the param and writes a matching frozen.hash, as the controller.
    text = _plan_file(repo).read_text().replace("who: world", "who: attacker")
    loaded = plans.validate_text(text, Path("plans/greet/PLAN.yml"))
    _plan_file(repo).write_text(text.replace(str(loaded.frozen_hash), str(loaded.hash)))
    _commit_as(repo, "plangate: freeze plans/greet", BOT)
    run_once(repo)
    assert "attacker" not in json.dumps(head_plan(repo).get("execution"))
    assert not _ran(repo)
    report = _audit(repo)
    assert report["exit"] == 1, report
    assert "controller-unexplained" in _kinds(report) or "content-after-approval" in _kinds(report)


def test_content_written_under_the_controller_identity_is_flagged(repo: Path) -> None:
    """Alice writes the plan's content as "plangate" and then approves it herself. Without
    signatures git cannot tell who wrote a commit (she could as well write as anyone), so the
    live controller cannot refuse it; the audit must show it."""
    submitted(repo)
    _set(repo, "who: world", "who: alice-wants-this")
    _commit_as(repo, "plangate: freeze plans/greet", BOT)  # a content change, forged
    run_once(repo)
    approve(repo, who=ALICE)
    run_once(repo)
    report = _audit(repo)
    assert report["exit"] == 1, report
    assert "controller-unexplained" in _kinds(report)


# --- edits after approval, in the approving commit, in merges -------------------------------


def test_edit_after_approval_in_the_working_tree_never_runs(repo: Path) -> None:
    """Local mode: the agent edits PLAN.yml (and its frozen.hash) on disk after the start
    commit, before the engine reads it."""
    submitted(repo)
    approve(repo)
    with controller(repo) as ctl:
        [job] = ctl.reconcile()
        text = _plan_file(repo).read_text().replace("who: world", "who: attacker")
        loaded = plans.validate_text(text, Path("plans/greet/PLAN.yml"))
        _plan_file(repo).write_text(text.replace(str(loaded.frozen_hash), str(loaded.hash)))
        ctl.execute(job)
    log = repo / "plans/greet/EXECUTION_LOG.md"
    assert not log.exists() or "attacker" not in log.read_text()
    execution = json.dumps(yaml_data(_plan_file(repo)).get("execution"))
    assert "attacker" not in execution


def test_a_refused_run_file_is_not_offered_again_until_it_changes(repo: Path) -> None:
    """A tampered run file is refused once; passes must not offer the job again and again
    (a busy loop: the daemon's wake-up after each refusal starts the next pass at once)."""
    submitted(repo)
    approve(repo)
    original = None
    with controller(repo) as ctl:
        [job] = ctl.reconcile()
        original = _plan_file(repo).read_text()
        _plan_file(repo).write_text(original.replace("who: world", "who: attacker"))
        ctl.execute(job)
        assert ctl.reconcile() == []  # unchanged file: not offered again
        assert ctl.reconcile() == []
        waiting = {r["plan"]: r["waiting"] for r in ctl.status()}
        assert waiting["plans/greet"]  # status says why it does not run
        _plan_file(repo).write_text(original)  # restored: offered again, and it runs
        [again] = ctl.reconcile()
        ctl.execute(again)
    assert head_plan(repo)["plan"]["status"] == "completed"


def test_an_outcome_that_never_lands_keeps_the_job_for_the_next_pass(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The branch moves under every outcome commit: the job must stay, not be dropped with
    the outcome uncommitted (the plan would stay `executing` forever)."""
    from controller.service import reconcile

    submitted(repo)
    approve(repo)
    with controller(repo) as ctl:
        [job] = ctl.reconcile()

        def always_moved(*args: Any, **kwargs: Any) -> None:
            raise reconcile._Moved

        with monkeypatch.context() as patch:
            patch.setattr(ctl, "_commit_outcome", always_moved)
            ctl.execute(job)
        assert "plans/greet" in ctl.index.jobs()
        assert head_plan(repo)["plan"]["status"] == "executing"
        [again] = ctl.reconcile()
        ctl.execute(again)
    assert head_plan(repo)["plan"]["status"] == "completed"
    ran = [s for s in subjects(repo) if s.startswith("plangate: ")]
    assert ran[:2] == ["plangate: complete plans/greet", "plangate: start plans/greet"]


def test_a_plan_folder_named_with_bytes_that_are_not_utf8_stops_nothing(repo: Path) -> None:
    """git allows any bytes in a name; one such folder, pushed by anyone, used to make every
    pass fail (the index could not store its id)."""
    import os

    bad = os.fsencode(repo / "plans") + b"/bad\xff\xfename"
    os.makedirs(bad)
    with open(bad + b"/PLAN.yml", "w") as handle:
        handle.write("plan: {name: x, task: y, status: approved}\n")
    commit_all(repo, "a folder git accepts and UTF-8 does not")
    submitted(repo)
    approve(repo)
    run_once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"


def yaml_data(path: Path) -> dict[str, Any]:
    from controller.plan import yamlio

    return dict(yamlio.read_yaml(path.read_text()).data)


def test_later_commit_edits_params_and_refreezes(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    _set(repo, "who: world", "who: attacker")
    path = _plan_file(repo)
    loaded = plans.validate_text(path.read_text(), Path("plans/greet/PLAN.yml"))
    path.write_text(path.read_text().replace(str(loaded.frozen_hash), str(loaded.hash)))
    commit_all(repo, "tweak", AGENT)
    run_once(repo)
    assert not _ran(repo)
    assert head_plan(repo)["approval"]["code"] == "E_PLAN_HASH_MISMATCH"


def test_approving_commit_that_also_edits_frozen_is_refused(repo: Path) -> None:
    submitted(repo)
    _set(repo, "who: world", "who: attacker")
    path = _plan_file(repo)
    loaded = plans.validate_text(path.read_text(), Path("plans/greet/PLAN.yml"))
    path.write_text(path.read_text().replace(str(loaded.frozen_hash), str(loaded.hash)))
    approve(repo, who=ALICE)
    run_once(repo)
    assert not _ran(repo)
    assert head_plan(repo)["approval"]["code"] == "E_PLAN_HASH_MISMATCH"


def _branch_edit(repo: Path, new: str, refreeze: bool) -> None:
    git(repo, "switch", "-q", "-c", "agent/edit")
    _set(repo, "who: world", f"who: {new}")
    if refreeze:
        path = _plan_file(repo)
        loaded = plans.validate_text(path.read_text(), Path("plans/greet/PLAN.yml"))
        path.write_text(path.read_text().replace(str(loaded.frozen_hash), str(loaded.hash)))
    commit_all(repo, "edit on a branch", AGENT)
    git(repo, "switch", "-q", "main")


def test_evil_merge_that_changes_content_and_approves_is_refused(repo: Path) -> None:
    submitted(repo)
    _branch_edit(repo, "branch-value", refreeze=True)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "agent/edit", env=identity(*ALICE))
    _set(repo, "who: branch-value", "who: merge-value")
    path = _plan_file(repo)
    loaded = plans.validate_text(path.read_text(), Path("plans/greet/PLAN.yml"))
    path.write_text(path.read_text().replace(str(loaded.frozen_hash), str(loaded.hash)))
    edit_status(repo, "greet", "approved")
    _commit_as(repo, "Merge agent/edit", ALICE)
    run_once(repo)
    assert not _ran(repo)
    assert head_plan(repo)["approval"]["code"] in ("E_PLAN_HASH_MISMATCH", "E_SELF_APPROVAL")


def test_merge_of_an_agent_edit_approved_by_the_merger_needs_no_agent_identity(
    repo: Path,
) -> None:
    """The merge commit sets approved; the branch's content is the agent's: valid, and the
    merger does not become a changer of content they did not write."""
    submitted(repo)
    _branch_edit(repo, "branch-value", refreeze=True)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "agent/edit", env=identity(*ALICE))
    edit_status(repo, "greet", "approved")
    _commit_as(repo, "Merge agent/edit and approve", ALICE)
    run_once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed", plan.get("approval")
    assert plan["execution"]["actions"][0]["outputs"] == {} or "branch-value" in json.dumps(
        plan["execution"]
    )


def test_clean_merge_by_an_approver_does_not_make_them_a_changer(repo: Path) -> None:
    """The branch edits params on a version from before the freeze; main froze it. The merge
    combines both without the merger writing any content."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    git(repo, "branch", "agent/edit")
    run_once(repo)  # freeze on main
    git(repo, "switch", "-q", "agent/edit")
    _set(repo, "Say hello to the world", "Say hello to the branch")
    commit_all(repo, "edit before the freeze", AGENT)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge", "agent/edit", env=identity(*ALICE))
    run_once(repo)  # refreeze
    approve(repo, who=ALICE)
    run_once(repo)
    plan = head_plan(repo)
    assert plan["plan"]["status"] == "completed", plan.get("approval")


# --- identities -----------------------------------------------------------------------------


def test_case_variant_email_is_still_self_approval(repo: Path) -> None:
    submitted(repo, who=("Alice", "alice@example.com"))
    approve(repo, who=("Alice", "Alice@Example.COM"))
    run_once(repo)
    assert not _ran(repo)
    assert head_plan(repo)["approval"]["code"] == "E_SELF_APPROVAL"


def test_case_variant_controller_identity_is_the_controller(repo: Path) -> None:
    submitted(repo)
    edit_status(repo, "greet", "completed")
    _commit_as(repo, "plangate: complete plans/greet", ("plangate", "PlanGate@LocalHost"))
    run_once(repo)
    assert not _ran(repo)
    assert _audit(repo)["exit"] == 1


@pytest.mark.parametrize(
    ("email", "allowed"),
    [
        ("x@ops.example.com", True),
        ("X@OPS.Example.com", True),
        ("x@ops.example.com.evil.org", False),
        ("x@evil.org@ops.example.com", False),
        ("x@evilops.example.com", False),
        (" alice@example.com", True),
        ("alice@example.com.evil.org", False),
        ("", False),
    ],
)
def test_approver_globs(email: str, allowed: bool) -> None:
    patterns = ["alice@example.com", "*@ops.example.com"]
    assert approvals.approver_allowed(email, patterns) is allowed


def test_suffix_spoofed_approver_is_refused(repo: Path) -> None:
    submitted(repo)
    approve(repo, who=("X", "x@ops.example.com.evil.org"))
    run_once(repo)
    assert not _ran(repo)
    assert head_plan(repo)["approval"]["code"] == "E_APPROVER_NOT_ALLOWED"


# --- max_age --------------------------------------------------------------------------------


def test_backdated_approval_does_not_dodge_max_age(repo: Path, monkeypatch: Any) -> None:
    """Frozen ten days ago; the approver dates the approval a minute after the freeze. Commit
    times are the approver's clock: the controller counts to its own clock."""
    ten_days_ago = f"@{int(time.time()) - 10 * 86400} +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", ten_days_ago)
    monkeypatch.setenv("GIT_AUTHOR_DATE", ten_days_ago)
    submitted(repo, max_age="7d")
    state = default_state_dir(repo)
    key = (state / "commit.key").read_bytes()  # kept: its own sealed history (round 70)
    shutil.rmtree(state)  # re-read the freeze's commit time from git
    state.mkdir(mode=0o700)
    (state / "commit.key").write_bytes(key)
    (state / "commit.key").chmod(0o600)
    backdated = f"@{int(time.time()) - 10 * 86400 + 60} +0000"
    monkeypatch.setenv("GIT_COMMITTER_DATE", backdated)
    monkeypatch.setenv("GIT_AUTHOR_DATE", backdated)
    approve(repo, who=ALICE)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    run_once(repo, max_age="7d")
    assert not _ran(repo)
    assert head_plan(repo)["approval"]["code"] == "E_PLAN_EXPIRED"


def test_max_age_counts_to_the_verifier_clock() -> None:
    request = approvals.ApprovalRequest(
        plan_id="plans/greet",
        commit="c" * 40,
        kind=approvals.Transition.APPROVE,
        author_email="alice@example.com",
        committer_email="alice@example.com",
        commit_time=1000,
        problems=(),
        current_hash="sha256:x",
        frozen_hash="sha256:x",
        changed_in_commit=False,
        changers=frozenset(),
        frozen_since=900,
    )
    policy = ApprovalSettings(approvers=["alice@example.com"], max_age="7d")
    assert approvals.verify_approval(request, policy).valid
    late = replace(request, verified_at=1000 + 8 * 86400)
    assert approvals.verify_approval(late, policy).code == "E_PLAN_EXPIRED"


# --- history shapes -------------------------------------------------------------------------


def test_two_plans_approved_in_one_commit_each_verified(repo: Path) -> None:
    write_plan(repo, "one")
    write_plan(repo, "two")
    commit_all(repo, "add two plans", AGENT)
    run_once(repo)
    _set(repo, "who: world", "who: sneaky", slug="two")  # the same commit changes plan two
    edit_status(repo, "one", "approved")
    edit_status(repo, "two", "approved")
    commit_all(repo, "approve both", ALICE)
    run_once(repo)
    assert head_plan(repo, "one")["plan"]["status"] == "completed"
    two = head_plan(repo, "two")
    assert two["plan"]["status"] == "pending_approval"
    assert two["approval"]["code"] == "E_PLAN_HASH_MISMATCH"


def test_one_commit_approving_many_plans(repo: Path) -> None:
    count = 40
    for i in range(count):  # distinct plans: one frozen hash runs once (SPEC §15)
        write_plan(repo, f"p{i:03}", PLAN.replace("who: world", f"who: world{i}"))
    commit_all(repo, "add many", AGENT)
    run_once(repo)
    for i in range(count):
        edit_status(repo, f"p{i:03}", "approved")
    commit_all(repo, "approve all", BOB)
    run_once(repo)
    for i in range(count):
        assert head_plan(repo, f"p{i:03}")["plan"]["status"] == "completed"
    assert _audit(repo)["exit"] == 0


@pytest.mark.parametrize("slug", ["with space", "ünïcødé-计划", 'quote"and-dash'])
def test_plan_path_with_spaces_and_unicode(repo: Path, slug: str) -> None:
    write_plan(repo, slug)
    commit_all(repo, "add", AGENT)
    run_once(repo)
    assert head_plan(repo, slug)["frozen"]["hash"].startswith("sha256:")
    result = run_cli("approve", f"plans/{slug}", cwd=repo, env=identity(*ALICE))
    assert result.returncode == 0, result.stderr
    run_once(repo)
    assert head_plan(repo, slug)["plan"]["status"] == "completed"
    assert _audit(repo)["exit"] == 0


def test_a_folder_named_with_a_backslash_is_held_never_frozen_nor_approved(repo: Path) -> None:
    """Round 76: git for Windows reads ``plans/quote\\back`` as ``plans/quote/back`` and checks
    it out nowhere, so the name is E_UNSAFE_PATH (it ran as its own plan before): never
    frozen, ``approve`` refuses it and commits nothing."""
    slug = "quote\\back"
    write_plan(repo, slug)
    commit_all(repo, "add", AGENT)
    run_once(repo)
    assert "frozen" not in head_plan(repo, slug)
    head = git(repo, "rev-parse", "HEAD")
    result = run_cli("approve", f"plans/{slug}", cwd=repo, env=identity(*ALICE))
    assert result.returncode != 0 and "E_UNSAFE_PATH" in result.stderr, result
    assert git(repo, "rev-parse", "HEAD") == head


def test_plan_deleted_while_executing(repo: Path) -> None:
    """A started plan deleted before its worker read the file is not dropped without a word
    (round 30: it was, with ``status`` empty): the run goes on from the start commit's
    content, once, and its outcome commit writes the plan back where it started."""
    submitted(repo)
    approve(repo)
    with controller(repo) as ctl:
        [job] = ctl.reconcile()
        git(repo, "rm", "-q", "-r", "plans/greet")
        _commit_as(repo, "delete the plan", BOB)
        ctl.execute(job)  # nothing runs from the working tree: the file is gone
        ctl.run_once()
        rows = ctl.status()
    assert [(r["plan"], r["status"], r["waiting"]) for r in rows] == [
        ("plans/greet", "completed", None)
    ]
    assert [s for s in subjects(repo) if s.startswith("plangate: ")][:2] == [
        "plangate: complete plans/greet",
        "plangate: start plans/greet",
    ]
    assert git(repo, "status", "--porcelain") == ""


def test_plan_renamed_while_executing_does_not_run_twice(repo: Path) -> None:
    submitted(repo)
    approve(repo)
    with controller(repo) as ctl:
        [job] = ctl.reconcile()
        git(repo, "mv", "plans/greet", "plans/renamed")
        _commit_as(repo, "rename the plan", BOB)
        ctl.execute(job)
        ctl.run_once()
        rows = {r["plan"]: r for r in ctl.status()}
    assert rows["plans/renamed"]["status"] != "executing" or not rows["plans/renamed"]["running"]
    assert [s for s in subjects(repo) if s.startswith("plangate: start")] == [
        "plangate: start plans/greet"
    ]


def test_signed_required_flags_unsigned_controller_commits(repo: Path, tmp_path: Path) -> None:
    """The audit's forged-controller flag: an unsigned commit claiming the controller."""
    key = tmp_path / "alice"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    signers = tmp_path / "allowed_signers"
    signers.write_text(f"alice@example.com {key.with_suffix('.pub').read_text()}")
    submitted(repo)
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(key))
    edit_status(repo, "greet", "approved")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-S", "-m", "approve", env=identity(*ALICE))
    seal = "Controller-Seal: " + "5e" * 32 + "\n"  # taken as the controller's by git alone
    _forge_executing(repo, "plangate: start plans/greet", seal)
    report = _audit(repo, signed=True, signers=signers)
    assert report["exit"] == 1
    forged = [f for f in report["findings"] if f["kind"] == "forged-controller"]
    assert forged and forged[-1]["commit"] == git(repo, "rev-parse", "HEAD").strip()
    config = make_config(repo, require_signed=True, allowed_signers=str(signers))
    assert config.approval.require_signed


# --- remote mode: a rewritten upstream ------------------------------------------------------


def _remote_controller(tmp_path: Path, url: str, counter: Path) -> Any:
    from controller import settings
    from controller.service.reconcile import Controller

    data = {
        "remote": {"url": url, "branch": "main", "poll_interval": 1},
        "state_dir": str(tmp_path / "state"),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "exec", "argv": ["sh", "-c", f"echo ran >> {counter}"]}},
    }
    return Controller(settings.config_from_data(data, tmp_path / "plangate.yml"))


def test_force_pushed_upstream_rewound_to_the_approval_does_not_run_twice(
    repo: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "plans.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    human = tmp_path / "human"
    git(tmp_path, "clone", "-q", str(bare), str(human))
    counter = tmp_path / "counter"
    write_plan(human)
    commit_all(human, "add", AGENT)
    git(human, "push", "-q", "origin", "main")
    ctl = _remote_controller(tmp_path, str(bare), counter)
    try:
        ctl.run_once()
        git(human, "pull", "-q", "--ff-only")
        approval = approve(human, who=ALICE)
        git(human, "push", "-q", "origin", "main")
        ctl.run_once()
        assert counter.read_text() == "ran\n"
        # Someone rewinds the branch to the approval (history rewritten, force-pushed).
        git(human, "push", "-q", "--force", "origin", f"{approval}:refs/heads/main")
        ctl.run_once()
    finally:
        ctl.close()
    assert counter.read_text() == "ran\n", "the approved plan ran a second time"
    git(human, "fetch", "-q")
    log = git(human, "log", "--format=%s", "origin/main").splitlines()
    assert log[0] == "plangate: complete plans/greet"


# --- error paths: a code and a remedy, never a traceback -------------------------------------


def test_status_on_a_non_repo_says_why(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {tmp_path / 'plain'}\ntools: {{}}\n")
    result = run_cli("status", "--config", str(config))
    assert result.returncode == 2
    assert "E_GIT" in result.stderr and "remedy:" in result.stderr
    assert "no plans" not in result.stdout and "Traceback" not in result.stderr


def test_audit_in_remote_mode_before_any_clone(tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"remote: {{url: {tmp_path / 'none.git'}, branch: main}}\n"
        f"state_dir: {tmp_path / 'state'}\ntools: {{}}\n"
    )
    result = run_cli("audit", "--config", str(config))
    assert result.returncode == 2
    assert "E_GIT" in result.stderr and "run --once" in result.stderr


def test_run_once_mid_rebase_names_the_rebase(repo: Path) -> None:
    (repo / "f").write_text("a\n")
    commit_all(repo, "1", BOB)
    git(repo, "switch", "-q", "-c", "side")
    (repo / "f").write_text("b\n")
    commit_all(repo, "2", BOB)
    git(repo, "switch", "-q", "main")
    (repo / "f").write_text("c\n")
    commit_all(repo, "3", BOB)
    git(repo, "switch", "-q", "side")
    git(repo, "rebase", "main", check=False)
    config = repo.parent / "plangate.yml"
    config.write_text("repo: repo\ntools: {}\n")
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 2
    assert "E_GIT" in result.stderr and "git rebase --continue / --abort" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("case", ["non-repo", "dirty", "no-identity"])
def test_approve_errors_have_codes(repo: Path, tmp_path: Path, case: str) -> None:
    env: dict[str, str] = {}
    if case == "non-repo":
        cwd = tmp_path / "elsewhere"
        write_plan(cwd)
    else:
        cwd = repo
        submitted(repo)
        if case == "dirty":
            _plan_file(repo).write_text(_plan_file(repo).read_text() + "# thinking\n")
        else:
            empty = tmp_path / "empty.gitconfig"
            empty.write_text("")
            env = {"GIT_CONFIG_GLOBAL": str(empty), "EMAIL": "", "HOME": str(tmp_path)}
    result = run_cli("approve", "plans/greet", cwd=cwd, env=env)
    assert result.returncode == 2, result
    assert "plangate: E_" in result.stderr and "remedy:" in result.stderr
    assert "Traceback" not in result.stderr


def test_special_files_in_the_plans_dir_are_not_adopted(tmp_path: Path) -> None:
    """A FIFO or a symlink named PLAN.yml left uncommitted must not hang or leak into git."""
    import os

    from controller.service.reconcile import Controller
    from controller.settings import config_from_data

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True)
    (repo / "plans" / "fifo").mkdir(parents=True)
    os.mkfifo(repo / "plans" / "fifo" / "PLAN.yml")
    secret = tmp_path / "secret.txt"
    secret.write_text("plan:\n  status: pending_approval\n")
    (repo / "plans" / "link").mkdir()
    (repo / "plans" / "link" / "PLAN.yml").symlink_to(secret)
    config = config_from_data({"repo": str(repo), "tools": {"echo": {"kind": "echo"}}})
    controller = Controller(config)
    try:
        assert controller.reconcile() == []
    finally:
        controller.close()
    log = subprocess.run(
        ["git", "log", "--all", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert log.strip() == "plangate: record policy\ninit"
