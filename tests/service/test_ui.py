"""The read-only page (``ui.listen``) against a real daemon, a real git repo and, when one is
installed, a real headless Chromium driven by Playwright.

Every string the page shows from a plan, a commit or a tool output is hostile here: script
tags, a bidi override, a javascript: link in markdown. The page must show them as text,
run no script, change nothing, and tell a reviewer what waits for whom and what failed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

from controller.service.ui.server import CSP
from tests.support.daemonkit import free_port, running_daemon, wait_for_commit, wait_until
from tests.support.gitenv import commit_all, git, identity
from tests.support.gitkit import AGENT, ALICE

HOSTILE = "<script>alert(1)</script>\u202e[x](javascript:alert(2))<img src=x onerror=alert(3)>"
FAIL_TOOL = "import sys; sys.stderr.write('boom <script>alert(4)</script>'); sys.exit(3)"


def plan_text(name: str, tool: str = "greet", gate: bool = False) -> str:
    """A plan whose every author-written string is hostile (JSON strings are YAML)."""
    q = json.dumps
    second = f"  - id: 2\n    tool: {tool}\n    why: second\n    requires_approval: true\n"
    return textwrap.dedent(
        f"""\
        plan:
          name: {q(name)}
          task: {q("Task with " + HOSTILE)}
          status: pending_approval
        available_tools:
          - name: {tool}
        actions:
          - id: 1
            tool: {tool}
            why: {q(HOSTILE)}
            params: {{who: {q(HOSTILE)}}}
        """
    ) + (second + "    params: {}\n" if gate else "")


SOURCE = {
    "plan_version": 1,
    "goal": "SOURCE-GOAL",
    "inputs": {"who": "world"},
    "steps": [{"step_id": "s1", "tool": "greet", "args": {"who": "${inputs.who}"}}],
}


@pytest.fixture
def site(tmp_path: Path, repo: Path) -> Any:
    """A daemon with the page on, and plans that completed, failed, wait, and wait at a gate."""
    port = free_port()
    config = tmp_path / "plangate.yml"
    config.write_text(
        textwrap.dedent(
            f"""\
            repo: {repo}
            state_dir: {tmp_path / "state"}
            approval: {{approvers: ["alice@example.com"]}}
            tools:
              greet: {{kind: echo}}
              boom: {{kind: exec, argv: {json.dumps([sys.executable, "-c", FAIL_TOOL])}}}
            ui: {{listen: {port}}}
            """
        )
    )
    for slug, text in {
        "done": plan_text("Done " + HOSTILE),
        "broken": plan_text("Broken", tool="boom"),
        "waiting": plan_text("Waiting"),
        "gated": plan_text("Gated", gate=True),
    }.items():
        (repo / "plans" / slug).mkdir(parents=True)
        (repo / "plans" / slug / "PLAN.yml").write_text(text)
    commit_all(repo, "agent: four plans", AGENT)
    with running_daemon(config) as daemon:
        for slug in ("done", "broken", "waiting", "gated"):
            wait_for_commit(repo, f"plangate: freeze plans/{slug}")
        for slug in ("done", "broken", "gated"):
            path = repo / "plans" / slug / "PLAN.yml"
            path.write_text(
                path.read_text().replace("status: pending_approval", "status: approved")
            )
            commit_all(repo, f"approve {slug}", ALICE)
            outcome = {"done": "complete", "broken": "fail", "gated": "await-approval"}[slug]
            wait_for_commit(repo, f"plangate: {outcome} plans/{slug}")
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _get(base, "/api/")["counts"].get("awaiting_approval"), what="page")
        yield base, daemon, repo


def _get(base: str, path: str) -> Any:
    return httpx.get(base + path, timeout=10).json()


def test_overview_says_what_waits_for_whom_and_what_failed(site: Any) -> None:
    base, _, _ = site
    data = _get(base, "/api/")
    assert data["counts"] == {
        "completed": 1,
        "failed": 1,
        "pending_approval": 1,
        "awaiting_approval": 1,
    }
    waiting = {p["plan"]: p for s in data["sections"] for p in s["plans"]}
    assert waiting["plans/waiting"]["needs"]["who"] == ["alice@example.com"]
    assert "gate" in waiting["plans/gated"]["needs"]["missing"]
    assert [(f["plan"], f["code"]) for f in data["failures"]] == [("plans/broken", "E_TOOL_FAILED")]
    page = httpx.get(base + "/").text
    assert "plans/broken" in page and "E_TOOL_FAILED" in page and "alice@example.com" in page


def test_plan_page_shows_actions_approvals_and_log(site: Any, repo: Path) -> None:
    base, _, _ = site
    data = _get(base, "/api/plan/plans/done")
    assert data["row"]["status"] == "completed"
    assert data["document"]["approval"]["by"] == "alice@example.com"
    assert data["document"]["execution"]["actions"][0]["status"] == "succeeded"
    assert "# " in data["log"]  # EXECUTION_LOG.md, as committed
    html = httpx.get(base + "/plan/plans/done").text
    commit = data["document"]["approval"]["commit"]
    assert f'href="/commit/{commit}"' in html
    shown = httpx.get(base + f"/commit/{commit}").text
    assert "approve done" in shown and "alice@example.com" in shown
    assert "succeeded" in html and "ms" in html


def test_a_held_folders_page_reads_no_file_of_it(site: Any, repo: Path) -> None:
    """Round 73: the page and ``/api/plan/`` of a folder the row holds E_PLAN_AMBIGUOUS
    (``PLAN.yml`` beside ``PLAN.yaml``) take the row's verdict: the code and why, no plan
    text, no hash (they read one file, ``PLAN.yaml``'s, which no other reader reads)."""
    base, _, _ = site
    folder = repo / "plans" / "held"
    folder.mkdir()
    (folder / "PLAN.yml").write_text(plan_text("HELD-YML"))
    (folder / "PLAN.yaml").write_text(
        plan_text("HELD-YAML").replace("pending_approval", "approved")
    )
    commit_all(repo, "agent: two plan files", AGENT)
    wait_until(lambda: "plans/held" in json.dumps(_get(base, "/api/")), what="the held row")
    data = _get(base, "/api/plan/plans/held")
    assert data["row"]["code"] == "E_PLAN_AMBIGUOUS", data["row"]
    assert not data.get("document") and not data.get("hash") and not data["row"]["hash"], data
    assert [p for p in data["problems"] if p["code"] == "E_PLAN_AMBIGUOUS"], data
    html = httpx.get(base + "/plan/plans/held").text
    assert "E_PLAN_AMBIGUOUS" in html and "HELD-Y" not in html and "Task with" not in html


def test_a_held_sources_page_says_why_and_reads_no_file_of_it(site: Any, repo: Path) -> None:
    """Round 74: the page and ``/api/plan/`` of a ``PLAN.json`` the converter holds (beside a
    symlink ``plan.yml``) said ``E_UNSAFE_PATH: no readable PLAN file`` with no code, where a
    held PLAN.yml's say E_PLAN_AMBIGUOUS and why: the row holds it, the page takes it; the
    agent's log beside it is no record of the controller's, never shown."""
    base, _, _ = site
    folder = repo / "plans" / "src"
    folder.mkdir()
    (folder / "PLAN.json").write_text(json.dumps(SOURCE, indent=1))
    (folder / "plan.yml").symlink_to("../done/PLAN.yml")
    (folder / "EXECUTION_LOG.md").write_text("# Approved by alice, completed FORGED-LOG\n")
    commit_all(repo, "agent: a source beside a claim", AGENT)
    wait_until(lambda: "plans/src" in json.dumps(_get(base, "/api/")), what="the held row")
    data = _get(base, "/api/plan/plans/src")
    assert data["row"]["code"] == "E_PLAN_AMBIGUOUS", data["row"]
    assert not data.get("document") and not data.get("hash") and not data["row"]["hash"], data
    why = [p["message"] for p in data["problems"] if p["code"] == "E_PLAN_AMBIGUOUS"]
    assert why and "plan.yml" in why[0], data
    assert not data.get("log") and "FORGED-LOG" not in json.dumps(data), data
    html = httpx.get(base + "/plan/plans/src").text
    assert "E_PLAN_AMBIGUOUS" in html and "SOURCE-GOAL" not in html and "FORGED-LOG" not in html


def test_an_oversized_plans_page_says_too_large_as_its_row_does(site: Any, repo: Path) -> None:
    """Round 117, page-oversized-plan-misdiagnosed: a 2 MiB regular PLAN.yml is
    ``E_PLAN_TOO_LARGE`` in its row, and ``/api/plan/`` and the page said ``E_UNSAFE_PATH``
    "no readable PLAN file" (a link's diagnosis): they now give the row's, its size, the
    limit and the remedy, and nothing else."""
    base, _, _ = site
    folder = repo / "plans" / "big"
    folder.mkdir()
    (folder / "PLAN.yml").write_text(plan_text("Big") + "# " + "x" * (2 * 1024 * 1024) + "\n")
    commit_all(repo, "agent: a big plan", AGENT)
    wait_until(lambda: "plans/big" in json.dumps(_get(base, "/api/")), what="the big row")
    data = _get(base, "/api/plan/plans/big")
    assert data["row"]["code"] == "E_PLAN_TOO_LARGE", data["row"]
    assert {p["code"] for p in data["problems"]} == {"E_PLAN_TOO_LARGE"}, data["problems"]
    said = data["problems"][0]["message"]
    assert "over the limit of 1048576" in said and "limits.max_plan_bytes" in said, said
    html = httpx.get(base + "/plan/plans/big").text
    assert "E_PLAN_TOO_LARGE" in html and "E_UNSAFE_PATH" not in html, html[-1500:]
    assert "no readable PLAN file" not in html


def test_a_log_under_another_spelling_is_noted_on_the_page(site: Any, repo: Path) -> None:
    """Round 73: a forged log committed as ``execution_log.md`` beside a completed plan (the
    plan's log on a case-insensitive checkout) is noted, never shown."""
    base, _, _ = site
    (repo / "plans/done/execution_log.md").write_text("# Approved by bob FORGED-LOG\n")
    commit_all(repo, "agent: notes", AGENT)

    def noted() -> list[Any]:
        found = _get(base, "/api/plan/plans/done")["problems"]
        return [p for p in found if "execution_log.md" in p["message"]]

    wait_until(noted, what="the note")
    assert noted()[0]["code"] == "E_OWNED_BLOCK_CHANGED"
    assert "FORGED-LOG" not in httpx.get(base + "/plan/plans/done").text


def test_every_hostile_string_is_text_and_no_script_can_run(site: Any) -> None:
    base, _, _ = site
    for path in ("/", "/plan/plans/done", "/plan/plans/broken", "/audit"):
        response = httpx.get(base + path)
        body = response.text
        assert response.status_code == 200
        tags = re.findall(r"<([a-zA-Z]+)", body)
        assert not {t.lower() for t in tags} & {"script", "img", "iframe", "object"}, path
        assert 'href="javascript' not in body.lower()
        assert "\u202e" not in body
        assert "script-src" not in response.headers["content-security-policy"]
        assert response.headers["content-security-policy"].startswith("default-src 'none'")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in httpx.get(base + "/plan/plans/done").text
    assert "\\u202e" in httpx.get(base + "/plan/plans/done").text


def test_no_request_changes_anything(site: Any, repo: Path) -> None:
    base, _, _ = site
    head = git(repo, "rev-parse", "HEAD")
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response = httpx.request(method, base + "/plan/plans/waiting", content=b"status: approved")
        assert response.status_code == 405
    assert httpx.get(base + "/plan/../../../etc/passwd").status_code == 404
    assert httpx.get(base + "/plan/plans/nope").status_code == 404
    assert httpx.get(base + "/commit/--output=x").status_code == 404
    for name in ("HEAD^{tree}", "HEAD:plans/done/PLAN.yml"):  # round 111: no commit, 404
        sha = git(repo, "rev-parse", name).strip()
        assert httpx.get(base + "/commit/" + sha).status_code == 404
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_the_commit_page_shows_commits_only(repo: Path) -> None:
    """Round 111 (atk111b, ``commit-page-non-commit-object``): ``/commit/<sha>`` of a blob
    showed its bytes, of a tree its listing, as a "Commit" page. Only a commit's sha (full
    or a prefix) is shown; a blob, a tree or an annotated tag object is no such commit."""
    from controller.service.ui.server import _show_commit

    (repo / "notes.txt").write_text("commit " + "a" * 40 + "\n")
    commit_all(repo, "a note", ALICE)
    git(repo, "tag", "-a", "-m", "a tag", "v1", env=identity(*ALICE))
    sha = git(repo, "rev-parse", "HEAD").strip()
    shown = _show_commit(repo, sha)
    assert isinstance(shown, str) and "a note" in shown
    assert _show_commit(repo, sha[:7]) == shown
    for name in ("HEAD^{tree}", "HEAD:notes.txt", "v1"):
        assert _show_commit(repo, git(repo, "rev-parse", name).strip()) is None, name


def _raw(base: str, request: bytes) -> tuple[str, bytes]:
    """The status line and headers, and the body, of one request sent as bytes."""
    import socket

    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(request)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


def test_every_error_the_http_library_meets_has_the_pages_headers_and_shape(site: Any) -> None:
    """Round 111 (atk111b, ``page-stdlib-errors``): TRACE, CONNECT and a method with a control
    byte were 501, a 200 kB query 414, a 300 kB header or 2000 headers 431: the HTTP
    library's own HTML page, without the Content-Security-Policy, and under ``/api/`` not
    the one error shape. Each is the page's answer: any method but GET and HEAD is 405."""
    base, _, _ = site

    def req(method: str, path: str, extra: str = "") -> bytes:
        return f"{method} {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n".encode()

    cases = {
        "trace": (req("TRACE", "/api/"), 405),
        "connect": (b"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n", 405),
        "control": (req("G\x01T", "/api/"), 405),
        "post": (req("POST", "/api/", "Content-Length: 0\r\n"), 405),
        "query": (req("GET", "/api/?q=" + "q" * 200_000), 414),
        "header": (req("GET", "/api/", "X-Big: " + "h" * 300_000 + "\r\n"), 431),
        "headers": (req("GET", "/api/", "".join(f"X-{i}: v\r\n" for i in range(2000))), 431),
        "trace-page": (req("TRACE", "/"), 405),
        "version": (b"GET /api/ HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    }
    for name, (request, status) in cases.items():
        head, body = _raw(base, request)
        assert head.startswith(f"HTTP/1.1 {status} "), (name, head)
        assert f"Content-Security-Policy: {CSP}" in head, (name, head)
        assert "X-Content-Type-Options: nosniff" in head, (name, head)
        if status == 405:
            assert "Allow: GET, HEAD" in head, (name, head)
        if name in ("trace-page", "connect"):
            assert "text/html" in head and b"Error response" not in body, (name, body[:200])
            continue
        error = json.loads(body)
        assert error["ok"] is False and error["code"] == "E_USAGE", (name, error)
        assert error["path"] == "/api/" and error["remedy"], (name, error)


def test_a_missing_plan_answers_the_one_error_shape_with_a_remedy(site: Any) -> None:
    base, _, _ = site
    response = httpx.get(base + "/api/plan/plans/nope")
    assert response.status_code == 404
    assert response.json() == {
        "ok": False,
        "code": "E_NOT_FOUND",
        "message": "no plan 'plans/nope' on the watched branch",
        "path": "/api/plan/plans/nope",
        "line": None,
        "remedy": "check the path: GET /api/ lists the plans on the watched branch",
    }
    other = httpx.get(base + "/api/nothing-here").json()
    assert (other["code"], other["path"]) == ("E_NOT_FOUND", "/api/nothing-here")
    assert other["remedy"]


def test_bearer_token(tmp_path: Path, repo: Path) -> None:
    port = free_port()
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 's'}\ntools: {{greet: {{kind: echo}}}}\n"
        f"ui: {{listen: '127.0.0.1:{port}', token_env: PLANGATE_UI_TOKEN}}\n"
    )
    commit_all(repo, "empty", AGENT)
    with running_daemon(config, env={"PLANGATE_UI_TOKEN": "s3cret-token"}):
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _reachable(base), what="the page")
        assert httpx.get(base + "/").status_code == 401
        bad = {"Authorization": "Bearer wrong"}
        assert httpx.get(base + "/api/", headers=bad).status_code == 401
        good = {"Authorization": "Bearer s3cret-token"}
        # 503 "not ready" until the daemon's first pass publishes (round 95), then 200
        codes: list[int] = []

        def answered() -> bool:
            codes.append(httpx.get(base + "/api/", headers=good).status_code)
            return codes[-1] == 200

        wait_until(answered, what="the first snapshot")
        assert set(codes[:-1]) <= {503}, codes


def test_missing_token_refuses_to_start(tmp_path: Path, repo: Path) -> None:
    from tests.support.gitenv import run_cli

    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 's'}\n"
        f"ui: {{listen: {free_port()}, token_env: PLANGATE_UI_TOKEN}}\n"
    )
    commit_all(repo, "empty", AGENT)
    env = {k: v for k, v in os.environ.items() if k != "PLANGATE_UI_TOKEN"}
    os.environ.pop("PLANGATE_UI_TOKEN", None)
    result = run_cli("run", "--config", str(config), env=env, timeout=30)
    assert result.returncode == 2 and "PLANGATE_UI_TOKEN" in result.stderr


def _reachable(base: str) -> bool:
    try:
        httpx.get(base + "/", timeout=1)
    except httpx.HTTPError:
        return False
    return True


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium installed (apt install chromium)")
def test_a_reviewer_reads_the_pages_in_a_real_browser(site: Any, tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    base, _, _ = site
    shots = Path(os.environ.get("UI_SCREENSHOTS", tmp_path))
    dialogs: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(base + "/")
        text = page.inner_text("main")
        assert "awaiting approval (1)" in text and "pending approval (1)" in text
        assert "E_TOOL_FAILED" in text and "alice@example.com" in text
        page.screenshot(path=str(shots / "ui-overview.png"), full_page=True)
        page.click("text=plans/done")
        text = page.inner_text("main")
        assert "Done <script>alert(1)</script>" in text  # shown as text, not run
        assert "\\u202e" in text and "succeeded" in text and "Execution log" in text
        page.screenshot(path=str(shots / "ui-plan.png"), full_page=True)
        page.goto(base + "/plan/plans/broken")
        assert "E_TOOL_FAILED" in page.inner_text("main")
        page.goto(base + "/audit")
        wait_until(
            lambda: page.reload() or "being computed" not in page.inner_text("main"),
            what="the audit",
        )
        assert "no findings" in page.inner_text("main")
        page.screenshot(path=str(shots / "ui-audit.png"), full_page=True)
        browser.close()
    assert dialogs == []


def test_before_the_first_snapshot_every_route_says_not_ready(tmp_path: Path, repo: Path) -> None:
    """Round 95 (``page-startup-absent``): until the daemon publishes its first snapshot, no
    route says a plan is absent: every GET and HEAD is 503 with ``Retry-After``, under
    ``/api`` the one error shape with ``E_NOT_READY``; after a publish the same routes answer."""
    from controller.service.ui.data import UiData
    from controller.service.ui.server import serve
    from controller.settings import load_config

    port = free_port()
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\nui: {{listen: {port}}}\n")
    cfg = load_config(config)
    data = UiData(cfg, lambda: repo)
    server = serve(cfg, data, lambda: repo)
    base = f"http://127.0.0.1:{port}"
    try:
        for path in ("/api/", "/api/plan/plans/p", "/api/audit", "/api/nothing"):
            for method in ("GET", "HEAD"):
                r = httpx.request(method, base + path, timeout=10)
                assert r.status_code == 503 and r.headers["Retry-After"].isdigit(), (path, r)
            err = httpx.get(base + path, timeout=10).json()
            assert err["ok"] is False and err["code"] == "E_NOT_READY", err
            assert "history" in err["message"] and err["remedy"].startswith("retry"), err
        for path in ("/", "/plan/plans/p", "/audit", "/commit/" + "a" * 40):
            r = httpx.get(base + path, timeout=10)
            assert r.status_code == 503 and "Not ready" in r.text, (path, r.text[:500])
        # a first pass that failed is said, its message redacted, until a pass succeeds
        data.first_pass_failed("E_GIT", "git cannot read the repository: bad object")
        err = httpx.get(base + "/api/plan/plans/p", timeout=10).json()
        assert err["code"] == "E_NOT_READY" and "(E_GIT: git cannot read" in err["message"], err
        assert "E_GIT" in httpx.get(base + "/", timeout=10).text
        data.publish([])
        assert httpx.get(base + "/api/", timeout=10).status_code == 200
        assert httpx.get(base + "/api/plan/plans/p", timeout=10).status_code == 404
    finally:
        server.stop()
        data.close()
