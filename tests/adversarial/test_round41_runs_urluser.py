# ruff: noqa: E501
"""Round 41, secrets never reaching git or status output: a credential written as the *user*
part of a URL's userinfo (``https://TOKEN@host/...``), the way GitHub documents cloning with a
personal access token (``https://<PAT>@github.com/o/r.git``) and Sentry writes its DSN
(``https://KEY@o0.ingest.sentry.io/0``); and a credential variable named ``*_PAT``. Round 26
and round 40 redacted URL *passwords* (``user:***@``) and names like ``key``/``token``/``pass``.

Lab ``cfg`` (local mode), one plan per variant, all approved by Alice and run in one pass;
the exec tool ``pe`` prints the catalog value the variant names:

- ``env-dsn``: catalog env ``SENTRY_DSN: https://USERTOKEN1@o0.ingest.example/0`` printed;
- ``argv-url``: an ``argv`` item ``https://USERTOKEN2@github.example/o/r.git`` printed;
- ``env-pat``: catalog env ``GH_PAT: <token>`` printed (name ends ``_PAT``);
- ``http-url``: an http tool whose catalog URL is ``http://USERTOKEN4@127.0.0.1:9/hook``
  (port closed: the call fails and its error quotes the URL);
- ``notify-url``: ``notify.urls`` holding ``http://USERTOKEN5@127.0.0.1:9/h`` (closed);
- ``env-jwt`` / ``env-pin`` / ``env-otp-seed`` / ``env-mnemonic``: catalog env ``API_JWT``,
  ``ADMIN_PIN``, ``TOTP_SEED``, ``WALLET_MNEMONIC`` printed (credential words the name list lacks);
- ``env-azure-conn``: ``AZURE_STORAGE`` holding an Azure connection string
  (``...;AccountKey=KEY;...``, a pair named like a credential) printed;
- ``plain-pass`` (control): ``DB_PASS: <token>`` printed (round 40 fixed: held).

- ``argv-curl-u`` / ``argv-mysql-p`` / ``argv-redis-a`` / ``argv-sshpass``: a catalog ``argv``
  holding a password the way common clients take it: ``-u admin:PW`` (curl), ``-pPW``
  (mysql), ``-a PW`` (redis-cli), ``sshpass -p PW``; the tool prints its argv.

``show-http`` / ``tools-list``: ``plangate show plans/http-url --config`` and ``plangate
tools --config`` output (the reviewer's and the operator's views of the catalog).

Lab ``remote``: ``remote.url`` is ``http://USERTOKEN6@127.0.0.1:9/repo.git`` (closed: the clone
fails); ``remote-run`` / ``remote-status``: ``run --once`` and ``status --json`` output.

Asserted: the token is in no commit (``log --all -p``), no ``status --json`` row and not in the
pass's stderr; every ``cfg`` plan ended.

Fixed (round 41, all 16): a URL's whole userinfo is a credential: its user part as well as
its password is taken from every URL of the config (a catalog ``url``, URLs inside ``env``
and header values and ``argv`` items, ``remote.url``, ``notify.urls`` and the URLs of
``notify.url_env``: ``toolspec.url_credentials``, ``secrets.credentials_of``), and messages,
``show``, ``tools`` and the log write a URL as ``***@host`` (``display.masked_url``); an
ordinary user name (``deploy``, ``postgres``) is hidden too (over-hiding, no leak).
``PAT``, ``JWT``, ``PIN``, ``SEED``, ``MNEMONIC``, ``OTP``, ``TOTP`` are credential words of
a name, as a whole part of it (``display.CREDENTIAL_NAME``: ``PATH``, ``spinner`` are not);
the Azure ``AccountKey=`` pair was already taken by the pair rule. Short argv flags:
``user:PW`` after ``-u``/``--user``, the value after ``-a``/``-p`` or attached to ``-p``,
unless a port (digits, at most 5; ``8080:80``), a path, or (attached) lower-case letters
only (``-print``) (``toolspec.flag_credential``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

TOKENS = {
    "env-dsn": "ghuA7k2Lm9Qr4Zt8Xw1",
    "argv-url": "ghpB3n6Pq2Rs5Tu7Vw9",
    "env-pat": "ghpC4m7Np1Qs8Rt2Uv6",
    "http-url": "ghpD5k8Lm2Np6Qr9St3",
    "notify-url": "ghpE6j9Km3Lp7Nq1Rs4",
    "plain-pass": "ghpF7h1Jk4Lm8Np2Qr5",
    "env-jwt": "eyJ1Ab2Cd3Ef4Gh5Ij6Kl7",
    "env-pin": "73519046281",
    "env-otp-seed": "JBSWY3DPEHPK3PXPQ7RT",
    "env-mnemonic": "zebra9 orbit4 lantern7 quartz2",
    "env-azure-conn": "Az8Bq7Cr6Ds5Et4Fu3Gv2Hw1",
    "argv-curl-u": "Cu9Rl8Pw7Xy6Zq5Ab4",
    "argv-mysql-p": "My5Sq4Lp3Wd2Xz1Qa9",
    "argv-redis-a": "Rd7Is6Au5Th4Kq3Zm2",
    "argv-sshpass": "Ss3Hp2As1Sw9Dx8Cv7",
    "show-http": "ghpD5k8Lm2Np6Qr9St3",
    "tools-list": "ghpB3n6Pq2Rs5Tu7Vw9",
    "remote-run": "ghpG8g2Hj5Kl9Mn3Pq6",
    "remote-status": "ghpG8g2Hj5Kl9Mn3Pq6",
}
PE = """import os, sys
print("value: " + (os.environ.get(sys.argv[1]) or " ".join(sys.argv[2:])))
"""
#: variant -> reason (round 41 breaks)
BROKEN: dict[str, str] = {}  # all fixed in round 41 (see the docstring)


def _marks(v: str) -> list[object]:
    if v in BROKEN:
        return [
            pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 41: {BROKEN[v]}")
        ]
    return []


def _build(root: Path) -> Lab:
    t = TOKENS
    notify = (
        f"notify:\n  urls: ['http://{t['notify-url']}@127.0.0.1:9/h']\n  retries: 0\n  timeout: 1\n"
    )
    lab = Lab(root / "cfg", extra=notify) if (root / "cfg").mkdir() is None else None
    assert lab is not None
    (lab.root / "pe.py").write_text(PE)
    argv = json.dumps(
        [
            sys.executable,
            str(lab.root / "pe.py"),
            "{v}",
            f"https://{t['argv-url']}@github.example/o/r.git",
        ]
    )
    env = json.dumps(
        {
            "SENTRY_DSN": f"https://{t['env-dsn']}@o0.ingest.example/0",
            "GH_PAT": t["env-pat"],
            "DB_PASS": t["plain-pass"],
            "API_JWT": t["env-jwt"],
            "ADMIN_PIN": t["env-pin"],
            "TOTP_SEED": t["env-otp-seed"],
            "WALLET_MNEMONIC": t["env-mnemonic"],
            "AZURE_STORAGE": "DefaultEndpointsProtocol=https;AccountName=acct;"
            f"AccountKey={t['env-azure-conn']};EndpointSuffix=core.windows.net",
        }
    )
    argvs = {
        "argv-curl-u": ["-u", f"admin:{t['argv-curl-u']}"],
        "argv-mysql-p": ["-uroot", f"-p{t['argv-mysql-p']}", "appdb"],
        "argv-redis-a": ["-h", "cache", "-a", t["argv-redis-a"]],
        "argv-sshpass": ["sshpass", "-p", t["argv-sshpass"], "ssh", "deploy@host"],
    }
    more = "".join(
        f"{v}: {{kind: exec, argv: {json.dumps([sys.executable, str(lab.root / 'pe.py'), '{v}', *items])}}}\n"
        for v, items in argvs.items()
    )
    lab.write_config(
        tools=more + f"pe: {{kind: exec, argv: {argv}, env: {env}}}\n"
        f"hook: {{kind: http, method: POST, url: 'http://{t['http-url']}@127.0.0.1:9/hook', timeout: 5}}\n",
        extra=notify,
    )
    envname = {
        "env-dsn": "SENTRY_DSN",
        "argv-url": "NONE",
        "env-pat": "GH_PAT",
        "plain-pass": "DB_PASS",
        "env-jwt": "API_JWT",
        "env-pin": "ADMIN_PIN",
        "env-otp-seed": "TOTP_SEED",
        "env-mnemonic": "WALLET_MNEMONIC",
        "env-azure-conn": "AZURE_STORAGE",
    }
    slugs = [*envname, "http-url", *argvs]
    for v in slugs:
        if v in argvs:
            body = (
                f"available_tools: [{{name: {v}}}]\nactions:\n  - id: 1\n    tool: {v}\n"
                "    why: w\n    params: {v: NONE}\n"
            )
        elif v == "http-url":
            body = "available_tools: [{name: hook}]\nactions:\n  - id: 1\n    tool: hook\n    why: w\n    params: {a: 1}\n"
        else:
            body = (
                "available_tools: [{name: pe}]\nactions:\n  - id: 1\n    tool: pe\n    why: w\n"
                f"    params: {{v: {envname[v]}}}\n"
            )
        lab.write(v, f"plan:\n  name: {v}\n  task: t\n  status: pending_approval\n" + body)
    lab.commit("plans")
    lab.run()
    for v in slugs:
        lab.set_status(v, "approved")
    lab.commit("approve them", ALICE)
    result = lab.run()
    status = lab.cli("status", "--json", "--config", str(lab.config))
    rows = json.loads(status.stdout)
    seen = {}
    for v in slugs:
        seen[v] = (
            lab.git("log", "--all", "-p", "--text", "--format=%H%n%B", "--", f"plans/{v}")
            + json.dumps([r for r in rows if r["plan"] == f"plans/{v}"])
            + result.stderr
            + status.stderr
        )
    seen["notify-url"] = lab.git("log", "--all", "-p", "--text") + status.stdout + result.stderr
    show = lab.cli("show", str(lab.repo / "plans/http-url"), "--config", str(lab.config))
    tools = lab.cli("tools", "--config", str(lab.config))
    seen["show-http"] = show.stdout + show.stderr
    seen["tools-list"] = tools.stdout + tools.stderr
    lab.seen = seen  # type: ignore[attr-defined]
    lab.ended = {r["plan"]: r["status"] for r in rows}  # type: ignore[attr-defined]

    remote = Lab(root / "remote") if (root / "remote").mkdir() is None else None
    assert remote is not None
    text = remote.config.read_text().replace(
        f"repo: {remote.repo}\n",
        f"remote: {{url: 'http://{t['remote-run']}@127.0.0.1:9/repo.git', branch: main, poll_interval: 1}}\n",
    )
    remote.config.write_text(text)
    r1 = remote.cli("run", "--once", "--config", str(remote.config), timeout=60)
    r2 = remote.cli("status", "--json", "--config", str(remote.config), timeout=60)
    seen["remote-run"] = r1.stdout + r1.stderr
    seen["remote-status"] = r2.stdout + r2.stderr
    lab.seen = seen  # type: ignore[attr-defined]
    lab.remote_rc = {
        "remote-run": (r1.returncode, r1.stderr),
        "remote-status": (r2.returncode, r2.stderr),
    }  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r41-urluser", _build)


def test_every_plan_ended(lab: Lab) -> None:
    ended = lab.ended  # type: ignore[attr-defined]
    for v in [
        "env-dsn",
        "argv-url",
        "env-pat",
        "plain-pass",
        "env-jwt",
        "env-pin",
        "env-otp-seed",
        "env-mnemonic",
        "env-azure-conn",
        "argv-curl-u",
        "argv-mysql-p",
        "argv-redis-a",
        "argv-sshpass",
    ]:
        assert ended[f"plans/{v}"] == "completed", ended
    assert ended["plans/http-url"] == "failed", ended
    for rc, err in lab.remote_rc.values():  # type: ignore[attr-defined]
        assert rc != 0 and "E_GIT" in err and "Traceback" not in err


@pytest.mark.parametrize("v", [pytest.param(v, id=v, marks=_marks(v)) for v in TOKENS])
def test_url_user_credential_not_written(lab: Lab, v: str) -> None:
    assert TOKENS[v] not in lab.seen[v]  # type: ignore[attr-defined]
