"""Round 90, approval and policy (atk90a): the recorded policy at its edges, as the audit reads it.

Every lab is its own repo (advkit ``Lab``), built once per module (``shared``), two at a
time. ``<slug>:ran`` counts the recording tool's calls for the plan; ``<slug>:audit`` runs
``plangate audit --json`` in a fresh clone with NO config and asserts it reads the records
(no ``code``, exit 0 or 1) and calls the plan's start valid exactly when it ran;
``<slug>:partial`` that the plan had not run after the first approval alone (the recorded
rule, group or alias counted); ``<lab>:check`` that ``plangate check --base main --head side
--as <merger> --format json`` before the last merge said ``"outcome": "start"`` exactly for
the plans that then ran.

Edge labs (one per recorded-policy shape; ``<e>a`` calls ``rec`` alone, Alice approves:
runs; ``<e>b`` calls the ruled tool only in a fallback step, Alice approves: partial, then a
second approver on a branch fast-forwarded: runs):

- ``ht``: an ``http`` tool ``web`` (``method: get``, a ``{channel}`` URL, ``headers`` with an
  ``Authorization`` value, ``risk: low``, ``output_trust: inherit``), ``{tools: [web]}``.
- ``py``: a ``python`` tool (``target``, ``idempotent``, ``timeout``, ``risk: high``,
  ``estimate``), ``{risk: high}``.
- ``sc``: an exec tool with a ``params_schema`` holding ``$defs``/``$ref`` and
  ``patternProperties``, ``sensitive``, ``output_trust: trusted``, ``estimate``,
  ``idempotent``, ``timeout``, a non-ASCII description; ``{tools: [hot2]}``.
- ``gr``: ``{tools: [hot2], risk: medium}`` needing ``[{group: ops}, {group: sec}]``.
- ``al``: ``identity: committer``, ``identity_aliases`` (``plus_tags``, ``people``); the
  second vote is ``bob+review@ops.example.com``.
- ``lm``: ``max_age: 2w``, ``allow_self_approval``/``require_signed`` spelled out, every
  ``limits`` key set, a tool ``estimate``.
- ``em``: a ``{tools}`` rule, then an empty ``match: {}`` rule.
- ``un``: a tool named ``_h-2`` and a group ``o_p-s`` in a ``{tools, paths}`` rule.

Lab ``history`` (policy changes over history): ``rna`` (``{tools: [hot2]}``, Alice then
Bob); ``hot2`` renamed ``hot3`` with the rule following, ``rnb`` (hot3, Alice then Bob);
``hot3`` retired and the rules dropped, ``rnc`` (Alice); ``raa`` approved by Alice, then
before the pass a rule ``{tools: [rec]}`` needing two comes in (partial), Bob; ``gca``
(``{group: ops}``, ops = Bob) approved by Bob, then before the pass ops becomes Carol
(refused), Carol approves on a branch (``gca:check``).

Labs ``ident``/``ident2`` (recorded ``identity: committer``, ``allow_self_approval: true``,
alias ``people: [[alice@example.com, a.smith@ops.example.com]]``; ``ident2``: the defaults):
``icm`` approval authored by Mallory, committed by Alice; ``ica`` authored by Alice,
committed by Mallory; ``sa``/``sb`` a plan written by Alice and approved by her; ``pp``
(count 2) Alice then ``a.smith@ops.example.com``; ``pq`` (control) Alice then Carol.

Lab ``risk`` (``{risk: high}`` needs two; ``ov*`` need ``[{group: ops}, {group: sec}]`` with
Alice in both): ``rk`` calls hot2 (medium) in a fallback, Alice approves and hot2 becomes
``risk: high`` before the pass; ``rnx`` calls hot3 in a fallback, Alice and Bob approve, hot3
is retired before the pass; ``ova`` Alice alone (one person, one entry); ``ovb`` Alice then
Bob (Alice placed in sec).

Lab ``nest`` (``{tools: [hot2]}`` and ``{risk: high}`` need two): ``npt`` pins a draft plan
calling hot2, ``npr`` one calling the high-risk ``hot``; Alice approves both, Bob ``npt``.

Forge labs (default policy): a commit under the controller's name (author and committer),
subject ``plangate: record policy``, a ``Policy-Hash:`` of the bytes it writes to
``.plangate/policy.json``: ``fgarb`` ``{"approval":5}``, ``fnull`` ``null``, ``ftwo`` a
well-formed policy naming only ``nobody@example.com`` with a second ``Policy-Hash:`` trailer
(the real record's), ``fpre`` the garbage committed before the controller's first pass.
Then Alice approves ``fa``. ``<f>:flagged``: the audit names the unreadable record.

Seen (round 90): nothing broke; 109 ids held.

- Every edge record was read by the fresh-clone audit: ``{"ok": true, "findings": []}``,
  both plans of each lab ``approval_valid``; the controller made each ``<e>b``
  ``plangate: partial`` on Alice's vote and started it on the second
  (``approval request (approve) by bob@ops.example.com``, ``plangate: start plans/htb``;
  ``al``: ``by bob+review@ops.example.com``); ``check`` gave ``"needs": "2 approvals"``
  (``gr``: ``"1 from ops, 1 from sec"``, ``un``: ``"2 from o_p-s"``), ``"outcome":
  "start"``.
- ``history``: the audit judged ``rna`` by the hot2 record, ``rnb`` by the hot3 record,
  ``rnc`` with no tools left, all valid, no finding; ``raa`` and ``gca`` did not run on the
  vote made before the change (``gca``: refused, then ``approval request (approve) by
  carol@ops.example.com``, start; check ``start``).
- ``ident``: ``icm`` ran and the audit's ``approver`` is ``alice@example.com`` (the status
  row's note still reads ``approval request (approve) by mallory@example.com``, the commit's
  author: cosmetic), ``ica`` ``plangate: refuse``, ``sa`` ran, ``pp`` stayed ``plangate:
  partial`` after ``a.smith@ops.example.com``; ``ident2``: the mirror (``icm2``/``sb``
  refused, ``ica2`` and ``pp2`` ran). The audit agreed on all nine.
- ``risk``: ``rk`` partial after the risk rose, started on Bob's; ``rnx`` ``plangate:
  refuse``; ``ova`` ``plangate: partial``; ``ovb`` ran; check ``start`` for both.
- ``nest``: ``npt`` partial, then ran (the pinned plan's hot2 call recorded), ``npr``
  partial; audit valid for ``npt`` only.
- Forges: ``fa`` ran in all four; ``fgarb``, ``fnull``, ``fpre``: the audit exits 1 with
  ``{"kind": "policy-unreadable", "detail": ".plangate/policy.json is not a policy the
  controller writes (canonical JSON of a known version); ignored"}`` naming the commit and
  still calls ``fa`` valid by the real record; ``ftwo``: ``ok: true``, no finding (a commit
  under the controller's name that git alone cannot tell from its own: docs/approvals.md,
  ``plangate audit``), ``fa`` valid.

Should (docs/approvals.md, "The recorded policy"): it "holds what decides a verdict":
"``approval``: every key (approvers, ``identity``, ``allow_self_approval``,
``require_signed``, ``max_age``, ``groups``, ``rules``, ``identity_aliases``) ... ``limits``;
``tools``: per catalog tool its ``kind``, ``risk``, ``estimate``, ``idempotent``,
``params_schema``, ``output_trust``, ``sensitive``, and ``definition``"; "Each approval is
judged by the policy its ``start`` commit names (``Policy-Hash:``) ... so an approver who has
left or a tool retired since does not flag the runs they took part in"; Policy: "``tools:``
rules match a nested plan's tools too", "One person counts once and in one entry (an
approver in two groups is placed where the quorum needs them)", "Each collected vote is
judged again ... under the policy in force"; threat-model: a forged record gets
``policy-unreadable``/``policy-changed`` and the audit "counts only versions the controller
recorded".
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
    CAROL,
    Lab,
    Labs,
    brief,
    build_all,
    cases,
    clone_audit_got,
    plan_text,
)
from test_round2_execution_kit import shared

FALLBACK = """\
plan:
  name: "{t}"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
  - name: {tool}
actions:
  - id: 1
    tool: rec
    why: "w"
    on_failure: fallback
    params:
      tag: "{t}"
    fallback:
      - id: "1.1"
        tool: {tool}
        why: "fb"
        params:
          {fbparams}
"""
BOB_TAG = ("Bob", "bob+review@ops.example.com")


def _rec(root: Path, extra: str = "") -> str:
    log = json.dumps(str(root / "ran.log"))
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    return f"{{kind: exec, argv: {rec}, env: {{REC_LOG: {log}}}{extra}}}"


#: edge labs: (approval yaml, tools yaml (root given), extra root yaml, ruled tool, its
#: fallback params, the second voter). Plan ``<e>a`` calls ``rec`` alone (Alice: runs);
#: ``<e>b`` calls the ruled tool in a fallback only (Alice: partial; then the second: runs).
SCHEMA = (
    ", params_schema: {type: object, $defs: {t: {type: string, pattern: '^[a-z0-9-]+$'}},"
    " properties: {tag: {$ref: '#/$defs/t'}}, patternProperties: {'^x': {type: string}}},"
    " sensitive: [tag], output_trust: trusted, estimate: {seconds: 3, cost_usd: 0.25},"
    " idempotent: true, risk: medium, timeout: 7, description: 'a \\u00e9 tool'"
)
EDGES: dict[str, dict[str, Any]] = {
    "ht": {
        "approval": "rules:\n  - match: {tools: [web]}\n    require: [{count: 2}]\n",
        "tools": lambda r: (
            "web: {kind: http, method: get, url: 'https://hooks.example.com/{channel}',"
            " headers: {X-Team: ops, Authorization: 'Bearer zz'}, risk: low,"
            " description: d, output_trust: inherit}\n"
        ),
        "tool": "web",
        "fb": "channel: c",
    },
    "py": {
        "approval": "rules:\n  - match: {risk: high}\n    require: [{count: 2}]\n",
        "tools": lambda r: (
            "pyt: {kind: python, target: 'os.path:join', idempotent: true, timeout: 5,"
            " risk: high, estimate: {seconds: 1}}\n"
        ),
        "tool": "pyt",
        "fb": 'a: "x"',
    },
    "sc": {
        "approval": "rules:\n  - match: {tools: [hot2]}\n    require: [{count: 2}]\n",
        "tools": lambda r: f"hot2: {_rec(r, SCHEMA)}\n",
        "tool": "hot2",
        "fb": 'tag: "sc-fb"',
    },
    "gr": {
        "approval": (
            "groups:\n  ops: ['*@ops.example.com']\n  sec: ['alice@example.com']\n"
            "rules:\n  - match: {tools: [hot2], risk: medium}\n"
            "    require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
        ),
        "tools": lambda r: f"hot2: {_rec(r, ', risk: medium')}\n",
        "tool": "hot2",
        "fb": 'tag: "gr-fb"',
    },
    "al": {
        "approval": (
            "identity: committer\n"
            "identity_aliases:\n  plus_tags: ['*@ops.example.com']\n"
            "  people: [[alice@example.com, a.smith@corp.example]]\n"
            "rules:\n  - match: {tools: [hot2]}\n    require: [{count: 2}]\n"
        ),
        "tools": lambda r: f"hot2: {_rec(r)}\n",
        "tool": "hot2",
        "fb": 'tag: "al-fb"',
        "second": BOB_TAG,
    },
    "lm": {
        "approval": (
            "max_age: 2w\nallow_self_approval: false\nrequire_signed: false\n"
            "rules:\n  - match: {tools: [hot2]}\n    require: [{count: 2}]\n"
        ),
        "tools": lambda r: f"hot2: {_rec(r, ', estimate: {seconds: 2, cost_usd: 0.5}')}\n",
        "extra": (
            "limits: {max_cost_usd: 5, max_runtime: 2h, max_journal_bytes: 9000000,"
            " max_tool_calls: 50, max_actions: 40, max_plan_bytes: 200000}\n"
        ),
        "tool": "hot2",
        "fb": 'tag: "lm-fb"',
    },
    "em": {
        "approval": (
            "rules:\n  - match: {tools: [hot2]}\n    require: [{count: 2}]\n"
            "  - match: {}\n    require: [{count: 1}]\n"
        ),
        "tools": lambda r: f"hot2: {_rec(r)}\n",
        "tool": "hot2",
        "fb": 'tag: "em-fb"',
    },
    "un": {
        "approval": (
            "groups:\n  o_p-s: ['*@ops.example.com', 'alice@example.com']\n"
            "rules:\n  - match: {tools: [_h-2], paths: ['plans/un*/**']}\n"
            "    require: [{group: o_p-s, count: 2}]\n"
        ),
        "tools": lambda r: f"_h-2: {_rec(r, ', risk: low')}\n",
        "tool": "_h-2",
        "fb": 'tag: "un-fb"',
    },
}


def _check(lab: Lab, head: str, who: str) -> str:
    told = lab.check(head, who)
    return told.stdout + told.stderr


def _edge(root: Path, name: str) -> dict[str, Any]:
    spec = EDGES[name]
    root.mkdir(parents=True)
    lab = Lab(
        root, approval=spec["approval"], tools=spec["tools"](root), extra=spec.get("extra", "")
    )
    a, b = f"{name}a", f"{name}b"
    lab.write(a, plan_text(a))
    lab.write(b, FALLBACK.format(t=b, tool=spec["tool"], fbparams=spec["fb"]))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.set_status(a, "approved")
    lab.set_status(b, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    early = {a: len(lab.calls(a)), b: len(lab.calls(b))}
    partial = lab.rows()
    lab.branch("side", "main")
    lab.set_status(b, "approved")
    lab.commit("second: approve", spec.get("second", BOB))
    lab.git("checkout", "-q", "main")
    check = _check(lab, "side", spec.get("second", BOB)[1])
    lab.git("merge", "-q", "--ff-only", "side")
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(
        calls={a: len(lab.calls(a)), b: len(lab.calls(b))},
        early=early,
        check=check,
        partial={p: brief(r) for p, r in partial.items() if isinstance(r, dict)},
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
    )
    return out


RULE_HOT2 = "rules:\n  - match: {tools: [hot2]}\n    require: [{count: 2}]\n"
RULE_HOT3 = "rules:\n  - match: {tools: [hot3]}\n    require: [{count: 2}]\n"
RULE_REC = "rules:\n  - match: {tools: [rec]}\n    require: [{count: 2}]\n"


def _history(root: Path) -> dict[str, Any]:
    """Policy changes over history: a tool renamed then retired (``rn*``); a rule added
    between Alice's approval and the pass (``ra``); a group changed between Bob's approval
    and the pass (``gc``)."""
    root.mkdir(parents=True)
    lab = Lab(root, approval=RULE_HOT2, tools=f"hot2: {_rec(root)}\n")
    fb = FALLBACK.format
    lab.write("rna", fb(t="rna", tool="hot2", fbparams='tag: "rna-fb"'))
    lab.write("raa", plan_text("raa"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.set_status("rna", "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    got: dict[str, Any] = {"early": {"rna": len(lab.calls("rna"))}}
    lab.set_status("rna", "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # rna runs under the hot2 rule
    # -- hot2 renamed hot3 (the rule follows); rnb calls hot3
    lab.write_config(approval=RULE_HOT3, tools=f"hot3: {_rec(root)}\n")
    lab.write("rnb", fb(t="rnb", tool="hot3", fbparams='tag: "rnb-fb"'))
    lab.commit("agent: rnb", AGENT)
    lab.run()
    lab.set_status("rnb", "approved")
    lab.commit("alice: approve rnb", ALICE)
    lab.run()
    got["early"]["rnb"] = len(lab.calls("rnb"))
    lab.set_status("rnb", "approved")
    lab.commit("bob: approve rnb", BOB)
    lab.run()
    # -- hot3 retired, no rules; rnc plain; raa: Alice approves, then a rule on rec comes in
    lab.write_config(approval="")
    lab.write("rnc", plan_text("rnc"))
    lab.commit("agent: rnc", AGENT)
    lab.run()
    lab.set_status("rnc", "approved")
    lab.commit("alice: approve rnc", ALICE)
    lab.run()
    lab.set_status("raa", "approved")
    lab.commit("alice: approve raa", ALICE)
    lab.write_config(approval=RULE_REC)
    lab.run()  # raa: partial under the new rule
    got["early"]["raa"] = len(lab.calls("raa"))
    lab.set_status("raa", "approved")
    lab.commit("bob: approve raa", BOB)
    lab.run()
    # -- groups: ops is Bob; Bob approves gca; before the pass ops becomes Carol
    gpol = "groups:\n  ops: [{}]\nrules:\n  - match: {{paths: ['plans/gc*/**']}}\n"
    gpol += "    require: [{{group: ops, count: 1}}]\n"
    lab.write_config(approval=gpol.format("bob@ops.example.com"))
    lab.write("gca", plan_text("gca"))
    lab.commit("agent: gca", AGENT)
    lab.run()
    lab.set_status("gca", "approved")
    lab.commit("bob: approve gca", BOB)
    lab.write_config(approval=gpol.format("carol@ops.example.com"))
    lab.run()
    got["early"]["gca"] = len(lab.calls("gca"))
    got["gca_row"] = brief(lab.rows().get("plans/gca", {}))
    lab.branch("side-gc", "main")
    lab.set_status("gca", "approved")
    lab.commit("carol: approve gca", CAROL)
    lab.git("checkout", "-q", "main")
    got["check"] = {"gca": _check(lab, "side-gc", CAROL[1])}
    lab.git("merge", "-q", "--ff-only", "side-gc")
    lab.run()
    lab.run()
    got.update(clone_audit_got(lab, root))
    got["calls"] = {s: len(lab.calls(s)) for s in HISTORY}
    got["rows"] = {p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)}
    return got


HISTORY = {"rna": 1, "rnb": 1, "rnc": 1, "raa": 1, "gca": 1}


def _forge(root: Path, how: str) -> dict[str, Any]:
    """A commit under the controller's name (author and committer) as ``plangate: record
    policy`` with a matching ``Policy-Hash:``: ``fgarb`` bytes that are no policy
    (``{"approval": 5}``); ``fnull`` the JSON ``null``; ``ftwo`` a policy naming only
    nobody as approver, with two ``Policy-Hash:`` trailers (the forged bytes' and the real
    record's); ``fpre`` garbage bytes committed as a record BEFORE the controller's first
    pass. Then Alice approves ``fa``: the controller runs it by its config, and the
    fresh-clone audit must call it valid or say why with a code, never judge by nothing."""
    root.mkdir(parents=True)
    lab = Lab(root)
    lab.write("fa", plan_text("fa"))
    lab.commit("agent: plan", AGENT)
    pol = lab.repo / ".plangate" / "policy.json"
    real_hash = ""
    if how != "fpre":
        lab.run()
        real_hash = lab.git("log", "-1", "--format=%(trailers:key=Policy-Hash,valueonly)",
                            "--grep=record policy").strip()  # fmt: skip
    if how in ("fgarb", "fpre"):
        data = '{"approval":5}'
    elif how == "fnull":
        data = "null"
    else:
        doc = json.loads(pol.read_text())
        doc["approval"]["approvers"] = ["nobody@example.com"]
        data = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    pol.parent.mkdir(exist_ok=True)
    pol.write_bytes(data.encode())
    digest = hashlib.sha256(data.encode()).hexdigest()
    body = (
        "plangate: record policy\n\nThe controller's effective policy: approval\n\n"
        f"Policy-Hash: sha256:{digest}\n"
    )
    if how == "ftwo":
        body += f"Policy-Hash: {real_hash}\n"
    lab.commit(body, BOT)
    lab.run()
    lab.approve("fa", ALICE)
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(
        calls=len(lab.calls("fa")),
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
    )
    return out


MALLORY_ = ("Mallory", "mallory@example.com")
IDENT = (
    "identity: committer\nallow_self_approval: true\n"
    "identity_aliases:\n  people: [[alice@example.com, a.smith@ops.example.com]]\n"
    "rules:\n  - match: {paths: ['plans/pp*/**', 'plans/pq*/**']}\n    require: [{count: 2}]\n"
)
#: lab ``ident`` (recorded ``identity: committer``, ``allow_self_approval: true``, Alice's
#: alias ``a.smith@ops.example.com``): approval commits by (author, committer)
IDENT_RUNS = {"icm": 1, "ica": 0, "sa": 1, "pp": 0, "pq": 1}
#: lab ``ident2`` (defaults: ``identity: author``, no self-approval, no alias)
IDENT2_RUNS = {"icm2": 0, "ica2": 1, "sb": 0, "pp2": 1}


def _commit_as(lab: Lab, msg: str, author: tuple[str, str], committer: tuple[str, str]) -> None:
    lab.git("add", "-A")
    lab.extra_env = {  # type: ignore[attr-defined]
        "GIT_COMMITTER_NAME": committer[0],
        "GIT_COMMITTER_EMAIL": committer[1],
    }
    try:
        lab.git("commit", "-q", "-m", msg, who=author)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def _ident(root: Path, second: bool) -> dict[str, Any]:
    """Who approved, as the recorded ``identity``, ``allow_self_approval`` and
    ``identity_aliases`` say: ``icm`` authored by Mallory, committed by Alice; ``ica``
    authored by Alice, committed by Mallory; ``sa`` written and approved by Alice;
    ``pp`` (count 2) Alice, then ``a.smith@ops.example.com`` (her alias); ``pq`` Alice then
    Carol (control). ``ident2``: the same under the defaults."""
    root.mkdir(parents=True)
    sfx = "2" if second else ""
    lab = Lab(root, approval="" if second else IDENT)
    if second:
        lab.write_config(
            approval="rules:\n  - match: {paths: ['plans/pp*/**']}\n    require: [{count: 2}]\n"
        )
    pp = "pp2" if second else "pp"
    slugs = [f"icm{sfx}", f"ica{sfx}", pp] + ([] if second else ["pq"])
    for slug in slugs:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    sa = "sb" if second else "sa"
    lab.write(sa, plan_text(sa))
    lab.commit("alice: my own plan", ALICE)
    lab.run()
    # the approvals below are made by another hand than their author's (``ica``): in the
    # freeze's own second such an approval is refused (round 104's rule, by design): the
    # lab's approvals come a second after it, as a reviewer's do
    time.sleep(1.05 - time.time() % 1 + 0.05)
    lab.set_status(f"icm{sfx}", "approved")
    _commit_as(lab, "approve icm", MALLORY_, ALICE)
    lab.set_status(f"ica{sfx}", "approved")
    _commit_as(lab, "approve ica", ALICE, MALLORY_)
    lab.set_status(sa, "approved")
    lab.set_status(pp, "approved")
    if not second:
        lab.set_status("pq", "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    early = {s: len(lab.calls(s)) for s in (pp, "pq")}
    lab.set_status(pp, "approved")
    lab.commit("a.smith: approve", ("A. Smith", "a.smith@ops.example.com"))
    if not second:
        lab.set_status("pq", "approved")
        lab.commit("carol: approve", CAROL)
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    runs = IDENT2_RUNS if second else IDENT_RUNS
    out.update(
        calls={s: len(lab.calls(s)) for s in runs},
        early=early,
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
    )
    return out


RISKY = "rules:\n  - match: {risk: high}\n    require: [{count: 2}]\n"
OVER = (
    "groups:\n  ops: ['alice@example.com', '*@ops.example.com']\n  sec: ['alice@example.com']\n"
    "rules:\n  - match: {paths: ['plans/ov*/**']}\n"
    "    require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
)
#: lab ``risk``: ``rk`` calls hot2 (medium) in a fallback, Alice approves, the tool becomes
#: high (``{risk: high}`` needs two) before the pass: partial, Bob then runs it; ``rnx``
#: calls hot3 in a fallback, Alice and Bob approve, hot3 is retired before the pass;
#: ``ova`` (ops 1 + sec 1; Alice in both) Alice alone: partial; ``ovb`` Alice then Bob: runs
RISK_RUNS = {"rk": 1, "rnx": 0, "ova": 0, "ovb": 1}


def _risk(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    tools = f"hot2: {_rec(root)}\nhot3: {_rec(root)}\n"
    both = OVER.replace("rules:\n", "rules:\n" + RISKY.split("rules:\n")[1])
    lab = Lab(root, approval=both, tools=tools)
    fb = FALLBACK.format
    lab.write("rk", fb(t="rk", tool="hot2", fbparams='tag: "rk-fb"'))
    lab.write("rnx", fb(t="rnx", tool="hot3", fbparams='tag: "rnx-fb"'))
    lab.write("ova", plan_text("ova"))
    lab.write("ovb", plan_text("ovb"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for s in ("rk", "rnx", "ova", "ovb"):
        lab.set_status(s, "approved")
    lab.commit("alice: approve", ALICE)
    lab.set_status("rnx", "approved")
    lab.commit("bob: approve rnx", BOB)
    hi = f"hot2: {_rec(root, ', risk: high')}\n"
    lab.write_config(approval=both, tools=hi)  # hot2 high, hot3 retired
    lab.run()
    early = {s: len(lab.calls(s)) for s in RISK_RUNS}
    lab.branch("side", "main")
    lab.set_status("ovb", "approved")
    lab.set_status("rk", "approved")
    lab.commit("bob: approve", BOB)
    lab.git("checkout", "-q", "main")
    check = _check(lab, "side", BOB[1])
    lab.git("merge", "-q", "--ff-only", "side")
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(
        calls={s: len(lab.calls(s)) for s in RISK_RUNS},
        early=early,
        check=check,
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
    )
    return out


NEST_RULES = (
    "rules:\n  - match: {tools: [hot2]}\n    require: [{count: 2}]\n"
    "  - match: {risk: high}\n    require: [{count: 2}]\n"
)
PARENT = """\
plan:
  name: "{t}"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "w"
    params:
      tag: "{t}"
  - id: 2
    plan: {{path: plans/{child}, hash: "{h}"}}
    why: "the library"
"""
CHILD = """\
plan:
  name: "{t}"
  task: "t"
  status: draft
available_tools:
  - name: {tool}
actions:
  - id: 1
    tool: {tool}
    why: "w"
    params:
      tag: "{t}"
"""
#: lab ``nest`` (``{tools: [hot2]}`` and ``{risk: high}`` need two): ``npt`` pins a plan
#: calling hot2, ``npr`` one calling the high-risk ``hot``; Alice approves both (partial),
#: then Bob ``npt`` (runs); ``npr`` stays partial
NEST_RUNS = {"npt": 1, "npr": 0}


def _nest(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True)
    tools = f"hot2: {_rec(root)}\nhot: {_rec(root, ', risk: high')}\n"
    lab = Lab(root, approval=NEST_RULES, tools=tools)
    lab.write("nlt", CHILD.format(t="nlt", tool="hot2"))
    lab.write("nlr", CHILD.format(t="nlr", tool="hot"))
    lab.commit("agent: libs", AGENT)
    for parent, child in (("npt", "nlt"), ("npr", "nlr")):
        h = lab.cli("hash", f"plans/{child}", cwd=lab.repo).stdout.strip().split()[0]
        lab.write(parent, PARENT.format(t=parent, child=child, h=h))
    lab.commit("agent: parents", AGENT)
    lab.run()
    for s in NEST_RUNS:
        lab.set_status(s, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    early = {s: len(lab.calls(s)) for s in NEST_RUNS}
    lab.branch("side", "main")
    lab.set_status("npt", "approved")
    lab.commit("bob: approve", BOB)
    lab.git("checkout", "-q", "main")
    check = _check(lab, "side", BOB[1])
    lab.git("merge", "-q", "--ff-only", "side")
    lab.run()
    lab.run()
    out = clone_audit_got(lab, root)
    out.update(
        calls={s: len(lab.calls(s)) for s in NEST_RUNS},
        child={s: len(lab.calls(s)) for s in ("nlt", "nlr")},
        early=early,
        check=check,
        rows={p: brief(r) for p, r in lab.rows().items() if isinstance(r, dict)},
    )
    return out


FORGES = ["fgarb", "fnull", "ftwo", "fpre"]


def _build_all(root: Path) -> Labs:
    builders: dict[str, Callable[[Path], Any]] = {
        **{name: functools.partial(_edge, name=name) for name in EDGES},
        "history": _history,
        "ident": functools.partial(_ident, second=False),
        "ident2": functools.partial(_ident, second=True),
        "risk": _risk,
        "nest": _nest,
        **{how: functools.partial(_forge, how=how) for how in FORGES},
    }
    return build_all(root, builders, workers=2)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r90-approve-atk90a", _build_all)


#: (lab, slug, expected runs) for every plan judged by ``:ran`` and ``:audit``
PLANS: list[tuple[str, str, int]] = (
    [(e, f"{e}{x}", 1) for e in EDGES for x in "ab"]
    + [("history", s, n) for s, n in HISTORY.items()]
    + [("ident", s, n) for s, n in IDENT_RUNS.items()]
    + [("ident2", s, n) for s, n in IDENT2_RUNS.items()]
    + [("risk", s, n) for s, n in RISK_RUNS.items()]
    + [("nest", s, n) for s, n in NEST_RUNS.items()]
    + [(f, "fa", 1) for f in FORGES]
)
#: (lab, slug): not run after the first approval alone (the rule, group or alias counted)
PARTIAL = (
    [(e, f"{e}b") for e in EDGES]
    + [("history", s) for s in ("rna", "rnb", "raa", "gca")]
    + [("ident", "pp"), ("risk", "rk"), ("nest", "npt")]
)
CHECKS = [*EDGES, "history", "risk", "nest"]
FLAGGED = ["fgarb", "fnull", "fpre"]


def _pid(labname: str, slug: str) -> str:
    return labname if labname in FORGES else slug


IDS = (
    [f"{_pid(n, s)}:{w}" for n, s, _ in PLANS for w in ("ran", "audit")]
    + [f"{s}:partial" for _n, s in PARTIAL]
    + [f"{n}:check" for n in CHECKS]
    + [f"{f}:flagged" for f in FLAGGED]
)
VALUES = (
    [(n, s, e, w) for n, s, e in PLANS for w in ("ran", "audit")]
    + [(n, s, 0, "partial") for n, s in PARTIAL]
    + [(n, "", 0, "check") for n in CHECKS]
    + [(f, "fa", 1, "flagged") for f in FLAGGED]
)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("labname", "slug", "want", "what"), cases(IDS, VALUES, BROKEN))
def test_round90_atk90a(lab: Any, labname: str, slug: str, want: int, what: str) -> None:
    got = lab.got[labname]
    plan = f"plans/{slug}"
    row = got["rows"].get(plan)
    calls = got["calls"] if isinstance(got["calls"], dict) else {slug: got["calls"]}
    if what == "ran":
        assert calls[slug] == want, (calls, row)
    elif what == "partial":
        assert got["early"][slug] == 0, (got["early"], got.get("partial"), row)
    elif what == "check":  # check --as the merger predicted ``start`` for each plan that ran
        out = got["check"]["gca"] if labname == "history" else got["check"]
        plans = json.loads(out[: out.rfind("}") + 1])["plans"]
        assert plans, out[-1500:]
        for p in plans:
            slug_ = p["plan"].split("/", 1)[1]
            assert (p.get("outcome") == "start") == (calls[slug_] > 0), (p, calls)
    elif what == "flagged":  # the unreadable record is named, with its kind, never read
        kinds = [f.get("kind") for f in got["report"].get("findings", [])]
        assert "policy-unreadable" in kinds, (got["rc"], str(got["report"])[:800])
    else:  # the fresh clone's audit, no config: read the records, agrees with what ran
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        assert (plan in got["valid"]) == (calls[slug] > 0), (got["valid"], calls)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk90a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r90a-", dir="/tmp/atk90a"))
    got = _build_all(out).got
    for v in got.values():
        rep = v.get("report")
        if isinstance(rep, dict):
            v["report"] = {k: rep.get(k) for k in ("ok", "code", "message", "findings", "notes")}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
