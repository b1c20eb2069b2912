"""Round 32, hostile folder names: plan folders named like git pathspec globs and magic.

git reads a path given after ``--`` as a pathspec: ``plans/[h]`` also matches ``plans/h``,
``plans/*`` every plan, ``plans/h?`` any two-letter name, unless the command is told to read
paths literally. One lab holds ``plans/h`` and the look-alikes ``plans/[h]``, ``plans/*``,
``plans/h?`` and ``plans/:(glob)*`` (all by the agent, all frozen in one pass). Then:

- ``alice-approves-h``: Alice approves ``plans/h`` only; one pass.
- ``bob-approves-bracket``: Bob approves ``plans/[h]`` only; one pass.

Asserted per plan: exactly the approved plans ran, each once (``rec`` log), and every other
look-alike is still ``pending_approval``; the fresh-clone ``plangate audit --json`` agrees
(exit 0, exactly those two runs, no findings). Held (round 32).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

NAMES = ["h", "[h]", "*", "h?", ":(glob)*"]


def _tag(name: str) -> str:
    return "t-" + name


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for name in NAMES:
        lab.write(name, plan_text(_tag(name)))
    lab.commit("plans with pathspec-like names")
    lab.run()
    lab.approve("h", ALICE)
    lab.run()
    lab.after_alice = {n: len(lab.calls(_tag(n))) for n in NAMES}  # type: ignore[attr-defined]
    lab.approve("[h]", BOB)
    lab.run()
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], env=lab.env(), check=True)
    result = lab.cli("audit", "--json", cwd=clone)
    lab.audit_out = (result.returncode, result.stdout, result.stderr)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r32-runs-globnames", _build)


def test_alice_approves_h(lab: Lab) -> None:
    assert lab.after_alice == {"h": 1, "[h]": 0, "*": 0, "h?": 0, ":(glob)*": 0}  # type: ignore[attr-defined]


def test_bob_approves_bracket(lab: Lab) -> None:
    ran = {n: len(lab.calls(_tag(n))) for n in NAMES}
    assert ran == {"h": 1, "[h]": 1, "*": 0, "h?": 0, ":(glob)*": 0}
    status = lab.status()
    assert status["plans/h"]["status"] == "completed"
    assert status["plans/[h]"]["status"] == "completed"
    for name in ("*", "h?", ":(glob)*"):
        assert status[f"plans/{name}"]["status"] == "pending_approval", name


def test_audit_agrees(lab: Lab) -> None:
    import json

    code, out, err = lab.audit_out  # type: ignore[attr-defined]
    assert "Traceback" not in err
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and not report["findings"]
    assert sorted(e["plan"] for e in report["executions"]) == ["plans/[h]", "plans/h"]
