# ruff: noqa: E501
"""Round 21, what runs: the code behind a tool, and the secrets file, placed where the agent
writes (inside the watched working tree).

docs/configuration.md: ``plangate run`` refuses (``E_CONFIG_INVALID``) a ``state_dir`` or a
config file that resolves inside the watched tree, because the agent writes there and could
change what the controller trusts. The other paths of the config are not checked: a python
tool's ``python_path``, an exec tool's ``cwd`` (its script named relative to it), an exec
``argv`` naming a script by path, and ``secrets.file``. The shipped example
(``examples/plangate.yml``: ``python_path: [mailbox]``, the tools beside the plans) puts tool
code there.

Each variant is its own lab: the operator's tools live under ``<repo>/tools`` (committed by
the Owner, the secrets file git-ignored), two plans are frozen, Alice approves them, then the
agent commits a new ``tools/*.py`` (its ``go`` returns ``"AGENT CODE"``) and one pass runs.

- ``python-path``: ``pt: {kind: python, target: "r21tool:go"}`` with ``python_path:
  [<repo>/tools]``. **Broke**: the run passes (exit 0), the approved plan runs the agent's
  function (EXECUTION_LOG.md holds ``AGENT CODE``), the hash and the approval unchanged.
- ``exec-cwd``: ``et: {kind: exec, argv: [python, "t.py"], cwd: <repo>/tools}``. **Broke**
  likewise.
- ``exec-argv``: ``ea: {kind: exec, argv: [python, "<repo>/tools/t.py"]}``. **Broke**
  likewise.
- ``secrets-file``: ``secrets: {file: <repo>/secrets.yml}`` (git-ignored; the agent reads
  it, or ``git add -f`` puts every secret into git). **Broke**: the run is accepted.
- ``state-dir`` (control): ``state_dir: <repo>/.state``: held, refused ``E_CONFIG_INVALID``.

Asserted (the defence): ``run --once`` refuses the config (non-zero, ``E_CONFIG_INVALID``)
or no committed record under ``plans/`` holds ``AGENT CODE`` (the agent's edit never ran). Should: refuse
paths the controller executes or reads secrets from when they resolve inside the watched
tree (as for ``state_dir`` and the config), unless ``demo: true``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared

R21 = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 21: tool code / secrets file inside the watched tree are accepted; the agent's tool edit runs under an approval",
)
VIDS = ["python-path", "exec-cwd", "exec-argv", "secrets-file", "state-dir"]
#: round 21: all four broke; fixed since: python_path, an exec tool's cwd, program and
#: script files, and the secrets file are refused inside the watched tree (E_CONFIG_INVALID)
FOUND = {v: R21 for v in VIDS if v != "state-dir"}
BROKEN: dict[str, object] = {}
PY = json.dumps(sys.executable)


def _config(vid: str, repo: Path) -> tuple[str, str, str]:
    """(tools, extra config, the tool the plan calls)"""
    tools = repo / "tools"
    if vid == "python-path":
        return (
            'pt: {kind: python, target: "r21tool:go"}\n',
            f"python_path: [{json.dumps(str(tools))}]\n",
            "pt",
        )
    if vid == "exec-cwd":
        return (
            f'et: {{kind: exec, argv: [{PY}, "t.py"], cwd: {json.dumps(str(tools))}}}\n',
            "",
            "et",
        )
    if vid == "exec-argv":
        return f"ea: {{kind: exec, argv: [{PY}, {json.dumps(str(tools / 't.py'))}]}}\n", "", "ea"
    if vid == "secrets-file":
        return "", f"secrets: {{file: {json.dumps(str(repo / 'secrets.yml'))}}}\n", "echo"
    return "", "", "echo"  # state-dir: set below


def _one(root: Path, vid: str) -> dict[str, Any]:
    lab = Lab(root)
    repo = lab.repo
    (repo / "tools").mkdir()
    (repo / "tools" / "r21tool.py").write_text("def go(tag):\n    return {'v': 'reviewed'}\n")
    (repo / "tools" / "t.py").write_text('print(\'{"v": "reviewed"}\')\n')
    (repo / ".gitignore").write_text("secrets.yml\n.state/\n")
    (repo / "secrets.yml").write_text("TOKEN: S3cr3tVal-9f8e7d\n")
    lab.commit("operator's tools", ("Owner", "owner@example.com"))
    tools, extra, tool = _config(vid, repo)
    lab.write_config(tools=tools, extra=extra)
    if vid == "state-dir":
        text = lab.config.read_text().replace(
            f"state_dir: {lab.state}", f"state_dir: {repo / '.state'}"
        )
        lab.config.write_text(text)
    lab.write(
        vid,
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: {tool}}}]\n"
        f"actions:\n  - {{id: 1, tool: {tool}, why: w, params: {{tag: {vid}}}}}\n",
    )
    lab.commit("plan")
    first = lab.run(check=False)
    lab.approve(vid, ALICE)
    (repo / "tools" / "r21tool.py").write_text("def go(tag):\n    return {'v': 'AGENT CODE'}\n")
    (repo / "tools" / "t.py").write_text('print(\'{"v": "AGENT CODE"}\')\n')
    lab.commit("tidy the tools", AGENT)
    second = lab.run(check=False)
    return {
        "rcs": [first.returncode, second.returncode],
        "said": first.stdout + first.stderr + second.stdout + second.stderr,
        "history": lab.git("log", "--all", "-p", "--", "plans"),
    }


def _build(root: Path) -> Lab:
    lab = Lab(root / "main")
    lab.results = {vid: _one(root / vid, vid) for vid in VIDS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-toolreach", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_code_and_secrets_the_agent_writes_are_not_trusted(lab: Lab, vid: str) -> None:
    got = lab.results[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in got["said"]
    refused = any(rc != 0 for rc in got["rcs"]) and "E_CONFIG_INVALID" in got["said"]
    if vid == "secrets-file":
        assert refused, "a secrets file inside the watched tree was accepted"
    else:
        assert refused or "AGENT CODE" not in got["history"], (
            "the agent's tool edit ran under the approval"
        )
