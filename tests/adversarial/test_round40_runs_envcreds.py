"""Round 40, the config's own credentials never reach git: a catalog ``env`` credential whose
name the redactor's list does not match (round 25/26: values are told by their names, ``key``,
``token``, ``secret``, ``passw``, ``pwd``, ``auth``, ...; URL passwords of a tool's URL and of
``remote.url``).

One lab; an exec tool ``dump`` whose catalog ``env`` holds common credential variables; each
plan is one ``dump`` action printing one variable's value back (a tool echoing its
configuration, as in round 25), all approved by Alice and run in one pass:

- ``db-pass`` (``DB_PASS``), ``smtp-pass`` (``SMTP_PASS``): the common short spelling of a
  password variable;
- ``gpg-passphrase`` (``GPG_PASSPHRASE``);
- ``database-url`` (``DATABASE_URL=postgres://app:PASSWORD@db/x``) and ``redis-url``
  (``REDIS_URL=redis://:PASSWORD@cache:6379/0``): a password in the userinfo of a URL held
  in an env value (only the password is asserted hidden);
- ``argv-url``: a catalog ``argv`` item ``postgres://app:PASSWORD@db/x`` (a tool printing its
  argv): the password part;
- ``aws-secret`` (``AWS_SECRET_ACCESS_KEY``) and ``conn-string`` (``...;Password=X;``,
  a pair so named): controls, held.

Asserted: the credential (for the URLs, the password part) appears neither in the repository's
history (``log --all -p``, messages included) nor in ``plangate status --json``.

**Broke** (round 40): ``db-pass``, ``smtp-pass``, ``gpg-passphrase``, ``database-url``,
``redis-url`` and ``argv-url`` are committed in clear in the recorded ``stdout`` (PLAN.yml
``execution:``, EXECUTION_LOG.md), e.g. ``{"DB_PASS": "Pa55w0rdDbXq"}`` and
``postgres://app:Sup3rS3cretPw@db/x``, while ``AWS_SECRET_ACCESS_KEY`` shows ``***``.
Should: a name spelling a password (``PASS``, ``PASSPHRASE``) counts as a credential, and the
password of a URL in any env or header value or argv item is hidden as a tool URL's is.

**Fixed** (round 40): ``CREDENTIAL_NAME`` (``controller/display.py``) counts ``PASS`` and
``PASSPHRASE`` as a word of a name (``DB_PASS``, ``smtpPass``; not ``PASSTHROUGH`` or
``bypass``), and ``tool_credentials`` takes the password (and the credential-named query
values) of every URL written in an ``env`` or header value or an argv item, with the same
helper as a tool's ``url`` and ``remote.url`` (``url_credentials``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

ARGV_URL = "postgres://app:ArgvPw12345@db/x"
ENV = {
    "db-pass": ("DB_PASS", "Pa55w0rdDbXq", "Pa55w0rdDbXq"),
    "smtp-pass": ("SMTP_PASS", "SmtpPw0rd771", "SmtpPw0rd771"),
    "gpg-passphrase": ("GPG_PASSPHRASE", "correct horse battery", "correct horse battery"),
    "database-url": ("DATABASE_URL", "postgres://app:Sup3rS3cretPw@db/x", "Sup3rS3cretPw"),
    "redis-url": ("REDIS_URL", "redis://:R3disPw99x@cache:6379/0", "R3disPw99x"),
    "aws-secret": ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMIK7MDENG", "wJalrXUtnFEMIK7MDENG"),
    "conn-string": ("CONN", "Server=db;User Id=sa;Password=MsSqlPw123;", "MsSqlPw123"),
    "argv-url": ("ARGV", ARGV_URL, "ArgvPw12345"),
}
#: Broke in round 40, fixed since
FIXED = ["db-pass", "smtp-pass", "gpg-passphrase", "database-url", "redis-url", "argv-url"]

DUMP = (
    "import json, os, sys\n"
    "print(json.dumps({sys.argv[1]: os.environ.get(sys.argv[1], sys.argv[2:])}))\n"
)


def _plan(vid: str) -> str:
    tool = "argvdump" if vid == "argv-url" else "dump"
    params = "{}" if vid == "argv-url" else f"{{var: {ENV[vid][0]}}}"
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\n"
        f"actions:\n  - id: 1\n    tool: {tool}\n    why: w\n"
        f"    params: {params}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "dump.py").write_text(DUMP)
    env = {name: value for name, value, _ in ENV.values() if name != "ARGV"}
    argv = json.dumps([sys.executable, str(root / "dump.py"), "{var}"])
    argv2 = json.dumps([sys.executable, str(root / "dump.py"), "ARGV", ARGV_URL])
    lab.write_config(
        tools=f"dump: {{kind: exec, argv: {argv}, env: {json.dumps(env)}}}\n"
        f"argvdump: {{kind: exec, argv: {argv2}}}\n"
    )
    for vid in ENV:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in ENV:
        lab.set_status(vid, "approved")
    lab.commit("approve them", ALICE)
    lab.run()
    lab.history = lab.git("log", "--all", "-p", "--text", "--format=%H%n%B")  # type: ignore[attr-defined]
    lab.status_text = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-envcreds", lambda root: _build(root / "lab"))


def test_every_plan_ran(lab: Lab) -> None:
    rows = lab.status()
    for vid in ENV:
        assert rows[f"plans/{vid}"]["status"] == "completed", lab.codes(vid)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v) for v in ENV],
)
def test_a_catalog_credential_printed_back_is_not_written(lab: Lab, vid: str) -> None:
    hidden = ENV[vid][2]
    assert hidden not in lab.history, f"{ENV[vid][0]} in git"  # type: ignore[attr-defined]
    assert hidden not in lab.status_text, f"{ENV[vid][0]} in status"  # type: ignore[attr-defined]
