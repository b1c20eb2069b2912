"""Round 129, approval side (atk129a): "a plan runs only after enough allowed people
(approvers, groups, quorum, risk rules), none of whom wrote any part of it, approved exactly
the frozen version", attacked where round 128 did not look: the policy's ``risk`` and
``tools`` rules against tools hidden in a fallback step, a precondition, a verify, a fallback
step's check, or a pinned child (and its own checks and fallbacks); one person in two groups,
a group member who is no approver, an alias listed in a group; the writers of a pinned child
(its author, its source's author, a ``metadata:`` block, a comment, a note or a file below
its folder, also in the approval commit itself) answering the parent's gate, ``ask`` or
resume, or voting in its quorum; pins spelled otherwise (``plans/c/``, ``./plans/c``,
``plans/./c``, ``plans//c``, ``plans/c/.``, ``plans/c/PLAN.yml``, ``plans/zz/../c``);
a version's authors through a revert of a revert, a delete and re-add, another folder (live,
deleted or a draft), a branch merged ``-s ours``, a cherry-pick (with ``-x``) and a
``PLAN.md`` or ``PLAN.json`` source the controller converts; quorum votes forged into the
controller's ``approval:`` block, voided by v1 -> v2 -> v1, withdrawn; ``on_failure: ask``
answered by whom (the agent, Mallory, a writer, a co-author, a note's writer, the pinned
child's writer or editor, a merge by Mallory or Carol) and aborted by whom.

Labs: three identical labs and ``m``, the same with ``max_age`` (below) (``run --once``
after every round; variants split between them, built side by side): approvers Alice, Bob,
Carol, Erin, Dave (``@example.com``) and ``a.smith@corp.example`` (Alice's alias:
``identity_aliases.people``); groups ``ops`` (Alice, Bob, Dave) and ``sec`` (Carol, Dave,
Frank, a.smith; Frank is no approver); rules, first match decides: ``{risk: high}`` needs
one of ops and one of sec; ``{tools: [qrec, qchk]}`` needs two; ``{paths: [plans/pp-*]}``
needs two. Tools: ``rec`` (records each call), ``qrec``, ``hrec`` (``risk: high``), ``frec``
(records, exits 3), ``chk`` and ``qchk`` (check tools: idempotent, low risk, recording). The
agent writes plans, Mallory is nobody. Each variant's plan calls ``rec`` with its id in
action 1 (the count), except a gate (``g``: the gated action 3), an ``ask`` and a resume
(``f``: the failing action's calls: 1 when not answered, 2 when answered or resumed).

Ids (3 per variant + ``passes``): ``<vid>`` (the counted tool's calls), ``<vid>:status``
(final ``status --json`` row), ``<vid>:audit`` (the starts of that kind, ``approve``,
``gate`` (a gate or an ask's answer) or ``resume``, that ``plangate audit --json`` in a fresh
clone calls valid); ``passes`` (every pass exited 0, no traceback).

- ``rk*``: a high-risk tool as action 2 (``rkact``), in a fallback step (``rkfb``), in a
  pinned child's action or fallback (``rknest``, ``rknestfb``): Alice alone waits; Alice and
  Carol (``rkactok``, ``rkfbok``) or Carol and Bob (``rknestok``) run (and, since fix130a,
  Alice and Bob: ``rkopsops``, once "two of ops": Alice is in sec by her alias); Carol twice
  (``rksecsec``), Erin (in no group) and Carol (``rkerin``), Carol a co-author of the plan or
  of its child (``rkcoC``, ``rknestcoC``) wait; Erin's rejection binds (``rkrejE``),
  Mallory's is ignored (``rkrejM``).
- ``tq*``: ``qrec``/``qchk`` as action 2, in a fallback step, a plan precondition, an
  action's precondition, a verify, a fallback step's verify or precondition, or the same in a
  pinned child: Alice alone waits (``tqchkctl``: ``chk``, not in the rule, runs on one);
  a vote forged into the ``approval:`` block by the agent or by Bob himself (``tqforge``,
  ``tqforgeB``), v1 -> v2 -> v1 before Bob (``tqaba``), the agent's approval between
  (``tqagent``) count nothing; Alice's rejection after her vote binds (``tqrej``).
- ``gr*``: Dave (ops and sec) counts once (``grdave``, ``grdave2``) and fills either side
  (``grdaveA``, ``grdaveC``); Frank (sec, no approver) counts nowhere (``grfrank``,
  ``grfrankD``); Dave a co-author (``grdaveco``).
- ``al*``: Alice under her alias counts once (``alsec``, ``alsec2``, ``alsecup``, ``alq``), her
  alias's note voids her vote (``alqnote``; Carol's does not: ``alqnoteB``), her alias wrote
  the child or is a co-author (``algate``, ``alask``); her alias approves a plain plan
  (``alplain``) and, with Bob, a high-risk one (``alsecC``, ``alsecC2``), as Alice does under
  her own address (``alsecA``: her alias is in sec).
- ``pl*`` (``plus_tags: ["*@example.com"]``): ``carol+x@`` fills sec (``plsec``, ``plsec2``);
  ``bob+x@`` is Bob for a quorum (``plq``), a child's writer at a gate (``plgate``), a
  co-author at an ask (``plask``); ``carol+x@`` wrote a high-risk plan Carol may not approve
  (``plrk``).
- ``au*``: Alice wrote the version: revert of a revert (``aurvrv``), delete and re-add
  (``audelre``), at another folder deleted, live or a draft (``aupath``, ``aupathlive``,
  ``aupathdraft``), on a branch merged ``-s ours`` (``auours``), credited or authoring a
  cherry-pick (``aucherry``, ``aucherryA``), as a ``PLAN.md``/``PLAN.json`` source (``aumd``,
  ``aujson``): she may not approve; Bob may (``aurvrvB``, ``aupathB``, ``auoursB``, ``aumdB``);
  the agent's source runs on Alice's approval (``aumdAg``).
- ``gnest*``, ``rsnest*``, ``qnest*``, ``nestsrc*``, ``apch*``, ``ask*``: the child's
  writers (author, ``metadata:``, comment, note, file below, source author, the approval
  commit's own note or ``metadata:``) may not answer the parent's gate, resume, ask, nor vote;
  a file in a folder beside the child is no writing (``gnestnear``, ``apchnear``); at an
  ``ask``: Bob and Alice again answer (``askok``, ``askA2``), a merge by Carol too
  (``askmergeC``), the agent, Mallory, a writer, a co-author, a note's writer, a merge by
  Mallory do not; Mallory's abort is ignored (``askabM``), the agent's and Erin's hold.
- ``pw*``, ``pr*``, ``pq*``: a pin spelled otherwise: the child's writer Bob may not
  approve; a high-risk or ``qrec`` child still asks for its rule; ``..`` and a file path are
  refused (invalid).
- ``ppA``, ``ppok``: the ``paths`` rule.
- ``mx*`` (a fourth lab, ``max_age: 1h``, its round 0 (commits and pass) dated two hours
  ago): a version frozen then (``mxA``) is expired, and stays so deleted and brought back as
  a ``PLAN.md`` or ``PLAN.json`` source the controller converts (``mxmd``, ``mxjson``), as a
  source in another folder beside it (``mxmdlive``), respelled after a deletion or in place
  (``mxresp``, ``mxrespsame``), moved (``mxmove``); controls: a version first written now
  (``mxfresh``), a draft written then and submitted now (``mxdraft``: a draft is never
  frozen, so its age starts now) run.

Seen (round 129: 418 ids, 409 passed, 9 xfailed (strict); 70-95 s wall with ``-n 2`` on a
2-core machine at load average 15-19 from the other helpers' sessions),
1 class:

- **alias-address-not-matched-against-groups** (9 ids: ``alsecC``, ``alsecC2``, ``alsecA``,
  each with ``:status`` and ``:audit``). FAIL CLOSED. ``a.smith@corp.example``, listed in
  ``approval.approvers`` and in group ``sec`` and declared Alice's alias
  (``identity_aliases.people``), approves a high-risk plan (one of ops, one of sec) and Bob
  (ops) approves: the controller counts no sec vote ("more approvals needed: 1 from sec"),
  in either order, and likewise when Alice approves under ``alice@example.com``; she is
  read as ``alice@example.com``, a member of ops only: the group is matched against one
  address of the person, never the alias it lists. A ``plus_tags`` alias is no such case
  (``carol+x@`` fills sec: ``plsec``), since its canonical address is the listed one.
  docs/approvals.md ("identity_aliases"): "An alias makes
  two addresses one person for every count ... it renames nothing. The ``approval:`` block
  keeps the address each approving commit carried". Repro: the config above; the agent adds
  ``plans/x`` calling the high-risk tool; ``run --once``; ``a.smith@corp.example`` commits
  ``status: approved``; ``run --once``; Bob commits ``status: approved``; ``run --once``:
  ``pending_approval``, ``partial``, "1 from sec".

Fixed (fix130a): **alias-address-not-matched-against-groups**. Cause: a group (and
``approval.approvers``) was matched against the person's canonical address only
(``policy.tally`` hands ``eligible`` the person key, ``alice@example.com``), never the alias
the group lists. Change: ``approvals.approver_allowed``, the one membership test the
controller, ``status``, ``check`` and the audit (the recorded policy carries ``groups`` and
``identity_aliases``) all use, now holds a person when a pattern matches any address they are
known by (``approvals.spellings``: the address, its ``+tag``-free form, every address of
their ``identity_aliases.people`` entry) or a listed plain address is theirs; a glob is
matched as written. ``alsecA`` is read as the docs say ("one person for every count"): Alice
under her own address is in sec by her alias, so ``rkopsops`` (Alice and Bob) now runs.

What held: every other variant above: risk and ``tools`` rules see a tool in every place a
plan or its pinned child can call it; groups count a person once and never a non-approver;
the writers of a pinned child, by any of the ways above and under any pin spelling, are
writers of the parent for its approval, gate, ``ask``, resume and quorum; a version keeps its
authors by hash through reverts, deletions, other folders, ``-s ours`` merges,
cherry-picks and converted sources; forged votes count nothing; an edit and its undo void a
quorum; only the plan's authors and allowed approvers abort at an ``ask``; ``max_age``
follows a version by hash through sources, respellings and moves. The controller,
``status`` and the fresh-clone audit agreed in every variant.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    MALLORY,
    RESPELLED_PLAN,
    Lab,
    brief,
    build_all,
    clone_audit_got,
    load_yaml,
    plan_text,
    xfail,
)

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
ERIN = ("Erin", "erin@example.com")
DAVE = ("Dave", "dave@example.com")  # in ops and in sec
FRANK = ("Frank", "frank@example.com")  # in sec, not an approver
SMITH = ("A. Smith", "a.smith@corp.example")  # Alice's other address (identity_aliases)
SMITH_UP = ("A. Smith", "A.Smith@Corp.Example")
CO_S = "Co-authored-by: A. Smith <a.smith@corp.example>"
CAROL_PLUS = ("Carol", "carol+x@example.com")
BOB_PLUS = ("Bob", "bob+x@example.com")
CO_BP = "Co-authored-by: Bob <bob+draft@example.com>"
CO_B = "Co-authored-by: Bob <bob@example.com>"
CO_A = "Co-authored-by: Alice <alice@example.com>"
CO_C = "Co-authored-by: Carol <carol@example.com>"

RUN = (1, {"completed"})
PEND = (0, {"pending_approval"})
REJ = (0, {"rejected"})
AANS = (2, {"awaiting_approval"})  # asked, answered: tried again (and failed again)
AWAIT = (1, {"awaiting_approval"})  # asked, not answered
AABORT = (1, {"aborted"})
NONE = (0, {"pending_approval", "invalid"})  # not run: waiting, or refused as invalid
GRUN = (1, {"completed"})
GWAIT = (0, {"awaiting_approval"})
RRUN = (2, {"failed"})  # the failing step ran at the first run and again at the resume
RWAIT = (1, {"failed"})  # it ran once: no resume

Act = Callable[[Lab, str], Any]


def _config(lab: Lab, extra: str = "") -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    failing = lab.root / "frec.py"
    failing.write_text(lab.recorder.read_text() + "sys.exit(3)\n")
    frec = json.dumps([sys.executable, str(failing), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "bob@example.com", "carol@example.com",'
        ' "erin@example.com", "dave@example.com", "a.smith@corp.example"]\n'
        "  identity_aliases:\n"
        "    people: [[alice@example.com, a.smith@corp.example]]\n"
        '    plus_tags: ["*@example.com"]\n'
        "  groups:\n"
        '    ops: ["alice@example.com", "bob@example.com", "dave@example.com"]\n'
        '    sec: ["carol@example.com", "dave@example.com", "frank@example.com",'
        ' "a.smith@corp.example"]\n'
        f"{extra}"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
        "    - match: {tools: [qrec, qchk]}\n"
        "      require: [{count: 2}]\n"
        '    - match: {paths: ["plans/pp-*"]}\n'
        "      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  qrec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hrec: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  frec: {{kind: exec, argv: {frec}, {env}}}\n"
        f"  chk: {{kind: exec, argv: {rec}, {env}, idempotent: true, risk: low}}\n"
        f"  qchk: {{kind: exec, argv: {rec}, {env}, idempotent: true, risk: low}}\n"
    )


FAIL_ASK = (
    "  - id: 2\n    tool: frec\n    why: asks\n    on_failure: ask\n    params: {{tag: {v}f}}\n"
)
TOOLS = "available_tools:\n  - name: rec\n"
ALLTOOLS = (
    "available_tools:\n  - name: rec\n  - name: qrec\n  - name: hrec\n  - name: frec\n"
    "  - name: chk\n  - name: qchk\n"
)
CHECK = "{{tool: {t}, params: {{tag: {tag}}}, expect: {{path: $.json.ok, equals: true}}}}"


def _text(v: str, shape: str = "plain") -> str:
    """The plan of variant ``v``; action 1 calls ``rec`` with tag ``v`` (what is counted),
    ``shape`` says where else a tool hides."""
    base = plan_text(v).replace(TOOLS, ALLTOOLS)
    chk = functools.partial(CHECK.format, tag=f"{v}p")
    if shape == "plain":
        return base
    if shape == "draft":  # never frozen on its own
        return base.replace("pending_approval", "draft")
    if shape == "bare":  # advkit's plan, its one tool
        return plan_text(v)
    if shape == "hact":  # action 2 calls hrec
        return base + f"  - id: 2\n    tool: hrec\n    why: high\n    params: {{tag: {v}h}}\n"
    if shape == "qacx":  # qact with another param: a second version
        return _text(v, "qact") + "      x: 2\n"
    if shape == "ask":  # action 2 fails and asks a person
        return base + FAIL_ASK.format(v=v)
    if shape == "qact":
        return base + f"  - id: 2\n    tool: qrec\n    why: q\n    params: {{tag: {v}q}}\n"
    if shape in ("fbh", "fbq"):  # action 1's fallback step calls the tool
        tool = {"fbh": "hrec", "fbq": "qrec"}[shape]
        return base + (
            "    on_failure: fallback\n"
            f"    fallback:\n      - {{id: '1.1', tool: {tool}, why: fb, params: {{tag: {v}f}}}}\n"
        )
    if shape.startswith("pre"):  # a plan-level precondition
        return base.replace("actions:\n", f"preconditions:\n  - {chk(t=shape[3:])}\nactions:\n")
    if shape.startswith("apre"):  # action 1's own precondition
        return base + f"    preconditions:\n      - {chk(t=shape[4:])}\n"
    if shape.startswith("ver"):  # action 1's verify
        return base + (
            f"    verify: {{tool: {shape[3:]}, params: {{tag: {v}p}},"
            " expect: [{path: $.json.ok, equals: true}], timeout: 30, interval: 1}\n"
        )
    if shape.startswith("fbver"):  # a fallback step's verify
        return base + (
            "    on_failure: fallback\n    fallback:\n"
            f"      - id: '1.1'\n        tool: rec\n        why: fb\n"
            f"        params: {{tag: {v}f}}\n"
            f"        verify: {{tool: {shape[5:]}, params: {{tag: {v}p}},"
            " expect: [{path: $.json.ok, equals: true}], timeout: 30, interval: 1}\n"
        )
    if shape.startswith("fbpre"):  # a fallback step's precondition
        return base + (
            "    on_failure: fallback\n    fallback:\n"
            f"      - id: '1.1'\n        tool: rec\n        why: fb\n"
            f"        params: {{tag: {v}f}}\n"
            f"        preconditions: [{chk(t=shape[5:])}]\n"
        )
    raise AssertionError(shape)


# -- acts ------------------------------------------------------------------------------------
def write(shape: str = "plain", who: tuple[str, str] = AGENT, msg: str = "") -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.write(v, _text(v, shape))
        lab.commit(msg.format(v=v) or f"plan {v}", who)

    return act


GATE = (
    "  - id: 3\n    tool: rec\n    why: gated\n    requires_approval: true\n"
    "    params: {{tag: {v}g}}\n"
)
ASK = "  - id: 3\n    tool: frec\n    why: asks\n    on_failure: ask\n    params: {{tag: {v}f}}\n"
FAIL = "  - id: 3\n    tool: frec\n    why: fails\n    params: {{tag: {v}f}}\n"


def child(shape: str, who: tuple[str, str] = AGENT, msg: str = "", src: str = "") -> Act:
    """A draft child ``plans/<v>-c`` of ``shape`` (its tags ``<v>c...``) by ``who`` (as the
    source ``src``, a ``PLAN.md``, when given)."""

    def act(lab: Lab, v: str) -> None:
        text = _text(v + "c", shape).replace("pending_approval", "draft")
        lab.write(f"{v}-c", text, filename=src or "PLAN.yml")
        lab.commit(msg.format(v=v) or f"child of {v}", who)

    return act


def parent(pin: str = "plans/{c}", tail: str = "", who: tuple[str, str] = AGENT) -> Act:
    """``who``'s parent ``plans/<v>`` (plain) pinning ``plans/<v>-c`` as action 2, its path
    spelled ``pin``; ``tail``: more actions (``GATE``, ``FAIL``)."""

    def act(lab: Lab, v: str) -> None:
        digest = lab.cli("hash", str(lab.repo / "plans" / f"{v}-c")).stdout.strip().split()[-1]
        path = pin.format(c=f"{v}-c")
        lab.write(
            v,
            _text(v) + f'  - id: 2\n    plan: {{path: "{path}", hash: "{digest}"}}\n'
            "    why: the pinned child\n" + tail.format(v=v),
        )
        lab.commit(f"parent {v}", who)

    return act


def nest(
    shape: str, who: tuple[str, str] = AGENT, msg: str = "", pin: str = "plans/{c}", tail: str = ""
) -> Act:
    """:func:`child` then :func:`parent` (one round)."""

    def act(lab: Lab, v: str) -> None:
        child(shape, who, msg)(lab, v)
        parent(pin, tail)(lab, v)

    return act


def approve_and(who: tuple[str, str], how: str) -> Act:
    """``who`` approves ``plans/<v>`` and, in the same commit, changes its pinned child's
    file or folder (``meta``: a ``metadata:`` block; ``note``: a file beside it)."""

    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, "approved")
        child_edit(who, how)(lab, v)

    return act


def child_edit(who: tuple[str, str], how: str) -> Act:
    """``who`` changes the pinned child's file or folder, never its hash: ``meta`` (a
    ``metadata:`` block), ``comment`` (a comment line), ``note`` (a file beside it), ``sub``
    (a file in a folder below it), ``near`` (a file in a folder beside it, not the child's)."""

    def act(lab: Lab, v: str) -> None:
        path = lab.repo / "plans" / f"{v}-c" / "PLAN.yml"
        if how == "meta":
            path.write_text(path.read_text() + "metadata: {ticket: OPS-9}\n")
        elif how == "comment":
            path.write_text(path.read_text() + "# reviewed\n")
        elif how == "note":
            lab.put(f"plans/{v}-c/NOTES.txt", "a note\n")
        elif how == "sub":
            lab.put(f"plans/{v}-c/extra/NOTES.txt", "a note\n")
        elif how == "near":
            lab.put(f"plans/{v}-n/NOTES.txt", "a note\n")
        lab.commit(f"{how} on the child of {v}", who)

    return act


def approve(who: tuple[str, str], msg: str = "", slug: str = "{v}") -> Act:
    def act(lab: Lab, v: str) -> None:
        s = slug.format(v=v)
        path = lab.repo / "plans" / s / "PLAN.yml"
        text = path.read_text()
        if text.startswith("plan:\n  name:"):
            lab.set_status(s, "approved")
        else:  # the converter's flow-style plan line, a re-dumped file: the first status
            new = re.sub(r'status: "?pending_approval"?', "status: approved", text, count=1)
            assert new != text, text[:400]
            path.write_text(new)
        lab.commit(msg.format(v=v) or f"approve {s}", who)

    return act


def status(who: tuple[str, str], to: str) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, to)
        lab.commit(f"{to} {v}", who)

    return act


def write_at(slug: str, shape: str, who: tuple[str, str], msg: str = "") -> Act:
    """``who`` writes the plan text of ``<v>`` (``shape``) at ``plans/<slug>``."""

    def act(lab: Lab, v: str) -> None:
        lab.write(slug.format(v=v), _text(v, shape))
        lab.commit(msg.format(v=v) or f"plan {v} at {slug}", who)

    return act


def write_src(name: str, who: tuple[str, str], shape: str = "bare") -> Act:
    """``who`` writes the plan of ``<v>`` as a source ``name`` (``PLAN.md``, ``PLAN.json``)."""

    def act(lab: Lab, v: str) -> None:
        text = _text(v, shape)
        if name.endswith(".json"):
            text = json.dumps(load_yaml(text), indent=2) + "\n"
        lab.write(v, text, filename=name)
        lab.commit(f"source {name} of {v}", who)

    return act


def remove(slug: str, who: tuple[str, str] = AGENT) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.git("rm", "-r", "-q", f"plans/{slug.format(v=v)}")
        lab.git("commit", "-q", "-m", f"drop {slug.format(v=v)}", who=who)

    return act


def undone_redone(who: tuple[str, str], undoer: tuple[str, str] = AGENT) -> Act:
    """``who`` writes the plan, ``undoer`` reverts that commit and then reverts the revert:
    the bytes back, the last commit ``undoer``'s (one round, no pass between)."""

    def act(lab: Lab, v: str) -> None:
        lab.write(v, _text(v))
        sha = lab.commit(f"plan {v}", who)
        lab.git("revert", "--no-edit", sha, who=undoer)
        lab.git("revert", "--no-edit", "HEAD", who=undoer)

    return act


def ours(who: tuple[str, str], merger: tuple[str, str], shape: str = "plain") -> Act:
    """``who`` writes the plan on ``b-<v>``; ``merger`` merges it ``-s ours`` (discarded)."""

    def act(lab: Lab, v: str) -> None:
        lab.branch(f"b-{v}", "main")
        lab.write(v, _text(v, shape))
        lab.commit(f"plan {v} on a branch", who)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "-s", "ours", "-m", f"merge b-{v} (ours)", f"b-{v}", who=merger)

    return act


def cherry(who: tuple[str, str], picker: tuple[str, str], msg: str, shape: str = "plain") -> Act:
    """``who`` writes the plan on ``b-<v>`` with ``msg``; ``picker`` cherry-picks it to main."""

    def act(lab: Lab, v: str) -> None:
        lab.branch(f"b-{v}", "main")
        lab.write(v, _text(v, shape))
        sha = lab.commit(msg.format(v=v), who)
        lab.git("checkout", "-q", "main")
        lab.git("cherry-pick", "-x", sha, who=picker)

    return act


def forge_vote(who: tuple[str, str], voter: str) -> Act:
    """``who`` adds a vote by ``voter`` to the controller's ``approval.approvals`` block."""

    def act(lab: Lab, v: str) -> None:
        path = lab.repo / "plans" / v / "PLAN.yml"
        data = load_yaml(path.read_text())
        block = data.get("approval") or {}
        votes = list(block.get("approvals") or [])
        first = dict(votes[0]) if votes else {"at": "2026-12-07T00:00:00Z", "commit": lab.head()}
        first["by"] = voter
        votes.append(first)
        block["approvals"] = votes
        block.pop("missing", None)
        data["approval"] = block
        from io import StringIO

        from ruamel.yaml import YAML

        out = StringIO()
        YAML(typ="safe", pure=True).dump(data, out)
        path.write_text(out.getvalue())
        lab.commit(f"vote for {v}", who)

    return act


def note(who: tuple[str, str]) -> Act:
    """``who`` commits ``NOTES.txt`` into the plan's folder (no byte of the plan file)."""

    def act(lab: Lab, v: str) -> None:
        lab.put(f"plans/{v}/NOTES.txt", f"a note by {who[0]}\n")
        lab.commit(f"note on {v}", who)

    return act


def on_branch(who: tuple[str, str], merger: tuple[str, str], inner: Act) -> Act:
    """``inner`` on a branch ``b-<v>`` off main, merged ``--no-ff`` into main by ``merger``."""

    def act(lab: Lab, v: str) -> None:
        lab.branch(f"b2-{v}", "main")
        inner(lab, v)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", f"merge b2-{v}", f"b2-{v}", who=merger)

    return act


def respelled(who: tuple[str, str] = AGENT) -> Act:
    """``who`` writes advkit's ``plan_text(v)`` respelled (flow style, keys reordered, a
    comment, ``metadata``): the same version, other bytes."""

    def act(lab: Lab, v: str) -> None:
        lab.write(v, RESPELLED_PLAN.format(tag=v, status="pending_approval"))
        lab.commit(f"plan {v}, respelled", who)

    return act


def move_to(slug: str, who: tuple[str, str] = AGENT) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.git("mv", f"plans/{v}", f"plans/{slug.format(v=v)}")
        lab.git("commit", "-q", "-m", f"move {v}", who=who)

    return act


def write_src_at(slug: str, name: str, who: tuple[str, str] = AGENT) -> Act:
    """``who`` writes ``plan_text(v)`` as the source ``name`` at ``plans/<slug>``."""

    def act(lab: Lab, v: str) -> None:
        text = _text(v, "bare")
        if name.endswith(".json"):
            text = json.dumps(load_yaml(text), indent=2) + "\n"
        lab.write(slug.format(v=v), text, filename=name)
        lab.commit(f"source {name} of {v} at {slug}", who)

    return act


def idle(lab: Lab, v: str) -> None:
    """Nothing this round (a pass for the controller to convert or freeze)."""


VARIANTS: dict[str, tuple[tuple[int, set[str]], str, list[Any]]] = {
    # -- risk: a high-risk tool anywhere asks ops + sec ------------------------------------
    "rkact": (PEND, "{v}", [write("hact"), approve(ALICE)]),
    "rkactok": (RUN, "{v}", [write("hact"), approve(ALICE), approve(CAROL)]),
    "rkfb": (PEND, "{v}", [write("fbh"), approve(ALICE)]),
    "rkfbok": (RUN, "{v}", [write("fbh"), approve(ALICE), approve(CAROL)]),
    "rknest": (PEND, "{v}", [nest("hact"), approve(ALICE)]),
    "rknestfb": (PEND, "{v}", [nest("fbh"), approve(ALICE)]),
    "rknestok": (RUN, "{v}", [nest("hact"), approve(CAROL), approve(BOB)]),
    # fix130a: Alice's alias is in sec, so Alice is (alsecA's reading, docs/approvals.md):
    # Alice and Bob run; the lab has one ops-only approver (Bob), so "two of ops wait" is
    # tests/approval/test_alias_groups.py's (Bob and Opsy)
    "rkopsops": (RUN, "{v}", [write("hact"), approve(ALICE), approve(BOB)]),
    "rksecsec": (PEND, "{v}", [write("hact"), approve(CAROL), approve(CAROL)]),
    "rkerin": (PEND, "{v}", [write("hact"), approve(ERIN), approve(CAROL)]),
    "rkcoC": (
        PEND,
        "{v}",
        [write("hact", msg="plan {v}\n\n" + CO_C), approve(ALICE), approve(CAROL)],
    ),
    "rknestcoC": (
        PEND,
        "{v}",
        [nest("hact", msg="child {v}\n\n" + CO_C), approve(ALICE), approve(CAROL)],
    ),
    # -- tools rule: qrec / qchk anywhere asks two ----------------------------------------
    "tqact": (PEND, "{v}", [write("qact"), approve(ALICE)]),
    "tqactok": (RUN, "{v}", [write("qact"), approve(ALICE), approve(BOB)]),
    "tqfb": (PEND, "{v}", [write("fbq"), approve(ALICE)]),
    "tqpre": (PEND, "{v}", [write("preqchk"), approve(ALICE)]),
    "tqpreok": (RUN, "{v}", [write("preqchk"), approve(ALICE), approve(BOB)]),
    "tqapre": (PEND, "{v}", [write("apreqchk"), approve(ALICE)]),
    "tqver": (PEND, "{v}", [write("verqchk"), approve(ALICE)]),
    "tqfbver": (PEND, "{v}", [write("fbverqchk"), approve(ALICE)]),
    "tqfbpre": (PEND, "{v}", [write("fbpreqchk"), approve(ALICE)]),
    "tqnest": (PEND, "{v}", [nest("qact"), approve(ALICE)]),
    "tqnestpre": (PEND, "{v}", [nest("preqchk"), approve(ALICE)]),
    "tqnestapre": (PEND, "{v}", [nest("apreqchk"), approve(ALICE)]),
    "tqnestver": (PEND, "{v}", [nest("verqchk"), approve(ALICE)]),
    "tqnestfbver": (PEND, "{v}", [nest("fbverqchk"), approve(ALICE)]),
    "tqnestfb": (PEND, "{v}", [nest("fbq"), approve(ALICE)]),
    "tqchkctl": (RUN, "{v}", [write("prechk"), approve(ALICE)]),
    # -- authors by version, whatever path, file or shape carried it ------------------------
    "aurvrv": (PEND, "{v}", [undone_redone(ALICE), approve(ALICE)]),
    "aurvrvB": (RUN, "{v}", [undone_redone(ALICE), approve(BOB)]),
    "audelre": (PEND, "{v}", [write(who=ALICE), remove("{v}"), write(), approve(ALICE)]),
    "aupath": (
        PEND,
        "{v}",
        [write_at("{v}-a", "plain", ALICE), remove("{v}-a"), write(), approve(ALICE)],
    ),
    "aupathB": (
        RUN,
        "{v}",
        [write_at("{v}-a", "plain", ALICE), remove("{v}-a"), write(), approve(BOB)],
    ),
    "aupathlive": (PEND, "{v}", [write_at("{v}-a", "plain", ALICE), write(), approve(ALICE)]),
    "aupathdraft": (PEND, "{v}", [write_at("{v}-a", "draft", ALICE), write(), approve(ALICE)]),
    "auours": (PEND, "{v}", [ours(ALICE, BOB), write(), approve(ALICE)]),
    "auoursB": (RUN, "{v}", [ours(ALICE, BOB), write(), approve(BOB)]),
    "aucherry": (PEND, "{v}", [cherry(AGENT, BOB, "plan {v}\n\n" + CO_A), approve(ALICE)]),
    "aucherryA": (PEND, "{v}", [cherry(ALICE, BOB, "plan {v}"), approve(ALICE)]),
    "aumd": (PEND, "{v}", [write_src("PLAN.md", ALICE), idle, approve(ALICE)]),
    "aujson": (PEND, "{v}", [write_src("PLAN.json", ALICE), idle, approve(ALICE)]),
    "aumdB": (RUN, "{v}", [write_src("PLAN.md", ALICE), idle, approve(BOB)]),
    "aumdAg": (RUN, "{v}", [write_src("PLAN.md", AGENT), idle, approve(ALICE)]),
    # -- quorum votes: voided, forged, withdrawn ------------------------------------------
    "tqaba": (
        PEND,
        "{v}",
        [
            write("qact"),
            approve(ALICE),
            write_at("{v}", "qacx", AGENT),
            write("qact"),
            approve(BOB),
        ],
    ),
    "tqforge": (
        PEND,
        "{v}",
        [write("qact"), approve(ALICE), forge_vote(AGENT, "bob@example.com"), approve(ALICE)],
    ),
    "tqforgeB": (
        PEND,
        "{v}",
        [write("qact"), approve(ALICE), forge_vote(BOB, "bob@example.com"), approve(ALICE)],
    ),
    "tqrej": (REJ, "{v}", [write("qact"), approve(ALICE), status(ALICE, "rejected"), approve(BOB)]),
    "tqagent": (PEND, "{v}", [write("qact"), approve(ALICE), approve(AGENT), approve(ALICE)]),
    "rkrejE": (
        REJ,
        "{v}",
        [write("hact"), status(ERIN, "rejected"), approve(ALICE), approve(CAROL)],
    ),
    "rkrejM": (
        RUN,
        "{v}",
        [write("hact"), status(MALLORY, "rejected"), approve(ALICE), approve(CAROL)],
    ),
    # -- the pinned child's writers: the parent's gate, resume, quorum; pins spelled otherwise
    "gnestB": (GWAIT, "{v}", [nest("plain", BOB, tail=GATE), approve(ALICE), approve(BOB)]),
    "gnestok": (GRUN, "{v}", [nest("plain", AGENT, tail=GATE), approve(ALICE), approve(BOB)]),
    "gnestmeta": (
        GWAIT,
        "{v}",
        [nest("plain", tail=GATE), approve(ALICE), child_edit(BOB, "meta"), approve(BOB)],
    ),
    "gnestnote": (
        GWAIT,
        "{v}",
        [nest("plain", tail=GATE), approve(ALICE), child_edit(BOB, "note"), approve(BOB)],
    ),
    "gnestsub": (
        GWAIT,
        "{v}",
        [nest("plain", tail=GATE), approve(ALICE), child_edit(BOB, "sub"), approve(BOB)],
    ),
    "gnestnear": (
        GRUN,
        "{v}",
        [nest("plain", tail=GATE), approve(ALICE), child_edit(BOB, "near"), approve(BOB)],
    ),
    "gnestsrc": (
        GWAIT,
        "{v}",
        [child("plain", BOB, src="PLAN.md"), parent(tail=GATE), approve(ALICE), approve(BOB)],
    ),
    "rsnestB": (RWAIT, "{v}", [nest("plain", BOB, tail=FAIL), approve(ALICE), approve(BOB)]),
    "rsnestok": (RRUN, "{v}", [nest("plain", AGENT, tail=FAIL), approve(ALICE), approve(BOB)]),
    "rsnestmeta": (
        RWAIT,
        "{v}",
        [nest("plain", tail=FAIL), approve(ALICE), child_edit(BOB, "meta"), approve(BOB)],
    ),
    "qnestB": (PEND, "{v}", [nest("qact", BOB), approve(ALICE), approve(BOB)]),
    "qnestcmt": (
        PEND,
        "{v}",
        [nest("qact"), approve(ALICE), child_edit(BOB, "comment"), approve(BOB)],
    ),
    "qnestsrc": (
        PEND,
        "{v}",
        [child("qact", BOB, src="PLAN.md"), parent(), approve(ALICE), approve(BOB)],
    ),
    "nestsrcA": (PEND, "{v}", [child("plain", ALICE, src="PLAN.md"), parent(), approve(ALICE)]),
    "nestsrcok": (RUN, "{v}", [child("plain", AGENT, src="PLAN.md"), parent(), approve(ALICE)]),
    "pwslash": (NONE, "{v}", [nest("plain", BOB, pin="plans/{c}/"), approve(BOB)]),
    "prslash": (NONE, "{v}", [nest("hact", pin="plans/{c}/"), approve(ALICE)]),
    "pqslash": (NONE, "{v}", [nest("qact", pin="plans/{c}/"), approve(ALICE)]),
    "pwdot": (NONE, "{v}", [nest("plain", BOB, pin="./plans/{c}"), approve(BOB)]),
    "prdot": (NONE, "{v}", [nest("hact", pin="./plans/{c}"), approve(ALICE)]),
    "pqdot": (NONE, "{v}", [nest("qact", pin="./plans/{c}"), approve(ALICE)]),
    "pwmid": (NONE, "{v}", [nest("plain", BOB, pin="plans/./{c}"), approve(BOB)]),
    "prmid": (NONE, "{v}", [nest("hact", pin="plans/./{c}"), approve(ALICE)]),
    "pqmid": (NONE, "{v}", [nest("qact", pin="plans/./{c}"), approve(ALICE)]),
    "pwdbl": (NONE, "{v}", [nest("plain", BOB, pin="plans//{c}"), approve(BOB)]),
    "prdbl": (NONE, "{v}", [nest("hact", pin="plans//{c}"), approve(ALICE)]),
    "pqdbl": (NONE, "{v}", [nest("qact", pin="plans//{c}"), approve(ALICE)]),
    "pwfile": (NONE, "{v}", [nest("plain", BOB, pin="plans/{c}/PLAN.yml"), approve(BOB)]),
    "prfile": (NONE, "{v}", [nest("hact", pin="plans/{c}/PLAN.yml"), approve(ALICE)]),
    "pqfile": (NONE, "{v}", [nest("qact", pin="plans/{c}/PLAN.yml"), approve(ALICE)]),
    "pwtdot": (NONE, "{v}", [nest("plain", BOB, pin="plans/{c}/."), approve(BOB)]),
    "prtdot": (NONE, "{v}", [nest("hact", pin="plans/{c}/."), approve(ALICE)]),
    "pqtdot": (NONE, "{v}", [nest("qact", pin="plans/{c}/."), approve(ALICE)]),
    "pwup": (NONE, "{v}", [nest("plain", BOB, pin="plans/zz/../{c}"), approve(BOB)]),
    "prup": (NONE, "{v}", [nest("hact", pin="plans/zz/../{c}"), approve(ALICE)]),
    "pqup": (NONE, "{v}", [nest("qact", pin="plans/zz/../{c}"), approve(ALICE)]),
    # -- groups: one person in two groups counts once; a member must be an approver -------
    "grdave": (PEND, "{v}", [write("hact"), approve(DAVE)]),
    "grdave2": (PEND, "{v}", [write("hact"), approve(DAVE), approve(DAVE)]),
    "grdaveA": (RUN, "{v}", [write("hact"), approve(DAVE), approve(ALICE)]),
    "grdaveC": (RUN, "{v}", [write("hact"), approve(CAROL), approve(DAVE)]),
    "grfrank": (PEND, "{v}", [write("hact"), approve(ALICE), approve(FRANK)]),
    "grfrankD": (PEND, "{v}", [write("hact"), approve(FRANK), approve(DAVE)]),
    "grdaveco": (
        PEND,
        "{v}",
        [
            write("hact", msg="plan {v}\n\nCo-authored-by: D <dave@example.com>"),
            approve(ALICE),
            approve(DAVE),
        ],
    ),
    # -- identity_aliases: Alice is also a.smith@corp.example (in sec) -------------------
    "alsec": (PEND, "{v}", [write("hact"), approve(ALICE), approve(SMITH)]),
    "alsec2": (PEND, "{v}", [write("hact"), approve(SMITH), approve(ALICE)]),
    "alsecup": (PEND, "{v}", [write("hact"), approve(ALICE), approve(SMITH_UP)]),
    "alsecC": (RUN, "{v}", [write("hact"), approve(SMITH), approve(BOB)]),
    "alsecC2": (RUN, "{v}", [write("hact"), approve(BOB), approve(SMITH)]),
    "alplain": (RUN, "{v}", [write(), approve(SMITH)]),
    "alsecA": (RUN, "{v}", [write("hact"), approve(ALICE), approve(BOB)]),
    # -- plus_tags: carol+x is Carol, bob+x is Bob ----------------------------------------
    "plsec": (RUN, "{v}", [write("hact"), approve(ALICE), approve(CAROL_PLUS)]),
    "plsec2": (RUN, "{v}", [write("hact"), approve(CAROL_PLUS), approve(BOB_PLUS)]),
    "plq": (PEND, "{v}", [write("qact"), approve(BOB), approve(BOB_PLUS)]),
    "plgate": (GWAIT, "{v}", [nest("plain", BOB_PLUS, tail=GATE), approve(ALICE), approve(BOB)]),
    "plask": (
        AWAIT,
        "{v}",
        [write("ask", msg="plan {v}\n\n" + CO_BP), approve(ALICE), approve(BOB)],
    ),
    "plrk": (PEND, "{v}", [write("hact", who=CAROL_PLUS), approve(ALICE), approve(CAROL)]),
    "alqnote": (PEND, "{v}", [write("qact"), approve(ALICE), note(SMITH), approve(BOB)]),
    "alqnoteB": (RUN, "{v}", [write("qact"), approve(ALICE), note(CAROL), approve(BOB)]),
    "alq": (PEND, "{v}", [write("qact"), approve(ALICE), approve(SMITH)]),
    "algate": (GWAIT, "{v}", [nest("plain", SMITH, tail=GATE), approve(BOB), approve(ALICE)]),
    "alask": (
        AWAIT,
        "{v}",
        [write("ask", msg="plan {v}\n\n" + CO_S), approve(BOB), approve(ALICE)],
    ),
    # -- an approval commit that also writes into the pinned child ------------------------
    "apchmeta": (PEND, "{v}", [nest("plain"), approve_and(BOB, "meta")]),
    "apchnote": (PEND, "{v}", [nest("plain"), approve_and(BOB, "note")]),
    "apchnear": (RUN, "{v}", [nest("plain"), approve_and(BOB, "near")]),
    # -- on_failure: ask, answered by whom ------------------------------------------------
    "askok": (AANS, "{v}", [write("ask"), approve(ALICE), approve(BOB)]),
    "askA2": (AANS, "{v}", [write("ask"), approve(ALICE), approve(ALICE)]),
    "askAg": (AWAIT, "{v}", [write("ask"), approve(ALICE), approve(AGENT)]),
    "askM": (AWAIT, "{v}", [write("ask"), approve(ALICE), approve(MALLORY)]),
    "askwr": (
        AWAIT,
        "{v}",
        [write("ask"), write("ask", who=BOB, msg="edit {v}"), approve(ALICE), approve(BOB)],
    ),
    "askco": (
        AWAIT,
        "{v}",
        [write("ask", msg="plan {v}\n\n" + CO_B), approve(ALICE), approve(BOB)],
    ),
    "asknote": (AWAIT, "{v}", [write("ask"), approve(ALICE), note(BOB), approve(BOB)]),
    "askchild": (AWAIT, "{v}", [nest("plain", BOB, tail=ASK), approve(ALICE), approve(BOB)]),
    "askchmeta": (
        AWAIT,
        "{v}",
        [nest("plain", tail=ASK), approve(ALICE), child_edit(BOB, "meta"), approve(BOB)],
    ),
    "askabM": (
        AANS,
        "{v}",
        [write("ask"), approve(ALICE), status(MALLORY, "aborted"), approve(BOB)],
    ),
    "askabAg": (
        AABORT,
        "{v}",
        [write("ask"), approve(ALICE), status(AGENT, "aborted"), approve(BOB)],
    ),
    "askabE": (
        AABORT,
        "{v}",
        [write("ask"), approve(ALICE), status(ERIN, "aborted"), approve(BOB)],
    ),
    "askmergeM": (
        AWAIT,
        "{v}",
        [write("ask"), approve(ALICE), on_branch(BOB, MALLORY, approve(BOB))],
    ),
    "askmergeC": (AANS, "{v}", [write("ask"), approve(ALICE), on_branch(BOB, CAROL, approve(BOB))]),
    # -- max_age 1h (lab m): round 0 is two hours ago ------------------------------------
    "mxA": (PEND, "{v}", [write("bare"), approve(ALICE)]),
    "mxfresh": (RUN, "{v}", [idle, write("bare"), approve(ALICE)]),
    "mxmd": (
        PEND,
        "{v}",
        [write("bare"), remove("{v}"), write_src("PLAN.md", AGENT), idle, approve(ALICE)],
    ),
    "mxjson": (
        PEND,
        "{v}",
        [write("bare"), remove("{v}"), write_src("PLAN.json", AGENT), idle, approve(ALICE)],
    ),
    "mxmdlive": (
        PEND,
        "{v}-a",
        [write("bare"), idle, write_src_at("{v}-a", "PLAN.md"), idle, approve(ALICE, slug="{v}-a")],
    ),
    "mxresp": (PEND, "{v}", [write("bare"), remove("{v}"), respelled(), approve(ALICE)]),
    "mxrespsame": (PEND, "{v}", [write("bare"), respelled(), approve(ALICE)]),
    "mxmove": (PEND, "{v}-o", [write("bare"), move_to("{v}-o"), approve(ALICE, slug="{v}-o")]),
    "mxdraft": (RUN, "{v}", [write("draft"), remove("{v}"), write("plain"), approve(ALICE)]),
    # -- paths rule ------------------------------------------------------------------------
    "ppA": (PEND, "pp-{v}", [write_at("pp-{v}", "plain", AGENT), approve(ALICE, slug="pp-{v}")]),
    "ppok": (
        RUN,
        "pp-{v}",
        [
            write_at("pp-{v}", "plain", AGENT),
            approve(ALICE, slug="pp-{v}"),
            approve(BOB, slug="pp-{v}"),
        ],
    ),
}
VIDS = list(VARIANTS)


def _kind(v: str) -> tuple[str, str]:
    """The approval kind the audit lists for the counted start, and the counted tag's suffix."""
    if "GATE" in v or v.startswith("gnest"):
        return "gate", "g"
    if v.startswith("rsnest"):
        return "resume", "f"
    if v.startswith(("ask", "alask", "plask")):
        return "gate", "f"
    if v.startswith(("algate", "plgate")):
        return "gate", "g"
    return "approve", ""


def _play(lab: Lab, vids: list[str]) -> dict[str, Any]:
    got: dict[str, Any] = {"passes": []}
    rounds = max(len(VARIANTS[v][2]) for v in vids)
    for rnd in range(rounds):
        lab.git_date = getattr(lab, "past", None) if rnd == 0 else None
        for v in vids:
            acts = VARIANTS[v][2]
            if rnd < len(acts) and acts[rnd] is not None:
                acts[rnd](lab, v)
                lab.git("checkout", "-q", "main")
        res = lab.run(check=False)
        got["passes"].append((rnd, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))
    got["rows"] = lab.rows()
    got["ran"] = {v: len(lab.calls(v + _kind(v)[1])) for v in vids}
    got["clone"] = clone_audit_got(lab, lab.root)
    return got


def _build_one(root: Path, vids: list[str], max_age: bool = False) -> dict[str, Any]:
    lab = Lab(root)
    _config(lab, "  max_age: 1h\n" if max_age else "")
    if max_age:  # round 0 (its commits and pass) two hours ago: what it froze has expired
        lab.past = f"@{int(time.time()) - 7200} +0000"  # type: ignore[attr-defined]
    return _play(lab, vids)


def _build(root: Path) -> Lab:
    plain = [v for v in VIDS if not v.startswith("mx")]
    parts = {"a": plain[0::3], "b": plain[1::3], "d": plain[2::3]}
    builders: dict[str, Callable[[Path], Any]] = {
        k: functools.partial(_build_one, vids=vs) for k, vs in parts.items()
    }
    mx = [v for v in VIDS if v.startswith("mx")]
    builders["m"] = functools.partial(_build_one, vids=mx, max_age=True)
    labs = build_all(root, builders, workers=4)
    got: dict[str, Any] = {"passes": [], "rows": {}, "ran": {}}
    execs: list[Any] = []
    for part in labs.got.values():
        got["passes"] += part["passes"]
        for key in ("rows", "ran"):
            got[key].update(part[key])
        execs += part["clone"]["report"].get("executions", [])
    got["clone"] = {"report": {"executions": execs}}
    lab = Lab.__new__(Lab)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r129-approve-atk129a", _build)


KINDS = ("", ":status", ":audit")
IDS = [f"{v}{k}" for v in VIDS for k in KINDS] + ["passes"]
_BROKE: dict[str, tuple[list[str], str]] = {}
BROKEN: dict[str, Any] = {
    f"{v}{k}": xfail(cls, why) for cls, (vids, why) in _BROKE.items() for v in vids for k in KINDS
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round129_atk129a(lab: Any, vid: str) -> None:
    got = lab.got
    if vid == "passes":
        bad = [p for p in got["passes"] if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    (want_runs, want_status), slug, _acts = VARIANTS[v]
    plan = "plans/" + slug.format(v=v)
    row = got["rows"].get(plan, {})
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
    elif kind == "audit":
        execs = got["clone"]["report"].get("executions", [])
        ak = _kind(v)[0]
        valid = [
            e
            for e in execs
            if e.get("plan") == plan and e.get("approval_valid") and e.get("approval_kind") == ak
        ]
        want_valid = (
            want_runs - 1
            if ak == "resume" or v.startswith(("ask", "alask", "plask"))
            else want_runs
        )
        assert len(valid) == want_valid, (valid, brief(row, 5))
    else:
        assert got["ran"][v] == want_runs, (got["ran"][v], brief(row, 5))
