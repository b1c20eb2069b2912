"""``plangate approve`` when the branch moves under its commit (a controller in local mode, an
agent's ``submit``): it reads the branch again and commits onto the same version, or refuses
``E_PLAN_HASH_MISMATCH`` when the move brought another version of the plan; never an approval
of a version its approver did not read (round 84 noted: no retry, ``E_GIT``).

The race is real: the approver's own signing program (``gpg.ssh.program``, a real
``ssh-keygen`` with a real key) runs between the commit's creation and the branch's move, and
there, once, another commit lands on ``main`` through git's plumbing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.gitenv import ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import PLAN, head_plan, write_plan

MOVES = {
    # another file on main: the plan is the version she read, so the approval lands on top
    "other-file": "printf 'notes\\n' > \"$W/blob\"; path=NOTES.md",
    # the plan itself edited on main: another version, refused
    "plan-edited": (
        'git -C "$R" show main:plans/greet/PLAN.yml | sed \'s/Say hello/Say bye/\' > "$W/blob"; '
        "path=plans/greet/PLAN.yml"
    ),
}


def _mover(tmp_path: Path, repo: Path, move: str) -> Path:
    """A signing program that, the first time it runs, moves main by a commit of Bob's."""
    work = tmp_path / "mover"
    work.mkdir()
    script = work / "sign.sh"
    script.write_text(
        "#!/bin/sh\n"
        f"R='{repo}'; W='{work}'\n"
        'if [ ! -e "$W/done" ]; then\n'
        '  : > "$W/done"\n'
        f"  {MOVES[move]}\n"
        '  blob=$(git -C "$R" hash-object -w "$W/blob")\n'
        '  export GIT_INDEX_FILE="$W/index"\n'
        '  git -C "$R" read-tree main\n'
        '  git -C "$R" update-index --add --cacheinfo "100644,$blob,$path"\n'
        '  tree=$(git -C "$R" write-tree)\n'
        '  old=$(git -C "$R" rev-parse main)\n'
        "  export GIT_AUTHOR_NAME=Bob GIT_AUTHOR_EMAIL=bob@example.com GIT_COMMITTER_NAME=Bob "
        "GIT_COMMITTER_EMAIL=bob@example.com\n"
        '  new=$(git -C "$R" commit-tree "$tree" -p "$old" -m "bob: $path")\n'
        '  git -C "$R" update-ref refs/heads/main "$new" "$old"\n'
        "  unset GIT_INDEX_FILE\n"
        "fi\n"
        'exec ssh-keygen "$@"\n'
    )
    script.chmod(0o755)
    key = work / "alice_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    own = tmp_path / "global.cfg"  # this test's own: the session's is every test's
    own.write_bytes(Path(os.environ["GIT_CONFIG_GLOBAL"]).read_bytes())
    with own.open("a") as out:
        out.write(f'[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tprogram = {script}\n')
        out.write(f"[user]\n\tsigningKey = {key}\n")
    return own


def _frozen(repo: Path, tmp_path: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    write_plan(repo).write_text(PLAN)
    commit_all(repo, "agent writes a plan")
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    assert head_plan(repo)["frozen"]["hash"]
    return config


@pytest.mark.parametrize("move", list(MOVES))
def test_approve_when_main_moves_under_the_commit(repo: Path, tmp_path: Path, move: str) -> None:
    config = _frozen(repo, tmp_path)
    frozen = head_plan(repo)["frozen"]["hash"]
    own = _mover(tmp_path, repo, move)
    before = git(repo, "rev-parse", "main").strip()
    done = run_cli(
        "approve", "plans/greet", "--sign", "--config", str(config), cwd=repo,
        env={**identity(*ALICE), "GIT_CONFIG_GLOBAL": str(own)},
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert (tmp_path / "mover" / "done").exists(), said  # the race happened
    bobs = git(repo, "rev-parse", "main~1" if done.returncode == 0 else "main").strip()
    assert git(repo, "rev-parse", f"{bobs}~1").strip() == before, said  # Bob's commit kept
    assert "Traceback" not in said
    if move == "other-file":
        assert done.returncode == 0, said
        assert head_plan(repo)["plan"]["status"] == "approved"
        assert head_plan(repo)["frozen"]["hash"] == frozen
        assert git(repo, "log", "-1", "--format=%ae %s", "main").startswith("alice@example.com")
        assert git(repo, "show", "main:NOTES.md") == "notes\n"
        assert "gpgsig -----BEGIN SSH SIGNATURE-----" in git(repo, "cat-file", "commit", "main")
    else:
        assert done.returncode != 0, said
        assert "E_PLAN_HASH_MISMATCH" in said and "plangate show" in said, said
        assert git(repo, "log", "-1", "--format=%ae", "main").strip() == "bob@example.com"
        assert "status: approved" not in git(repo, "show", "main:plans/greet/PLAN.yml")
