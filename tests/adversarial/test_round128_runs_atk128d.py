"""Round 128 (runs, atk128d): "an approved version runs exactly as frozen, at most once, its
actions in plan order, and what the controller commits is its own and true". Local mode,
approvers ``alice@example.com`` (and ``*@ops.example.com``), ``execution:
{max_concurrent_plans: 1}`` (one plan mid-run at a kill).

Tools (besides advkit's ``rec``): one script ``k.py <tag> <mode>`` that records each call in
``ran.log`` (as ``rec`` does) and then, by mode: ``kill`` SIGKILLs its parent (the
``plangate run --once`` process) the FIRST time it is called for ``tag`` (a marker file),
else answers ``{"ok": true}``; ``fail`` exits 3; ``failonce`` exits 3 the first time, then
succeeds. Catalog entries: ``ki`` (kill, ``idempotent: true``, ``risk: low``: usable as a
check tool), ``kn`` (kill, not idempotent), ``fl`` (fail), ``fo`` (failonce).

Labs (module scope, built at once by ``build_all``):

- ``K`` (kills at new points): one plan per variant, all approved in one commit by Alice, then
  ``run --once`` passes until one exits 0 (each variant's kill happens once); gated plans'
  gates approved by Alice; passes again. Variants: a kill inside a ``verify`` poll after a
  non-idempotent action succeeded (``kverify``); inside a ``preconditions`` check of
  action 2 (``kpre``) and of a plan-level precondition (``kplanpre``); inside a
  non-idempotent / idempotent ``fallback`` step (``kfbn``, ``kfbi``); in the action after a
  ``skip``ped failure (``kskip``); inside a gated action after the gate's approval,
  idempotent and not (``kgate``, ``kgaten``); a non-idempotent action killed that says
  ``on_failure: retry`` / ``skip`` / ``ask`` / ``fallback`` (``kretryin``, ``kskipin``,
  ``kaskin``, ``kfbin``); a ``needs`` graph whose idempotent branch kills while its sibling
  is done (``kneeds``).
- ``M`` (moves and copies of paused and failed runs): a ``failed`` plan (action 2 ``fo``)
  moved (``git mv``) and approved at its new path; copied (the whole folder, the controller's
  blocks kept) and the copy approved; copied with BOTH approved in one commit; a plan paused
  at a gate moved and its gate approved at the new path; copied with both approved; two
  completed plans' folders swapped and both set approved; a failed plan and a completed plan
  swapped and both approved.

- ``K`` also: a nonce (a non-idempotent tool ``nz`` that prints a fresh random value per
  call) as action 1's output, referenced by every later step, across a kill in action 2
  (``knonce``), a kill after a gate (``knoncegate``), a failed run resumed then killed
  (``knonceres``), a kill in a fallback step (``knoncefb``), an ask answered then a kill
  (``knonceask``); a fallback step that fails with its own code (``kfbout``: a missing
  output), a plain failing fallback (``kfbf``), a two-step fallback killed in step 2
  (``kfbmid``), a non-idempotent fallback killed then the run resumed (``kfbnr``).
- ``M`` also: a plan paused by ``on_failure: ask`` moved and approved at the new path
  (``maskmove``), copied with both approved (``maskboth``).
- ``H`` (hard links in the working tree; ``os.link``, which no earlier round tried): the
  plan's ``EXECUTION_LOG.md`` or ``PLAN.yml`` hard-linked to the controller's config, to an
  operator's file outside the tree, to another plan's PLAN.yml, to an untracked twin, to a
  link of the state directory's ``index.sqlite``, or to a fresh outside file: made by the
  agent before the approving pass (``hpre*``) or by action 1's tool mid-run (``hlog*``,
  ``hplan*``).

Ids (201): ``test_k_called_once`` (36: each non-idempotent call once across the kills),
``test_k_idempotent_rerun_once`` (14), ``test_k_completed_after_idempotent_kill`` (12),
``test_k_in_doubt_fails`` (7), ``test_k_nothing_after_doubt`` (10),
``test_k_status_reason_names_outcome_code`` (9), ``test_k_show_names_doubt_before_resume``
(4), ``test_k_log_matches_record`` (26), ``test_k_nonce_*`` (5 + 13 + 1),
``test_k_parallel_sibling_at_most_twice``, ``test_k_audit_clean``, ``test_k_no_traceback``;
``test_m_*`` (setup, action 1 once for 11 plans, failed/ask step at most resumed once, gated
step at most once, copies refused ``E_ALREADY_EXECUTED``, moved paused runs coded, no
double first start in the audit); ``test_h_*`` (11 link targets untouched, 2 tool-made links
not written through, the state index intact, 15 each action at most once, passes clean).

Seen (round 128: 201 ids, 196 passed, 5 xfailed (strict); 52-78 s at ``-n 2``), one class.

**status-reason-ignores-fallback-step** (5 ids: ``test_k_in_doubt_fails[kfbn]``,
``test_k_status_reason_names_outcome_code[kfbn]``, ``[kfbout]``,
``test_k_show_names_doubt_before_resume[kfbn]``, ``[kfbnr]``; fails OPEN for the operator's
decision, the record itself is right). Steps: an action ``fl`` that exits 3 with
``on_failure: fallback`` and one fallback step ``1.1`` on a non-idempotent tool; the pass is
SIGKILLed while ``1.1``'s tool runs; the restart writes ``1.1`` ``in_doubt`` /
``E_ACTION_IN_DOUBT`` in the ``execution:`` block and EXECUTION_LOG.md and commits
``plangate: fail plans/kfbn`` whose message is ``E_ACTION_IN_DOUBT: action 1.1 (kn) ... it
may or may not have taken effect``. But ``plangate status`` (text and ``--json`` ``reason``)
says ``action 1: E_TOOL_FAILED: fl: ... exited with status 3``, and ``plangate show`` prints
``Status: failed - action 1: E_TOOL_FAILED`` and under ``[1]`` only ``ran: failed`` and that
error, no line for the fallback step's outcome at all. The same without a kill: a fallback
step failing with its own code (``E_OUTPUT_MISSING``, in the commit and the log) reads
``action 1: E_TOOL_FAILED`` in status and show. docs/execution.md's table of recovery says
for a lost journal "the reason in ``status``" and "Check, then approve a resume", and
"Before approving ... ``plangate show PATH`` prints ... what each earlier action did": an
operator deciding on a resume is not told that a fallback step may already have taken effect.

Fixed (fix129d): the cause was the one summariser of a failed run,
``controller.plan.summary``: ``_failed`` took the FIRST step of the execution block with an
error, which is the action whose failure the fallback was run for, never the fallback step
(``1.1``) that then ended the run; and ``show`` printed run lines for actions and nested
actions only. Now ``summary.ended_by`` reads what ended the run as the outcome commit names
it (the run's own failure, else the first unfinished action's LAST failed step: its fallback
step, a nested step, else the action; an action a fallback recovered passed over), and
``status``'s reason (text, ``--json``, MCP ``status``/``log``), ``show``'s Status line and the
page's code all read it (``fallback step 1.1 of action 1: E_ACTION_IN_DOUBT: ...``); ``show``
(text, quiet, markdown) and the page's action table list each fallback step that ran under
its action with its status and error. Tests: tests/plan/test_summary.py,
tests/service/test_fallback_step_outcome.py.

Held: a kill inside a ``verify`` poll (the non-idempotent action not called again, the poll
re-run), inside an action's and a plan's ``preconditions`` check, in a fallback step (an
idempotent one re-run, finished steps not), in the step after a ``skip``, in a gated action
after its approval (the gate not asked again; a non-idempotent one in doubt), in a parallel
branch (the done sibling not re-run; a non-idempotent branch in doubt, nothing after it), a
non-idempotent action killed under ``on_failure: retry``/``skip``/``ask``/``fallback``
(never retried, skipped past or fallen back from: ``failed`` ``E_ACTION_IN_DOUBT``); a resume
and an ask answered then a kill (only the rest runs); action 1's nonce reached every later
call, first or re-run, from the journal; moved/copied failed, gated and asked runs
(``E_ALREADY_EXECUTED``, at most one resume), swapped completed folders run nothing; hard
links in the working tree are never written through (the controller replaces the file or
waits ``has uncommitted edits``), the state index intact.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial import advkit
from tests.adversarial.advkit import ALICE, Lab, Labs, build_all

KPY = """\
import json, os, signal, sys, time
tag, mode = sys.argv[1], sys.argv[2]
data = sys.stdin.read()
nonce = os.urandom(8).hex()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode, nonce], "stdin": data}) + "\\n")
if mode == "nonce":
    print(json.dumps({"ok": True, "nonce": nonce}))
    sys.exit(0)
mark = os.path.join(os.environ["MARKS"], tag)
if mode in ("kill", "failonce") and not os.path.exists(mark):
    open(mark, "w").close()
    if mode == "kill":
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(1)
        sys.exit(9)
    print(json.dumps({"ok": False}))
    sys.exit(3)
if mode == "fail":
    print(json.dumps({"ok": False}))
    sys.exit(3)
print(json.dumps({"ok": True, "tag": tag}))
"""

TOOLS = ["rec", "ki", "kn", "fl", "fo", "ko", "nz"]


def make_lab(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "k.py").write_text(KPY)
    marks = root / "marks"
    marks.mkdir()
    log = root / "lab" / "ran.log"
    py, kpy = json.dumps(sys.executable), json.dumps(str(root / "k.py"))
    env = f"env: {{REC_LOG: {json.dumps(str(log))}, MARKS: {json.dumps(str(marks))}}}"

    def entry(name: str, mode: str, extra: str = "") -> str:
        return f"{name}: {{kind: exec, argv: [{py}, {kpy}, '{{tag}}', {mode}], {env}{extra}}}\n"

    tools = (
        entry("ki", "kill", ", idempotent: true, risk: low")
        + entry("kn", "kill")
        + entry("fl", "fail")
        + entry("fo", "failonce")
        + entry("ko", "ok", ", idempotent: true, risk: low")
        + entry("nz", "nonce")
    )
    return Lab(root / "lab", tools=tools, extra="execution: {max_concurrent_plans: 1}\n")


def action(i: int, tool: str, tag: str, extra: str = "") -> str:
    body = f"  - id: {i}\n    tool: {tool}\n    why: 'step {i} of {tag}'\n"
    body += f"    params: {{tag: '{tag}'}}\n"
    return body + extra


def plan(slug: str, actions: str, top: str = "") -> str:
    tools = "".join(f"  - name: {t}\n" for t in TOOLS)
    return (
        f"plan:\n  name: '{slug}'\n  task: 'round 128 {slug}'\n  status: pending_approval\n"
        f"available_tools:\n{tools}{top}actions:\n{actions}"
    )


def pre(tag: str) -> str:
    check = f"{{tool: ki, params: {{tag: '{tag}'}}, expect: {{path: '$.json.ok', equals: true}}}}"
    return f"    preconditions: [{check}]\n"


#: slug -> plan text (the K lab's variants)
K_PLANS: dict[str, str] = {
    "kverify": plan(
        "kverify",
        action(
            1,
            "rec",
            "kverify-1",
            "    verify: {tool: ki, params: {tag: 'kverify-v'}, "
            "expect: {path: '$.json.ok', equals: true}, timeout: 20, interval: 1}\n",
        )
        + action(2, "rec", "kverify-2"),
    ),
    "kpre": plan("kpre", action(1, "rec", "kpre-1") + action(2, "rec", "kpre-2", pre("kpre-p"))),
    "kplanpre": plan(
        "kplanpre",
        action(1, "rec", "kplanpre-1"),
        top="preconditions: [{tool: ki, params: {tag: 'kplanpre-p'}, "
        "expect: {path: '$.json.ok', equals: true}}]\n",
    ),
    "kfbn": plan(
        "kfbn",
        action(
            1,
            "fl",
            "kfbn-1",
            "    on_failure: fallback\n"
            "    fallback: [{id: '1.1', tool: kn, why: fb, params: {tag: 'kfbn-f'}}]\n",
        )
        + action(2, "rec", "kfbn-2"),
    ),
    "kfbnr": plan(
        "kfbnr",
        action(
            1,
            "fl",
            "kfbnr-1",
            "    on_failure: fallback\n"
            "    fallback: [{id: '1.1', tool: kn, why: fb, params: {tag: 'kfbnr-f'}}]\n",
        )
        + action(2, "rec", "kfbnr-2"),
    ),
    "kfbi": plan(
        "kfbi",
        action(
            1,
            "fl",
            "kfbi-1",
            "    on_failure: fallback\n"
            "    fallback: [{id: '1.1', tool: ki, why: fb, params: {tag: 'kfbi-f'}}]\n",
        )
        + action(2, "rec", "kfbi-2"),
    ),
    "kskip": plan(
        "kskip",
        action(1, "fl", "kskip-1", "    on_failure: skip\n")
        + action(2, "ki", "kskip-2")
        + action(3, "rec", "kskip-3"),
    ),
    "kgate": plan(
        "kgate",
        action(1, "rec", "kgate-1")
        + action(2, "ki", "kgate-2", "    requires_approval: true\n")
        + action(3, "rec", "kgate-3"),
    ),
    "kgaten": plan(
        "kgaten",
        action(1, "rec", "kgaten-1")
        + action(2, "kn", "kgaten-2", "    requires_approval: true\n")
        + action(3, "rec", "kgaten-3"),
    ),
    "kretryin": plan(
        "kretryin",
        action(1, "kn", "kretryin-1", "    on_failure: retry\n    retries: 2\n")
        + action(2, "rec", "kretryin-2"),
    ),
    "kskipin": plan(
        "kskipin",
        action(1, "kn", "kskipin-1", "    on_failure: skip\n") + action(2, "rec", "kskipin-2"),
    ),
    "kaskin": plan(
        "kaskin",
        action(1, "kn", "kaskin-1", "    on_failure: ask\n") + action(2, "rec", "kaskin-2"),
    ),
    "kfbin": plan(
        "kfbin",
        action(
            1,
            "kn",
            "kfbin-1",
            "    on_failure: fallback\n"
            "    fallback: [{id: '1.1', tool: rec, why: fb, params: {tag: 'kfbin-f'}}]\n",
        )
        + action(2, "rec", "kfbin-2"),
    ),
    "kneeds": plan(
        "kneeds",
        action(1, "rec", "kneeds-1", "    needs: []\n")
        + action(2, "ki", "kneeds-2", "    needs: [1]\n")
        + action(3, "ko", "kneeds-3", "    needs: [1]\n")
        + action(4, "rec", "kneeds-4", "    needs: [2, 3]\n"),
    ),
    "kneedsn": plan(
        "kneedsn",
        action(1, "rec", "kneedsn-1", "    needs: []\n")
        + action(2, "kn", "kneedsn-2", "    needs: [1]\n")
        + action(3, "ko", "kneedsn-3", "    needs: [1]\n")
        + action(4, "rec", "kneedsn-4", "    needs: [2, 3]\n"),
    ),
    "kfbf": plan(
        "kfbf",
        action(
            1,
            "fl",
            "kfbf-1",
            "    on_failure: fallback\n"
            "    fallback: [{id: '1.1', tool: fl, why: fb, params: {tag: 'kfbf-f'}}]\n",
        )
        + action(2, "rec", "kfbf-2"),
    ),
    "kfbout": plan(
        "kfbout",
        action(
            1,
            "fl",
            "kfbout-1",
            "    on_failure: fallback\n"
            "    fallback:\n"
            "      - {id: '1.1', tool: rec, why: fb, params: {tag: 'kfbout-f'},\n"
            "         outputs: [{name: x, path: '$.json.nope'}]}\n",
        )
        + action(2, "rec", "kfbout-2"),
    ),
    "kfbmid": plan(
        "kfbmid",
        action(
            1,
            "fl",
            "kfbmid-1",
            "    on_failure: fallback\n"
            "    fallback:\n"
            "      - {id: '1.1', tool: rec, why: fb, params: {tag: 'kfbmid-f1'}}\n"
            "      - {id: '1.2', tool: ki, why: fb, params: {tag: 'kfbmid-f2'}}\n",
        )
        + action(2, "rec", "kfbmid-2"),
    ),
    "kgatepre": plan(
        "kgatepre",
        action(1, "rec", "kgatepre-1")
        + action(2, "rec", "kgatepre-2", "    requires_approval: true\n" + pre("kgatepre-p"))
        + action(3, "rec", "kgatepre-3"),
    ),
    "kaskok": plan(
        "kaskok",
        action(1, "fo", "kaskok-1", "    on_failure: ask\n")
        + action(2, "ki", "kaskok-2")
        + action(3, "rec", "kaskok-3"),
    ),
    "kresume": plan(
        "kresume",
        action(1, "rec", "kresume-1")
        + action(2, "fo", "kresume-2")
        + action(3, "ki", "kresume-3")
        + action(4, "rec", "kresume-4"),
    ),
}

NZ_OUT = "    outputs: [{name: nonce, path: '$.json.nonce'}]\n"


def nref(i: int, tool: str, tag: str, extra: str = "") -> str:
    """Action ``i`` calling ``tool`` with ``tag`` and ``n`` = action 1's nonce."""
    body = f"  - id: {i}\n    tool: {tool}\n    why: 'step {i} of {tag}'\n"
    body += f"    params: {{tag: '{tag}', n: '$<actions[1].outputs.nonce>'}}\n"
    return body + extra


K_PLANS.update(
    {
        "knonce": plan(
            "knonce",
            action(1, "nz", "knonce-1", NZ_OUT)
            + nref(2, "ki", "knonce-2")
            + nref(3, "rec", "knonce-3"),
        ),
        "knoncegate": plan(
            "knoncegate",
            action(1, "nz", "knoncegate-1", NZ_OUT)
            + nref(2, "ki", "knoncegate-2", "    requires_approval: true\n")
            + nref(3, "rec", "knoncegate-3"),
        ),
        "knonceres": plan(
            "knonceres",
            action(1, "nz", "knonceres-1", NZ_OUT)
            + nref(2, "fo", "knonceres-2")
            + nref(3, "ki", "knonceres-3")
            + nref(4, "rec", "knonceres-4"),
        ),
        "knoncefb": plan(
            "knoncefb",
            action(1, "nz", "knoncefb-1", NZ_OUT)
            + nref(
                2,
                "fl",
                "knoncefb-2",
                "    on_failure: fallback\n    fallback:\n"
                "      - {id: '2.1', tool: ki, why: fb, "
                "params: {tag: 'knoncefb-f', n: '$<actions[1].outputs.nonce>'}}\n",
            )
            + nref(3, "rec", "knoncefb-3"),
        ),
        "knonceask": plan(
            "knonceask",
            action(1, "nz", "knonceask-1", NZ_OUT)
            + nref(2, "fo", "knonceask-2", "    on_failure: ask\n")
            + nref(3, "ki", "knonceask-3")
            + nref(4, "rec", "knonceask-4"),
        ),
    }
)
NONCE = {
    "knonce": ["knonce-2", "knonce-3"],
    "knoncegate": ["knoncegate-2", "knoncegate-3"],
    "knonceres": ["knonceres-2", "knonceres-3", "knonceres-4"],
    "knoncefb": ["knoncefb-2", "knoncefb-f", "knoncefb-3"],
    "knonceask": ["knonceask-2", "knonceask-3", "knonceask-4"],
}

#: plans a human approves again after the first passes (a ``failed`` run resumed).
RESUMED = ["kresume", "kfbnr", "knonceres"]


def passes(lab: Lab, got: dict[str, Any], key: str, most: int = 25) -> None:
    """``run --once`` until a pass exits 0 (no kill left); every exit code kept."""
    codes = []
    for _ in range(most):
        r = lab.run(check=False)
        codes.append(r.returncode)
        if "Traceback" in r.stderr:
            got.setdefault("tracebacks", []).append(r.stderr[-1500:])
        if r.returncode == 0:
            break
    got[key] = codes


def counts(lab: Lab) -> dict[str, int]:
    rows = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    out: dict[str, int] = {}
    for r in rows:
        out[r["argv"][0]] = out.get(r["argv"][0], 0) + 1
    return out


def nonces(lab: Lab) -> dict[str, list[Any]]:
    """Per tag: the nonce each call printed (argv[2]) or the ``n`` it was given (stdin)."""
    out: dict[str, list[Any]] = {}
    for line in lab.log.read_text().splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        tag = r["argv"][0]
        if len(r["argv"]) > 1 and r["argv"][1] == "nonce":
            out.setdefault(tag, []).append(r["argv"][2])
            continue
        try:
            given = json.loads(r["stdin"]).get("n") if r["stdin"].strip() else None
        except ValueError:
            given = None
        out.setdefault(tag, []).append(given)
    return out


def execution(lab: Lab, slug: str) -> dict[str, Any]:
    try:
        return dict(lab.plan(slug).get("execution") or {})
    except advkit.BenchError:
        return {}


def build_k(root: Path) -> dict[str, Any]:
    lab = make_lab(root)
    for slug, text in K_PLANS.items():
        lab.write(slug, text)
    lab.commit("plans")
    lab.run()
    got: dict[str, Any] = {"lab": lab, "frozen": {s: lab.plan(s).get("frozen") for s in K_PLANS}}
    for slug in K_PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    passes(lab, got, "first")
    got["mid_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    got["mid_show"] = {
        s: lab.cli(
            "show", str(lab.repo / "plans" / s / "PLAN.yml"), "--config", str(lab.config)
        ).stdout
        for s in ("kfbn", "kfbnr", "kfbin", "kretryin")
    }
    now = {s: lab.plan(s)["plan"]["status"] for s in K_PLANS}
    got["mid_status"] = now
    gated = [s for s in K_PLANS if now[s] == "awaiting_approval" or s in RESUMED]
    got["gated"] = gated
    for slug in gated:
        lab.set_status(slug, "approved")
    lab.commit("approve gates", ALICE)
    passes(lab, got, "second")
    lab.run(check=False)
    got["calls"] = counts(lab)
    got["nonces"] = nonces(lab)
    got["rows"] = {k: advkit.brief(v, 5) for k, v in lab.rows().items()}
    got["status"] = {s: lab.plan(s)["plan"]["status"] for s in K_PLANS}
    got["exec"] = {s: execution(lab, s) for s in K_PLANS}
    got["logs"] = {
        s: (lab.repo / "plans" / s / "EXECUTION_LOG.md").read_text()
        if (lab.repo / "plans" / s / "EXECUTION_LOG.md").exists()
        else ""
        for s in K_PLANS
    }
    got["commit_codes"] = {}
    for s in K_PLANS:
        body = lab.git("log", "-1", "--format=%B", f"--grep=^plangate: [a-z-]* plans/{s}$")
        lines = body.split("\n")
        got["commit_codes"][s] = lines[2].split(":")[0] if len(lines) > 2 else ""
    code, report = lab.audit(config=lab.config)
    got["audit"] = (code, report)
    return got


# -- lab M ------------------------------------------------------------------------------------

M_FAILED = ["mfmove", "mfcopy", "mfboth", "mfswap"]
M_GATED = ["mgmove", "mgboth"]
M_DONE = ["mdone1", "mdone2", "mdone3"]
M_ASK = ["maskmove", "maskboth"]


def m_plan(slug: str) -> str:
    if slug in M_FAILED:
        return plan(slug, action(1, "rec", f"{slug}-1") + action(2, "fo", f"{slug}-2"))
    if slug in M_GATED:
        return plan(
            slug,
            action(1, "rec", f"{slug}-1")
            + action(2, "rec", f"{slug}-2", "    requires_approval: true\n"),
        )
    if slug in M_ASK:
        return plan(
            slug,
            action(1, "rec", f"{slug}-1")
            + action(2, "fo", f"{slug}-2", "    on_failure: ask\n")
            + action(3, "rec", f"{slug}-3"),
        )
    return plan(slug, action(1, "rec", f"{slug}-1"))


def copy_folder(lab: Lab, src: str, dst: str) -> None:
    shutil.copytree(lab.repo / "plans" / src, lab.repo / "plans" / dst)


def build_m(root: Path) -> dict[str, Any]:
    lab = make_lab(root)
    slugs = M_FAILED + M_GATED + M_DONE + M_ASK
    for slug in slugs:
        lab.write(slug, m_plan(slug))
    lab.commit("plans")
    lab.run()
    for slug in slugs:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    got["before"] = {s: lab.plan(s)["plan"]["status"] for s in slugs}
    got["before_calls"] = counts(lab)
    # the operator's / agent's moves and copies (by the agent), then Alice's approvals
    lab.git("mv", "plans/mfmove", "plans/mfmove2")
    copy_folder(lab, "mfcopy", "mfcopy2")
    copy_folder(lab, "mfboth", "mfboth2")
    lab.git("mv", "plans/mgmove", "plans/mgmove2")
    copy_folder(lab, "mgboth", "mgboth2")
    lab.git("mv", "plans/maskmove", "plans/maskmove2")
    copy_folder(lab, "maskboth", "maskboth2")
    lab.git("mv", "plans/mdone1", "plans/tmpx")
    lab.git("mv", "plans/mdone2", "plans/mdone1")
    lab.git("mv", "plans/tmpx", "plans/mdone2")
    lab.git("mv", "plans/mfswap", "plans/tmpy")
    lab.git("mv", "plans/mdone3", "plans/mfswap")
    lab.git("mv", "plans/tmpy", "plans/mdone3")
    lab.commit("moves and copies")
    lab.run(check=False)
    got["moved_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    for slug in [
        "mfmove2", "mfcopy2", "mfboth", "mfboth2", "mgmove2", "mgboth", "mgboth2",
        "mdone1", "mdone2", "mfswap", "mdone3", "maskmove2", "maskboth", "maskboth2",
    ]:  # fmt: skip
        lab.set_status(slug, "approved")
    lab.commit("approve again", ALICE)
    r1 = lab.run(check=False)
    r2 = lab.run(check=False)
    got["rc"] = (r1.returncode, r2.returncode, r1.stderr[-800:] + r2.stderr[-800:])
    got["calls"] = counts(lab)
    got["rows"] = {k: advkit.brief(v, 5) for k, v in lab.rows().items()}
    code, report = lab.audit(config=lab.config)
    got["audit"] = (code, report)
    return got


# -- lab H: hard links in the working tree -----------------------------------------------------

HPY = """\
import json, os, shutil, sys
tag, mode = sys.argv[1], sys.argv[2]
sys.stdin.read()
repo, root = os.environ["REPO"], os.environ["ROOT"]
folder = os.path.join(repo, "plans", tag)
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode], "stdin": ""}) + "\\n")
if mode == "none-none":
    print(json.dumps({"ok": True}))
    sys.exit(0)
what, target = mode.split("-", 1)
name = "PLAN.yml" if what == "plan" else "EXECUTION_LOG.md"
path = os.path.join(folder, name)
if target == "out":
    dest = os.path.join(root, "out-" + tag)
    if what == "plan":
        shutil.copyfile(path, dest)
    else:
        with open(dest, "w", encoding="utf-8") as f:
            f.write("outside the tree\\n")
elif target == "cfg":
    dest = os.environ["CFG"]
elif target == "op":
    dest = os.path.join(root, "operator.yml")
elif target == "state":
    dest = os.environ["STATEFILE"]
else:
    dest = os.path.join(repo, "plans", "victim", "PLAN.yml")
if os.path.lexists(path):
    os.unlink(path)
os.link(dest, path)
print(json.dumps({"ok": True}))
"""

#: slug -> (when the link is made: ``tool`` mid-run / ``pre`` in the tree before the pass,
#: mode ``<file>-<target>``)
H_VARIANTS = {
    "hlogout": ("tool", "log-out"),
    "hlogcfg": ("tool", "log-cfg"),
    "hlogvic": ("tool", "log-vic"),
    "hplanout": ("tool", "plan-out"),
    "hplancfg": ("tool", "plan-cfg"),
    "hlogstate": ("tool", "log-state"),
    "hprelogout": ("pre", "log-out"),
    "hprelogcfg": ("pre", "log-cfg"),
    "hprelogvic": ("pre", "log-vic"),
    "hpreplanout": ("pre", "plan-out"),
    "hpreplanjunk": ("pre", "plan-junk"),
    "hpreplanop": ("pre", "plan-op"),
    "hprelogop": ("pre", "log-op"),
    "hlogop": ("tool", "log-op"),
    "hpreplantwin": ("pre", "plan-twin"),
}


def digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "missing"


def build_h(root: Path) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    (root / "h.py").write_text(HPY)
    lab = make_lab(root)
    # a file the controller must never write: stands for anything outside the tree
    py, hpy = json.dumps(sys.executable), json.dumps(str(root / "h.py"))
    text = lab.config.read_text()
    env = json.dumps(
        {
            "REC_LOG": str(lab.log),
            "REPO": str(lab.repo),
            "ROOT": str(root),
            "CFG": str(lab.config),
            "STATEFILE": str(root / "statefile"),
        }
    )
    text = text.replace(
        "  echo: {kind: echo}\n",
        "  echo: {kind: echo}\n"
        f"  hl: {{kind: exec, argv: [{py}, {hpy}, '{{tag}}', '{{mode}}'], env: {env}}}\n",
    )
    lab.config.write_text(text)
    # the operator's file outside the tree (stands for a config, a key list): a copy of the
    # controller's own config
    (root / "operator.yml").write_text(text)
    lab.write("victim", plan("victim", action(1, "rec", "victim-1")))
    for slug, (when, mode) in H_VARIANTS.items():
        mode = mode if when == "tool" else "none-none"  # a pre link: the tool does nothing
        body = "  - id: 1\n    tool: hl\n    why: link\n"
        body += f"    params: {{tag: '{slug}', mode: '{mode}'}}\n"
        lab.write(
            slug,
            plan(slug, body + action(2, "rec", f"{slug}-2")).replace(
                "  - name: rec\n", "  - name: rec\n  - name: hl\n", 1
            ),
        )
    lab.commit("plans")
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    # the state file stands for a file in the state directory: the newest regular file there
    files = sorted(p for p in lab.state.rglob("*") if p.is_file() and p.suffix == ".sqlite")
    statefile = files[0] if files else lab.state / "none"
    (root / "statefile").unlink(missing_ok=True)
    os_link = __import__("os").link
    if statefile.exists():
        os_link(statefile, root / "statefile")
    got["statefile"] = str(statefile)
    for slug in H_VARIANTS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    for slug, (when, mode) in H_VARIANTS.items():
        if when != "pre":
            continue
        what, target = mode.split("-", 1)
        path = lab.repo / "plans" / slug / ("PLAN.yml" if what == "plan" else "EXECUTION_LOG.md")
        dest = {
            "out": root / f"out-{slug}",
            "cfg": lab.config,
            "vic": lab.repo / "plans" / "victim" / "PLAN.yml",
            "junk": root / f"out-{slug}",
            "op": root / "operator.yml",
            "twin": lab.repo / "twin" / "PLAN.yml",
        }[target]
        if what == "plan" and target in ("out", "twin"):
            dest.parent.mkdir(exist_ok=True)
            shutil.copyfile(path, dest)
        elif target in ("out", "junk"):
            dest.write_text("outside the tree\n")
        path.unlink(missing_ok=True)
        os_link(dest, path)
    outside = {
        "cfg": lab.config,
        "op": root / "operator.yml",
        "victim": lab.repo / "plans" / "victim" / "PLAN.yml",
        "twin": lab.repo / "twin" / "PLAN.yml",
        **{f"out-{s}": root / f"out-{s}" for s in H_VARIANTS},
    }
    before = {k: digest(p) for k, p in outside.items()}
    # an out-<slug> file made by the tool mid-run: its bytes at creation are the plan's as
    # approved; keep a copy per tool-made file to compare with afterwards
    runs = [lab.run(check=False) for _ in range(3)]
    got["rcs"] = [(r.returncode, r.stderr[-1200:]) for r in runs]
    got["before"] = before
    got["after"] = {k: digest(p) for k, p in outside.items()}
    got["out_text"] = {
        s: (root / f"out-{s}").read_text(errors="replace") if (root / f"out-{s}").exists() else ""
        for s in H_VARIANTS
    }
    got["calls"] = counts(lab)
    got["rows"] = {k: advkit.brief(v, 5) for k, v in lab.rows().items()}
    got["victim_text"] = (lab.repo / "plans" / "victim" / "PLAN.yml").read_text()
    got["cfg_text"] = lab.config.read_text()
    got["state_magic"] = (root / "statefile").read_bytes()[:16] if statefile.exists() else b""
    got["op_text"] = (root / "operator.yml").read_text()
    return got


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Labs:
    root = tmp_path_factory.mktemp("r128d")
    return build_all(root, {"K": build_k, "M": build_m, "H": build_h}, workers=3)


def status_code(got: dict[str, Any], slug: str) -> tuple[str, str]:
    row = got["rows"].get(f"plans/{slug}") or ()
    return (got["status"][slug], json.dumps(row))


# -- K ids ------------------------------------------------------------------------------------


def test_k_no_traceback(labs: Labs) -> None:
    """Every pass after a kill ended with an exit code, no traceback; the last pass exit 0."""
    got = labs.got["K"]
    assert not got.get("tracebacks"), got.get("tracebacks")
    assert got["first"][-1] == 0 and got["second"][-1] == 0, (got["first"], got["second"])


#: (slug, tag) that must have been called exactly once: a non-idempotent tool whose call
#: ended (or was killed) never runs again without a human's approval.
ONCE = [
    ("kverify", "kverify-1"),
    ("kpre", "kpre-1"),
    ("kpre", "kpre-2"),
    ("kplanpre", "kplanpre-1"),
    ("kfbn", "kfbn-1"),
    ("kfbn", "kfbn-f"),
    ("kfbi", "kfbi-1"),
    ("kskip", "kskip-1"),
    ("kskip", "kskip-3"),
    ("kgate", "kgate-1"),
    ("kgate", "kgate-3"),
    ("kgaten", "kgaten-1"),
    ("kgaten", "kgaten-2"),
    ("kretryin", "kretryin-1"),
    ("kskipin", "kskipin-1"),
    ("kaskin", "kaskin-1"),
    ("kfbin", "kfbin-1"),
    ("kneeds", "kneeds-1"),
    ("kneeds", "kneeds-4"),
    ("kneedsn", "kneedsn-1"),
    ("kneedsn", "kneedsn-2"),
    ("kfbf", "kfbf-1"),
    ("kfbf", "kfbf-f"),
    ("kfbmid", "kfbmid-1"),
    ("kfbmid", "kfbmid-f1"),
    ("kfbmid", "kfbmid-2"),
    ("kgatepre", "kgatepre-1"),
    ("kgatepre", "kgatepre-2"),
    ("kgatepre", "kgatepre-3"),
    ("kaskok", "kaskok-3"),
    ("kresume", "kresume-1"),
    ("kresume", "kresume-4"),
    ("kfbnr", "kfbnr-1"),
    ("kfbnr", "kfbnr-2"),
    ("kfbout", "kfbout-1"),
    ("kfbout", "kfbout-f"),
]


@pytest.mark.parametrize("slug,tag", [pytest.param(s, t, id=t) for s, t in ONCE])
def test_k_called_once(labs: Labs, slug: str, tag: str) -> None:
    """A non-idempotent call (or one after the kill) happened exactly once across the kill and
    the restarts (SPEC §6: finished actions never run again; an action in doubt is re-run
    only if its tool is idempotent)."""
    got = labs.got["K"]
    assert got["calls"].get(tag, 0) == 1, (got["calls"].get(tag), status_code(got, slug))


#: (slug, tag): an idempotent killed step re-run once after the restart (called twice).
RERUN = [
    ("kverify", "kverify-v"),
    ("kpre", "kpre-p"),
    ("kplanpre", "kplanpre-p"),
    ("kfbi", "kfbi-f"),
    ("kskip", "kskip-2"),
    ("kgate", "kgate-2"),
    ("kneeds", "kneeds-2"),
    ("kfbmid", "kfbmid-f2"),
    ("kgatepre", "kgatepre-p"),
    ("kaskok", "kaskok-2"),
    ("kresume", "kresume-3"),
    ("kaskok", "kaskok-1"),
    ("kresume", "kresume-2"),
    ("kfbnr", "kfbnr-f"),
]


@pytest.mark.parametrize("slug,tag", [pytest.param(s, t, id=t) for s, t in RERUN])
def test_k_idempotent_rerun_once(labs: Labs, slug: str, tag: str) -> None:
    """An idempotent step killed mid-call is re-run once after the restart, never more (and
    a failed step that an ask or a resume approval retried: exactly two calls)."""
    got = labs.got["K"]
    assert got["calls"].get(tag, 0) == 2, (got["calls"].get(tag), status_code(got, slug))


COMPLETED = [
    "kverify", "kpre", "kplanpre", "kfbi", "kskip", "kgate", "kneeds", "kfbmid", "kgatepre",
    "kaskok", "kresume", "kfbnr",
]  # fmt: skip


@pytest.mark.parametrize("slug", COMPLETED)
def test_k_completed_after_idempotent_kill(labs: Labs, slug: str) -> None:
    """A plan whose killed step was idempotent (or a check) ends ``completed`` after the
    restart, every action recorded ``succeeded`` (or the skipped one ``skipped``)."""
    got = labs.got["K"]
    assert got["status"][slug] == "completed", status_code(got, slug)
    acts = got["exec"][slug].get("actions") or []
    states = [a.get("status") for a in acts]
    assert states and set(states) <= {"succeeded", "skipped"}, states


IN_DOUBT = ["kfbn", "kgaten", "kretryin", "kskipin", "kaskin", "kfbin", "kneedsn"]

#: status-reason-ignores-fallback-step (fixed, fix129d): a plan that failed in a FALLBACK
#: step (killed mid-call, in doubt; or failing with its own code): ``status`` and ``show``
#: name the step's error, as the outcome commit and the execution block do.
HIDDEN: dict[str, Any] = {}


@pytest.mark.parametrize("slug", [pytest.param(s, marks=HIDDEN.get(s, [])) for s in IN_DOUBT])
def test_k_in_doubt_fails(labs: Labs, slug: str) -> None:
    """A non-idempotent call killed mid-call: the plan is ``failed`` with E_ACTION_IN_DOUBT
    whatever its ``on_failure`` says (SPEC §6), and nothing after it ran."""
    got = labs.got["K"]
    st, row = status_code(got, slug)
    assert st == "failed" and "E_ACTION_IN_DOUBT" in row, (st, row)


#: tags after the in-doubt step that must never have run.
NEVER = [
    "kfbn-2", "kgaten-3", "kretryin-2", "kskipin-2", "kaskin-2", "kfbin-2", "kfbin-f",
    "kneedsn-4", "kfbf-2", "kfbout-2",
]  # fmt: skip


@pytest.mark.parametrize("tag", NEVER)
def test_k_nothing_after_doubt(labs: Labs, tag: str) -> None:
    """Nothing after an in-doubt step ran (no skip, fallback or retry over a doubt)."""
    got = labs.got["K"]
    assert got["calls"].get(tag, 0) == 0, got["calls"]


def test_k_parallel_sibling_at_most_twice(labs: Labs) -> None:
    """The idempotent sibling of a killed parallel action ran at most twice."""
    got = labs.got["K"]
    for tag in ("kneeds-3", "kneedsn-3"):
        assert 1 <= got["calls"].get(tag, 0) <= 2, got["calls"]


FAILED = [*IN_DOUBT, "kfbf", "kfbout"]


@pytest.mark.parametrize("slug", [pytest.param(s, marks=HIDDEN.get(s, [])) for s in FAILED])
def test_k_status_reason_names_outcome_code(labs: Labs, slug: str) -> None:
    """``plangate status``'s reason for a failed plan names the code its outcome commit
    (``plangate: fail``) names: what ended the run, as git history says."""
    got = labs.got["K"]
    code = got["commit_codes"][slug]
    row: Any = got["rows"].get(f"plans/{slug}") or ()
    assert code.startswith("E_"), (code, row)
    assert code in str(row[3]), (code, row)


@pytest.mark.parametrize(
    "slug",
    [pytest.param(s, marks=HIDDEN.get(s, [])) for s in ("kfbn", "kfbnr", "kfbin", "kretryin")],
)
def test_k_show_names_doubt_before_resume(labs: Labs, slug: str) -> None:
    """Before a resume is approved, ``plangate show`` (what a human reads to "check, then
    approve a resume", docs/execution.md) says which step is in doubt: ``in_doubt`` /
    ``E_ACTION_IN_DOUBT``."""
    text = labs.got["K"]["mid_show"][slug]
    assert "E_ACTION_IN_DOUBT" in text or "in_doubt" in text, text[:1500]


@pytest.mark.parametrize("slug", list(K_PLANS))
def test_k_log_matches_record(labs: Labs, slug: str) -> None:
    """EXECUTION_LOG.md names the plan's final status and each action of the record."""
    got = labs.got["K"]
    log = got["logs"][slug]
    assert log, slug
    assert got["status"][slug] in log, (got["status"][slug], log[:600])


def test_k_audit_clean(labs: Labs) -> None:
    """``audit --config`` after the kills: every plan's run is listed once, valid, and no
    finding blames the controller."""
    _code, report = labs.got["K"]["audit"]
    runs = [e["plan"] for e in report.get("executions", []) if e.get("approval_valid")]
    assert sorted(set(runs)) == sorted(f"plans/{s}" for s in K_PLANS), runs
    bad = [f for f in report.get("findings", []) if "plangate@localhost" in json.dumps(f)]
    assert not bad, bad


@pytest.mark.parametrize("slug", list(NONCE))
def test_k_nonce_action1_once(labs: Labs, slug: str) -> None:
    """The non-idempotent action 1 (a fresh nonce each call) ran once across kills, gates,
    asks and resumes."""
    assert len(labs.got["K"]["nonces"].get(f"{slug}-1", [])) == 1, labs.got["K"]["nonces"]


@pytest.mark.parametrize(
    "slug,tag", [pytest.param(s, t, id=t) for s, tags in NONCE.items() for t in tags]
)
def test_k_nonce_param_from_earlier_result(labs: Labs, slug: str, tag: str) -> None:
    """Every call of a later step (first call, re-run after the kill, retry after an ask or a
    resume) was given exactly the nonce action 1 returned (SPEC §3, §6: parameters are filled
    from earlier results; a finished action's outputs come from the journal)."""
    got = labs.got["K"]["nonces"]
    first = got.get(f"{slug}-1", [None])[0]
    given = got.get(tag, [])
    assert given and first and all(g == first for g in given), (first, given)


def test_k_nonce_completed(labs: Labs) -> None:
    """Each nonce plan ended ``completed`` with action 1's recorded output its real nonce."""
    got = labs.got["K"]
    for slug in NONCE:
        assert got["status"][slug] == "completed", status_code(got, slug)
        acts = got["exec"][slug].get("actions") or []
        out = (acts[0].get("outputs") or {}).get("nonce") if acts else None
        assert out == got["nonces"][f"{slug}-1"][0], (slug, out)


# -- M ids ------------------------------------------------------------------------------------


def test_m_setup(labs: Labs) -> None:
    """Before the moves: the failed plans failed, the gated ones paused, the others done."""
    got = labs.got["M"]
    for s in M_FAILED:
        assert got["before"][s] == "failed", got["before"]
    for s in M_GATED:
        assert got["before"][s] == "awaiting_approval", got["before"]
    for s in M_DONE:
        assert got["before"][s] == "completed", got["before"]
    for s in M_ASK:
        assert got["before"][s] == "awaiting_approval", got["before"]


@pytest.mark.parametrize("slug", M_FAILED + M_GATED + M_DONE + M_ASK)
def test_m_first_action_once(labs: Labs, slug: str) -> None:
    """Action 1 (succeeded before the move/copy) never runs again, wherever the version went
    (SPEC §15: a copy, move or rename of a plan that ran does not run again)."""
    got = labs.got["M"]
    assert got["calls"].get(f"{slug}-1", 0) == 1, (got["calls"], got["rows"])


@pytest.mark.parametrize("slug", M_FAILED + M_ASK)
def test_m_failed_step_at_most_resumed_once(labs: Labs, slug: str) -> None:
    """The failed action 2 ran at most twice: the failed try and at most ONE resume, however
    many copies of the version were approved."""
    got = labs.got["M"]
    assert got["calls"].get(f"{slug}-2", 0) <= 2, (got["calls"], got["rows"])


@pytest.mark.parametrize("slug", M_GATED)
def test_m_gated_step_at_most_once(labs: Labs, slug: str) -> None:
    """The gated action 2 ran at most once, whether its gate was approved at a moved path, or
    at both the original and a copy."""
    got = labs.got["M"]
    assert got["calls"].get(f"{slug}-2", 0) <= 1, (got["calls"], got["rows"])


@pytest.mark.parametrize("slug", ["mfcopy2", "mfboth2", "mgboth2", "maskboth2"])
def test_m_copy_refused(labs: Labs, slug: str) -> None:
    """A copy of a started version approved: refused E_ALREADY_EXECUTED (SPEC §15)."""
    got = labs.got["M"]
    row = json.dumps(got["rows"].get(f"plans/{slug}"))
    assert "E_ALREADY_EXECUTED" in row, row


@pytest.mark.parametrize("slug", M_ASK)
def test_m_ask_third_at_most_once(labs: Labs, slug: str) -> None:
    """After the ask, action 3 ran at most once (moved or copied, both approved)."""
    got = labs.got["M"]
    assert got["calls"].get(f"{slug}-3", 0) <= 1, (got["calls"], got["rows"])


@pytest.mark.parametrize("slug", ["mfmove2", "mgmove2", "maskmove2"])
def test_m_moved_paused_run_coded(labs: Labs, slug: str) -> None:
    """A paused or failed run moved to a new path and approved there: the controller says
    why in a code (E_ALREADY_EXECUTED: the move of a started version does not run again)."""
    row = json.dumps(labs.got["M"]["rows"].get(f"plans/{slug}"))
    assert "E_ALREADY_EXECUTED" in row, row


def test_m_no_traceback(labs: Labs) -> None:
    got = labs.got["M"]
    assert "Traceback" not in got["rc"][2], got["rc"]


def test_m_audit_no_double_run(labs: Labs) -> None:
    """``audit --config``: no frozen hash has two valid first starts (a resume or a gate is
    the same run going on)."""
    _, report = labs.got["M"]["audit"]
    seen: dict[str, int] = {}
    for e in report.get("executions", []):
        if e.get("approval_valid") and e.get("approval_kind") == "approve":
            h = e.get("hash") or e.get("plan_hash") or e.get("plan")
            seen[h] = seen.get(h, 0) + 1
    assert all(v == 1 for v in seen.values()), seen


# -- H ids ------------------------------------------------------------------------------------


#: (variant, outside file key): the file outside the tree (or another plan's) that a link in
#: the working tree points the variant's PLAN.yml or EXECUTION_LOG.md at.
H_OUTSIDE = [
    ("hlogcfg", "cfg"),
    ("hlogvic", "victim"),
    ("hprelogcfg", "cfg"),
    ("hprelogvic", "victim"),
    ("hprelogout", "out-hprelogout"),
    ("hpreplanout", "out-hpreplanout"),
    ("hpreplanjunk", "out-hpreplanjunk"),
    ("hpreplanop", "op"),
    ("hprelogop", "op"),
    ("hlogop", "op"),
    ("hpreplantwin", "twin"),
]
H_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(
    "slug,key", [pytest.param(s, k, id=s, marks=H_BROKEN.get(s, [])) for s, k in H_OUTSIDE]
)
def test_h_link_target_untouched(labs: Labs, slug: str, key: str) -> None:
    """A hard link in the working tree (made by the agent before the pass, or by a tool
    mid-run) from the plan's PLAN.yml or EXECUTION_LOG.md to a file outside the tree or to
    another plan: the controller never writes through it (docs/threat-model.md, actors:
    whoever writes the working tree must not reach a file outside it)."""
    got = labs.got["H"]
    assert got["after"][key] == got["before"][key], (key, got["out_text"].get(slug, "")[:800])


@pytest.mark.parametrize("slug", ["hlogout", "hplanout"])
def test_h_tool_made_link_not_written(labs: Labs, slug: str) -> None:
    """A tool that links its plan's file to a new outside file mid-run: the outside file holds
    what the tool put there (no outcome, no log written through the link)."""
    text = labs.got["H"]["out_text"][slug]
    assert "execution:" not in text and "# Execution log" not in text, text[:800]


def test_h_state_intact(labs: Labs) -> None:
    """A log linked to the state directory's index (through a link outside the tree): the
    index is still a SQLite file (nothing written into it through the link)."""
    assert labs.got["H"]["state_magic"].startswith(b"SQLite format 3"), labs.got["H"]["state_magic"]


@pytest.mark.parametrize("slug", list(H_VARIANTS))
def test_h_each_action_at_most_once(labs: Labs, slug: str) -> None:
    """Whatever the links did, each action ran at most once."""
    calls = labs.got["H"]["calls"]
    assert calls.get(slug, 0) <= 1 and calls.get(f"{slug}-2", 0) <= 1, calls


def test_h_passes_clean(labs: Labs) -> None:
    """Every pass ended 0 with no traceback."""
    for rc, err in labs.got["H"]["rcs"]:
        assert rc == 0 and "Traceback" not in err, err[-800:]
