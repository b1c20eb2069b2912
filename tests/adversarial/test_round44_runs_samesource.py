"""Round 44, a started plan's folder removed and a NEW plan put at the same path as a plan
*source* (``PLAN.json``, ``PLAN.md``) before the run's outcome is committed: a variant of
round 42 (``test_round42_runs_samepath.py``: there the new plan was a ``PLAN.yml``).

Local lab: each variant's plan calls ``slow`` (an exec tool that logs its call and sleeps
1.5 s); Alice approves it alone, ``plangate run --once`` runs in the background, and while the
tool sleeps the agent commits ``git rm -r plans/<v>`` and then a different plan at the same
folder; the background pass ends, two more passes follow.

- ``json-source``: the new plan is ``PLAN.json`` (the plan as JSON, docs/formats.md "In a plan
  folder: the daemon converts").
- ``md-source``: the new plan is ``PLAN.md`` (a reply with one fenced ``yaml`` block).
- ``yaml-ext`` (control): the new plan is ``PLAN.yaml``.
- ``draft`` (control): the new plan is a ``PLAN.yml`` with ``status: draft``.
- ``log-link`` / ``log-dir``: the new plan is a ``PLAN.yaml`` and the agent's commit also holds
  ``EXECUTION_LOG.md`` as a symlink to ``../victim/PLAN.yml`` (a pending plan) or as a
  folder: the outcome commit writes the old run's log into that folder (round 42). Also
  asserted: ``victim``'s PLAN.yml (working tree and HEAD) is untouched (held).

Asserted: the old tool ran once; the fresh audit reads the old start ``-> complete``; and the
branch does not hold the OLD plan written back at the path (HEAD's ``plans/<v>/PLAN.yml``, if
any, is not the plan that ran): the new plan is judged on its own.

Broke (round 44): ``json-source`` and ``md-source``: the outcome commit ``plangate: complete
plans/<v>`` writes the old plan's PLAN.yml (``completed``) back into the folder beside the
agent's new source; a source beside a PLAN.yml is "left alone (notes, not plans)", so the new
plan is never converted, frozen or shown (``status`` lists only the old, completed plan).
Round 42's rule ("the branch holds another plan there": record the outcome with
``Run-Start:`` without writing the plan file) looks only at PLAN.yml/PLAN.yaml; it should
count a plan source that would convert the same way.

Broke (round 44): ``log-dir``: the controller commits ``plangate: complete plans/log-dir``
with ``Run-Start: <start>`` and its trailers but changes no file (it cannot write the log
where a folder is), takes the run as done (``status`` shows only the new plan, which it
freezes), while ``plangate audit`` reads ``plans/log-dir: start ... -> running`` for good: an
empty commit is not in the folder's history, so history no longer proves what the controller
did. It should write the log where the audit looks (replace the agent's folder, as it
replaces the ``log-link`` symlink), or the audit should read a ``Run-Start:`` commit that
changes nothing. ``log-link`` held (the link replaced by a regular file, the victim intact).

Fixed (round 44): ``json-source`` / ``md-source``: "the branch holds another plan at the
run's path" counts every form a plan takes in a folder: a PLAN.yml/PLAN.yaml of another
version (round 42) or a plan source (``PLAN.json``, ``PLAN.toon``, ``PLAN.md``:
``plans.SOURCE_FILES``) in a folder with no plan file, as the source converter finds them.
The outcome is then recorded with ``Run-Start:`` without writing the plan file, and the
source is converted and judged on its own.

Fixed (round 44): ``log-dir``: the audit reads every first-parent commit naming a
``Run-Start:`` whether or not it changes a file under the plans folder (it is found by its
message, then judged as ever: the controller's identity, the open run it names), and the
history index gives such a commit its plan's controller event from its trailers. The
controller still never writes a file over a folder, FIFO or device (round 12), so the
commit may change nothing; reading it by its message keeps audit == controller for every
shape at the log's name (a file, even one with the same bytes, a folder, a link).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, load_yaml, plan_text
from test_round2_execution_kit import shared

SLOW = (
    "import json, os, sys, time\n"
    "row = json.dumps({'argv': [sys.argv[1]], 'stdin': ''})\n"
    "open(os.environ['REC_LOG'], 'a').write(row + '\\n')\n"
    "time.sleep(1.5)\n"
    "print('{}')\n"
)
VARIANTS = ["json-source", "md-source", "yaml-ext", "draft", "log-link", "log-dir"]
#: variant -> its strict xfail marker (none left: round 44's breaks are fixed)
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _slow_plan(tag: str) -> str:
    return (
        f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: slow}}]\n"
        f"actions:\n  - id: 1\n    tool: slow\n    why: w\n    params: {{tag: {tag}}}\n"
    )


def _clear(lab: Lab, vid: str) -> None:
    """The engine's checkpoint may have written the log into the working tree meanwhile."""
    log = lab.repo / "plans" / vid / "EXECUTION_LOG.md"
    if log.is_symlink() or log.is_file():
        log.unlink()


def _new_plan(lab: Lab, vid: str) -> None:
    new = plan_text(f"{vid}-v2")
    if vid == "json-source":
        lab.write(vid, json.dumps(load_yaml(new)), filename="PLAN.json")
    elif vid == "md-source":
        lab.write(vid, f"Here is the plan.\n\n```yaml\n{new}```\n", filename="PLAN.md")
    elif vid == "yaml-ext":
        lab.write(vid, new, filename="PLAN.yaml")
    elif vid == "log-link":
        lab.write(vid, new, filename="PLAN.yaml")
        _clear(lab, vid)
        os.symlink("../victim/PLAN.yml", lab.repo / "plans" / vid / "EXECUTION_LOG.md")
    elif vid == "log-dir":
        lab.write(vid, new, filename="PLAN.yaml")
        _clear(lab, vid)
        lab.write(vid, "keep\n", filename="EXECUTION_LOG.md/note.txt")
    else:
        lab.write(vid, plan_text(f"{vid}-v2", status="draft"))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "slow.py").write_text(SLOW)
    argv = json.dumps([sys.executable, str(root / "slow.py"), "{tag}"])
    lab.write_config(
        tools=f"slow: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for vid in VARIANTS:
        lab.write(vid, _slow_plan(vid))
    lab.write("victim", plan_text("victim"))
    lab.commit("plans")
    lab.run()
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    plangate = str(Path(sys.executable).parent / "plangate")
    for vid in VARIANTS:
        lab.approve(vid, ALICE)
        proc = subprocess.Popen(
            [plangate, "run", "--once", "--config", str(lab.config)],
            env=env,
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not lab.calls(vid) and time.monotonic() < deadline:
            time.sleep(0.05)
        lab.git("rm", "-q", "-r", "-f", f"plans/{vid}")
        lab.commit(f"remove {vid}", AGENT)
        _new_plan(lab, vid)
        lab.commit(f"a new plan at plans/{vid}", AGENT)
        proc.wait(timeout=60)
    lab.run()
    lab.run()
    lab.audit_out = lab.cli("audit", cwd=lab.repo).stdout  # type: ignore[attr-defined]
    lab.victim = (lab.repo / "plans/victim/PLAN.yml").read_text()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-samesource", _build)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VARIANTS],
)
def test_the_new_plan_is_not_buried_under_the_old(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1
    audit = lab.audit_out  # type: ignore[attr-defined]
    line = next(row for row in audit.splitlines() if row.startswith(f"plans/{vid}: start"))
    assert line.endswith("-> complete"), line
    files = lab.git("ls-tree", "-r", "--name-only", "HEAD", f"plans/{vid}").split()
    if f"plans/{vid}/PLAN.yml" in files:
        assert lab.plan(vid)["plan"]["name"] != vid, (files, lab.plan(vid)["plan"])


def test_the_victim_beside_a_linked_log_is_untouched(lab: Lab) -> None:
    assert lab.victim.startswith("plan:") and "EXECUTION" not in lab.victim  # type: ignore[attr-defined]
    assert "Execution log" not in lab.git("show", "HEAD:plans/victim/PLAN.yml")
    assert (lab.plan("victim")["plan"]["status"]) == "pending_approval"
