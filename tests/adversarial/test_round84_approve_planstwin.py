"""Round 84, approval and policy: a twin PLAN FILE through a spelling of the plans folder
itself (what Alice sees on her checkout is not what runs), and an abort set while a paused
run is held (r83gatetwin's release crediting).

Lab (one, built once, a few ``run --once`` passes).

Twin plan files (``<slug>:ran`` Alice's approval, made after Mallory's twin came, runs
nothing; ``<slug>:held`` the row names ``E_PLAN_AMBIGUOUS``; ``<slug>:audit`` the fresh clone's
``plangate audit`` calls valid exactly the runs the controller made): the agent's
``plans/<slug>/PLAN.yml`` is frozen; Mallory commits another plan's text (tag
``<slug>-twin``) at a path that IS ``plans/<slug>/PLAN.yml`` on some checkout; Alice approves
``plans/<slug>``:
- ``dt``: ``plans./dt/PLAN.yml`` (Windows drops the trailing dot).
- ``bl``: ``plans /bl/PLAN.yml`` (Windows drops the trailing blank).
- ``kc``: ``ｐｌａｎｓ/kc/PLAN.yml`` (NFKC).
- ``mc``: ``Plans/mc/PLAN.yml`` (case).
- ``uc`` (reference): ``PLANS/uc/PLAN.yml`` (case; round 83 reads ``PLANS/``).
- ``rf``: a root FILE ``plans\\rf\\PLAN.yml`` (git for Windows).
- ``ok`` (control): no twin: runs once.

Abort while held (``<slug>:ran`` action 2 ran once after Alice's gate approval):
- ``ga``: a gated plan paused at its gate; the agent commits the twin ``plans/GA/PLAN.yml``;
  Mallory (no approver, no author) sets ``aborted`` while held; the agent removes the twin;
  Alice approves the gate: Mallory's abort counts for nothing ("Withdrawals (aborted or
  rejected, by an allowed approver or an author of the plan)").
- ``gc``: ALICE sets ``aborted`` while held, Mallory removes the twin, Bob approves the gate:
  her abort must not be lost to the release (action 2 never runs).
- ``gb`` (control): the same with no twin: her abort is ignored, the gate approval runs.

Seen (round 84): 12 ids broke, 2 classes. Class 2 fixed (2026-12-01, r84plansdir): another
spelling of the plans folder (``names.same_path``, ``names.spelled_under``) is read by the
history walk and ``git log``, and a plan file below it is a twin claim holding the plan at the
same path (``names.split_files`` walks every spelling), never a plan of its own. ``kc``
(fullwidth: one folder with ``plans`` on no checkout, ``names.fold`` has no NFKC) is decided
by design: no twin, Alice's approval runs ``plans/kc`` once. Added: ``sn``
(``PLANS~1/sn/PLAN.yml``), ``cd`` (``Plans./cd/PLAN.yml``), ``el`` (``plans. /el/PLAN.yml``
committed before the plan).

1. **A status set while held is credited to the release's committer (abort)** (``ga:ran``):
   ``ga`` paused at its gate; the agent's twin ``plans/GA/PLAN.yml``; Mallory sets
   ``aborted`` while held; the agent removes the twin; the row's notes read ``abort requested
   by agent@example.com`` then ``plangate: abort plans/ga``; Alice's gate approval is
   ``E_ILLEGAL_TRANSITION ... (from aborted); ignored`` and action 2 never runs. Without a
   hold (``gb``) Mallory's abort is ignored and the gate approval runs action 2 once. Should
   (docs/approvals.md): "Withdrawals (aborted or rejected, by an allowed approver or an author
   of the plan)"; a status set while held is "refused E_PLAN_AMBIGUOUS with by: its own
   author (never the committer of the release)". The other way round (``gc:ran``): ALICE sets
   ``aborted`` of the paused run while held, MALLORY removes the twin: "E_APPROVER_NOT_ALLOWED:
   mallory@example.com set status aborted in 07ba73b3cd39 ... ignored", and Bob's gate
   approval runs action 2 (``gc2`` ran once; the run ``completed``): an allowed approver's
   abort lost.
   Fixed (2026-12-01, r84heldwd): at the release a status set while held is judged as the
   commit that set it, read again by its sha (``Lifecycle._held_decision`` keeps every kind,
   ``_held_maker``), never as the releasing commit: a withdrawal counts for its maker when
   she may withdraw, is ignored ``E_APPROVER_NOT_ALLOWED`` by her when not.
2. **A plans-folder twin plan file holds nothing** (``dt``, ``bl``, ``kc``, ``mc``, ``uc``
   ``:{ran,held}``, 10 ids; against docs/plan-format.md's explicit rule "The plans folder
   itself is compared as written (a Plans/ beside plans/ holds no plan: it is no plans
   folder)", so the lead may rule it by design): Mallory's ``PLANS/uc/PLAN.yml`` (or
   ``Plans/``, ``plans./``, ``plans /``, NFKC) beside the agent's frozen ``plans/uc``: no
   ``E_PLAN_AMBIGUOUS``, Alice's approval runs ``plans/uc`` once. On a Mac or Windows checkout
   both are one file, the one git writes last, so Alice may have read Mallory's text:
   docs/plan-format.md's own reason for the twin rule ("a reviewer reading
   plans/FCASE/PLAN.yml on her Mac could read the twin's plan while the base ran on her
   approval"). The root file ``plans\\rf\\PLAN.yml`` IS held (``rf``), and round 83 reads
   ``PLANS/`` for writers, so the rule is not one.

Held: ``rf`` (E_PLAN_AMBIGUOUS, nothing ran), ``ok``, ``gb``; no twin's action ever ran; the
audit agreed with the controller on every plan.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

TWINS = {
    "dt": "plans./dt/PLAN.yml",
    "bl": "plans /bl/PLAN.yml",
    "kc": "\uff50\uff4c\uff41\uff4e\uff53/kc/PLAN.yml",
    "mc": "Plans/mc/PLAN.yml",
    "uc": "PLANS/uc/PLAN.yml",
    "rf": "plans\\rf\\PLAN.yml",
    "sn": "PLANS~1/sn/PLAN.yml",
    "cd": "Plans./cd/PLAN.yml",
}
#: twins committed BEFORE the agent's plan (its plan comes beside them: round 84 variant)
EARLY = {"el": "plans. /el/PLAN.yml"}
GATED = ["ga", "gb", "gc"]


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _gated(v: str) -> str:
    return plan_text(v) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{v}2"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug, rel in EARLY.items():
        _put(lab, rel, plan_text(f"{slug}-twin"))
    lab.commit("mallory: early twins", MALLORY)
    for slug in [*TWINS, *EARLY, "ok"]:
        lab.write(slug, plan_text(slug))
    for slug in GATED:
        lab.write(slug, _gated(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in GATED:
        lab.set_status(slug, "approved")
    lab.commit("alice: approve the gated plans", ALICE)
    lab.run()
    got["paused"] = {s: lab.status().get(f"plans/{s}", {}).get("status") for s in GATED}
    for slug, rel in TWINS.items():
        _put(lab, rel, plan_text(f"{slug}-twin"))
    lab.commit("mallory: twins", MALLORY)
    lab.write("GA", plan_text("ga-twin"))
    lab.write("GC", plan_text("gc-twin"))
    lab.commit("agent: twins GA, GC", AGENT)
    lab.run()
    got["held"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    for slug in ("ga", "gb"):
        lab.set_status(slug, "aborted")
    lab.commit("mallory: abort while held", MALLORY)
    lab.set_status("gc", "aborted")
    lab.commit("alice: abort gc while held", ALICE)
    lab.run()
    lab.git("rm", "-rq", "plans/GA")
    lab.commit("agent: twin GA gone", AGENT)
    lab.git("rm", "-rq", "plans/GC")
    lab.commit("mallory: twin GC gone", MALLORY)
    lab.run()
    got["released"] = {s: lab.status().get(f"plans/{s}", {}).get("status") for s in GATED}
    for slug in [*TWINS, *EARLY, "ok", "ga", "gb"]:
        lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.set_status("gc", "approved")
    lab.commit("bob: approve gc's gate", BOB)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in [*TWINS, *EARLY, "ok"]}
    got["calls"].update({s: len(lab.calls(f"{s}2")) for s in GATED})
    got["twin_calls"] = {s: len(lab.calls(f"{s}-twin")) for s in [*TWINS, *EARLY, *GATED]}
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an %s", "--name-status")[-4000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-approve-planstwin", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 84 approve: {cls}: {what}"
    )


IDS = (
    [f"{s}:{w}" for s in [*TWINS, *EARLY] for w in ("ran", "held", "audit")]
    + ["ok:ran", "ok:audit"]
    + [f"{s}:{w}" for s in GATED for w in ("ran", "audit")]
)
_T = "a plans-folder twin plan file holds nothing"
_TW = {
    "dt": "plans./dt/PLAN.yml",
    "bl": "'plans /bl/PLAN.yml'",
    "kc": "the NFKC spelling of plans/kc/PLAN.yml",
    "mc": "Plans/mc/PLAN.yml",
    "uc": "PLANS/uc/PLAN.yml",
}
# kc (decided by the lead, 2026-12-01): the fullwidth ``ｐｌａｎｓ`` is one folder with
# ``plans`` on no checkout (names.fold has no compatibility mapping, as for ``plans/ｘ``
# beside ``plans/x``), so ``ｐｌａｎｓ/kc/PLAN.yml`` is no plan file and no twin: nothing is
# held, Alice's approval runs ``plans/kc`` once, and the fullwidth text never runs.
DECIDED = ("kc",)
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round84_planstwin(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    calls = got["calls"]
    row = got["rows"].get(f"plans/{slug}", {})
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        plan = f"plans/{slug}"
        if slug in GATED:  # both started on Alice's first approval
            assert plan in got["valid"], got["valid"]
            return
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        return
    if what == "held" and slug in DECIDED:
        held = got["held"].get(f"plans/{slug}", {})
        assert "E_PLAN_AMBIGUOUS" not in json.dumps(held, ensure_ascii=False), held
        return
    if what == "held":
        held = got["held"].get(f"plans/{slug}", {})
        assert "E_PLAN_AMBIGUOUS" in json.dumps(held, ensure_ascii=False), held
        return
    if slug == "gc":
        assert calls[slug] == 0, (calls, row.get("status"), row.get("notes"))
    elif slug in ("ok", *GATED, *DECIDED):
        assert calls[slug] == 1, (calls, row.get("status"), row.get("notes"))
    else:
        assert calls[slug] == 0, (calls[slug], row.get("status"), row.get("notes"))
    assert sum(got["twin_calls"].values()) == 0, got["twin_calls"]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk84a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r84pt-", dir="/tmp/atk84a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
