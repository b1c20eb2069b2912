"""Round 122 (runs, atk122d): "a controller killed at any moment comes back safe whatever
people do before it restarts". Local mode, config ``identity: {name: plangate, email:
plangate@localhost}``, approvers ``alice@example.com`` (and ``*@ops.example.com``).

Lab ``L`` (one build, module scope, one plan per variant, 43 plans). Exec tool ``k122``
appends one line per call to ``calls.log`` (the ground truth); mode ``kill`` records, then
SIGKILLs its parent (the controller) once per tag (``kill2``: on its first two calls),
``slow`` records and sleeps while the daemon is SIGKILLed. Every plan has actions 1 and 2
(``g2-*``: action 2 ``requires_approval``; paused, the gate approved, then killed in action
2). A ``git`` first on PATH SIGKILLs its caller on the Nth call of a subcommand, before or
after running it (``update-ref`` moves the branch, ``update-index`` writes the controller's
private index copy under ``.git/index.lock``); the same wrapper kills ``plangate abort`` and
``plangate approve`` (their own index write). Each variant: Alice approves, one killing pass
(``run --once`` or the daemon), the person's git activity, a recovery pass, the remedies the
variant follows (each then a pass); a settle pass before the next variant when a variant
left something for the next pass to decide (so no two variants' commits are batched).

Kill points (prefix): ``t1``/``t2``/``tt2``/``g2`` (the tool of action 1/2), ``d2`` (the
daemon killed while action 2 runs), ``live`` (the daemon alive in action 2),
``ur1a``/``ui1a``/``ui1b`` (the start commit: after its ``update-ref``; after/before its
``update-index``), ``ur2b``/``ui2a``/``ui2b`` (the outcome commit). Acts (suffix): ``rhard``
/``rsoft``/``amend`` of the controller's last commit (``rmlock`` first: the stale
``.git/index.lock`` removed), ``amendbot``/``cherrybot`` (the same under the controller's
identity, another date), ``cherry`` (the erased start cherry-picked back), ``revert``,
``rhardnote``/``rhardmerge`` (a note committed after the reset; then the erased tip merged
back ``--no-ff`` before the restart), ``rhardapp`` (``plangate approve`` again), ``lookf``/
``looka`` (a look-alike ``plangate: fail``/``abort`` by a person), ``lookfsealcopy`` (with
the start's ``Controller-Seal:`` copied), ``own*`` (a commit through ``GIT_INDEX_FILE``),
``wtedit``/``stage``/``stash``, ``log*``/``exec*`` (the execution record between actions:
EXECUTION_LOG.md edited in the tree, staged, committed, a committed link, a 3 MB log, a
FIFO, ``chmod 000``; the ``execution:`` block set ``succeeded`` by an agent or by a
look-alike ``checkpoint``), ``abort`` (``plangate abort``), ``abortkill`` (the abort
killed in its index write), ``resumekill`` (Alice's resume approval killed likewise),
``resumeagain`` (the resumed run killed again), ``resumeabort``, ``second`` (``run --once``
on the same state directory while the daemon runs), ``newstate`` (a second controller with
its own state directory). Ids: ``kill_happened``, ``once`` (calls per action), ``final``
(status row and main's PLAN.yml; the in-doubt action ``in_doubt`` ``E_ACTION_IN_DOUBT``; none
``running``), ``never_silent`` (after the recovery pass: terminal, or the row's ``waiting``
/``reason`` names the cause and the remedy then followed), ``kept`` (a person's edit,
staged edit, stash or log edit survives), ``own_bytes``, ``audit`` (fresh clone: a valid
execution, none invalid), ``lookalike_flagged``, ``second_controller_refused``, ``writers_killed``,
``bench_steps``, ``passes_no_traceback``.

Seen (round 122: 273 ids, 262 passed, 11 xfailed (strict); 88-160 s on 1 worker, load
2-9), four classes.

**staged-edit-unstaged** (3 ids: ``kept[ui2b-rmstage, ui2a-rmstage, ui1b-rmstage]``): the
controller SIGKILLed inside an index write (before or after its ``update-index``; the
outcome's, or before the start's), ``.git/index.lock`` left. The person removes the stale
lock (docs/operations.md: "safe only while no plangate runs"), appends a line to PLAN.yml and
``git add``s it (exit 0). The restart does not wait on the staged change: the outcome
variants end ``completed`` (the start variant waits on the working file, "has uncommitted
edits"), and ``git diff --cached`` is empty: the entry was pointed back at the controller's
blob, the person's staged change unstaged (the working file keeps the line). docs/approvals.md:
"plangate never stages, commits or discards anyone's other work", "A change staged in the
index is one too: a staged edit ... make the plan wait alike ("has uncommitted changes staged
in the index"), the change kept"; docs/execution.md: "an entry anyone staged since is
theirs". Repro::

    # plan x (two exec actions) approved by Alice; a git wrapper first on PATH that runs
    # nothing and `kill -9 $PPID` on its 2nd `update-index` call (the outcome's index write)
    plangate run --once --config cfg.yml      # killed; `plangate: complete plans/x` on main
    rm .git/index.lock
    echo '# person wt edit' >> plans/x/PLAN.yml && git add plans/x/PLAN.yml
    plangate run --once --config cfg.yml      # completed, nothing waits
    git diff --cached -- plans/x              # empty: the staged edit is gone from the index

Fixed (2026-12-07, fix124r; first written as fix123r, reverted with that merge's log rule):
the cause was ``WorkTree.recover_index`` (controller/git/worktree.py), the one place a
restart writes the shared index for a killed commit: it pointed every noted entry the
checked-out commit holds at the controller's blob, whatever the index named by then (the
working-tree file already had the "nobody's edit since" rule, ``_repair_file``; the index
entry had it only for a branch moved past the commit, ``_moved_past``). Now both go through
``WorkTree._entry_owed``: an entry is set only while it still names what the killed
controller left there (the parent's version, or no entry where the parent had none; what
the working tree held at the commit; the committed blob); a staged edit, removal or conflict
is the person's and kept. The outcome variants end ``completed`` with the edit staged, the
start variant waits "uncommitted" with it staged
(``tests/service/test_index_lock_crash.py::test_an_entry_staged_since_a_landed_commit_is_kept``).

**log-edit-overwritten** (4 ids: ``kept[t2-logwt, t2-logchmod, g2-logwt, g2-logstage]``):
the controller SIGKILLed in action 2's tool. Before the restart a person writes a line into
``plans/x/EXECUTION_LOG.md`` (untracked: the start wrote no log; ``chmod 000`` after; or,
for the gated plan, the log the pause committed, edited in the tree or edited and staged).
The restart ends the run ``failed`` ``E_ACTION_IN_DOUBT`` and writes its log over the file:
the person's line is gone from the working tree (and from the index when staged); nothing
waits. The same docs/approvals.md line: "plangate never stages, commits or discards anyone's
other work" (the waiting rule it spells out names PLAN.yml only: "If a human has uncommitted
edits to a PLAN.yml plangate must write, the plan **waits**"; off the branch, round 116,
"a file of the agent's at the log's path there is kept"). Repro::

    plangate run --once --config cfg.yml          # action 2's tool runs `kill -9 $PPID`
    echo 'person log edit' >> plans/x/EXECUTION_LOG.md   # (gated plan: also git add it)
    plangate run --once --config cfg.yml          # failed E_ACTION_IN_DOUBT, no wait
    grep -c 'person log edit' plans/x/EXECUTION_LOG.md; git diff --cached   # 0; empty

Changed and fixed (2026-12-07, fix125l): **log-edit-overwritten**. As written the 4 ids
asked for the opposite of round 95c ``kw:log`` on the same sequence (the working-tree log
kept, versus the controller's record, not a forgery, committed and checked out); the lead's
rule keeps both: the controller commits and checks out its own log and block as before, and
saves what its checkout writes over first. The cause: ``Committing._write``
(controller/service/committing.py) wrote the commit's files into the working tree and the
index whatever they held. Now, under the index lock before the branch moves,
``Committing._save_displaced`` asks ``WorkTree.displaced_versions`` which working-tree file
or index entry of a run's record (a log; a run event's plan file) holds neither the
branch's version, nor the bytes written, nor the controller's own last commit of it, and
saves each (``controller/git/displaced.py``). docs/execution.md: "Before its commit's
checkout writes a run's record (a plan's log; a run event's plan file, whose `execution:`
block) over a working-tree file or an index entry that holds something else than the
controller itself last left there (...), those bytes are saved, the working tree's and the
index's each where it differs: `.git/plangate-displaced/<plan folder>/<UTC stamp>-<commit>/
<file name>` for the working tree's file, `<file name>.staged` for a staged version". So
``test_kept``'s log ids now assert that the person's log is recoverable byte for byte at the
path the recovery pass's status row names (``displaced``; the staged version too for
``logstage``), and that the controller's committed log holds none of it (``test_own_bytes``
as before); ``kw:log`` of round 95c still holds. The four pass
(``tests/service/test_displaced_log_kept.py`` fails on the old code).

**merged-back-start-unaudited** (2 ids: ``audit[ui1a-rhardmerge, t2-rhardmerge]``): the
controller SIGKILLed in its first start's index write (``ui1a``) or in action 2's tool.
Before the restart the person removes the stale lock, ``git reset --hard HEAD~1``, commits a
note, and merges the erased tip back (``git merge --no-ff <start>``): the start sits behind
the merge's second parent. The restart goes on with the run from that start (each action
once; ``completed``, resp. ``failed`` ``E_ACTION_IN_DOUBT``), committing its outcome on the
first-parent line. The fresh-clone ``plangate audit --json`` lists no execution of the plan
at all (findings ``owned-block-changed``, ``illegal``, ``controller-unexplained`` for the
controller's own sealed outcome, ``log-changed``): git history does not prove the run that
ran. docs/approvals.md (round 63): "the controller's records (policy, freezes, starts,
outcomes) are found on that line [the first-parent line]"; docs/execution.md (round 111):
a controller that never saw the commits erased "reads the merge as any merge"; docs/operations.md:
"`plangate audit` on any clone re-checks every execution against its approval". Repro::

    plangate run --once --config cfg.yml       # killed in action 2 (or in the start's index write)
    S=$(git rev-parse HEAD); rm -f .git/index.lock; git reset -q --hard HEAD~1
    echo n > notes/n.txt && git add notes && git commit -qm note
    git merge -q --no-ff -m 'merge back' $S
    plangate run --once --config cfg.yml       # failed E_ACTION_IN_DOUBT (ui1a: completed)
    git clone -q . /tmp/c && (cd /tmp/c && plangate audit --json)   # no execution of plans/x

**replayed-start-hold-unrestorable** (2 ids: ``once[ui1a-cherrybot]``,
``final[ui1a-cherrybot]``): the controller SIGKILLed after its first start's
``update-index``; the person removes the lock, ``git reset --hard HEAD~1`` and
``git cherry-pick <erased start>`` with committer ``plangate <plangate@localhost>`` and
another date: the replay has the start's tree, parent and message, so its
``Controller-Seal:`` verifies. The restart adopts the replay as its own (both it and the
erased start are in ``<state_dir>/commits``) and holds the plan ``E_HISTORY_REWRITTEN``
naming the erased start, ``executing``, ``restore them or delete the plan``. Following that
remedy (``git reset --hard <erased start>``) erases the adopted replay, and the hold then
names both siblings (same parent), which no tip can hold: the plan stays ``executing``,
held, for good; nothing ever runs (calls 0, 0). docs/approvals.md: "A hold ends when the
erased commits are on the branch again (restore the old tip from the reflog: `git reset
--hard <tip>`...)". Repro::

    # git wrapper: `git update-index ...` then `kill -9 $PPID`, its 1st call only
    plangate run --once --config cfg.yml       # killed in the start's index write
    S=$(git rev-parse HEAD); rm .git/index.lock; git reset -q --hard HEAD~1
    export GIT_COMMITTER_NAME=plangate GIT_COMMITTER_EMAIL=plangate@localhost
    GIT_COMMITTER_DATE='@1800000000 +0000' git cherry-pick $S   # as the controller, dated later
    plangate run --once --config cfg.yml       # held: "... erased ... (S); restore them"
    git reset -q --hard $S; plangate run --once --config cfg.yml   # held: (S, <replay>)

Fixed (2026-12-06, fix123h): **merged-back-start-unaudited**. The cause: the audit replays
the first-parent line only, so the start the merge put behind its second parent was never
read (``audit._replay``); the merge read as the agent's edit of the controller's blocks and
the controller's sealed outcome as one with no start. The history index now reads the run
records a merge brings back beside the line (``Lifecycle.merged_back_runs``: the
controller's commits behind a side parent, by its record or by name and seal as
``closes_start`` reads a start there, a start among them) before the merge, each judged as
a line commit (``apply_merged_back``); the merge's change to the very blob they wrote is
theirs, read already. One valid execution, its outcome, nothing flagged.

Fixed (2026-12-06, fix123h): **replayed-start-hold-unrestorable**. The cause:
``ControllerCore._adopt_sealed`` took every sealed commit under its name newer than its record
for its own (the restored-backup rule of round 66), the replay of its erased start too (the
same tree, parent and message: the same seal). A commit whose seal is that of a commit the
record holds after the newest one on the branch is a copy, never its own
(``_not_replays``, logged ``own_commit_copies``): the hold names the erased start alone and
the restore ends it (completed, once each).

Held: every kill point with the erased first start the index never read (``rhard``, ``rsoft``
+ ``commit -a``, ``amend``, ``amendbot``, a ``cherry-pick`` under the agent's name, ``plangate
approve`` again, refused "already approved": held ``E_HISTORY_REWRITTEN`` naming the restore,
which then runs each action once); a start the index read, erased (held, the approval refused
``E_ALREADY_EXECUTED``; the restore fails it in doubt); a ``revert`` of the start (the run
goes on once); look-alike ``fail``/``abort`` by a person (the run stops; the audit flags them
``controller-unexplained``; a resume runs what never ran, once); commits through a private
index of the plan or its log while the controller's index commit was in flight (no wait,
completed once); an uncommitted edit after a kill before the outcome's ``update-ref`` (waits
"uncommitted", kept, goes on once discarded); the execution record edited, committed by an
agent or by a look-alike ``checkpoint``, a committed symlink, a 3 MB log, a FIFO (the journal
wins: ``failed`` ``E_ACTION_IN_DOUBT``, action 2 never re-run, the controller's record written
back); ``plangate abort`` after a kill (aborted, the killed action ``in_doubt``), also killed
in its own index write (the next pass finishes it); ``plangate approve`` (resume) killed in
its index write (the next pass finishes it and resumes, once); a resumed run killed again (in
doubt again, a second resume runs it once more: 3 calls in all); resume then abort (aborted);
a second controller on the same state directory (``E_LOCKED``) and with a new one
(``E_STORAGE`` "nothing is adopted"), running nothing. No controller commit carried a person's
bytes; no pass printed a traceback.

Seen when written (changed since): ``plangate abort`` right after a kill inside the start's
index write failed ``E_GIT ... index.lock ... File exists``, so the restart ran the plan to
``completed``. Since 605be731 the abort finishes the dead controller's index write first and
lands before action 1 (``ui1a-abort``, asserted as ``aborted`` with no call). A look-alike
``fail`` that copies the start's
``Controller-Seal:`` trailer reads as the controller's in the fresh-clone audit (the accepted
limit "a seal of the right shape cannot be verified without the key"); an unsealed look-alike
``plangate: checkpoint`` (subject and ``Plan``/``Plan-Status`` trailers only) is not flagged
either. While the controller is dead after a kill inside a resumed run, ``plangate status``
shows ``executing`` with no ``waiting``/``reason`` (no controller is running to say why).
A ``--take-over`` controller tried in the scratch lab adopted and failed another variant's
held look-alike start (then left out: it acts on every open run of the branch).

Not tried: remote mode, nested plans, graphs (several actions in flight), ``git gc
--prune=now`` of the erased commits, ``plangate mcp`` killed, ``reject`` raced with a kill,
kills inside readers (``cat-file``, ``log``), a ``--take-over`` host with the old one back.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, clone_audit_got
from test_round2_execution_kit import shared

PY = sys.executable
TAG = "# person wt edit"
LOGTAG = "person log edit"

TOOL = r"""
import json, os, signal, sys, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
with open(os.path.join(d, "calls.log"), "a") as f:
    f.write(json.dumps({"t": t, "m": m, "key": os.environ.get("PLANGATE_IDEMPOTENCY_KEY")}) + "\n")
if m in ("kill", "kill2"):
    n = 0
    while os.path.exists(os.path.join(d, "killed-%s-%d" % (t, n))):
        n += 1
    if n < (1 if m == "kill" else 2):
        open(os.path.join(d, "killed-%s-%d" % (t, n)), "w").close()
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(0.5)
if m == "slow":
    mark = os.path.join(d, "slowed-" + t)
    if not os.path.exists(mark):
        open(mark, "w").close()
        time.sleep(60)
print(json.dumps({"ok": True, "t": t}))
"""

GITWRAP = r"""#!/bin/sh
spec="{spec}"
if [ -f "$spec" ]; then
  sub=$(cut -d'|' -f1 "$spec"); n=$(cut -d'|' -f2 "$spec"); when=$(cut -d'|' -f3 "$spec")
  first=""
  for a in "$@"; do
    case "$a" in -*|*=*) continue;; esac
    first="$a"; break
  done
  if [ "$first" = "$sub" ]; then
    c=$(cat "$spec.count" 2>/dev/null || echo 0); c=$((c+1)); echo $c > "$spec.count"
    if [ "$c" = "$n" ]; then
      rm -f "$spec" "$spec.count"
      echo "$PPID $when $*" >> "{log}"
      if [ "$when" = after ]; then {real} "$@"; fi
      kill -9 $PPID
      sleep 2
      exit 1
    fi
  fi
fi
exec {real} "$@"
"""

#: kill points: ("tool", action) | ("git", "subcommand|n|when") | ("daemon", action)
#: | ("live", action): the daemon alive in action 2 while a second controller tries
KP: dict[str, Any] = {
    "t1": ("tool", 1),
    "t2": ("tool", 2),
    "g2": ("tool", 2),  # action 2 gated: paused, gate approved, then killed in action 2
    "tt2": ("tool", 2),  # action 2 kills twice (its first call and its resume's)
    "d2": ("daemon", 2),
    "live": ("live", 2),
    "ur1a": ("git", "update-ref|1|after"),
    "ui1a": ("git", "update-index|1|after"),
    "ui1b": ("git", "update-index|1|before"),
    "ur2b": ("git", "update-ref|2|before"),
    "ui2a": ("git", "update-index|2|after"),
    "ui2b": ("git", "update-index|2|before"),
}

#: variant -> (person's acts, remedies (each followed by a pass), final status, in-doubt
#: action, calls (a1, a2))
V: dict[str, tuple[list[str], list[str], str, int | None, tuple[int, int]]] = {}


def _v(x: str, acts: list[str], rem: list[str], st: str, doubt: int | None, c: tuple[int, int]):
    V[x] = (acts, rem, st, doubt, c)


# -- a first start the index never read, erased (round 120's rule) and what follows ------
_v("ui1a-rhardnote", ["rmlock", "rhard", "note"], ["restore"], "completed", None, (1, 1))
_v("ui1a-rhardapp", ["rmlock", "rhard", "reapprove"], ["restore"], "completed", None, (1, 1))
_v("ui1a-rsoftcommit", ["rmlock", "rsoft", "commitall"], ["restore"], "completed", None, (1, 1))
_v("ui1a-amend", ["rmlock", "amend"], ["restore"], "completed", None, (1, 1))
_v("ui1a-amendbot", ["rmlock", "amendbot"], ["restore"], "completed", None, (1, 1))
_v("ui1a-cherry", ["rmlock", "rhard", "cherry"], ["restore"], "completed", None, (1, 1))
_v("ui1a-revert", ["rmlock", "resetidx", "revert"], [], "completed", None, (1, 1))
# -- a start the index did read, erased: held, "already ran" stays for a new approval -----
_v("t1-rhardapp", ["rhard", "reapprove"], ["restore"], "failed", 1, (1, 0))
_v("t2-rhardnote", ["rhard", "note"], ["restore"], "failed", 2, (1, 1))
# -- a look-alike fail (a person's, under the controller's name) -------------------------
_v("ui1a-lookf", ["rmlock", "lookf"], ["resume"], "completed", None, (1, 1))
_v("ur1a-lookf", ["rmlock", "lookf"], ["resume"], "completed", None, (1, 1))
_v("t2-lookfsealcopy", ["lookfcopy"], ["resume", "resume"], "completed", None, (1, 2))
_v("t2-lookabort", ["looka"], [], "aborted", None, (1, 1))
# -- the controller's own index commit in flight, the branch moved past it --------------
_v("ui1a-ownplan", ["ownplan"], [], "completed", None, (1, 1))
_v("ui2a-ownplan", ["ownplan"], [], "completed", None, (1, 1))
_v("ui2b-ownlog", ["ownlog"], [], "completed", None, (1, 1))
_v("ur2b-wtedit", ["wtedit"], ["discard"], "completed", None, (1, 1))
_v("ui2b-rmstage", ["rmlock", "stage"], ["discard"], "completed", None, (1, 1))
_v("ui2a-rmstage", ["rmlock", "stage"], ["discard"], "completed", None, (1, 1))
_v("ui1b-rmstage", ["rmlock", "stage"], ["discard"], "completed", None, (1, 1))
# -- the execution record between actions (killed in action 2) ----------------------------
_v("t2-logwt", ["logwt"], ["rmlog"], "failed", 2, (1, 1))
_v("t2-logcommit", ["logcommit"], [], "failed", 2, (1, 1))
_v("t2-execsucc", ["execsucc"], [], "failed", 2, (1, 1))
_v("t2-execsuccbot", ["execsuccbot"], [], "failed", 2, (1, 1))
_v("t2-loglink", ["loglink"], [], "failed", 2, (1, 1))
_v("t2-logchmod", ["logchmod"], ["rmlog"], "failed", 2, (1, 1))
_v("t2-loghuge", ["loghuge"], [], "failed", 2, (1, 1))
_v("t2-logfifo", ["logfifo"], [], "failed", 2, (1, 1))
_v("g2-logwt", ["logwt"], ["discardlog"], "failed", 2, (1, 1))
_v("g2-logstage", ["logstage"], ["discardlog"], "failed", 2, (1, 1))
_v("g2-execsucc", ["execsucc"], [], "failed", 2, (1, 1))
# -- resume / abort raced with a kill ------------------------------------------------------
_v("t2-abort", ["abort"], [], "aborted", 2, (1, 1))
_v("t1-abort", ["abort"], [], "aborted", 1, (1, 0))
_v("t2-abortkill", ["abortkill"], [], "aborted", 2, (1, 1))
# changed (605be731): the person's abort now finishes the dead controller's index write
# first (statedir.finish_a_dead_controllers_index) and lands before action 1: aborted, no call
_v("ui1a-abort", ["abort"], [], "aborted", None, (0, 0))
_v("t2-resumekill", [], ["resumekill"], "completed", None, (1, 2))
_v("tt2-resumeagain", [], ["resume", "pass", "resume"], "completed", None, (1, 3))
_v("t2-resumeabort", [], ["resume+abort"], "aborted", 2, (1, 1))
# -- two controllers on one repository (last: a take-over adopts every open run) ----------
_v("live-lock", ["second"], [], "failed", 2, (1, 1))
_v("d2-newstate", ["newstate"], [], "failed", 2, (1, 1))
# -- last: a person's merge back and a replayed start leave the branch's line otherwise
_v("ui1a-cherrybot", ["rmlock", "rhard", "cherrybot"], ["restore"], "completed", None, (1, 1))
_v("ui1a-rhardmerge", ["rmlock", "rhard", "note", "mergeback"], [], "completed", None, (1, 1))
_v("t2-rhardmerge", ["rhard", "note", "mergeback"], [], "failed", 2, (1, 1))

ALL = list(V)
#: acts after which the next variant first lets a pass decide what is left (a refusal of a
#: held plan) so that its own commits are not batched with another plan's
SETTLE = {"rhard", "rsoft", "amend", "amendbot", "cherry", "cherrybot", "revert", "restore"}
SETTLE |= {"mergeback", "lookf", "lookfcopy", "looka", "reapprove", "resume"}

#: what a waiting row after the recovery pass must name for the first remedy followed
NAMES = {
    "discard": ("uncommitted",),
    "discardlog": ("uncommitted",),
    "rmlog": (),
    "restore": ("E_HISTORY_REWRITTEN", "restore"),
    "resume": (),
    "resumekill": (),
    "resume+abort": (),
}
TERMINAL = ("completed", "failed", "aborted")


def _kp(x: str) -> Any:
    return KP[x.split("-", 1)[0]]


def _plan(x: str) -> str:
    kind, at = _kp(x)
    m1 = "kill" if (kind, at) == ("tool", 1) else "rec"
    m2 = {("tool", 2): "kill", ("daemon", 2): "slow", ("live", 2): "slow"}.get((kind, at), "rec")
    if x.startswith("tt2"):
        m2 = "kill2"
    gate = "    requires_approval: true\n" if x.startswith("g2") else ""
    return (
        f'plan:\n  name: "{x}"\n  task: "atk122d {x}"\n  status: pending_approval\n'
        "available_tools:\n  - name: k122\nactions:\n"
        f'  - id: 1\n    tool: k122\n    why: "one"\n    params: {{m: {m1}, t: "{x}-1"}}\n'
        f'  - id: 2\n    tool: k122\n    why: "two"\n    params: {{m: {m2}, t: "{x}-2"}}\n' + gate
    )


# -- the person's git, as they run it (its own result kept, never raised) ------------------
def _g(lab: Lab, *a: str, who: tuple[str, str] = AGENT, env: dict[str, str] | None = None) -> Any:
    e = lab.env(who)
    e.update(env or {})
    r = subprocess.run(["git", *a], cwd=lab.repo, env=e, capture_output=True, text=True)
    return [a[0], r.returncode, r.stderr[-300:]]


def _hash_object(lab: Lab, src: Path) -> str:
    return subprocess.run(
        ["git", "hash-object", "-w", str(src)],
        cwd=lab.repo,
        env=lab.env(),
        capture_output=True,
        text=True,
    ).stdout.strip()


def _own_index_commit(lab: Lab, x: str, rel: str, text: str, msg: str) -> Any:
    env = {"GIT_INDEX_FILE": str(lab.root / f"idx-{x}")}
    _g(lab, "read-tree", "HEAD", env=env)
    src = lab.root / f"blob-{x}"
    src.write_text(text)
    blob = _hash_object(lab, src)
    _g(lab, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
    return _g(lab, "commit", "-q", "-m", msg, env=env)


def _head_text(lab: Lab, rel: str) -> str:
    return subprocess.run(
        ["git", "show", f"HEAD:{rel}"], cwd=lab.repo, env=lab.env(), capture_output=True
    ).stdout.decode()


def _cli_as(lab: Lab, who: tuple[str, str], *args: str, spec: str | None = None) -> Any:
    """``plangate <args>`` as ``who`` (its git identity); ``spec``: the git wrapper kills it."""
    d = lab.t  # type: ignore[attr-defined]
    extra = {
        "GIT_AUTHOR_NAME": who[0],
        "GIT_AUTHOR_EMAIL": who[1],
        "GIT_COMMITTER_NAME": who[0],
        "GIT_COMMITTER_EMAIL": who[1],
    }
    if spec:
        (d / "spec").write_text(spec)
        extra["PATH"] = f"{lab.wrap}:{os.environ['PATH']}"  # type: ignore[attr-defined]
    lab.extra_env = extra  # type: ignore[attr-defined]
    try:
        r = lab.cli(*args, cwd=lab.repo)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
        (d / "spec").unlink(missing_ok=True)
        (d / "spec.count").unlink(missing_ok=True)
    return [args[0], r.returncode, (r.stdout + r.stderr)[-400:]]


def _bot_fake(lab: Lab, x: str, ev: str, st: str, extra: str = "") -> Any:
    rel = f"plans/{x}/PLAN.yml"
    path = lab.repo / rel
    text = path.read_text()
    for was in ("executing", "awaiting_approval", "approved"):
        text = text.replace(f"  status: {was}\n", f"  status: {st}\n", 1)
    path.write_text(text)
    _g(lab, "add", rel)
    msg = f"plangate: {ev} plans/{x}\n\nPlan: plans/{x}\nPlan-Status: {st}\n{extra}"
    return _g(lab, "commit", "-q", "-m", msg + "Approved-By: alice@example.com", who=BOT)


def _exec_edit(lab: Lab, x: str, how: str) -> str:
    """The plan file with its ``execution:`` block edited (action ``running``/``in_doubt``
    -> ``succeeded``; the block removed; ``gate:`` moved)."""
    text = (lab.repo / "plans" / x / "PLAN.yml").read_text()
    head, sep, block = text.partition("\nexecution:\n")
    if how == "del":
        return head + "\n"
    if how == "gate":
        return head + sep + block + "  gate: {action: 2}\n"
    for s in ("running", "pending", "in_doubt"):
        block = block.replace(f"status: {s}", "status: succeeded")
    return head + sep + block


def _act(lab: Lab, x: str, how: str) -> Any:
    rel = f"plans/{x}/PLAN.yml"
    log = f"plans/{x}/EXECUTION_LOG.md"
    path = lab.repo / rel
    tip = lab.t / f"tip-{x}"  # type: ignore[attr-defined]
    if how == "rmlock":
        had = (lab.repo / ".git/index.lock").exists()
        (lab.repo / ".git/index.lock").unlink(missing_ok=True)
        return ["rmlock", had]
    if how in ("rhard", "rsoft", "amend", "amendbot"):
        tip.write_text(lab.head())
        if how == "amend":
            return _g(lab, "commit", "-q", "--amend", "--no-edit", "--allow-empty")
        if how == "amendbot":  # the same tree, parent and message, dated otherwise
            e = {"GIT_COMMITTER_DATE": "@1800000000 +0000"}
            return _g(lab, "commit", "-q", "--amend", "--no-edit", "--allow-empty", who=BOT, env=e)
        return _g(lab, "reset", "-q", "--hard" if how == "rhard" else "--soft", "HEAD~1")
    if how == "revert":
        tip.write_text(lab.head())
        return _g(lab, "revert", "--no-edit", "HEAD")
    if how in ("cherry", "cherrybot"):
        e = {"GIT_COMMITTER_DATE": "@1800000000 +0000"}
        who = BOT if how == "cherrybot" else AGENT
        return _g(lab, "cherry-pick", "--allow-empty", tip.read_text().strip(), who=who, env=e)
    if how == "note":
        lab.put(f"notes/{x}.txt", f"note {x}\n")
        _g(lab, "add", f"notes/{x}.txt")
        return _g(lab, "commit", "-q", "-m", f"agent: note {x}")
    if how == "reapprove":  # Alice's approval again, through plangate approve
        return _cli_as(lab, ALICE, "approve", "--config", str(lab.config), f"plans/{x}")
    if how == "commitall":  # the stale working file, committed under the person's name
        return _g(lab, "commit", "-q", "-a", "-m", f"agent: commit all {x}")
    if how == "resetidx":
        return _g(lab, "reset", "-q")
    if how == "mergeback":  # the erased tip merged back beside the line, before the restart
        return _g(lab, "merge", "-q", "--no-ff", "-m", f"agent: merge back {x}", tip.read_text())
    if how == "wtedit":
        path.write_text(path.read_text() + TAG + "\n")
        return ["wtedit", 0]
    if how == "logstage":
        p = lab.repo / log
        p.write_text((p.read_text() if p.exists() else "") + f"\n{LOGTAG}\n")
        lab.seen[f"{x}:person_log"] = p.read_bytes().decode("utf-8", "replace")  # type: ignore[attr-defined]
        return _g(lab, "add", log)
    if how == "lookf":
        return _bot_fake(lab, x, "fail", "failed")
    if how == "looka":
        return _bot_fake(lab, x, "abort", "aborted")
    if how == "lookfcopy":  # the trailers of the controller's own start copied on
        body = lab.git("log", "-1", "--format=%b", "--author=plangate@localhost", "--", rel)
        seal = [ln for ln in body.splitlines() if ln.startswith("Controller-Seal:")]
        return _bot_fake(lab, x, "fail", "failed", "\n".join(seal) + "\n")
    if how == "ownplan":
        text = _head_text(lab, rel) + "# person comment\n"
        return _own_index_commit(lab, x, rel, text, f"agent: comment {x}")
    if how == "ownlog":
        text = _head_text(lab, log) + f"\n{LOGTAG}\n"
        return _own_index_commit(lab, x, log, text, f"agent: log {x}")
    if how in ("stash", "stage"):
        path.write_text(path.read_text() + TAG + "\n")
        return _g(lab, how if how == "stash" else "add", *([] if how == "stash" else [rel]))
    if how == "logwt":
        p = lab.repo / log
        p.write_text((p.read_text() if p.exists() else "") + f"\n{LOGTAG}\n")
        lab.seen[f"{x}:person_log"] = p.read_bytes().decode("utf-8", "replace")  # type: ignore[attr-defined]
        return ["logwt", 0]
    if how == "logcommit":
        p = lab.repo / log
        p.write_text((p.read_text() if p.exists() else "") + f"\n{LOGTAG}\n")
        _g(lab, "add", log)
        return _g(lab, "commit", "-q", "-m", f"agent: log {x}")
    if how in ("execsucc", "execsuccbot", "execdel", "execgate"):
        kind = {"execdel": "del", "execgate": "gate"}.get(how, "succ")
        path.write_text(_exec_edit(lab, x, kind))
        _g(lab, "add", rel)
        if how == "execsuccbot":
            msg = f"plangate: checkpoint plans/{x}\n\nPlan: plans/{x}\nPlan-Status: executing\n"
            return _g(lab, "commit", "-q", "-m", msg, who=BOT)
        return _g(lab, "commit", "-q", "-m", f"agent: record {x}")
    if how in ("loglink", "logwtlink"):
        p = lab.repo / log
        p.unlink(missing_ok=True)
        p.symlink_to("/etc/hostname")
        if how == "logwtlink":
            return ["logwtlink", 0]
        _g(lab, "add", log)
        return _g(lab, "commit", "-q", "-m", f"agent: link {x}")
    if how == "logchmod":
        (lab.repo / log).write_text(f"{LOGTAG}\n")
        lab.seen[f"{x}:person_log"] = f"{LOGTAG}\n"  # type: ignore[attr-defined]
        (lab.repo / log).chmod(0)
        return ["logchmod", 0]
    if how == "loghuge":
        (lab.repo / log).write_text(("x" * 1023 + "\n") * 3000)
        _g(lab, "add", log)
        return _g(lab, "commit", "-q", "-m", f"agent: huge log {x}")
    if how == "logfifo":
        os.mkfifo(lab.repo / log)
        return ["logfifo", 0]
    if how == "logdir":
        _g(lab, "rm", "-q", log)
        lab.put(f"{log}/inner.txt", "a folder where the log was\n")
        _g(lab, "add", f"{log}/inner.txt")
        return _g(lab, "commit", "-q", "-m", f"agent: log dir {x}")
    if how == "newstate":  # a second controller, its own state directory, same repo
        return _second(lab, x, take_over=False)
    if how == "takeover":
        return _second(lab, x, take_over=True)
    if how == "abort":
        return _cli_as(lab, ALICE, "abort", "--config", str(lab.config), f"plans/{x}")
    if how == "abortkill":
        return _cli_as(
            lab,
            ALICE,
            "abort",
            "--config",
            str(lab.config),
            f"plans/{x}",
            spec="update-index|1|after",
        )
    if how == "second":
        return lab.t_second.get(x)  # type: ignore[attr-defined]
    raise AssertionError(how)


def _second(lab: Lab, x: str, take_over: bool) -> Any:
    cfg = lab.root / f"second-{x}.yml"
    cfg.write_text(
        lab.config.read_text().replace(f"state_dir: {lab.state}", f"state_dir: {lab.root}/s2-{x}")
    )
    told = ["--take-over"] if take_over else []
    r = lab.cli("run", "--once", *told, "--config", str(cfg))
    lab.t_cfg2 = cfg  # type: ignore[attr-defined]
    return ["second", r.returncode, r.stderr[-600:]]


def _remedy(lab: Lab, x: str, how: str) -> Any:
    rel = f"plans/{x}/PLAN.yml"
    tip = (lab.t / f"tip-{x}").read_text().strip() if (lab.t / f"tip-{x}").exists() else ""  # type: ignore[attr-defined]
    if how == "discard":
        return _g(lab, "checkout", "HEAD", "--", rel)
    if how == "rmlog":
        (lab.repo / f"plans/{x}/EXECUTION_LOG.md").unlink(missing_ok=True)
        return ["rmlog", 0]
    if how == "discardlog":
        return _g(lab, "checkout", "HEAD", "--", f"plans/{x}/EXECUTION_LOG.md")
    if how == "unchmod":
        (lab.repo / f"plans/{x}/EXECUTION_LOG.md").chmod(0o644)
        return ["unchmod", 0]
    if how == "restore":
        return _g(lab, "reset", "-q", "--hard", tip)
    if how == "ffrestore":
        return _g(lab, "merge", "-q", "--ff-only", tip)
    if how == "merge":
        return _g(lab, "merge", "-q", "--no-ff", "-m", f"agent: merge back {x}", tip)
    if how == "pass":  # nothing: the killed resume's recovery pass
        return ["pass"]
    if how in ("resume", "resume2"):
        return _cli_as(lab, ALICE, "approve", "--config", str(lab.config), f"plans/{x}")
    if how == "resumekill":
        got = _cli_as(
            lab,
            ALICE,
            "approve",
            "--config",
            str(lab.config),
            f"plans/{x}",
            spec="update-index|1|after",
        )
        return [got, (lab.repo / ".git/index.lock").exists()]
    if how == "resume+abort":
        a = _cli_as(lab, ALICE, "approve", "--config", str(lab.config), f"plans/{x}")
        b = _cli_as(lab, ALICE, "abort", "--config", str(lab.config), f"plans/{x}")
        return [a, b]
    raise AssertionError(how)


def _calls(lab: Lab, x: str) -> tuple[int, int]:
    p = lab.t / "calls.log"  # type: ignore[attr-defined]
    rows = [json.loads(ln) for ln in p.read_text().splitlines() if ln.strip()] if p.exists() else []
    return tuple(sum(1 for r in rows if r["t"] == f"{x}-{i}") for i in (1, 2))  # type: ignore[return-value]


def _pass(lab: Lab, tag: str, spec: str | None = None) -> tuple[int, str]:
    d = lab.t  # type: ignore[attr-defined]
    if spec:
        (d / "spec").write_text(spec)
        lab.extra_env = {"PATH": f"{lab.wrap}:{os.environ['PATH']}"}  # type: ignore[attr-defined]
    t0 = time.time()
    try:
        r = lab.run(check=False)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
        (d / "spec").unlink(missing_ok=True)
        (d / "spec.count").unlink(missing_ok=True)
    lab.seen["passes"].append((tag, r.returncode, r.stderr[-1200:]))  # type: ignore[attr-defined]
    lab.seen["took"].append((tag, round(time.time() - t0, 2)))  # type: ignore[attr-defined]
    return r.returncode, r.stderr


def _daemon_kill(lab: Lab, x: str, live: bool = False) -> tuple[int, str]:
    """The daemon (``plangate run``) SIGKILLed once action 2 has begun (its tool sleeps);
    ``live``: meanwhile a second ``run --once`` on the same config (one state directory)."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    err = lab.root / f"daemon-{x}.err"
    with open(err, "wb") as fh:
        proc = subprocess.Popen(
            [PY, "-m", "controller", "run", "--config", str(lab.config)],
            cwd=lab.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=fh,
            start_new_session=True,
        )
        try:
            end = time.time() + 240
            while time.time() < end and _calls(lab, x)[1] < 1 and proc.poll() is None:
                time.sleep(0.1)
            if live and proc.poll() is None:
                r = lab.cli("run", "--once", "--config", str(lab.config))
                lab.t_second[x] = ["second", r.returncode, r.stderr[-600:], _calls(lab, x)]  # type: ignore[attr-defined]
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    lab.seen["passes"].append((f"{x}-daemon", proc.returncode, err.read_text()[-1200:]))  # type: ignore[attr-defined]
    return proc.returncode, err.read_text()[-1200:]


def _row(lab: Lab, x: str) -> dict[str, Any]:
    try:
        rows = lab.rows()
    except (TypeError, KeyError):
        out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
        return {"status": None, "reason": out[-600:]}
    if "raw" in rows:
        return {"status": None, "reason": str(rows["raw"])[-600:]}
    return dict(rows.get(f"plans/{x}", {}))


def _safe(step: Any, lab: Lab, x: str, how: str) -> Any:
    """A person's step; a bench failure is kept for ``test_bench_steps`` (never raised)."""
    try:
        return step(lab, x, how)
    except Exception as why:
        lab.seen["bench_errors"].append((x, how, f"{type(why).__name__}: {why}"[-300:]))  # type: ignore[attr-defined]
        return ["error", how]


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "k122.py").write_text(TOOL)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "k122.py"), "{m}", "{t}"])
    env = json.dumps({"T_DIR": str(d)})
    lab.write_config(tools=f"k122: {{kind: exec, argv: {argv}, env: {env}}}\n")
    wrap = root / "bin"
    wrap.mkdir()
    real = shutil.which("git")
    (wrap / "git").write_text(GITWRAP.format(spec=d / "spec", real=real, log=d / "killed.log"))
    (wrap / "git").chmod(0o755)
    lab.t = d  # type: ignore[attr-defined]
    lab.wrap = wrap  # type: ignore[attr-defined]
    lab.t_second = {}  # type: ignore[attr-defined]
    seen: dict[str, Any] = {"passes": [], "took": [], "bench_errors": []}
    lab.seen = seen  # type: ignore[attr-defined]
    for x in ALL:
        lab.write(x, _plan(x))
    lab.commit("agent: plans")
    _pass(lab, "freeze")
    prev: list[str] = []
    for x, (acts, remedies, _st, _a, _c) in V.items():
        if prev and (set(prev) & SETTLE):  # the last variant's leftovers decided first
            _pass(lab, f"{x}-settle")
        prev = acts + remedies
        lab.approve(x)
        if x.startswith("g2"):
            _pass(lab, f"{x}-pause")
            seen[f"{x}:paused"] = _row(lab, x).get("status")
            lab.approve(x, message=f"approve gate {x}")
        kind, at = _kp(x)
        if kind in ("daemon", "live"):
            seen[f"{x}:kill"] = _daemon_kill(lab, x, live=kind == "live")
        else:
            seen[f"{x}:kill"] = _pass(lab, f"{x}-kill", at if kind == "git" else None)
        seen[f"{x}:killed_calls"] = _calls(lab, x)
        seen[f"{x}:acts"] = [_safe(_act, lab, x, a) for a in acts]
        seen[f"{x}:rec"] = _pass(lab, f"{x}-rec")
        seen[f"{x}:rec_row"] = _row(lab, x)
        seen[f"{x}:displaced"] = {}  # what the row names as displaced, read as it is there
        for name in seen[f"{x}:rec_row"].get("displaced") or []:
            with contextlib.suppress(OSError):
                seen[f"{x}:displaced"][name] = (
                    (lab.repo / name).read_bytes().decode("utf-8", "replace")
                )
        seen[f"{x}:rec_calls"] = _calls(lab, x)
        p = lab.repo / "plans" / x / "PLAN.yml"
        lp = lab.repo / "plans" / x / "EXECUTION_LOG.md"
        seen[f"{x}:wt"] = p.read_text() if p.is_file() else ""
        with contextlib.suppress(OSError):
            seen[f"{x}:wtlog"] = ("link:" if lp.is_symlink() else "") + (
                os.readlink(lp) if lp.is_symlink() else lp.read_text()[-2000:]
            )
        seen[f"{x}:cached"] = lab.git("diff", "--cached", "--", f"plans/{x}", check=False)
        seen[f"{x}:stash"] = lab.git("stash", "list", check=False)
        if "stash" in acts:
            seen[f"{x}:stash_p"] = lab.git("stash", "show", "-p", check=False)
            lab.git("stash", "drop", "-q", check=False)
        for i, remedy in enumerate(remedies):
            seen[f"{x}:remedy{i}"] = _safe(_remedy, lab, x, remedy)
            _pass(lab, f"{x}-rem{i}")
            seen[f"{x}:rem_calls{i}"] = _calls(lab, x)
        # tidy for the next variant: back on main, the person's leftovers dropped
        with contextlib.suppress(OSError):
            (lab.repo / "plans" / x / "EXECUTION_LOG.md").chmod(0o644)
        (lab.repo / ".git/index.lock").unlink(missing_ok=True)
        lab.git("checkout", "-q", "-f", "main", check=False)
        lab.git("reset", "-q", "--hard", check=False)
        lab.git("clean", "-q", "-fdx", check=False)
    _pass(lab, "last")
    seen["rows"] = lab.rows()
    seen["calls"] = {x: _calls(lab, x) for x in ALL}
    for x in ALL:
        with contextlib.suppress(Exception):
            seen[f"{x}:final"] = lab.plan(x, "main")
        seen[f"{x}:finallog"] = lab.git("show", f"main:plans/{x}/EXECUTION_LOG.md", check=False)[
            -3000:
        ]
    seen["bot"] = lab.git(
        "log", "-p", "--format=@@%H %ae %s", "--author=plangate@localhost", "main"
    )
    seen["killed"] = (d / "killed.log").read_text() if (d / "killed.log").exists() else ""
    seen["audit"] = clone_audit_got(lab, root)
    with contextlib.suppress(OSError):
        Path("/tmp/atk122d/seen.json").write_text(json.dumps(seen, default=str, indent=1))
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r122d-L", _build).seen  # type: ignore[attr-defined]


def _xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 122: {cls}: {what}")


BROKEN: dict[str, Any] = {}
_STAGED = _xf(
    "staged-edit-unstaged",
    "the controller killed inside its index write, the stale lock removed, a person stages an "
    "edit of PLAN.yml: the restart points the entry back at the controller's blob",
)
_LOG = _xf(
    "log-edit-overwritten",
    "a person's uncommitted or staged EXECUTION_LOG.md (untracked or tracked) is overwritten "
    "by the restart's outcome, no wait",
)
_MERGED = _xf(
    "merged-back-start-unaudited",
    "an erased start merged back beside the line before the restart: the controller goes on "
    "with the run, the fresh-clone audit lists no execution of it",
)
_REPLAY = _xf(
    "replayed-start-hold-unrestorable",
    "the erased start replayed under the controller's name (cherry-pick): adopted as its "
    "own, then the named remedy (restore) erases it and the plan is held for good",
)
# staged-edit-unstaged: fixed (fix124r)
KEPT_BROKEN: dict[str, Any] = {}  # log-edit-overwritten: changed and fixed (fix125l)
AUDIT_BROKEN: dict[str, Any] = {}  # merged-back-start-unaudited: fixed (fix123h)
# replayed-start-hold-unrestorable: fixed (fix123h)


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_kill_happened(L: dict[str, Any], x: str) -> None:
    """The killing pass was really SIGKILLed at its point (the bench did what it says)."""
    rc, err = L[f"{x}:kill"]
    assert rc == -9, (rc, err[-400:])
    kind, at = _kp(x)
    if kind == "git":
        sub, _n, when = at.split("|")
        assert f"{when} {sub}" in L["killed"], L["killed"]


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_once(L: dict[str, Any], x: str) -> None:
    """Each action ran once: never again after the kill unasked; more only for a resume."""
    assert L["calls"][x] == V[x][4], (L["calls"][x], L[f"{x}:killed_calls"], L[f"{x}:acts"])


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN))
def test_final(L: dict[str, Any], x: str) -> None:
    """The plan ends as documented (completed; failed or aborted with the killed action
    ``in_doubt`` ``E_ACTION_IN_DOUBT``), in the status row and in main's PLAN.yml."""
    _acts, _rem, want, doubt, _c = V[x]
    row = L["rows"].get(f"plans/{x}", {})
    assert row.get("status") == want, (row.get("status"), row.get("waiting"), row.get("reason"))
    final = L.get(f"{x}:final") or {}
    assert (final.get("plan") or {}).get("status") == want, final.get("plan")
    acts = {a.get("id"): a for a in (final.get("execution") or {}).get("actions") or []}
    if doubt:
        a = acts.get(doubt) or {}
        assert a.get("status") == "in_doubt", a
        assert (a.get("error") or {}).get("code") == "E_ACTION_IN_DOUBT", a
    running = [i for i, a in acts.items() if a.get("status") == "running"]
    assert not running, acts


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_never_silent(L: dict[str, Any], x: str) -> None:
    """After the recovery pass the plan is terminal, or its row says why it waits and
    names the remedy the variant then follows (which then works: ``test_final``); never
    ``executing`` (or held) with nothing said."""
    row = L[f"{x}:rec_row"]
    text = json.dumps([row.get("waiting"), row.get("reason")])
    if row.get("status") in TERMINAL:
        return
    assert row.get("waiting") or row.get("reason"), (row.get("status"), text)
    remedies = V[x][1]
    assert remedies, (row.get("status"), text)
    for word in NAMES[remedies[0]]:
        assert word in text, (word, row.get("status"), text)


KEPT_ACTS = {"wtedit", "stage", "stash", "logwt", "logstage", "logchmod"}
KEPT = [x for x in ALL if set(V[x][0]) & KEPT_ACTS]


@pytest.mark.parametrize("x", cases(KEPT, KEPT, KEPT_BROKEN))
def test_kept(L: dict[str, Any], x: str) -> None:
    """A person's uncommitted, staged or stashed change survives the recovery pass as they
    left it: "plangate never stages, commits or discards anyone's other work"; a staged
    edit makes the plan wait, "the change kept" (docs/approvals.md)."""
    acts = V[x][0]
    if "stash" in acts:
        assert L[f"{x}:stash"].strip() and TAG in L.get(f"{x}:stash_p", ""), L[f"{x}:stash"]
        return
    if set(acts) & {"logwt", "logstage", "logchmod"}:
        # changed (fix125l): the controller commits its own log (round 95's kw:log) and
        # saves the person's first: recoverable, byte for byte, at the path the status row
        # names (docs/execution.md), the staged version too; its commit holds none of it
        person = L[f"{x}:person_log"]
        saved = {name.rpartition("/")[2]: text for name, text in L[f"{x}:displaced"].items()}
        assert saved.get("EXECUTION_LOG.md") == person, (person, L[f"{x}:rec_row"])
        for name in L[f"{x}:displaced"]:
            assert name.startswith(f".git/plangate-displaced/plans%2F{x}/"), name
        if "logstage" in acts:
            assert saved.get("EXECUTION_LOG.md.staged") == person, (person, saved)
        assert LOGTAG not in L[f"{x}:finallog"], L[f"{x}:finallog"][-300:]
        return
    assert TAG in L[f"{x}:wt"], L[f"{x}:wt"][-300:]
    if "stage" in acts:
        assert TAG in L[f"{x}:cached"], (L[f"{x}:cached"][-300:], L[f"{x}:rec_row"].get("waiting"))


def _bot_commits(L: dict[str, Any]) -> list[tuple[str, str]]:
    out, head, buf = [], "", []
    for line in L["bot"].splitlines():
        if line.startswith("@@"):
            if head:
                out.append((head, "\n".join(buf)))
            head, buf = line[2:], []
        else:
            buf.append(line)
    if head:
        out.append((head, "\n".join(buf)))
    return out


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_own_bytes(L: dict[str, Any], x: str) -> None:
    """No commit under the controller's identity naming the plan adds a person's bytes (an
    uncommitted edit, a stash, a note, an edited log) or changes a file other than the
    plan's own PLAN.yml / EXECUTION_LOG.md (or the policy record); look-alikes aside."""
    bad = []
    for head, diff in _bot_commits(L):
        if not head.endswith(f" plans/{x}") or x in LOOK:
            continue
        files = [ln[6:] for ln in diff.splitlines() if ln.startswith("+++ b/")]
        added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        own = all(
            f.startswith(".plangate/")
            or f in (f"plans/{x}/PLAN.yml", f"plans/{x}/EXECUTION_LOG.md")
            for f in files
        )
        if not own or any(TAG in ln or LOGTAG in ln or "note " in ln for ln in added):
            bad.append((head, files))
    assert not bad, bad


LOOK = ["ui1a-lookf", "ur1a-lookf", "t2-lookabort", "t2-lookfsealcopy", "ui1a-amendbot"]
LOOK += ["ui1a-cherrybot", "t2-execsuccbot"]
#: unsealed look-alikes (a sealed one is an accepted limit of git alone: docs/threat-model.md)
FLAGGED = LOOK[:3]


@pytest.mark.parametrize("x", cases(FLAGGED, FLAGGED, {}))
def test_lookalike_flagged(L: dict[str, Any], x: str) -> None:
    """A look-alike run event a person committed under the controller's name is flagged by
    the fresh-clone audit as no commit of the controller's (``controller-unexplained``)."""
    kinds = {
        f.get("kind")
        for f in L["audit"]["report"].get("findings", [])
        if f.get("plan") == f"plans/{x}"
    }
    assert "controller-unexplained" in kinds, kinds


@pytest.mark.parametrize("x", cases(ALL, ALL, AUDIT_BROKEN))
def test_audit(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit agrees: the plan has an execution it calls valid, and none it
    calls invalid."""
    execs = [e for e in L["audit"]["report"].get("executions", []) if e.get("plan") == f"plans/{x}"]
    got = [(e.get("approval_valid"), e.get("outcome")) for e in execs]
    assert any(e.get("approval_valid") for e in execs), got
    assert all(e.get("approval_valid") for e in execs), got


def test_second_controller_refused(L: dict[str, Any]) -> None:
    """A second controller on the same state directory exits 2 ``E_LOCKED`` while the
    daemon runs; one with a new state directory refuses to start (``E_STORAGE``, sealed
    commits of another state directory) until ``--take-over``; neither runs anything."""
    lock = L["live-lock:acts"][0]
    assert lock[1] == 2 and "E_LOCKED" in lock[2], lock
    assert lock[3] == [1, 1] or tuple(lock[3]) == (1, 1), lock
    new = L["d2-newstate:acts"][0]
    assert new[1] != 0 and "E_STORAGE" in new[2] and "nothing is adopted" in new[2], new
    assert tuple(L["d2-newstate:rec_calls"]) == (1, 1), L["d2-newstate:rec_calls"]


def test_writers_killed(L: dict[str, Any]) -> None:
    """``plangate abort`` and ``plangate approve`` (a resume) were really SIGKILLed in their
    own index write (the bench did what it says), and the lock they left was there."""
    assert L["t2-abortkill:acts"][0][1] == -9, L["t2-abortkill:acts"]
    got, lock_left = L["t2-resumekill:remedy0"]
    assert got[1] == -9 and lock_left, L["t2-resumekill:remedy0"]


def test_bench_steps(L: dict[str, Any]) -> None:
    """Every person's step of the bench ran (a bench failure is never read as a finding)."""
    assert not L["bench_errors"], L["bench_errors"]


def test_passes_no_traceback(L: dict[str, Any]) -> None:
    """No pass printed a traceback; each exited 0 or was the one killed."""
    bad = [
        (t, rc, e[-300:])
        for t, rc, e in L["passes"]
        if "Traceback" in e or (rc not in (0, -9) and not t.endswith(("-kill", "-daemon")))
    ]
    assert not bad, bad
