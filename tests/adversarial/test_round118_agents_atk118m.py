"""Round 118, the agent's surfaces (atk118m): ``plangate mcp`` driven by the official ``mcp``
SDK's stdio client (``ClientSession.call_tool``), as an agent with only docs/agents.md,
docs/formats.md, docs/plan-format.md and ``plangate schema``; raw JSON-RPC lines only where
the SDK cannot send the shape (ids and argument containers of other JSON types).

Lab (one, module scope, local mode): a plans repo with ``agent.identity`` (Agent), a plan
secret ``TOK`` (``zq7kw3mv9xr2``: lower-case letters and digits, so also a valid slug),
``limits.max_plan_bytes: 4096``. Plans ``pend``, ``wpend``, ``done``, ``rej``, ``sec`` (the
exec ``sayer`` echoing ``$<secrets.TOK>``) committed by the agent and frozen; Alice approves
``done`` and ``sec`` (they run) and rejects ``rej``. Then the agent's traps in the shared
working tree: untracked symlinks ``plans/lnkout`` (to a folder outside the repository),
``plans/lnksib`` (to ``../done``), ``plans/grp`` (outside), a symlinked file
``plans/lnkf/PLAN.yml``, and someone's STAGED edit of ``wpend``. One SDK session then makes
~100 calls in turn (HEAD checked around each); six ``submit`` of one slug at once with a
``status`` and a ``log``; a ``wait`` on ``wpend`` while the agent commits ``approved`` on its
own plan (and a pass refuses it) and then ``completed``; MCP ``status``/``log``/``wait`` of
every plan beside ``plangate status --json`` and ``show --json`` at one HEAD; Alice approves
``va`` and the agent submits a v2 over it before the pass; a staged approval of ``st2``; an
untracked ``PLAN.json`` (an evil ``why``) beside a submitted ``srcj``; an untracked forged
EXECUTION_LOG.md in ``pend``; Alice approves the copy ``rej-again`` of the version she
rejected; raw JSON-RPC lines; finally the whole ``plans`` folder swapped for a link to a copy
outside the repository and one more ``submit``.

Ids (130): ``link:{lnkout,lnksib,grp-x,plans-root}`` and ``lnkf``/outside/sibling checks;
``stage:other``; ``slug:*`` (18: case, NFC/NFD, ``//``, trailing ``/``, absolute, ``..``,
backslash, blank, ZWSP, ``x/plan.yml``, ``x/execution_log.md``, NUL, empty, 300 chars,
fullwidth, ``x/.git``, ``.git/x``); ``type:*`` (10: timeout ``{}``/``10**400``/``-1``, wait
``status: 3``, ``format: 3``/``"xml"``, ``note: [..]``, ``path: [..]``/``null``, an extra
``approve: true``); ``path:<spelling>:{status,log,wait}`` (12 x 3: ``PLANS/pend``,
``plans/pend/plan.yml``, ``.../EXECUTION_LOG.md``, ``plans\\pend``, ``plans%2Fpend``, fullwidth,
the state dir, the config, ``plans/pend/.``, NUL, ``~/...``, ``<repo>/../lab/repo/...``);
``oracle:{status,log,wait,validate,format}`` (the secret vs a one-off guess); size, note,
finished-plan replacement, rejected versions (``rej:*``), hashes (CRLF, BOM), pull request
branch, secrets in ``log``/``status``/``catalog``, the ``approve`` tool, concurrency (4),
``wait-self:*`` (3), MCP vs CLI agreement (10 plans), ``show`` (3), ``late:*`` (8),
``rpc:*`` (8) and a float-id ``submit``.

Seen (round 118, 130 ids, 114 passed and 16 xfailed in ~50 s wall on 2 busy cores). 16 broke,
5 classes:
**submit-through-untracked-link** (4 ids: ``link:lnkout``, ``link:lnksib``, ``link:grp-x``,
``link:plans-root``): with the agent's UNTRACKED symlink at ``plans/<slug>`` (to a folder
outside, or to another plan's folder ``../done``), at a group folder on the way
(``plans/grp`` for slug ``grp/x``), or at ``plans`` itself, ``submit`` answers ``ok``,
``submitted: true`` and commits ``plans/<slug>/PLAN.yml`` on main, but never writes it: ``git
status`` shows `` D plans/<slug>/PLAN.yml`` (a person's ``git commit -a`` deletes the
submission under their name) and every pass logs ``plan_waiting ... E_UNSAFE_PATH: ... is a
symbolic link or not a folder`` for it. docs/agents.md: the commit, the working-tree file
and the index entry are written together, and a working tree that cannot be written
"commits nothing ... E_STORAGE". (Held: nothing was written through the links: the outside
folders and ``done``'s file unchanged; a symlinked plan FILE is refused.)
**submit-withdrawn-version-accepted** (2 ids: ``rej:same-submit``, ``rej:same-plain-submit``):
the exact version Alice rejected, sent again under a new slug (as committed with its
``frozen:`` block, converted as ``pte``; or as plain PLAN.yml), is committed ``ok``,
``pending_approval``, "1 approval", the same hash; the controller freezes it "waiting for an
approval". docs/agents.md: "the same version under any name ... is refused
(``E_VERSION_WITHDRAWN``)". (Held: Alice's approval of the copy is refused
``E_VERSION_WITHDRAWN`` and nothing runs.)
**submit-over-rejected-never-frozen** (1 id: ``rej:new-frozen``): ``submit`` of a NEW version
at the rejected plan's slug answers ``ok`` ``pending_approval`` (its refusal text lists
``rejected`` among the statuses a submission may replace) and commits it, deleting the
rejection record from the file; the controller ignores it for good (``E_ILLEGAL_TRANSITION:
agent ... set status pending_approval (from rejected) ... ignored``), ``status`` says
``rejected``, no freeze: the agent is told it waits for an approval that can never come.
**unjudged-self-approval-answered** (1 id: ``wait-self:answer``; arguable): the agent commits
``status: approved`` on its own pending plan; MCP ``wait`` answers ``changed: true, status:
approved`` at once, before any pass (``status --json`` and ``log`` say ``approved`` too until
the pass refuses it ``E_APPROVER_NOT_ALLOWED`` and the row returns to ``pending_approval``).
docs/agents.md: ``wait`` answers the controller's status, "a status committed into the file
that the controller ignored is no change". SPEC section 4 calls ``approved`` an approval
request; ``late:wait-approved-request`` records that Alice's request is answered the same way.
**rpc-odd-id-unanswered** (4 ids: ``rpc:id-{float,bool,list,object}``): a ``tools/call``
whose id is ``1.5``, ``true``, ``[7]`` or ``{"a": 1}`` gets NO reply (a ``submit`` so sent
commits nothing); docs/agents.md: ``-32600`` Invalid Request, id ``null``.
**rpc-arguments-shape-uncoded** (4 ids: ``rpc:args-list``, ``rpc:args-string``,
``rpc:name-int``, ``rpc:name-null``): ``arguments`` a list or a string, or ``name`` a number
or null, answer the SDK's ``-32602 "Invalid request parameters"`` with empty data: no E_
code, no remedy.

Held: every slug spelling refused ``E_USAGE``/``E_UNSAFE_PATH`` with nothing committed;
argument types coded with the argument's name; an extra ``approve: true`` is a plain
submission; path spellings never answered ``pend``'s record (state dir and config
"outside the repository", ``..`` "outside the plans folder"); no answer differs between the
secret and a wrong guess but by the guess; the secret never in ``log``/``status``/
``catalog``; ``E_PLAN_TOO_LARGE`` at 4096; a note with NUL/CR/``Approved-By:`` forms no
trailer; completed plans not replaced (``E_ILLEGAL_TRANSITION``); hashes agree across
``validate``, ``submit``, ``plangate hash`` and the row for CRLF and BOM text; the pull
request branch holds one agent commit of one file, main untouched; six concurrent submits of
one slug: six commits, each answered, the last one's text on the branch; MCP rows equal
``status --json`` rows and ``log``/``wait`` agree with them for ten plans, ``show --json``
too; someone's staged edit is never carried by the agent's commit, and a staged approval of
``st2`` makes a submit there refuse (the staged edit kept); Alice's approval of ``va`` then
the agent's v2 over it: refused, ``va`` ran once as approved; an untracked ``PLAN.json``
beside a submission is neither committed nor run; an untracked forged log is not read.

Suspected, not confirmed (the note: checked the next session, the body is cut at 2,000
characters): ``wait`` with ``timeout: 601`` did not answer within 20 s (clamped
to 600 s? docs say "at most 600"), ``timeout: -1`` is read as 0; ``wait`` of a path the
branch has no plan at answers ``{status: null, changed: false}`` (no code) where ``status``
and ``log`` say ``E_USAGE`` "no plan"; two in-flight requests sharing the id ``"d"`` got one
reply; a 2 MB ``note`` is committed whole into the message; the ``E_UNSAFE_PATH`` remedy
for a slug ``x/plan.yml`` is "rename the folder"; ``submit(pull_request: true)`` when the
agent's branch ``plangate/<slug>`` already exists (at an old commit) commits on top of it
rather than on a branch "created from the watched branch" (seen by hand, not in the module).
Not tried: remote mode, a ``wait`` across a run's outcome, forged ``.git/plangate-index-lock``
notes (round 84), ``.gitattributes`` filters in an untracked folder, the page.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases
from mcpkit import handshake

PLANGATE = str(Path(sys.executable).with_name("plangate"))
SECRET = "zq7kw3mv9xr2"  # a plan secret; lower-case letters and digits: a valid slug too
WRONG = "zq7kw3mv9xr3"  # a wrong guess of it, one character off
MAXB = 4096  # limits.max_plan_bytes


def plan(name: str, status: str = "pending_approval", tag: str | None = None) -> str:
    return (
        f"plan:\n  name: {name}\n  task: agent round 118 variant {name}\n  status: {status}\n"
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        f"    why: record that {name} ran\n    params: {{tag: {tag or name}}}\n"
    )


def _content(res: Any) -> dict[str, Any]:
    err = getattr(res, "is_error", getattr(res, "isError", None))
    text = "".join(getattr(c, "text", "") for c in res.content)
    body = text.partition(": ")[2] if err and text.startswith("Error executing tool") else text
    try:
        data = json.loads(body)
    except ValueError:
        data = None
    return {"error": bool(err), "data": data, "text": text}


def _params(lab: Lab) -> Any:
    from mcp import StdioServerParameters

    env = lab.env(AGENT)
    env["REC_LOG"] = str(lab.log)
    return StdioServerParameters(
        command=PLANGATE, args=["mcp", "--config", str(lab.config)], env=env, cwd=str(lab.root)
    )


async def _one(s: Any, name: str, args: Any) -> dict[str, Any]:
    try:
        return _content(await s.call_tool(name, args))
    except Exception as e:  # a protocol-level error: no tool answer at all
        return {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}


async def _run(lab: Lab, body: Any) -> Any:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with open(lab.root / "mcp.err", "a") as errlog:
        async with stdio_client(_params(lab), errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await body(s)


def sdk(lab: Lab, body: Any) -> Any:
    return asyncio.run(asyncio.wait_for(_run(lab, body), 240))


def seq(lab: Lab, calls: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Each call in turn in one session; with HEAD and ``git status`` before and after."""

    async def body(s: Any) -> list[dict[str, Any]]:
        out = []
        for name, args in calls:
            before = lab.head()
            try:
                got = await asyncio.wait_for(_one(s, name, args), 90)
            except TimeoutError:
                got = {"error": True, "data": None, "text": "no answer in 90 s (hang guard)"}
            got["moved"] = lab.head() != before
            got["commits"] = lab.git("log", "--format=%H %ae %s", f"{before}..HEAD").splitlines()
            out.append(got)
        return out

    return sdk(lab, body)


def gather(lab: Lab, calls: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Every call at once in one session (an agent's parallel tool calls)."""

    async def body(s: Any) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*[_one(s, n, a) for n, a in calls]))

    return sdk(lab, body)


RAW_INIT = handshake("atk118m")


def raw(lab: Lab, lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    """One ``plangate mcp`` session fed raw JSON-RPC lines (what the SDK cannot send): every
    reply but the handshake's, and stderr's tail."""
    text = "".join(json.dumps(m) + "\n" for m in RAW_INIT) + "".join(x + "\n" for x in lines)
    env = lab.env(AGENT)
    done = subprocess.run(
        [PLANGATE, "mcp", "--config", str(lab.config)],
        input=text,
        capture_output=True,
        text=True,
        cwd=lab.root,
        env=env,
        timeout=120,
        check=False,
    )
    replies = [json.loads(x) for x in done.stdout.split("\n") if x.strip()]
    return [r for r in replies if r.get("id") != 0], done.stderr[-1500:]


def _call_line(rid: Any, name: Any, arguments: Any) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
    )


RPC = {
    "rpc:id-float": (1.5, "status", {"path": "plans/done"}),
    "rpc:id-bool": (True, "status", {"path": "plans/done"}),
    "rpc:id-list": ([7], "status", {"path": "plans/done"}),
    "rpc:id-object": ({"a": 1}, "status", {"path": "plans/done"}),
    "rpc:args-list": (11, "status", []),
    "rpc:args-string": (12, "status", "plans/done"),
    "rpc:name-int": (13, 5, {}),
    "rpc:name-null": (14, None, {}),
}


# -- the calls of the one sequential session -------------------------------------------------
SLUGS = {
    "slug:caps": "Caps",
    "slug:nfc": "caf\u00e9",
    "slug:nfd": "cafe\u0301",
    "slug:dslash": "a//b",
    "slug:trail": "a/",
    "slug:abs": "/abs",
    "slug:dotdot": "x/../y",
    "slug:bslash": "x\\y",
    "slug:blank": "x y",
    "slug:zw": "x\u200by",
    "slug:planfile": "x/plan.yml",
    "slug:log": "x/execution_log.md",
    "slug:nul": "x\x00y",
    "slug:empty": "",
    "slug:long": "a" * 300,
    "slug:fullwidth": "\uff50\uff45\uff4e\uff44",
    "slug:git": "x/.git",
    "slug:dotgit-part": ".git/x",
}
TYPES = {
    "type:timeout-neg": ("wait", {"path": "plans/pend", "timeout": -1}),
    "type:timeout-object": ("wait", {"path": "plans/pend", "timeout": {}}),
    "type:timeout-bigint": ("wait", {"path": "plans/pend", "timeout": 10**400}),
    "type:wait-status-int": ("wait", {"path": "plans/pend", "timeout": 0, "status": 3}),
    "type:format-int": ("validate", {"plan": plan("ft"), "format": 3}),
    "type:format-word": ("validate", {"plan": plan("ft"), "format": "xml"}),
    "type:note-list": ("submit", {"plan": plan("nl"), "slug": "t-nl", "note": ["a"]}),
    "type:path-list": ("status", {"path": ["plans/pend"]}),
    "type:path-null-log": ("log", {"path": None}),
    "type:extra-approve": ("submit", {"plan": plan("ea"), "slug": "t-ea", "approve": True}),
}
PATHS = {
    "path:upper-root": "PLANS/pend",
    "path:lower-file": "plans/pend/plan.yml",
    "path:log-file": "plans/pend/EXECUTION_LOG.md",
    "path:bslash": "plans\\pend",
    "path:pct": "plans%2Fpend",
    "path:fullwidth": "plans/\uff50\uff45\uff4e\uff44",
    "path:state": "STATE",
    "path:config": "CONFIG",
    "path:dot-end": "plans/pend/.",
    "path:nul": "plans/pend\x00",
    "path:tilde": "~/plans/pend",
    "path:repo-up": "REPO/../lab/repo/plans/pend",
}


def _path(lab: Lab, p: str) -> str:
    return (
        p.replace("STATE", str(lab.state))
        .replace("CONFIG", str(lab.config))
        .replace("REPO", str(lab.repo))
    )


def build(root: Path) -> Lab:
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    outside = root / "outside"
    outside.mkdir()
    lab = Lab(
        root / "lab",
        extra=(
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f"limits: {{max_plan_bytes: {MAXB}}}\n"
            "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
            "  branch_prefix: plangate/\n"
        ),
        # changed (fix130s): secret on stdin, argv refuses it (cat prints the params JSON)
        tools='sayer: {kind: exec, argv: ["/bin/cat"]}\n',
    )
    lab.outside = outside  # type: ignore[attr-defined]
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    for s in ["pend", "wpend", "done", "rej"]:
        lab.write(s, plan(s))
    lab.write(
        "sec",
        "plan:\n  name: sec\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: sayer}]\nactions:\n  - id: 1\n    tool: sayer\n    why: w\n"
        '    params: {v: "$<secrets.TOK>"}\n    outputs: [{name: o, path: $.stdout}]\n',
    )
    lab.commit("agent plans")
    lab.run()
    got["rej-old"] = lab.read("rej")
    lab.set_status("done", "approved")
    lab.set_status("sec", "approved")
    lab.set_status("rej", "rejected")
    lab.commit("decide", ALICE)
    lab.run()

    # the agent's traps in the shared working tree (files an agent may write)
    os.symlink(outside, lab.repo / "plans" / "lnkout")
    os.symlink("../done", lab.repo / "plans" / "lnksib")
    os.symlink(outside, lab.repo / "plans" / "grp")
    (lab.repo / "plans" / "lnkf").mkdir()
    os.symlink(outside / "t.yml", lab.repo / "plans" / "lnkf" / "PLAN.yml")
    done_file = lab.repo / "plans" / "done" / "PLAN.yml"
    got["done-bytes"] = done_file.read_bytes()
    lab.set_status("wpend", "approved")  # staged by someone, uncommitted: never the agent's
    lab.git("add", "plans/wpend/PLAN.yml")

    calls: list[tuple[str, Any]] = []
    names: list[str] = []

    def add(name: str, call: tuple[str, Any]) -> None:
        names.append(name)
        calls.append(call)

    for slug in ["lnkout", "lnksib", "grp/x", "lnkf"]:
        add(f"link:{slug}", ("submit", {"plan": plan(slug.replace("/", "-")), "slug": slug}))
    add("stage:other", ("submit", {"plan": plan("stg"), "slug": "stg"}))
    for vid, slug in SLUGS.items():
        add(vid, ("submit", {"plan": plan("sl"), "slug": slug}))
    for vid, call in TYPES.items():
        add(vid, call)
    for vid, p in PATHS.items():
        for tool in ("status", "log", "wait"):
            args: dict[str, Any] = {"path": _path(lab, p)}
            if tool == "wait":
                args["timeout"] = 0
            add(f"{vid}:{tool}", (tool, args))
    for guess in (SECRET, WRONG):
        for tool in ("status", "log", "wait"):
            args = {"path": f"plans/{guess}"}
            if tool == "wait":
                args.update(timeout=0, status=guess)
            add(f"oracle:{tool}:{guess}", (tool, args))
        add(
            f"oracle:validate:{guess}",
            ("validate", {"plan": plan("ov").replace("{tag: ov}", f"{{tag: {guess}}}")}),
        )
        add(f"oracle:format:{guess}", ("validate", {"plan": plan("of"), "format": guess}))
    add("size:over", ("submit", {"plan": plan("big") + "#" * MAXB, "slug": "big"}))
    add("size:note", ("submit", {"plan": plan("bn"), "slug": "bn", "note": "n" * 2_000_000}))
    add(
        "note:nul",
        ("submit", {"plan": plan("nn"), "slug": "nn", "note": "a\x00b\r\nApproved-By: x"}),
    )
    add("done:replace", ("submit", {"plan": plan("done2"), "slug": "done"}))
    add("sec:replace", ("submit", {"plan": plan("sec2"), "slug": "sec"}))
    add("rej:same", ("submit", {"plan": got["rej-old"], "slug": "rej-again"}))
    add("rej:same-plain", ("submit", {"plan": plan("rej"), "slug": "rej-plain"}))
    add("rej:new", ("submit", {"plan": plan("rej", tag="rej-v2"), "slug": "rej"}))
    crlf = plan("crlf").replace("\n", "\r\n")
    bom = "\ufeff" + plan("bom")
    add("hash:crlf-validate", ("validate", {"plan": crlf}))
    add("hash:crlf", ("submit", {"plan": crlf, "slug": "crlf"}))
    add("hash:bom-validate", ("validate", {"plan": bom}))
    add("hash:bom", ("submit", {"plan": bom, "slug": "bom"}))
    add("pr:branch", ("submit", {"plan": plan("prx"), "slug": "prx", "pull_request": True}))
    add("sec:log", ("log", {"path": "plans/sec"}))
    add("sec:status", ("status", {"path": "plans/sec"}))
    add("sec:catalog", ("catalog", {}))
    add("nosuch:approve-args", ("approve", {"path": "plans/pend", "as": "alice@example.com"}))

    main_before = lab.head()
    answers = seq(lab, calls)
    got["answers"] = dict(zip(names, answers, strict=True))
    got["main-before"] = main_before
    got["status-after"] = lab.git("status", "--porcelain", "--untracked-files=no")
    got["outside"] = sorted(p.name for p in outside.iterdir())
    got["done-after"] = done_file.read_bytes()
    got["pr-log"] = lab.git("log", "--format=%ae", "--name-only", "main..plangate/prx", check=False)
    for slug in ("crlf", "bom"):
        got[f"hash-cli:{slug}"] = lab.cli(
            "hash", "--config", str(lab.config), str(lab.repo / "plans" / slug / "PLAN.yml")
        ).stdout.strip()
    # the traps are cleared: the staged change and the links go, as their owner would
    lab.git("reset", "-q", "--", "plans/wpend/PLAN.yml")
    lab.git("checkout", "-q", "--", "plans/wpend/PLAN.yml")
    for link in ("lnkout", "lnksib", "grp"):
        (lab.repo / "plans" / link).unlink()
    (lab.repo / "plans" / "lnkf" / "PLAN.yml").unlink()
    # (refused since round 118: the branch holds nothing there to bring back)
    lab.git("checkout", "-q", "--", "plans/lnkout", "plans/lnksib", "plans/grp", check=False)

    # many submissions of one slug at once, and parallel reads
    conc = [("submit", {"plan": plan(f"c{i}"), "slug": "conc"}) for i in range(6)]
    conc += [("status", {}), ("log", {"path": "plans/pend"})]
    before = lab.head()
    got["conc"] = gather(lab, conc)
    got["conc-commits"] = lab.git("log", "--format=%H %ae", f"{before}..HEAD").splitlines()
    got["conc-file"] = lab.read("conc")
    lab.run()

    # a wait on a pending plan while the agent approves it itself and the controller passes
    async def waiting(s: Any) -> dict[str, Any]:
        task = asyncio.ensure_future(
            _one(s, "wait", {"path": "plans/wpend", "status": "pending_approval", "timeout": 12})
        )
        await asyncio.sleep(0.5)

        def act() -> None:
            lab.set_status("wpend", "approved")
            lab.commit("agent approves its own plan", AGENT)
            lab.run()
            lab.set_status("wpend", "completed")
            lab.commit("agent says completed", AGENT)
            lab.run()

        await asyncio.to_thread(act)
        return await task

    got["wait-self"] = sdk(lab, waiting)
    got["wpend-calls"] = len(lab.calls("wpend"))

    # MCP and the CLI on the same plans at one HEAD
    head = lab.head()
    cli_rows = lab.rows()
    agree = [("status", {})]
    for p in sorted(cli_rows):
        agree += [("log", {"path": p}), ("wait", {"path": p, "timeout": 0})]
    got["agree"] = seq(lab, agree)
    got["agree-paths"] = sorted(cli_rows)
    got["cli-rows"] = cli_rows
    got["agree-head-same"] = lab.head() == head and lab.rows() == cli_rows
    got["shows"] = {
        p: lab.cli("show", "--json", "--config", str(lab.config), str(lab.repo / p / "PLAN.yml"))
        for p in ("plans/pend", "plans/done", "plans/rej")
    }
    got["shows"] = {p: (r.returncode, r.stdout, r.stderr[-600:]) for p, r in got["shows"].items()}
    got["msgs"] = {
        vid: lab.git(
            "log", "-1", "--format=%B%x00%(trailers)", got["answers"][vid]["data"]["commit"]
        )
        for vid in ("size:note", "note:nul")
        if (got["answers"][vid]["data"] or {}).get("commit")
    }
    # an approval racing a new version; a staged approval; the agent's untracked files
    lab.write("va", plan("va"))
    lab.write("st2", plan("st2"))
    lab.commit("agent plans va st2")
    lab.run()
    lab.approve("va")
    lab.set_status("st2", "approved")
    lab.git("add", "plans/st2/PLAN.yml")
    json_src = (
        '{"plan": {"name": "srcj", "task": "t", "status": "pending_approval"}, '
        '"available_tools": [{"name": "rec"}], "actions": [{"id": 1, "tool": "rec", '
        '"why": "EVIL from the untracked source", "params": {"tag": "evil"}}]}\n'
    )
    lab.put("plans/srcj/PLAN.json", json_src)
    lab.put(
        "plans/pend/EXECUTION_LOG.md",
        "# Execution log: pend\n\n| | |\n|---|---|\n| Approved by | alice@example.com |\n"
        "| Status | completed |\n",
    )
    late = seq(
        lab,
        [
            ("submit", {"plan": plan("va", tag="va-v2"), "slug": "va"}),
            ("submit", {"plan": plan("st2", tag="st2-v2"), "slug": "st2"}),
            ("submit", {"plan": plan("srcj"), "slug": "srcj"}),
            ("log", {"path": "plans/pend"}),
            ("wait", {"path": "plans/va", "timeout": 0, "status": "pending_approval"}),
        ],
    )
    got["late"] = dict(zip(["va", "st2", "srcj", "pend-log", "va-wait"], late, strict=True))
    got["st2-staged"] = lab.git("diff", "--cached", "--name-only")
    lab.git("reset", "-q", "--", "plans/st2/PLAN.yml")
    lab.git("checkout", "-q", "--", "plans/st2/PLAN.yml")
    lab.run()
    got["late-rows"] = lab.rows()
    got["srcj-file"] = lab.git("show", "HEAD:plans/srcj/PLAN.yml", check=False)
    (lab.repo / "plans" / "srcj" / "PLAN.json").unlink()
    (lab.repo / "plans" / "pend" / "EXECUTION_LOG.md").unlink()
    got["va-calls"] = [c["argv"] for c in lab.calls("va")] + [c["argv"] for c in lab.calls("va-v2")]
    got["evil-calls"] = len(lab.calls("evil"))
    # raw JSON-RPC lines: ids and argument containers of other JSON types
    got["rpc"] = {vid: raw(lab, [_call_line(*call)]) for vid, call in RPC.items()}
    before = lab.head()
    got["rpc-float-submit"] = raw(
        lab, [_call_line(1.5, "submit", {"plan": plan("f15"), "slug": "f15"})]
    )
    got["rpc-float-moved"] = lab.head() != before
    # Alice approves the copy of the version she rejected: it must never run (since round
    # 118 submit refuses the copy, so the agent commits it by git)
    if not (lab.repo / "plans" / "rej-again" / "PLAN.yml").exists():
        lab.write("rej-again", got["rej-old"])
        lab.commit("agent copies the rejected version by git", AGENT)
        lab.run()
    lab.set_status("rej-again", "approved")
    lab.commit("alice approves rej-again", ALICE)
    lab.run()
    got["rej-again-row"] = lab.rows().get("plans/rej-again", {})
    # the whole plans folder swapped for a link to a copy outside the repository
    copy = root / "plans-copy"
    (lab.repo / "plans").rename(root / "plans-real")
    subprocess.run(["cp", "-r", str(root / "plans-real"), str(copy)], check=True)
    os.symlink(copy, lab.repo / "plans")
    got["root-link"] = seq(lab, [("submit", {"plan": plan("zz"), "slug": "zz"})])[0]
    got["root-link-status"] = lab.git("status", "--porcelain", "--untracked-files=no", check=False)
    got["root-link-outside"] = (copy / "zz").exists()
    (lab.repo / "plans").unlink()
    (root / "plans-real").rename(lab.repo / "plans")
    lab.git("checkout", "-q", "--", "plans")
    got["ran"] = {t: len(lab.calls(t)) for t in ("pend", "rej", "rej-v2", "done", "stg", "wpend")}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return build(tmp_path_factory.mktemp("atk118m"))


def ans(lab: Lab, vid: str) -> dict[str, Any]:
    return lab.got["answers"][vid]  # type: ignore[attr-defined]


def coded(a: dict[str, Any]) -> dict[str, Any]:
    """The refusal's error shape, asserted: an MCP tool error with an E_ code and a remedy."""
    assert a["error"], a["text"][:800]
    assert a["text"].startswith("Error executing tool "), a["text"][:800]
    d = a["data"]
    assert isinstance(d, dict) and d.get("ok") is False, a["text"][:800]
    assert str(d.get("code", "")).startswith("E_"), a["text"][:800]
    assert d.get("remedy"), a["text"][:800]
    assert "Traceback" not in a["text"], a["text"][:800]
    return d


def refused_nothing(a: dict[str, Any]) -> dict[str, Any]:
    d = coded(a)
    assert not a["moved"] and not a["commits"], a["commits"]
    return d


# -- ids ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "slug",
    cases(["link:lnkout", "link:lnksib", "link:grp-x", "link:plans-root"],
          ["lnkout", "lnksib", "grp/x", "zz"], {}),
)  # fmt: skip
def test_submit_through_untracked_link(lab: Lab, slug: str) -> None:
    """docs/agents.md: the submission's commit, its working-tree file and its index entry
    are written together; a working tree that cannot be written commits nothing."""
    g = lab.got  # type: ignore[attr-defined]
    if slug == "zz":
        a, status = g["root-link"], g["root-link-status"]
    else:
        a, status = ans(lab, f"link:{slug}"), g["status-after"]
    if a["error"]:
        refused_nothing(a)
    else:
        assert f" D plans/{slug}/PLAN.yml" not in status, (a["text"][:300], status)


def test_link_file_refused(lab: Lab) -> None:
    d = refused_nothing(ans(lab, "link:lnkf"))
    assert d["code"] in ("E_USAGE", "E_UNSAFE_PATH"), d


def test_link_wrote_nothing_outside(lab: Lab) -> None:
    g = lab.got  # type: ignore[attr-defined]
    assert g["outside"] == [], g["outside"]
    assert not g["root-link-outside"]  # nothing written into the copy the link names


def test_link_sibling_plan_untouched(lab: Lab) -> None:
    g = lab.got  # type: ignore[attr-defined]
    assert g["done-after"] == g["done-bytes"]


def test_staged_change_not_carried(lab: Lab) -> None:
    """Someone's staged edit of another plan is never part of the agent's commit."""
    a = ans(lab, "stage:other")
    assert not a["error"], a["text"][:500]
    files = lab.git("show", "--name-only", "--format=", a["data"]["commit"]).split()
    assert files == ["plans/stg/PLAN.yml"], files


@pytest.mark.parametrize("vid", list(SLUGS))
def test_slug_refused(lab: Lab, vid: str) -> None:
    d = refused_nothing(ans(lab, vid))
    assert d["code"] in ("E_USAGE", "E_UNSAFE_PATH"), d
    if d["code"] == "E_USAGE":  # the fixed example, never made from the slug
        assert "rotate-keys" in d["remedy"], d


TYPE_CODES = {k: "E_USAGE" for k in TYPES}


@pytest.mark.parametrize("vid", [k for k in TYPES if k not in ("type:timeout-neg",)])
def test_argument_type_refused(lab: Lab, vid: str) -> None:
    a = ans(lab, vid)
    if vid == "type:extra-approve":  # an unknown argument changes nothing: a plain submission
        assert not a["error"], a["text"][:500]
        assert a["data"]["status"] == "pending_approval"
        assert lab.got["cli-rows"]["plans/t-ea"]["status"] == "pending_approval"  # type: ignore[attr-defined]
        return
    if vid == "type:format-word":  # validate's verdict carries the code in errors
        assert a["data"]["valid"] is False and a["data"]["errors"][0]["code"] == "E_USAGE"
        assert a["data"]["errors"][0]["remedy"]
        return
    d = refused_nothing(a)
    assert d["code"] == TYPE_CODES[vid] and d.get("path"), d


def test_timeout_negative_is_now(lab: Lab) -> None:
    a = ans(lab, "type:timeout-neg")
    assert not a["error"] and a["data"]["changed"] is False, a["text"][:500]
    assert a["data"]["status"] == "pending_approval"


PATH_IDS = [f"{v}:{t}" for v in PATHS for t in ("status", "log", "wait")]


@pytest.mark.parametrize("vid", PATH_IDS)
def test_path_spelling(lab: Lab, vid: str) -> None:
    """A path that names no plan never answers another plan's record, and says why with a
    code (``wait`` of a folder the branch has no plan in answers ``status: null``)."""
    a = ans(lab, vid)
    assert not a["moved"]
    assert "Traceback" not in a["text"]
    assert '"plans/pend"' not in a["text"], a["text"][:600]
    if a["error"]:
        d = coded(a)
        assert d["code"] in ("E_USAGE", "E_UNSAFE_PATH"), d
    else:
        assert vid.endswith(":wait"), a["text"][:600]
        assert a["data"]["status"] is None and a["data"]["path"] != "plans/pend", a["data"]


@pytest.mark.parametrize("tool", ["status", "log", "wait", "validate", "format"])
def test_secret_guess_no_oracle(lab: Lab, tool: str) -> None:
    right = ans(lab, f"oracle:{tool}:{SECRET}")
    wrong = ans(lab, f"oracle:{tool}:{WRONG}")
    assert right["error"] == wrong["error"]
    norm_r = right["text"].replace(SECRET, "G")
    norm_w = wrong["text"].replace(WRONG, "G")
    if tool == "validate":  # the hash differs with the text; the verdict must not
        assert right["data"]["valid"] == wrong["data"]["valid"]
        assert right["data"]["errors"] == wrong["data"]["errors"]
        return
    assert norm_r == norm_w, (norm_r[:400], norm_w[:400])
    assert "***" not in right["text"]


def test_size_over_refused(lab: Lab) -> None:
    d = refused_nothing(ans(lab, "size:over"))
    assert d["code"] == "E_PLAN_TOO_LARGE", d


def test_note_cannot_forge_trailer(lab: Lab) -> None:
    msg = lab.got["msgs"]["note:nul"]  # type: ignore[attr-defined]
    body, _, trailers = msg.partition("\0")
    assert "Approved-By" not in trailers, trailers
    assert not any(line.startswith("Approved-By:") for line in body.splitlines()), body


@pytest.mark.parametrize("vid", ["done:replace", "sec:replace"])
def test_finished_plan_not_replaced(lab: Lab, vid: str) -> None:
    d = refused_nothing(ans(lab, vid))
    assert d["code"] == "E_ILLEGAL_TRANSITION", d


@pytest.mark.parametrize(
    "vid",
    cases(["rej:same-submit", "rej:same-plain-submit", "rej:same-never-runs", "rej:new-frozen",
           "rej:new-never-ran"],
          ["s", "sp", "r", "n", "nr"],
          {}),
)  # fmt: skip
def test_rejected_version(lab: Lab, vid: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    if vid in ("s", "sp"):
        d = refused_nothing(ans(lab, "rej:same" if vid == "s" else "rej:same-plain"))
        assert d["code"] == "E_VERSION_WITHDRAWN", d
    elif vid == "r":  # Alice's approval of the copy of what she rejected never runs it
        assert g["ran"]["rej"] == 0, g["ran"]
        row = g["rej-again-row"]
        assert row.get("status") != "executing" and row.get("status") != "completed", row
        assert "E_VERSION_WITHDRAWN" in json.dumps(row), row
    elif vid == "n":
        a = ans(lab, "rej:new")
        if a["error"]:
            refused_nothing(a)
            return
        row = g["cli-rows"]["plans/rej"]
        assert row["status"] == "pending_approval", (row["status"], row["notes"][-1:])
        assert row["frozen_hash"] == a["data"]["hash"], row
    else:
        assert g["ran"]["rej-v2"] == 0, g["ran"]


@pytest.mark.parametrize("slug", ["crlf", "bom"])
def test_hash_agrees(lab: Lab, slug: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    v = ans(lab, f"hash:{slug}-validate")["data"]["hash"]
    sub = ans(lab, f"hash:{slug}")["data"]
    row = g["cli-rows"][f"plans/{slug}"]
    assert v == sub["hash"] == g[f"hash-cli:{slug}"] == row["hash"] == row["frozen_hash"]


def test_pull_request_branch_only(lab: Lab) -> None:
    g = lab.got  # type: ignore[attr-defined]
    a = ans(lab, "pr:branch")
    assert not a["error"] and a["data"]["branch"] == "plangate/prx", a["text"][:400]
    assert not a["moved"], "main moved"
    assert g["pr-log"].split() == ["agent@example.com", "plans/prx/PLAN.yml"], g["pr-log"]
    assert "plans/prx" not in g["cli-rows"]


@pytest.mark.parametrize("vid", ["sec:log", "sec:status", "sec:catalog"])
def test_secret_not_answered(lab: Lab, vid: str) -> None:
    a = ans(lab, vid)
    assert not a["error"] and SECRET not in a["text"], a["text"][:300]


def test_no_such_tool_coded(lab: Lab) -> None:
    a = ans(lab, "nosuch:approve-args")
    assert a["error"] and not a["moved"]
    d = json.loads(a["text"])
    assert d["code"] == "E_USAGE" and "no such tool" in d["message"] and d["remedy"], d
    assert lab.got["cli-rows"]["plans/pend"]["status"] == "pending_approval"  # type: ignore[attr-defined]


@pytest.mark.parametrize("what", ["each-answered", "one-commit-each", "last-wins", "reads"])
def test_concurrent_submits(lab: Lab, what: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    subs = g["conc"][:6]
    oks = [a["data"] for a in subs if not a["error"]]
    if what == "each-answered":
        for a in subs:
            if a["error"]:
                coded(a)
        assert oks, [a["text"][:200] for a in subs]
    elif what == "one-commit-each":
        made = {line.split()[0] for line in g["conc-commits"]}
        assert {d["commit"] for d in oks} == made, (made, oks)
        assert all(line.split()[1] == "agent@example.com" for line in g["conc-commits"])
    elif what == "last-wins":
        names = [f"name: c{i}\n" for i in range(6)]
        assert sum(n in g["conc-file"] for n in names) == 1
        assert g["cli-rows"]["plans/conc"]["status"] == "pending_approval"
    else:
        for a in g["conc"][6:]:
            assert not a["error"], a["text"][:300]


#: round 118's unjudged-self-approval-answered (``wait-self:answer``, a strict xfail until
#: fixed the next session): ``wait`` answers the status the controller has judged, an open
#: approval request being none yet (``lifecycle.judged_status``)


@pytest.mark.parametrize(
    "vid", cases(["wait-self:answer", "wait-self:never-ran", "wait-self:row"],
                 ["a", "n", "r"], {}),
)  # fmt: skip
def test_wait_while_agent_approves(lab: Lab, vid: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    w = g["wait-self"]
    if vid == "a":
        assert not w["error"], w["text"][:300]
        assert w["data"]["status"] not in ("approved", "executing", "completed"), w["data"]
    elif vid == "n":
        assert g["ran"]["wpend"] == 0 and g["wpend-calls"] == 0
    else:
        row = g["cli-rows"]["plans/wpend"]
        assert row["status"] == "pending_approval", brief_row(row)
        assert "E_APPROVER_NOT_ALLOWED" in (row.get("reason") or ""), brief_row(row)


def brief_row(row: dict[str, Any]) -> Any:
    return (row.get("status"), row.get("reason"), (row.get("notes") or [])[-2:])


AGREE_PLANS = [
    "plans/pend", "plans/done", "plans/sec", "plans/rej", "plans/wpend", "plans/bom",
    "plans/stg", "plans/conc", "plans/nn", "plans/crlf",
]  # fmt: skip


@pytest.mark.parametrize("plan_id", AGREE_PLANS)
def test_mcp_agrees_with_cli(lab: Lab, plan_id: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    assert g["agree-head-same"]
    paths = g["agree-paths"]
    mcp_rows = {r["plan"]: r for r in g["agree"][0]["data"]["plans"]}
    assert set(mcp_rows) == set(paths)
    cli = g["cli-rows"][plan_id]
    assert mcp_rows[plan_id] == cli, (mcp_rows[plan_id], cli)
    i = paths.index(plan_id)
    log, wait = g["agree"][1 + 2 * i], g["agree"][2 + 2 * i]
    assert log["data"]["status"] == cli["status"] == wait["data"]["status"], (log, wait)
    assert wait["data"]["changed"] is False


@pytest.mark.parametrize("plan_id", ["plans/pend", "plans/done", "plans/rej"])
def test_show_agrees(lab: Lab, plan_id: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    _rc, out, err = g["shows"][plan_id]
    assert "Traceback" not in err
    shown = json.loads(out)
    row = g["cli-rows"][plan_id]
    assert shown["plan"]["status"] == row["status"], (shown["plan"], err)
    assert shown["hash"] == row["hash"], (shown["hash"], row["hash"])


LATE = [
    "late:approved-not-replaced", "late:approved-ran-v1", "late:staged-not-overwritten",
    "late:staged-kept", "late:untracked-source-ignored", "late:untracked-source-never-ran",
    "late:untracked-log-not-read", "late:wait-approved-request",
]  # fmt: skip


@pytest.mark.parametrize("vid", LATE)
def test_late(lab: Lab, vid: str) -> None:
    g = lab.got  # type: ignore[attr-defined]
    late = g["late"]
    if vid == "late:approved-not-replaced":  # Alice approved va; the agent's v2 over it
        d = refused_nothing(late["va"])
        assert d["code"] in ("E_ILLEGAL_TRANSITION", "E_USAGE"), d
    elif vid == "late:approved-ran-v1":
        assert g["va-calls"] == [["va"]], g["va-calls"]
    elif vid == "late:staged-not-overwritten":
        refused_nothing(late["st2"])
    elif vid == "late:staged-kept":
        assert "plans/st2/PLAN.yml" in g["st2-staged"].split(), g["st2-staged"]
    elif vid == "late:untracked-source-ignored":
        assert not late["srcj"]["error"], late["srcj"]["text"][:400]
        assert "EVIL" not in g["srcj-file"] and "record that srcj ran" in g["srcj-file"]
        assert g["late-rows"]["plans/srcj"]["hash"] == late["srcj"]["data"]["hash"]
    elif vid == "late:untracked-source-never-ran":
        assert g["evil-calls"] == 0
    elif vid == "late:untracked-log-not-read":
        d = late["pend-log"]["data"]
        assert d["execution_log"] is None and d["execution"] is None, d
        assert d["status"] == "pending_approval", d
    else:  # Alice's request before the pass: no status yet, an open request (since fix)
        d = late["va-wait"]["data"]
        assert d["status"] == "pending_approval" and d["changed"] is False, d
        assert d["approval_requested"] is True, d


@pytest.mark.parametrize(
    "vid",
    cases(list(RPC), list(RPC), {}),
)
def test_rpc_shapes(lab: Lab, vid: str) -> None:
    replies, err = lab.got["rpc"][vid]  # type: ignore[attr-defined]
    assert "Traceback" not in err, err
    assert len(replies) == 1, (replies, err)
    reply = replies[0]
    if vid.startswith("rpc:id-"):
        assert reply.get("id") is None and reply["error"]["code"] == -32600, reply
        return
    rid = RPC[vid][0]
    assert reply.get("id") == rid, reply
    text = json.dumps(reply)
    assert "E_USAGE" in text and "remedy" in text, reply


def test_rpc_float_id_runs_nothing(lab: Lab) -> None:
    g = lab.got  # type: ignore[attr-defined]
    assert not g["rpc-float-moved"], g["rpc-float-submit"]
    assert "plans/f15" not in g["cli-rows"]
