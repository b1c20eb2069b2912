"""Round 121, approval side (atk121a): POLICY (quorum, groups, risk), AUTHORS, IDENTITY
VARIANTS, BATCHES, GATES, POLICY CHANGES MID-VOTE, and whether ``plangate check --as``, the
status rows and the fresh-clone ``plangate audit --json`` (no config) agree with the
controller.

Labs (local mode, ``run --once`` passes, the recording tool ``rec``; approvers
``alice@``, ``bob@``, ``carol@example.com``; ``identity_aliases: {plus_tags: ["*@example.com"]}``;
groups ``ops: [alice, bob]``, ``sec: [alice, carol]``, so Alice is in both; rules, first
match decides: ``risk: high`` needs 1 ops + 1 sec, ``tools: [big]`` needs 2 ops + 1 sec,
``paths: plans/q*/**`` needs 2; tools ``hi`` (high), ``big`` (medium), ``mid`` (medium, made
high by a config change), ``hi2`` (high, lowered to medium); the agent writes the plans,
Mallory and Dave are no approvers, the forge is ``GitHub <noreply@github.com>``):

- Lab A (``identity: author``, 77 variants + 15 ``check`` pull requests merged ``--no-ff``
  + 3 landed by a fast-forward), played in passes A (write, freeze), B, C, D, E (votes,
  edits, replays), P (five PR branches, one per merger,
  each checked with ``plangate check --as <merger> --format json`` and then merged
  ``--no-ff`` by that merger; then one PR of three votes checked ``--as bob`` and landed
  with ``git merge --ff-only``, judged by check's ``fast_forward``), F1 (config change:
  Carol out of the approvers, Dave in, ``sec`` becomes Carol and Dave so Alice leaves it,
  ``mid`` high, ``hi2`` medium; the controller records its policy) and F2 (votes after
  it). Then a fresh clone's ``plangate audit --json`` with no config.
  - risk: a high tool as the action (``rhi``), a fallback step (``rfb``), the second action of
    a ``needs`` graph (``rneeds``), an ``on_failure: ask`` action (``rask``), a gated action
    (``rgate``), in a pinned library (``rnest``) or the library's fallback (``rnestfb``);
    Alice's single approval. A frozen medium plan edited to add a high action (``redit``); a
    high plan's param edited after Alice's vote (``reditv``); edited down to medium
    (``rdown``, control); Alice's approval commit deleting the pinned library
    (``rnestdel``) or rewriting it to a high one (``rnestsw``); the agent writing
    ``frozen.risk: low`` and a one-entry ``frozen.policy`` (``rfrz``); a tool made high
    between freeze and approval (``pmid``) or lowered mid-vote (``phi2``, control).
  - one person, two groups, many spellings: Alice then Alice again, ``ALICE@Example.COM``,
    ``alice+ops@``, fullwidth ``ａlice`` (``gaa``, ``gacase``, ``gaplus``, ``gafw``); Bob then
    ``bob+second@`` (``gbb``); Carol alone (``gcc``); Alice's unsigned approval inside Bob's
    branch merged by Bob (``gab1``); controls ``gac``, ``gbc``, ``gcase2``. ``big``: all six
    orders of Alice, Bob, Carol (the matching must put Alice in sec), every pair, a pinned
    ``big`` library and a ``big`` fallback with two votes, and Carol's vote written by the
    agent into the controller's ``partial`` block followed by Bob again (``bfake``).
  - quorum (``plans/q*``): split across a branch (``qsplit``), Alice again via Mallory's
    merge (``qsame``), Mallory's vote merged by Mallory (``qmal``), the partial commit undone
    by the agent (``qrev`` then Bob, ``qrev2`` alone), authors (``qauth`` Alice edited;
    ``qauthp``/``qauthc`` edited under one spelling, voted under another; ``qcoa``/``qcoa2``
    ``Co-authored-by: Alice`` in two spellings; ``qcmt`` the agent's patch committed by
    Alice; ``qprod`` Bob wrote v1, the agent v2 then v1 again), A-B-A edit after Bob's vote
    (``qaba``), Bob's vote squash-merged by Mallory (``qsq``), Bob's vote rebase-merged by the
    forge (``qforge``, counts as Bob's under ``identity: author``), two approvals in one push
    with a ``pending_approval`` between (``qpush``: documented lapse; ``qpushm``).
  - a plan and its approval in one commit (Bob, ``one``, ``oneq``); one commit by Alice
    approving seven plans: two fine, one edited in that commit, one high, one invalid, one
    she wrote, and two byte copies of one version (``mok1``, ``mok2``, ``mbad``, ``mhi``,
    ``minv``, ``mself``, ``mdup``).
  - gates answered by the author agent, Mallory, the plan's writer Carol, Alice then Alice
    again after completion, Bob, Alice (``gtag``, ``gtmal``, ``gtself``, ``gttw``, ``gtbob``,
    ``gtalice``); a first gate's answer put back by the agent at the second gate (``gtrep``).
  - policy mid-vote: Carol votes, Carol removed, Alice votes (``pdrop``); Dave's refused
    vote, Dave added, Alice votes (``padd``); control ``pkeep``; a high plan Alice voted
    on, Alice then out of ``sec``, Bob votes (``pgrp``) or Dave, new in ``sec``, votes
    (``pgrp2``, control: the fresh-clone audit judges it by the new recorded policy).
  - fast-forward PR (``FFS``): on high plans, Bob's vote after Alice's (``ffhi``), Mallory's
    commit after Alice's (``ffmal``: a merge by Bob would start it, the fast-forward
    refuses), Alice's commit after Bob's vote (``ffpair``: a merge by Bob is ``partial``,
    the fast-forward starts it).
  - ``check`` PRs: see ``CHECKS`` (Alice's vote on a high plan; Bob completing one; Carol
    completing a ``big`` quorum; Alice twice; the agent's status merged by Bob; an edit and
    approval in one commit; a pinned library rewritten to high; ``alice+ops@`` after Alice;
    the agent answering a gate merged by Mallory; ``alice+ops@`` merged by ``ALICE@``; a
    writer's vote; a new plan already approved; Carol's unsigned vote merged by Mallory;
    and Mallory's PR that rewrites ``.plangate/policy.json`` making her an approver in every
    group with no rules, then approves, ``ckmal16``).
- Lab B (``identity: committer``, 7 variants): the agent's patch committed by Alice,
  Alice's vote committed by Mallory, Mallory's commit committed by Alice, the forge's
  rebase of Bob's vote, a high plan voted twice by Alice's commits with other authors, Bob's
  authorship committed by Alice.

Ids (419; 102 variants: 77 + 15 ``check`` PRs + 3 fast-forwarded + 7): ``<vid>``
(``rec``/``hi`` calls of the tag), ``<vid>:audit`` (valid first approvals in the fresh-clone
audit equal the runs wanted),
``<vid>:agree`` (the audit's valid starts, gates included, equal the controller's ``start``
commits), ``<vid>:who`` (a run's recorded ``approvals``: distinct people after NFKC, case and
``+tag`` folding, as many as the rule needs, none its writer), ``<vid>:gate``/``:second``/
``:third``/``:lib`` (the gated, ``needs``/``ask`` second, second-gate and pinned library
steps), ``ck:<k>`` (the prediction is the documented outcome), ``ck:<k>:agree`` (``start``
predicted exactly when the controller started it on the merge), ``ck:<k>:audit``,
``<vid>:row`` (the final ``status --json`` row says ``completed`` exactly where every step
was to run), ``ck:ckmal16:flag`` (Mallory's policy rewrite flagged ``policy-changed``),
``ff:<vid>`` (check's fast-forward prediction is the documented outcome), ``ff:<vid>:agree``,
``ff:<vid>:ran``, ``ff:<vid>:audit``, ``cm:<vid>``, ``cm:<vid>:audit``, ``passes`` (every
pass exited 0 with no traceback).

Seen (round 121: 419 ids, 419 passed, 0 xfailed; about 100-120 s wall alone with -n 1 on a
loaded machine, load average 14-16), no class broke: the defences held in every variant.

What held: risk is the highest of every tool the plan can call (actions, fallback steps,
``needs`` graphs, ``ask`` actions, gated actions, pinned libraries and their fallbacks), read
from the version the controller decides, never from the author's ``frozen:`` block; a
content edit refreezes and voids votes (an A-B-A edit back to the voted bytes voids them
too); a tool's risk raised between freeze and approval is applied (``pmid``: ``1 from
sec``); a pinned library deleted or rewritten in the approving commit is refused
(``E_PLAN_NOT_FROZEN``); one person counts once whatever the spelling (case, ``+tag``,
fullwidth), and the group matching finds the assignment for every order of three votes
(Alice placed in sec or ops as needed), refusing every pair that cannot fill ops×2 + sec×1;
votes injected into the controller's ``partial`` block count for nothing (flagged
``owned-block-changed``); authors include the editor under any spelling, ``Co-authored-by``
in any key case, the committer of an applied patch and the producer of an earlier identical
version (``E_SELF_APPROVAL``); unsigned votes inside merged branches are not counted, the
merger's merge is; Mallory's squash is Mallory's (``E_APPROVER_NOT_ALLOWED``); the forge's
rebase keeps Bob's authorship under ``identity: author`` and is the forge's under
``committer``; a status change lapses an approval (``qpush``, documented); an undone partial
commit is the agent's request (``E_APPROVER_NOT_ALLOWED``) and keeps Alice's vote; a batch
commit decides each plan on its own (edited: refused; invalid: ``E_ILLEGAL_TRANSITION``;
high: partial; hers: ``E_SELF_APPROVAL``; a second copy of one version:
``E_ALREADY_EXECUTED`` "started in the same pass"); gates refuse the author agent, Mallory and
the plan's writer, run once on Bob's or Alice's answer, ignore a second approval of a
completed plan, and a first gate's answer put back at the second gate is refused; a
removed approver's collected vote stops counting and a refused non-approver's vote is not
revived by adding him, and a voter who leaves a group no longer fills it; ``plangate
check --as`` predicted the controller's outcome for all
15 PRs (``partial``, ``start``, ``refuse`` with ``E_PLAN_NOT_FROZEN``,
``E_APPROVER_NOT_ALLOWED``, ``E_SELF_APPROVAL``), also with Mallory's rewritten
``.plangate/policy.json`` on the PR (not read; flagged ``policy-changed`` by the audit), and
its ``fast_forward`` prediction matched a ``--ff-only`` landing in all three ways; the
fresh-clone audit called valid exactly the starts and gate resumes the controller made,
before and after the recorded policy changed, in both labs.

Not tried: ``require_signed`` and signed ``Plan-Approved:`` trailers (so no vote inside a
merged branch could count), remote mode and the daemon, MCP, the web page,
``identity_aliases.people``, ``max_age``, ``allow_self_approval: true``, ``match.flows``,
octopus merges, a forged seal-shaped ``plangate: record policy`` (a documented limit),
votes carried by a move or a copy of a partially voted plan, resumes after ``failed``,
``plangate approve``'s own precheck, ``check`` without ``--as`` or under a stale CI config.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    MALLORY,
    BenchError,
    Lab,
    brief,
    build_all,
    clone_audit_got,
    plan_text,
)

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
ALICE_CASE = ("Alice", "ALICE@Example.COM")
ALICE_PLUS = ("Alice", "alice+ops@example.com")
ALICE_FW = ("Alice", "\uff41lice@example.com")
BOB_PLUS = ("Bob", "bob+second@example.com")
DAVE = ("Dave", "dave@example.com")
FORGE = ("GitHub", "noreply@github.com")


def _config(lab: Lab, approvers: list[str], later: bool = False, how: str = "author") -> None:
    """The lab's config; ``later``: the tool ``mid`` becomes high, ``hi2`` medium; ``how``:
    ``approval.identity``."""
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    sec = ["carol@example.com", "dave@example.com"] if later else APPROVERS[::2]
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        f"  approvers: {json.dumps(approvers)}\n"
        f"  identity: {how}\n"
        '  identity_aliases: {plus_tags: ["*@example.com"]}\n'
        "  groups:\n"
        '    ops: ["alice@example.com", "bob@example.com"]\n'
        f"    sec: {json.dumps(sec)}\n"
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
        "    - match: {tools: [big]}\n"
        "      require: [{group: ops, count: 2}, {group: sec, count: 1}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n'
        "      require: [{count: 2}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  hi: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        f"  lo: {{kind: exec, argv: {rec}, {env}, risk: low, idempotent: true}}\n"
        f"  big: {{kind: exec, argv: {rec}, {env}}}\n"
        f"  mid: {{kind: exec, argv: {rec}, {env}, risk: {'high' if later else 'medium'}}}\n"
        f"  hi2: {{kind: exec, argv: {rec}, {env}, risk: {'medium' if later else 'high'}}}\n"
        "  echo: {kind: echo}\n"
    )


APPROVERS = ["alice@example.com", "bob@example.com", "carol@example.com"]

HI_ACTION = """\
  - id: {n}
    tool: hi
    why: "the high-risk step"
    params:
      tag: "{tag}"
"""
GATE = """\
  - id: 2
    tool: rec
    why: "second, gated"
    requires_approval: true
    params:
      tag: "{tag}-2"
"""
PIN = """\
  - id: 2
    plan: {{path: plans/{lib}, hash: "{digest}"}}
    why: "the library"
"""


def _hi(tag: str, status: str = "pending_approval", tool: str = "hi") -> str:
    """A plan whose only action calls the high-risk tool (or ``tool``)."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: {status}\n'
        f"available_tools:\n  - name: {tool}\nactions:\n"
        + HI_ACTION.format(n=1, tag=tag).replace("tool: hi", f"tool: {tool}")
    )


def _fallback(tag: str, tool: str = "hi") -> str:
    """A medium action whose (never run) fallback step calls the high-risk tool."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        f"available_tools:\n  - name: rec\n  - name: {tool}\nactions:\n"
        "  - id: 1\n    tool: rec\n    why: w\n    on_failure: fallback\n"
        f'    params: {{tag: "{tag}"}}\n'
        f'    fallback:\n      - {{id: "1.1", tool: {tool}, why: undo, '
        f'params: {{tag: "{tag}-fb"}}}}\n'
    )


def _needs(tag: str) -> str:
    """A `needs` graph: action 2 (high) after action 1 (medium)."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: hi\nactions:\n"
        f'  - {{id: 1, tool: rec, why: a, needs: [], params: {{tag: "{tag}"}}}}\n'
        f'  - {{id: 2, tool: hi, why: b, needs: [1], params: {{tag: "{tag}-2"}}}}\n'
    )


def _ask(tag: str) -> str:
    """A high action under `on_failure: ask`, second in the plan."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: hi\nactions:\n"
        f'  - {{id: 1, tool: rec, why: a, params: {{tag: "{tag}"}}}}\n'
        f'  - {{id: 2, tool: hi, why: b, on_failure: ask, params: {{tag: "{tag}-2"}}}}\n'
    )


def _gate_hi(tag: str) -> str:
    """A high action behind a gate, second in the plan."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: hi\nactions:\n"
        f'  - {{id: 1, tool: rec, why: a, params: {{tag: "{tag}"}}}}\n'
        f"  - {{id: 2, tool: hi, why: b, requires_approval: true, "
        f'params: {{tag: "{tag}-2"}}}}\n'
    )


def _lib(tag: str, tool: str = "hi") -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "library {tag}"\n  status: draft\n'
        f"available_tools:\n  - name: {tool}\nactions:\n"
        f'  - {{id: 1, tool: {tool}, why: lib, params: {{tag: "{tag}"}}}}\n'
    )


#: vid -> rec/hi calls of its tag wanted at the end (the defence held)
WANT: dict[str, int] = {
    # -- risk: a high-risk tool anywhere needs ops + sec (two people); Alice alone ----------
    "rhi": 0,  # the action's tool is high; Alice alone approves
    "rhiab": 1,  # control: Alice, then Bob
    "rfb": 0,  # a medium action whose fallback step is high; Alice alone
    "rneeds": 0,  # a `needs` graph whose second action is high; Alice alone
    "rask": 0,  # a high action under `on_failure: ask`; Alice alone
    "rgate": 0,  # a high action behind a gate; Alice alone (and Alice's gate answer)
    "rnest": 0,  # a medium parent pinning a high library; Alice alone
    "rnestfb": 0,  # ... a library whose fallback step is high
    "redit": 0,  # frozen medium; the agent adds a high action (refreeze); Alice alone
    "reditv": 0,  # frozen high; Alice votes; the agent edits the param; Bob alone after
    "rdown": 1,  # control: frozen high, Alice votes; edited to medium; Bob approves
    "rlow": 1,  # control: a medium plan; Alice alone
    "rnestdel": 0,  # parent pins a medium library; Alice approves and deletes the library
    "rnestsw": 0,  # parent pins a medium lib; Alice's approval rewrites the lib to high
    "rfrz": 0,  # a high plan; the agent writes `frozen.risk: low` and a one-vote policy; Alice
    "pmid": 0,  # frozen while `mid` is medium; the config makes it high; Alice alone
    "phi2": 1,  # control: Alice votes while `hi2` is high; the config lowers it; Bob
    # -- one person, two groups, many spellings --------------------------------------------
    "gaa": 0,  # a high plan; Alice, then Alice again
    "gacase": 0,  # ... Alice, then ALICE@Example.COM
    "gaplus": 0,  # ... Alice, then alice+ops@example.com (plus_tags)
    "gafw": 0,  # ... Alice, then a fullwidth U+FF41 alice
    "gac": 1,  # control: Alice, then Carol
    "gbc": 1,  # control: Bob, then Carol
    "gbb": 0,  # Bob, then bob+second@ (two ops, no sec)
    "gcc": 0,  # Carol alone (sec, no ops)
    "gcase2": 1,  # control: ALICE@Example.COM, then Carol (normalised into her groups)
    "gab1": 0,  # Alice's unsigned approval inside Bob's branch, merged by Bob: Bob's vote only
    # -- `big` (medium): two from ops (alice, bob) and one from sec (alice, carol) -----------
    # every order of three votes; Alice must be placed where the quorum needs her
    "babc": 1,
    "bacb": 1,
    "bbac": 1,
    "bbca": 1,
    "bcab": 1,
    "bcba": 1,
    "bab": 0,  # Alice and Bob only (sec unmet without Alice in two entries)
    "bac": 0,  # Alice and Carol only (ops unmet)
    "bbc": 0,  # Bob and Carol only
    "bnest": 0,  # a medium parent pinning a `big` library; Alice and Bob
    "bfb": 0,  # a `big` fallback step; Alice and Bob
    # -- quorum (plans/q*: two approvals) ----------------------------------------------------
    "qsplit": 1,  # control: Alice on main, Bob's branch merged by Bob
    "qsame": 0,  # Alice on main, Alice again on a branch merged by Mallory
    "qmal": 0,  # Alice; Mallory's approval on her branch merged by Mallory
    "qrev": 1,  # Alice votes; the agent reverts the partial commit; Bob votes
    "qrev2": 0,  # Alice votes; the agent reverts the partial commit (nothing more)
    "qauth": 0,  # Alice edits the agent's plan (an author); Alice and Bob vote
    "qprod": 0,  # Bob wrote v1; the agent v2; the agent back to v1; Alice, Bob vote
    "qcoa": 0,  # the agent's edit names `Co-authored-by: Alice`; Alice and Bob vote
    "qcoa2": 0,  # ... `co-AUTHORED-by: Alice <ALICE@Example.COM>` mid-message
    "qcmt": 0,  # the agent's edit committed by Alice (author the agent); Alice and Bob vote
    "qauthp": 0,  # Alice edits as alice@; votes as alice+ops@; Bob votes
    "qauthc": 0,  # Alice edits as ALICE@Example.COM; votes as alice@; Bob votes
    # documented: Bob's `pending_approval` lapses Alice's approval ("a status change by
    # anyone makes the approval lapse"), so only Bob's vote counts
    "qpush": 0,  # one push: Alice approves; Bob sets pending_approval, then approved
    "qpushm": 0,  # one push: Alice approves; the agent sets pending_approval; Alice again
    "qaba": 0,  # Bob votes v1; the agent edits (v2), then reverts to v1; Alice votes
    "qsq": 0,  # Alice votes; Bob's vote on a branch squash-merged by Mallory
    "qforge": 1,  # Alice's vote rebase-merged by the forge (committer forge); Bob votes
    # -- a plan and its approval in one commit ----------------------------------------------
    "one": 1,  # Bob commits a new plan already `approved`; then Alice approves
    "oneq": 1,  # Bob commits a new plans/q plan `approved`; then Alice and Carol
    # -- many plans approved in one commit -----------------------------------------------------
    "mok1": 1,  # Alice approves mok1, mbad, mok2, mhi in one commit; mbad edited there
    "mbad": 0,
    "mok2": 1,
    "mhi": 0,  # a high plan in the batch: partial
    "minv": 0,  # an invalid plan (an undeclared tool) in the batch
    "mself": 0,  # a plan Alice wrote, in her batch
    "mdup": 1,  # mdup and mdup-2 are one version, both approved in one commit (runs once)
    # -- gates ---------------------------------------------------------------------------------
    "gtag": 1,  # Alice approves; the agent (author) answers the gate (tag-2 ran 0)
    "gtmal": 1,  # ... Mallory answers the gate
    "gttw": 1,  # ... Alice answers, then Alice approves the completed plan again
    "gtself": 1,  # Carol wrote it; Alice approves; Carol answers the gate
    "gtbob": 1,  # control: Alice approves; Bob answers the gate (tag-2 ran 1)
    "gtalice": 1,  # control: Alice approves; Alice answers the gate (ran 1)
    "gtrep": 1,  # two gates; Bob answers the first; the agent puts his answer back (replay)
    "bfake": 0,  # `big`: Alice, Bob; the agent writes Carol's vote into the partial block; Bob
    # -- the policy changes mid-vote (plans/q*) ------------------------------------------------
    "pdrop": 0,  # Carol votes; Carol is removed from approvers; Alice votes
    "padd": 0,  # Dave (no approver) votes; Dave added; Alice votes
    "pkeep": 1,  # control: Bob votes; Carol removed; Alice votes
    "pgrp": 0,  # a high plan; Alice votes; Alice leaves sec (config); Bob votes
    "pgrp2": 1,  # control: ... Dave (added, in sec) votes
}
VIDS = list(WANT)
#: gate plans: runs of `<vid>-2` wanted
GATES = {"gtag": 0, "gtmal": 0, "gttw": 1, "gtself": 0, "gtbob": 1, "gtalice": 1, "gtrep": 1}
#: `<vid>-3` runs wanted (a second gate)
THIRD = {"gtrep": 0}
GATE3 = """\
  - id: 3
    tool: rec
    why: "third, gated"
    requires_approval: true
    params:
      tag: "{tag}-3"
"""
#: the `<vid>-2` high steps wanted (rask, rgate, rneeds)
SECOND = {"rask": 0, "rgate": 0, "rneeds": 0}
#: the pinned library's tag wanted runs
LIBS = {"rnest": 0, "rnestfb": 0, "rnestdel": 0, "rnestsw": 0, "bnest": 0}
#: the three votes of each `big` plan, one a pass (B, C, D)
BIG = {
    "babc": "abc",
    "bacb": "acb",
    "bbac": "bac",
    "bbca": "bca",
    "bcab": "cab",
    "bcba": "cba",
    "bab": "ab",
    "bac": "ac",
    "bbc": "bc",
    "bnest": "ab",
    "bfb": "ab",
}


#: pull requests checked with `plangate check --as <merger>` then merged `--no-ff` by the
#: merger: key -> (plan slug, its writer's plan text kind, merger, start wanted; None: only
#: the agreement of the prediction with the controller is asserted)
CHECKS: dict[str, tuple[str, tuple[str, str], bool | None]] = {
    "ckhi1": ("ckhi1", ALICE, False),  # a high plan; Alice approves in the PR, merges
    "ckhi2": ("ckhi2", BOB, True),  # Alice voted on main; Bob approves in the PR, merges
    "ckbig3": ("ckbig3", CAROL, True),  # `big`: Alice, Bob voted; Carol approves, merges
    "qck4": ("qck4", ALICE, False),  # quorum: Alice voted; Alice again in the PR
    "qck5": ("qck5", BOB, None),  # quorum: Alice voted; the agent sets approved, Bob merges
    "ckself6": ("ckself6", ALICE, False),  # Alice edits a param and approves in one commit
    "cknest7": ("cknest7", ALICE, False),  # Alice approves and rewrites the pinned lib to hi
    "ckbig8": ("ckbig8", ALICE, False),  # `big`: Alice, Bob voted; alice+ops@ again
    "ckgate9": ("ckgate9", MALLORY, False),  # paused at its gate; the agent answers; Mallory
    "ckhi10": ("ckhi10", ALICE_CASE, False),  # alice+ops@ approves, ALICE@ merges
    "qck11": ("qck11", BOB, False),  # Bob wrote it; Alice voted; Bob approves in the PR
    "ckone12": ("ckone12", ALICE, False),  # a new plan added already approved by Alice
    "ckhi13": ("ckhi13", MALLORY, False),  # Alice voted; Carol's unsigned vote, Mallory merges
    "ckhi14": ("ckhi14", CAROL, True),  # Alice voted; Carol approves in the PR, merges
    # Alice voted; Mallory's PR rewrites .plangate/policy.json (Mallory an approver in sec,
    # no rules) and approves; Mallory merges
    "ckmal16": ("ckmal16", MALLORY, False),
}


#: one pull request landed by a FAST-FORWARD (its commits on the line): key -> (the voter of
#: its commit, start wanted); check's `fast_forward` prediction is judged (``--as bob``)
FFS: dict[str, tuple[tuple[str, str], bool]] = {
    "ffhi": (BOB, True),  # a high plan, Alice voted on main; Bob's commit on the PR
    "ffmal": (MALLORY, False),  # ... Mallory's commit on the PR
    "ffpair": (ALICE, True),  # a high plan, Bob voted on main; Alice's commit on the PR
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab, APPROVERS)
    lab.passes = []  # type: ignore[attr-defined]
    got: dict[str, Any] = {"took": {}, "checks": {}}

    def run(phase: str) -> None:
        t0 = time.time()
        out = lab.run(check=False)
        got["took"][phase] = round(time.time() - t0, 1)
        lab.passes.append((phase, out.returncode, "Traceback" in out.stderr, out.stderr[-600:]))  # type: ignore[attr-defined]

    def setst(slug: str, status: str, who: tuple[str, str], msg: str = "") -> str:
        lab.set_status(slug, status)
        return lab.commit(msg or f"{status} {slug}", who)

    # -- A: the plans ------------------------------------------------------------------------
    for v in ("rhi", "rhiab", "gaa", "gacase", "gaplus", "gafw", "gac", "gbc", "gbb", "gcc"):
        lab.write(v, _hi(v))
    lab.write("gab1", _hi("gab1"))
    lab.write("gcase2", _hi("gcase2"))
    lab.write("rfrz", _hi("rfrz"))
    lab.write("pmid", _hi("pmid", tool="mid"))
    lab.write("phi2", _hi("phi2", tool="hi2"))
    lab.write("pgrp", _hi("pgrp"))
    lab.write("pgrp2", _hi("pgrp2"))
    for v in BIG:
        if v not in ("bnest", "bfb"):
            lab.write(v, _hi(v, tool="big"))
    lab.write("bfb", _fallback("bfb", tool="big"))
    lab.write("bnest-lib", _lib("bnest-lib", "big"))
    lab.write("minv", plan_text("minv").replace("tool: rec", "tool: nosuch"))
    lab.write(
        "gtrep",
        plan_text("gtrep", extra_actions=GATE.format(tag="gtrep") + GATE3.format(tag="gtrep")),
    )
    lab.write("bfake", _hi("bfake", tool="big"))
    for v in ("ckhi1", "ckhi2", "ckhi10", "ckhi13", "ckhi14", "ckmal16", *FFS):
        lab.write(v, _hi(v))
    for v in ("ckbig3", "ckbig8"):
        lab.write(v, _hi(v, tool="big"))
    for v in ("qck4", "qck5", "ckself6"):
        lab.write(v, plan_text(v))
    lab.write("ckgate9", plan_text("ckgate9", extra_actions=GATE.format(tag="ckgate9")))
    lab.write("cknest7-lib", _lib("cknest7-lib", "rec"))
    lab.write("rfb", _fallback("rfb"))
    lab.write("rneeds", _needs("rneeds"))
    lab.write("rask", _ask("rask"))
    lab.write("rgate", _gate_hi("rgate"))
    for v in ("rlow", "redit", "mok1", "mbad", "mok2"):
        lab.write(v, plan_text(v))
    lab.write("mhi", _hi("mhi"))
    lab.write("mdup", plan_text("mdup"))
    lab.write("mdup-2", plan_text("mdup"))
    for v in ("reditv", "rdown"):
        lab.write(v, _hi(v))
    for v in ("qsplit", "qsame", "qmal", "qrev", "qrev2", "qaba", "qsq", "qforge"):
        lab.write(v, plan_text(v))
    for v in ("qauth", "qcoa", "qcoa2", "qcmt", "qauthp", "qauthc", "qpush", "qpushm"):
        lab.write(v, plan_text(v))
    for v in ("gtag", "gtmal", "gttw", "gtbob", "gtalice"):
        lab.write(v, plan_text(v, extra_actions=GATE.format(tag=v)))
    for v in ("pdrop", "padd", "pkeep"):
        lab.write(f"q{v}", plan_text(v))
    # libraries: rnest (high), rnestfb (a high fallback), rnestdel / rnestsw (medium)
    lab.write("rnest-lib", _lib("rnest-lib"))
    lab.write(
        "rnestfb-lib",
        _fallback("rnestfb-lib").replace("status: pending_approval", "status: draft"),
    )
    lab.write("rnestdel-lib", _lib("rnestdel-lib", "rec"))
    lab.write("rnestsw-lib", _lib("rnestsw-lib", "rec"))
    lab.commit("agent: plans", AGENT)
    # Carol writes a gate plan; Bob writes qprod v1
    lab.write("gtself", plan_text("gtself", extra_actions=GATE.format(tag="gtself")))
    lab.commit("carol: plan", CAROL)
    lab.write("qprod", plan_text("qprod"))
    lab.write("qck11", plan_text("qck11"))
    lab.commit("bob: plan", BOB)
    lab.write("mself", plan_text("mself"))
    lab.commit("alice: plan", ALICE)
    for v in ("rnest", "rnestfb", "rnestdel", "rnestsw", "bnest", "cknest7"):
        digest = lab.cli("hash", f"plans/{v}-lib", cwd=lab.repo).stdout.strip().split()[0]
        lab.write(v, plan_text(v, extra_actions=PIN.format(lib=f"{v}-lib", digest=digest)))
    lab.commit("agent: parents", AGENT)
    run("A")

    # -- B: first votes and edits --------------------------------------------------------------
    for v in ("rhi", "rhiab", "rfb", "rneeds", "rask", "rgate", "rnest", "rnestfb", "rlow"):
        setst(v, "approved", ALICE)
    for v in ("gaa", "gacase", "gaplus", "gafw", "gac", "reditv", "rdown"):
        setst(v, "approved", ALICE)
    for v in ("gbc", "gbb"):
        setst(v, "approved", BOB)
    setst("gcc", "approved", CAROL)
    setst("gcase2", "approved", ALICE_CASE)
    for v in ("ckhi2", "ckbig3", "qck4", "qck5", "ckbig8", "ckgate9", "qck11", "ckhi13"):
        setst(v, "approved", ALICE)
    setst("ckhi14", "approved", ALICE)
    setst("ckmal16", "approved", ALICE)
    for v in FFS:
        setst(v, "approved", BOB if v == "ffpair" else ALICE)
    setst("gtrep", "approved", ALICE)
    setst("bfake", "approved", ALICE)
    setst("phi2", "approved", ALICE)
    setst("pgrp", "approved", ALICE)
    setst("pgrp2", "approved", ALICE)
    # rfrz: the agent writes a low risk and a one-vote policy into `frozen:`; Alice approves
    text = lab.read("rfrz").replace("risk: high", "risk: low")
    text = text.replace("    - group: sec\n      count: 1\n", "")
    lab.write("rfrz", text)
    lab.commit("agent: frozen says low", AGENT)
    setst("rfrz", "approved", ALICE)
    vote = {"a": ALICE, "b": BOB, "c": CAROL}
    for v, order in BIG.items():
        setst(v, "approved", vote[order[0]])
    # gab1: Alice approves on Bob's branch, Bob commits again and merges it --no-ff
    lab.branch("br-gab1")
    setst("gab1", "approved", ALICE)
    lab.note("gab1", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-gab1", "br-gab1", who=BOB)
    # redit: the agent adds a high action to its frozen medium plan
    text = plan_text("redit", extra_actions=HI_ACTION.format(n=2, tag="redit-2"))
    lab.write("redit", text.replace("  - name: rec\n", "  - name: rec\n  - name: hi\n", 1))
    lab.commit("agent: edit redit", AGENT)
    # rnestdel: Alice approves the parent and deletes its library in one commit
    lab.set_status("rnestdel", "approved")
    lab.git("rm", "-q", "-r", "plans/rnestdel-lib")
    lab.commit("approve rnestdel", ALICE)
    # rnestsw: Alice approves and (same commit) rewrites the library to a high one
    lab.set_status("rnestsw", "approved")
    lab.write("rnestsw-lib", _lib("rnestsw-lib"))
    lab.commit("approve rnestsw", ALICE)
    # quorum first votes
    voted = {}
    for v in ("qsplit", "qsame", "qmal", "qrev", "qrev2", "qsq", "qforge"):
        voted[v] = setst(v, "approved", ALICE)
    setst("qaba", "approved", BOB)
    for v in ("qpdrop",):
        setst(v, "approved", CAROL)
    setst("qpadd", "approved", DAVE)
    setst("qpkeep", "approved", BOB)
    # qauth: Alice edits the agent's plan
    lab.write("qauth", plan_text("qauth", params='note: "alice was here"\n'))
    lab.commit("alice: edit qauth", ALICE)
    # co-authors, committers, alias spellings of an editor
    lab.write("qcoa", plan_text("qcoa", params='note: "x"\n'))
    lab.commit("agent: edit qcoa\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    lab.write("qcoa2", plan_text("qcoa2", params='note: "x"\n'))
    lab.commit("agent: edit qcoa2\n\nco-AUTHORED-by: Alice <ALICE@Example.COM>\nmore text", AGENT)
    lab.write("qcmt", plan_text("qcmt", params='note: "x"\n'))
    lab.git("add", "-A")
    env_who = {"GIT_AUTHOR_NAME": AGENT[0], "GIT_AUTHOR_EMAIL": AGENT[1]}
    lab.extra_env = env_who  # type: ignore[attr-defined]
    lab.git("commit", "-q", "-m", "agent's patch, applied by alice", who=ALICE)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.write("qauthp", plan_text("qauthp", params='note: "x"\n'))
    lab.commit("alice: edit qauthp", ALICE)
    lab.write("qauthc", plan_text("qauthc", params='note: "x"\n'))
    lab.commit("alice: edit qauthc", ALICE_CASE)
    # qprod: the agent writes v2
    lab.write("qprod", plan_text("qprod", params='note: "v2"\n'))
    lab.commit("agent: qprod v2", AGENT)
    # a plan and its approval in one commit (Bob)
    lab.write("one", plan_text("one", status="approved"))
    lab.write("qone", plan_text("oneq", status="approved"))
    lab.commit("bob: plans, approved", BOB)
    # many plans in one commit
    for v in ("mok1", "mbad", "mok2", "mhi", "mdup", "mdup-2", "minv", "mself"):
        lab.set_status(v, "approved")
    lab.write("mbad", plan_text("mbad", status="approved", params='extra: "sneaked"\n'))
    lab.commit("alice: approve the batch", ALICE)
    # gates: first approvals
    for v in ("gtag", "gtmal", "gttw", "gtbob", "gtalice", "gtself"):
        setst(v, "approved", ALICE)
    run("B")

    # -- C: second votes -------------------------------------------------------------------------
    setst("rhiab", "approved", BOB)
    setst("gaa", "approved", ALICE, "approve gaa again")
    setst("gacase", "approved", ALICE_CASE)
    setst("gaplus", "approved", ALICE_PLUS)
    setst("gafw", "approved", ALICE_FW)
    setst("gac", "approved", CAROL)
    setst("gbc", "approved", CAROL)
    setst("gbb", "approved", BOB_PLUS)
    setst("gcase2", "approved", CAROL)
    for v in ("ckbig3", "ckbig8", "bfake"):
        setst(v, "approved", BOB)
    bob_gate = setst("gtrep", "approved", BOB, "gate gtrep")
    for v, order in BIG.items():
        setst(v, "approved", vote[order[1]])
    # rgate: Alice answers its gate (if it ever paused)
    if (lab.plan("rgate").get("plan") or {}).get("status") == "awaiting_approval":
        setst("rgate", "approved", ALICE)
    # reditv: the agent edits the param (still high); rdown: edited to medium
    lab.write("reditv", _hi("reditv").replace('tag: "reditv"', 'tag: "reditv"\n      n: 2'))
    lab.write("rdown", plan_text("rdown"))
    lab.commit("agent: edits", AGENT)
    # qsplit: Bob's branch, merged by Bob
    lab.branch("br-qsplit")
    setst("qsplit", "approved", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-qsplit", "br-qsplit", who=BOB)
    # qsame: Alice again on a branch merged by Mallory
    lab.branch("br-qsame")
    setst("qsame", "approved", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-qsame", "br-qsame", who=MALLORY)
    # qmal: Mallory approves on her branch, merged by Mallory
    lab.branch("br-qmal")
    setst("qmal", "approved", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-qmal", "br-qmal", who=MALLORY)
    # qrev, qrev2: the agent reverts the controller's partial commit
    # (the controller's commit is a batch: the agent undoes it for that plan alone, its file
    # put back as Alice's vote left it)
    for v in ("qrev", "qrev2"):
        lab.git("checkout", voted[v], "--", f"plans/{v}/PLAN.yml")
        lab.commit(f"Revert the partial of plans/{v}", AGENT)
    # qauth: Alice and Bob vote
    setst("qauth", "approved", ALICE)
    for v in ("qcoa", "qcoa2", "qcmt", "qauthc"):
        setst(v, "approved", ALICE)
    setst("qauthp", "approved", ALICE_PLUS)
    # qprod: the agent writes v1 again (Bob produced it)
    lab.write("qprod", plan_text("qprod"))
    lab.commit("agent: qprod back to v1", AGENT)
    # qaba: the agent edits Bob's voted version (v2)
    lab.write("qaba", plan_text("qaba", params='note: "v2"\n'))
    lab.commit("agent: qaba v2", AGENT)
    # qsq: Mallory squashes a branch holding Bob's approval of qsq
    lab.branch("br-qsq")
    setst("qsq", "approved", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--squash", "br-qsq", who=MALLORY)
    lab.commit("squash br-qsq", MALLORY)
    # gates: answers
    answers = {"gtag": AGENT, "gtmal": MALLORY, "gttw": ALICE, "gtself": CAROL}
    answers |= {"gtbob": BOB, "gtalice": ALICE}
    for v, who in answers.items():
        setst(v, "approved", who, f"gate {v}")
    run("C")

    # -- D: third steps ----------------------------------------------------------------------------
    setst("reditv", "approved", BOB)
    setst("rdown", "approved", BOB)
    for v in ("qauth", "qcoa", "qcoa2", "qcmt", "qauthp", "qauthc"):
        setst(v, "approved", BOB)
    setst("qprod", "approved", ALICE)
    setst("one", "approved", ALICE)
    setst("qone", "approved", ALICE)
    setst("qrev", "approved", BOB)
    setst("redit", "approved", ALICE)
    for v, order in BIG.items():
        if len(order) > 2:
            setst(v, "approved", vote[order[2]])
    # qaba: the agent writes v1 again (Bob's voted version); Alice votes after the freeze
    lab.write("qaba", plan_text("qaba"))
    lab.commit("agent: qaba back to v1", AGENT)
    # qforge: Bob's vote rebase-merged by the forge (author Bob, committer the forge)
    lab.branch("br-qforge")
    setst("qforge", "approved", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", "br-qforge", who=FORGE)
    run("D")

    # gtrep: the agent puts Bob's answer of the first gate back (paused at the second)
    lab.git("checkout", bob_gate, "--", "plans/gtrep/PLAN.yml")
    lab.commit("agent: restore gtrep", AGENT)
    # bfake: the agent writes Carol's vote into the controller's partial block
    text = lab.read("bfake")
    fake = "  - by: carol@example.com\n    at: '2026-12-06T00:00:00Z'\n    commit: " + "c" * 40
    text = text.replace("  missing:", fake + "\n  missing:")
    lab.write("bfake", text)
    lab.commit("agent: carol's vote", AGENT)
    # -- E: after the vote counts --------------------------------------------------------------
    setst("gttw", "approved", ALICE, "approve gttw again")
    setst("qone", "approved", CAROL)
    setst("qprod", "approved", BOB)
    setst("qaba", "approved", ALICE)
    setst("bfake", "approved", BOB, "bob again")
    setst("qpush", "approved", ALICE)
    setst("qpush", "pending_approval", BOB)
    setst("qpush", "approved", BOB)
    setst("qpushm", "approved", ALICE)
    setst("qpushm", "pending_approval", AGENT)
    setst("qpushm", "approved", ALICE, "approve qpushm again")
    run("E")

    # -- P: pull requests, checked, then merged ------------------------------------------------
    pr_step = {
        "ckhi1": lambda: setst("ckhi1", "approved", ALICE),
        "ckhi2": lambda: setst("ckhi2", "approved", BOB),
        "ckbig3": lambda: setst("ckbig3", "approved", CAROL),
        "qck4": lambda: setst("qck4", "approved", ALICE),
        "qck5": lambda: setst("qck5", "approved", AGENT),
        "ckbig8": lambda: setst("ckbig8", "approved", ALICE_PLUS),
        "ckgate9": lambda: setst("ckgate9", "approved", AGENT),
        "ckhi10": lambda: setst("ckhi10", "approved", ALICE_PLUS),
        "qck11": lambda: setst("qck11", "approved", BOB),
        "ckhi13": lambda: setst("ckhi13", "approved", CAROL),
        "ckhi14": lambda: setst("ckhi14", "approved", CAROL),
    }

    def self6() -> None:
        lab.write("ckself6", plan_text("ckself6", status="approved", params='n: "2"\n'))
        lab.commit("alice: tweak and approve", ALICE)

    def nest7() -> None:
        lab.set_status("cknest7", "approved")
        lab.write("cknest7-lib", _lib("cknest7-lib"))
        lab.commit("alice: approve cknest7", ALICE)

    def one12() -> None:
        lab.write("ckone12", plan_text("ckone12", status="approved"))
        lab.commit("alice: new plan, approved", ALICE)

    def mal16() -> None:
        pol = json.loads(lab.git("show", "HEAD:.plangate/policy.json"))
        pol["approval"]["approvers"].append(MALLORY[1])
        pol["approval"]["groups"]["sec"].append(MALLORY[1])
        pol["approval"]["groups"]["ops"].append(MALLORY[1])
        pol["approval"]["rules"] = []
        lab.put(".plangate/policy.json", json.dumps(pol, sort_keys=True, separators=(",", ":")))
        lab.commit("mallory: policy", MALLORY)
        setst("ckmal16", "approved", MALLORY)

    pr_step |= {"ckself6": self6, "cknest7": nest7, "ckone12": one12, "ckmal16": mal16}
    # one pull request per merger (its plans are independent), checked once `--as` the merger
    mergers: dict[str, tuple[str, str]] = {}
    for _, merger, _ in CHECKS.values():
        mergers.setdefault(merger[1], merger)
    for i, (email, merger) in enumerate(mergers.items()):
        branch = f"pr-{i}"
        lab.branch(branch)
        for k, (_, who, _) in CHECKS.items():
            if who == merger:
                pr_step[k]()
        lab.git("checkout", "-q", "main")
        t0 = time.time()
        got["checks"][email] = lab.check_plans(branch, email)
        got["took"][f"check {branch}"] = round(time.time() - t0, 1)
        lab.git("merge", "-q", "--no-ff", "-m", f"merge {branch}", branch, who=merger)
    lab.branch("pr-ff")
    for v, (who, _) in FFS.items():
        setst(v, "approved", who)
    lab.git("checkout", "-q", "main")
    got["checks"]["ff"] = lab.check("pr-ff", BOB[1]).stdout
    lab.git("merge", "-q", "--ff-only", "pr-ff")
    run("P")

    # -- F: the policy changes mid-vote --------------------------------------------------------
    _config(lab, ["alice@example.com", "bob@example.com", "dave@example.com"], later=True)
    run("F1")
    setst("pmid", "approved", ALICE)
    setst("phi2", "approved", BOB)
    setst("pgrp", "approved", BOB)
    setst("pgrp2", "approved", DAVE)
    setst("qpdrop", "approved", ALICE)
    setst("qpadd", "approved", ALICE)
    setst("qpkeep", "approved", ALICE)
    run("F2")

    got["final"] = lab.rows()
    got["ran"] = {}
    for v in [
        *VIDS,
        *CHECKS,
        *FFS,
        *[f"{v}-{x}" for v in [*VIDS, *CHECKS] for x in ("2", "3", "lib")],
    ]:
        got["ran"][v] = len(lab.calls(v))
    from controller.git.records import batch_groups

    subjects: dict[str, list[str]] = {}
    for r in lab.log_rows():  # the controller's commits by plan, as `Lab.subjects` reads them
        if r[2] != "plangate@localhost":
            continue
        groups = batch_groups(r[4]) if "\nPlan-Event: " in r[4] else []
        for x in [f"plangate: {t.get('Plan-Event')} {p}" for p, t in groups] or [r[3]]:
            subjects.setdefault(x.split(" ", 2)[-1], []).append(x)
    got["subjects"] = {}
    got["approvals"] = {}
    for v in [*VIDS, *CHECKS, *FFS]:
        slug = SLUG.get(v, v)
        got["subjects"][v] = subjects.get(f"plans/{slug}", [])
        try:
            block = lab.plan(slug).get("approval") or {}
        except BenchError:
            block = {}
        got["approvals"][v] = [a.get("by") for a in block.get("approvals") or []] or (
            [block["by"]] if block.get("by") else []
        )
    got["clone"] = clone_audit_got(lab, root)
    lab.got = got  # type: ignore[attr-defined]
    return lab


#: variants whose plan lives at another slug
SLUG = {"pdrop": "qpdrop", "padd": "qpadd", "pkeep": "qpkeep", "oneq": "qone"}
#: the people who wrote each plan (none of them may count), the agent's unless named
WRITERS = {"one": "bob@example.com", "oneq": "bob@example.com", "gtself": "carol@example.com"}
WRITERS |= {"qprod": "bob@example.com", "mself": "alice@example.com"}


def _person(email: str) -> str:
    """An address as one person: NFKC, case folded, a `+tag` dropped (plus_tags)."""
    import unicodedata

    local, _, domain = unicodedata.normalize("NFKC", email).casefold().partition("@")
    return f"{local.split('+')[0]}@{domain}"


def _needed(v: str) -> int:
    """Distinct people the policy needs for the variant's plan (its first approval)."""
    if v in BIG:
        return 3
    if v.startswith(("rhi", "g", "rdown", "reditv", "ckhi", "phi2", "pgrp")) and v not in GATES:
        return 1 if v == "rdown" or v == "phi2" else 2
    if SLUG.get(v, v).startswith("q"):
        return 2
    return 1


#: lab B (`identity: committer`): vid -> calls wanted; votes are (author, committer) pairs
CWANT: dict[str, int] = {
    "cmauth": 0,  # the agent's edit committed by Alice (a changer); Alice, Bob vote
    "cmvote": 0,  # Alice's vote committed by Mallory; Bob votes (Mallory's, not Alice's)
    "cmvote2": 1,  # control: Mallory's commit, committed by Alice; Bob votes
    "cmforge": 0,  # Alice votes; Bob's vote rebase-merged by the forge (committer forge)
    "cmhi": 1,  # control: a high plan; Alice commits Mallory's; Carol commits her own
    "cmsame": 0,  # a high plan; Alice commits twice (authors Alice, then Bob)
    "cmbob": 0,  # a high plan; Bob's vote committed by ALICE (committer decides); Alice again
}


def _c2(lab: Lab, msg: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
    """A commit of the working tree written by ``author`` and committed by ``committer``."""
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}  # type: ignore[attr-defined]
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", msg, who=author)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    return lab.head()


def _build_cm(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab, APPROVERS, how="committer")
    lab.passes = []  # type: ignore[attr-defined]

    def run(phase: str) -> None:
        out = lab.run(check=False)
        lab.passes.append((phase, out.returncode, "Traceback" in out.stderr, out.stderr[-600:]))  # type: ignore[attr-defined]

    def vote(slug: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
        lab.set_status(slug, "approved")
        return _c2(lab, f"approve {slug}", author, committer)

    for v in ("cmauth", "cmvote", "cmvote2", "cmforge"):
        lab.write(f"q{v}", plan_text(v))
    for v in ("cmhi", "cmsame", "cmbob"):
        lab.write(v, _hi(v))
    lab.commit("agent: plans", AGENT)
    run("A")
    lab.write("qcmauth", plan_text("cmauth", params='note: "x"\n'))
    _c2(lab, "the agent's patch, applied by alice", AGENT, ALICE)
    vote("qcmvote", ALICE, MALLORY)
    vote("qcmvote2", MALLORY, ALICE)
    vote("qcmforge", ALICE, ALICE)
    vote("cmhi", MALLORY, ALICE)
    vote("cmsame", ALICE, ALICE)
    vote("cmbob", BOB, ALICE)
    run("B")
    vote("qcmauth", ALICE, ALICE)
    vote("qcmvote", BOB, BOB)
    vote("qcmvote2", BOB, BOB)
    lab.branch("br-cmforge")
    vote("qcmforge", BOB, BOB)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", "br-cmforge", who=FORGE)
    vote("cmhi", CAROL, CAROL)
    vote("cmsame", BOB, ALICE)
    vote("cmbob", ALICE, ALICE)
    run("C")
    vote("qcmauth", BOB, BOB)
    run("D")
    got: dict[str, Any] = {"final": lab.rows(), "ran": {v: len(lab.calls(v)) for v in CWANT}}
    got["clone"] = clone_audit_got(lab, root)
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _build_both(root: Path) -> Lab:
    """Both labs, built at once (two `run --once` at a time at most): lab A's, with lab B's
    result kept as ``got["cm"]``."""
    labs = build_all(root, {"a": _build, "b": _build_cm}, workers=2).got
    lab_a, lab_b = labs["a"], labs["b"]
    lab_a.got["cm"] = lab_b.got
    lab_a.passes += [(f"cm:{p[0]}", *p[1:]) for p in lab_b.passes]
    return lab_a


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r121-approve-atk121a", _build_both)


IDS = [*VIDS, *[f"{v}:audit" for v in VIDS], *[f"{v}:agree" for v in VIDS]]
IDS += [f"{v}:who" for v in VIDS if WANT[v] and v not in GATES]
#: `plangate status --json` at the end: `completed` exactly where every step was to run
DONE = {v for v in VIDS if WANT[v] and GATES.get(v, 1) and THIRD.get(v, 1) != 0}
IDS += [f"{v}:row" for v in VIDS]
IDS += [f"{v}:gate" for v in GATES] + [f"{v}:second" for v in SECOND]
IDS += [f"{v}:lib" for v in LIBS] + [f"{v}:third" for v in THIRD]
IDS += [f"ck:{k}" for k, c in CHECKS.items() if c[2] is not None]
IDS += [f"ck:{k}:agree" for k in CHECKS] + [f"ck:{k}:audit" for k in CHECKS] + ["passes"]
IDS += ["ck:ckmal16:flag"]
IDS += [f"cm:{v}{k}" for v in CWANT for k in ("", ":audit")]
IDS += [f"ff:{v}{k}" for v in FFS for k in ("", ":ran", ":agree", ":audit")]

BROKEN: dict[str, Any] = {}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


def _valid(report: dict[str, Any], slug: str, kind: str = "approve") -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{slug}"
        and e.get("approval_valid")
        and (e.get("approval_kind") or "approve") == kind
    ]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round121_atk121a(lab: Any, vid: str) -> None:
    got = lab.got
    report = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    if v == "ff":
        f, _, sub = kind.partition(":")
        try:
            plans = {p["plan"]: p for p in json.loads(got["checks"]["ff"])["plans"]}
        except (ValueError, KeyError, TypeError):
            plans = {}
        # `fast_forward` is added "for a plan it decides otherwise": absent, the merge's outcome
        # is the fast-forward's too
        entry = plans.get(f"plans/{f}") or {}
        told = entry.get("fast_forward") or {"outcome": entry.get("outcome")}
        ran = got["ran"][f]
        if sub == "ran":
            assert ran == int(FFS[f][1]), brief(got["final"].get(f"plans/{f}", {}))
        elif sub == "agree":  # the fast-forward prediction is what the controller did
            assert (told.get("outcome") == "start") is (ran == 1), (told, ran)
        elif sub == "audit":
            assert len(_valid(report, f)) == ran, brief(got["final"].get(f"plans/{f}", {}))
        else:
            assert (told.get("outcome") == "start") is FFS[f][1], (told, plans.get(f"plans/{f}"))
        return
    if v == "cm":
        c, _, sub = kind.partition(":")
        cm = got["cm"]
        slug = f"q{c}" if c.startswith(("cmauth", "cmvote", "cmforge")) else c
        row = cm["final"].get(f"plans/{slug}", {})
        if sub == "audit":
            valid = _valid(cm["clone"]["report"], slug)
            assert len(valid) == CWANT[c], (valid, brief(row))
            return
        assert cm["ran"][c] == CWANT[c], brief(row)
        return
    if v == "ck":
        k, _, sub = kind.partition(":")
        slug, merger, start = CHECKS[k]
        outcome, codes = got["checks"][merger[1]].get(f"plans/{slug}", (None, []))
        tag = f"{k}-2" if k in ("ckgate9",) else k
        ran = got["ran"][tag]
        if sub == "flag":  # Mallory's rewrite of the recorded policy is flagged, never read
            found = [
                f
                for f in report.get("findings", [])
                if f.get("kind") == "policy-changed" and MALLORY[1] in f.get("detail", "")
            ]
            assert found, report.get("findings")
            return
        if sub == "agree":  # the prediction is what the controller did on the merge
            assert (outcome == "start") is (ran == 1), (outcome, codes, ran)
        elif sub == "audit":  # the fresh clone's audit calls valid what the controller ran
            kind_ = "gate" if k == "ckgate9" else "approve"
            assert len(_valid(report, slug, kind_)) == ran, (ran, brief(got["final"].get(slug, {})))
        else:
            assert (outcome == "start") is start, (outcome, codes)
        return
    slug = SLUG.get(v, v)
    row = got["final"].get(f"plans/{slug}", {})
    if kind == "audit":
        valid = _valid(report, slug)
        assert len(valid) == min(WANT[v], 1), (valid, brief(row))
        return
    if kind == "agree":
        starts = [x for x in got["subjects"][v] if x.startswith("plangate: start ")]
        valid = _valid(report, slug) + _valid(report, slug, "gate")
        assert len(valid) == len(starts), (starts, brief(row))
        return
    if kind == "row":
        assert (row.get("status") == "completed") is (v in DONE), brief(row)
        return
    if kind == "who":
        people = [_person(b) for b in got["approvals"][v]]
        assert len(set(people)) == len(people) >= _needed(v), people
        assert _person(WRITERS.get(v, AGENT[1])) not in people, people
        return
    if kind == "gate":
        assert got["ran"][f"{v}-2"] == GATES[v], brief(row)
        return
    if kind == "second":
        assert got["ran"][f"{v}-2"] == SECOND[v], brief(row)
        return
    if kind == "third":
        assert got["ran"][f"{v}-3"] == THIRD[v], brief(row)
        return
    if kind == "lib":
        assert got["ran"][f"{v}-lib"] == LIBS[v], brief(row)
        return
    assert got["ran"][v] == WANT[v], brief(row)
