"""Round 34, one hostile commit never stalls the pass or silences a run: a running plan's
folder gets a tree entry the outcome commit cannot simply overwrite with a file, committed
mid-run by the agent (no kill). Round 33 tried the folder as a committed symlink only.

Each plan ``m-<mode>``: action 1 ``rec``, action 2 ``mut`` (an exec tool standing for the
agent sharing the checkout: it changes the plan's own folder and commits as the agent),
action 3 ``rec`` (tag ``m-<mode>-after``). Alice approves every plan; one ``run --once``
pass (20 s to end, only to wait); a bystander plan is then written and approved, and two
more passes follow.

- ``log-dir``: ``EXECUTION_LOG.md`` committed as a folder (``EXECUTION_LOG.md/x``).
- ``yaml-dir``: ``PLAN.yml`` removed and committed as a folder (``PLAN.yml/x``).
- ``folder-file``: the plan folder removed and ``plans/m-folder-file`` committed as a file.
- ``log-gitlink``: ``EXECUTION_LOG.md`` committed as a gitlink (mode 160000, no file).
- ``yaml-gitlink``: ``PLAN.yml`` committed as a gitlink (mode 160000, no file).
- ``log-link``: ``EXECUTION_LOG.md`` committed as a symlink to ``../../README``.
- ``add-yaml``: a copy of the start commit's PLAN.yml committed beside it as ``PLAN.yaml``
  (the folder becomes ambiguous mid-run).

Asserted per mode: each ``rec`` action ran at most once; every pass exits 0 and the
bystander ran exactly once; the run ended with an outcome commit or its ``status`` row gives
a code; ``README`` (a symlink's target) was never rewritten by the controller.

Held (round 34): at most once, passes and bystander, the link target; ``log-dir``,
``log-gitlink``, ``log-link``, ``yaml-gitlink`` and ``add-yaml`` end ``completed`` (the
outcome commit writes the controller's blobs over the agent's entries; ``add-yaml``'s row
then says ``E_PLAN_AMBIGUOUS``). ``yaml-dir`` and ``folder-file``: the run goes on
(``run_continued``) and both actions run once, then the outcome waits (``plan_waiting``
E_UNSAFE_PATH in the log: "PLAN.yml is a folder or special file", "not a folder") and
``status --json`` has no row for the plan at all: round 33's known open item (a symlinked
folder), seen for a folder or a file in the way; strict xfail, not a new class.

Fixed (the same session): `plangate status` lists a run this controller started whose
plan the branch no longer shows, with why its outcome waits (`E_UNSAFE_PATH ...`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

MODES = [
    "log-dir",
    "yaml-dir",
    "folder-file",
    "log-gitlink",
    "yaml-gitlink",
    "log-link",
    "add-yaml",
]
BROKEN: dict[str, str] = {}
KNOWN = (
    "known open since round 33 (do not count as new): a started plan whose outcome cannot be "
    "written back waits (plan_waiting E_UNSAFE_PATH in the log) and status has no row for it"
)
#: mode -> reason (strict xfail): variants of round 33's known open item, seen here.
#: Found (the record); fixed the same session (status lists the left run): no markers.
FOUND_SILENT = {"yaml-dir": KNOWN, "folder-file": KNOWN}
SILENT: dict[str, str] = {}

MUT = """\
import os, shutil, subprocess, sys
r = {repo!r}
mode, slug = sys.argv[1], sys.argv[2]
env = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
           GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
def git(*a):
    return subprocess.run(["git", *a], cwd=r, env=env, check=True, capture_output=True,
                          text=True).stdout
d = "plans/" + slug
full = os.path.join(r, d)
head = git("rev-parse", "HEAD").strip()
if mode == "log-dir":
    git("rm", "-q", "--cached", "--ignore-unmatch", d + "/EXECUTION_LOG.md")
    p = os.path.join(full, "EXECUTION_LOG.md")
    if os.path.lexists(p) and not os.path.isdir(p):
        os.unlink(p)
    os.makedirs(p, exist_ok=True)
    open(os.path.join(p, "x"), "w").write("agent\\n")
elif mode == "yaml-dir":
    git("rm", "-qf", d + "/PLAN.yml")
    os.makedirs(os.path.join(full, "PLAN.yml"), exist_ok=True)
    open(os.path.join(full, "PLAN.yml", "x"), "w").write("agent\\n")
elif mode == "folder-file":
    git("rm", "-rqf", d)
    shutil.rmtree(full, ignore_errors=True)
    open(full, "w").write("agent\\n")
elif mode in ("log-gitlink", "yaml-gitlink"):
    name = "EXECUTION_LOG.md" if mode == "log-gitlink" else "PLAN.yml"
    git("rm", "-q", "--cached", "--ignore-unmatch", d + "/" + name)
    p = os.path.join(full, name)
    if os.path.lexists(p):
        os.unlink(p)
    git("update-index", "--add", "--cacheinfo", "160000," + head + "," + d + "/" + name)
elif mode == "add-yaml":
    text = git("show", "HEAD:" + d + "/PLAN.yml")
    open(os.path.join(full, "PLAN.yaml"), "w").write(text)
elif mode == "log-link":
    git("rm", "-q", "--cached", "--ignore-unmatch", d + "/EXECUTION_LOG.md")
    p = os.path.join(full, "EXECUTION_LOG.md")
    if os.path.lexists(p):
        os.unlink(p)
    os.symlink("../../README", p)
if "gitlink" not in mode:
    git("add", "-A", "plans")
git("commit", "-qm", "agent: " + mode)
print("{{}}")
"""


def _plan(mode: str) -> str:
    slug = f"m-{mode}"
    extra = (
        '  - id: 2\n    tool: mut\n    why: "agent work"\n'
        f'    params: {{mode: "{mode}", slug: "{slug}"}}\n'
        '  - id: 3\n    tool: rec\n    why: "after"\n'
        f'    params: {{tag: "{slug}-after"}}\n'
    )
    text = plan_text(slug, extra_actions=extra)
    return text.replace("  - name: rec\n", "  - name: rec\n  - name: mut\n")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    mut = root / "mut.py"
    mut.write_text(MUT.format(repo=str(lab.repo)))
    argv = json.dumps([sys.executable, str(mut), "{mode}", "{slug}"])
    lab.write_config(tools=f"mut: {{kind: exec, argv: {argv}}}\n")
    for mode in MODES:
        lab.write(f"m-{mode}", _plan(mode))
    lab.commit("plans", AGENT)
    lab.run()
    for mode in MODES:
        lab.set_status(f"m-{mode}", "approved")
    lab.commit("approve", ALICE)
    lab.readme = (lab.repo / "README").read_text()  # type: ignore[attr-defined]
    lab.outs = []  # type: ignore[attr-defined]

    def step() -> bool:
        try:
            lab.outs.append(lab.run(timeout=20, check=False).returncode)  # type: ignore[attr-defined]
        except subprocess.TimeoutExpired:
            lab.outs.append("timeout")  # type: ignore[attr-defined]
            return False
        return True

    if step():
        lab.write("bystander", plan_text("bystander"))
        lab.commit("bystander", AGENT, "plans/bystander")
        if step():
            lab.set_status("bystander", "approved")
            lab.commit("approve bystander", ALICE, "plans/bystander")
            step()
    lab.readme_after = (lab.repo / "README").read_text()  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r34-runs-midtree", _build)


def _marks(table: dict[str, str], mode: str) -> list[pytest.MarkDecorator]:
    if mode in table:
        return [pytest.mark.xfail(strict=True, raises=AssertionError, reason=table[mode])]
    return []


def test_passes_exit_zero_bystander_runs(lab: Lab) -> None:
    assert lab.outs == [0, 0, 0], lab.outs  # type: ignore[attr-defined]
    assert len(lab.calls("bystander")) == 1


@pytest.mark.parametrize("mode", MODES)
def test_at_most_once(lab: Lab, mode: str) -> None:
    assert len(lab.calls(f"m-{mode}")) == 1
    assert len(lab.calls(f"m-{mode}-after")) <= 1


def test_link_target_untouched(lab: Lab) -> None:
    assert lab.readme_after == lab.readme  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", [pytest.param(m, id=m, marks=_marks(SILENT, m)) for m in MODES])
def test_not_silent(lab: Lab, mode: str) -> None:
    """The run ended with an outcome commit, or its status row says why not, with a code."""
    row = lab.rows.get(f"plans/m-{mode}")  # type: ignore[attr-defined]
    ended = any(
        s.startswith(("plangate: complete ", "plangate: fail ")) for s in lab.subjects(f"m-{mode}")
    )
    said = json.dumps(row)
    assert ended or "E_" in said, (lab.subjects(f"m-{mode}"), row)
