"""Round 29, ``plangate check`` on a pull request that carries a withdrawal made on a branch
based before a policy change (the branch pulls main in with a merge, so the plan arrives
through its second parent): the status check predicts.

Config v1: the bench's approvers plus ``mallory@example.com``; the controller records v1;
``pre`` = main's tip. The operator removes Mallory and adds ``dave@example.com`` (v2); the
controller records v2. The agent writes ``d-new``, ``m-new`` (and ``ctl``); the controller
freezes them. Then, unmerged pull requests (each from ``pre``, ``git merge main``, then one
commit setting the plan ``rejected``):

- ``d-new``: Dave's (added in v2: the controller honours his rejection once merged);
- ``m-new``: Mallory's (removed in v2: the controller ignores it once merged).

``plangate check --as <its author>`` (fresh clone, the config) on each pull request: the
author merges it. Then each is merged ``--no-ff`` by its author, Alice approves every plan,
the controller passes.

Asserted: check's predicted ``status`` is the controller's: ``rejected`` for ``d-new`` (it
never runs), ``pending_approval`` for ``m-new`` (it runs once on Alice's approval); ``ctl``
runs once.

Results: the controller held (``d-new`` never ran, ``m-new`` and ``ctl`` ran once);
``check-d-new`` held. Reported as broken, then found to be the lab's question: the attacker
ran ``check --as alice`` while Mallory merged. A rejection a merge brings onto the first
parent is the merger's when she may withdraw (round 24): merged by Alice, the pull request
rejects the plan, and check said so. Asked about the merger who merges (``--as`` her), check
predicts ``pending_approval`` for ``m-new``, as the controller then holds.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

DAVE = ("Dave", "dave@example.com")
V0 = '["alice@example.com", "*@ops.example.com"]'
V1 = '["alice@example.com", "*@ops.example.com", "mallory@example.com"]'
V2 = '["alice@example.com", "*@ops.example.com", "dave@example.com"]'
WHO = {"d-new": DAVE, "m-new": MALLORY}
WANT = {"d-new": ("rejected", 0), "m-new": ("pending_approval", 1)}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.config.write_text(lab.config.read_text().replace(V0, V1))
    lab.run()  # records v1
    pre = lab.head()
    lab.config.write_text(lab.config.read_text().replace(V1, V2))
    lab.run()  # records v2
    for vid in [*WHO, "ctl"]:
        lab.write(vid, plan_text(f"cp-{vid}"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid, who in WHO.items():
        lab.git("checkout", "-q", "-b", f"pr-{vid}", pre)
        lab.git("merge", "--no-ff", "-q", "-m", "merge main", "main", who=who)
        lab.set_status(vid, "rejected")
        lab.commit(f"reject {vid}", who)
        lab.git("checkout", "-q", "main")
    clone = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    for vid in WHO:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main", "--head",
            f"origin/pr-{vid}", "--as", WHO[vid][1], "--format", "json", cwd=clone,
        )  # fmt: skip
        (root / f"check-{vid}.json").write_text(out.stdout)
        (root / f"check-{vid}.err").write_text(out.stderr)
    for vid, who in WHO.items():
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=who)
    lab.run()
    time.sleep(1.05)
    for vid in [*WHO, "ctl"]:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-checkpr", _build)


#: What round 29 reported (``check-m-new``): not a break, see the module's docstring.
FOUND: dict[str, pytest.MarkDecorator] = {}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p([*WHO, "ctl"]))
def test_controller_verdict(lab: Lab, vid: str) -> None:
    want = WANT.get(vid, ("", 1))[1]
    assert len(lab.calls(f"cp-{vid}")) == want, lab.codes(vid)


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in WHO]))
def test_check_predicts_the_status(lab: Lab, vid: str) -> None:
    text = (lab.root / f"{vid}.json").read_text()
    assert text.strip(), (lab.root / f"{vid}.err").read_text()[-2000:]
    report = json.loads(text)
    rows = report if isinstance(report, list) else report.get("plans", [])
    plan = vid.removeprefix("check-")
    row = [r for r in rows if r.get("plan") == f"plans/{plan}"]
    assert row and row[0].get("status") == WANT[plan][0], json.dumps(row)[:2000]
