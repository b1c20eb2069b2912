"""Nested plans pinned by hash (SPEC §12): the pinned version, and only it, runs inside the
parent's run, journaled and logged under the parent action; a crash inside it repeats no
side effect; a bad pin or path is refused at validation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from controller.errors import PlangateError
from controller.execution.executor import Engine
from controller.plan import plans, yamlio
from tests.execution.test_crash_resume import run_engine
from tests.support.executor_kit import appender, execution, journal_records, make_plan, run

CHILD = {
    "plan": {"name": "Notify", "task": "Tell the team", "status": "draft"},
    "inputs": {"channel": "ops", "text": "hello"},
    "available_tools": [{"name": "add"}],
    "actions": [
        {
            "id": 1,
            "tool": "add",
            "why": "post",
            "params": {"line": "$<inputs.channel>: $<inputs.text>"},
            "outputs": [{"name": "ok", "path": "$.json.ok"}],
        },
        {"id": 2, "tool": "add", "why": "log it", "params": {"line": "logged"}},
    ],
}


def write_child(root: Path, data: dict[str, Any] = CHILD, slug: str = "common/notify") -> str:
    folder = root / "plans" / slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PLAN.yml").write_text(yamlio.dump(data))
    loaded = plans.load_plan(folder / "PLAN.yml")
    assert loaded.hash
    return loaded.hash


def parent(root: Path, effects: Path, pin: str, **nested: Any) -> tuple[Any, Path]:
    actions = [
        {
            "id": 1,
            "tool": "add",
            "params": {"line": "deploy"},
            "outputs": [{"name": "v", "path": "$.json.ok"}],
        },
        {
            "id": 2,
            "plan": {"path": "plans/common/notify", "hash": pin},
            "inputs": {"text": "deployed $<actions[1].outputs.v>"},
            "outputs": [{"name": "posted", "path": "$.outputs['1'].ok"}],
            **nested,
        },
        {"id": 3, "tool": "add", "params": {"line": "after $<actions[2].outputs.posted>"}},
    ]
    return make_plan(root, actions, {"add": appender(effects)})


def test_the_pinned_plan_runs_inside_the_parent(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    config, plan_file = parent(tmp_path, effects, write_child(tmp_path))
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed", outcome
    assert effects.read_text() == "deploy\nops: deployed true\nlogged\nafter true\n"
    shown = [(a["id"], a["status"]) for a in execution(plan_file)["actions"]]
    assert shown == [
        (1, "succeeded"), (2, "succeeded"), ("2/1", "succeeded"), ("2/2", "succeeded"),
        (3, "succeeded"),
    ]  # fmt: skip
    starts = [r for r in journal_records(config, plan_file) if r["t"] == "start"]
    assert [r["id"] for r in starts] == [1, 2, "2/1", "2/2", 3]
    assert len({r["key"] for r in starts}) == 5  # keys derived from the parent's hash
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    assert "## Nested action 2/1: add" in log and "plan plans/common/notify" in log
    assert run(Engine(config), plan_file).status == "completed"  # nothing runs twice
    assert effects.read_text().count("logged") == 1


def test_a_changed_nested_plan_is_refused(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    config, plan_file = parent(tmp_path, effects, write_child(tmp_path))
    changed = {**CHILD, "inputs": {"channel": "everyone", "text": "hello"}}
    write_child(tmp_path, changed)
    loaded = plans.load_plan(plan_file, config)
    assert [(p.code, p.path) for p in loaded.problems] == [
        ("E_PLAN_HASH_MISMATCH", "actions[1].plan")
    ]
    with pytest.raises(PlangateError) as caught:
        run(Engine(config), plan_file)
    assert caught.value.code == "E_PLAN_HASH_MISMATCH"
    assert not effects.exists()


def test_a_crash_inside_the_nested_plan_repeats_nothing(tmp_path: Path) -> None:
    effects = tmp_path / "effects"
    parent(tmp_path, effects, write_child(tmp_path))
    run_engine(tmp_path, crash_at="after-tool:2/2")
    assert effects.read_text() == "deploy\nops: deployed true\nlogged\n"
    outcome = run_engine(tmp_path)
    assert (outcome["status"], outcome["code"]) == ("failed", "E_ACTION_IN_DOUBT")
    assert effects.read_text() == "deploy\nops: deployed true\nlogged\n"
    run_engine(tmp_path, crash_at="before-start:3", mode="resume")
    assert effects.read_text().count("logged") == 2  # the human approved re-running 2/2
    assert run_engine(tmp_path)["status"] == "completed"
    assert effects.read_text().endswith("after true\n")


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"plan": {"path": "plans/../plans/common/notify"}}, "E_SCHEMA_INVALID"),
        ({"plan": {"path": "/etc/notify"}}, "E_SCHEMA_INVALID"),
        ({"plan": {"path": "plans/nowhere"}}, "E_SCHEMA_INVALID"),
        ({"inputs": {"nope": 1}}, "E_SCHEMA_INVALID"),
        ({"on_failure": "retry"}, "E_SCHEMA_INVALID"),
        ({"params": {"x": 1}}, "E_SCHEMA_INVALID"),
    ],
)
def test_bad_nested_actions_are_refused(tmp_path: Path, change: dict[str, Any], code: str) -> None:
    pin = write_child(tmp_path)
    config, plan_file = parent(tmp_path, tmp_path / "e", pin)
    data = yamlio.read_yaml(plan_file.read_text()).data
    action = dict(data["actions"][1])
    for key, value in change.items():
        action[key] = {**action[key], **value, "hash": pin} if key == "plan" else value
    data = {**data, "actions": [data["actions"][0], action, data["actions"][2]]}
    _model, found = plans.check_document(data, config, plan_file)
    assert code in [p.code for p in found], found


def test_a_symlinked_nested_plan_is_refused(tmp_path: Path) -> None:
    pin = write_child(tmp_path, slug="real/notify")
    os.symlink(tmp_path / "plans" / "real", tmp_path / "plans" / "common")
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "add"}], {"add": {"kind": "echo"}})
    data = yamlio.read_yaml(plan_file.read_text()).data
    nested_action = {"id": 2, "why": "w", "plan": {"path": "plans/common/notify", "hash": pin}}
    data = {**data, "actions": [*data["actions"], nested_action]}
    _model, found = plans.check_document(data, config, plan_file)
    assert any("symlink" in p.message for p in found), found


def test_a_nested_plan_may_not_gate_or_nest(tmp_path: Path) -> None:
    config, plan_file = parent(tmp_path, tmp_path / "e", write_child(tmp_path))
    gated = {**CHILD, "actions": [{**CHILD["actions"][0], "requires_approval": True}]}
    pin = write_child(tmp_path, gated)
    data = yamlio.read_yaml(plan_file.read_text()).data
    action = {**data["actions"][1], "plan": {"path": "plans/common/notify", "hash": pin}}
    data = {**data, "actions": [data["actions"][0], action, data["actions"][2]]}
    _model, found = plans.check_document(data, config, plan_file)
    assert ("E_SCHEMA_INVALID", "actions[1].plan") in [(p.code, p.path) for p in found], found


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"timeout": 30}, "actions[1].timeout"),
        ({"idempotent": False}, "actions[1].idempotent"),
        ({"retry": {"attempts": 2}}, "actions[1].retry"),
    ],
)
def test_a_nested_action_takes_no_key_the_engine_ignores(
    tmp_path: Path, change: dict[str, Any], path: str
) -> None:
    """The engine runs a nested plan's own actions with their own settings: a timeout, an
    idempotent flag or retry settings on the parent action would be dropped, so they are
    refused where they are written."""
    pin = write_child(tmp_path)
    config, plan_file = parent(tmp_path, tmp_path / "e", pin)
    data = yamlio.read_yaml(plan_file.read_text()).data
    action = {**data["actions"][1], **change}
    data = {**data, "actions": [data["actions"][0], action, data["actions"][2]]}
    _model, found = plans.check_document(data, config, plan_file)
    assert [(p.code, p.path) for p in found] == [("E_SCHEMA_INVALID", path)], found


def test_a_nested_plan_with_a_gated_fallback_step_is_refused(tmp_path: Path) -> None:
    config, plan_file = parent(tmp_path, tmp_path / "e", write_child(tmp_path))
    step = {"id": "1.1", "tool": "add", "why": "undo", "requires_approval": True}
    first = {**CHILD["actions"][0], "on_failure": "fallback", "fallback": [step]}
    pin = write_child(tmp_path, {**CHILD, "actions": [first, CHILD["actions"][1]]})
    data = yamlio.read_yaml(plan_file.read_text()).data
    action = {**data["actions"][1], "plan": {"path": "plans/common/notify", "hash": pin}}
    data = {**data, "actions": [data["actions"][0], action, data["actions"][2]]}
    _model, found = plans.check_document(data, config, plan_file)
    assert [p.code for p in found] == ["E_SCHEMA_INVALID"], found
    assert "requires_approval" in found[0].message + found[0].path, found


@pytest.mark.parametrize("guess", ["r66-s3cr3t", "r66-s3cr3y"])
def test_a_nested_plans_inputs_its_authors_wrote_are_logged_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guess: str
) -> None:
    """Round 66: a child's ``$<inputs.*>`` filled by the parent's literal, or by the child's
    own default, was logged ``***`` for a right guess of a secret only (one approved run
    confirmed it); an input a secret fills stays ``***`` for both."""
    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", "r66-s3cr3t")
    child = {
        **CHILD,
        "inputs": {"channel": guess, "text": "x", "tok": "d"},
        "actions": [
            {
                "id": 1,
                "tool": "add",
                "why": "post",
                "params": {
                    "line": "$<inputs.channel> $<inputs.text>",
                    "tok": "$<inputs.tok>",
                },
            }
        ],
    }
    pin = write_child(tmp_path, child)
    nested = {
        "id": 1,
        "plan": {"path": "plans/common/notify", "hash": pin},
        "inputs": {"text": guess, "tok": "$<secrets.TOKEN>"},
    }
    gated = {**nested, "requires_approval": True}
    config, plan_file = make_plan(tmp_path, [gated], {"add": appender(tmp_path / "effects")})
    engine = Engine(config)
    assert run(engine, plan_file).status == "awaiting_approval"
    [preview] = execution(plan_file)["gate"]["actions"]  # the gate's preview reads alike
    assert preview["params"] == {"line": f"{guess} {guess}", "tok": "***"}
    assert run(engine, plan_file, gate_approved=1).status == "completed"
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    section = log[log.index("## Nested action 1/1") :]
    assert f'"line": "{guess} {guess}"' in section
    assert '"tok": "***"' in section


@pytest.mark.parametrize("guess", ["r67-s3cr3t", "r67-s3cr3y"])
def test_a_value_mixing_the_authors_text_with_a_secret_is_logged_from_its_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, guess: str
) -> None:
    """Round 67: a string mixing the author's literal with a secret, passed to a child and
    joined there, was logged ``***-***`` for a right guess of another secret (the redactor
    ran over the author's part); the child's ``$<plan.name>`` and its folder were masked
    the same way. Built from its parts, both guesses log alike."""
    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", "r67-s3cr3t")
    monkeypatch.setenv("PLANGATE_SECRET_OTHER", "r67-other")
    child = {
        **CHILD,
        "plan": {**CHILD["plan"], "name": guess},
        "inputs": {"g": "d", "h": "d", "k": "d"},
        "actions": [
            {
                "id": 1,
                "tool": "add",
                "why": "post",
                "params": {
                    "g": "$<inputs.g>",
                    "hk": "$<inputs.h>-$<inputs.k>",
                    "n": "$<plan.name>",
                },
            }
        ],
    }
    pin = write_child(tmp_path, child, slug=guess)
    nested = {
        "id": 1,
        "plan": {"path": f"plans/{guess}", "hash": pin},
        "inputs": {"g": f"{guess}-$<secrets.OTHER>", "h": guess, "k": "$<secrets.OTHER>"},
    }
    config, plan_file = make_plan(tmp_path, [nested], {"add": appender(tmp_path / "effects")})
    assert run(Engine(config), plan_file).status == "completed"
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    assert "r67-other" not in log
    section = log[log.index("## Nested action 1/1") :]
    for value in (f'"g": "{guess}-***"', f'"hk": "{guess}-***"', f'"n": "{guess}"'):
        assert value in section, section
    top = log[: log.index("## Nested action 1/1")]
    assert f'"g": "{guess}-***"' in top and f'"plan": "plans/{guess}"' in top, top
    journal = "".join(p.read_text() for p in (tmp_path / "state").rglob("*.jsonl"))
    assert "r67-s3cr3t" not in journal and "r67-other" not in journal  # redacted whole
