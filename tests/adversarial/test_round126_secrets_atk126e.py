r"""Round 126, values and secrets (atk126e): "a value reaches the tool exactly as approved, and
a secret never leaves the controller in any form".

Labs (three, built once per module in three threads by ``build_all``; local mode; approvers
``alice@example.com``, ``*@ops.example.com``; every pass ``plangate run --once``):

- ``rot``: ``secrets.file`` with ROT (``Rv1Kq8Zt3Wm6Pn2Xb``), GONE and KEEP; one exec tool
  ``emit`` (records argv and stdin to ``ran.log``, prints ``{"x": <param sec>, "echo":
  <params>}``; ``mode: err`` prints the params to stderr and exits 3; ``mode: once`` fails
  the first call) and ``hh`` (http POST to a server thread that reflects the catalog's
  ``Authorization`` token). Fourteen plans of two actions (one of three): action 1 hands a
  secret to ``emit`` (output ``x`` is that secret), action 2 takes
  ``$<actions[1].outputs.x>`` (or the whole result, or ``user=<x>;``) behind
  ``requires_approval`` (or fails once and is resumed, or ``on_failure: ask``).
  Pass 1 freezes, Alice approves all, pass 2 runs each to its pause; the operator
  then ROTATES ROT to ``Rv2Hj5Yc9Ls4Dg7Nf`` and REMOVES GONE from the secrets file (KEEP
  stays), Alice approves every gate and resume, pass 3 runs the rest. Read per plan: ``git
  log -p --all`` (messages and diffs), its ``status --json`` row and ``status`` line, ``show
  -v``, MCP ``log``, the page (``/plan/``, ``/api/plan/``, ``/api/``), its journal, the
  passes' log lines naming it, and its ``notify`` posts (a receiver thread).
- ``types``: ``secrets.file`` values of other YAML types (an integer, an integer past 2^63,
  a float, a list, an NFD string) and values that read like plan syntax
  (``$<secrets.KEEP>``, ``${inputs.i}``, ``{tag}``, ``$$<inputs.i>``, YAML/JSON specials
  ``Qv"7}{'Lx: #&*!|>%@`Zk``), each handed to exec tool ``tv`` on stdin (before round 128
  also as its argv element ``{v}``: fix129s refuses that), alone and inside text; an http
  tool ``hh`` (POST to a real ``http.server`` thread on 127.0.0.1) with catalog headers
  ``Authorization: Bearer <token>`` and ``X-Api-Key``, the body carrying
  ``$<secrets.KEEP>``; the server reflects all three in its body, in response headers (as is
  and base64), in a 302 and a 307 ``Location`` (query, percent-encoded twice), in
  ``WWW-Authenticate`` with a 401, in ``Set-Cookie``, in a 500's body, and as JSON inside a
  JSON string inside JSON.
- ``bad``: ``secrets.file`` holding a YAML timestamp (a date, a datetime, inside a mapping,
  inside a list) and a ``!!binary`` control, each read by ``validate --config``, ``status``
  and ``run --once``; then a daemon (``plangate run``): a plan runs, a date is added to the
  secrets file, a plan is approved, SIGHUP, the date removed, a plan approved.

Ids:

- ``test_rotation_value_reaches_tool[*]`` (14): the pause and the final outcome are as
  planned, and action 2 gets the value action 1 returned (sealed across the pause, docs/
  execution.md "The real values across a pause"); a ``$<secrets.ROT>`` read after the
  rotation gets the new value.
- ``test_rotation_secret_never_readable[*]`` (14): no spelling (as is, NFC, upper, lower,
  base64, hex, first or last 8 characters) of ROT's old or new value, GONE, KEEP, ENVROT's
  (``PLANGATE_SECRET_ENVROT``, restarted with a new value) or the catalog token's (the
  config rewritten) old or new value in anything read about the plan after pass 3;
  ``test_rotation_gate_view_never_readable[*]`` (14): the same for what the gate's approver
  reads after the rotation, before approving; ``test_rotation_header_sent_as_configured``
  (1). Plans: the output, the whole result and ``user=<x>;`` through a gate, the output
  printed to stderr on a failure, an ``echo`` action, a failed action resumed, an ``on_failure:
  ask``, a removed secret, an env secret, the catalog's token reflected by the server, a
  pinned plan's input after the gate (``nest-gate-input``), and three controls (KEEP not
  rotated; ``$<secrets.ROT>`` read after the rotation; ``$<secrets.GONE>`` after its removal:
  ``E_REF_UNAVAILABLE``, the tool not called).
- ``test_typed_secret_reaches_tool_as_text[*]`` (10): the secret's text reaches the tool
  (the one argv element, stdin, inside ``pre-...-post``), never read again as a reference,
  a legacy reference, an argv placeholder or ``$$<``; the list as its JSON text.
- ``test_typed_secret_never_readable[*]`` (9): no spelling of those secrets is readable.
- ``test_http_request_as_configured`` (1): the server got the catalog's headers and the
  body's secret as configured; ``test_http_get_from_outputs_as_resolved`` (1): a tool's
  outputs (URL syntax, ``+``, ``&``, ``%25``, ``1e16``, ``0.1``, ``-0.0``, 2^53-1, NFD,
  ``true``, ``null``, a list, a mapping) reach a GET as one path segment and one query value
  each, as their text; ``test_http_reflected_credentials_never_readable[*]`` (9):
  none of the three reflected values is readable, whatever the server did with them (no
  redirect is followed).
- ``test_bad_secrets_file_is_config_invalid[*]`` (15): ``E_CONFIG_INVALID`` naming
  ``secrets.file``, exit 2, no "internal error"; ``test_daemon_runs_with_a_good_secrets_file``
  (1), ``test_daemon_reload_with_a_timestamp_is_refused`` (1),
  ``test_daemon_pass_with_a_timestamp_says_config_invalid`` (1),
  ``test_daemon_live_rotation_is_masked`` (1: KEEP rewritten in the file while the daemon
  runs, no reload: the next run gets the new value and the record masks it).

Seen (round 126: 92 ids, 67 passed, 25 xfailed (strict); 46-92 s wall at ``-n 1``, the
three labs built in parallel). Two classes.

**rotated-secret-unsealed-in-clear** (11 ids, fails OPEN: a secret's value is committed
readable; ``test_rotation_secret_never_readable[rot-gate-output, rot-gate-result,
rot-gate-inline, rot-gate-error, rot-gate-echo, rot-resume, rot-ask, gone-gate-output,
env-gate-output, hdr-gate-output, nest-gate-input]``): action 1 hands ``$<secrets.ROT>`` to a
tool that prints it; its output is recorded ``***`` and sealed in the journal. The run
pauses (``requires_approval`` on action 2, a failure to resume, ``on_failure: ask``). The
operator rotates the secret (a new value in ``secrets.file``; a removed entry; a new
``PLANGATE_SECRET_ENVROT`` at the restart; a new catalog ``Authorization`` token in the
config), then Alice approves the gate or the resume. Action 2 gets the unsealed old value
(as docs/execution.md promises: "a gated or retried action gets exactly what it would have
got without the pause"), and whatever it prints of it (its stdout, an ``echo``'s result, the
stderr a failure quotes, a pinned plan's action) is recorded in clear: the old value is in
EXECUTION_LOG.md and the ``execution:`` block (``git log -p``), the outcome commit's
message and ``status`` (``rot-gate-error``: ``E_TOOL_FAILED: emit: ... exited with status
3: refused: {"mode": "err", "tag": "rot-gate-error-2", "v": "Rv1Kq8Zt3Wm6Pn2Xb"}``),
``show -v``, MCP ``log``, the page and ``/api/plan/``, and the journal; ``rot-gate-error``
also in its ``fail`` notify post and the pass's log line. The redactor
seems to know only the values configured when it writes, while the seal carries the values
of the run's start (an outside reading). What the approver reads at the gate after the
rotation stays masked (recorded at the pause), and the control plans hold: KEEP (not
rotated) stays ``***``, a ``$<secrets.ROT>`` read after the rotation gets the new value,
masked. SPEC §6: secrets "are replaced by ``***`` in everything written ... including where a
secret value appears inside a tool's output"; docs/execution.md "The real values across a
pause": "a journal read without the state directory ... holds no secret"; docs/threat-model.md
"Secrets: values from the controller's environment or secrets file, never written out".
Nothing in the docs makes a rotation (the ordinary response to a leaked or expiring
credential) a limit. Repro::

    # secrets.yml: ROT: Rv1Kq8Zt3Wm6Pn2Xb; tool emit prints {"x": <sec>, "echo": <params>}
    # plans/g: 1 emit {sec: "$<secrets.ROT>"} outputs x; 2 emit {v: "$<actions[1].outputs.x>"}
    #          requires_approval: true
    plangate run --once; (Alice approves); plangate run --once    # awaiting_approval
    echo "ROT: Rv2Hj5Yc9Ls4Dg7Nf" > secrets.yml                     # the operator rotates
    (Alice approves the gate); plangate run --once
    grep Rv1Kq8Zt3Wm6Pn2Xb plans/g/EXECUTION_LOG.md                 # action 2's Result

**secrets-file-timestamp-internal-error** (14 ids, fails CLOSED: nothing runs and the
daemon stops; ``test_bad_secrets_file_is_config_invalid[{date, datetime, nested-date,
list-date}-{validate, status, run}]``, ``test_daemon_reload_with_a_timestamp_is_refused``,
``test_daemon_pass_with_a_timestamp_says_config_invalid``): a ``secrets.file`` holding an
unquoted YAML timestamp (``EXPIRES: 2027-01-01``, a datetime, one inside a mapping or a
list) makes ``validate --config``, ``status`` and ``run --once`` exit 2 with "plangate:
internal error: TypeError: Object of type date is not JSON serializable" and the remedy
"rerun with PLANGATE_DEBUG=1 ... and report it", no code; a running daemon re-reads the file
at each pass (as it does for a rotation) and every pass fails ``E_INTERNAL``
(``reconcile.failed``), so the approved plan waits; a SIGHUP then stops the daemon (exit 2,
``daemon.stopped``) instead of refusing the reload. A ``!!binary`` value is refused
properly (``E_CONFIG_INVALID: secrets.file ...: E_YAML_PARSE ... quote the value``: the
control ids pass), as is a list or a scalar file. SPEC §8: "Every error names its code (§10)
and a remedy; no traceback reaches a user for bad input"; docs/errors.md E_CONFIG_INVALID: "a
secrets file that cannot be read"; docs/configuration.md: "A reload that finds a bad value
is refused (log event ``config.reload_refused``, with the same message) and the daemon keeps
running with the config it had".

Fixed (2026-12-07, fix127s): **rotated-secret-unsealed-in-clear**. Cause: a run's redactor
was built from the secrets configured when the run (or its resumption) started; the seal
handed the old value on to action 2, and nothing told the redactor it was a secret any more.
Fix, at the root, one redactor per run for every writer: each seal also carries the secret
values its data holds (``held``: ``Redactor.held_in``, from ``steps._kept``); a run reads
them from every seal of its journal when it is built (``secrets.held_values``; a seal made
before this fix gives each string, key or number its redaction changed, whole) and its
redactor hides them beside today's secrets, in every encoding and view
(``SecretStore.hold``, in ``executor.Run.__init__`` before any writer takes the redactor);
its own seals carry them on to the next pause. The log, the block, the journal, the outcome
(commit message, notify, log line: ``Run._redacted_error``) and so status/show/MCP/page
follow. Tests: ``tests/execution/test_rotated_secret_held.py`` (rotated, removed, a failure
quoting stderr, a restarted ``PLANGATE_SECRET_*``; a pre-fix seal; what a seal carries: 6
tests, all failing on the old code). docs/execution.md "A run hides every secret value it
was given, for the whole run".

Fixed (2026-12-07, fix127s): **secrets-file-timestamp-internal-error**. Cause: the secrets
file's reader (``secrets._read_file``) turned every value that was not a string into its
JSON text with ``json.dumps``, which raises ``TypeError`` on a date; the error escaped every
reader as an internal error. Fix: the reader accepts only what the docs name, each value as
the text a tool gets (``secrets._check_written``): a string; a number or ``true``/``false``
only when written as its JSON text (``918273645012``); a mapping or list (its JSON text),
each value inside held to the same rule, each key a string. Everything else is
``E_CONFIG_INVALID`` naming the file, the line and the entry (never the value), remedy:
quote it: a timestamp, a null (``TOKEN:``: a tool got ``null``), a number written
otherwise (``007123456789`` sent as ``7123456789``, ``0x1F2E3D4C5B``, ``0o17777777``,
``1.0``, ``.nan``, ``.inf``): the "seen" items of this module are now refused, because an
operator who writes digits means those digits (docs/configuration.md, "The secrets file's
values"). Every reader follows (validate, status, run, each daemon pass, a reload refused).
Tests: ``tests/commands/test_operator_files.py``
(``test_a_secrets_file_value_not_sent_as_written_is_refused_naming_it[*]``, 10 cases,
all failing on the old code;
``test_a_secrets_file_value_written_as_its_text_reaches_tools_as_that_text``).

Held: every typed secret reached the tool as its text (an integer past 2^63 exact, a float's
digits, the NFD string unnormalised, a list as JSON text) and was never read again as a
reference, legacy reference, argv placeholder or ``$$<``; none was readable. The catalog's
``Authorization`` token and ``X-Api-Key`` and a body secret reflected by a real server (body,
response headers as is and in base64, 302/307 ``Location`` once and twice percent-encoded,
``WWW-Authenticate`` on a 401, ``Set-Cookie``, a 500's body, JSON in a JSON string in JSON)
were ``***`` in every reader and no redirect was followed. Outputs reached a GET's path and
query exactly. A secret rotated while the daemon runs was read anew and masked; a daemon
with a good file ran.

Seen, not asserted: secrets-file values YAML 1.2 reads as numbers reach the tool as the
number's decimal text: ``PIN: 007123456789`` as ``7123456789``, ``0x1F2E3D4C5B`` as
``133919755355``, ``0o17777777`` as ``4194303``; ``true`` and ``null`` as ``true`` and
``null`` (a ``null`` secret is not "not configured", ``E_REF_UNAVAILABLE``). The docs say only
"a YAML/JSON mapping ``NAME: value``"; an operator who means the digits must quote them.
``.nan`` and ``.inf`` are accepted as secrets (elsewhere in the config they are refused). A
tool's ``-0.0`` output is recorded and handed on as ``0``.

Not tried (time): a rotation across a SIGKILL (an idempotent action re-run from the journal),
a rotation between a ``verify`` tool's polls, the notify posts after a rotation.
"""

from __future__ import annotations

import base64
import http.server
import json
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, ClassVar

import pytest
from advkit import ALICE, Lab, build_all, until
from mcpkit import answers
from oraclekit import notify_receiver, ui_daemon
from test_round61_surface_page import _get

PY = sys.executable

# -- the rotation lab -----------------------------------------------------------------------
#: ROT's value when action 1 runs, and after the operator rotated it (before the gate's
#: approval or the resume); GONE is removed from the secrets file at the rotation; KEEP stays
V1 = "Rv1Kq8Zt3Wm6Pn2Xb"
V2 = "Rv2Hj5Yc9Ls4Dg7Nf"
GONE = "Gn7Bx2Qw5Tz8Lk3Mp"
KEEP = "Kp4Wd8Rt2Zm7Qx5Lb"
#: ENVROT (``PLANGATE_SECRET_ENVROT`` in the controller's environment) before and after the
#: operator restarts it with a new value; the catalog's ``Authorization`` token of ``hh``
#: before and after the operator rewrites the config
VE1, VE2 = "Ev1Mx4Qp8Tz2Wk6Hd", "Ev2Nc7Rb3Yf9Lq5Js"
KEEP2 = "Kq9Zs3Lv6Nb1Wd8Tp"
HT1, HT2 = "Ht1Bq7Xw3Kz9Pm5Lc", "Ht2Vd6Gs4Jn8Rx2Wf"
ROTATED = [V1, V2, GONE, KEEP, VE1, VE2, HT1, HT2]

#: the one exec tool of the rotation and types labs: records its call (argv, stdin) to
#: ``REC_LOG``, then prints ``{"x": sec, "echo": params}``; ``mode: err`` prints the params
#: to stderr and exits 3; ``mode: once`` fails (exit 3, nothing printed) the first time its
#: tag is called (a flag file in ``FLAGS``)
TOOL = r"""
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\n")
p = json.loads(data) if data.strip() else {}
mode = p.get("mode", "")
if mode == "once":
    flag = os.path.join(os.environ["FLAGS"], sys.argv[1])
    if not os.path.exists(flag):
        open(flag, "w").close()
        sys.exit(3)
if mode == "err":
    sys.stderr.write("refused: " + json.dumps(p) + "\n")
    sys.exit(3)
out = {"x": p.get("sec", ""), "echo": p}
sys.stdout.write(json.dumps(out) + "\n")
sys.stderr.write("seen " + json.dumps(p) + "\n")
"""

X = "$<actions[1].outputs.x>"


def _plan(slug: str, actions: str, tools: str = "emit, echo") -> str:
    avail = ", ".join(f"{{name: {t.strip()}}}" for t in tools.split(","))
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"inputs: {{i: INPUT}}\navailable_tools: [{avail}]\nactions:\n{actions}"
    )


def _a1(slug: str, name: str) -> str:
    return (
        f"  - id: 1\n    tool: emit\n    why: w\n"
        f'    params: {{tag: {slug}-1, sec: "$<secrets.{name}>"}}\n'
        "    outputs: [{name: x, path: $.json.x}]\n"
    )


def _a2(
    slug: str, params: str, more: str = "    requires_approval: true\n", tool: str = "emit"
) -> str:
    return (
        f"  - id: 2\n    tool: {tool}\n    why: w\n{more}    params: {{tag: {slug}-2, {params}}}\n"
    )


#: id -> (plan text, the secret's value at action 1, what action 2's call must get in ``v``
#: or ``w``: ``out`` the output, ``result`` the whole result, ``now`` ROT's new value)
ROT_PLANS: dict[str, tuple[str, str, str]] = {
    "rot-gate-output": (
        _plan(
            "rot-gate-output", _a1("rot-gate-output", "ROT") + _a2("rot-gate-output", f'v: "{X}"')
        ),
        V1,
        "out",
    ),
    "rot-gate-result": (
        _plan(
            "rot-gate-result",
            _a1("rot-gate-result", "ROT") + _a2("rot-gate-result", 'w: "$<actions[1].result>"'),
        ),
        V1,
        "result",
    ),
    "rot-gate-inline": (
        _plan(
            "rot-gate-inline",
            _a1("rot-gate-inline", "ROT") + _a2("rot-gate-inline", f'v: "user={X};"'),
        ),
        V1,
        "inline",
    ),
    "rot-gate-error": (
        _plan(
            "rot-gate-error",
            _a1("rot-gate-error", "ROT") + _a2("rot-gate-error", f'v: "{X}", mode: err'),
        ),
        V1,
        "out",
    ),
    "rot-gate-echo": (
        _plan(
            "rot-gate-echo",
            _a1("rot-gate-echo", "ROT")
            + "  - id: 2\n    tool: echo\n    why: w\n    requires_approval: true\n"
            f'    params: {{v: "{X}"}}\n    outputs: [{{name: y, path: $.v}}]\n',
        ),
        V1,
        "echo",
    ),
    "rot-resume": (
        _plan(
            "rot-resume",
            _a1("rot-resume", "ROT") + _a2("rot-resume", f'v: "{X}", mode: once', more=""),
        ),
        V1,
        "out",
    ),
    "rot-ask": (
        _plan(
            "rot-ask",
            _a1("rot-ask", "ROT")
            + _a2("rot-ask", f'v: "{X}", mode: once', more="    on_failure: ask\n"),
        ),
        V1,
        "out",
    ),
    "gone-gate-output": (
        _plan(
            "gone-gate-output",
            _a1("gone-gate-output", "GONE") + _a2("gone-gate-output", f'v: "{X}"'),
        ),
        GONE,
        "out",
    ),
    "keep-gate-output": (
        _plan(
            "keep-gate-output",
            _a1("keep-gate-output", "KEEP") + _a2("keep-gate-output", f'v: "{X}"'),
        ),
        KEEP,
        "out",
    ),
    "env-gate-output": (
        _plan(
            "env-gate-output",
            _a1("env-gate-output", "ENVROT") + _a2("env-gate-output", f'v: "{X}"'),
        ),
        VE1,
        "out",
    ),
    "hdr-gate-output": (
        _plan(
            "hdr-gate-output",
            "  - id: 1\n    tool: hh\n    why: w\n    params: {mode: body}\n"
            "    outputs: [{name: x, path: $.json.auth}]\n" + _a2("hdr-gate-output", f'v: "{X}"'),
            tools="emit, echo, hh",
        ),
        f"Bearer {HT1}",
        "out",
    ),
    "nest-gate-input": (
        _plan(
            "nest-gate-input",
            _a1("nest-gate-input", "ROT")
            + _a2("nest-gate-input", "n: 0")
            + '  - id: 3\n    plan: {path: plans/kid, hash: "PIN"}\n    why: w\n'
            f'    inputs: {{k: "{X}"}}\n',
        ),
        V1,
        "nest",
    ),
    "gone-gate-direct": (
        _plan(
            "gone-gate-direct",
            _a1("gone-gate-direct", "KEEP") + _a2("gone-gate-direct", 'sec: "$<secrets.GONE>"'),
        ),
        KEEP,
        "gone",
    ),
    "rot-gate-direct": (
        _plan(
            "rot-gate-direct",
            _a1("rot-gate-direct", "KEEP") + _a2("rot-gate-direct", 'sec: "$<secrets.ROT>"'),
        ),
        KEEP,
        "now",
    ),
}


#: the pinned plan ``nest-gate-input`` runs as its action 3, given action 1's output
KID = (
    "plan:\n  name: kid\n  task: t\n  status: draft\ninputs: {k: none}\n"
    "available_tools: [{name: emit}]\nactions:\n"
    '  - id: 1\n    tool: emit\n    why: w\n    params: {tag: nest-kid, v: "$<inputs.k>"}\n'
)


def _readers(lab: Lab, slugs: list[str], passes: list[str]) -> dict[str, dict[str, str]]:
    """Everything a person or agent can read about each plan: its git history (messages and
    diffs, every ref), ``status`` (JSON and text), ``show -v``, MCP ``log``, the page and
    ``/api/plan``, its journal, and every pass's log lines (the daemon's structured log)."""
    cfg = str(lab.config)
    status_json = lab.cli("status", "--json", "--config", cfg).stdout
    status_text = lab.cli("status", "--config", cfg).stdout
    replies = answers(lab, [("log", {"path": f"plans/{slug}"}) for slug in slugs])
    journal = lab.state / "journal"
    ui_config = lab.root / "plangate-ui.yml"
    ui_config.write_text(lab.config.read_text() + "ui: {listen: 0}\n")
    pages: dict[str, str] = {}
    with ui_daemon(lab, ui_config, f"plans/{slugs[0]}") as ui:
        for slug in slugs:
            pages[slug] = "".join(
                str(_get(ui, f"{kind}/plans/{slug}")[2]) for kind in ("/api/plan", "/plan", "/api/")
            )
    got: dict[str, dict[str, str]] = {}
    rows = {row.get("plan"): row for row in json.loads(status_json)}
    for slug, reply in zip(slugs, replies, strict=True):
        hist = subprocess.run(
            ["git", "log", "-p", "--all", "--format=%H%n%B", "--", f"plans/{slug}"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", "replace")
        show = lab.cli("show", "-v", "--config", cfg, f"plans/{slug}", cwd=lab.repo)
        got[slug] = {
            "history": hist,
            "status --json": json.dumps(rows.get(f"plans/{slug}"), ensure_ascii=False),
            "status": "\n".join(x for x in status_text.splitlines() if f"plans/{slug}" in x),
            "show -v": show.stdout + show.stderr,
            "mcp log": json.dumps(reply, ensure_ascii=False),
            "page": pages[slug],
            "journal": "".join(
                f.read_text(errors="replace") for f in (journal / f"plans%2F{slug}").glob("*.jsonl")
            ),
            "pass logs": "\n".join(
                x for p in passes for x in p.splitlines() if f"plans/{slug}" in x
            ),
        }
    return got


def build_rot(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TOOL)
    (root / "flags").mkdir()
    sec = root / "sec.yml"
    sec.write_text(f"ROT: {V1}\nGONE: {GONE}\nKEEP: {KEEP}\n")
    t = json.dumps([PY, str(root / "t.py"), "{tag}"])
    flags = json.dumps(str(root / "flags"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RotEcho)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/{{mode}}"
    hook, posts = notify_receiver()
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n"
        f'notify: {{urls: ["http://127.0.0.1:{hook.server_address[1]}/h"]}}\n',
        tools=f"emit: {{kind: exec, argv: {t}, env: {{FLAGS: {flags}}}}}\n"
        f'hh: {{kind: http, method: POST, url: "{url}", '
        f'headers: {{Authorization: "Bearer {HT1}"}}}}\n',
    )
    lab.extra_env = {"PLANGATE_SECRET_ENVROT": VE1}  # type: ignore[attr-defined]
    lab.write("kid", KID)
    pin = lab.cli("hash", str(lab.repo / "plans" / "kid" / "PLAN.yml")).stdout.split()[-1]
    for slug, (text, _v, _k) in ROT_PLANS.items():
        lab.write(slug, text.replace('"PIN"', json.dumps(pin)))
    lab.commit("plans")
    passes = [lab.run().stderr]
    for slug in ROT_PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    passes.append(lab.run().stderr)
    paused = {slug: lab.plan(slug)["plan"]["status"] for slug in ROT_PLANS}
    # the operator rotates ROT, ENVROT and the catalog's token and retires GONE while the
    # runs wait; then the gates' and resumes' approvers read what they approve
    sec.write_text(f"ROT: {V2}\nKEEP: {KEEP}\n")
    lab.extra_env = {"PLANGATE_SECRET_ENVROT": VE2}  # type: ignore[attr-defined]
    lab.config.write_text(lab.config.read_text().replace(HT1, HT2))
    at_gate = _readers(lab, list(ROT_PLANS), [])
    for slug in ROT_PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve the gates and resumes", ALICE)
    passes.append(lab.run().stderr)
    server.shutdown()
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    read = _readers(lab, list(ROT_PLANS), passes)
    hook.shutdown()
    for slug in ROT_PLANS:
        read[slug]["notify"] = "\n".join(b for b in posts if f"plans/{slug}" in b)
    return {
        "at_gate": at_gate,
        "seen": list(_RotEcho.seen),
        "paused": paused,
        "final": {slug: lab.plan(slug)["plan"]["status"] for slug in ROT_PLANS},
        "errors": {
            slug: [
                (a.get("error") or {}).get("code")
                for a in (lab.plan(slug).get("execution") or {}).get("actions") or []
            ]
            for slug in ROT_PLANS
        },
        "calls": calls,
        "read": read,
    }


# -- the types lab ---------------------------------------------------------------------------
#: secrets-file values of other YAML types and values that read like plan syntax; the tool
#: gets the secret's text (exec ``{v}`` argv element and stdin)
TYPED = {
    "INT": ("918273645012", "918273645012"),
    "BIG": ("12345678901234567891", "12345678901234567891"),
    "FLT": ("3.14159265358979", "3.14159265358979"),
    "NFD": (json.dumps("Ame\u0301lie-9Xq2Wz"), "Ame\u0301lie-9Xq2Wz"),
    "REF": (json.dumps("$<secrets.KEEP>"), "$<secrets.KEEP>"),
    "LEG": (json.dumps("${inputs.i}"), "${inputs.i}"),
    "BR": (json.dumps("{tag}"), "{tag}"),
    "DD": (json.dumps("$$<inputs.i>"), "$$<inputs.i>"),
    "YQ": (json.dumps("Qv\"7}{'Lx: #&*!|>%@`Zk"), "Qv\"7}{'Lx: #&*!|>%@`Zk"),
}
LST_VALUE = ["ab12cd34ef", "gh56ij78kl"]

#: the catalog's credentials an http tool sends as headers
HDR_TOKEN = "Hd7Tk3Qz9Wm2Xp5Rv"
API_KEY = "Ak5Lp8Wq2Zn6Tx3Cv"
HTTP_MODES = ["body", "hdr", "hdrb64", "redir", "redir2", "www", "cookie", "err500", "nested"]


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers with the request's credentials (its ``Authorization`` and ``X-Api-Key``
    headers and the body's ``s``) reflected where ``/<mode>`` says."""

    seen: ClassVar[list[dict[str, Any]]] = []
    gets: ClassVar[list[str]] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.gets.append(self.path)
        data = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth, key = self.headers.get("Authorization", ""), self.headers.get("X-Api-Key", "")
        try:
            s = json.loads(body).get("s", "")
        except ValueError:
            s = ""
        self.seen.append({"path": self.path, "auth": auth, "key": key, "body": body.decode()})
        mode = self.path.strip("/")
        status, headers, out = 200, {}, {"ok": True}
        if mode == "body":
            out = {"auth": auth, "key": key, "s": s}
        elif mode == "hdr":
            headers = {"X-Seen-Auth": auth, "X-Seen-Key": key, "X-Seen-S": s}
        elif mode == "hdrb64":
            headers = {"X-Seen": base64.b64encode(f"{auth}|{key}|{s}".encode()).decode()}
        elif mode == "redir":
            status = 302
            q = urllib.parse.urlencode({"auth": auth, "key": key, "s": s})
            headers = {"Location": f"http://127.0.0.1:9/cb?{q}"}
        elif mode == "redir2":
            status = 307
            inner = "http://127.0.0.1:9/in?" + urllib.parse.urlencode({"t": auth[7:], "s": s})
            headers = {"Location": "/login?next=" + urllib.parse.quote(inner, safe="")}
        elif mode == "www":
            status = 401
            headers = {
                "WWW-Authenticate": f'Bearer realm="x", error="invalid_token", token="{auth[7:]}"'
            }
            out = {"error": f"bad key {key} for {s}"}
        elif mode == "cookie":
            headers = {"Set-Cookie": f"sid={key}.{s}; Path=/; HttpOnly"}
        elif mode == "err500":
            status = 500
            out = {"trace": f"Traceback: auth={auth!r} key={key!r} s={s!r}"}
        elif mode == "nested":
            out = {"wrapped": json.dumps({"inner": json.dumps({"a": auth, "k": key, "s": s})})}
        data = json.dumps(out).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _RotEcho(_Echo):
    seen: ClassVar[list[dict[str, Any]]] = []
    gets: ClassVar[list[str]] = []


#: a tool whose output (outside data) fills a GET's path segment and query: text with URL
#: syntax, a float past 2^53, a decimal, -0.0, the largest safe integer, NFD, true, null, a
#: list and a mapping
OUTPUT_JSON = {
    "s": "a+b c&d=e#f%25/?",
    "f": 1e16,
    "g": 0.1,
    "n": -0.0,
    "big": 9007199254740991,
    "u": "e\u0301",
    "t": True,
    "nul": None,
    "l": [1, "a+b"],
    "m": {"k": "v&w"},
}
#: the query the server parses: each output as its text, a string as is, anything else as
#: compact JSON (docs/execution.md, Tools: http); ``n``: the tool's -0.0 is read as 0
QUERY_WANT = {
    "s": "a+b c&d=e#f%25/?",
    "f": "1e+16",
    "g": "0.1",
    "n": "0",
    "big": "9007199254740991",
    "u": "e\u0301",
    "t": "true",
    "nul": "null",
    "l": '[1,"a+b"]',
    "m": '{"k":"v&w"}',
    "mix": "f=1e+16;g=0.1",
}


def _get_plan() -> str:
    keys = list(OUTPUT_JSON)
    outs = ", ".join(f"{{name: {k}, path: $.json.{k}}}" for k in keys)
    refs = ", ".join(f'{k}: "$<actions[1].outputs.{k}>"' for k in keys)
    return _plan(
        "h-get-outputs",
        f"  - id: 1\n    tool: ov\n    why: w\n    params: {{}}\n    outputs: [{outs}]\n"
        "  - id: 2\n    tool: hg\n    why: w\n"
        f'    params: {{seg: "$<actions[1].outputs.s>", {refs}, '
        'mix: "f=$<actions[1].outputs.f>;g=$<actions[1].outputs.g>"}\n',
        tools="ov, hg",
    )


TYPES_TOOL = TOOL


def _typed_plan(slug: str, name: str) -> str:
    return _plan(
        slug,
        f'  - id: 1\n    tool: tv\n    why: w\n    params: {{tag: {slug}, v: "$<secrets.{name}>", '
        f'w: "pre-$<secrets.{name}>-post", sec: "$<secrets.{name}>"}}\n',
        tools="tv",
    )


def _http_plan(slug: str, mode: str) -> str:
    return _plan(
        slug,
        "  - id: 1\n    tool: hh\n    why: w\n"
        f'    params: {{mode: {mode}, s: "$<secrets.KEEP>"}}\n',
        tools="hh",
    )


def build_types(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "t.py").write_text(TYPES_TOOL)
    (root / "flags").mkdir()
    sec = root / "sec.yml"
    sec.write_text(
        f"KEEP: {KEEP}\n"
        + "".join(f"{k}: {v}\n" for k, (v, _t) in TYPED.items())
        + f"LST: {json.dumps(LST_VALUE)}\n"
    )
    (root / "o.py").write_text(f"print({json.dumps(json.dumps(OUTPUT_JSON))})\n")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    _Echo.seen = []
    _Echo.gets = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    # fix129s (round 128): a secret a reference brings into argv is refused (a command line
    # every process can read); the secret's text reaches the tool on stdin only
    tv = json.dumps([PY, str(root / "t.py"), "{tag}"])
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n",
        tools=(
            f"tv: {{kind: exec, argv: {tv}, env: {{FLAGS: {json.dumps(str(root / 'flags'))}}}}}\n"
            f'hh: {{kind: http, method: POST, url: "http://127.0.0.1:{port}/{{mode}}", '
            f'headers: {{Authorization: "Bearer {HDR_TOKEN}", X-Api-Key: "{API_KEY}"}}}}\n'
            f"ov: {{kind: exec, argv: {json.dumps([PY, str(root / 'o.py')])}}}\n"
            f'hg: {{kind: http, method: GET, url: "http://127.0.0.1:{port}/q/{{seg}}"}}\n'
        ),
    )
    slugs: dict[str, str] = {}
    for name in [*TYPED, "LST"]:
        slug = f"t-{name.lower()}"
        lab.write(slug, _typed_plan(slug, name))
        slugs[slug] = name
    for mode in HTTP_MODES:
        lab.write(f"h-{mode}", _http_plan(f"h-{mode}", mode))
        slugs[f"h-{mode}"] = mode
    lab.write("h-get-outputs", _get_plan())
    slugs["h-get-outputs"] = "get"
    lab.commit("plans")
    passes = [lab.run().stderr]
    for slug in slugs:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    passes.append(lab.run().stderr)
    server.shutdown()
    calls = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    return {
        "final": {slug: lab.plan(slug)["plan"]["status"] for slug in slugs},
        "calls": calls,
        "seen": list(_Echo.seen),
        "gets": list(_Echo.gets),
        "read": _readers(lab, list(slugs), passes),
    }


# -- the bad secrets file lab ----------------------------------------------------------------
BAD_FILES = {
    "date": "D: 2027-01-01\n",
    "datetime": "D: 2027-01-01T10:00:00Z\n",
    "nested-date": f"M: {{d: 2027-01-01, p: {KEEP}}}\n",
    "list-date": f"L: [2027-01-01, {KEEP}]\n",
    "binary": "B: !!binary aGVsbG8=\n",
}


def build_bad(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    sec = root / "sec.yml"
    sec.write_text(f"KEEP: {KEEP}\n")
    lab = Lab(root / "lab", extra=f"secrets: {{file: {sec}}}\n")
    for slug in ("d-a", "d-b", "d-c", "d-d"):
        lab.write(
            slug,
            _plan(
                slug,
                '  - {id: 1, tool: echo, why: w, params: {a: "$<secrets.KEEP>"}}\n',
                tools="echo",
            ),
        )
    lab.commit("plans")
    lab.run()
    base = lab.config.read_text()
    cli: dict[str, dict[str, tuple[int, str]]] = {}
    for key, body in BAD_FILES.items():
        bad = root / f"s-{key}.yml"
        bad.write_text(f"KEEP: {KEEP}\n" + body)
        cfg = root / f"c-{key}.yml"
        cfg.write_text(base.replace(str(sec), str(bad)))
        got = {}
        for cmd in (
            ["validate", "--config", str(cfg), str(lab.repo / "plans" / "d-a")],
            ["status", "--config", str(cfg)],
            ["run", "--once", "--config", str(cfg)],
        ):
            r = lab.cli(*cmd)
            got[cmd[0]] = (r.returncode, r.stderr[-1500:])
        cli[key] = got
    # a daemon: d-a runs; a date is added to the secrets file; d-b is approved; SIGHUP;
    # the date is removed; d-c is approved
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    out = open(root / "daemon.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [PY, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=lab.root,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
    )

    def status(slug: str) -> str:
        try:
            return str(lab.plan(slug)["plan"]["status"])
        except Exception:
            return "?"

    daemon: dict[str, Any] = {}
    try:
        until(lambda: "daemon.ready" in (root / "daemon.log").read_text(), 30)
        lab.approve("d-a")
        daemon["a"] = until(lambda: status("d-a") == "completed", 60)
        # the operator rotates KEEP while the daemon runs: the next run reads the new value
        sec.write_text(f"KEEP: {KEEP2}\n")
        lab.approve("d-d")
        daemon["d"] = until(lambda: status("d-d") == "completed", 60)
        daemon["d_history"] = lab.history("d-d")
        sec.write_text(f"KEEP: {KEEP2}\nEXPIRES: 2027-01-01\n")
        lab.approve("d-b")
        until(lambda: status("d-b") == "completed", 15)
        daemon["b"] = status("d-b")
        proc.send_signal(signal.SIGHUP)
        until(
            lambda: proc.poll() is not None or "config.reload" in (root / "daemon.log").read_text(),
            20,
        )
        time.sleep(1)
        daemon["alive_after_hup"] = proc.poll() is None
        sec.write_text(f"KEEP: {KEEP2}\n")
        lab.approve("d-c")
        until(lambda: status("d-c") == "completed" or proc.poll() is not None, 30)
        daemon["c"] = status("d-c")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        out.close()
    daemon["exit"] = proc.returncode
    daemon["log"] = (root / "daemon.log").read_text()[-6000:]
    return {"cli": cli, "daemon": daemon}


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    got = build_all(
        tmp_path_factory.mktemp("r126e"),
        {"rot": build_rot, "types": build_types, "bad": build_bad},
    ).got
    return got


# -- readers ---------------------------------------------------------------------------------
def _forms(value: str) -> list[str]:
    """The spellings of ``value`` looked for: as is, NFC, upper and lower case, its base64 and
    hex, and its first and last 8 characters (a cut or split value)."""
    import unicodedata

    raw = value.encode()
    out = [value, unicodedata.normalize("NFC", value), value.upper(), value.lower()]
    out += [base64.b64encode(raw).decode(), raw.hex()]
    if len(value) >= 12 and value.isalnum():
        out += [value[:8], value[-8:]]
    return list(dict.fromkeys(out))


def _leaks(read: dict[str, str], values: list[str]) -> list[str]:
    return [
        f"{reader}: {form!r}"
        for reader, text in read.items()
        for value in values
        for form in _forms(value)
        if form in text
    ]


def _call(calls: list[dict[str, Any]], tag: str) -> dict[str, Any]:
    mine = [c for c in calls if c["argv"][:1] == [tag]]
    assert mine, f"{tag} was never called"
    return mine[-1]


# -- rotation --------------------------------------------------------------------------------

PAUSED = {"rot-resume": "failed", "rot-gate-direct": "awaiting_approval"}


@pytest.mark.parametrize("vid", list(ROT_PLANS))
def test_rotation_value_reaches_tool(labs: dict[str, Any], vid: str) -> None:
    """Across the pause the tool gets what it would have got without it (docs/execution.md,
    "The real values across a pause"), and a ``$<secrets.*>`` is read when the action runs."""
    got = labs["rot"]
    _text, secret, kind = ROT_PLANS[vid]
    assert got["paused"][vid] == PAUSED.get(vid, "awaiting_approval"), got["paused"]
    want_final = "failed" if vid in ("rot-gate-error", "gone-gate-direct") else "completed"
    assert got["final"][vid] == want_final, got["final"]
    if kind == "echo":
        return
    if kind == "gone":  # docs/execution.md: a missing secret fails the action, the tool unrun
        assert got["errors"][vid][-1] == "E_REF_UNAVAILABLE", got["errors"][vid]
        assert not [c for c in got["calls"] if c["argv"][:1] == [f"{vid}-2"]]
        return
    if kind == "nest":
        assert json.loads(_call(got["calls"], "nest-kid")["stdin"])["v"] == secret
        return
    params = json.loads(_call(got["calls"], f"{vid}-2")["stdin"])
    if kind == "out":
        assert params["v"] == secret
    elif kind == "inline":
        assert params["v"] == f"user={secret};"
    elif kind == "result":
        assert params["w"]["json"]["x"] == secret
        assert secret in params["w"]["stdout"]
    elif kind == "now":
        assert params["sec"] == V2


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v) for v in ROT_PLANS],
)
def test_rotation_secret_never_readable(labs: dict[str, Any], vid: str) -> None:
    """No value ROT, GONE or KEEP held (before or after the rotation) is readable in anything
    the controller wrote or serves about the plan."""
    leaks = _leaks(labs["rot"]["read"][vid], ROTATED)
    assert not leaks, sorted({x.split(":")[0] for x in leaks})


@pytest.mark.parametrize("vid", list(ROT_PLANS))
def test_rotation_gate_view_never_readable(labs: dict[str, Any], vid: str) -> None:
    """What the gate's (or the resume's) approver reads after the rotation, before approving:
    the preview of the paused action (docs/execution.md: "secrets masked, outputs
    redacted") shows no value any of those secrets held."""
    assert not _leaks(labs["rot"]["at_gate"][vid], ROTATED)


def test_rotation_header_sent_as_configured(labs: dict[str, Any]) -> None:
    """The catalog's token the http tool sent is the config's at the time of the call."""
    seen = labs["rot"]["seen"]
    assert [s["auth"] for s in seen] == [f"Bearer {HT1}"]


# -- types and plan syntax in secrets ------------------------------------------------------------
@pytest.mark.parametrize("name", [*TYPED, "LST"])
def test_typed_secret_reaches_tool_as_text(labs: dict[str, Any], name: str) -> None:
    """A secret reaches the tool as its text (on stdin: since round 128 never in an argv
    element), never read again as a reference, a legacy reference or ``$$<``."""
    got = labs["types"]
    slug = f"t-{name.lower()}"
    assert got["final"][slug] == "completed", got["final"]
    call = _call(got["calls"], slug)
    params = json.loads(call["stdin"])
    assert call["argv"] == [slug]  # fix129s: never in argv (round 128)
    if name == "LST":
        assert json.loads(params["v"]) == LST_VALUE
        return
    text = TYPED[name][1]
    assert params["v"] == text and params["sec"] == text
    assert params["w"] == f"pre-{text}-post"


LEAK_CHECKED = ["INT", "BIG", "FLT", "NFD", "REF", "LEG", "DD", "YQ", "LST"]


@pytest.mark.parametrize("name", LEAK_CHECKED)
def test_typed_secret_never_readable(labs: dict[str, Any], name: str) -> None:
    read = labs["types"]["read"][f"t-{name.lower()}"]
    values = LST_VALUE if name == "LST" else [TYPED[name][1]]
    assert not _leaks(read, values)


# -- http: the catalog's credentials reflected by the server ---------------------------------
def test_http_request_as_configured(labs: dict[str, Any]) -> None:
    seen = labs["types"]["seen"]
    assert sorted(s["path"] for s in seen) == sorted(f"/{m}" for m in HTTP_MODES)
    for s in seen:
        assert s["auth"] == f"Bearer {HDR_TOKEN}" and s["key"] == API_KEY
        assert json.loads(s["body"])["s"] == KEEP


def test_http_get_from_outputs_as_resolved(labs: dict[str, Any]) -> None:
    """Outputs fill a GET's path segment (one segment: ``/``, ``?``, ``#``, ``+``, ``%``
    encoded) and its query (each value its text; ``+`` and ``&`` never read as a blank or a
    separator; the NFD string not normalised)."""
    got = labs["types"]
    assert got["final"]["h-get-outputs"] == "completed"
    assert len(got["gets"]) == 1, got["gets"]
    parts = urllib.parse.urlsplit(got["gets"][0])
    assert urllib.parse.unquote(parts.path) == "/q/" + OUTPUT_JSON["s"]
    assert parts.path.count("/") == 2, parts.path
    query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
    assert {k: v for k, v in query.items()} == {k: [v] for k, v in QUERY_WANT.items()}


@pytest.mark.parametrize("mode", HTTP_MODES)
def test_http_reflected_credentials_never_readable(labs: dict[str, Any], mode: str) -> None:
    got = labs["types"]
    want = "failed" if mode in ("www", "err500") else "completed"
    assert got["final"][f"h-{mode}"] == want
    assert not _leaks(got["read"][f"h-{mode}"], [HDR_TOKEN, API_KEY, KEEP])


# -- a secrets file holding a timestamp -------------------------------------------------------


@pytest.mark.parametrize(
    "key,cmd",
    [pytest.param(k, c, id=f"{k}-{c}") for k in BAD_FILES for c in ("validate", "status", "run")],
)
def test_bad_secrets_file_is_config_invalid(labs: dict[str, Any], key: str, cmd: str) -> None:
    """docs/errors.md E_CONFIG_INVALID: "a secrets file that cannot be read"; SPEC §8: every
    error names its code and a remedy."""
    code, err = labs["bad"]["cli"][key][cmd]
    assert code == 2, err
    assert "E_CONFIG_INVALID" in err and "secrets.file" in err, err
    assert "internal error" not in err, err


def test_daemon_live_rotation_is_masked(labs: dict[str, Any]) -> None:
    """A secret rotated in the file while the daemon runs (no reload) is read anew and its new
    value is masked in the record (the echo tool returns its params)."""
    daemon = labs["bad"]["daemon"]
    assert daemon["d"], daemon["log"][-2000:]
    assert not _leaks({"history": daemon["d_history"]}, [KEEP, KEEP2])


def test_daemon_runs_with_a_good_secrets_file(labs: dict[str, Any]) -> None:
    assert labs["bad"]["daemon"]["a"], labs["bad"]["daemon"]["log"][-2000:]


def test_daemon_reload_with_a_timestamp_is_refused(labs: dict[str, Any]) -> None:
    """docs/configuration.md: "A reload that finds a bad value is refused (log event
    `config.reload_refused`, with the same message) and the daemon keeps running"."""
    daemon = labs["bad"]["daemon"]
    assert daemon["alive_after_hup"], daemon["log"][-2000:]
    assert "config.reload_refused" in daemon["log"]
    assert daemon["c"] == "completed"


def test_daemon_pass_with_a_timestamp_says_config_invalid(labs: dict[str, Any]) -> None:
    daemon = labs["bad"]["daemon"]
    assert daemon["b"] != "completed"  # nothing runs on a secrets file it cannot read
    assert "E_INTERNAL" not in daemon["log"] and "internal error" not in daemon["log"]
    assert "E_CONFIG_INVALID" in daemon["log"]
