"""Round 5, who may make a plan run: ``plangate approve`` run by Alice in a checkout the agent
has written to (local mode: one shared working tree and ``.git``). The agent prepares the
checkout, Alice runs ``plangate approve plans/<vid>`` for the plan she reviewed (HEAD's
version), and the controller runs.

- ``staged-other``: the agent stages ``plans/staged-other-evil/PLAN.yml`` with ``status:
  approved`` (index only). If the approval commit takes the whole index it approves the
  evil plan as Alice, in a commit whose trailers name only her plan.
- ``unstaged-other``: the same, written to the working tree and not staged.
- ``staged-edit``: the agent stages a change of the plan's own ``tag`` param.
- ``unstaged-edit``: the same change, in the working tree only.
- ``hook``: ``core.hooksPath`` in ``.git/config`` names a ``pre-commit`` hook that stages the
  evil plan approved and a ``commit-msg`` hook that appends ``Plan: plans/hook-evil``.
- ``space-trailer``: the same, onto ``plans/space-trailer `` (a trailing blank: git's
  trailer parser trims it, so ``Plan: plans/space-trailer `` would read as hers).
- ``name-trailer``: Alice's approval commit of ``name-trailer`` is moved by the agent with
  ``git am --directory`` onto ``plans/name-trailer/sub`` (a plan folder inside hers, whose
  path starts with the path her ``Plan:`` trailer names).

Defence: no evil plan ever runs, the approved plan runs only with the params Alice saw.
Held (7 of 7): the index and working tree are not committed (edits refused `E_USAGE`),
hooks never run, the moved commits are `E_APPROVAL_REPLAYED` (their `Plan:` names Alice's plan).
Since round 75 (r75twinfold) ``plans/space-trailer`` beside ``plans/space-trailer `` (one folder
on NTFS) is held ``E_PLAN_AMBIGUOUS`` from birth: Alice's ``approve`` is refused, nothing to move.
"""

from __future__ import annotations

import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = [
    "staged-other",
    "unstaged-other",
    "staged-edit",
    "unstaged-edit",
    "hook",
    "name-trailer",
    "space-trailer",
]
#: where the agent moves Alice's approval commit of the plan, and that plan's tag
MOVED = {
    "name-trailer": ("name-trailer/sub", "name-trailer-sub"),
    "space-trailer": ("space-trailer ", "space-trailer-evil"),
}
BROKEN: dict[str, list[pytest.MarkDecorator]] = {}


def _approve_cli(lab: Lab, vid: str) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller",
            "approve",
            "--config",
            str(lab.config),
            f"plans/{vid}",
        ],
        cwd=lab.repo,
        env=lab.env(ALICE),
        capture_output=True,
        text=True,
        check=False,
    )
    lab.approve_out = getattr(lab, "approve_out", {})  # type: ignore[attr-defined]
    lab.approve_out[vid] = result.returncode, result.stdout + result.stderr  # type: ignore[attr-defined]


def _evil(lab: Lab, vid: str) -> None:
    lab.write(f"{vid}-evil", plan_text(f"{vid}-evil", status="approved"))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid, name="same header"))
        if vid.endswith("other") or vid == "hook":
            lab.write(f"{vid}-evil", plan_text(f"{vid}-evil"))
    for vid, (slug, tag) in MOVED.items():
        text = plan_text(tag, name="same header")
        lab.write(
            slug, text.replace(f'task: "attack variant {tag}"', f'task: "attack variant {vid}"')
        )
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.1)
    # staged-other
    _evil(lab, "staged-other")
    lab.git("add", "plans/staged-other-evil/PLAN.yml")
    _approve_cli(lab, "staged-other")
    # unstaged-other
    _evil(lab, "unstaged-other")
    _approve_cli(lab, "unstaged-other")
    lab.git("checkout", "--", "plans/unstaged-other-evil/PLAN.yml", check=False)
    # staged-edit / unstaged-edit: the tag param changed
    for vid in ("staged-edit", "unstaged-edit"):
        path = lab.repo / "plans" / vid / "PLAN.yml"
        path.write_text(path.read_text().replace(f'tag: "{vid}"', f'tag: "{vid}-evil"'))
        if vid == "staged-edit":
            lab.git("add", str(path))
        _approve_cli(lab, vid)
        lab.git("checkout", "--", f"plans/{vid}/PLAN.yml", check=False)
    # hook
    hooks = lab.root / "hooks"
    hooks.mkdir()
    evil = lab.repo / "plans" / "hook-evil" / "PLAN.yml"
    (hooks / "pre-commit").write_text(
        "#!/bin/sh\n"
        f"sed -i 's/status: pending_approval/status: approved/' '{evil}'\n"
        f"git add '{evil}'\n"
    )
    (hooks / "commit-msg").write_text('#!/bin/sh\nprintf "Plan: plans/hook-evil\\n" >> "$1"\n')
    for hook in hooks.iterdir():
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    lab.git("config", "core.hooksPath", str(hooks))
    _approve_cli(lab, "hook")
    lab.git("config", "--unset", "core.hooksPath")
    # name-trailer: Alice approves her plan with the CLI; the agent moves the commit
    lab.git("stash", "-q", "-u", check=False)
    for vid, (slug, _) in MOVED.items():
        before = lab.git("rev-parse", "HEAD")
        _approve_cli(lab, vid)
        if lab.git("rev-parse", "HEAD") == before:
            # round 75: ``plans/space-trailer`` beside its NTFS twin ``plans/space-trailer ``
            # is held E_PLAN_AMBIGUOUS: Alice's approve commits nothing, there is none to move
            continue
        patch = lab.git("format-patch", "-1", "--stdout", "HEAD")
        lab.git("am", "-q", "-p3", f"--directory=plans/{slug}", who=AGENT, input=patch)
    lab.git("stash", "-q", "-u", check=False)  # leave nothing of the agent's around
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r5-checkout", _build)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_the_agents_checkout_does_not_approve_for_alice(lab: Lab, vid: str) -> None:
    out = getattr(lab, "approve_out", {}).get(vid)
    evil = MOVED[vid][1] if vid in MOVED else f"{vid}-evil"
    assert lab.calls(evil) == [], (
        out,
        lab.codes(MOVED[vid][0] if vid in MOVED else evil),
    )
    for call in lab.calls(vid):
        assert '"tag": "' + vid + '"' in call["stdin"], (out, call)
