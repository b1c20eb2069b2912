"""Round 2, execution side: the shared checkout's ``.git`` makes the controller run code
nobody approved, with its secrets.

In local mode the controller watches a working tree an agent also writes; the agent must be
able to write ``.git`` to commit at all. git runs hooks (``.git/hooks/*``, or wherever
``core.hooksPath`` points) and ``core.fsmonitor`` for the commands the controller itself
runs (``update-ref``, ``read-tree``, ``status``...). Those programs run as the controller,
in its environment, which holds ``PLANGATE_SECRET_*``. Defence wanted: no program the agent
placed in ``.git`` ever runs from the controller's git calls (SPEC §15: untrusted is
"everything a plan author or agent can write ... the working tree"; §6: secrets never leave
the controller except into the approved params of the approved tools), and no hook can veto
the controller's commits (every other plan stalls).

Also held here: the working tree during a run, hard links (a log or plan file hard-linked to
a file outside the repo), a plan folder made read-only, and a tool that leaves a grandchild
holding its stdout open.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SECRET = "Zk8GitHookSecretQx"
HOOKS = [
    "pre-commit",
    "post-commit",
    "commit-msg",
    "prepare-commit-msg",
    "post-checkout",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
    "post-rewrite",
    "pre-push",
]


def _hook(marker: Path, code: int = 0) -> str:
    return f'#!/bin/sh\necho "$0 $PLANGATE_SECRET_TOKEN" >> "{marker}"\nexit {code}\n'


def _install(lab: Lab, mode: str) -> None:
    marker = lab.root / "HOOK_RAN"
    if mode == "hooks":
        for name in HOOKS:
            path = lab.repo / ".git" / "hooks" / name
            path.write_text(_hook(marker))
            path.chmod(0o755)
    elif mode == "hooks-path":
        folder = lab.root / "agent-hooks"
        folder.mkdir()
        for name in HOOKS:
            (folder / name).write_text(_hook(marker))
            (folder / name).chmod(0o755)
        lab.git("config", "core.hooksPath", str(folder))
    elif mode == "fsmonitor":
        script = lab.root / "fsmonitor.sh"
        script.write_text(_hook(marker, 1))
        script.chmod(0o755)
        lab.git("config", "core.fsmonitor", str(script))
    elif mode == "veto":
        # reference-transaction may refuse every ref update: the controller can commit nothing.
        path = lab.repo / ".git" / "hooks" / "reference-transaction"
        path.write_text(
            f'#!/bin/sh\n[ "$1" = prepared ] && [ -f "{lab.root}/VETO" ] && exit 1\nexit 0\n'
        )
        path.chmod(0o755)


MODES = ["hooks", "hooks-path", "fsmonitor", "veto"]


def _build(root: Path, mode: str) -> tuple[Lab, list[int]]:
    lab = Lab(root)
    lab.write_config(tools="sec: {kind: echo}\n", extra="secrets: {env_prefix: PLANGATE_SECRET_}\n")
    lab.write(
        "uses-secret",
        plan_text("uses-secret")
        + '  - id: 2\n    tool: sec\n    why: "a secret for the tool only"\n'
        '    params: {t: "$<secrets.TOKEN>"}\n',
    )
    lab.git("config", "user.name", "Agent")  # not a hook: just git's own identity
    lab.write("bystander", plan_text("bystander"))
    text = lab.read("uses-secret").replace(
        "available_tools:\n  - name: rec\n", "available_tools:\n  - name: rec\n  - name: sec\n"
    )
    lab.write("uses-secret", text)
    frozen = lab.cli(
        "freeze", str(lab.repo / "plans/uses-secret"), str(lab.repo / "plans/bystander")
    )
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    lab.commit("plans, frozen", AGENT)
    for name in ("uses-secret", "bystander"):
        lab.set_status(name, "approved")
    lab.commit("approve them", ALICE)
    _install(lab, mode)  # the agent writes .git, as it can in a shared checkout
    if mode == "veto":
        (lab.root / "VETO").write_text("")
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}  # type: ignore[attr-defined]
    codes = [lab.run(check=False).returncode]
    lab.extra_env = {}  # type: ignore[attr-defined]
    if mode == "veto":
        (lab.root / "VETO").unlink()
    return lab, codes


@pytest.mark.parametrize("mode", MODES)
def test_nothing_the_agent_put_in_dot_git_runs_as_the_controller(tmp_path: Path, mode: str) -> None:
    lab, codes = _build(tmp_path, mode)
    marker = lab.root / "HOOK_RAN"
    ran = marker.read_text() if marker.exists() else ""
    assert SECRET not in ran, f"an agent's hook ran with the controller's secret:\n{ran[:300]}"
    assert ran == "", f"an agent's program ran from the controller's git calls:\n{ran[:300]}"
    assert codes == [0]
    assert len(lab.calls("bystander")) == 1, "a hook vetoed the controller: nothing ran"
    assert lab.status()["plans/bystander"]["status"] == "completed"


# -- the working tree during a run: held ---------------------------------------------------

TAMPER = r"""
import os, subprocess, sys
mode, folder, root = sys.argv[1:4]
if mode == "chmod-folder":
    os.chmod(folder, 0o555)
elif mode == "hardlink-log":
    log = os.path.join(folder, "EXECUTION_LOG.md")
    if os.path.lexists(log):
        os.remove(log)
    os.link(os.path.join(root, "victim.txt"), log)
elif mode == "grandchild":
    with open(os.path.join(root, "grandchild.pid"), "a") as f:
        f.write(str(subprocess.Popen(["sleep", "15"], start_new_session=True).pid) + "\n")
print("{}")
"""
TREE_MODES = ["chmod-folder", "hardlink-log", "hardlink-plan", "grandchild"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "tree", _build_tree)


def _build_tree(root: Path) -> Lab:
    lab = Lab(root)
    (root / "victim.txt").write_text("VICTIM-ORIGINAL\n")
    (root / "tamper.py").write_text(TAMPER)
    argv = json.dumps(
        [sys.executable, "-I", "-S", str(root / "tamper.py"), "{mode}", "{folder}", str(root)]
    )
    lab.write_config(tools=f"tamper: {{kind: exec, argv: {argv}, timeout: 2}}\n")
    for mode in TREE_MODES:
        folder = lab.repo / "plans" / mode
        lab.write(
            mode,
            f"""\
plan:
  name: "{mode}"
  task: "an agent shares the checkout"
  status: pending_approval
available_tools: [{{name: tamper}}, {{name: rec}}]
actions:
  - id: 1
    tool: tamper
    why: "the agent works in the checkout"
    params: {{mode: "{mode}", folder: "{folder}"}}
  - id: 2
    tool: rec
    why: "the approved next step"
    params: {{tag: "{mode}-2"}}
""",
        )
    lab.write("zz-bystander", plan_text("zz-bystander"))
    names = [*TREE_MODES, "zz-bystander"]
    assert lab.cli("freeze", *(str(lab.repo / "plans" / n) for n in names)).returncode == 0
    lab.commit("plans, frozen", AGENT)
    os.link(lab.repo / "plans/hardlink-plan/PLAN.yml", root / "victim-plan.txt")
    for name in names:
        lab.set_status(name, "approved")
    lab.commit("approve", ALICE)
    # set_status rewrote the file in place: the link still shares it. Snapshot the victim.
    lab.victim_plan = (root / "victim-plan.txt").read_text()  # type: ignore[attr-defined]
    lab.first_pass = lab.run(check=False)  # type: ignore[attr-defined]
    for folder in (lab.repo / "plans").iterdir():
        folder.chmod(0o755)
    pids = root / "grandchild.pid"
    for pid in pids.read_text().split() if pids.exists() else []:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), 9)
    return lab


@pytest.mark.parametrize("mode", TREE_MODES)
def test_the_working_tree_cannot_redirect_the_controllers_writes(tree: Lab, mode: str) -> None:
    assert tree.first_pass.returncode == 0, tree.first_pass.stderr[-400:]  # type: ignore[attr-defined]
    assert (tree.root / "victim.txt").read_text() == "VICTIM-ORIGINAL\n"
    assert (tree.root / "victim-plan.txt").read_text() == tree.victim_plan  # type: ignore[attr-defined]
    row = tree.status()[f"plans/{mode}"]
    assert row["status"] in {"completed", "failed"}, row
    if mode != "grandchild":
        assert len(tree.calls(f"{mode}-2")) == 1
    assert len(tree.calls("zz-bystander")) == 1
