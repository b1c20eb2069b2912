"""Round 71, agent-facing surfaces: round 70's MCP ``status`` reason (``reconcile.
RECORDED_REASONS``: the reason of a ``failed``, ``awaiting_approval`` or ``pending_approval``
row is the record as committed, passed on as written, no second redaction; other rows
redacted as before) attacked two ways: (1) the agent rewrites the committed record itself
(the reason must stay the controller's record, never the agent's text), (2) the committed
record quotes a guess of a secret (a right and a wrong guess must read alike on every
reader, and no secret may print that the record does not hold).

Lab (one, module scope): ``secrets.file`` holds ``TOK``; the exec tool ``fail`` prints
``denied: <its param k>`` and exits 3, called with ``$<secrets.TOK>``; ``chk`` an idempotent
low-risk echo for checks.
- forged records (1): ``ff`` (failed: the agent rewrites the recorded error to
  "FORGED-r71 ... approved by bob"), ``fa`` (paused at a gate: the agent moves the gate to
  action 1 and adds a forged error), ``fp`` (pending: the agent adds an ``approval:`` block
  ``refused`` with a forged message), ``fq`` (pending, refused by the controller for a
  non-approver's approval: the agent rewrites the recorded refusal message), ``fl``
  (failed: only EXECUTION_LOG.md rewritten, "Status: completed");
- guesses (2), for the secret (``s``) and a wrong guess of its shape (``c``): ``na-<k>``
  (approved by the non-approver ``<g>@example.com``: pending, refused, the reason quotes the
  identity), ``se-<k>`` (written and approved by ``<g>@ops.example.com``: E_SELF_APPROVAL),
  ``ex-<k>`` (a plan precondition ``expect: {path: $.echo.v, equals: <g>}`` that does not
  hold: failed), ``ask-<g>`` (the plan's folder IS the guess; ``fail`` with ``on_failure:
  ask`` printing the secret: awaiting_approval), ``gate-<k>`` (a gate before an action whose
  literal param is the guess: awaiting_approval).

Readers: ``status --json``'s row, MCP ``status`` of the plan, ``status`` text, the daemon's
``/api/plan/``. Asserted: (1) the forged text is never any reader's reason or last event and
the row notes ``E_OWNED_BLOCK_CHANGED``; (2) per reader, the two guesses' answers are equal
once the guess is replaced, and the secret's value never appears where the wrong guess is
asked about.

(3) A second config, ``pin.yml`` (the lab's with one more catalog tool), gives ``pin`` a
``params_schema`` holding the secret (``e: {enum: [<secret>, x]}``, ``c: {const: <secret>}``,
``p: {pattern: '^<secret>$'}``, ``n: {not: {enum: [<secret>]}}``); the agent asks MCP
``validate`` under it (and ``validate --json --config`` of a file outside the repo for ``c``,
and ``run --once`` with the committed ``pin-<k>`` plans) about a plan whose literal param is
each guess. Asserted (since the fix): the config is refused at load, E_CONFIG_INVALID naming
the schema path and never the value, so both guesses get the same refusal.

Broke (strict xfails):
- ``mcp-e``, ``mcp-c``, ``mcp-p``, ``mcp-n``, ``cli-c``: validity itself confirms the secret:
  the right guess is ``valid: true`` (``n``: ``E_PARAMS_INVALID``), the wrong one
  ``E_PARAMS_INVALID`` "'<guess>' is not one of ['***', 'x']" / "'***' was expected" /
  "does not match '^***$'" (``n``: valid). Every quote is masked; the verdict is the oracle.
  ``row-c``: the same plan committed: the controller freezes the right guess
  (``pending_approval``) and records the wrong one ``invalid``, on the status row.
  Should: a right and a wrong guess answered alike (e.g. a catalog whose ``params_schema``
  holds a secret's value refused at load, E_CONFIG_INVALID, or a literal checked against the
  schema as if the secret were ``***``).
- ``mcp-n-quote``: the right guess's refusal under ``n`` reads "'<secret>' should not be valid
  under {'enum': ['<secret>']}": the catalog's part printed as written because it equals the
  asker's literal. Should: the catalog's part ``***`` (round 69's rule).
Fixed (2026-11-30): a secret is never catalog material. Every command that loads a config
(``run``, ``validate --config``, ``mcp``, ``status``...; a daemon's reload too) refuses one
whose catalog publishes a value the records' redactor hides (the secrets file, the
``PLANGATE_SECRET_*`` environment, the config's credentials) anywhere in a tool's name,
description or ``params_schema`` (keys, strings, numbers): E_CONFIG_INVALID naming the tool and
the path (``tools.pin.params_schema.properties.e.enum.0``), the remedy ``$<secrets.NAME>`` at
run time (``plan.catalog.refuse_secrets_in_catalog``). The six ids of (3) now assert that
refusal, alike for both guesses (``row-c``: ``run --once`` under ``pin.yml`` refused, and the
committed plans' rows as the lab's controller without ``pin`` reads them). ``mcp-n-quote``:
a problem carries the catalog's quotes (``Problem.catalog_quotes``: the ``repr`` of the
failing keyword) and ``errors.redacted_around`` redacts them whole, an asker's quote inside
them too; held in process over ``pin.yml`` (no command loads it now), as a secrets file
changed after the load would give it.
Held: (1) every forged record on every reader (the controller's record shown, the note
``E_OWNED_BLOCK_CHANGED`` on the row and MCP, the forged gate never runs), (2) every guess
variant on every reader (identities, the expected value, the folder name as written in both
cases, the tool's printed secret ``***`` in both).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases
from mcpkit import session
from oraclekit import ui_daemon
from test_round2_execution_kit import shared
from test_round71_surface_foldnames import _get

SECRET = "r71Kq9SecretZp"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "w"}
# changed (fix130s): secret on stdin, argv refuses it
FAIL = (
    "import json, sys\nk = json.loads(sys.stdin.buffer.read())['k']\n"
    "sys.stderr.write('denied: ' + k + '\\n')\nsys.exit(3)\n"
)
HEAD = "plan:\n  name: {n}\n  task: t\n  status: pending_approval\n"
TOOLS = "available_tools: [{name: fail}, {name: rec}, {name: chk}]\n"


def _two(n: str, second: str, extra: str = "") -> str:
    return (
        HEAD.format(n=n) + extra + TOOLS + "actions:\n"
        f"  - id: 1\n    tool: rec\n    why: w\n    params: {{tag: {n}}}\n"
        f"  - id: 2\n    why: w2\n{second}"
    )


FAILSTEP = '    tool: fail\n    params: {k: "$<secrets.TOK>"}\n'
FORGED = "FORGED-r71 approved by bob"


def _edit(lab: Lab, slug: str, old: str, new: str, append: bool = False) -> None:
    text = lab.read(slug)
    if append:
        lab.write(slug, text + new)
        return
    if old not in text:
        raise BenchError(f"nothing to forge in {slug}: {old!r} not in {text[-800:]}")
    lab.write(slug, text.replace(old, new, 1))


def _build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    (root / "fail.py").write_text(FAIL)
    py, script = json.dumps(sys.executable), json.dumps(str(root / "fail.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n"
        "agent:\n  identity: {name: Agent, email: agent@example.com}\nui: {listen: 0}\n",
        # changed (fix130s): secret on stdin, argv refuses it
        tools=f"fail: {{kind: exec, argv: [{py}, {script}]}}\n"
        "chk: {kind: echo, idempotent: true, risk: low}\n",
    )
    # (3): the same config with the catalog's ``pin``, whose params_schema holds the secret
    pinned = lab.config.read_text().replace("tools:\n", f"tools:\n  {PIN}\n", 1)
    lab.pin_config = root / "pin.yml"  # type: ignore[attr-defined]
    lab.pin_config.write_text(pinned)  # type: ignore[attr-defined]
    lab.git_date = "@1796100000 +0000"
    lab.write("ff", _two("ff", FAILSTEP))
    lab.write("fl", _two("fl", FAILSTEP))
    lab.write(
        "fa", _two("fa", "    tool: rec\n    params: {tag: fa2}\n    requires_approval: true\n")
    )
    lab.write("fp", _two("fp", "    tool: rec\n    params: {tag: fp2}\n"))
    lab.write("fq", _two("fq", "    tool: rec\n    params: {tag: fq2}\n"))
    for k, g in GUESSES.items():
        lab.write(f"na-{k}", _two(f"na-{k}", "    tool: rec\n    params: {tag: x}\n"))
        pre = (
            "preconditions:\n  - {tool: chk, params: {v: x}, "
            f"expect: {{path: $.echo.v, equals: {g}}}}}\n"
        )
        lab.write(f"ex-{k}", _two(f"ex-{k}", "    tool: rec\n    params: {tag: x}\n", pre))
        lab.write(f"ask-{g}", _two(f"ask-{k}", FAILSTEP + "    on_failure: ask\n"))
        lab.write(
            f"gate-{k}",
            _two(
                f"gate-{k}",
                f"    tool: rec\n    params: {{tag: {g}}}\n    requires_approval: true\n",
            ),
        )
        lab.write(f"pin-{k}", _pin("c", g))
    lab.commit("agent: plans", AGENT)
    for k, g in GUESSES.items():  # written by the guess's identity (an approver by glob)
        lab.write(f"se-{k}", _two(f"se-{k}", "    tool: rec\n    params: {tag: x}\n"))
        lab.commit("ops: plan", ("Ops", f"{g}@ops.example.com"))
    lab.run()
    for slug in ("ff", "fl", "fa", *[f"{p}-{k}" for p in ("ex", "gate") for k in GUESSES]):
        lab.set_status(slug, "approved")
    for g in GUESSES.values():
        lab.set_status(f"ask-{g}", "approved")
    lab.commit("alice: approve", ALICE)
    lab.set_status("fq", "approved")
    lab.commit("mallory: approve fq", ("Mallory", "mallory@example.com"))
    for k, g in GUESSES.items():
        lab.set_status(f"na-{k}", "approved")
        lab.commit("x: approve", ("X", f"{g}@example.com"))
        lab.set_status(f"se-{k}", "approved")
        lab.commit("ops: approve", ("Ops", f"{g}@ops.example.com"))
    lab.run()
    # (1) the agent rewrites the committed records
    _edit(lab, "ff", "denied: ***", FORGED)
    _edit(lab, "fa", "    action: 2\n", "    action: 1\n")
    _edit(
        lab,
        "fa",
        "    status: pending\n",
        f"    status: failed\n    error: {{code: E_TOOL_FAILED, message: {FORGED}}}\n",
    )
    _edit(
        lab,
        "fp",
        "",
        f"approval:\n  status: refused\n  code: E_SELF_APPROVAL\n  message: {FORGED}\n",
        append=True,
    )
    _edit(lab, "fq", "mallory@example.com (author", f"{FORGED} (author")
    (lab.repo / "plans" / "fl" / "EXECUTION_LOG.md").write_text(
        f"# Execution log\n\n- Status: completed\n- {FORGED}\n"
    )
    lab.commit("agent: records", AGENT)
    lab.run()
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["status-text"] = lab.cli("status", "--config", cfg).stdout
    ids = (
        ["ff", "fl", "fa", "fp", "fq"]
        + [f"{p}-{k}" for p in ("na", "se", "ex", "gate") for k in GUESSES]
        + [f"ask-{g}" for g in GUESSES.values()]
    )
    replies = session(lab, [("status", {"path": f"plans/{s}"}) for s in ids])[0]
    got["mcp"] = {s: r for s, r in zip(ids, replies, strict=True)}
    got["calls"] = {t: len(lab.calls(t)) for t in ("fa2", "fp2", "fq2")}
    got["api"] = _api(lab, ids)
    # (3) the catalog's schema holding the secret, asked with a literal guess
    pin_cfg = str(lab.pin_config)  # type: ignore[attr-defined]
    got["schema"] = {}
    for key in SCHEMA:
        for k, g in GUESSES.items():
            replies, stderr = session(lab, [("validate", {"plan": _pin(key, g)})], config=pin_cfg)
            got["schema"][f"{key}:{k}"] = stderr + json.dumps(replies, ensure_ascii=False)
    ran = lab.cli("run", "--once", "--config", pin_cfg)
    for k, g in GUESSES.items():
        probe = root / f"probe-{k}" / "PLAN.yml"
        probe.parent.mkdir()
        probe.write_text(_pin("c", g))
        done = lab.cli("validate", "--json", "--config", pin_cfg, str(probe))
        got["schema"][f"cli-c:{k}"] = done.stdout + done.stderr
        row = dict(got["rows"][f"plans/pin-{k}"])  # as the controller without pin reads it
        row.pop("last_commit", None)
        ran_text = f"{ran.returncode} {ran.stdout}{ran.stderr}"
        got["schema"][f"row-c:{k}"] = ran_text + json.dumps(row, ensure_ascii=False)
    lab.got = got  # type: ignore[attr-defined]
    return lab


SCHEMA = ("e", "c", "p", "n")
PIN = (
    "pin: {kind: echo, params_schema: {type: object, properties: {"
    f"e: {{enum: [{SECRET}, x]}}, c: {{const: {SECRET}}}, "
    f"p: {{type: string, pattern: '^{SECRET}$'}}, n: {{not: {{enum: [{SECRET}]}}}}}}}}}}"
)


def _pin(key: str, g: str) -> str:
    return (
        "plan:\n  name: probe\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: pin}]\nactions:\n"
        f"  - id: 1\n    tool: pin\n    why: w\n    params: {{{key}: {g}}}\n"
    )


def _api(lab: Lab, ids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    with ui_daemon(lab, lab.config, "plans/se-c") as port:
        for s in ids:
            out[s] = _get(port, f"/api/plan/plans/{s}")
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r71-surface-recreason", _build)


def _mcp_row(reply: dict[str, Any] | None) -> dict[str, Any]:
    assert reply is not None
    result = reply["result"]
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])["plans"][0]


def _api_row(text: str) -> dict[str, Any]:
    assert text.startswith("200 "), text[:300]
    return json.loads(text[4:])["row"]


BROKEN: dict[str, Any] = {}

# -- (1) a forged record is never the reason ----------------------------------------------------
FORGES = {"ff": "failed", "fl": "failed", "fa": "awaiting_approval", "fp": "pending_approval",
          "fq": "pending_approval"}  # fmt: skip
READERS = ("row", "mcp", "text", "api")
FIDS = [f"{s}:{r}" for s in FORGES for r in READERS]


def _reader(lab: Lab, slug: str, reader: str) -> tuple[str, dict[str, Any] | None]:
    got = lab.got  # type: ignore[attr-defined]
    if reader == "row":
        row = got["rows"][f"plans/{slug}"]
        return json.dumps(row, ensure_ascii=False), row
    if reader == "mcp":
        row = _mcp_row(got["mcp"][slug])
        return json.dumps(row, ensure_ascii=False), row
    if reader == "api":
        row = _api_row(got["api"][slug])
        return json.dumps(row, ensure_ascii=False), row
    lines = got["status-text"].splitlines()
    at = next(i for i, ln in enumerate(lines) if f" plans/{slug} " in ln)
    block = [lines[at]]
    for ln in lines[at + 1 :]:
        if ln[:1] != " ":
            break
        block.append(ln)
    return "\n".join(block), None


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, BROKEN))
def test_a_forged_record_is_never_the_reason(lab: Lab, vid: str) -> None:
    slug, reader = vid.split(":")
    text, row = _reader(lab, slug, reader)
    assert "FORGED" not in text, text[:2000]
    if row is not None:
        assert row["status"] == FORGES[slug], row
        if reader != "api":
            assert "E_OWNED_BLOCK_CHANGED" in json.dumps(row.get("notes")), row
    got = lab.got  # type: ignore[attr-defined]
    assert got["calls"] == {"fa2": 0, "fp2": 0, "fq2": 0}, got["calls"]


# -- (2) a right and a wrong guess read alike ------------------------------------------------------
GUESS_PLANS = {"na": "pending_approval", "se": "pending_approval", "ex": "failed",
               "ask": "awaiting_approval", "gate": "awaiting_approval"}  # fmt: skip
GIDS = [f"{p}:{r}" for p in GUESS_PLANS for r in READERS]


def _norm(text: str, g: str, k: str) -> str:
    text = text.replace(g, "G").replace(f"-{k}", "-K")
    text = re.sub(r"sha256:[0-9a-f]{64}", "H", text)
    text = re.sub(r"\b[0-9a-f]{12,40}\b", "C", text)
    text = re.sub(r"\d+ ms|\"duration_ms\": \d+", "D", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT[\d:.]+Z", "T", text)
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("vid", cases(GIDS, GIDS, BROKEN))
def test_a_right_and_a_wrong_guess_read_alike(lab: Lab, vid: str) -> None:
    prefix, reader = vid.split(":")
    out = {}
    for k, g in GUESSES.items():
        slug = f"ask-{g}" if prefix == "ask" else f"{prefix}-{k}"
        text, row = _reader(lab, slug, reader)
        if row is not None:
            assert row["status"] == GUESS_PLANS[prefix], row
        out[k] = (text, _norm(text, g, k))
    right, wrong = out["s"], out["c"]
    assert right[1] == wrong[1], (right[0][:1500], wrong[0][:1500])
    assert SECRET not in wrong[0], wrong[0][:1500]


# -- (3) the catalog's schema holding the secret: refused at load, both guesses alike ---------
SIDS = [f"mcp-{key}" for key in SCHEMA] + ["cli-c", "row-c"]


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, BROKEN))
def test_a_schema_holding_the_secret_answers_both_guesses_alike(lab: Lab, vid: str) -> None:
    """Fixed: the config is refused at load (E_CONFIG_INVALID naming the schema path): the
    MCP server, ``validate --config`` and ``run`` answer both guesses with that refusal."""
    got = lab.got["schema"]  # type: ignore[attr-defined]
    key = vid.removeprefix("mcp-")
    out = {}
    for k, g in GUESSES.items():
        text = got[f"{key}:{k}"].replace(
            str(Path(lab.pin_config).parent), "ROOT"
        )  # "-s" is in the lab's path
        assert "Traceback" not in text, text[-1500:]
        assert "E_CONFIG_INVALID" in text and "params_schema.properties." in text, text[-1500:]
        assert SECRET not in text, text[-1500:]
        out[k] = (text, _norm(text, g, k))
    assert out["s"][1] == out["c"][1], (out["s"][0][:1500], out["c"][0][:1500])


def test_the_catalogs_part_stays_masked_beside_the_askers_literal(lab: Lab) -> None:
    """``mcp-n-quote``, fixed: the catalog's part of a problem is redacted whatever the asker
    wrote. No loaded config holds a secret in its catalog now, so the rule is held where
    MCP ``validate`` applies it (``AgentApi._answered``: ``Problem.answered`` with the
    records' redactor), over the catalog as a secrets file changed after the load gives it."""
    from controller.execution.secrets import redactor_for
    from controller.plan import plans, yamlio
    from controller.settings import config_from_data

    path = Path(lab.pin_config)  # type: ignore[attr-defined]
    config = config_from_data(yamlio.read_yaml(path.read_text(), str(path)).data, path)
    said = {}
    for k, g in GUESSES.items():
        plan = lab.root / f"quote-{k}" / "PLAN.yml"
        plan.parent.mkdir(exist_ok=True)
        plan.write_text(_pin("n", g))
        problems = plans.load_plan(plan, config).problems
        said[k] = [p.answered(redactor_for(config).text).message for p in problems]
    messages = said["s"]
    assert any("should not be valid" in m for m in messages), messages
    assert all(f"['{SECRET}']" not in m for m in messages), messages
    assert any(
        m.startswith(f"'{SECRET}' should not be valid under {{'enum': ['***']}}") for m in messages
    ), messages
