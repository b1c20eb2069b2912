# ruff: noqa: E501  (tool command lines are clearer on one line each)
"""Property: a secret never reaches anything the controller writes, in any encoding (SPEC §6:
replaced by ``***`` in logs, state, commit messages, structured logs, tool output).

Attacks: a plan passes ``$<secrets.S>`` to tools that give it back encoded: ``\\u`` escapes
in JSON output, JSON's ``\\/``, non-ASCII escaped by ``ensure_ascii``, a long output cut by
``max_result_bytes`` in the middle of the token, a URL-encoded secret in a failing HTTP
tool's error, a schema error quoting a secret that holds quotes, an exec error naming the
program path that holds the secret, stderr carrying a secret with a line break (logs fold
it to ``\\n``), a captured output written back into PLAN.yml with YAML escapes.

Defence: no form of the secret — raw, URL-encoded, JSON/\\u/YAML-escaped, Python repr, or
any 8+ character prefix — appears in git history (all commits, messages and files), the
controller's log lines, ``plangate status``, or its state directory.
"""

from __future__ import annotations

import hashlib
import json
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared

PY = json.dumps(sys.executable)


def _body(vid: str, middle: str = "") -> str:
    """16 letters from g-z unique to the variant (no hex, so no commit id can match), with
    ``middle`` in the middle: any 8 of them in a row is the secret leaking."""
    digest = hashlib.sha256(vid.encode()).digest()
    letters = "".join("ghijklmnopqrstuvwxyz"[b % 20] for b in digest[:16])
    return letters[:8] + middle + letters[8:]


# variant -> (secret, tool definition, extra plan lines)
# changed (fix130s): secret on stdin, argv refuses it (each exec tool reads params JSON)
TOOLS = {
    "json-u-escapes": (
        "Zu" + _body("json-u-escapes"),
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import sys; print('{{\\\"v\\\": \\\"' + ''.join('\\\\\\\\u%04x' % ord(c) for c in __import__('json').loads(sys.stdin.buffer.read())['token']) + '\\\"}}')\"]}}",
    ),
    "json-slash-escape": (
        "Zs/" + _body("json-slash-escape", "/"),
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import json, sys; print(json.dumps({{'v': __import__('json').loads(sys.stdin.buffer.read())['token']}}).replace('/', '\\\\\\\\/'))\"]}}",
    ),
    "ensure-ascii": (
        "Zä" + _body("ensure-ascii", "ë"),
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import json, sys; print(json.dumps({{'v': __import__('json').loads(sys.stdin.buffer.read())['token']}}))\"]}}",
    ),
    "truncated": (
        _body("truncated") * 2,
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import sys; print((__import__('json').loads(sys.stdin.buffer.read())['token'] + '|') * 400)\"]}}",
    ),
    "url-encoded-error": (
        "Zq " + _body("url-encoded-error", "/+=&"),
        '{kind: http, method: POST, url: "http://127.0.0.1:9/hook/{token}", timeout: 5}',
    ),
    "schema-error-quotes": (
        'Zq"' + _body("schema-error-quotes", "'") + "\\x",
        "{kind: echo, params_schema: {type: object, properties: {token: {type: string, maxLength: 3}}}}",
    ),
    "schema-pattern": (
        "Zp'" + _body("schema-pattern", '"'),
        '{kind: echo, params_schema: {type: object, properties: {token: {type: string, pattern: "^x$"}}}}',
    ),
    "exec-missing-program": (
        "Zm'" + _body("exec-missing-program", "'"),
        '{kind: exec, argv: ["/nonexistent/{token}/tool"]}',
    ),
    "stderr-newline": (
        _body("stderr-newline", "\n") + "-tail",
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import sys; sys.stderr.write(__import__('json').loads(sys.stdin.buffer.read())['token']); sys.exit(2)\"]}}",
    ),
    "yaml-escaped-output": (
        'Zy: "' + _body("yaml-escaped-output", '" #') + "\\e",
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import json, sys; print(json.dumps({{'v': __import__('json').loads(sys.stdin.buffer.read())['token']}}))\"]}}",
    ),
    "plain-stdout": (
        _body("plain-stdout"),
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import sys; print(__import__('json').loads(sys.stdin.buffer.read())['token'])\"]}}",
    ),
    "plain-json-output": (
        _body("plain-json-output"),
        f"{{kind: exec, argv: [{PY}, \"-c\", \"import json, sys; print(json.dumps({{'v': __import__('json').loads(sys.stdin.buffer.read())['token']}}))\"]}}",
    ),
}
VIDS = list(TOOLS)


def _plan(vid: str, index: int) -> str:
    outputs = (
        '    outputs:\n      - {name: v, path: "$.json.v", optional: true}\n'
        if vid in ("yaml-escaped-output", "plain-json-output", "ensure-ascii", "json-u-escapes")
        else ""
    )
    return (
        "plan:\n"
        f'  name: "{vid}"\n'
        '  task: "a tool that gives a secret back in another form"\n'
        "  status: pending_approval\n"
        f"available_tools:\n  - name: t{index}\n"
        "actions:\n  - id: 1\n"
        f"    tool: t{index}\n"
        '    why: "use the token"\n'
        f'    params: {{token: "$<secrets.S{index}>"}}\n' + outputs
    )


def forms(secret: str) -> set[str]:
    """Every way the secret may be written down: encoded whole (and JSON-escaped once more,
    as a JSON string inside JSON), and any 8 characters of it in a row."""
    whole = {
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote(secret),
        urllib.parse.quote_plus(secret),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        "".join(f"\\u{ord(c):04x}" for c in secret),
        secret.replace("/", "\\/"),
        secret.replace("\n", "\\n"),
    }
    found = whole | {json.dumps(f)[1:-1] for f in whole}
    found |= {secret[i:j] for i in range(len(secret)) for j in range(i + 8, len(secret) + 1)}
    return {f for f in found if len(f) >= 8}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    tools = "".join(f"t{i}: {TOOLS[vid][1]}\n" for i, vid in enumerate(VIDS))
    lab.write_config(tools=tools, extra="limits: {max_result_bytes: 2000}\n")
    lab.extra_env = {f"PLANGATE_SECRET_S{i}": TOOLS[vid][0] for i, vid in enumerate(VIDS)}  # type: ignore[attr-defined]
    for i, vid in enumerate(VIDS):
        lab.write(vid, _plan(vid, i))
    lab.commit("plans", AGENT)
    runs = [lab.run()]
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    runs.append(lab.run())
    lab.written = "\n".join(  # type: ignore[attr-defined]
        [r.stderr + r.stdout for r in runs]
        + [
            lab.git("log", "--all", "-p", "--text", "--format=%H%n%B"),
            lab.cli("status", "--json", "--config", str(lab.config)).stdout,
            _state_text(lab.state),
        ]
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-secrets", _build_lab)


def _state_text(state: Path) -> str:
    parts = []
    for path in sorted(state.rglob("*")):
        if path.is_file():
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def test_the_tools_really_got_the_secrets(lab: Lab) -> None:
    """The bench: every plan ran (or failed) after its start, and the controller knew the
    secrets (the plain controls were replaced by ***)."""
    for vid in VIDS:
        assert lab.started(vid), vid
    assert "***" in lab.written  # type: ignore[attr-defined]


_LEAK = {
    "json-u-escapes": "the tool's \\u-escaped output is stored as written",
    "json-slash-escape": "the tool's \\/-escaped output is stored as written",
    "ensure-ascii": "the tool's ensure_ascii output is stored as written",
    "truncated": "a result cut mid-token keeps the token's first characters",
    "url-encoded-error": "the URL-encoded secret is in the HTTP error",
    "schema-error-quotes": "the schema error quotes the secret with escapes",
    "schema-pattern": "the schema error quotes the secret with escapes",
    "exec-missing-program": "the exec error quotes the program path with escapes",
    "stderr-newline": "the error quotes stderr's last line: the end of a multi-line secret",
    "yaml-escaped-output": "the YAML-escaped captured output keeps the secret",
}
# Every form is redacted since issue 11 (execution/secrets.py: per-character encodings,
# marked cuts, the lines of a multi-line secret).
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_no_form_of_a_secret_is_written(lab: Lab, vid: str) -> None:
    written: str = lab.written  # type: ignore[attr-defined]
    leaked = sorted(f for f in forms(TOOLS[vid][0]) if f in written)
    assert not leaked, f"secret leaked as {leaked[:3]}"
