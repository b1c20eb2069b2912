"""Round 64, agent-facing surfaces: round 63's answer rule ("the builder of an answer says what
is the author's; the redactor runs only over the controller's material") where the author's
text meets the controller's material and round 63 did not look: the run's record read back
through MCP ``log``/``wait``, the committed EXECUTION_LOG.md, ``plangate check`` in its three
formats, case variants and a secret's END after a leading cut mark.

Lab (one, module scope), local mode with ``agent.identity`` and a secrets file holding
``TOK``. Every variant is played twice, with the secret (``s``) and with a wrong guess of its
shape (``c``, last character changed). On main, per guess: ``why`` (an action's ``why`` the
guess + " that variant ... ran") and ``par`` (a literal param ``note: <guess>`` of ``rec``),
both approved by Alice and run; ``nm`` (``plan.name`` the guess), ``tk`` (``plan.task``),
``up`` (``plan.status`` the guess in UPPER case), ``suf`` (``plan.status`` "..." + the
guess's last 12 characters), pending or invalid. On a branch per guess, ``b-st``
(``plan.status`` the guess), ``b-up`` and ``b-suf`` (as above), read by ``plangate check
--base main --head <branch> --as bob`` as text, markdown and JSON.

Asserted per variant (round 62's test): after the guess is replaced by ``GUESS`` (and slugs,
hashes, durations and times normalised), the answer for the secret holds no ``***`` unless
the answer for the wrong guess does too.

Broke (strict xfails): ``why-mcp-log`` (MCP ``log``'s ``execution_log`` of the run: "**Why:**
*** that variant ... ran" for the secret, as written for the wrong guess, while the
committed EXECUTION_LOG.md quotes the ``why`` as written: the server redacts the log again),
``par-log`` and ``par-mcp-log`` (the committed EXECUTION_LOG.md's "Params (resolved)" shows a
LITERAL param of the plan, the author's own text, as ``"note": "***"`` for the secret, as
written for the wrong one: one approved run confirms a guess), ``b-up-check-md`` and
``b-st-check-md`` (``check --format markdown``: "(got '***')" for the secret, upper-case or
as is, while the text format quotes it as written: the markdown escaping breaks the own-text
match and the whole line goes through the redactor, which also masks the secret's
upper-case spelling). Held: the rest (the committed plan and log's ``why``, ``show``,
``status --json``, MCP ``status``/``wait``, ``check`` text and JSON, the suffix after a
leading ``...``, the name and task). Should: MCP ``log`` passes the committed log on as the
controller wrote it (it is already redacted where it holds the controller's material); the
log's "Params (resolved)" quotes a literal param as the plan wrote it and masks only what a
reference brought in; ``check``'s markdown report quotes the plan's text as its text report
does (escape after the own-text split, not before).

Fixed (2026-11-29): all five, by one rule (the author's text as written, the redactor only
over the controller's material) applied where the answers are built. The execution
record's resolved params say whose each value is (``refs.authored``): EXECUTION_LOG.md's
"Params (resolved)" and the gate's preview quote what the plan wrote (a literal, a key,
``$<plan.*>``) as the frozen plan holds it and show what another reference filled in
resolved and redacted (``par-log``, ``par-mcp-log``); MCP ``log`` passes the committed record
of the run on as the controller wrote it (``agentapi.AS_RECORDED``, ``why-mcp-log``; the
page's ``/api/plan/``, found on the way, too);
``check`` applies the own-text rule to each value of its report before any format escapes
it (``check._shown``, ``b-st-check-md``, ``b-up-check-md``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases, plan_text
from oraclekit import named_replies, proposed, secret_lab, status_plan, steady
from test_round2_execution_kit import shared

SECRET = "r64-hidd3n-pq8zkw4v"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "x"}
MAIN = ("why", "par", "nm", "tk", "up", "suf")
BRANCH = ("st", "up", "suf")


def _main(k: str, g: str) -> dict[str, str]:
    return {
        "why": plan_text(f"why{k}").replace('why: "record', f'why: "{g}'),
        "par": plan_text(f"par{k}", params=f'note: "{g}"\n'),
        "nm": plan_text(f"nm{k}", name=g),
        "tk": plan_text(f"tk{k}").replace('task: "attack variant', f'task: "{g}'),
        "up": status_plan(f"up{k}", g.upper()),
        "suf": status_plan(f"suf{k}", "..." + g[-12:]),
    }


def _branch(k: str, g: str) -> dict[str, str]:
    return {
        "st": status_plan(f"bst{k}", g),
        "up": status_plan(f"bup{k}", g.upper()),
        "suf": status_plan(f"bsuf{k}", "..." + g[-12:]),
    }


def _build(root: Path) -> Lab:
    lab = secret_lab(root, f"TOK: {SECRET}\n", "@1795200000 +0000")
    plans = {f"{slug}{k}": text for k, g in GUESSES.items() for slug, text in _main(k, g).items()}
    proposed(lab, plans, [f"{slug}{k}" for k in GUESSES for slug in ("why", "par")])
    cfg = str(lab.config)
    rows = lab.status()
    got: dict[str, dict[str, str]] = {k: {} for k in GUESSES}
    for k in GUESSES:
        calls: list[tuple[str, dict[str, Any]]] = []
        names: list[str] = []
        for slug in MAIN:
            plan = f"plans/{slug}{k}"
            got[k][f"{slug}-commit"] = lab.git("show", f"HEAD:{plan}/PLAN.yml")
            got[k][f"{slug}-log"] = lab.git("show", f"HEAD:{plan}/EXECUTION_LOG.md", check=False)
            got[k][f"{slug}-status"] = json.dumps(rows.get(plan), ensure_ascii=False)
            if slug in ("why", "par"):
                got[k][f"{slug}-show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
            calls += [
                ("status", {"path": plan}),
                ("log", {"path": plan}),
                ("wait", {"path": plan, "timeout": 1}),
            ]
            names += [f"{slug}-mcp-status", f"{slug}-mcp-log", f"{slug}-mcp-wait"]
        got[k].update(named_replies(lab, names, calls))
    for k, g in GUESSES.items():
        lab.git("checkout", "-q", "-b", f"pr-{k}", "main")
        for slug, text in _branch(k, g).items():
            lab.write(f"b{slug}{k}", text)
        lab.commit(f"pr {k}")
        for fmt, short in (("text", "text"), ("markdown", "md"), ("json", "json")):
            done = lab.cli(
                "check", "--config", cfg, "--base", "main", "--head", f"pr-{k}",
                "--as", "bob@ops.example.com", "--format", fmt, cwd=lab.repo,
            )  # fmt: skip
            out = done.stdout + done.stderr
            for slug in BRANCH:
                got[k][f"b-{slug}-check-{short}"] = _section(out, f"plans/b{slug}{k}", fmt)
        lab.git("checkout", "-q", "main")
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _section(out: str, plan: str, fmt: str) -> str:
    """What ``check`` says about one plan: the lines naming it and those under its heading."""
    if fmt == "json":
        try:
            data = json.loads(out[: out.rfind("}") + 1] or "{}")
        except ValueError:
            return out
        return json.dumps(
            [p for p in data.get("plans", []) if p.get("plan", p.get("path")) == plan] or data,
            ensure_ascii=False,
        )
    lines, keep = [], False
    esc = plan.replace("_", "\\_")
    for line in out.splitlines():
        if plan in line or esc in line:
            keep = True
            lines.append(line)
        elif keep and line.startswith((" ", "-", "\t")):
            lines.append(line)
        elif keep and not line.strip():
            continue
        else:
            keep = False
    return "\n".join(lines)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r64-surface-oracle", _build)


IDS = [
    f"{slug}-{what}"
    for slug in MAIN
    for what in ("commit", "log", "status", "show", "mcp-status", "mcp-log", "mcp-wait")
    if not (what in ("log", "show") and slug not in ("why", "par"))
] + [f"b-{slug}-check-{fmt}" for slug in BRANCH for fmt in ("text", "md", "json")]

BROKEN: dict[str, Any] = {}


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    for spelled in (g, g.upper(), g[-12:]):
        text = text.replace(spelled, "GUESS")
    text = re.sub(r"\b(b?)(why|par|nm|tk|up|suf|st)" + k + r"\b", r"\1\2K", text)
    text = re.sub(r"\bpr-" + k + r"\b", "pr-K", text)
    return steady(text, ms=r"\d+ ms")


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    assert "***" not in s or "***" in c, (s[:1500], c[:1500])
