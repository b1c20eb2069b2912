"""Round 23, ``plangate check`` with votes already collected on the branch: does its
prediction for a pull request reach the controller's verdict?

Config: the bench's, ``identity_aliases: {plus_tags: ["*@example.com"]}``, and ``plans/two/**``
needs two approvals. The agent writes each plan; the controller freezes it. Then, per
variant, a first vote on main and a pull request (branch ``pr-<vid>``: the agent sets
``approved``) that CI checks with ``plangate check --base main --head pr-<vid> --as <merger>
--format json`` before the merger merges it ``--no-ff``; one controller pass at the end.

- ``revote``: Alice votes on main (``partial``); Alice merges.
- ``plus``: Alice votes on main; ``alice+ci@example.com`` (Alice by the alias rule) merges.
- ``spell``: Alice votes on main; ``"Alice"@Example.COM`` merges.
- ``other``: Bob votes on main; Alice merges (control: the quorum is met, ``start``).
- ``late-writer``: Alice votes on main; in the pull request Alice also commits a note into
  the plan's folder; Bob merges (her vote no longer counts: ``partial``).

Defence: ``check`` predicts ``start`` exactly when the controller started the plan.

Results: all held (``check`` predicted ``partial`` for every same-person merge and
``start`` for ``other``, as the controller decided).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = (
    'identity_aliases: {plus_tags: ["*@example.com"]}\n'
    'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
)
CASES = {
    "revote": (ALICE, ALICE),
    "plus": (ALICE, ("Alice CI", "alice+ci@example.com")),
    "spell": (ALICE, ("Alice", '"Alice"@Example.COM')),
    "other": (BOB, ALICE),
    "late-writer": (ALICE, BOB),
}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    g = lab.git
    for vid in CASES:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid, (first, _) in CASES.items():
        lab.approve(f"two/{vid}", first)
    lab.run()  # partial
    time.sleep(1.05)
    checks: dict[str, Any] = {}
    for vid, (_, merger) in CASES.items():
        slug = f"two/{vid}"
        g("checkout", "-q", "-b", f"pr-{vid}")
        if vid == "late-writer":
            lab.write(slug, "Alice: one more thought\n", filename="NOTES.md")
            lab.commit("alice notes", ALICE)
        lab.set_status(slug, "approved")
        lab.commit(f"agent sets approved {vid}", AGENT)
        g("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", merger[1], "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        rows = [p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/{slug}"]
        checks[vid] = rows[0] if rows else {"raw": result.stdout[-2000:]}
        g("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=merger)
    lab.run()
    (lab.root / "checks.json").write_text(json.dumps(checks))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-checkquorum", _build)


def test_the_control_runs(lab: Lab) -> None:
    assert len(lab.calls("other")) == 1, lab.codes("two/other")


@pytest.mark.parametrize("vid", list(CASES))
def test_check_predicts_the_controllers_verdict(lab: Lab, vid: str) -> None:
    slug = f"two/{vid}"
    check = json.loads((lab.root / "checks.json").read_text())[vid]
    assert len(lab.calls(vid)) == int(lab.started(slug)), lab.codes(slug)
    assert (check.get("outcome") == "start") == lab.started(slug), (check, lab.codes(slug))
    if vid != "other":
        assert not lab.started(slug), lab.codes(slug)
