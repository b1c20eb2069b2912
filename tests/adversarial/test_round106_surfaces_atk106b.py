"""Round 106, MCP's strict arguments and submit's slug rule at round 104's edges (atk106b).

Lab (one, local mode, agent identity configured, ~19 s wall): the agent commits plans
``pend`` (pending), ``done`` (approved by Alice, completed), ``gone`` (completed, then its
PLAN.yml deleted by the agent, its EXECUTION_LOG.md kept), ``Cap`` (capital letter),
``café`` (NFC), ``nest2`` (an ActionPlan PLAN.json with a nested plan, converted by the pass
into ``nest2/PLAN.yml`` + ``nest2/step-2/PLAN.yml``), then ``logonly/`` holding only a
forged EXECUTION_LOG.md, ``upf/Plan.yml``, and after the last pass two unconverted sources
(``srcx/PLAN.json``, ``lowsrc/plan.json``). Every MCP call goes through the real ``mcp``
client SDK (round 104's ``calls``); NaN/Infinity through a raw JSON-RPC session (mcpkit).

Ids:
* ``slug:<k>``: submit slugs that reach into, or twin, another plan's folder by another
  spelling: trailing dot (``pend.``, ``done.``, ``pend./x``, ``done./x``, ``done../x``,
  ``nest2./step-2``), case (``cap``, ``cap/x`` beside ``Cap``), NFD/NFC ``café``, fullwidth,
  long s, ``done/``, ``./done/x``, ``done//x``, ``done/./x``, a source's folder (``srcx``,
  ``srcx/y``, ``lowsrc/y``), a ``Plan.yml`` folder (``upf/x``), a converted nested plan
  (``nest2/step-2``, ``nest2/step-2/x``, ``nest/step-2/x``): E_USAGE/E_PLAN_AMBIGUOUS,
  nothing committed. ``slug-ok:<k>``: the controls (a new group, a log-only folder, a
  deleted plan's folder) commit. ``slug:over-nested``: ``logonly`` after ``logonly/x``.
* ``typed:<k>``: slug/plan/note/format/pull_request/timeout/status/path as bool, null,
  list, object, number, ``"true"``, ``1.0``, ``0``, ``""``, ``PLAN.YML``: E_USAGE;
  ``typed:nothing-landed``.
* ``raw:<k>``, ``hang:<k>``: ``timeout`` NaN/Infinity/-Infinity, ``pull_request`` NaN.
* ``agree:<plan>``: ``status --json``, MCP ``status`` and ``log`` agree (status and hash)
  on the twins, the source folder, the nested child. ``log:forged``/``log:old-run``: MCP
  ``log`` of a plan submitted over a forged log / a deleted completed plan's folder shows
  no record.

Seen (round 106, 75 ids, ~19 s wall): 9 broke (4 classes), 66 held.
Broke: **slug-twin-inside** (``slug:done-dot-in``, ``pend-dot-in``, ``cap-in``): the twin
rule is applied to the slug's last part only: ``done./x`` and ``cap/x`` are committed
``pending_approval``, though ``plans/done./x`` is ``plans/done/x`` (a new plan among a
COMPLETED plan's files) on an NTFS checkout and ``plans/cap/x`` is inside ``plans/Cap`` on
a case-insensitive one (``done.``/``cap`` alone are E_PLAN_AMBIGUOUS, ``nest2./step-2``
too). **slug-over-source** (``slug:srcx-twin``): a folder holding an unconverted
``PLAN.json`` (a plan source: ``srcx/y`` is refused as "a plan's folder") takes a submitted
PLAN.yml beside it; the controller freezes the submission, the source (another plan) stays
committed in the folder and no reader names it. **slug-over-nested**
(``slug:over-nested``): ``logonly`` is committed around the plan ``logonly/x``: a plan
among another plan's files, the state round 104's rule forbids, reached in the other
order. **mcp-timeout-nonfinite** (``hang:inf``, ``hang:nan``, ``raw:wait-inf``,
``raw:wait-nan``): ``timeout`` Infinity is taken (no answer in 6 s, where ``10**30`` is
E_USAGE) and NaN answers a 0 s wait; JSON has no such number (``pull_request`` NaN is
E_USAGE). Held: every other spelling (``.`` parts, doubled and trailing slashes, NFD,
fullwidth, long s, ``Plan.yml``, a lower-case ``plan.json``, a converted nested child),
every wrong type, the surfaces' agreement, no forged or old log shown as the record.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import unicodedata
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round104_surfaces_atk104b import _cli, calls

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
NFD = unicodedata.normalize("NFD", "café")


def _ap(tag: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"plan_version": 1, "plan_id": f"plan:{tag}", "title": tag, "workspace_id": "/w",
            "steps": steps}  # fmt: skip


def _nested() -> str:
    store = {"type": "store_data", "key": "leaf", "value": 1}
    leaf = _ap("leaf", [{"step_number": 1, "action": store, "description": "leaf"}])
    top = _ap("top", [
        {"step_number": 1, "action": {"type": "store_data", "key": "top", "value": 1},
         "description": "first"},
        {"step_number": 2, "action": {"type": "nested_plan", "plan": leaf}, "description": "nest"},
    ])  # fmt: skip
    return json.dumps(top)


P = lambda tag: plan_text(tag)  # noqa: E731
#: submit slugs that reach into (or twin) another plan's folder by another spelling
SLUGS: dict[str, str] = {
    "pend-dot": "pend.",
    "done-dot": "done.",
    "pend-dot-in": "pend./x",
    "done-dot-in": "done./x",
    "cap-twin": "cap",
    "cap-in": "cap/x",
    "done-slash": "done/",
    "done-dotslash": "./done/x",
    "done-dslash": "done//x",
    "done-dotpart": "done/./x",
    "srcx-in": "srcx/y",
    "srcx-twin": "srcx",
    "lowsrc-in": "lowsrc/y",
    "upf-in": "upf/x",
    "nest-child": "nest/step-2",
    "nest-in": "nest/step-2/x",
    "nfd-in": NFD + "/x",
    "nfc-twin": "café",
    "logonly-in": "logonly/x",
    "done-dotdot": "done../x",
    "fw-done": "ｄｏｎｅ",
    "done-long-s": "done/ſ",
}
#: wrong-typed and odd arguments (through the SDK)
TYPED: dict[str, tuple[str, dict[str, Any]]] = {
    "slug-bool": ("submit", {"plan": P("t1"), "slug": True}),
    "slug-null": ("submit", {"plan": P("t2"), "slug": None}),
    "slug-list": ("submit", {"plan": P("t3"), "slug": ["t3"]}),
    "plan-num": ("submit", {"plan": 5, "slug": "t4"}),
    "plan-list": ("submit", {"plan": [P("t5")], "slug": "t5"}),
    "note-num": ("submit", {"plan": P("t6"), "slug": "t6", "note": 5}),
    "note-list": ("submit", {"plan": P("t7"), "slug": "t7", "note": ["a"]}),
    "note-obj": ("submit", {"plan": P("t8"), "slug": "t8", "note": {"a": 1}}),
    "note-bool": ("submit", {"plan": P("t9"), "slug": "t9", "note": True}),
    "format-num": ("submit", {"plan": P("t10"), "slug": "t10", "format": 1}),
    "format-list": ("submit", {"plan": P("t11"), "slug": "t11", "format": ["plan.yml"]}),
    "format-upper": ("submit", {"plan": P("t12"), "slug": "t12", "format": "PLAN.YML"}),
    "pr-zero": ("submit", {"plan": P("t13"), "slug": "t13", "pull_request": 0}),
    "pr-float": ("submit", {"plan": P("t14"), "slug": "t14", "pull_request": 1.0}),
    "pr-list": ("submit", {"plan": P("t15"), "slug": "t15", "pull_request": [True]}),
    "pr-str-true": ("submit", {"plan": P("t16"), "slug": "t16", "pull_request": "true"}),
    "pr-obj": ("submit", {"plan": P("t17"), "slug": "t17", "pull_request": {}}),
    "v-format-num": ("validate", {"plan": P("v1"), "format": 3}),
    "v-plan-num": ("validate", {"plan": 3}),
    "wait-list": ("wait", {"path": "plans/pend", "timeout": [1], "status": "x"}),
    "wait-obj": ("wait", {"path": "plans/pend", "timeout": {}, "status": "x"}),
    "wait-null-t": ("wait", {"path": "plans/pend", "timeout": None, "status": "x"}),
    "wait-status-list": ("wait", {"path": "plans/pend", "timeout": 0.1, "status": ["x"]}),
    "wait-status-bool": ("wait", {"path": "plans/pend", "timeout": 0.1, "status": False}),
    "status-path-bool": ("status", {"path": True}),
    "status-path-empty": ("status", {"path": ""}),
    "log-path-null": ("log", {"path": None}),
    "log-path-float": ("log", {"path": 1.5}),
}
#: raw JSON-RPC (no SDK): values JSON has no spelling for, as Python's json writes them
RAW: dict[str, tuple[str, dict[str, Any]]] = {
    "wait-nan": ("wait", {"path": "plans/pend", "timeout": float("nan"), "status": "x"}),
    "wait-inf": ("wait", {"path": "plans/pend", "timeout": float("inf"), "status": "x"}),
    "wait-ninf": ("wait", {"path": "plans/pend", "timeout": float("-inf"), "status": "x"}),
    "pr-nan": ("submit", {"plan": P("r1"), "slug": "r1", "pull_request": float("nan")}),
}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    py = sys.executable
    argv = f'["{py}", "-c", "print(1)", "{{key}}"]'
    lab = Lab(root / "lab", extra=AGENT_CFG, tools=f"store_data: {{kind: exec, argv: {argv}}}\n")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    t0 = time.time()
    for s in ("pend", "done", "gone"):
        lab.write(s, plan_text(s))
    lab.write("Cap", plan_text("Cap"))
    lab.write("café", plan_text("nfc"))
    lab.write("nest2", _nested(), filename="PLAN.json")
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("done")
    lab.approve("gone")
    lab.run()
    lab.run()
    # the agent removes gone's plan file, keeping the controller's EXECUTION_LOG.md
    lab.git("rm", "-q", "plans/gone/PLAN.yml")
    lab.put("plans/logonly/EXECUTION_LOG.md", "# Execution log\n\nFORGED-LOG all done\n")
    lab.put("plans/upf/Plan.yml", plan_text("upf"))
    lab.commit("agent: tidy", AGENT)
    got["submit_nest"] = calls(lab, [("submit", {"plan": _nested(), "slug": "nest",
                                                 "format": "actionplan"})])  # fmt: skip
    lab.run()
    # sources no pass has converted yet
    lab.write("srcx", _nested(), filename="PLAN.json")
    lab.put("plans/lowsrc/plan.json", _nested())
    lab.commit("agent: sources", AGENT)
    got["t_setup"] = time.time() - t0
    before = lab.head()
    keys = list(SLUGS)
    seq = [("submit", {"plan": plan_text(f"s-{k}"), "slug": SLUGS[k]}) for k in keys]
    seq += [("submit", {"plan": plan_text("gone2"), "slug": "gone"})]
    seq += [("submit", {"plan": plan_text("lo2"), "slug": "logonly"})]
    seq += [("submit", {"plan": plan_text("n2c"), "slug": "nest2/step-2"})]
    seq += [("submit", {"plan": plan_text("n2x"), "slug": "nest2/step-2/x"})]
    seq += [("submit", {"plan": plan_text("n2p"), "slug": "nest2./step-2"})]
    res = calls(lab, seq)
    got["slugs"] = dict(zip([*keys, "gone", "logonly", "nest2-child", "nest2-in", "nest2-dot"],
                            res, strict=True))  # fmt: skip
    tk = list(TYPED)
    got["typed"] = dict(zip(tk, calls(lab, [TYPED[k] for k in tk]), strict=True))
    rk = list(RAW)
    raw, _ = mcpkit.session(lab, [RAW[k] for k in rk], timeout=60)
    got["raw"] = dict(zip(rk, raw, strict=True))
    got["log"] = lab.git("log", "--format=%x01%an%x00%s", "--name-only", f"{before}..main")
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "main").split("\n")
    got["branches"] = lab.git("for-each-ref", "--format=%(refname)").split("\n")
    got["t_calls"] = time.time() - t0
    lab.run()
    got["rows"] = lab.rows()
    got["reads"] = _reads(lab)
    got["hang"] = {}
    for k, t in (("inf", float("inf")), ("nan", float("nan"))):
        try:
            r, _ = mcpkit.session(
                lab,
                [("wait", {"path": "plans/pend", "timeout": t, "status": "pending_approval"})],
                timeout=6,
            )
            got["hang"][k] = r[0]
        except subprocess.TimeoutExpired:
            got["hang"][k] = "no answer in 6 s"
    got["t_run"] = time.time() - t0
    return lab


#: the plans the surfaces are read on (r106slugs: ``logonly``, ``cap/x``, ``done./x`` and
#: ``pend./x`` are refused now, so no plan of theirs is there to read)
READ = ["srcx", "gone", "Cap", "done", "pend", "nest2", "nest2/step-2"]


def _reads(lab: Lab) -> dict[str, Any]:
    c = str(lab.config)
    out: dict[str, Any] = {"show": {}}
    for s in READ:
        r = _cli(lab, None, "show", "--json", "--config", c, f"plans/{s}")
        try:
            out["show"][s] = json.loads(r.stdout)
        except ValueError:
            out["show"][s] = {"raw": (r.stdout + r.stderr)[-1500:]}
    seq: list[tuple[str, dict[str, Any]]] = []
    for s in READ:
        seq += [("status", {"path": f"plans/{s}"}), ("log", {"path": f"plans/{s}"})]
    got = calls(lab, seq)
    out["mcp"] = {s: got[2 * i : 2 * i + 2] for i, s in enumerate(READ)}
    st = _cli(lab, None, "status", "--json", "--config", c)
    out["status"] = {r["plan"]: r for r in json.loads(st.stdout)}
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r106surf-atk106b", _build)


#: ``nest-child`` is refused since round 127 (fix128g): the ``nest`` ActionPlan submitted
#: above, once refused "pass -o DIR", is committed with its nested plan at
#: ``plans/nest/step-2``, so that slug is inside a plan's folder
REFUSE = [k for k in SLUGS if k not in ("logonly-in",)] + [
    "nest2-child",
    "nest2-in",
    "nest2-dot",
]
OK = ["logonly-in", "gone"]
SLUG_OF = {**SLUGS, "nest2-child": "nest2/step-2", "nest2-in": "nest2/step-2/x",
           "nest2-dot": "nest2./step-2", "gone": "gone", "logonly": "logonly"}  # fmt: skip
#: round 106's four surface classes (slug-twin-inside, slug-over-source, slug-over-nested,
#: mcp-timeout-nonfinite; 9 ids) were fixed the same session (r106slugs): none expected
BROKEN: dict[str, Any] = {}


def _committed(lab: Lab, slug: str) -> bool:
    """Whether any commit since the submissions began wrote ``plans/<slug>/PLAN.yml``."""
    return f"plans/{slug.strip('/')}/PLAN.yml" in lab.got["log"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("k", cases([f"slug:{k}" for k in REFUSE], REFUSE, BROKEN))
def test_slug_refused(lab: Lab, k: str) -> None:
    """A slug inside (or a twin of) another plan's folder by any spelling: refused with a code,
    nothing committed at it."""
    ans = lab.got["slugs"][k]  # type: ignore[attr-defined]
    assert ans["error"], ans["text"][:400]
    assert (ans["data"] or {}).get("code") in ("E_USAGE", "E_PLAN_AMBIGUOUS"), ans["text"][:400]
    assert not _committed(lab, SLUG_OF[k])


@pytest.mark.parametrize("k", cases([f"slug-ok:{k}" for k in OK], OK, {}))
def test_slug_accepted(lab: Lab, k: str) -> None:
    """A new folder, a folder holding only a (forged) log, a deleted plan's folder: committed
    as the agent's pending plan (the control for the refusals)."""
    ans = lab.got["slugs"][k]  # type: ignore[attr-defined]
    assert not ans["error"] and ans["data"]["status"] == "pending_approval", ans["text"][:400]


def test_slug_over_nested(lab: Lab) -> None:
    """slug:over-nested: `logonly` submitted after `logonly/x` is a plan: a plan's folder is its
    own, so a plan submitted around another plan's folder is refused too."""
    ans = lab.got["slugs"]["logonly"]  # type: ignore[attr-defined]
    assert ans["error"], ans["text"][:300]


TK = list(TYPED)


@pytest.mark.parametrize("k", cases([f"typed:{k}" for k in TK], TK, BROKEN))
def test_typed(lab: Lab, k: str) -> None:
    """An argument of the wrong type (or an unknown format): E_USAGE naming it, nothing done."""
    ans = lab.got["typed"][k]  # type: ignore[attr-defined]
    assert ans["error"] and (ans["data"] or {}).get("code") == "E_USAGE", ans["text"][:400]


def test_typed_nothing_landed(lab: Lab) -> None:
    """typed:nothing-landed: no wrong-typed submit committed a file or made a branch."""
    tree, br = lab.got["tree"], lab.got["branches"]  # type: ignore[attr-defined]
    assert not any(t.startswith(("plans/t1", "plans/r1", "plans/v")) for t in tree), tree
    assert [b for b in br if b] == ["refs/heads/main"], br


RK = list(RAW)


@pytest.mark.parametrize("k", cases([f"raw:{k}" for k in RK], RK, BROKEN))
def test_raw_nonfinite(lab: Lab, k: str) -> None:
    """NaN and Infinity (no JSON number) as `timeout` or `pull_request`: E_USAGE; -Infinity
    may be read as a negative timeout (answered at once, as round 104's `wait:neg`)."""
    rep = lab.got["raw"][k]  # type: ignore[attr-defined]
    res = rep.get("result") or {}
    text = "".join(c.get("text", "") for c in res.get("content") or [])
    if k == "wait-ninf" and not res.get("isError"):
        assert json.loads(text)["waited"] <= 1.0
        return
    assert res.get("isError") and '"E_USAGE"' in text, json.dumps(rep)[:400]


@pytest.mark.parametrize("k", cases([f"hang:{k}" for k in ("inf", "nan")], ["inf", "nan"], BROKEN))
def test_hang(lab: Lab, k: str) -> None:
    """`wait` with Infinity/NaN and the status it has now: E_USAGE at once, as 10**30 is."""
    rep = lab.got["hang"][k]  # type: ignore[attr-defined]
    assert isinstance(rep, dict), rep
    text = "".join(c.get("text", "") for c in (rep.get("result") or {}).get("content") or [])
    assert (rep.get("result") or {}).get("isError") and '"E_USAGE"' in text, text[:300]


@pytest.mark.parametrize("s", cases([f"agree:{s}" for s in READ], READ, {}))
def test_agree(lab: Lab, s: str) -> None:
    """`status --json`, MCP `status` and MCP `log` give the same controller status."""
    r = lab.got["reads"]  # type: ignore[attr-defined]
    row = r["status"][f"plans/{s}"]
    st, lg = r["mcp"][s]
    mrow = ((st["data"] or {}).get("plans") or [{}])[0]
    assert mrow.get("status") == row["status"] == (lg["data"] or {}).get("status"), (row, st, lg)
    assert mrow.get("hash") == row.get("hash")


def test_log_forged_not_shown(lab: Lab) -> None:
    """log:forged: a plan submitted into a folder holding only a forged EXECUTION_LOG.md: MCP
    `log` never shows it as the record and names it in `problems`."""
    if lab.got["slugs"]["logonly"]["error"]:  # type: ignore[attr-defined]
        return  # r106slugs: refused (``logonly/x`` is a plan below it): nothing to show
    lg = lab.got["reads"]["mcp"]["logonly"][1]["data"]  # type: ignore[attr-defined]
    assert "FORGED-LOG" not in json.dumps(lg)
    assert any("E_OWNED_BLOCK_CHANGED" in p for p in lg["problems"])


def test_log_old_run_not_shown(lab: Lab) -> None:
    """log:old-run: a plan submitted into a completed-then-deleted plan's folder: `log` shows no
    execution of the old run for the new pending plan."""
    lg = lab.got["reads"]["mcp"]["gone"][1]["data"]  # type: ignore[attr-defined]
    assert lg["status"] == "pending_approval" and not lg["execution_log"] and not lg["execution"]
    assert not lg["outputs"]
