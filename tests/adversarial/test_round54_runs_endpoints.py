# ruff: noqa: E501
"""Round 54 (runs): the daemon's read-only page and the agents' MCP server, as an outsider
reaches them. docs/operations.md: the page serves GET/HEAD only, "A request names a plan only
by its id among the plans the controller knows; it can never make the page read another
file", `/commit/<sha>` is `git show --stat`; secrets are masked. docs/agents.md: `submit`
writes one file, `plans/<slug>/PLAN.yml`, and refuses a status other than draft /
pending_approval.

Lab ``ep``: a secrets file with ``TOK``; plan ``s1`` calls ``rec`` with ``tok:
$<secrets.TOK>`` and its output ``echoed`` holds the secret back (Alice approves, it runs);
a daemon with ``ui.listen`` and ``metrics.listen`` on free loopback ports. Then:

- ``commit-option``: ``GET /commit/--output=<file>`` (git option injection through the sha):
  404 and no file written; ``commit-rev``: ``/commit/HEAD:README`` (a revision expression
  naming a blob): 404.
- ``plan-dotdot``: ``/api/plan/plans/s1/../../README``; ``plan-encoded``:
  ``/api/plan/..%2f..%2fREADME``: 404, nothing of the file.
- ``post``: ``POST /api/``: 405.
- ``secret``: the secret's value appears in none of ``/``, ``/api/``, ``/plan/plans/s1``,
  ``/api/plan/plans/s1``, ``/metrics``, ``/healthz``.
- MCP ``submit`` (``agent.identity`` set): ``slug-dotdot`` (``../evil``), ``slug-git``
  (``x/.git/hooks``), ``slug-newline`` (a slug with ``\\nPlan-Status: approved``),
  ``owned-blocks`` (a plan text carrying ``frozen:``, ``approval:`` and ``execution:``),
  ``approved`` (``status: approved``): each refused with its code, nothing committed.

All held.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import mcpkit
import pytest
from advkit import BenchError, Lab, plan_text
from test_round2_execution_kit import shared

S = "Zq8Wxx3Yv7Ut2"
PLANGATE = str(Path(sys.executable).parent / "plangate")
UI = ["commit-option", "commit-rev", "plan-dotdot", "plan-encoded", "post", "secret"]
MCP = ["slug-dotdot", "slug-git", "slug-newline", "owned-blocks", "approved"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(base: str, path: str, method: str = "GET") -> tuple[int | None, str]:
    request = urllib.request.Request(base + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, answer.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")
    except OSError as error:
        return None, repr(error)


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {S}\n")
    lab = Lab(root / "ep")
    ui, metrics = _port(), _port()
    lab.write_config(
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n"
        f"ui: {{listen: '127.0.0.1:{ui}'}}\nmetrics: {{listen: '127.0.0.1:{metrics}'}}\n"
        "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
    )
    lab.write(
        "s1",
        plan_text("s1", params='tok: "$<secrets.TOK>"\n')
        + "    outputs: [{name: echoed, path: $.json.echo.tok}]\n",
    )
    lab.commit("plan")
    lab.run()
    lab.approve("s1")
    lab.run()
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    daemon = subprocess.Popen(
        [PLANGATE, "run", "--config", str(lab.config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(root / "daemon.err", "wb"),  # noqa: SIM115
    )
    base = f"http://127.0.0.1:{ui}"
    target = root / "pwned"
    try:
        deadline = time.monotonic() + 60
        # up once the daemon's first pass has shown s1 (``/api/`` answers 200 before it)
        while _get(base, "/api/plan/plans/s1")[0] != 200:
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise BenchError("the page never showed s1")
            time.sleep(0.2)
        lab.ui = {  # type: ignore[attr-defined]
            "commit-option": _get(base, f"/commit/--output={target}"),
            "commit-rev": _get(base, "/commit/HEAD:README"),
            "plan-dotdot": _get(base, "/api/plan/plans/s1/../../README"),
            "plan-encoded": _get(base, "/api/plan/..%2f..%2fREADME"),
            "post": _get(base, "/api/", method="POST"),
        }
        pages = ["/", "/api/", "/plan/plans/s1", "/api/plan/plans/s1", "/healthz"]
        lab.pages = {p: _get(base, p) for p in pages}  # type: ignore[attr-defined]
        lab.pages["/metrics"] = _get(f"http://127.0.0.1:{metrics}", "/metrics")  # type: ignore[attr-defined]
    finally:
        daemon.terminate()
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()
    lab.pwned = target.exists()  # type: ignore[attr-defined]
    base_text = plan_text("m1")
    owned = base_text + (
        "frozen: {hash: 'sha256:" + "0" * 64 + "', at: '2026-01-01T00:00:00Z'}\n"
        "approval: {status: verified, by: alice@example.com}\n"
        "execution:\n  status: executing\n  actions:\n  - {id: 1, key: 'step:x', status: succeeded, attempts: 1}\n"
    )
    calls = {
        "slug-dotdot": {"plan": base_text, "slug": "../evil"},
        "slug-git": {"plan": base_text, "slug": "x/.git/hooks"},
        "slug-newline": {"plan": base_text, "slug": "ok\nPlan-Status: approved"},
        "owned-blocks": {"plan": owned, "slug": "owned"},
        "approved": {"plan": plan_text("ap", status="approved"), "slug": "ap"},
    }
    head = lab.head()
    answers, _stderr = mcpkit.session(lab, [("submit", a) for a in calls.values()])
    lab.mcp = dict(zip(calls, answers, strict=True))  # type: ignore[attr-defined]
    lab.moved = (
        lab.head() != head
        or bool(lab.git("status", "--porcelain"))
        or (lab.repo / "evil").exists()
        or (lab.repo.parent / "evil").exists()
    )  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-endpoints", _build)


def test_the_plan_ran_with_its_secret(lab: Lab) -> None:
    assert lab.plan("s1")["plan"]["status"] == "completed"
    assert json.loads(lab.calls("s1")[0]["stdin"])["tok"] == S


@pytest.mark.parametrize("vid", UI)
def test_the_page_reads_nothing_else(lab: Lab, vid: str) -> None:
    if vid == "secret":
        for page, (code, body) in lab.pages.items():  # type: ignore[attr-defined]
            assert code == 200 or page == "/healthz", (page, code, body[:300])
            assert S not in body and S.lower() not in body.lower(), page
        return
    code, body = lab.ui[vid]  # type: ignore[attr-defined]
    if vid == "post":
        assert code == 405, (code, body[:300])
        return
    assert code == 404, (code, body[:300])
    assert "plans\n" not in body  # README's text
    if vid == "commit-option":
        assert not lab.pwned  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", MCP)
def test_submit_refuses(lab: Lab, vid: str) -> None:
    answer = lab.mcp[vid]  # type: ignore[attr-defined]
    assert answer is not None
    result = answer.get("result") or {}
    assert result.get("isError") is True, answer
    text = result["content"][0]["text"]
    assert '"code": "E_' in text, text
    assert not lab.moved  # type: ignore[attr-defined]
