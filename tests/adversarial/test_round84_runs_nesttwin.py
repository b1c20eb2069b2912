"""Round 84 (runs): round 83's gate-twin release (r83gatetwin) at a NESTED plan's gate and
across a SIGKILL: a twin of the pinned nested plan's folder arriving while the parent waits
at the gate before its nested action, and a twin of a plan's folder (or of its nested plan's
folder) arriving after a SIGKILL left an action in doubt, then going.

SPEC §15 (at most once, exactly as approved); docs/plan-format.md, "Nested plans": "A pinned
folder holding two plan files ... is ``E_PLAN_AMBIGUOUS``, and so is one beside a twin folder
holding a plan at any level under the plans folder"; docs/approvals.md, "An approval made while
the plan is held": a hold keeps what it found and its release takes it back; docs/execution.md
(journal after a crash): a non-idempotent tool's start with no end -> ``in_doubt``, the plan
``failed`` with ``E_ACTION_IN_DOUBT``, never called again.

Lab (one, local mode). Tools ``rec`` and ``kil`` (exec: does its effect ``kil:<tag>``, notes
``DONE-<tag>``, then waits for a ``GO`` that never comes). Plans (the agent's), each action 1
``rec <vid>``, action 2 gated (``requires_approval: true``):
- ``ct`` (control): action 2 ``rec ct2``;
- ``nc`` (control): action 2 the nested plan ``plans/ncn`` (draft, ``rec ncn2``), pinned;
- ``nw``: as ``nc`` with ``plans/nwn``; while paused the agent commits the twin
  ``plans/NWN/PLAN.yml`` (``rec nwn-twin``), Alice approves the gate while it stands, the agent
  removes it, Alice approves again;
- ``nr``: as ``nw`` (``plans/nrn``, twin ``plans/NRN``), nothing set while the twin stands;
- ``kr``: action 2 ``kil kr``, action 3 ``rec kr3``; at the gate the twin ``plans/KR/PLAN.yml``
  (approved, ``rec kr-twin``) comes, Alice approves while held, it goes; Alice approves again;
  a ``run --once`` is SIGKILLed (process group) once ``kil`` did its effect; the agent commits
  the twin again; a pass; the agent removes it; a pass;
- ``kn``: action 2 the nested plan ``plans/knn`` (``kil knn``, then ``rec knn3``); Alice
  approves the gate; a ``run --once`` is SIGKILLed once ``kil`` did its effect; the agent
  commits the nested folder's twin ``plans/KNN/PLAN.yml``; a pass; removes it; a pass.

- ``kx`` (control of ``kn``): as ``kn`` (``plans/kxn``), no twin after the kill;
- ``kt``: no gate; action 1 ``kil kt``, action 2 the nested plan ``plans/ktn`` (``rec ktn2``);
  Alice approves; a ``run --once`` is SIGKILLed once ``kil`` did its effect; the agent commits
  the nested folder's twin ``plans/KTN/PLAN.yml``; a pass; removes it; two passes.
Then Alice approves a resume of ``kn``, ``kx``, ``kt``; two passes; a fresh-clone audit.

Checks: ``calls`` (each pinned action once, no twin action ever, nothing after a kill's doubt,
before the resume), ``paused`` (the lab is live), ``end`` (``ct``, ``nc``, ``nw``, ``nr``
completed; the killed ones ``failed``; never ``E_ALREADY_EXECUTED``), ``doubt`` (HEAD's
``execution:`` block of a killed plan says ``failed`` naming ``E_ACTION_IN_DOUBT``), ``tree``
(nothing of the plan's left modified or untracked in the shared checkout), ``stopped`` (the
tool process the kill left waiting no longer runs), ``resume`` (Alice's one resume: the
in-doubt action again, as documented, the rest once, completed), ``refused`` (an approval made
while held refused naming ``E_PLAN_AMBIGUOUS``, by alice), ``audit`` (fresh clone: a valid run
per plan, ``ok``, no twin path).

Seen (round 84): ``kn`` and ``kt`` BREAK (class ``nestkill``, 8 ids: ``doubt``, ``tree``,
``stopped``, ``resume`` of each); every other id held. A SIGKILL of the pass once a
non-idempotent tool did its effect, then a twin of the NESTED plan's folder committed by the
agent before the next pass (``plans/KNN/PLAN.yml`` beside the pinned ``plans/knn``): that pass
does no crash recovery at all; it commits ``plangate: fail plans/kn`` with "E_PLAN_AMBIGUOUS:
... nested plan plans/knn: plans/KNN/PLAN.yml is the plan file of plans/knn on a
case-insensitive ... checkout", whose only change is ``-  status: executing`` /
``+  status: failed``. So, after the twin went and two more passes, git keeps (``git show
HEAD:plans/kn/PLAN.yml``) ``execution: {status: awaiting_approval, finished_at: null}`` with
action 2 ``status: pending`` and the gate's preview, while ``kil:knn`` HAS run (``ran.log``);
``kt``'s PLAN.yml has no ``execution:`` block at all though its action 1 ran. ``git status
--porcelain`` shows `` M plans/kn/EXECUTION_LOG.md`` (the killed pass's "executing" log) and
``?? plans/kt/EXECUTION_LOG.md``, left for a person's ``git commit -a``. The tool process the
kill left waiting still runs (``/proc/<pid>``, state ``S``) through three passes. Alice's next
resume approval is spent recording the doubt (``plangate: start``, then ``plangate: fail``
"E_ACTION_IN_DOUBT: action 2/1 (kil) started ... its tool process 10086 was still running and
was stopped"): ``knn3``/``ktn2`` never run, a second resume is needed. The controls show what
should happen: the twin of the plan's OWN folder (``kr``) holds the plan and the in-doubt end
is recorded (``failed``, action 2 ``in_doubt``, ``E_ACTION_IN_DOUBT``), and without a twin
(``kx``) the next pass records it and one resume completes. docs/execution.md (journal after
a crash): "start, no end (the process died during it) | first, the tool process it left
running (if any) is stopped (below); then tool ``idempotent: true`` -> run again; otherwise an
end ``in_doubt`` is written and the plan ends ``failed`` with E_ACTION_IN_DOUBT". The
fresh-clone audit says ``ok`` over the false record.

Fixed (2026-12-01, r84nestkill): ``Engine.run`` consults the run's journal before the plan's
validity, one path for every reason the plan is invalid on the next pass: the tool process
the kill left running is stopped, each open start ends ``in_doubt`` (an idempotent tool's
``failed``), the plan fails E_ACTION_IN_DOUBT naming the validation error too, and the
outcome commit carries its ``execution:`` block and log (``PlanRun.recover_invalid``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, until, valid_runs
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

KIL = r"""
import json, os, sys, time
tag = sys.argv[1]
d = os.environ["KIL_DIR"]
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["kil:" + tag], "stdin": ""}) + "\n")
second = os.path.exists(os.path.join(d, "DONE-" + tag))
open(os.path.join(d, "PID-" + tag), "w").write(str(os.getpid()))
open(os.path.join(d, "DONE-" + tag), "w").write("1")
for _ in range(0 if second else 600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"ok": true}')
"""

VIDS = ["ct", "nc", "nw", "nr", "kr", "kn", "kx", "kt"]
NESTED = {"nc": "ncn", "nw": "nwn", "nr": "nrn", "kn": "knn", "kx": "kxn", "kt": "ktn"}
KILLN = ("kn", "kx")
TAGS = [
    "ct2", "ncn2", "nwn2", "nrn2", "nwn-twin", "nrn-twin", "kil:kr", "kil:kr-twin", "kr3",
    "kr-twin", "kil:knn", "knn3", "knn-twin", "kil:kxn", "kxn3", "kil:kt", "ktn2", "ktn-twin",
]  # fmt: skip
TWINS = {"nw": "plans/NWN/PLAN.yml", "nr": "plans/NRN/PLAN.yml", "kr": "plans/KR/PLAN.yml"}


def _nested(n: str, kil: bool = False, tag: str = "") -> str:
    first = (
        f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{n}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "after"\n    params: {{tag: "{n}3"}}\n'
        if kil
        else f'  - id: 1\n    tool: rec\n    why: "nested"\n    params: {{tag: "{tag or n + "2"}"}}\n'  # noqa: E501
    )
    tools = "  - name: rec\n" + ("  - name: kil\n" if kil else "")
    return (
        f'plan:\n  name: "{n}"\n  task: "nested {n}"\n  status: draft\n'
        f"available_tools:\n{tools}actions:\n{first}"
    )


def _parent(v: str, pin: str = "", tag2: str = "") -> str:
    if v == "kt":  # action 1 the killed tool, action 2 the nested plan, no gate
        return (
            f'plan:\n  name: "kt"\n  task: "variant kt"\n  status: pending_approval\n'
            "available_tools:\n  - name: rec\n  - name: kil\nactions:\n"
            '  - id: 1\n    tool: kil\n    why: "once"\n    params: {t: "kt"}\n'
            f"  - id: 2\n    plan: {{path: plans/ktn, hash: {json.dumps(pin)}}}\n"
            '    why: "nested"\n'
        )
    if v in NESTED:
        two = (
            f"  - id: 2\n    plan: {{path: plans/{NESTED[v]}, hash: {json.dumps(pin)}}}\n"
            '    why: "nested"\n    requires_approval: true\n'
        )
    elif v == "kr":
        two = (
            '  - id: 2\n    tool: kil\n    why: "once"\n    requires_approval: true\n'
            f'    params: {{t: "{tag2 or "kr"}"}}\n'
            f'  - id: 3\n    tool: rec\n    why: "after"\n    params: {{tag: "{v}3"}}\n'
        )
    else:
        two = (
            '  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
            f'    params: {{tag: "{v}2"}}\n'
        )
    text = plan_text(v) + two
    return text.replace("  - name: rec\n", "  - name: rec\n  - name: kil\n", 1)


def _alive(pidfile: Path) -> bool:
    """The killed pass's tool process still runs (a zombie left to a non-reaping parent is
    not running)."""
    try:
        stat = Path(f"/proc/{int(pidfile.read_text())}/stat").read_text()
    except (OSError, ValueError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "kil.py").write_text(KIL)
    kargv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    kenv = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    tools = f"kil: {{kind: exec, argv: {kargv}, env: {kenv}}}\n"
    lab = Lab(root / "lab", tools=tools)
    for v, n in NESTED.items():
        lab.write(n, _nested(n, kil=v in KILLN))
    lab.commit("agent: nested plans", AGENT)
    pins = {}
    for v, n in NESTED.items():
        out = lab.cli("hash", f"plans/{n}", cwd=lab.repo)
        pins[v] = out.stdout.strip().split()[0] if out.stdout.strip() else ""
    for v in VIDS:
        lab.write(v, _parent(v, pins.get(v, "")))
    lab.commit("agent plans", AGENT)
    lab.run()
    seen: dict[str, Any] = {"pins": pins}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)

    def approve(vids: list[str], msg: str) -> None:
        for v in vids:
            lab.set_status(v, "approved")
        lab.git("add", *[f"plans/{v}/PLAN.yml" for v in vids])
        lab.git("commit", "-q", "-m", msg, who=ALICE)

    def twin(rel: str, text: str, add: bool) -> None:
        path = lab.repo / rel
        if add:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            lab.git("--literal-pathspecs", "add", rel)
        else:
            lab.git("--literal-pathspecs", "rm", "-q", "--cached", rel)
            path.unlink()

    def twins(add: bool, which: dict[str, str]) -> None:
        for v, rel in which.items():
            text = (
                _parent(v, tag2="kr-twin").replace("pending_approval", "approved")
                if v == "kr"
                else _nested(NESTED[v], tag=f"{NESTED[v]}-twin")
            )
            twin(rel, text, add)
        lab.git("commit", "-q", "-m", f"agent: twins {'in' if add else 'out'}", who=AGENT)

    def killed(vid: str, tag: str) -> None:
        p = subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        seen[f"{vid}:marked"] = until((kd / f"DONE-{tag}").exists, 80)
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)

    def rows(key: str) -> None:
        seen[key] = {k: json.dumps(r)[:900] for k, r in lab.status().items()}

    first = [v for v in VIDS if v != "kt"]
    approve(first, "approve all")
    lab.run()
    rows("paused")
    twins(True, TWINS)
    lab.run()
    rows("held")
    approve(["ct", "nc", "nw", "kr"], "approve the gates")
    lab.run()
    rows("gated")
    seen["gated_files"] = {v: lab.plan(v).get("approval") for v in VIDS}
    twins(False, TWINS)
    lab.run()
    rows("released")
    seen["released_files"] = {v: lab.plan(v).get("approval") for v in VIDS}
    again = [v for v in ("nw", "nr") if '"completed"' not in seen["released"][f"plans/{v}"]]
    if again:
        approve(again, "approve again")
        lab.run()
    # kr: approve again (its held approval was refused), SIGKILL once kil did its effect
    if '"awaiting_approval"' in json.dumps(lab.status().get("plans/kr", {})):
        approve(["kr"], "approve kr again")
    killed("kr", "kr")
    for vid, tag in (("kn", "knn"), ("kx", "kxn"), ("kt", "kt")):
        approve([vid], f"approve {vid}")
        killed(vid, tag)
    seen["killed_tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    late = {**{"kr": TWINS["kr"]}, "kn": "plans/KNN/PLAN.yml", "kt": "plans/KTN/PLAN.yml"}
    for v, rel in late.items():
        text = (
            _parent(v, tag2="kr-twin").replace("pending_approval", "approved")
            if v == "kr"
            else _nested(NESTED[v], tag=f"{NESTED[v]}-twin")
        )
        twin(rel, text, True)
    lab.git("commit", "-q", "-m", "agent: twins after the kill", who=AGENT)
    seen["after_kill"] = lab.run(check=False).stderr[-1500:]
    rows("kheld")
    seen["kheld_files"] = {v: lab.plan(v) for v in ("kr", "kn", "kx", "kt")}
    seen["kheld_tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    for rel in late.values():
        twin(rel, "", False)
    lab.git("commit", "-q", "-m", "agent: twins out after the kill", who=AGENT)
    lab.run()
    lab.run()
    rows("end")
    seen["end_files"] = {v: lab.plan(v) for v in VIDS}
    seen["end_tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["alive"] = {tag: _alive(kd / f"PID-{tag}") for tag in ("kr", "knn", "kxn", "kt")}
    seen["calls_k"] = {t: len(lab.calls(t)) for t in TAGS}
    # a resume Alice approves, once the twins are gone: the rest of each run once
    approve(["kn", "kx", "kt"], "resume kn kx kt")
    lab.run()
    lab.run()
    rows("resumed")
    seen["calls"] = {t: len(lab.calls(t)) for t in TAGS}
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-nesttwin", _build)


BROKEN: dict[str, Any] = {}

ONCE = {
    "ct": {"ct2": 1},
    "nc": {"ncn2": 1},
    "nw": {"nwn2": 1, "nwn-twin": 0},
    "nr": {"nrn2": 1, "nrn-twin": 0},
    "kr": {"kil:kr": 1, "kil:kr-twin": 0, "kr3": 0, "kr-twin": 0},
    "kn": {"kil:knn": 1, "knn3": 0, "knn-twin": 0},
    "kx": {"kil:kxn": 1, "kxn3": 0},
    "kt": {"kil:kt": 1, "ktn2": 0, "ktn-twin": 0},
}
KILLED = ["kr", "kn", "kx", "kt"]
RESUMED = {"kn": ("kil:knn", "knn3"), "kx": ("kil:kxn", "kxn3"), "kt": ("kil:kt", "ktn2")}


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_calls(lab: Lab, vid: str) -> None:
    """Each pinned action once; a twin's action never; nothing after an action in doubt
    (before any resume)."""
    seen = _seen(lab)
    calls = seen["calls_k"]
    got = {k: calls[k] for k in ONCE[vid]}
    assert got == ONCE[vid], (got, seen["end"].get(f"plans/{vid}"))


@pytest.mark.parametrize("vid", VIDS)
def test_paused(lab: Lab, vid: str) -> None:
    """The lab is live: every gated plan reached its gate after action 1."""
    if vid == "kt":
        assert _seen(lab)["kt:marked"], "kt's kil never ran"
        return
    row = _seen(lab)["paused"][f"plans/{vid}"]
    assert '"awaiting_approval"' in row, row


@pytest.mark.parametrize("vid", VIDS)
def test_end(lab: Lab, vid: str) -> None:
    """The end (twins gone, two passes): completed, or ``failed`` after the kill; never a run
    taken for a copy (``E_ALREADY_EXECUTED``)."""
    row = _seen(lab)["end"][f"plans/{vid}"]
    assert "E_ALREADY_EXECUTED" not in row, row
    if vid in KILLED:
        assert '"failed"' in row, row
    else:
        assert '"completed"' in row, row


DOUBT_BROKEN: dict[str, Any] = {}  # nestkill fixed (r84nestkill)


@pytest.mark.parametrize("vid", cases(KILLED, KILLED, DOUBT_BROKEN))
def test_doubt(lab: Lab, vid: str) -> None:
    """What git keeps after the kill and the passes that followed is true: PLAN.yml's
    ``execution:`` says ``failed`` with ``E_ACTION_IN_DOUBT`` (docs/execution.md: "an end
    ``in_doubt`` is written and the plan ends ``failed`` with E_ACTION_IN_DOUBT"), not a run
    still paused at its gate with the called action ``pending``."""
    data = _seen(lab)["end_files"][vid]
    block = data.get("execution") or {}
    assert data["plan"]["status"] == "failed", data["plan"]
    assert block.get("status") == "failed", json.dumps(block, default=str)[:1500]
    assert "E_ACTION_IN_DOUBT" in json.dumps(block, default=str), json.dumps(block, default=str)[
        :1500
    ]


@pytest.mark.parametrize("vid", cases(KILLED, KILLED, DOUBT_BROKEN))
def test_tree(lab: Lab, vid: str) -> None:
    """No write of the controller's is left uncommitted in the shared working tree once the
    next passes recorded the run (a person's ``git commit -a`` would commit it as hers)."""
    tree = _seen(lab)["end_tree"]
    assert f"plans/{vid}/" not in tree, tree


@pytest.mark.parametrize("vid", cases(KILLED, KILLED, DOUBT_BROKEN))
def test_stopped(lab: Lab, vid: str) -> None:
    """The tool process the killed pass left waiting no longer runs."""
    tag = {"kr": "kr", "kn": "knn", "kx": "kxn", "kt": "kt"}[vid]
    assert _seen(lab)["alive"][tag] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", cases(list(RESUMED), list(RESUMED), DOUBT_BROKEN))
def test_resume(lab: Lab, vid: str) -> None:
    """A resume Alice approves once the twin went: the in-doubt action again (documented: a
    resume runs what was not recorded as finished), the rest once, completed, no twin action."""
    seen = _seen(lab)
    kil, after = RESUMED[vid]
    row = seen["resumed"][f"plans/{vid}"]
    assert (seen["calls"][kil], seen["calls"][after]) == (2, 1), (seen["calls"], row)
    assert seen["calls"].get(f"{after[:-1]}-twin", 0) == 0
    assert '"completed"' in row, row


@pytest.mark.parametrize("vid", ["nw", "kr"])
def test_refused(lab: Lab, vid: str) -> None:
    """An approval made while held is refused ``E_PLAN_AMBIGUOUS`` by its own author (alice),
    never by the agent."""
    seen = _seen(lab)
    for key in ("gated_files", "released_files"):
        got = seen[key][vid] or {}
        if got.get("status") == "refused":
            assert got.get("by") == "alice@example.com", got
            assert "E_PLAN_AMBIGUOUS" in json.dumps(got), got


@pytest.mark.parametrize("vid", VIDS)
def test_audit(lab: Lab, vid: str) -> None:
    """A fresh clone's audit (after the resumes): a valid run of each plan, no twin path,
    ``ok``."""
    seen = _seen(lab)
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    report = seen["report"]
    paths = {e.get("plan") for e in report.get("executions", [])}
    assert not {p for p in paths if p and p.lower() != p and p.startswith("plans/")}, paths
    assert valid_runs(report, vid), report.get("executions")
    assert report.get("ok") is True, report.get("findings")
