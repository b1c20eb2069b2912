"""Round 63, agent-facing surfaces: round 62's answer rule ("the author's text is quoted as
written in answers to it and in the controller's record of its plan's text; the redactor
applies to the controller's material") at the places round 62 did not try: a guess of the
controller's secret inside a longer value (truncation), before a marked cut, as an unknown
key, a duplicate key, a tool name, a plan status set after the run, paths the answer
normalises, and the audit.

Lab (one, module scope), local mode with ``agent.identity`` and a secrets file holding
``TOK`` (19 characters, lower-case). Every variant is played twice, with the secret (``s``)
and with a wrong guess of its shape (``c``, last character changed). The agent commits, per
guess: ``lg`` (``plan.status`` the guess + 400 ``y``), ``cut`` (``plan.status`` the guess's
first 15 characters + ``...``), ``key`` (an unknown ``plan`` key named with the guess),
``ak`` (an unknown action key), ``tool`` (``tool:`` the guess), ``dup`` (the guess twice as
a key: an unreadable PLAN.yml) and ``ill`` (a plan Alice approves and that completes, whose
``plan.status`` the agent then sets to the guess: ``E_ILLEGAL_TRANSITION``).

Read: the controller's committed ``validation:`` block (``*-commit``), ``status --json``'s
row (``*-status``), MCP ``status`` of the plan (``*-mcp-status``), MCP ``validate`` of the
plan's text (``*-mcp-validate``), ``plangate validate --json --config`` of a copy
(``*-validate``), ``plangate audit --json`` with and without ``--config`` (``ill-audit``,
``ill-audit-config``), and MCP ``log``/``wait``/``submit`` with paths the server
normalises (``path-*``: ``plans/<guess>/``, ``plans/<guess>/PLAN.yml``, the bare guess, a
slug ``" <guess> "``).

Asserted per variant (round 62's test): after each guess is replaced by ``GUESS`` (and slugs
and hashes normalised), the answer for the secret holds no ``***`` unless the answer for the
wrong guess does too.

Also ``dupp``/``illp``: the same with the secret's first 12 characters + ``...`` (against a
wrong start ``r63-sekr3t-z...``): the redactor hides a secret's START before a marked cut,
so an answer that redacts the agent's text there is a prefix oracle.

Broke (strict xfails, 4): ``ill-mcp-status`` (MCP ``status`` row of the completed plan
whose status the agent set to the guess: ``"file_status": "***"`` for the secret, as written
for the wrong guess; the CLI's row, the notes and the audit quote it as written),
``illp-mcp-status`` (the same with the secret's first 12 characters + ``...``:
``"file_status": "***..."``, a wrong start as written: a PREFIX oracle, the agent reads the
secret a character at a time, one commit on any completed plan and one MCP call per guess),
``dupp-mcp-status`` (``"duplicate key '***...'"``: the prefix oracle again, no approval or
run needed) and ``dup-mcp-status`` (MCP ``status`` of the unreadable plan:
``problem.message`` "duplicate key
'***'" while ``last_event`` and ``notes`` of the same row quote the guess as written).
Held: the rest (truncation, the cut, unknown and action keys, the tool name, normalised
paths, the audit). Should: ``file_status`` and an unreadable plan's ``problem`` are the
agent's text (``agentapi.OWN_QUOTES``). The page's API (``lg-api``, ``key-api``, ``ak-api``,
``tool-api``, ``cutp-api``) showed the committed ``validation:`` block redacted again.

Fixed (2026-11-29): all 9 (``ill-mcp-status``, ``dup-mcp-status``, ``illp-mcp-status``,
``dupp-mcp-status``, ``lg-api``, ``key-api``, ``ak-api``, ``tool-api``, ``cutp-api``). One
rule, written where the answers are built: a status row's builder classifies every field
as the author's text or the controller's material (``reconcile.AUTHOR_FIELDS``,
``CONTROLLER_FIELDS``, ``reconcile.author_text``: ``file_status`` and an unreadable plan's
``problem`` are the author's), and MCP ``status`` keeps what it names as written; the page
shows the ``validation:`` block as committed (``plans.ANSWER_BLOCKS``: the controller's
answer to the author, already written by ``Problem.answered``), never through the redactor
again. The author's text never reaches the redactor, so its ``...`` is no cut and nothing
in it is a secret's start (``redacted_around`` keeps a quote whole even where the
controller's cut follows it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases, plan_text
from oraclekit import named_replies, proposed, secret_lab, status_plan, ui_daemon
from schemakit import validate_rows
from test_round2_execution_kit import shared
from test_round61_surface_page import _get

SECRET = "r63-sekr3t-qv7tmx2k"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "x"}
PREFIX = {"s": SECRET[:12], "c": SECRET[:11] + "z"}  # a start of the secret, and a wrong one
SLUGS = ("lg", "cut", "cutp", "key", "ak", "tool", "dup", "ill", "dupp", "illp")


def _plans(k: str, g: str) -> dict[str, str]:
    return {
        "lg": status_plan(f"lg{k}", g + "y" * 400),
        "cut": status_plan(f"cut{k}", g[:15] + "..."),
        "cutp": status_plan(f"cutp{k}", PREFIX[k] + "..."),
        "key": plan_text(f"key{k}").replace(
            "  status: pending_approval", f"  status: pending_approval\n  {g}: 1"
        ),
        "ak": plan_text(f"ak{k}").replace("    why:", f"    {g}: 1\n    why:"),
        "tool": plan_text(f"tool{k}").replace("    tool: rec", f"    tool: {g}"),
        "dup": plan_text(f"dup{k}").replace("  task:", f"  {g}: 1\n  {g}: 2\n  task:"),
        "ill": plan_text(f"ill{k}"),
        "dupp": plan_text(f"dupp{k}").replace(
            "  task:", f'  "{PREFIX[k]}...": 1\n  "{PREFIX[k]}...": 2\n  task:'
        ),
        "illp": plan_text(f"illp{k}"),
    }


def _page(lab: Lab) -> dict[str, str]:
    """The page and ``/api/plan/`` of every plan, from a daemon started after the passes
    (nothing left for it to do) and stopped once read."""
    out: dict[str, str] = {}
    with ui_daemon(lab, lab.ui_config, "plans/ills") as port:  # type: ignore[attr-defined]
        for k in GUESSES:
            for slug in SLUGS:
                plan = f"plans/{slug}{k}"
                out[f"api:{plan}"] = json.dumps(_get(port, f"/api/plan/{plan}")[::2])
                out[f"page:{plan}"] = json.dumps(_get(port, f"/plan/{plan}")[::2])
    return out


def _build(root: Path) -> Lab:
    lab = secret_lab(root, f"TOK: {SECRET}\n", "@1795000000 +0000")
    lab.ui_config = root / "plangate-ui.yml"  # type: ignore[attr-defined]
    lab.ui_config.write_text(  # type: ignore[attr-defined]
        lab.config.read_text() + "ui: {listen: 0}\n"
    )
    plans = {f"{slug}{k}": text for k, g in GUESSES.items() for slug, text in _plans(k, g).items()}
    proposed(lab, plans, [f"{slug}{k}" for k in GUESSES for slug in ("ill", "illp")])
    for k, g in GUESSES.items():
        lab.set_status(f"ill{k}", f'"{g}"')
        lab.set_status(f"illp{k}", f'"{PREFIX[k]}..."')
    lab.commit("agent sets the status")
    lab.run()
    cfg = str(lab.config)
    rows = lab.status()
    audits = {"ill-audit": lab.audit()[1], "ill-audit-config": lab.audit(config=lab.config)[1]}
    got: dict[str, dict[str, str]] = {k: {} for k in GUESSES}
    files = []
    for k, g in GUESSES.items():
        for slug, text in _plans(k, g).items():
            (root / f"{slug}{k}.yml").write_text(text)
            files.append(f"{slug}{k}.yml")
    done = lab.cli("validate", "--json", "--config", cfg, *files)
    checked = validate_rows(done.stdout)
    page = _page(lab)
    for k, g in GUESSES.items():
        texts = _plans(k, g)
        calls: list[tuple[str, dict[str, Any]]] = []
        names: list[str] = []
        for slug in SLUGS:
            plan = f"plans/{slug}{k}"
            got[k][f"{slug}-commit"] = lab.git("show", f"HEAD:{plan}/PLAN.yml")
            got[k][f"{slug}-status"] = json.dumps(rows.get(plan), ensure_ascii=False)
            got[k][f"{slug}-validate"] = json.dumps(checked.get(f"{slug}{k}"), ensure_ascii=False)
            got[k][f"{slug}-api"] = page.get(f"api:{plan}", "")
            got[k][f"{slug}-page"] = page.get(f"page:{plan}", "")
            calls += [("status", {"path": plan}), ("validate", {"plan": texts[slug]})]
            names += [f"{slug}-mcp-status", f"{slug}-mcp-validate"]
        calls += [
            ("log", {"path": f"plans/{g}/"}),
            ("log", {"path": f"plans/{g}/PLAN.yml"}),
            ("log", {"path": g}),
            ("wait", {"path": f"plans/{g}/", "timeout": 1}),
            ("submit", {"plan": plan_text("sub"), "slug": f" {g} "}),
        ]
        names += [
            "path-log-slash",
            "path-log-file",
            "path-log-bare",
            "path-wait-slash",
            "path-submit-blank",
        ]
        got[k].update(named_replies(lab, names, calls))
        for name, report in audits.items():
            got[k][name] = json.dumps(
                [f for f in report.get("findings", []) if f.get("plan") == f"plans/ill{k}"]
            )
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r63-surface-oracle", _build)


IDS = [
    f"{slug}-{what}"
    for slug in SLUGS
    for what in ("commit", "status", "validate", "mcp-status", "mcp-validate", "api", "page")
] + [
    "path-log-slash",
    "path-log-file",
    "path-log-bare",
    "path-wait-slash",
    "path-submit-blank",
    "ill-audit",
    "ill-audit-config",
]

CLS = "a secret-equality oracle in an answer that quotes only the agent's own text"
BROKEN: dict[str, Any] = {}


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    for spelled in (g, g.upper(), g[:15], PREFIX[k]):
        text = text.replace(spelled, "GUESS")
    text = re.sub(r"\b(lg|cutp|cut|key|ak|tool|dupp|dup|illp|ill)" + k + r"\b", r"\1K", text)
    text = re.sub(r"[0-9a-f]{12,64}", "H", text)
    return re.sub(r'"waited": [0-9.]+', '"waited": W', text)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert "***" not in s or "***" in c, (s[:1500], c[:1500])
