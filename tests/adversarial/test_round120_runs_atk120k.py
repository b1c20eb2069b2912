"""Round 120 (runs, atk120k): "a controller killed at any moment comes back safe whatever
people do before it restarts". Local mode, config ``identity: {name: plangate, email:
plangate@localhost}``, approvers ``alice@example.com`` (and ``*@ops.example.com``).

Lab ``L`` (one build, module scope, one plan per variant, 49 plans). Exec tool ``k120``
(``ki``: the same script, ``idempotent: true``) appends one line per call to ``calls.log``
(the ground truth); mode ``kill`` records, then SIGKILLs its parent (the controller) once per
tag; ``slow`` records and sleeps (the daemon is killed meanwhile). Every plan has actions 1
and 2 (``g-*``: action 2 ``requires_approval``). A ``git`` first on the controller's PATH
SIGKILLs its caller on the Nth call of a given subcommand (``update-ref`` moves the branch,
``update-index`` writes the controller's private index copy under ``.git/index.lock``; it
makes no ``commit-tree``/``hash-object`` calls), before or after running it. Each variant:
Alice approves, one killing pass (``run --once``, or the daemon ``run`` SIGKILLed while
action 2 runs), the person's git activity, a recovery pass, the remedy its ``status`` row
names (when it waits), one more pass. Ids per variant:

- ``kill_happened[x]``: the killing pass died by SIGKILL at its point (the bench works);
- ``once[x]``: calls per action at the end (never twice unless idempotent or resumed);
- ``final[x]``: the status row and main's PLAN.yml (the in-doubt action ``in_doubt``,
  ``E_ACTION_IN_DOUBT``; no action left ``running``);
- ``never_silent[x]``: after the recovery pass the plan is terminal, or its row's
  ``waiting``/``reason`` names the cause and the remedy the variant then follows (which
  then works: ``final``); never ``executing`` with nothing said;
- ``kept[x]``: a person's working-tree edit, staged edit or stash survives the recovery;
- ``own_bytes[x]``: no controller commit adds a person's uncommitted, stashed or note
  bytes, or changes a file other than the plan's PLAN.yml/EXECUTION_LOG.md (or
  ``.plangate/``);
- ``audit[x]``: the fresh-clone ``plangate audit --json`` calls as many executions valid as
  approvals acted on;
- ``lookalike_flagged``, ``own_index_commit_no_wait``, ``resume_after_forged_fail``,
  ``erased_start_not_read_as_run``, ``passes_no_traceback``.

Kill points (the variant's prefix): ``t1``/``t2`` (tool in action 1/2), ``ti2`` (idempotent
action 2), ``d2`` (the daemon SIGKILLed while action 2 runs), ``ur1a``/``ui1a``/``ui1b``
(the start commit: after its ``update-ref``; after/before its ``update-index``),
``ur2a``/``ui2a``/``ui2b`` (the outcome commit), ``g-ur2a`` (the gate's pause commit),
``g-ui1a``/``g-ur1a`` (the start commit Alice's gate approval makes). Person's acts (the
suffix): ``ownnote``/``ownplan``/``ownrm`` (a commit through ``GIT_INDEX_FILE=`` of a note,
of a comment in PLAN.yml, of the folder's removal), ``wtedit`` (an uncommitted edit),
``stage`` (edit + ``git add``), ``stash``, ``branch`` (``checkout -b``, commit, back),
``amend`` (``--amend`` of the controller's last commit), ``rhard``/``rsoft`` (``reset
HEAD~1``), ``lookc``/``lookf`` (a look-alike ``plangate: complete``/``fail`` under the
controller's name), ``rm*`` (remove the stale ``.git/index.lock`` first, as
docs/operations.md's Troubleshoot says for a stale lock, then: ``commit`` what the index
stages, ``restore --staged``, ``stash``, ``add`` the stale plan file, ``add -A`` + commit,
``checkout -b side`` and stay there, ``--amend``, ``reset --hard``/``--soft HEAD~1``).

Seen (round 120: 314 ids, 301 passed, 13 xfailed (strict); ~95-130 s on 1 worker under a
load of 10), three classes.

**erased-start-refused-unheld** (7 ids: ``never_silent[ui1a-rhard,ui1b-rhard]``,
``erased_start_not_read_as_run[ui1a-rhard,ui1b-rhard]``, ``once/final/audit[ui1a-rsoft]``):
the controller SIGKILLed after its first start commit moved the branch, while it writes the
index (``git update-index`` on its private copy, before or after that call; ``.git/index.lock``
held). Before the restart a person removes the stale ``.git/index.lock`` and erases the
controller's last commit with ``git reset --hard HEAD~1`` (the branch back on Alice's
approval). The restart does not hold the plan (no ``E_HISTORY_REWRITTEN``, ``waiting``
null): it commits ``plangate: refuse`` on Alice's approval, ``E_ALREADY_EXECUTED: this exact
plan ... already ran here as plans/x (start <erased>); a copy, move or rewritten history of
it does not run again``, though no action of it was ever called. Alice's approval again is
refused the same way (seen in the scratch lab). Nothing names the remedy that works: ``git
reset --hard <erased start>`` (from the reflog) releases it and it completes, each action
once. With ``reset --soft HEAD~1`` the row waits "has uncommitted edits ... (commit or
discard them)"; discarding them (``git checkout HEAD -- PLAN.yml``) leads to the same refusal
and the plan never runs. One kill point earlier (right after the start's ``update-ref``,
``ur1a-rhard``), or at a gate approval's start (``g-ui1a``, ``g-ur1a``), the restart commits
a new start and completes; after an action ran (``t1-rhard``, ``t2-rhard``, ``d2``) the plan
is held ``E_HISTORY_REWRITTEN ... restore them or delete the plan``. docs/approvals.md "A
rewritten branch": "Every plan whose freeze, start, pause, outcome or abort commit is gone is
**held** ... (`E_HISTORY_REWRITTEN`, and `plangate status` shows the hold under `waiting`)";
SPEC: E_ALREADY_EXECUTED is for "a plan that already ran". Repro::

    # local mode; plan x (two exec actions) approved by Alice; a git wrapper first on PATH
    # that runs `git update-index ...` then `kill -9 $PPID`, on its first call only
    plangate run --once --config cfg.yml          # killed: start commit on main, lock held
    rm .git/index.lock && git reset --hard HEAD~1  # the person's clean-up
    plangate run --once --config cfg.yml          # plangate: refuse plans/x E_ALREADY_EXECUTED
    plangate status --json --config cfg.yml       # waiting: null; no action ever ran
    git reset --hard <erased start>; plangate run --once --config cfg.yml   # completed

**own-index-commit-waits** (4 ids: ``own_index_commit_no_wait[t2-ownplan,ti2-ownplan,
t1-ownplan,d2-ownplan]``): the controller SIGKILLed mid-action (its tool, or the daemon);
before the restart a person commits a comment to the plan's PLAN.yml through an index file
of their own (``GIT_INDEX_FILE``). The shared index entry and the working file are both
exactly the blob of the controller's start commit (checked), yet the restart leaves the run
``executing`` with ``waiting: "the outcome waits: plans/x/PLAN.yml has uncommitted edits;
plangate will not overwrite them (commit or discard them)"``, and does so at every later
pass (for good); ``git checkout HEAD -- plans/x/PLAN.yml`` (its remedy) then ends it
``failed`` ``E_ACTION_IN_DOUBT`` (the idempotent one ``completed``). docs/approvals.md: "An
entry that still names the blob the controller's own last commit of the file left is no
one's change and does not make it wait: a commit of the file made through another index
file (`GIT_INDEX_FILE`) moves HEAD and leaves the shared index on the controller's bytes".
Repro::

    plangate run --once --config cfg.yml      # action 2's tool runs `kill -9 $PPID`
    export GIT_INDEX_FILE=/tmp/idx; git read-tree HEAD
    (git show HEAD:plans/x/PLAN.yml; echo '# person comment') > /tmp/p.yml
    git update-index --cacheinfo 100644,$(git hash-object -w /tmp/p.yml),plans/x/PLAN.yml
    git commit -qm 'agent: comment'; unset GIT_INDEX_FILE
    plangate run --once --config cfg.yml      # executing, waiting "has uncommitted edits"
    git ls-files -s plans/x/PLAN.yml          # the start commit's blob = the working file

**forged-fail-resume-fails-again** (2 ids: ``resume_after_forged_fail[t2-lookf,t1-lookf]``):
after the kill a person commits a look-alike ``plangate: fail plans/x`` (``Plan-Status:
failed``, author and committer ``plangate <plangate@localhost>``). The restart stops the run
as docs/execution.md says (the row ``failed``, its ``reason`` null, nothing committed), and
the audit flags the commit ``controller-unexplained``. Alice then approves a resume: the pass
commits ``plangate: start`` and ``plangate: fail`` with ``E_ACTION_IN_DOUBT: action 2 ...
started at <the killed run's time> but its end was never recorded``: the doubted action is
not called; only her second approval runs it (once) and the plan completes. Safe (nothing
runs twice), but her approval is spent without effect. SPEC §6: "A `failed` plan that a
human approves again (same hash, §5 rules) resumes at its first unfinished action";
docs/execution.md: "the plan stays as the branch shows it, and a resume or abort goes on
from there". Repro: kill in action 2; ``sed -i 's/  status: executing/  status: failed/'
plans/x/PLAN.yml``; commit it as ``plangate <plangate@localhost>`` with the subject
``plangate: fail plans/x``; ``run --once``; Alice sets ``status: approved`` and commits;
``run --once`` (failed again, action 2 not called); Alice again; ``run --once`` (completed).

Fixed (2026-12-06, fix121b): **own-index-commit-waits**. The outcome's working-file check
(``Committing._check_worktree_file``) knew the controller's own bytes only as this process
had written them (``WorkTree.holds_own_checkout``, lost with the killed process), while the
staged check already took an index entry naming the controller's own last blob of the file
(``controller_blob``) for no one's change. The working file is now read the same way
(``Committing._holds_own_blob``: its bytes, as git would store them, are that blob's;
``controller_blob`` lives in the history index, so a restart knows it). The four ids pass; the
recovery pass ends the run, so those variants (and ``ui1b-ownplan``, whose working file and
entry are the start commit's blob too: the kill came before the index write, and the restart's
index repair set the entry) no longer need the "discard" remedy: their ``V`` rows name none,
and ``never_silent`` asks them to be terminal after the recovery pass. So does
``ui1a-rmcommit`` (the "seen, not asserted" case below): the person's commit of the stale
index takes the plan file back to the approval's bytes, while the working file keeps the
start commit's, the controller's own last blob of it; the restart no longer waits on them and
its outcome, written on the branch's text, completes the run (each action once).

Fixed (2026-12-06, fix121b): **erased-start-refused-unheld**. A rewrite is seen by the tip
the history index last read (``ControllerCore._history_rewritten``), and a kill inside the
start's index write comes before the index reads the start: after ``reset --hard HEAD~1`` no
tip it had seen was gone, nothing was held, and the frozen hash, recorded executed once the
branch held the start, refused the approval ``E_ALREADY_EXECUTED``. Now a start that the
executed record and the plan's job row both name, and that the branch no longer holds, holds
the plan as any erased start does (``Starting._hold_erased_starts``, once per process and
history build, before any row of a start off the branch is dropped); an approval of a held
plan whose executed start is the erased one is refused for the hold
(``Deciding._erased_run``: ``E_HISTORY_REWRITTEN``), not "already ran"; the job row of a held
start is kept (``Starting._forget_unlanded``) and taken up again when the hold ends
(``_release_holds``), so the old tip put back, even as a fast-forward under a running daemon,
goes on with the run from its journal. A start killed before the executed record
(``ur1a``, ``g-*``: a gate's start is no first start) is, as before, one that may never have
landed: a new start runs it. The seven ids pass; ``ui1a-rsoft``'s row now names the hold, so
its ``V`` remedy is the restore (the discard it named before led to the refusal).

Fixed (2026-12-06, fix122b): fix121b, merged and reverted (the CI check failed rounds 58
``softreset``, 93 ``bk:refused``, 116 ``final[sr]``: "no ``E_ALREADY_EXECUTED`` any more"),
is re-applied with its refusal rule narrowed. ``Deciding._erased_run`` had turned the
refusal of ANY held plan whose executed start a rewrite erased into ``E_HISTORY_REWRITTEN``,
so a start the history index had read (a run the agent's ``reset --soft`` erased mid-action,
a completed run whose remote was restored from a backup or whose branch was pointed back at
the approval) was no longer "already started once on this branch ... rewritten history"
(docs/errors.md, E_ALREADY_EXECUTED). It now applies only while the history index knows no
start of the hash (``HistoryIndex.ran_as``: each hash's first start, kept through rewrites),
which is this class's shape (the kill inside the start's index write came before any scan
read it); the others are refused ``E_ALREADY_EXECUTED`` as before, the hold under
``waiting`` (``tests/service/test_erased_unseen_start.py``,
``test_a_start_the_index_read_then_erased_is_held_and_already_ran``). The 11 ids of the two
classes still pass.

Not a defect (2026-12-06, fix122b): **forged-fail-resume-fails-again**. The look-alike
``fail`` ends nothing the journal knows of: action 1 or 2 began and its end was never
recorded. SPEC §6: "an action that started but has no recorded end is re-run only if its
tool is idempotent, otherwise the plan becomes ``failed`` with E_ACTION_IN_DOUBT"; and
docs/execution.md (round 68, "a crash before action 1, then a look-alike ``fail``"): "now it
runs what the journal shows never ran, and an action started and not ended is in doubt as
after any crash". Alice's first resume is that recovery (the doubted action not called, the
run ``failed`` ``E_ACTION_IN_DOUBT``, now recorded by the controller); her second "resumes at
its first unfinished action" and runs it once. ``resume_after_forged_fail[t2-lookf,
t1-lookf]`` are controls of that documented behaviour now, not strict xfails.

Held: every tool kill, daemon kill and ``update-ref``/``update-index`` kill point with no
person (each action once; in doubt ``E_ACTION_IN_DOUBT``; idempotent re-run once); a note or
folder removal committed through a private index; an uncommitted or staged edit (the outcome
waits naming it, the edit kept, the run goes on once discarded); a stash (kept); a branch
round trip; the checkout left on a side branch (``E_GIT ... git switch main``, then goes
on); an amend or reset of the controller's last commit after an action ran (held
``E_HISTORY_REWRITTEN``, restoring the tip goes on, the in-doubt action never re-run); the
outcome commit erased or amended after the kill (re-committed from the journal); a gate's
pause erased (paused again; one gate approval runs action 2 once); a look-alike
``complete`` (the controller's own ``fail`` over it, the audit flags it); the stale lock
removed, then the index's stale entries committed, ``restore --staged``, ``add`` or
``add -A``, ``stash``: the run goes on (or waits ``uncommitted edits`` and goes on once
discarded). No controller commit carried a person's bytes; the fresh-clone audit agrees.

Seen, not asserted as broken: with the controller dead after a kill inside its index write,
``plangate status`` calls its own half-written index entries "uncommitted changes staged in
the index ... (commit them, or unstage them: git restore --staged ...)"; with the lock removed,
committing them (``rmcommit``) takes the start back under the person's name and the restart
waits "uncommitted edits" until discarded (documented for ``plangate mcp``'s lock only). A
plan comment committed through a private index while the controller was killed inside its
own commit (``ur1a-ownplan``, ``ui1b-ownplan``) leaves the working file at the pre-commit
bytes ("left as it is", docs/execution.md) and the outcome waits on them until discarded.

Not tried: remote mode, nested plans, ``on_failure`` policies under these kills, kills
inside the readers (``cat-file``, ``log``), ``git gc``/``prune`` of the erased commits,
``plangate approve``/``mcp`` writers killed, a person's ``git stash pop`` after the outcome.
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

TOOL = r"""
import json, os, signal, sys, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T_DIR"]
with open(os.path.join(d, "calls.log"), "a") as f:
    f.write(json.dumps({"t": t, "m": m, "key": os.environ.get("PLANGATE_IDEMPOTENCY_KEY")}) + "\n")
if m == "kill":
    mark = os.path.join(d, "killed-" + t)
    if not os.path.exists(mark):
        open(mark, "w").close()
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
KP: dict[str, Any] = {
    "t1": ("tool", 1),
    "t2": ("tool", 2),
    "ti2": ("tool", 2),
    "d2": ("daemon", 2),
    "ur1a": ("git", "update-ref|1|after"),
    "ui1a": ("git", "update-index|1|after"),
    "ui1b": ("git", "update-index|1|before"),
    "ur2a": ("git", "update-ref|2|after"),
    "ur2b": ("git", "update-ref|2|before"),
    "ui2a": ("git", "update-index|2|after"),
    "ui2b": ("git", "update-index|2|before"),
}

#: variant -> (person's acts, remedy, final status, in-doubt action, calls (a1, a2))
#: remedy: None | "discard" (git checkout HEAD -- PLAN.yml) | "restore" (reset --hard to the
#: erased tip) | "resume" (Alice approves again: a resume of the doubted action)
V: dict[str, tuple[list[str], str | None, str, int | None, tuple[int, int]]] = {
    "d2-none": ([], None, "failed", 2, (1, 1)),
    "d2-stage": (["stage"], "discard", "failed", 2, (1, 1)),
    "d2-ownplan": (["ownplan"], None, "failed", 2, (1, 1)),
    "t2-none": ([], None, "failed", 2, (1, 1)),
    "t2-ownnote": (["ownnote"], None, "failed", 2, (1, 1)),
    "t2-ownplan": (["ownplan"], None, "failed", 2, (1, 1)),
    "t2-ownrm": (["ownrm"], None, "failed", 2, (1, 1)),
    "t2-wtedit": (["wtedit"], "discard", "failed", 2, (1, 1)),
    "t2-stage": (["stage"], "discard", "failed", 2, (1, 1)),
    "t2-stash": (["stash"], None, "failed", 2, (1, 1)),
    "t2-branch": (["branch"], None, "failed", 2, (1, 1)),
    "t2-amend": (["amend"], "restore", "failed", 2, (1, 1)),
    "t2-rhard": (["rhard"], "restore", "failed", 2, (1, 1)),
    "t2-rsoft": (["rsoft"], "restore", "failed", 2, (1, 1)),
    "t2-lookc": (["lookc"], None, "failed", 2, (1, 1)),
    "t2-lookf": (["lookf"], "resume", "completed", None, (1, 2)),
    "ti2-ownplan": (["ownplan"], None, "completed", None, (1, 2)),
    "ti2-none": ([], None, "completed", None, (1, 2)),
    "t1-none": ([], None, "failed", 1, (1, 0)),
    "t1-wtedit": (["wtedit"], "discard", "failed", 1, (1, 0)),
    "t1-rhard": (["rhard"], "restore", "failed", 1, (1, 0)),
    "t1-lookf": (["lookf"], "resume", "completed", None, (2, 1)),
    "t1-ownplan": (["ownplan"], None, "failed", 1, (1, 0)),
    "ur1a-none": ([], None, "completed", None, (1, 1)),
    "ur1a-ownplan": (["ownplan"], "discard", "completed", None, (1, 1)),
    "ur1a-wtedit": (["wtedit"], "discard", "completed", None, (1, 1)),
    "ur1a-rmcommit": (["rmlock", "commitidx"], None, "completed", None, (1, 1)),
    "ur1a-rmrestore": (["rmlock", "unstage"], None, "completed", None, (1, 1)),
    "ur1a-rhard": (["rmlock", "rhard"], None, "completed", None, (1, 1)),
    "ur1a-rmadd": (["rmlock", "addplan"], None, "completed", None, (1, 1)),
    "ur1a-rmside": (["rmlock", "side"], "back", "completed", None, (1, 1)),
    "ui1a-none": ([], None, "completed", None, (1, 1)),
    "ui1a-rmcommit": (["rmlock", "commitidx"], None, "completed", None, (1, 1)),
    "ui1a-rmstash": (["rmlock", "stash"], None, "completed", None, (1, 1)),
    "ui1a-rhard": (["rmlock", "rhard"], "restore", "completed", None, (1, 1)),
    "ui1b-rhard": (["rmlock", "rhard"], "restore", "completed", None, (1, 1)),
    "ui1a-rsoft": (["rmlock", "rsoft"], "restore", "completed", None, (1, 1)),
    "ui1b-ownplan": (["ownplan"], None, "completed", None, (1, 1)),
    "ur2a-none": ([], None, "completed", None, (1, 1)),
    "ur2a-ownplan": (["ownplan"], None, "completed", None, (1, 1)),
    "ur2a-rhard": (["rmlock", "rhard"], None, "completed", None, (1, 1)),
    "ur2a-rmamend": (["rmlock", "amend"], None, "completed", None, (1, 1)),
    "ui2a-rmside": (["rmlock", "side"], "back", "completed", None, (1, 1)),
    "ui2a-wtedit": (["wtedit"], None, "completed", None, (1, 1)),
    "ui2a-rhard": (["rmlock", "rhard"], None, "completed", None, (1, 1)),
    "ui2b-rmaddall": (["rmlock", "addall"], None, "completed", None, (1, 1)),
    # action 2 gated: killed at the pause's commit (the first pass) or at the start commit
    # the gate approval makes (the second pass)
    "g-ur2a-rhard": (["rmlock", "rhard"], "gate", "completed", None, (1, 1)),
    "g-ui1a-rhard": (["rmlock", "rhard"], None, "completed", None, (1, 1)),
    "g-ur1a-rhard": (["rmlock", "rhard"], None, "completed", None, (1, 1)),
}
#: gated variants killed at the start the gate's approval makes (after a first pause pass)
GSTART = {"g-ui1a-rhard", "g-ur1a-rhard"}
ALL = list(V)

#: what the row after the recovery pass must name for the remedy the variant then follows
NAMES = {
    "discard": ("uncommitted", "discard"),
    "restore": ("E_HISTORY_REWRITTEN", "restore"),
    "resume": ("failed",),
    "gate": ("approve",),
    "back": ("git switch main",),
}


def _kp(x: str) -> Any:
    return KP[x.removeprefix("g-").split("-", 1)[0]]


def _plan(x: str) -> str:
    kind, at = _kp(x)
    m1 = "kill" if (kind, at) == ("tool", 1) else "rec"
    m2 = {("tool", 2): "kill", ("daemon", 2): "slow"}.get((kind, at), "rec")
    tool2 = "ki" if x.startswith("ti2") else "k120"
    gate = "    requires_approval: true\n" if x.startswith("g-") else ""
    return (
        f'plan:\n  name: "{x}"\n  task: "atk120k {x}"\n  status: pending_approval\n'
        "available_tools:\n  - name: k120\n  - name: ki\nactions:\n"
        f'  - id: 1\n    tool: k120\n    why: "one"\n    params: {{m: {m1}, t: "{x}-1"}}\n'
        f'  - id: 2\n    tool: {tool2}\n    why: "two"\n    params: {{m: {m2}, t: "{x}-2"}}\n'
        + gate
    )


# -- the person's git, as they run it (its own result kept, never raised) ------------------
def _g(lab: Lab, *a: str, who: tuple[str, str] = AGENT, env: dict[str, str] | None = None) -> Any:
    e = lab.env(who)
    e.update(env or {})
    r = subprocess.run(["git", *a], cwd=lab.repo, env=e, capture_output=True, text=True)
    return [a[0], r.returncode, r.stderr[-300:]]


def _own_index_commit(lab: Lab, x: str, rel: str, text: str, msg: str) -> Any:
    env = {"GIT_INDEX_FILE": str(lab.root / f"idx-{x}")}
    _g(lab, "read-tree", "HEAD", env=env)
    src = lab.root / f"blob-{x}"
    src.write_text(text)
    blob = subprocess.run(
        ["git", "hash-object", "-w", str(src)],
        cwd=lab.repo,
        env=lab.env(),
        capture_output=True,
        text=True,
    ).stdout.strip()
    _g(lab, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
    return _g(lab, "commit", "-q", "-m", msg, env=env)


def _act(lab: Lab, x: str, how: str) -> Any:
    rel = f"plans/{x}/PLAN.yml"
    path = lab.repo / rel
    tip = lab.t / f"tip-{x}"  # type: ignore[attr-defined]
    if how == "rmlock":
        had = (lab.repo / ".git/index.lock").exists()
        (lab.repo / ".git/index.lock").unlink(missing_ok=True)
        return ["rmlock", had]
    if how == "ownnote":
        return _own_index_commit(lab, x, f"notes/{x}.txt", f"note {x}\n", f"agent: note {x}")
    if how == "ownplan":
        head = subprocess.run(
            ["git", "show", f"HEAD:{rel}"], cwd=lab.repo, env=lab.env(), capture_output=True
        ).stdout.decode()
        return _own_index_commit(lab, x, rel, head + "# person comment\n", f"agent: comment {x}")
    if how in ("wtedit", "stage", "stash"):
        path.write_text(path.read_text() + TAG + "\n")
        if how == "stage":
            return _g(lab, "add", rel)
        if how == "stash":
            return _g(lab, "stash")
        return ["wtedit", 0]
    if how == "branch":
        a = _g(lab, "checkout", "-q", "-b", f"side-{x}")
        lab.put(f"notes/side-{x}.txt", "side\n")
        _g(lab, "add", f"notes/side-{x}.txt")
        _g(lab, "commit", "-q", "-m", f"agent: side {x}")
        return [a, _g(lab, "checkout", "-q", "main")]
    if how in ("amend", "rhard", "rsoft"):
        tip.write_text(lab.head())
        if how == "amend":
            return _g(lab, "commit", "-q", "--amend", "--no-edit", "--allow-empty")
        return _g(lab, "reset", "-q", "--hard" if how == "rhard" else "--soft", "HEAD~1")
    if how in ("lookc", "lookf"):
        ev, st = ("complete", "completed") if how == "lookc" else ("fail", "failed")
        path.write_text(path.read_text().replace("  status: executing", f"  status: {st}", 1))
        _g(lab, "add", rel)
        msg = f"plangate: {ev} plans/{x}\n\nPlan: plans/{x}\nPlan-Status: {st}\n"
        return _g(lab, "commit", "-q", "-m", msg + "Approved-By: alice@example.com", who=BOT)
    if how == "commitidx":  # the status row's "commit them": what the index stages
        return _g(lab, "commit", "-q", "-m", f"agent: commit staged {x}")
    if how == "unstage":  # the status row's "unstage them"
        return _g(lab, "restore", "--staged", "--", rel)
    if how == "addplan":  # the stale bytes the killed write left, staged by a person
        return _g(lab, "add", rel)
    if how == "side":  # off to a branch of their own, and still there at the restart
        return _g(lab, "checkout", "-q", "-b", f"side-{x}")
    if how == "ownrm":  # the plan's folder deleted by a commit through their own index
        env = {"GIT_INDEX_FILE": str(lab.root / f"idx-{x}")}
        _g(lab, "read-tree", "HEAD", env=env)
        _g(lab, "rm", "-q", "-r", "--cached", f"plans/{x}", env=env)
        return _g(lab, "commit", "-q", "-m", f"agent: drop {x}", env=env)
    if how == "addall":
        return [_g(lab, "add", "-A"), _g(lab, "commit", "-q", "-m", f"agent: all {x}")]
    raise AssertionError(how)


def _remedy(lab: Lab, x: str, how: str) -> Any:
    rel = f"plans/{x}/PLAN.yml"
    if how == "discard":
        return _g(lab, "checkout", "HEAD", "--", rel)
    if how == "restore":
        return _g(lab, "reset", "-q", "--hard", (lab.t / f"tip-{x}").read_text().strip())  # type: ignore[attr-defined]
    if how == "back":
        return _g(lab, "checkout", "-q", "main")
    if how in ("resume", "gate"):
        lab.set_status(x, "approved")
        _g(lab, "add", rel)
        return _g(lab, "commit", "-q", "-m", f"alice: resume {x}", who=ALICE)
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


def _daemon_kill(lab: Lab, x: str) -> tuple[int, str]:
    """The daemon (``plangate run``) SIGKILLed once action 2 has begun (its tool sleeps)."""
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
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    lab.seen["passes"].append((f"{x}-daemon", proc.returncode, err.read_text()[-1200:]))  # type: ignore[attr-defined]
    return proc.returncode, err.read_text()[-1200:]


def _row(lab: Lab, x: str) -> dict[str, Any]:
    try:
        rows = lab.rows()
    except (TypeError, KeyError):  # status itself refused (a JSON error object: E_GIT)
        out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
        return {"status": None, "reason": out[-600:]}
    if "raw" in rows:
        return {"status": None, "reason": str(rows["raw"])[-600:]}
    return dict(rows.get(f"plans/{x}", {}))


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir(parents=True)
    (d / "k120.py").write_text(TOOL)
    lab = Lab(root / "L")
    argv = json.dumps([PY, str(d / "k120.py"), "{m}", "{t}"])
    env = json.dumps({"T_DIR": str(d)})
    lab.write_config(
        tools=f"k120: {{kind: exec, argv: {argv}, env: {env}}}\n"
        f"ki: {{kind: exec, argv: {argv}, env: {env}, idempotent: true}}\n"
    )
    wrap = root / "bin"
    wrap.mkdir()
    real = shutil.which("git")
    (wrap / "git").write_text(GITWRAP.format(spec=d / "spec", real=real, log=d / "killed.log"))
    (wrap / "git").chmod(0o755)
    lab.t = d  # type: ignore[attr-defined]
    lab.wrap = wrap  # type: ignore[attr-defined]
    seen: dict[str, Any] = {"passes": [], "took": []}
    lab.seen = seen  # type: ignore[attr-defined]
    for x in ALL:
        lab.write(x, _plan(x))
    lab.commit("agent: plans")
    _pass(lab, "freeze")
    for x, (acts, remedy, _st, _a, _c) in V.items():
        lab.approve(x)
        if x in GSTART:
            _pass(lab, f"{x}-pause")
            lab.approve(x, message=f"approve gate {x}")
        kind, at = _kp(x)
        if kind == "daemon":
            seen[f"{x}:kill"] = _daemon_kill(lab, x)
        else:
            seen[f"{x}:kill"] = _pass(lab, f"{x}-kill", at if kind == "git" else None)
        seen[f"{x}:killed_calls"] = _calls(lab, x)
        seen[f"{x}:acts"] = [_act(lab, x, a) for a in acts]
        seen[f"{x}:rec"] = _pass(lab, f"{x}-rec")
        seen[f"{x}:rec_row"] = _row(lab, x)
        seen[f"{x}:rec_calls"] = _calls(lab, x)
        p = lab.repo / "plans" / x / "PLAN.yml"
        seen[f"{x}:wt"] = p.read_text() if p.exists() else ""
        seen[f"{x}:cached"] = lab.git("diff", "--cached", "--", f"plans/{x}/PLAN.yml", check=False)
        seen[f"{x}:stash"] = lab.git("stash", "list", check=False)
        if "ownplan" in acts:  # the shared index's entry and the controller's last blob
            rel = f"plans/{x}/PLAN.yml"
            seen[f"{x}:entry"] = lab.git("ls-files", "-s", "--", rel, check=False).split()[1:2]
            own = lab.git(
                "log", "-1", "--format=%H", "--author=plangate@localhost", "HEAD", "--", rel
            ).strip()
            seen[f"{x}:own_blob"] = lab.git("rev-parse", f"{own}:{rel}", check=False).strip()
            seen[f"{x}:wt_blob"] = lab.git("hash-object", rel, check=False).strip()
        if "stash" in acts:
            seen[f"{x}:stash_p"] = lab.git("stash", "show", "-p", check=False)
            lab.git("stash", "drop", "-q", check=False)
        if remedy:
            seen[f"{x}:remedy"] = _remedy(lab, x, remedy)
            _pass(lab, f"{x}-rem")
            if remedy == "resume":  # the resume's run fails in doubt first: resume again
                seen[f"{x}:resume_row"] = _row(lab, x)
                seen[f"{x}:resume_calls"] = _calls(lab, x)
                seen[f"{x}:remedy2"] = _remedy(lab, x, remedy)
                _pass(lab, f"{x}-rem2")
        # tidy for the next variant: back on main, the person's leftovers dropped
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
    seen["bot"] = lab.git(
        "log", "-p", "--format=@@%H %ae %s", "--author=plangate@localhost", "main"
    )
    seen["killed"] = (d / "killed.log").read_text() if (d / "killed.log").exists() else ""
    seen["audit"] = clone_audit_got(lab, root)
    return lab


@pytest.fixture(scope="module")
def L(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared(tmp_path_factory, "r120k-L", _build).seen  # type: ignore[attr-defined]


def _xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 120: {cls}: {what}")


#: erased-start-refused-unheld: fixed (2026-12-06, fix121b)
BROKEN_NAMED: dict[str, Any] = {}
BROKEN_SOFT: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(ALL, ALL, {}))
def test_kill_happened(L: dict[str, Any], x: str) -> None:
    """The killing pass was really SIGKILLed at its point (the bench did what it says)."""
    rc, err = L[f"{x}:kill"]
    assert rc == -9, (rc, err[-400:])
    kind, at = _kp(x)
    if kind == "git":
        sub, _n, when = at.split("|")
        assert f" {when} {sub}" in L["killed"] or f"{when} {sub}" in L["killed"], L["killed"]


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN_SOFT))
def test_once(L: dict[str, Any], x: str) -> None:
    """Each action ran once: never again after the kill (an in-doubt action is not re-run
    unasked), twice only for the idempotent action or the one Alice's resume re-ran."""
    assert L["calls"][x] == V[x][4], (L["calls"][x], L[f"{x}:killed_calls"], L[f"{x}:acts"])


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN_SOFT))
def test_final(L: dict[str, Any], x: str) -> None:
    """The plan ends ``completed``, or ``failed`` with the killed action ``in_doubt``
    ``E_ACTION_IN_DOUBT``, in the status row and in main's PLAN.yml."""
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


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN_NAMED))
def test_never_silent(L: dict[str, Any], x: str) -> None:
    """After the recovery pass the plan is terminal, or its status row says why it waits
    and names the remedy the variant then follows (which then works: ``test_final``); never
    ``executing`` with nothing said."""
    row = L[f"{x}:rec_row"]
    remedy = V[x][1]
    text = json.dumps([row.get("waiting"), row.get("reason")])
    if row.get("status") == "executing":
        assert row.get("waiting") or row.get("reason"), row
    if remedy:
        for word in NAMES[remedy]:
            assert word in text or word == row.get("status"), (word, row.get("status"), text)
    else:
        assert row.get("status") in ("completed", "failed"), (row.get("status"), text)


KEPT = [x for x in ALL if set(V[x][0]) & {"wtedit", "stage", "stash"}]


@pytest.mark.parametrize("x", cases(KEPT, KEPT, {}))
def test_kept(L: dict[str, Any], x: str) -> None:
    """A person's uncommitted, staged or stashed edit of the plan file survives the
    recovery pass as they left it (the outcome waits rather than overwrite it)."""
    acts = V[x][0]
    if "stash" in acts:
        assert L[f"{x}:stash"].strip() and TAG in L.get(f"{x}:stash_p", ""), L[f"{x}:stash"]
        return
    assert TAG in L[f"{x}:wt"], L[f"{x}:wt"][-300:]
    if "stage" in acts:
        assert TAG in L[f"{x}:cached"], L[f"{x}:cached"][-300:]


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
    """No commit under the controller's identity that names the plan adds a person's
    uncommitted bytes, a stash's or a note's, or changes a file other than the plan's own
    PLAN.yml / EXECUTION_LOG.md (or the policy record); the look-alikes aside, each is
    the controller's."""
    bad = []
    for head, diff in _bot_commits(L):
        if not head.endswith(f" plans/{x}"):
            continue
        files = [ln[6:] for ln in diff.splitlines() if ln.startswith("+++ b/")]
        added = [ln for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        own = all(
            f.startswith(".plangate/")
            or f in (f"plans/{x}/PLAN.yml", f"plans/{x}/EXECUTION_LOG.md")
            for f in files
        )
        if not own or any(TAG in ln or "note " in ln or ln[1:] == "side" for ln in added):
            bad.append((head, files))
    assert not bad, bad


@pytest.mark.parametrize("x", cases(ALL, ALL, BROKEN_SOFT))
def test_audit(L: dict[str, Any], x: str) -> None:
    """The fresh-clone audit calls exactly the runs Alice approved valid: one start (and
    Alice's two resumes for the look-alike ``fail`` variants)."""
    execs = [e for e in L["audit"]["report"].get("executions", []) if e.get("plan") == f"plans/{x}"]
    valid = [e for e in execs if e.get("approval_valid")]
    want = {"resume": 3, "gate": 2}.get(V[x][1] or "", 2 if x in GSTART else 1)
    assert len(valid) == want, (x, [(e.get("approval_valid"), e.get("outcome")) for e in execs])


@pytest.mark.parametrize(
    "x", cases(["t2-lookc", "t2-lookf", "t1-lookf"], ["t2-lookc", "t2-lookf", "t1-lookf"], {})
)
def test_lookalike_flagged(L: dict[str, Any], x: str) -> None:
    """A look-alike ``plangate: complete``/``fail`` a person committed under the controller's
    name is flagged by the fresh-clone audit as no commit of the controller's."""
    kinds = {
        f.get("kind")
        for f in L["audit"]["report"].get("findings", [])
        if f.get("plan") == f"plans/{x}"
    }
    assert "controller-unexplained" in kinds, kinds


RH = ["ui1a-rhard", "ui1b-rhard"]


@pytest.mark.parametrize("x", cases(RH, RH, BROKEN_NAMED))
def test_erased_start_not_read_as_run(L: dict[str, Any], x: str) -> None:
    """The controller's start commit erased (stale lock removed, ``reset --hard HEAD~1``)
    before any action ran: the restart holds the plan (``E_HISTORY_REWRITTEN``, as for a
    start erased after an action ran) and never says it "already ran" while nothing did."""
    assert L[f"{x}:rec_calls"] == (0, 0), L[f"{x}:rec_calls"]
    row = L[f"{x}:rec_row"]
    text = json.dumps([row.get("waiting"), row.get("reason")])
    assert "already ran" not in text, text
    assert "E_HISTORY_REWRITTEN" in str(row.get("waiting")), text


OWNPLAN = ["t2-ownplan", "ti2-ownplan", "t1-ownplan", "d2-ownplan"]
#: own-index-commit-waits: fixed (2026-12-06, fix121b)
BROKEN_OWN: dict[str, Any] = {}


@pytest.mark.parametrize("x", cases(OWNPLAN, OWNPLAN, BROKEN_OWN))
def test_own_index_commit_no_wait(L: dict[str, Any], x: str) -> None:
    """The controller killed mid-action; a person commits a comment to the plan file through
    an index file of their own (``GIT_INDEX_FILE``): the shared index and the working tree
    still hold the controller's own last blob of the file, "no one's change", which "does
    not make it wait" (docs/approvals.md): the recovery pass ends the run."""
    assert L[f"{x}:entry"] == [L[f"{x}:own_blob"]] == [L[f"{x}:wt_blob"]], (
        L[f"{x}:entry"],
        L[f"{x}:own_blob"],
        L[f"{x}:wt_blob"],
    )
    row = L[f"{x}:rec_row"]
    assert row.get("status") in ("completed", "failed"), (row.get("status"), row.get("waiting"))


LOOKF = ["t2-lookf", "t1-lookf"]


@pytest.mark.parametrize("x", LOOKF)
def test_resume_after_forged_fail(L: dict[str, Any], x: str) -> None:
    """A look-alike ``plangate: fail`` (a person's, under the controller's name) after the
    kill stops the run, ``failed``, the doubted action's end never recorded. The in-doubt
    rule (SPEC §6: "an action that started but has no recorded end is re-run only if its
    tool is idempotent, otherwise the plan becomes ``failed`` with E_ACTION_IN_DOUBT";
    docs/execution.md, round 68: "an action started and not ended is in doubt as after any
    crash") applies at Alice's first resume: the run fails ``E_ACTION_IN_DOUBT`` and the
    doubted action is not called. Her second resume "resumes at its first unfinished
    action": it runs once, and the plan completes (a control since 2026-12-06)."""
    doubt = 2 if x.startswith("t2") else 1
    calls = L[f"{x}:resume_calls"]
    row = L[f"{x}:resume_row"]
    said = json.dumps([row.get("status"), row.get("reason")])
    assert calls[doubt - 1] == 1, (calls, said)  # the first resume calls nothing in doubt
    assert row.get("status") == "failed" and "E_ACTION_IN_DOUBT" in said, said
    assert L["calls"][x][doubt - 1] == 2, L["calls"][x]  # the second resume: once more
    assert L["rows"][f"plans/{x}"]["status"] == "completed", L["rows"][f"plans/{x}"]


def test_passes_no_traceback(L: dict[str, Any]) -> None:
    """No pass printed a traceback; each exited 0, was the one killed, or refused ``E_GIT``
    (the checkout left on the person's branch: ``git switch main``)."""
    bad = [
        (t, rc, e[-300:])
        for t, rc, e in L["passes"]
        if "Traceback" in e
        or (rc not in (0, -9) and not t.endswith("-kill") and not (rc == 2 and "E_GIT" in e))
    ]
    assert not bad, bad
