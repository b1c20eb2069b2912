"""The files and values an operator's config names for plangate to read get an answer naming
the real cause (round 114, atk114b):

- ``secrets.file`` a FIFO hung every command (it is read at each start), ``/dev/zero`` was
  read until memory ran out, a folder was "Is a directory" without a remedy;
- ``approval.allowed_signers`` a FIFO hung every pass in ``git verify-commit``; a folder made
  git refuse a good signature, and the approval was spent on it;
- a ``params_schema`` whose ``$ref`` never ends (tests/test_settings.py);
- a listen address whose host does not resolve, or is not this machine's, was told to pick
  a free port;
- ``show`` of a path through a plan file (``plans/p/PLAN.yml/x``) said ``E_GIT``.

Real files, real FIFOs, the real ``plangate`` command and real sockets.
"""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pytest

from controller.errors import ConfigInvalid
from controller.settings import load_config
from tests.support.gitenv import commit_all, git, run_cli

CONFIG = "repo: {repo}\nstate_dir: {state}\napproval: {{approvers: ['*@example.com']}}\n"


def _config(tmp_path: Path, repo: Path, extra: str) -> Path:
    path = tmp_path / "plangate.yml"
    path.write_text(CONFIG.format(repo=repo, state=tmp_path / "state") + extra)
    return path


def _special(tmp_path: Path, kind: str) -> Path:
    if kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
        return path
    if kind == "folder":
        path = tmp_path / "folder"
        path.mkdir()
        return path
    return Path("/dev/zero")


WORDS = {"fifo": "is a FIFO", "folder": "is a folder", "device": "is a device"}


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_secrets_file_that_is_no_regular_file_is_refused_at_once(
    tmp_path: Path, repo: Path, kind: str
) -> None:
    """Every command reads the secrets file at its start: none waits on a FIFO or reads a
    device without end; each says what the file is (timeout: a hang guard only)."""
    config = _config(tmp_path, repo, f"secrets: {{file: {_special(tmp_path, kind)}}}\n")
    for args in (["status"], ["validate", "plans/x"], ["run", "--once"]):
        done = run_cli(*args, "--config", str(config), cwd=repo, timeout=120)
        assert done.returncode == 2, (args, done.stderr)
        assert "E_CONFIG_INVALID" in done.stderr and "secrets.file" in done.stderr
        assert WORDS[kind] in done.stderr, done.stderr
        assert "point secrets.file at a regular file" in done.stderr


def test_a_secrets_file_swapped_for_a_fifo_after_loading_is_not_waited_on(
    tmp_path: Path, repo: Path
) -> None:
    """The reader opens it without waiting and checks again (the config's check is a look,
    and the file may change after it)."""
    from controller.execution.secrets import _read_file

    path = tmp_path / "secrets.yml"
    path.write_text("TOKEN: abc\n")
    assert _read_file(path) == {"TOKEN": "abc"}
    path.unlink()
    os.mkfifo(path)
    with pytest.raises(ConfigInvalid, match="a FIFO, not a regular file"):
        _read_file(path)


def test_a_secrets_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    from controller import fsutil
    from controller.execution.secrets import _read_file

    path = tmp_path / "secrets.yml"
    path.write_bytes(b"#" * (fsutil.OPERATOR_FILE_LIMIT + 1))
    with pytest.raises(ConfigInvalid, match="over 4194304 bytes"):
        _read_file(path)


#: secrets-file values a tool would get as other text than written (round 126, atk126e):
#: the entry named (never its value), with its line
BAD_VALUES = {
    "date": ("EXPIRES: 2027-01-01\n", "EXPIRES", "timestamp"),
    "datetime": ("AT: 2027-01-01T10:00:00Z\n", "AT", "timestamp"),
    "nested-date": ("M: {d: 2027-01-01, p: Kp4Wd8Rt2Zm7}\n", "M.d", "timestamp"),
    "list-date": ("L: [Kp4Wd8Rt2Zm7, 2027-01-01]\n", "L[1]", "timestamp"),
    "null": ("EMPTY:\n", "EMPTY", "no value"),
    "zeros": ("PIN: 007123456789\n", "PIN", "a number"),
    "hex": ("H: 0x1F2E3D4C5B\n", "H", "a number"),
    "nan": ("N: .nan\n", "N", "a number"),
    "point-zero": ("F: 1.0\n", "F", "a number"),
    "key": ("M: {1: Kp4Wd8Rt2Zm7}\n", "M[1]", "not a string"),
}


@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_a_secrets_file_value_not_sent_as_written_is_refused_naming_it(
    tmp_path: Path, repo: Path, case: str
) -> None:
    """A date in the secrets file was "internal error: TypeError" in every command; a null or
    a number written otherwise than its JSON text reached the tool as other text: each is
    E_CONFIG_INVALID naming the file, the line and the entry, remedy: quote it."""
    body, where, what = BAD_VALUES[case]
    secrets = tmp_path / "secrets.yml"
    secrets.write_text("KEEP: Kq9Zs3Lv6Nb1\n" + body)
    config = _config(tmp_path, repo, f"secrets: {{file: {secrets}}}\n")
    commands = (["status"], ["validate", "plans/x"], ["run", "--once"])
    for args in commands if case == "date" else commands[:1]:
        done = run_cli(*args, "--config", str(config), cwd=repo)
        assert done.returncode == 2, (args, done.stderr)
        assert "internal error" not in done.stderr, done.stderr
        assert f"E_CONFIG_INVALID: secrets.file {secrets}, line 2: {where}: " in done.stderr
        assert what in done.stderr and "quote the value" in done.stderr, done.stderr
        if case not in ("null", "nan"):  # the value is never quoted
            assert body.split(": ", 1)[-1].strip() not in done.stderr


def test_a_secrets_file_value_written_as_its_text_reaches_tools_as_that_text(
    tmp_path: Path,
) -> None:
    """What stays accepted: strings, and numbers, booleans, mappings and lists written as
    the JSON text a tool gets (round 126: ``918273645012`` is ``918273645012``)."""
    from controller.execution.secrets import _read_file

    path = tmp_path / "secrets.yml"
    path.write_text(
        "S: Kp4Wd8Rt2Zm7\nQ: '007123456789'\nD: '2027-01-01'\nI: 918273645012\n"
        "B: 12345678901234567891\nF: 3.14159265358979\nT: true\n"
        "M: {user: app, port: 5432, on: false, l: [x, 2]}\n"
    )
    assert _read_file(path) == {
        "S": "Kp4Wd8Rt2Zm7",
        "Q": "007123456789",
        "D": "2027-01-01",
        "I": "918273645012",
        "B": "12345678901234567891",
        "F": "3.14159265358979",
        "T": "true",
        "M": '{"user": "app", "port": 5432, "on": false, "l": ["x", 2]}',
    }


def test_a_secrets_file_behind_a_link_is_read(tmp_path: Path, repo: Path) -> None:
    """A mounted secret is a link to the file: followed, as before."""
    real = tmp_path / "real.yml"
    real.write_text("TOKEN: abc\n")
    (tmp_path / "link.yml").symlink_to(real)
    config = _config(tmp_path, repo, f"secrets: {{file: {tmp_path / 'link.yml'}}}\n")
    done = run_cli("status", "--config", str(config), cwd=repo)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_allowed_signers_that_is_no_regular_file_is_refused_at_load(
    tmp_path: Path, repo: Path, kind: str
) -> None:
    extra = f"  allowed_signers: {_special(tmp_path, kind)}\n  require_signed: true\n"
    path = tmp_path / "plangate.yml"
    path.write_text(
        CONFIG.format(repo=repo, state=tmp_path / "state").replace(
            "approval: {approvers: ['*@example.com']}\n",
            "approval:\n  approvers: ['*@example.com']\n" + extra,
        )
    )
    with pytest.raises(ConfigInvalid) as info:
        load_config(path)
    assert "approval.allowed_signers" in info.value.message
    assert WORDS[kind] in info.value.message
    assert "ALLOWED SIGNERS" in info.value.remedy


def test_missing_allowed_signers_is_refused_only_when_signatures_are_required(
    tmp_path: Path, repo: Path
) -> None:
    path = tmp_path / "plangate.yml"
    body = CONFIG.format(repo=repo, state=tmp_path / "state").replace(
        "approval: {approvers: ['*@example.com']}\n",
        "approval:\n  approvers: ['*@example.com']\n  allowed_signers: none.signers\n",
    )
    path.write_text(body)
    load_config(path)  # shown where found, required nowhere
    path.write_text(body + "  require_signed: true\n")
    with pytest.raises(ConfigInvalid, match="no such file, and require_signed is on"):
        load_config(path)


def test_verify_never_waits_on_a_signers_fifo_nor_blames_the_signature(
    tmp_path: Path, repo: Path
) -> None:
    """The file changed after the config loaded: checking a signature against it is the
    operator's E_CONFIG_INVALID, before git runs (git would wait on the FIFO, or refuse a good
    signature because of a folder)."""
    from controller.git.gitrepo import GitRepo

    head = git(repo, "rev-parse", "HEAD").strip()
    for kind in ("fifo", "folder"):
        with pytest.raises(ConfigInvalid) as info:
            GitRepo.containing(repo).verify_commit(head, _special(tmp_path, kind))
        assert WORDS[kind].removeprefix("is ") in info.value.message
    with pytest.raises(ConfigInvalid, match="no such file"):
        GitRepo.containing(repo).verify_commit(head, tmp_path / "gone")


def _server(listen: str) -> ConfigInvalid:
    from http.server import BaseHTTPRequestHandler

    from controller.service.httpd import HttpServer

    with pytest.raises(ConfigInvalid) as info:
        HttpServer(listen, "ui.listen", BaseHTTPRequestHandler)
    return info.value


def test_a_port_in_use_is_told_to_pick_a_free_port() -> None:
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    try:
        error = _server(f"127.0.0.1:{held.getsockname()[1]}")
    finally:
        held.close()
    assert "pick a free port" in error.remedy


def test_a_host_that_does_not_resolve_is_named_as_the_cause() -> None:
    error = _server("nosuch.invalid:18736")
    assert "cannot listen on nosuch.invalid:18736" in error.message
    assert "host name that resolves" in error.remedy and "port" not in error.remedy


def test_an_address_of_another_machine_is_named_as_the_cause() -> None:
    probe = socket.socket()
    try:
        probe.bind(("192.0.2.1", 0))  # TEST-NET-1: no machine's own address
    except OSError as exc:
        assert exc.errno == errno.EADDRNOTAVAIL
    else:
        pytest.skip("this machine holds 192.0.2.1")
    finally:
        probe.close()
    error = _server("192.0.2.1:18736")
    assert "an address of this machine" in error.remedy


def test_show_of_a_path_through_a_plan_file_names_the_path(repo: Path) -> None:
    folder = repo / "plans" / "p"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text("x: 1\n")
    commit_all(repo, "a file")
    done = run_cli("show", "plans/p/PLAN.yml/x", cwd=repo)
    assert done.returncode == 1, done.stderr
    said = done.stdout + done.stderr
    assert "E_UNSAFE_PATH" in said and "a folder named PLAN.yml" in said, said
    assert "E_GIT" not in said
