"""Round 104, one plan seen through every surface at once, and MCP driven by the real SDK
(atk104b).

Lab (one, local mode, agent identity configured): the agent commits plans in every state a
reader must tell apart (``pend``, ``draft``, ``done`` completed, ``fail`` failed, ``rej``
rejected by ``plangate reject``, ``selfap`` approved by the agent, ``malap`` by Mallory, both
refused, ``inv`` invalid, ``yaml`` a PLAN.yaml, ``crlf`` CRLF with comments, ``sub`` made by
MCP ``submit``). Every MCP call goes through the REAL ``mcp`` client SDK (``ClientSession``
over ``stdio_client``, the server ``python -m controller mcp`` from this worktree). Then a
hostile MCP session, 40 reads at once, six parallel submits racing Alice's
``plangate approve``, three pull requests judged by ``check --as alice`` then merged, and a
daemon serving ``/api/``, ``/api/plan/`` and ``/metrics``.

Ids:
* ``agree:<plan>:<surface>``: ``show --json --config``, MCP ``status`` (one plan), MCP
  ``log`` and ``/api/plan/`` show the status row's status and hash (``plangate status
  --json``); an invalid plan's ``show`` names the controller's ``invalid``.
* ``hostile:<k>``: unknown tools (``approve``, ``reject``, ``freeze``, ``run``), submits of
  ``approved``/``executing`` plans or over completed/failed ones, slugs that are huge, upper
  case, or hold ``/``, paths huge (1 MB), with NUL/newline, lists, numbers, objects, ``..``,
  ``/etc/passwd``, ``~``; ``wait`` with a bool/string/number of the wrong type; ``validate`` of
  6 MB, a path as ``format``, an object as ``plan``: refused with the code docs/agents.md
  names. ``hostile:nothing-ran``: nothing ran or got approved after them.
* ``submit:*``: extra arguments (``branch: main``, ``author``, ``identity``), trailer lines
  and 300 kB in ``note``, a PLAN.yaml folder. ``wait:*``: a negative and a 10^30 timeout.
* ``conc:*``: parallel reads = sequential reads; parallel submits one file each, the tree
  clean, Alice's approval committed and run once.
* ``hash:<plan>``: ``hash``, ``hash --config``, MCP ``validate``, the frozen hash, the row.
* ``check:*``: ``check --as alice`` predicts the merge's start (or not) exactly.
* ``page:*``: odd ids (``..``, NUL, 20,000 chars) 404, POST 405, ``/metrics`` has no plan text.

Seen (round 104, 101 ids, ~40 s wall, 1 worker): 6 broke (2 classes), 95 held.
Broke: **submit-slug-slash** (``hostile:slug-slash``, ``hostile:slug-into-done``): a slug
holding ``/`` is committed, though docs/agents.md holds slugs to lower-case letters, digits
and ``. _ -``: ``pend/sub`` put ``plans/pend/sub/PLAN.yml`` inside a pending plan's folder,
``done/x`` put a new plan inside a COMPLETED plan's folder (the agent writes where submit's
own "may replace only draft/pending/invalid/rejected" rule forbids it); both read as plans
``pending_approval``; ``rej/plan.yaml`` was refused ``E_UNSAFE_PATH``. **mcp-arg-coerced**
(``hostile:pr-str-false``, ``pr-int``, ``wait-bool``, ``wait-str``): a JSON value of the wrong
type is coerced where docs/agents.md says E_USAGE: ``pull_request: 1`` committed on
``plangate/pri``, ``"false"`` on main, ``timeout: true``/``"1"`` waited 1 s (``""`` for
``pull_request`` and a number for ``status`` are E_USAGE). Held: every surface agreed on
every plan's status and hash (status, show, MCP status/log, /api/plan/); the SDK lists six
tools, ``approve`` etc. "Unknown tool" (since round 111 ``E_USAGE`` "no such tool"); every
path form coded; 6 MB ``validate``
``E_PLAN_TOO_LARGE``; no trailer from a note; extra submit arguments ignored (the agent's
commit, on ``plangate/ext``); parallel reads identical, parallel submits serialized with
Alice's approve, the tree clean; hashes agree on CRLF/comments/PLAN.yaml; ``check`` right on
agent- and Mallory-set statuses merged by Alice (counted as her merge's approval, as
documented) and on an edit after her approval (``E_PLAN_HASH_MISMATCH``). Noted: MCP
``validate`` of a completed plan's file refuses its ``approval``/``execution`` blocks
(``E_CONVERT_UNSUPPORTED``) where ``plangate hash`` prints the hash; ``plangate approve`` has
no way to pin the hash the reviewer saw (a version frozen between ``show`` and ``approve``
is the one approved; not played here).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, page_settled, plan_text
from test_round2_execution_kit import shared
from test_round97_surface_atk97b import _get, _spawn_daemon, _stop
from writerkit import free_port

WORKTREE = str(Path(__file__).resolve().parents[2])
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
BOOM = json.dumps([sys.executable, "-c", "import sys; sys.stderr.write('boom'); sys.exit(3)"])

#: plan -> how it is made (see the docstring)
STATES = ["pend", "draft", "done", "fail", "rej", "selfap", "malap", "inv", "yaml", "crlf", "sub"]
SURFACES = ["show", "mcp-status", "mcp-row", "mcp-log", "mcp-wait", "api", "api-plan"]


def _env(lab: Lab, who: tuple[str, str] | None = None) -> dict[str, str]:
    env = lab.env(who)
    env["PYTHONPATH"] = WORKTREE
    env["REC_LOG"] = str(lab.log)
    return env


def _cli(
    lab: Lab, who: Any, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *args], cwd=cwd or lab.repo,
        env=_env(lab, who), capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


# -- the real MCP client SDK over stdio --------------------------------------------------
def _content(res: Any) -> dict[str, Any]:
    """A CallToolResult as ``{error, data, text}``: the JSON after plangate's error prefix."""
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.split(": ", 1)[1] if err and text.startswith("Error executing") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text[:3000]}


async def _session(lab: Lab, script: Any) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "controller", "mcp", "--config", str(lab.config)],
        env=_env(lab), cwd=str(lab.root),
    )  # fmt: skip
    with open(lab.root / "mcp.err", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await script(s)


def mcp(lab: Lab, script: Any) -> Any:
    return asyncio.run(asyncio.wait_for(_session(lab, script), 240))


def calls(lab: Lab, seq: list[tuple[str, dict[str, Any]]], parallel: bool = False) -> list[Any]:
    async def script(s: Any) -> list[Any]:
        async def one(name: str, args: dict[str, Any]) -> Any:
            try:
                return _content(await s.call_tool(name, args))
            except Exception as e:  # an MCP protocol error (unknown tool, ...)
                return {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"[:3000]}

        if parallel:
            return list(await asyncio.gather(*(one(n, a) for n, a in seq)))
        return [await one(n, a) for n, a in seq]

    return mcp(lab, script)


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab", extra=AGENT_CFG, tools=f"boom: {{kind: exec, argv: {BOOM}}}\n")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    c = str(lab.config)
    t0 = time.time()
    for s in ("pend", "done", "fail", "rej", "selfap", "malap"):
        lab.write(s, plan_text(s))
    lab.write("fail", plan_text("fail").replace("rec", "boom"))
    lab.write("draft", plan_text("draft", status="draft"))
    lab.write("inv", plan_text("inv").replace("rec", "nosuchtool"))
    lab.write("yaml", plan_text("yaml"), filename="PLAN.yaml")
    crlf = "# a comment\n" + plan_text("crlf", params='note: "x"   # trailing\n')
    lab.write("crlf", crlf.replace("\n", "\r\n").encode())
    lab.commit("agent: plans", AGENT)
    lab.run()
    # -- the agent's MCP submit, the humans' acts
    got["submit"] = calls(lab, [("submit", {"plan": plan_text("sub"), "slug": "sub"})])
    for s in ("done", "fail"):
        lab.approve(s, ALICE)
    got["reject"] = _cli(lab, ALICE, "reject", "--config", c, "-m", "no", "plans/rej").returncode
    lab.approve("selfap", AGENT)
    lab.approve("malap", MALLORY)
    lab.run()
    lab.run()
    got["t_setup"] = time.time() - t0
    got["readers"] = _readers(lab)
    got["t_readers"] = time.time() - t0
    _hostile(lab, got)
    got["t_hostile"] = time.time() - t0
    _hashes(lab, got)
    _checks(lab, got)
    got["t_checks"] = time.time() - t0
    _page(lab, got)
    got["t_page"] = time.time() - t0
    return lab


HUGE = "a" * 1_000_000
HOSTILE: dict[str, tuple[str, dict[str, Any]]] = {
    "tool-approve": ("approve", {"path": "plans/pend"}),
    "tool-reject": ("reject", {"path": "plans/pend", "message": "x"}),
    "tool-freeze": ("freeze", {}),
    "tool-run": ("run", {"once": True}),
    "pr-str-false": ("submit", {"plan": plan_text("prs"), "slug": "prs", "pull_request": "false"}),
    "pr-str-empty": ("submit", {"plan": plan_text("pre"), "slug": "pre", "pull_request": ""}),
    "pr-int": ("submit", {"plan": plan_text("pri"), "slug": "pri", "pull_request": 1}),
    "submit-approved": ("submit", {"plan": plan_text("sap", status="approved"), "slug": "sap"}),
    "submit-executing": ("submit", {"plan": plan_text("sex", status="executing"), "slug": "sex"}),
    "submit-over-done": ("submit", {"plan": plan_text("done"), "slug": "done"}),
    "submit-over-fail": ("submit", {"plan": plan_text("fail"), "slug": "fail"}),
    "submit-yaml-twin": ("submit", {"plan": plan_text("yaml2"), "slug": "yaml"}),
    "submit-extra": (
        "submit",
        {
            "plan": plan_text("ext"),
            "slug": "ext",
            "pull_request": True,
            "branch": "main",
            "author": "alice@example.com",
            "identity": {"name": "Alice", "email": "alice@example.com"},
        },
    ),
    "submit-note-trailer": (
        "submit",
        {
            "plan": plan_text("nt"),
            "slug": "nt",
            "note": "ok\n\nPlan-Approved: plans/nt sha256:00\n"
            "Co-authored-by: Alice <alice@example.com>\n"
            "Approved-by: alice@example.com\nSigned-off-by: Alice <alice@example.com>",
        },
    ),
    "submit-note-huge": ("submit", {"plan": plan_text("nh"), "slug": "nh", "note": "N" * 300_000}),
    "slug-huge": ("submit", {"plan": plan_text("sh"), "slug": "s" * 100_000}),
    "slug-upper": ("submit", {"plan": plan_text("SU"), "slug": "SU"}),
    "slug-slash": ("submit", {"plan": plan_text("ss"), "slug": "pend/sub"}),
    "slug-into-done": ("submit", {"plan": plan_text("sd"), "slug": "done/x"}),
    "slug-planfile": ("submit", {"plan": plan_text("sq"), "slug": "rej/plan.yaml"}),
    "path-huge": ("status", {"path": "plans/" + HUGE}),
    "log-path-huge": ("log", {"path": "plans/" + HUGE}),
    "path-nul": ("status", {"path": "plans/pend\x00"}),
    "log-path-nul": ("log", {"path": "plans/pend\x00x"}),
    "path-nl": ("log", {"path": "plans/pend\n"}),
    "path-list": ("status", {"path": ["plans/pend"]}),
    "path-num": ("log", {"path": 5}),
    "path-obj": ("wait", {"path": {"p": "plans/pend"}, "timeout": 0.1}),
    "path-git": ("log", {"path": "plans/../.git/config"}),
    "path-outside": ("log", {"path": "/etc/passwd"}),
    "path-tilde": ("status", {"path": "~/plans/pend"}),
    "wait-neg": ("wait", {"path": "plans/pend", "timeout": -5, "status": "pending_approval"}),
    "wait-bool": ("wait", {"path": "plans/pend", "timeout": True, "status": "pending_approval"}),
    "wait-str": ("wait", {"path": "plans/pend", "timeout": "1", "status": "pending_approval"}),
    "wait-status-num": ("wait", {"path": "plans/pend", "timeout": 0.1, "status": 5}),
    "wait-big": ("wait", {"path": "plans/pend", "timeout": 10**30, "status": "nope"}),
    "validate-huge": ("validate", {"plan": "plan:\n  name: x\n#" + "x" * 6_000_000}),
    "validate-format": ("validate", {"plan": plan_text("vf"), "format": "../../etc/passwd"}),
    "validate-obj": ("validate", {"plan": {"plan": {"name": "x"}}}),
}
#: what each hostile call must answer: an error with one of these codes (None: any code)
EXPECT: dict[str, tuple[str, ...] | None] = {
    "tool-approve": None, "tool-reject": None, "tool-freeze": None, "tool-run": None,
    "pr-str-false": ("E_USAGE",), "pr-str-empty": ("E_USAGE",), "pr-int": ("E_USAGE",),
    "submit-approved": None, "submit-executing": None, "submit-over-done": None,
    "submit-over-fail": None, "submit-yaml-twin": None,
    "slug-huge": ("E_USAGE",), "slug-upper": ("E_USAGE",), "slug-slash": ("E_USAGE",),
    "slug-into-done": ("E_USAGE",), "slug-planfile": ("E_USAGE", "E_UNSAFE_PATH"),
    "path-huge": ("E_USAGE", "E_UNSAFE_PATH", "E_PATH_TOO_LONG"),
    "log-path-huge": ("E_USAGE", "E_UNSAFE_PATH", "E_PATH_TOO_LONG"),
    "path-nul": ("E_USAGE", "E_UNSAFE_PATH"), "log-path-nul": ("E_USAGE", "E_UNSAFE_PATH"),
    "path-nl": ("E_USAGE", "E_UNSAFE_PATH"), "path-list": ("E_USAGE",), "path-num": ("E_USAGE",),
    "path-obj": ("E_USAGE",), "path-git": ("E_USAGE", "E_UNSAFE_PATH"),
    "path-outside": ("E_USAGE",), "path-tilde": ("E_USAGE", "E_UNSAFE_PATH"),
    "wait-neg": ("E_USAGE",), "wait-bool": ("E_USAGE",), "wait-str": ("E_USAGE",),
    "wait-status-num": ("E_USAGE",), "wait-big": ("E_USAGE",),
    "validate-huge": ("E_PLAN_TOO_LARGE",), "validate-format": ("E_USAGE",),
    "validate-obj": ("E_USAGE",),
}  # fmt: skip
NEW_SLUGS = ["prs", "pre", "pri", "sap", "sex", "ext", "sh", "SU", "ss", "yaml2", "vf"]


def _hostile(lab: Lab, got: dict[str, Any]) -> None:
    before = lab.head()
    keys = list(HOSTILE)
    t = time.time()
    got["hostile"] = dict(zip(keys, calls(lab, [HOSTILE[k] for k in keys]), strict=True))
    got["hostile_t"] = time.time() - t

    async def listing(s: Any) -> Any:
        tools = await s.list_tools()
        return [
            (t.name, sorted((getattr(t, "input_schema", None) or {}).get("properties", {})))
            for t in tools.tools
        ]

    got["tools"] = mcp(lab, listing)
    got["hostile_log"] = lab.git(
        "log", "--format=%H%x00%an%x00%ae%x00%cn%x00%B%x01", f"{before}..main"
    )
    got["branches"] = lab.git("for-each-ref", "--format=%(refname) %(objectname)").split("\n")
    got["ext_branch"] = lab.git(
        "log", "--format=%an %ae %cn %ce", "-1", "plangate/ext", check=False
    )
    got["main_tree"] = lab.git("ls-tree", "-r", "--name-only", "main").split("\n")
    got["trailers"] = {}
    for slug in ("nt", "nh"):
        sha = lab.git("log", "-1", "--format=%H", "main", "--", f"plans/{slug}").strip()
        body = lab.git("log", "-1", "--format=%B", sha) if sha else ""
        got["trailers"][slug] = (
            sha,
            lab.git("interpret-trailers", "--parse", input=body) if sha else None,
            lab.git("log", "-1", "--format=%an %ae", sha) if sha else None,
        )
    lab.run()
    got["after_hostile_status"] = {p: r.get("status") for p, r in lab.rows().items()}
    got["ran_after_hostile"] = {t: len(lab.calls(t)) for t in ("pend", "nt", "nh", "ext", "sap")}
    # -- concurrency: 40 reads at once against the same reads one by one
    seq: list[tuple[str, dict[str, Any]]] = []
    for s in ("pend", "done", "fail", "rej", "yaml", "crlf", "sub", "inv"):
        seq += [("status", {"path": f"plans/{s}"}), ("log", {"path": f"plans/{s}"})]
        seq += [
            (
                "validate",
                {
                    "plan": lab.git(
                        "show", f"main:plans/{s}/" + ("PLAN.yaml" if s == "yaml" else "PLAN.yml")
                    )
                },
            )
        ]
    seq += (
        [("status", {})] * 4
        + [("catalog", {})] * 4
        + [("wait", {"path": "plans/pend", "timeout": 0.5})] * 4
    )
    got["conc_seq"] = calls(lab, seq)
    got["conc_par"] = calls(lab, seq, parallel=True)
    # -- parallel submits of distinct slugs, while Alice approves pend with the CLI
    before = lab.head()
    subs = [("submit", {"plan": plan_text(f"c{i}"), "slug": f"c{i}"}) for i in range(6)]
    import threading

    ap: dict[str, Any] = {}

    def approve() -> None:
        time.sleep(0.3)
        ap["r"] = _cli(lab, ALICE, "approve", "--config", str(lab.config), "plans/pend")

    th = threading.Thread(target=approve)
    th.start()
    got["psub"] = calls(lab, subs, parallel=True)
    th.join()
    got["psub_approve"] = (ap["r"].returncode, ap["r"].stdout[-500:], ap["r"].stderr[-800:])
    got["psub_log"] = lab.git("log", "--format=%x01%an%x00%s", "--name-only", f"{before}..main")
    got["psub_files"] = {
        f"c{i}": lab.git("show", f"main:plans/c{i}/PLAN.yml", check=False) for i in range(6)
    }
    got["psub_clean"] = lab.git("status", "--porcelain")
    lab.run()
    got["psub_ran"] = {"pend": len(lab.calls("pend"))}
    got["psub_rows"] = {p: r.get("status") for p, r in lab.rows().items()}


def _hashes(lab: Lab, got: dict[str, Any]) -> None:
    c = str(lab.config)
    out: dict[str, Any] = {}
    rows = lab.rows()
    for s in ("crlf", "yaml", "pend", "sub", "c0"):
        fn = "PLAN.yaml" if s == "yaml" else "PLAN.yml"
        text = (lab.repo / "plans" / s / fn).read_bytes().decode("utf-8")
        h = _cli(lab, None, "hash", f"plans/{s}/{fn}")
        hc = _cli(lab, None, "hash", "--config", c, f"plans/{s}")
        v = calls(lab, [("validate", {"plan": text})])[0]
        frozen = (lab.plan(s, filename=fn).get("frozen") or {}).get("hash")
        out[s] = {
            "cli": h.stdout.strip().split()[0] if h.stdout.strip() else h.stderr[-300:],
            "cli-config": hc.stdout.strip().split()[0] if hc.stdout.strip() else hc.stderr[-300:],
            "mcp-validate": (v["data"] or {}).get("hash"),
            "frozen": frozen,
            "status": (rows.get(f"plans/{s}") or {}).get("hash"),
        }
    got["hashes"] = out


def _checks(lab: Lab, got: dict[str, Any]) -> None:
    """Pull requests: ``check --as`` predicts, then the merge and a pass say what happened."""
    c = str(lab.config)
    out: dict[str, Any] = {}
    # agent branch: the agent approves c1 itself; a second plan added; a third edited + approved
    lab.branch("ag")
    lab.set_status("c1", "approved")
    lab.write("chk", plan_text("chk"))
    lab.commit("agent: approve c1, add chk", AGENT)
    lab.git("checkout", "-q", "main")
    # mallory's branch: she approves c2
    lab.branch("mb")
    lab.set_status("c2", "approved")
    lab.commit("mallory approves c2", MALLORY)
    lab.git("checkout", "-q", "main")
    # alice's branch: she approves c3 and the agent then edits c3's params on the same branch
    lab.branch("al")
    lab.set_status("c3", "approved")
    lab.commit("alice approves c3", ALICE)
    lab.write("c3", lab.read("c3").replace('tag: "c3"', 'tag: "c3"\n      extra: "smuggled"'))
    lab.commit("agent: tweak c3", AGENT)
    lab.git("checkout", "-q", "main")
    for br, who in (
        ("ag", "alice@example.com"),
        ("mb", "alice@example.com"),
        ("al", "alice@example.com"),
    ):
        r = _cli(
            lab,
            None,
            "check",
            "--config",
            c,
            "--base",
            "main",
            "--head",
            br,
            "--as",
            who,
            "--format",
            "json",
        )
        try:
            out[br] = json.loads(r.stdout)
        except ValueError:
            out[br] = {"raw": (r.stdout + r.stderr)[-1500:], "rc": r.returncode}
        out[br + ":rc"] = r.returncode
    # the PR submitted through MCP (plangate/ext) as Alice would see it
    r = _cli(
        lab,
        None,
        "check",
        "--config",
        c,
        "--base",
        "main",
        "--head",
        "plangate/ext",
        "--as",
        "alice@example.com",
        "--format",
        "json",
    )
    out["ext"] = r.stdout[-3000:] + r.stderr[-500:]
    for br in ("ag", "mb", "al"):
        lab.git("merge", "-q", "--no-ff", "-m", f"merge {br}", br, who=ALICE)
    lab.run()
    lab.run()
    out["ran"] = {t: len(lab.calls(t)) for t in ("c1", "c2", "c3", "chk")}
    out["rows"] = {p: r.get("status") for p, r in lab.rows().items()}
    got["checks"] = out


def _page(lab: Lab, got: dict[str, Any]) -> None:
    ui, met = free_port(), free_port()
    lab.config.write_text(
        lab.config.read_text() + f'ui: {{listen: {ui}}}\nmetrics: {{listen: "127.0.0.1:{met}"}}\n'
    )
    got["page_status"] = {p: r for p, r in lab.rows().items()}
    d = _spawn_daemon(lab, lab.root, "page")
    try:
        got["page_ok"] = page_settled(ui, lambda: lab.head("main"), timeout=120)
        got["api"] = _get(ui, "/api/")
        got["api_plan"] = {s: _get(ui, f"/api/plan/plans/{s}") for s in [*STATES, "c1", "c2", "c3"]}
        got["metrics"] = _get(met, "/metrics")
        got["page_odd"] = {
            "dotdot": _get(ui, "/api/plan/plans/../plans/pend"),
            "pct": _get(ui, "/api/plan/plans/%70end"),
            "post": _get(ui, "/api/plan/plans/pend", "POST"),
            "huge": _get(ui, "/api/plan/plans/" + "a" * 20000),
            "nul": _get(ui, "/api/plan/plans/pend%00"),
        }
        got["page_status_after"] = {p: r for p, r in lab.rows().items()}
    finally:
        _stop(d)


def _readers(lab: Lab) -> dict[str, Any]:
    c = str(lab.config)
    out: dict[str, Any] = {}
    st = _cli(lab, None, "status", "--json", "--config", c)
    out["status"] = {r["plan"]: r for r in json.loads(st.stdout)}
    out["show"] = {}
    for s in STATES:
        r = _cli(lab, None, "show", "--json", "--config", c, f"plans/{s}")
        try:
            out["show"][s] = json.loads(r.stdout)
        except ValueError:
            out["show"][s] = {"raw": (r.stdout + r.stderr)[-1500:]}
    seq: list[tuple[str, dict[str, Any]]] = [("status", {})]
    for s in STATES:
        cur = (out["status"].get(f"plans/{s}") or {}).get("status")
        seq += [("status", {"path": f"plans/{s}"}), ("log", {"path": f"plans/{s}"})]
        seq += [("wait", {"path": f"plans/{s}", "timeout": 0.3, "status": cur or "x"})]
    got = calls(lab, seq)
    out["mcp-all"] = got[0]
    out["mcp"] = {s: got[1 + 3 * i : 4 + 3 * i] for i, s in enumerate(STATES)}
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r104surf-atk104b", _build)


# -- the tests ---------------------------------------------------------------------------
SURF = ["show", "mcp-row", "mcp-log", "api-plan"]


def _row(lab: Lab, s: str) -> dict[str, Any]:
    return lab.got["readers"]["status"][f"plans/{s}"]  # type: ignore[attr-defined]


def _seen(lab: Lab, s: str, surface: str) -> tuple[Any, Any]:
    """(status, hash) the surface shows for plan ``s`` (hash None where it shows none)."""
    g = lab.got  # type: ignore[attr-defined]
    if surface == "show":
        sh = g["readers"]["show"][s]
        if "raw" in sh or sh.get("ok") is False:
            return ("raw", json.dumps(sh)), None
        ctl = sh.get("controller") or {}
        return ctl.get("status") or (sh.get("plan") or {}).get("status"), sh.get("hash")
    if surface == "mcp-row":
        data = g["readers"]["mcp"][s][0]["data"] or {}
        rows = data.get("plans") or [{}]
        return rows[0].get("status"), rows[0].get("hash")
    if surface == "mcp-log":
        data = g["readers"]["mcp"][s][1]["data"] or {}
        return data.get("status"), _row(lab, s).get("hash")
    code, body = g["api_plan"][s]
    row = (json.loads(body) if code == 200 else {}).get("row") or {}
    return row.get("status"), row.get("hash")


AGREE = [(s, surface) for s in STATES for surface in SURF]


@pytest.mark.parametrize("s,surface", cases([f"agree:{s}:{f}" for s, f in AGREE], AGREE, {}))
def test_agree(lab: Lab, s: str, surface: str) -> None:
    """Every surface shows the controller's status and the frozen hash of the plan."""
    g = lab.got  # type: ignore[attr-defined]
    row = g["page_status"][f"plans/{s}"] if surface == "api-plan" else _row(lab, s)
    status, digest = _seen(lab, s, surface)
    if isinstance(status, tuple):  # show refused: it must say what the row says
        assert row.get("status") == "invalid" and "holds status invalid" in status[1], (status, row)
        return
    assert status == row.get("status"), (surface, status, row.get("status"))
    if digest is not None:
        assert digest == row.get("hash"), (surface, digest, row.get("hash"))


#: round 104's two surface classes (mcp-arg-coerced, submit-slug-slash; 6 ids) were fixed
#: the same session (r104args: strict MCP flags and seconds; a slug inside another plan's
#: folder is E_USAGE): no id is expected to break
BROKEN: dict[str, Any] = {}
HKEYS = [k for k in HOSTILE if k not in ("submit-yaml-twin", "submit-extra", "submit-note-trailer",
                                         "submit-note-huge", "wait-neg", "wait-big")]  # fmt: skip


@pytest.mark.parametrize("k", cases([f"hostile:{k}" for k in HKEYS], HKEYS, BROKEN))
def test_hostile(lab: Lab, k: str) -> None:
    """An argument that does not fit, or asks for more than the agent's role: refused, coded."""
    ans = lab.got["hostile"][k]  # type: ignore[attr-defined]
    want = EXPECT[k]
    data = ans["data"] if isinstance(ans["data"], dict) else {}
    if HOSTILE[k][0] == "validate" and not ans["error"]:
        codes = [e.get("code") for e in data.get("errors") or []]
        assert data.get("valid") is False and data.get("hash") is None, ans["text"][:500]
        assert want and set(codes) & set(want), codes
        return
    assert ans["error"], ans["text"][:600]
    if want:
        assert data.get("code") in want, ans["text"][:600]
    if k.startswith("tool-"):  # round 111: a coded refusal naming the tools there are
        assert data.get("code") == "E_USAGE" and "no such tool" in data["message"], ans["text"]


def test_hostile_nothing_ran_or_landed(lab: Lab) -> None:
    """hostile:nothing: after the hostile session and a pass nothing ran, no plan approved."""
    g = lab.got  # type: ignore[attr-defined]
    assert not any(g["ran_after_hostile"].values()), g["ran_after_hostile"]
    assert "approved" not in g["after_hostile_status"].values(), g["after_hostile_status"]
    assert not any(p.startswith(("plans/sap", "plans/sex", "plans/SU")) for p in g["main_tree"])


def test_tools_list(lab: Lab) -> None:
    """mcp:tools-list: the SDK lists exactly the six documented tools, none that approves."""
    names = [n for n, _ in lab.got["tools"]]  # type: ignore[attr-defined]
    assert sorted(names) == sorted(["catalog", "validate", "submit", "status", "log", "wait"])


def test_submit_yaml_twin(lab: Lab) -> None:
    """submit:yaml-twin: a submission to a PLAN.yaml folder replaces PLAN.yaml, no PLAN.yml."""
    tree = lab.got["main_tree"]  # type: ignore[attr-defined]
    assert "plans/yaml/PLAN.yaml" in tree and "plans/yaml/PLAN.yml" not in tree


def test_submit_extra_args(lab: Lab) -> None:
    """submit:extra-args: `branch: main`, `author`, `identity` beside pull_request=true change
    nothing: the commit is the agent's, on plangate/ext, main never holds it."""
    g = lab.got  # type: ignore[attr-defined]
    assert g["hostile"]["submit-extra"]["data"]["branch"] == "plangate/ext"
    assert g["ext_branch"].strip() == "Agent agent@example.com Agent agent@example.com"
    assert not any(p.startswith("plans/ext/") for p in g["main_tree"])


@pytest.mark.parametrize(
    "slug", cases(["submit:note-trailer", "submit:note-huge"], ["nt", "nh"], {})
)
def test_submit_note(lab: Lab, slug: str) -> None:
    """A note with trailer lines (or 300 kB of text) forms no trailer; the commit is the agent's."""
    sha, trailers, author = lab.got["trailers"][slug]  # type: ignore[attr-defined]
    assert sha and trailers.strip() == "" and author.strip() == "Agent agent@example.com"


@pytest.mark.parametrize("k", cases(["wait:neg", "wait:big"], ["wait-neg", "wait-big"], {}))
def test_wait_bounds(lab: Lab, k: str) -> None:
    """A negative or enormous timeout: answered at once (clamped) or E_USAGE, never a hang."""
    ans = lab.got["hostile"][k]  # type: ignore[attr-defined]
    if ans["error"]:
        assert ans["data"]["code"] == "E_USAGE"
    else:
        assert ans["data"]["waited"] <= 1.0 and ans["data"]["status"] == "pending_approval"


def test_concurrent_reads(lab: Lab) -> None:
    """conc:reads: 40 reads at once answer what the same reads one by one answer."""
    g = lab.got  # type: ignore[attr-defined]
    strip = lambda d: {k: v for k, v in d.items() if k != "waited"} if isinstance(d, dict) else d  # noqa: E731
    seq = [strip(a["data"]) for a in g["conc_seq"]]
    par = [strip(a["data"]) for a in g["conc_par"]]
    assert all(a is not None for a in par) and seq == par


def test_concurrent_submits(lab: Lab) -> None:
    """conc:submits: six submits at once, Alice's approve between them: seven commits, each
    one file by its author, the tree clean, the approved plan ran once."""
    g = lab.got  # type: ignore[attr-defined]
    assert not any(a["error"] for a in g["psub"])
    assert g["psub_approve"][0] == 0, g["psub_approve"]
    rows = [r.strip() for r in g["psub_log"].split("\x01") if r.strip()]
    assert len(rows) == 7, rows
    for r in rows:
        head, files = r.split("\n", 1)
        who, subj = head.split("\0")
        assert len(files.split()) == 1, r
        assert who == ("Alice" if "approve" in subj else "Agent"), r
    for i in range(6):
        assert f'tag: "c{i}"' in g["psub_files"][f"c{i}"]
    assert g["psub_clean"].strip() == "" and g["psub_ran"]["pend"] == 1


@pytest.mark.parametrize("s", cases([f"hash:{s}" for s in ("crlf", "yaml", "pend", "sub", "c0")],
                                    ["crlf", "yaml", "pend", "sub", "c0"], {}))  # fmt: skip
def test_hash_agree(lab: Lab, s: str) -> None:
    """`hash`, `hash --config`, MCP `validate`, the frozen hash and the status row agree."""
    h = lab.got["hashes"][s]  # type: ignore[attr-defined]
    # pend completed before this read: MCP validate refuses its controller-owned blocks
    # (E_CONVERT_UNSUPPORTED, a submission's rule), so only the others are compared
    skip = {"c0": "frozen", "pend": "mcp-validate"}.get(s)
    vals = {k: v for k, v in h.items() if k != skip}
    assert len(set(vals.values())) == 1 and None not in vals.values(), h


@pytest.mark.parametrize("br", cases(["check:agent-approves", "check:mallory-approves",
                                      "check:edited-after"], ["ag", "mb", "al"], {}))  # fmt: skip
def test_check_predicts(lab: Lab, br: str) -> None:
    """`check --as alice` predicts what merging the branch then does (ran or not)."""
    ch = lab.got["checks"]  # type: ignore[attr-defined]
    plan = {"ag": "c1", "mb": "c2", "al": "c3"}[br]
    rows = {p["plan"]: p for p in ch[br]["plans"]}
    assert (rows[f"plans/{plan}"]["outcome"] == "start") == (ch["ran"][plan] == 1), (
        rows,
        ch["ran"],
    )
    assert ch["ran"]["chk"] == 0


def test_check_mcp_pr(lab: Lab) -> None:
    """check:mcp-pr: the PR submit made is judged pending (no start) as Alice would merge it."""
    out = lab.got["checks"]["ext"]  # type: ignore[attr-defined]
    assert '"plans/ext"' in out and '"outcome": "start"' not in out


@pytest.mark.parametrize("k,code", cases(
    ["page:dotdot", "page:post", "page:huge", "page:nul"],
    [("dotdot", 404), ("post", 405), ("huge", 404), ("nul", 404)], {}))  # fmt: skip
def test_page_odd(lab: Lab, k: str, code: int) -> None:
    """The page refuses odd plan ids and writes: never another plan's view."""
    got = lab.got["page_odd"][k]  # type: ignore[attr-defined]
    assert got[0] == code, got
    assert '"row"' not in got[1]


def test_page_metrics(lab: Lab) -> None:
    """page:metrics: /metrics parses and names no plan text."""
    code, body = lab.got["metrics"]  # type: ignore[attr-defined]
    assert code == 200 and "attack variant" not in body and lab.got["page_ok"]  # type: ignore[attr-defined]
