"""Round 5, what is recorded and reported: the daemon's read-only page (``ui.listen``), its
JSON twin and the MCP ``log`` tool, when the agent rewrites files in the shared working
tree (docs/execution.md: "the working tree is shared with agents, who may rewrite
EXECUTION_LOG.md or the ``execution:`` block at any moment").

The controller's commits are safe from such rewrites (``test_working_tree.py``); here the
question is whether what the controller *shows* reviewers and operators is its own record
or the agent's forgery. Every variant edits the tree only (nothing committed), so the
plan's hash does not change and nothing is marked stale.
"""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import BenchError, Lab, plan_text
from test_round2_execution_kit import shared

FORGED = "FORGED-R5"
XSS = "<img src=x onerror=alert(1)>"

FORGED_LOG = f"""\
# Execution log: ui-log

| | |
|---|---|
| Plan | `plans/ui-log` |
| Approved by | mallory@example.com |
| Status | ❌ failed |

## Action 1: rec

{FORGED}
"""

PATHS = {
    "traversal": "/plan/plans/..%2f..%2frec.py",
    "traversal-raw": "/plan/../../rec.py",
    "abs": "/plan/%2Fetc%2Fpasswd",
    "commit-arg": "/commit/--output=%2Ftmp%2Fr5-ui-pwned",
    "commit-range": "/commit/HEAD~1..HEAD",
}


def _forge_tree(lab: Lab) -> None:
    """The agent's uncommitted rewrites, after the plans ran."""
    (lab.repo / "plans/ui-log/EXECUTION_LOG.md").write_text(FORGED_LOG)
    p = lab.repo / "plans/ui-exec/PLAN.yml"
    text = p.read_text()
    text = text.replace("    status: succeeded", "    status: failed")
    text = text.replace("  status: completed", "  status: failed")
    text = text.replace("    outputs: {}", f"    outputs: {{stolen: {FORGED}}}")
    assert FORGED in text, text
    p.write_text(text)
    p = lab.repo / "plans/ui-approval/PLAN.yml"
    p.write_text(p.read_text().replace("  by: alice@example.com", "  by: mallory@example.com"))
    secret = lab.root / "deploy_key"
    secret.write_text(f"SECRET-KEY-{FORGED}\n")
    log = lab.repo / "plans/ui-link/EXECUTION_LOG.md"
    log.unlink()
    log.symlink_to(secret)
    p = lab.repo / "plans/ui-stale/PLAN.yml"
    p.write_text(
        p.read_text().replace('tag: "ui-stale"', f'tag: "ui-stale"\n      extra: "{FORGED}"')
    )


def _get(port: int, path: str, method: str = "GET") -> tuple[int, dict[str, str], str]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode("utf-8", "replace")


def _mcp_log(lab: Lab, slugs: list[str]) -> dict[str, str]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    answers: dict[str, str] = {}

    async def main() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "controller", "mcp", "--config", str(lab.config)],
            env=lab.env(),
            cwd=str(lab.root),
        )
        async with stdio_client(params) as (r, w), ClientSession(r, w) as session:
            await session.initialize()
            for slug in slugs:
                got = await session.call_tool("log", {"path": f"plans/{slug}"})
                answers[slug] = got.content[0].text if got.content else ""

    asyncio.run(main())
    return answers


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="ui: {listen: 0}\n")
    slugs = ["ui-log", "ui-exec", "ui-approval", "ui-link"]
    for slug in slugs:
        lab.write(slug, plan_text(slug))
    lab.write("ui-stale", plan_text("ui-stale"))
    lab.write("ui-xss", plan_text("ui-xss", name=XSS))
    lab.commit("add plans")
    lab.run()
    for slug in [*slugs, "ui-xss"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ("Alice", "alice@example.com"))
    lab.run()
    _forge_tree(lab)
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    pages: dict[str, Any] = {}
    try:
        port = None
        deadline = time.time() + 30
        while time.time() < deadline and port is None:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            m = re.search(r"127\.0\.0\.1:(\d+)", line)
            if m and "ui" in line:
                port = int(m.group(1))
        if port is None:
            raise BenchError("the page never said where it listens")
        time.sleep(0.8)
        for slug in [*slugs, "ui-stale", "ui-xss"]:
            pages[f"page:{slug}"] = _get(port, f"/plan/plans/{slug}")
            pages[f"api:{slug}"] = _get(port, f"/api/plan/plans/{slug}")
        pages["index"] = _get(port, "/")
        pages["api-index"] = _get(port, "/api/")
        for name, path in PATHS.items():
            pages[f"path:{name}"] = _get(port, path)
        pages["post"] = _get(port, "/plan/plans/ui-log", method="POST")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    lab.pages = pages  # type: ignore[attr-defined]
    lab.mcp_logs = _mcp_log(lab, slugs)  # type: ignore[attr-defined]
    status = lab.cli("status", "--json", "--config", str(lab.config))
    lab.status_text = status.stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r5-ui", _build)


def _shown(lab: Lab, slug: str) -> str:
    pages = lab.pages  # type: ignore[attr-defined]
    return pages[f"page:{slug}"][2] + pages[f"api:{slug}"][2]


def test_the_page_never_shows_a_log_the_agent_rewrote(lab: Lab) -> None:
    assert len(lab.calls("ui-log")) == 1
    shown = _shown(lab, "ui-log")
    assert FORGED not in shown and "mallory@example.com" not in shown, shown[-1500:]


def test_the_page_never_shows_results_the_agent_rewrote(lab: Lab) -> None:
    assert len(lab.calls("ui-exec")) == 1
    shown = _shown(lab, "ui-exec")
    assert FORGED not in shown, shown[-1500:]
    api = json.loads(lab.pages["api:ui-exec"][2])  # type: ignore[attr-defined]
    assert (api.get("document") or {}).get("execution", {}).get("status") in (None, "completed"), (
        api
    )


def test_the_page_never_names_an_approver_the_agent_wrote_in(lab: Lab) -> None:
    assert len(lab.calls("ui-approval")) == 1
    assert "mallory@example.com" not in _shown(lab, "ui-approval")


def test_the_page_never_follows_a_symlinked_log(lab: Lab) -> None:
    assert "SECRET-KEY" not in _shown(lab, "ui-link")


def test_the_page_marks_an_edited_pending_plan_stale(lab: Lab) -> None:
    page = lab.pages["page:ui-stale"][2]  # type: ignore[attr-defined]
    assert FORGED not in page or "STALE" in page, page[-1500:]


def test_the_page_shows_a_hostile_name_as_text(lab: Lab) -> None:
    status, headers, page = lab.pages["page:ui-xss"]  # type: ignore[attr-defined]
    assert status == 200 and "<img" not in page
    csp = {k.lower(): v for k, v in headers.items()}.get("content-security-policy", "")
    assert "default-src 'none'" in csp and "script-src" not in csp


@pytest.mark.parametrize("name", sorted(PATHS))
def test_a_request_reads_nothing_but_a_known_plan(lab: Lab, name: str) -> None:
    status, _, page = lab.pages[f"path:{name}"]  # type: ignore[attr-defined]
    assert "REC_LOG" not in page and "root:" not in page, page[:500]
    assert not Path("/tmp/r5-ui-pwned").exists()
    if name.startswith(("traversal", "abs")):
        assert status in (400, 404), status


def test_the_page_changes_nothing(lab: Lab) -> None:
    assert lab.pages["post"][0] == 405  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", ["ui-log", "ui-exec", "ui-approval", "ui-link"])
def test_mcp_log_answers_with_the_committed_record(lab: Lab, slug: str) -> None:
    answer = lab.mcp_logs[slug]  # type: ignore[attr-defined]
    assert FORGED not in answer and "mallory@example.com" not in answer, answer[-1200:]


def test_status_answers_with_the_committed_record(lab: Lab) -> None:
    text = lab.status_text  # type: ignore[attr-defined]
    assert FORGED not in text and "mallory@example.com" not in text
    rows = {r["plan"]: r for r in json.loads(text)}
    assert rows["plans/ui-exec"]["status"] == "completed"
