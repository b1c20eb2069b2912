"""Round 84 (r84heldwd), variants of "a status set while held is credited to the release's
committer" the attacker did not try: the release is made by someone whose rights differ from
the withdrawal's maker's, or by a merge.

Lab (one, built once, a few ``run --once`` passes). The agent commits its plans (frozen by
the first pass), then a twin ``plans/<SLUG>/PLAN.yml`` of each; the status is set while held;
the twin goes; one approval follows (``<slug>:ran`` what ran, ``<slug>:audit`` the fresh
clone's ``plangate audit`` calls valid exactly the runs the controller made):
- ``rb``: Mallory (no approver, no author) sets ``rejected`` while held, BOB (an allowed
  approver) removes the twin, Alice approves: Bob's right to withdraw is not lent to
  Mallory's rejection (ignored ``E_APPROVER_NOT_ALLOWED`` by mallory), the plan runs once.
- ``rx``: ALICE sets ``rejected`` while held; the agent removes the twin on a branch that
  MALLORY merges ``--no-ff`` (her merge is the release); Bob approves: Alice's withdrawal
  stands, nothing runs.
- ``gm``: a gated plan paused at its gate; Mallory sets ``aborted`` while held, ALICE removes
  the twin, Bob approves the gate: Mallory's abort counts for nothing, action 2 runs once.
- ``ok`` (control): no twin, Alice approves: runs once.

Seen (round 84, r84heldwd): held after the fix (a status set while held is judged, at the
release, as the commit that set it, read again by its sha).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, clone_audit, plan_text
from test_round2_execution_kit import shared

PLAIN = ["rb", "rx", "ok"]
GATED = ["gm"]
RUNS = {"rb": 1, "ok": 1, "gm": 1}


def _gated(v: str) -> str:
    return plan_text(v) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{v}2"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in PLAIN:
        lab.write(slug, plan_text(slug))
    for slug in GATED:
        lab.write(slug, _gated(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    lab.set_status("gm", "approved")
    lab.commit("alice: approve gm", ALICE)
    lab.run()
    for slug in ("rb", "rx", "gm"):
        lab.write(slug.upper(), plan_text(f"{slug}-twin"))
    lab.commit("agent: twins", AGENT)
    lab.run()
    lab.set_status("rb", "rejected")
    lab.commit("mallory: reject rb while held", MALLORY)
    lab.set_status("rx", "rejected")
    lab.commit("alice: reject rx while held", ALICE)
    lab.set_status("gm", "aborted")
    lab.commit("mallory: abort gm while held", MALLORY)
    lab.run()
    lab.git("rm", "-rq", "plans/RB")
    lab.commit("bob: twin RB gone", BOB)
    lab.git("checkout", "-q", "-b", "rxb")
    lab.git("rm", "-rq", "plans/RX")
    lab.commit("agent: twin RX gone (branch)", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge rxb", "rxb", who=MALLORY)
    lab.git("rm", "-rq", "plans/GM")
    lab.commit("alice: twin GM gone", ALICE)
    lab.run()
    lab.set_status("rb", "approved")
    lab.set_status("ok", "approved")
    lab.commit("alice: approve", ALICE)
    lab.set_status("rx", "approved")
    lab.set_status("gm", "approved")
    lab.commit("bob: approve rx and gm's gate", BOB)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in PLAIN}
    got["calls"].update({s: len(lab.calls(f"{s}2")) for s in GATED})
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-heldwithdraw", _build)


IDS = [f"{s}:{w}" for s in [*PLAIN, *GATED] for w in ("ran", "audit")] + ["rb:who", "rx:who"]


@pytest.mark.parametrize("vid", IDS)
def test_round84_heldwithdraw(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    row = got["rows"].get(f"plans/{slug}", {})
    notes = " ".join(str(n) for n in row.get("notes") or [])
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        plan = f"plans/{slug}"
        if slug in GATED:  # started on Alice's first approval
            assert plan in got["valid"], got["valid"]
            return
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), got["valid"]
    elif what == "who":  # the withdrawal is judged as its maker's, never the releaser's
        maker = {"rb": "mallory@example.com", "rx": "alice@example.com"}[slug]
        releaser = {"rb": "bob@ops.example.com", "rx": "mallory@example.com"}[slug]
        assert f"{releaser} set status rejected" not in notes, row
        assert maker in notes, row
    else:
        assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"], row.get("notes"))
