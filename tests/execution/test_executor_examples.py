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
