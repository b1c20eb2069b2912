"""The controller knows its own commits by its record, not by their name (SPEC §15).

What an operator relies on: every commit the controller makes is in ``<state_dir>/commits``
before the branch moves to it; a commit someone else makes under the controller's identity
is judged as that person's commit (it cannot set a state only the controller sets); an
upgrade or a new state directory adopts the branch's history once, so honest past runs stay
as they were. Real ``plangate run --once`` subprocesses, real git.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, git, run_cli
from tests.support.plantext import greet_plan

CONTROLLER = ("controller", "plangate@localhost")


def _setup(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    for slug in ("done", "victim"):
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(greet_plan(slug, "say hello", "world"))
    commit_all(repo, "propose", ("Agent", "agent@example.com"))
    return config


def _run(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def _approve(repo: Path, slug: str) -> None:
    path = repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, f"approve {slug}", ("Alice", "alice@example.com"))


def _status(config: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    result = run_cli("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr
    return {row["plan"]: row for row in json.loads(result.stdout)}


def test_every_controller_commit_is_recorded(tmp_path: Path, repo: Path) -> None:
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    made = git(repo, "log", "--author=plangate@localhost", "--format=%H").split()
    assert len(made) >= 4  # two freezes, a start, a completion
    recorded = (tmp_path / "state" / "commits").read_text().split()
    assert set(made) <= set(recorded)


def test_a_commit_under_the_controllers_name_is_not_the_controllers(
    tmp_path: Path, repo: Path
) -> None:
    config = _setup(tmp_path, repo)
    _run(config)
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: completed"))
    commit_all(repo, "plangate: complete plans/victim", CONTROLLER)  # the agent, as the controller
    _run(config)
    row = _status(config)["plans/victim"]
    assert row["status"] == "pending_approval", row
    assert any("E_ILLEGAL_TRANSITION" in note for note in row["notes"]), row


def test_a_new_state_directory_adopts_the_history_once(tmp_path: Path, repo: Path) -> None:
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    assert _status(config)["plans/done"]["status"] == "completed"
    # an upgrade from a plangate without the record (or a lost state directory)
    (tmp_path / "state" / "commits").unlink()
    (tmp_path / "state" / "index.sqlite").unlink()
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_commits_adopted" in result.stderr
    rows = _status(config)
    assert rows["plans/done"]["status"] == "completed"
    assert not any("E_ILLEGAL_TRANSITION" in n for n in rows["plans/done"]["notes"])
    made = git(repo, "log", "--author=plangate@localhost", "--format=%H").split()
    assert set(made) <= set((tmp_path / "state" / "commits").read_text().split())


def test_a_seal_verifies_only_with_its_key_tree_parent_and_message(tmp_path: Path) -> None:
    from controller.git.message import SEAL_BYTES
    from controller.service.statedir import CommitSeal

    seal = CommitSeal(tmp_path / "commit.key")
    assert seal.key() is None and not seal.verify("t" * 40, "p" * 40, "x\n")
    original = "plangate: complete plans/a\n\nController: h/1\n"
    message = seal.seal("t" * 40, "p" * 40, original)
    assert message.endswith("\nController: h/1\n" + message.rsplit("\n", 2)[1] + "\n")
    assert len(message) == len(original) + SEAL_BYTES  # kept within the 64 KiB bound
    assert (tmp_path / "commit.key").stat().st_mode & 0o777 == 0o600
    assert CommitSeal(tmp_path / "commit.key").verify("t" * 40, "p" * 40, message)
    assert not seal.verify("u" * 40, "p" * 40, message)  # another tree
    assert not seal.verify("t" * 40, "q" * 40, message)  # another parent
    assert not seal.verify("t" * 40, "p" * 40, message.replace("complete", "fail"))
    other = CommitSeal(tmp_path / "other.key")
    other.key(create=True)
    assert not other.verify("t" * 40, "p" * 40, message)


def test_a_restored_backup_knows_its_later_commits_by_their_seal(
    tmp_path: Path, repo: Path
) -> None:
    import shutil

    config = _setup(tmp_path, repo)
    _run(config)
    state, backup = tmp_path / "state", tmp_path / "backup"
    shutil.copytree(state, backup, symlinks=True)  # the controller stopped: a backup
    _approve(repo, "done")
    _run(config)
    assert _status(config)["plans/done"]["status"] == "completed"
    shutil.rmtree(state)
    shutil.copytree(backup, state, symlinks=True)  # the disk lost, the backup restored
    # a stranger under the controller's name, copying a sealed commit's trailers
    sealed = git(repo, "log", "-1", "--format=%B", "--author=plangate@localhost").strip()
    trailers = sealed.split("\n\n")[-1]
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", "status: completed"))
    commit_all(repo, f"plangate: complete plans/victim\n\n{trailers}", CONTROLLER)
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_commits_restored" in result.stderr
    rows = _status(config)
    assert rows["plans/done"]["status"] == "completed", rows["plans/done"]
    assert not any("E_ILLEGAL_TRANSITION" in n for n in rows["plans/done"]["notes"])
    assert rows["plans/victim"]["status"] == "pending_approval", rows["plans/victim"]
    executed = (state / "executed.jsonl").read_text()
    assert "plans/done" in executed  # the run started after the backup counts as executed


def test_a_backup_without_its_key_refuses_to_start(tmp_path: Path, repo: Path) -> None:
    import shutil

    config = _setup(tmp_path, repo)
    _run(config)
    state = tmp_path / "state"
    assert (state / "commit.key").is_file()  # made with the record, before any commit
    _approve(repo, "done")
    _run(config)
    shutil.copytree(state, tmp_path / "backup", symlinks=True)
    (state / "commit.key").unlink()  # a restore that left the key behind
    head = git(repo, "rev-parse", "HEAD").strip()
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode != 0 and "E_STORAGE" in result.stderr, result.stderr[-2000:]
    assert "commit.key" in result.stderr and "restore commit.key" in result.stderr
    assert not (state / "commit.key").exists()  # no new key beside the old record
    assert git(repo, "rev-parse", "HEAD").strip() == head
    status = run_cli("status", "--json", "--config", str(config))
    assert status.returncode != 0 and "commit.key" in status.stdout + status.stderr
    shutil.copy2(tmp_path / "backup" / "commit.key", state / "commit.key")  # the remedy
    _run(config)
    assert _status(config)["plans/done"]["status"] == "completed"


def test_another_controllers_run_is_decided_by_nobody_here(tmp_path: Path, repo: Path) -> None:
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    start = git(repo, "log", "--format=%H", "--grep=^plangate: start", "-1").strip()
    message = git(repo, "log", "-1", "--format=%B", start)
    done, victim = _status(config)["plans/done"], _status(config)["plans/victim"]
    _approve(repo, "victim")
    # another controller (its own state directory and key) starts her approved plan
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: approved", "status: executing"))
    forged = message.replace("plans/done", "plans/victim").replace(done["hash"], victim["hash"])
    commit_all(repo, forged, CONTROLLER)
    head = git(repo, "rev-parse", "HEAD").strip()
    _run(config)
    assert git(repo, "rev-parse", "HEAD").strip() == head  # no refusal over its run
    row = _status(config)["plans/victim"]
    assert "another controller or a lost key" in (row["waiting"] or ""), row
    assert row["status"] == "executing", row  # what its commits say, not "waiting for you"
    assert "plans/victim" not in (tmp_path / "state" / "executed.jsonl").read_text()
    # a new version of the plan is no part of that run: decided and run as usual
    path.write_text(greet_plan("victim", "say hello", "moon"))
    commit_all(repo, "agent: a new version", ("Agent", "agent@example.com"))
    _run(config)
    _approve(repo, "victim")
    _run(config)
    row = _status(config)["plans/victim"]
    assert row["status"] == "completed" and not row["waiting"], row


def test_a_key_file_the_controller_would_not_write_is_refused(tmp_path: Path) -> None:
    """Round 68: ``commit.key`` holds 64 hex digits on one line; an empty, cut or binary
    file (an incomplete restore) is ``E_STORAGE`` naming it and the remedy, never a key."""
    import os

    import pytest

    from controller.errors import StorageFailed
    from controller.service.statedir import CommitSeal

    good = os.urandom(32).hex()
    bad = [b"", b"\n", good[:32].encode() + b"\n", os.urandom(32), good.upper().encode()]
    bad += [f"{good}\n{good}\n".encode(), f" {good}\n".encode()]
    for number, text in enumerate(bad):
        path = tmp_path / f"bad{number}.key"
        path.write_bytes(text)
        with pytest.raises(StorageFailed) as caught:
            CommitSeal(path).key(create=True)
        assert str(path) in str(caught.value) and "openssl rand -hex 32" in caught.value.remedy
        assert path.read_bytes() == text  # never replaced by a new key
    for text in (good, good + "\n"):  # as `openssl rand -hex 32` and the controller write it
        (tmp_path / "good.key").write_text(text)
        assert CommitSeal(tmp_path / "good.key").key() == bytes.fromhex(good)


def test_a_key_that_is_no_regular_file_is_refused_without_blocking(tmp_path: Path) -> None:
    """Round 69: a FIFO nobody writes at ``commit.key`` blocked ``run`` and ``status`` for
    ever in the open; a FIFO or a directory is ``E_STORAGE`` at once, while a symlink to a
    good key is followed (a secrets mount)."""
    import os

    import pytest

    from controller.errors import StorageFailed
    from controller.service.statedir import CommitSeal

    os.mkfifo(tmp_path / "fifo.key")
    (tmp_path / "dir.key").mkdir()
    for name in ("fifo.key", "dir.key"):
        with pytest.raises(StorageFailed) as caught:
            CommitSeal(tmp_path / name).key(create=True)
        assert "not a regular file" in str(caught.value), caught.value
    good = os.urandom(32).hex()
    (tmp_path / "real.key").write_text(good + "\n")
    (tmp_path / "link.key").symlink_to(tmp_path / "real.key")
    assert CommitSeal(tmp_path / "link.key").key() == bytes.fromhex(good)


def test_a_resume_another_key_sealed_is_decided_by_nobody_here(tmp_path: Path, repo: Path) -> None:
    """Round 68: a gate resume under the controller's name with a seal this key does not
    verify (the old key's after a start over, a second controller's) moves a run this
    controller began on: her gate approval, as a status would have asked, runs nothing."""
    config = _setup(tmp_path, repo)
    path = repo / "plans" / "done" / "PLAN.yml"
    second = "  - id: 2\n    tool: greet\n    why: second\n    requires_approval: true\n"
    path.write_text(path.read_text() + second + "    params:\n      who: moon\n")
    commit_all(repo, "agent: a gate", ("Agent", "agent@example.com"))
    _run(config)
    _approve(repo, "done")
    _run(config)
    assert _status(config)["plans/done"]["status"] == "awaiting_approval"
    start = git(repo, "log", "--format=%H", "--grep=^plangate: start", "-1").strip()
    # another controller's instance (and key): its own `Controller:` line, a seal-shaped one
    message = re.sub(
        r"Controller: \S+", "Controller: other/1", git(repo, "show", "-s", "--format=%B", start)
    )
    path.write_text(path.read_text().replace("status: awaiting_approval", "status: approved"))
    commit_all(repo, "approve the gate", ("Alice", "alice@example.com"))
    # another key resumes her gate approval and completes the run (seal-shaped lines this
    # key cannot verify for these trees and parents), before this controller passes
    for status, event in (("executing", "start"), ("completed", "complete")):
        text = path.read_text()
        now = text.split("status: ")[1].split()[0]
        path.write_text(text.replace(f"status: {now}", f"status: {status}", 1))
        made = message.replace("plangate: start", f"plangate: {event}")
        commit_all(
            repo, made.replace("Plan-Status: executing", f"Plan-Status: {status}"), CONTROLLER
        )
    head = git(repo, "rev-parse", "HEAD").strip()
    _run(config)
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing resumed, nothing refused
    row = _status(config)["plans/done"]
    assert "another controller or a lost key" in (row["waiting"] or ""), row
    assert row["status"] == "completed", row  # what its commits say, not "waiting for you"
    path.write_text(path.read_text().replace("status: completed", "status: approved"))
    commit_all(repo, "approve the gate again", ("Alice", "alice@example.com"))
    head = git(repo, "rev-parse", "HEAD").strip()
    _run(config)
    assert git(repo, "rev-parse", "HEAD").strip() == head  # the passed gate runs nothing
    assert "another controller or a lost key" in (_status(config)["plans/done"]["waiting"] or "")


def _second_state(tmp_path: Path, config: Path) -> Path:
    """The same repository and identity with a NEW, empty state directory (and key)."""
    second = tmp_path / "second.yml"
    state = f"state_dir: {tmp_path / 'state'}\n"
    second.write_text(config.read_text().replace(state, f"state_dir: {tmp_path / 'state2'}\n"))
    return second


def test_a_new_state_directory_on_sealed_history_refuses_until_told(
    tmp_path: Path, repo: Path
) -> None:
    """Round 70: an empty state directory cannot tell its own lost state from a second
    controller started by mistake (which took the first's started runs as its own lost ones
    and failed them in doubt): it refuses, naming the newest sealed commit, until restored or
    told ``--take-over``, used once."""
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    second = _second_state(tmp_path, config)
    head = git(repo, "rev-parse", "HEAD").strip()
    newest = git(repo, "log", "-1", "--format=%H", "--author=plangate@localhost").strip()
    result = run_cli("run", "--once", "--config", str(second), timeout=120)
    assert result.returncode != 0 and "E_STORAGE" in result.stderr, result.stderr[-2000:]
    assert newest[:12] in result.stderr and "--take-over" in result.stderr, result.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing committed
    assert not (tmp_path / "state2" / "commits").exists()  # nothing adopted
    assert not (tmp_path / "state2" / "commit.key").exists()
    again = run_cli("run", "--once", "--config", str(second), timeout=120)
    assert again.returncode != 0 and "E_STORAGE" in again.stderr  # until told
    assert _status(second)["plans/done"]["status"] == "completed"  # read-only: unchanged
    taken = run_cli("run", "--once", "--take-over", "--config", str(second), timeout=120)
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert "own_commits_taken_over" in taken.stderr and "own_commits_adopted" in taken.stderr
    assert newest in (tmp_path / "state2" / "commits").read_text().split()
    assert _status(second)["plans/done"]["status"] == "completed"
    _run(second)  # once: the record it made now answers
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_a_new_state_directory_on_unsealed_history_starts_as_before(
    tmp_path: Path, repo: Path
) -> None:
    """History under the controller's name from before plangate sealed its commits (an
    upgrade) asks nothing: it is adopted on first use, as before."""
    config = _setup(tmp_path, repo)
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text() + "# an old controller's edit\n")
    commit_all(repo, "plangate: an old commit\n\nController: old/1", CONTROLLER)
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_commits_adopted" in result.stderr and "taken_over" not in result.stderr


@pytest.mark.parametrize(
    ("event", "status"),
    [("start", "executing"), ("complete", "completed"), ("refuse", "failed")],
)
def test_an_unsealed_record_before_the_first_pass_stands_only_with_its_cause(
    tmp_path: Path, repo: Path, event: str, status: str
) -> None:
    """Trust on first use adopts history under the controller's name, but an unsealed
    commit stands only as git alone reads it (the audit, ``check``): a run event with no
    seal, or a refusal nobody asked for, is anyone's (round 98): the plan shows its own
    status and an honest approval runs it."""
    config = _setup(tmp_path, repo)
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: pending_approval", f"status: {status}"))
    commit_all(
        repo,
        f"plangate: {event} plans/victim\n\nPlan: plans/victim\nPlan-Status: {status}",
        CONTROLLER,
    )
    _run(config)
    assert _status(config)["plans/victim"]["status"] == "pending_approval"
    if path.read_text().count(f"status: {status}"):  # the author puts it back
        path.write_text(path.read_text().replace(f"status: {status}", "status: pending_approval"))
        commit_all(repo, "agent: pending again", ("Agent", "agent@example.com"))
        _run(config)
    _approve(repo, "victim")
    _run(config)
    row = _status(config)["plans/victim"]
    assert row["status"] == "completed", row
    assert not any("alice@example.com set status" in n for n in row["notes"]), row


def test_an_unsealed_refusal_that_leaves_another_status_than_asked_is_anyones(
    tmp_path: Path, repo: Path
) -> None:
    """A refusal leaves the plan where its request was made: an unsealed ``refuse`` of
    Alice's first approval writing ``failed`` (the next vote a resume) is anyone's (round 98):
    her approval is decided as made (refused here: the plan was not frozen yet)."""
    config = _setup(tmp_path, repo)
    _approve(repo, "victim")
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: approved", "status: failed"))
    commit_all(
        repo, "plangate: refuse plans/victim\n\nPlan: plans/victim\nPlan-Status: failed", CONTROLLER
    )
    _run(config)
    row = _status(config)["plans/victim"]
    assert row["status"] == "pending_approval", row  # not failed: no resume to read


def test_a_restored_key_alone_knows_its_sealed_history(tmp_path: Path, repo: Path) -> None:
    """A state directory lost but for its ``commit.key`` (put back before the first start):
    the key made the branch's seals, so the history is its own, adopted without asking."""
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    second = _second_state(tmp_path, config)
    (tmp_path / "state2").mkdir()
    key = tmp_path / "state2" / "commit.key"
    key.write_bytes((tmp_path / "state" / "commit.key").read_bytes())
    key.chmod(0o600)
    result = run_cli("run", "--once", "--config", str(second), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_commits_adopted" in result.stderr and "taken_over" not in result.stderr
    assert _status(second)["plans/done"]["status"] == "completed"


def _forge(repo: Path, slug: str, event: str, status: str, plan_hash: str, seal: bool) -> str:
    """The agent, as the controller: ``event`` of ``slug`` (its file set to ``status``), with
    the trailers of a controller commit and, if ``seal``, a seal-shaped line no key made."""
    import secrets

    path = repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    path.write_text(re.sub(r"(?m)^  status: .*$", f"  status: {status}", text, count=1))
    body = f"Plan: plans/{slug}\nPlan-Hash: {plan_hash}\nPlan-Status: {status}\n"
    if seal:
        body += f"Controller: vm/1\nController-Seal: {secrets.token_hex(32)}\n"
    return commit_all(repo, f"plangate: {event} plans/{slug}\n\n{body}", CONTROLLER)


def _key_alone(tmp_path: Path, config: Path) -> Path:
    """A new state directory holding only the first one's ``commit.key``; its config."""
    second = _second_state(tmp_path, config)
    (tmp_path / "state2").mkdir(mode=0o700)
    key = tmp_path / "state2" / "commit.key"
    key.write_bytes((tmp_path / "state" / "commit.key").read_bytes())
    key.chmod(0o600)
    return second


@pytest.mark.parametrize("seal", [True, False], ids=["seal-shaped", "unsealed"])
def test_a_key_alone_adopts_only_the_commits_it_verifies(
    tmp_path: Path, repo: Path, seal: bool
) -> None:
    """Round 71: the key alone made some of the branch's seals, so it starts without asking;
    a commit under the controller's name it does not verify (a seal it rejects, or none after
    its first seal) is anyone's, as for the restored state directory: the forged completion
    of a plan nobody approved is an illegal transition, and her approval runs the plan."""
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    victim = _status(config)["plans/victim"]
    forged = _forge(repo, "victim", "complete", "completed", victim["hash"], seal)
    second = _key_alone(tmp_path, config)
    result = run_cli("run", "--once", "--config", str(second), timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "taken_over" not in result.stderr
    recorded = (tmp_path / "state2" / "commits").read_text().split()
    assert forged not in recorded
    own = git(repo, "log", "--format=%H", "--author=plangate@localhost").split()
    assert set(own) - {forged} <= set(recorded)  # every commit the key made is its own
    row = _status(second)["plans/victim"]
    assert row["status"] == "pending_approval", row
    assert any("E_ILLEGAL_TRANSITION" in note for note in row["notes"]), row
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(re.sub(r"(?m)^  status: .*$", "  status: approved", path.read_text(), count=1))
    commit_all(repo, "approve victim", ("Alice", "alice@example.com"))
    _run(second)
    assert _status(second)["plans/victim"]["status"] == "completed"
    assert _status(second)["plans/done"]["status"] == "completed"


def test_a_start_taken_over_with_no_approval_in_its_file_is_a_lost_run(
    tmp_path: Path, repo: Path
) -> None:
    """Round 71: ``--take-over`` adopts the branch's starts as its own (trust on first use);
    one whose file carries no ``approval:`` block (the agent's start of a plan never
    approved) stayed ``executing`` for good. Every run the controller counts as its own with
    no journal fails E_ACTION_IN_DOUBT, and a resume approval runs it once."""
    config = _setup(tmp_path, repo)
    _run(config)
    victim = _status(config)["plans/victim"]
    _forge(repo, "victim", "start", "executing", victim["hash"], seal=True)
    second = _second_state(tmp_path, config)
    taken = run_cli("run", "--once", "--take-over", "--config", str(second), timeout=120)
    assert taken.returncode == 0 and "run_adopted" in taken.stderr, taken.stderr[-2000:]
    row = _status(second)["plans/victim"]
    assert row["status"] == "failed" and "E_ACTION_IN_DOUBT" in str(row["reason"]), row
    path = repo / "plans" / "victim" / "PLAN.yml"
    path.write_text(path.read_text().replace("status: failed", "status: approved", 1))
    commit_all(repo, "resume victim", ("Alice", "alice@example.com"))
    _run(second)
    row = _status(second)["plans/victim"]
    assert row["status"] == "completed" and not row["waiting"], row
    completions = git(repo, "log", "--format=%H", "--grep=^plangate: complete plans/victim")
    assert len(completions.split()) == 1


@pytest.mark.parametrize("seal", ["copied", "random"])
def test_a_seal_shaped_outcome_taken_over_stands_only_with_its_cause(
    tmp_path: Path, repo: Path, seal: str
) -> None:
    """Round 99 (atk99d): the state directory is lost after Alice approved ``victim``; the
    agent commits a ``plangate: complete plans/victim`` under the controller's name with a
    seal line copied from a real controller commit (or a random one). ``--take-over`` adopts
    it into the new record, on trust: it stands only with its cause on the branch (none: no
    start), so the plan never reads ``completed`` without running; it runs exactly once."""
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    victim = _status(config)["plans/victim"]
    _approve(repo, "victim")
    forged = _forge(repo, "victim", "complete", "completed", victim["hash"], seal=True)
    if seal == "copied":  # the seal line of the controller's real completion of `done`
        real = git(repo, "log", "-1", "--format=%B", "--grep=^plangate: complete plans/done")
        line = next(x for x in real.splitlines() if x.startswith("Controller-Seal: "))
        message = git(repo, "log", "-1", "--format=%B", forged)
        message = re.sub(r"(?m)^Controller-Seal: .*$", line, message)
        who = {"GIT_COMMITTER_NAME": CONTROLLER[0], "GIT_COMMITTER_EMAIL": CONTROLLER[1]}
        git(repo, "commit", "-q", "--amend", "-m", message, env=who)
        forged = git(repo, "rev-parse", "HEAD").strip()
    second = _second_state(tmp_path, config)
    taken = run_cli("run", "--once", "--take-over", "--config", str(second), timeout=120)
    assert taken.returncode == 0 and "Traceback" not in taken.stderr, taken.stderr[-2000:]
    assert forged in (tmp_path / "state2" / "commits").read_text().split()
    assert forged in (tmp_path / "state2" / "commits.trusted").read_text().split()
    starts = lambda: git(repo, "log", "--format=%H", "--grep=^plangate: start plans/victim")  # noqa: E731
    row = _status(second)["plans/victim"]
    if not starts().split():  # not run on the approval that lapsed: never shown completed
        assert row["status"] != "completed", row
        assert any("E_ILLEGAL_TRANSITION" in note for note in row["notes"]), row
        path = repo / "plans" / "victim" / "PLAN.yml"
        text = re.sub(r"(?m)^  status: .*$", "  status: approved", path.read_text(), count=1)
        path.write_text(text)
        commit_all(repo, "approve victim again", ("Alice", "alice@example.com"))
        _run(second)
    assert _status(second)["plans/victim"]["status"] == "completed"
    assert len(starts().split()) == 1  # it ran, once
