"""plangate.yml: a bad value is refused when the config is read (``plangate run``,
``plangate validate``, a SIGHUP reload), never discovered later when it is used.

Each refusal is E_CONFIG_INVALID (exit 2) naming the file, the line, the key, what was found
and a remedy, without a traceback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller.errors import ConfigInvalid
from controller.service.daemon import Daemon
from controller.service.httpd import HttpServer, QuietHandler
from controller.service.sdnotify import Notifier
from controller.settings import (
    HTTP_METHODS,
    MAX_SECONDS,
    is_branch_name,
    load_config,
    parse_listen,
)
from controller.settings.models import default_state_dir
from tests.support.daemonkit import running_daemon, wait_for_commit
from tests.support.gitenv import EXAMPLES, commit_all, run_cli
from tests.support.gitkit import write_plan

# (config text, location, what was found, a piece of the remedy)
BAD_VALUES = {
    "params_schema pattern with Python flags": (  # round 55: ECMA-262, refused, not misread
        "tools:\n  s: {kind: echo, params_schema: {properties: {n: {pattern: '(?i)^web$'}}}}\n",
        "tools.s.params_schema",
        "params_schema.properties.n.pattern",
        "ECMA-262 without flags",
    ),
    "params_schema patternProperties with a Python flag": (
        "tools:\n  s: {kind: echo, params_schema: {patternProperties: {'(?i)x': {}}}}\n",
        "tools.s.params_schema",
        "params_schema.patternProperties",
        "ECMA-262 without flags",
    ),
    "params_schema $ref to another tool's $id": (  # round 65: stopped every pass
        "tools:\n  o: {kind: echo, params_schema: {$id: 'urn:x:o', $defs: {v: {}}}}\n"
        "  s: {kind: echo, params_schema: {properties: {v: {$ref: 'urn:x:o#/$defs/v'}}}}\n",
        "tools.s.params_schema",
        "$ref 'urn:x:o#/$defs/v' does not resolve inside",
        "point each $ref into the tool's own schema",
    ),
    "params_schema $ref to a remote URI": (  # nothing is fetched
        "tools:\n  s: {kind: echo, params_schema: {$ref: 'https://schemas.example.invalid/s'}}\n",
        "tools.s.params_schema",
        "$ref 'https://schemas.example.invalid/s' does not resolve inside",
        "copy a definition two tools share into each tool's $defs",
    ),
    "params_schema $ref to a missing definition": (
        "tools:\n  s: {kind: echo, params_schema: {items: {$dynamicRef: '#/$defs/none'}}}\n",
        "tools.s.params_schema",
        "$ref '#/$defs/none'",
        "point each $ref into the tool's own schema",
    ),
    # round 114: a $ref that applies the schema to the same value again never ends; every
    # reader of a plan calling the tool died of Python's recursion limit, every pass with it
    "params_schema $ref to itself": (
        "tools:\n  s: {kind: echo, params_schema: {$ref: '#'}}\n",
        "tools.s.params_schema",
        "$ref '#' leads back to where it stands",
        "below properties, items or additionalProperties",
    ),
    "params_schema $defs naming each other": (
        "tools:\n  s: {kind: echo, params_schema: {$defs: {a: {$ref: '#/$defs/b'}, "
        "b: {$ref: '#/$defs/a'}}, $ref: '#/$defs/a'}}\n",
        "tools.s.params_schema",
        "$ref '#/$defs/a' leads back",
        "remove the loop",
    ),
    "params_schema anyOf around a $ref to itself": (
        "tools:\n  s: {kind: echo, params_schema: {anyOf: [{$ref: '#'}, {type: object}]}}\n",
        "tools.s.params_schema",
        "$ref '#'",
        "remove the loop",
    ),
    "params_schema property pointing at itself": (
        "tools:\n  s: {kind: echo, params_schema: {properties: {t: {$ref: '#/properties/t'}}}}\n",
        "tools.s.params_schema",
        "$ref '#/properties/t'",
        "remove the loop",
    ),
    "params_schema $anchor loop": (
        "tools:\n  s: {kind: echo, params_schema: {$anchor: me, allOf: [{$ref: '#me'}]}}\n",
        "tools.s.params_schema",
        "$ref '#me'",
        "remove the loop",
    ),
    "params_schema two $id naming each other": (
        "tools:\n  s: {kind: echo, params_schema: {$id: 'urn:x', "
        "$defs: {a: {$id: 'urn:y', $ref: 'urn:x'}}, $ref: 'urn:y'}}\n",
        "tools.s.params_schema",
        "$ref 'urn:",
        "remove the loop",
    ),
    "http method": (
        'tools:\n  fetch: {kind: http, method: FROB, url: "https://x.example/{a}"}\n',
        "tools.fetch.method",
        "'FROB'",
        "use one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS",
    ),
    "webhook listen": ("webhook: {listen: nope}\n", "webhook.listen", "'nope'", "host:port"),
    "metrics listen": ("metrics: {listen: nope}\n", "metrics.listen", "'nope'", "host:port"),
    "listen port too big": (
        "metrics: {listen: '127.0.0.1:65536'}\n",
        "metrics.listen",
        "'65536'",
        "port from 1 to 65535",
    ),
    "listen port not a number": (
        "metrics: {listen: 'localhost:http'}\n",
        "metrics.listen",
        "'http'",
        "e.g. 127.0.0.1:8787",
    ),
    "listen host not an address": (
        "webhook: {listen: '999.1.1.1:8787'}\n",
        "webhook.listen",
        "'999.1.1.1'",
        "e.g. 127.0.0.1:8787",
    ),
    "listen IPv6 without brackets": (
        "webhook: {listen: '::1:8787'}\n",
        "webhook.listen",
        "'::1:8787'",
        "[::1]:8787",
    ),
    "listen not a string": ("metrics: {listen: 9187}\n", "metrics.listen", "9187", "string"),
    "listen empty": (
        "metrics: {listen: ''}\n",
        "metrics.listen",
        "found ''",
        "null turns the endpoint off",
    ),
    "tool timeout zero": (
        "tools:\n  t: {kind: echo, timeout: 0}\n",
        "tools.t.timeout",
        "found 0",
        "greater than 0",
    ),
    "tool timeout negative": (
        "tools:\n  t: {kind: echo, timeout: -5}\n",
        "tools.t.timeout",
        "found -5",
        "greater than 0",
    ),
    "tool timeout infinite": (
        "tools:\n  t: {kind: echo, timeout: .inf}\n",
        "tools.t.timeout",
        "found inf",
        f"less than or equal to {MAX_SECONDS}",
    ),
    "tool timeout yes/no": (
        "tools:\n  t: {kind: echo, timeout: true}\n",
        "tools.t.timeout",
        "found true",
        "write a number",
    ),
    "negative limit": (
        "limits: {max_actions: -1}\n",
        "limits.max_actions",
        "found -1",
        "greater than 0",
    ),
    "zero result limit": (
        "limits: {max_result_bytes: 0}\n",
        "limits.max_result_bytes",
        "found 0",
        "greater than 0",
    ),
    "webhook body limit": (
        "webhook: {max_body_bytes: -1}\n",
        "webhook.max_body_bytes",
        "found -1",
        "greater than 0",
    ),
    "exec argv empty": (
        "tools:\n  x: {kind: exec, argv: []}\n",
        "tools.x.argv",
        "missing",
        "add `argv`",
    ),
    "exec program empty": (
        "tools:\n  x: {kind: exec, argv: ['', '-v']}\n",
        "tools.x.argv",
        "found '' as the program",
        "start argv with the program",
    ),
    "exec env name": (
        "tools:\n  x: {kind: exec, argv: [env], env: {'A=B': x}}\n",
        "tools.x.env.A=B",
        "'A=B'",
        "names without `=`",
    ),
    "python target": (
        "tools:\n  p: {kind: python, target: 'mailtools:'}\n",
        "tools.p.target",
        "'mailtools:'",
        "e.g. mailtools:list_mail",
    ),
    "python target without function": (
        "tools:\n  p: {kind: python, target: mailtools}\n",
        "tools.p.target",
        "'mailtools'",
        "a colon and the function",
    ),
    "http url without scheme": (
        "tools:\n  h: {kind: http, url: hooks.example.com/x}\n",
        "tools.h.url",
        "'hooks.example.com/x'",
        "https://hooks.example.com/{channel}",
    ),
    "http url bad port": (
        "tools:\n  h: {kind: http, url: 'https://h.example:99999/'}\n",
        "tools.h.url",
        "'https://h.example:99999/'",
        "write a full URL",
    ),
    "http header": (
        "tools:\n  h: {kind: http, url: 'https://h.example/', headers: {'X Team': ops}}\n",
        "tools.h.headers.X Team",
        "'X Team'",
        "e.g. X-Team",
    ),
    "option of another kind": (
        "tools:\n  g: {kind: echo, argv: [rm, -rf, /]}\n",
        "tools.g.argv",
        "found argv, not an option of a tool of kind echo",
        "tools of kind echo take description, params_schema, idempotent, timeout",
    ),
    "http option on exec": (
        "tools:\n  x: {kind: exec, argv: [/bin/true], method: GET}\n",
        "tools.x.method",
        "found method",
        "tools of kind exec take argv, env, cwd",
    ),
    "misspelled option": (
        "tools:\n  h: {kind: http, url: 'https://h.example/', metod: GET}\n",
        "tools.h.metod",
        "unknown key",
        "did you mean `method`?",
    ),
    "tool name no plan can declare": (
        "tools:\n  'send mail': {kind: echo}\n",
        "tools.send mail",
        "'send mail'",
        "letters, digits, _ and -",
    ),
    "poll interval zero": (
        "remote: {url: 'git://h.example/p.git', poll_interval: 0}\n",
        "remote.poll_interval",
        "found 0",
        "greater than 0",
    ),
    "remote url empty": ("remote: {url: ''}\n", "remote.url", "found ''", "ssh://"),
    "remote url an option": (
        "remote: {url: '--upload-pack=touch /tmp/x'}\n",
        "remote.url",
        "'--upload-pack=touch /tmp/x'",
        "start with `-`",
    ),
    "remote branch": (
        "remote: {url: 'git://h.example/p.git', branch: 'release..1'}\n",
        "remote.branch",
        "'release..1'",
        "git check-ref-format",
    ),
    "max_age unit": ("approval: {max_age: 7x}\n", "approval.max_age", "'7x'", "s, m, h, d or w"),
    "max_age negative": (
        "approval: {max_age: -3600}\n",
        "approval.max_age",
        "-3600",
        "positive duration",
    ),
    "max_age zero": ("approval: {max_age: 0d}\n", "approval.max_age", "'0d'", "positive duration"),
    "identity name git would change": (
        "identity: {name: ' plangate', email: plangate@localhost}\n",
        "identity.name",
        "' plangate'",
        "without spaces or punctuation",
    ),
    "identity email with brackets": (
        "identity: {email: '<plangate@localhost>'}\n",
        "identity.email",
        "'<plangate@localhost>'",
        "without < >",
    ),
    "secrets prefix empty": (
        "secrets: {env_prefix: ''}\n",
        "secrets.env_prefix",
        "found ''",
        "e.g. PLANGATE_SECRET_",
    ),
    "webhook secret variable": (
        "webhook: {secret_env: 'hook-secret'}\n",
        "webhook.secret_env",
        "'hook-secret'",
        "letters, digits and _",
    ),
    "concurrency zero": (
        "execution: {max_concurrent_plans: 0}\n",
        "execution.max_concurrent_plans",
        "found 0",
        "greater than 0",
    ),
    "checkpoint interval negative": (
        "execution: {checkpoint_interval: -1}\n",
        "execution.checkpoint_interval",
        "found -1",
        "greater than 0",
    ),
    "plans_dir outside the repo": (
        "plans_dir: ../elsewhere\n",
        "plans_dir",
        "'../elsewhere'",
        "relative to the repo root",
    ),
    "section not a mapping": ("webhook: nope\n", "webhook", "'nope'", "mapping"),
}


def refusal(tmp_path: Path, text: str) -> ConfigInvalid:
    path = tmp_path / "plangate.yml"
    path.write_text(text)
    with pytest.raises(ConfigInvalid) as info:
        load_config(path)
    return info.value


@pytest.mark.parametrize(
    ("text", "location", "found", "remedy"), BAD_VALUES.values(), ids=list(BAD_VALUES)
)
def test_bad_value_is_refused_at_load(
    tmp_path: Path, text: str, location: str, found: str, remedy: str
) -> None:
    error = refusal(tmp_path, text)
    assert error.code == "E_CONFIG_INVALID" and error.exit_code == 2
    assert str(tmp_path / "plangate.yml") in error.message
    assert f": {location}: " in error.message
    assert found in error.message
    assert remedy in error.remedy


def test_a_schema_that_refers_to_itself_below_an_item_loads(tmp_path: Path) -> None:
    """A tree (a $ref back to the schema below ``items`` or ``properties``) ends with the
    value: it loads, and params are checked against it to any depth."""
    from controller.plan.plans import static_params_errors

    path = tmp_path / "plangate.yml"
    path.write_text(
        "tools:\n  t: {kind: echo, params_schema: {type: object, properties: {name: {type: "
        "string}, kids: {type: array, items: {$ref: '#'}}}}}\n"
    )
    schema = load_config(path).tools["t"].params_schema
    deep: dict[str, object] = {"name": "leaf"}
    for _ in range(30):
        deep = {"name": "n", "kids": [deep]}
    assert list(static_params_errors(deep, schema)) == []
    bad = {"kids": [{"kids": [{"name": 7}]}]}
    assert [where for where, *_ in static_params_errors(bad, schema)] == [
        ("kids", 0, "kids", 0, "name")
    ]


def test_the_line_of_the_bad_value_is_named(tmp_path: Path) -> None:
    text = "plans_dir: plans\ntools:\n  fetch:\n    kind: http\n    method: FROB\n"
    error = refusal(tmp_path, text + "    url: https://h.example/\n")
    assert f"{tmp_path / 'plangate.yml'}:5: tools.fetch.method:" in error.message


def test_every_bad_value_is_reported_at_once_in_file_order(tmp_path: Path) -> None:
    error = refusal(
        tmp_path,
        "metrics: {listen: nope}\n"
        "tools:\n  fetch: {kind: http, method: FROB, url: 'https://h.example/'}\n"
        "limits: {max_actions: -1}\n",
    )
    lines = error.message.splitlines()
    assert lines[0] == f"3 problems in {tmp_path / 'plangate.yml'}:"
    assert [line.split(": ")[1] for line in lines[1:]] == [
        "metrics.listen",
        "tools.fetch.method",
        "limits.max_actions",
    ]
    assert "use one of GET" in lines[2]  # each problem keeps its own remedy


def test_validate_refuses_a_bad_http_method_with_exit_2(tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text(
        "tools:\n  echo: {kind: echo}\n  fetch: {kind: http, method: FROB, url: 'https://h.example/'}\n"
    )
    plan = write_plan(tmp_path)
    result = run_cli("validate", "--config", str(config), str(plan), cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"E_CONFIG_INVALID: {config}:3: tools.fetch.method: found 'FROB'" in result.stderr
    assert "remedy: use one of " + ", ".join(HTTP_METHODS) in result.stderr


@pytest.mark.parametrize("key", ["webhook", "metrics"])
def test_run_refuses_a_bad_listen_address_before_starting(
    repo: Path, tmp_path: Path, key: str
) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\n{key}:\n  listen: nope\n")
    result = run_cli("run", "--once", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"E_CONFIG_INVALID: {config}:3: {key}.listen: found 'nope'" in result.stderr
    assert "remedy: write host:port" in result.stderr
    assert not default_state_dir(repo).exists()  # refused before any work


def test_remote_mode_without_a_state_dir_is_refused_at_start(tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text("remote: {url: 'git://127.0.0.1:1/plans.git'}\n")
    env = {k: v for k, v in os.environ.items() if k != "STATE_DIRECTORY"}
    result = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "E_CONFIG_INVALID at state_dir:" in result.stderr
    assert "remedy: set state_dir" in result.stderr


def test_reload_keeps_the_old_config_when_a_value_is_bad(repo: Path, tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    good = (
        f"repo: {repo}\ntools:\n  fetch: {{kind: http, method: POST, url: 'https://h.example/'}}\n"
    )
    config.write_text(good)
    daemon = Daemon(load_config(config), notifier=Notifier({}))
    before = daemon.config
    for bad in (good.replace("POST", "FROB"), good + "metrics: {listen: nope}\n"):
        config.write_text(bad)
        assert daemon.reload() is False
        assert daemon.config is before
    config.write_text(good.replace("POST", "put"))
    assert daemon.reload() is True
    assert daemon.config.tools["fetch"].method == "PUT"


def test_sighup_with_a_bad_value_is_refused_and_the_daemon_goes_on(
    repo: Path, tmp_path: Path
) -> None:
    config = tmp_path / "plangate.yml"
    good = textwrap.dedent(
        f"""\
        repo: {repo}
        approval: {{approvers: ["alice@example.com"]}}
        tools:
          greet: {{kind: echo}}
        """
    )
    config.write_text(good)
    with running_daemon(config) as daemon:
        daemon.wait_started()
        config.write_text(good + "  fetch: {kind: http, method: FROB, url: 'https://h.example/'}\n")
        daemon.send(signal.SIGHUP)
        event = daemon.wait_event("config.reload_refused", code="E_CONFIG_INVALID")
        assert "tools.fetch.method: found 'FROB'" in event["error"]
        assert "GET" in event["remedy"]  # the operator sees how to fix it, in the log
        write_plan(repo)
        commit_all(repo, "agent")
        wait_for_commit(repo, "plangate: freeze plans/greet")  # still at work, old catalog
        assert daemon.stop() == 0


@pytest.mark.parametrize(
    ("listen", "address"),
    [
        ("127.0.0.1:8787", ("127.0.0.1", 8787)),
        ("[::1]:9187", ("::1", 9187)),
        (":8787", ("", 8787)),
        ("localhost:0", ("localhost", 0)),
        ("metrics.ops.example.com.:65535", ("metrics.ops.example.com.", 65535)),
    ],
)
def test_listen_forms_that_are_accepted(
    tmp_path: Path, listen: str, address: tuple[str, int]
) -> None:
    assert parse_listen(listen) == address
    (tmp_path / "plangate.yml").write_text(f"metrics: {{listen: '{listen}'}}\n")
    assert load_config(tmp_path / "plangate.yml").metrics.listen == listen


def test_the_endpoints_use_the_config_parser() -> None:
    with pytest.raises(ConfigInvalid) as info:
        HttpServer("127.0.0.1:http", "metrics.listen", QuietHandler)
    assert "metrics.listen" in info.value.message and "host:port" in info.value.remedy


def test_methods_are_accepted_in_any_case_and_kept_upper_case(tmp_path: Path) -> None:
    tools = "".join(
        f"  t{n}: {{kind: http, method: {m.lower()}, url: 'https://h.example/{{x}}'}}\n"
        for n, m in enumerate(HTTP_METHODS)
    )
    (tmp_path / "plangate.yml").write_text("tools:\n" + tools)
    config = load_config(tmp_path / "plangate.yml")
    assert [spec.method for spec in config.tools.values()] == list(HTTP_METHODS)


def test_the_example_config_is_valid() -> None:
    config = load_config(EXAMPLES / "plangate.yml")
    assert config.tools["categorize"].argv == ["python3", "mailbox/categorize.py"]


@pytest.mark.parametrize(
    "name",
    [
        "main",
        "release/1.2",
        "feature/x-y_z",
        "a..b",
        "a//b",
        "a/",
        "/a",
        "a.",
        ".hidden",
        "a/.b",
        "x.lock",
        "a/b.lock/c",
        "a b",
        "a~1",
        "a^",
        "a:b",
        "a?",
        "a*",
        "a[1",
        "a\\b",
        "a@{1}",
        "a\tb",
        "",
    ],
)
def test_branch_names_agree_with_git(tmp_path: Path, name: str) -> None:
    git_says = subprocess.run(
        ["git", "check-ref-format", f"refs/heads/{name}"], cwd=tmp_path, capture_output=True
    )
    assert is_branch_name(name) is (git_says.returncode == 0)


@pytest.mark.parametrize("name", ["-main", "HEAD", "@"])
def test_branch_names_that_git_reads_as_something_else(name: str) -> None:
    """An option, or git's own names for the current commit."""
    assert not is_branch_name(name)


def test_every_exported_name_loads_from_its_module() -> None:
    """controller.settings loads names on first use: each must be there, and be the real one."""
    import importlib

    import controller.settings as settings

    for name in settings.__all__:
        module = importlib.import_module(f"controller.settings.{settings._WHERE[name]}")
        assert getattr(settings, name) is getattr(module, name), name
    assert set(settings._WHERE) == set(settings.__all__)
    with pytest.raises(AttributeError):
        _ = settings.no_such_name
