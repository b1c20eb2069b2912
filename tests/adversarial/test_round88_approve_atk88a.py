"""Round 88, approval and policy (atk88a): the held twin's newest rules at their edges.

Lab (one, built once, seven ``run --once`` passes; the default policy: one of Alice or
``*@ops.example.com``). The agent commits one plan per variant (``plans/<slug>/PLAN.yml``,
frozen by the first pass), then a twin of each (a byte copy, or ``<slug>-v2``, another
version) in one commit; the next pass holds every plan ``E_PLAN_AMBIGUOUS``. While held the
humans decide IN THE TWIN; the agent's commit deletes every twin (the release); Bob approves
every plan (v2 written back first where a veto is probed). ``<slug>:ran`` counts the
recording tool's calls (of ``<slug>`` and ``<slug>-v2``), ``<slug>:audit`` asserts the fresh
clone's ``plangate audit`` calls valid exactly the runs the controller made and the expected
ones, ``<slug>:held`` that the twin did hold the plan (the attack is no vacuous one).

Alice's ``rejected`` set while held in a twin of each spelling the docs name (a byte copy:
the held version); nothing may run after the release and Bob's approval:

- ``kc``: a case twin folder ``plans/KC/PLAN.yml`` (round 87's ``tc``, the reference).
- ``ku``: ``PLANS/ku/PLAN.yml`` (the plans folder in capitals); ``kd``: ``plans./kd/PLAN.yml``;
  ``ks``: ``plans /ks/PLAN.yml`` (a trailing space).
- ``kb``: a file ``plans/kb\\PLAN.yml`` (a backslash: ``plans/kb/PLAN.yml`` on Windows).
- ``kf``: a twin file ``plans/kf/plan.yml``; ``kz``: ``plans/kz/PLAN<U+200C>.yml`` (an HFS+
  ignorable code point); ``kn``: a twin folder ``plans/kn<U+200C>/PLAN.yml``;
  ``kt``: ``plans/kt./PLAN.yml``; ``keightlong``: the 8.3 name ``plans/KEIGHT~1/PLAN.yml``.
- ``hu``: ALICE's own twin ``PLANS/hu/PLAN.yml`` committed ``rejected`` (the commit that makes
  the hold); ``hc``: the same as ``plans/hc/PLAN.yaml``.
- ``wu``: the whole hold between two passes: the agent's ``PLANS/wu/PLAN.yml``, Alice's
  ``rejected`` in it, the agent deletes it, Bob approves; ``wp``: the same with ``PLAN.yaml``.

Vetoes by hash (Alice rejects v2 in the twin while held; v2 brought back, Bob approves it):

- ``vu``: v2 in ``PLANS/vu/PLAN.yml``; ``vb``: in ``plans/vb\\PLAN.yml``; ``vc``: in
  ``plans/VC/PLAN.yml``; ``vr``: in ``plans/vr/PLAN.yaml``, the release itself deleting the
  twin and writing v2 into ``PLAN.yml``.

Merged while held (Alice's branch, forked after the twins, merged ``--no-ff`` by MALLORY):

- ``mt``: her ``rejected`` in the byte-copy twin ``PLAN.yaml``; ``mu``: in ``PLANS/mu/PLAN.yml``;
  ``mv``: in a twin ``PLAN.yaml`` of v2, v2 brought back after the release.

The bound of 64 held statuses (Mallory's 70 statuses while held, the last ``approved``):

- ``cw``: Alice's ``rejected`` in the twin ``PLAN.yaml``, the flood in ``PLAN.yml``; ``cu``:
  hers in ``PLANS/cu/PLAN.yml``; ``cm``: hers on a merged branch (in ``PLAN.yml``); ``cx``:
  hers in the twin ``PLAN.yaml`` and the flood in that SAME twin, the release deleting
  ``PLAN.yml`` (the plan left in the flooded twin); ``sr``: Alice's approval open when the
  twin (v2) came, her take-back while held, then Mallory's ``rejected``/``approved`` in turn
  (70, the last ``approved``): her statuses ``rejected`` are no allowed withdrawal.

Release by overwrite: the agent's (``mvf``) or MALLORY's (``mvm``) twin ``PLAN.yaml``, a byte
copy committed ``approved``; ALICE releases with ``git mv -f PLAN.yaml PLAN.yml``. Nobody
allowed ever set ``approved``: nothing may run.

Controls: ``ok1`` (the agent's twin, deleted; Bob approves: runs once), ``ok2`` (MALLORY's
``rejected`` in ``PLANS/ok2/PLAN.yml``: ignored, runs once), ``ok4`` (Mallory's ``rejected`` of
v2 in the twin; v2 brought back, Bob approves: runs once).

Seen (round 88): 32 ids broke, 3 classes; the fresh-clone audit agreed with the controller
each time (it called every run valid).

1. **A status set in a twin of another spelling than ``PLAN.yaml`` or a case folder is lost
   at the release** (``ku``, ``kd``, ``ks``, ``kb``, ``kf``, ``kz``, ``kn``, ``hu``, ``wu``,
   ``mu``, ``cu``, ``vu``, ``vb`` ``:{ran,audit}``): each plan was held (``E_PLAN_AMBIGUOUS:
   the folder holds both PLAN.yml and PLANS/ku/PLAN.yml``, ``... and plans/kb\\PLAN.yml``,
   ``... and plan.yml``, ``... and PLAN<U+200C>.yml``, ``plans/kn\\u200c/PLAN.yml is this
   plan's file on a case-insensitive, HFS+ or NTFS checkout``), Alice's ``rejected`` in the
   twin appears nowhere in the row, and after the agent deleted the twin Bob's approval ran it:
   ``a98899e7a909 approval request (approve) by bob@ops.example.com``, ``plangate: start
   plans/ku``, ``complete``. So with a merged branch's (``mu``), with the hold never seen by a
   pass (``wu``), with Alice's own twin made ``rejected`` (``hu``), and for another version's
   veto (``vu``, ``vb``: v2 brought back ran). The same in ``PLAN.yaml`` or ``plans/KC/``
   (``kc``, ``hc``, ``wp``, ``cw``, ``vc``), ``plans/kt./`` and ``plans/KEIGHT~1/`` held:
   ``0fa2de6ced4f alice@example.com set status rejected``, later statuses
   ``E_ILLEGAL_TRANSITION ... (from rejected) ...; ignored``.
2. **A merged branch's withdrawal of ANOTHER version, set in the twin file, vetoes nothing**
   (``mv`` ``:{ran,audit}``): Alice's ``rejected`` of v2 in ``plans/mv/PLAN.yaml`` on her
   branch, merged by Mallory while held; v2 committed as ``PLAN.yml`` after the release and
   approved by Bob ran (``436de2d46415 plangate: freeze plans/mv``, ``approval request
   (approve) by bob@ops.example.com``, ``start``). The same withdrawal of the held version
   (``mt``) counted (``alice@example.com set status rejected on a merged branch``), and a v2
   withdrawn by a plain commit in ``plans/VC/`` stayed vetoed (``vc``: ``plangate: refuse``).
3. **A release that overwrites the plan file with the twin credits the twin's status to the
   releaser** (``mvf``, ``mvm`` ``:{ran,audit}``): the twin's approval was refused
   (``approval request (approve) by agent@example.com, made while the plan was held
   E_PLAN_AMBIGUOUS``, then ``approval (approve) lapsed: 403475fa5590 set status approved
   before the controller acted on it``) and Alice's ``git mv -f`` became
   ``403475fa5590 approval request (approve) by alice@example.com``, ``plangate: start
   plans/mvf``, ``complete``. Alice never set ``approved`` (round 87's ``tz``, where she
   deleted ``PLAN.yml`` instead, holds).

Held: the case folder, ``plans/kt./``, the 8.3 name, ``PLAN.yaml`` twins (``kc``, ``kt``,
``keightlong``, ``hc``, ``wp``, ``vc``); ``vr`` (the release writing the vetoed v2: ``refuse``);
``mt``, ``cm`` (merged withdrawals of the held version, ``cm`` past 70 statuses:
``approval (approve) lapsed: ... set status rejected before the controller acted on it``);
``cw`` and ``cx`` (the flood in the twin itself: ``E_ILLEGAL_TRANSITION: mallory@example.com
set status approved (from rejected) ...; ignored``); ``sr`` (Mallory's approval ``made while
the plan was held E_PLAN_AMBIGUOUS``, nothing ran); the controls ran once.

Fixed (2026-12-02, r88held): the hold and its held-decision bookkeeping now read one rule of
which files are the plan's (``Lifecycle._claim_sets``: the folder's claims, a twin folder's, a
split name's or another plans folder spelling's): a change in any of them is seen by every held
plan whose file it is (``_held_owners``, ``_held_elsewhere``; a merged branch's too,
``_side_withdrawal``), so Alice's ``rejected`` in ``PLANS/``, ``plans./``, ``plans /``,
``plans/x\\PLAN.yml``, ``plan.yml``, ``PLAN<U+200C>.yml`` or ``plans/x<U+200C>/`` is kept and
judged at the release (class 1). A merged withdrawal of another version while held vetoes that
version by hash when its maker may withdraw it (``_held_withdrawal``: class 2). A release that
leaves the plan file holding what a twin held when it was set while held is judged as the
twin's commit (``_held_left_at``), and the plan file's own change in the releasing commit is
not judged a second time as the releaser's (``_release_judged``: class 3). All 91 ids pass.

Should (docs/approvals.md): "While a twin holds the plan, a status change in ANY of its plan
files, the file the hold found, the twin file beside it ... or the plan file of a folder one
with it on some checkout, is a status set while held: kept in ``held_from.decisions`` ... and
judged at the release as its own commit"; "A withdrawal set in a file of another version, or
in a plan the release removes altogether, vetoes the version it withdrew by hash when its
maker may withdraw it (so it does not run when brought back), as a merged branch's does";
"The release's own change (which file it leaves) is the releaser's; the status of the file it
leaves is judged as the commit that set it while held, never re-attributed to the releaser".
docs/plan-format.md: another spelling of the plans folder (``PLANS/``, ``plans./``,
``plans /``) and a split file name ``plans/fy\\PLAN.yml`` claim "the plan file's place ...
exactly as" a twin does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

#: slug -> the twin path of ``plans/<slug>`` (repo-relative) Alice decides in while held
KINDS = {
    "kc": "plans/KC/PLAN.yml",
    "ku": "PLANS/ku/PLAN.yml",
    "kd": "plans./kd/PLAN.yml",
    "ks": "plans /ks/PLAN.yml",
    "kb": "plans/kb\\PLAN.yml",
    "kf": "plans/kf/plan.yml",
    "kz": "plans/kz/PLAN\u200c.yml",
    "kn": "plans/kn\u200c/PLAN.yml",
    "kt": "plans/kt./PLAN.yml",
    "keightlong": "plans/KEIGHT~1/PLAN.yml",
}
#: another version (v2) in the twin, rejected by Alice while held, brought back later
VETO = {
    "vu": "PLANS/vu/PLAN.yml",
    "vb": "plans/vb\\PLAN.yml",
    "vc": "plans/VC/PLAN.yml",
    "vr": "plans/vr/PLAN.yaml",
}
MERGE = {
    "mt": "plans/mt/PLAN.yaml",
    "mu": "PLANS/mu/PLAN.yml",
    "mv": "plans/mv/PLAN.yaml",
}
CAP = {
    "cw": "plans/cw/PLAN.yaml",
    "cu": "PLANS/cu/PLAN.yml",
    "cm": "plans/cm/PLAN.yaml",
    "cx": "plans/cx/PLAN.yaml",
}
#: the file each flood of Mallory's statuses is set in, and the two statuses it alternates
FLOODS = {
    "cw": ("plans/cw/PLAN.yml", "approved", "pending_approval"),
    "cu": ("plans/cu/PLAN.yml", "approved", "pending_approval"),
    "cm": ("plans/cm/PLAN.yml", "approved", "pending_approval"),
    "cx": ("plans/cx/PLAN.yaml", "approved", "pending_approval"),
    "sr": ("plans/sr/PLAN.yml", "rejected", "approved"),
}
MAKER = {"hc": "plans/hc/PLAN.yaml", "hu": "PLANS/hu/PLAN.yml"}
MOVE = {"mvf": AGENT, "mvm": MALLORY}
CTRL = {
    "ok1": "plans/ok1/PLAN.yaml",
    "ok2": "PLANS/ok2/PLAN.yml",
    "ok4": "plans/ok4/PLAN.yaml",
    "sr": "plans/sr/PLAN.yaml",
}
TWINS = {**KINDS, **VETO, **MERGE, **CAP, **MAKER, **CTRL}
V2 = {"vu", "vb", "vc", "vr", "mv", "ok4", "sr"}
WINDOW = {"wp": "plans/wp/PLAN.yaml", "wu": "PLANS/wu/PLAN.yml"}
SLUGS = [*TWINS, *MOVE, *WINDOW]
#: runs expected (of the version Bob approved last)
RUNS = {"ok1": 1, "ok2": 1, "ok4": 1}
FLOOD = 70


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _set(lab: Lab, rel: str, status: str) -> None:
    path = lab.repo / rel
    lines = path.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        if line.startswith("  status:") and i < 6:
            lines[i] = f"  status: {status}"
            break
    path.write_text("\n".join(lines), encoding="utf-8")


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _brief(row: dict[str, Any]) -> Any:
    return (
        row.get("status"),
        row.get("approved_by"),
        row.get("code"),
        (row.get("notes") or [])[-3:],
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    lab.set_status("sr", "approved")
    lab.commit("alice: approve sr", ALICE)

    # -- twins (the agent's, a byte copy; v2 for the veto variants)
    for slug, rel in TWINS.items():
        if slug in MAKER:
            continue
        _put(lab, rel, plan_text(f"{slug}-v2") if slug in V2 else lab.read(slug))
    lab.commit("agent: twins", AGENT)
    for slug, who in MOVE.items():  # the approved twins: each by its maker
        _put(lab, f"plans/{slug}/PLAN.yaml", lab.read(slug))
        _set(lab, f"plans/{slug}/PLAN.yaml", "approved")
        lab.commit(f"{who[0].lower()}: {slug} twin approved", who)
    # the hold made by Alice's own twin, committed rejected
    for slug, rel in MAKER.items():
        _put(lab, rel, lab.read(slug))
        _set(lab, rel, "rejected")
    lab.commit("alice: twins, rejected", ALICE)
    # Alice's side branch (withdrawals in the twins, merged by Mallory while held)
    lab.git("checkout", "-q", "-b", "alice-side")
    for rel in MERGE.values():
        _set(lab, rel, "rejected")
    lab.set_status("cm", "rejected")
    lab.commit("alice: reject on my branch", ALICE)
    lab.git("checkout", "-q", "main")
    lab.run()  # P2: held
    got["held"] = _rows(lab)

    # -- while held
    for slug, rel in {**KINDS, **VETO, **CAP}.items():
        if slug != "cm":
            _set(lab, rel, "rejected")
    lab.commit("alice: reject in the twins", ALICE)
    _set(lab, CTRL["ok2"], "rejected")
    _set(lab, CTRL["ok4"], "rejected")
    lab.commit("mallory: reject in the twins", MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice-side", "alice-side", who=MALLORY)
    lab.set_status("sr", "pending_approval")
    lab.commit("alice: take sr back", ALICE)
    for step in range(FLOOD):
        for rel, one, two in FLOODS.values():
            _set(lab, rel, one if step % 2 == 0 else two)
        lab.commit(f"mallory: flood {step}", MALLORY)
    for rel, _one, _two in FLOODS.values():
        _set(lab, rel, "approved")
    lab.commit("mallory: flood last", MALLORY)
    # wp, wu: a whole hold between two passes
    for slug, rel in WINDOW.items():
        _put(lab, rel, lab.read(slug))
    lab.commit("agent: window twins", AGENT)
    for rel in WINDOW.values():
        _set(lab, rel, "rejected")
    lab.commit("alice: reject the window twins", ALICE)
    for rel in WINDOW.values():
        (lab.repo / rel).unlink()
    lab.commit("agent: window twins gone", AGENT)
    for slug in WINDOW:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve the window plans", BOB)
    lab.run()  # P3
    got["during"] = _rows(lab)

    # -- releases
    for slug, rel in TWINS.items():
        (lab.repo / (f"plans/{slug}/PLAN.yml" if slug == "cx" else rel)).unlink()
    lab.write("vr", plan_text("vr-v2"))  # the release replaces the plan with the vetoed v2
    lab.commit("agent: twins gone", AGENT)
    for slug in MOVE:
        lab.git("mv", "-f", f"plans/{slug}/PLAN.yaml", f"plans/{slug}/PLAN.yml")
    lab.commit("alice: keep the yaml", ALICE)
    lab.run()  # P4
    got["released"] = _rows(lab)

    # -- after the release: the vetoed v2 back; Bob approves
    for slug in V2 - {"vr"}:
        lab.write(slug, plan_text(f"{slug}-v2"))
    lab.commit("agent: v2", AGENT)
    lab.run()  # P5: v2 frozen
    for slug in SLUGS:
        if slug not in MOVE and slug not in WINDOW and slug != "sr":
            lab.set_status(slug, "approved", "PLAN.yaml" if slug == "cx" else "PLAN.yml")
    lab.commit("bob: approve", BOB)
    lab.run()  # P6
    lab.run()  # P7
    got["calls"] = {s: len(lab.calls(s)) + len(lab.calls(f"{s}-v2")) for s in SLUGS}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r88-approve-atk88a", _build)


HELD = [s for s in SLUGS if s not in WINDOW]
IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + [f"{s}:held" for s in HELD]
#: Fixed (2026-12-02, r88held): no id is expected to fail.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round88_atk88a(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "held":  # the twin held the plan (the attack is no vacuous one)
        held = got["held"].get(plan, {})
        assert "E_PLAN_AMBIGUOUS" in json.dumps(held, ensure_ascii=False), _brief(held)
        return
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk88a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r88a-", dir="/tmp/atk88a"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("held", "during", "released", "rows"):
        got[key] = {p: _brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
