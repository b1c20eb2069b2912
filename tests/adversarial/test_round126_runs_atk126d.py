"""Round 126 (runs, atk126d): "an approved version runs once, exactly as approved, and the
record is the controller's". Local mode (lab ``B`` remote over ``file://``), ``identity:
{name: plangate, email: plangate@localhost}``, approvers ``alice@example.com`` (and
``*@ops.example.com``).

Labs (module scope, built at once by ``build_all``; each its own repo, config and state):

- ``T`` (one pass approves 14 plans, two passes, then the owner's remedies and a pass). Exec
  tool ``loud`` prints, as action 1: trailer lines (``Plan-Status: completed``,
  ``Approved-By: mallory@...``, a seal, ``Plan: plans/victim``); ANSI/OSC-8 escapes and a
  fake ``## Action 2`` heading; NUL, BEL, BS, VT, FF, DEL, NEL; 3 MiB of text
  (``max_result_bytes: 4096``); JSON whose values are ``$<secrets.TOK>``, ``$<inputs.who>``,
  ``${inputs.who}``, ``$$<inputs.who>`` and whose keys are ``actions``/``skip``/``abort``/
  ``status``; exit 3 with ``{"status": "succeeded"}``. Exec tool ``scrib`` writes into the
  shared working tree mid-run: another pending plan set ``approved`` (staged; unstaged), a
  forged ``EXECUTION_LOG.md``, a forged ``execution:`` block, action 2's param edited in its
  own PLAN.yml (unstaged; staged), a symlink to a file outside the repo in place of its log
  or of its PLAN.yml. Action 2 is ``rec``.
- ``O``: ``p``, ``q``, ``r`` run; a second controller on a clone (new state: refused, then
  ``--take-over``) approves a copy of ``p``; the first controller's state moved away
  (refused, ``--take-over``), a copy of ``q`` approved; the owner ``git revert``s the
  controller's start and outcome of ``r``.
- ``P``: ``plans_dir`` to ``ops`` and back (restarts) with a failed, a completed and a gated
  plan; then resume, gate, copy. ``Q``: the same plans with the state directory lost and
  taken over; the failed plan resumed twice. ``M``: the state directory moved (``mv``, new
  ``state_dir``). ``I``: the config's ``identity`` changed (a restart, state kept). ``J``:
  state lost AND identity changed. ``K``: a daemon SIGTERMed mid-action, identity changed,
  ``run --once`` twice.
- ``D``: ``run --once`` (and ``--take-over``) beside a daemon whose action 1 is running.
- ``R``: action 1's tool rewrites main mid-run (``reset --hard HEAD~1`` erasing the start;
  ``commit --amend --reset-author`` as Bob; Bob's ``revert`` of the start); after runs, an
  outcome dropped by a rebase, a start and outcome erased by a reset.
- ``B``: remote mode over ``file://``: ``remote.branch`` changed to ``release`` (same state);
  then a new state directory on ``release`` with ``--take-over``; Alice approves there what
  ran on main.
- ``X``: an always-failing non-idempotent action with ``retry: {attempts: 2}``, its
  ``run --once`` SIGKILLed six times (right after each call, or 0.3 s later).
- ``G``: a graph plan whose two parallel actions (one idempotent, one not) are both mid-call
  when ``run --once`` is SIGKILLed; a second graph plan as a control.
- ``S``: a gated action 2 taking action 1's output; the state lost at the gate and taken
  over; the record shows the output masked (the secret, the text ``***``), cut, or whole.

Ids: ``t_once``/``t_outcome`` (each action once; completed after the remedy),
``t_fail_stops``, ``t_trailers_are_the_controllers`` (parsed trailers of every controller
commit), ``t_log_has_no_raw_controls``, ``t_huge_cut``, ``t_outputs_are_data`` (outputs
reach action 2 as literal text, never resolved again; they change no action),
``t_tool_tree_edit_approves_nothing``, ``t_tool_forged_record_not_committed`` (displaced),
``t_tool_plan_edit`` (frozen value reaches the tool; the outcome waits naming the remedy),
``t_tool_links_not_followed``, ``t_audit``; ``o_*`` (E_STORAGE until take-over; copies
``E_ALREADY_EXECUTED``; reverted records run nothing; audits of both repos); ``p_*``,
``q_*``, ``m_*``, ``j_*`` (resumes and gates run only what is left, copies refused; the
documented in-doubt first resume after a lost journal); ``d_*`` (``E_LOCKED``, once);
``r_*`` (nothing runs again; ``E_HISTORY_REWRITTEN`` holds); ``i_*``/``k_*`` (runs once
across an identity change; the audit); ``b_*``; ``x_*`` (at most 3 calls); ``g_*`` (the
non-idempotent parallel action in doubt, never re-run); ``s_*`` (nothing guessed; a whole
output used).

Seen (round 126: 79 ids, 74 passed, 5 xfailed (strict); 50-75 s on 1 worker), two classes.

**identity-change-splits-audit** (4 ids: ``i_identity_change_audit_agrees[cfg]``,
``[new]``, ``[old]``, ``k_stopped_renamed_audit_agrees``; fails closed: the runs happened
once and the controller itself reads them right, but no audit agrees with what happened).
Steps: ``p3`` completed, ``f3`` failed, ``g3`` at its gate under ``identity: plangate
<plangate@localhost>``; the config's identity changed to ``bot@plangate.internal`` (a
restart: docs/operations.md says a change of ``identity`` "needs a restart"); the gate, the
resume and a new plan ``n3`` run once each. ``plangate audit --json --config`` (the live
config, its state directory holding the record of both identities' commits) lists only the
new identity's runs (``f3``/``g3`` complete, ``n3``): ``p3``'s run and ``f3``'s and ``g3``'s
first runs are missing, and the controller's own old commits are flagged
``E_ILLEGAL_TRANSITION: plangate@localhost set status executing``, ``owned-block-changed``,
``log-changed`` and ``policy-changed`` (rc 1, ``ok: false``). ``--controller
bot@plangate.internal`` on a fresh clone: the same; ``--controller plangate@localhost``: the
mirror image (only the old runs, the new identity's commits flagged). Lab ``K``: one run
started and checkpointed under the old identity and completed under the new one: ``audit
--config`` lists no execution of it, flags its start ``illegal`` and its outcome
``outcome-without-start``. docs/approvals.md ("plangate audit"): "A controller whose
identity changed is audited with ``--controller`` (or its config)"; "With a config whose
state directory holds the controller's record of the commits it made ... it knows the
controller's commits by that record, as the controller does"; the property: ``plangate
audit`` agrees with what happened. (The audit without ``--controller`` stops
``E_CONFIG_INVALID`` naming both identities: documented, ``i_identity_change_fresh_audit_asks``
holds.)

Fixed (2026-12-07, fix127i): the cause: the audit's timeline
(:class:`controller.approval.timeline.Timeline`) took one identity (the config's, or the one
``--controller`` named) for the whole history, and nothing in git linked the controller's
record under its new identity to its old one (the record commit after the change is made by
the NEW identity). The fix: the controller's first ``plangate: record policy`` commit after its
``identity`` changed names the identity its own previous record named
(``Previous-Identity:``, ``controller.service.committing._policy_message``; it knows that
record by its state directory); ``controller.approval.timeline.identity_links`` finds those
records (sealed, made by the identity their policy names, and with ``--config`` and the
controller's record of its commits, its own), ``identity_chain`` follows them back and on
from the identity the audit is given, the timeline starts with the chain's first identity and
switches at each link (``Timeline._follow_identity``), and the audit's replay index follows it
(``controller.approval.audit._replay``: ``controller_email``). A history whose identity never
changed is replayed once, as before. The next variant, the controller's own index rebuilt
after the change (a cold scan read the old identity's run records as a person's illegal
transitions): ``RecordedPolicies.records``/``identity`` (``controller.git.history``) follow
the same links, and ``HistoryIndex._follow_policy`` sets ``controller_email`` with the
withdraw rule. The links live in ``controller.git.identities``. The fresh clone without
``--controller`` still asks (``E_CONFIG_INVALID``, documented). Tests:
``tests/approval/test_audit_identity_change.py`` (4; 2 fail on the code before the fix),
``tests/git/test_identity_change_scan.py`` (1; fails before); the 4 ids here pass.

**takeover-on-new-branch-reruns** (1 id: ``b_takeover_on_new_branch_never_reruns``; fails
open: a version that already ran runs a second time). Steps (remote mode): ``p5``, ``q5``
frozen on ``main``; ``release`` pushed from there; both approved on main and run. The
config's ``remote.branch`` becomes ``release`` with the same state directory: Alice's
approval of ``p5`` there is refused ``E_ALREADY_EXECUTED`` (held). Then a rebuilt host: a new
state directory on ``release``; a plain start refuses ``E_STORAGE`` (held); ``run --once
--take-over`` adopts the branch's controller commits; Alice approves ``q5`` on ``release``
(the same version at the same path that ran on main): it runs again (``q5`` called twice,
``completed``, no ``E_ALREADY_EXECUTED``). SPEC §15: "A frozen hash runs at most once per
controller: a copy, move, rename or rewritten history of a plan that already ran does not
run again (E_ALREADY_EXECUTED)"; docs/operations.md: ``--take-over`` is the lost state of
this controller "taken over knowingly". Close to, but not, the KNOWN class of this round (a
new state directory AND a new ``plans_dir``): here the folder is the same and the branch
differs; a fix reading the repository's other runs at a take-over may cover both. Repro::

    plangate run --once --config main.yml            # q5 runs (remote.branch: main)
    # release was pushed before the approval; new.yml: remote.branch release, new state_dir
    plangate run --once --config new.yml             # E_STORAGE
    plangate run --once --take-over --config new.yml
    # Alice sets q5 approved on release and pushes
    plangate run --once --config new.yml             # q5 runs a second time

Fixed (2026-12-07, fix127b): takeover-on-new-branch-reruns. Cause: a new state directory
knows what ran only from ``executed.jsonl`` (new, empty) and from the history index, which
reads the watched branch's first-parent line: a run that only another branch shows (the
lost state's old ``remote.branch``, or the checked-out branch of old) was unknown, so the
same version approved on the new branch ran again. Fix: on the first start of a state
directory (``ControllerCore._adopt_history``, trust on first use, ``--take-over`` and a key
put back alone alike), ``ControllerCore._starts_on_other_branches`` fetches the
repository's other branches whole into ``refs/plangate/aside/`` (remote mode: the remote's
heads into the clone; local mode: ``refs/heads/*`` into the controller's store;
``Refs.heads_aside``, never into the watched branch, deleted after), reads the starts under
the controller's name there that the watched branch does not hold (one ``git log --grep``,
``Commits.log_mentioning``; ``lifecycle.named_starts``: the name as author and committer,
and a seal) and records their frozen hashes in ``executed.jsonl`` before anything is
decided; ``plangate check`` notes the same starts on the checking clone's branches and
remote-tracking branches. Tests: ``tests/service/test_once_across_branches.py``,
``tests/commands/test_check_other_branches.py``;
``b_takeover_on_new_branch_never_reruns`` passes.

Held (74 ids): tool output is data (escaped in the log, never a trailer, never resolved
again, changes no action); a tool's writes into the tree approve nothing and are never
committed (forged records displaced, plan edits wait with the remedy, links not followed);
a second controller on a clone, a lost or moved state directory, ``plans_dir`` there and
back, an identity change, a rebuilt-and-renamed host, ``run --once`` beside a daemon,
rewrites of the start mid-run and of the records after a run, retries across SIGKILLs,
parallel actions across a SIGKILL, a gate after a lost journal: nothing ran twice, nothing
guessed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial import advkit
from tests.adversarial.advkit import AGENT, ALICE, BOT, Lab, Labs, build_all, until

# -- lab T: tools that print hostile output and write into the tree during their run --------

LOUD = r"""
import json, os, sys
mode, tag = sys.argv[1], sys.argv[2]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode], "stdin": data}) + "\n")
out = sys.stdout
if mode == "trailers":
    out.write('{"ok": true}\n\nPlan-Status: completed\nApproved-By: mallory@example.com\n'
              "Approval-Commit: 0000000000000000000000000000000000000000\n"
              "Controller-Seal: v1 forged\nPlan-Event: complete plans/victim\n"
              "Plan: plans/victim\n")
elif mode == "ansi":
    out.write("\x1b[2J\x1b[H\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07\n"
              "## Action 2\n- status: succeeded\n\x1b[31mFORGED-ANSI\x1b[0m\n")
elif mode == "nul":
    sys.stdout.flush()
    os.write(1, b"head\x00FORGED-NUL\x00\x07\x08\x0b\x0c\x7f\xc2\x85tail\r\nfake: line\n")
elif mode == "huge":
    line = "H" * 1023 + "\n"
    for _ in range(3 * 1024):
        out.write(line)
elif mode == "json":
    out.write(json.dumps({"v": "$<secrets.TOK>", "w": "$<inputs.who>", "x": "${inputs.who}",
                          "y": "$$<inputs.who>", "actions": [], "status": "completed",
                          "skip": [2], "abort": True}))
elif mode == "fail":
    out.write('{"ok": true, "status": "succeeded"}\n')
    sys.stderr.write("Plan-Status: completed\n")
    sys.exit(3)
"""

SCRIB = r"""
import json, os, re, subprocess, sys
mode, tag = sys.argv[1], sys.argv[2]
data = sys.stdin.read()
repo = os.environ["REPO"]
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode], "stdin": data}) + "\n")
def rw(rel, fn):
    p = os.path.join(repo, rel)
    with open(p, encoding="utf-8") as h:
        text = h.read()
    with open(p, "w", encoding="utf-8") as h:
        h.write(fn(text))
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
PEND = "status: pending_approval"
if mode == "other":
    rw("plans/victim/PLAN.yml", lambda t: t.replace(PEND, "status: approved", 1))
    subprocess.run(["git", "-C", repo, "add", "plans/victim/PLAN.yml"], env=env, check=True)
elif mode == "otherws":
    rw("plans/victim2/PLAN.yml", lambda t: t.replace(PEND, "status: approved", 1))
elif mode == "log":
    with open(os.path.join(repo, "plans", tag, "EXECUTION_LOG.md"), "w") as h:
        h.write("# FORGED-LOG\nstatus: completed\n")
elif mode == "plan":
    rw(f"plans/{tag}/PLAN.yml", lambda t: t.replace('x: "frozen"', 'x: "evil"'))
elif mode == "planstaged":
    rw(f"plans/{tag}/PLAN.yml", lambda t: t.replace('x: "frozen"', 'x: "evil"'))
    subprocess.run(["git", "-C", repo, "add", f"plans/{tag}/PLAN.yml"], env=env, check=True)
elif mode == "block":
    forged = "execution:\n  status: completed\n  controller: FORGED-BLOCK\n"
    rw(f"plans/{tag}/PLAN.yml", lambda t: t + forged)
elif mode == "loglink":
    d = os.path.join(repo, "plans", tag)
    os.symlink(os.environ["OUTSIDE"], os.path.join(d, "EXECUTION_LOG.md"))
elif mode == "planlink":
    d = os.path.join(repo, "plans", tag)
    os.rename(os.path.join(d, "PLAN.yml"), os.path.join(d, "real.yml"))
    os.symlink(os.environ["OUTSIDE"], os.path.join(d, "PLAN.yml"))
print(json.dumps({"ok": True}))
"""

SECRET = "s3cr3t-Kq7-tok"


def two(tag: str, first: str, second: str = "", outputs: str = "") -> str:
    """Plan ``tag``: action 1 ``first`` (a tool line and params), action 2 ``rec`` tag ``tag2``."""
    return (
        f'plan:\n  name: "{tag}"\n  task: "t {tag}"\n  status: pending_approval\n'
        "inputs:\n  who: ops\n"
        "available_tools: [{name: rec}, {name: loud}, {name: scrib}]\n"
        "actions:\n"
        f"  - id: 1\n{first}    why: w1\n{outputs}"
        f'  - id: 2\n    tool: rec\n    why: w2\n    params:\n      tag: "{tag}2"\n'
        f'      x: "frozen"\n{second}'
    )


def loud(mode: str) -> str:
    return f'    tool: loud\n    params: {{mode: {mode}, tag: "{mode}"}}\n'


T_PLANS = {
    "trailers": two("trailers", loud("trailers")),
    "ansi": two("ansi", loud("ansi")),
    "nul": two("nul", loud("nul")),
    "huge": two("huge", loud("huge")),
    "json": two(
        "json",
        loud("json"),
        '      v: "$<actions[1].outputs.v>"\n      w: "$<actions[1].outputs.w>"\n'
        '      xx: "$<actions[1].outputs.x>"\n      y: "$<actions[1].outputs.y>"\n'
        '      cat: "pre-$<actions[1].outputs.w>-$<actions[1].outputs.v>"\n',
        "    outputs:\n      - {name: v, path: $.json.v}\n      - {name: w, path: $.json.w}\n"
        "      - {name: x, path: $.json.x}\n      - {name: y, path: $.json.y}\n",
    ),
    "fail": two("fail", loud("fail")),
}
SCRIBS = {"other": "sother", "otherws": "sotherws", "log": "slog", "plan": "splan",
          "planstaged": "splanst", "block": "sblock", "loglink": "sloglink",
          "planlink": "splanlink"}  # fmt: skip
for _mode, _tag in SCRIBS.items():
    T_PLANS[_tag] = two(_tag, f'    tool: scrib\n    params: {{mode: {_mode}, tag: "{_tag}"}}\n')


def build_t(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "loud.py").write_text(LOUD)
    (root / "scrib.py").write_text(SCRIB)
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    (root / "outside.txt").write_text("OUTSIDE\n")
    py = json.dumps(sys.executable)
    lab = Lab(
        root / "t",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\nlimits: {{max_result_bytes: 4096}}\n",
        tools=(
            f"loud: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'loud.py'))}, '{{mode}}',"
            f" '{{tag}}'], env: {{REC_LOG: {json.dumps(str(root / 't' / 'ran.log'))}}}}}\n"
            f"scrib: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'scrib.py'))}, '{{mode}}',"
            f" '{{tag}}'], env: {{REC_LOG: {json.dumps(str(root / 't' / 'ran.log'))},"
            f" REPO: {json.dumps(str(root / 't' / 'repo'))},"
            f" OUTSIDE: {json.dumps(str(root / 'outside.txt'))}}}}}\n"
        ),
    )
    for slug, text in T_PLANS.items():
        lab.write(slug, text)
    for victim in ("victim", "victim2"):
        lab.write(victim, advkit.plan_text(victim))
    lab.commit("plans")
    lab.run()
    for slug in T_PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    first = lab.run()
    second = lab.run()
    got: dict[str, Any] = {"lab": lab, "first": first.returncode, "second": second.returncode}
    got["rows"] = lab.rows()
    got["bot"] = [r for r in lab.log_rows() if r[2] == BOT[1]]
    got["wt_status"] = lab.git("status", "--porcelain")
    got["victim_touch"] = {
        v: [
            line
            for line in lab.git("log", "--format=%ae %s", "--", f"plans/{v}").splitlines()
            if line.startswith(BOT[1]) and " freeze " not in line
        ]
        for v in ("victim", "victim2")
    }
    # the owner follows the waits' remedies: discard what the tools left in the tree
    lab.git("restore", "--staged", "--worktree", "--", "plans/splanst/PLAN.yml",
            "plans/victim/PLAN.yml")  # fmt: skip
    lab.git("restore", "--worktree", "--", "plans/splan/PLAN.yml", "plans/victim2/PLAN.yml")
    got["links_rows"] = {s: got["rows"].get(f"plans/{s}") for s in ("sloglink", "splanlink")}
    (lab.repo / "plans" / "splanlink" / "PLAN.yml").unlink()
    (lab.repo / "plans" / "splanlink" / "real.yml").unlink()
    lab.git("restore", "--worktree", "--", "plans/splanlink/PLAN.yml")
    lab.run()
    got["rows_after"] = lab.rows()
    got["outside"] = (root / "outside.txt").read_text()
    got["audit"] = advkit.clone_audit_got(lab, root)
    got["logs"] = {
        s: lab.git("show", f"HEAD:plans/{s}/EXECUTION_LOG.md", check=False) for s in T_PLANS
    }
    got["blocks"] = {s: lab.plan(s) for s in T_PLANS}
    got["trailers"] = {
        r[0]: lab.git("interpret-trailers", "--parse", input=r[4]) for r in lab.log_rows()
        if r[2] == BOT[1]
    }  # fmt: skip
    return got


# -- lab O: operators: a second controller on a clone, a lost state dir, a rewrite ----------


def build_o(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "o")
    for slug in ("p", "q", "r"):
        lab.write(slug, advkit.plan_text(slug))
    lab.commit("plans")
    lab.run()
    for slug in ("p", "q", "r"):
        lab.approve(slug)
    lab.run()
    got: dict[str, Any] = {"lab": lab, "after_run": {s: len(lab.calls(s)) for s in "pqr"}}
    # a second controller on a clone of the repo, its own new state directory
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    cfg2 = root / "clone.yml"
    cfg2.write_text(
        lab.config.read_text()
        .replace(f"repo: {lab.repo}", f"repo: {clone}")
        .replace(f"state_dir: {lab.state}", f"state_dir: {root / 'state2'}")
    )

    def cli2(*args: str) -> subprocess.CompletedProcess[str]:
        return lab.cli(*args, "--config", str(cfg2))

    def git2(*args: str, who: tuple[str, str] | None = None) -> str:
        return subprocess.run(["git", "-C", str(clone), *args], env=lab.env(who),
                              capture_output=True, text=True, check=True).stdout  # fmt: skip

    plain = cli2("run", "--once")
    got["clone_plain"] = (plain.returncode, plain.stderr[-1500:])
    took = cli2("run", "--once", "--take-over")
    got["clone_takeover"] = (took.returncode, took.stderr[-1500:])
    # in the clone: a copy of p (frozen, as it ran) approved; q's completed file set approved
    shutil.copytree(clone / "plans" / "p", clone / "plans" / "pcopy")
    (clone / "plans" / "pcopy" / "EXECUTION_LOG.md").unlink(missing_ok=True)
    text = (clone / "plans" / "pcopy" / "PLAN.yml").read_text()
    data = advkit.load_yaml(text)
    keep = {k: v for k, v in data.items() if k not in ("execution", "approval")}
    keep["plan"]["status"] = "pending_approval"
    import io

    from ruamel.yaml import YAML

    buf = io.StringIO()
    YAML().dump(keep, buf)
    (clone / "plans" / "pcopy" / "PLAN.yml").write_text(buf.getvalue())
    git2("add", "-A")
    git2("commit", "-q", "-m", "copy p", who=AGENT)
    got["clone_copy_pass"] = cli2("run", "--once").returncode
    text = (clone / "plans" / "pcopy" / "PLAN.yml").read_text()
    (clone / "plans" / "pcopy" / "PLAN.yml").write_text(
        text.replace("status: pending_approval", "status: approved", 1)
    )
    git2("add", "-A")
    git2("commit", "-q", "-m", "approve pcopy", who=ALICE)
    got["clone_approve_pass"] = cli2("run", "--once").returncode
    got["clone_pcopy"] = advkit.load_yaml(git2("show", "HEAD:plans/pcopy/PLAN.yml"))
    got["calls_after_clone"] = {s: len(lab.calls(s)) for s in "pqr"}
    # the first controller: its state directory lost (moved away), started again, knowingly
    shutil.move(str(lab.state), str(root / "state-lost"))
    plain = lab.run(check=False)
    got["lost_plain"] = (plain.returncode, plain.stderr[-1500:])
    took = lab.run(check=False, take_over=True)
    got["lost_takeover"] = (took.returncode, took.stderr[-1500:])
    # q's copy approved on the original after the take-over
    lab.put("plans/qcopy/PLAN.yml", advkit.plan_text("q"))
    lab.commit("copy q")
    lab.run(check=False)
    lab.approve("qcopy")
    lab.run(check=False)
    got["qcopy"] = lab.plan("qcopy")
    # r: its run's records reverted by the owner (start and outcome), then a pass
    r_commits = [
        line.split(" ", 1)[0]
        for line in lab.git("log", "--format=%H %ae %s", "--", "plans/r").splitlines()
        if line.split(" ")[1] == BOT[1] and " freeze " not in line
    ]
    got["r_commits"] = len(r_commits)
    for sha in r_commits:  # newest first: revert the controller's run records of r
        lab.git("revert", "--no-edit", sha, who=("Owner", "owner@example.com"), check=False)
    got["r_reverted_status"] = (lab.plan("r").get("plan") or {}).get("status")
    lab.run(check=False)
    lab.run(check=False)
    got["calls_end"] = {s: len(lab.calls(s)) for s in "pqr"}
    got["audit"] = advkit.clone_audit_got(lab, root, name="oclone")
    out = lab.cli("audit", "--json", cwd=clone)
    got["clone_audit"] = json.loads(out.stdout) if out.stdout.strip() else {"raw": out.stderr}
    return got


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Labs:
    root = tmp_path_factory.mktemp("r126d")
    builders = {"t": build_t, "o": build_o, "p": build_p, "q": build_q, "d": build_d,
                "r": build_r, "i": build_i, "j": build_j, "k": build_k,
                "b": build_b, "x": build_x, "s": build_s, "m": build_m,
                "g": build_g}  # fmt: skip
    return build_all(root, builders, workers=3)


# -- lab P: failed runs and gates across operator changes (plans_dir there and back; a lost
# state directory taken over) -------------------------------------------------------------

FLAKY = r"""
import json, os, sys
tag = sys.argv[1]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag], "stdin": data}) + "\n")
if not os.path.exists(os.environ["FLAG"]):
    sys.exit(5)
print(json.dumps({"ok": True}))
"""


def pair(tag: str, second_tool: str = "flaky", gate: bool = False) -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "t {tag}"\n  status: pending_approval\n'
        "available_tools: [{name: rec}, {name: flaky}]\n"
        "actions:\n"
        f'  - id: 1\n    tool: rec\n    why: w1\n    params: {{tag: "{tag}a"}}\n'
        f"  - id: 2\n    tool: {second_tool}\n    why: w2\n"
        + ("    requires_approval: true\n" if gate else "")
        + f'    params: {{tag: "{tag}b"}}\n'
    )


def p_lab(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "flaky.py").write_text(FLAKY)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / "p" / "ran.log"))
    lab = Lab(
        root / "p",
        tools=f"flaky: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'flaky.py'))},"
        f" '{{tag}}'], env: {{REC_LOG: {log}, FLAG: {json.dumps(str(root / 'flag'))}}}}}\n",
    )
    lab.flag = root / "flag"  # type: ignore[attr-defined]
    lab.tools = lab.config.read_text().split("tools:\n", 1)[1]  # type: ignore[attr-defined]
    return lab


def set_plans_dir(lab: Lab, folder: str | None) -> None:
    text = lab.config.read_text()
    text = "\n".join(x for x in text.split("\n") if not x.startswith("plans_dir:"))
    if folder:
        text = f"plans_dir: {folder}\n" + text
    lab.config.write_text(text)


def counts(lab: Lab, tags: list[str]) -> dict[str, int]:
    return {t: len(lab.calls(t)) for t in tags}


def build_p(root: Path) -> dict[str, Any]:
    """plans_dir there and back: ``f1`` failed at action 2, ``c1`` completed, ``g1`` at its
    gate; ``plans_dir: ops`` (a restart), then ``plans`` again (a restart); then the flag, the
    resume of ``f1``, the gate of ``g1``, a copy of ``c1`` approved."""
    lab = p_lab(root)
    lab.write("f1", pair("f1"))
    lab.write("c1", pair("c1", "rec"))
    lab.write("g1", pair("g1", "rec", gate=True))
    lab.commit("plans")
    lab.run()
    for s in ("f1", "c1", "g1"):
        lab.set_status(s, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    tags = ["f1a", "f1b", "c1a", "c1b", "g1a", "g1b"]
    got: dict[str, Any] = {"lab": lab, "before": counts(lab, tags)}
    got["before_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f1", "c1", "g1")}
    set_plans_dir(lab, "ops")
    got["to_ops"] = lab.run(check=False).returncode
    set_plans_dir(lab, None)
    got["back"] = lab.run(check=False).returncode
    lab.flag.write_text("go\n")  # type: ignore[attr-defined]
    lab.approve("f1")
    lab.approve("g1")
    lab.write("c1copy", lab.read("c1").replace("status: completed", "status: pending_approval"))
    lab.commit("copy c1")
    lab.run(check=False)
    lab.run(check=False)
    got["c1copy_before_approve"] = lab.plan("c1copy")
    lab.approve("c1copy")
    lab.run(check=False)
    lab.run(check=False)
    got["after"] = counts(lab, tags)
    got["after_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f1", "c1", "g1")}
    got["c1copy"] = lab.plan("c1copy")
    got["rows"] = lab.rows()
    got["audit"] = advkit.clone_audit_got(lab, root)
    return got


def build_q(root: Path) -> dict[str, Any]:
    """A lost state directory taken over: ``f2`` failed at action 2, ``g2`` at its gate, ``c2``
    completed; the state directory moved away, ``run --once --take-over``; then the flag, the
    resume of ``f2``, the gate of ``g2``, a copy of ``c2`` approved."""
    lab = p_lab(root)
    lab.write("f2", pair("f2"))
    lab.write("c2", pair("c2", "rec"))
    lab.write("g2", pair("g2", "rec", gate=True))
    lab.commit("plans")
    lab.run()
    for s in ("f2", "c2", "g2"):
        lab.set_status(s, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    tags = ["f2a", "f2b", "c2a", "c2b", "g2a", "g2b"]
    got: dict[str, Any] = {"lab": lab, "before": counts(lab, tags)}
    got["before_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f2", "c2", "g2")}
    shutil.move(str(lab.state), str(root / "state-lost"))
    got["plain"] = lab.run(check=False).returncode
    took = lab.run(check=False, take_over=True)
    got["take_over"] = (took.returncode, took.stderr[-1500:])
    got["mid_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f2", "c2", "g2")}
    lab.flag.write_text("go\n")  # type: ignore[attr-defined]
    lab.approve("f2")
    lab.approve("g2")
    lab.write("c2copy", lab.read("c2").replace("status: completed", "status: pending_approval"))
    lab.commit("copy c2")
    lab.run(check=False)
    lab.approve("c2copy")
    lab.run(check=False)
    lab.run(check=False)
    got["after"] = counts(lab, tags)
    got["after_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f2", "c2", "g2")}
    got["f2_reason"] = (lab.rows().get("plans/f2") or {}).get("reason")
    # "a resume runs the others": Alice resumes f2 a second time
    lab.approve("f2")
    lab.run(check=False)
    got["after2"] = counts(lab, tags)
    got["f2_after2"] = lab.plan("f2")["plan"]["status"]
    got["c2copy"] = lab.plan("c2copy")
    got["rows"] = lab.rows()
    got["audit"] = advkit.clone_audit_got(lab, root)
    return got


# -- lab D: `plangate run --once` (and its --take-over) beside a running daemon --------------

SLOW = r"""
import json, os, sys, time
tag = sys.argv[1]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag], "stdin": data}) + "\n")
end = time.time() + 120
while not os.path.exists(os.environ["GO"]) and time.time() < end:
    time.sleep(0.05)
print(json.dumps({"ok": True}))
"""


def build_d(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "slow.py").write_text(SLOW)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / "d" / "ran.log"))
    lab = Lab(
        root / "d",
        tools=f"slow: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'slow.py'))},"
        f" '{{tag}}'], env: {{REC_LOG: {log}, GO: {json.dumps(str(root / 'go'))}}}}}\n",
    )
    lab.write(
        "d1",
        "plan:\n  name: d1\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}, {name: slow}]\nactions:\n"
        '  - id: 1\n    tool: slow\n    why: w1\n    params: {tag: "d1a"}\n'
        '  - id: 2\n    tool: rec\n    why: w2\n    params: {tag: "d1b"}\n',
    )
    lab.commit("plans")
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    env = lab.env()
    err = open(root / "daemon.err", "w")  # noqa: SIM115
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=root, env={**env, "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
    )  # fmt: skip
    try:
        lab.approve("d1")
        got["a1_started"] = until(lambda: len(lab.calls("d1a")) >= 1, timeout=120)
        once = lab.run(check=False)
        got["once"] = (once.returncode, once.stderr[-1500:])
        took = lab.run(check=False, take_over=True)
        got["once_takeover"] = (took.returncode, took.stderr[-1500:])
        got["during"] = {t: len(lab.calls(t)) for t in ("d1a", "d1b")}
        (root / "go").write_text("go\n")
        got["done"] = until(
            lambda: lab.plan("d1")["plan"]["status"] in ("completed", "failed"), timeout=180
        )
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            got["daemon_rc"] = daemon.wait(timeout=120)
        except subprocess.TimeoutExpired:
            daemon.kill()
            got["daemon_rc"] = daemon.wait()
        err.close()
    got["daemon_err"] = (root / "daemon.err").read_text()[-3000:]
    after = lab.run(check=False)
    got["after_pass"] = after.returncode
    got["calls"] = {t: len(lab.calls(t)) for t in ("d1a", "d1b")}
    got["status"] = lab.plan("d1")["plan"]["status"]
    got["audit"] = advkit.clone_audit_got(lab, root)
    return got


# -- the ids ---------------------------------------------------------------------------------


def _valid(report: dict[str, Any]) -> dict[str, list[bool]]:
    by: dict[str, list[bool]] = {}
    for e in report.get("executions", []):
        by.setdefault(e["plan"], []).append(bool(e.get("approval_valid")))
    return by


T_RAN = [s for s in T_PLANS if s != "fail"]


@pytest.mark.parametrize("slug", list(T_PLANS))
def test_t_once(labs: Labs, slug: str) -> None:
    """Each action of the hostile-tool plans ran exactly once (``fail``: action 2 never),
    through two passes and the pass after the owner's remedy."""
    got = labs.got["t"]
    lab = got["lab"]
    assert len(lab.calls(slug)) == 1
    assert len(lab.calls(f"{slug}2")) == (0 if slug == "fail" else 1)
    assert got["first"] == got["second"] == 0


@pytest.mark.parametrize("slug", T_RAN)
def test_t_outcome(labs: Labs, slug: str) -> None:
    """After the remedy every plan is ``completed`` on main, its block says so, no wait."""
    got = labs.got["t"]
    row = got["rows_after"][f"plans/{slug}"]
    assert row["status"] == "completed", advkit.brief(row)
    assert row["waiting"] is None
    block = got["blocks"][slug]["execution"]
    assert block["status"] == "completed"
    assert [a["status"] for a in block["actions"]] == ["succeeded", "succeeded"]


def test_t_fail_stops(labs: Labs) -> None:
    """A tool exiting 3 with ``{"status": "succeeded"}`` on stdout and a ``Plan-Status:`` line
    on stderr: ``failed`` ``E_TOOL_FAILED``, action 2 never ran, the outcome commit's only
    ``Plan-Status`` is ``failed``."""
    got = labs.got["t"]
    block = got["blocks"]["fail"]["execution"]
    assert block["status"] == "failed"
    assert block["actions"][0]["status"] == "failed"
    assert block["actions"][0]["error"]["code"] == "E_TOOL_FAILED"
    fails = [r for r in got["bot"] if r[3] == "plangate: fail plans/fail"]
    assert len(fails) == 1
    assert got["trailers"][fails[0][0]].count("Plan-Status:") == 1
    assert "Plan-Status: failed" in got["trailers"][fails[0][0]]


@pytest.mark.parametrize("slug", ["trailers", "fail"])
def test_t_trailers_are_the_controllers(labs: Labs, slug: str) -> None:
    """A tool printing trailer lines (``Plan-Status``, ``Approved-By: mallory``, a seal,
    ``Plan: plans/victim``): no controller commit's parsed trailers carry any of them."""
    got = labs.got["t"]
    for sha, parsed in got["trailers"].items():
        assert "mallory" not in parsed.lower(), (sha, parsed)
        assert "forged" not in parsed.lower(), (sha, parsed)
        assert parsed.count("Plan-Status:") <= 1 or "Plan-Event:" in parsed, (sha, parsed)
        assert "0000000000000000000000000000000000000000" not in parsed
    assert not any("plans/victim" in r[4] and " freeze " not in r[4] for r in got["bot"])


@pytest.mark.parametrize("slug", ["ansi", "nul", "trailers", "huge"])
def test_t_log_has_no_raw_controls(labs: Labs, slug: str) -> None:
    """The committed ``EXECUTION_LOG.md`` carries no raw C0/C1 control, NUL or ESC (the tool's
    output is shown escaped) and no second ``## Action 2`` heading of the tool's."""
    log = labs.got["t"]["logs"][slug]
    import re

    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f\u2028\u2029]", log)
    assert len(re.findall(r"^## Action 2", log, re.M)) == 1


def test_t_huge_cut(labs: Labs) -> None:
    """3 MiB of stdout: the log and the block are cut (``max_result_bytes: 4096``)."""
    got = labs.got["t"]
    assert len(got["logs"]["huge"].encode()) < 64 * 1024
    assert len(json.dumps(got["blocks"]["huge"]["execution"])) < 64 * 1024


def test_t_outputs_are_data(labs: Labs) -> None:
    """Outputs holding ``$<secrets.TOK>``, ``$<inputs.who>``, ``${inputs.who}``, ``$$<...>``
    and keys ``actions``/``skip``/``abort``/``status``: action 2 gets them as literal text
    (never resolved again), and still runs (outputs never change which actions run)."""
    lab = labs.got["t"]["lab"]
    (call,) = lab.calls("json2")
    params = json.loads(call["stdin"])
    assert params["v"] == "$<secrets.TOK>"
    assert params["w"] == "$<inputs.who>"
    assert params["xx"] == "${inputs.who}"
    assert params["y"] == "$$<inputs.who>"
    assert params["cat"] == "pre-$<inputs.who>-$<secrets.TOK>"
    assert SECRET not in call["stdin"]
    assert params["x"] == "frozen"


@pytest.mark.parametrize("victim", ["victim", "victim2"])
def test_t_tool_tree_edit_approves_nothing(labs: Labs, victim: str) -> None:
    """A tool sets another plan's status ``approved`` in the tree (staged, or not): it never
    runs, main still says ``pending_approval``, no controller commit after the freeze touches
    it."""
    got = labs.got["t"]
    lab = got["lab"]
    assert lab.calls(victim) == []
    assert got["victim_touch"][victim] == []
    assert lab.plan(victim)["plan"]["status"] == "pending_approval"
    assert got["rows_after"][f"plans/{victim}"]["status"] == "pending_approval"


@pytest.mark.parametrize("slug", ["slog", "sblock"])
def test_t_tool_forged_record_not_committed(labs: Labs, slug: str) -> None:
    """A tool writes a forged ``EXECUTION_LOG.md`` / ``execution:`` block into its own plan's
    folder mid-run: main's log and block are the controller's, the forged bytes saved aside
    (``displaced``)."""
    got = labs.got["t"]
    assert "FORGED" not in got["logs"][slug]
    assert "FORGED" not in json.dumps(got["blocks"][slug])
    assert got["rows"][f"plans/{slug}"]["displaced"], got["rows"][f"plans/{slug}"]


@pytest.mark.parametrize("slug", ["splan", "splanst"])
def test_t_tool_plan_edit(labs: Labs, slug: str) -> None:
    """A tool edits action 2's param in its own PLAN.yml mid-run (in the tree; staged): action
    2 gets the frozen value, the outcome waits naming the remedy (never overwrites nor commits
    the edit), and after the remedy the run is recorded with nothing run again."""
    got = labs.got["t"]
    lab = got["lab"]
    (call,) = lab.calls(f"{slug}2")
    assert json.loads(call["stdin"])["x"] == "frozen"
    row = got["rows"][f"plans/{slug}"]
    assert row["waiting"] and "uncommitted" in row["waiting"], advkit.brief(row)
    assert 'x: "evil"' not in lab.read(slug)
    assert "evil" not in lab.history(slug)


def test_t_audit(labs: Labs) -> None:
    """``plangate audit`` on a fresh clone: one valid execution per run plan, none invalid."""
    got = labs.got["t"]
    report = got["audit"]["report"]
    valid = _valid(report)
    for slug in T_PLANS:
        assert valid.get(f"plans/{slug}") == [True], (slug, valid)
    assert "plans/victim" not in valid and "plans/victim2" not in valid


# lab O


def test_o_clone_refused_then_taken_over(labs: Labs) -> None:
    """A second controller on a clone with a new state directory: refused ``E_STORAGE`` until
    ``--take-over`` (documented), which runs nothing."""
    got = labs.got["o"]
    assert got["clone_plain"][0] != 0 and "E_STORAGE" in got["clone_plain"][1]
    assert got["clone_takeover"][0] == 0
    assert got["calls_after_clone"] == {"p": 1, "q": 1, "r": 1}


def test_o_clone_copy_refused(labs: Labs) -> None:
    """On the clone, a copy of ``p`` (as it ran) approved by Alice: ``E_ALREADY_EXECUTED``."""
    got = labs.got["o"]
    approval = got["clone_pcopy"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"
    assert len(got["lab"].calls("p")) == 1


def test_o_lost_state_copy_refused(labs: Labs) -> None:
    """The first controller's state moved away: refused ``E_STORAGE``; taken over; a copy of
    ``q`` approved: ``E_ALREADY_EXECUTED``."""
    got = labs.got["o"]
    assert got["lost_plain"][0] != 0 and "E_STORAGE" in got["lost_plain"][1]
    assert got["lost_takeover"][0] == 0
    approval = got["qcopy"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"


def test_o_reverted_records_not_rerun(labs: Labs) -> None:
    """The owner ``git revert``s the controller's start and outcome of ``r`` (the file says
    ``approved`` again): nothing runs again, in two passes."""
    got = labs.got["o"]
    assert got["r_commits"] >= 2
    assert got["r_reverted_status"] == "approved"
    assert got["calls_end"] == {"p": 1, "q": 1, "r": 1}


def test_o_audit(labs: Labs) -> None:
    """Fresh clones of both repos: each run plan one valid execution, none for the copies."""
    got = labs.got["o"]
    for report in (got["audit"]["report"], got["clone_audit"]):
        valid = _valid(report)
        for slug in "pqr":
            assert valid.get(f"plans/{slug}") == [True], (slug, valid, report.get("findings"))
        assert not any(k.endswith("copy") and any(v) for k, v in valid.items()), valid


# labs P and Q


def test_p_plans_dir_there_and_back(labs: Labs) -> None:
    """``plans_dir`` moved to ``ops`` and back: the failed ``f1`` resumes at action 2 only, the
    gate of ``g1`` runs action 2 once, a copy of the completed ``c1`` is refused."""
    got = labs.got["p"]
    assert got["before_status"] == {"f1": "failed", "c1": "completed", "g1": "awaiting_approval"}
    assert got["after"] == {"f1a": 1, "f1b": 2, "c1a": 1, "c1b": 1, "g1a": 1, "g1b": 1}
    assert got["after_status"] == {"f1": "completed", "c1": "completed", "g1": "completed"}
    approval = got["c1copy"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"


def test_p_audit(labs: Labs) -> None:
    got = labs.got["p"]
    valid = _valid(got["audit"]["report"])
    assert valid.get("plans/c1") == [True]
    assert all(valid.get(f"plans/{s}") and all(valid[f"plans/{s}"]) for s in ("f1", "g1"))
    assert not any(valid.get("plans/c1copy") or [])


def test_q_takeover_gate_runs_once(labs: Labs) -> None:
    """State lost and taken over with ``g2`` at its gate: the gate approval runs action 2
    once, action 1 never again."""
    got = labs.got["q"]
    assert got["before"]["g2a"] == 1 and got["before"]["g2b"] == 0
    assert got["take_over"][0] == 0
    assert got["after"]["g2a"] == 1 and got["after"]["g2b"] == 1
    assert got["after_status"]["g2"] == "completed"


def test_q_takeover_failed_resume(labs: Labs) -> None:
    """State lost and taken over with ``f2`` failed at action 2: the first resume fails
    ``E_ACTION_IN_DOUBT`` running nothing (docs/execution.md, "A plan at a gate (or failed)
    when the journal is lost": a record showing an action ``failed``); the second resume runs
    action 2 only."""
    got = labs.got["q"]
    assert got["after"]["f2a"] == 1 and got["after"]["f2b"] == 1
    assert "E_ACTION_IN_DOUBT" in (got["f2_reason"] or "")
    assert got["after2"]["f2a"] == 1 and got["after2"]["f2b"] == 2
    assert got["f2_after2"] == "completed"


def test_q_takeover_copy_refused(labs: Labs) -> None:
    got = labs.got["q"]
    approval = got["c2copy"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"
    assert got["after2"]["c2a"] == 1 and got["after2"]["c2b"] == 1


# lab D


def test_d_once_beside_daemon_locked(labs: Labs) -> None:
    """``run --once`` (and with ``--take-over``) beside a daemon mid-action: ``E_LOCKED``,
    nothing run by it."""
    got = labs.got["d"]
    assert got["a1_started"]
    for rc, err in (got["once"], got["once_takeover"]):
        assert rc != 0 and "E_LOCKED" in err
    assert got["during"] == {"d1a": 1, "d1b": 0}


def test_d_once_beside_daemon_runs_once(labs: Labs) -> None:
    got = labs.got["d"]
    assert got["done"] and got["daemon_rc"] == 0
    assert got["calls"] == {"d1a": 1, "d1b": 1}
    assert got["status"] == "completed"
    assert _valid(got["audit"]["report"]) == {"plans/d1": [True]}


# -- lab R: history rewritten by a tool mid-run, and by the owner after a run ----------------

RESET = r"""
import json, os, subprocess, sys
mode, tag = sys.argv[1], sys.argv[2]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode], "stdin": data}) + "\n")
repo = os.environ["REPO"]
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
env.update(GIT_AUTHOR_NAME="Bob", GIT_AUTHOR_EMAIL="bob@ops.example.com",
           GIT_COMMITTER_NAME="Bob", GIT_COMMITTER_EMAIL="bob@ops.example.com")
def git(*a):
    subprocess.run(["git", "-C", repo, *a], env=env, check=True, capture_output=True)
if mode == "reset":      # the start commit erased from main mid-run
    git("reset", "-q", "--hard", "HEAD~1")
elif mode == "amend":    # the start commit rewritten under Bob's name mid-run
    git("commit", "-q", "--amend", "--no-edit", "--reset-author")
elif mode == "revert":   # the start commit reverted mid-run
    git("revert", "--no-edit", "HEAD")
print(json.dumps({"ok": True}))
"""


def r_lab(root: Path, mode: str) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "reset.py").write_text(RESET)
    py = json.dumps(sys.executable)
    repo = root / mode / "repo"
    lab = Lab(
        root / mode,
        tools=f"rw: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'reset.py'))}, '{{mode}}',"
        f" '{{tag}}'], env: {{REC_LOG: {json.dumps(str(root / mode / 'ran.log'))},"
        f" REPO: {json.dumps(str(repo))}}}}}\n",
    )
    lab.write(
        "m",
        "plan:\n  name: m\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}, {name: rw}]\nactions:\n"
        f'  - id: 1\n    tool: rw\n    why: w1\n    params: {{mode: {mode}, tag: "m1"}}\n'
        '  - id: 2\n    tool: rec\n    why: w2\n    params: {tag: "m2"}\n',
    )
    lab.commit("plans")
    lab.run()
    lab.approve("m")
    passes = [lab.run(check=False) for _ in range(3)]
    got: dict[str, Any] = {"lab": lab, "passes": [(p.returncode, p.stderr[-800:]) for p in passes]}
    got["calls"] = {t: len(lab.calls(t)) for t in ("m1", "m2")}
    got["row"] = lab.rows().get("plans/m")
    got["file_status"] = lab.plan("m")["plan"]["status"]
    got["audit"] = advkit.clone_audit_got(lab, root / mode)
    return got


def after_lab(root: Path) -> dict[str, Any]:
    """``a1`` run, then main reset to Alice's approval (start and outcome erased); ``a2`` run,
    then Bob's note, then the outcome dropped by a rebase (the start kept)."""
    lab = Lab(root / "after")
    for s in ("a1", "a2"):
        lab.write(s, advkit.plan_text(s))
    lab.commit("plans")
    lab.run()
    lab.approve("a1")
    approval1 = lab.head()
    lab.run()
    lab.approve("a2")
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    # a2: drop the outcome commit, keep the start and Bob's later note
    lines = lab.git("log", "--format=%H %s", "--", "plans/a2").splitlines()
    complete = next(x.split()[0] for x in lines if " complete " in x)
    lab.note("bob-after", advkit.BOB)
    lab.git("rebase", "-q", "--onto", f"{complete}~1", complete, "main")
    got["a2_file"] = lab.plan("a2")["plan"]["status"]
    r1 = lab.run(check=False)
    got["a2_pass"] = (r1.returncode, r1.stderr[-800:])
    # a1: reset main to the approval commit (its start and outcome and a2's rebased line gone)
    lab.git("reset", "-q", "--hard", approval1)
    r2 = lab.run(check=False)
    got["a1_pass"] = (r2.returncode, r2.stderr[-800:])
    r3 = lab.run(check=False)
    got["a1_pass2"] = (r3.returncode, r3.stderr[-800:])
    got["calls"] = {t: len(lab.calls(t)) for t in ("a1", "a2")}
    got["rows"] = lab.rows()
    return got


def build_r(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    got = {mode: r_lab(root, mode) for mode in ("reset", "amend", "revert")}
    got["after"] = after_lab(root)
    return got


# -- lab I: the controller's identity changed across a restart --------------------------------

NEW_ID = "identity: {name: plangate-bot, email: bot@plangate.internal}"


def build_i(root: Path) -> dict[str, Any]:
    """``p3`` completed, ``g3`` at its gate, ``f3`` failed at action 2 under ``plangate@localhost``;
    the config's ``identity`` changed (a restart); then the flag, Alice's gate approval of
    ``g3``, her resume of ``f3``, a copy of ``p3`` approved, a new plan ``n3`` run."""
    lab = p_lab(root)
    lab.write("f3", pair("f3"))
    lab.write("p3", pair("p3", "rec"))
    lab.write("g3", pair("g3", "rec", gate=True))
    lab.commit("plans")
    lab.run()
    for s in ("f3", "p3", "g3"):
        lab.set_status(s, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    tags = ["f3a", "f3b", "p3a", "p3b", "g3a", "g3b", "n3a", "n3b"]
    got: dict[str, Any] = {"lab": lab, "before": counts(lab, tags)}
    got["before_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f3", "p3", "g3")}
    text = lab.config.read_text()
    old = "identity: {name: plangate, email: plangate@localhost}"
    assert old in text
    lab.config.write_text(text.replace(old, NEW_ID))
    r = lab.run(check=False)
    got["restart"] = (r.returncode, r.stderr[-1500:])
    lab.flag.write_text("go\n")  # type: ignore[attr-defined]
    lab.approve("f3")
    lab.approve("g3")
    lab.write("p3copy", lab.read("p3").split("frozen:")[0].replace("completed", "pending_approval"))
    lab.write("n3", pair("n3", "rec"))
    lab.commit("copy p3, new n3")
    lab.run(check=False)
    lab.approve("p3copy")
    lab.approve("n3")
    lab.run(check=False)
    lab.run(check=False)
    got["after"] = counts(lab, tags)
    got["after_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f3", "p3", "g3", "n3")}
    got["p3copy"] = lab.plan("p3copy")
    got["rows"] = lab.rows()
    got["audit_cfg"] = lab.audit(config=lab.config)
    got["audit"] = advkit.clone_audit_got(lab, root)
    clone = root / "clone"
    for key, email in (("new", "bot@plangate.internal"), ("old", "plangate@localhost")):
        out = lab.cli("audit", "--json", "--controller", email, cwd=clone)
        got[f"audit_{key}"] = (out.returncode, json.loads(out.stdout or "{}"))
    return got


# lab R


@pytest.mark.parametrize("mode", ["reset", "amend", "revert"])
def test_r_midrun_rewrite_never_reruns(labs: Labs, mode: str) -> None:
    """Action 1's tool rewrites main mid-run (``reset --hard HEAD~1`` erasing the start;
    ``commit --amend`` re-authoring the start as Bob; Bob's ``revert`` of the start): action 1
    ran once, in three passes; action 2 ran at most once (only ``revert``, the run going on:
    Bob's revert is an illegal transition, ignored); erased starts hold
    ``E_HISTORY_REWRITTEN`` with the remedy."""
    got = labs.got["r"][mode]
    assert all(rc == 0 for rc, _ in got["passes"])
    assert got["calls"]["m1"] == 1
    if mode == "revert":
        assert got["calls"]["m2"] == 1
        assert got["row"]["status"] == "completed"
        assert got["audit"]["valid"] == ["plans/m"]
    else:
        assert got["calls"]["m2"] == 0
        assert "E_HISTORY_REWRITTEN" in (got["row"]["waiting"] or ""), advkit.brief(got["row"])
        assert got["row"]["status"] != "executing" or got["row"]["waiting"]
        assert got["audit"]["valid"] == []


def test_r_after_run_rewrites_never_rerun(labs: Labs) -> None:
    """After the runs: ``a2``'s outcome dropped by a rebase (start kept), ``a1``'s start and
    outcome erased by a reset to Alice's approval: nothing runs again; each plan held
    ``E_HISTORY_REWRITTEN`` naming the erased commits; ``a1``'s approval refused
    ``E_ALREADY_EXECUTED``."""
    got = labs.got["r"]["after"]
    assert got["calls"] == {"a1": 1, "a2": 1}
    assert got["a2_file"] == "executing"
    for slug in ("a1", "a2"):
        row = got["rows"][f"plans/{slug}"]
        assert "E_HISTORY_REWRITTEN" in (row["waiting"] or ""), advkit.brief(row)
    assert "E_ALREADY_EXECUTED" in got["rows"]["plans/a1"]["reason"]


# lab I


def test_i_identity_change_runs_once(labs: Labs) -> None:
    """The controller's ``identity`` changed across a restart (docs/operations.md: it needs a
    restart): the gate, the resume and a new plan run once each, nothing of before runs
    again, a copy of the completed ``p3`` is refused ``E_ALREADY_EXECUTED``."""
    got = labs.got["i"]
    assert got["restart"][0] == 0
    assert got["before"] == {"f3a": 1, "f3b": 1, "p3a": 1, "p3b": 1, "g3a": 1, "g3b": 0,
                             "n3a": 0, "n3b": 0}  # fmt: skip
    assert got["after"] == {"f3a": 1, "f3b": 2, "p3a": 1, "p3b": 1, "g3a": 1, "g3b": 1,
                            "n3a": 1, "n3b": 1}  # fmt: skip
    assert set(got["after_status"].values()) == {"completed"}
    approval = got["p3copy"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"


def test_i_identity_change_fresh_audit_asks(labs: Labs) -> None:
    """A fresh clone's audit without ``--controller``: ``E_CONFIG_INVALID`` naming both
    identities (docs/approvals.md, "plangate audit": documented)."""
    got = labs.got["i"]["audit"]
    assert got["rc"] == 2
    assert got["report"].get("code") == "E_CONFIG_INVALID"


def _run_starts(report: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (e["plan"], e.get("outcome") or "")
        for e in report.get("executions", [])
        if e.get("approval_valid")
    }


@pytest.mark.parametrize("how", ["cfg", "new", "old"])
def test_i_identity_change_audit_agrees(labs: Labs, how: str) -> None:
    """docs/approvals.md: "A controller whose identity changed is audited with
    ``--controller`` (or its config)": the audit lists every run, before and after the change
    (``p3`` complete, ``f3`` fail then complete, ``g3`` await-approval then complete, ``n3``),
    and flags none of the controller's own commits."""
    got = labs.got["i"]
    rc, report = got[f"audit_{how}"]
    starts = _run_starts(report)
    for want in (("plans/p3", "complete"), ("plans/f3", "fail"), ("plans/f3", "complete"),
                 ("plans/g3", "await-approval"), ("plans/g3", "complete"),
                 ("plans/n3", "complete")):  # fmt: skip
        assert want in starts, (want, sorted(starts))
    blamed = [
        f for f in report.get("findings", [])
        if any(e in f.get("detail", "") for e in ("plangate@localhost", "bot@plangate.internal"))
        or f.get("kind") == "log-changed"
    ]  # fmt: skip
    assert blamed == [], blamed[:4]
    assert rc == 0


def build_j(root: Path) -> dict[str, Any]:
    """A rebuilt host that also renames the controller: ``p4`` completed, ``g4`` at its gate,
    ``f4`` failed at action 2; the state directory moved away AND ``identity`` changed; a
    plain start, then ``--take-over``; then the flag, the gate, the resume, a copy of ``p4``
    approved."""
    lab = p_lab(root)
    lab.write("f4", pair("f4"))
    lab.write("p4", pair("p4", "rec"))
    lab.write("g4", pair("g4", "rec", gate=True))
    lab.commit("plans")
    lab.run()
    for s in ("f4", "p4", "g4"):
        lab.set_status(s, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    tags = ["f4a", "f4b", "p4a", "p4b", "g4a", "g4b"]
    got: dict[str, Any] = {"lab": lab, "before": counts(lab, tags)}
    got["before_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f4", "p4", "g4")}
    shutil.move(str(lab.state), str(root / "state-lost"))
    text = lab.config.read_text()
    lab.config.write_text(
        text.replace("identity: {name: plangate, email: plangate@localhost}", NEW_ID)
    )
    plain = lab.run(check=False)
    got["plain"] = (plain.returncode, plain.stderr[-1500:])
    took = lab.run(check=False, take_over=True)
    got["take_over"] = (took.returncode, took.stderr[-1500:])
    got["mid"] = counts(lab, tags)
    lab.flag.write_text("go\n")  # type: ignore[attr-defined]
    lab.approve("f4")
    lab.approve("g4")
    lab.write("p4copy", lab.read("p4").split("frozen:")[0].replace("completed", "pending_approval"))
    lab.commit("copy p4")
    lab.run(check=False)
    lab.approve("p4copy")
    lab.run(check=False)
    lab.run(check=False)
    got["after"] = counts(lab, tags)
    got["after_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f4", "p4", "g4")}
    got["p4copy"] = lab.plan("p4copy")
    got["rows"] = lab.rows()
    return got


def build_k(root: Path) -> dict[str, Any]:
    """A daemon stopped (SIGTERM) mid-action 1 of ``k1``, its identity changed, then started
    again with ``run --once`` twice: action 1 finishes and never runs again, action 2 once."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "slow.py").write_text(SLOW)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / "k" / "ran.log"))
    lab = Lab(
        root / "k",
        tools=f"slow: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'slow.py'))},"
        f" '{{tag}}'], env: {{REC_LOG: {log}, GO: {json.dumps(str(root / 'go'))}}}}}\n",
    )
    lab.write(
        "k1",
        "plan:\n  name: k1\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}, {name: slow}]\nactions:\n"
        '  - id: 1\n    tool: slow\n    why: w1\n    params: {tag: "k1a"}\n'
        '  - id: 2\n    tool: rec\n    why: w2\n    params: {tag: "k1b"}\n',
    )
    lab.commit("plans")
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    err = open(root / "daemon.err", "w")  # noqa: SIM115
    daemon = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=root, env={**lab.env(), "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
        stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
    )  # fmt: skip
    try:
        lab.approve("k1")
        got["a1_started"] = until(lambda: len(lab.calls("k1a")) >= 1, timeout=120)
        daemon.send_signal(signal.SIGTERM)
        until(lambda: "daemon.stopping" in (root / "daemon.err").read_text(), timeout=60)
        (root / "go").write_text("go\n")
        got["daemon_rc"] = daemon.wait(timeout=120)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        err.close()
    got["stopped_status"] = lab.plan("k1")["plan"]["status"]
    got["stopped_calls"] = {t: len(lab.calls(t)) for t in ("k1a", "k1b")}
    text = lab.config.read_text()
    lab.config.write_text(
        text.replace("identity: {name: plangate, email: plangate@localhost}", NEW_ID)
    )
    passes = [lab.run(check=False) for _ in range(2)]
    got["passes"] = [(p.returncode, p.stderr[-800:]) for p in passes]
    got["calls"] = {t: len(lab.calls(t)) for t in ("k1a", "k1b")}
    got["status"] = lab.plan("k1")["plan"]["status"]
    got["row"] = lab.rows().get("plans/k1")
    got["audit_cfg"] = lab.audit(config=lab.config)
    return got


def test_t_tool_links_not_followed(labs: Labs) -> None:
    """A tool puts a symlink to a file outside the repo in place of its own
    ``EXECUTION_LOG.md`` (``sloglink``) or of its ``PLAN.yml`` (``splanlink``) mid-run: the
    outside file is never written; the log link's plan completes (the link saved aside), the
    plan link's outcome waits until the owner puts the file back, then completes."""
    got = labs.got["t"]
    assert got["outside"] == "OUTSIDE\n"
    log_row = got["links_rows"]["sloglink"]
    assert log_row["status"] == "completed" and log_row["displaced"], advkit.brief(log_row)
    plan_row = got["links_rows"]["splanlink"]
    assert plan_row["status"] == "executing" and plan_row["waiting"], advkit.brief(plan_row)
    assert got["rows_after"]["plans/splanlink"]["status"] == "completed"
    assert "OUTSIDE" not in got["logs"]["sloglink"]


# lab J


def test_j_rebuilt_and_renamed_refused_then_counted(labs: Labs) -> None:
    """State directory lost AND identity changed: a plain start refuses ``E_STORAGE`` (read as
    a squash: the plan files record runs no commit under the new name made); ``--take-over``
    counts every recorded run executed (docs/operations.md, "A squashed line"): the copy of
    ``p4``, ``f4``'s resume and ``g4``'s gate approval are refused ``E_ALREADY_EXECUTED`` and
    nothing runs again."""
    got = labs.got["j"]
    assert got["plain"][0] != 0 and "E_STORAGE" in got["plain"][1]
    assert got["take_over"][0] == 0
    assert got["after"] == got["before"] == {"f4a": 1, "f4b": 1, "p4a": 1, "p4b": 1,
                                             "g4a": 1, "g4b": 0}  # fmt: skip
    for slug in ("p4copy", "f4", "g4"):
        assert "E_ALREADY_EXECUTED" in (got["rows"][f"plans/{slug}"]["reason"] or ""), slug


# lab K


def test_k_stopped_renamed_resumes_once(labs: Labs) -> None:
    """A daemon SIGTERMed mid-action 1 (the action finishes, the run checkpointed
    ``executing``), the identity changed, two ``run --once``: action 2 once, action 1 never
    again, ``completed``."""
    got = labs.got["k"]
    assert got["a1_started"] and got["daemon_rc"] == 0
    assert got["stopped_status"] == "executing"
    assert got["stopped_calls"] == {"k1a": 1, "k1b": 0}
    assert all(rc == 0 for rc, _ in got["passes"])
    assert got["calls"] == {"k1a": 1, "k1b": 1}
    assert got["status"] == "completed"


def test_k_stopped_renamed_audit_agrees(labs: Labs) -> None:
    """``plangate audit --config`` of that run (started under the old identity, checkpointed
    and completed under the new): one valid execution of ``k1``, complete, and no finding on
    the controller's own commits."""
    rc, report = labs.got["k"]["audit_cfg"]
    assert ("plans/k1", "complete") in _run_starts(report), report.get("executions")
    assert report.get("findings") == [], report.get("findings")[:4]
    assert rc == 0


# -- lab B: remote mode, the watched `branch` changed (same state; new state + take-over) ----


def build_b(root: Path) -> dict[str, Any]:
    """Remote mode over ``file://``. On ``main``: ``p5`` and ``q5`` frozen; ``release`` made
    there (both pending); then both approved on main and run. The config's ``remote.branch``
    becomes ``release`` (a restart, the same state directory): Alice approves ``p5`` on
    ``release``. Then a new state directory on ``release`` (a rebuilt host), a plain start,
    ``--take-over``: Alice approves ``q5`` on ``release``."""
    root.mkdir(parents=True, exist_ok=True)
    origin = root / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    lab = Lab(root / "b")
    lab.git("remote", "add", "origin", str(origin))
    lab.git("push", "-q", "origin", "main")
    url = f"file://{origin}"

    def cfg(path: Path, branch: str, state: Path) -> Path:
        text = lab.config.read_text()
        remote = f"remote: {{url: {json.dumps(url)}, branch: {branch}}}\n"
        text = text.replace(f"repo: {lab.repo}\n", remote)
        text = text.replace(f"state_dir: {lab.state}\n", f"state_dir: {state}\n")
        path.write_text(text)
        return path

    main_cfg = cfg(root / "main.yml", "main", root / "state")
    rel_cfg = cfg(root / "rel.yml", "release", root / "state")
    new_cfg = cfg(root / "new.yml", "release", root / "state-new")

    def run(config: Path, *opts: str) -> tuple[int, str]:
        out = lab.cli("run", "--once", *opts, "--config", str(config))
        return out.returncode, out.stderr[-1500:]

    def push(branch: str) -> None:
        lab.git("push", "-q", "origin", f"HEAD:{branch}")

    def pull(branch: str) -> None:
        lab.git("fetch", "-q", "origin")
        lab.git("checkout", "-q", "-B", branch, f"origin/{branch}")

    for s in ("p5", "q5"):
        lab.write(s, advkit.plan_text(s))
    lab.commit("plans")
    push("main")
    got: dict[str, Any] = {"lab": lab, "freeze": run(main_cfg)}
    pull("main")
    lab.git("push", "-q", "origin", "HEAD:refs/heads/release")
    lab.approve("p5")
    lab.approve("q5")
    push("main")
    got["main_run"] = run(main_cfg)
    got["ran_main"] = {s: len(lab.calls(s)) for s in ("p5", "q5")}
    # the same controller (state) now watches release: Alice approves p5 there
    pull("release")
    lab.approve("p5")
    push("release")
    got["rel_run"] = [run(rel_cfg), run(rel_cfg)]
    got["after_rel"] = {s: len(lab.calls(s)) for s in ("p5", "q5")}
    # a new state directory on release, taken over: Alice approves q5 there
    got["new_plain"] = run(new_cfg)
    got["new_take"] = run(new_cfg, "--take-over")
    pull("release")
    lab.approve("q5")
    push("release")
    got["new_run"] = [run(new_cfg), run(new_cfg)]
    got["after_new"] = {s: len(lab.calls(s)) for s in ("p5", "q5")}
    pull("release")
    got["rel_files"] = {s: lab.plan(s) for s in ("p5", "q5")}
    return got


# lab B


def test_b_branch_changed_same_state_refused(labs: Labs) -> None:
    """``remote.branch`` changed to ``release`` with the same state directory: Alice's approval
    there of ``p5`` (which ran on main) is refused ``E_ALREADY_EXECUTED``; nothing runs."""
    got = labs.got["b"]
    assert got["ran_main"] == {"p5": 1, "q5": 1}
    assert all(rc == 0 for rc, _ in got["rel_run"])
    assert got["after_rel"] == {"p5": 1, "q5": 1}
    approval = got["rel_files"]["p5"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"


def test_b_new_state_on_new_branch_refused_plain(labs: Labs) -> None:
    """A new state directory on ``release``: a plain start refuses ``E_STORAGE``."""
    got = labs.got["b"]
    assert got["new_plain"][0] != 0 and "E_STORAGE" in got["new_plain"][1]
    assert got["new_take"][0] == 0


def test_b_takeover_on_new_branch_never_reruns(labs: Labs) -> None:
    """SPEC §15: "A frozen hash runs at most once per controller: a copy, move, rename or
    rewritten history of a plan that already ran does not run again (E_ALREADY_EXECUTED)";
    docs/operations.md: ``--take-over`` is the lost state "taken over knowingly". ``q5`` ran
    on main; the rebuilt controller (new state, ``--take-over``) watching ``release``, where
    Alice approves the same version at the same path: it must not run again."""
    got = labs.got["b"]
    assert got["after_new"]["q5"] == 1, got["after_new"]
    approval = got["rel_files"]["q5"].get("approval") or {}
    assert approval.get("code") == "E_ALREADY_EXECUTED", approval


# -- lab X: a retrying action whose controller is SIGKILLed again and again ------------------

FAILS = r"""
import json, os, sys
tag = sys.argv[1]
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag], "stdin": data}) + "\n")
sys.exit(4)
"""


def x_one(root: Path, slug: str, idem: bool, grace: float = 0.3) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "fails.py").write_text(FAILS)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / slug / "ran.log"))
    lab = Lab(
        root / slug,
        tools=f"fails: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'fails.py'))},"
        f" '{{tag}}'], env: {{REC_LOG: {log}}}" + (", idempotent: true" if idem else "") + "}\n",
    )
    lab.write(
        slug,
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}, {name: fails}]\nactions:\n"
        f'  - id: 1\n    tool: fails\n    why: w1\n    params: {{tag: "{slug}a"}}\n'
        "    on_failure: retry\n    retry: {attempts: 2, delay: 1, backoff: 1}\n"
        f'  - id: 2\n    tool: rec\n    why: w2\n    params: {{tag: "{slug}b"}}\n',
    )
    lab.commit("plans")
    lab.run()
    lab.approve(slug)
    got: dict[str, Any] = {"lab": lab, "kills": 0}
    env = {**lab.env(), "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "REC_LOG": str(lab.log)}
    for _ in range(6):
        seen = len(lab.calls(f"{slug}a"))
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip

        def moved(p: subprocess.Popen[bytes] = proc, n: int = seen) -> bool:
            return len(lab.calls(f"{slug}a")) > n or p.poll() is not None

        until(moved, timeout=90)
        if proc.poll() is None and grace:
            until(lambda p=proc: p.poll() is not None, timeout=grace)
        if proc.poll() is None:
            proc.kill()
            got["kills"] += 1
        proc.wait()
    passes = [lab.run(check=False) for _ in range(2)]
    got["passes"] = [p.returncode for p in passes]
    got["calls"] = {t: len(lab.calls(t)) for t in (f"{slug}a", f"{slug}b")}
    got["row"] = lab.rows().get(f"plans/{slug}")
    got["block"] = lab.plan(slug).get("execution")
    got["audit"] = advkit.clone_audit_got(lab, root / slug)
    return got


def build_x(root: Path) -> dict[str, Any]:
    return {"xn": x_one(root, "xn", False), "xn0": x_one(root, "xn0", False, 0)}


# lab X


@pytest.mark.parametrize("slug", ["xn", "xn0"])
def test_x_retry_bound_survives_kills(labs: Labs, slug: str) -> None:
    """An always-failing non-idempotent action with ``retry: {attempts: 2}`` (at most 3
    calls, docs/plan-format.md), its ``run --once`` SIGKILLed right after each call appears
    (``xn0``) or 0.3 s later (``xn``, in the back-off), six times, then two passes: at most 3
    calls, action 2 never, ``failed``, the record's attempts match the calls, the audit one
    ``fail``."""
    got = labs.got["x"][slug]
    assert got["passes"] == [0, 0]
    assert 1 <= got["calls"][f"{slug}a"] <= 3, got["calls"]
    assert got["calls"][f"{slug}b"] == 0
    assert got["row"]["status"] == "failed", advkit.brief(got["row"])
    assert got["block"]["actions"][0]["attempts"] <= 3
    assert [(e["plan"], e["outcome"]) for e in got["audit"]["report"]["executions"]] == [
        (f"plans/{slug}", "fail")
    ]


# -- lab S: a gate answered after the journal was lost: outputs from the committed record -----

S_PARAMS = {
    "ssec": 'v: "$<secrets.TOK>"',
    "slong": "v: " + "L" * 300,
    "sshort": "v: short-value",
    "sstars": 'v: "***"',
}


def build_s(root: Path) -> dict[str, Any]:
    """Action 1 ``echo`` returns ``v`` (the secret, 300 characters, a short text, the text
    ``***``), output ``o``; action 2 ``rec`` is gated and gets ``$<actions[1].outputs.o>``.
    At the gate the state directory is lost; ``--take-over``; Alice approves each gate."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    lab = Lab(root / "s", extra=f"secrets: {{file: {root / 'sec.yml'}}}\n")
    for slug, param in S_PARAMS.items():
        lab.write(
            slug,
            f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: rec}, {name: echo}]\nactions:\n"
            f"  - id: 1\n    tool: echo\n    why: w1\n    params: {{{param}}}\n"
            "    outputs:\n      - {name: o, path: $.v}\n"
            "  - id: 2\n    tool: rec\n    why: w2\n    requires_approval: true\n"
            f'    params: {{tag: "{slug}", got: "$<actions[1].outputs.o>"}}\n',
        )
    lab.commit("plans")
    lab.run()
    for slug in S_PARAMS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    got["paused"] = {s: lab.plan(s)["plan"]["status"] for s in S_PARAMS}
    shutil.move(str(lab.state), str(root / "state-lost"))
    took = lab.run(check=False, take_over=True)
    got["take_over"] = took.returncode
    for slug in S_PARAMS:
        lab.set_status(slug, "approved")
    lab.commit("gates", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    got["calls"] = {s: [json.loads(c["stdin"]) for c in lab.calls(s)] for s in S_PARAMS}
    got["rows"] = lab.rows()
    got["blocks"] = {s: lab.plan(s).get("execution") for s in S_PARAMS}
    return got


# lab S


@pytest.mark.parametrize("slug", ["ssec", "slong", "sstars"])
def test_s_lost_journal_masked_output_never_guessed(labs: Labs, slug: str) -> None:
    """The gate answered after the journal was lost and taken over: the record shows action
    1's output masked (the secret; the text ``***``) or cut (300 characters): action 2 fails
    ``E_ACTION_IN_DOUBT`` before its tool is called (docs/execution.md, "A plan at a gate (or
    failed) when the journal is lost"); nothing reaches ``rec``."""
    got = labs.got["s"]
    assert got["paused"][slug] == "awaiting_approval" and got["take_over"] == 0
    assert got["calls"][slug] == []
    block = got["blocks"][slug]
    assert block["status"] == "failed"
    assert block["actions"][1]["error"]["code"] == "E_ACTION_IN_DOUBT"
    assert SECRET not in json.dumps(got["rows"][f"plans/{slug}"])


def test_s_lost_journal_output_from_record(labs: Labs) -> None:
    """A short output the record shows whole: action 2 gets exactly it, once, ``completed``."""
    got = labs.got["s"]
    assert got["calls"]["sshort"] == [{"got": "short-value", "tag": "sshort"}]
    assert got["blocks"]["sshort"]["status"] == "completed"


def build_m(root: Path) -> dict[str, Any]:
    """The state directory MOVED (``mv`` to a new path, ``state_dir`` changed, a restart):
    ``p6`` completed, ``g6`` at its gate, ``f6`` failed at action 2; then the flag, the gate,
    the resume, a copy of ``p6`` approved."""
    lab = p_lab(root)
    lab.write("f6", pair("f6"))
    lab.write("p6", pair("p6", "rec"))
    lab.write("g6", pair("g6", "rec", gate=True))
    lab.commit("plans")
    lab.run()
    for s in ("f6", "p6", "g6"):
        lab.set_status(s, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    tags = ["f6a", "f6b", "p6a", "p6b", "g6a", "g6b"]
    got: dict[str, Any] = {"lab": lab, "before": counts(lab, tags)}
    moved = root / "state-moved"
    shutil.move(str(lab.state), str(moved))
    lab.config.write_text(
        lab.config.read_text().replace(f"state_dir: {lab.state}", f"state_dir: {moved}")
    )
    r = lab.run(check=False)
    got["restart"] = (r.returncode, r.stderr[-1200:])
    lab.flag.write_text("go\n")  # type: ignore[attr-defined]
    lab.approve("f6")
    lab.approve("g6")
    lab.write("p6copy", lab.read("p6").split("frozen:")[0].replace("completed", "pending_approval"))
    lab.commit("copy p6")
    lab.run(check=False)
    lab.approve("p6copy")
    lab.run(check=False)
    lab.run(check=False)
    got["after"] = counts(lab, tags)
    got["after_status"] = {s: lab.plan(s)["plan"]["status"] for s in ("f6", "p6", "g6")}
    got["p6copy"] = lab.plan("p6copy")
    got["audit"] = advkit.clone_audit_got(lab, root)
    return got


# lab M


def test_m_moved_state_goes_on_once(labs: Labs) -> None:
    """The state directory moved to a new path (a restart): no refusal, the gate and the
    resume run what is left once, the copy of ``p6`` is refused, the audit lists every run
    valid with no finding."""
    got = labs.got["m"]
    assert got["restart"][0] == 0
    assert got["after"] == {"f6a": 1, "f6b": 2, "p6a": 1, "p6b": 1, "g6a": 1, "g6b": 1}
    assert set(got["after_status"].values()) == {"completed"}
    approval = got["p6copy"]["approval"]
    assert approval["status"] == "refused" and approval["code"] == "E_ALREADY_EXECUTED"
    report = got["audit"]["report"]
    assert report.get("findings") == []
    assert _run_starts(report) == {
        ("plans/f6", "fail"), ("plans/f6", "complete"), ("plans/g6", "await-approval"),
        ("plans/g6", "complete"), ("plans/p6", "complete"),
    }  # fmt: skip


# -- lab G: a graph's parallel actions when the controller is SIGKILLed mid-both -------------


def gplan(slug: str, first: str, second: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: rec}, {name: slow}, {name: slowi}]\nactions:\n"
        f"  - id: 1\n    tool: {first}\n    why: w1\n    needs: []\n"
        f'    params: {{tag: "{slug}a"}}\n'
        f"  - id: 2\n    tool: {second}\n    why: w2\n    needs: []\n"
        f'    params: {{tag: "{slug}b"}}\n'
        "  - id: 3\n    tool: rec\n    why: w3\n    needs: [1, 2]\n"
        f'    params: {{tag: "{slug}c"}}\n'
    )


G_PLANS = {"gss": ("slow", "slow"), "gis": ("slowi", "slow")}


def build_g(root: Path) -> dict[str, Any]:
    """Two graph plans, actions 1 and 2 in parallel (``needs: []``), 3 after both: ``gis``, a
    slow idempotent and a slow non-idempotent call; ``gss``, two slow non-idempotent calls
    (a control the later passes run). ``run --once`` is SIGKILLed once both calls of ``gis``
    have begun; the calls are released; two passes."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "slow.py").write_text(SLOW)
    py = json.dumps(sys.executable)
    log = json.dumps(str(root / "g" / "ran.log"))
    slow = (
        f"[{py}, {json.dumps(str(root / 'slow.py'))}, '{{tag}}'], env: {{REC_LOG: {log},"
        f" GO: {json.dumps(str(root / 'go'))}}}"
    )
    lab = Lab(
        root / "g",
        tools=f"slow: {{kind: exec, argv: {slow}}}\n"
        f"slowi: {{kind: exec, idempotent: true, argv: {slow}}}\n",
    )
    for slug, (a, b) in G_PLANS.items():
        lab.write(slug, gplan(slug, a, b))
    lab.commit("plans")
    lab.run()
    for slug in G_PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    env = {**lab.env(), "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "REC_LOG": str(lab.log)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    tags = [f"{s}{x}" for s in G_PLANS for x in "abc"]
    begun = ["gisa", "gisb"]
    got: dict[str, Any] = {"lab": lab}
    got["all_begun"] = until(lambda: all(lab.calls(t) for t in begun), timeout=120)
    got["alive_at_kill"] = proc.poll() is None
    proc.kill()
    proc.wait()
    got["at_kill"] = counts(lab, tags)
    (root / "go").write_text("go\n")
    passes = [lab.run(check=False) for _ in range(2)]
    got["passes"] = [p.returncode for p in passes]
    got["pass_err"] = [p.stderr for p in passes]
    got["after"] = counts(lab, tags)
    got["rows"] = lab.rows()
    got["blocks"] = {s: lab.plan(s).get("execution") for s in G_PLANS}
    got["audit"] = advkit.clone_audit_got(lab, root)
    return got


# lab G


def test_g_parallel_kill_in_doubt(labs: Labs) -> None:
    """A graph's two parallel actions both mid-call at the SIGKILL: the non-idempotent one is
    never re-run (``in_doubt``, ``E_ACTION_IN_DOUBT``), the idempotent one at most once more,
    action 3 never; the plan ``failed``; the control plan runs each action once; the audit
    agrees (one ``fail``, one ``complete``)."""
    got = labs.got["g"]
    assert got["all_begun"] and got["alive_at_kill"]
    assert got["passes"] == [0, 0]
    after = got["after"]
    assert after["gisb"] == 1 and after["gisc"] == 0 and 1 <= after["gisa"] <= 2, after
    assert all(after[t] <= 1 for t in ("gssa", "gssb", "gssc")), after
    block = got["blocks"]["gis"]
    assert block["status"] == "failed"
    assert block["actions"][1]["status"] == "in_doubt"
    assert block["actions"][1]["error"]["code"] == "E_ACTION_IN_DOUBT"
    outcomes = sorted((e["plan"], e["outcome"]) for e in got["audit"]["report"]["executions"])
    assert ("plans/gis", "fail") in outcomes and len(outcomes) == 2, outcomes
    if got["at_kill"]["gssa"] == got["at_kill"]["gssb"] == 0:  # the control had not begun
        assert (after["gssa"], after["gssb"], after["gssc"]) == (1, 1, 1), after
        assert got["blocks"]["gss"]["status"] == "completed"
        assert ("plans/gss", "complete") in outcomes
