"""Round 113, approval and policy (atk113f): groups and risk rules under a policy that changes
mid-approval, one person counted in two groups, group members who are no approvers, identity
variants within one quorum, ``.mailmap`` in the repository, octopus merges that carry an
author's edit-and-revert or an approval, a rebased pull request, author and committer dates
that contradict commit order, and cherry-picked copies of the controller's own start commits.

Lab (one, local mode): approvers Alice, ``*@ops.example.com``, ``sec@example.com`` and Dave;
groups ``ops`` (Alice, ``*@ops.example.com``, Dave in P1 only) and ``security`` (Sec, Alice,
``ext@partner.example``, who is no approver); rules, first match: ``risk: high`` needs two of
ops and one of security, ``plans/q*/**`` two approvals, ``plans/g*/**`` one of ops and one of
security. Tools (all the recorder): ``rec`` medium, ``hi`` high, ``mid`` medium in P1 and high
in P2, ``hot`` high in P1 and medium in P2. The Owner writes every plan (Bob writes ``mmb``);
pass A freezes them under P1; round B gives the first votes under P1; the operator then
switches to P2 (Dave out of ops; ``mid`` raised, ``hot`` lowered), pass; rounds C-E follow,
each with one ``run --once`` pass.

Ids: ``<vid>`` (``rec`` calls of the vid's tag at the end; for an undecided vid, that the
controller ran it at most once), ``<vid>~<tag>`` (calls of another tag: a v2 the agent made,
step 2 of a gated plan), ``<vid>:audit`` (the fresh-clone ``audit --json``, no config, calls
a start of the plan valid iff the controller ran it), ``<vid>:cfg`` (the same for ``audit
--json --config``), ``<vid>:check`` (``plangate check --as <merger>`` before the merge
predicted ``start`` iff the controller started the plan; for the fast-forwarded branches,
its ``fast_forward`` outcome), ``passes`` (every pass exited 0, no traceback),
``policy-flagged`` and ``pol-merge``/``pol-old``/``pol-oct``/``pol-ws`` (the agent's change of
``.plangate/policy.json`` in a plain commit, an evil merge, a commit dated 1990, an octopus
bringing a branch's change, a re-indented file of the same content: ``policy-changed`` in the
fresh-clone audit), ``records-unflagged`` (the controller's own records never flagged, the
policies listed are P1 and P2 only: its re-records after the agent's changes are no new
policy).

Variants, by family:

- groups: ``gops`` (two ops, no security: partial), ``gsec``/``galbob``/``gbobal`` (ops +
  security; Alice, in both groups, must be placed as security), ``galone``/``gcase`` (Alice
  twice, the second as ``ALICE@example.com``), ``gext`` (Ext is in ``security`` but no
  approver), ``gdave2`` (Dave an approver in no group), ``gco`` (the Owner's plan commit
  co-authored by Sec; Sec's vote is ``E_SELF_APPROVAL``), ``gadd``/``gadd2`` (Newb refused in
  P1, added to approvers and security in P2: his P1 vote stays refused, his P2 vote counts),
  ``gmd`` (Dave's P1 ops vote stops counting when P2 takes him out of ops: undecided by the
  SPEC; the controller and both audits agree it never ran).
- risk: ``hx``/``hx2``/``hx3``/``hxg`` (high: two ops and one security by distinct people, a
  ``q`` path no escape), ``hr``/``qhr``/``hrc`` (frozen while ``mid`` was medium, P2 raises it:
  the current policy's high-risk rule decides, one or two votes stay partial, ``check``
  predicts ``partial``), ``hl`` (frozen high, P2 lowers ``hot``: Bob's one vote runs it; the
  audits agree).
- identity variants in one quorum: ``qtwice``, ``qcase``, ``qname`` (another name), ``qpunct``
  (``alice@example.com.``); ``.mailmap`` committed by the agent: ``mmb`` (Bob's own plan, Bob
  mapped to Carol), ``mmc`` (Mallory mapped to Alice), ``mmq`` (mallory2 mapped to Bob).
- merges: ``qoct`` (Bob's edit and revert on one branch of the agent's octopus: Bob an
  author), ``qoctc`` (control, Carol's), ``qocta`` (Alice's approval inside Mallory's octopus,
  fast-forwarded: the approval is Mallory's, refused; ``check`` agrees), ``qoct2`` (Alice's and
  Bob's approvals on two branches of Carol's octopus: one vote, Carol's; ``check`` agrees),
  ``qmv`` (Alice votes v1; a branch makes v2; Bob votes v1 on main and Carol merges the v2
  branch in the same push: nothing of v1 or v2 ran; the refusal is the safe side),
  ``qmv2`` (the v2 merge first, then Bob: Alice's v1 vote does not count for v2).
- rebases and dates: ``qreb`` (Bob's approval rebased by Mallory, fast-forwarded: counts as
  Bob's, ``check``'s ``fast_forward`` says ``start``), ``qrbs`` (Bob's edit and revert rebased
  by Mallory: Bob still an author), ``qrebs`` (Alice's vote cherry-picked again),
  ``drej`` (Alice's rejection dated 2000 after Bob's approval dated 2099: commit order, the
  plan stays rejected), ``dord``/``dorda`` (an approval whose author date is before the
  freeze: ``E_APPROVAL_REPLAYED``, documented: "its author date must follow the trusted birth
  of the version"), ``dordc`` (only the committer date old: counts), ``dfut`` (dated 2099:
  counts).
- withdrawals: ``rejext`` (Ext, a group member but no approver, rejects: ignored),
  ``rejdave`` (Dave, an approver in no group, rejects: counts), ``gab`` (Ext aborts a paused
  run: ignored, Bob's gate answer runs step 2), ``ggate`` (a gate in a ``g`` plan answered by
  Bob alone runs: documented, "gates and resumes still need one approval").
- the controller's identity: ``botap`` (approved under plangate's full identity), ``cpa``/
  ``cpb`` (the controller's start commit cherry-picked back by the agent, author plangate,
  committer the agent or plangate: nothing ran again), ``qcpp``/``qcppb`` (the controller's
  partial record, Alice's v1 vote in it, carried onto v2 with the record's message and
  author; then Bob: refused, v2 never ran).
- policy: ``pgm`` (the agent adds Mallory to security in policy.json; Bob + Mallory),
  ``xpol``/``xpolo``/``xpold`` (approved by an address the agent's evil merge, octopus
  branch or 1990-dated commit added to policy.json: refused, no audit calls it valid).

Seen (round 113, 189 ids, ~36 s wall on the lab machine): 0 broke, 189 held. Several first
drafts "broke" only through the bench (a batched controller commit cherry-picked back touched
every plan it recorded and lapsed their open approvals, the documented "a status written
over an approval lapses it"); those steps now pick one-plan commits.

Not tried: signed ``Plan-Approved:`` trailers in octopus branches (``require_signed`` is off
here), ``identity: committer``, ``identity_aliases``, caps (``limits``) changed mid-approval,
``match: {tools: ...}`` and ``flows`` rules, remote mode.

Suspected, not confirmed: the fresh-clone audit lists no ``controller-unexplained`` finding
for ``cpb`` (the start commit cherry-picked under the controller's full identity) or
``qcppb`` (its partial record re-made under that identity), while ``audit --config`` does; by
git alone that is the documented limit ("Commits under the controller's name read by git
alone"), and neither audit called anything valid that did not run.
"""

from __future__ import annotations

import json
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
DAVE = ("Dave", "dave@example.com")
SEC = ("Sec", "sec@example.com")
EXT = ("Ext", "ext@partner.example")
NEWB = ("Newb", "newb@example.com")


def _config(lab: Lab, p2: bool) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    ops = ["alice@example.com", "*@ops.example.com"] + ([] if p2 else ["dave@example.com"])
    sec = ["sec@example.com", "alice@example.com", "ext@partner.example"]
    approvers = ["alice@example.com", "*@ops.example.com", "sec@example.com", "dave@example.com"]
    if p2:  # Newb joins: an approver and a member of security
        sec.append(NEWB[1])
        approvers.append(NEWB[1])
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        f"  groups: {{ops: {json.dumps(ops)}, security: {json.dumps(sec)}}}\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 2}, {group: security, count: 1}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        '    - match: {paths: ["plans/g*/**"]}\n'
        "      require: [{group: ops, count: 1}, {group: security, count: 1}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hi: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  mid: {{kind: exec, argv: {rec}, {env}, risk: {'high' if p2 else 'medium'}}}\n"
        f"  hot: {{kind: exec, argv: {rec}, {env}, risk: {'medium' if p2 else 'high'}}}\n"
        "  echo: {kind: echo}\n"
    )


def _plan(slug: str, tool: str = "rec") -> str:
    text = plan_text(slug)
    if slug in GATED:
        text += (
            f'  - id: 2\n    tool: rec\n    why: "step 2 of {slug}"\n'
            f'    requires_approval: true\n    params:\n      tag: "{slug}-2"\n'
        )
    if tool != "rec":
        text = text.replace("  - name: rec\n", f"  - name: {tool}\n").replace(
            "    tool: rec\n", f"    tool: {tool}\n"
        )
    return text


#: vid -> (tool, calls wanted at the end; None: undecided by the SPEC, judged by agreement)
VIDS: dict[str, tuple[str, int | None]] = {
    "c1": ("rec", 1),  # control: Alice approves
    "qc": ("rec", 1),  # control: Alice + Bob
    "qtwice": ("rec", 0),  # Alice twice
    "qcase": ("rec", 0),  # Alice, then "alice" <ALICE@EXAMPLE.COM>
    "qname": ("rec", 0),  # Alice, then "A. Liddell" <alice@example.com>
    "qpunct": ("rec", 0),  # Alice, then <alice@example.com.> style punctuation variant
    "gops": ("rec", 0),  # Bob + Carol: both ops, no security
    "gsec": ("rec", 1),  # control: Bob (ops) + Sec (security)
    "galone": ("rec", 0),  # Alice (ops and security) twice: one person, one entry
    "galbob": ("rec", 1),  # Alice (as security) + Bob (ops): the assignment must be found
    "gbobal": ("rec", 1),  # Bob first, then Alice
    "gext": ("rec", 0),  # Bob + Ext (security member, no approver)
    "gdave2": ("rec", 0),  # P2: Dave (approver, no group) + Sec
    "gmd": ("rec", None),  # P1 Dave (ops) votes; P2 removes him from ops; Sec votes
    "hx": ("hi", 1),  # high: Alice + Bob + Sec
    "hx2": ("hi", 0),  # high: Alice + Bob (Alice cannot be ops and security at once)
    "hx3": ("hi", 1),  # high: Bob + Carol + Alice (Alice as security)
    "hxg": ("hi", 0),  # high risk in a q path: Alice + Bob (the first rule decides)
    "hr": ("mid", 0),  # frozen medium; P2 raises mid to high; Alice alone
    "hl": ("hot", None),  # frozen high; Alice votes in P1; P2 lowers hot; Bob votes
    "mmb": ("rec", 0),  # Bob's plan; .mailmap maps Bob to Carol; Bob approves
    "mmc": ("rec", 0),  # .mailmap maps Mallory to Alice; Mallory approves
    "mmq": ("rec", 0),  # q plan: .mailmap maps Mallory to Bob; Alice + Mallory
    "qoct": ("rec", 0),  # Bob edits+reverts on an octopus branch; Alice + Bob
    "qoctc": ("rec", 1),  # control: Carol edits+reverts there; Alice + Bob
    "qocta": ("rec", None),  # Alice's approval in an octopus merged by Mallory; Bob on main
    "qreb": ("rec", 1),  # Alice on main; Bob's approval rebased (committer Mallory), ff
    "qrebs": ("rec", 0),  # Alice's approval cherry-picked again after her partial vote
    "drej": ("rec", 0),  # Bob approves (dated 2099); Alice rejects (dated 2000); Carol
    "dord": ("rec", 0),  # Alice dated 2099; Bob dated 1990: E_APPROVAL_REPLAYED (documented)
    "dorda": ("rec", 0),  # Alice's one approval, author date 1990: replayed (documented)
    "dordc": ("rec", 1),  # Alice's one approval, committer date 1990, author date now
    "dfut": ("rec", 1),  # Alice's one approval, author and committer dates 2099
    "rejext": ("rec", 1),  # Ext (group member, no approver) rejects; Alice + Bob: runs
    "rejdave": ("rec", 0),  # P2 Dave (approver, no group) rejects a g plan; Bob, Sec
    "botap": ("rec", 0),  # the agent commits approved as plangate <plangate@localhost>
    "cpa": ("rec", 1),  # Alice; later the controller's start commit cherry-picked (agent)
    "cpb": ("rec", 1),  # same, the cherry-pick under the controller's full identity
    "qmv": ("rec", None),  # Alice v1 (P1); a branch edits to v2; Bob approves v1, Carol merges
    "qmv2": ("rec", 0),  # Alice v1; Carol merges the v2 branch; Bob approves v2 alone
    "qhr": ("mid", 0),  # q path; Alice votes (mid medium); P2 raises mid to high; Bob votes
    "gcase": ("rec", 0),  # Alice, then "Alice" <ALICE@example.com>: one person, two groups
    "gco": ("rec", 0),  # the Owner's plan co-authored by Sec; Bob + Sec
    "gab": ("rec", 1),  # gated; Alice starts; Ext (no approver) aborts; Bob answers the gate
    "ggate": ("rec", 1),  # gated g plan; Bob + Sec start it (the gate is judged apart)
    "qrbs": ("rec", 0),  # Bob's edit+revert on a branch Mallory rebases, ff; Alice + Bob
    "qoct2": ("rec", 0),  # Alice's and Bob's approvals on two octopus branches, Carol merges
    "gadd": ("rec", 0),  # Newb votes in P1 (no approver); P2 adds Newb to security; Bob
    "gadd2": ("rec", 1),  # control: Bob in P1; Newb (security in P2) votes in P2
    "qcpp": ("rec", 0),  # Alice v1; v2; the controller's partial record (Alice's vote)
    # copied onto v2, author plangate, committer the agent; Bob approves v2
    "qcppb": ("rec", 0),  # the same under the controller's full identity
    "gchk": ("rec", 1),  # Bob on main; Sec's PR sets approved, Sec merges --no-ff
    "hrc": ("mid", 0),  # frozen medium, P2 high; Alice's PR approval merged by Alice
    "xpol": ("rec", 0),  # approved by an address the agent's evil merge added to policy.json
    "xpolo": ("rec", 0),  # by one an octopus-merged branch added
    "xpold": ("rec", 0),  # by one a commit dated 1990 added
    "pgm": ("rec", 0),  # the agent adds Mallory to security in policy.json; Bob + Mallory
}
PATHS = {v: (f"q{v}" if v in ("mmq", "drej", "dord", "rejext") else v) for v in VIDS if v != "gmd"}
PATHS["gmd"] = "gmd"
PATHS["gab"] = "xgab"
PATHS["hxg"] = "qhxg"
PATHS["pgm"] = "gpgm"
PATHS["rejdave"] = "grejdave"
CHECKED = ["qreb", "qocta", "qoct2", "gchk", "hrc"]
GATED = {"xgab", "ggate"}
#: extra tags counted: id -> (tag, calls wanted at the end; None: at most one)
TAGS: dict[str, tuple[str, int | None]] = {
    "qmv~v2": ("qmv-x", 0),
    "qcpp~v2": ("qcpp-x", 0),
    "qcppb~v2": ("qcppb-x", 0),  # the v2 the merge brought never runs
    "qmv2~v2": ("qmv2-x", 0),
    "gab~2": ("xgab-2", 1),  # the abort by Ext ignored: step 2 runs on Bob's gate approval
    "ggate~2": ("ggate-2", 1),  # Bob alone answers the gate of a g plan (one, documented)
}


def _slug(v: str) -> str:
    return PATHS[v]


def _ff(out: str) -> dict[str, Any]:
    """What ``check`` predicts per plan for the fast-forward the lab then makes: the
    ``fast_forward`` outcome where it decides otherwise, else the merge commit's."""
    try:
        plans = json.loads(out)["plans"]
    except (ValueError, KeyError, TypeError):
        return {"raw": out[-600:]}
    return {p["plan"]: (p.get("fast_forward") or p).get("outcome") for p in plans}


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

    def pick(v: str, bot: bool) -> None:
        """The controller's start commit of ``v`` cherry-picked back by the agent (``bot``:
        under the controller's full identity)."""
        s = _slug(v)
        shas = lab.git(
            "log", "--reverse", "--format=%H", "--author=plangate@localhost", "-G", "executing",
            "--", f"plans/{s}/PLAN.yml",
        ).split()  # fmt: skip
        got[f"{v}_start"] = shas[0] if shas else ""
        if shas:
            if bot:
                lab.extra_env = {  # type: ignore[attr-defined]
                    "GIT_COMMITTER_NAME": BOT[0],
                    "GIT_COMMITTER_EMAIL": BOT[1],
                }
            r = lab.git("cherry-pick", "-X", "theirs", "--allow-empty", shas[0], check=False)
            lab.extra_env = {}  # type: ignore[attr-defined]
            got[f"{v}_pick"] = (r, lab.git("log", "-1", "--format=%H %ae %ce %s"))
            lab.git("cherry-pick", "--abort", check=False)

    _config(lab, p2=False)
    for v, (tool, _w) in VIDS.items():
        if v not in ("mmb", "gco"):
            lab.write(_slug(v), _plan(_slug(v), tool))
    lab.commit("owner: plans", OWNER)
    lab.write(_slug("mmb"), _plan(_slug("mmb")))
    lab.commit("bob: plan", BOB)
    lab.write(_slug("gco"), _plan(_slug("gco")))
    lab.git("add", "-A")
    lab.git(
        "commit", "-q", "-m", "owner: plan gco\n\nCo-authored-by: Sec <sec@example.com>\n",
        who=OWNER,
    )  # fmt: skip
    step("a")

    # -- B: first votes under P1 ---------------------------------------------------------
    for v in ("qc", "qtwice", "qcase", "qname", "qpunct", "galone", "hx", "hx2", "qrebs"):
        ap(v, ALICE)
    ap("galbob", ALICE)
    ap("gbobal", BOB)
    ap("gops", BOB)
    ap("gsec", BOB)
    ap("gext", BOB)
    ap("hx3", BOB)
    ap("hxg", ALICE)
    ap("hl", ALICE)
    ap("gmd", DAVE)
    ap("qreb", ALICE)
    for v in ("qmv", "qmv2", "qhr", "gcase", "gab"):
        ap(v, ALICE)
    ap("ggate", BOB)
    ap("gco", BOB)
    ap("gadd", NEWB)
    ap("gadd2", BOB)
    ap("rejext", ALICE)
    ap("dord", ALICE, "alice: approve (dated 2099)")
    lab.git("commit", "-q", "--amend", "--no-edit", "--date=@4070908800 +0000", who=ALICE)
    ap("drej", BOB)
    lab.git("commit", "-q", "--amend", "--no-edit", "--date=@4070908800 +0000", who=BOB)
    step("b")
    got["qrebs_vote"] = lab.git(
        "log", "-1", "--format=%H", "--author=alice@example.com", "--", f"plans/{_slug('qrebs')}"
    ).strip()

    # -- P2 -------------------------------------------------------------------------------
    _config(lab, p2=True)
    step("p2")

    # -- C ------------------------------------------------------------------------------
    ap("c1", ALICE)
    ap("qc", BOB)
    ap("qtwice", ALICE, "alice: approve again")
    ap("qcase", ("alice", "ALICE@EXAMPLE.COM"))
    ap("qname", ("A. Liddell", "alice@example.com"))
    ap("qpunct", ("Alice", "alice@example.com."))
    ap("gops", CAROL)
    ap("gsec", SEC)
    ap("galone", ALICE, "alice: approve again")
    ap("galbob", BOB)
    ap("gbobal", ALICE)
    ap("gext", EXT)
    ap("gdave2", DAVE)
    ap("gmd", SEC)
    ap("hx", BOB)
    ap("hx2", BOB)
    ap("hx3", CAROL)
    ap("hxg", BOB)
    ap("hr", ALICE)
    ap("hl", BOB)
    lab.set_status(_slug("rejext"), "rejected")
    lab.commit("ext: reject", EXT)
    lab.set_status(_slug("rejdave"), "rejected")
    lab.commit("dave: reject", DAVE)
    # .mailmap: Bob -> Carol, Mallory -> Alice, Mallory2 -> Bob
    lab.put(
        ".mailmap",
        "Carol <carol@ops.example.com> <bob@ops.example.com>\n"
        "Alice <alice@example.com> <mallory@example.com>\n"
        "Bob <bob@ops.example.com> <mallory2@example.com>\n",
    )
    lab.commit("agent: mailmap", AGENT)
    ap("mmb", BOB)
    ap("gadd", BOB)
    ap("gadd2", NEWB)
    ap("qhr", BOB)
    ap("gcase", ("Alice", "ALICE@example.com"))
    ap("gco", SEC)
    ap("ggate", SEC)
    lab.set_status(_slug("gab"), "aborted")
    lab.commit("ext: abort gab", EXT)
    # qmv: a branch edits v1 to v2; Bob approves v1 on main; Carol merges the branch
    # qmv2: Carol merges the branch first, then Bob approves (v2)
    for v in ("qmv", "qmv2"):
        s = _slug(v)
        lab.branch(f"mv-{v}")
        lab.write(s, lab.read(s).replace(f'tag: "{s}"', f'tag: "{s}-x"'))
        lab.commit(f"agent: {s} v2", AGENT)
        lab.git("checkout", "-q", "main")
        if v == "qmv":
            ap(v, BOB)
        lab.git("merge", "-q", "--no-ff", "-m", f"merge mv-{v}", f"mv-{v}", who=CAROL)
        if v == "qmv2":
            ap(v, BOB)
    lab.extra_env = {"GIT_AUTHOR_DATE": "@631152000 +0000"}  # type: ignore[attr-defined]
    ap("dorda", ALICE)
    lab.extra_env = {"GIT_COMMITTER_DATE": "@631152000 +0000"}  # type: ignore[attr-defined]
    ap("dordc", ALICE)
    lab.extra_env = {  # type: ignore[attr-defined]
        "GIT_COMMITTER_DATE": "@4070908800 +0000",
        "GIT_AUTHOR_DATE": "@4070908800 +0000",
    }
    ap("dfut", ALICE)
    lab.extra_env = {}  # type: ignore[attr-defined]
    ap("mmc", MALLORY)
    ap("mmq", ALICE)
    # botap: approved under the controller's full identity
    lab.set_status(_slug("botap"), "approved")
    lab.commit("plangate: approve", BOT)
    # drej: Alice's rejection dated before Bob's approval
    lab.set_status(_slug("drej"), "rejected")
    lab.commit("alice: reject", ALICE)
    lab.git("commit", "-q", "--amend", "--no-edit", "--date=@946684800 +0000", who=ALICE)
    ap("dord", BOB)
    lab.git("commit", "-q", "--amend", "--no-edit", "--date=@631152000 +0000", who=BOB)
    lab.extra_env = {"GIT_COMMITTER_DATE": "@631152000 +0000"}  # type: ignore[attr-defined]
    lab.git("commit", "-q", "--amend", "--no-edit", who=BOB)
    lab.extra_env = {}  # type: ignore[attr-defined]
    # pgm: the agent's own policy.json change adds Mallory to security
    pol = lab.repo / ".plangate" / "policy.json"
    if pol.exists():
        data = json.loads(pol.read_text())
        groups = data.get("approval", {}).get("groups")
        if isinstance(groups, dict) and isinstance(groups.get("security"), list):
            groups["security"].append(MALLORY[1])
        data["approval"]["approvers"].append(MALLORY[1])
        pol.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
        got["pgm_policy"] = lab.commit("agent: mallory in security", AGENT)
    ap("pgm", BOB)
    # octopus: Bob's (Carol's) edit and revert on one branch, two note branches
    for v, who in (("qoct", BOB), ("qoctc", CAROL)):
        s = _slug(v)
        lab.branch(f"o1-{v}")
        lab.write(s, lab.read(s).replace(f'tag: "{s}"', f'tag: "{s}-x"'))
        sha = lab.commit(f"{who[0]}: tweak {s}", who)
        lab.git("revert", "--no-edit", sha, who=who)
        lab.git("checkout", "-q", "main")
        lab.branch(f"o2-{v}")
        lab.note(f"o2-{v}", AGENT)
        lab.git("checkout", "-q", "main")
        lab.branch(f"o3-{v}")
        lab.note(f"o3-{v}", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git(
            "merge", "-q", "--no-ff", "-m", f"octopus {v}",
            f"o1-{v}", f"o2-{v}", f"o3-{v}", who=AGENT,
        )  # fmt: skip
    # qocta: Alice's approval inside an octopus on a PR branch Mallory merges
    s = _slug("qocta")
    lab.branch("pr-oct")
    lab.branch("a1", "pr-oct")
    lab.approve(s, ALICE, "alice: approve qocta")
    lab.branch("a2", "pr-oct")
    lab.note("a2", BOB)
    lab.branch("a3", "pr-oct")
    lab.note("a3", CAROL)
    lab.git("checkout", "-q", "pr-oct")
    lab.git("merge", "-q", "--no-ff", "-m", "octopus approvals", "a1", "a2", "a3", who=MALLORY)
    lab.git("checkout", "-q", "main")
    got["check:qocta"] = lab.check_plans("pr-oct", MALLORY[1])
    got["checkff:qocta"] = _ff(lab.check("pr-oct", MALLORY[1]).stdout)
    lab.git("merge", "-q", "--ff-only", "pr-oct")
    # qreb: Bob's approval on a branch, main moves on, Mallory rebases it, fast-forward
    lab.branch("rb")
    ap("qreb", BOB)
    lab.git("checkout", "-q", "main")
    lab.note("rb-main", AGENT)
    lab.extra_env = {  # type: ignore[attr-defined]
        "GIT_COMMITTER_NAME": MALLORY[0],
        "GIT_COMMITTER_EMAIL": MALLORY[1],
    }
    lab.git("rebase", "-q", "main", "rb")
    lab.extra_env = {}  # type: ignore[attr-defined]
    got["qreb_who"] = lab.git("log", "-1", "--format=%ae %ce", "rb")
    lab.git("checkout", "-q", "main")
    got["check:qreb"] = lab.check_plans("rb", MALLORY[1])
    got["checkff:qreb"] = _ff(lab.check("rb", MALLORY[1]).stdout)
    lab.git("merge", "-q", "--ff-only", "rb")
    # qrebs: Alice's partial vote (round B) cherry-picked again by the agent
    if got["qrebs_vote"]:
        r = lab.git("cherry-pick", "-X", "theirs", got["qrebs_vote"], who=AGENT, check=False)
        got["qrebs_pick"] = r
        lab.git("cherry-pick", "--abort", check=False)
    step("c")

    # -- D ------------------------------------------------------------------------------
    ap("mmq", ("Mallory", "mallory2@example.com"))
    ap("qoct", ALICE)
    ap("hx", SEC)
    ap("hx3", ALICE)
    ap("qoctc", ALICE)
    ap("qocta", BOB)
    ap("gab", BOB)
    ap("ggate", BOB)
    ap("drej", CAROL)
    ap("rejext", BOB)
    ap("rejdave", BOB)
    ap("pgm", MALLORY)
    step("d")
    ap("drej", SEC)
    ap("rejdave", SEC)
    ap("qoct", BOB)
    ap("qoctc", BOB)
    step("e")
    # gchk, hrc: a pull request with a merge commit, predicted by check first
    ap("gchk", BOB)
    # policy changes the controller did not make, in other shapes
    pol = lab.repo / ".plangate" / "policy.json"

    def polchange(tag: str) -> None:
        data = json.loads(pol.read_text())
        data["approval"]["approvers"].append(f"{tag}@example.com")
        pol.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))

    if pol.exists():
        lab.branch("pol-side")  # an evil merge: the change is the merge's own
        lab.note("pol-side", AGENT)
        lab.git("checkout", "-q", "main")
        got["pol-merge"] = [lab.rmerge(AGENT, ["pol-side"], lambda: polchange("evilmerge"))]
        polchange("olddate")  # dated 1990, author and committer
        lab.extra_env = {  # type: ignore[attr-defined]
            "GIT_AUTHOR_DATE": "@631152000 +0000",
            "GIT_COMMITTER_DATE": "@631152000 +0000",
        }
        got["pol-old"] = [lab.commit("agent: policy (1990)", AGENT)]
        lab.extra_env = {}  # type: ignore[attr-defined]
        lab.branch("pol-o1")  # an octopus that brings a branch's change
        polchange("octo")
        side = lab.commit("agent: policy on a branch", AGENT)
        lab.branch("pol-o2", "main")
        lab.note("pol-o2", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", "octopus", "pol-o1", "pol-o2", who=AGENT)
        got["pol-oct"] = [side, lab.head()]
        text = json.loads(pol.read_text())  # same content, other bytes
        pol.write_text(json.dumps(text, indent=2))
        got["pol-ws"] = [lab.commit("agent: pretty policy", AGENT)]
        ap("xpol", ("Evil", "evilmerge@example.com"))
        ap("xpolo", ("Octo", "octo@example.com"))
        ap("xpold", ("Old", "olddate@example.com"))
    step("e2")
    for v, who in (("gchk", SEC), ("hrc", ALICE)):
        lab.branch(f"pr-{v}")
        lab.approve(_slug(v), who, f"{who[0]}: approve {v}")
        lab.git("checkout", "-q", "main")
        plans = lab.check_plans(f"pr-{v}", who[1])
        got[f"check:{v}"] = plans
        got[f"checkff:{v}"] = {k: o for k, (o, _c) in plans.items()}
        lab.git("merge", "-q", "--no-ff", "-m", f"merge pr-{v}", f"pr-{v}", who=who)
    # qoct2: Alice's and Bob's votes on two branches of a PR octopus that Carol merges
    s = _slug("qoct2")
    lab.branch("pr-oct2")
    lab.branch("b1", "pr-oct2")
    lab.approve(s, ALICE, "alice: approve qoct2")
    lab.branch("b2", "pr-oct2")
    lab.approve(s, BOB, "bob: approve qoct2")
    lab.branch("b3", "pr-oct2")
    lab.note("b3", AGENT)
    lab.git("checkout", "-q", "pr-oct2")
    lab.git("merge", "-q", "--no-ff", "-m", "octopus votes", "b1", "b2", "b3", who=CAROL)
    lab.git("checkout", "-q", "main")
    got["checkff:qoct2"] = _ff(lab.check("pr-oct2", CAROL[1]).stdout)
    got["check:qoct2"] = lab.check_plans("pr-oct2", CAROL[1])
    lab.git("merge", "-q", "--ff-only", "pr-oct2")
    # qrbs: Bob edits and reverts on a branch; main moves; Mallory rebases it; ff
    s = _slug("qrbs")
    lab.branch("rbs")
    lab.write(s, lab.read(s).replace(f'tag: "{s}"', f'tag: "{s}-x"'))
    sha = lab.commit(f"bob: tweak {s}", BOB)
    lab.git("revert", "--no-edit", sha, who=BOB)
    lab.git("checkout", "-q", "main")
    lab.note("rbs-main", AGENT)
    lab.extra_env = {  # type: ignore[attr-defined]
        "GIT_COMMITTER_NAME": MALLORY[0],
        "GIT_COMMITTER_EMAIL": MALLORY[1],
    }
    lab.git("rebase", "-q", "main", "rbs")
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "rbs")
    ap("cpa", ALICE)
    step("f")
    ap("qrbs", ALICE)
    pick("cpa", False)
    step("g")
    ap("qrbs", BOB)
    ap("cpb", ALICE)
    step("h")
    pick("cpb", True)
    step("i")
    # qcpp, qcppb: Alice's vote alone in its pass (the partial record names one plan), v2
    for v in ("qcpp", "qcppb"):
        ap(v, ALICE)
        step(f"{v}-vote")
    for v in ("qcpp", "qcppb"):
        s = _slug(v)
        lab.write(s, lab.read(s).replace(f'tag: "{s}"', f'tag: "{s}-x"'))
        lab.commit(f"agent: {s} v2", AGENT)
    step("cpp-v2")
    for v, bot in (("qcpp", False), ("qcppb", True)):
        s = _slug(v)
        shas = lab.git(
            "log", "--reverse", "--format=%H", "--author=plangate@localhost", "-G", "partial",
            "--", f"plans/{s}/PLAN.yml",
        ).split()  # fmt: skip
        got[f"{v}_partial"] = shas[0] if shas else ""
        if shas:
            if bot:
                lab.extra_env = {  # type: ignore[attr-defined]
                    "GIT_COMMITTER_NAME": BOT[0],
                    "GIT_COMMITTER_EMAIL": BOT[1],
                }
            else:
                lab.extra_env = {}  # type: ignore[attr-defined]
            # the record's file (Alice's vote in its partial block) carried onto v2, with
            # the record's own message and author (git cherry-pick applies nothing here:
            # v2's freeze already rewrote those lines)
            text = lab.git("show", f"{shas[0]}:plans/{s}/PLAN.yml")
            lab.write(s, text.replace(f'tag: "{s}"', f'tag: "{s}-x"'))
            lab.git("add", "-A")
            msg = lab.git("log", "-1", "--format=%B", shas[0])
            lab.extra_env.update({"GIT_AUTHOR_NAME": BOT[0], "GIT_AUTHOR_EMAIL": BOT[1]})
            lab.git("commit", "-q", "-m", msg)
            lab.extra_env = {}  # type: ignore[attr-defined]
            got[f"{v}_pick"] = lab.git("log", "-1", "--format=%H %ae %ce %s")
        lab.set_status(s, "approved")
        lab.commit(f"bob: approve {s}", BOB)
        step(f"{v}-pick")
    step("j")

    ran = {v: len(lab.calls(_slug(v))) for v in VIDS}
    ran.update({k: len(lab.calls(tag)) for k, (tag, _w) in TAGS.items()})
    lab.ran = ran  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["clone"] = clone_audit_got(lab, root)
    got["withcfg"] = lab.audit(config=lab.config)
    rows = lab.log_rows("%H%x00%an%x00%ae%x00%s%x00%B%x01")
    got["records"] = [
        r[0] for r in rows if r[2] == BOT[1] and r[3].startswith("plangate: record policy")
    ]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r113-approve-atk113f", _build)


POLS = ["pol-merge", "pol-old", "pol-oct", "pol-ws"]
EXTRA = ["passes", "policy-flagged", "records-unflagged", *POLS]
IDS = [*VIDS, *TAGS, *[f"{v}:audit" for v in VIDS], *[f"{v}:cfg" for v in VIDS]]
IDS += [*[f"{v}:check" for v in CHECKED], *EXTRA]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in IDS]
)
def test_round113_atk113f(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    if vid in POLS:
        flagged = {
            f.get("commit") for f in clone.get("findings", []) if f.get("kind") == "policy-changed"
        }
        assert flagged & set(got.get(vid) or ["-"]), (got.get(vid), clone.get("findings"))
        return
    if vid == "records-unflagged":
        # the controller's own P1 and P2 records: listed as policies, never flagged
        assert len(got["records"]) >= 2, got["records"]
        for rep in (clone, got["withcfg"][1]):
            flagged = {
                f.get("commit")
                for f in rep.get("findings", [])
                if f.get("kind") in ("policy-changed", "controller-unexplained")
            }
            assert not flagged & set(got["records"]), (got["records"], rep.get("findings"))
            # P1 and P2 listed (a record that restores P2 after the agent's change is no
            # new policy), nothing else
            listed = {p.get("commit") for p in rep.get("policies", [])}
            assert len(listed) >= 2, rep.get("policies")
            assert listed <= set(got["records"]), (got["records"], rep.get("policies"))
        return
    if vid == "policy-flagged":
        flagged = {
            f.get("commit") for f in clone.get("findings", []) if f.get("kind") == "policy-changed"
        }
        assert got.get("pgm_policy") in flagged, (got.get("pgm_policy"), clone.get("findings"))
        return
    if ":" in vid:
        v, kind = vid.split(":")
        ran = lab.ran[v]
        if kind in ("audit", "cfg"):
            rep = clone if kind == "audit" else got["withcfg"][1]
            valid = [
                e
                for e in rep.get("executions", [])
                if e.get("plan") == f"plans/{_slug(v)}" and e.get("approval_valid")
            ]
            assert bool(valid) == bool(ran), (ran, valid, rep.get("findings"))
            return
        outcome = got[f"checkff:{v}"].get(f"plans/{_slug(v)}")
        assert (outcome == "start") == bool(ran), (ran, outcome, got[f"check:{v}"])
        return
    if "~" in vid:
        want = TAGS[vid][1]
        row = lab.got_rows.get(f"plans/{_slug(vid.split('~')[0])}", {})
        if want is None:
            assert lab.ran[vid] <= 1, (lab.ran[vid], brief(row))
        else:
            assert lab.ran[vid] == want, (lab.ran[vid], brief(row))
        return
    _tool, want = VIDS[vid]
    row = lab.got_rows.get(f"plans/{_slug(vid)}", {})
    if want is None:
        assert lab.ran[vid] <= 1, (lab.ran[vid], brief(row))
    else:
        assert lab.ran[vid] == want, (lab.ran[vid], brief(row))
