"""Round 29, who may reject: a withdrawal judged by "the policy the controller recorded in the
withdrawal's first-parent history" when a human commit has put an older policy back into
``.plangate/policy.json`` (``git revert`` of the controller's ``record policy`` commit).

Config v1: the bench's approvers plus ``mallory@example.com``. The agent writes the plans; the
controller freezes them and records v1. The operator removes Mallory (v2); the controller
passes (records v2). The agent runs ``git revert`` on that ``record policy`` commit (the file
says v1 again; the commit is the agent's). With no controller pass in between, Mallory (no
longer an approver, never an author):

- ``onmain``: sets the plan ``rejected`` on main;
- ``branch``: sets it ``rejected`` on a side branch from main's tip and merges it ``--no-ff``;
- ``ctl``: nobody withdraws.

The controller passes; ``check-*``: ``plangate check --as alice`` (fresh clone, the config) on a
pull request in which the agent sets every plan ``approved``; Alice approves every plan on
main; the controller passes twice; a fresh clone's audit.

Asserted: a human commit to the policy record gives nobody withdraw rights: every plan runs
once; check predicts ``start``; the audit flags no ``start-without-approval`` for them.

Results: held on every variant (each plan ran once, check predicted ``start``, the audit
flagged Mallory's rejections ``withdraw-not-allowed`` and the revert ``policy-changed``, and
no ``start-without-approval``).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

V0 = '["alice@example.com", "*@ops.example.com"]'
V1 = '["alice@example.com", "*@ops.example.com", "mallory@example.com"]'
PLANS = ["onmain", "branch", "ctl"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.config.write_text(lab.config.read_text().replace(V0, V1))
    for vid in PLANS:
        lab.write(vid, plan_text(f"pr-{vid}"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze, record v1
    lab.config.write_text(lab.config.read_text().replace(V1, V0))
    lab.run()  # records v2
    v2 = lab.git("log", "-1", "--format=%H", "--grep=record policy").strip()
    time.sleep(1.05)
    lab.git("revert", "--no-edit", v2, who=AGENT)
    lab.set_status("onmain", "rejected")
    lab.commit("reject onmain", MALLORY)
    lab.git("checkout", "-q", "-b", "side")
    lab.set_status("branch", "rejected")
    lab.commit("reject branch", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge side", "side", who=MALLORY)
    lab.run()
    lab.git("checkout", "-q", "-b", "pr")
    for vid in PLANS:
        lab.set_status(vid, "approved")
    lab.commit("agent asks", AGENT)
    lab.git("checkout", "-q", "main")
    clone = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr",
        "--as", "alice@example.com", "--format", "json", cwd=clone,
    )  # fmt: skip
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    time.sleep(1.05)
    for vid in PLANS:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-policyrevert", _build)


FOUND: dict[str, pytest.MarkDecorator] = {}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(PLANS))
def test_a_reverted_record_gives_no_withdraw_rights(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"pr-{vid}")) == 1, lab.codes(vid)


def _json(lab: Lab, name: str) -> Any:
    text = (lab.root / f"{name}.json").read_text()
    assert text.strip(), (lab.root / f"{name}.err").read_text()[-2000:]
    return json.loads(text)


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in PLANS]))
def test_check_predicts_the_start(lab: Lab, vid: str) -> None:
    report = _json(lab, "check")
    rows = report if isinstance(report, list) else report.get("plans", [])
    row = [r for r in rows if r.get("plan") == f"plans/{vid.removeprefix('check-')}"]
    assert row and row[0].get("outcome") == "start", json.dumps(row)[:2000]


@pytest.mark.parametrize("vid", _p([f"audit-{v}" for v in PLANS]))
def test_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    plan = f"plans/{vid.removeprefix('audit-')}"
    found = [
        f
        for f in _json(lab, "audit").get("findings", [])
        if f.get("plan") == plan and f.get("kind") == "start-without-approval"
    ]
    assert found == [], json.dumps(found)[:2000]
