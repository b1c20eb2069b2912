"""Round 82, agent surfaces: what a held twin SOURCE carries when its twin goes away (round
81's fix: a source in a folder that is one with another plan's or source's folder on some
checkout is never converted; the twin removed, does the source convert once, and as what?).

Lab (one, built once). Pass 1, the agent commits pairs of case twins, all held:
- ``ab``: ``plans/ab/PLAN.md`` and ``plans/AB/PLAN.md``; then Alice runs ``plangate approve
  plans/ab`` (a held source) and, that refused or not, commits ``status: approved`` into
  the held ``plans/ab/PLAN.md`` herself (an approval before any freeze);
- ``ac``: the agent's own ``plans/ac/PLAN.md`` written ``status: approved`` beside
  ``plans/AC/PLAN.md``;
- ``ad``: ``plans/ad/PLAN.md`` beside an unconvertible twin source ``plans/AD/PLAN.json``
  (``{"x": 1}``);
- ``ae``: ``plans/ae/PLAN.md`` beside ``plans/AE/PLAN.yml`` (the PLAN.yml is the plan; it
  is frozen; Alice approves ``AE`` and it runs; then the agent removes ``plans/AE``: the
  source may convert, as a new plan needing its own approval);
- ``af`` (control): ``plans/af/PLAN.md`` and ``plans/AF/PLAN.md``; the twin removed, Alice
  approves the converted plan and it runs once.
Pass 2 Alice's edits; pass 3 after the agent removes ``AB``, ``AC``, ``AD``, ``AE``, ``AF``;
then Alice ``plangate approve``s only ``af`` and ``AE`` (before the removal), two passes.

Variants: ``<s>:held`` (before the removal no convert commit for either twin), ``<s>:once``
(after the removal the source converted exactly once), ``<s>:pending`` (the converted plan
is ``pending_approval``: a status written into a held source is never carried),
``<s>:ran`` (``ab``/``ac``/``ad``/``ae``'s source tag never ran without an approval of the
converted plan; ``af`` and ``AE`` once), ``<s>:audit`` (the fresh clone's audit agrees).

Seen (round 82): no break. Held: every pair stayed unconverted while both folders existed;
``plangate approve`` of a held source and Alice's own ``status: approved`` in it were never
carried: after the removal each source converted exactly once as ``pending_approval`` with
the note "plan.status: status 'approved' not carried over", and nothing ran until an
approval of the converted plan (the control ``af`` then ran once; ``AE`` ran once before its
removal and the source beside it converted later as a new plan that never ran unapproved);
Alice's ``plangate approve plans/ab`` of the held source was refused ``E_PLAN_NOT_FROZEN``;
the fresh-clone audit agreed (``AE``'s run valid after its folder was removed).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

SHAPES = ["ab", "ac", "ad", "ae", "af"]


def _approve(lab: Lab, plan: str) -> str:
    done = subprocess.run(
        [PLANGATE, "approve", "--config", str(lab.config), plan],
        cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
    )  # fmt: skip
    lab.git("checkout", "-q", "--", ".")
    return f"{done.returncode} {done.stdout}{done.stderr}"[-800:]


def _converts(lab: Lab) -> list[str]:
    return lab.git(
        "log", "--format=%s", "--author=plangate", "--grep=^plangate: convert"
    ).splitlines()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("ab", plan_text("ab"), "PLAN.md")
    lab.write("AB", plan_text("ab-b"), "PLAN.md")
    lab.write("ac", plan_text("ac", status="approved"), "PLAN.md")
    lab.write("AC", plan_text("ac-b"), "PLAN.md")
    lab.write("ad", plan_text("ad"), "PLAN.md")
    lab.write("AD", '{"x": 1}\n', "PLAN.json")
    lab.write("ae", plan_text("ae"), "PLAN.md")
    lab.write("AE", plan_text("ae-b"))
    lab.write("af", plan_text("af"), "PLAN.md")
    lab.write("AF", plan_text("af-b"), "PLAN.md")
    lab.commit("agent: twin sources", AGENT)
    lab.run()
    got: dict[str, Any] = {"approve-ab": _approve(lab, "plans/ab")}
    got["approve-AE"] = _approve(lab, "plans/AE")
    lab.set_status("ab", "approved", "PLAN.md")
    lab.commit("alice: approved in the held source", ALICE)
    lab.run()
    got["before"] = _converts(lab)
    lab.git("rm", "-rq", *(f"plans/{s.upper()}" for s in SHAPES))
    lab.commit("agent: twins removed", AGENT)
    lab.run()
    lab.run()
    got["after-removal-calls"] = {t: len(lab.calls(t)) for t in ("ab", "ac", "ad", "ae", "af")}
    got["statuses"] = {
        s: str(
            (load_yaml(lab.git("show", f"HEAD:plans/{s}/PLAN.yml", check=False)) or {})
            .get("plan", {})
            .get("status")
        )
        for s in SHAPES
    }
    got["approve-af"] = _approve(lab, "plans/af")
    lab.run()
    lab.run()
    got["converts"] = _converts(lab)
    got["calls"] = {
        t: len(lab.calls(t)) for t in ("ab", "ab-b", "ac", "ac-b", "ad", "ae", "ae-b", "af", "af-b")
    }
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"])
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r82-surface-twinrelease", _build)


IDS = [f"{s}:{w}" for s in SHAPES for w in ("held", "once", "pending", "ran", "audit")]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_released_twin_source(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    shape, what = vid.split(":")
    calls = got["calls"]
    if what == "held":
        for folder in (shape, shape.upper()):
            assert f"plangate: convert plans/{folder}" not in got["before"], got["before"]
    elif what == "once":
        assert got["converts"].count(f"plangate: convert plans/{shape}") == 1, got["converts"]
        assert f"plangate: convert plans/{shape.upper()}" not in got["converts"], got["converts"]
    elif what == "pending":
        assert got["statuses"][shape] == "pending_approval", got["statuses"]
        assert got["after-removal-calls"][shape] == 0, got["after-removal-calls"]
    elif what == "ran":
        if shape == "af":
            assert calls["af"] == 1 and calls["af-b"] == 0, calls
        elif shape == "ae":
            assert calls["ae"] == 0 and calls["ae-b"] == 1, calls
        else:
            assert calls[shape] == 0 and calls.get(f"{shape}-b", 0) == 0, calls
    else:
        ran = [p for p, r in got["rows"].items() if r.get("status") == "completed"]
        ran = sorted([*ran, "plans/AE"])  # AE ran before the agent removed its folder
        assert got["valid"] == ran and got["audit"] == ran, (got["audit"], ran)
        assert f"plans/{shape}" not in ran or shape == "af", ran


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk82b", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r82rel-", dir="/tmp/atk82b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
