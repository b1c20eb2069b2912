"""Round 115, approval and policy (atk115a): the whole lab under ``approval.identity:
committer`` (round 114 did not try it): who counts as an approval's maker when the author and
the committer differ (approval, rejection, quorum vote, merge, fast-forward, rebase, pick),
and who counts as an AUTHOR of the plan for the self-approval rule (authored by the approver
but committed by the agent, committed by the approver but authored by the agent, and both
spelled in case, NFD, plus tags and people aliases), and the recorded policy's ``identity``
changed by the agent.

Lab (one, local mode, ``identity: committer``): approvers Alice, ``*@ops.example.com``,
``sec@example.com``; groups ``ops`` (Alice, ``*@ops.example.com``) and ``security`` (Sec);
``identity_aliases``: plus tags of ``*@ops.example.com``, people ``[alice@example.com,
a.smith@corp.example]``; rules, first match: ``risk: high`` two of ops and one of security,
``plans/q*/**`` two approvals. Tools (the recorder): ``rec`` medium, ``hi`` high. Pass A
freezes every plan; rounds B-C give votes, one ``run --once`` pass each; the policy file is
changed by the agent at the end and the repository audited in a fresh clone with no config.

Ids: ``<vid>`` (``rec`` calls of the vid's tag: exactly as the SPEC says, or for an
undecided vid at most one), ``<vid>:audit`` (the fresh-clone ``audit --json``, no config,
calls a start valid iff the controller ran it), ``<vid>:code`` (for refused vids, the code the
controller recorded or its status row names), ``<vid>:gate`` (a gate's answer: the plan was
paused ``awaiting_approval`` and action 2, tag ``<vid>-2``, ran as wanted), ``<vid>:check``
(``plangate check --as`` of a pull request never merged predicts the outcome and code the
controller gives the same shape on the branch), ``passes`` (every ``run --once`` exit 0, no
traceback), ``pol-*`` (the agent's changes of ``.plangate/policy.json``: ``identity`` set back
to ``author`` under the controller's message, the same committed with the controller as
committer, an approver added with the controller as author; flagged by the fresh-clone audit).

Variants: who makes an approval when author and committer differ (``cauthmal`` authored by
Mallory committed by Alice: Alice's, runs; ``ccommal`` the reverse: E_APPROVER_NOT_ALLOWED;
committer spelled upper case or NFD); who is an AUTHOR of the plan (``saauth`` authored by
Alice committed by the agent, ``sacom`` the reverse, co-author, Bob's hashed edit committed
by the Owner, author spelled upper case, NFD, plus tag, people alias, trailing dot, a
merge Alice makes approving the plan a branch brought authored by her, a branch plan
authored by Bob merged by the Owner, Alice's commit amended by the agent); folder writers by
author or committer of a ``NOTES.md`` (``fwauth``, ``fwcom``); quorum votes counted by
committer (split author/committer pairs, one committer two authors, alias, plus tags, case,
NFC/NFD, co-authored vote, Mallory committing Alice's vote); the high rule (Sec's vote
committed by Mallory, Mallory's committed by Sec); rejections by author vs committer;
merges (``--no-ff`` by Alice of Mallory's branch, by Mallory of Alice's), a fast-forward, a
rebase and a cherry-pick by Mallory, a revert of a revert by Mallory; gates answered by
split identities and by the plan's author or committer; ``check --as`` of the same shapes.

Seen (round 115, 123 ids, ~45 s wall at -n 2): nothing broke. Every run count, code, gate,
check prediction and fresh-clone audit verdict agreed with the SPEC under ``identity:
committer``: the approval is the committer's, the plan's authors are every author, committer
and co-author of a commit that wrote it or its folder, by every spelling, and the audit with
no config judges by the recorded ``identity`` too.

Suspected, not confirmed (not asserted as broken): in two of the first three runs of this
module at -n 2 (before the gate and check variants were added), ``rjcom`` (a rejection authored by
Mallory, committed by Alice) and ``rjcomplus`` (authored by Mallory, committed by
``bob+r@ops``) were not honoured: Bob's/Carol's later approval ran the plan (row: "approval
request (approve) by bob@ops.example.com", start, complete). In some 40 builds since (serial,
-n 2, three builds at once, phase B pinned to one second, random pauses between phase-B
commits, the first version's exact steps) they held every time; the
trigger (a second boundary between Mallory-authored decisions committed by different hands?)
was not found.

Not tried: signed approvals and ``Plan-Approved:`` trailers under ``identity: committer``,
``require_signed``, ``max_age``, remote mode, the web page and MCP.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BOB,
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
ZOE = ("Zoe", "zo\u00eb@ops.example.com")  # NFC
ZOE_NFD = ("Zoe", unicodedata.normalize("NFD", "zo\u00eb@ops.example.com"))


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com", "sec@example.com"]\n'
        "  identity: committer\n"
        '  groups: {ops: ["alice@example.com", "*@ops.example.com"], '
        'security: ["sec@example.com"]}\n'
        "  identity_aliases:\n"
        '    plus_tags: ["*@ops.example.com"]\n'
        "    people: [[alice@example.com, a.smith@corp.example]]\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 2}, {group: security, count: 1}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hi: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        "  echo: {kind: echo}\n"
    )


def _plan(slug: str, tool: str = "rec") -> str:
    gate = (
        '  - id: 2\n    tool: rec\n    why: "second, gated"\n    requires_approval: true\n'
        f'    params:\n      tag: "{slug}-2"\n'
    )
    text = plan_text(slug, extra_actions=gate if slug in GATES else "")
    if tool != "rec":
        text = text.replace("  - name: rec\n", f"  - name: {tool}\n").replace(
            "    tool: rec\n", f"    tool: {tool}\n"
        )
    return text


#: vid -> (tool, calls wanted at the end (None: undecided, at most one), code wanted if 0)
VIDS: dict[str, tuple[str, int | None, str | None]] = {
    # who makes an approval under identity: committer
    "cctl": ("rec", 1, None),  # control: Alice authors and commits the approval
    "cauthmal": ("rec", 1, None),  # authored by Mallory, committed by Alice: Alice's
    "ccommal": ("rec", 0, "E_APPROVER_NOT_ALLOWED"),  # authored by Alice, committed by Mallory
    "ccomcase": ("rec", 1, None),  # committed by ALICE@EXAMPLE.COM: Alice
    "ccomnfd": ("rec", 1, None),  # committed by Zoe in NFD: matches *@ops
    # self-approval: who is an author of the plan when author and committer differ
    "saauth": ("rec", 0, "E_SELF_APPROVAL"),  # plan authored by Alice, committed by the agent
    "sacom": ("rec", 0, "E_SELF_APPROVAL"),  # plan authored by the agent, committed by Alice
    "saco": ("rec", 0, "E_SELF_APPROVAL"),  # plan co-authored by Alice (Owner's commit)
    "saedit": ("rec", 0, "E_SELF_APPROVAL"),  # hashed edit authored by Bob, committed by Owner
    "saauthuc": ("rec", 0, "E_SELF_APPROVAL"),  # authored by ALICE@EXAMPLE.COM, agent commits
    "saauthnfd": ("rec", 0, "E_SELF_APPROVAL"),  # authored by Zoe (NFD), agent commits; Zoe
    "saauthplus": ("rec", 0, "E_SELF_APPROVAL"),  # authored by bob+x@ops; Bob approves
    "saauthppl": ("rec", 0, "E_SELF_APPROVAL"),  # authored by a.smith; Alice approves
    "saauthdot": ("rec", 0, "E_SELF_APPROVAL"),  # authored by <alice@example.com.>; Alice
    "samerge": ("rec", 0, "E_SELF_APPROVAL"),  # branch: authored Alice, committed agent;
    # merged by Alice with status approved in the merge's own edit
    "samergebr": ("rec", 0, "E_SELF_APPROVAL"),  # branch: authored Bob, committed Owner,
    # Owner merges --no-ff, Bob approves
    "saamend": ("rec", 0, "E_SELF_APPROVAL"),  # Alice's plan commit amended by the agent
    # (author Alice kept, committer agent); Alice approves
    # quorum (q*: two approvals) by committer
    "qsplit": ("rec", 1, None),  # author Bob/committer Alice, then author Alice/committer Bob
    "qsamecom": ("rec", 0, None),  # author Bob/committer Alice, author Carol/committer Alice
    "qalias": ("rec", 0, None),  # committer Alice, then committer a.smith
    "qplus": ("rec", 0, None),  # committer bob+x@ops, then bob+y@ops
    "qcase": ("rec", 0, None),  # committer alice@, then ALICE@
    "qnfd": ("rec", 0, None),  # committer Zoe NFC, then Zoe NFD
    "qcoauth": ("rec", 1, None),  # Alice's commit co-authored by Bob, then Bob's own: two
    "qmalauth": ("rec", 0, None),  # committer Mallory authored by Alice, then Bob
    "qctl": ("rec", 1, None),  # control: Alice then Bob
    # high risk: two of ops and one of security
    "hctl": ("hi", 1, None),  # control: Alice, Bob, Sec committers
    "hsecauth": ("hi", 0, None),  # Alice, Bob; Sec's approval committed by Mallory
    "hseccom": ("hi", 1, None),  # Alice, Bob; Sec commits Mallory's authored approval
    # rejections
    "rjcom": ("rec", 0, None),  # rejection authored by Mallory, committed by Alice; Bob later
    "rjauth": ("rec", None, None),  # authored by Alice, committed by Mallory; Bob later
    "rjcomplus": ("rec", 0, None),  # rejection committed by bob+r@ops (author Mallory); Carol
    # merges, fast-forwards, rebases, picks
    "mctl": ("rec", 1, None),  # Mallory's branch sets approved, Alice merges --no-ff
    "mmal": ("rec", 0, "E_APPROVER_NOT_ALLOWED"),  # Alice's branch approval, Mallory merges
    "ffalice": ("rec", 1, None),  # Alice's branch approval fast-forwarded onto main
    "rbmal": ("rec", 0, "E_APPROVER_NOT_ALLOWED"),  # Alice's approval rebased by Mallory
    "cpmal": ("rec", 0, None),  # Alice's approval on a side branch cherry-picked by Mallory
    "rvrv": ("rec", 0, None),  # Alice approves, Mallory reverts and reverts the revert
    # folder writers when author and committer differ
    "fwauth": ("rec", 0, "E_SELF_APPROVAL"),  # NOTES.md authored by Alice, agent commits
    "fwcom": ("rec", 0, "E_SELF_APPROVAL"),  # NOTES.md authored by the agent, Alice commits
    # gates (action 2 requires_approval; Bob approved the start): the gate's answer
    "gtctl": ("rec", 1, None),  # control: Alice answers
    "gtmal": ("rec", 1, None),  # authored by Alice, committed by Mallory
    "gtcom": ("rec", 1, None),  # authored by Mallory, committed by Alice
    "gtself": ("rec", 1, None),  # plan authored by Alice, committed by the agent; Alice
    "gtselfc": ("rec", 1, None),  # plan authored by the agent, committed by Alice; Alice
}
#: gate vids -> calls of action 2 (tag ``<vid>-2``) wanted at the end
GATES = {"gtctl": 1, "gtmal": 0, "gtcom": 1, "gtself": 0, "gtselfc": 0}
#: check vids (never merged): plan -> (``check --as`` email, outcome, refusal code wanted)
CHECKS: dict[str, tuple[str, str, str | None]] = {
    "cksa": (ALICE[1], "refuse", "E_SELF_APPROVAL"),  # plan authored Alice, agent committed
    "cksac": (ALICE[1], "refuse", "E_SELF_APPROVAL"),  # plan authored agent, Alice committed
    "ckfw": (ALICE[1], "refuse", "E_SELF_APPROVAL"),  # NOTES authored Alice, agent committed
    "ckppl": (ALICE[1], "refuse", "E_SELF_APPROVAL"),  # plan authored a.smith, agent committed
    "ckmal": (MALLORY[1], "refuse", "E_APPROVER_NOT_ALLOWED"),  # Alice's branch, Mallory merges
    "ckcom": (ALICE[1], "start", None),  # branch approval authored Mallory, committed Alice
    "ckbr": (ALICE[1], "refuse", "E_SELF_APPROVAL"),  # on the branch: NOTES.md authored by
    # Alice, committed by the agent, then Alice approves
}
PATHS = {v: v for v in VIDS}
PATHS.update({v: v for v in CHECKS})


def _slug(v: str) -> str:
    return PATHS[v]


def _c2(lab: Lab, msg: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
    """Commit everything with ``author`` and ``committer`` set apart."""
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    try:
        lab.git("commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", msg, who=author)
    finally:
        lab.extra_env = {}
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def ap(v: str, who: tuple[str, str], by: tuple[str, str] | None = None, msg: str = "") -> str:
        lab.set_status(_slug(v), "approved")
        return _c2(lab, msg or f"{who[0]}: approve {_slug(v)}", who, by or who)

    def rj(v: str, who: tuple[str, str], by: tuple[str, str]) -> str:
        lab.set_status(_slug(v), "rejected")
        return _c2(lab, f"{who[0]}: reject {_slug(v)}", who, by)

    _config(lab)
    special = {
        "saauth": (ALICE, AGENT),
        "sacom": (AGENT, ALICE),
        "saauthuc": (("Alice", "ALICE@EXAMPLE.COM"), AGENT),
        "saauthnfd": (ZOE_NFD, AGENT),
        "saauthplus": (("Bob X", "bob+x@ops.example.com"), AGENT),
        "saauthppl": (ASMITH, AGENT),
        "saauthdot": (("Alice", "alice@example.com."), AGENT),
        "gtself": (ALICE, AGENT),
        "cksa": (ALICE, AGENT),
        "cksac": (AGENT, ALICE),
        "ckppl": (ASMITH, AGENT),
        "gtselfc": (AGENT, ALICE),
    }
    skip = {*special, "saco", "samerge", "samergebr", "saamend"}
    for v, (tool, _w, _c) in VIDS.items():
        if v in skip:
            continue
        lab.write(_slug(v), _plan(_slug(v), tool))
    for v in ("ckfw", "ckmal", "ckcom", "ckbr"):
        lab.write(v, _plan(v))
    lab.commit("owner: plans", OWNER)
    for v, (author, committer) in special.items():
        lab.write(_slug(v), _plan(_slug(v)))
        _c2(lab, f"plan {v}", author, committer)
    lab.write(_slug("saco"), _plan(_slug("saco")))
    _c2(lab, "owner: plan saco\n\nCo-authored-by: Alice <alice@example.com>\n", OWNER, OWNER)
    # saamend: Alice writes the plan, the agent amends it (author Alice kept)
    lab.write(_slug("saamend"), _plan(_slug("saamend")))
    _c2(lab, "alice: plan saamend", ALICE, ALICE)
    lab.write(_slug("saamend"), _plan(_slug("saamend")).replace("record that", "records that"))
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": AGENT[0], "GIT_COMMITTER_EMAIL": AGENT[1]}
    lab.git("commit", "-q", "--amend", "--no-edit")  # author stays Alice
    lab.extra_env = {}
    # samerge: Alice-authored, agent-committed plan on a branch; Alice merges it approved
    lab.branch("sm")
    lab.write(_slug("samerge"), _plan(_slug("samerge")))
    _c2(lab, "plan samerge", ALICE, AGENT)
    lab.git("checkout", "-q", "main")
    lab.note("sm-main", OWNER)
    # samergebr: Bob-authored, Owner-committed plan on a branch, Owner merges
    lab.branch("smb")
    lab.write(_slug("samergebr"), _plan(_slug("samergebr")))
    _c2(lab, "plan samergebr", BOB, OWNER)
    lab.git("checkout", "-q", "main")
    lab.note("smb-main", OWNER)
    lab.git("merge", "-q", "--no-ff", "-m", "merge smb", "smb", who=OWNER)
    for v, (author, committer) in (
        ("fwauth", (ALICE, AGENT)),
        ("fwcom", (AGENT, ALICE)),
        ("ckfw", (ALICE, AGENT)),
    ):
        lab.put(f"plans/{v}/NOTES.md", f"review notes for {v}\n")
        _c2(lab, f"notes {v}", author, committer)
    step("a")
    # samerge: merged by Alice, the plan set approved in the merge (frozen by the controller
    # on the branch? No: the branch plan is unfrozen, so freeze it first by merging plain)
    lab.git("merge", "-q", "--no-ff", "-m", "merge sm", "sm", who=OWNER)
    step("a2")
    got["rows_a"] = lab.rows()

    # -- B: first votes ------------------------------------------------------------------
    import os
    import time

    # ATK115A_PIN=<n>: every phase-B commit dated now+n s (one second), to chase the rj* doubt
    if os.environ.get("ATK115A_PIN"):
        lab.git_date = f"@{int(time.time()) + int(os.environ['ATK115A_PIN'])} +0000"
    ap("cctl", ALICE)
    ap("cauthmal", MALLORY, ALICE)
    ap("ccommal", ALICE, MALLORY)
    ap("ccomcase", ALICE, ("Alice", "ALICE@EXAMPLE.COM"))
    ap("ccomnfd", ZOE_NFD, ZOE_NFD)
    ap("saauth", ALICE)
    ap("sacom", ALICE)
    ap("saco", ALICE)
    ap("saauthuc", ALICE)
    ap("saauthnfd", ZOE)
    ap("saauthplus", BOB)
    ap("saauthppl", ALICE)
    ap("saauthdot", ALICE)
    ap("samergebr", BOB)
    ap("saamend", ALICE)
    ap("fwauth", ALICE)
    ap("fwcom", ALICE)
    for v in GATES:
        ap(v, BOB)
    # saedit: Bob's hashed edit committed by the Owner (after the freeze), then re-frozen
    s = _slug("saedit")
    lab.write(s, lab.read(s).replace('tag: "saedit"', 'tag: "saedit"\n      extra: 1'))
    _c2(lab, "bob's edit", BOB, OWNER)
    ap("qsplit", BOB, ALICE)
    ap("qsamecom", BOB, ALICE)
    ap("qalias", ALICE)
    ap("qplus", ("Bob X", "bob+x@ops.example.com"))
    ap("qcase", ALICE)
    ap("qnfd", ZOE)
    lab.set_status(_slug("qcoauth"), "approved")
    _c2(lab, "alice: approve\n\nCo-authored-by: Bob <bob@ops.example.com>\n", ALICE, ALICE)
    ap("qmalauth", ALICE, MALLORY)
    ap("qctl", ALICE)
    for v in ("hctl", "hsecauth", "hseccom"):
        ap(v, ALICE)
    rj("rjcom", MALLORY, ALICE)
    rj("rjauth", ALICE, MALLORY)
    rj("rjcomplus", MALLORY, ("Bob R", "bob+r@ops.example.com"))
    # merges
    lab.branch("pr-mctl")
    ap("mctl", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-mctl", "pr-mctl", who=ALICE)
    lab.branch("pr-mmal")
    ap("mmal", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-mmal", "pr-mmal", who=MALLORY)
    # samerge: Alice sets it approved on a branch of her own and merges it herself
    lab.branch("pr-sm")
    ap("samerge", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-sm", "pr-sm", who=ALICE)
    # ffalice: Alice's branch approval fast-forwarded
    lab.branch("pr-ff")
    ap("ffalice", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "pr-ff", who=ALICE)
    # rbmal: Alice's approval on a branch, rebased by Mallory onto main
    lab.branch("pr-rb", "main~3")
    ap("rbmal", ALICE)
    lab.git("rebase", "-q", "main", who=MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "pr-rb", who=MALLORY)
    # cpmal: Alice's approval on a side branch, picked by Mallory
    lab.branch("pr-cp")
    x = ap("cpmal", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", x, who=MALLORY)
    # rvrv: Alice approves, Mallory reverts it, then reverts the revert
    x = ap("rvrv", ALICE)
    lab.git("revert", "--no-edit", x, who=MALLORY)
    lab.git("revert", "--no-edit", "HEAD", who=MALLORY)
    lab.git_date = None
    step("b")
    got["rows_b"] = lab.rows()

    # -- C: second votes -----------------------------------------------------------------
    ap("saedit", BOB)
    got["gate_rows"] = {v: lab.rows().get(f"plans/{v}", {}).get("status") for v in GATES}
    ap("gtctl", ALICE)
    ap("gtmal", ALICE, MALLORY)
    ap("gtcom", MALLORY, ALICE)
    ap("gtself", ALICE)
    ap("gtselfc", ALICE)
    ap("qsplit", ALICE, BOB)
    ap("qsamecom", CAROL, ALICE)
    ap("qalias", ASMITH)
    ap("qplus", ("Bob Y", "bob+y@ops.example.com"))
    ap("qcase", ("Alice", "ALICE@EXAMPLE.COM"))
    ap("qnfd", ZOE_NFD)
    ap("qcoauth", BOB)
    ap("qmalauth", BOB)
    ap("qctl", BOB)
    for v in ("hctl", "hsecauth", "hseccom"):
        ap(v, BOB)
    ap("rjcom", BOB)
    ap("rjauth", BOB)
    ap("rjcomplus", CAROL)
    step("c")

    # -- D: security -----------------------------------------------------------------------
    ap("hctl", SEC)
    ap("hsecauth", SEC, MALLORY)
    ap("hseccom", MALLORY, SEC)
    step("d")
    got["rows_d"] = lab.rows()

    # -- the policy file: the agent turns identity back to author / adds itself --------------
    pol = lab.repo / ".plangate" / "policy.json"
    got["pol_exists"] = pol.exists()
    got["pol_text"] = pol.read_text() if pol.exists() else ""
    if pol.exists():
        orig = pol.read_text()
        msg = lab.git("log", "-1", "--format=%B", "--", ".plangate/policy.json")
        data = json.loads(orig)
        text = json.dumps(data)
        # pol-ident: identity committer -> author, under the controller's message
        t2 = text.replace('"committer"', '"author"')
        pol.write_text(t2)
        lab.git("add", "-A")
        lab.git("commit", "-q", "--allow-empty", "-m", msg or "plangate: record policy\n",
                who=AGENT)  # fmt: skip
        got["pol-ident"] = [lab.head()]
        pol.write_text(orig)
        lab.commit("agent: back", AGENT)
        # pol-ccom: the same change, committed as the controller (committer plangate) but
        # authored by the agent
        pol.write_text(t2)
        got["pol-ccom"] = [_c2(lab, msg or "plangate: record policy\n", AGENT,
                               ("plangate", "plangate@localhost"))]  # fmt: skip
        pol.write_text(orig)
        lab.commit("agent: back again", AGENT)
        # pol-caut: authored as the controller, committed by the agent
        t3 = text.replace('"sec@example.com"', '"sec@example.com", "agent@example.com"', 1)
        pol.write_text(t3)
        got["pol-caut"] = [_c2(lab, msg or "plangate: record policy\n",
                               ("plangate", "plangate@localhost"), AGENT)]  # fmt: skip
        pol.write_text(orig)
        lab.commit("agent: back a third time", AGENT)
    step("e")

    # -- check of pull requests never merged ------------------------------------------------
    for v, (who, _o, _c) in CHECKS.items():
        lab.branch(f"ck-{v}")
        if v == "ckcom":
            ap(v, MALLORY, ALICE)
        elif v == "ckbr":
            lab.put(f"plans/{v}/NOTES.md", "branch notes\n")
            _c2(lab, "alice's notes", ALICE, AGENT)
            ap(v, ALICE)
        else:
            ap(v, ALICE)
        lab.git("checkout", "-q", "main")
        got[f"check:{v}"] = lab.check_plans(f"ck-{v}", who)
    ran = {v: len(lab.calls(_slug(v))) for v in VIDS}
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    lab.ran = ran  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["refusal"] = {v: lab.refusal(_slug(v)) for v in VIDS}
    got["codes"] = {v: lab.codes(_slug(v)) for v in VIDS}
    got["clone"] = clone_audit_got(lab, root)
    lab.extra_env = {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r115-approve-atk115a", _build)


POLS = ["pol-ident", "pol-ccom", "pol-caut"]
CODED = [v for v, (_t, _w, c) in VIDS.items() if c]
IDS = [*VIDS, *[f"{v}:audit" for v in VIDS], *[f"{v}:code" for v in CODED], "passes", *POLS]
IDS += [f"{v}:gate" for v in GATES]
IDS += [f"{v}:check" for v in CHECKS]


def _broken(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 115: {cls}: {what}")


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round115_atk115a(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    if vid in POLS:
        assert got["pol_exists"], "no .plangate/policy.json recorded"
        kinds = ("policy-changed", "controller-unexplained", "forged-controller")
        flagged = {f.get("commit") for f in clone.get("findings", []) if f.get("kind") in kinds}
        assert flagged & set(got.get(vid) or ["-"]), (got.get(vid), clone.get("findings"))
        return
    v, _, kind = vid.partition(":")
    row = lab.got_rows.get(f"plans/{_slug(v)}", {})
    ran = lab.ran.get(v, 0)
    if kind == "audit":
        valid = [
            e
            for e in clone.get("executions", [])
            if e.get("plan") == f"plans/{_slug(v)}" and e.get("approval_valid")
        ]
        assert bool(valid) == bool(ran), (ran, valid, clone.get("findings"))
        return
    if kind == "check":
        _who, outcome, code = CHECKS[v]
        told = got[f"check:{v}"]
        mine = told.get(f"plans/{v}")
        assert mine and mine[0] == outcome, told
        if code:
            assert code in mine[1], told
        return
    if kind == "gate":
        assert got["gate_rows"][v] == "awaiting_approval", got["gate_rows"]
        assert got["gate_ran"][v] == GATES[v], (got["gate_ran"][v], brief(row))
        return
    if kind == "code":
        want = VIDS[v][2]
        assert want in got["codes"][v], (got["refusal"][v], brief(row))
        return
    _tool, want, _c = VIDS[v]
    if want is None:
        assert ran <= 1, (ran, brief(row))
    else:
        assert ran == want, (ran, brief(row))
