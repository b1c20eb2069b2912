"""Nothing in the repository's ``.git`` runs a program for plangate's git calls, or changes
what git reports to it (controller/git/guard.py).

In local mode the agent shares the checkout and writes ``.git``: hooks, ``.git/config``,
``.git/info/attributes``, a committed ``.gitattributes``. Each class below is closed by one
mechanism: every git child gets a scrubbed environment and the exec-capable keys pinned at
the command scope from the trusted config (the controller user's and its environment).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git.gitrepo import GitRepo, Person
from controller.git.guard import DISPLAY, GitGuard, argv, inherited_config, owned_here, passes
from tests.support.gitenv import ALICE, commit_all, git, identity

SECRET = "Zq7GuardSecretValue"
BOT = Person("plangate", "plangate@localhost")

#: Every hook git 2.39 knows; a name it learns later is refused by the same pin.
HOOKS = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
]


@pytest.fixture(autouse=True)
def secret_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", SECRET)
    monkeypatch.setenv("SOME_OTHER_TOKEN", SECRET)


def _script(path: Path, marker: Path, body: str = "", code: int = 0) -> Path:
    log = f'echo "$0 $*" >> "{marker}"\nenv >> "{marker}"\n'
    path.write_text(f"#!/bin/sh\n{log}{body}exit {code}\n")
    path.chmod(0o755)
    return path


def _exercise(repo: Path, **verify: Path | None) -> GitRepo:
    """What the controller does with git in a pass: read, log, commit, index, status."""
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    assert gitrepo.read_file(head, "README") is not None
    list(gitrepo.first_parent_log(None, head, ["plans"], newest_first=True))
    files = {"plans/x/PLAN.yml": b"plan: {}\n"}
    sha = gitrepo.commit_files(
        branch="main", parent=head, files=files, message="plangate: x\n", author=BOT
    )
    assert sha is not None, "the commit was vetoed"
    gitrepo.write_worktree(files)
    gitrepo.set_index_entries(files)
    gitrepo.worktree_changes(["plans"])
    gitrepo.verify_commit(sha, verify.get("signers"))
    gitrepo.user()
    return gitrepo


@pytest.fixture
def marker(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "RAN"
    yield path
    ran = path.read_text() if path.exists() else ""
    assert SECRET not in ran, "a program the agent chose saw the controller's secret"


def test_no_hook_runs_and_none_can_veto(repo: Path, marker: Path, tmp_path: Path) -> None:
    for hooks in (repo / ".git" / "hooks", tmp_path / "agent-hooks"):
        hooks.mkdir(exist_ok=True)
        for name in HOOKS:
            _script(hooks / name, marker, code=1)  # exit 1: every hook that can veto, vetoes
    _exercise(repo)
    git(repo, "config", "core.hooksPath", str(tmp_path / "agent-hooks"))
    _exercise(repo)
    assert not marker.exists()


#: Keys naming a program git runs; each is pinned (the declarative check below), and those a
#: controller's pass can reach are exercised for real.
EXEC_KEYS = [
    "core.fsmonitor",
    "core.sshCommand",
    "core.pager",
    "core.editor",
    "sequence.editor",
    "core.askPass",
    "core.alternateRefsCommand",
    "credential.helper",
    "diff.external",
    "gpg.program",
    "gpg.openpgp.program",
    "gpg.x509.program",
    "gpg.ssh.program",
    "gpg.ssh.defaultKeyCommand",
]
RUN_KEYS = [
    "core.fsmonitor",
    "core.sshCommand",
    "gpg.program",
    "gpg.openpgp.program",
    "gpg.x509.program",
    "gpg.ssh.program",
]


@pytest.mark.parametrize("key", RUN_KEYS)
def test_no_program_named_in_the_repository_config_runs(
    repo: Path, marker: Path, tmp_path: Path, key: str
) -> None:
    evil = _script(tmp_path / "evil", marker)
    git(repo, "config", key, str(evil))
    git(repo, "config", "remote.up.url", "ssh://git@plangate.invalid/plans.git")
    signers = tmp_path / "signers"
    signers.write_text("")
    _exercise(repo)
    gitrepo = GitRepo(repo)
    for kind in ("PGP", "SSH", "SIGNED"):  # verify-commit asks gpg, ssh-keygen, gpgsm
        gitrepo.verify_commit(_fake_signed(repo, kind), signers)
    with pytest.raises(GitError):
        gitrepo.fetch("up", "main")  # over ssh: core.sshCommand
    assert not marker.exists(), marker.read_text()[:300]


def test_every_exec_capable_key_is_pinned_at_the_command_scope() -> None:
    pinned = {key.lower() for key, _ in GitGuard().pins}
    assert {key.lower() for key in EXEC_KEYS} <= pinned
    assert ("core.hookspath", "/dev/null") in {(k.lower(), v) for k, v in GitGuard().pins}


def test_a_signing_key_command_in_the_repository_config_never_runs(
    repo: Path, marker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The controller signs (its own config: ssh, no key); the agent names the key."""
    for n, (key, value) in enumerate((("commit.gpgSign", "true"), ("gpg.format", "ssh"))):
        monkeypatch.setenv(f"GIT_CONFIG_KEY_{n}", key)
        monkeypatch.setenv(f"GIT_CONFIG_VALUE_{n}", value)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
    git(repo, "config", "gpg.ssh.defaultKeyCommand", str(_script(tmp_path / "evil", marker)))
    git(repo, "config", "user.signingKey", str(_ssh_key(tmp_path, "agent")))
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    with pytest.raises(GitError):  # no key the operator named: no signed commit at all
        gitrepo.commit_files(
            branch="main", parent=head, files={"x": b"x"}, message="m\n", author=BOT
        )
    assert not marker.exists()


def _fake_signed(repo: Path, kind: str) -> str:
    """A commit carrying a (bogus) signature of ``kind``: verifying it runs the program."""
    head = git(repo, "rev-parse", "HEAD").strip()
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    label = "SIGNED MESSAGE" if kind == "SIGNED" else f"{kind} SIGNATURE"
    sig = f"-----BEGIN {label}-----\n AAAA\n -----END {label}-----"
    body = (
        f"tree {tree}\nparent {head}\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n"
        f"gpgsig {sig}\n\nsigned\n"
    )
    return git(repo, "hash-object", "-w", "-t", "commit", "--stdin", data=body.encode()).strip()


def test_a_repository_verifier_cannot_fake_a_good_signature(
    repo: Path, marker: Path, tmp_path: Path
) -> None:
    fake = 'echo "[GNUPG:] GOODSIG 0123456789ABCDEF Alice <alice@example.com>"\n'
    fake += 'echo "[GNUPG:] VALIDSIG 0123456789ABCDEF 2020-01-01 1"\n'
    fake += "echo 'Good \"git\" signature for alice@example.com with ED25519 key SHA256:x' >&2\n"
    for key in ("gpg.program", "gpg.ssh.program"):
        git(repo, "config", key, str(_script(tmp_path / f"fake-{key}", marker, fake)))
    gitrepo = GitRepo(repo)
    for kind in ("PGP", "SSH"):
        signature = gitrepo.verify_commit(_fake_signed(repo, kind), None)
        assert not signature.valid and signature.signer is None, signature


def _ssh_key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    return key


def _ssh_signed_commit(repo: Path, key: Path) -> str:
    (repo / "f").write_text(f"signed by {key.name}\n")
    git(repo, "add", "f")
    args = ["-c", "gpg.format=ssh", "-c", f"user.signingKey={key}", "commit", "-q", "-S", "-m", "s"]
    git(repo, *args, env=identity(*ALICE))
    return git(repo, "rev-parse", "HEAD").strip()


def test_the_repository_config_names_no_trust_anchor(repo: Path, tmp_path: Path) -> None:
    """The agent's own allowed-signers file binding its key to alice, or a revocation file
    revoking the real key, changes nothing: only the operator's files count."""
    agent = _ssh_key(tmp_path, "agent")
    forged = tmp_path / "agent-signers"
    forged.write_text(f"alice@example.com {agent.with_suffix('.pub').read_text()}")
    git(repo, "config", "gpg.ssh.allowedSignersFile", str(forged))
    sha = _ssh_signed_commit(repo, agent)
    assert GitRepo(repo).verify_commit(sha, None).signer is None

    alice = _ssh_key(tmp_path, "alice")
    signers = tmp_path / "signers"
    signers.write_text(f"alice@example.com {alice.with_suffix('.pub').read_text()}")
    sha = _ssh_signed_commit(repo, alice)
    git(repo, "config", "gpg.ssh.revocationFile", str(alice.with_suffix(".pub")))
    signature = GitRepo(repo).verify_commit(sha, signers)
    assert signature.valid and signature.signer == "alice@example.com", signature


def test_the_operators_program_runs_without_the_controllers_secrets(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trusted config (the controller's own: here its environment) still chooses the
    program; the program, like every git child, sees no secret."""
    seen = tmp_path / "seen"
    program = _script(tmp_path / "operator-ssh-keygen", seen, 'exec ssh-keygen "$@"\n')
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "gpg.ssh.program")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(program))
    alice = _ssh_key(tmp_path, "alice")
    signers = tmp_path / "signers"
    signers.write_text(f"alice@example.com {alice.with_suffix('.pub').read_text()}")
    sha = _ssh_signed_commit(repo, alice)
    seen.unlink()
    git(repo, "config", "gpg.ssh.program", "/nonexistent/agent-program")
    assert GitRepo(repo).verify_commit(sha, signers).signer == "alice@example.com"
    ran = seen.read_text()
    assert "-Y" in ran  # the operator's program verified
    assert SECRET not in ran and "PLANGATE_" not in ran


def test_gitpythons_cat_file_runs_without_the_controllers_secrets(repo: Path) -> None:
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None and gitrepo.read_file(head, "README") is not None
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    cat_files = [
        pid for pid in children if b"cat-file" in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert cat_files, "GitPython's persistent cat-file is not running"
    for pid in cat_files:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        assert SECRET.encode() not in environ
        assert b"'core.hooksPath'='/dev/null'" in environ  # and the pins
    gitrepo.close()


@pytest.mark.parametrize("driver", ["clean", "process"])
def test_a_committed_gitattributes_runs_no_filter(
    repo: Path, marker: Path, tmp_path: Path, driver: str
) -> None:
    """status/diff/add read working-tree files through the filters the attributes select;
    the controller compares contents itself."""
    (repo / "plans" / "x").mkdir(parents=True)
    (repo / "plans" / "x" / "PLAN.yml").write_text("a: 1\n")
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    commit_all(repo, "plans")
    evil = _script(tmp_path / "evil", marker, "cat\n")
    git(repo, "config", f"filter.evil.{driver}", str(evil))
    git(repo, "config", "diff.evil.textconv", str(evil))
    (repo / "plans" / "x" / "PLAN.yml").write_text("a: 2\n")
    (repo / "plans" / "x" / "NEW").write_text("new\n")
    os.utime(repo / "plans" / "x" / "PLAN.yml", (1, 1))  # stat-dirty: git would re-read it
    modified, untracked = GitRepo(repo).worktree_changes(["plans/x"])
    assert modified == {"plans/x/PLAN.yml"} and untracked == {"plans/x/NEW"}
    git(repo, "rm", "-q", "--cached", "plans/x/NEW", check=False)
    (repo / "plans" / "x" / "PLAN.yml").write_text("a: 1\n")
    assert GitRepo(repo).worktree_changes(["plans/x"]) == (set(), {"plans/x/NEW"})
    assert not marker.exists()


@pytest.mark.parametrize("driver", ["clean", "process"])
def test_an_index_update_reads_no_file_through_a_filter(
    repo: Path, marker: Path, tmp_path: Path, driver: str
) -> None:
    """Writing an index makes git re-read "racily clean" entries (as recent as the index)
    through their filter; a file dated 2100 stays racy for good (round 19). plangate's index
    update must run no filter, and still leave the index right for the user's git."""
    (repo / "plans" / "x").mkdir(parents=True)
    (repo / "plans" / "x" / "PLAN.yml").write_text("a: 1\n")
    (repo / "bait.txt").write_text("bait\n")
    (repo / ".gitattributes").write_text("* filter=evil\n")
    commit_all(repo, "plans")
    os.utime(repo / "bait.txt", (4102444800, 4102444800))  # 2100-01-01
    git(repo, "update-index", "--refresh")
    evil = _script(tmp_path / "evil", marker, "cat\n")
    git(repo, "config", f"filter.evil.{driver}", str(evil))
    (repo / "plans" / "x" / "PLAN.yml").write_text("a: 2\n")
    GitRepo(repo).set_index_entries({"plans/x/PLAN.yml": b"a: 2\n"})
    assert not marker.exists(), "the agent's filter ran for plangate"
    git(repo, "config", "--unset", f"filter.evil.{driver}")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    assert staged == ["plans/x/PLAN.yml"]
    assert git(repo, "diff", "--name-only").split() == []  # the file is what the index says


def test_worktree_changes_sees_staged_deleted_and_conflicting_files(repo: Path) -> None:
    (repo / "plans" / "x").mkdir(parents=True)
    for name in ("a", "b", "c"):
        (repo / "plans" / "x" / name).write_text(f"{name}\n")
    commit_all(repo, "plans")
    (repo / "plans" / "x" / "a").write_text("staged\n")
    git(repo, "add", "plans/x/a")
    (repo / "plans" / "x" / "b").unlink()
    assert GitRepo(repo).worktree_changes(["plans/x"]) == ({"plans/x/a", "plans/x/b"}, set())


def test_commit_gpgsign_in_the_repository_config_does_not_stall_the_controller(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's ``commit.gpgSign=true`` (no key) would fail every controller commit."""
    git(repo, "config", "commit.gpgSign", "true")
    git(repo, "config", "gpg.program", "false")
    assert not GitRepo(repo).signs_commits()
    _exercise(repo)
    # Nor a person's command in the shared clone (round 122: an agent's commit.gpgSign made
    # `approve` and `reject` without --sign fail on Alice's key): she signs when she asks
    # (--sign), or when her own git config (global, environment) says so.
    assert not GitRepo.containing(repo).signs_commits()
    for name, value in (("COUNT", "1"), ("KEY_0", "commit.gpgSign"), ("VALUE_0", "true")):
        monkeypatch.setenv(f"GIT_CONFIG_{name}", value)
    assert GitRepo.containing(repo).signs_commits()


def test_the_environment_passes_what_git_needs_and_nothing_else() -> None:
    env = GitGuard().env({"GIT_AUTHOR_NAME": "x"})
    assert "PLANGATE_SECRET_TOKEN" not in env and "SOME_OTHER_TOKEN" not in env
    assert env["GIT_AUTHOR_NAME"] == "x" and env["PATH"] == os.environ["PATH"]
    assert all(passes(k) for k in env)
    assert GitGuard().env_over_environ()["PLANGATE_SECRET_TOKEN"] == ""


def test_a_lazy_fetch_the_agent_configured_runs_nothing(
    repo: Path, marker: Path, tmp_path: Path
) -> None:
    """A "partial clone" whose promisor remote's upload-pack is the agent's program: reading
    a missing object would fetch it. In local mode plangate's git uses no transport."""
    evil = _script(tmp_path / "evil", marker, code=1)
    for key, value in (
        ("core.repositoryFormatVersion", "1"),
        ("extensions.partialClone", "lazy"),
        ("remote.lazy.url", str(tmp_path)),
        ("remote.lazy.promisor", "true"),
        ("remote.lazy.uploadpack", str(evil)),
        ("protocol.file.allow", "always"),
    ):
        git(repo, "config", key, value)
    gitrepo = GitRepo(repo)
    head = gitrepo.branch_head("main")
    assert head is not None
    with pytest.raises(GitError):
        gitrepo.blob("1" * 40)
    assert gitrepo.read_file(head, "missing-file") is None
    gitrepo.run_raw("cat-file", "-p", "1" * 40)
    assert not marker.exists()


def test_a_broken_repository_config_is_a_coded_error_not_a_traceback(repo: Path) -> None:
    with (repo / ".git" / "config").open("a") as config:
        config.write("[core\n")
    with pytest.raises(GitError) as caught:
        GitRepo(repo)
    assert caught.value.code == "E_GIT" and "bad config line" in str(caught.value)
    assert caught.value.remedy


def test_replace_refs_and_grafts_do_not_change_the_history_plangate_reads(repo: Path) -> None:
    """`git replace` (and a grafts file) in the shared .git could show an approver's commit in
    place of another's: plangate reads history as the branch holds it (round 3)."""
    from controller.git.gitrepo import GitRepo

    (repo / "f").write_text("mallory\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "approve", env=identity("Mallory", "mallory@example.com"))
    real = git(repo, "rev-parse", "HEAD").strip()
    fake = git(repo, "commit-tree", "-m", "approve", "-p", "HEAD~1", "HEAD^{tree}",
               env=identity("Alice", "alice@example.com")).strip()  # fmt: skip
    git(repo, "replace", real, fake)
    assert git(repo, "log", "-1", "--format=%ae", real).strip() == "alice@example.com"
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/grafts").write_text(f"{real}\n")  # "no parents"
    seen = GitRepo(repo)
    assert seen.commit(real).author.email == "mallory@example.com"
    assert [r.sha for r in seen.first_parent_log(None, real, ["f"])] == [real]
    assert len(seen.commit(real).parents) == 1


def test_worktree_changes_in_a_repository_without_a_commit(tmp_path: Path) -> None:
    """Before the first commit, staged files are compared with git's empty tree (its id was
    mistyped, so git failed on an unborn branch)."""
    repo = tmp_path / "fresh"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    (repo / "plans" / "x").mkdir(parents=True)
    (repo / "plans" / "x" / "PLAN.yml").write_text("a: 1\n")
    git(repo, "add", "plans/x/PLAN.yml")
    (repo / "plans" / "x" / "NEW").write_text("new\n")
    assert GitRepo(repo).worktree_changes(["plans/x"]) == (
        {"plans/x/PLAN.yml"},
        {"plans/x/NEW"},
    )


@pytest.mark.parametrize("form", ["parameters", "count"])
def test_inherited_command_scope_settings_come_before_the_pins(
    repo: Path, marker: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """Run under `git -c core.hooksPath=...` (a hook, an alias, a harness): git exports the
    setting as GIT_CONFIG_PARAMETERS and reads it after GIT_CONFIG_COUNT (round 86)."""
    hooks = tmp_path / "env-hooks"
    hooks.mkdir()
    for name in ("pre-commit", "post-commit", "reference-transaction", "post-index-change"):
        _script(hooks / name, marker)
    settings = [
        ("core.hooksPath", str(hooks)),
        ("core.fsmonitor", str(_script(tmp_path / "fsmon", marker))),
        ("i18n.logOutputEncoding", "UTF-16"),
        ("core.useReplaceRefs", "true"),
        ("user.name", "Harness"),
    ]
    if form == "parameters":
        quoted = " ".join(f"'{key}'='{value}'" for key, value in settings)
        monkeypatch.setenv("GIT_CONFIG_PARAMETERS", quoted)
    else:
        monkeypatch.setenv("GIT_CONFIG_COUNT", str(len(settings)))
        for n, (key, value) in enumerate(settings):
            monkeypatch.setenv(f"GIT_CONFIG_KEY_{n}", key)
            monkeypatch.setenv(f"GIT_CONFIG_VALUE_{n}", value)
    env = GitGuard.read(repo).env()
    assert dict(inherited_config(env))["user.name"] == "Harness"  # harmless: still read
    assert dict(inherited_config(env))["core.hooksPath"] == "/dev/null"  # the pin, last
    got = subprocess.run(
        ["git", "config", "--get-all", "core.hooksPath"], cwd=repo, env=env, capture_output=True
    )
    assert got.stdout.decode().splitlines()[-1] == "/dev/null"
    _exercise(repo)
    assert not marker.exists(), marker.read_text()[:300]


@pytest.mark.parametrize(
    "env",
    [
        {"GIT_CONFIG_PARAMETERS": "'core.hooksPath"},
        {"GIT_CONFIG_PARAMETERS": "  'a.b'='c'"},
        {"GIT_CONFIG_PARAMETERS": "'a.b'='c'd"},
        {"GIT_CONFIG_COUNT": "x"},
        {"GIT_CONFIG_COUNT": "-1"},
        {"GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "a.b", "GIT_CONFIG_VALUE_0": "c"},
    ],
)
def test_a_malformed_inherited_setting_is_e_git_naming_it(
    repo: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    refused = subprocess.run(["git", "config", "--list"], cwd=repo, capture_output=True)
    assert refused.returncode != 0  # git refuses it too
    with pytest.raises(GitError) as caught:
        GitGuard.read(repo)
    name = "GIT_CONFIG_PARAMETERS" if "GIT_CONFIG_PARAMETERS" in env else "GIT_CONFIG_COUNT"
    assert name in str(caught.value) and f"unset {name}" in (caught.value.remedy or "")


@pytest.mark.parametrize(
    "text",
    [
        "'a.b'='c'",
        "'a.b'= 'a.c'",
        "'a.b=old'   'a.c' 'A.B'='it'\\''s'\\!''  ",
        "'a.b'='line\none' 'a.c'=''",
        "",
    ],
)
def test_inherited_parameters_read_as_git_reads_them(
    repo: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", text)
    listed = subprocess.run(
        ["git", "config", "--list", "-z", "--show-scope"], cwd=repo, capture_output=True
    ).stdout.decode()
    parts = listed.split("\0")
    want = [
        (k.lower(), v if nl else None)
        for scope, entry in zip(parts[0::2], parts[1::2], strict=False)
        if scope == "command"
        for k, nl, v in [entry.partition("\n")]
    ]
    got = [(k.lower(), v) for k, v in inherited_config(os.environ)]
    assert got == want
    env = GitGuard.read(repo).env()  # and again, the pins after them
    assert inherited_config(env)[: len(got)] == inherited_config(os.environ)


def test_the_invokers_pathspec_and_graft_variables_never_reach_git(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 87 (atk87b): ``GIT_ICASE_PATHSPECS`` and ``GIT_GLOB_PATHSPECS`` set where
    plangate was invoked reached its git children: ``plangate check``'s ``ls-tree -- plans``
    failed "pathspec magic not supported". They, the other pathspec switches and a
    replace-ref base change what a read means: plangate's git never sees them (a grafts
    file named by the invoker is pinned away)."""
    from controller.git.gitrepo import GitRepo
    from controller.git.guard import READING_ENV

    (repo / "F").write_text("upper\n")
    (repo / "f").write_text("lower\n")
    git(repo, "add", "F", "f")
    git(repo, "commit", "-q", "-m", "two", env=identity("Alice", "alice@example.com"))
    grafts = tmp_path / "grafts"
    grafts.write_text(git(repo, "rev-parse", "HEAD").strip() + "\n")  # "no parents"
    monkeypatch.setenv("GIT_GRAFT_FILE", str(grafts))
    for name in READING_ENV:
        monkeypatch.setenv(name, "1")
    env = GitGuard().env()
    assert not READING_ENV & set(env), sorted(READING_ENV & set(env))
    assert env["GIT_GRAFT_FILE"] == os.devnull
    seen = GitRepo(repo)
    listed = seen.run("ls-tree", "-r", "--name-only", "HEAD", "--", "f")
    assert listed.split() == ["f"]  # neither refused nor matched case-insensitively
    head = seen.commit(git(repo, "rev-parse", "HEAD").strip())
    assert len(head.parents) == 1  # the grafts file named no parents: not read


@pytest.mark.parametrize(
    "name", ["GIT_TRACE", "GIT_TRACE_PERFORMANCE", "GIT_TRACE_SETUP", "GIT_TRACE2_EVENT"]
)
def test_gits_trace_sent_to_stdout_is_never_read_as_its_answer(
    repo: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 111 (atk111b): ``GIT_TRACE=/dev/stdout`` (or any ``GIT_TRACE*``) reached git's
    children, and its trace lines were parsed as the answer: ``status`` said "HEAD is
    detached" on main. No variable of that prefix reaches a git child."""
    head = git(repo, "rev-parse", "HEAD").strip()
    monkeypatch.setenv(name, "/dev/stdout")
    monkeypatch.setenv(name + "_BRIEF", "1")
    assert not [k for k in GitGuard().env() if k.startswith("GIT_TRACE")]
    assert not passes(name) and not passes(name + "_BRIEF")
    assert GitRepo(repo).run("rev-parse", "HEAD").strip() == head


def test_git_never_reads_gitmodules_in_a_diff_over_a_gitlink(repo: Path, tmp_path: Path) -> None:
    """Round 91: git parses ``.gitmodules`` in every diff over a gitlink and dies on an entry
    it calls invalid (``update = !cmd``); every diffing command plangate runs gets
    ``--ignore-submodules=none`` (:func:`argv`): the file is never read, the gitlink still
    shown, nothing in it runs."""
    marker = tmp_path / "fired"
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / ".gitmodules").write_text(
        f'[submodule "x"]\n\tpath = plans/x\n\turl = ./x\n\tupdate = !touch {marker}\n'
    )
    git(repo, "add", ".gitmodules")
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{base},plans/x")
    git(repo, "commit", "-qm", "gitlink", env=identity(*ALICE))
    (repo / ".gitmodules").write_text('[submodule "x"\n')  # broken in the working tree too
    assert subprocess.run(["git", "diff-tree", "-r", base, "HEAD"], cwd=repo,
                          capture_output=True).returncode != 0  # fmt: skip
    assert argv(["-c", "a.b=c", "log", "--raw"]) == [
        "git", "-c", "a.b=c", "log", "--ignore-submodules=none", *DISPLAY["log"], "--raw"
    ]  # fmt: skip
    assert argv(["rev-parse", "HEAD"]) == ["git", "rev-parse", "HEAD"]
    gitrepo = GitRepo(repo)
    out = gitrepo.run("-c", "core.quotePath=false", "diff-tree", "-r", "--raw", base, "HEAD")
    assert "160000" in out and "plans/x" in out
    assert "plans/x" in gitrepo.run("log", "--raw", "-1", "--format=%H")
    assert not marker.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a repository to another user needs root")
def test_a_repository_another_user_owns_is_gits_refusal_with_its_remedy(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 111 (atk111b, ``dubious-ownership-misdiagnosed``): git refuses a repository
    another user owns (``safe.directory``) and reads none there; plangate answered "HEAD is
    detached", "no PLAN.yml there", "no commits to audit". Opening it is E_GIT saying so,
    with git's remedy; once the person trusts it, it opens as before."""
    os.chown(repo, 65534, 65534)
    with pytest.raises(GitError) as caught:
        GitRepo(repo)
    assert "dubious ownership" in caught.value.message and "another user" in caught.value.message
    assert f"git config --global --add safe.directory {repo}" in (caught.value.remedy or "")
    inside = repo / "plans"
    inside.mkdir()
    with pytest.raises(GitError):  # the working tree is found from a folder inside it too
        owned_here(inside)
    trusted = tmp_path / "gitconfig"
    trusted.write_text(f"[safe]\n\tdirectory = {repo}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(trusted))
    assert GitRepo(repo).run("rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
