"""Round 114, approval and policy (atk114a): the ``frozen:`` block forged in new shapes (the
risk deleted, set to a value that is no risk, set down in the approving commit, a block the
agent wrote before any freeze, the policy and estimate forged), what the readers (``status
--json``, ``show --json``, ``check``) say of a forged ``frozen.risk``, ``tools:`` rules,
``identity_aliases`` (plus tags and people) as co-authors and as voters, ``Co-authored-by:``
in other spellings (lower-case key, no name, odd blanks, punctuation, a merge's message, a
squash's body, in the middle of a message), co-authored approvals and rejections, and
``.plangate/policy.json`` changed under the controller's subject, deleted or a link.

Lab (one, local mode): approvers Alice, ``*@ops.example.com``, ``sec@example.com``; groups
``ops`` (Alice, ``*@ops.example.com``) and ``security`` (Sec); ``identity_aliases``: plus tags
of ``*@ops.example.com``, people ``[alice@example.com, a.smith@corp.example]``; rules, first
match: ``risk: high`` two of ops and one of security, ``tools: [tw]`` two approvals,
``plans/q*/**`` two approvals. Tools (all the recorder): ``rec`` medium, ``hi`` high, ``tw``
medium, ``lo`` low. The Owner writes every plan but the co-authored ones (one commit each) and
``pre`` (the agent's, with its own ``frozen:`` block); pass A freezes them; the agent forges
the ``frozen:`` blocks; rounds B-D give votes, one ``run --once`` pass each; the policy file is
changed by the agent at the end and the repository audited in a fresh clone.

Ids: ``<vid>`` (``rec`` calls of the vid's tag: exactly as the SPEC says, or for an undecided
vid at most one), ``<vid>:audit`` (the fresh-clone ``audit --json``, no config, calls a start
valid iff the controller ran it), ``<vid>:risk`` (``status --json`` row of a forged high plan
says ``high``), ``<vid>:show`` (``show --json`` does), ``<vid>:check`` (``check`` of a pull
request that approves it names ``high``), ``passes``, ``pol-*`` (the agent's policy changes
flagged ``policy-changed`` by the fresh-clone audit), ``pol-bot:cfg`` (the one made under the
controller's full identity flagged by ``audit --config``).

Variants also in the lab: ``hc``/``tw2``/``qalc``/``twlo``/``rjmal``/``cobot``/``hest``
(controls); ``twdecl``/``hidecl`` (a tool declared in ``available_tools`` but never called: no
``tools``/``risk`` rule matches, documented "tools the plan must call"); ``comerge`` (a clean
merge's message co-authored by Bob: documented, a clean merge is its branch commits' makers');
max_age (7d, the old plans frozen by a pass dated 30 days ago): ``ma`` (control), ``maat``
(``frozen.at`` set to now), ``macr`` (``plan.created``), ``maquo`` (re-quoted), ``mameta``
(``metadata:``), ``mapre`` (a copy with its own fresh ``frozen:``), ``mack``/``mackat``
(``check`` of Alice's pull request predicts ``refuse`` ``E_PLAN_EXPIRED``); ``hinpr`` (Alice's
pull request sets ``frozen.risk: low`` and approves, Bob merges: partial).

Seen (round 114, 142 ids, ~15 s wall): 2 classes, 17 ids, both display only (no wrong run,
no audit disagreement):

- **status-risk-from-forged-frozen** (15 ids: ``{hinpr,hdel,hnone,hcase,hlist,hall,pre}:risk``,
  ``{hinpr,hdel,hnone,hcase,hlist,hall,hinap,pre}:risk-end``): ``plangate status --json``
  reports the row's ``risk`` from the file's ``frozen.risk`` the agent wrote (``low``,
  ``LOW``, ``none``, ``null`` when deleted or a list), also beside "more approvals needed: 1
  from security", while ``show --json`` and ``check`` say ``high`` and the controller judges
  by the high rule. Confirms round 113's suspicion (atk113a ``hfr``) and widens it: an
  agent's plan that arrives with its own ``frozen:`` block (``pre``) is never re-frozen, so its
  row says ``low`` for its whole life.
- **status-row-silent-on-forged-frozen** (2 ids: ``hnone:row``, ``hcase:row``): a ``frozen:``
  block the agent made invalid (``risk: none``/``LOW``) leaves the status row "waiting for an
  approval", ``problem: null``; ``validate``, ``show`` and ``check`` say ``E_SCHEMA_INVALID``
  at ``frozen.risk``, and the next approval is refused ``E_PLAN_NOT_FROZEN`` (the approver
  learns it only after approving).

Held: every run count (forged ``frozen.risk``/``policy``/``rule``/``estimate``, the whole
block cut, a block the agent wrote before any freeze, risk forged in the approving commit or
pull request; ``tools`` rules; plus tags and people aliases as co-authors and second voters;
``Co-authored-by`` lower-case, nameless, blank-padded, tabbed, dotted, twice, in a squash body,
mid-message (counted: the safe side); co-authored approvals count one vote, the commit
author's; rejections by an alias or a plus tag count; a non-approver's rejection co-authored
by Alice is ignored; every max_age dodge refused ``E_PLAN_EXPIRED``); every fresh-clone audit
verdict; the agent's policy changes (under the controller's subject and trailer, deleted, a
symbolic link, co-authored by plangate) flagged ``policy-changed``, the one under the
controller's full identity flagged by ``audit --config``.

Not tried: signed ``Plan-Approved:`` trailers, ``identity: committer``, remote mode, the web
page and MCP. Not asserted: the fresh-clone audit does not flag the policy change committed
under the controller's full identity (``pol-bot``; ``audit --config`` does): the documented
limit of commits under the controller's name read by git alone.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BOB,
    BOT,
    CAROL,
    MALLORY,
    Lab,
    brief,
    clone_audit_got,
    plan_text,
)

OWNER = ("Owner", "owner@example.com")
SEC = ("Sec", "sec@example.com")
ASMITH = ("A. Smith", "a.smith@corp.example")


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com", "sec@example.com"]\n'
        '  groups: {ops: ["alice@example.com", "*@ops.example.com"], '
        'security: ["sec@example.com"]}\n'
        "  max_age: 7d\n"
        "  identity_aliases:\n"
        '    plus_tags: ["*@ops.example.com"]\n'
        "    people: [[alice@example.com, a.smith@corp.example]]\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 2}, {group: security, count: 1}]\n"
        "    - match: {tools: [tw]}\n      require: [{count: 2}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hi: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  tw: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  lo: {{kind: exec, argv: {rec}, {env}, risk: low}}\n"
        "  echo: {kind: echo}\n"
    )


def _plan(slug: str, tool: str = "rec", declare: str = "") -> str:
    text = plan_text(slug)
    if tool != "rec":
        text = text.replace("  - name: rec\n", f"  - name: {tool}\n").replace(
            "    tool: rec\n", f"    tool: {tool}\n"
        )
    if declare:
        text = text.replace("available_tools:\n", f"available_tools:\n  - name: {declare}\n")
    return text


#: vid -> (tool, calls wanted at the end; None: undecided by the SPEC, at most one)
VIDS: dict[str, tuple[str, int | None]] = {
    # the frozen: block forged by the agent after the controller's freeze
    "hc": ("hi", 1),  # control: high, Alice + Bob + Sec
    "hdel": ("hi", 0),  # frozen.risk deleted; Alice + Bob
    "hnone": ("hi", 0),  # frozen.risk: none; Alice + Bob
    "hcase": ("hi", 0),  # frozen.risk: LOW; Alice + Bob
    "hlist": ("hi", 0),  # frozen.risk: [low]; Alice + Bob
    "hinap": ("hi", 0),  # frozen.risk set low in Alice's approving commit; Bob
    "hpol": ("hi", 0),  # frozen.policy forged to {rule: none, require: [{count: 1}]}; Alice
    "hrule": ("hi", 0),  # frozen.policy.rule forged to the tools rule; Alice + Bob
    "hall": ("hi", 0),  # the whole frozen block but hash removed (risk, policy, at); Alice+Bob
    "hest": ("rec", 1),  # frozen.estimate forged (no cap): Alice alone, as any plan
    "hinpr": ("hi", 0),  # Alice's pull request sets frozen.risk low and approves; merged
    "pre": ("hi", 0),  # the agent's plan arrives with its own frozen: {hash, risk: low}
    "prep": ("rec", 0),  # a q plan with a forged frozen.policy {require: [{count: 1}]}; Alice
    # tools: rules
    "tw1": ("tw", 0),  # uses tw: Alice alone
    "tw2": ("tw", 1),  # control: Alice + Bob
    "twdecl": ("rec", 1),  # tw declared but not called; Alice alone (rule: "must call")
    "hidecl": ("rec", 1),  # hi declared but not called; Alice alone
    "twlo": ("lo", 1),  # control: low tool, no rule; Alice alone
    # identity_aliases
    "alco": ("rec", 0),  # the Owner's plan co-authored by a.smith; Alice approves
    "alplus": ("rec", 0),  # co-authored by bob+ci@ops; Bob approves
    "alplusuc": ("rec", 0),  # co-authored by BOB+CI@OPS.EXAMPLE.COM; Bob approves
    "qal": ("rec", 0),  # q: Alice, then a.smith (one person)
    "qplus": ("rec", 0),  # q: Bob, then bob+x@ops (one person)
    "qplus2": ("rec", 0),  # q: bob+x@ops, then bob+y@ops
    "qalc": ("rec", 1),  # control: q: Alice + Bob
    # Co-authored-by spellings in the plan's commit
    "colc": ("rec", 0),  # co-authored-by: Bob <BOB@OPS...>; Bob approves
    "coang": ("rec", 0),  # Co-authored-by: <bob@ops...> (no name); Bob
    "cosp": ("rec", 0),  # Co-authored-by:   Bob    <bob@ops...>   (blanks); Bob
    "codot": ("rec", 0),  # Co-authored-by: Bob <bob@ops.example.com.>; Bob
    "cotab": ("rec", 0),  # Co-authored-by:<TAB>Bob <bob@ops...>; Bob
    "comerge": ("rec", 1),  # the Owner's clean merge bringing the plan, co-authored by Bob:
    # documented, a clean merge is its branch commits' makers', never the merger's; Bob
    "cosq": ("rec", 0),  # a squash commit, GitHub style body, co-authored by Bob; Bob
    "comid": ("rec", None),  # the trailer line in the middle of the body (no trailer); Bob
    "cotwo": ("rec", 0),  # two trailers: Carol then Bob; Bob approves
    "cobot": ("rec", 1),  # co-authored by the controller's identity; Alice approves
    # co-authored approvals
    "qcoap": ("rec", 0),  # q: Alice's approval co-authored by Carol: one vote
    "qcoap2": ("rec", None),  # q: Alice's approval co-authored by Bob, then Bob's approval
    "qmalco": ("rec", 0),  # q: Mallory's approval co-authored by Alice and Bob: nobody's
    # rejections and withdrawals
    "rjmal": ("rec", 1),  # control: Mallory (no approver, no author) rejects; Alice
    "rjmalco": ("rec", None),  # Mallory rejects co-authored by Alice; Alice approves later
    "rjcoauth": ("rec", 0),  # plan co-authored by Mallory; Mallory rejects; Alice approves
    "rjalias": ("rec", 0),  # q: Alice approves; a.smith (her alias) rejects; Bob
    "rjplus": ("rec", 0),  # q: Alice approves; bob+r@ops rejects; Carol
    # max_age (7d): frozen by a pass dated 30 days ago
    "ma": ("rec", 0),  # control: Alice approves now: E_PLAN_EXPIRED
    "maat": ("rec", 0),  # the agent sets frozen.at to now; Alice
    "macr": ("rec", 0),  # the agent sets plan.created (unhashed) to now; Alice
    "maquo": ("rec", 0),  # the agent re-quotes a value (same hash); Alice
    "mameta": ("rec", 0),  # the agent adds metadata: (unhashed); Alice
    "mapre": ("rec", 0),  # the agent's copy elsewhere with its own frozen: {at: now}; Alice
    "mack": ("rec", 0),  # never approved on main: check of Alice's pull request
    "mackat": ("rec", 0),  # the same after the agent set frozen.at to now
}
OLD = ["ma", "maat", "macr", "maquo", "mameta", "mack", "mackat"]
PATHS = {v: v for v in VIDS}
for _v in ("prep", "rjalias", "rjplus"):
    PATHS[_v] = f"q{_v}"
HIGH = ["hinpr", "hdel", "hnone", "hcase", "hlist", "hinap", "hpol", "hrule", "hall", "pre"]
SHOWN = ["hdel", "hnone", "pre", "hall", "hcase"]
CHECKED = ["hdel", "hcase", "pre", "hlist", "hinpr"]

#: vid -> the expression of the forged frozen.risk
FORGE_RISK = {"hdel": None, "hnone": "none", "hcase": "LOW", "hlist": "[low]"}


def _slug(v: str) -> str:
    return PATHS[v]


def _co(lab: Lab, v: str, trailer_body: str) -> str:
    """The Owner commits plan ``v`` alone with ``trailer_body`` after a blank line."""
    lab.write(_slug(v), _plan(_slug(v)))
    lab.git("add", "-A")
    lab.git("commit", "-q", "--cleanup=verbatim", "-m", f"owner: plan {v}\n\n{trailer_body}",
            who=OWNER)  # fmt: skip
    return lab.head()


def _now() -> str:
    import datetime

    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _forge_frozen(lab: Lab, v: str, edit: Any) -> None:
    s = _slug(v)
    text = lab.read(s)
    lab.write(s, edit(text))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def ap(v: str, who: tuple[str, str], msg: str = "") -> str:
        return lab.approve(_slug(v), who, msg or f"{who[0]}: approve {_slug(v)}")

    _config(lab)
    # the max_age plans: written and frozen by a pass dated 30 days ago
    import time

    lab.git_date = f"@{int(time.time()) - 30 * 86400} +0000"
    for v in OLD:
        lab.write(_slug(v), _plan(_slug(v)))
    lab.commit("owner: old plans", OWNER)
    step("old")
    lab.git_date = None
    co_vids = {v for v in VIDS if v.startswith("co") or v in ("alco", "alplus", "alplusuc")}
    co_vids |= {"rjcoauth"}
    for v, (tool, _w) in VIDS.items():
        if v in co_vids or v in ("pre", "mapre") or v in OLD:
            continue
        declare = {"twdecl": "tw", "hidecl": "hi"}.get(v, "")
        lab.write(_slug(v), _plan(_slug(v), tool, declare))
    lab.commit("owner: plans", OWNER)
    bob = "bob@ops.example.com"
    _co(lab, "alco", "Co-authored-by: A. Smith <a.smith@corp.example>\n")
    _co(lab, "alplus", "Co-authored-by: Bob CI <bob+ci@ops.example.com>\n")
    _co(lab, "alplusuc", "Co-authored-by: Bob CI <BOB+CI@OPS.EXAMPLE.COM>\n")
    _co(lab, "colc", "co-authored-by: Bob <BOB@OPS.EXAMPLE.COM>\n")
    _co(lab, "coang", f"Co-authored-by: <{bob}>\n")
    _co(lab, "cosp", f"Co-authored-by:    Bob     <{bob}>   \n")
    _co(lab, "codot", f"Co-authored-by: Bob <{bob}.>\n")
    _co(lab, "cotab", f"Co-authored-by:\tBob <{bob}>\n")
    _co(lab, "comid", f"first line\nCo-authored-by: Bob <{bob}>\nmore words after it\n")
    _co(
        lab,
        "cotwo",
        f"Co-authored-by: Carol <carol@ops.example.com>\nCo-authored-by: Bob <{bob}>\n",
    )
    _co(lab, "cobot", "Co-authored-by: plangate <plangate@localhost>\n")
    _co(lab, "rjcoauth", "Co-authored-by: Mallory <mallory@example.com>\n")
    # comerge: the Owner's branch, merged by the Owner with Bob as co-author of the merge
    lab.branch("cm")
    lab.write(_slug("comerge"), _plan(_slug("comerge")))
    lab.commit("owner: plan comerge", OWNER)
    lab.git("checkout", "-q", "main")
    lab.note("cm-main", OWNER)
    lab.git("merge", "-q", "--no-ff", "-m", f"merge cm\n\nCo-authored-by: Bob <{bob}>\n", "cm",
            who=OWNER)  # fmt: skip
    # cosq: a squash commit, GitHub's body style
    lab.write(_slug("cosq"), _plan(_slug("cosq")))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m",
            f"owner: plan cosq (#12)\n\n* owner: plan cosq\n\n* tweak\n\n---------\n\n"
            f"Co-authored-by: Bob <{bob}>\n", who=OWNER)  # fmt: skip
    # pre: the agent's plan arrives with its own frozen block (hash right, risk low)
    s = _slug("pre")
    lab.write(s, _plan(s, "hi"))
    h = lab.cli("hash", str(lab.repo / "plans" / s / "PLAN.yml"), cwd=lab.repo).stdout.split()
    got["pre_hash"] = h
    hv = next((w for w in h if w.startswith("sha256:")), "sha256:" + "0" * 64)
    lab.write(
        s,
        _plan(s, "hi") + f'frozen:\n  hash: "{hv}"\n  at: "2026-01-01T00:00:00Z"\n  risk: low\n'
        "  policy: {rule: null, require: [{count: 1}]}\n",
    )
    lab.commit("agent: plan pre", AGENT)
    step("a")
    # max_age dodges
    _forge_frozen(lab, "mackat", lambda t: re.sub(r"\n  at: *[^\n]+", f"\n  at: '{_now()}'", t))
    _forge_frozen(lab, "maat", lambda t: re.sub(r"\n  at: *[^\n]+", f"\n  at: '{_now()}'", t))
    _forge_frozen(
        lab, "macr", lambda t: t.replace("  status:", f"  created: '{_now()}'\n  status:", 1)
    )
    _forge_frozen(lab, "maquo", lambda t: t.replace('tag: "maquo"', "tag: 'maquo'"))
    _forge_frozen(lab, "mameta", lambda t: t + f"metadata: {{touched: '{_now()}'}}\n")
    lab.write(
        _slug("mapre"),
        re.sub(r"\n  at: *[^\n]+", f"\n  at: '{_now()}'", lab.read(_slug("ma"))).replace(
            'name: "ma"', 'name: "ma"'
        ),
    )
    lab.commit("agent: freshen", AGENT)
    # -- the agent forges frozen: blocks ---------------------------------------------------
    for v, val in FORGE_RISK.items():
        if val is None:
            _forge_frozen(lab, v, lambda t: re.sub(r"\n  risk: *\w+", "", t))
        else:
            _forge_frozen(lab, v, lambda t, val=val: re.sub(r"risk: *high", f"risk: {val}", t))
    _forge_frozen(
        lab,
        "hpol",
        lambda t: re.sub(r"\n  policy:.*?(?=\n\S|\n  \w+:|\Z)", "\n  policy: {rule: null, "
                         "require: [{count: 1}]}", t, flags=re.S),
    )  # fmt: skip
    _forge_frozen(lab, "hrule", lambda t: re.sub(r"rule: *[^,}\n]+", "rule: 2", t))
    _forge_frozen(
        lab,
        "hall",
        lambda t: re.sub(r"(frozen:\n  hash: [^\n]+\n)(?:  [^\n]*\n|    [^\n]*\n)*", r"\1", t),
    )
    _forge_frozen(lab, "hest", lambda t: re.sub(r"cost_usd: *[^,}\n]+", "cost_usd: 999999", t))
    _forge_frozen(
        lab,
        "prep",
        lambda t: re.sub(r"\n  policy:.*?(?=\n\S|\n  \w+:|\Z)", "\n  policy: {rule: null, "
                         "require: [{count: 1}]}", t, flags=re.S),
    )  # fmt: skip
    got["forged"] = {v: lab.read(_slug(v)) for v in [*FORGE_RISK, "hpol", "hrule", "hall", "hest"]}
    lab.commit("agent: tidy frozen blocks", AGENT)
    step("a2")
    for v in ("hdel", "hcase", "pre", "hlist"):  # a pull request approving each, as Sec
        lab.branch(f"pr-{v}")
        ap(v, SEC)
        lab.git("checkout", "-q", "main")
        got[f"check:{v}"] = lab.check(f"pr-{v}", SEC[1]).stdout
    lab.branch("pr-hinpr")  # Alice's pull request: risk low and approved in one commit
    s = _slug("hinpr")
    lab.write(s, re.sub(r"risk: *high", "risk: low", lab.read(s)))
    lab.set_status(s, "approved")
    lab.commit("alice: approve hinpr", ALICE)
    lab.git("checkout", "-q", "main")
    got["check:hinpr"] = lab.check("pr-hinpr", BOB[1]).stdout
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-hinpr", "pr-hinpr", who=BOB)
    for v in ("mack", "mackat"):  # Alice's pull requests approving expired plans
        lab.branch(f"pr-{v}")
        ap(v, ALICE)
        lab.git("checkout", "-q", "main")
        got[f"check:{v}"] = lab.check_plans(f"pr-{v}", ALICE[1])
    got["risk_rows"] = lab.rows()
    got["show"] = {
        v: lab.cli("show", "--json", "--config", str(lab.config),
                   str(lab.repo / "plans" / _slug(v) / "PLAN.yml"), cwd=lab.repo).stdout
        for v in SHOWN
    }  # fmt: skip

    # -- B ---------------------------------------------------------------------------------
    for v in ("hc", "hdel", "hnone", "hcase", "hlist", "hrule", "hall", "pre", "tw2", "qalc"):
        ap(v, ALICE)
    # hinap: Alice's approving commit sets frozen.risk low too
    s = _slug("hinap")
    lab.write(s, re.sub(r"risk: *high", "risk: low", lab.read(s)).replace(
        "status: pending_approval", "status: approved"))  # fmt: skip
    lab.commit("alice: approve hinap", ALICE)
    for v in ("ma", "maat", "macr", "mameta", "mapre"):
        ap(v, ALICE)
    ap("maquo", ALICE)
    for v in ("hpol", "hest", "prep", "tw1", "twdecl", "hidecl", "twlo", "alco", "cobot"):
        ap(v, ALICE)
    for v in ("alplus", "alplusuc", "colc", "coang", "cosp", "codot", "cotab", "comerge"):
        ap(v, BOB)
    for v in ("cosq", "comid", "cotwo"):
        ap(v, BOB)
    ap("qal", ALICE)
    ap("qplus", BOB)
    ap("qplus2", ("Bob X", "bob+x@ops.example.com"))
    ap("rjalias", ALICE)
    ap("rjplus", ALICE)
    # co-authored approvals
    s = _slug("qcoap")
    lab.set_status(s, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m",
            "alice: approve qcoap\n\nCo-authored-by: Carol <carol@ops.example.com>\n",
            who=ALICE)  # fmt: skip
    s = _slug("qcoap2")
    lab.set_status(s, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", f"alice: approve qcoap2\n\nCo-authored-by: Bob <{bob}>\n",
            who=ALICE)  # fmt: skip
    s = _slug("qmalco")
    lab.set_status(s, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m",
            "mallory: approve qmalco\n\nCo-authored-by: Alice <alice@example.com>\n"
            f"Co-authored-by: Bob <{bob}>\n", who=MALLORY)  # fmt: skip
    # rejections
    lab.set_status(_slug("rjmal"), "rejected")
    lab.commit("mallory: reject rjmal", MALLORY)
    s = _slug("rjmalco")
    lab.set_status(s, "rejected")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m",
            "mallory: reject\n\nCo-authored-by: Alice <alice@example.com>\n",
            who=MALLORY)  # fmt: skip
    lab.set_status(_slug("rjcoauth"), "rejected")
    lab.commit("mallory: reject rjcoauth", MALLORY)
    step("b")

    # -- C ---------------------------------------------------------------------------------
    for v in ("hc", "hdel", "hnone", "hcase", "hlist", "hinap", "hrule", "hall", "pre", "tw2"):
        ap(v, BOB)
    ap("qalc", BOB)
    ap("qal", ASMITH)
    ap("qplus", ("Bob X", "bob+x@ops.example.com"))
    ap("qplus2", ("Bob Y", "bob+y@ops.example.com"))
    ap("qcoap2", BOB)
    ap("rjmal", ALICE)
    ap("rjmalco", ALICE)
    ap("rjcoauth", ALICE)
    lab.set_status(_slug("rjalias"), "rejected")
    lab.commit("a.smith: reject", ASMITH)
    lab.set_status(_slug("rjplus"), "rejected")
    lab.commit("bob+r: reject", ("Bob R", "bob+r@ops.example.com"))
    step("c")

    # -- D ---------------------------------------------------------------------------------
    ap("hc", SEC)
    ap("rjalias", BOB)
    ap("rjplus", CAROL)
    step("d")

    # -- the policy file ---------------------------------------------------------------------
    pol = lab.repo / ".plangate" / "policy.json"
    got["pol_exists"] = pol.exists()
    if pol.exists():
        orig = pol.read_text()
        # pol-rule: the agent drops the high rule, under the controller's subject and trailer
        data2 = json.loads(orig)
        rules = data2.get("approval", {}).get("rules")
        if isinstance(rules, list) and rules:
            rules.pop(0)
        pol.write_text(json.dumps(data2, sort_keys=True, separators=(",", ":")))
        lab.git("add", "-A")
        last = lab.git("log", "-1", "--format=%B", "--author=plangate@localhost",
                       "--", ".plangate/policy.json")  # fmt: skip
        msg = last if last.strip() else "plangate: record policy\n"
        lab.git("commit", "-q", "-m", msg, who=AGENT)
        got["pol-name"] = [lab.head()]
        pol.write_text(orig)
        got["pol-back"] = [lab.commit("agent: policy back", AGENT)]
        # pol-del: the agent deletes the file
        lab.git("rm", "-q", ".plangate/policy.json")
        lab.git("commit", "-q", "-m", "agent: drop policy", who=AGENT)
        got["pol-del"] = [lab.head()]
        pol.parent.mkdir(exist_ok=True)
        pol.write_text(orig)
        lab.commit("agent: policy restored", AGENT)
        # pol-link: the file a symbolic link to the agent's copy (approvers added)
        data3 = json.loads(orig)
        data3["approval"]["approvers"].append(MALLORY[1])
        (lab.repo / ".plangate" / "mine.json").write_text(
            json.dumps(data3, sort_keys=True, separators=(",", ":"))
        )
        pol.unlink()
        pol.symlink_to("mine.json")
        got["pol-link"] = [lab.commit("agent: policy link", AGENT)]
        pol.unlink()
        pol.write_text(orig)
        (lab.repo / ".plangate" / "mine.json").unlink()
        lab.commit("agent: policy plain", AGENT)
        # pol-bot: a change made under the controller's full identity
        data4 = json.loads(orig)
        data4["approval"]["approvers"].append("bot-added@example.com")
        pol.write_text(json.dumps(data4, sort_keys=True, separators=(",", ":")))
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", msg, who=BOT)
        got["pol-bot"] = [lab.head()]
        pol.write_text(orig)
        lab.commit("agent: policy back again", AGENT)
        # pol-co: the agent's change co-authored by plangate
        data5 = json.loads(orig)
        data5["approval"]["approvers"].append("co-added@example.com")
        pol.write_text(json.dumps(data5, sort_keys=True, separators=(",", ":")))
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m",
                "plangate: record policy\n\nCo-authored-by: plangate <plangate@localhost>\n",
                who=AGENT)  # fmt: skip
        got["pol-co"] = [lab.head()]
        pol.write_text(orig)
        lab.commit("agent: policy back a third time", AGENT)
    step("e")

    ran = {v: len(lab.calls(_slug(v))) for v in VIDS}
    ran["mapre"] = len(lab.calls("ma"))  # the copy keeps ma's tag
    lab.ran = ran  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["clone"] = clone_audit_got(lab, root)
    got["withcfg"] = lab.audit(config=lab.config)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r114-approve-atk114a", _build)


POLS = ["pol-name", "pol-del", "pol-link", "pol-co"]
IDS = [*VIDS, *[f"{v}:audit" for v in VIDS], *[f"{v}:risk" for v in HIGH]]
IDS += [*[f"{v}:risk-end" for v in HIGH], "hnone:row", "hcase:row"]
IDS += [*[f"{v}:show" for v in SHOWN], *[f"{v}:check" for v in CHECKED], "passes", *POLS]
IDS += ["pol-bot:cfg", *[f"{v}:check" for v in ("mack", "mackat")]]


def _broken(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 114: {cls}: {what}")


_RISK = _broken(
    "status-risk-from-forged-frozen",
    "status --json shows the file's frozen.risk (low, LOW, none, null) the agent wrote, while "
    "the controller judges by the catalog's high rule (show and check say high)",
)
# status-risk-from-forged-frozen: fixed the same session (the index keeps ``frozen:`` from
# the controller's commits alone; a version it never froze is shown as the policy judges it:
# ``Controller._judged_facts``); the mark _RISK stood on the ``:risk``/``:risk-end`` ids
# status-row-silent-on-forged-frozen: fixed the next session (the row's ``waiting`` says
# E_SCHEMA_INVALID at the frozen: field and that the approval will be refused:
# ``Controller._frozen_block_reason``); the mark _ROW stood on ``hnone:row``, ``hcase:row``
BROKEN: dict[str, Any] = {}


def _risk_in(obj: Any) -> list[Any]:
    """Every value of a key ``risk`` anywhere in ``obj``."""
    found: list[Any] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "risk":
                found.append(v)
            found += _risk_in(v)
    elif isinstance(obj, list):
        for v in obj:
            found += _risk_in(v)
    return found


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round114_atk114a(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    if vid in POLS or vid == "pol-bot:cfg":
        assert got["pol_exists"], "no .plangate/policy.json recorded"
        name = vid.split(":")[0]
        rep = got["withcfg"][1] if vid.endswith(":cfg") else clone
        kinds = ("policy-changed", "controller-unexplained")
        flagged = {f.get("commit") for f in rep.get("findings", []) if f.get("kind") in kinds}
        assert flagged & set(got.get(name) or ["-"]), (got.get(name), rep.get("findings"))
        return
    v, _, kind = vid.partition(":")
    row = lab.got_rows.get(f"plans/{_slug(v)}", {})
    ran = lab.ran[v]
    if kind == "audit":
        valid = [
            e
            for e in clone.get("executions", [])
            if e.get("plan") == f"plans/{_slug(v)}" and e.get("approval_valid")
        ]
        assert bool(valid) == bool(ran), (ran, valid, clone.get("findings"))
        return
    if kind == "row":
        # the status row of a plan whose forged frozen: block no longer validates says so
        r = got["risk_rows"].get(f"plans/{_slug(v)}", {})
        assert "E_SCHEMA_INVALID" in json.dumps(r), r
        return
    if kind in ("risk", "risk-end"):
        r = got["risk_rows"].get(f"plans/{_slug(v)}", {}) if kind == "risk" else row
        assert _risk_in(r), r
        assert set(map(str, _risk_in(r))) == {"high"}, r
        return
    if kind == "show":
        out = got["show"][v]
        try:
            data = json.loads(out)
        except ValueError:
            raise AssertionError(out[-600:]) from None
        if v in ("hnone", "hall", "hcase"):  # the forged block no longer validates: named
            where = {"hnone": "frozen.risk", "hall": "frozen.at", "hcase": "frozen.risk"}[v]
            paths = [e.get("path") for e in data.get("errors", [])]
            assert data.get("code") == "E_SCHEMA_INVALID" and where in paths, out[-800:]
            return
        assert data.get("risk") == "high", (data.get("risk"), out[-800:])
        return
    if kind == "check":
        if v in ("mack", "mackat"):  # check predicts the controller's E_PLAN_EXPIRED
            mine = got[f"check:{v}"].get(f"plans/{_slug(v)}")
            assert mine and mine[0] == "refuse" and "E_PLAN_EXPIRED" in mine[1], got[f"check:{v}"]
            return
        out = got[f"check:{v}"]
        try:
            plans = json.loads(out)["plans"]
        except (ValueError, KeyError, TypeError):
            raise AssertionError(out[-600:]) from None
        mine = [p for p in plans if p.get("plan") == f"plans/{_slug(v)}"]
        assert mine, plans
        assert mine[0].get("risk") == "high", mine
        if v in ("hdel", "pre", "hinpr"):  # two of three: partial
            assert mine[0].get("outcome") == "partial", mine
        return
    _tool, want = VIDS[v]
    if want is None:
        assert ran <= 1, (ran, brief(row))
    else:
        assert ran == want, (ran, brief(row))
