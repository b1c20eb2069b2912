"""The password of an http(s) remote URL never reaches a command line (round 128,
``credential-in-git-argv``): git was given ``http://deploy:PW@host/plans.git`` (``git clone``)
and handed it on to ``git-remote-http origin <url>``, readable by every process on the host
in ``/proc/<pid>/cmdline``. git is given the URL without its userinfo and the credential
through a credential helper reading the environment of the calls that talk to the remote.
Real git against a real smart-HTTP server behind basic auth; every command line read while
it runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git.gitrepo import GitRepo
from controller.git.guard import HELPER, remote_auth
from tests.support.authgit import Watcher, hold_url_in_config, served
from tests.support.gitenv import commit_all, git

OWNER = ("Owner", "owner@example.com")
USER = "deploy"
PW = "Pw7Kq2Xz9Lm4Tb6Rn"
#: the migration test's own (tests beside it run in parallel, each watching the host)
OLD_PW = "Ow3Jd8Fs5Vn1Yc4Ge"


def _bare(tmp_path: Path) -> Path:
    seed = tmp_path / "seed"
    seed.mkdir()
    git(seed, "init", "-q", "-b", "main")
    (seed / "README").write_text("plans\n")
    commit_all(seed, "initial", OWNER)
    root = tmp_path / "served"
    root.mkdir()
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(root / "plans.git"))
    return root


def _commit_on(repo: GitRepo, message: str) -> str:
    tip = repo.run("rev-parse", "refs/heads/main").strip()
    new = repo.run("commit-tree", "-p", tip, "-m", message, f"{tip}^{{tree}}").strip()
    repo.run("update-ref", "refs/heads/main", new, tip)
    return new


@pytest.mark.parametrize(
    ("url", "clean", "scope", "user", "password"),
    [
        ("http://deploy:PW@h:8080/p.git", "http://h:8080/p.git", "http://h:8080", "deploy", "PW"),
        ("https://TOKEN@github.com/o/r.git", "https://github.com/o/r.git", "https://github.com",
         "TOKEN", None),
        # percent-decoded as git decodes it; a raw `@` in the password: all of it goes
        ("HTTPS://u%3A1:p%40ss@h/r.git", "HTTPS://h/r.git", "https://h", "u:1", "p@ss"),
        ("https://u:p@ss@h/r.git?x=1#f", "https://h/r.git?x=1#f", "https://h", "u", "p@ss"),
        ("http://:PW@h/r.git", "http://h/r.git", "http://h", "", "PW"),
    ],
)  # fmt: skip
def test_an_http_url_is_given_to_git_without_its_userinfo(
    url: str, clean: str, scope: str, user: str, password: str | None
) -> None:
    given, auth = remote_auth(url)
    assert given == clean
    assert auth is not None and (auth.username, auth.password) == (user, password)
    assert auth.scope == scope
    assert password is None or password not in auth.pin()[0] + auth.pin()[1]


@pytest.mark.parametrize(
    "url",
    [
        "ssh://git@host/o/r.git",
        "git@host:o/r.git",
        "git://host/r.git",
        "/srv/plans.git",
        "file:///srv/plans.git",
        "https://host/r.git",
        "https://host/a@b.git",  # an @ in the path is no userinfo
    ],
)
def test_other_urls_are_unchanged(url: str) -> None:
    assert remote_auth(url) == (url, None)


def test_a_line_break_in_the_password_is_refused() -> None:
    with pytest.raises(GitError, match="line break"):
        remote_auth("https://u:a%0Ab@h/r.git")


def test_clone_fetch_push_and_ls_remote_never_put_the_password_on_a_command_line(
    tmp_path: Path,
) -> None:
    root = _bare(tmp_path)
    with served(root, USER, PW) as (base, sent):
        url, auth = remote_auth(base.replace("http://", f"http://{USER}:{PW}@") + "plans.git")
        assert auth is not None and PW not in url
        with Watcher([PW]) as watcher:
            repo = GitRepo.clone_bare(url, tmp_path / "clone", "main", auth)
            first = repo.fetch("origin", "main")
            made = _commit_on(repo, "pushed over http")
            assert repo.push("origin", "main", new=True)
            assert repo.remote_tip("origin", "main") == made != first
            assert repo.fetch("origin", "main") == made
            assert made in repo.heads_aside("origin")
            repo.drop_heads_aside("origin")
    assert not watcher.found, sorted(watcher.found)[:3]
    # the watcher read the remote helper's command line: it saw what there was to see
    assert any("git-remote-http" in line for line in watcher.processes), len(watcher.processes)
    assert f"{USER}:{PW}" in sent  # the credential reached the server, by the helper
    assert git(root / "plans.git", "rev-parse", "main").strip() == made
    config = (tmp_path / "clone" / "config").read_text()
    assert PW not in config and f"{USER}@" not in config


def test_a_wrong_password_is_refused_by_the_server_and_masked(tmp_path: Path) -> None:
    root = _bare(tmp_path)
    with served(root, USER, PW) as (base, _sent):
        url, auth = remote_auth(base.replace("http://", f"http://{USER}:wrong@") + "plans.git")
        with pytest.raises(GitError) as caught:
            GitRepo.clone_bare(url, tmp_path / "clone", "main", auth)
    assert "wrong" not in str(caught.value)
    assert not (tmp_path / "clone").exists()


def test_a_clone_holding_the_userinfo_in_its_config_is_rewritten_without_it(
    tmp_path: Path,
) -> None:
    """A clone made before round 128 keeps ``http://deploy:PW@...`` as ``remote.origin.url``:
    git reads it there and hands it to ``git-remote-http``. Rewritten once; a clean clone's
    config is not touched (no git runs for it)."""
    root = _bare(tmp_path)
    with served(root, USER, OLD_PW) as (base, _sent):
        full = base.replace("http://", f"http://{USER}:{OLD_PW}@") + "plans.git"
        url, auth = remote_auth(full)
        repo = GitRepo.clone_bare(url, tmp_path / "clone", "main", auth)
        config = tmp_path / "clone" / "config"
        before = config.stat().st_mtime_ns
        repo.forget_remote_userinfo("origin")
        assert config.stat().st_mtime_ns == before  # nothing to forget: untouched
        hold_url_in_config(tmp_path / "clone", full, push=True)  # as an old clone held it
        repo = GitRepo(tmp_path / "clone", fetches=True, auth=auth)
        repo.forget_remote_userinfo("origin")
        assert OLD_PW not in config.read_text() and f"{USER}@" not in config.read_text()
        assert git(tmp_path / "clone", "config", "remote.origin.url").strip() == url
        assert git(tmp_path / "clone", "config", "remote.origin.pushurl").strip() == url
        with Watcher([OLD_PW]) as watcher:
            repo.fetch("origin", "main")
    assert not watcher.found, sorted(watcher.found)[:3]


def test_the_helper_names_no_value() -> None:
    """The helper's text (what ``sh -c`` shows) reads the credential from the environment."""
    assert "$PLANGATE_GIT_PASSWORD" in HELPER and "$PLANGATE_GIT_USERNAME" in HELPER


def test_the_urls_credential_is_asked_before_the_operators_helpers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A credential helper of the trusted (global) config answering for the same host with
    another password does not win over the URL's, as it did not when git read the URL's
    userinfo itself."""
    gitconfig = tmp_path / "global.gitconfig"
    helper = "!f() { cat >/dev/null; echo username=other; echo password=stale; }; f"
    git(tmp_path, "config", "--file", str(gitconfig), "credential.helper", helper)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    root = _bare(tmp_path)
    with served(root, USER, PW) as (base, sent):
        url, auth = remote_auth(base.replace("http://", f"http://{USER}:{PW}@") + "plans.git")
        repo = GitRepo.clone_bare(url, tmp_path / "clone", "main", auth)
        repo.fetch("origin", "main")
    assert "other:stale" not in sent and f"{USER}:{PW}" in sent
