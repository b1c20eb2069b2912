"""Round 128, approval side (atk128a): "a plan runs only after enough allowed people, none of
whom wrote any part of it, approved exactly the frozen version", attacked through the edges
round 127 left untried: ``Co-authored-by:`` in every spelling and place (subject, body, quoted,
bulleted, after words, behind an invisible or no-break prefix, a merged branch, a squash
message, a pinned child, an approval, a gate, a resume), quorum votes counted once per person
however the address is spelled and judged again after their voter wrote into the folder, gate
and resume approvals and who may abort or reject a paused or failed run, ``identity:
committer``, signed ``Plan-Approved:`` trailers inside merged branches (``require_signed``),
undos to an earlier version, and a plan folder moved or copied by an approver.

Labs (``run --once`` after every round; ``rec`` records each call; ``qrec`` is ``rec`` under a
rule asking two approvals; ``frec`` records and exits 3): approvers Alice, Bob, Carol, Erin
(``@example.com``), ``rules: [{match: {tools: [qrec]}, require: [{count: 2}]}]``. The agent
writes plans, Mallory is nobody. Six labs built side by side: three identical ones
(``identity: author``) share the plain variants; ``c`` has ``identity: committer`` (the ``cm*``
variants); ``l`` has ``identity_aliases`` (the ``al*`` variants); ``s`` has
``require_signed`` with ssh keys for Alice, Bob, Carol and the controller, which signs its
commits (the ``sg*`` variants; Mallory's key is listed nowhere).
Round 0 writes each plan; later rounds edit, approve, vote, withdraw, approve a gate or a
resume. Then ``status --json`` and ``plangate audit --json`` in a fresh clone (no config).

Kinds of plan: ``approve`` (one ``rec`` action), ``quorum`` (``qrec``), ``gate`` (action 2
``requires_approval``: the want counts action 2's calls), ``nest`` (action 2 pins a draft
child ``plans/<v>-c``: the want counts the child's calls), ``resume`` (action 2 is ``frec``:
the want counts its calls, 1 for the first run, 2 after a resume).

- ``Co-authored-by:`` of the plan's writing makes Alice a writer (``E_SELF_APPROVAL``): as
  GitHub writes it (``castd``), upper case (``caup``), no blanks (``canosp``), a bare address
  (``cabare``), an address alone in ``<>`` (``caonlyaddr``), ``addr (Alice)`` (``caparen``), tabs
  (``cawsval``), an RFC 5322 comment, fullwidth ``a``, trailing dot, quoted local part, NBSP,
  ZWSP, ideographic full stop in the address (``cacmt``, ``cafw``, ``cadot``, ``caquote``,
  ``spco``, ``spcozw``, ``spcoidn``), indented by blanks or a tab (``caindent``, ``catab``), a
  paragraph above more text (``camid``), a CR at its end (``cacrlf``), only on the edit
  (``caedit``) or only on v1 (``cav1``), on a merged branch (``camerge``), in a squash message
  (``casq``, GitHub's shape ``casqgh``), on a pinned child (``nestco``), under ``identity:
  committer`` (``cmco``); in the subject (``casubj``), after ``> `` (``caquoted``), after ``- ``
  (``cabullet``), after words on the line (``cainline``), after a NBSP (``canbsp``) or a ZWSP
  (``cazw``), on a pinned child in the subject or quoted (``nestcosubj``, ``nestcoquo``).
  Controls: ``Signed-off-by:`` (``sob``), ``Reviewed-by:`` (``rvb``) run; Bob's squash makes him
  the writer (``sqB``); the child written by Alice bars her (``nestA``), by the agent runs
  (``nestok``).
- A co-author is an author and may withdraw (Mallory, ``rejected`` then Bob approves, or
  ``aborted`` at the gate or after the failure): credited as GitHub writes it (``wdco``),
  indented (``wdcoind``), on a merged branch (``wdcomerge``), in a squash message (``wdsq``), on
  v1 only or v2 only (``wdcov1``, ``wdcov2``), at a gate (``gabco``), at a failed run
  (``rsabco``); in the subject (``wdcosubj``, ``gabcosubj``) or quoted (``wdcoquo``). Controls:
  Mallory uncredited is ignored (``wdM``), Bob's rejection binds (``wdB``), the agent's revert
  of Bob's rejection brings nothing back (``wdrev``).
- Alice wrote the plan under another spelling of her address and approves as herself (all
  ``E_SELF_APPROVAL``): trailing NBSP, leading ZWSP, ideographic full stop, source route,
  quoted pair, folding blank, committer ``Alice@Example.Com`` (``spnbsp``, ``spzw``, ``spidn``,
  ``sproute``, ``spqpair``, ``spfold``, ``spcmtr``).
- Approvals: Mallory's approval naming Alice co-author is not Alice's (``apcoM``); Bob's
  naming Alice runs (``apcoB``); an approval committing a note into the folder (``apnoteself``,
  at a gate ``gnoteself``) is its writer's.
- Quorum: Alice then Bob runs (``qok``); Alice then Alice as ``ALICE@EXAMPLE.COM``, fullwidth,
  comment, quoted (``qcase``, ``qfw``, ``qcmt``, ``qquo``), Mallory's vote naming Bob
  (``qcoM``), Alice's vote merged by Bob then Bob (``qmergeBB``), Alice's vote merged by the
  agent then Bob (``qmergeAg``), Bob a co-author of v1 (``qcoauth``; in the subject:
  ``qcosubj``), Bob's vote then his note in the folder then Carol (``qnote``: the vote judged
  again), Alice's vote then the agent's edit (``qvoid``) or hers (``qvoidA``): no run. Controls:
  Alice's note after Bob's vote (``qnoteA``), Alice's vote merged by Bob then Alice
  (``qmergeBA``) run.
- Gates: Bob (``gok``), Alice twice (``gsame``), Carol after Bob's note (``gnoteC``), Bob's
  approval merged by Carol (``gmergeC``) run; the agent (``gagent``), Mallory (``gmal``),
  Mallory naming Bob (``gcoM``), Bob the writer of v2 (``gwriter``), Bob a co-author
  (``gcowriter``, ``gcoA``, ``gcomerge``), Bob after his note (``gnote``), Bob's approval merged by
  Mallory (``gmergeM``): no run; Mallory's ``aborted``/``rejected`` ignored (``gabM``, ``grjM``),
  the agent's and Bob's ``aborted`` hold (``gabA``, ``gabB``).
- Resumes after ``frec`` failed: Bob (``rsB``) and after Mallory's ignored abort (``rsabM``)
  resume; the agent (``rsAg``), Mallory (``rsM``), Mallory naming Bob (``rscoM``), Bob a writer
  (``rswr``), co-author (``rscowr``), after his note (``rsnote``), Bob's merged by Mallory
  (``rsmergeM``): no resume; the agent's abort holds (``rsabA``).
- ``identity: committer``: Mallory-authored, Alice-committed approval counts (``cmA``),
  the reverse does not (``cmM``); Alice the committer or the author of the plan commit is a
  writer (``cmwrC``, ``cmwrA``); the gate and quorum alike (``cmgate``, ``cmgateok``, ``cmq``,
  ``cmqok``); a branch approval merged by Mallory (``cmmergeM``); Mallory the author of a plan
  the agent committed may reject it (``cmwdC``).
- ``require_signed``: Alice signed runs (``sgok``), unsigned or signed with an unlisted key
  does not (``sgnosign``, ``sgmal``); a ``Plan-Approved:`` trailer by Alice (Carol; a
  Mallory-authored commit signed by Alice's key) plus Bob's signed merge completes the
  quorum (``sgtrok``, ``sgtrcarol``, ``sgtrcoA``); the trailer unsigned, signed by Mallory's
  key, signed by Bob's key (Bob then merges), twice by Alice merged by Alice, by a writer of a
  note on the branch or a co-author, for v1 when main holds v2, or Bob's merge unsigned, do
  not (``sgtrunsigned``, ``sgtrmalkey``, ``sgtrbobkey``, ``sgtrtwice``, ``sgtrwriter``,
  ``sgtrco``, ``sgtrold``, ``sgtrmerger``).
- ``identity_aliases`` (a lab of its own, ``plus_tags: ["*@example.com"]``, ``people:
  [[alice@example.com, a.smith@corp.example]]``): Alice wrote the plan as ``alice+bot@`` or
  ``a.smith@corp.example`` (``alplus``, ``alpeople``), was credited as ``alice+pair@`` or
  ``A.Smith@corp.example`` (``alcoplus``, ``alcopeople``; in the subject: ``alsubj``), voted
  again as ``alice+second@`` (``alq``), Bob wrote the gated plan as ``bob+draft@`` (``algate``):
  no run; Mallory credited as ``mallory+x@`` may reject (``alwd``); Alice then Bob run
  (``alqok``).
- Undos and moves: the agent restores v1 after Alice's v2 (``revA``), Alice restores v1 after
  the agent's v2 (``revA2``): Alice may not approve; Bob may (``revB``); Alice's ``git mv`` of
  the folder (``mvA``) runs on her approval, her copy (``cpA``) does not.

Ids (430; 143 variants x 3 + ``passes``): ``<vid>`` (the counted tool's calls), ``<vid>:status``
(final ``status --json`` row), ``<vid>:audit`` (valid starts of that kind, ``approve``,
``gate`` or ``resume``, in the fresh-clone audit), ``passes`` (every pass exited 0, no
traceback).

Seen (round 128: 430 ids, 391 passed, 39 xfailed (strict); 21-37 s wall with ``-n 2``
on a 2-core machine at load average 7-15 (75-105 s at load 17-19 from the other rounds'
sessions), the labs' build most of it), 1 class:

- **coauthor-credit-read-only-at-line-start** (39 ids: ``casubj``, ``caquoted``, ``cabullet``,
  ``cainline``, ``canbsp``, ``cazw``, ``nestcosubj``, ``nestcoquo``, ``qcosubj``, ``wdcosubj``,
  ``wdcoquo``, ``gabcosubj``, ``alsubj`` (an alias of Alice's), each with ``:status`` and
  ``:audit``). FAIL OPEN. A
  ``Co-authored-by:`` credit counts only where the key begins its line after ASCII blanks: in
  the subject (``plan x Co-authored-by: Alice <alice@example.com>``), after ``> `` or ``- ``,
  after words on its line, after a U+00A0 or U+200B, it names nobody. Alice, credited so as a
  co-author of the plan (or of the child it pins), approves it and it runs (status
  ``completed``, the fresh-clone audit calls the start valid); Bob, credited so, counts as a
  quorum's second vote; Mallory, credited so, is no author: her rejection or abort is
  ``E_APPROVER_NOT_ALLOWED ... ignored`` and Bob's approval runs the plan (at a gate, his gate
  approval runs the gated step). Indented by blanks or a tab, the credit counts (``caindent``,
  ``catab``, ``wdcoind``). docs/approvals.md ("Who changed the content"): the index records
  "every ``Co-authored-by:`` person (any spelling of the key, anywhere in the message) of every
  commit that changed the plan's hashed content"; threat-model: "more authors is the safe
  direction". Repro: ``git commit -m "plan x Co-authored-by: Alice <alice@example.com>"`` (the
  agent adds ``plans/x/PLAN.yml``); ``run --once``; Alice commits ``status: approved``;
  ``run --once``: ``completed``, ``approved_by`` Alice.

What held: every other credit spelling and place above; a co-author's right to withdraw
(v1 or v2, merged, squashed, at a gate, after a failure); address spellings and aliases of a
writer (author, committer, co-author); quorum votes counted once per person in every spelling,
judged again after the voter's note, voided by an edit; approvals carried by merges count
as the merger's (gate, resume, quorum, ``identity: committer``); gate and resume approvals
refused for the agent, Mallory, a writer, a co-author; only allowed aborters stop a paused
or failed run; ``identity: committer`` reads the committer for the vote and both for the
writers; signed trailers count once per key, for the signer, only signed by a listed key,
for the hash they name, never for a writer; an undo to v1 makes its maker v1's author; a
``git mv`` writes nothing and a copy does. The controller, ``status`` and the fresh-clone
audit agreed in every variant.

Fixed (fix129a): **coauthor-credit-read-only-at-line-start**. The cause: the one reader of
credits, ``approvals.coauthors``, matched the key only at a line's start (``^[ \t]*``) and was
given the body alone (git's ``%b``), never the subject. Now ``approvals.credit_keys`` finds the
key anywhere on a line, in any case and spelling (a dash, a blank or nothing between its
words, blanks before the colon), read after NFKC with invisible characters dropped (so after a
NBSP, a ZWSP, ``> ``, ``- `` or other words, fullwidth letters too); ``coauthors`` reads the
person after every key, and ``Lifecycle.identities`` hands it the whole message
(``approvals.message_of``: subject and body). A person so credited is an author: she may not
approve, and she may withdraw. Text the controller or the MCP ``submit`` quotes into a message
(a note, an error) has each key's colon shown as its escape (``message.defused``), so quoted
text credits nobody. ``INDEX_VERSION`` 150 rebuilds an index read the old way.

Not tried: ``max_age`` with these shapes, ``plangate check --as``,
criss-cross merges around an approval, remote mode, MCP ``submit`` notes.
"""

from __future__ import annotations

import functools
import json
import shutil
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
    Lab,
    brief,
    build_all,
    clone_audit_got,
    plan_text,
    xfail,
)
from tests.adversarial.signkit import make_key

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
BOB_UP = ("Bob", "BOB@EXAMPLE.COM")
ALICE_UP = ("Alice", "ALICE@EXAMPLE.COM")
ALICE_FW = ("Alice", "\uff41lice@example.com")
ALICE_CMT = ("Alice", "alice(x)@example.com")
ALICE_QUO = ("Alice", '"alice"@example.com')

RUN = (1, {"completed"})
RRUN = (2, {"failed"})  # the failing step ran at the first run and again at the resume
RWAIT = (1, {"failed"})  # it ran once: no resume
RABORT = (1, {"aborted"})
PEND = (0, {"pending_approval"})
GRUN = (1, {"completed"})
RRUN = (2, {"failed"})  # the failing step ran at the first run and again at the resume
RWAIT = (1, {"failed"})  # it ran once: no resume
RABORT = (1, {"aborted"})
GWAIT = (0, {"awaiting_approval"})
GABORT = (0, {"aborted"})
REJ = (0, {"rejected"})

Act = Callable[[Lab, str], Any]


def _config(lab: Lab, identity: str = "author", signed: str = "") -> None:
    """The lab's config; ``signed``: more ``approval:`` lines (2-space indent)."""
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    failing = lab.root / "frec.py"
    failing.write_text(lab.recorder.read_text() + "sys.exit(3)\n")
    frec = json.dumps([sys.executable, str(failing), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  identity: {identity}\n{signed}"
        '  approvers: ["alice@example.com", "bob@example.com", "carol@example.com",'
        ' "erin@example.com"]\n'
        "  rules:\n"
        "    - match: {tools: [qrec]}\n"
        "      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  qrec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  frec: {{kind: exec, argv: {frec}, {env}}}\n"
    )


def _text(v: str, kind: str = "plain", extra: str = "") -> str:
    if kind == "quorum":
        return plan_text(v, params=extra).replace("rec", "qrec").replace("qrecord", "record")
    if kind == "resume":
        body = plan_text(v, params=extra).replace(
            "  - name: rec\n", "  - name: rec\n  - name: frec\n"
        )
        return body + (
            f'  - id: 2\n    tool: frec\n    why: a step that fails\n    params: {{tag: "{v}f"}}\n'
        )
    if kind == "gate":
        return plan_text(v, params=extra) + (
            "  - id: 2\n    tool: rec\n    why: gated step\n    requires_approval: true\n"
            f'    params: {{tag: "{v}g"}}\n'
        )
    return plan_text(v, params=extra)


# -- acts ------------------------------------------------------------------------------------
def write(kind: str = "plain", msg: str = "", who: tuple[str, str] = AGENT) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.write(v, _text(v, kind))
        lab.commit(msg.format(v=v) or f"agent: plan {v}", who)

    return act


def edit(msg: str = "", who: tuple[str, str] = AGENT, kind: str = "plain") -> Act:
    """v2: one param added to the plan (its status line kept)."""

    def act(lab: Lab, v: str) -> None:
        status = lab.plan(v)["plan"]["status"]
        lab.write(v, _text(v, kind, extra='note: "v2"\n').replace("pending_approval", status))
        lab.commit(msg.format(v=v) or f"edit {v}", who)

    return act


def approve(who: tuple[str, str], msg: str = "", slug: str = "{v}") -> Act:
    def act(lab: Lab, v: str) -> None:
        s = slug.format(v=v)
        lab.set_status(s, "approved")
        lab.commit(msg.format(v=v) or f"approve {s}", who)

    return act


def status(who: tuple[str, str], to: str) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, to)
        lab.commit(f"{to} {v}", who)

    return act


def on_branch(who: tuple[str, str], merger: tuple[str, str], inner: Act) -> Act:
    """``inner`` on a branch ``b-<v>`` off main, merged ``--no-ff`` into main by ``merger``."""

    def act(lab: Lab, v: str) -> None:
        lab.branch(f"b-{v}", "main")
        inner(lab, v)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", f"merge b-{v}", f"b-{v}", who=merger)

    return act


def squash(merger: tuple[str, str], msg: str) -> Act:
    """The agent's plan on ``b-<v>``, squash-merged into main by ``merger`` with ``msg``."""

    def act(lab: Lab, v: str) -> None:
        lab.branch(f"b-{v}", "main")
        write()(lab, v)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--squash", f"b-{v}", who=merger)
        lab.git("commit", "-q", "-m", msg.format(v=v), who=merger)

    return act


def move(who: tuple[str, str]) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.git("mv", f"plans/{v}", f"plans/{v}-o")
        lab.git("commit", "-q", "-m", f"move {v}", who=who)

    return act


def copy(who: tuple[str, str]) -> Act:
    def act(lab: Lab, v: str) -> None:
        shutil.copytree(lab.repo / "plans" / v, lab.repo / "plans" / f"{v}-o")
        lab.commit(f"copy {v}", who)

    return act


def approve_as(author: tuple[str, str], committer: tuple[str, str], msg: str = "") -> Act:
    """An approval whose author and committer differ (a patch applied, a rebase)."""

    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, "approved")
        lab.git("add", "-A")
        lab.git(
            "commit", "-q", f"--author={author[0]} <{author[1]}>", "-m", msg or f"approve {v}",
            who=committer,
        )  # fmt: skip

    return act


def write_as(author: tuple[str, str], committer: tuple[str, str], kind: str = "plain") -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.write(v, _text(v, kind))
        lab.git("add", "-A")
        lab.git(
            "commit", "-q", f"--author={author[0]} <{author[1]}>", "-m", f"plan {v}", who=committer
        )

    return act


def nest(msg: str = "", who: tuple[str, str] = AGENT) -> Act:
    """A child plan ``plans/<v>-c`` (a draft, its one action tagged ``<v>c``) committed by
    ``who`` with ``msg``, then the agent's parent ``plans/<v>`` pinning it (one commit each)."""

    def act(lab: Lab, v: str) -> None:
        child = plan_text(v + "c", status="draft")
        lab.write(f"{v}-c", child)
        lab.commit(msg.format(v=v) or f"child of {v}", who)
        got = lab.cli("hash", str(lab.repo / "plans" / f"{v}-c"))
        digest = got.stdout.strip().split()[-1]
        lab.write(
            v,
            plan_text(v) + f'  - id: 2\n    plan: {{path: plans/{v}-c, hash: "{digest}"}}\n'
            "    why: the pinned child\n",
        )
        lab.commit(f"agent: parent {v}", AGENT)

    return act


def note(who: tuple[str, str], msg: str = "") -> Act:
    """``who`` commits ``NOTES.txt`` into the plan's folder (no byte of the plan file)."""

    def act(lab: Lab, v: str) -> None:
        lab.put(f"plans/{v}/NOTES.txt", f"a note by {who[0]}\n")
        lab.commit(msg or f"note on {v}", who)

    return act


def note_and(who: tuple[str, str], to: str) -> Act:
    """``who`` sets the status to ``to`` and adds ``NOTES.txt`` in the same commit."""

    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, to)
        lab.put(f"plans/{v}/NOTES.txt", f"lgtm, {who[0]}\n")
        lab.commit(f"{to} {v} with a note", who)

    return act


def restore_v1(who: tuple[str, str]) -> Act:
    """``who`` puts back the plan file of ``plans/<v>``'s first commit (an undo to v1)."""

    def act(lab: Lab, v: str) -> None:
        first = lab.git("log", "--reverse", "--format=%H", "--", f"plans/{v}").split()[0]
        lab.git("checkout", first, "--", f"plans/{v}/PLAN.yml")
        lab.commit(f"back to v1 of {v}", who)

    return act


def revert_last(who: tuple[str, str]) -> Act:
    """``who`` reverts the newest commit of ``plans/<v>`` that is not the controller's."""

    def act(lab: Lab, v: str) -> None:
        rows = lab.git("log", "--format=%H %ae", "--", f"plans/{v}").split("\n")
        sha = next(r.split()[0] for r in rows if r.strip() and not r.endswith("plangate@localhost"))
        lab.git("revert", "--no-edit", sha, who=who)

    return act


# -- signed approvals (the ``sg`` lab: ``require_signed``, keys for Alice, Bob, Carol, the
# controller; Mallory's key is listed nowhere) ----------------------------------------------
def _key(lab: Lab, name: str) -> list[str]:
    return ["-c", "gpg.format=ssh", "-c", f"user.signingkey={lab.root / 'keys' / name}"]


def sg_approve(who: tuple[str, str], key: str | None) -> Act:
    def act(lab: Lab, v: str) -> None:
        lab.set_status(v, "approved")
        lab.git("add", "-A")
        signing = [*_key(lab, key), "commit", "-S"] if key else ["commit"]
        lab.git(*signing, "-q", "-m", f"approve {v}", who=who)

    return act


def trailer(who: tuple[str, str], key: str | None, hash_of: str = "{v}") -> Act:
    """On branch ``b-<v>`` (made at main when absent): an empty commit by ``who`` carrying
    ``Plan-Approved: plans/<v> <hash>`` (the hash main's plan ``hash_of`` is frozen at),
    signed with ``key``."""

    def act(lab: Lab, v: str) -> None:
        digest = lab.plan(hash_of.format(v=v), "main")["frozen"]["hash"]
        if lab.git("branch", "--list", f"b-{v}").strip():
            lab.git("checkout", "-q", f"b-{v}")
        else:
            lab.branch(f"b-{v}", "main")
        msg = f"approve plans/{v} (trailer)\n\nPlan-Approved: plans/{v} {digest}\n"
        signing = [*_key(lab, key), "commit", "-S"] if key else ["commit"]
        lab.git(*signing, "-q", "--allow-empty", "-m", msg, who=who)
        lab.git("checkout", "-q", "main")

    return act


def on_b(inner: Act) -> Act:
    """``inner`` on branch ``b-<v>`` (made at main when absent)."""

    def act(lab: Lab, v: str) -> None:
        if lab.git("branch", "--list", f"b-{v}").strip():
            lab.git("checkout", "-q", f"b-{v}")
        else:
            lab.branch(f"b-{v}", "main")
        inner(lab, v)
        lab.git("checkout", "-q", "main")

    return act


def sg_merge(who: tuple[str, str], key: str | None) -> Act:
    """``who`` merges ``b-<v>`` ``--no-ff``, the merge setting ``approved``, signed with
    ``key``."""

    def act(lab: Lab, v: str) -> None:
        lab.git("merge", "-q", "--no-ff", "--no-commit", f"b-{v}", who=who)
        lab.set_status(v, "approved")
        lab.git("add", "-A")
        signing = [*_key(lab, key), "commit", "-S"] if key else ["commit"]
        lab.git(*signing, "-q", "-m", f"merge b-{v}: approve {v}", who=who)

    return act


none = None
CO_A = "Co-authored-by: Alice <alice@example.com>"
CO_B = "Co-authored-by: Bob <bob@example.com>"
CO_M = "Co-authored-by: Mallory <mallory@example.com>"


def co(trailer: str) -> str:
    return "agent: plan {v}\n\n" + trailer + "\n"


# vid -> (want, slug of the plan judged, kind, acts per round)
VARIANTS: dict[str, tuple[tuple[int, set[str]], str, str, list[Act | None]]] = {
    # Co-authored-by on the plan's writing: Alice is a writer
    "castd": (PEND, "{v}", "approve", [write(msg=co(CO_A)), approve(ALICE)]),
    "caup": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("CO-AUTHORED-BY: ALICE <ALICE@EXAMPLE.COM>")), approve(ALICE)],
    ),
    "canosp": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by:Alice<alice@example.com>")), approve(ALICE)],
    ),
    "cabare": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: alice@example.com")), approve(ALICE)],
    ),
    "casubj": (PEND, "{v}", "approve", [write(msg="plan {v} " + CO_A), approve(ALICE)]),
    "cacmt": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <alice(work)@example.com>")), approve(ALICE)],
    ),
    "cafw": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <\uff41lice@example.com>")), approve(ALICE)],
    ),
    "cadot": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <alice@example.com.>")), approve(ALICE)],
    ),
    "caquote": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co('Co-authored-by: Alice <"alice"@example.com>')), approve(ALICE)],
    ),
    "caquoted": (
        PEND,
        "{v}",
        "approve",
        [write(msg="agent: plan {v}\n\nas agreed:\n> " + CO_A + "\n\nthanks\n"), approve(ALICE)],
    ),
    "caedit": (PEND, "{v}", "approve", [write(), edit(msg="edit {v}\n\n" + CO_A), approve(ALICE)]),
    "cav1": (PEND, "{v}", "approve", [write(msg=co(CO_A)), edit(), approve(ALICE)]),
    "camerge": (
        PEND,
        "{v}",
        "approve",
        [on_branch(AGENT, BOB, write(msg=co(CO_A))), approve(ALICE)],
    ),
    "caindent": (PEND, "{v}", "approve", [write(msg=co("    " + CO_A)), approve(ALICE)]),
    "catab": (PEND, "{v}", "approve", [write(msg=co("\t" + CO_A)), approve(ALICE)]),
    "cabullet": (PEND, "{v}", "approve", [write(msg=co("- " + CO_A)), approve(ALICE)]),
    "cainline": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("paired with Alice. " + CO_A)), approve(ALICE)],
    ),
    "camid": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co(CO_A + "\n\nmore text after the credit")), approve(ALICE)],
    ),
    "casqgh": (
        PEND,
        "{v}",
        "approve",
        [squash(BOB, "plan {v} (#3)\n\n* agent: plan {v}\n\n" + CO_A + "\n"), approve(ALICE)],
    ),
    "cacrlf": (PEND, "{v}", "approve", [write(msg=co(CO_A + "\r")), approve(ALICE)]),
    # a co-author is an author: her withdrawal binds
    "wdco": (
        REJ,
        "{v}",
        "approve",
        [write(msg=co(CO_M)), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "wdcosubj": (
        REJ,
        "{v}",
        "approve",
        [write(msg="plan {v} " + CO_M), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "wdcoquo": (
        REJ,
        "{v}",
        "approve",
        [
            write(msg="agent: plan {v}\n\n> " + CO_M + "\n"),
            status(MALLORY, "rejected"),
            approve(BOB),
        ],
    ),
    "wdcoind": (
        REJ,
        "{v}",
        "approve",
        [write(msg=co("  " + CO_M)), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "wdM": (RUN, "{v}", "approve", [write(), status(MALLORY, "rejected"), approve(BOB)]),
    "wdB": (REJ, "{v}", "approve", [write(), status(BOB, "rejected"), approve(CAROL)]),
    "gabco": (
        GABORT,
        "{v}",
        "gate",
        [write("gate", msg=co(CO_M)), approve(ALICE), status(MALLORY, "aborted"), approve(BOB)],
    ),
    "gabcosubj": (
        GABORT,
        "{v}",
        "gate",
        [
            write("gate", msg="plan {v} " + CO_M),
            approve(ALICE),
            status(MALLORY, "aborted"),
            approve(BOB),
        ],
    ),
    # nested plans: the pinned child's co-author wrote part of the parent
    "nestok": (RUN, "{v}", "nest", [nest(), approve(ALICE)]),
    "nestA": (PEND, "{v}", "nest", [nest(who=ALICE), approve(ALICE)]),
    "nestco": (PEND, "{v}", "nest", [nest(msg=co(CO_A)), approve(ALICE)]),
    "nestcosubj": (PEND, "{v}", "nest", [nest(msg="child {v} " + CO_A), approve(ALICE)]),
    "nestcoquo": (PEND, "{v}", "nest", [nest(msg="child {v}\n\n> " + CO_A + "\n"), approve(ALICE)]),
    # more withdrawals and gates carried
    "wdcomerge": (
        REJ,
        "{v}",
        "approve",
        [on_branch(AGENT, BOB, write(msg=co(CO_M))), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "gmergeM": (
        GWAIT,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), on_branch(BOB, MALLORY, approve(BOB))],
    ),
    "gmergeC": (
        GRUN,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), on_branch(BOB, CAROL, approve(BOB))],
    ),
    "qcoauth": (
        PEND,
        "{v}",
        "approve",
        [write("quorum", msg=co(CO_B)), approve(ALICE), approve(BOB)],
    ),
    "qcosubj": (
        PEND,
        "{v}",
        "approve",
        [write("quorum", msg="plan {v} " + CO_B), approve(ALICE), approve(BOB)],
    ),
    "qmergeAg": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), on_branch(ALICE, AGENT, approve(ALICE)), approve(BOB)],
    ),
    # a vote judged again after its voter wrote into the folder
    "qnote": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), approve(BOB), note(BOB), approve(CAROL)],
    ),
    "qnoteA": (
        RUN,
        "{v}",
        "approve",
        [write("quorum"), approve(BOB), note(ALICE), approve(CAROL)],
    ),
    "qvoid": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), approve(ALICE), edit(kind="quorum"), approve(BOB)],
    ),
    "qvoidA": (
        PEND,
        "{v}",
        "approve",
        [
            write("quorum"),
            approve(ALICE),
            edit(who=ALICE, kind="quorum"),
            approve(BOB),
            approve(ALICE),
        ],
    ),
    "gnote": (GWAIT, "{v}", "gate", [write("gate"), approve(ALICE), note(BOB), approve(BOB)]),
    "gnoteC": (GRUN, "{v}", "gate", [write("gate"), approve(ALICE), note(BOB), approve(CAROL)]),
    "gcoA": (GWAIT, "{v}", "gate", [write("gate", msg=co(CO_A)), approve(BOB), approve(ALICE)]),
    "gabB": (
        GABORT,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), status(BOB, "aborted"), approve(CAROL)],
    ),
    "wdrev": (
        REJ,
        "{v}",
        "approve",
        [write(), status(BOB, "rejected"), revert_last(AGENT), approve(ALICE)],
    ),
    # require_signed (a lab of its own): Plan-Approved trailers inside a merged branch
    "sgok": (RUN, "{v}", "approve", [write(), sg_approve(ALICE, "alice")]),
    "sgnosign": (PEND, "{v}", "approve", [write(), sg_approve(ALICE, None)]),
    "sgmal": (PEND, "{v}", "approve", [write(), sg_approve(ALICE, "mallory")]),
    "sgtrok": (
        RUN,
        "{v}",
        "approve",
        [write("quorum"), trailer(ALICE, "alice"), sg_merge(BOB, "bob")],
    ),
    "sgtrunsigned": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), trailer(ALICE, None), sg_merge(BOB, "bob")],
    ),
    "sgtrmalkey": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), trailer(ALICE, "mallory"), sg_merge(BOB, "bob")],
    ),
    "sgtrbobkey": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), trailer(ALICE, "bob"), sg_merge(BOB, "bob")],
    ),
    "sgtrtwice": (
        PEND,
        "{v}",
        "approve",
        [
            write("quorum"),
            trailer(ALICE, "alice"),
            trailer(ALICE, "alice"),
            sg_merge(ALICE, "alice"),
        ],
    ),
    "sgtrwriter": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), on_b(note(ALICE)), trailer(ALICE, "alice"), sg_merge(BOB, "bob")],
    ),
    "sgtrco": (
        PEND,
        "{v}",
        "approve",
        [write("quorum", msg=co(CO_A)), trailer(ALICE, "alice"), sg_merge(BOB, "bob")],
    ),
    "sgtrmerger": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), trailer(ALICE, "alice"), sg_merge(BOB, None)],
    ),
    "sgtrold": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), trailer(ALICE, "alice"), edit(kind="quorum"), sg_merge(BOB, "bob")],
    ),
    "sgtrcarol": (
        RUN,
        "{v}",
        "approve",
        [write("quorum"), trailer(CAROL, "carol"), sg_merge(BOB, "bob")],
    ),
    "sgtrcoA": (
        RUN,
        "{v}",
        "approve",
        [write("quorum"), trailer(MALLORY, "alice"), sg_merge(BOB, "bob")],
    ),
    # identity_aliases (a lab of its own): plus_tags ["*@example.com"], people [[alice@example.com,
    # a.smith@corp.example]]
    "alplus": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", "alice+bot@example.com")), approve(ALICE)],
    ),
    "alpeople": (
        PEND,
        "{v}",
        "approve",
        [write(who=("A. Smith", "a.smith@corp.example")), approve(ALICE)],
    ),
    "alcoplus": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <alice+pair@example.com>")), approve(ALICE)],
    ),
    "alcopeople": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: A. Smith <A.Smith@corp.example>")), approve(ALICE)],
    ),
    "alq": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), approve(ALICE), approve(("Alice", "alice+second@example.com"))],
    ),
    "alqok": (RUN, "{v}", "approve", [write("quorum"), approve(ALICE), approve(BOB)]),
    "algate": (
        GWAIT,
        "{v}",
        "gate",
        [write("gate", who=("Bob", "bob+draft@example.com")), approve(ALICE), approve(BOB)],
    ),
    "alwd": (
        REJ,
        "{v}",
        "approve",
        [
            write(msg=co("Co-authored-by: M <mallory+x@example.com>")),
            status(MALLORY, "rejected"),
            approve(BOB),
        ],
    ),
    "alsubj": (
        PEND,
        "{v}",
        "approve",
        [write(msg="plan {v} Co-authored-by: A. Smith <a.smith@corp.example>"), approve(ALICE)],
    ),
    # identity: committer (a lab of its own)
    "cmA": (RUN, "{v}", "approve", [write(), approve_as(MALLORY, ALICE)]),
    "cmM": (PEND, "{v}", "approve", [write(), approve_as(ALICE, MALLORY)]),
    "cmwrC": (PEND, "{v}", "approve", [write_as(AGENT, ALICE), approve(ALICE)]),
    "cmwrA": (PEND, "{v}", "approve", [write_as(ALICE, AGENT), approve(ALICE)]),
    "cmco": (PEND, "{v}", "approve", [write(msg=co(CO_A)), approve(ALICE)]),
    "cmgate": (GWAIT, "{v}", "gate", [write("gate"), approve(ALICE), approve_as(BOB, MALLORY)]),
    "cmgateok": (GRUN, "{v}", "gate", [write("gate"), approve(ALICE), approve_as(MALLORY, BOB)]),
    "cmq": (PEND, "{v}", "approve", [write("quorum"), approve(ALICE), approve_as(BOB, ALICE)]),
    "cmqok": (RUN, "{v}", "approve", [write("quorum"), approve(ALICE), approve_as(ALICE, BOB)]),
    "cmmergeM": (PEND, "{v}", "approve", [write(), on_branch(ALICE, MALLORY, approve(ALICE))]),
    "cmwdC": (
        REJ,
        "{v}",
        "approve",
        [write_as(MALLORY, AGENT), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "casq": (
        PEND,
        "{v}",
        "approve",
        [squash(BOB, "plan {v} (#1)\n\n" + CO_A + "\n"), approve(ALICE)],
    ),
    "sqB": (PEND, "{v}", "approve", [squash(BOB, "plan {v} (#2)\n"), approve(BOB)]),
    "sob": (
        RUN,
        "{v}",
        "approve",
        [write(msg=co("Signed-off-by: Alice <alice@example.com>")), approve(ALICE)],
    ),
    "rvb": (
        RUN,
        "{v}",
        "approve",
        [write(msg=co("Reviewed-by: Alice <alice@example.com>")), approve(ALICE)],
    ),
    "canbsp": (PEND, "{v}", "approve", [write(msg=co("\u00a0" + CO_A)), approve(ALICE)]),
    "cazw": (PEND, "{v}", "approve", [write(msg=co("\u200b" + CO_A)), approve(ALICE)]),
    "caonlyaddr": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: <alice@example.com>")), approve(ALICE)],
    ),
    "caparen": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: alice@example.com (Alice)")), approve(ALICE)],
    ),
    "cawsval": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by:\tAlice\t<alice@example.com>")), approve(ALICE)],
    ),
    # undos: a writer of any version of the plan may not approve a later one
    "revA": (
        PEND,
        "{v}",
        "approve",
        [write(), edit(who=ALICE), restore_v1(AGENT), approve(ALICE)],
    ),
    "revA2": (PEND, "{v}", "approve", [write(), edit(), restore_v1(ALICE), approve(ALICE)]),
    "revB": (RUN, "{v}", "approve", [write(), edit(who=ALICE), restore_v1(AGENT), approve(BOB)]),
    # a note in the approval commit itself
    "apnoteself": (PEND, "{v}", "approve", [write(), note_and(ALICE, "approved")]),
    "gnoteself": (
        GWAIT,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), note_and(BOB, "approved")],
    ),
    # a co-author credited in a squash message may withdraw
    "wdsq": (
        REJ,
        "{v}",
        "approve",
        [
            squash(BOB, "plan {v} (#4)\n\n" + CO_M + "\n"),
            status(MALLORY, "rejected"),
            approve(CAROL),
        ],
    ),
    # Alice wrote the plan under another spelling of her address, approves as herself
    "spnbsp": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", "alice@example.com\u00a0")), approve(ALICE)],
    ),
    "spzw": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", "\u200balice@example.com")), approve(ALICE)],
    ),
    "spidn": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", "alice@example\u3002com")), approve(ALICE)],
    ),
    "sproute": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", "@relay.example:alice@example.com")), approve(ALICE)],
    ),
    "spqpair": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", '"al\\ice"@example.com')), approve(ALICE)],
    ),
    "spfold": (
        PEND,
        "{v}",
        "approve",
        [write(who=("Alice", "alice@ example.com")), approve(ALICE)],
    ),
    "spcmtr": (
        PEND,
        "{v}",
        "approve",
        [write_as(AGENT, ("Alice", "Alice@Example.Com")), approve(ALICE)],
    ),
    "spco": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <alice@example.com\u00a0>")), approve(ALICE)],
    ),
    "spcozw": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <al\u200bice@example.com>")), approve(ALICE)],
    ),
    "spcoidn": (
        PEND,
        "{v}",
        "approve",
        [write(msg=co("Co-authored-by: Alice <alice@example\uff0ecom>")), approve(ALICE)],
    ),
    # resumes of a failed run (action 2 fails every time)
    "rsB": (RRUN, "{v}", "resume", [write("resume"), approve(ALICE), approve(BOB)]),
    "rsAg": (RWAIT, "{v}", "resume", [write("resume"), approve(ALICE), approve(AGENT)]),
    "rsM": (RWAIT, "{v}", "resume", [write("resume"), approve(ALICE), approve(MALLORY)]),
    "rscoM": (
        RWAIT,
        "{v}",
        "resume",
        [write("resume"), approve(ALICE), approve(MALLORY, "resume {v}\n\n" + CO_B)],
    ),
    "rswr": (
        RWAIT,
        "{v}",
        "resume",
        [write("resume"), edit(who=BOB, kind="resume"), approve(ALICE), approve(BOB)],
    ),
    "rscowr": (
        RWAIT,
        "{v}",
        "resume",
        [write("resume", msg=co(CO_B)), approve(ALICE), approve(BOB)],
    ),
    "rsnote": (RWAIT, "{v}", "resume", [write("resume"), approve(ALICE), note(BOB), approve(BOB)]),
    "rsabA": (
        RABORT,
        "{v}",
        "resume",
        [write("resume"), approve(ALICE), status(AGENT, "aborted"), approve(BOB)],
    ),
    "rsabM": (
        RRUN,
        "{v}",
        "resume",
        [write("resume"), approve(ALICE), status(MALLORY, "aborted"), approve(BOB)],
    ),
    "rsabco": (
        RABORT,
        "{v}",
        "resume",
        [write("resume", msg=co(CO_M)), approve(ALICE), status(MALLORY, "aborted"), approve(BOB)],
    ),
    "rsmergeM": (
        RWAIT,
        "{v}",
        "resume",
        [write("resume"), approve(ALICE), on_branch(BOB, MALLORY, approve(BOB))],
    ),
    # a co-author credited on v1 or v2 only may withdraw v2
    "wdcov1": (
        REJ,
        "{v}",
        "approve",
        [write(msg=co(CO_M)), edit(), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "wdcov2": (
        REJ,
        "{v}",
        "approve",
        [write(), edit(msg="edit {v}\n\n" + CO_M), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "gcomerge": (
        GWAIT,
        "{v}",
        "gate",
        [on_branch(AGENT, CAROL, write("gate", msg=co(CO_B))), approve(ALICE), approve(BOB)],
    ),
    # Co-authored-by on an approval commit
    "apcoM": (PEND, "{v}", "approve", [write(), approve(MALLORY, "approve {v}\n\n" + CO_A)]),
    "apcoB": (RUN, "{v}", "approve", [write(), approve(BOB, "approve {v}\n\n" + CO_A)]),
    # quorum: two distinct people
    "qok": (RUN, "{v}", "approve", [write("quorum"), approve(ALICE), approve(BOB)]),
    "qcase": (PEND, "{v}", "approve", [write("quorum"), approve(ALICE), approve(ALICE_UP)]),
    "qfw": (PEND, "{v}", "approve", [write("quorum"), approve(ALICE), approve(ALICE_FW)]),
    "qcmt": (PEND, "{v}", "approve", [write("quorum"), approve(ALICE), approve(ALICE_CMT)]),
    "qquo": (PEND, "{v}", "approve", [write("quorum"), approve(ALICE), approve(ALICE_QUO)]),
    "qcoM": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), approve(ALICE), approve(MALLORY, "approve {v}\n\n" + CO_B)],
    ),
    "qmergeBB": (
        PEND,
        "{v}",
        "approve",
        [write("quorum"), on_branch(ALICE, BOB, approve(ALICE)), approve(BOB)],
    ),
    "qmergeBA": (
        RUN,
        "{v}",
        "approve",
        [write("quorum"), on_branch(ALICE, BOB, approve(ALICE)), approve(ALICE)],
    ),
    # gates: the want counts the gated action's calls
    "gok": (GRUN, "{v}", "gate", [write("gate"), approve(ALICE), approve(BOB)]),
    "gsame": (GRUN, "{v}", "gate", [write("gate"), approve(ALICE), approve(ALICE)]),
    "gagent": (GWAIT, "{v}", "gate", [write("gate"), approve(ALICE), approve(AGENT)]),
    "gmal": (GWAIT, "{v}", "gate", [write("gate"), approve(ALICE), approve(MALLORY)]),
    "gcoM": (
        GWAIT,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), approve(MALLORY, "approve gate {v}\n\n" + CO_B)],
    ),
    "gwriter": (
        GWAIT,
        "{v}",
        "gate",
        [write("gate"), edit(who=BOB, kind="gate"), approve(ALICE), approve(BOB)],
    ),
    "gcowriter": (
        GWAIT,
        "{v}",
        "gate",
        [write("gate", msg=co(CO_B)), approve(ALICE), approve(BOB_UP)],
    ),
    "gabM": (
        GRUN,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), status(MALLORY, "aborted"), approve(BOB)],
    ),
    "grjM": (
        GRUN,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), status(MALLORY, "rejected"), approve(BOB)],
    ),
    "gabA": (
        GABORT,
        "{v}",
        "gate",
        [write("gate"), approve(ALICE), status(AGENT, "aborted"), approve(ALICE)],
    ),
    # moves and copies by an approver
    "mvA": (RUN, "{v}-o", "approve", [write(), move(ALICE), approve(ALICE, slug="{v}-o")]),
    "cpA": (PEND, "{v}-o", "approve", [write(), copy(ALICE), approve(ALICE, slug="{v}-o")]),
}
VIDS = list(VARIANTS)


def _tag(v: str) -> str:
    """The tag whose ``rec`` calls the variant counts: the gated action's for a gate."""
    _want, _slug, kind, _ = VARIANTS[v]
    return v + {"gate": "g", "nest": "c", "resume": "f"}.get(kind, "")


def _play(lab: Lab, vids: list[str]) -> dict[str, Any]:
    got: dict[str, Any] = {"passes": []}
    rounds = max(len(VARIANTS[v][3]) for v in vids)
    t0 = time.time()
    for rnd in range(rounds):
        for v in vids:
            acts = VARIANTS[v][3]
            if rnd < len(acts) and acts[rnd] is not None:
                acts[rnd](lab, v)  # type: ignore[misc]
                lab.git("checkout", "-q", "main")
        if getattr(lab, "signed", False):  # the controller signs its commits
            lab.extra_env = {  # type: ignore[attr-defined]
                "GIT_CONFIG_COUNT": "3",
                "GIT_CONFIG_KEY_0": "gpg.format",
                "GIT_CONFIG_VALUE_0": "ssh",
                "GIT_CONFIG_KEY_1": "user.signingKey",
                "GIT_CONFIG_VALUE_1": str(lab.root / "keys" / "bot"),
                "GIT_CONFIG_KEY_2": "commit.gpgSign",
                "GIT_CONFIG_VALUE_2": "true",
            }
        try:
            res = lab.run(check=False)
        finally:
            lab.extra_env = {}  # type: ignore[attr-defined]
        got["passes"].append((rnd, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))
        got.setdefault("times", []).append((lab.root.name, rnd, round(time.time() - t0, 1)))
    got["rows"] = lab.rows()
    got["ran"] = {v: len(lab.calls(_tag(v))) for v in vids}
    got["clone"] = clone_audit_got(lab, lab.root)
    got["times"].append((lab.root.name, "end", round(time.time() - t0, 1)))
    (lab.root.parent / f"times-{lab.root.name}.json").write_text(json.dumps(got["times"]))
    return got


ALIASES = (
    "  identity_aliases:\n"
    '    plus_tags: ["*@example.com"]\n'
    "    people: [[alice@example.com, a.smith@corp.example]]\n"
)


def _build_one(
    root: Path, vids: list[str], identity: str = "author", extra: str = ""
) -> dict[str, Any]:
    lab = Lab(root)
    _config(lab, identity, extra)
    return _play(lab, vids)


def _build_signed(root: Path, vids: list[str]) -> dict[str, Any]:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ring = {n: make_key(keys, n) for n in ["alice", "bob", "carol", "mallory", "bot"]}
    signers = root / "allowed_signers"
    signers.write_text(
        f"plangate@localhost {ring['bot']}\nalice@example.com {ring['alice']}\n"
        f"bob@example.com {ring['bob']}\ncarol@example.com {ring['carol']}\n"
    )
    _config(lab, signed=f"  require_signed: true\n  allowed_signers: {signers}\n")
    lab.signed = True  # type: ignore[attr-defined]
    return _play(lab, vids)


def _build(root: Path) -> Lab:
    plain = [v for v in VIDS if not v.startswith(("cm", "sg", "al"))]
    halves = {"a": plain[0::3], "b": plain[1::3], "d": plain[2::3]}
    builders: dict[str, Callable[[Path], Any]] = {
        k: functools.partial(_build_one, vids=vs) for k, vs in halves.items()
    }
    cm = [v for v in VIDS if v.startswith("cm")]
    builders["c"] = functools.partial(_build_one, vids=cm, identity="committer")
    sg = [v for v in VIDS if v.startswith("sg")]
    builders["s"] = functools.partial(_build_signed, vids=sg)
    al = [v for v in VIDS if v.startswith("al")]
    builders["l"] = functools.partial(_build_one, vids=al, extra=ALIASES)
    labs = build_all(root, builders, workers=6)
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
    return shared(tmp_path_factory, "r128-approve-atk128a", _build)


KINDS = ("", ":status", ":audit")
IDS = [f"{v}{k}" for v in VIDS for k in KINDS] + ["passes"]
# coauthor-credit-read-only-at-line-start: fixed (fix129a), no id of it is marked any more.
_BROKE: dict[str, tuple[list[str], str]] = {}
BROKEN: dict[str, Any] = {
    f"{v}{k}": xfail(cls, why) for cls, (vids, why) in _BROKE.items() for v in vids for k in KINDS
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round128_atk128a(lab: Any, vid: str) -> None:
    got = lab.got
    if vid == "passes":
        bad = [p for p in got["passes"] if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    (want_runs, want_status), slug, vkind, _acts = VARIANTS[v]
    plan = "plans/" + slug.format(v=v)
    row = got["rows"].get(plan, {})
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
    elif kind == "audit":
        execs = got["clone"]["report"].get("executions", [])
        ak = {"gate": "gate", "resume": "resume"}.get(vkind, "approve")
        valid = [
            e
            for e in execs
            if e.get("plan") == plan and e.get("approval_valid") and e.get("approval_kind") == ak
        ]
        want_valid = want_runs - 1 if vkind == "resume" else want_runs
        assert len(valid) == want_valid, (valid, brief(row, 5))
    else:
        assert got["ran"][v] == want_runs, (got["ran"][v], brief(row, 5))
