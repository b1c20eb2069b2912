"""`plangate mcp` end to end: the official MCP client (mcp.client.stdio) drives the real
server process against a real daemon (`plangate run`). An agent reads the catalog,
validates and submits a plan; a human approves it with `plangate approve`; the agent waits
and reads the outputs. The agent has no way to approve."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.support.daemonkit import running_daemon, wait_for_commit
from tests.support.gitenv import ROOT, commit_all, git, identity, run_cli

AGENT = ("Agent Smith", "agent@example.com")
ALICE = ("Alice", "alice@example.com")

PLAN = """\
# written by the agent
plan:
  name: "Greet"
  task: "Say hello to the world"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "Greet the world"
    params: {name: world}
    outputs:
      - {name: greeting, path: "$.name"}
"""

CONTRACT = json.dumps(
    {
        "plan_version": 1,
        "goal": "Greet twice",
        "inputs": {"who": "bob"},
        "steps": [
            {
                "step_id": "a",
                "tool": "greet",
                "args": {"name": "${inputs.who}"},
                "description": "Greet bob",
            },
            {"step_id": "b", "tool": "nope", "args": {}, "description": "Unknown tool"},
        ],
    }
)


def write_config(tmp_path: Path, repo: Path, agent: bool = True) -> Path:
    config = tmp_path / "plangate.yml"
    lines = [
        f"repo: {repo}",
        "approval:",
        '  approvers: ["alice@example.com"]',
        "tools:",
        '  greet: {kind: echo, description: "Returns its params"}',
    ]
    if agent:
        lines += ["agent:", f'  identity: {{name: "{AGENT[0]}", email: "{AGENT[1]}"}}']
    config.write_text("\n".join(lines) + "\n")
    return config


Session = Any


def with_agent(config: Path, body: Callable[[Session], Awaitable[None]]) -> None:
    """Run ``body`` with an MCP client session on `plangate mcp --config CONFIG`."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {
        k: os.environ[k] for k in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM") if k in os.environ
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "controller", "mcp", "--config", str(config)],
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=str(config.parent),
    )

    async def main() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await body(session)

    anyio.run(main)


async def call(session: Session, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return dict(result.structured_content)


async def call_error(session: Session, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert result.is_error
    text = result.content[0].text
    return dict(json.loads(text[text.index("{") :]))  # after the SDK's "Error ...: " prefix


def test_agent_submits_human_approves_agent_waits_and_reads_outputs(
    repo: Path, tmp_path: Path
) -> None:
    config = write_config(tmp_path, repo)
    seen: dict[str, Any] = {}

    async def agent_writes(session: Session) -> None:
        names = {t.name for t in (await session.list_tools()).tools}
        assert names == {"catalog", "validate", "submit", "status", "log", "wait"}
        catalog = await call(session, "catalog")
        assert [t["name"] for t in catalog["tools"]] == ["greet"]
        checked = await call(session, "validate", plan=CONTRACT)
        assert checked["valid"] is False and checked["format"] == "plan-contract"
        (error,) = checked["errors"]
        assert (error["code"], error["path"]) == ("E_TOOL_UNKNOWN", "actions[1].tool")
        assert error["remedy"] and error["line"] and "plan_yml" in checked
        assert (await call(session, "validate", plan=PLAN))["valid"] is True
        # the folder it will be submitted to: its approvals (round 122)
        placed = await call(session, "validate", plan=PLAN, slug="greet")
        assert placed["approvals_needed"]["summary"].startswith("1 approval")
        seen["submit"] = await call(session, "submit", plan=PLAN, slug="greet")

    async def agent_waits(session: Session) -> None:
        status = "pending_approval"
        while status not in ("completed", "failed"):
            waited = await call(session, "wait", path="plans/greet", status=status, timeout=60)
            assert waited["changed"], waited
            status = waited["status"]
        seen["log"] = await call(session, "log", path="plans/greet")
        seen["status"] = await call(session, "status", path="plans/greet")

    with running_daemon(config) as daemon:
        daemon.wait_started()
        with_agent(config, agent_writes)
        submitted = seen["submit"]
        assert submitted["path"] == "plans/greet" and submitted["hash"].startswith("sha256:")
        assert submitted["risk"] == "medium" and submitted["branch"] == "main"
        needed = submitted["approvals_needed"]
        assert needed["not_from"] == [AGENT[1]] and needed["summary"].startswith("1 approval")
        author = git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", submitted["commit"])
        assert author.strip() == f"{AGENT[0]} <{AGENT[1]}>|{AGENT[0]} <{AGENT[1]}>"
        sent = git(repo, "show", f"{submitted['commit']}:plans/greet/PLAN.yml")
        assert sent == PLAN  # the agent's text as sent, comments included
        wait_for_commit(repo, "plangate: freeze plans/greet")
        approved = run_cli("approve", "plans/greet", cwd=repo, env=identity(*ALICE))
        assert approved.returncode == 0, approved.stderr
        with_agent(config, agent_waits)
        assert daemon.stop() == 0
    log = seen["log"]
    assert log["status"] == "completed" and log["outputs"] == {"1": {"greeting": "world"}}
    assert "alice@example.com" in log["execution_log"]
    (row,) = seen["status"]["plans"]
    assert row["status"] == "completed" and row["approver"] == ALICE[1]


def test_submit_for_a_pull_request_leaves_the_watched_branch_alone(
    repo: Path, tmp_path: Path
) -> None:
    config = write_config(tmp_path, repo)
    before = git(repo, "rev-parse", "main").strip()
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["pr"] = await call(
            session,
            "submit",
            plan=CONTRACT.replace('"nope"', '"greet"'),
            slug="twice",
            pull_request=True,
            note="for review",
        )
        seen["bad"] = await call_error(session, "submit", plan=PLAN, slug="../escape")
        seen["approved"] = await call_error(
            session, "submit", plan=PLAN.replace("pending_approval", "approved"), slug="x"
        )
        seen["invalid"] = await call(session, "submit", plan=CONTRACT, slug="broken")
        # round 118 suspected a 2 MB note was committed whole: the body is cut
        seen["long-note"] = await call(
            session, "submit", plan=PLAN, slug="noted", note="n" * 9000, pull_request=True
        )
        # a second version goes on top of the pull request's branch, which follows it
        seen["pr2"] = await call(
            session, "submit", plan=PLAN, slug="twice", pull_request=True, note="n" * 2000
        )

    with_agent(config, body)
    assert git(repo, "rev-parse", "main").strip() == before
    message = git(repo, "log", "-1", "--format=%B", seen["long-note"]["commit"])
    assert "n" * 1900 in message and len(message) < 2100 and "…" in message, len(message)
    assert git(repo, "rev-parse", "plangate/twice~1").strip() == seen["pr"]["commit"]
    assert git(repo, "rev-parse", "plangate/twice").strip() == seen["pr2"]["commit"]
    assert seen["pr"]["branch"] == "plangate/twice" and seen["pr"]["format"] == "plan-contract"
    shown = git(repo, "show", f"{seen['pr']['commit']}:plans/twice/PLAN.yml")
    assert '"$<inputs.who>"' in shown and 'status: "pending_approval"' in shown
    assert (
        git(repo, "log", "-1", "--format=%s", seen["pr"]["commit"]).strip()
        == "Submit plan plans/twice"
    )
    assert seen["bad"]["code"] == "E_USAGE" and set(seen["bad"]) >= {"ok", "remedy", "line", "path"}
    assert seen["approved"]["code"] == "E_ILLEGAL_TRANSITION"
    assert seen["invalid"]["submitted"] is False
    assert seen["invalid"]["errors"][0]["code"] == "E_TOOL_UNKNOWN"
    assert "broken" not in git(repo, "ls-tree", "-r", "--name-only", "main")


def test_without_an_agent_identity_submit_is_refused(repo: Path, tmp_path: Path) -> None:
    config = write_config(tmp_path, repo, agent=False)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["error"] = await call_error(session, "submit", plan=PLAN, slug="greet")

    with_agent(config, body)
    assert seen["error"]["code"] == "E_CONFIG_INVALID" and "agent" in seen["error"]["remedy"]


def test_the_agent_identity_cannot_be_the_controllers(tmp_path: Path, repo: Path) -> None:
    config = write_config(tmp_path, repo, agent=False)
    config.write_text(
        config.read_text() + 'agent: {identity: {name: x, email: "plangate@localhost"}}\n'
    )
    result = run_cli("validate", "--config", str(config), str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2 and "E_CONFIG_INVALID" in result.stderr


def test_a_submission_never_leaves_the_tree_behind_a_controller_commit(
    repo: Path, tmp_path: Path, monkeypatch: Any
) -> None:
    """The controller may freeze a submitted plan (commit on top and write its version)
    between the agent's commit and the agent's write of the working tree. The tree must end
    as the branch head has the plan, never with the submitted bytes over the frozen ones (the
    plan would then wait forever on an edit nobody made)."""
    from controller.git.gitrepo import GitRepo
    from controller.git.records import Person
    from controller.service.agentapi import AgentApi
    from controller.settings import load_config

    real = GitRepo.commit_files
    frozen = PLAN.replace("# written by the agent\n", "# frozen by the controller\n")

    def then_the_controller_commits(self: GitRepo, **kwargs: Any) -> str | None:
        sha = real(self, **kwargs)
        # the controller commits off-index (the submit holds index.lock until its own
        # writes: round 83), then writes its version
        real(
            GitRepo(repo), branch="main", parent=sha,
            files={"plans/greet/PLAN.yml": frozen.encode()},
            message="plangate: freeze plans/greet", author=Person(*AGENT),
        )  # fmt: skip
        (repo / "plans/greet").mkdir(parents=True, exist_ok=True)
        (repo / "plans/greet/PLAN.yml").write_text(frozen)
        return sha

    monkeypatch.setattr(GitRepo, "commit_files", then_the_controller_commits)
    api = AgentApi(load_config(write_config(tmp_path, repo)))
    try:
        submitted = api.submit(PLAN, "greet")
    finally:
        api.close()
    assert git(repo, "rev-parse", "HEAD").strip() != submitted["commit"]
    assert (repo / "plans/greet/PLAN.yml").read_text() == frozen
    assert git(repo, "status", "--porcelain").strip() == ""


def test_arguments_of_the_wrong_type_are_the_error_shape(repo: Path, tmp_path: Path) -> None:
    """Arguments the tools' parameters refuse (round 61) are ``E_USAGE`` in the documented
    shape, naming the argument, with a remedy: never the SDK's validation text or a URL."""
    config = write_config(tmp_path, repo)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["slug"] = await call_error(session, "submit", plan=PLAN, slug=123)
        seen["plan"] = await call_error(session, "validate", plan={"plan": {"name": "x"}})
        seen["timeout"] = await call_error(session, "wait", path="plans/x", timeout="soon")
        seen["missing"] = await call_error(session, "log")

    with_agent(config, body)
    for argument, error in seen.items():
        name = "path" if argument == "missing" else argument
        assert error["ok"] is False and error["code"] == "E_USAGE", error
        assert error["path"] == name and name in error["message"], error
        assert error["remedy"] and "pydantic" not in json.dumps(error), error
    assert "must be a string" in seen["slug"]["message"]
    assert "is required" in seen["missing"]["message"]


def test_a_tool_the_server_lacks_is_e_usage_naming_the_tools(repo: Path, tmp_path: Path) -> None:
    """Round 111 (atk111b): ``tools/call`` of ``approve`` (or any name the server lacks) was
    "Unknown tool: approve", no code and no remedy. It is E_USAGE in the error shape, its
    remedy listing the tools; the session goes on."""
    config = write_config(tmp_path, repo)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["approve"] = await call_error(session, "approve", path="plans/x")
        seen["odd"] = await call_error(session, "{no such}" + "x" * 500)
        seen["catalog"] = await call(session, "catalog")

    with_agent(config, body)
    for key in ("approve", "odd"):
        error = seen[key]
        assert error["ok"] is False and error["code"] == "E_USAGE", error
        assert "no such tool" in error["message"] and len(error["message"]) < 300, error
        assert "catalog, validate, submit, status, log, wait" in error["remedy"], error
    assert "tools" in seen["catalog"]


def test_mcp_arguments_are_never_converted_and_a_slug_keeps_out_of_other_plans(
    repo: Path, tmp_path: Path
) -> None:
    """Round 104: the SDK's lax mode read ``pull_request: 1``/``"false"`` as a flag and
    ``timeout: true``/``"1"`` as one second; ``submit`` put ``done/x`` among a completed
    plan's files. Each is E_USAGE, nothing committed; a slug grouping plans under a folder
    that holds none, and a whole-number timeout, still work."""
    (repo / "plans" / "done").mkdir(parents=True)
    (repo / "plans" / "done" / "PLAN.yml").write_text(
        PLAN.replace("status: pending_approval", "status: completed")
    )
    (repo / "plans" / "md").mkdir()
    (repo / "plans" / "md" / "plan.MD").write_text("# t\n\n## Steps\n")
    commit_all(repo, "plans", AGENT)
    head = git(repo, "rev-parse", "HEAD")
    config = write_config(tmp_path, repo)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        for value in (1, "false", "true", 0):
            seen[f"pr {value!r}"] = await call_error(
                session, "submit", plan=PLAN, slug="x", pull_request=value
            )
        for value in (True, "1", "soon"):
            seen[f"timeout {value!r}"] = await call_error(
                session, "wait", path="plans/done", timeout=value
            )
        for slug in ("done/x", "done/a/b", "md/x"):
            seen[slug] = await call_error(session, "submit", plan=PLAN, slug=slug)
        assert git(repo, "rev-parse", "HEAD") == head  # nothing committed so far
        waited = await call(session, "wait", path="plans/done", timeout=0)
        assert waited["changed"] is False  # a whole number is a number
        grouped = await call(session, "submit", plan=PLAN, slug="team/greet")
        assert grouped["file"] == "plans/team/greet/PLAN.yml"

    with_agent(config, body)
    for what, error in seen.items():
        assert error["code"] == "E_USAGE", (what, error)
    assert seen["pr 1"]["path"] == "pull_request" and "true or false" in seen["pr 1"]["message"]
    assert seen["timeout '1'"]["path"] == "timeout"
    assert "plans/done is a plan's folder" in seen["done/a/b"]["message"]
    assert "plans/md is a plan's folder" in seen["md/x"]["message"]
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD", "plans/done").split() == [
        "plans/done/PLAN.yml"
    ]


def test_a_submit_slug_keeps_out_of_other_plans_by_any_spelling_and_either_way(
    repo: Path, tmp_path: Path
) -> None:
    """Round 106: the own-folder rule above the slug compares folders as checkouts do
    (``done./x`` IS ``done/x`` on NTFS, ``cap/x`` is under ``Cap``), a folder holding a
    source takes no PLAN.yml beside it, and a new plan never encloses another plan."""
    from controller.commands._shared import required_config
    from controller.errors import UsageError
    from controller.service.agentapi import AgentApi

    for folder, name in (("done", "PLAN.yml"), ("Cap", "PLAN.yml"), ("inner/x", "PLAN.yml")):
        (repo / "plans" / folder).mkdir(parents=True)
        (repo / "plans" / folder / name).write_text(PLAN)
    (repo / "plans" / "src").mkdir()
    (repo / "plans" / "src" / "PLAN.json").write_text('{"steps": []}')
    commit_all(repo, "plans", AGENT)
    head = git(repo, "rev-parse", "HEAD").strip()
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    said = {}
    try:
        for slug in ("done./x", "cap/x", "src", "inner"):
            with pytest.raises(UsageError) as caught:
                api.submit(PLAN, slug)
            said[slug] = caught.value.message
        assert api.submit(PLAN, "inner/y")["file"] == "plans/inner/y/PLAN.yml"
    finally:
        api.close()
    assert "plans/done is a plan's folder" in said["done./x"]
    assert "(it is plans/done. on some checkouts)" in said["done./x"]
    assert "plans/Cap is a plan's folder" in said["cap/x"]
    assert "holds a plan source" in said["src"]
    assert "holds the plan plans/inner/x below it" in said["inner"]
    assert git(repo, "rev-list", "--count", f"{head}..HEAD").strip() == "1"  # inner/y alone


def test_validate_of_an_oversized_plan_is_plan_too_large(repo: Path, tmp_path: Path) -> None:
    """The agent's ``validate`` and ``submit`` check a plan's size as ``plangate validate``
    does a file's (round 61: 3 MB was read, then called prose)."""
    config = write_config(tmp_path, repo)
    huge = PLAN + "# " + "x" * 2_000_000 + "\n"
    (tmp_path / "PLAN.yml").write_text(huge)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["validate"] = await call(session, "validate", plan=huge)
        seen["submit"] = await call_error(session, "submit", plan=huge, slug="huge")

    with_agent(config, body)
    cli = run_cli("validate", "--json", str(tmp_path / "PLAN.yml"), cwd=tmp_path)
    expected = json.loads(cli.stdout)["errors"][0]
    (error,) = seen["validate"]["errors"]
    assert seen["validate"]["valid"] is False
    assert error["code"] == expected["code"] == "E_PLAN_TOO_LARGE", error
    assert error["message"] == expected["message"]
    assert seen["submit"]["code"] == "E_PLAN_TOO_LARGE"
    assert "plans/huge/PLAN.yml" not in git(repo, "ls-tree", "-r", "--name-only", "main")


def test_a_yaml_plan_yaml_cannot_read_is_its_yaml_error_as_the_cli_says(
    repo: Path, tmp_path: Path
) -> None:
    """Round 111 (atk111b, ``huge-int-unlocated``): a PLAN.yml holding a 5001-digit number
    was E_PARSE_NONJSON "not a plan: expected one JSON object" by MCP, and E_YAML_PARSE
    without a line, with Python's ``sys.set_int_max_str_digits`` advice, by the CLI. Both
    say E_YAML_PARSE at the number's line, with plangate's remedy; nothing is committed."""
    config = write_config(tmp_path, repo)
    text = PLAN.replace("params: {name: world}", "params: {name: world, n: 1" + "0" * 5000 + "}")
    (tmp_path / "PLAN.yml").write_text(text)
    line = text[: text.index("n: 1")].count("\n") + 1
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["validate"] = await call(session, "validate", plan=text)
        seen["submit"] = await call_error(session, "submit", plan=text, slug="bigint")

    with_agent(config, body)
    cli = run_cli("validate", "--json", str(tmp_path / "PLAN.yml"), cwd=tmp_path)
    (expected,) = json.loads(cli.stdout)["errors"]
    (error,) = seen["validate"]["errors"]
    for said in (expected, error, seen["submit"]):
        assert said["code"] == "E_YAML_PARSE" and said["line"] == line, said
        assert "too long to read as a number" in said["message"], said
        assert "set_int_max_str_digits" not in json.dumps(said), said
        assert "quote the value" in said["remedy"], said
    assert "plans/bigint/PLAN.yml" not in git(repo, "ls-tree", "-r", "--name-only", "main")


def test_a_problems_own_remedy_reaches_the_agent_as_the_cli_gives_it(
    repo: Path, tmp_path: Path
) -> None:
    """Round 116: MCP answered every problem with its code's generic remedy, dropping the
    one the reader gave it (a reference in ``inputs``: write ``$$<`` in the params for the
    literal text), which ``plangate validate --json`` gives."""
    config = write_config(tmp_path, repo)
    text = PLAN.replace("params: {name: world}", 'params: {name: "$<inputs.r>"}')
    text += 'inputs:\n  r: "$<plan.name>"\n'
    (tmp_path / "PLAN.yml").write_text(text)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["validate"] = await call(session, "validate", plan=text)

    with_agent(config, body)
    cli = run_cli("validate", "--json", str(tmp_path / "PLAN.yml"), cwd=tmp_path)
    expected = [e for e in json.loads(cli.stdout)["errors"] if e["code"] == "E_REF_INVALID"]
    got = [e for e in seen["validate"]["errors"] if e["code"] == "E_REF_INVALID"]
    assert expected and [e["remedy"] for e in got] == [e["remedy"] for e in expected], got
    assert "$$<" in expected[0]["remedy"], expected


def test_a_client_that_closes_its_input_still_gets_every_reply(repo: Path, tmp_path: Path) -> None:
    """An agent scripting the server (``printf '...' | plangate mcp``) writes its requests
    and closes stdin at once: each request read before the end is answered, a slow one
    (``wait`` for a second) included, and what ``submit`` did is committed; then the server
    exits 0."""
    config = write_config(tmp_path, repo)
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "script", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "catalog"}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "submit", "arguments": {"plan": PLAN, "slug": "piped"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "wait", "arguments": {"path": "plans/piped", "timeout": 1}},
        },
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "status"}},
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "controller", "mcp", "--config", str(config)],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    replies = {reply["id"]: reply for reply in map(json.loads, result.stdout.splitlines())}
    assert sorted(replies) == [1, 2, 3, 4, 5]
    assert all(
        "error" not in reply and not reply["result"].get("isError") for reply in replies.values()
    )
    assert replies[3]["result"]["structuredContent"]["path"] == "plans/piped"
    assert "changed" in replies[4]["result"]["structuredContent"]
    assert "plans/piped/PLAN.yml" in git(repo, "ls-tree", "-r", "--name-only", "main")


def test_log_and_wait_quote_a_committed_status_as_written(repo: Path, tmp_path: Path) -> None:
    """Round 63: the committed ``plan.status`` is the author's text; ``log`` and ``wait``
    passed it through the redactor, so a status set to a guess of a secret came back
    ``***`` for the right guess and as written for a wrong one. Both quote it as written.
    Round 81: the status both answer is the controller's, which ignored this one (null);
    the file's is ``log``'s ``file_status`` and its note of the ignored status, each as
    written. Round 126: a ``wait`` from it is refused ``E_USAGE`` (no plan status), the
    refusal quoting it as written."""
    secret = "S3CRETzz-r63"
    config = write_config(tmp_path, repo)
    (tmp_path / "sec.yml").write_text(f"TOK: {secret}\n")
    config.write_text(config.read_text() + f"secrets: {{file: {tmp_path / 'sec.yml'}}}\n")
    for slug, guess in (("right", secret), ("wrong", secret[:-1] + "x")):
        (repo / "plans" / slug).mkdir(parents=True)
        text = PLAN.replace("status: pending_approval", f'status: "{guess}"')
        (repo / "plans" / slug / "PLAN.yml").write_text(text)
    commit_all(repo, "statuses", AGENT)
    got: dict[str, list[Any]] = {}

    async def body(session: Session) -> None:
        for slug, guess in (("right", secret), ("wrong", secret[:-1] + "x")):
            log = await call(session, "log", path=f"plans/{slug}")
            refused = await call_error(
                session, "wait", path=f"plans/{slug}", timeout=0, status=guess
            )
            assert refused["code"] == "E_USAGE", refused
            (note,) = log["problems"]
            said = note.startswith("E_ILLEGAL_TRANSITION") and f"set status {guess} " in note
            quoted = refused["message"].split("'")[1]
            got[slug] = [log["file_status"], quoted, said, log["status"]]

    with_agent(config, body)
    assert got == {
        "right": [secret, secret, True, None],
        "wrong": [f"{secret[:-1]}x"] * 2 + [True, None],
    }, got


def test_wait_and_log_answer_the_controllers_status_never_one_it_ignored(
    repo: Path, tmp_path: Path
) -> None:
    """Round 81: someone who may not (Mallory, neither approver nor author) commits
    ``status: completed`` into a pending plan; the controller ignores it
    (E_ILLEGAL_TRANSITION, its row stays ``pending_approval``), but ``wait`` from
    ``pending_approval`` answered ``completed``, ``changed``, and ``log`` said ``completed``.
    Both answer the row's status (MCP ``status``'s); ``log`` names the ignored one. Alice's
    approval after it is an approval request, no status yet (round 118): with no pass to
    decide it, ``wait`` answers it open, unchanged."""
    config = write_config(tmp_path, repo)
    file = repo / "plans" / "fg" / "PLAN.yml"
    file.parent.mkdir(parents=True)
    file.write_text(PLAN)
    commit_all(repo, "a plan", AGENT)
    file.write_text(PLAN.replace("status: pending_approval", "status: completed"))
    commit_all(repo, "done", ("Mallory", "mallory@example.com"))
    seen: dict[str, Any] = {}

    def approve() -> None:
        file.write_text(PLAN.replace("status: pending_approval", "status: approved"))
        commit_all(repo, "approve", ALICE)

    async def body(session: Session) -> None:
        seen["log"] = await call(session, "log", path="plans/fg")
        seen["wait"] = await call(
            session, "wait", path="plans/fg", status="pending_approval", timeout=1
        )
        seen["row"] = (await call(session, "status", path="plans/fg"))["plans"][0]

        async def approve_soon() -> None:
            await anyio.sleep(1)
            await anyio.to_thread.run_sync(approve)

        async with anyio.create_task_group() as group:
            group.start_soon(approve_soon)
            seen["approved"] = await call(
                session, "wait", path="plans/fg", status="pending_approval", timeout=3
            )

    with_agent(config, body)
    log, waited, row = seen["log"], seen["wait"], seen["row"]
    assert (row["status"], row["file_status"]) == ("pending_approval", "completed"), row
    assert (waited["status"], waited["changed"]) == ("pending_approval", False), waited
    assert log["status"] == "pending_approval" and log.get("file_status") == "completed", log
    (note,) = log["problems"]
    assert note.startswith("E_ILLEGAL_TRANSITION: mallory@example.com set status completed")
    approved = seen["approved"]
    assert (approved["status"], approved["changed"]) == ("pending_approval", False), approved
    assert approved["approval_requested"] is True and waited["approval_requested"] is False


def test_wait_answers_an_approval_request_once_the_controller_has_judged_it(
    repo: Path, tmp_path: Path
) -> None:
    """Round 118 (unjudged-self-approval-answered): the agent commits ``status: approved``
    on its own pending plan; ``wait`` answered ``changed: approved`` before the pass refused
    it. ``wait`` answers only what the controller judged: the refusal leaves the plan
    ``pending_approval``, no change; Alice's approval then is answered once the plan runs."""
    config = write_config(tmp_path, repo)
    file = repo / "plans" / "sa" / "PLAN.yml"
    seen: dict[str, Any] = {}

    def approve(who: tuple[str, str]) -> None:
        text = file.read_text()
        file.write_text(re.sub(r"status: pending_approval", "status: approved", text, count=1))
        commit_all(repo, "approve", who)

    async def self_approves(session: Session) -> None:
        seen["submit"] = await call(session, "submit", plan=PLAN, slug="sa")
        await anyio.to_thread.run_sync(wait_for_commit, repo, "plangate: freeze plans/sa")
        await anyio.to_thread.run_sync(approve, AGENT)
        seen["self"] = await call(
            session, "wait", path="plans/sa", status="pending_approval", timeout=4
        )
        seen["row"] = (await call(session, "status", path="plans/sa"))["plans"][0]
        await anyio.to_thread.run_sync(approve, ALICE)
        seen["alice"] = await call(
            session, "wait", path="plans/sa", status="pending_approval", timeout=60
        )

    with running_daemon(config) as daemon:
        daemon.wait_started()
        with_agent(config, self_approves)
        assert daemon.stop() == 0
    own, row, alice = seen["self"], seen["row"], seen["alice"]
    assert (own["status"], own["changed"]) == ("pending_approval", False), own
    assert row["status"] == "pending_approval", row
    assert "E_APPROVER_NOT_ALLOWED" in git(repo, "log", "--format=%B", "-n", "20"), row
    assert alice["changed"] is True and alice["status"] in ("executing", "completed"), alice
    assert alice["approval_requested"] is False


def test_log_passes_the_committed_record_on_as_the_controller_wrote_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 64: the server ran the committed EXECUTION_LOG.md through the redactor again,
    so an action's ``why`` equal to a guess of a secret came back ``***`` for the right
    guess only (the committed log quotes it as written). The run's record is passed on as
    recorded; the rest of the answer is redacted as before."""
    from controller.commands._shared import required_config
    from controller.service import agentapi
    from controller.service.mcpserver import build_server

    secret = "S3CRETzz-r64"
    config = write_config(tmp_path, repo)
    (tmp_path / "sec.yml").write_text(f"TOK: {secret}\n")
    config.write_text(config.read_text() + f"secrets: {{file: {tmp_path / 'sec.yml'}}}\n")
    record = {
        "execution": {"actions": [{"id": 1, "why": secret}]},
        "outputs": {"1": {"note": secret}},
        "execution_log": f"**Why:** {secret} that ran",
    }
    answer = {"path": "plans/x", "problems": [f"note {secret}"], **record}
    monkeypatch.setattr(agentapi.AgentApi, "log", lambda self, path: dict(answer))
    server = build_server(required_config(str(config)))

    async def main() -> Any:
        return await server.call_tool("log", {"path": "plans/x"})

    got = anyio.run(main).structured_content
    assert {k: got[k] for k in record} == record
    assert got["problems"] == ["note ***"]


@pytest.mark.parametrize("name", ["PLAN.yml", "PLAN.yaml"])
def test_log_and_wait_read_the_plan_under_either_file_name(
    repo: Path, tmp_path: Path, name: str
) -> None:
    """Round 68: ``log`` and ``wait`` read only ``PLAN.yml``: a plan saved as ``PLAN.yaml``
    (which the row, ``show`` and the page read) was "no plan" to ``log``, and to ``wait`` a
    status of null that had changed at once. Both find the file as every reader does."""
    from controller.commands._shared import required_config
    from controller.service.agentapi import AgentApi

    (repo / "plans" / "y").mkdir(parents=True)
    (repo / "plans" / "y" / name).write_text(PLAN)
    commit_all(repo, "a plan", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        for path in ("plans/y", f"plans/y/{name}"):
            assert api.log(path)["status"] == "pending_approval"
            waited = api.wait(path, timeout=0, status="pending_approval")
            assert (waited["status"], waited["changed"]) == ("pending_approval", False)
    finally:
        api.close()


def test_log_of_a_folder_with_both_plan_files_is_ambiguous(repo: Path, tmp_path: Path) -> None:
    """Both file names in one folder: neither is read (E_PLAN_AMBIGUOUS, as the row says),
    never the one a reader happens to try first; ``wait`` says so too (round 69: it answered
    ``status: null``, at once ``changed`` from ``pending_approval``)."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous
    from controller.service.agentapi import AgentApi

    (repo / "plans" / "y").mkdir(parents=True)
    for name in ("PLAN.yml", "PLAN.yaml"):
        (repo / "plans" / "y" / name).write_text(PLAN)
    commit_all(repo, "two plans", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        with pytest.raises(PlanAmbiguous):
            api.log("plans/y")
        for since in (None, "pending_approval"):
            with pytest.raises(PlanAmbiguous):
                api.wait("plans/y", timeout=0, status=since)
    finally:
        api.close()


@pytest.mark.parametrize("beside", ["plan.yml", "plan.JSON", "PLAN.md"])
def test_log_of_a_held_source_says_why_it_is_held(repo: Path, tmp_path: Path, beside: str) -> None:
    """Round 74: a ``PLAN.json`` the converter holds E_PLAN_AMBIGUOUS (beside a symlink
    claiming the plan file's place, its case twin, a second source) was "no plan" to MCP
    ``log`` and ``wait`` while its row said E_PLAN_AMBIGUOUS: the same verdict, the same why."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous
    from controller.service.agentapi import AgentApi

    (repo / "plans" / "q").mkdir(parents=True)
    (repo / "plans" / "q" / "PLAN.yml").write_text(PLAN)
    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(CONTRACT)
    if beside == "plan.yml":
        (folder / beside).symlink_to("../q/PLAN.yml")
    else:
        (folder / beside).write_text(CONTRACT)
    commit_all(repo, "a held source", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        with pytest.raises(PlanAmbiguous, match=re.escape(beside)):
            api.log("plans/s")
        with pytest.raises(PlanAmbiguous):
            api.wait("plans/s", timeout=0)
    finally:
        api.close()


def test_a_folder_named_plan_yml_is_no_plan_and_its_parent_is_ambiguous(
    repo: Path, tmp_path: Path
) -> None:
    """Round 69: a FOLDER ``PLAN.yml`` beside ``PLAN.yaml``: asked for
    ``plans/y/PLAN.yml``, MCP answered the parent's record. A folder named as a plan file is
    no plan folder (E_UNSAFE_PATH), and its parent holds two plan files' names."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous, UnsafePath
    from controller.service.agentapi import AgentApi

    (repo / "plans" / "y" / "PLAN.yml").mkdir(parents=True)
    (repo / "plans" / "y" / "PLAN.yaml").write_text(PLAN)
    (repo / "plans" / "y" / "PLAN.yml" / "PLAN.yml").write_text(PLAN)
    (repo / "plans" / "z" / "PLAN.yaml").mkdir(parents=True)  # the folder first, then a plan
    (repo / "plans" / "z" / "PLAN.yaml" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan in a folder named PLAN.yml", AGENT)
    (repo / "plans" / "z" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan beside it", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        for call in (api.log, api.wait, api.status):
            with pytest.raises(UnsafePath):
                call("plans/y/PLAN.yml")
        with pytest.raises(PlanAmbiguous):
            api.log("plans/y/PLAN.yaml")
        rows = {r["plan"]: r for r in api.status()["plans"]}
        for folder in ("plans/y", "plans/z"):
            assert rows[folder]["status"] is None, rows[folder]
            assert "E_PLAN_AMBIGUOUS" in str(rows[folder]["notes"]), rows[folder]
        assert "E_UNSAFE_PATH" in str(rows["plans/y/PLAN.yml"]["notes"]), rows
    finally:
        api.close()


def test_submit_replaces_the_folders_plan_yaml_never_writes_a_second_file(
    repo: Path, tmp_path: Path
) -> None:
    """Round 68: submit wrote ``PLAN.yml`` beside a folder's ``PLAN.yaml`` (an ambiguous
    folder) and checked only ``PLAN.yml`` for a plan it may not replace. It finds the
    folder's plan file as every reader does: a pending one is replaced in place, one past
    pending is refused."""
    from controller.commands._shared import required_config
    from controller.errors import IllegalTransition
    from controller.service.agentapi import AgentApi

    for slug, status in (("y", "pending_approval"), ("done", "completed")):
        (repo / "plans" / slug).mkdir(parents=True)
        text = PLAN.replace("status: pending_approval", f"status: {status}")
        (repo / "plans" / slug / "PLAN.yaml").write_text(text)
    commit_all(repo, "plans", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        answer = api.submit(PLAN.replace("Greet the world", "Greet them all"), "y")
        assert answer["file"] == "plans/y/PLAN.yaml", answer
        with pytest.raises(IllegalTransition):
            api.submit(PLAN, "done")
    finally:
        api.close()
    assert "Greet them all" in git(repo, "show", "HEAD:plans/y/PLAN.yaml")
    assert git(repo, "ls-tree", "--name-only", "HEAD", "plans/y/").split() == ["plans/y/PLAN.yaml"]


@pytest.mark.parametrize(
    ("kind", "name"),
    [("folder", "plan.yml"), ("folder", "PLAN.YAML"), ("symlink", "plan.yml"),
     ("gitlink", "Plan.yml"), ("folder", "PLAN.y\u200cml"), ("file", "plan.yaml")],
)  # fmt: skip
def test_submit_refuses_a_folder_holding_a_claim_of_the_plan_files_place(
    repo: Path, tmp_path: Path, kind: str, name: str
) -> None:
    """Round 72: a folder holding only an entry that claims its plan file's place (a folder
    ``plan.yml/`` or ``PLAN.YAML/``, a symlink or gitlink, a file in another case) and no
    plan file: ``submit`` committed ``PLAN.yml`` beside it and answered
    ``pending_approval``, a plan every other reader then calls E_PLAN_AMBIGUOUS. It asks
    ``ambiguous_claims`` over the folder's listing and the file it would write: refused,
    nothing committed; a folder holding a README only takes the plan."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous
    from controller.service.agentapi import AgentApi

    folder = repo / "plans" / "c"
    folder.mkdir(parents=True)
    (repo / "plans" / "ok").mkdir()
    (repo / "plans" / "ok" / "README.md").write_text("for the next plan\n")
    if kind == "folder":
        (folder / name).mkdir()
        (folder / name / "notes.md").write_text("x\n")
    elif kind == "symlink":
        (folder / name).symlink_to("../ok/README.md")
    elif kind == "file":
        (folder / name).write_text(PLAN)
    else:
        (folder / name).mkdir()  # an uninitialised submodule: an empty folder
    git(repo, "add", "-A")
    if kind == "gitlink":
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},plans/c/{name}")
    commit_all(repo, "a claim alone", AGENT)
    before = git(repo, "rev-parse", "HEAD").strip()
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        with pytest.raises(PlanAmbiguous, match=r"claims the place of its plan file PLAN\.yml"):
            api.submit(PLAN, "c")
        assert git(repo, "rev-parse", "HEAD").strip() == before  # nothing committed
        assert api.submit(PLAN, "ok")["file"] == "plans/ok/PLAN.yml"
    finally:
        api.close()


@pytest.mark.parametrize("name", ["PLAN.yaml", "PLAN.yml"])
def test_submit_over_a_symlinked_plan_file_names_the_link(
    repo: Path, tmp_path: Path, name: str
) -> None:
    """A folder whose plan file is a committed symlink (and nothing else): ``submit`` read
    the link's target path as the committed plan and answered E_ILLEGAL_TRANSITION "... is
    None" (round 72's notes). It is refused E_UNSAFE_PATH naming the link, nothing
    committed."""
    from controller.commands._shared import required_config
    from controller.errors import UnsafePath
    from controller.service.agentapi import AgentApi

    folder = repo / "plans" / "s"
    folder.mkdir(parents=True)
    (repo / "plans" / "t").mkdir()
    (repo / "plans" / "t" / "PLAN.yml").write_text(PLAN)
    (folder / name).symlink_to("../t/PLAN.yml")
    commit_all(repo, "a symlinked plan file", AGENT)
    before = git(repo, "rev-parse", "HEAD").strip()
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        with pytest.raises(UnsafePath, match=rf"plans/s/{name} is a symlink") as raised:
            api.submit(PLAN, "s")
        assert "None" not in str(raised.value)
        assert git(repo, "rev-parse", "HEAD").strip() == before  # nothing committed
    finally:
        api.close()


def test_mcp_names_plans_by_the_controllers_rule(repo: Path, tmp_path: Path) -> None:
    """Round 70: MCP took only lower-case paths (``submit``'s slug rule) and answered
    E_USAGE "not a plan path" for ``plans/Deploy``, a plan the controller froze and ran; a
    folder the controller may not take for a plan (named as its record's file, or as a
    case variant of a plan file) is E_UNSAFE_PATH to MCP as to every reader."""
    from controller.commands._shared import required_config
    from controller.errors import UnsafePath, UsageError
    from controller.service.agentapi import AgentApi

    (repo / "plans" / "Deploy").mkdir(parents=True)
    (repo / "plans" / "Deploy" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan with a capital letter", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        assert api.log("plans/Deploy")["path"] == "plans/Deploy"
        assert api.status("Deploy/PLAN.yml")["plans"][0]["plan"] == "plans/Deploy"
        for bad in ("plans/x/EXECUTION_LOG.md", "plans/up/PLAN.YML", "plans/uc/plan.yaml"):
            for call in (api.log, api.wait, api.status):
                with pytest.raises(UnsafePath):
                    call(bad)
        for bad in ("plans/../x", "plans//x", "./plans/x", "plans"):
            with pytest.raises(UsageError):
                api.log(bad)
        with pytest.raises(UnsafePath):
            api.submit(PLAN, "x/execution_log.md")
    finally:
        api.close()


def test_mcp_reads_an_absolute_path_by_the_clis_rule(repo: Path, tmp_path: Path) -> None:
    """Round 98: ``_plan_id`` stripped the leading ``/`` of ``<repo>/plans/p`` and read the
    plan ``plans/<repo>/plans/p``: ``wait`` answered ``status: null`` (``changed: true`` with
    a status given) for a plan the branch held, ``status``/``log`` "no plan" naming an id
    nobody typed, while ``show`` took the path as ``p``. An absolute path inside the
    repository names its plan (the repository reached through a link too); one outside it,
    ``/plans/p`` among them, or outside the plans folder, is E_USAGE, never another id."""
    from controller.commands._shared import required_config
    from controller.errors import UsageError
    from controller.service.agentapi import AgentApi

    (repo / "plans" / "p").mkdir(parents=True)
    (repo / "plans" / "p" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan", AGENT)
    link = tmp_path / "via"
    link.symlink_to(repo)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        for top in (str(repo), str(link)):
            for path in (f"{top}/plans/p", f"{top}/plans/p/", f"{top}/plans/p/PLAN.yml"):
                assert api.log(path)["path"] == "plans/p", path
                assert api.status(path)["plans"][0]["plan"] == "plans/p", path
                got = api.wait(path, timeout=0, status="pending_approval")
                assert (got["path"], got["status"], got["changed"]) == (
                    "plans/p",
                    "pending_approval",
                    False,
                ), got
        outside = ("/plans/p", str(tmp_path / "plans" / "p"), f"{repo}/p", f"{repo}/plans/../p")
        for path in (*outside, f"{repo}/plans/q/../p", f"{repo}/plans/./p"):
            for call in (api.log, api.wait, api.status):
                with pytest.raises(UsageError) as caught:
                    call(path)
                assert f"plans{repo}" not in str(caught.value), caught.value  # no rebased id
    finally:
        api.close()


@pytest.mark.parametrize("spelling", ["plans/P", "plans/p.", "plans/cafe\u0301"])
def test_mcp_tools_answer_one_code_for_a_twin_of_a_plan(
    repo: Path, tmp_path: Path, spelling: str
) -> None:
    """Round 98: ``plans/P`` (``plans/p.``, an NFD spelling) beside the plan ``plans/p``
    (``café``, NFC): ``status`` answered E_USAGE "no plan" while ``log`` and ``wait`` said
    E_PLAN_AMBIGUOUS. One input, one code: the folder is one with a plan on some checkout,
    which ``status`` now finds as they do (:func:`controller.git.planstate.refuse_twin`)."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous
    from controller.service.agentapi import AgentApi

    for name in ("p", "caf\u00e9"):
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "plans", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        for call in (api.status, api.log, lambda p: api.wait(p, timeout=0)):
            with pytest.raises(PlanAmbiguous):
                call(spelling)
    finally:
        api.close()


def test_mcp_status_rows_carry_the_reason_as_status_json(repo: Path, tmp_path: Path) -> None:
    """Round 70: MCP ``status`` answered ``reason: null`` on every row, where ``plangate
    status --json`` gives why a plan waits or is refused (E_PLAN_AMBIGUOUS here); docs/agents.md
    says its fields are those of ``status --json``."""
    from controller.commands._shared import required_config
    from controller.service.agentapi import AgentApi
    from controller.service.reconcile import Controller

    (repo / "plans" / "y").mkdir(parents=True)
    for name in ("PLAN.yml", "PLAN.yaml"):
        (repo / "plans" / "y" / name).write_text(PLAN)
    commit_all(repo, "two plans", AGENT)
    config = required_config(str(write_config(tmp_path, repo)))
    api = AgentApi(config)
    controller = Controller(config, lock=False)
    try:
        row = api.status("plans/y")["plans"][0]
        cli = {r["plan"]: r for r in controller.status(reasons=True)}["plans/y"]
    finally:
        api.close()
        controller.close()
    assert "E_PLAN_AMBIGUOUS" in str(row["reason"]), row
    assert row == cli


@pytest.mark.parametrize("path", ["plans/y ", " plans/y", "plans/y \n", "plans/c-sp "])
def test_log_never_trims_a_path_to_another_plan(repo: Path, tmp_path: Path, path: str) -> None:
    """Round 75: MCP ``log`` of ``plans/fsp `` trimmed the path and answered ``plans/fsp``'s
    record (of ``plans/c-sp `` "no plan"): a name the controller holds for itself is
    E_UNSAFE_PATH and why, as the row, the page and ``/api/plan/`` say; never trimmed."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous, UnsafePath
    from controller.service.agentapi import AgentApi

    for name in ("y", "y ", "c-sp ", "z"):
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "plans", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        assert api.log("plans/z")["path"] == "plans/z"  # the control
        with pytest.raises(PlanAmbiguous):  # beside its NTFS twin ``plans/y `` (r75twinfold)
            api.log("plans/y")
        with pytest.raises(UnsafePath, match=r"blank|U\+000A"):
            api.log(path)
    finally:
        api.close()


@pytest.mark.parametrize(("base", "twin"), [("Team/x", "team/x"), ("deep/mid/y", "deep/MID/y")])
def test_log_and_wait_hold_a_plan_beside_a_twin_above_its_folder(
    repo: Path, tmp_path: Path, base: str, twin: str
) -> None:
    """Round 76: ``log`` of ``plans/Team/x`` beside ``plans/team/x`` (one folder on a
    case-insensitive checkout, the twin ABOVE the plan's own folder) answered its file
    ``approved`` with no problem, and ``wait`` for ``approved`` waited it out unchanged,
    while the row held it: both say E_PLAN_AMBIGUOUS, naming the twin."""
    from controller.commands._shared import required_config
    from controller.errors import PlanAmbiguous
    from controller.service.agentapi import AgentApi

    for name in (base, twin, "ok/x"):
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "plans", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        assert api.log("plans/ok/x")["problems"] == []  # the control
        for one, other in ((base, twin), (twin, base)):
            with pytest.raises(PlanAmbiguous, match=re.escape(f"plans/{other}/PLAN.yml")):
                api.log(f"plans/{one}")
            with pytest.raises(PlanAmbiguous):
                api.wait(f"plans/{one}", timeout=0, status="pending_approval")
    finally:
        api.close()


def test_log_notes_a_log_in_a_twin_above_the_plan_folder(repo: Path, tmp_path: Path) -> None:
    """Round 76: a log at ``plans/lg/x/EXECUTION_LOG.md`` (a twin of ``plans/Lg/x`` one level
    up, no plan of its own) IS ``plans/Lg/x``'s log on a case-insensitive checkout: ``log``
    notes it E_OWNED_BLOCK_CHANGED and never shows it. Since round 84 the same holds for a
    spelling of the plans folder itself (``Plans/ok/`` is ``plans/ok/`` there); a fullwidth
    ``ｐｌａｎｓ/fw/`` is one folder with ``plans/`` on no checkout: no plan's."""
    from controller.commands._shared import required_config
    from controller.service.agentapi import AgentApi

    for name in ("Lg/x", "ok", "fw"):
        (repo / "plans" / name).mkdir(parents=True)
        (repo / "plans" / name / "PLAN.yml").write_text(PLAN)
    for folder in ("plans/lg/x", "Plans/ok", "\uff50\uff4c\uff41\uff4e\uff53/fw"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "EXECUTION_LOG.md").write_text("- Status: completed (forged)\n")
    commit_all(repo, "plans and notes", AGENT)
    api = AgentApi(required_config(str(write_config(tmp_path, repo))))
    try:
        for plan, log in (("plans/Lg/x", "plans/lg/x"), ("plans/ok", "Plans/ok")):
            answer = api.log(plan)
            noted = [p for p in answer["problems"] if p.startswith("E_OWNED_BLOCK_CHANGED")]
            assert noted and f"{log}/EXECUTION_LOG.md" in noted[0], answer
            assert "forged" not in json.dumps(answer)
        assert api.log("plans/fw")["problems"] == []
    finally:
        api.close()


def test_submit_refuses_text_its_folders_encoding_would_not_give_back(
    repo: Path, tmp_path: Path
) -> None:
    """Round 79: ``submit`` into a ``working-tree-encoding=SHIFT-JIS`` folder committed a
    ``\\`` and a ``~`` git checks out as 0x5C/0x7E and reads back as ``¥``/``‾``: ``git
    status`` called the file modified right after. Such text is E_ATTRIBUTE_UNSUPPORTED,
    naming the path, the encoding and the characters, and nothing is committed or written;
    the same text into a ``UTF-16`` folder (which holds it) is committed as sent, and ``git
    status`` (the oracle) is clean after both."""
    (repo / ".gitattributes").write_text(
        "plans/sj/** working-tree-encoding=SHIFT-JIS\nplans/u16/** working-tree-encoding=UTF-16\n"
    )
    commit_all(repo, "attributes", ("Owner", "owner@example.com"))
    config = write_config(tmp_path, repo)
    text = PLAN.replace('"Say hello to the world"', "'a \\ b ~ c'")
    before = git(repo, "rev-parse", "main").strip()
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["sj"] = await call_error(session, "submit", plan=text, slug="sj")
        seen["plain-sj"] = await call(session, "submit", plan=PLAN, slug="sj")
        seen["u16"] = await call(session, "submit", plan=text, slug="u16")

    with_agent(config, body)
    refused = seen["sj"]
    assert refused["code"] == "E_ATTRIBUTE_UNSUPPORTED", refused
    assert refused["path"] == "plans/sj/PLAN.yml", refused
    assert "working-tree-encoding=SHIFT-JIS does not give back '\\\\' '~'" in refused["message"]
    assert "not committed" in refused["message"] and "leave out" in refused["remedy"]
    made = git(repo, "log", "--format=%s", f"{before}..main").split("\n")
    assert [m for m in made if m] == ["Submit plan plans/u16", "Submit plan plans/sj"], made
    assert git(repo, "show", "main:plans/sj/PLAN.yml") == PLAN  # the text it holds
    assert git(repo, "show", "main:plans/u16/PLAN.yml") == text
    assert git(repo, "status", "--porcelain").strip() == ""


def test_submits_sent_together_are_each_committed(repo: Path, tmp_path: Path) -> None:
    """An agent sends eight submissions at once (the server answers each in a thread): each
    is committed, one commit each, none refused "kept moving" by its siblings' commits
    (round 80: two of eight were)."""
    config = write_config(tmp_path, repo)
    before = git(repo, "rev-parse", "main").strip()
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        async def one(i: int) -> None:
            seen[f"t{i}"] = await call(session, "submit", plan=PLAN, slug=f"together-{i}")

        async with anyio.create_task_group() as group:
            for i in range(8):
                group.start_soon(one, i)

    with_agent(config, body)
    assert all(answer["submitted"] is True for answer in seen.values()), seen
    listed = git(repo, "ls-tree", "-r", "--name-only", "main", "plans").split()
    assert sorted(listed) == sorted(f"plans/together-{i}/PLAN.yml" for i in range(8))
    assert git(repo, "rev-list", "--count", f"{before}..main").strip() == "8"
    assert git(repo, "status", "--porcelain") == ""


def _piped(config: Path, cwd: Path, lines: list[Any]) -> tuple[int, list[dict[str, Any]], str]:
    """``plangate mcp`` fed ``lines`` (a dict is sent as JSON, a string as written), stdin
    closed after them: (exit code, the replies in order, stderr). The process must exit
    within 20 s of its input's end, whatever a request asked to wait for."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "script", "version": "1"},
        },
    }
    sent = [initialize, {"jsonrpc": "2.0", "method": "notifications/initialized"}, *lines]
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in sent)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "mcp", "--config", str(config)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=cwd,
    )
    try:
        out, err = proc.communicate(text, timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise
    replies = [json.loads(line) for line in out.splitlines()]
    assert replies and replies[0]["id"] == 0 and "result" in replies[0], out
    return proc.returncode, replies[1:], err


def test_a_line_that_is_no_message_is_answered_and_the_session_goes_on(
    repo: Path, tmp_path: Path
) -> None:
    """Round 97: a line that is no JSON and a request whose ``id`` is null got no reply.
    JSON-RPC 2.0: -32700 Parse error, and -32600 Invalid Request for JSON that is no
    message (id null, or the request's own id when it has one); the requests after them
    are answered. A request with ``id: null`` is read by the SDK's schema as a notification
    (the id dropped before the server sees the line): like every notification, no reply
    (docs/agents.md says so), and the session goes on."""
    config = write_config(tmp_path, repo)
    code, replies, err = _piped(
        config,
        tmp_path,
        [
            "{not json",
            {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "catalog"},
            {"jsonrpc": "2.0", "id": 9, "method": 5},
            {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "catalog"}},
        ],
    )
    assert code == 0, err
    assert replies[:3] == [
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": "Invalid Request"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}},
    ]
    assert replies[3]["id"] == 8 and not replies[3]["result"].get("isError"), replies[3]
    assert len(replies) == 4


def test_a_cancelled_wait_stops_and_the_session_ends_with_its_input(
    repo: Path, tmp_path: Path
) -> None:
    """Round 97: ``notifications/cancelled`` for a ``wait`` of 60 s got no reply (right) but
    the wait polled on to its end and the session with it. Cancelled, it stops: no reply,
    and the process exits soon after stdin's end; a short ``wait`` beside it still answers."""
    config = write_config(tmp_path, repo)
    (repo / "plans" / "cancelled").mkdir(parents=True)
    (repo / "plans" / "cancelled" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan to wait on", AGENT)

    def call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    code, replies, err = _piped(
        config,
        tmp_path,
        [
            call(1, "status", path="plans/cancelled"),
            call(2, "wait", path="plans/cancelled", timeout=60),
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 2, "reason": "no longer needed"},
            },
            call(3, "wait", path="plans/cancelled", timeout=1),
        ],
    )
    assert code == 0, err
    by_id = {reply["id"]: reply for reply in replies}
    assert sorted(by_id) == [1, 3], replies
    waited = by_id[3]["result"]["structuredContent"]
    assert waited["path"] == "plans/cancelled" and waited["changed"] is False, waited
    assert waited["waited"] >= 1, waited


@pytest.mark.parametrize("link", ["plans/lnk", "plans/grp", "plans"])
def test_submit_through_an_untracked_link_commits_nothing(
    repo: Path, tmp_path: Path, link: str
) -> None:
    """Round 118, submit-through-untracked-link: with an untracked symlink at the plan's
    folder, at a group folder on its way or at ``plans`` itself, ``submit`` committed the
    plan and never wrote it (the tree write never goes through a link): ``git status``
    showed it deleted. It is refused E_UNSAFE_PATH naming the link, nothing committed,
    nothing written through the link."""
    (repo / "plans" / "other").mkdir(parents=True)
    (repo / "plans" / "other" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan", AGENT)
    outside = tmp_path / "outside"
    outside.mkdir()
    if link == "plans":
        (repo / "plans").rename(tmp_path / "plans-real")
    (repo / link).symlink_to(outside, target_is_directory=True)
    slug = {"plans/lnk": "lnk", "plans/grp": "grp/x", "plans": "zz"}[link]
    config = write_config(tmp_path, repo)
    before = git(repo, "rev-parse", "HEAD").strip()

    async def body(session: Session) -> None:
        refused = await call_error(session, "submit", plan=PLAN, slug=slug)
        assert refused["code"] == "E_UNSAFE_PATH", refused
        assert link in refused["message"] and f"rm {link}" in refused["remedy"], refused

    with_agent(config, body)
    assert git(repo, "rev-parse", "HEAD").strip() == before  # nothing committed
    assert list(outside.iterdir()) == []  # nothing written through the link
    if link == "plans":
        (repo / "plans").unlink()
        (tmp_path / "plans-real").rename(repo / "plans")
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def _rejected_plan(repo: Path, tmp_path: Path) -> Path:
    """The agent's plan ``plans/rj`` (PLAN), which Alice rejected; the config."""
    config = write_config(tmp_path, repo)
    file = repo / "plans" / "rj" / "PLAN.yml"
    file.parent.mkdir(parents=True)
    file.write_text(PLAN)
    commit_all(repo, "a plan", AGENT)
    file.write_text(PLAN.replace("status: pending_approval", "status: rejected"))
    commit_all(repo, "reject", ALICE)
    return config


def test_submit_of_a_rejected_version_under_another_slug_is_withdrawn(
    repo: Path, tmp_path: Path
) -> None:
    """Round 118, submit-withdrawn-version-accepted: the version Alice rejected, sent again
    under a new slug (as written, or with its comments changed: the same hash), was
    committed ``pending_approval`` and frozen, waiting for an approval the controller
    refuses. ``submit`` asks the controller's withdrawn versions and refuses it
    E_VERSION_WITHDRAWN, nothing committed; a changed version is a new submission."""
    config = _rejected_plan(repo, tmp_path)
    before = git(repo, "rev-parse", "HEAD").strip()
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["same"] = await call_error(session, "submit", plan=PLAN, slug="again")
        recommented = PLAN.replace("# written by the agent", "# once more")
        seen["plain"] = await call_error(session, "submit", plan=recommented, slug="again2")
        seen["moved"] = git(repo, "rev-parse", "HEAD").strip() != before
        changed = PLAN.replace("Greet the world", "Greet the whole world")
        seen["new"] = await call(session, "submit", plan=changed, slug="again3")

    with_agent(config, body)
    for key in ("same", "plain"):
        refused = seen[key]
        assert refused["code"] == "E_VERSION_WITHDRAWN", refused
        assert "plans/rj" in refused["message"] and refused["remedy"], refused
    assert not seen["moved"]  # nothing committed
    assert seen["new"]["status"] == "pending_approval", seen["new"]


def test_submit_over_a_rejected_plan_is_an_illegal_transition(repo: Path, tmp_path: Path) -> None:
    """Round 118, submit-over-rejected-never-frozen: a new version submitted at the slug of
    a plan Alice rejected was committed (the rejection gone from the file) and answered
    ``pending_approval``, while the controller ignored it for good (E_ILLEGAL_TRANSITION
    from ``rejected``: SPEC §4 makes a rejection terminal). ``submit`` says so, nothing
    committed, and the remedy (a new slug) is a submission the controller freezes."""
    config = _rejected_plan(repo, tmp_path)
    before = git(repo, "rev-parse", "HEAD").strip()
    changed = PLAN.replace("Greet the world", "Greet the whole world")
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        seen["over"] = await call_error(session, "submit", plan=changed, slug="rj")
        seen["moved"] = git(repo, "rev-parse", "HEAD").strip() != before
        seen["new"] = await call(session, "submit", plan=changed, slug="rj2")

    with_agent(config, body)
    refused = seen["over"]
    assert refused["code"] == "E_ILLEGAL_TRANSITION", refused
    assert "rejected" in refused["message"] and "new slug" in refused["remedy"], refused
    assert not seen["moved"]  # nothing committed: the rejection stays in the file
    assert "status: rejected" in (repo / "plans" / "rj" / "PLAN.yml").read_text()
    assert seen["new"]["status"] == "pending_approval", seen["new"]


def test_a_request_whose_id_is_of_no_id_type_is_an_invalid_request(
    repo: Path, tmp_path: Path
) -> None:
    """Round 118, rpc-odd-id-unanswered: a ``tools/call`` whose id is ``1.5``, ``true``,
    ``[7]`` or ``{"a": 1}`` got no reply (the SDK's schema read it as a notification, the
    id dropped), and nothing ran. JSON-RPC 2.0: -32600 Invalid Request, id null; a submit
    so sent commits nothing; ``id: null`` stays a notification; the session goes on."""
    config = write_config(tmp_path, repo)
    before = git(repo, "rev-parse", "HEAD").strip()
    odd: list[Any] = [1.5, True, [7], {"a": 1}]
    calls = [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "catalog"}}
        for i in odd
    ]
    submit = {"name": "submit", "arguments": {"plan": PLAN, "slug": "odd"}}
    code, replies, err = _piped(
        config,
        tmp_path,
        [
            *calls,
            {"jsonrpc": "2.0", "id": 2.5, "method": "tools/call", "params": submit},
            {"jsonrpc": "2.0", "id": None, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "catalog"}},
        ],
    )
    assert code == 0, err
    error = {"code": -32600, "message": "Invalid Request"}
    invalid = {"jsonrpc": "2.0", "id": None, "error": error}
    assert replies[:5] == [invalid] * 5, replies
    assert replies[5]["id"] == 8 and not replies[5]["result"].get("isError"), replies[5]
    assert len(replies) == 6
    assert git(repo, "rev-parse", "HEAD").strip() == before  # the submit ran nothing


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"name": "status", "arguments": []}, "arguments"),
        ({"name": "status", "arguments": "plans/x"}, "arguments"),
        ({"name": 5, "arguments": {}}, "name"),
        ({"name": None, "arguments": {}}, "name"),
    ],
)
def test_a_call_of_another_shape_is_e_usage_in_the_error_shape(
    repo: Path, tmp_path: Path, params: dict[str, Any], named: str
) -> None:
    """Round 118, rpc-arguments-shape-uncoded: ``arguments`` a list or a string, or a
    ``name`` that is no string, were the SDK's -32602 "Invalid request parameters" with no
    data. They are tool errors in the error shape, E_USAGE naming the part and a remedy,
    as every argument that does not fit (docs/agents.md)."""
    config = write_config(tmp_path, repo)
    code, replies, err = _piped(
        config, tmp_path, [{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": params}]
    )
    assert code == 0, err
    (reply,) = replies
    assert reply["id"] == 11 and reply["result"]["isError"], reply
    text = reply["result"]["content"][0]["text"]
    shape = json.loads(text[text.index("{") :])
    assert shape["ok"] is False and shape["code"] == "E_USAGE", shape
    assert shape["path"] == named and shape["remedy"], shape


def test_a_refused_pull_request_submit_makes_no_branch(repo: Path, tmp_path: Path) -> None:
    """Round 123 (``refused-pr-submit-leaves-branch``): ``submit`` with ``pull_request: true``
    made ``<prefix><slug>`` before its checks, so a refusal (a completed plan, a slug inside
    another plan's folder) left the branch behind, and ``plangate/done/x`` then kept
    ``plangate/done`` from ever being made (``E_GIT`` "kept moving ... submit again"). A
    refusal makes no branch; a branch name another branch blocks is ``E_USAGE`` naming it."""
    (repo / "plans" / "done").mkdir(parents=True)
    (repo / "plans" / "done" / "PLAN.yml").write_text(
        PLAN.replace("status: pending_approval", "status: completed")
    )
    commit_all(repo, "plans", AGENT)
    git(repo, "branch", "plangate/held/inner")  # someone's branch, in the way of plangate/held
    config = write_config(tmp_path, repo)
    seen: dict[str, Any] = {}

    async def body(session: Session) -> None:
        for slug in ("done", "done/x"):
            seen[slug] = await call_error(session, "submit", plan=PLAN, slug=slug,
                                          pull_request=True)  # fmt: skip
        seen["held"] = await call_error(session, "submit", plan=PLAN, slug="held",
                                        pull_request=True)  # fmt: skip
        seen["fresh"] = await call(session, "submit", plan=PLAN, slug="fresh", pull_request=True)

    with_agent(config, body)
    assert seen["done"]["code"] == "E_ILLEGAL_TRANSITION"
    assert seen["done/x"]["code"] == "E_USAGE"
    assert seen["held"]["code"] == "E_USAGE", seen["held"]
    assert "plangate/held/inner" in seen["held"]["message"] and seen["held"]["remedy"]
    branches = git(repo, "branch", "--format=%(refname:short)").split()
    assert sorted(branches) == ["main", "plangate/fresh", "plangate/held/inner"], branches
    assert git(repo, "rev-parse", "plangate/fresh").strip() == seen["fresh"]["commit"]


def test_wait_refuses_a_status_that_is_no_plan_status(repo: Path, tmp_path: Path) -> None:
    """Round 126: ``wait`` from a status no plan has (a typo, another case, no status at
    all) answered ``changed: true`` at once, so an agent could not tell its typo from a
    change. It is ``E_USAGE`` naming the argument, the remedy listing the statuses; a plan
    status, or none, still waits."""
    from controller.plan.shape import STATUSES

    config = write_config(tmp_path, repo)
    (repo / "plans" / "w").mkdir(parents=True)
    (repo / "plans" / "w" / "PLAN.yml").write_text(PLAN)
    commit_all(repo, "a plan", AGENT)
    got: dict[str, Any] = {}

    async def body(session: Session) -> None:
        for typo in ("pending-approval", "PENDING_APPROVAL", "bogus", "", "done\x00"):
            got[typo] = await call_error(session, "wait", path="plans/w", timeout=0, status=typo)
        got["real"] = await call(session, "wait", path="plans/w", timeout=0, status="approved")
        got["now"] = await call(session, "wait", path="plans/w", timeout=0)

    with_agent(config, body)
    for typo in ("pending-approval", "PENDING_APPROVAL", "bogus", "", "done\x00"):
        err = got[typo]
        assert (err["code"], err["path"]) == ("E_USAGE", "status"), err
        assert repr(typo) in err["message"] and "no plan status" in err["message"], err
        assert all(s in err["remedy"] for s in STATUSES), err
    assert (got["real"]["previous"], got["real"]["changed"]) == ("approved", True), got["real"]
    assert got["now"]["changed"] is False and got["now"]["status"] == "pending_approval"
