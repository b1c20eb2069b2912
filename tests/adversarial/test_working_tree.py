"""Property: in a shared working tree the controller commits only bytes it produced
(SPEC §7, §15: never commits bytes it did not produce, never follows a symlink).

Attack: the plan's first action is an agent with write access to the working tree (here a
``tamper`` exec tool, which is what a coding agent sharing the checkout is). While the plan
runs it rewrites or appends to EXECUTION_LOG.md, swaps it or PLAN.yml for a symlink to a
deploy key outside the repo, edits the next action's params or the ``execution:`` block in
the working tree, drops extra files in the plan folder, stages a forged file in git's index,
or edits another file. Defence: the controller's commits contain none of those bytes, no
symlink, no key; the key file itself is untouched; action 2 runs with its approved params.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, plan_text
from test_round2_execution_kit import shared

TAMPER = r"""
import os, subprocess, sys
mode, folder, secret = sys.argv[1:4]
log = os.path.join(folder, "EXECUTION_LOG.md")
plan = os.path.join(folder, "PLAN.yml")
def swap_for_link(path, target):
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(target, path)
if mode == "log-rewrite":
    open(log, "w").write("# FORGED log: everything went fine\n")
elif mode == "log-append":
    open(log, "a").write("\nFORGED: action 2 approved by the CEO\n")
elif mode == "log-symlink-key":
    swap_for_link(log, secret)
elif mode == "log-symlink-dir":
    swap_for_link(log, os.path.dirname(secret))
elif mode == "plan-symlink-key":
    swap_for_link(plan, secret)
elif mode == "next-params":
    text = open(plan).read().replace('-step2"', '-step2-FORGED"')
    open(plan, "w").write(text)
elif mode == "execution-block":
    text = open(plan).read()
    open(plan, "w").write(text + "# FORGED\n" if "execution:" not in text
                          else text.replace("execution:", "execution:\n  forged: FORGED", 1))
elif mode == "status-line":
    text = open(plan).read().replace("status: executing", "status: completed  # FORGED", 1)
    open(plan, "w").write(text)
elif mode == "extra-file":
    open(os.path.join(folder, "NOTES.md"), "w").write("FORGED notes\n")
elif mode == "staged-file":
    open(os.path.join(folder, "STAGED.md"), "w").write("FORGED staged\n")
    subprocess.run(["git", "add", "STAGED.md"], cwd=folder, check=True)
elif mode == "staged-log":
    open(log, "w").write("FORGED staged log\n")
    subprocess.run(["git", "add", "EXECUTION_LOG.md"], cwd=folder, check=True)
elif mode == "readme":
    open(os.path.join(folder, "..", "..", "README"), "a").write("FORGED readme\n")
elif mode == "folder-symlink":
    outside = os.path.join(os.path.dirname(secret), "elsewhere")
    os.makedirs(outside, exist_ok=True)
    for name in os.listdir(folder):
        os.rename(os.path.join(folder, name), os.path.join(outside, name))
    os.rmdir(folder)
    os.symlink(outside, folder)
print("{}")
"""

MODES = [
    "log-rewrite",
    "log-append",
    "log-symlink-key",
    "log-symlink-dir",
    "next-params",
    "execution-block",
    "status-line",
    "extra-file",
    "staged-file",
    "staged-log",
    "readme",
    "folder-symlink",
]

PLAN = """\
plan:
  name: "{tag}"
  task: "an agent shares the working tree while this plan runs"
  status: pending_approval
available_tools:
  - name: tamper
  - name: rec
actions:
  - id: 1
    tool: tamper
    why: "the agent works in the shared checkout"
    params: {{mode: "{mode}", folder: "{folder}"}}
  - id: 2
    tool: rec
    why: "the approved second step"
    params:
      tag: "{tag}-step2"
"""


# Each of these takes the whole pass down today: they get a repo of their own.
SOLO = ["plan-symlink-key"]


def _build(root: Path, modes: list[str]) -> tuple[Lab, list[int]]:
    lab = Lab(root)
    secret_dir = lab.root / "keys"
    secret_dir.mkdir()
    lab.secret = secret_dir / "deploy_key"  # type: ignore[attr-defined]
    lab.secret.write_text("DEPLOYKEY-SECRET-0123456789\n")  # type: ignore[attr-defined]
    script = lab.root / "tamper.py"
    script.write_text(TAMPER)
    argv = json.dumps(
        [sys.executable, "-I", "-S", str(script), "{mode}", "{folder}", str(lab.secret)]  # type: ignore[attr-defined]
    )
    lab.write_config(tools=f"tamper: {{kind: exec, argv: {argv}}}\n")
    for mode in modes:
        folder = lab.repo / "plans" / mode
        lab.write(mode, PLAN.format(tag=mode, mode=mode, folder=folder))
    lab.write("bystander", plan_text("bystander"))
    lab.commit("plans", AGENT)
    codes = [lab.run(check=False).returncode]
    for mode in [*modes, "bystander"]:
        lab.set_status(mode, "approved")
    lab.commit("approve", ALICE)
    codes.append(lab.run(check=False).returncode)
    return lab, codes


def _build_lab(root: Path) -> Lab:
    lab, codes = _build(root, MODES)
    assert codes == [0, 0]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-tree", _build_lab)


def _controller_patches(lab: Lab) -> str:
    """Every change the controller committed, as git shows it (binary-safe text)."""
    return lab.git("log", f"--author={BOT[1]}", "-p", "--format=%H %s", "--no-ext-diff", "--text")


BROKEN: dict[str, object] = {}


@pytest.mark.parametrize("mode", cases(MODES, MODES, BROKEN))
def test_the_controller_commits_only_its_own_bytes(lab: Lab, mode: str) -> None:
    patches = _controller_patches(lab)
    sections = patches.split("\ndiff --git ")
    mine = [
        s
        for s in sections
        if f"plans/{mode}/" in s.split("\n", 1)[0]
        or (mode == "readme" and s.startswith("a/README"))
    ]
    for section in mine:
        assert "FORGED" not in section, f"the controller committed a forgery:\n{section[:600]}"
        assert "DEPLOYKEY" not in section, "the controller committed the deploy key"
        assert "new file mode 120000" not in section and "new mode 120000" not in section
    tree = lab.git("ls-tree", "-r", "HEAD", f"plans/{mode}/")
    assert "120000" not in tree, f"a symlink is on the branch: {tree}"
    assert "STAGED.md" not in tree and "NOTES.md" not in tree
    assert "FORGED" not in lab.git("show", "HEAD:README")
    assert lab.secret.read_text() == "DEPLOYKEY-SECRET-0123456789\n"  # type: ignore[attr-defined]
    calls = lab.calls(f"{mode}-step2")
    assert len(calls) == 1, "the bench: the agent's action succeeded and the next one ran once"
    assert "FORGED" not in calls[0]["stdin"], "action 2 ran with params edited in the tree"


def test_bystander_plan_ran(lab: Lab) -> None:
    assert len(lab.calls("bystander")) == 1


@pytest.mark.parametrize("mode", SOLO)
def test_a_swapped_plan_file_costs_only_that_plan(tmp_path: Path, mode: str) -> None:
    lab, codes = _build(tmp_path, [mode])
    assert codes == [0, 0], "the controller's pass failed"
    assert len(lab.calls("bystander")) == 1
    patches = _controller_patches(lab)
    assert "DEPLOYKEY" not in patches
    assert "120000" not in lab.git("ls-tree", "-r", "HEAD", f"plans/{mode}/")
    assert lab.secret.read_text() == "DEPLOYKEY-SECRET-0123456789\n"  # type: ignore[attr-defined]
