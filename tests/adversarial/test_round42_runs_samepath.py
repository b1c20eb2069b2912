# ruff: noqa: E501
"""Round 42, a started plan's folder removed and a NEW plan put at the same path before the
started run's outcome is committed: in local mode during the run, in remote mode while the
forge refuses the outcome (``<state_dir>/refused.json``, round 41).

docs/threat-model.md (round 30): a started run whose folder was deleted or moved "is taken up
again whatever the folder became ... its outcome commit writing the plan back where it
started"; "the plan completes once, the audit shows the outcome". The promise here: the tool
runs once, its outcome reaches git history (the fresh clone's audit reads it), the new plan
at that path is judged on its own (frozen, approved, run) and is never replaced by the old
run's record, and a pass never stalls on it without ``status`` saying why.

**Local lab**: ``l-new`` (an exec tool that logs its call and sleeps 2 s) approved by Alice;
``plangate run --once`` runs in the background; while the tool sleeps the agent commits
``git rm -r plans/l-new`` and then a different plan (``l-new-v2``, the ``rec`` tool) at
``plans/l-new/PLAN.yml``; ``l-gone`` (control) is the same with the folder only removed.
Then two more passes, and ``l-other`` is submitted, approved and run (two passes each).

- ``local-once``: ``l-new``'s tool ran once. Held. ``local-gone-outcome`` (control): the
  removed ``l-gone``'s outcome is committed (the audit reads ``-> complete``). Held.
- ``local-others``: ``l-other`` ran once. Held.
- ``local-new-plan-kept-and-old-outcome-recorded``: HEAD's ``plans/l-new/PLAN.yml`` is the
  new plan (``l-new-v2``) and the audit of ``l-new``'s start reads ``-> complete``. **Broke**,
  one of two ways depending on when the agent's commits land in the run (both seen):
  (a) the old run's outcome is committed over the new plan (``plangate: complete
  plans/l-new`` writes the old plan back, ``completed``; the controller also wrote it into the
  working tree, so the agent's next ``git add -A`` committed the old file's controller-owned
  blocks under the agent's name: the audit flags ``owned-block-changed`` and ``illegal ...
  set status executing`` against the agent); (b) (one plan, the removal 0.5 s into the run)
  no outcome commit is ever made: each pass logs ``run_continued`` ("the branch no longer
  shows the started plan executing ...: run from the start commit") and commits nothing, the
  audit reads ``plans/l-new: start ... -> running`` for good, and the new plan stays
  ``pending_approval``, ``reason: waiting to be frozen``, ``waiting: null``, never frozen.

**Remote lab** (a ``file://`` bare repository whose pre-receive hook refuses the controller's
commits holding ``OUTMARK``, printed by the ``out`` tool, while the file ``strict`` exists):
``r-new`` and ``r-app`` approved and run, their outcomes refused; the agent removes both
folders (a pass), then commits new plans at both paths (``r-new-v2``: other content;
``r-app-v2``), a pass freezes them; Alice approves ``r-app-v2`` (two passes: it runs); then the
hook relaxes and three passes follow.

- ``remote-once``: each old tool ran once, ``r-app-v2`` ran once. Held.
- ``remote-new-kept``: HEAD's ``plans/r-new/PLAN.yml`` is the new plan (``r-new-v2``, as the
  controller froze it). **Broke**: the replayed outcome of the old run is committed over it
  (``plangate: complete plans/r-new``): the file at HEAD is the old plan, ``completed``, and
  the agent's new plan, which the controller had frozen, is gone from the branch.
- ``remote-approved-outcome``: the old ``r-app`` run's outcome reaches history (the audit of its
  start reads ``-> complete``) or ``status`` names it. **Broke**: the audit reads ``plans/r-app:
  start ... -> running`` for good, ``refused.json`` is emptied and ``status`` shows only
  ``r-app-v2`` completed, ``waiting: null``.

Fixed (the three markers removed): when the branch holds another plan at a run's path (a
valid plan of another hash, not that run's version in a run state), the outcome commit
records the run without writing the plan file: its usual subject and trailers plus
``Run-Start: <start commit>``, and the run's EXECUTION_LOG.md; the history index and
``plangate audit`` read it as the outcome of the open run that start names. The engine's
checkpoints never write the ``execution:`` block into a file that is no longer the text the run
reads (way (a): the last checkpoint wrote the old plan over the new one in the working tree);
the controller no longer compares that file with the outcome (way (b)). The new plan is frozen
and decided on its own and starts once the old outcome is on the branch (the job row is one per
path); a refused outcome is released only by an outcome commit (the new plan's freeze released
it), and the new plan is not set aside for it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SLOW = (
    "import json, os, sys, time\n"
    "open(os.environ['REC_LOG'], 'a').write(json.dumps({'argv': [sys.argv[1]], 'stdin': ''}) + '\\n')\n"
    "time.sleep(2)\n"
    "print('{}')\n"
)
OUT = (
    "import json, os, sys\n"
    "open(os.environ['REC_LOG'], 'a').write(json.dumps({'argv': [sys.argv[1]], 'stdin': ''}) + '\\n')\n"
    "print(json.dumps({'v': sys.argv[2][::-1]}))\n"
)
HOOK = r"""#!/bin/sh
while read old new ref; do
  if [ "$old" = 0000000000000000000000000000000000000000 ]; then range=$new; else range=$old..$new; fi
  for c in $(git rev-list "$range"); do
    [ "$(git log -1 --format=%ce $c)" = plangate@localhost ] || continue
    if [ -e ROOT/strict ] && git show -U100000 $c | grep -q OUTMARK; then
      echo "push protection: OUTMARK" >&2; exit 1
    fi
  done
done
exit 0
"""


def _tool_plan(tag: str, tool: str, extra: str = "") -> str:
    return (
        f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}]\n"
        f"actions:\n  - id: 1\n    tool: {tool}\n    why: w\n    params: {{tag: {tag}{extra}}}\n"
    )


def _audit(lab: Lab, root: Path, bare: Path | None = None) -> str:
    if bare is None:
        return lab.cli("audit", cwd=lab.repo).stdout
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True, env=lab.env())
    return lab.cli("audit", cwd=clone).stdout


def _build_local(root: Path) -> Lab:
    lab = Lab(root)
    (root / "slow.py").write_text(SLOW)
    argv = json.dumps([sys.executable, str(root / "slow.py"), "{tag}"])
    lab.write_config(
        tools=f"slow: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for slug in ["l-new", "l-gone"]:
        lab.write(slug, _tool_plan(slug, "slow"))
    lab.commit("plans")
    lab.run()
    for slug in ["l-new", "l-gone"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "plangate"),
            "run",
            "--once",
            "--config",
            str(lab.config),
        ],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not (lab.calls("l-new") and lab.calls("l-gone")) and time.monotonic() < deadline:
        time.sleep(0.05)
    lab.git("rm", "-q", "-r", "-f", "plans/l-new", "plans/l-gone")
    lab.commit("remove them", AGENT)
    lab.write("l-new", plan_text("l-new-v2"))
    lab.commit("a new plan at plans/l-new", AGENT)
    proc.communicate(timeout=60)
    lab.first_rc = proc.returncode  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    lab.write("l-other", plan_text("l-other"))
    lab.commit("l-other")
    lab.run()
    lab.approve("l-other", ALICE)
    lab.run()
    lab.run()
    lab.audit_out = _audit(lab, root)  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    return lab


def _build_remote(root: Path) -> Lab:
    lab = Lab(root)
    bare = root / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(HOOK.replace("ROOT", str(root)))
    hook.chmod(0o755)
    (root / "strict").write_text("")
    lab.git("remote", "add", "origin", str(bare))
    lab.git("fetch", "-q", "origin")
    (root / "out.py").write_text(OUT)
    argv = json.dumps([sys.executable, str(root / "out.py"), "{tag}", "{s}"])
    lab.write_config(
        tools=f"out: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
        )
    )

    def sync() -> None:
        lab.git("pull", "-q", "--rebase", "origin", "main")

    def push() -> None:
        lab.git("push", "-q", "origin", "HEAD:main")

    passes: list[int] = []
    for slug in ["r-new", "r-app"]:
        lab.write(slug, _tool_plan(slug, "out", ", s: KRAMTUO"))
    lab.commit("plans")
    push()
    passes += [lab.run(check=False).returncode for _ in range(2)]
    sync()
    for slug in ["r-new", "r-app"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    push()
    passes += [lab.run(check=False).returncode for _ in range(2)]
    sync()
    lab.waiting_before = {k: bool(v.get("waiting")) for k, v in lab.status().items()}  # type: ignore[attr-defined]
    lab.git("rm", "-q", "-r", "plans/r-new", "plans/r-app")
    lab.commit("remove them", AGENT)
    push()
    passes.append(lab.run(check=False).returncode)
    sync()
    lab.write("r-new", _tool_plan("r-new-v2", "out", ", s: other"))
    lab.write("r-app", plan_text("r-app-v2"))
    lab.commit("new plans at the same paths", AGENT)
    push()
    passes.append(lab.run(check=False).returncode)
    sync()
    lab.new_frozen = "frozen:" in lab.read("r-new")  # type: ignore[attr-defined]
    lab.approve("r-app", ALICE)
    push()
    passes += [lab.run(check=False).returncode for _ in range(2)]
    sync()
    (root / "strict").unlink()
    passes += [lab.run(check=False).returncode for _ in range(3)]
    sync()
    lab.passes = passes  # type: ignore[attr-defined]
    lab._status = None  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    lab.audit_out = _audit(lab, root, bare)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r42-samepath-local", lambda root: _build_local(root / "lab"))


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r42-samepath-remote", lambda root: _build_remote(root / "lab"))


def _audit_end(lab: Lab, slug: str) -> list[str]:
    return [
        line
        for line in lab.audit_out.splitlines()  # type: ignore[attr-defined]
        if line.startswith(f"plans/{slug}: start")
    ]


def test_local_once(local: Lab) -> None:
    assert local.first_rc == 0  # type: ignore[attr-defined]
    assert len(local.calls("l-new")) == 1, local.calls("l-new")
    assert len(local.calls("l-gone")) == 1, local.calls("l-gone")


def test_local_gone_outcome(local: Lab) -> None:
    lines = _audit_end(local, "l-gone")
    assert lines and lines[0].endswith("-> complete"), local.audit_out  # type: ignore[attr-defined]


def test_local_others(local: Lab) -> None:
    assert len(local.calls("l-other")) == 1, local.calls("l-other")


def test_local_new_plan_kept_and_old_outcome_recorded(local: Lab) -> None:
    head = local.plan("l-new")
    lines = _audit_end(local, "l-new")
    assert head["plan"]["name"] == "l-new-v2", local.read("l-new")[:600]
    assert lines and lines[0].endswith("-> complete"), local.audit_out  # type: ignore[attr-defined]


def test_remote_once(remote: Lab) -> None:
    assert remote.waiting_before.get("plans/r-new"), remote.waiting_before  # type: ignore[attr-defined]
    assert remote.waiting_before.get("plans/r-app"), remote.waiting_before  # type: ignore[attr-defined]
    assert remote.new_frozen  # type: ignore[attr-defined]
    for tag in ["r-new", "r-app", "r-app-v2"]:
        assert len(remote.calls(tag)) == 1, (tag, remote.calls(tag))
    assert remote.calls("r-new-v2") == []
    assert remote.passes == [0] * len(remote.passes), remote.passes  # type: ignore[attr-defined]


def test_remote_new_kept(remote: Lab) -> None:
    assert remote.plan("r-new")["plan"]["name"] == "r-new-v2", remote.read("r-new")[:600]


def test_remote_approved_outcome(remote: Lab) -> None:
    lines = _audit_end(remote, "r-app")
    assert lines and lines[0].endswith("-> complete"), remote.audit_out  # type: ignore[attr-defined]
