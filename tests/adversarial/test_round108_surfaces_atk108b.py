"""Round 108, hostile names and values at every surface: CLI, MCP (real SDK and raw JSON-RPC)
and the page's HTTP API (atk108b).

Lab (one, local mode, agent identity configured): the agent commits ``pend`` (pending) and
``done`` (approved by Alice, completed). Then, in one pass: every CLI command that takes a
path is given a name component longer than the file system allows (300 characters), a
non-UTF-8 byte, a special file (``/dev/zero``, a FIFO); ``check`` gets option-shaped refs and a
newline in ``--as``. MCP through the REAL ``mcp`` client SDK (``ClientSession`` over
``stdio_client``, ``python -m controller mcp`` from this worktree): long paths and slugs, slugs
that climb or hide (``..``, ``.git``, a leading ``-``), notes that try to form trailers with
CR, U+2028, NEL, NUL, the tools that approve/reject/abort. Lone surrogates (which the SDK
cannot even send) through a raw JSON-RPC session. Last, a daemon with ``ui.listen`` serves
``/api/plan/<id>`` for long, percent-encoded, invalid-UTF-8 and bidi ids.

Ids:
* ``cli-long:<k>``: ``show``/``validate``/``hash``/``approve``/``reject``/``abort``/
  ``convert``/``freeze`` of ``plans/<300 x a>`` (and ``plans/pend/<300 x a>``,
  ``/tmp/<300 x a>.yml``), and ``status``/``schema``/``audit`` with ``--config <300 x a>.yml``:
  non-zero, an ``E_`` code, never "internal error", nothing committed.
* ``cli-odd:<k>``: non-UTF-8 names, ``/dev/zero``, a FIFO, ``check --base/--head
  --output=FILE``, ``check --as 'x\\ny'``: coded, nothing written, no hang.
* ``mcp:<k>``: coded MCP tool errors (E_USAGE / E_UNSAFE_PATH / unknown tool), nothing
  committed; ``mcp-note:<k>``: a submitted note never forms a trailer (git interpret-trailers
  reads none) and keeps the message one line; ``mcp-raw:<k>``: lone surrogates answered,
  the session goes on, nothing committed.
* ``http:<k>``: hostile plan ids on ``/api/plan/``: 404/400 with a code, never 500.
* ``agree:<plan>``: ``status --json``, ``show --json``, MCP ``status`` and ``/api/`` agree on
  status and hash for the plans submitted with hostile notes.

Seen (round 108, 72 ids, ~15 s wall): 13 broke (1 class), 59 held. Fixed the same session: an
operating system's refusal of a file a command names is a coded error (``cli._os_refusal``:
E_USAGE for a path as named, E_STORAGE for permissions or the disk).
Broke: **name-too-long-uncoded** (every ``cli-long:*``): a path whose one component is longer
than NAME_MAX (255 bytes), e.g. ``plangate show plans/$(printf 'a%.0s' {1..300}) --config C``
(also ``validate``, ``hash``, ``approve``, ``reject -m x``, ``abort``, ``convert``, ``freeze``,
``show plans/pend/<long>``, ``validate /tmp/<long>.yml``, and ``status``/``schema --config
/tmp/<long>.yml``) exits 2 with "plangate: internal error: OSError: [Errno 36] File name too
long: ..." and "rerun with PLANGATE_DEBUG=1 for the traceback and report it"; ``audit --json
--config /tmp/<long>.yml`` answers ``{"code": "E_INTERNAL", "message": "internal error:
OSError: [Errno 36] ..."}``: no code that names the input, no remedy (SPEC section 8,
docs/errors.md: every error names its code and remedy). The other surfaces code the same
name: MCP ``status``/``log``/``wait`` E_UNSAFE_PATH, ``submit`` E_USAGE, ``/api/plan/``
E_NOT_FOUND 404.
Held: non-UTF-8 names are E_UNSAFE_PATH; special files E_USAGE "not a regular file" (no hang
on ``/dev/zero`` or a FIFO); ``check --base=--output=F`` is E_USAGE "no such commit", F never
written; every MCP hostile slug/path coded, nothing committed; notes with CR, U+2028, NEL and
NUL are escaped into the one paragraph (no trailer); lone surrogates get a JSON-RPC parse
error and the session answers the next call; ``/api/plan/`` of hostile ids is a coded 404;
the surfaces agree on the submitted plans.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, page_settled, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

WORKTREE = str(Path(__file__).resolve().parents[2])
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
LONG = "a" * 300


def _env(lab: Lab, who: tuple[str, str] | None = None) -> dict[str, str]:
    env = lab.env(who)
    env["PYTHONPATH"] = WORKTREE
    env["REC_LOG"] = str(lab.log)
    return env


def _cli(lab: Lab, who: Any, *args: str, timeout: float = 60) -> dict[str, Any]:
    before = lab.head()
    try:
        r = subprocess.run(
            [sys.executable, "-m", "controller", *args], cwd=lab.repo,
            env=_env(lab, who), capture_output=True, text=True, timeout=timeout, check=False,
            errors="surrogateescape",
        )  # fmt: skip
        out = {"rc": r.returncode, "out": (r.stdout + r.stderr)[-1500:]}
    except subprocess.TimeoutExpired:
        out = {"rc": None, "out": "TIMEOUT"}
    out["moved"] = lab.head() != before
    out["dirty"] = lab.git("status", "--porcelain")
    return out


# -- the real MCP client SDK over stdio --------------------------------------------------
def _content(res: Any) -> dict[str, Any]:
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.split(": ", 1)[1] if err and text.startswith("Error executing") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text[:3000]}


async def _session(lab: Lab, seq: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "controller", "mcp", "--config", str(lab.config)],
        env=_env(lab), cwd=str(lab.root),
    )  # fmt: skip
    out: list[Any] = []
    with open(lab.root / "mcp.err", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            for name, args in seq:
                try:
                    out.append(_content(await s.call_tool(name, args)))
                except Exception as e:  # an MCP protocol error (unknown tool, ...)
                    out.append({"error": True, "data": None, "text": f"{type(e).__name__}: {e}"})
    return out


def calls(lab: Lab, seq: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return asyncio.run(asyncio.wait_for(_session(lab, seq), 240))


def _raw(lab: Lab, seq: list[tuple[str, dict[str, Any]]]) -> dict[Any, Any]:
    """A raw JSON-RPC session (json.dumps escapes a lone surrogate as ``\\ud800``)."""
    d = subprocess.run(
        [sys.executable, "-m", "controller", "mcp", "--config", str(lab.config)],
        input=mcpkit._requests(seq), capture_output=True, text=True, env=_env(lab),
        cwd=lab.root, timeout=120, check=False,
    )  # fmt: skip
    replies: dict[Any, Any] = {"stderr": d.stderr[-1500:], "null": []}
    for line in d.stdout.split("\n"):
        if line.strip():
            m = json.loads(line)
            if m.get("id") is None:
                replies["null"].append(m)
            else:
                replies[m["id"]] = m
    return replies


# -- what is tried -----------------------------------------------------------------------
CLI_LONG: dict[str, list[str]] = {
    "show": ["show", f"plans/{LONG}"],
    "validate": ["validate", f"plans/{LONG}"],
    "hash": ["hash", f"plans/{LONG}"],
    "approve": ["approve", f"plans/{LONG}"],
    "reject": ["reject", "-m", "no", f"plans/{LONG}"],
    "abort": ["abort", f"plans/{LONG}"],
    "convert": ["convert", f"plans/{LONG}"],
    "freeze": ["freeze", f"plans/{LONG}"],
    "show-inner": ["show", f"plans/pend/{LONG}"],
    "validate-abs": ["validate", f"/tmp/{LONG}.yml"],
    "status-config": ["status", "--json"],
    "schema-config": ["schema"],
    "audit-config": ["audit", "--json"],
}
NOCFG = {"status-config", "schema-config", "audit-config"}
#: round 108: a name component past NAME_MAX was "internal error: OSError: [Errno 36]";
#: fixed the same session (``cli._os_refusal``: an OS refusal of a named file is coded)
LONG_BROKE: set[str] = set()
XF_LONG = pytest.mark.xfail(strict=True, raises=AssertionError, reason="unused")

CLI_ODD = ["bytes-validate", "bytes-hash", "bytes-show", "bytes-approve", "zero-hash",
           "zero-validate", "zero-show", "fifo-validate", "fifo-hash", "check-base-opt",
           "check-head-opt", "check-as-nl"]  # fmt: skip

PT = plan_text("zz")
MCP_BAD: dict[str, tuple[str, dict[str, Any], str]] = {
    "status-long": ("status", {"path": f"plans/{LONG}"}, "E_"),
    "log-long": ("log", {"path": f"plans/{LONG}"}, "E_"),
    "wait-long": ("wait", {"path": f"plans/{LONG}", "timeout": 0.1}, "E_"),
    "log-inner-long": ("log", {"path": f"plans/pend/{LONG}"}, "E_"),
    "submit-long": ("submit", {"plan": PT, "slug": LONG}, "E_USAGE"),
    "submit-long-group": ("submit", {"plan": PT, "slug": "g/" + "b" * 250}, "E_USAGE"),
    "submit-dotdot": ("submit", {"plan": PT, "slug": "../evil"}, "E_USAGE"),
    "submit-dotgit": ("submit", {"plan": PT, "slug": ".git"}, "E_USAGE"),
    "submit-in-dotgit": ("submit", {"plan": PT, "slug": "x/.git/hooks"}, "E_"),
    "submit-dash": ("submit", {"plan": PT, "slug": "-rf"}, "E_"),
    "submit-bidi": ("submit", {"plan": PT, "slug": "a\u202eb"}, "E_USAGE"),
    "submit-nl": ("submit", {"plan": PT, "slug": "a\nb"}, "E_USAGE"),
    "submit-nul-plan": ("submit", {"plan": PT.replace("zz", "z\x00z"), "slug": "n5"}, "E_"),
    "submit-done": ("submit", {"plan": PT, "slug": "done"}, "E_"),
    "log-abs-config": ("log", {"path": "/etc/passwd"}, "E_USAGE"),
    "status-config": ("status", {"path": "../plangate.yml"}, "E_USAGE"),
    "validate-format-long": ("validate", {"plan": PT, "format": LONG}, "E_"),
    "approve": ("approve", {"path": "plans/pend"}, ""),
    "reject": ("reject", {"path": "plans/pend"}, ""),
    "abort": ("abort", {"path": "plans/pend"}, ""),
}
NOTES: dict[str, str] = {
    "cr": "a\rApproved-by: alice@example.com",
    "u2028": "a\u2028Co-authored-by: Alice <alice@example.com>",
    "nel": "a\x85Plan-Approved: plans/pend sha256:00",
    "nul": "a\x00\nPlan-Approved: plans/pend sha256:00",
    "crlf2": "a\r\n\r\nCo-authored-by: Alice <alice@example.com>",
    "huge-bidi": "\u202e" + "x" * 100_000,
}
RAW: dict[str, tuple[str, dict[str, Any]]] = {
    "note-surrogate": ("submit", {"plan": PT, "slug": "s1", "note": "x\ud800y"}),
    "plan-surrogate": ("submit", {"plan": PT + "# \ud800\n", "slug": "s2"}),
    "validate-surrogate": ("validate", {"plan": PT + "# \udcff\n"}),
    "path-surrogate": ("status", {"path": "plans/\ud800"}),
    "slug-surrogate": ("submit", {"plan": PT, "slug": "\udcff"}),
}
HTTP: dict[str, str] = {
    "long": f"/api/plan/plans/{LONG}",
    "very-long": "/api/plan/plans/" + "a" * 20_000,
    "long-inner": f"/api/plan/plans/pend/{LONG}",
    "enc-ff": "/api/plan/plans/%FF",
    "enc-surrogate": "/api/plan/plans/%ED%A0%80",
    "enc-nul": "/api/plan/plans/pe%00nd",
    "enc-nl": "/api/plan/plans/pend%0A",
    "bidi": "/api/plan/plans/%E2%80%AEdne",
    "commit-long": "/api/commit/" + "f" * 300,
}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab", extra=AGENT_CFG)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    t0 = time.time()
    lab.write("pend", plan_text("pend"))
    lab.write("done", plan_text("done"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.approve("done", ALICE)
    lab.run()
    c = ["--config", str(lab.config)]
    longcfg = ["--config", f"/tmp/{LONG}.yml"]
    got["long"] = {
        k: _cli(lab, ALICE, *a, *(longcfg if k in NOCFG else c)) for k, a in CLI_LONG.items()
    }
    odd = root / "odd"
    odd.mkdir()
    bad = odd / "\udcff\udcfe"
    os.makedirs(os.fsencode(bad), exist_ok=True)
    Path(os.fsdecode(os.fsencode(bad / "PLAN.yml"))).write_text(plan_text("bytes"))
    fifo = odd / "fifo"
    os.mkfifo(fifo)
    pwn = odd / "pwn"
    odds: dict[str, list[str]] = {
        "bytes-validate": ["validate", str(bad / "PLAN.yml")],
        "bytes-hash": ["hash", str(bad / "PLAN.yml")],
        "bytes-show": ["show", "plans/\udcff"],
        "bytes-approve": ["approve", "plans/\udcff"],
        "zero-hash": ["hash", "/dev/zero"],
        "zero-validate": ["validate", "/dev/zero"],
        "zero-show": ["show", "/dev/zero"],
        "fifo-validate": ["validate", str(fifo)],
        "fifo-hash": ["hash", str(fifo)],
        "check-base-opt": ["check", f"--base=--output={pwn}"],
        "check-head-opt": ["check", f"--head=--output={pwn}"],
        "check-as-nl": ["check", "--as", "x\ny"],
    }
    got["odd"] = {k: _cli(lab, ALICE, *a, *c, timeout=20) for k, a in odds.items()}
    got["pwn"] = pwn.exists()
    # MCP, real SDK
    before = lab.head()
    res = calls(lab, [(n, a) for n, a, _ in MCP_BAD.values()])
    got["mcp"] = dict(zip(MCP_BAD, res, strict=True))
    got["mcp-moved"] = lab.head() != before
    got["mcp-dirty"] = lab.git("status", "--porcelain")
    notes = [("submit", {"plan": plan_text(f"n{k}"), "slug": f"n-{k}", "note": v})
             for k, v in NOTES.items()]  # fmt: skip
    got["notes"] = dict(zip(NOTES, calls(lab, notes), strict=True))
    got["msg"] = {}
    for k in NOTES:
        r = got["notes"][k]
        sha = (r["data"] or {}).get("commit")
        if sha:
            body = lab.git("log", "-1", "--format=%B", sha)
            tr = subprocess.run(
                ["git", "interpret-trailers", "--parse"], input=body, capture_output=True,
                text=True, check=False,
            ).stdout  # fmt: skip
            got["msg"][k] = {"body": body[:600], "lines": body.rstrip("\n").count("\n"), "tr": tr}
    # raw JSON-RPC: lone surrogates, then a sane call
    before = lab.head()
    raw = [*RAW.values(), ("status", {"path": "plans/pend"})]
    got["raw"] = _raw(lab, raw)
    got["raw-moved"] = lab.head() != before
    lab.run()
    st = subprocess.run(
        [sys.executable, "-m", "controller", "status", "--json", *c], cwd=lab.repo,
        env=_env(lab), capture_output=True, text=True, check=True,
    )  # fmt: skip
    got["status"] = {r["plan"]: r for r in json.loads(st.stdout)}
    agree = [f"plans/n-{k}" for k in NOTES]
    got["show"] = {}
    for p in agree:
        r = subprocess.run(
            [sys.executable, "-m", "controller", "show", "--json", *c, p], cwd=lab.repo,
            env=_env(lab), capture_output=True, text=True, check=False,
        )  # fmt: skip
        got["show"][p] = json.loads(r.stdout) if r.returncode == 0 else {"raw": r.stderr}
    got["mstatus"] = dict(zip(agree, calls(lab, [("status", {"path": p}) for p in agree]),
                              strict=True))  # fmt: skip
    # the page
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    d = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)], cwd=root,
        env=_env(lab), stdout=subprocess.DEVNULL, stderr=(root / "daemon.err").open("wb"),
        start_new_session=True,
    )  # fmt: skip
    try:
        got["settled"] = page_settled(ui, lab.head, timeout=90)
        got["api"] = _get(ui, "/api/")
        got["http"] = {k: _get(ui, p) for k, p in HTTP.items()}
    finally:
        if d.poll() is None:
            os.killpg(d.pid, signal.SIGTERM)
            try:
                d.wait(timeout=180)
            except subprocess.TimeoutExpired:
                os.killpg(d.pid, signal.SIGKILL)
                d.wait(timeout=30)
    got["t"] = time.time() - t0
    return lab


def _get(port: int, path: str) -> tuple[int, str]:
    import http.client

    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.putrequest("GET", path, skip_accept_encoding=True)
        c.endheaders()
        r = c.getresponse()
        body = r.read().decode("utf-8", "replace")
        c.close()
        return r.status, body
    except (OSError, http.client.HTTPException) as e:
        return -1, repr(e)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r108surf-atk108b", _build)


def _coded(r: dict[str, Any]) -> None:
    assert r["rc"] not in (0, None), r
    assert "internal error" not in r["out"] and "Traceback" not in r["out"], r["out"][:400]
    assert "E_" in r["out"], r["out"][:400]
    assert not r["moved"] and not r["dirty"], r


LK = list(CLI_LONG)


@pytest.mark.parametrize(
    "k",
    [pytest.param(k, id=f"cli-long:{k}", marks=[XF_LONG] if k in LONG_BROKE else [])
     for k in LK],
)  # fmt: skip
def test_cli_long(lab: Lab, k: str) -> None:
    """A name component past NAME_MAX: a coded refusal, as MCP gives for the same path."""
    _coded(lab.got["long"][k])  # type: ignore[attr-defined]


@pytest.mark.parametrize("k", cases([f"cli-odd:{k}" for k in CLI_ODD], CLI_ODD, {}))
def test_cli_odd(lab: Lab, k: str) -> None:
    """Non-UTF-8 names, special files, option-shaped refs: coded, no hang, nothing written."""
    _coded(lab.got["odd"][k])  # type: ignore[attr-defined]
    assert not lab.got["pwn"]  # type: ignore[attr-defined]


MK = list(MCP_BAD)


@pytest.mark.parametrize("k", cases([f"mcp:{k}" for k in MK], MK, {}))
def test_mcp_refused(lab: Lab, k: str) -> None:
    """A hostile path/slug/plan or a tool that decides: an MCP error, coded where it is a
    plangate tool; nothing committed, the tree clean."""
    g = lab.got  # type: ignore[attr-defined]
    r = g["mcp"][k]
    if k.startswith("validate"):  # validate answers valid: false with its coded errors
        assert r["data"] and r["data"]["valid"] is False, r["text"][:400]
        assert all(e["code"].startswith("E_") for e in r["data"]["errors"]), r["data"]
        assert r["data"]["errors"] and r["data"]["errors"][0]["remedy"]
        return
    assert r["error"], r["text"][:400]
    assert "Traceback" not in r["text"] and "internal error" not in r["text"]
    want = MCP_BAD[k][2]
    if want:
        assert r["data"] and r["data"]["code"].startswith(want), r["text"][:400]
        assert r["data"]["remedy"], r["data"]
    else:  # no such tool: since round 111 a coded refusal naming the tools there are
        assert r["data"] and r["data"]["code"] == "E_USAGE", r["text"][:400]
        assert "no such tool" in r["data"]["message"] and r["data"]["remedy"], r["data"]
    assert not g["mcp-moved"] and not g["mcp-dirty"], g["mcp-dirty"]


NK = list(NOTES)


@pytest.mark.parametrize("k", cases([f"mcp-note:{k}" for k in NK], NK, {}))
def test_mcp_note(lab: Lab, k: str) -> None:
    """A note with CR, U+2028, NEL, NUL, blank lines or 100 kB of bidi text: committed (or
    refused, coded), never a trailer, never a line break of its own in the message."""
    g = lab.got  # type: ignore[attr-defined]
    r = g["notes"][k]
    if r["error"]:
        assert r["data"] and r["data"]["code"].startswith("E_"), r["text"][:300]
        return
    m = g["msg"][k]
    assert m["tr"].strip() == "", m
    assert "\r" not in m["body"] and "\x00" not in m["body"] and "\u2028" not in m["body"]
    assert m["lines"] == 2, m


RK = list(RAW)


@pytest.mark.parametrize("k", cases([f"mcp-raw:{k}" for k in RK], RK, {}))
def test_mcp_raw(lab: Lab, k: str) -> None:
    """A lone surrogate (valid JSON escape, no Unicode scalar): a JSON-RPC error or a coded
    tool error, never an internal error; the session still answers the next call; nothing
    committed."""
    g = lab.got  # type: ignore[attr-defined]
    raw = g["raw"]
    i = RK.index(k) + 1
    if i in raw:
        rep = raw[i]
        text = json.dumps(rep)
        assert "Traceback" not in text and "internal error" not in text, text[:400]
        if "result" in rep:
            assert rep["result"].get("isError") or k.startswith("validate"), text[:400]
    else:
        assert raw["null"] and all("error" in m for m in raw["null"]), raw
    last = raw.get(len(RK) + 1)
    assert last and "result" in last and not last["result"].get("isError"), raw.get("stderr")
    assert not g["raw-moved"]


HK = list(HTTP)


@pytest.mark.parametrize("k", cases([f"http:{k}" for k in HK], HK, {}))
def test_http(lab: Lab, k: str) -> None:
    """A hostile id on `/api/plan/` or `/api/commit/`: a coded 4xx, never 500 or a trace."""
    g = lab.got  # type: ignore[attr-defined]
    assert g["settled"]
    code, body = g["http"][k]
    assert code in (400, 404, 414), (code, body[:300])
    assert "Traceback" not in body
    assert "E_" in body or "Not found" in body or code == 414, body[:300]


AK = [f"plans/n-{k}" for k in NK]


@pytest.mark.parametrize("p", cases([f"agree:{p}" for p in AK], AK, {}))
def test_agree(lab: Lab, p: str) -> None:
    """The plans submitted with hostile notes: `status --json`, `show --json`, MCP `status`
    and `/api/` say the same status and hash, and the agent's plan is pending."""
    g = lab.got  # type: ignore[attr-defined]
    if p not in g["status"]:
        assert g["notes"][p.split("n-", 1)[1]]["error"]
        return
    row = g["status"][p]
    assert row["status"] == "pending_approval", row
    sh = g["show"][p]
    assert sh.get("hash") == row["hash"], sh
    ms = g["mstatus"][p]["data"]["plans"][0]
    assert ms["status"] == row["status"] and ms["hash"] == row["hash"], ms
    code, body = g["api"]
    assert code == 200
    rows = {r["plan"]: r for s in json.loads(body)["sections"] for r in s["plans"]}
    assert rows[p]["status"] == row["status"] and rows[p]["hash"] == row["hash"]


def test_nothing_ran_unapproved(lab: Lab) -> None:
    """mcp:nothing-ran: after every hostile call only `done` (Alice's) ran."""
    lines = lab.log.read_text().splitlines() if lab.log.exists() else []
    ran = [json.loads(x)["argv"] for x in lines if x.strip()]
    assert ran == [["done"]], ran
