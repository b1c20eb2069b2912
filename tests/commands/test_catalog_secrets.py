"""Round 49 (issue 11): a secret's value written literally in the catalog is hidden from what
describes the catalog (``plangate tools`` text and ``--json``, ``plangate show --config``'s
``runs:`` line, ``plangate schema --config`` and the MCP ``catalog`` tool), as from every
record the controller writes: one redaction (:func:`controller.plan.catalog.shown`).

Round 71: what the catalog publishes (a tool's name, description, ``params_schema``) may hold
no secret at all: every command refuses such a config at load (E_CONFIG_INVALID naming the
place, never the value). What it runs (argv, env, URL) may, and is shown masked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.gitenv import run_cli

FILED = "Zq8Wxx3Yv7Ut2"  # a value of the secrets file
ENVED = "Hn4Rtt6Pq2Lm"  # a value of a PLANGATE_SECRET_* variable
ENV = {"PLANGATE_SECRET_OTHER": ENVED}


def _config(tmp_path: Path, secrets: str | None = f"TOK: {FILED}\n") -> Path:
    sec = tmp_path / "sec.yml"
    if secrets is not None:
        sec.write_text(secrets)
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {tmp_path}\n"
        f"secrets: {{file: {sec}}}\n"
        "approval:\n  approvers: [alice@example.com]\n"
        "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
        "tools:\n"
        f'  t1: {{kind: exec, argv: ["/bin/echo", "{FILED}", "{ENVED}", "{{x}}"], '
        f'env: {{MODE: "{FILED}"}}, description: "uses a token", '
        f"params_schema: {{type: object, properties: {{x: {{type: string, "
        f'description: "not the token"}}}}}}}}\n'
        f'  t2: {{kind: http, method: POST, url: "https://h.example/{FILED}/x?mode={ENVED}"}}\n'
        '  greet: {kind: echo, description: "Returns its params"}\n'
    )
    return config


def _hidden(out: str) -> None:
    assert FILED not in out and ENVED not in out, out
    assert "***" in out, out


def test_tools_text_and_json_hide_the_catalogs_secrets(tmp_path: Path) -> None:
    config = str(_config(tmp_path))
    text = run_cli("tools", "--config", config, env=ENV)
    assert text.returncode == 0, text.stderr
    _hidden(text.stdout + text.stderr)
    assert "runs: exec: /bin/echo *** *** {x}" in text.stdout
    assert "runs: http: POST https://h.example/***/x?mode=***" in text.stdout
    assert "t1 (exec): uses a token" in text.stdout
    data = run_cli("tools", "--json", "--config", config, env=ENV)
    assert data.returncode == 0, data.stderr
    _hidden(data.stdout + data.stderr)
    tools = {t["name"]: t for t in json.loads(data.stdout)}
    assert tools["t1"]["description"] == "uses a token"
    assert tools["greet"]["description"] == "Returns its params"  # the rest as written


def test_show_config_hides_the_catalogs_secrets_in_runs(tmp_path: Path) -> None:
    config = str(_config(tmp_path))
    plan = tmp_path / "plans" / "p" / "PLAN.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text(
        "plan:\n  name: p\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: t1}, {name: t2}]\n"
        "actions:\n"
        '  - {id: 1, tool: t1, why: w, params: {x: "1"}}\n'
        "  - {id: 2, tool: t2, why: w, params: {}}\n"
    )
    for fmt in ("text", "json", "markdown", "toon"):
        result = run_cli("show", str(plan), "--format", fmt, "--config", config, env=ENV)
        assert result.returncode == 0, result.stderr
        out = result.stdout + result.stderr
        assert FILED not in out and ENVED not in out, out
        assert fmt == "markdown" or "***" in out, out  # markdown shows no runs: line
    text = run_cli("show", str(plan), "--config", config, env=ENV).stdout
    assert "runs: exec: /bin/echo *** *** {x}" in text


def test_schema_config_hides_the_catalogs_secrets(tmp_path: Path) -> None:
    result = run_cli("schema", "--config", str(_config(tmp_path)), env=ENV)
    assert result.returncode == 0, result.stderr
    assert FILED not in result.stdout and ENVED not in result.stdout  # it shows no argv
    assert "t1" in json.loads(result.stdout)["title"]


def test_an_unreadable_secrets_file_is_a_clear_error(tmp_path: Path) -> None:
    config = str(_config(tmp_path, secrets="[not, a, mapping]\n"))
    for args in (("tools",), ("tools", "--json"), ("schema",)):
        result = run_cli(*args, "--config", config)
        assert result.returncode not in (0, 1), (args, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr and "E_CONFIG_INVALID" in result.stderr
        assert "secrets.file" in result.stderr
    (tmp_path / "m").mkdir()
    missing = str(_config(tmp_path / "m", secrets=None))  # no such file
    result = run_cli("tools", "--config", missing)
    assert "Traceback" not in result.stderr and "E_CONFIG_INVALID" in result.stderr


def test_the_mcp_catalog_tool_hides_the_catalogs_secrets(tmp_path: Path) -> None:
    from tests.service.test_mcp import Session, call, with_agent

    config = _config(tmp_path)  # with_agent passes the server git's environment only
    got: dict[str, Any] = {}

    async def body(session: Session) -> None:
        got.update(await call(session, "catalog"))

    with_agent(config, body)
    tools = {t["name"]: t for t in got["tools"]}
    assert tools["t1"]["description"] == "uses a token"
    assert FILED not in json.dumps(got) and ENVED not in json.dumps(got)
    assert tools["greet"]["description"] == "Returns its params"


def _schema_config(tmp_path: Path, secrets: str = f"TOK: {FILED}\n") -> tuple[str, Path]:
    (tmp_path / "sec.yml").write_text(secrets)
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {tmp_path}\nsecrets: {{file: {tmp_path / 'sec.yml'}}}\n"
        "approval:\n  approvers: [alice@example.com]\n"
        "tools:\n"
        f"  t1: {{kind: echo, params_schema: {{type: object, properties: "
        f"{{x: {{type: string, pattern: '^{FILED}$'}}, y: {{enum: ['{FILED}', b]}}}}}}}}\n"
    )
    plan = tmp_path / "plans" / "p" / "PLAN.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text(
        "plan:\n  name: p\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: t1}]\n"
        "actions:\n  - {id: 1, tool: t1, why: w, params: {x: 'no', y: 'no'}}\n"
    )
    return str(config), plan


def test_a_catalog_publishing_a_secret_is_refused_at_load(tmp_path: Path) -> None:
    """Round 71: a catalog whose published parts hold a secret (of the file or the
    environment) is refused by every command that loads the config, each place named by
    its path, never the value: no answer tells a right guess from a wrong one."""
    config = _config(tmp_path)
    text = config.read_text().replace('"uses a token"', f'"uses {ENVED}"')
    text = text.replace('"not the token"', f'"not the token", examples: ["a{FILED}b"]')
    config.write_text(text)
    for args in (("tools",), ("schema",), ("status",), ("validate", "--json", str(config))):
        result = run_cli(*args, "--config", str(config), env=ENV)
        out = result.stdout + result.stderr
        assert result.returncode == 2 and "E_CONFIG_INVALID" in out, (args, out)
        assert "tools.t1.description" in out and "$<secrets.NAME>" in out, (args, out)
        assert "tools.t1.params_schema.properties.x.examples.0" in out, (args, out)
        assert FILED not in out and ENVED not in out, (args, out)


def test_problems_quoting_a_params_schema_secret_are_printed_hidden(tmp_path: Path) -> None:
    """Round 49: every printer of problems goes through ``_shared.printed``. Round 71: a
    schema holding the secret no longer loads: each printer answers E_CONFIG_INVALID,
    naming the places (the pattern, the enum's item), never the value."""
    config, plan = _schema_config(tmp_path)
    for args in (
        ("validate", str(plan)),
        ("validate", "--json", str(plan)),
        ("freeze", str(plan)),
        ("show", str(plan)),
        ("show", str(plan), "--format", "json"),
    ):
        result = run_cli(*args, "--config", config)
        out = result.stdout + result.stderr
        assert result.returncode == 2, (args, out)
        assert "E_CONFIG_INVALID" in out and "Traceback" not in out, (args, out)
        assert "properties.x.pattern" in out and "properties.y.enum.0" in out, (args, out)
        assert FILED not in out, (args, out)
    without = run_cli("validate", str(plan))  # no config: the catalog is not read at all
    assert FILED not in without.stdout + without.stderr


def test_problems_with_an_unreadable_secrets_file_are_a_config_error(tmp_path: Path) -> None:
    config, plan = _schema_config(tmp_path, secrets="[not, a, mapping]\n")
    for args in (("validate", str(plan)), ("validate", "--json", str(plan)), ("show", str(plan))):
        result = run_cli(*args, "--config", config)
        out = result.stdout + result.stderr
        assert "Traceback" not in out and "E_CONFIG_INVALID" in out, (args, out)
        assert FILED not in out, (args, out)


def test_the_ui_plan_view_hides_a_params_schema_secret(tmp_path: Path) -> None:
    """The web UI's plan page: its problems and tool lines through the records' redactor."""
    from controller.service.ui.data import UiData
    from controller.settings import load_config

    config, plan = _schema_config(tmp_path)
    data = UiData(load_config(Path(config)), lambda: tmp_path)
    try:
        view = data._plan_view(plan, plan.read_text(), None)
    finally:
        data.close()
    assert "E_PARAMS_INVALID" in json.dumps(view)
    assert FILED not in json.dumps(view) and "***" in json.dumps(view["problems"])


def _guess_plan(tmp_path: Path, name: str, guess: str) -> Path:
    """A plan whose ``plan.status`` (quoted by its refusal) and ``y`` param (quoted beside
    the schema's enum) are a guess of the secret."""
    plan = tmp_path / f"{name}.yml"
    plan.write_text(
        f"plan:\n  name: {name}\n  task: t\n  status: '{guess}'\n"
        "available_tools: [{name: t1}]\n"
        f"actions:\n  - {{id: 1, tool: t1, why: w, params: {{x: 'no', y: '{guess}x'}}}}\n"
    )
    return plan


GUESSES = {"right": FILED, "wrong": FILED[:-1] + "Q"}


def _alike(answers: dict[str, str]) -> None:
    """The answers for the secret and for a wrong guess, each guess written GUESS."""
    import re

    right = answers["right"].replace(GUESSES["right"], "GUESS").replace("right", "NAME")
    wrong = answers["wrong"].replace(GUESSES["wrong"], "GUESS").replace("wrong", "NAME")
    right, wrong = (re.sub(r"sha256:[0-9a-f]{64}", "H", t) for t in (right, wrong))
    assert right == wrong, (right, wrong)
    assert "GUESS" in right and "***" in right, right  # the guess quoted, the schema masked


def test_validate_quotes_the_plans_own_guess_of_a_secret_as_written(tmp_path: Path) -> None:
    """Round 61: a refusal quoting the plan's text is no oracle for a secret. Round 71: a
    catalog holding the secret is refused at load, whatever the plan guesses: both guesses
    get the same refusal."""
    config, _plan = _schema_config(tmp_path)
    for args in (("validate",), ("validate", "--json")):
        answers = {}
        for name, guess in GUESSES.items():
            plan = _guess_plan(tmp_path, name, guess)
            result = run_cli(*args, str(plan), "--config", config)
            assert result.returncode == 2, result.stderr
            answers[name] = result.stdout + result.stderr
        assert answers["right"] == answers["wrong"], answers
        assert "E_CONFIG_INVALID" in answers["right"] and FILED not in answers["right"]


def test_the_mcp_validate_answer_quotes_the_agents_own_guess_as_written(tmp_path: Path) -> None:
    """Round 61 (and 71's rule for the catalog's part): MCP ``validate``'s answer
    (``AgentApi.validate``), held in process over a config whose catalog holds the secret
    as a secrets file changed after the load gives it (``plangate mcp`` refuses it at load):
    the guess as written, the schema masked, a right and a wrong guess alike."""
    from controller.service.agentapi import AgentApi
    from controller.settings import load_config

    config, _plan = _schema_config(tmp_path)
    api = AgentApi(load_config(Path(config)))
    got = {
        name: json.dumps(api.validate(_guess_plan(tmp_path, name, guess).read_text()))
        for name, guess in GUESSES.items()
    }
    _alike(got)


def test_the_ui_plan_view_shows_the_plans_own_text_as_written(tmp_path: Path) -> None:
    """The page shows the committed plan as its author wrote it; only the catalog's parts of
    its problems and the controller's blocks are redacted."""
    from controller.service.ui.data import UiData
    from controller.settings import load_config

    config, _plan = _schema_config(tmp_path)
    data = UiData(load_config(Path(config)), lambda: tmp_path)
    views = {}
    try:
        for name, guess in GUESSES.items():
            plan = _guess_plan(tmp_path, name, guess)
            text = plan.read_text() + f"execution: {{status: failed, error: 'saw {FILED}'}}\n"
            views[name] = json.dumps(data._plan_view(plan, text, None))
    finally:
        data.close()
    assert f"saw {FILED}" not in views["wrong"] and "saw ***" in views["wrong"]
    _alike({k: v.replace("saw ***", "") for k, v in views.items()})


def test_the_ui_plan_view_shows_the_validation_block_as_recorded(tmp_path: Path) -> None:
    """Round 63: the page's API redacted the committed ``validation:`` block again, the
    controller's answer to the author that quoted the plan as written: a status equal to a
    secret, or a secret's start before the author's ``...``, came back ``***``. The block is
    shown as recorded; the controller's other blocks stay redacted."""
    from controller.service.ui.data import UiData
    from controller.settings import load_config

    config, _plan = _schema_config(tmp_path)
    data = UiData(load_config(Path(config)), lambda: tmp_path)
    views = {}
    try:
        for name, guess in GUESSES.items():
            plan = _guess_plan(tmp_path, name, guess)
            text = plan.read_text() + (
                f"execution: {{status: failed, error: 'saw {FILED}'}}\n"
                "validation:\n  errors:\n"
                f"    - {{code: E_SCHEMA_INVALID, message: \"(got '{guess}')\", path: ''}}\n"
                f"    - {{code: E_SCHEMA_INVALID, message: \"(got '{guess[:8]}...')\"}}\n"
            )
            views[name] = data._plan_view(plan, text, None)["document"]
    finally:
        data.close()
    for name, guess in GUESSES.items():
        said = [e["message"] for e in views[name]["validation"]["errors"]]
        assert said == [f"(got '{guess}')", f"(got '{guess[:8]}...')"], said
        assert views[name]["execution"]["error"] == "saw ***"


def test_the_ui_plan_view_shows_the_controllers_record_of_a_run_as_recorded(
    tmp_path: Path,
) -> None:
    """Round 64: the page redacted the controller's committed record of a run again (its
    EXECUTION_LOG.md, its ``execution:`` block), so an action's ``why`` or a literal param
    equal to a guess of a secret, which the record quotes as written, came back ``***`` for
    the right guess only. The record is shown as the controller committed it."""
    from controller.git.ownrecord import ShownRecord
    from controller.service.ui.data import UiData
    from controller.settings import load_config

    config, _plan = _schema_config(tmp_path)
    data = UiData(load_config(Path(config)), lambda: tmp_path)
    pages = {}
    try:
        for name, guess in GUESSES.items():
            plan = _guess_plan(tmp_path, name, guess)
            execution = {"status": "awaiting_approval", "gate": {"params": {"note": guess}}}
            log = f"**Why:** {guess} that ran\n"
            record = ShownRecord({"execution": execution, "approval": None}, log, ())
            data._locked_git = lambda read, record=record: record  # type: ignore[method-assign]
            page: dict[str, Any] = {"document": {}}
            data._show_record(page, f"plans/{name}/PLAN.yml", plan.read_text())
            pages[name] = page
    finally:
        data.close()
    for name, guess in GUESSES.items():
        assert pages[name]["log"] == f"**Why:** {guess} that ran\n"
        assert pages[name]["document"]["execution"]["gate"]["params"] == {"note": guess}


def test_a_secret_of_the_environment_alone_is_found_in_the_catalog(tmp_path: Path) -> None:
    """No secrets file and no credential in the config: the check still reads the
    ``PLANGATE_SECRET_*`` environment (``_shared._may_hide_anything``), and a config
    holding no source of a secret loads without it."""
    config = tmp_path / "plangate.yml"
    config.write_text(f'repo: {tmp_path}\ntools:\n  t1: {{kind: echo, description: "x {ENVED}"}}\n')
    refused = run_cli("tools", "--config", str(config), env=ENV)
    assert refused.returncode == 2 and "tools.t1.description" in refused.stderr, refused.stderr
    assert ENVED not in refused.stdout + refused.stderr
    assert run_cli("tools", "--config", str(config)).returncode == 0
