"""The controller's identity read per stretch of history (round 127, atk127p
``identity-return-splits-audit``, ``identity-return-check-misses-run``,
``unrecorded-identity-blinds-reads``; atk127d ``identity-changed-back-splits-audit``).

An identity may come back (``A -> B -> A``, ``A -> B -> C -> A``): the readers built a LIST of
identities from the ``Previous-Identity:`` links, which cannot hold one twice, so the walk
started at the wrong end of the loop and read ``A``'s first stretch as anyone's (``audit
--config``, ``--controller C``, ``check`` after a ``plans_dir`` move). And a config naming an
identity no record names yet (the operator's edit, before the restart) blinded ``audit
--config`` and ``check`` to every run, although the controller links the change on its next
pass. The readers now walk the links newest first by their place on the first-parent line,
from the identity the controller's last record holds, as the controller reads its history.

Real repos, the real ``plangate run --once``, ``check`` and ``audit`` in subprocesses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.approval.test_adopt_identity_chain import configure
from tests.approval.test_audit_plans_dir import approve, copy_of_run, run, write
from tests.support.gitenv import AGENT, commit_all, git, run_cli

A, B, C = "plangate@localhost", "bot@plangate.internal", "pg-c@plangate.internal"
NEXT = "pg-next@plangate.internal"
ALICE = "alice@example.com"


def ran_under(repo: Path, chain: list[str]) -> Path:
    """One plan ``plans/p<i>`` written, approved and run under each identity of ``chain``
    in turn (each change a restart, the state directory kept: each one linked)."""
    config = repo
    for at, email in enumerate(chain):
        config = configure(repo, email=email, folder="plans", state="state")
        write(repo, f"plans/p{at}")
        commit_all(repo, f"agent: plans/p{at}", AGENT)
        run(config)
        approve(repo, f"plans/p{at}")
        run(config)
    return config


def audit(cwd: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = run_cli("audit", "--json", *args, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.returncode, json.loads(result.stdout or "{}")


def runs(report: dict[str, Any]) -> list[tuple[str, str | None]]:
    return sorted((e["plan"], e["outcome"]) for e in report["executions"] if e["approval_valid"])


def predicted(config: Path, repo: Path) -> str:
    """``check --as alice`` of the commit at HEAD (the approval) against its parent."""
    told = run_cli(
        "check", "--config", str(config), "--base", "HEAD~1", "--head", "HEAD",
        "--as", ALICE, "--format", "json", cwd=repo,
    )  # fmt: skip
    assert "Traceback" not in told.stderr, told.stderr[-2000:]
    return told.stdout


@pytest.mark.parametrize("chain", [[A, B, A], [A, B, C, A]], ids=["aba", "abca"])
def test_every_audit_of_an_identity_that_came_back_lists_every_run(
    repo: Path, tmp_path: Path, chain: list[str]
) -> None:
    """``audit --config`` (with the controller's record of its commits, and without it) and
    a fresh clone's ``--controller`` with each identity list every run of every stretch and
    flag none of the controller's commits (docs/operations.md, "Changing the controller's
    identity")."""
    config = ran_under(repo, chain)
    log = git(repo, "log", "--format=%ae %s")
    assert (
        f"{A} plangate: complete plans/p0" in log
        and f"{A} plangate: complete plans/p{len(chain) - 1}" in log
    )
    bare = tmp_path / "bare.yml"
    bare.write_text(config.read_text().replace(str(repo.parent / "state"), str(tmp_path / "none")))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    hows = [("--config", str(config)), ("--config", str(bare))]
    hows += [("--controller", email) for email in dict.fromkeys(chain)]
    want = [(f"plans/p{at}", "complete") for at in range(len(chain))]
    for how in hows:
        code, report = audit(clone if how[0] == "--controller" else tmp_path, *how)
        assert runs(report) == want, (how, report.get("executions"))
        assert (code, report["findings"]) == (0, []), (how, report["findings"][:4])


def test_check_after_a_return_and_a_move_predicts_the_refusal_of_a_copy(repo: Path) -> None:
    """``A -> B -> A``, then ``plans_dir`` moved: a copy of ``plans/p0`` (run in ``A``'s
    first stretch) is refused ``E_ALREADY_EXECUTED`` and the operator's ``check`` (the
    controller's config and state) predicts it (docs/operations.md, "Moving the plans
    folder")."""
    ran_under(repo, [A, B, A])
    config = configure(repo, email=A, folder="ops", state="state")
    copy_of_run(repo, "plans/p0", "ops/c0")
    run(config)
    approve(repo, "ops/c0")
    assert "E_ALREADY_EXECUTED" in predicted(config, repo)
    run(config)
    assert "plangate: start ops/c0" not in git(repo, "log", "--format=%s")


def test_a_config_naming_an_unrecorded_identity_reads_the_last_recorded_one(
    repo: Path,
) -> None:
    """The operator changed ``identity`` (no pass since): ``audit --config`` lists every run,
    flags nothing and notes the identity the controller's last record names; ``check`` with
    that config predicts the refusal of a copy of a run version, which the restarted
    controller refuses (docs/approvals.md, "plangate audit")."""
    config = ran_under(repo, [A])
    copy_of_run(repo, "plans/p0", "plans/c0")
    run(config)
    config = configure(repo, email=NEXT, folder="plans", state="state")
    code, report = audit(repo.parent, "--config", str(config))
    assert runs(report) == [("plans/p0", "complete")], report.get("executions")
    assert (code, report["findings"]) == (0, []), report["findings"][:4]
    noted = [n for n in report["notes"] if n["kind"] == "identity-unrecorded"]
    assert len(noted) == 1 and NEXT in noted[0]["detail"] and A in noted[0]["detail"], noted
    approve(repo, "plans/c0")
    assert "E_ALREADY_EXECUTED" in predicted(config, repo)
    run(config)
    log = git(repo, "log", "--format=%s")
    assert "plangate: start plans/c0" not in log and "plangate: start plans/p0" in log
    assert f"Previous-Identity: {A}" in git(
        repo, "log", "--grep=record policy", "-1", "--format=%B"
    )
    code, report = audit(repo.parent, "--config", str(config))
    assert (code, report["findings"]) == (0, []), report["findings"][:4]
    assert not [n for n in report["notes"] if n["kind"] == "identity-unrecorded"]


def test_a_config_changed_back_before_the_restart_reads_the_identity_in_force(
    repo: Path,
) -> None:
    """``A -> B``, then the config names ``A`` again (no pass since): the controller's last
    record, by its record of its commits, is ``B``'s; the audit reads history as the
    controller will link it (``B`` up to the head), lists both runs and flags nothing."""
    ran_under(repo, [A, B])
    config = configure(repo, email=A, folder="plans", state="state")
    code, report = audit(repo.parent, "--config", str(config))
    assert runs(report) == [("plans/p0", "complete"), ("plans/p1", "complete")], report
    assert (code, report["findings"]) == (0, []), report["findings"][:4]
    assert [n["kind"] for n in report["notes"]].count("identity-unrecorded") == 1
