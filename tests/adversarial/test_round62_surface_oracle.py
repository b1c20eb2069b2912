"""Round 62, agent-facing surfaces: a secret-equality oracle through the answers round 61
left redacting whole.

Round 61 made an answer quote the asker's own text as written (docs/execution.md, Secrets:
"An answer quotes the asker's own text as written"), so a plan whose ``plan.status`` is a
guess of a controller secret comes back the same for a right and a wrong guess from
``validate``. The same doc keeps "errors raised rather than collected (``cli._refused``, the
MCP error shape, a page's parse error) and ``check``'s report" and "what the controller
commits" redacting everything, the agent's text included. The property of this round: an
agent "cannot read or confirm a secret". Every answer below quotes only what the agent
itself sent; when it comes back ``***`` for the right guess and as written for a wrong one,
the agent has confirmed the secret.

Lab (one, module scope), local mode with ``agent.identity`` and a secrets file holding
``TOK`` (lower-case, 19 characters; the redactor masks it in any case). Every variant is
played twice, with the secret (``S``) and with a wrong guess of its shape (``C``, last
character changed):

- MCP (one raw JSON-RPC session): ``log``/``status``/``wait`` of ``plans/<guess>``
  (``mcp-log-path``, ``mcp-status-path``, ``mcp-wait-path``), ``wait`` with ``status:
  <guess>`` on a real plan (``mcp-wait-status``), ``submit`` with the upper-cased guess as
  ``slug`` (``mcp-submit-slug``), ``validate`` with ``format: <guess>``
  (``mcp-validate-format``), ``validate`` and ``submit`` of a JSON source whose one key is
  the guess (``mcp-validate-key``, ``mcp-submit-key``: the format cannot be told, the error
  lists the keys);
- CLI: ``show plans/<guess>`` and ``validate <guess>.yml`` of a missing file
  (``cli-show-path``, ``cli-validate-path``), ``hash <guess>.yml`` (``cli-hash-path``),
  ``convert`` of a JSON source whose one key is the guess (``cli-convert-key``),
  ``freeze`` of a plan whose status is the guess (``cli-freeze``);
- ``check --format json`` of a pull-request branch adding a plan whose status is the guess
  (``check-report``);
- the controller's own answer about a committed plan whose status is the guess: the
  ``validation:`` block it commits (``commit-validation``) and ``status --json``'s
  ``reason`` (``status-reason``) and MCP ``status`` (``mcp-status-row``).

- ``num-*``: a second secret ``PIN: '0072946183'`` (round 60: its canonical number forms
  are hidden too) guessed by its canonical form ``72946183`` against ``72946184``: MCP
  ``log`` of ``plans/<guess>`` (``num-mcp-log-path``) and the committed ``validation:``
  block of a plan whose status is the guess (``num-commit-validation``).

Asserted per variant: after each guess is replaced by the word ``GUESS`` (and the slug
and hashes normalised), the answer for the secret holds no ``***`` unless the answer for
the wrong guess does too: a right and a wrong guess are answered alike.

Seen (strict xfails, 15): ``mcp-submit-key`` (MCP ``submit`` of a JSON source keyed with the
guess: "cannot tell the plan's format (keys: ***)", while MCP ``validate`` of the same text
held), ``cli-convert-key`` (the same from ``plangate convert``), ``num-mcp-log-path`` and
``num-commit-validation`` (a numeric secret's canonical form confirmed), ``mcp-log-path``,
``mcp-status-path`` ("no plan plans/*** on the watched branch"), ``mcp-wait-path`` (an ok
answer, ``"path": "plans/***"``), ``mcp-wait-status`` (``"previous": "***"``),
``mcp-submit-slug`` ("slug '***' is not a plan folder name", the upper-cased guess masked
too), ``cli-show-path``, ``cli-validate-path`` ("E_USAGE: ***.yml: no such plan file"),
``check-report`` ("(got '***')"), ``commit-validation`` (the committed ``validation:``
block: ``(got '***')``: the agent confirms a guess with one commit and ``git show``, no
approval needed), ``status-reason`` and ``mcp-status-row`` (the same reason). Held (4):
``mcp-validate-format``, ``mcp-validate-key``, ``cli-hash-path``, ``cli-freeze``. Note: the
same plan's ``E_ILLEGAL_TRANSITION`` note in ``status`` quotes the guess raw for both, so
the row quotes the secret as written and as ``***`` side by side.

Fixed (2026-11-29): all 15. One rule (docs/execution.md, Secrets): the author's text is
quoted as written in answers to it and in the controller's record of its plan's text; the
redactor applies to the controller's material (config, secrets, catalog, tool outputs).
``errors.redacted_around`` redacts a text but where it quotes the asker (whole, when a
secret would straddle a quote's edge); raised errors name what they quote
(``PlangateError(quotes=)``: the paths, slug and keys above), used by ``cli._refused`` and
the MCP error shape; ``check``'s report names its plans' text; MCP answers name their own
values by key (``agentapi.OWN_QUOTES``: ``path``, ``previous``, a status row's repository
text), kept only when a value is one of them whole; the committed ``validation:`` block
records ``Problem.answered`` (catalog parts masked), so ``status`` and the MCP row read
the guess as written, as the ``E_ILLEGAL_TRANSITION`` note already did."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases, plan_text
from mcpkit import PLANGATE
from oraclekit import named_replies, proposed, secret_lab, status_plan
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp

SECRET = "r62-sekr3t-zp4qwlm8"
NUMERIC = "0072946183"  # round 60: a numeric secret hides its canonical number forms too
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "x", "ns": "72946183", "nc": "72946184"}

CLS = "a secret-equality oracle in an answer that quotes only the agent's own text"
BROKEN: dict[str, Any] = {}

MCP_IDS = [
    "mcp-log-path",
    "mcp-status-path",
    "mcp-wait-path",
    "mcp-wait-status",
    "mcp-submit-slug",
    "mcp-validate-format",
    "mcp-validate-key",
    "mcp-submit-key",
]


def _mcp_calls(g: str) -> list[tuple[str, dict[str, Any]]]:
    src = json.dumps({g: {"x": 1}})
    return [
        ("log", {"path": f"plans/{g}"}),
        ("status", {"path": f"plans/{g}"}),
        ("wait", {"path": f"plans/{g}", "timeout": 1}),
        ("wait", {"path": "plans/base", "timeout": 1, "status": g}),
        ("submit", {"plan": plan_text("sub"), "slug": g.upper()}),
        ("validate", {"plan": plan_text("fmt"), "format": g}),
        ("validate", {"plan": src}),
        ("submit", {"plan": src, "slug": "key-" + g[-1]}),
    ]


def _build(root: Path) -> Lab:
    lab = secret_lab(root, f"TOK: {SECRET}\nPIN: '{NUMERIC}'\n", "@1795000000 +0000")
    plans = {f"v{k}": status_plan(f"v{k}", g) for k, g in GUESSES.items()}
    proposed(lab, {"base": plan_text("base"), **plans})
    got: dict[str, dict[str, str]] = {k: {} for k in GUESSES}
    cfg = str(lab.config)
    for k in ("ns", "nc"):  # the numeric secret's canonical form, and a wrong number
        g = GUESSES[k]
        got[k]["commit-validation"] = lab.git("show", f"HEAD:plans/v{k}/PLAN.yml")
        (reply,) = mcp(lab, [("log", {"path": f"plans/{g}"})])
        got[k]["mcp-log-path"] = json.dumps(reply, ensure_ascii=False)
    for k, g in list(GUESSES.items())[:2]:
        got[k]["commit-validation"] = lab.git("show", f"HEAD:plans/v{k}/PLAN.yml")
        rows = json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
        got[k]["status-reason"] = json.dumps([r for r in rows if r["plan"] == f"plans/v{k}"])
        calls = [*_mcp_calls(g), ("status", {"path": f"plans/v{k}"})]
        got[k].update(named_replies(lab, [*MCP_IDS, "mcp-status-row"], calls))
        cli = {
            "cli-show-path": ("show", f"plans/{g}", "--config", cfg),
            "cli-validate-path": ("validate", "--config", cfg, f"{g}.yml"),
            "cli-hash-path": ("hash", "--config", cfg, f"{g}.yml"),
        }
        (root / f"key{k}.json").write_text(json.dumps({g: {"x": 1}}))
        cli["cli-convert-key"] = ("convert", "--json", "--config", cfg, f"key{k}.json")
        (root / f"fz{k}.yml").write_text(status_plan("fz", g))
        cli["cli-freeze"] = ("freeze", "--config", cfg, f"fz{k}.yml")
        for vid, args in cli.items():
            r = lab.cli(*args)
            got[k][vid] = r.stdout + r.stderr
        # a pull request adding a plan whose status is the guess: plangate check's report
        lab.git("checkout", "-q", "-B", f"pr-{k}", "main")
        lab.write("ck", status_plan("ck", g))
        lab.commit("pr")
        r = subprocess.run(
            [PLANGATE, "check", "--config", cfg, "--base", "main", "--format", "json"],
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        got[k]["check-report"] = r.stdout + r.stderr
        lab.git("checkout", "-q", "main")
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r62-surface-oracle", _build)


IDS = [
    *MCP_IDS,
    "mcp-status-row",
    "cli-show-path",
    "cli-validate-path",
    "cli-hash-path",
    "cli-convert-key",
    "cli-freeze",
    "check-report",
    "commit-validation",
    "status-reason",
]


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    text = text.replace(f"plans/v{k}", "plans/vK")
    for spelled in (g, g.upper()):
        text = text.replace(spelled, "GUESS")
    text = re.sub(r"(plans/v|key-|fz|key)[sc](\.json|\.yml|\b)", r"\1K\2", text)
    text = re.sub(r"[0-9a-f]{12,64}", "H", text)
    return re.sub(r'"waited": [0-9.]+', '"waited": W', text)


NUM_IDS = ["num-mcp-log-path", "num-commit-validation"]


@pytest.mark.parametrize("vid", cases(IDS + NUM_IDS, IDS + NUM_IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    ks, kc = ("ns", "nc") if vid.startswith("num-") else ("s", "c")
    vid = vid.removeprefix("num-")
    s = _norm(lab.got[ks][vid], ks)  # type: ignore[attr-defined]
    c = _norm(lab.got[kc][vid], kc)  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert "***" not in s or "***" in c, (s[:1500], c[:1500])
