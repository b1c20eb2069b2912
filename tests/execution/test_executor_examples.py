"""The shipped example (the seed's email plan over a fake mailbox) runs end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from controller import fsutil
from controller.execution.executor import Engine
from controller.plan import plans
from controller.settings import load_config
from tests.support.executor_kit import APPROVAL
from tests.support.gitenv import EXAMPLES


def test_email_plan_runs_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("outbox.jsonl", "__pycache__"))
    config = load_config(root / "plangate.yml")
    plan_file = root / "plans" / "process-emails" / "PLAN.yml"
    loaded = plans.load_plan(plan_file, config)
    assert loaded.valid, loaded.problems
    fsutil.write_atomic(plan_file, plans.freeze_text(loaded).text)
    engine = Engine(config, state_dir=tmp_path / "state")
    outcome = engine.run(plan_file, plan_id="plans/process-emails", approval=APPROVAL)
    assert outcome.status == "completed", outcome
    sent = [
        json.loads(line) for line in (root / "mailbox" / "outbox.jsonl").read_text().splitlines()
    ]
    assert len(sent) == 1
    assert sent[0]["to"] == "dana@customer.example"
    assert sent[0]["subject"] == "Re: Billing question"
    assert sent[0]["template"] == "billing_response"
    assert sent[0]["idempotency_key"].startswith("step:")
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "## Action 4: email_send" in log and "✅ completed" in log


def test_the_other_example_tools_work(tmp_path: Path) -> None:
    config = load_config(EXAMPLES / "plangate.yml")
    from controller.execution.tools import CallContext, Catalog

    catalog = Catalog(config)
    ctx = CallContext(idempotency_key="step:x", timeout=30)
    assert (
        catalog.get("word_count").call({"text": "a b c"}, ctx)["json"] == 4
    )  # `{"text":` `"a` `b` `c"}`
    assert (
        catalog.get("label").call({"name": "x; rm -rf /"}, ctx)["stdout"] == "label:x; rm -rf /\n"
    )


def _example(tmp_path: Path, slug: str) -> tuple[Engine, Path, Path]:
    root = tmp_path / "examples"
    shutil.copytree(
        EXAMPLES, root, ignore=shutil.ignore_patterns("state.json", "ops.log", "__pycache__")
    )
    config = load_config(root / "plangate.yml")
    plan_file = root / "plans" / slug / "PLAN.yml"
    loaded = plans.load_plan(plan_file, config)
    assert loaded.valid, loaded.problems
    fsutil.write_atomic(plan_file, plans.freeze_text(loaded).text)
    return Engine(config, state_dir=tmp_path / "state"), plan_file, root / "ops" / "ops.log"


def _ops(log: Path) -> list[str]:
    return [line.split(" ", 1)[0] for line in log.read_text().splitlines()]


def test_deploy_verify_rollback_example(tmp_path: Path) -> None:
    engine, plan_file, log = _example(tmp_path, "deploy-verify-rollback")
    outcome = engine.run(plan_file, plan_id="plans/deploy-verify-rollback", approval=APPROVAL)
    assert outcome.status == "completed", outcome
    # health (plan), lock (precondition), deploy, 3 polls, then action 2's own status call
    assert _ops(log) == ["health", "lock_status", "deploy"] + ["rollout_status"] * 4
    text = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "verify (`rollout_status`): ✅ holds after 3 polls" in text
    assert "```mermaid" in text


def test_retry_fallback_ask_example(tmp_path: Path) -> None:
    engine, plan_file, log = _example(tmp_path, "retry-fallback-ask")
    outcome = engine.run(plan_file, plan_id="plans/retry-fallback-ask", approval=APPROVAL)
    assert (outcome.status, outcome.action) == ("awaiting_approval", 3), outcome
    assert _ops(log) == ["flaky", "rollback"]  # failed calls log nothing
    assert outcome.error is not None and outcome.error.code == "E_TOOL_FAILED"
    assert "the CDN refused the upload" in (plan_file.parent / "EXECUTION_LOG.md").read_text()


def test_parallel_graph_example(tmp_path: Path) -> None:
    engine, plan_file, log = _example(tmp_path, "parallel-graph")
    outcome = engine.run(plan_file, plan_id="plans/parallel-graph", approval=APPROVAL)
    assert outcome.status == "completed", outcome
    lines = log.read_text().splitlines()
    assert '"test build"' in lines[2] and '"ship"' in lines[3]


def test_nested_release_example(tmp_path: Path) -> None:
    engine, plan_file, log = _example(tmp_path, "nested-release")
    outcome = engine.run(plan_file, plan_id="plans/nested-release", approval=APPROVAL)
    assert outcome.status == "completed", outcome
    lines = log.read_text().splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["deploy", "sleep", "sleep"]
    assert "post to releases: web v2 is out" in lines[1]


def test_guarded_reply_example_follows_the_sender_into_the_nested_plan(tmp_path: Path) -> None:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root, ignore=shutil.ignore_patterns("outbox.jsonl", "__pycache__"))
    config = load_config(root / "plangate.yml")
    plan_file = root / "plans" / "guarded-reply" / "PLAN.yml"
    loaded = plans.load_plan(plan_file, config)
    assert loaded.valid, loaded.problems
    fsutil.write_atomic(plan_file, plans.freeze_text(loaded).text)
    engine = Engine(config, state_dir=tmp_path / "state")
    outcome = engine.run(plan_file, plan_id="plans/guarded-reply", approval=APPROVAL)
    assert outcome.status == "completed", outcome
    [sent] = [
        json.loads(line) for line in (root / "mailbox" / "outbox.jsonl").read_text().splitlines()
    ]
    assert (sent["to"], sent["template"]) == ("dana@customer.example", "billing_response")
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "Nested action 4/1" in log and "precondition 1 (`email_known`): ✅ holds" in log
    # the same parent, pinning a reply plan without its guards: the flow is refused
    child = root / "plans" / "common" / "reply" / "PLAN.yml"
    text = child.read_text()
    bare = text[: text.index("    # Checked before each try")]
    child.write_text(bare)
    pin = plans.load_plan(child, config).hash
    assert pin is not None
    parent = plan_file.read_text().split("frozen:")[0]
    old = parent.split('hash: "')[1].split('"')[0]
    plan_file.write_text(parent.replace(old, pin))
    problems = plans.load_plan(plan_file, config).problems
    assert [(p.code, p.path) for p in problems] == [("E_UNGUARDED_FLOW", "actions[3].inputs.to")]


def test_every_example_plan_is_valid_under_the_example_config() -> None:
    from tests.support.gitenv import run_cli

    files = sorted(str(p) for p in (EXAMPLES / "plans").rglob("PLAN.yml"))
    assert len(files) >= 8
    found = run_cli("validate", "--config", str(EXAMPLES / "plangate.yml"), *files)
    assert found.returncode == 0, found.stdout + found.stderr
    assert found.stdout.count(": valid (sha256:") == len(files)
