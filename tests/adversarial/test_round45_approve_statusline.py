"""Round 45, who may make a plan run: round 42's "status-only" exemption for a nested or
pinned plan file versus a *content* line that merely looks like a status line.

docs/approvals.md: whoever commits a file into a plan's folder (a nested ``PLAN.yml``
included) or into the folder of a plan it pins is a writer of it, "unless the commit changed
nothing in that file but its status line, written plainly (``status: approved``...)". A
hashed line of the nested/pinned plan can have the same shape: a key ``status`` in the
plan's ``inputs:`` (indent 2, exactly like ``plan.status``) or in an action's ``params``.
Changing it changes the pinned version, i.e. what the parent runs.

Config: the bench's. The agent writes, per variant, a library (``plans/<vid>-lib``, or the
nested ``plans/<vid>/child``) whose ``inputs.status`` / ``params.status`` says ``pending``,
and a parent ``plans/<vid>`` pinning the version that says ``approved`` (so the parent is
valid only after the flip). Alice (an approver) then commits only the one-line flip
``status: pending`` -> ``status: approved`` of that content line, and the first controller
pass freezes the parent. The agent opens ``pr-<vid>`` setting the parent ``approved``; a
clone's ``plangate check --as alice`` predicts its merge; then Alice approves the parent on
main herself.

- ``lib-inputs``: the pinned library's ``inputs.status`` line (indent 2);
- ``lib-param``: the pinned library's action ``params.status`` line (indent 6);
- ``nest-inputs``: the pinned child lives below the parent (``plans/<vid>/child``), its
  ``inputs.status`` line;
- ``nest-nopin``: a nested child below the parent, not pinned: its ``inputs.status`` line
  (a file of the parent's folder changed beyond its status);
- ``ctl-real``: control: Alice flips the nested child's real ``plan.status`` (draft ->
  pending_approval): the exemption; the parent runs once on her approval.

Asserted (the defence): Alice wrote the version the parent runs (or a file in its folder),
so her approval is ``E_SELF_APPROVAL``: the parent never starts, nothing of it runs; and
``check`` predicts ``start`` exactly when the controller started.

Seen: all held (``E_SELF_APPROVAL`` for the four, predicted by ``check``; the control ran
once).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

ATTACKS = ["lib-inputs", "lib-param", "nest-inputs", "nest-nopin"]
CASES = [*ATTACKS, "ctl-real"]

#: what round 45 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _lib(tag: str, inp: str, par: str, status: str = "draft") -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "library {tag}"\n  status: {status}\n'
        f"inputs:\n  status: {inp}\n"
        "available_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n    why: lib\n    params:\n"
        f'      tag: "{tag}"\n      mode: "$<inputs.status>"\n      status: {par}\n'
    )


def _parent(vid: str, pin: str | None) -> str:
    text = (
        f'plan:\n  name: "{vid}"\n  task: "round 45 {vid}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n    why: parent\n"
        f'    params: {{tag: "{vid}"}}\n'
    )
    if pin:
        text += f"  - id: 2\n    plan: {pin}\n    why: lib\n"
    return text


def _where(vid: str) -> str:
    return f"{vid}/child" if vid.startswith(("nest", "ctl")) else f"{vid}-lib"


def _hash(lab: Lab, slug: str) -> str:
    result = lab.cli("hash", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip().split()[-1]


def _before_after(vid: str) -> tuple[str, str]:
    tag = f"{vid}-lib"
    if vid == "lib-param":
        return _lib(tag, "x", "pending"), _lib(tag, "x", "approved")
    if vid == "ctl-real":
        return _lib(tag, "x", "x"), _lib(tag, "x", "x", status="pending_approval")
    return _lib(tag, "pending", "x"), _lib(tag, "approved", "x")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        before, after = _before_after(vid)
        lab.write(_where(vid), after)
        digest = _hash(lab, _where(vid))
        lab.write(_where(vid), before)
        pin = None if vid == "nest-nopin" else f'{{path: plans/{_where(vid)}, hash: "{digest}"}}'
        lab.write(vid, _parent(vid, pin))
    lab.commit("agent adds plans", AGENT)
    for vid in CASES:
        lab.write(_where(vid), _before_after(vid)[1])
    lab.commit("alice flips status lines", ALICE)
    diff = lab.git("show", "--format=", "-U0", "HEAD")
    lab.flip_diff = diff  # type: ignore[attr-defined]
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(vid, "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in CASES:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", ALICE[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    for vid in CASES:
        lab.approve(vid, ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r45-statusline", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_flips_are_one_line_each(lab: Lab) -> None:
    diff = lab.flip_diff  # type: ignore[attr-defined]
    assert diff.count("\n-  ") + diff.count("\n-      ") >= len(CASES), diff


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl-real")) == 1, lab.codes("ctl-real")
    assert len(lab.calls("ctl-real-lib")) == 1, lab.codes("ctl-real")


@pytest.mark.parametrize("vid", _p(ATTACKS))
def test_the_content_flipper_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.calls(f"{vid}-lib") == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(CASES, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]
