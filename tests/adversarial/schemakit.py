"""The schema labs of rounds 61-66 (``plangate schema`` against ``plangate validate``), played
once here.

No repo and no pass: a temp folder of plans, ``plangate schema`` (with ``--config`` when the
module has a catalog) once (:func:`plan_schema`), ``plangate validate --json`` once over all
the plans (:func:`validated`), and the schema applied with ``jsonschema`` to the same YAML
read as data (:func:`schema_errors`), as an editor would; :func:`judged` plays all three
(:func:`editor_verdicts`), on a config of the module's own (:func:`config_file`) or one
tool's ``params_schema`` (:func:`catalog_config`). A module keeps its plans (the variants,
as data), its config, its ``BROKEN`` entries and its assertions.

The shape labs of rounds 66-68 give each variant a tool of its own: a catalog of
``/bin/true`` exec tools, one ``params_schema`` each (:func:`exec_tools`, under
:data:`CONFIG_HEAD`: :func:`tools_config`), and one plan calling one tool
(:func:`tool_plan`).
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

from advkit import load_yaml
from mcpkit import PLANGATE


def _config_args(config: Path | None) -> list[str]:
    return ["--config", str(config)] if config is not None else []


def plan_schema(folder: Path, config: Path | None = None) -> dict[str, Any]:
    """``plangate schema`` (``--config config`` when given), run in ``folder``."""
    done = subprocess.run(
        [PLANGATE, "schema", *_config_args(config)],
        capture_output=True,
        text=True,
        check=True,
        cwd=folder,
    )
    return dict(json.loads(done.stdout))


def validate_rows(stdout: str) -> dict[str, Any]:
    """The rows of ``validate --json`` output (one JSON document per file, or a list) by the
    stem of each row's ``path``."""
    rows: dict[str, Any] = {}
    decoder, text, i = json.JSONDecoder(), stdout.strip(), 0
    while i < len(text):
        obj, i = decoder.raw_decode(text, i)
        while i < len(text) and text[i].isspace():
            i += 1
        for row in obj if isinstance(obj, list) else [obj]:
            rows[Path(str(row.get("path", ""))).stem] = row
    return rows


def validated(
    folder: Path, plans: dict[str, str], config: Path | None = None
) -> tuple[dict[str, Any], str]:
    """Each plan written to ``folder/<vid>.yml`` and ``plangate validate --json`` (``--config
    config`` when given) run once over them all in ``folder``: its rows by ``vid`` and its
    stderr."""
    for vid, text in plans.items():
        (folder / f"{vid}.yml").write_text(text)
    done = subprocess.run(
        [PLANGATE, "validate", "--json", *_config_args(config), *[f"{v}.yml" for v in plans]],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=120,
    )
    return validate_rows(done.stdout), done.stderr


def schema_errors(checker: Any, text: str, limit: int | None = 200) -> list[str]:
    """What ``checker`` (a ``jsonschema`` validator) says of the plan ``text`` read as JSON
    data: each error's message (its first ``limit`` characters)."""
    data = json.loads(json.dumps(load_yaml(text), default=str))
    return [e.message[:limit] for e in checker.iter_errors(data)]


#: The head of a schema lab's config (the repo and state dir under ``{root}``, Alice the
#: approver): its ``tools:`` follow.
CONFIG_HEAD = """\
repo: {root}/repo
state_dir: {root}/state
approval:
  approvers: ["alice@example.com"]
tools:
"""

#: A config whose catalog tool ``rec`` (an exec tool) has the ``params_schema`` of a module.
CATALOG = (
    CONFIG_HEAD
    + """\
  rec:
    kind: exec
    argv: ["/bin/true", "{{tag}}"]
    params_schema:
{schema}  echo: {{kind: echo}}
"""
)


def exec_tools(tools: dict[str, str]) -> str:
    """The ``tools:`` lines of a catalog of ``/bin/true`` exec tools, by name, each with its
    ``params_schema`` (a YAML flow mapping)."""
    return "".join(
        f'  {name}:\n    kind: exec\n    argv: ["/bin/true"]\n    params_schema: {schema}\n'
        for name, schema in tools.items()
    )


def tool_plan(tool: str, params: str) -> str:
    """A pending plan whose one action calls ``tool`` with ``params`` (a YAML flow mapping)."""
    return (
        'plan: {name: "n", task: "t", status: pending_approval}\n'
        f"available_tools: [{{name: {tool}}}]\n"
        f'actions:\n  - {{id: 1, tool: {tool}, why: "w", params: {params}}}\n'
    )


def config_file(folder: Path, template: str, **fields: str) -> Path:
    """``folder/plangate.yml`` (``template`` formatted with ``root``: ``folder``, and
    ``fields``) over an empty repo ``folder/repo``: the config ``--config`` reads."""
    (folder / "repo").mkdir()
    subprocess.run(["git", "init", "-q", str(folder / "repo")], check=True)
    cfg = folder / "plangate.yml"
    cfg.write_text(template.format(root=folder, **fields))
    return cfg


def catalog_config(folder: Path, params_schema: str) -> Path:
    """:func:`config_file` of :data:`CATALOG` with ``params_schema`` (YAML): the config
    ``--config`` reads its catalog from."""
    return config_file(folder, CATALOG, schema=textwrap.indent(params_schema, " " * 6))


def tools_config(folder: Path, tools: dict[str, str]) -> Path:
    """:func:`config_file` of :data:`CONFIG_HEAD` over :func:`exec_tools` of ``tools``."""
    return config_file(folder, CONFIG_HEAD + "{tools}", tools=exec_tools(tools))


def editor_verdicts(
    schema: dict[str, Any], plans: dict[str, str], rows: dict[str, Any]
) -> dict[str, Any]:
    """Per plan of ``plans`` (``vid`` -> text): its ``validate`` row (``rows``) and the
    ``schema`` errors an editor shows (``jsonschema`` 2020-12, :func:`schema_errors`; one
    ``UNCHECKABLE ...`` line where the schema cannot be applied at all)."""
    import jsonschema

    checker = jsonschema.Draft202012Validator(schema)
    out: dict[str, Any] = {}
    for vid, text in plans.items():
        try:
            errors = schema_errors(checker, text)
        except Exception as why:  # an unresolvable $ref: the editor cannot check at all
            errors = [f"UNCHECKABLE {type(why).__name__}: {str(why)[:200]}"]
        out[vid] = {"validate": rows.get(vid), "schema": errors}
    return out


def judged(folder: Path, plans: dict[str, str], config: Path | None = None) -> dict[str, Any]:
    """``plangate schema`` once and ``plangate validate --json`` once over ``plans`` (both
    with ``--config config`` when given), in ``folder``: :func:`editor_verdicts`."""
    schema = plan_schema(folder, config)
    rows, err = validated(folder, plans, config)
    assert "Traceback" not in err, err[-2000:]
    return editor_verdicts(schema, plans, rows)
