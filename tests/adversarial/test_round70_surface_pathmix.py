"""Round 70, agent-facing surfaces: round 69's asker's own paths (``_shared.printed`` keeps
the paths a command was asked about as written, matching strings) attacked where the SAME
answer also quotes the controller's material holding the secret: if the exemption matched
the secret inside the controller's part, a right guess would come back as written and a
wrong one as ``***``.

Lab (one, module scope): ``secrets.file`` holds ``TOK``; the exec tool ``fail`` has the
secret as a literal argv item (shown in ``show``'s ``runs:``) and exits 3 printing
``denied: <secret>`` (recorded in the error, the row's reason, the log lines); the tool
``say`` has ``params_schema`` ``m: {enum: [z9, x]}`` (until round 71 ``[<secret>, x]``, and
a ``description`` of ``fail`` holding the secret: a config whose catalog publishes a secret
is now refused at load, E_CONFIG_INVALID, so the controller's material beside the asker's
path is the argv item of ``runs:`` and the tool's printed error). For a right guess (``TOK`` itself)
and a wrong one of its shape, the agent writes ``plans/<g>`` (calls ``fail``; Alice
approves; one pass: it fails) and ``plans/bad-<g>`` (``m: nope``: a catalog problem quoting
the enum). Then, per guess, with ``--config``: ``show`` of the bare name ``<g>`` from inside
``plans/`` (text and ``--json``: the asker's path IS the secret), of the absolute path, of
``plans/<g>/../<g>``; ``validate --json``/``freeze`` of ``bad-<g>`` bare and through ``..``;
``validate --json`` through a symlink ``lnk-<g>`` (outside the repo) to ``plans/bad-<g>``;
MCP ``log``/``status`` of ``plans/<g>``, MCP ``submit`` of the enum-failing plan as slug
``sub-<g>``, MCP ``validate`` of a plan named ``<g>`` failing the enum; the pass's log lines
for ``plans/<g>``; ``status`` (text) rows.

Asserted per id: the two answers are the same once each guess is replaced by ``G`` (the
controller's secret stays ``***`` in both), and the secret's value never appears in an
answer about the wrong guess.

Held: every id (see FINDINGS.md, round 70).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from mcpkit import session
from test_round2_execution_kit import shared

SECRET = "r70-Mx7Secret-Qz"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "w"}
FAIL = "import sys\nsys.stderr.write('denied: ' + sys.argv[1] + '\\n')\nsys.exit(3)\n"
PLAN = """\
plan:
  name: "{name}"
  task: t
  status: pending_approval
available_tools: [{{name: {tool}}}]
actions:
  - id: 1
    tool: {tool}
    why: w
    params: {params}
"""


def _plan(name: str, tool: str = "fail", params: str = "{k: x}") -> str:
    return PLAN.format(name=name, tool=tool, params=params)


def _bad(name: str) -> str:
    return _plan(name, "say", "{k: x, m: nope}")


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    (root / "fail.py").write_text(FAIL)
    py, script = json.dumps(sys.executable), json.dumps(str(root / "fail.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n"
        "agent:\n  identity: {name: Agent, email: agent@example.com}\n",
        tools=f"fail: {{kind: exec, argv: [{py}, {script}, '{SECRET}', '{{k}}']}}\n"
        "say: {kind: echo, params_schema: {type: object, properties: "
        "{k: {type: string}, m: {enum: [z9, x]}}}}\n",
    )
    lab.git_date = "@1796100000 +0000"
    for k, g in GUESSES.items():
        lab.write(g, _plan(f"probe-{k}"))
        lab.write(f"bad-{g}", _bad(f"bad-{k}"))
        os.symlink(lab.repo / "plans" / f"bad-{g}", root / f"lnk-{g}")
    lab.commit("agent: plans")
    lab.run()
    for g in GUESSES.values():
        lab.set_status(g, "approved")
    lab.commit("alice: approve", ALICE)
    passed = lab.run()
    cfg = ["--config", str(lab.config)]
    plans = lab.repo / "plans"
    out: dict[str, dict[str, str]] = {}
    status_text = lab.cli("status", *cfg).stdout
    for k, g in GUESSES.items():
        runs = {
            "show-bare": (["show", *cfg, g], plans),
            "show-json-bare": (["show", "--json", *cfg, g], plans),
            "show-abs": (["show", *cfg, str(plans / g)], root),
            "show-dotdot": (["show", *cfg, f"plans/{g}/../{g}"], lab.repo),
            "val-bad-bare": (["validate", "--json", *cfg, f"bad-{g}"], plans),
            "val-bad-text": (["validate", *cfg, f"bad-{g}"], plans),
            "val-bad-dotdot": (["validate", "--json", *cfg, f"bad-{g}/../bad-{g}"], plans),
            "val-link": (["validate", "--json", *cfg, f"lnk-{g}/PLAN.yml"], root),
            "freeze-bad-bare": (["freeze", *cfg, f"bad-{g}"], plans),
        }
        out[k] = {}
        for vid, (argv, cwd) in runs.items():
            done = lab.cli(*argv, cwd=cwd)
            out[k][vid] = f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
        replies = session(
            lab,
            [
                ("log", {"path": f"plans/{g}"}),
                ("status", {"path": f"plans/{g}"}),
                ("submit", {"plan": _bad(f"sub-{k}"), "slug": f"sub-{g}"}),
                ("validate", {"plan": _bad(g)}),
            ],
        )[0]
        for vid, reply in zip(
            ("mcp-log", "mcp-status", "mcp-submit", "mcp-validate"), replies, strict=True
        ):
            out[k][vid] = json.dumps(reply, ensure_ascii=False)
        lines = []
        for line in passed.stderr.splitlines():
            if f'"plans/{g}"' in line:
                rec = json.loads(line)
                lines.append(json.dumps([rec.get(x) for x in ("event", "code", "error", "reason")]))
        out[k]["run-log"] = "\n".join(lines)
        rows = status_text.splitlines()
        at = next(i for i, line in enumerate(rows) if f"plans/{g} " in line)
        out[k]["status-text"] = " ".join(rows[at].split()[:2]) + "\n" + rows[at + 1].strip()
    lab.out = out  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-surface-pathmix", _build)


def _norm(text: str, g: str, k: str) -> str:
    for noise in (f"probe-{k}", f"bad-{k}", f"sub-{k}"):
        text = text.replace(noise, "N")
    text = text.replace(g, "G")
    text = re.sub(r"sha256:[0-9a-f]{64}", "H", text)
    text = re.sub(r"\b[0-9a-f]{12,40}\b", "C", text)
    # a duration as JSON inside MCP's JSON text too (escaped quotes): round 70's mixed-case
    # plan path is read by MCP since r70mcp, its run's timings differ from run to run
    text = re.sub(r"\d+ ms|\\?\"duration_ms\\?\": \d+", "D", text)
    return re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "T", text)


IDS = [
    "show-bare", "show-json-bare", "show-abs", "show-dotdot", "val-bad-bare", "val-bad-text",
    "val-bad-dotdot", "val-link", "freeze-bad-bare", "mcp-log", "mcp-status", "mcp-submit",
    "mcp-validate", "run-log", "status-text",
]  # fmt: skip
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    out = lab.out  # type: ignore[attr-defined]
    right, wrong = out["s"][vid], out["c"][vid]
    assert "Traceback" not in right + wrong, (right + wrong)[-2000:]
    assert right.strip() and wrong.strip(), (right, wrong)
    assert _norm(right, GUESSES["s"], "s") == _norm(wrong, GUESSES["c"], "c"), (
        right[:1500],
        wrong[:1500],
    )
    assert SECRET not in wrong, wrong[:1500]
