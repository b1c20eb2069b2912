"""Round 65, agent-facing surfaces: round 64's authored-literal rule ("a literal the plan's
author wrote is shown as written in the run's record, even when it equals a secret; what a
reference filled in, a tool's output and errors stay masked") where the author's literal
meets the controller's material and round 64 did not look.

Lab (one, module scope), local mode with ``agent.identity``, a secrets file holding ``TOK``
and the catalog tools ``q`` (exec: records its call, prints ``{"ok": true}`` and no param
back, so a tool's output, masked by design, is not what is compared), ``fail`` (exits 1),
``chk`` (the same quiet program as a check tool: idempotent, low risk) and ``echo``.
Every variant is played twice, with the secret (``s``) and a wrong guess of its shape
(``c``, last character changed); every plan is the agent's, approved by Alice and run in
one ``run --once`` pass:
``fb`` (action 1 fails; its fallback step ``q`` has the literal ``note: <guess>``),
``inp`` (``note: "$<inputs.g>"`` with the plan's own input ``g: <guess>``), ``mix``
(``note: "<guess>$<inputs.e>"``, ``e`` the empty string: all of it the author's text),
``pn`` (``note: "$<plan.name>"``, the name the guess), ``pre`` (a precondition ``chk`` with
``v: <guess>`` and ``expect ... equals: <guess>``, which does not hold), ``ver`` (a verify
``chk`` the same), ``preok``/``verok`` (the same checks with ``equals: true``: they hold),
``gate`` (action 2 ``requires_approval`` with ``note: <guess>``: the gate's preview, left
paused), ``ech`` (an ``echo`` action ``v: <guess>``), ``b64`` (the literal is the guess in
base64), ``sfx`` (the literal is the guess + ``-tail``).

Read for each: the committed PLAN.yml and EXECUTION_LOG.md, ``status --json``, ``show
--config`` and MCP ``log``/``status``. Asserted: after the guess (and its base64) is replaced
by ``GUESS`` and slugs, hashes, times normalised, the answers for the secret and for the
wrong guess hold as many ``***`` (round 62's test asked only whether the wrong guess's answer
held any, and every EXECUTION_LOG.md holds one in its legend "secrets as ``***``").

Broke (strict xfails, 16): ``pre-*``/``ver-*`` (plan, log, status, show, mcp-log: 10): a
precondition or verify whose ``expect: {path: $.json.ok, equals: <guess>}`` does not hold is
recorded "does not hold: $.json.ok is true (expected equals \"***\")" for the secret and as
written for a wrong guess, in the committed PLAN.yml, EXECUTION_LOG.md, ``status --json``,
``show`` and MCP ``log``: the author's expected value is quoted inside the controller's error
and the whole error goes through the redactor (a run that does nothing but fail its check
confirms a guess); ``inp-log``/``inp-mcp-log``/``mix-log``/``mix-mcp-log`` (4): a param
filled by the plan's OWN input (``$<inputs.g>``, default the guess) or the guess joined to an
empty input is recorded ``"note": "***"`` under "Params (resolved)" for the secret only
(round 64's rule counts ``$<plan.*>`` as the author's but not ``$<inputs.*>``: ``pn``, the
same guess through ``$<plan.name>``, held); ``ech-log``/``ech-mcp-log`` (2): an ``echo``
action's output of the author's literal is ``***`` for the secret only (round 64 kept
tool echoes masked; the param line above it quotes the same value as written). Held: the
fallback step's literal (``fb``), ``$<plan.name>`` (``pn``), a check's params with a
holding check (``preok``, ``verok``), the gate preview (``gate``), the base64 literal
(``b64``), the literal with the secret as prefix (``sfx``), every MCP ``status``. Should:
an error quoting the plan's own expected value quotes it as written (the check's message
built from parts, the author's quoted, the tool's result masked); a reference whose value
is wholly the author's (a top-level plan's input default) is quoted as the author's.

Fixed (2026-11-29): ``pre-*``, ``ver-*``, ``inp-log``, ``inp-mcp-log``, ``mix-log``,
``mix-mcp-log`` (14). A check's failure names its author's parts (each clause's path and
expected value, ``checks.authored_parts``) and every writer of the error keeps them as written,
the rest redacted (``PlangateError.recorded``: the journal's check and end records, the
run's outcome and, found on the way, the ``plangate: fail`` commit's body, asserted below);
``refs.authored`` counts a top-level plan's own ``$<inputs.*>`` as the author's.
``ech-log``/``ech-mcp-log`` stay strict xfails, an accepted limit (docs/threat-model.md): a
tool's output has no provenance, and keeping a span equal to an author literal as written
would make a tool echoing ``$<secrets.TOK>`` beside that literal the oracle.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, xfail
from oraclekit import quiet_lab, steady
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp

SECRET = "r65-s3cr3t-kq7wz9mx"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "y"}
SLUGS = ("fb", "inp", "mix", "pn", "pre", "ver", "preok", "verok", "gate", "ech", "b64", "sfx")
WHERE = ("plan", "log", "status", "show", "mcp-log", "mcp-status")

HEAD = """\
plan:
  name: "{name}"
  task: "attack variant {slug}"
  status: pending_approval
"""
TOOLS = """\
available_tools:
  - name: q
  - name: fail
  - name: chk
  - name: echo
"""


#: the recorder, quiet: it prints no param back (a tool's output is the controller's material
#: and stays masked, round 64's rule; here only what the controller writes itself is read)
QUIET = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
print(json.dumps({"ok": True}))
"""


def _b64(g: str) -> str:
    return base64.b64encode(g.encode()).decode()


def _rec(slug: str, note: str, extra: str = "") -> str:
    return (
        '  - id: 1\n    tool: q\n    why: "record it"\n'
        f'    params: {{tag: {slug}, note: "{note}"}}\n' + extra
    )


def _plans(k: str, g: str) -> dict[str, str]:
    def head(slug: str, name: str | None = None, more: str = "") -> str:
        return HEAD.format(name=name or f"{slug}{k}", slug=slug) + more + TOOLS + "actions:\n"

    chk = f'{{tool: chk, params: {{v: "{g}"}}, expect: {{path: $.json.ok, equals: "{g}"}}}}'
    ok = f'{{tool: chk, params: {{v: "{g}"}}, expect: {{path: $.json.ok, equals: true}}}}'
    return {
        "fb": head("fb")
        + '  - id: 1\n    tool: fail\n    why: "try"\n    on_failure: fallback\n'
        + '    fallback:\n      - {id: "1.1", tool: q, why: "fb", '
        + f'params: {{tag: fb{k}, note: "{g}"}}}}\n',
        "inp": head("inp", more=f'inputs: {{g: "{g}"}}\n') + _rec(f"inp{k}", "$<inputs.g>"),
        "mix": head("mix", more='inputs: {e: ""}\n') + _rec(f"mix{k}", g + "$<inputs.e>"),
        "pn": head("pn", name=g) + _rec(f"pn{k}", "$<plan.name>"),
        "pre": head("pre", more=f"preconditions:\n  - {chk}\n") + _rec(f"pre{k}", "x"),
        "ver": head("ver") + _rec(f"ver{k}", "x", f"    verify: {chk}\n"),
        "preok": head("preok", more=f"preconditions:\n  - {ok}\n") + _rec(f"preok{k}", "x"),
        "verok": head("verok") + _rec(f"verok{k}", "x", f"    verify: {ok}\n"),
        "gate": head("gate")
        + _rec(f"gate{k}", "x")
        + '  - id: 2\n    tool: q\n    why: "gated"\n    requires_approval: true\n'
        f'    params: {{tag: gate{k}2, note: "{g}"}}\n',
        "ech": head("ech")
        + f'  - id: 1\n    tool: echo\n    why: "say"\n    params: {{v: "{g}"}}\n',
        "b64": head("b64") + _rec(f"b64{k}", _b64(g)),
        "sfx": head("sfx") + _rec(f"sfx{k}", g + "-tail"),
    }


def _build(root: Path) -> Lab:
    lab = quiet_lab(
        root, SECRET, "@1795300000 +0000", QUIET, tools="fail: {kind: exec, argv: [/bin/false]}\n"
    )
    for k, g in GUESSES.items():
        for slug, text in _plans(k, g).items():
            lab.write(f"{slug}{k}", text)
    lab.commit("agent plans")
    lab.run()
    for k in GUESSES:
        for slug in SLUGS:
            lab.set_status(f"{slug}{k}", "approved")
    lab.commit("approve", ALICE)
    lab.run()
    cfg = str(lab.config)
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    got: dict[str, dict[str, str]] = {k: {} for k in GUESSES}
    for k in GUESSES:
        calls: list[tuple[str, dict[str, Any]]] = []
        names: list[str] = []
        for slug in SLUGS:
            plan = f"plans/{slug}{k}"
            got[k][f"{slug}-plan"] = lab.git("show", f"HEAD:{plan}/PLAN.yml")
            got[k][f"{slug}-log"] = lab.git("show", f"HEAD:{plan}/EXECUTION_LOG.md", check=False)
            got[k][f"{slug}-status"] = json.dumps(rows.get(plan), ensure_ascii=False)
            got[k][f"{slug}-show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
            calls += [("log", {"path": plan}), ("status", {"path": plan})]
            names += [f"{slug}-mcp-log", f"{slug}-mcp-status"]
        for name, reply in zip(names, mcp(lab, calls), strict=True):
            got[k][name] = json.dumps(reply, ensure_ascii=False)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-surface-literal", _build)


IDS = [f"{slug}-{where}" for slug in SLUGS for where in WHERE]

_CHECK = xfail(
    "a check's expected value the author wrote is masked in the controller's failure message",
    "a precondition/verify `expect: {path: $.json.ok, equals: <guess>}` that does not hold is "
    "recorded 'does not hold: $.json.ok is true (expected equals \"***\")' for the secret and "
    "as written for a wrong guess: in the committed PLAN.yml, EXECUTION_LOG.md, status --json, "
    "show and MCP log; no approval of a run that does anything needed",
)
_INPUT = xfail(
    "the plan's own input (or its literal joined to an empty input) is masked in the run's record",
    '`note: "$<inputs.g>"` with `inputs: {g: <guess>}` (or `"<guess>$<inputs.e>"`, e empty) '
    'is recorded `"note": "***"` under Params (resolved) in EXECUTION_LOG.md and MCP log for '
    "the secret, as written for a wrong guess: all of it is the author's text",
)
_ECHO = xfail(
    "accepted limit: an echo tool's output of the author's literal is masked",
    "an `echo` action `v: <guess>`: the log's params quote it as written, its outputs `***` for "
    "the secret only (round 64 kept tool echoes masked; one approved run confirms a guess)",
)
BROKEN: dict[str, Any] = {f"ech-{w}": _ECHO for w in ("log", "mcp-log")}


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    for spelled in (_b64(g), g, json.dumps(g)[1:-1]):
        text = text.replace(spelled, "GUESS")
    text = re.sub(r"\b(" + "|".join(SLUGS) + ")" + k + r"(2?)\b", r"\1K\2", text)
    return steady(text)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    assert s.count("***") == c.count("***"), (s[:3000], c[:3000])


def test_the_plans_ran_as_approved(lab: Lab) -> None:
    """The control: every variant did what it was approved to do (so the record is a run's)."""
    for k in GUESSES:
        tags = {c["argv"][0] for c in map(json.loads, lab.log.read_text().splitlines())}
        assert f"pre{k}" not in tags  # its precondition does not hold
        for slug in ("fb", "inp", "mix", "pn", "ver", "preok", "verok", "gate", "b64", "sfx"):
            assert f"{slug}{k}" in tags, (slug, sorted(tags))
        assert f"gate{k}2" not in tags  # paused at its gate


def test_the_fail_commits_quote_the_check_alike(lab: Lab) -> None:
    """Found on the way: the ``plangate: fail`` commit's body (the check's error) went
    through the redactor whole, ``(expected equals "***")`` for the secret only; git log
    is the agent's to read."""
    for slug in ("pre", "ver"):
        bodies = {
            k: _norm(lab.git("log", "-1", "--format=%b", "--grep", f"fail plans/{slug}{k}$"), k)
            for k in GUESSES
        }
        assert "does not hold" in bodies["s"], bodies
        assert bodies["s"] == bodies["c"], bodies
