"""Round 95, agent surfaces (atk95b): past rounds 93-94 (git's config), the surfaces' OWN
inputs: MCP tool arguments at their edges, MCP ``submit`` slugs that are git revision
syntax, ``approve -m`` with trailer-shaped text, the page's and ``/api/`` URLs, a tool's
output with terminal escapes and bidi controls read back through ``status``/MCP ``log``, and
a configured secret reaching a surface in an encoded form or a failing tool's error.

Lab (one, local mode, built once). A secrets file holds ``TOK``; an exec tool ``say``
prints a form of it (``hex``, ``b32``, ``b64``, ``fail``: on stderr and exit 1, ``esc``:
terminal escapes, OSC title, bidi controls around text). The agent commits one plan per
form and plan ``msg``; a pass freezes them; Alice approves each form plan with the lab's
commit, and ``msg`` with ``plangate approve -m`` holding trailer-shaped lines
(``Plan-Status: rejected``, ``Controller-Seal: ...``, ``Approved-By: bob@...``); a pass runs
them. A daemon serves the page; then MCP sessions make every call of :data:`MCPCALLS`.
Ids: ``mcp:<call>`` (an error with its ``E_`` code and a remedy, never a traceback, never
the secret), ``submit:<slug>`` (nothing committed outside ``plans/<slug>/`` as git's refname
rules allow; a refused slug commits nothing), ``url:<name>`` (no 5xx, no traceback, no file
outside the repo, no secret), ``sec:<form>:<surface>``, ``esc:<surface>``, ``msg:*``,
``ctl:*`` (honest flows).

Seen (round 95): 2 ids broke, 1 class.
``page-startup-absent`` (``race:p``, ``race:hex``): the daemon started on a repository whose
plans ``p`` and ``hex`` have been on the branch (completed) all along, plus four plans the
agent submitted since; reading ``/api/plan/plans/p`` and ``/api/plan/plans/hex`` every 20 ms
from the moment the page listens: the first reads (11 of 56 in one run, 7 of 21, 9 of 24 in
others) answered ``404`` ``{"ok": false, "code": "E_NOT_FOUND", "message": "no plan
'plans/p' on the watched branch", ..., "remedy": "check the path: GET /api/ lists the plans
on the watched branch"}``, then 200 with the completed row once the daemon's first pass had
published. A reader (a reviewer's script, an agent polling) is told an existing, completed
plan is absent, with a remedy that sends it to check its path. (Reads made only after
``/api/`` answered 200 still saw the 404 once; HEAD of ``/api/plan/plans/p`` answered 404
with no body in that window too.)
Held: every MCP ``log``/``status`` path of :data:`PATHS` (revision syntax ``HEAD~1``,
``@{-1}``, ``:/agent``, ``main^{tree}``, ``..``, absolute, backslash, ``~``, NUL, empty,
Cyrillic, 200 KB, ``//``, ``./``, ``%2e%2e``, bidi, newline + trailer, and non-strings:
int, list, nested dict, null, bool) was an error with its ``E_`` code (``E_USAGE``: "no
plan plans/HEAD~1 on the watched branch" / "'plans/../plans/p' is not a plan path" / "log:
path must be a string"; ``E_UNSAFE_PATH`` for backslash, NUL, bidi) and a remedy, never
another plan's record (``status`` with ``path: null`` lists every plan, as documented).
``submit`` slugs that are revision syntax or refname-invalid were ``E_USAGE`` ("slug
'HEAD~1' is not a plan folder name"); ``x.lock`` and ``a.`` are accepted on the branch and
refused with ``pull_request: true`` ("is no branch name git takes"), as docs/agents.md
says; ``p.`` (an NTFS twin of ``plans/p``), ``p ``, ``P`` refused; no branch was made.
Every ``convert`` format (actionplan, agent-plan, plan-contract reply, pte, TOON JSON,
markdown, ``.toon``) with ESC/OSC/BEL/RLO in its title: ``validate`` and ``submit`` answered
their ``E_`` errors, nothing committed, no raw control in the answer; a PLAN.yml whose task
holds them was committed and ``show``/``status``/MCP printed ``x\x1b]0;PWN\x07...``
escaped. ``approve -m`` with ``Plan-Status: rejected``, ``Approved-By: bob@...``, a forged
``Controller-Seal:``/``Plan-Hash:``/``Controller:``: the commit ends with plangate's own
``Plan-Status: approved``; the plan ran once, approver Alice, the audit agrees. A tool's
output with terminal escapes and bidi controls reached ``status``, MCP ``log``, the page,
``/api/`` and the committed log only JSON- or HTML-escaped. The secret in hex, HEX, base32,
lower-case unpadded base32, base64, UTF-16LE hex, percent-encoded, a URL password and a
failing tool's stderr: ``***`` on every surface (status text and JSON, git history, MCP,
page, ``/api/``, ``show``). The page's URLs (``%2e%2e``, ``%252e%252e``, raw ``..``,
``%2f``, 70 KB path: 414, query strings, ``%00``, ``/commit/HEAD~1``, ``/commit/--output=``)
answered 4xx with ``E_NOT_FOUND`` and a remedy or the 404 page, nothing outside the repo;
OPTIONS/PUT/DELETE 405 "read-only"; a foreign or empty ``Host`` served the same page.

Fixed (2026-12-02, r95page): ``page-startup-absent``: the daemon published the controller's
rows when the page started, before its first pass had read history. Now the page publishes
only after a pass (``Upkeep._start_ui``), and until then (``UiData.ready``) every route
answers 503 with ``Retry-After``: ``E_NOT_READY`` "the controller is still reading history
..." with the remedy "retry in a few seconds" under ``/api``, a "Not ready yet" page
elsewhere (``ui.server.not_ready``). ``race:*`` now read the plans, ``/``, ``/api/``, a
plan's page, ``/api/audit`` and HEAD in the window, and hold whatever the timing: each read
before the first 200 is that 503, each read after it a 200, never a 404.

Should: the brief's property: "a failed read is an error with its E_... code, the location
and a remedy, never absent, never a traceback; no secret leaks (any encoding; errors, logs,
MCP answers, the page); no program of the agent's runs".
"""

from __future__ import annotations

import base64
import http.client
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
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared
from writerkit import free_port

SECRET = "Kq7vZr9pXw3mTb5nQe"
SAY = """\
import base64, sys
s = open({sec!r}).read().split(": ", 1)[1].strip()
form = sys.argv[1]
if form == "hex":
    print("v=" + s.encode().hex())
elif form == "b32":
    print("v=" + base64.b32encode(s.encode()).decode())
elif form == "b64":
    print("v=" + base64.b64encode(s.encode()).decode())
elif form == "fail":
    sys.stderr.write("error: cannot log in with " + s + "\\n")
    sys.exit(1)
elif form == "pct":
    print("v=" + "".join("%%%02X" % b for b in s.encode()))
elif form == "hexup":
    print("v=" + s.encode().hex().upper())
elif form == "b32low":
    print("v=" + base64.b32encode(s.encode()).decode().lower().rstrip("="))
elif form == "u16hex":
    print("v=" + s.encode("utf-16-le").hex())
elif form == "url":
    print("see https://u:" + s + "@example.com/x?token=" + s[::1])
elif form == "esc":
    print("ok \\x1b]0;PWNED\\x07\\x1b[2J\\x1b[31mRED\\x1b[0m \\u202egnp.exe\\u202c \\x1b[1A\\rdone")
"""
FORMS = ("hex", "b32", "b64", "fail", "esc", "pct", "hexup", "b32low", "u16hex", "url")
AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}, branch_prefix: plangate/}\n"
EX = Path(__file__).resolve().parents[2] / "examples" / "formats"
HOSTILE_RAW = "x\x1b]0;PWN\x07\x1b[2J\u202eevil\u202c"
#: (example file, the text replaced by hostile text, how it is written there)
SOURCES = {
    "actionplan": ("actionplan.json", "Recover rate-limited agent", "json"),
    "agent-plan": ("agent-plan.json", "Search the docs for rate limits", "json"),
    "plan-contract": ("plan-contract-reply.md", "Refresh the meta descriptions", "json"),
    "pte": ("pte-customer-emails.yml", "Process Customer Emails", "yaml"),
    "toon-json": ("toon-plan-core.json", "Plan Title", "json"),
    "toon-md": ("toon-plan-core.md", "Plan Title", "raw"),
    "toon": ("toon-plan-core.toon", "Plan Title", "raw"),
}
PATHS: dict[str, Any] = {
    "headtilde": "HEAD~1", "atminus": "@{-1}", "colonmsg": ":/agent", "treeish": "main^{tree}",
    "dotdot": "plans/../plans/p", "updir": "../repo/plans/p", "abs": "/etc/passwd",
    "backslash": "plans\\p", "tilde": "~/plans/p", "nul": "plans/p\x00x", "empty": "",
    "cyr": "plans/\u0440", "huge": "x" * 200000, "dslash": "plans//p", "dot": "plans/./p",
    "pct": "plans/%2e%2e/p", "int": 1, "list": ["plans/p"], "deep": {"a": {"b": [1] * 1000}},
    "null": None, "bool": True, "bidi": "plans/\u202ep", "newline": "plans/p\nApproved-By: x",
}  # fmt: skip
SLUGS = {
    "headtilde": "HEAD~1", "atbrace": "a@{-1}", "colon": "a:b", "caret": "main^{tree}",
    "dotdot": "../esc", "dotlock": "x.lock", "dots": "a..b", "abs": "/abs", "tilde": "~x",
    "bslash": "a\\b", "nul": "a\x00b", "space": "a b", "star": "a*", "qmark": "a?",
    "bracket": "a[", "trailingdot": "a.", "at": "@", "twindot": "p.", "twinlock": "hex.lock",
    "twinspace": "p ", "upper": "P",
}  # fmt: skip
URLS = {
    "pctdotdot": "/api/plan/plans/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "dblenc": "/api/plan/plans/%252e%252e/%252e%252e/etc/passwd",
    "rawdotdot": "/api/plan/../../../../etc/passwd",
    "pctslash": "/api/plan/plans%2f..%2f..%2fetc%2fpasswd",
    "overlong": "/api/plan/plans/" + "a" * 70000,
    "query": "/api/?x=%00%ff&path=../../etc/passwd",
    "nulpath": "/api/plan/plans/p%00x",
    "commitrev": "/commit/HEAD~1",
    "commitcolon": "/commit/HEAD:plans%2Fp%2FPLAN.yml",
    "commitdash": "/commit/--output=%2Ftmp%2Fatk95b-pwn",
    "planfail": "/api/plan/plans/fail",
    "plansec": "/api/plan/plans/hex",
    "planesc": "/api/plan/plans/esc",
    "apiroot": "/api/",
    "page": "/",
}
METHODS = ("HEAD", "OPTIONS", "PUT", "DELETE")


def _http(port: int, method: str, path: str, host: str | None = None) -> tuple[int, str]:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.putrequest(method, path, skip_host=host is not None)
        if host is not None:
            c.putheader("Host", host)
        c.endheaders()
        r = c.getresponse()
        body = r.read().decode("utf-8", "replace")
        c.close()
        return r.status, body
    except (OSError, http.client.HTTPException) as e:
        return -1, repr(e)


def _read(port: int, method: str, path: str) -> tuple[int, str, str]:
    """``(status, body, Retry-After)`` of one request (-1 when nothing answered)."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request(method, path)
        r = c.getresponse()
        body = r.read().decode("utf-8", "replace")
        c.close()
        return r.status, body, r.getheader("Retry-After") or ""
    except (OSError, http.client.HTTPException) as e:
        return -1, repr(e), ""


def _text(reply: dict[str, Any] | None) -> tuple[bool, str]:
    if reply is None:
        return True, "NO REPLY"
    res = reply.get("result") or {}
    if not res:
        return True, json.dumps(reply.get("error"))
    return bool(res.get("isError")), "".join(c.get("text", "") for c in res.get("content", []))


def _plan(slug: str, tool: str = "say", form: str = "") -> str:
    params = f'{{f: {form}, key: "$<secrets.TOK>"}}' if form else f'{{tag: "{slug}"}}'
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\nactions:\n  - id: 1\n    tool: {tool}\n"
        f"    why: w\n    params: {params}\n"
    )


def _build(root: Path) -> Lab:
    sec = root / "sec.yml"
    root.mkdir(parents=True, exist_ok=True)
    sec.write_text(f"TOK: {SECRET}\n")
    (root / "say.py").write_text(SAY.format(sec=str(sec)))
    py, script = json.dumps(sys.executable), json.dumps(str(root / "say.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {sec}}}\n" + AGENT_CFG,
        tools=f"say: {{kind: exec, argv: [{py}, {script}, '{{f}}']}}\n",
    )
    got: dict[str, Any] = {}
    for form in FORMS:
        lab.write(form, _plan(form, form=form))
    lab.write("msg", _plan("msg", tool="rec"))
    lab.write("p", _plan("p", tool="rec"))
    lab.commit("agent: plans", AGENT)
    lab.run(check=False)
    for form in FORMS:
        lab.set_status(form, "approved")
    lab.set_status("p", "approved")
    lab.commit("approve", ALICE)
    env = lab.env(ALICE)
    env["REC_LOG"] = str(lab.log)
    note = (
        "looks fine\n\nPlan-Status: rejected\nApproved-By: bob@ops.example.com\n"
        "Controller-Seal: v1:deadbeef\nPlan-Hash: sha256:" + "0" * 64 + "\nController: plangate"
    )
    ap = subprocess.run(
        [mcpkit.PLANGATE, "approve", "--config", str(lab.config), "-m", note, "plans/msg"],
        cwd=lab.repo, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    got["msgapprove"] = {"rc": ap.returncode, "err": ap.stderr[-1500:]}
    got["msgcommit"] = lab.git("log", "-1", "--format=%B")
    p2 = lab.run(check=False)
    got["pass"] = (p2.returncode, p2.stderr[-2000:])
    got["ran"] = {s: len(lab.calls(s)) for s in ("msg", "p")}
    c = str(lab.config)
    st = lab.cli("status", "--config", c)
    stj = lab.cli("status", "--json", "--config", c)
    got["status"] = st.stdout + st.stderr
    got["statusjson"] = stj.stdout + stj.stderr
    got["rows"] = {r["plan"]: r for r in json.loads(stj.stdout)}
    got["show"] = {
        f: (lambda r: r.stdout + r.stderr)(
            lab.cli("show", "--config", c, str(lab.repo / f"plans/{f}/PLAN.yml"))
        )
        for f in FORMS
    }
    au = lab.cli("audit", "--json", "--config", c)
    got["audit"] = {"rc": au.returncode, "out": au.stdout, "err": au.stderr[-1500:]}
    got["gitlog"] = lab.git("log", "-p", "--all", "--format=%B")
    # -- MCP
    calls: list[tuple[str, dict[str, Any]]] = [("log", {"path": v}) for v in PATHS.values()]
    calls += [("status", {"path": v}) for v in PATHS.values()]
    calls += [("log", {"path": f"plans/{f}"}) for f in FORMS]
    calls += [("status", {"path": f"plans/{f}"}) for f in FORMS]
    calls += [("catalog", {})]
    reps, err = mcpkit.session(lab, calls, timeout=180)
    got["mcp"] = [_text(r) for r in reps]
    got["mcperr"] = err[-2000:]
    before = lab.head()
    subs: dict[str, Any] = {}
    for pr in (False, True):
        scalls = [("submit", {"plan": _plan(f"s{k}", tool="rec"), "slug": s,
                              "pull_request": pr}) for k, s in SLUGS.items()]  # fmt: skip
        r2, _ = mcpkit.session(lab, scalls, timeout=180)
        subs[pr] = [_text(r) for r in r2]
    got["submit"] = subs
    fcalls: list[tuple[str, dict[str, Any]]] = []
    for fmt, (name, old, how) in SOURCES.items():
        text = (EX / name).read_text()
        hostile = {"json": json.dumps(HOSTILE_RAW)[1:-1], "raw": HOSTILE_RAW,
                   "yaml": json.dumps(HOSTILE_RAW)[1:-1]}[how]  # fmt: skip
        assert old in text, (name, old)
        text = text.replace(old, hostile, 1)
        fcalls.append(("submit", {"plan": text, "slug": f"f-{fmt}"}))
        fcalls.append(("validate", {"plan": text}))
    hplan = _plan("hx", tool="rec").replace("task: t", "task: " + json.dumps(HOSTILE_RAW))
    fcalls.append(("submit", {"plan": hplan, "slug": "hx"}))
    rf, _ = mcpkit.session(lab, fcalls, timeout=180)
    got["formats"] = [_text(r) for r in rf]
    hx = lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans/hx/PLAN.yml"))
    got["hxshow"] = hx.stdout + hx.stderr
    hs = lab.cli("status", "--config", str(lab.config))
    got["hxstatus"] = hs.stdout + hs.stderr
    rl, _ = mcpkit.session(lab, [("log", {"path": "plans/hx"}), ("status", {"path": "plans/hx"})])
    got["hxmcp"] = [_text(r) for r in rl]
    got["branches"] = lab.git("for-each-ref", "--format=%(refname)")
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "main")
    got["subcommits"] = lab.git("log", "--format=%s", f"{before}..main")
    # -- the page
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    denv = lab.env()
    denv["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=denv,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    try:
        end = time.time() + 60
        while time.time() < end and _http(ui, "GET", "/api/plan/plans/p")[0] == -1:
            time.sleep(0.02)
        # from the moment the page listens, while the daemon's first pass freezes the four
        # submitted plans: read plans the branch has held all along (p, hex), again and again
        race: list[tuple[str, int, str]] = []
        end = time.time() + 4
        while time.time() < end:
            for slug in ("p", "hex"):
                code, text, retry = _read(ui, "GET", f"/api/plan/plans/{slug}")
                race.append((slug, code, f"{retry}|{text[:4000]}" if code != 200 else ""))
            for other in ("/", "/api/", "/plan/plans/p", "/api/audit"):
                code, text, retry = _read(ui, "GET", other)
                race.append((other, code, f"{retry}|{text[:4000]}" if code != 200 else ""))
            code, _, retry = _read(ui, "HEAD", "/api/plan/plans/p")
            race.append(("HEAD", code, f"{retry}|"))
            time.sleep(0.02)
        got["race"] = race
        end = time.time() + 60
        while time.time() < end and "freeze plans/x.lock" not in _http(ui, "GET", "/api/")[1]:
            time.sleep(0.2)
        time.sleep(1.0)
        got["urls"] = {k: _http(ui, "GET", u) for k, u in URLS.items()}
        got["methods"] = {m: _http(ui, m, "/api/plan/plans/p") for m in METHODS}
        got["host"] = {
            "evil": _http(ui, "GET", "/", host="evil.example.com"),
            "empty": _http(ui, "GET", "/api/", host=""),
        }
        got["pageplans"] = {f: _http(ui, "GET", f"/plan/plans/{f}") for f in FORMS}
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["daemonerr"] = (root / "daemon.err").read_text()[-3000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r95-surface-atk95b", _build)


def _forms() -> dict[str, str]:
    b = SECRET.encode()
    b32 = base64.b32encode(b).decode().rstrip("=")
    return {
        "raw": SECRET, "hex": b.hex(), "HEX": b.hex().upper(), "b32": b32, "b32low": b32.lower(),
        "b64": base64.b64encode(b).decode().rstrip("="), "u16": SECRET.encode("utf-16-le").hex(),
        "pct": "".join(f"%{x:02X}" for x in b), "half": SECRET[:12],
    }  # fmt: skip


RAW_CONTROLS = ("\x1b", "\x07", "\u202e", "\u202c", "\x9b")
PATHIDS = [f"mcp:{tool}:{k}" for tool in ("log", "status") for k in PATHS]
READIDS = [f"mcp:{tool}read:{f}" for tool in ("log", "status") for f in FORMS]
SUBIDS = [f"submit:{k}:{'pr' if pr else 'br'}" for pr in (False, True) for k in SLUGS]
FMTIDS = [f"fmt:{f}:{w}" for f in SOURCES for w in ("submit", "validate")]
SURF = ("status", "statusjson", "gitlog", "mcp", "page", "api", "show")
SECIDS = [f"sec:{s}" for s in SURF] + [f"sec:row:{f}" for f in FORMS]
ESCIDS = [f"esc:{s}" for s in ("status", "statusjson", "mcp", "page", "api", "gitlog")]
HXIDS = ["hx:submit", "hx:show", "hx:status", "hx:mcp"]
URLIDS = [f"url:{k}" for k in URLS] + [f"method:{m}" for m in METHODS] + ["host:evil", "host:empty"]
MSGIDS = ["msg:approve", "msg:ran", "msg:row", "msg:audit", "msg:commit"]
CTLIDS = ["race:p", "race:hex", "ctl:ran", "ctl:audit", "ctl:pass", "ctl:daemon", "ctl:branches"]
IDS = PATHIDS + READIDS + SUBIDS + FMTIDS + SECIDS + ESCIDS + HXIDS + URLIDS + MSGIDS + CTLIDS
BROKEN: dict[str, Any] = {}


def _clean(text: str) -> None:
    assert "Traceback" not in text and "NO REPLY" not in text, text[-2000:]
    for c in RAW_CONTROLS:
        assert c not in text, (c, text[-2000:])
    for name, form in _forms().items():
        assert form not in text, (name, text[-2000:])


def _error(err: bool, text: str) -> None:
    _clean(text)
    assert err, text[:1500]
    assert '"code": "E_' in text and '"remedy": "' in text, text[:1500]


def _mcp_path(got: dict[str, Any], tool: str, key: str) -> None:
    keys = list(PATHS)
    idx = keys.index(key) + (0 if tool == "log" else len(keys))
    err, text = got["mcp"][idx]
    if tool == "status" and PATHS[key] is None:  # no path: every plan (documented)
        _clean(text)
        assert not err and '"plans/p"' in text, text[:1500]
        return
    _error(err, text)
    # never another plan's record: a read of a path that is not plans/p answers no row of p
    assert '"status": "completed"' not in text, text[:1500]


def _submit(got: dict[str, Any], key: str, pr: bool) -> None:
    slug = SLUGS[key]
    err, text = got["submit"][pr][list(SLUGS).index(key)]
    _clean(text)
    tree = got["tree"].splitlines()
    if err:  # refused with its code, nothing committed
        assert '"code": "E_' in text and '"remedy": "' in text, text[:1500]
        other = got["submit"][not pr][list(SLUGS).index(key)][0]
        assert not other or not any(t.startswith(f"plans/{slug}/") for t in tree), tree
        return
    # committed: only as plans/<slug>/PLAN.yml, and never as a twin (NTFS drops a name's
    # trailing dots: docs/plan-format.md) of a plan folder the branch already holds
    assert f"plans/{slug}/PLAN.yml" in tree, (slug, tree)
    folded = slug.rstrip(". ").lower()
    assert folded == slug or f"plans/{folded}/PLAN.yml" not in tree, ("twin", slug, tree)


def _fmt(got: dict[str, Any], fmt: str, what: str) -> None:
    idx = list(SOURCES).index(fmt) * 2 + (0 if what == "submit" else 1)
    _, text = got["formats"][idx]
    _clean(text)
    assert '"code": "E_' in text, text[:1500]
    assert '"submitted": true' not in text, text[:1500]
    assert f"plans/f-{fmt}/PLAN.yml" not in got["tree"], got["tree"]


def _surface(got: dict[str, Any], surf: str) -> str:
    if surf == "mcp":
        return json.dumps(got["mcp"][2 * len(PATHS) :], ensure_ascii=False)
    if surf == "page":
        return json.dumps(got["pageplans"], ensure_ascii=False)
    if surf == "api":
        keys = ("planfail", "plansec", "planesc")
        return json.dumps([got["urls"][k] for k in keys], ensure_ascii=False)
    if surf == "show":
        return json.dumps(got["show"], ensure_ascii=False)
    return got[surf]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round95_surface(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    part, rest = vid.split(":", 1)
    if part == "mcp":
        tool, key = rest.split(":", 1)
        if tool.endswith("read"):
            idx = 2 * len(PATHS) + FORMS.index(key) + (0 if tool == "logread" else len(FORMS))
            err, text = got["mcp"][idx]
            _clean(text)
            assert not err and f'"plans/{key}"' in text, text[:1500]
        else:
            _mcp_path(got, tool, key)
    elif part == "submit":
        key, how = rest.split(":")
        _submit(got, key, how == "pr")
    elif part == "fmt":
        fmt, what = rest.split(":")
        _fmt(got, fmt, what)
    elif part == "sec":
        if rest.startswith("row:"):
            form = rest[4:]
            row = got["rows"][f"plans/{form}"]
            assert row["status"] == ("failed" if form == "fail" else "completed"), row
            assert row["approver"] == "alice@example.com", row
            _clean(json.dumps(row, ensure_ascii=False))
        else:
            _clean(_surface(got, rest))
    elif part == "esc":
        text = _surface(got, rest)
        _clean(text)
        if rest not in ("status", "statusjson"):  # the output is shown, escaped
            assert "PWNED" in text, text[:1500]
    elif part == "hx":
        if rest == "submit":
            err, text = got["formats"][-1]
            _clean(text)
            assert not err or '"code": "E_' in text, text[:1500]
        elif rest == "mcp":
            _clean(json.dumps(got["hxmcp"], ensure_ascii=False))
        else:
            _clean(got["hx" + rest])
    elif part in ("url", "method", "host"):
        code, text = {"url": got["urls"], "method": got["methods"], "host": got["host"]}[part][rest]
        assert 0 < code < 500, (code, text[:1500])
        _clean(text)
        assert "root:x:0" not in text, text[:1500]
        if part == "method":
            assert code == (200 if rest == "HEAD" else 405), (code, text[:300])
        if text.lstrip().startswith("{") and '"ok": false' in text:
            assert '"code": "E_' in text and '"remedy": "' in text, text[:1500]
    elif part == "msg":
        row = got["rows"]["plans/msg"]
        if rest == "approve":
            assert got["msgapprove"]["rc"] == 0, got["msgapprove"]
        elif rest == "ran":
            assert got["ran"]["msg"] == 1, got["ran"]
        elif rest == "row":
            assert row["status"] == "completed" and row["approver"] == "alice@example.com", row
        elif rest == "commit":  # the controller's own trailers close the message
            tail = got["msgcommit"].rstrip().splitlines()[-1]
            assert tail == "Plan-Status: approved", got["msgcommit"]
        else:
            rep = json.loads(got["audit"]["out"])
            runs = [e for e in rep["executions"] if e["plan"] == "plans/msg"]
            assert rep["ok"] and not rep.get("findings"), rep.get("findings")
            assert [e["approval_valid"] for e in runs] == [True], runs
            assert runs[0]["approver"] == "alice@example.com", runs
    elif part == "race":  # a plan on the branch all along is never read as absent
        # deterministic whatever the timing: each read before the page's first 200 is a 503
        # "not ready" (E_NOT_READY, Retry-After, a remedy), each read after it a 200; never a
        # 404, an empty list or a 5xx other than 503. The other routes (page, overview,
        # audit, HEAD) read in the same window hold to the same rule.
        seen = [(c, t) for s, c, t in got["race"] if s == rest]
        assert any(c == 200 for c, _ in seen), seen[:3]
        for route in (rest, "/", "/api/", "/plan/plans/p", "/api/audit", "HEAD"):
            reads = [(c, t) for s, c, t in got["race"] if s == route]
            first = next(i for i, (c, _) in enumerate(reads) if c == 200)
            before, after = reads[:first], reads[first:]
            assert all(c == 200 for c, _ in after), (route, [x for x in after if x[0] != 200][:3])
            for c, t in before:
                retry, _, body = t.partition("|")
                assert c == 503 and retry.isdigit(), (route, c, t)
                if route == "HEAD":
                    continue
                if route == rest or route.startswith("/api"):
                    err = json.loads(body)
                    assert err["ok"] is False and err["code"] == "E_NOT_READY", err
                    assert "retry" in err["remedy"] and "history" in err["message"], err
                else:
                    assert "Not ready" in body and "history" in body, body
    elif part == "ctl":
        if rest == "ran":
            assert got["ran"]["p"] == 1, got["ran"]
        elif rest == "audit":
            rep = json.loads(got["audit"]["out"])
            assert got["audit"]["rc"] == 0 and rep["ok"], got["audit"]
            valid = sorted(e["plan"] for e in rep["executions"] if e.get("approval_valid"))
            assert valid == sorted(f"plans/{s}" for s in (*FORMS, "msg", "p")), valid
        elif rest == "pass":
            assert got["pass"][0] == 0 and "Traceback" not in got["pass"][1], got["pass"]
        elif rest == "daemon":
            assert "Traceback" not in got["daemonerr"], got["daemonerr"]
        else:  # submit with pull_request made only plangate/<slug> branches, here none
            assert got["branches"].split() == ["refs/heads/main"], got["branches"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r95-", dir="/tmp/atk95b"))
    g = _build(out).got  # type: ignore[attr-defined]
    Path("/tmp/atk95b/got.json").write_text(json.dumps(g, default=str, indent=1))
