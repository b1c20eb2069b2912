"""Round 122, the agent's surfaces (atk122b): ``plangate mcp`` through the official ``mcp`` SDK
client (``mcp.client.stdio``; raw JSON-RPC lines only where the SDK cannot send the shape),
``plangate approve``/``reject``/``status``/``show``/``audit`` run in a working tree the agent
shares, remote mode over a real ``git daemon`` on 127.0.0.1, the webhook and the page's
``/api/``. An outsider's attack: the CLI, git and the docs only.

Labs (three, module scope, built once under a lock):

- A (local mode, ``agent.identity`` Agent, approvers Alice and ``*@ops.example.com``; rules:
  ``plans/q/**`` needs 2 approvals, ``risk: high`` 2 from ``ops``; an ``echo`` tool ``hi`` of
  risk high). The agent commits 20 plans ``i-*``, ``wdr``, ``wdu``, ``pend`` and a ``PLAN.json``
  source ``srcj``; a pass freezes them; Alice rejects ``wdr`` (judged by a pass) and ``wdu``
  (no pass after). 1) ``plangate approve --config`` of each ``i-*`` plan under an identity the
  agent sets itself (``IDENT``): ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` split either way, upper
  case, ``<...>`` and blank-padded mailboxes, empty ones, ``EMAIL`` (alone and shadowed by
  ``user.email``), ``GIT_CONFIG_COUNT``/``GIT_CONFIG_PARAMETERS``, ``author.email`` and
  ``committer.email`` keys, ``include.path``/``includeIf.gitdir`` in ``.git/config``,
  ``user.useConfigOnly`` with no mailbox, a ``.mailmap`` with ``log.mailmap``; then one pass.
  1b) ``reject``/``approve``/``show`` given argv bytes that are no UTF-8 (a ``-m`` note, a
  path) and a ``-m`` note shaped as trailers naming another plan.
  2) one SDK session: ``submit`` of statuses only the controller gives (6), of the rejected
  version respelled 12 ways (as committed with ``frozen:``, bare, comments, CRLF, BOM, key
  order, quoting, flow style, ``metadata``, ``created``, ``draft``, JSON text) and of the
  version whose rejection no pass has judged yet, a changed version, plans carrying a forged
  ``frozen:``/``execution:``/``approval:``/``validation:`` block, a plan over a folder holding a
  source, ``approvals_needed`` of ``submit`` and ``validate`` for 6 paths/risks, hostile
  arguments (8 MiB plans, 60,000-deep flow/JSON nesting, YAML aliases, a 64 KiB slug, a 1 MiB
  path), each followed by a ``status`` to show the server goes on; lone surrogates (``\\ud800``)
  in ``note``/``plan``/``slug``/``path``/``status``/``format`` as raw lines; a ``submit``
  cancelled at once (``notifications/cancelled``); MCP ``status`` against ``status --json``.
- B (remote mode on ``git://127.0.0.1:<port>/origin.git``): the agent pushes ``r1``..``r4``;
  Alice approves ``r1`` (it runs); the agent pushes look-alike controller commits (authored and
  committed ``plangate <plangate@localhost>``: ``r2`` set ``approved`` under a copy of the
  controller's ``complete`` message with its trailers; ``r3`` set ``completed``); Alice then
  approves ``r3``; a fresh-clone audit; MCP ``status`` and ``submit`` with the remote config; a
  ``plangate run`` daemon with ``webhook`` and ``ui`` on 127.0.0.1 gets 15 forged, replayed
  and malformed webhook requests and serves ``/api/`` and ``/api/plan/plans/r*``; finally
  ``main`` is force-pushed back to Alice's approval of ``r1`` (before its run) and two passes
  run.
- C (local mode): the agent's ``.git/config`` names a program for everything git can run
  (``core.hooksPath`` with 6 hooks, ``core.fsmonitor``, ``gpg.program`` with
  ``commit.gpgSign``/``tag.gpgSign``, ``log.showSignature`` over a commit with a fake
  ``gpgsig``, clean/smudge/process filters, ``diff.external``, a diff driver's ``command`` and
  ``textconv``, a merge driver, ``trailer.<t>.cmd``, ``core.alternateRefsCommand``,
  ``core.editor``, ``core.pager``; ``.git/info/attributes`` selects them for every file). Alice
  runs ``approve`` and ``reject``, then ``run --once``, ``status``, ``show``, ``audit``; the owner
  removes ``commit.gpgSign`` and Alice approves again, then ``run --once``.

Ids (291): ``id:*`` (20) and ``id:*:clean`` (20), ``argv:*`` (6), ``st:*`` (6), ``wd:*`` (13),
``own:*`` (4), ``need:*`` and ``need:*:validate`` (6 + 6), ``big:*`` (8), ``raw:*`` (6),
``<program>:<phase>`` (19 programs x 8 phases = 152), ``gpgsign:{approve,reject}``,
``look:*`` (4), ``wh:*`` (15), ``api:r1..r4`` and single checks (cancel, agreement, audit,
rewind, MCP remote).

Seen (round 122: 291 ids, 284 passed, 7 xfailed; about 95 s wall with -n 1 on this machine).
3 classes broke:

- **cli-nonutf8-note-internal-error** (2 ids: ``argv:reject-note-bytes``,
  ``argv:approve-note-bytes``). ``plangate reject -m $'not now \\xff\\xfe' PATH`` (the agent, on
  its own pending plan) and ``plangate approve -m $'ok \\xc3' PATH`` (Alice) end exit 2
  ``plangate: internal error: UnicodeEncodeError: 'utf-8' codec can't encode characters ...:
  surrogates not allowed``, remedy "rerun with PLANGATE_DEBUG=1 for the traceback and report
  it": no ``E_`` code, no location. (Nothing is committed, the tree stays clean; the same bytes
  in a PATH are ``E_UNSAFE_PATH``.) SPEC section 8: every command's errors have one shape
  ``{"ok": false, "code", "message", "path", "line", "remedy"}``; docs/errors.md lists every
  code. Repro: in a plans working tree with a frozen pending plan written by you,
  ``plangate reject --config plangate.yml -m $'bad \\xff\\xfe bytes' plans/q2/PLAN.yml``.

- **agent-gpgsign-blocks-human-commands** (2 ids: ``gpgsign:approve``, ``gpgsign:reject``).
  With ``commit.gpgSign = true`` in the shared ``.git/config`` (the agent can write it in local
  mode), Alice's ``plangate approve PATH`` and ``plangate reject PATH -m WHY`` (no ``--sign``)
  run ``git commit-tree -S``, and exit 2 ``E_GIT: git commit-tree -S: error: gpg failed to sign
  the data``, remedy "see git's message; fix the repository state and retry": the approver's
  decision is blocked and the remedy does not name the setting. (The agent's ``gpg.program``,
  ``gpg.ssh.program``, ``gpg.x509.program``, ``gpg.ssh.defaultKeyCommand`` never ran: git's real
  ``gpg``/``ssh-keygen`` were used. The controller's own freeze commits were not affected.)
  docs/approvals.md, "Human commands": "``plangate approve PATH [--sign] ...`` ... commit only
  that file as the current git user (``--sign`` signs with your configured key)"; errors
  carry "a remedy that fits". Repro: ``git config --local commit.gpgSign true`` in the plans
  working tree; ``GIT_AUTHOR_EMAIL=alice@example.com GIT_COMMITTER_EMAIL=alice@example.com
  plangate approve --config plangate.yml plans/hk/PLAN.yml`` -> exit 2 as above;
  ``git config --local --unset commit.gpgSign`` -> the same command commits the approval.
- **validate-needs-ignore-path-rules** (3 ids, arguable: ``need:path:validate``,
  ``need:path-deep:validate``, ``need:path-risk:validate``). With ``approval.rules`` ``-
  match: {paths: ["plans/q/**"]}, require: [{count: 2}]``, MCP ``validate`` of a plan answers
  ``approvals_needed.summary: "1 approval (default: no rule matches)"`` (or, for a high-risk
  plan, "2 from ops (approval.rules[1])"), while ``submit`` of the same text at ``q/a``
  answers, and the controller freezes with, "2 approvals (approval.rules[0])". ``validate`` has
  no slug, so it cannot know the folder; but it says "no rule matches" rather than that the
  answer depends on where the plan is submitted. docs/agents.md, step 3: "``approvals_needed``
  says how many approvals the plan needs, and from whom". Repro: the config above; MCP
  ``validate {"plan": <a rec plan>}`` then ``submit {"plan": <same>, "slug": "q/a"}``.

Held: a ``-m`` note of trailer lines (``Approved-By: alice@...``, ``Plan: plans/pend``) stays in
the body: the commit's only trailers are plangate's, ``pend`` is untouched. Every ``approve``
under an identity the agent set says what the controller then did (20 of
20: it committed exactly the approvals that ran; ``E_APPROVER_NOT_ALLOWED`` for the agent,
Mallory, an author/committer split naming the agent as author, ``author.email`` of the agent,
an empty mailbox, a ``.mailmap``; ``E_GIT`` "Author identity unknown" for ``useConfigOnly``;
each refusal coded, nothing committed, tree clean; each approval one commit of one file). The
agent never approves its own plan. ``submit`` refuses ``approved``/``executing``/``completed``/
``rejected``/``aborted``/``failed`` (``E_ILLEGAL_TRANSITION``) and every respelling of a
rejected version (``E_VERSION_WITHDRAWN``, also before a pass judged the rejection; the JSON
text ``E_SCHEMA_INVALID`` first); forged ``execution:``/``approval:`` blocks are
``E_CONVERT_UNSUPPORTED``; a forged ``frozen:``/``validation:`` is committed but the answer's
status and hash are the row's after the pass and nothing ran; a folder holding a source is
``E_USAGE``; ``submit``'s ``approvals_needed`` equals the frozen policy (6 of 6); oversized,
deeply nested and aliased plans are coded (``E_PLAN_TOO_LARGE``, ``E_PARSE_NONJSON``,
``E_YAML_PARSE``), huge slugs/paths ``E_USAGE``/``E_UNSAFE_PATH``, and the server answers the
next call; lone-surrogate lines get ``-32700`` ``Parse error`` (the SDK itself refuses to send
them) and commit nothing; a cancelled ``submit`` is whole (commit, file and index) and leaves
no lock; MCP ``status`` equals ``status --json`` (local and remote). Remote mode: the
look-alike controller commits decide nothing (``r2`` refused ``E_APPROVAL_REPLAYED``, ``r3``'s
``completed`` ignored ``E_ILLEGAL_TRANSITION`` and Alice's later approval ran it once), the
fresh-clone audit and ``/api/`` flag them; MCP ``submit`` with a remote config is
``E_CONFIG_INVALID`` with a remedy, nothing pushed; the rewind ran nothing twice
(``E_ALREADY_EXECUTED``) and ``status --json`` shows ``E_HISTORY_REWRITTEN`` under ``waiting``;
``/api/plan/plans/r*`` rows equal ``status --json`` rows at one head. The webhook answered
401/403 to every missing or wrong credential (prefix, upper case, bearer, GitLab token, an
HMAC of another body or with an empty key), 202 to a good and a replayed GitHub push, 202
``ignored`` for another branch, 411/400/400/413 for no length, length beside chunked, two
lengths, 2 MiB; nothing ran because of it. No program named in the agent's ``.git/config``
ran in any phase of any command (152 ids).

Seen but not made an id: ``plangate approve`` with only ``EMAIL=alice@example.com`` (and
``user.name``) refuses ``E_GIT: git var GIT_AUTHOR_IDENT: Author identity unknown`` although
``git var GIT_AUTHOR_IDENT`` in the same environment answers ``<alice@example.com>`` (plangate
seems to drop ``EMAIL``; the safe side, with git's remedy). After the rewind ``r1``'s row says
``status: pending_approval`` with reason ``E_ALREADY_EXECUTED`` and ``waiting:
E_HISTORY_REWRITTEN``, ``held: null``, though it completed (docs/errors.md puts the code
under ``waiting``, so this is as documented).

Not tried: ``pull_request: true`` onto a pre-existing branch carrying other commits; MCP
``wait`` in remote mode; concurrent MCP ``submit`` racing ``plangate approve`` of the same
slug (round 118 did one); ``require_signed`` labs (forged identities without signatures are
documented claims, SPEC section 15); the HTML page (only ``/api/``); a webhook flood; GitLab
and form-encoded good pushes; ``core.worktree``/``core.bare``/``extensions.worktreeConfig`` in
the agent's ``.git/config``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, page_settled, plan_text
from test_round2_execution_kit import shared
from test_round118_agents_atk118m import _call_line, raw, seq
from writerkit import free_port, served

PLANGATE = str(Path(sys.executable).with_name("plangate"))
A_MAIL = ALICE[1]
G_MAIL = AGENT[1]


def _xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 122: {cls}: {what}")


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


# -- approve under someone's identity: environment and git config -----------------------------
GC_BASE = "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
GC_AGENT = GC_BASE + f"[user]\n\tname = Agent\n\temail = {G_MAIL}\n"
GC_ALICE = GC_BASE + f"[user]\n\tname = Alice\n\temail = {A_MAIL}\n"
GC_NAME = GC_BASE + "[user]\n\tname = Someone\n"


def _ident(who: tuple[str, str], part: str = "AUTHOR") -> dict[str, str]:
    return {f"GIT_{part}_NAME": who[0], f"GIT_{part}_EMAIL": who[1]}


#: vid -> (environment added, global git config, repo-local config lines, untracked files)
IDENT: dict[str, tuple[dict[str, str], str, list[tuple[str, str]], dict[str, str]]] = {
    "id:agent": ({**_ident(AGENT), **_ident(AGENT, "COMMITTER")}, GC_AGENT, [], {}),
    "id:mallory": ({**_ident(MALLORY), **_ident(MALLORY, "COMMITTER")}, GC_AGENT, [], {}),
    "id:alice": ({**_ident(ALICE), **_ident(ALICE, "COMMITTER")}, GC_AGENT, [], {}),
    "id:split-author-alice": ({**_ident(ALICE), **_ident(AGENT, "COMMITTER")}, GC_AGENT, [], {}),
    "id:split-committer-alice": (
        {**_ident(AGENT), **_ident(ALICE, "COMMITTER")},
        GC_AGENT,
        [],
        {},
    ),
    "id:email-var": ({"EMAIL": A_MAIL}, GC_NAME, [], {}),
    "id:email-var-shadowed": ({"EMAIL": A_MAIL}, GC_AGENT, [], {}),
    "id:config-count": (
        {
            "GIT_CONFIG_COUNT": "2",
            "GIT_CONFIG_KEY_0": "user.email",
            "GIT_CONFIG_VALUE_0": A_MAIL,
            "GIT_CONFIG_KEY_1": "user.name",
            "GIT_CONFIG_VALUE_1": "Alice",
        },
        GC_AGENT,
        [],
        {},
    ),
    "id:config-params": ({"GIT_CONFIG_PARAMETERS": f"'user.email'='{A_MAIL}'"}, GC_AGENT, [], {}),
    "id:author-email-agent": ({}, GC_ALICE + f"[author]\n\temail = {G_MAIL}\n", [], {}),
    "id:author-email-alice": ({}, GC_AGENT + f"[author]\n\temail = {A_MAIL}\n", [], {}),
    "id:committer-email-alice": ({}, GC_AGENT + f"[committer]\n\temail = {A_MAIL}\n", [], {}),
    "id:include": ({}, GC_AGENT, [("include.path", "INC")], {}),
    "id:includeif": ({}, GC_AGENT, [("includeIf.gitdir:REPO/.path", "INC")], {}),
    "id:env-upper": (
        {**_ident(("Alice", "ALICE@EXAMPLE.COM")), **_ident(AGENT, "COMMITTER")},
        GC_AGENT,
        [],
        {},
    ),
    "id:env-angle": (
        {**_ident(("Alice", f"<{A_MAIL}>")), **_ident(AGENT, "COMMITTER")},
        GC_AGENT,
        [],
        {},
    ),
    "id:env-blank": (
        {**_ident(("Alice", f" {A_MAIL} ")), **_ident(AGENT, "COMMITTER")},
        GC_AGENT,
        [],
        {},
    ),
    "id:env-empty": ({"GIT_AUTHOR_EMAIL": "", "GIT_COMMITTER_EMAIL": ""}, GC_AGENT, [], {}),
    "id:useconfigonly": ({}, GC_NAME + "[user]\n\tuseConfigOnly = true\n", [], {}),
    "id:mailmap": (
        {**_ident(AGENT), **_ident(AGENT, "COMMITTER")},
        GC_AGENT + "[log]\n\tmailmap = true\n",
        [],
        {".mailmap": f"Alice <{A_MAIL}> Agent <{G_MAIL}>\n"},
    ),
}


def _slug(vid: str) -> str:
    return "i-" + vid.split(":", 1)[1]


def _approve_as(lab: Lab, vid: str) -> dict[str, Any]:
    added, gconf, local, files = IDENT[vid]
    gpath = lab.root / f"gc-{_slug(vid)}"
    gpath.write_text(gconf)
    inc = lab.root / "inc-alice"
    inc.write_text(f"[user]\n\temail = {A_MAIL}\n\tname = Alice\n")
    env = lab.env()
    for k in [k for k in env if k in ("EMAIL", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL")]:
        env.pop(k)
    env.update(GIT_CONFIG_GLOBAL=str(gpath), **added)
    env["REC_LOG"] = str(lab.log)
    keys = []
    for key, value in local:
        key = key.replace("REPO", str(lab.repo))
        lab.git("config", "--local", key, value.replace("INC", str(inc)))
        keys.append(key)
    for rel, text in files.items():
        lab.put(rel, text)
    before = lab.head()
    done = subprocess.run(
        [PLANGATE, "approve", "--config", str(lab.config), f"plans/{_slug(vid)}/PLAN.yml"],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    after = lab.head()
    for key in keys:
        lab.git("config", "--local", "--unset", key)
    for rel in files:
        (lab.repo / rel).unlink()
    return {
        "rc": done.returncode,
        "out": done.stdout[-1500:],
        "err": done.stderr[-1500:],
        "moved": before != after,
        "commits": lab.git("log", "--format=%ae|%ce|%s", f"{before}..{after}").splitlines(),
        "files": lab.git("diff", "--name-only", before, after).split(),
        "dirty": lab.git("status", "--porcelain", "--untracked-files=no"),
    }


# -- submissions through MCP ------------------------------------------------------------------
STATUSES = ["approved", "executing", "completed", "rejected", "aborted", "failed"]


def _wd_forms(text: str) -> dict[str, tuple[str, str | None]]:
    """Spellings of the rejected version ``text`` (frozen block included) that are still the
    same version (SPEC section 2: ``created`` and ``metadata`` are not hashed; comments,
    quoting, key order, line ends are not content)."""
    bare = text.split("\nfrozen:")[0] + "\n"
    lines = bare.split("\n")
    quoted = bare.replace("tag: wdr", 'tag: "wdr"').replace('tag: "wdr""', 'tag: "wdr"')
    flow = bare.replace("    params:\n      tag: wdr\n", "    params: {tag: wdr}\n")
    keyorder = "\n".join(
        [x for x in lines if not x.startswith(("plan:", "  name", "  task", "  status"))]
        + [x for x in lines if x.startswith(("plan:", "  name", "  task", "  status"))]
    )
    data = {
        "plan": {"name": "wdr", "task": "agent round 122 wdr", "status": "pending_approval"},
        "available_tools": [{"name": "rec"}],
        "actions": [{"id": 1, "tool": "rec", "why": "record wdr", "params": {"tag": "wdr"}}],
    }
    return {
        "wd:as-committed": (text, None),
        "wd:bare": (bare, None),
        "wd:comment": ("# resubmitted\n" + bare.replace("why:", "why: # note\n     "), None),
        "wd:crlf": (bare.replace("\n", "\r\n"), None),
        "wd:bom": ("\ufeff" + bare, None),
        "wd:keyorder": (keyorder, None),
        "wd:quoted": (quoted, None),
        "wd:flow": (flow, None),
        "wd:metadata": (bare + "metadata: {resubmitted: true}\n", None),
        "wd:created": (
            bare.replace("  status:", '  created: "2026-01-01T00:00:00Z"\n  status:'),
            None,
        ),
        "wd:draft": (bare.replace("status: pending_approval", "status: draft"), None),
        "wd:json": (json.dumps(data), "plan.yml"),
    }


def wdr_plan() -> str:
    return (
        "plan:\n  name: wdr\n  task: agent round 122 wdr\n  status: pending_approval\n"
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
        "    why: record wdr\n    params:\n      tag: wdr\n"
    )


def simple(tag: str, status: str = "pending_approval", extra: str = "") -> str:
    return plan_text(tag, status=status) + extra


OWN = {
    "own:frozen": 'frozen: {hash: "sha256:' + "0" * 64 + '", at: "2026-01-01T00:00:00Z"}\n',
    "own:execution": "execution: {status: completed, started: x, finished: y}\n",
    "own:approval": f"approval: {{approved_by: {A_MAIL}, commit: deadbeef}}\n",
    "own:validation": "validation: {errors: []}\n",
}

HOSTILE = {
    "big:plan-8mb": ("validate", {"plan": simple("h8") + "#" * (8 << 20)}),
    "big:plan-8mb-pte": ("validate", {"plan": "x" * (8 << 20), "format": "pte"}),
    "big:deep-flow": ("validate", {"plan": "plan: " + "[" * 60000 + "]" * 60000}),
    "big:deep-json": ("validate", {"plan": "[" * 60000 + "]" * 60000, "format": "agent-plan"}),
    "big:alias": (
        "validate",
        {"plan": "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n" + simple("ha")},
    ),
    "big:slug-64k": ("submit", {"plan": simple("hs"), "slug": "s" * 65536}),
    "big:path-1mb": ("status", {"path": "plans/" + "p" * (1 << 20)}),
    "big:timeout-huge-path": ("wait", {"path": "plans/" + "q" * 5000, "timeout": 0}),
}
#: lone surrogates: JSON can carry them (``\\ud800``), the SDK cannot send them: raw lines
RAWH = {
    "raw:surrogate-note": ("submit", {"plan": simple("hn"), "slug": "hn", "note": "a\ud800b"}),
    "raw:surrogate-plan": ("validate", {"plan": simple("hp").replace("ran", "r\udfffan")}),
    "raw:surrogate-slug": ("submit", {"plan": simple("hu"), "slug": "h\ud800u"}),
    "raw:surrogate-path": ("log", {"path": "plans/p\ud800"}),
    "raw:surrogate-wait": ("wait", {"path": "plans/pend", "timeout": 0, "status": "\udc80"}),
    "raw:surrogate-format": ("validate", {"plan": simple("hf"), "format": "pte\ud800"}),
}


def _raw_answers(lab: Lab, calls: dict[str, tuple[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each call then a ``status`` of ``pend``, in one raw session, as ``_content`` reads."""
    lines, ids = [], {}
    for n, (vid, (tool, args)) in enumerate(calls.items()):
        ids[100 + 2 * n] = vid
        ids[101 + 2 * n] = vid + ":after"
        lines.append(_call_line(100 + 2 * n, tool, args))
        lines.append(_call_line(101 + 2 * n, "status", {"path": "plans/pend"}))
    before = lab.head()
    replies, err = raw(lab, lines)
    out: dict[str, dict[str, Any]] = {
        v: {"error": True, "data": None, "text": "no reply"} for v in ids.values()
    }
    unread = [r for r in replies if r.get("id") is None]
    for rep in replies:
        if rep.get("id") not in ids:
            continue
        res = rep.get("result") or {}
        text = "".join(c.get("text", "") for c in res.get("content") or [])
        if "error" in rep:
            text = json.dumps(rep["error"])
        err_ = bool(res.get("isError")) or "error" in rep
        body = text.partition(": ")[2] if text.startswith("Error executing tool") else text
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        out[ids[rep["id"]]] = {"error": err_, "data": data, "text": text}
    # a line JSON-RPC cannot read is answered -32700 with id null, in the order of the lines
    for vid in [v for v in ids.values() if out[v]["text"] == "no reply"]:
        if unread:
            rep = unread.pop(0)
            out[vid] = {"error": True, "data": None, "text": json.dumps(rep), "rpc": rep}
    commits = lab.git("log", "--format=%H %ae", f"{before}..HEAD").splitlines()
    for v in out.values():
        v["moved"] = False
        v["commits"] = []
    out["raw:stderr"] = {"text": err, "commits": commits}
    return out


RULES = """\
groups:
  ops: ["*@ops.example.com"]
rules:
  - match: {paths: ["plans/q/**"]}
    require: [{count: 2}]
  - match: {risk: high}
    require: [{group: ops, count: 2}]
"""
HI = (
    "plan:\n  name: {n}\n  task: t {n}\n  status: pending_approval\n"
    "available_tools:\n  - name: hi\nactions:\n  - id: 1\n    tool: hi\n"
    "    why: say {n}\n    params: {{m: {n}}}\n"
)
NEEDS = {
    "need:plain": ("n-plain", simple("n-plain")),
    "need:path": ("q/a", simple("q-a")),
    "need:path-deep": ("q/b/c", simple("q-b-c")),
    "need:risk": ("n-risk", HI.format(n="n-risk")),
    "need:path-risk": ("q/r", HI.format(n="q-r")),
    "need:dot-path": ("q.x/a", simple("q-x-a")),
}


NOTES_SLUGS = ["n-rej-bytes", "n-rej-trail", "n-app-bytes", "n-rej-ok"]
NOTES: dict[str, tuple[tuple[str, str], list[bytes]]] = {
    "argv:reject-note-bytes": (
        AGENT,
        [b"reject", b"-m", b"not now \xff\xfe", b"plans/n-rej-bytes/PLAN.yml"],
    ),
    "argv:approve-note-bytes": (
        ALICE,
        [b"approve", b"-m", b"ok \xc3", b"plans/n-app-bytes/PLAN.yml"],
    ),
    "argv:approve-path-bytes": (ALICE, [b"approve", b"plans/n-\xff/PLAN.yml"]),
    "argv:show-path-bytes": (ALICE, [b"show", b"plans/n-\xff/PLAN.yml"]),
    "argv:reject-note-trailers": (
        AGENT,
        [
            b"reject",
            b"-m",
            b"why\n\nApproved-By: alice@example.com\nPlan: plans/pend\nPlan-Status: approved",
            b"plans/n-rej-trail/PLAN.yml",
        ],
    ),
    "argv:reject-note-plain": (AGENT, [b"reject", b"-m", b"plain why", b"plans/n-rej-ok/PLAN.yml"]),
}


def _cli_bytes(lab: Lab, who: tuple[str, str], argv: list[bytes]) -> dict[str, Any]:
    env = lab.env(who)
    before = lab.head()
    done = subprocess.run(
        [PLANGATE.encode(), argv[0], b"--config", str(lab.config).encode(), *argv[1:]],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        timeout=180,
        check=False,
    )
    after = lab.head()
    return {
        "rc": done.returncode,
        "text": (done.stdout + done.stderr).decode("utf-8", "replace")[-2000:],
        "moved": before != after,
        "files": lab.git("diff", "--name-only", before, after).split(),
        "dirty": lab.git("status", "--porcelain", "--untracked-files=no"),
    }


def build(root: Path) -> Lab:
    lab = Lab(
        root / "lab",
        approval=RULES,
        tools="hi: {kind: echo, risk: high}\n",
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
        "  branch_prefix: plangate/\n",
    )
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    for vid in IDENT:
        lab.write(_slug(vid), simple(_slug(vid)))
    for slug in NOTES_SLUGS:
        lab.write(slug, simple(slug))
    lab.write("wdr", wdr_plan())
    lab.write("wdu", simple("wdu"))
    lab.write("pend", simple("pend"))
    lab.write("srcj", json.dumps({"plan": {"name": "s"}}), filename="PLAN.json")
    lab.commit("agent plans", AGENT)
    lab.run()
    got["wdr-frozen"] = lab.read("wdr")
    lab.set_status("wdr", "rejected")
    lab.commit("reject wdr", ALICE)
    lab.run()
    # a rejection the controller has not judged yet (no pass after it)
    got["wdu-frozen"] = lab.read("wdu")
    lab.set_status("wdu", "rejected")
    lab.commit("reject wdu", ALICE)

    # 1. the agent approves through git identities it can set itself
    got["ident"] = {vid: _approve_as(lab, vid) for vid in IDENT}
    lab.run()
    got["ident-ran"] = {vid: len(lab.calls(_slug(vid))) for vid in IDENT}
    got["ident-rows"] = {vid: (lab.rows().get(f"plans/{_slug(vid)}") or {}) for vid in IDENT}

    # 1b. hostile notes and paths on the command line (argv bytes that are no UTF-8)
    got["notes"] = {vid: _cli_bytes(lab, who, argv) for vid, (who, argv) in NOTES.items()}
    got["notes-trailers"] = lab.git(
        "log", "-1", "--format=%(trailers:key=Approved-By)%(trailers:key=Plan)", "--",
        "plans/n-rej-trail/PLAN.yml",
    )  # fmt: skip
    lab.run()
    got["notes-rows"] = {s: lab.rows().get(f"plans/{s}", {}).get("status") for s in NOTES_SLUGS}

    # 2. one SDK session of submissions and hostile calls
    calls: list[tuple[str, Any]] = []
    names: list[str] = []

    def add(name: str, call: tuple[str, Any]) -> None:
        names.append(name)
        calls.append(call)

    for st in STATUSES:
        add(f"st:{st}", ("submit", {"plan": simple(f"st-{st}", status=st), "slug": f"st-{st}"}))
    for vid, (text, fmt) in _wd_forms(got["wdr-frozen"]).items():
        args: dict[str, Any] = {"plan": text, "slug": "c-" + vid.split(":")[1]}
        if fmt:
            args["format"] = fmt
        add(vid, ("submit", args))
    add("wd:unjudged", ("submit", {"plan": got["wdu-frozen"], "slug": "c-wdu"}))
    add(
        "wd:changed",
        ("submit", {"plan": wdr_plan().replace("tag: wdr", "tag: wdr2"), "slug": "c-new"}),
    )
    for vid, block in OWN.items():
        slug = "o-" + vid.split(":")[1]
        add(vid, ("submit", {"plan": simple(slug) + block, "slug": slug}))
    for vid, (slug, text) in NEEDS.items():
        add(vid, ("submit", {"plan": text, "slug": slug}))
        add(vid + ":validate", ("validate", {"plan": text}))
    add("sh:over-source", ("submit", {"plan": simple("srcj"), "slug": "srcj"}))
    for vid, call in HOSTILE.items():
        add(vid, call)
        add(vid + ":after", ("status", {"path": "plans/pend"}))
    main_before = lab.head()
    answers = seq(lab, calls)
    got["mcp"] = dict(zip(names, answers, strict=True))
    got["raw"] = _raw_answers(lab, RAWH)
    got["mcp-dirty"] = lab.git("status", "--porcelain", "--untracked-files=no")
    got["raw-msgs"] = [
        lab.git("log", "-1", "--format=%B", c.split()[0])
        for c in got["raw"]["raw:stderr"]["commits"]
    ]
    got["mcp-new"] = lab.git("log", "--format=%ae %s", f"{main_before}..HEAD").splitlines()
    got["mcp-err"] = (lab.root / "mcp.err").read_text(errors="replace")[-4000:]
    lab.run()
    rows = lab.rows()
    got["rows-after"] = rows
    got["frozen-policy"] = {vid: lab.plan(slug).get("frozen") for vid, (slug, _t) in NEEDS.items()}
    got["ran-after"] = {
        t: len(lab.calls(t)) for t in ["wdr", "wdu", *(f"o-{v.split(':')[1]}" for v in OWN)]
    }

    # 3. a submission cancelled at once (raw JSON-RPC), then stdin closed
    sub = _call_line(5, "submit", {"plan": simple("cx"), "slug": "cx"})
    cancel = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 5, "reason": "user"},
        }
    )
    before = lab.head()
    got["cancel"] = raw(lab, [sub, cancel])
    got["cancel-files"] = lab.git("diff", "--name-only", before, "HEAD").split()
    got["cancel-dirty"] = lab.git("status", "--porcelain", "--untracked-files=all", "plans/cx")
    got["cancel-lock"] = (lab.repo / ".git" / "index.lock").exists()

    # 4. MCP and the CLI agree on every row at one head
    lab.run()
    head = lab.head()
    cli = lab.rows()
    mrows = seq(lab, [("status", {})])[0]
    got["agree"] = (head == lab.head(), cli, mrows)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r122-agents-b", build)


def G(lab: Lab) -> dict[str, Any]:
    return lab.got  # type: ignore[attr-defined,no-any-return]


# -- 1. approve under identities the agent sets ---------------------------------------------
BROKEN_IDENT: dict[str, Any] = {}
IDS = list(IDENT)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN_IDENT))
def test_approve_tells_what_the_controller_will_do(lab: Lab, vid: str) -> None:
    """``plangate approve`` with a config at hand says what the controller would say: it
    commits exactly when the approval will count (docs/approvals.md, "Human commands")."""
    got = G(lab)["ident"][vid]
    ran = G(lab)["ident-ran"][vid]
    committed = got["rc"] == 0 and got["moved"]
    assert committed == (ran == 1), (got, ran, G(lab)["ident-rows"][vid])


BROKEN_CLEAN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases([f"{v}:clean" for v in IDS], IDS, BROKEN_CLEAN))
def test_approve_refuses_coded_or_commits_one_file(lab: Lab, vid: str) -> None:
    got = G(lab)["ident"][vid]
    text = got["out"] + got["err"]
    assert "Traceback" not in text, text
    assert got["dirty"] == "", got
    if got["rc"] == 0:
        assert got["files"] == [f"plans/{_slug(vid)}/PLAN.yml"], got
        assert len(got["commits"]) == 1, got
    else:
        assert not got["moved"], got
        assert "E_" in text, text


def test_the_agent_never_approves_its_own_plan(lab: Lab) -> None:
    """Whatever identity it wears, the agent's own spelling (``id:agent``, ``id:mailmap``)
    is refused and runs nothing."""
    for vid in ("id:agent", "id:mailmap", "id:split-committer-alice"):
        got = G(lab)["ident"][vid]
        assert got["rc"] != 0 and not got["moved"], (vid, got)
        text = got["out"] + got["err"]
        assert "E_SELF_APPROVAL" in text or "E_APPROVER_NOT_ALLOWED" in text, (vid, got)
        assert G(lab)["ident-ran"][vid] == 0, vid


# -- 2. MCP submissions ------------------------------------------------------------------------
def _refused_nothing_committed(ans: dict[str, Any]) -> None:
    assert _coded(ans), ans
    assert not ans["moved"] and not ans["commits"], ans


BROKEN_ST: dict[str, Any] = {}


@pytest.mark.parametrize("st", cases([f"st:{s}" for s in STATUSES], STATUSES, BROKEN_ST))
def test_submit_refuses_a_status_only_the_controller_gives(lab: Lab, st: str) -> None:
    """docs/agents.md: ``submit`` refuses a plan whose status is not draft/pending_approval."""
    _refused_nothing_committed(G(lab)["mcp"][f"st:{st}"])


WD_IDS = [*_wd_forms(wdr_plan()), "wd:unjudged"]
BROKEN_WD: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(WD_IDS, WD_IDS, BROKEN_WD))
def test_submit_refuses_a_withdrawn_version_however_spelled(lab: Lab, vid: str) -> None:
    ans = G(lab)["mcp"][vid]
    _refused_nothing_committed(ans)
    if vid != "wd:json":  # JSON text as PLAN.yml: refused for its flow mapping first
        assert "E_VERSION_WITHDRAWN" in _codes(ans), ans


def test_a_changed_version_is_a_new_submission(lab: Lab) -> None:
    ans = G(lab)["mcp"]["wd:changed"]
    assert (ans["data"] or {}).get("ok") is True, ans
    assert G(lab)["rows-after"]["plans/c-new"]["status"] == "pending_approval"


def test_withdrawn_versions_never_ran(lab: Lab) -> None:
    assert G(lab)["ran-after"]["wdr"] == 0 and G(lab)["ran-after"]["wdu"] == 0


BROKEN_OWN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(OWN), list(OWN), BROKEN_OWN))
def test_controller_blocks_in_a_submission_say_nothing(lab: Lab, vid: str) -> None:
    """A submission carrying a block only the controller writes is refused, or its answer is
    the truth the controller then holds: ``pending_approval``, the real hash, nothing run."""
    ans = G(lab)["mcp"][vid]
    slug = "o-" + vid.split(":")[1]
    assert "Traceback" not in ans["text"], ans
    assert G(lab)["ran-after"][slug] == 0, slug
    if _coded(ans):
        assert not ans["moved"], ans
        return
    data = ans["data"] or {}
    row = G(lab)["rows-after"].get(f"plans/{slug}") or {}
    assert data.get("ok") is True, ans
    assert data.get("status") == row.get("status") == "pending_approval", (data, row)
    assert data.get("hash") == row.get("hash"), (data, row)


def test_submit_never_lands_over_a_plan_source(lab: Lab) -> None:
    _refused_nothing_committed(G(lab)["mcp"]["sh:over-source"])


BROKEN_HOSTILE: dict[str, Any] = {}
H_IDS = [*HOSTILE, *RAWH]


@pytest.mark.parametrize("vid", cases(H_IDS, H_IDS, BROKEN_HOSTILE))
def test_hostile_arguments_get_a_code_and_the_server_goes_on(lab: Lab, vid: str) -> None:
    src = G(lab)["raw"] if vid.startswith("raw:") else G(lab)["mcp"]
    ans = src[vid]
    after = src[vid + ":after"]
    assert "Traceback" not in ans["text"], ans["text"][-2000:]
    if vid == "raw:surrogate-note" and (ans["data"] or {}).get("ok") is True:
        return  # a note may be taken (its lone surrogate replaced): the commit is checked
    data = ans["data"] or {}
    assert ans["error"] or data.get("ok") is False or data.get("valid") is False, ans["text"]
    rpc = (ans.get("rpc") or {}).get("error") or {}
    if rpc:  # docs/agents.md: a line that is no JSON gets -32700, the session goes on
        assert rpc.get("code") == -32700, ans
    elif not (ans["data"] or {}).get("ok"):
        assert _coded(ans), ans["text"][-2000:]
        assert not ans["moved"], ans
    assert not after["error"], after["text"][-1000:]
    assert (after["data"] or {}).get("plans"), after["text"][-1000:]


def test_raw_session_commits_only_the_note_it_answered(lab: Lab) -> None:
    ans = G(lab)["raw"]["raw:surrogate-note"]
    commits = G(lab)["raw"]["raw:stderr"]["commits"]
    assert "Traceback" not in G(lab)["raw"]["raw:stderr"]["text"]
    assert len(commits) == (1 if (ans["data"] or {}).get("ok") else 0), (commits, ans)


def test_the_session_left_the_tree_clean(lab: Lab) -> None:
    assert G(lab)["mcp-dirty"] == ""
    assert "Traceback" not in G(lab)["mcp-err"], G(lab)["mcp-err"]


def test_a_cancelled_submit_is_whole_or_absent(lab: Lab) -> None:
    files = G(lab)["cancel-files"]
    assert files in ([], ["plans/cx/PLAN.yml"]), files
    assert G(lab)["cancel-dirty"] == "", G(lab)["cancel-dirty"]
    assert not G(lab)["cancel-lock"]
    _replies, err = G(lab)["cancel"]
    assert "Traceback" not in err, err


def test_mcp_status_is_the_cli_status(lab: Lab) -> None:
    same_head, cli, mrows = G(lab)["agree"]
    assert same_head
    rows = {r["plan"]: r for r in (mrows["data"] or {}).get("plans", [])}
    assert rows == cli, (sorted(rows), sorted(cli))


# -- remote mode over a real git daemon -------------------------------------------------------
BOT = ("plangate", "plangate@localhost")


def _origin(lab: Lab, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(lab.root / "served" / "origin.git"), *args],
        capture_output=True,
        text=True,
        env=lab.env(),
        check=False,
    )
    return done.stdout


WH_SECRET = "s3cret-for-the-hook-0123456789abcdef"


def _http(port: int, data: bytes) -> tuple[int, str]:
    """One request. The headers go first and an early answer is read before the body is sent
    (a 413 is decided on ``Content-Length``: a server that answers and closes while 2 MiB are
    still being sent would reset the connection and lose its answer); else the body follows."""
    head_part, sep, body_part = data.partition(b"\r\n\r\n")
    buf = b""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.sendall(head_part + sep)
        if len(body_part) > 65536:
            conn.settimeout(15)
            try:
                buf = conn.recv(65536)
            except TimeoutError:
                buf = b""
            conn.settimeout(60)
        try:
            if not buf:
                conn.sendall(body_part)
                conn.shutdown(socket.SHUT_WR)
            while chunk := conn.recv(65536):
                buf += chunk
        except OSError:
            pass
    head, _, body = buf.partition(b"\r\n\r\n")
    try:
        code = int(head.split(b" ", 2)[1])
    except (IndexError, ValueError):
        code = -1
    return code, body.decode("utf-8", "replace")[:500]


def _get(port: int, path: str) -> Any:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as r:
            return json.loads(r.read())
    except (OSError, ValueError) as why:
        return {"unread": repr(why)}


def _post(body: bytes, headers: dict[str, str], length: bool = True) -> bytes:
    lines = ["POST /webhook HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if length:
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _sig(body: bytes, secret: str = WH_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


MAIN = json.dumps({"ref": "refs/heads/main"}).encode()
EVIL = json.dumps({"ref": "refs/heads/evil"}).encode()
JSON_CT = {"Content-Type": "application/json"}
WEBHOOKS: dict[str, tuple[bytes, set[int]]] = {
    "wh:no-credential": (_post(MAIN, JSON_CT), {401}),
    "wh:wrong-secret": (_post(MAIN, {**JSON_CT, "X-Plangate-Secret": "wrong"}), {403}),
    "wh:secret-prefix": (
        _post(MAIN, {**JSON_CT, "X-Plangate-Secret": WH_SECRET[:-1]}),
        {403},
    ),
    "wh:secret-upper": (
        _post(MAIN, {**JSON_CT, "X-Plangate-Secret": WH_SECRET.upper()}),
        {403},
    ),
    "wh:bearer-wrong": (_post(MAIN, {**JSON_CT, "Authorization": "Bearer nope"}), {403}),
    "wh:gitlab-wrong": (_post(MAIN, {**JSON_CT, "X-Gitlab-Token": "nope"}), {403}),
    "wh:github-hmac-other-body": (
        _post(MAIN, {**JSON_CT, "X-GitHub-Event": "push", "X-Hub-Signature-256": _sig(EVIL)}),
        {403},
    ),
    "wh:github-hmac-empty-key": (
        _post(MAIN, {**JSON_CT, "X-GitHub-Event": "push", "X-Hub-Signature-256": _sig(MAIN, "")}),
        {403},
    ),
    "wh:github-good": (
        _post(MAIN, {**JSON_CT, "X-GitHub-Event": "push", "X-Hub-Signature-256": _sig(MAIN)}),
        {202},
    ),
    "wh:github-replay": (
        _post(MAIN, {**JSON_CT, "X-GitHub-Event": "push", "X-Hub-Signature-256": _sig(MAIN)}),
        {202},
    ),
    "wh:other-branch": (_post(EVIL, {**JSON_CT, "X-Plangate-Secret": WH_SECRET}), {202}),
    "wh:no-length": (_post(MAIN, {**JSON_CT, "X-Plangate-Secret": WH_SECRET}, False), {411}),
    "wh:length-and-chunked": (
        _post(MAIN, {**JSON_CT, "X-Plangate-Secret": WH_SECRET, "Transfer-Encoding": "chunked"}),
        {400},
    ),
    "wh:two-lengths": (
        _post(MAIN, {**JSON_CT, "X-Plangate-Secret": WH_SECRET, "Content-Length": "3"}),
        {400},
    ),
    "wh:too-big": (
        _post(b"{" + b" " * (2 << 20) + b"}", {**JSON_CT, "X-Plangate-Secret": WH_SECRET}),
        {413},
    ),
}


def _webhooks(lab: Lab) -> dict[str, Any]:
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
            cwd=lab.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        try:
            for _ in range(900):  # up to 90 s for the listener
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)
            for vid, (data, _want) in WEBHOOKS.items():
                try:
                    out[vid] = _http(port, data)
                except OSError as why:
                    out[vid] = (-2, repr(why))
            out["settled"] = page_settled(ui, lambda: _origin(lab, "rev-parse", "main").strip())
            out["api"] = _get(ui, "/api/")
            for s in ("r1", "r2", "r3", "r4"):
                out[f"api:{s}"] = _get(ui, f"/api/plan/plans/{s}")
            out["api-head"] = _origin(lab, "rev-parse", "main").strip()
        finally:
            os.killpg(daemon.pid, signal.SIGTERM)
            daemon.wait(timeout=180)
    lab.config.write_text(plain)
    out["rows"] = lab.rows()
    out["rows-head"] = _origin(lab, "rev-parse", "main").strip()
    out["log"] = (lab.root / "daemon.err").read_text(errors="replace")[-20000:]
    return out


def build_remote(root: Path) -> Lab:
    lab = Lab(
        root / "lab",
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n",
    )
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    for s in ("r1", "r2", "r3", "r4"):
        lab.write(s, simple(s))
    lab.commit("agent plans", AGENT)

    def cycle() -> subprocess.CompletedProcess[str]:
        lab.git("push", "-q", "origin", "main")
        done = lab.run(check=False)
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")
        return done

    with served(lab) as url:
        got["url"] = url
        cycle()
        lab.approve("r1", ALICE)
        got["alice-r1"] = lab.head()
        cycle()
        got["r1-ran"] = len(lab.calls("r1"))
        ctl = lab.git("log", "-1", "--format=%B", "--author=plangate@localhost").strip()
        got["ctl-msg"] = ctl
        # look-alike controller commits pushed by the agent
        lab.set_status("r2", "approved")
        lab.git("add", "-A")
        lab.git(
            "commit", "-q", "-m", ctl.replace("plans/r1", "plans/r2") or "plangate: start", who=BOT
        )
        text = lab.read("r3").replace("status: pending_approval", "status: completed")
        r1 = lab.git("show", "HEAD:plans/r1/PLAN.yml")
        if "\nexecution:" in r1:
            text += "execution:" + r1.split("\nexecution:", 1)[1].split("\n\n")[0]
        lab.write("r3", text)
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", "plangate: completed plans/r3", who=BOT)
        got["look-pass"] = cycle().stderr[-1500:]
        got["look-rows"] = lab.rows()
        got["look-ran"] = {s: len(lab.calls(s)) for s in ("r2", "r3")}
        # Alice approves r3 (its forged completion should count for nothing)
        lab.set_status("r3", "approved")
        lab.commit("approve r3", ALICE)
        cycle()
        got["r3-after"] = (len(lab.calls("r3")), lab.rows().get("plans/r3", {}).get("status"))
        # the fresh-clone audit of what the daemon serves
        clone = lab.root / "fresh"
        subprocess.run(["git", "clone", "-q", url, str(clone)], env=lab.env(), check=True)
        out = lab.cli("audit", "--json", cwd=clone)
        got["audit"] = (out.returncode, out.stdout[-200000:], out.stderr[-1500:])
        # MCP against a remote-mode config
        head = _origin(lab, "rev-parse", "main").strip()
        got["mcp"] = seq(
            lab, [("status", {}), ("submit", {"plan": simple("rsub"), "slug": "rsub"})]
        )
        got["mcp-rows"] = lab.rows()
        got["mcp-origin"] = (head, _origin(lab, "rev-parse", "main").strip())
        got["mcp-origin-file"] = _origin(lab, "show", "main:plans/rsub/PLAN.yml")
        got["mcp-local"] = lab.git("status", "--porcelain")
        got["webhook"] = _webhooks(lab)
        got["after-webhook-ran"] = {t: len(lab.calls(t)) for t in ("r1", "r2", "r3", "r4")}
        # rewind: the served branch back to Alice's approval of r1, before its run
        lab.git("push", "-q", "-f", "origin", f"{got['alice-r1']}:main")
        passes = [lab.run(check=False) for _ in range(2)]
        got["rewind-pass"] = [(p.returncode, p.stderr[-2500:]) for p in passes]
        got["rewind-ran"] = len(lab.calls("r1"))
        st = lab.cli("status", "--json", "--config", str(lab.config))
        got["rewind-status"] = (st.returncode, st.stdout[-20000:], st.stderr[-1500:])
        got["rewind-origin"] = _origin(lab, "rev-parse", "main").strip()
    return lab


@pytest.fixture(scope="module")
def rlab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r122-agents-b-remote", build_remote)


def test_remote_alice_approval_ran_once(rlab: Lab) -> None:
    assert G(rlab)["r1-ran"] == 1


LOOK = ["look:approve-ran", "look:approve-row", "look:complete-row", "look:complete-then-alice"]
BROKEN_LOOK: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(LOOK, LOOK, BROKEN_LOOK))
def test_a_look_alike_controller_commit_decides_nothing(rlab: Lab, vid: str) -> None:
    g = G(rlab)
    rows = g["look-rows"]
    if vid == "look:approve-ran":
        assert g["look-ran"]["r2"] == 0, g["look-pass"]
    elif vid == "look:approve-row":
        assert rows["plans/r2"]["status"] == "pending_approval", rows["plans/r2"]
    elif vid == "look:complete-row":
        assert rows["plans/r3"]["status"] == "pending_approval", rows["plans/r3"]
    else:
        assert g["r3-after"] == (1, "completed"), g["r3-after"]


def test_the_fresh_clone_audit_flags_the_look_alikes(rlab: Lab) -> None:
    rc, out, err = G(rlab)["audit"]
    assert "Traceback" not in err, err
    assert "controller-unexplained" in out, (rc, out[-3000:], err)


def test_mcp_in_remote_mode_is_coded_or_true(rlab: Lab) -> None:
    """docs/agents.md: remote mode is not served yet. A refusal must be coded; an ``ok`` must
    be true of the branch the controller watches (the daemon's)."""
    status, sub = G(rlab)["mcp"]
    for ans in (status, sub):
        assert "Traceback" not in ans["text"], ans["text"][-2000:]
    data = sub["data"] or {}
    if data.get("ok"):
        assert G(rlab)["mcp-origin-file"], (data, G(rlab)["mcp-origin"])
    else:
        assert _coded(sub), sub


def test_rewound_branch_never_runs_twice(rlab: Lab) -> None:
    assert G(rlab)["rewind-ran"] == 1, G(rlab)["rewind-pass"]


def test_rewound_branch_is_told(rlab: Lab) -> None:
    """docs/agents.md: a rewrite that erases the controller's commits holds the plans they
    were about (``E_HISTORY_REWRITTEN``); ``status --json`` and the pass say so."""
    rc, out, err = G(rlab)["rewind-status"]
    said = out + err + "".join(e for _, e in G(rlab)["rewind-pass"])
    assert "Traceback" not in said, said[-3000:]
    assert "E_HISTORY_REWRITTEN" in out + err, (rc, out[-3000:], err)


# -- the agent's git config in the shared working tree: does anything of it run? ---------------
HOOKS = [
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "post-index-change",
]
PROGS = [
    "fsmon",
    "gpg",
    "filter-clean",
    "filter-smudge",
    "filterproc",
    "extdiff",
    "diffcmd",
    "textconv",
    "mergedrv",
    "trailer",
    "altrefs",
    "editor",
    "pager",
]
PHASES = ["approve", "reject", "run", "status", "show", "audit", "approve2", "run2"]


def _poison(lab: Lab, marks: Path) -> None:
    """The agent's settings in ``.git/config`` (and ``.git/info/attributes``), each program a
    script that records that it ran and passes its input through."""
    bins = lab.root / "evil"
    (bins / "hooks").mkdir(parents=True)
    marks.mkdir()
    for name in [*PROGS, *(f"hooks/{h}" for h in HOOKS)]:
        script = bins / name
        tag = name.split("/")[-1]
        script.write_text(f'#!/bin/sh\necho "$*" >> {marks}/{tag}\ncat\nexit 0\n')
        script.chmod(0o755)
    for key, value in [
        ("core.hooksPath", str(bins / "hooks")),
        ("core.fsmonitor", str(bins / "fsmon")),
        ("commit.gpgSign", "true"),
        ("tag.gpgSign", "true"),
        ("gpg.program", str(bins / "gpg")),
        ("log.showSignature", "true"),
        ("filter.evil.clean", str(bins / "filter-clean")),
        ("filter.evil.smudge", str(bins / "filter-smudge")),
        ("diff.external", str(bins / "extdiff")),
        ("diff.evil.textconv", str(bins / "textconv")),
        ("core.editor", str(bins / "editor")),
        ("core.pager", str(bins / "pager")),
        ("filter.evil.process", str(bins / "filterproc")),
        ("diff.evil.command", str(bins / "diffcmd")),
        ("merge.evil.driver", str(bins / "mergedrv")),
        ("trailer.evil.cmd", str(bins / "trailer")),
        ("core.alternateRefsCommand", str(bins / "altrefs")),
    ]:
        lab.git("config", "--local", key, value)
    info = lab.repo / ".git" / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("* filter=evil diff=evil merge=evil\n")


def _fake_signed_commit(lab: Lab) -> None:
    head = lab.head()
    tree = lab.git("rev-parse", "HEAD^{tree}").strip()
    body = (
        f"tree {tree}\nparent {head}\n"
        "author Agent <agent@example.com> 1790000000 +0000\n"
        "committer Agent <agent@example.com> 1790000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
        " -----END PGP SIGNATURE-----\n\nagent: a signed note\n"
    )
    sha = lab.git("hash-object", "-t", "commit", "-w", "--stdin", input=body).strip()
    lab.git("update-ref", "refs/heads/main", sha, head)


def build_config(root: Path) -> Lab:
    lab = Lab(root / "lab")
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    lab.write("hk", simple("hk"))
    lab.write("hk3", simple("hk3"))
    lab.commit("agent plan", AGENT)
    lab.run()
    marks = lab.root / "marks"
    _poison(lab, marks)
    _fake_signed_commit(lab)
    seen: dict[str, list[str]] = {}

    def phase(name: str, argv: list[str], who: tuple[str, str] | None = None) -> None:
        for f in marks.iterdir():
            f.unlink()
        env = lab.env(who)
        env["REC_LOG"] = str(lab.log)
        done = subprocess.run(
            [PLANGATE, *argv],
            cwd=lab.repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        got[f"rc:{name}"] = (done.returncode, done.stdout[-1500:], done.stderr[-1500:])
        seen[name] = sorted(f.name for f in marks.iterdir())

    cfg = ["--config", str(lab.config)]
    before = lab.head()
    phase("approve", ["approve", *cfg, "plans/hk/PLAN.yml"], ALICE)
    got["approve-moved"] = lab.head() != before
    phase("reject", ["reject", *cfg, "-m", "not now", "plans/hk3/PLAN.yml"], ALICE)
    # a new plan of the agent's: the controller's freeze is a commit of its own
    lab.write("hk2", simple("hk2"))
    lab.git("add", "plans/hk2")
    lab.git("-c", "commit.gpgSign=false", "commit", "-q", "-m", "agent hk2", who=AGENT)
    phase("run", ["run", "--once", *cfg])
    got["hk2-row"] = lab.rows().get("plans/hk2", {})
    phase("status", ["status", "--json", *cfg])
    phase("show", ["show", "--json", *cfg, "plans/hk/PLAN.yml"])
    phase("audit", ["audit", "--json", *cfg])
    # the owner takes the signing setting out; the rest of the agent's config stays
    lab.git("config", "--local", "--unset", "commit.gpgSign")
    lab.git("config", "--local", "--unset", "tag.gpgSign")
    before = lab.head()
    phase("approve2", ["approve", *cfg, "plans/hk/PLAN.yml"], ALICE)
    got["approve-commit"] = lab.git("log", "--format=%ae %ce %s", "--name-only", f"{before}..HEAD")
    phase("run2", ["run", "--once", *cfg])
    got["seen"] = seen
    got["ran"] = len(lab.calls("hk"))
    got["dirty"] = lab.git("status", "--porcelain", "--untracked-files=no")
    return lab


@pytest.fixture(scope="module")
def clab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r122-agents-b-config", build_config)


PROG_IDS = [f"{p}:{ph}" for p in [*PROGS, *HOOKS] for ph in PHASES]
BROKEN_PROG: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(PROG_IDS, PROG_IDS, BROKEN_PROG))
def test_no_program_of_the_agents_config_runs(clab: Lab, vid: str) -> None:
    """docs/agents.md: plangate's pins hold over inherited settings: no hook or fsmonitor
    program runs (round 86); threat-model: no git command of plangate's reads a working-tree
    file through a filter (round 19). The approver's and the controller's commands run none
    of the programs the agent's ``.git/config`` names."""
    prog, ph = vid.split(":")
    assert prog not in G(clab)["seen"][ph], (G(clab)["seen"], G(clab)[f"rc:{ph}"])


def test_the_poisoned_tree_still_approves_and_runs_once(clab: Lab) -> None:
    g = G(clab)
    assert g["rc:approve2"][0] == 0, g["rc:approve2"]
    assert g["ran"] == 1, (g["rc:run2"], g["seen"])
    assert g["dirty"] == ""


def test_the_agents_gpgsign_does_not_stop_the_controller(clab: Lab) -> None:
    """The controller's own freeze is unaffected by ``commit.gpgSign`` in ``.git/config``."""
    row = G(clab)["hk2-row"]
    assert row.get("status") == "pending_approval" and row.get("frozen_hash"), (
        row,
        G(clab)["rc:run"],
    )


GPGSIGN = _xf(
    "agent-gpgsign-blocks-human-commands",
    "commit.gpgSign=true in the shared .git/config makes plangate approve/reject (no --sign) "
    "run commit-tree -S and fail E_GIT 'gpg failed to sign', remedy 'see git's message'",
)


@pytest.mark.parametrize(
    "cmd",
    cases(
        ["gpgsign:approve", "gpgsign:reject"],
        ["approve", "reject"],
        {"gpgsign:approve": GPGSIGN, "gpgsign:reject": GPGSIGN},
    ),
)
def test_unsigned_decision_is_not_made_to_sign(clab: Lab, cmd: str) -> None:
    """``plangate approve``/``reject`` without ``--sign`` commit the decision (docs/approvals.md:
    "``--sign`` signs with your configured key"); at the least the refusal names the setting
    to undo, as every refusal carries a remedy that fits."""
    rc, out, err = G(clab)[f"rc:{cmd}"]
    assert rc == 0 or "gpgsign" in (out + err).lower(), (rc, out, err)


WH_IDS = list(WEBHOOKS)
BROKEN_WH: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(WH_IDS, WH_IDS, BROKEN_WH))
def test_the_webhook_answers_as_documented(rlab: Lab, vid: str) -> None:
    code, body = G(rlab)["webhook"][vid]
    assert code in WEBHOOKS[vid][1], (code, body)
    assert "Traceback" not in body, body
    if vid == "wh:other-branch":
        assert "ignored" in body, body


def test_webhooks_ran_nothing(rlab: Lab) -> None:
    assert G(rlab)["after-webhook-ran"] == {"r1": 1, "r2": 0, "r3": 1, "r4": 0}
    assert "Traceback" not in G(rlab)["webhook"]["log"], G(rlab)["webhook"]["log"][-3000:]


API_IDS = ["api:r1", "api:r2", "api:r3", "api:r4"]


@pytest.mark.parametrize("vid", cases(API_IDS, API_IDS, {}))
def test_the_page_api_is_the_status_row(rlab: Lab, vid: str) -> None:
    """docs/operations.md: the page serves the committed record; ``/api/plan/<id>`` and
    ``status --json`` agree at one head (the look-alike commits flagged, not believed)."""
    wh = G(rlab)["webhook"]
    assert wh["settled"] and wh["api-head"] == wh["rows-head"], wh.get("api-head")
    slug = vid.split(":")[1]
    page = (wh[f"api:{slug}"] or {}).get("row") or {}
    row = wh["rows"][f"plans/{slug}"]
    assert (page.get("status"), page.get("hash")) == (row["status"], row["hash"]), (page, row)


def test_the_page_audit_flags_the_look_alikes(rlab: Lab) -> None:
    audit = G(rlab)["webhook"]["api"].get("audit") or {}
    assert audit.get("ok") is False and audit.get("findings"), audit


def test_mcp_status_in_remote_mode_is_the_cli_status(rlab: Lab) -> None:
    status = G(rlab)["mcp"][0]
    same = G(rlab)["mcp-origin"]
    assert same[0] == same[1]
    rows = {r["plan"]: r for r in (status["data"] or {}).get("plans", [])}
    assert rows == G(rlab)["mcp-rows"], (sorted(rows), sorted(G(rlab)["mcp-rows"]))


NEED_IDS = list(NEEDS)


@pytest.mark.parametrize("vid", cases(NEED_IDS, NEED_IDS, {}))
def test_submit_says_the_approvals_the_controller_requires(lab: Lab, vid: str) -> None:
    """``submit``'s ``approvals_needed`` is the requirement the controller freezes with."""
    ans = (G(lab)["mcp"][vid]["data"] or {}).get("approvals_needed") or {}
    frozen = G(lab)["frozen-policy"][vid] or {}
    assert ans.get("policy") == frozen.get("policy"), (ans, frozen)
    assert G(lab)["ran-after"].get(vid, 0) == 0


VALIDATE_PATHS = _xf(
    "validate-needs-ignore-path-rules",
    "validate answers '1 approval (default: no rule matches)' (or the risk rule) for a plan "
    "that an approval.rules paths rule gives 2 approvals at the slug it is then submitted to",
)
BROKEN_NEEDV = {
    f"{v}:validate": VALIDATE_PATHS for v in ("need:path", "need:path-deep", "need:path-risk")
}


@pytest.mark.parametrize("vid", cases([f"{v}:validate" for v in NEED_IDS], NEED_IDS, BROKEN_NEEDV))
def test_validate_never_understates_the_approvals(lab: Lab, vid: str) -> None:
    """docs/agents.md, step 3: ``approvals_needed`` says how many approvals the plan needs. Where
    the answer depends on the folder (a ``paths`` rule), it must not claim no rule matches."""
    val = (G(lab)["mcp"][vid + ":validate"]["data"] or {}).get("approvals_needed") or {}
    sub = (G(lab)["mcp"][vid]["data"] or {}).get("approvals_needed") or {}
    assert val.get("policy") == sub.get("policy") or "path" in json.dumps(val), (val, sub)


ARGV_IDS = list(NOTES)
NONUTF8 = _xf(
    "cli-nonutf8-note-internal-error",
    "a -m note whose argv bytes are no UTF-8 ends 'plangate: internal error: UnicodeEncodeError "
    "... surrogates not allowed', remedy 'rerun with PLANGATE_DEBUG=1 ... report it': no E_ code",
)
BROKEN_ARGV: dict[str, Any] = {
    "argv:reject-note-bytes": NONUTF8,
    "argv:approve-note-bytes": NONUTF8,
}


@pytest.mark.parametrize("vid", cases(ARGV_IDS, ARGV_IDS, BROKEN_ARGV))
def test_command_line_bytes_get_a_code_or_one_clean_commit(lab: Lab, vid: str) -> None:
    """Bad input gets an ``E_...`` code and a remedy, never an internal error (SPEC section 8:
    one error shape); an accepted decision is one commit of the plan's file, nothing half
    written."""
    got = G(lab)["notes"][vid]
    assert "internal error" not in got["text"] and "Traceback" not in got["text"], got
    assert got["dirty"] == "", got
    if got["rc"] == 0:
        if vid.startswith("argv:show"):
            return
        assert len(got["files"]) == 1 and got["files"][0].endswith("/PLAN.yml"), got
    else:
        assert "E_" in got["text"], got
        assert not got["moved"], got


def test_a_note_never_forms_trailers_or_decides_another_plan(lab: Lab) -> None:
    got = G(lab)
    assert got["notes"]["argv:reject-note-trailers"]["rc"] == 0, got["notes"]
    assert "alice@example.com" not in got["notes-trailers"], got["notes-trailers"]
    assert "plans/pend" not in got["notes-trailers"], got["notes-trailers"]
    assert got["notes-rows"]["n-rej-trail"] == "rejected", got["notes-rows"]
    assert got["rows-after"]["plans/pend"]["status"] == "pending_approval"
