"""Round 110, approval and policy (atk110f): quorum votes by spellings of one person, group
placement, a catch-all group, octopus and criss-cross merges bringing decisions, gate answers
and aborts by the wrong hands, a re-freeze back to an earlier version (A-B-A), the policy
changed by the operator in the same pass as an approval, a forged ``.plangate/policy.json``
in the approval commit; LOCAL and REMOTE mode (a bare repository over ``file://``).

Lab (two, built at once: ``local``, ``remote``). Approvers ``alice@example.com``,
``*@ops.example.com``; ``plus_tags: ["*@ops.example.com"]``; groups ``ops`` (Alice, ops),
``sec`` (Carol), ``wide`` (``*``), ``team`` (Alice, Bob, Carol). Rules: ``plans/w*`` one of
``wide``; ``plans/x*`` one ``ops`` and one ``sec``; ``plans/t*`` two of ``team``; ``plans/p*``
two, ``plans/r*`` one, ``plans/q*`` two, the rest one. Before pass B the operator changes the
config (phase 2): ``p*`` one, ``r*`` two, ``team`` loses Alice and gains Dave. The Owner
writes every plan (``qco`` and ``gb`` with ``Co-authored-by: Bob <bob+rev@ops...>``). Rounds
A-D, each a ``run --once`` pass (remote: pushed first, pulled after), a second apart.

- identity (``q*``, two needed; Bob in A): ``qctrl`` Carol in B (runs); ``qcase``
  ``BOB@OPS.EXAMPLE.COM``, ``qplus`` ``bob+x@``, ``qfw`` fullwidth ``ｂｏｂ@``, ``qzw``
  ``b<U+200B>ob@`` in B (never run); ``qco`` Bob (an author by his ``+rev`` alias) then Carol;
  ``qcoa`` the agent's vote commit with ``Co-authored-by: Alice``, then Bob (never run).
- groups: ``x1`` Carol then Bob, ``x2`` Bob then Carol (run); ``x3`` Alice then Bob, ``x4``
  Carol then ``CAROL@OPS...``, ``x5`` Carol then ``carol+x@`` (never); ``w1`` Mallory (in
  ``wide``, no approver), ``w4`` a commit under the controller's name (never), ``w2`` Alice.
- merges: ``oa`` Alice's approval branch octopus-merged by the agent (never), ``ob`` by Carol
  (runs); ``qoct`` Alice's and Bob's vote branches octopus-merged by Carol (never: unsigned
  branch votes); ``ormr`` Mallory's rejection branch octopus-merged by the agent, Bob approves
  in C (runs); ``oar`` Alice's rejection branch the same (never); ``ccx`` (one needed) /
  ``qcc`` (two) Alice's approval inside a criss-cross of the agent's, merged by Bob (runs /
  never).
- gates (Alice starts in A; gate 2 in B): ``ga`` Alice (runs 2), ``gb`` Bob, co-author,
  ``gm`` Mallory, ``go`` Alice's answer on a side branch octopus-merged by the agent (never);
  ``gab`` Mallory aborts (ignored), Alice answers in C (runs); ``gaa`` the Owner aborts, Alice
  answers in C (never).
- versions: ``qaba`` Alice votes v1 (A), Owner edits to v2 (B), reverts to v1 (C), Bob votes
  (D): never. ``epre`` added and approved by Alice before any pass; ``dr`` Alice sets a
  ``draft`` approved (A), the agent sets it pending (B) and approved (C): never.
- policy: ``qpol`` Alice's vote commit also writes ``.plangate/policy.json`` saying one
  suffices (partial; Bob in D runs it); ``mpol`` Mallory's approval writes one naming her an
  approver (never). ``pl`` Alice approves with the lowering in the same pass; ``pm`` Alice
  voted in A, lowered in B; ``rl`` Alice approves with the raise in the same pass, Bob in C;
  ``tr`` Alice votes (A), removed from ``team``, Bob votes (B, must stay partial), Carol (C).

- more identity and withdrawal: ``orj`` the Owner's rejection as ``OWNER@EXAMPLE.COM`` (counts:
  Alice's later approval never runs); ``wr`` Mallory (in ``wide``, no approver) rejects, Alice
  approves (runs); ``qbm`` Bob votes on main, then merges the agent's ``approved`` branch (one
  person: never); ``qdv`` Dan (no approver) votes, Alice votes with the config making Dan an
  approver in that pass; ``drj`` Dan rejects in that pass, Alice approves in C; ``qal``/``qal2``
  Bob and ``robert@ops`` vote either way round, phase 2 aliasing them (``people``): never.
- versions again: ``ref1`` (one needed) / ``qref`` (two; Bob in B) the Owner's v2 edit and
  Alice's approval in one push, before any pass froze v2: never. ``inv`` Alice sets an
  ``invalid`` plan approved, the Owner fixes it and sets it pending; ``inv2`` fixes it leaving
  ``approved``: never.
- policy matching at approval (rules ``risk: high``, ``tools: [peek]``,
  ``flows: untrusted_to_sensitive``, three approvals each; Alice in A, Bob in B): a high-risk
  tool only in a fallback step (``kfb``; ``kfbc`` with Carol in C runs), ``peek`` only in a
  fallback, a plan or action precondition, a ``verify`` tool (``kfbp``, ``kpre``, ``kapre``,
  ``kver``), a pinned child calling ``boom`` (``knest``), ``klate`` (its tool raised to high in
  the pass of Alice's approval), flows whole, inside a string, via ``result``, in a list,
  into a fallback step, into a precondition check's sensitive param, through an ``inherit``
  hop (``kfl1``-``kfl9``): never with two.

Ids ``<mode>:<vid>`` (``rec`` calls of the watched tag as wanted and a fresh clone's
``plangate audit`` agreeing: valid runs iff it ran; where both readings are lawful (``pl``,
``pm``, ``rl``, ``epre``) at most one run and the audit agreeing), ``<mode>:tr-b`` (not
started after B), ``<mode>:passes``.

Seen (round 110, 130 ids, ~25 s wall): 0 broke, 130 held. Every vote by a spelling of one
person (case, ``+tag``, fullwidth, zero-width, a declared alias added between the votes) counted
once; co-authors (by alias too) were refused at the first approval and at the gate; the
agent's ``Co-authored-by: Alice`` made no vote of hers; group placement found Carol for
``sec`` in either order; ``wide`` (``*``) let no non-approver approve or reject; octopus and
criss-cross merges counted only the merger (branch votes unsigned); a v1 vote voided by v2
stayed void when v1 came back (A-B-A); approvals made before the re-freeze were refused
(``E_PLAN_HASH_MISMATCH``, ``E_PLAN_NOT_FROZEN``) and never collected; a forged
``.plangate/policy.json`` in the approval commit changed nothing; every rule matched through
fallbacks, checks, pins and flows at the approval, not only at the freeze. Where a config
change met an approval in one pass (``pl`` ran on Alice's approval under the lowered count,
``rl`` waited for Bob under the raised one, ``pm`` did not start without a new approval,
``drj``'s rejection made before Dan was allowed was ignored) the fresh-clone audit agreed.
(A first build's ``gb`` "break" was the lab's: Bob's co-authorship commit did not change the
plan; fixed, and a probe of co-author, alias and direct authors answering a gate all held.)

"""

from __future__ import annotations

import json
import subprocess
import time
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
    build_all,
    plan_text,
)

OWNER = ("Owner", "owner@example.com")
BOB_CASE = ("Bob", "BOB@OPS.EXAMPLE.COM")
BOB_PLUS = ("Bob", "bob+x@ops.example.com")
BOB_FW = ("Bob", "\uff42\uff4f\uff42@ops.example.com")
BOB_ZW = ("Bob", "b\u200bob@ops.example.com")
CAROL_CASE = ("Carol", "CAROL@OPS.EXAMPLE.COM")
ROBERT = ("Robert", "robert@ops.example.com")
CAROL_PLUS = ("Carol", "carol+x@ops.example.com")
CO_BOB = "\n\nCo-authored-by: Bob <bob+rev@ops.example.com>\n"


def _policy(phase: int) -> str:
    team = '["alice@example.com", "bob@ops.example.com", "carol@ops.example.com"]'
    if phase == 2:
        team = '["bob@ops.example.com", "carol@ops.example.com", "dave@ops.example.com"]'
    p_count, r_count = (2, 1) if phase == 1 else (1, 2)
    people = '  people: [["bob@ops.example.com", "robert@ops.example.com"]]\n' if phase == 2 else ""
    return f"""\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
  sec: ["carol@ops.example.com"]
  wide: ["*"]
  team: {team}
identity_aliases:
  plus_tags: ["*@ops.example.com"]
{people}rules:
  - match: {{risk: high}}
    require: [{{count: 3}}]
  - match: {{tools: [peek]}}
    require: [{{count: 3}}]
  - match: {{flows: untrusted_to_sensitive}}
    require: [{{count: 3}}]
  - match: {{paths: ["plans/w*/**"]}}
    require: [{{group: wide, count: 1}}]
  - match: {{paths: ["plans/x*/**"]}}
    require: [{{group: ops, count: 1}}, {{group: sec, count: 1}}]
  - match: {{paths: ["plans/t*/**"]}}
    require: [{{group: team, count: 2}}]
  - match: {{paths: ["plans/p*/**"]}}
    require: [{{count: {p_count}}}]
  - match: {{paths: ["plans/r*/**"]}}
    require: [{{count: {r_count}}}]
  - match: {{paths: ["plans/q*/**"]}}
    require: [{{count: 2}}]
"""


TOOLS = """\
peek: {kind: echo, risk: low, idempotent: true}
boom: {kind: echo, risk: high}
late: {kind: echo, risk: LATE}
sink: {kind: echo, sensitive: [to]}
psink: {kind: echo, risk: low, idempotent: true, sensitive: [to]}
fmt: {kind: echo, output_trust: inherit}
"""
A1 = '  - id: 1\n    tool: rec\n    why: "w"\n    params: {tag: "%s"}\n'
E1 = (
    '  - id: 1\n    tool: echo\n    why: "w"\n    params: {v: "a@b.c"}\n'
    '    outputs: [{name: v, path: "$.v"}]\n'
)
R2 = '  - id: %d\n    tool: rec\n    why: "r"\n    params: {tag: "%s"}\n'
GD = '    guards: [{param: to, one_of: ["a@b.c"]}]\n'
SINK = '  - id: 2\n    tool: sink\n    why: "s"\n    params: {to: %s}\n'
PEEK = '{tool: peek, params: {a: 1}, expect: {path: "$.a", equals: 1}}'
#: the policy-matching plans: slug -> (tools, actions, plan-level head); each ends with a
#: ``rec`` call of its slug, each needs three approvals (risk high, peek, or a flow)
KPLANS: dict[str, tuple[list[str], str, str]] = {
    "kfb": (
        ["rec", "boom"],
        A1 % "kfb" + "    on_failure: fallback\n    fallback:\n"
        '      - {id: "1.1", tool: boom, why: "f", params: {a: 1}}\n',
        "",
    ),
    "kfbc": (
        ["rec", "boom"],
        A1 % "kfbc" + "    on_failure: fallback\n    fallback:\n"
        '      - {id: "1.1", tool: boom, why: "f", params: {a: 1}}\n',
        "",
    ),
    "kfbp": (
        ["rec", "peek"],
        A1 % "kfbp" + "    on_failure: fallback\n    fallback:\n"
        '      - {id: "1.1", tool: peek, why: "f", params: {a: 1}}\n',
        "",
    ),
    "kpre": (["rec", "peek"], A1 % "kpre", f"preconditions:\n  - {PEEK}\n"),
    "kapre": (["rec", "peek"], A1 % "kapre" + f"    preconditions:\n      - {PEEK}\n", ""),
    "kver": (["rec", "peek"], A1 % "kver" + f"    verify: {PEEK}\n", ""),
    "klate": (
        ["rec", "late"],
        A1 % "klate" + '  - id: 2\n    tool: late\n    why: "l"\n    params: {a: 1}\n',
        "",
    ),
    "kfl1": (
        ["echo", "sink", "rec"],
        E1 + SINK % '"$<actions[1].outputs.v>"' + GD + R2 % (3, "kfl1"),
        "",
    ),
    "kfl2": (
        ["echo", "sink", "rec"],
        E1
        + SINK % '"x $<actions[1].outputs.v>"'
        + '    guards: [{param: to, one_of: ["x a@b.c"]}]\n'
        + R2 % (3, "kfl2"),
        "",
    ),
    "kfl3": (
        ["echo", "sink", "rec"],
        E1 + SINK % '"$<actions[1].result.v>"' + GD + R2 % (3, "kfl3"),
        "",
    ),
    "kfl9": (
        ["echo", "sink", "rec"],
        E1 + SINK % '["$<actions[1].outputs.v>"]' + GD + R2 % (3, "kfl9"),
        "",
    ),
    "kfl4": (
        ["echo", "rec", "sink"],
        E1 + R2 % (2, "kfl4") + "    on_failure: fallback\n"
        '    fallback:\n      - id: "2.1"\n        tool: sink\n        why: f\n'
        '        params: {to: "$<actions[1].outputs.v>"}\n'
        '        guards: [{param: to, one_of: ["a@b.c"]}]\n',
        "",
    ),
    "kfl5": (
        ["echo", "rec", "psink"],
        E1 + R2 % (2, "kfl5") + "    preconditions:\n"
        '      - tool: psink\n        params: {to: "$<actions[1].outputs.v>"}\n'
        '        guards: [{param: to, one_of: ["a@b.c"]}]\n'
        '        expect: {path: "$.to", equals: "a@b.c"}\n',
        "",
    ),
    "kfl7": (
        ["echo", "fmt", "sink", "rec"],
        E1 + '  - id: 2\n    tool: fmt\n    why: "s"\n'
        '    params: {w: "$<actions[1].outputs.v>"}\n    outputs: [{name: w, path: "$.w"}]\n'
        + (SINK % '"$<actions[2].outputs.w>"').replace("id: 2", "id: 3")
        + GD
        + R2 % (4, "kfl7"),
        "",
    ),
}
CHILD = '  - id: 1\n    tool: boom\n    why: "c"\n    params: {a: 1}\n'


def _kplan(slug: str, tools: list[str], acts: str, head: str = "", status: str = "") -> str:
    av = "".join(f"  - name: {t}\n" for t in tools)
    return (
        f'plan:\n  name: "{slug}"\n  task: "atk110f {slug}"\n'
        f"  status: {status or 'pending_approval'}\n{head}available_tools:\n{av}actions:\n{acts}"
    )


GATE = """\
  - id: 2
    tool: rec
    why: "step 2 of G"
    requires_approval: true
    params:
      tag: "G-2"
"""
GATES = ["ga", "gb", "gm", "go", "gab", "gaa"]
PLAIN = ["qctrl", "qcase", "qplus", "qfw", "qzw", "qcoa", "x1", "x2", "x3", "x4", "x5"]
PLAIN += ["w1", "w2", "w4", "oa", "ob", "qoct", "ormr", "oar", "ccx", "qcc", "qaba"]
PLAIN += [
    "qpol",
    "mpol",
    "pl",
    "pm",
    "rl",
    "tr",
    "orj",
    "wr",
    "qbm",
    "qdv",
    "ref1",
    "qref",
    "drj",
    "qal",
    "qal2",
]
#: vid -> runs: 1 once, 0 never, None either (at most once, the audit agreeing)
WANT: dict[str, int | None] = {v: 0 for v in PLAIN + GATES + ["qco", "epre", "dr"]}
WANT.update({v: 0 for v in [*KPLANS, "knest", "inv", "inv2"]})
WANT.update(kfbc=1, wr=1)
WANT.update(qctrl=1, x1=1, x2=1, w2=1, ob=1, ormr=1, ccx=1, ga=1, gab=1, qpol=1, tr=1)
WANT.update(pl=None, pm=None, rl=None, epre=None, qdv=None, drj=None)
MODES = ["local", "remote"]
FORGED = {
    "identity": {"email": "plangate@localhost"},
    "plans_dir": "plans",
    "approval": {
        "approvers": ["*"],
        "rules": [{"match": {"paths": ["plans/**"]}, "require": [{"count": 1}]}],
    },
}


def _tag(vid: str) -> str:
    return f"{vid}-2" if vid in GATES else vid


def _config(lab: Lab, phase: int, url: str) -> None:
    late = "high" if phase == 2 else "medium"
    lab.write_config(approval=_policy(phase), tools=TOOLS.replace("LATE", late))
    if phase == 2:  # Dan becomes an approver
        text = lab.config.read_text()
        lab.config.write_text(
            text.replace('"*@ops.example.com"]', '"*@ops.example.com", "dan@example.com"]', 1)
        )
    if url:
        lab.config.write_text(
            lab.config.read_text().replace(
                f"repo: {lab.repo}\n",
                f"remote: {{url: {json.dumps(url)}, branch: main, poll_interval: 0.2}}\n",
            )
        )


def _side(lab: Lab, name: str, act: Any) -> str:
    """On a new branch ``name`` cut from main: ``act()``; back to main; the branch tip."""
    lab.branch(name)
    act()
    tip = lab.head()
    lab.git("checkout", "-q", "main")
    return tip


def _set(lab: Lab, slug: str, status: str, who: tuple[str, str], extra: str = "") -> str:
    lab.set_status(slug, status)
    return lab.commit(f"{who[0].lower()}: {slug} {status}{extra}", who)


def _build(root: Path, mode: str) -> Lab:
    lab = Lab(root)
    url = ""
    for vid in PLAIN:
        lab.write(vid, plan_text(vid))
    for vid in GATES:
        if vid == "gb":
            continue
        lab.write(vid, plan_text(vid, extra_actions=GATE.replace("G", vid)))
    lab.write("dr", plan_text("dr", status="draft"))
    for slug, (tools, acts, head) in KPLANS.items():
        lab.write(slug, _kplan(slug, tools, acts, head))
    lab.write("kchild", _kplan("kchild", ["boom"], CHILD, "", "draft"))
    bad = plan_text("inv").replace("tool: rec", "tool: nosuch")
    lab.write("inv", bad)
    lab.write("inv2", bad.replace('"inv"', '"inv2"'))
    lab.commit("owner: plans", OWNER)
    lab.write("qco", plan_text("qco"))
    lab.write("gb", plan_text("gb", extra_actions=GATE.replace("G", "gb")))
    lab.commit("owner: plans with Bob" + CO_BOB, OWNER)
    pin = lab.cli("hash", str(lab.repo / "plans/kchild/PLAN.yml")).stdout.split()[-1]
    nest = f'  - id: 2\n    plan: {{path: plans/kchild, hash: "{pin}"}}\n    why: n\n'
    lab.write("knest", _kplan("knest", ["rec"], A1 % "knest" + nest))
    lab.commit("owner: knest", OWNER)
    if mode == "remote":
        origin = root / "origin.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
        url = f"file://{origin}"
        lab.git("remote", "add", "origin", url)
    _config(lab, 1, url)
    passes: list[tuple[str, int, bool, str]] = []
    after: dict[str, dict[str, int]] = {}

    def step(phase: str) -> None:
        if url:
            lab.git("push", "-q", "origin", "HEAD:refs/heads/main")
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-600:]))
        if url:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")
        after[phase] = {v: len(lab.calls(_tag(v))) for v in WANT}
        time.sleep(1.05)

    step("freeze")
    # -- round A ----------------------------------------------------------------------
    for vid in ("qctrl", "qcase", "qplus", "qfw", "qzw", "qco", "x2"):
        lab.approve(vid, BOB)
    lab.set_status("qcoa", "approved")
    lab.commit("agent: qcoa\n\nCo-authored-by: Alice <alice@example.com>\n", AGENT)
    for vid in ("x1", "x4", "x5"):
        lab.approve(vid, CAROL)
    for vid in ("x3", "w2", "qaba", "pm", "tr", *GATES):
        lab.approve(vid, ALICE)
    lab.approve("w1", MALLORY)
    lab.approve("w4", BOT)
    _side(lab, "oa-a", lambda: lab.approve("oa", ALICE))
    _side(lab, "ob-a", lambda: lab.approve("ob", ALICE))
    _side(lab, "qo-a", lambda: lab.approve("qoct", ALICE))
    _side(lab, "qo-b", lambda: lab.approve("qoct", BOB))
    _side(lab, "ormr-m", lambda: _set(lab, "ormr", "rejected", MALLORY))
    _side(lab, "oar-a", lambda: _set(lab, "oar", "rejected", ALICE))
    for name in ("oa-n", "ob-n", "qo-n", "ormr-n", "oar-n"):
        _side(lab, name, lambda name=name: lab.note(name))
    # a criss-cross of the agent's around Alice's approvals of ccx and qcc
    a = _side(lab, "cA", lambda: (lab.approve("ccx", ALICE), lab.approve("qcc", ALICE)))
    b = _side(lab, "cB", lambda: lab.note("cB1"))
    lab.git("checkout", "-q", "cA")
    lab.git("merge", "-q", "--no-ff", "-m", "agent: cross 1", b, who=AGENT)
    lab.git("checkout", "-q", "cB")
    lab.git("merge", "-q", "--no-ff", "-m", "agent: cross 2", a, who=AGENT)
    lab.note("cB2")
    lab.git("checkout", "-q", "main")
    lab.write("epre", plan_text("epre"))
    lab.commit("owner: epre", OWNER)
    lab.approve("epre", ALICE)
    lab.approve("dr", ALICE)
    lab.put(".plangate/policy.json", json.dumps(FORGED, sort_keys=True, separators=(",", ":")))
    lab.approve("qpol", ALICE)
    forged = dict(FORGED, approval={"approvers": ["mallory@example.com"]})
    lab.put(".plangate/policy.json", json.dumps(forged, sort_keys=True, separators=(",", ":")))
    lab.approve("mpol", MALLORY)
    for slug in [*KPLANS, "knest"]:
        if slug != "klate":  # klate: approved with the raise of its tool's risk (B)
            lab.approve(slug, ALICE)
    _set(lab, "orj", "rejected", ("OWNER", "OWNER@EXAMPLE.COM"))
    _set(lab, "wr", "rejected", MALLORY)
    _side(lab, "qbm-pr", lambda: _set(lab, "qbm", "approved", AGENT))
    lab.approve("qbm", BOB)
    lab.approve("qdv", ("Dan", "dan@example.com"))
    lab.approve("qal", BOB)
    lab.approve("qal2", ROBERT)
    lab.approve("inv", ALICE)
    lab.approve("inv2", ALICE)
    for slug in ("ref1", "qref"):
        lab.write(slug, lab.read(slug).replace(f'tag: "{slug}"', f'tag: "{slug}"\n      v: 2'))
        lab.commit(f"owner: {slug} v2", OWNER)
        lab.approve(slug, ALICE)
    step("a")
    # -- round B ----------------------------------------------------------------------
    lab.approve("qctrl", CAROL)
    lab.approve("qcase", BOB_CASE)
    lab.approve("qplus", BOB_PLUS)
    lab.approve("qfw", BOB_FW)
    lab.approve("qzw", BOB_ZW)
    lab.approve("qco", CAROL)
    lab.approve("qcoa", BOB)
    lab.approve("x1", BOB)
    lab.approve("x2", CAROL)
    lab.approve("x3", BOB)
    lab.approve("x4", CAROL_CASE)
    lab.approve("x5", CAROL_PLUS)
    lab.git("merge", "-q", "--no-ff", "-m", "agent: merge", "oa-a", "oa-n", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "carol: merge", "ob-a", "ob-n", who=CAROL)
    lab.git("merge", "-q", "--no-ff", "-m", "carol: merge", "qo-a", "qo-b", "qo-n", who=CAROL)
    lab.git("merge", "-q", "--no-ff", "-m", "agent: merge", "ormr-m", "ormr-n", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "agent: merge", "oar-a", "oar-n", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "bob: merge cB", "cB", who=BOB)
    lab.approve("ga", ALICE)
    lab.approve("gb", BOB)
    lab.approve("gm", MALLORY)
    _side(lab, "go-a", lambda: lab.approve("go", ALICE))
    _side(lab, "go-n", lambda: lab.note("go-n"))
    lab.git("merge", "-q", "--no-ff", "-m", "agent: merge", "go-a", "go-n", who=AGENT)
    _set(lab, "gab", "aborted", MALLORY)
    _set(lab, "gaa", "aborted", OWNER)
    lab.write("qaba", lab.read("qaba").replace('tag: "qaba"', 'tag: "qaba"\n      v: 2'))
    v2 = lab.commit("owner: qaba v2", OWNER)
    _set(lab, "dr", "pending_approval", AGENT)
    lab.approve("pl", ALICE)
    lab.approve("rl", ALICE)
    lab.approve("tr", BOB)
    for slug in [*KPLANS, "knest"]:
        lab.approve(slug, ALICE if slug == "klate" else BOB)
    lab.git("merge", "-q", "--no-ff", "-m", "bob: merge qbm-pr", "qbm-pr", who=BOB)
    lab.approve("qdv", ALICE)
    _set(lab, "drj", "rejected", ("Dan", "dan@example.com"))
    lab.approve("qal", ROBERT)
    lab.approve("qal2", BOB)
    lab.approve("qref", BOB)
    lab.write("inv", lab.read("inv").replace("tool: nosuch", "tool: rec"))
    lab.set_status("inv", "pending_approval")
    lab.commit("owner: fix inv", OWNER)
    lab.write("inv2", lab.read("inv2").replace("tool: nosuch", "tool: rec"))
    lab.commit("owner: fix inv2", OWNER)
    _config(lab, 2, url)
    step("b")
    # -- round C ----------------------------------------------------------------------
    lab.git("revert", "--no-edit", v2, who=OWNER)
    lab.approve("gab", ALICE)
    lab.approve("gaa", ALICE)
    lab.approve("tr", CAROL)
    lab.approve("rl", BOB)
    lab.approve("dr", AGENT)
    lab.approve("ormr", BOB)
    lab.approve("oar", BOB)
    lab.approve("kfbc", CAROL)
    lab.approve("orj", ALICE)
    lab.approve("wr", ALICE)
    lab.approve("drj", ALICE)
    step("c")
    # -- round D ----------------------------------------------------------------------
    lab.approve("qaba", BOB)
    lab.approve("qpol", BOB)
    step("d")
    step("last")
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", url or str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    lab.audit_err = out.stderr[-2000:]  # type: ignore[attr-defined]
    lab.report = json.loads(out.stdout) if out.stdout.strip() else {}  # type: ignore[attr-defined]
    lab.passes = passes  # type: ignore[attr-defined]
    lab.after = after  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.final = {v: lab.plan(v)["plan"]["status"] for v in WANT}  # type: ignore[attr-defined]
    lab.hist = lab.git("log", "--format=%h %an <%ae> %s", "main")[:3000]  # type: ignore[attr-defined]
    return lab


def _both(root: Path) -> Any:
    return build_all(root, {m: (lambda r, m=m: _build(r, m)) for m in MODES}, workers=2)


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r110-approve-atk110f", _both)


IDS = [f"{m}:{v}" for m in MODES for v in WANT]
IDS += [f"{m}:{x}" for m in MODES for x in ("tr-b", "passes")]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round110_atk110f(labs: Any, vid: str) -> None:
    mode, v = vid.split(":")
    lab = labs.got[mode]
    if v == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    if v == "tr-b":
        # Alice's vote no longer counts once she left ``team``: Bob's alone is one of two
        assert lab.after["b"]["tr"] == 0, (lab.after["b"], lab.hist[:1500])
        return
    ran = lab.after["last"][v]
    row = lab.got_rows.get(f"plans/{v}", {})
    want = WANT[v]
    report = lab.report
    assert report, lab.audit_err
    execs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{v}"]
    valid = [e for e in execs if e.get("approval_valid")]
    if v in GATES:
        valid = [e for e in valid if e.get("approval_kind") == "gate"]
    if want is None:
        assert ran <= 1, (ran, brief(row))
        assert bool(valid) == bool(ran), (ran, valid, brief(row), lab.final[v])
        return
    assert ran == want, (ran, brief(row), lab.final[v], lab.hist[:1500])
    assert bool(valid) == bool(want), (valid, execs, brief(row))
