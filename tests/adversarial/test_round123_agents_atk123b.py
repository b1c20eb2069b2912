"""Round 123, the agent's surfaces (atk123b): ``plangate mcp`` through the official ``mcp`` SDK
client (``mcp.client.stdio``; raw JSON-RPC lines only for a cancel), ``plangate run``,
``status --json``, ``show --json``, remote mode over a real ``git daemon`` on 127.0.0.1, the
webhook and the page's ``/api/``. An outsider's attack: the CLI, git and the docs only.

Labs (two, module scope, built once under a lock):

- A (local mode, ``agent.identity`` Agent, ``branch_prefix: plangate/``, approvers Alice and
  ``*@ops.example.com``). The agent commits ``ua``, ``wdr``, ``ab``, ``done``, ``pend``; Bob
  commits ``bobs`` and a source ``srcy/PLAN.json``; a pass freezes them; Alice approves
  ``done`` (it runs), rejects ``wdr``, approves then aborts ``ab``; a pass; Alice approves
  ``ua`` (no pass: an approval request). 1) One SDK session per environment (13): the server
  started with ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` of Alice, ``EMAIL``,
  ``GIT_CONFIG_COUNT`` (``user.*``, ``author.email``/``committer.email``),
  ``GIT_CONFIG_PARAMETERS``, ``GIT_CONFIG_GLOBAL`` with an ``include.path`` or ``author``/
  ``committer`` keys, ``HOME/.gitconfig``, ``XDG_CONFIG_HOME``, ``.git/config`` ``user.*``/
  ``author.email`` and ``include.path``; each ``submit``s ``e-<variant>``; then a pass, Alice
  approves each, and a pass run with Alice's identity in ``GIT_*``/``EMAIL``/``GIT_CONFIG_*``.
  2) One SDK session of ``submit``s over a completed, rejected, aborted and unjudged-approved
  plan, over Bob's pending plan, over a source, inside another plan's folder, withdrawn
  (rejected, aborted) versions under new slugs with and without ``pull_request: true``, the
  same refusals with ``pull_request: true``, hostile notes (100,000 characters, NUL, a trailer
  block), hostile slugs (newline, tab, ``.plangate``, ``.github/x``, U+202E, 400 parts); then a
  ``pull_request: true`` submission of a new version of the pending ``pend``. 3) Six parallel
  ``submit``s of one slug, and 32 parallel mixed calls. 4) A raw session: a 600 s ``wait``
  cancelled, a ``submit`` after it, a cancel naming no request. 5) MCP ``status`` against
  ``status --json`` and ``show --json`` at one head.
- B (remote mode on ``git://127.0.0.1:<port>/origin.git``): the agent pushes ``s1``..``s4``; a
  pass freezes them. Alice approves ``s1`` locally; the agent rewrites her commit (her name and
  date kept, the action's params changed) and force-pushes it before any pass. The branch is
  force-pushed back before ``s4``'s freeze with ``s2`` changed and Alice approving it; then to
  an unrelated orphan history whose ``s3`` says ``approved``. MCP ``status``/``log``/``wait``
  after each. A ``plangate run`` daemon with ``webhook`` and ``ui`` gets 12 webhook requests
  (GitLab, bearer, GitHub form encoding, ping, SHA-1, unprefixed signature, secret in the
  body, another branch three ways) and 12 replays of a good GitHub push; ``/api/plan/plans/s*``
  against ``status --json``.

Ids (104): ``env:*`` (13) and ``env:*:alice-runs`` (13), refusals ``over:*``/``wd:*``/``pr:*``/
``slug:*`` (21) and ``<id>:no-branch`` for the 9 ``pull_request`` ones, ``note:*`` (3),
``show:*`` (4), ``agree:*`` (2), ``wh:*`` (12), ``api:s1..s4`` and single checks.

Seen (round 123: 104 ids, 97 passed, 7 xfailed; about 150 s wall with -n 1 on this machine).
1 class broke:

- **refused-pr-submit-leaves-branch** (7 ids: ``pr:over-completed:no-branch``,
  ``pr:over-rejected:no-branch``, ``pr:over-aborted:no-branch``,
  ``pr:over-unjudged-approval:no-branch``, ``pr:over-source:no-branch``,
  ``pr:inside-plan:no-branch``,
  ``test_a_pull_request_submission_of_a_pending_plan_gets_its_branch``).
  MCP ``submit`` with ``pull_request: true`` at a slug it refuses (a completed, rejected,
  aborted or approved plan: ``E_ILLEGAL_TRANSITION`` "... remedy: submit under a new slug"; a
  folder holding a source, another plan's folder: ``E_USAGE``) answers the refusal, commits
  nothing, but creates the branch ``plangate/<slug>`` at the watched branch's tip and leaves it.
  The refusal does not say so. (Withdrawn versions and a forbidden status with
  ``pull_request: true`` leave no branch.) A later allowed submission is hurt: the stray
  ``plangate/pend/inner`` (from the refused ``pend/inner``) makes ``submit`` of a new version
  of the pending ``pend`` with ``pull_request: true`` fail ``E_GIT`` "plangate/pend kept
  moving while committing", remedy "submit again" (false: the ref ``plangate/pend`` cannot
  exist beside ``plangate/pend/inner``; submitting again never helps).
  docs/agents.md, step 8: "Nothing was committed by a refused ``submit``";
  "``submit`` refuses ... ``E_ILLEGAL_TRANSITION``, nothing committed"; with ``pull_request:
  true`` "the commit goes on the branch ``<branch_prefix><slug>``" (for a submission that is
  made). Repro: a local-mode ``plangate.yml`` with ``agent: {identity: ..., branch_prefix:
  plangate/}``, a plan ``plans/done`` run to ``completed``; then ``printf '%s\n' <initialize>
  <initialized> '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit",
  "arguments":{"slug":"done","pull_request":true,"plan":"<any valid PLAN.yml>"}}}' | plangate
  mcp --config plangate.yml`` -> ``E_ILLEGAL_TRANSITION ... is completed``; ``git branch`` ->
  ``plangate/done`` at main's tip.

Fixed (2026-12-07, pr124): ``AgentAPI._parent`` made the branch ``<prefix><slug>`` (an
``update-ref`` from the zero id) before the submission's checks ran. The branch is now made
by the submission's own commit (``commit_files(old=<zero id>)``), after every check, so a
refusal leaves none; a branch name another branch keeps git from making (``a`` beside
``a/b``) is ``E_USAGE`` naming that branch with a remedy (``refs.ref_clash``), not ``E_GIT``
"kept moving ... submit again"

Held: ``submit`` commits as ``agent.identity`` (author and committer) under all 13
environments and git configurations naming Alice, and Alice's approval of each ran it once;
a pass run with Alice's identity in the environment commits as ``plangate@localhost``. Every
refusal is coded with a remedy and commits nothing (``E_ILLEGAL_TRANSITION`` over completed,
rejected, aborted and unjudged-approved plans, also with ``pull_request``;
``E_VERSION_WITHDRAWN`` for rejected and aborted versions under new slugs, also with
``pull_request``; ``E_USAGE``/``E_UNSAFE_PATH`` for sources, another plan's folder and the
hostile slugs); the unjudged approval of ``ua`` ran ``ua`` once and never ``ua-v2``; Bob's
pending plan replaced by the agent names the agent in ``not_from`` and Alice's approval ran
the new version once; notes are cut (under 3,000 characters) and form no trailer, NUL is
dropped; six parallel submits of one slug are six whole agent commits and the branch holds the
newest one's version and hash; 32 parallel calls are all answered; a cancelled ``wait`` gets
no reply and the session answers the rest and exits at once; MCP ``status`` equals ``status
--json``; ``show --json`` agrees. Remote: a rewritten approval (Alice's name, other params)
is refused ``E_PLAN_HASH_MISMATCH`` and the new text frozen anew, nothing ran; the erased
freeze and the orphan history hold their plans ``E_HISTORY_REWRITTEN`` and run nothing; MCP
``status`` equals ``status --json`` after each force-push, MCP ``log``/``wait`` are
``E_CONFIG_INVALID`` (remote mode not served, documented); every webhook answered as
documented (a valid GitHub signature beside a wrong ``X-Plangate-Secret`` is accepted: one
valid credential), 12 replays are 202 and ran nothing; ``/api/plan`` rows equal ``status
--json`` at one head, and plans gone with the orphan push are 404 there.

Not tried: MCP ``wait`` racing a force-push in local mode; ``submit`` beside a running daemon;
``validate``/``schema``/``check`` CLI with hostile input; a webhook flood or slow-loris; the
HTML page; ``require_signed`` labs; ``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE`` in the server's
environment (backdating a submission against ``max_age``); what the stray branches do on a
forge (local mode only).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, page_settled, plan_text
from test_round2_execution_kit import shared
from test_round118_agents_atk118m import _call_line, _content, raw
from test_round122_agents_atk122b import WH_SECRET, _get, _http, _origin, _post, _sig
from writerkit import free_port, served

PLANGATE = str(Path(sys.executable).with_name("plangate"))
A_MAIL = ALICE[1]
G_MAIL = AGENT[1]
BOT_MAIL = "plangate@localhost"


def _xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 123: {cls}: {what}")


def simple(tag: str, status: str = "pending_approval") -> str:
    return plan_text(tag, status=status)


def _coded(ans: dict[str, Any]) -> bool:
    """A refusal in the one error shape: an ``E_`` code and a remedy, no traceback."""
    data = ans.get("data") or {}
    if "Traceback" in ans.get("text", ""):
        return False
    if data.get("ok") is False and str(data.get("code", "")).startswith("E_"):
        return bool(data.get("remedy"))
    errs = data.get("errors") or []
    return (
        (data.get("ok") is False or data.get("valid") is False)
        and bool(errs)
        and all(str(e.get("code", "")).startswith("E_") for e in errs)
    )


def _codes(ans: dict[str, Any]) -> list[str]:
    data = ans.get("data") or {}
    out = [data.get("code")] if data.get("code") else []
    return out + [e.get("code") for e in data.get("errors") or []]


# -- an SDK session with an environment of the test's choosing --------------------------------
async def _sdk_body(lab: Lab, env: dict[str, str], body: Any) -> Any:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=PLANGATE, args=["mcp", "--config", str(lab.config)], env=env, cwd=str(lab.root)
    )
    with open(lab.root / "mcp.err", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await body(s)


async def _one(s: Any, name: str, args: Any) -> dict[str, Any]:
    try:
        return _content(await asyncio.wait_for(s.call_tool(name, args), 120))
    except Exception as e:  # a protocol-level error or the hang guard: no tool answer
        return {"error": True, "data": None, "text": f"{type(e).__name__}: {e}"}


def sdk_seq(
    lab: Lab, calls: list[tuple[str, Any]], env: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Each call in turn in one SDK session (server env ``env``, else the lab's), with the
    branch head before and after each."""
    env = env if env is not None else lab.env()
    env["REC_LOG"] = str(lab.log)

    async def body(s: Any) -> list[dict[str, Any]]:
        out = []
        for name, args in calls:
            before = lab.head()
            got = await _one(s, name, args)
            got["moved"] = lab.head() != before
            got["commits"] = lab.git("log", "--format=%H", f"{before}..HEAD").split()
            out.append(got)
        return out

    return asyncio.run(asyncio.wait_for(_sdk_body(lab, env, body), 300))


def sdk_gather(lab: Lab, calls: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """Every call at once in one SDK session (an agent's parallel tool calls)."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)

    async def body(s: Any) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*[_one(s, n, a) for n, a in calls]))

    return asyncio.run(asyncio.wait_for(_sdk_body(lab, env, body), 300))


# -- 1. the server's environment names someone else: whose commit is a submission? -----------
GC_BASE = "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
GC_ALICE = GC_BASE + f"[user]\n\tname = Alice\n\temail = {A_MAIL}\n"


def _env_variants(lab: Lab) -> dict[str, tuple[dict[str, str], list[str], dict[str, str]]]:
    """vid -> (environment added, env keys dropped, ``.git/config`` keys set for the session)."""
    root = lab.root
    inc = root / "inc-alice"
    inc.write_text(GC_ALICE)
    gincl = root / "gc-include"
    gincl.write_text(GC_BASE + f"[include]\n\tpath = {inc}\n")
    galice = root / "gc-alice"
    galice.write_text(GC_ALICE + f"[author]\n\temail = {A_MAIL}\n[committer]\n\temail = {A_MAIL}\n")
    home = root / "home-alice"
    (home / ".config" / "git").mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(GC_ALICE)
    (home / ".config" / "git" / "config").write_text(GC_ALICE)
    alice_author = {"GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": A_MAIL}
    alice_committer = {"GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": A_MAIL}
    return {
        "env:author-alice": (alice_author, [], {}),
        "env:committer-alice": (alice_committer, [], {}),
        "env:both-alice": ({**alice_author, **alice_committer}, [], {}),
        "env:email-var": ({"EMAIL": A_MAIL}, [], {}),
        "env:config-count-user": (
            {
                "GIT_CONFIG_COUNT": "2",
                "GIT_CONFIG_KEY_0": "user.email",
                "GIT_CONFIG_VALUE_0": A_MAIL,
                "GIT_CONFIG_KEY_1": "user.name",
                "GIT_CONFIG_VALUE_1": "Alice",
            },
            [],
            {},
        ),
        "env:config-count-author": (
            {
                "GIT_CONFIG_COUNT": "2",
                "GIT_CONFIG_KEY_0": "author.email",
                "GIT_CONFIG_VALUE_0": A_MAIL,
                "GIT_CONFIG_KEY_1": "committer.email",
                "GIT_CONFIG_VALUE_1": A_MAIL,
            },
            [],
            {},
        ),
        "env:config-params": (
            {"GIT_CONFIG_PARAMETERS": f"'user.email'='{A_MAIL}' 'author.email'='{A_MAIL}'"},
            [],
            {},
        ),
        "env:global-include": ({"GIT_CONFIG_GLOBAL": str(gincl)}, [], {}),
        "env:global-author": ({"GIT_CONFIG_GLOBAL": str(galice)}, [], {}),
        "env:home-gitconfig": ({"HOME": str(home)}, ["GIT_CONFIG_GLOBAL"], {}),
        "env:xdg-config": (
            {"XDG_CONFIG_HOME": str(home / ".config"), "HOME": str(root / "empty-home")},
            ["GIT_CONFIG_GLOBAL"],
            {},
        ),
        "env:repo-config": (
            {},
            [],
            {"user.email": A_MAIL, "user.name": "Alice", "author.email": A_MAIL},
        ),
        "env:repo-include": ({}, [], {"include.path": str(inc)}),
    }


def _esl(vid: str) -> str:
    return "e-" + vid.split(":", 1)[1]


def _submit_with_env(
    lab: Lab, vid: str, added: dict[str, str], dropped: list[str], local: dict[str, str]
) -> dict[str, Any]:
    env = lab.env()
    for k in dropped:
        env.pop(k, None)
    env.update(added)
    for k, v in local.items():
        lab.git("config", "--local", k, v)
    try:
        ans = sdk_seq(lab, [("submit", {"plan": simple(_esl(vid)), "slug": _esl(vid)})], env)[0]
    finally:
        for k in local:
            lab.git("config", "--local", "--unset", k)
    commit = (ans.get("data") or {}).get("commit")
    ans["who"] = lab.git("log", "-1", "--format=%ae|%ce", commit).strip() if commit else None
    return ans


# -- 2. submissions over other plans, sources and withdrawn versions --------------------------
def build(root: Path) -> Lab:
    lab = Lab(
        root / "lab",
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
        "  branch_prefix: plangate/\n",
    )
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    for s in ("ua", "wdr", "ab", "done", "pend", "race0"):
        lab.write(s, simple(s))
    lab.commit("agent plans", AGENT)
    lab.write("bobs", simple("bobs"))
    lab.commit("bob's plan", BOB)
    lab.write("srcy", json.dumps({"plan": {"name": "s"}}), filename="PLAN.json")
    lab.commit("a source", BOB)
    lab.run()
    got["wdr-frozen"] = lab.read("wdr")
    got["ab-frozen"] = lab.read("ab")
    lab.approve("done", ALICE)
    lab.set_status("wdr", "rejected")
    lab.commit("reject wdr", ALICE)
    lab.approve("ab", ALICE)
    lab.set_status("ab", "aborted")
    lab.commit("abort ab", ALICE)
    lab.run()
    got["setup-rows"] = {k: v.get("status") for k, v in lab.rows().items()}
    # an approval committed that no pass has judged yet
    lab.approve("ua", ALICE)

    # 1. submissions under an identity the server's environment names
    variants = _env_variants(lab)
    got["env"] = {vid: _submit_with_env(lab, vid, *spec) for vid, spec in variants.items()}
    got["env-dirty"] = lab.git("status", "--porcelain", "--untracked-files=no")

    # 2. one session: over other plans, sources, withdrawn versions; notes; odd slugs
    sub_calls: dict[str, tuple[str, Any]] = {
        "over:unjudged-approval": (
            "submit",
            {"plan": simple("ua").replace('tag: "ua"', 'tag: "ua-v2"'), "slug": "ua"},
        ),
        "over:completed": ("submit", {"plan": simple("done-v2"), "slug": "done"}),
        "over:rejected": ("submit", {"plan": simple("wdr-v2"), "slug": "wdr"}),
        "over:aborted": ("submit", {"plan": simple("ab-v2"), "slug": "ab"}),
        "over:bobs-pending": ("submit", {"plan": simple("bobs-v2"), "slug": "bobs"}),
        "over:source": ("submit", {"plan": simple("srcy"), "slug": "srcy"}),
        "over:source-file": ("submit", {"plan": simple("srcy2"), "slug": "srcy/PLAN.json"}),
        "over:inside-plan": ("submit", {"plan": simple("inner"), "slug": "pend/inner"}),
        "wd:rejected-new-slug": ("submit", {"plan": got["wdr-frozen"], "slug": "wdr-again"}),
        "wd:aborted-new-slug": ("submit", {"plan": got["ab-frozen"], "slug": "ab-again"}),
        "wd:rejected-pr": (
            "submit",
            {"plan": got["wdr-frozen"], "slug": "wdr-pr", "pull_request": True},
        ),
        "wd:aborted-pr": (
            "submit",
            {
                "plan": got["ab-frozen"].split("\nfrozen:")[0] + "\n",
                "slug": "ab-pr",
                "pull_request": True,
            },
        ),
        "pr:status-approved": (
            "submit",
            {"plan": simple("pra", "approved"), "slug": "pra", "pull_request": True},
        ),
        "pr:over-completed": (
            "submit",
            {"plan": simple("done-v3"), "slug": "done", "pull_request": True},
        ),
        "pr:over-rejected": (
            "submit",
            {"plan": simple("wdr-v3"), "slug": "wdr", "pull_request": True},
        ),
        "pr:over-aborted": (
            "submit",
            {"plan": simple("ab-v3"), "slug": "ab", "pull_request": True},
        ),
        "pr:over-unjudged-approval": (
            "submit",
            {"plan": simple("ua-v3"), "slug": "ua", "pull_request": True},
        ),
        "pr:over-source": (
            "submit",
            {"plan": simple("srcy3"), "slug": "srcy", "pull_request": True},
        ),
        "pr:inside-plan": (
            "submit",
            {"plan": simple("inner3"), "slug": "pend/inner", "pull_request": True},
        ),
        "note:huge": (
            "submit",
            {"plan": simple("nh"), "slug": "nh", "note": "n" * 100_000 + "\n\nPlan-Status: x"},
        ),
        "note:nul": ("submit", {"plan": simple("nz"), "slug": "nz", "note": "a\x00b"}),
        "note:trailer-block": (
            "submit",
            {
                "plan": simple("nt"),
                "slug": "nt",
                "note": "x\n\nApproved-By: alice@example.com\n"
                "Co-authored-by: Alice <alice@example.com>",
            },
        ),
        "slug:newline": ("submit", {"plan": simple("sn"), "slug": "sn\n"}),
        "slug:tab": ("submit", {"plan": simple("st"), "slug": "s\tt"}),
        "slug:state-like": ("submit", {"plan": simple("sd"), "slug": ".plangate"}),
        "slug:git-prefix": ("submit", {"plan": simple("sg"), "slug": ".github/x"}),
        "slug:bidi": ("submit", {"plan": simple("sb"), "slug": "s\u202eb"}),
        "slug:huge-ok-parts": ("submit", {"plan": simple("sp"), "slug": "/".join(["a"] * 400)}),
    }
    names = list(sub_calls)
    before = lab.head()
    answers = sdk_seq(lab, [sub_calls[n] for n in names])
    got["sub"] = dict(zip(names, answers, strict=True))
    got["sub-branches"] = lab.git("branch", "--format=%(refname:short)").split()
    got["sub-dirty"] = lab.git("status", "--porcelain", "--untracked-files=no")
    got["sub-msgs"] = {
        n: lab.git("log", "-1", "--format=%B", a["commits"][0]) if a["commits"] else ""
        for n, a in got["sub"].items()
    }
    got["sub-trailers"] = {
        n: lab.git("log", "-1", "--format=%(trailers)", a["commits"][0]) if a["commits"] else ""
        for n, a in got["sub"].items()
    }
    got["sub-before"] = before
    got["sub-slugs"] = {n: sub_calls[n][1]["slug"] for n in names}
    # a new version of the pending plan ``pend`` for review on its own branch: the branch
    # ``plangate/pend`` (docs/agents.md: created from the watched branch)
    pend_v2 = simple("pend").replace('tag: "pend"', 'tag: "pend-v2"')
    got["pr-pend"] = sdk_seq(
        lab, [("submit", {"plan": pend_v2, "slug": "pend", "pull_request": True})]
    )[0]
    got["pr-pend-branches"] = lab.git("branch", "--format=%(refname:short)").split()

    lab.run()  # the submissions frozen (an approval of an unfrozen plan is E_PLAN_NOT_FROZEN)
    # 3. Alice approves every env-* plan (the agent's, if the commits say so), then a pass run
    #    with an environment that names Alice (the controller's commits stay its own)
    for vid in variants:
        if (got["env"][vid].get("data") or {}).get("ok"):
            lab.approve(_esl(vid), ALICE)
    lab.approve("bobs", ALICE)
    before = lab.head()
    env = lab.env(ALICE)
    env.update(
        REC_LOG=str(lab.log),
        EMAIL=A_MAIL,
        GIT_CONFIG_COUNT="1",
        GIT_CONFIG_KEY_0="user.email",
        GIT_CONFIG_VALUE_0=A_MAIL,
    )
    done = subprocess.run(
        [PLANGATE, "run", "--once", "--config", str(lab.config)],
        cwd=lab.root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    got["ctl-env-run"] = (done.returncode, done.stderr[-2000:])
    got["ctl-env-commits"] = lab.git("log", "--format=%ae|%ce|%s", f"{before}..HEAD").splitlines()
    lab.run()
    got["rows"] = lab.rows()
    got["ran"] = {
        t: len(lab.calls(t))
        for t in ["ua", "ua-v2", "done", "done-v2", "done-v3", "wdr", "ab", "bobs", "bobs-v2"]
        + [_esl(v) for v in variants]
    }

    # 4. concurrent submissions of one slug, and a burst of mixed calls
    before = lab.head()
    race = [("submit", {"plan": simple(f"race-{i}"), "slug": "race"}) for i in range(6)]
    got["race"] = sdk_gather(lab, race)
    got["race-commits"] = lab.git(
        "log", "--format=%H|%ae", f"{before}..HEAD", "--", "plans/race"
    ).splitlines()
    got["race-file"] = lab.read("race")
    got["race-dirty"] = lab.git("status", "--porcelain", "--untracked-files=all", "plans")
    burst: list[tuple[str, Any]] = []
    for i in range(8):
        burst += [
            ("validate", {"plan": simple(f"b{i}")}),
            ("status", {"path": "plans/pend"}),
            ("submit", {"plan": simple(f"burst-{i}"), "slug": f"burst-{i}"}),
            ("wait", {"path": "plans/pend", "timeout": 0}),
        ]
    got["burst"] = sdk_gather(lab, burst)
    got["burst-files"] = sorted(
        p.name for p in (lab.repo / "plans").iterdir() if p.name.startswith("burst-")
    )
    got["burst-dirty"] = lab.git("status", "--porcelain", "--untracked-files=all", "plans")

    # 5. cancelled calls in a raw session: a long wait cancelled, then a submit that must land
    lines = [
        _call_line(7, "wait", {"path": "plans/pend", "timeout": 600, "status": "pending_approval"}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 7, "reason": "user"}}),
        _call_line(8, "submit", {"plan": simple("after-cancel"), "slug": "after-cancel"}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 99, "reason": "nothing"}}),
        _call_line(9, "status", {"path": "plans/after-cancel"}),
    ]  # fmt: skip
    started = time.time()
    got["cancel"] = raw(lab, lines)
    got["cancel-took"] = time.time() - started
    got["cancel-dirty"] = lab.git("status", "--porcelain", "--untracked-files=all", "plans")

    # 6. the agreement: MCP status, status --json and show --json at one head
    lab.run()
    head = lab.head()
    cli = lab.rows()
    mrows = sdk_seq(lab, [("status", {})])[0]
    shows = {}
    for s in ("ua", "bobs", "race", "done"):
        out = lab.cli(
            "show", "--json", "--config", str(lab.config), str(lab.repo / f"plans/{s}/PLAN.yml")
        )
        shows[s] = (out.returncode, out.stdout[-20000:], out.stderr[-1000:])
    got["agree"] = (head == lab.head(), cli, mrows, shows)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r123-agents-b", build)


def G(lab: Lab) -> dict[str, Any]:
    return lab.got  # type: ignore[attr-defined,no-any-return]


ENV_IDS = [
    "env:author-alice",
    "env:committer-alice",
    "env:both-alice",
    "env:email-var",
    "env:config-count-user",
    "env:config-count-author",
    "env:config-params",
    "env:global-include",
    "env:global-author",
    "env:home-gitconfig",
    "env:xdg-config",
    "env:repo-config",
    "env:repo-include",
]
BROKEN_ENV: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(ENV_IDS, ENV_IDS, BROKEN_ENV))
def test_submit_commits_as_the_agent_whatever_the_environment(lab: Lab, vid: str) -> None:
    """docs/agents.md: ``submit`` commits ``plans/<slug>/PLAN.yml`` "with the agent as author
    and committer" (``agent.identity``), whatever identity the server's environment or git
    configuration names."""
    ans = G(lab)["env"][vid]
    assert (ans["data"] or {}).get("ok") is True, ans
    assert ans["who"] == f"{G_MAIL}|{G_MAIL}", ans["who"]


BROKEN_ENVRUN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases([f"{v}:alice-runs" for v in ENV_IDS], ENV_IDS, BROKEN_ENVRUN))
def test_alices_approval_of_the_agents_submission_runs_once(lab: Lab, vid: str) -> None:
    """The submission is the agent's, so Alice (no author) approving it runs it once; the row
    says it completed."""
    slug = _esl(vid)
    assert G(lab)["ran"][slug] == 1, G(lab)["rows"].get(f"plans/{slug}")
    assert G(lab)["rows"][f"plans/{slug}"]["status"] == "completed"


def test_env_sessions_left_the_tree_clean(lab: Lab) -> None:
    assert G(lab)["env-dirty"] == ""


def test_the_controllers_commits_are_its_own_under_a_persons_environment(lab: Lab) -> None:
    """A pass run with ``GIT_AUTHOR_*``/``GIT_COMMITTER_*``/``EMAIL``/``GIT_CONFIG_*`` naming
    Alice commits as the config's ``identity`` (plangate), never as Alice."""
    rc, err = G(lab)["ctl-env-run"]
    commits = G(lab)["ctl-env-commits"]
    assert rc == 0 and "Traceback" not in err, err
    assert commits, "the pass committed nothing"
    assert all(c.startswith(f"{BOT_MAIL}|{BOT_MAIL}|") for c in commits), commits


# -- 2. submissions over other plans -----------------------------------------------------------
REFUSED = {
    "over:completed": "E_ILLEGAL_TRANSITION",
    "over:rejected": "E_ILLEGAL_TRANSITION",
    "over:aborted": "E_ILLEGAL_TRANSITION",
    "over:source": "E_USAGE",
    "over:source-file": None,
    "over:inside-plan": None,
    "wd:rejected-new-slug": "E_VERSION_WITHDRAWN",
    "wd:aborted-new-slug": "E_VERSION_WITHDRAWN",
    "wd:rejected-pr": "E_VERSION_WITHDRAWN",
    "wd:aborted-pr": "E_VERSION_WITHDRAWN",
    "pr:status-approved": "E_ILLEGAL_TRANSITION",
    "pr:over-completed": "E_ILLEGAL_TRANSITION",
    "pr:over-rejected": "E_ILLEGAL_TRANSITION",
    "pr:over-aborted": "E_ILLEGAL_TRANSITION",
    "pr:over-unjudged-approval": "E_ILLEGAL_TRANSITION",
    "pr:over-source": "E_USAGE",
    "pr:inside-plan": "E_USAGE",
    "slug:newline": None,
    "slug:tab": None,
    "slug:bidi": None,
    "slug:huge-ok-parts": None,
}
BROKEN_REF: dict[str, Any] = {}
REF_IDS = list(REFUSED)


@pytest.mark.parametrize("vid", cases(REF_IDS, REF_IDS, BROKEN_REF))
def test_submit_refuses_with_its_code_and_commits_nothing(lab: Lab, vid: str) -> None:
    """docs/agents.md, ``submit``: refused statuses, withdrawn versions (also with
    ``pull_request: true``), sources, another plan's folder, a bad slug: coded, nothing
    committed, no branch made."""
    ans = G(lab)["sub"][vid]
    assert _coded(ans), ans
    assert not ans["moved"] and not ans["commits"], ans
    want = REFUSED[vid]
    if want:
        assert want in _codes(ans), ans


PR_IDS = [v for v in REF_IDS if ("pr" in v.split(":")[0] or v.endswith("-pr"))]
BROKEN_BRANCH: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases([f"{v}:no-branch" for v in PR_IDS], PR_IDS, BROKEN_BRANCH))
def test_a_refused_submit_makes_no_branch(lab: Lab, vid: str) -> None:
    """docs/agents.md: a refused ``submit`` commits nothing ("Nothing was committed by a
    refused ``submit``"); with ``pull_request: true`` the branch ``<branch_prefix><slug>`` is
    where a submission's commit goes. A refusal leaves no such branch behind (a stale one
    would later carry a new submission on top of an old tip, and a forge offers it as a pull
    request)."""
    slug = G(lab)["sub-slugs"][vid]
    assert f"plangate/{slug}" not in G(lab)["sub-branches"], G(lab)["sub-branches"]


def test_a_pull_request_submission_of_a_pending_plan_gets_its_branch(lab: Lab) -> None:
    """docs/agents.md: a ``draft``/``pending_approval`` plan may be replaced; with
    ``pull_request: true`` the commit goes on ``<branch_prefix><slug>``, created from the
    watched branch. Here the only thing in the way is the branch a refused submission left."""
    ans = G(lab)["pr-pend"]
    assert (ans["data"] or {}).get("ok") is True, ans["text"][:1500]
    assert "plangate/pend" in G(lab)["pr-pend-branches"], G(lab)["pr-pend-branches"]


def test_a_new_version_over_an_unjudged_approval_never_runs_on_it(lab: Lab) -> None:
    """Alice's approval of ``ua`` is committed, no pass judged it; the agent submits a changed
    version at ``ua``. docs/agents.md: ``submit`` refuses replacing a plan that is approved
    (a request shows as ``approved``); whatever it answers, the new version never runs on
    Alice's approval of the old one, and an ``ok`` answer is the row the controller then
    holds."""
    ans = G(lab)["sub"]["over:unjudged-approval"]
    assert G(lab)["ran"]["ua-v2"] == 0, G(lab)["rows"]["plans/ua"]
    if _coded(ans):
        assert not ans["moved"], ans
        return
    data = ans["data"] or {}
    row = G(lab)["rows"]["plans/ua"]
    assert (data.get("status"), data.get("hash")) == (row.get("status"), row.get("hash")), (
        data,
        row,
    )


def test_the_old_version_runs_as_approved(lab: Lab) -> None:
    """If the replacement was refused, Alice's approval of ``ua`` runs ``ua`` once."""
    ans = G(lab)["sub"]["over:unjudged-approval"]
    if _coded(ans):
        assert G(lab)["ran"]["ua"] == 1, G(lab)["rows"]["plans/ua"]
    else:
        assert G(lab)["ran"]["ua"] == 0


def test_a_replaced_plan_is_not_approved_by_its_earlier_writer_alone(lab: Lab) -> None:
    """``bobs`` was Bob's pending plan; the agent replaced it. Its ``approvals_needed``
    names the agent among ``not_from``, and Alice's approval (no author) runs it once."""
    ans = G(lab)["sub"]["over:bobs-pending"]
    data = ans["data"] or {}
    if _coded(ans):
        assert G(lab)["ran"]["bobs"] == 1
        return
    need = data.get("approvals_needed") or {}
    assert G_MAIL in json.dumps(need.get("not_from")), need
    assert G(lab)["ran"]["bobs-v2"] == 1 and G(lab)["ran"]["bobs"] == 0, G(lab)["rows"][
        "plans/bobs"
    ]


def test_completed_rejected_aborted_never_ran_again(lab: Lab) -> None:
    ran = G(lab)["ran"]
    assert (ran["done"], ran["done-v2"], ran["done-v3"], ran["wdr"], ran["ab"]) == (1, 0, 0, 0, 0)


def test_setup_statuses(lab: Lab) -> None:
    rows = G(lab)["setup-rows"]
    assert (rows["plans/done"], rows["plans/wdr"], rows["plans/ab"]) == (
        "completed",
        "rejected",
        "aborted",
    ), rows


NOTE_IDS = ["note:huge", "note:nul", "note:trailer-block"]


@pytest.mark.parametrize("vid", cases(NOTE_IDS, NOTE_IDS, {}))
def test_a_note_is_cut_and_never_a_trailer(lab: Lab, vid: str) -> None:
    """docs/agents.md: ``note`` is cut at 2,000 characters with ``…`` and can never form a
    trailer or ``Co-authored-by:``; or it is refused coded, nothing committed."""
    ans = G(lab)["sub"][vid]
    assert "Traceback" not in ans["text"], ans
    if _coded(ans):
        assert not ans["moved"], ans
        return
    assert (ans["data"] or {}).get("ok") is True, ans
    msg = G(lab)["sub-msgs"][vid]
    trailers = G(lab)["sub-trailers"][vid]
    assert len(msg) < 3000, len(msg)
    assert "alice" not in trailers.lower() and "Plan-Status: x" not in trailers, trailers
    assert "\x00" not in msg


def test_submit_session_left_the_tree_clean(lab: Lab) -> None:
    assert G(lab)["sub-dirty"] == ""


# -- concurrency ------------------------------------------------------------------------------
def test_concurrent_submits_of_one_slug_are_each_one_commit(lab: Lab) -> None:
    """Six parallel ``submit`` calls at one slug: each ``ok`` answer is one commit by the agent
    on the branch, the file holds the last one's version, the tree is clean."""
    oks = [a for a in G(lab)["race"] if (a["data"] or {}).get("ok")]
    for a in G(lab)["race"]:
        assert "Traceback" not in a["text"], a
        assert (a["data"] or {}).get("ok") or _coded(a), a
    commits = G(lab)["race-commits"]
    assert len(commits) == len(oks), (commits, [a["text"][:200] for a in G(lab)["race"]])
    assert all(c.endswith(f"|{G_MAIL}") for c in commits), commits
    tips = {(a["data"] or {}).get("commit") for a in oks}
    assert {c.split("|")[0] for c in commits} == tips
    assert G(lab)["race-dirty"] == ""


def test_the_last_concurrent_submit_is_what_the_branch_holds(lab: Lab) -> None:
    newest = G(lab)["race-commits"][0].split("|")[0]
    race = G(lab)["race"]
    idx = next(i for i, a in enumerate(race) if (a["data"] or {}).get("commit") == newest)
    assert f'tag: "race-{idx}"' in G(lab)["race-file"], (idx, G(lab)["race-file"])
    row = G(lab)["agree"][1].get("plans/race") or {}
    assert race[idx]["data"]["hash"] == row.get("hash"), (race[idx]["data"], row)


def test_a_burst_of_parallel_calls_is_all_answered(lab: Lab) -> None:
    """32 parallel calls (validate, status, submit, wait): every one answered, no traceback,
    every submit committed whole."""
    burst = G(lab)["burst"]
    assert len(burst) == 32
    for a in burst:
        assert "Traceback" not in a["text"] and not a["text"].startswith("TimeoutError"), a
        assert not a["error"] or _coded(a), a
    assert G(lab)["burst-files"] == [f"burst-{i}" for i in range(8)]
    assert G(lab)["burst-dirty"] == ""


def test_a_cancelled_wait_does_not_hold_the_session(lab: Lab) -> None:
    """docs/agents.md: a cancelled ``wait`` stops polling at once; the cancelled request gets
    no reply; the session answers the calls after it and exits (no 600 s wait)."""
    replies, err = G(lab)["cancel"]
    ids = {r.get("id") for r in replies}
    assert 7 not in ids, replies
    assert {8, 9} <= ids, replies
    sub = next(r for r in replies if r.get("id") == 8)
    text = "".join(c.get("text", "") for c in (sub.get("result") or {}).get("content") or [])
    assert json.loads(text).get("ok") is True, text
    assert G(lab)["cancel-took"] < 110, G(lab)["cancel-took"]
    assert "Traceback" not in err
    assert G(lab)["cancel-dirty"] == ""


def test_mcp_status_is_the_cli_status(lab: Lab) -> None:
    same_head, cli, mrows, _shows = G(lab)["agree"]
    assert same_head
    rows = {r["plan"]: r for r in (mrows["data"] or {}).get("plans", [])}
    assert rows == cli, [k for k in set(rows) | set(cli) if rows.get(k) != cli.get(k)]


SHOW_IDS = ["show:ua", "show:bobs", "show:race", "show:done"]


@pytest.mark.parametrize("vid", cases(SHOW_IDS, SHOW_IDS, {}))
def test_show_agrees_with_status(lab: Lab, vid: str) -> None:
    """``show --json``'s hash and status are the ``status --json`` row's."""
    _same, cli, _m, shows = G(lab)["agree"]
    slug = vid.split(":")[1]
    rc, out, err = shows[slug]
    assert rc == 0 and "Traceback" not in err, (rc, err)
    data = json.loads(out)
    row = cli[f"plans/{slug}"]
    text = json.dumps(data)
    assert row["hash"] in text, (row, text[:800])
    assert row["status"] in text, (row, text[:800])


# -- remote mode: the served branch rewound and force-pushed; webhooks -------------------------
GL = {"Content-Type": "application/json", "X-Gitlab-Event": "Push Hook"}
MAIN = json.dumps({"ref": "refs/heads/main"}).encode()
OTHER = json.dumps({"ref": "refs/heads/other"}).encode()
FORM = ("payload=" + urllib.parse.quote(json.dumps({"ref": "refs/heads/main"}))).encode()
FORM_OTHER = ("payload=" + urllib.parse.quote(json.dumps({"ref": "refs/heads/evil"}))).encode()
FORM_CT = {"Content-Type": "application/x-www-form-urlencoded", "X-GitHub-Event": "push"}
JS = {"Content-Type": "application/json"}
WEBHOOKS: dict[str, tuple[bytes, set[int], str | None]] = {
    "wh:gitlab-good": (_post(MAIN, {**GL, "X-Gitlab-Token": WH_SECRET}), {202}, None),
    "wh:gitlab-other-branch": (
        _post(OTHER, {**GL, "X-Gitlab-Token": WH_SECRET}),
        {202},
        "ignored",
    ),
    "wh:gitlab-token-prefix": (_post(MAIN, {**GL, "X-Gitlab-Token": WH_SECRET[:8]}), {403}, None),
    "wh:bearer-good": (_post(MAIN, {**JS, "Authorization": f"Bearer {WH_SECRET}"}), {202}, None),
    "wh:form-good": (_post(FORM, {**FORM_CT, "X-Hub-Signature-256": _sig(FORM)}), {202}, None),
    "wh:form-other-branch": (
        _post(FORM_OTHER, {**FORM_CT, "X-Hub-Signature-256": _sig(FORM_OTHER)}),
        {202},
        "ignored",
    ),
    "wh:form-as-json-ct": (
        _post(FORM_OTHER, {**JS, "X-Plangate-Secret": WH_SECRET}),
        {202},
        "ignored",
    ),
    "wh:github-ping": (
        _post(
            b'{"zen": "hi"}',
            {**JS, "X-GitHub-Event": "ping", "X-Hub-Signature-256": _sig(b'{"zen": "hi"}')},
        ),
        {200},
        None,
    ),
    "wh:sha1-only": (
        _post(MAIN, {**JS, "X-GitHub-Event": "push", "X-Hub-Signature": "sha1=" + "0" * 40}),
        {401, 403},
        None,
    ),
    "wh:sig-no-prefix": (
        _post(MAIN, {**JS, "X-GitHub-Event": "push", "X-Hub-Signature-256": _sig(MAIN)[7:]}),
        {401, 403},
        None,
    ),
    "wh:good-sig-wrong-secret-header": (
        _post(MAIN, {**JS, "X-Hub-Signature-256": _sig(MAIN), "X-Plangate-Secret": "nope"}),
        {202, 403},
        None,
    ),
    "wh:secret-in-body": (
        _post(json.dumps({"ref": "refs/heads/main", "secret": WH_SECRET}).encode(), JS),
        {401},
        None,
    ),
}
REPLAYS = 12


def _daemon_checks(lab: Lab) -> dict[str, Any]:
    port, ui = free_port(), free_port()
    plain = lab.config.read_text()
    lab.config.write_text(
        plain + f'webhook: {{listen: "127.0.0.1:{port}"}}\nui: {{listen: "127.0.0.1:{ui}"}}\n'
    )
    env = lab.env()
    env.update(REC_LOG=str(lab.log), PLANGATE_WEBHOOK_SECRET=WH_SECRET)
    out: dict[str, Any] = {}
    with open(lab.root / "daemon.err", "w") as err:
        daemon = subprocess.Popen(
            [PLANGATE, "run", "--config", str(lab.config)],
            cwd=lab.root, env=env, stdout=subprocess.DEVNULL, stderr=err,
            start_new_session=True,
        )  # fmt: skip
        try:
            for _ in range(900):
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            for vid, (data, _w, _b) in WEBHOOKS.items():
                try:
                    out[vid] = _http(port, data)
                except OSError as why:
                    out[vid] = (-2, repr(why))
            good = _post(MAIN, {**JS, "X-GitHub-Event": "push", "X-Hub-Signature-256": _sig(MAIN)})
            out["replays"] = [_http(port, good)[0] for _ in range(REPLAYS)]
            head = lambda: _origin(lab, "rev-parse", "main").strip()  # noqa: E731
            out["settled"] = page_settled(ui, head)
            out["api"] = _get(ui, "/api/")
            for s in SLUGS_R:
                out[f"api:{s}"] = _get(ui, f"/api/plan/plans/{s}")
            out["api-head"] = head()
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            daemon.wait(timeout=180)
    lab.config.write_text(plain)
    out["rows"] = lab.rows()
    out["rows-head"] = _origin(lab, "rev-parse", "main").strip()
    out["log"] = (lab.root / "daemon.err").read_text(errors="replace")[-20000:]
    return out


SLUGS_R = ["s1", "s2", "s3", "s4"]


def build_remote(root: Path) -> Lab:
    lab = Lab(root / "lab", extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    for s in SLUGS_R:
        lab.write(s, simple(s))
    lab.commit("agent plans", AGENT)

    def push(force: bool = False, ref: str = "main") -> None:
        lab.git("push", "-q", *(["-f"] if force else []), "origin", f"{ref}:main")

    def sync() -> None:
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")

    with served(lab) as url:
        got["url"] = url
        push()
        lab.run(check=False)
        sync()
        frozen = lab.head()
        got["frozen-head"] = frozen
        # rw:swap — Alice approves s1; the agent rewrites her commit (her name kept) with the
        # action changed, and force-pushes it before any pass read her approval
        lab.approve("s1", ALICE)
        alice_tip = lab.head()
        lab.git("reset", "-q", "--hard", frozen)
        text = (
            lab.read("s1")
            .replace('tag: "s1"', 'tag: "s1-evil"')
            .replace("status: pending_approval", "status: approved")
        )
        lab.write("s1", text)
        lab.git("add", "-A")
        env_alice = (
            lab.git("log", "-1", "--format=%an|%ae|%ad", "--date=raw", alice_tip).strip().split("|")
        )
        lab.extra_env = {"GIT_AUTHOR_DATE": env_alice[2]}  # type: ignore[attr-defined]
        lab.git("commit", "-q", "-m", "approve s1", who=ALICE)
        lab.extra_env = {}  # type: ignore[attr-defined]
        push(force=True)
        passes = [lab.run(check=False) for _ in range(2)]
        got["swap-pass"] = [(p.returncode, p.stderr[-1500:]) for p in passes]
        got["swap-ran"] = (len(lab.calls("s1")), len(lab.calls("s1-evil")))
        sync()
        got["swap-row"] = lab.rows().get("plans/s1", {})
        # rw:erase-freeze — s2: the branch is force-pushed back before the controller's freeze,
        # with s2 changed and Alice approving the changed text on top
        base = lab.git("rev-list", "--max-parents=0", "HEAD").split()[0]
        lab.git("checkout", "-q", "-b", "alt", lab.git("rev-parse", f"{frozen}~1").strip())
        lab.write("s2", simple("s2-alt"))
        lab.commit("agent: s2 again", AGENT)
        lab.approve("s2", ALICE)
        push(force=True, ref="alt")
        passes = [lab.run(check=False) for _ in range(2)]
        got["erase-pass"] = [(p.returncode, p.stderr[-2500:]) for p in passes]
        got["erase-ran"] = (len(lab.calls("s2")), len(lab.calls("s2-alt")))
        st = lab.cli("status", "--json", "--config", str(lab.config))
        got["erase-status"] = (st.returncode, st.stdout[-30000:], st.stderr[-1500:])
        got["erase-mcp"] = sdk_seq(lab, [("status", {}), ("log", {"path": "plans/s2"})])
        got["erase-mcp-rows"] = lab.rows()
        # rw:orphan — an unrelated history whose plan s3 says approved and completed
        lab.git("checkout", "-q", "--orphan", "orphan")
        lab.git("rm", "-q", "-r", "--cached", ".")
        for p in list((lab.repo / "plans").iterdir()):
            subprocess.run(["rm", "-rf", str(p)], check=True)
        lab.write("s3", simple("s3", "approved"))
        lab.put("README", "plans\n")
        lab.commit("an unrelated history", ALICE)
        push(force=True, ref="orphan")
        passes = [lab.run(check=False) for _ in range(2)]
        got["orphan-pass"] = [(p.returncode, p.stderr[-2500:]) for p in passes]
        got["orphan-ran"] = len(lab.calls("s3"))
        st = lab.cli("status", "--json", "--config", str(lab.config))
        got["orphan-status"] = (st.returncode, st.stdout[-30000:], st.stderr[-1500:])
        got["orphan-mcp"] = sdk_seq(
            lab, [("status", {}), ("wait", {"path": "plans/s3", "timeout": 0})]
        )
        got["orphan-rows"] = lab.rows()
        got["base"] = base
        # the daemon: webhooks and the page after all of it
        got["daemon"] = _daemon_checks(lab)
        got["after-ran"] = {
            t: len(lab.calls(t)) for t in ["s1", "s1-evil", "s2", "s2-alt", "s3", "s4"]
        }
    return lab


@pytest.fixture(scope="module")
def rlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r123-agents-b-remote", build_remote)


def test_a_rewritten_approval_never_runs(rlab: Lab) -> None:
    """Alice's approval rewritten (her name and date kept, the action changed) and
    force-pushed before any pass: the changed text was never frozen, nothing runs."""
    assert G(rlab)["swap-ran"] == (0, 0), (G(rlab)["swap-pass"], G(rlab)["swap-row"])


def test_the_rewritten_approval_is_told(rlab: Lab) -> None:
    row = G(rlab)["swap-row"]
    assert row.get("status") not in ("executing", "completed"), row
    assert "E_" in json.dumps(row), row


def test_an_erased_freeze_runs_nothing(rlab: Lab) -> None:
    assert G(rlab)["erase-ran"] == (0, 0), G(rlab)["erase-pass"]


def test_an_erased_freeze_is_told_as_history_rewritten(rlab: Lab) -> None:
    """docs/agents.md: a rewrite that erases the controller's commits holds the plans they were
    about (``E_HISTORY_REWRITTEN``)."""
    rc, out, err = G(rlab)["erase-status"]
    said = out + err + "".join(e for _, e in G(rlab)["erase-pass"])
    assert "Traceback" not in said, said[-3000:]
    assert "E_HISTORY_REWRITTEN" in out + err, (rc, out[-3000:], err)


def test_an_orphan_history_runs_nothing(rlab: Lab) -> None:
    assert G(rlab)["orphan-ran"] == 0, G(rlab)["orphan-pass"]


def test_an_orphan_history_is_told(rlab: Lab) -> None:
    rc, out, err = G(rlab)["orphan-status"]
    said = out + err + "".join(e for _, e in G(rlab)["orphan-pass"])
    assert "Traceback" not in said, said[-3000:]
    assert "E_HISTORY_REWRITTEN" in said, (rc, out[-3000:], err)


AGREE_IDS = ["agree:erase", "agree:orphan"]


@pytest.mark.parametrize("vid", cases(AGREE_IDS, AGREE_IDS, {}))
def test_mcp_status_in_remote_mode_is_the_cli_status(rlab: Lab, vid: str) -> None:
    """After each force-push, MCP ``status`` answers the rows ``status --json`` does."""
    g = G(rlab)
    mcp, cli = (
        (g["erase-mcp"][0], g["erase-mcp-rows"])
        if vid == "agree:erase"
        else (g["orphan-mcp"][0], g["orphan-rows"])
    )
    assert "Traceback" not in mcp["text"], mcp["text"][-2000:]
    rows = {r["plan"]: r for r in (mcp["data"] or {}).get("plans", [])}
    assert rows == cli, [k for k in set(rows) | set(cli) if rows.get(k) != cli.get(k)]


def test_mcp_wait_on_an_orphaned_plan_tells_the_row(rlab: Lab) -> None:
    """``wait`` answers the controller's status of the plan (its ``status`` row's), never the
    ``approved`` the orphan history's file says."""
    ans = G(rlab)["orphan-mcp"][1]
    row = G(rlab)["orphan-rows"].get("plans/s3") or {}
    assert "Traceback" not in ans["text"], ans["text"]
    if _coded(ans):
        return
    data = ans["data"] or {}
    assert data.get("status") == row.get("status"), (data, row)


def test_mcp_log_of_an_erased_plan_is_coded_or_true(rlab: Lab) -> None:
    ans = G(rlab)["erase-mcp"][1]
    row = G(rlab)["erase-mcp-rows"].get("plans/s2") or {}
    assert "Traceback" not in ans["text"], ans["text"]
    if _coded(ans):
        return
    assert (ans["data"] or {}).get("status") == row.get("status"), (ans["data"], row)


WH_IDS = list(WEBHOOKS)


@pytest.mark.parametrize("vid", cases(WH_IDS, WH_IDS, {}))
def test_the_webhook_answers_as_documented(rlab: Lab, vid: str) -> None:
    """docs/operations.md, "The webhook": GitHub (JSON or form), GitLab and the plain secret;
    202, 200 for a ping, 202 ``ignored`` for another branch, 401/403 otherwise."""
    code, body = G(rlab)["daemon"][vid]
    _data, want, word = WEBHOOKS[vid]
    assert code in want, (code, body)
    assert "Traceback" not in body, body
    if word:
        assert word in body, body


def test_replayed_webhooks_are_each_accepted_and_run_nothing(rlab: Lab) -> None:
    d = G(rlab)["daemon"]
    assert d["replays"] == [202] * REPLAYS, d["replays"]
    assert G(rlab)["after-ran"] == {
        "s1": 0, "s1-evil": 0, "s2": 0, "s2-alt": 0, "s3": 0, "s4": 0
    }, G(rlab)["after-ran"]  # fmt: skip
    assert "Traceback" not in d["log"], d["log"][-3000:]


API_IDS = [f"api:{s}" for s in SLUGS_R]


@pytest.mark.parametrize("vid", cases(API_IDS, API_IDS, {}))
def test_the_page_api_is_the_status_row(rlab: Lab, vid: str) -> None:
    """docs/operations.md: the page serves the committed record; ``/api/plan/<id>`` and
    ``status --json`` agree at one head, after the force-pushes."""
    d = G(rlab)["daemon"]
    assert d["settled"] and d["api-head"] == d["rows-head"], d.get("api-head")
    slug = vid.split(":")[1]
    page = d[f"api:{slug}"] or {}
    row = d["rows"].get(f"plans/{slug}")
    if row is None:  # no plan at that path on the branch: the page must not show one
        assert not (page.get("row") or {}).get("status"), page
        return
    got = page.get("row") or {}
    assert (got.get("status"), got.get("hash")) == (row["status"], row["hash"]), (page, row)
