"""Round 89, approval (atk89d): held plans and twins at the edges of r88held.

Lab (one, built once, eight ``run --once`` passes; the default policy: one of Alice or
``*@ops.example.com``). The agent commits one plan per variant (the ``g*`` plans gated: action
2 ``requires_approval``; Alice approves them and they pause at the gate), then in one commit a
twin of each (a byte copy of the plan file, or another version v2 for ``vx``, ``vn``, ``vm``,
``vb``); the next pass holds them ``E_PLAN_AMBIGUOUS``. While held the humans decide in the
twins, the releases come, v2 is brought back where a veto is probed, and Bob approves every
plan (the gated ones at their gate). ``<slug>:ran`` counts the recording tool's calls (of
``<slug>`` and ``<slug>-v2``; of action 2 for a gated plan), ``<slug>:audit`` asserts the
fresh clone's ``plangate audit`` calls valid exactly the runs the controller made and the
expected ones (a gated plan: its first start valid, completed only if expected),
``<slug>:held`` that the twin held the plan (no vacuous attack), ``all:paused`` that every
gated plan paused at its gate with action 1 run once.

Renames and copies across spellings while held (Alice's ``rejected`` in the twin):

- ``rn``: in ``PLANS/rn/PLAN.yml``, then ``git mv`` to ``plans/RN/PLAN.yml`` (still held),
  deleted later; ``rc``: in ``plans/rc/PLAN.yaml``, copied to ``PLANS/rc/PLAN.yml`` and deleted
  in one commit, the copy deleted later.
- ``rx``: in ``PLANS/rx/PLAN.yml``; the release is ``git mv -f PLANS/rx/PLAN.yml
  plans/rx/PLAN.yml`` (the plan file left ``rejected``).
- ``vx``: v2 in ``PLANS/vx/PLAN.yml`` rejected by Alice; the release moves it over the plan
  (``git mv -f``); the agent sets ``pending_approval``, Bob approves v2.

Release and status in one commit: ``rs``: Alice's ``rejected`` in ``PLANS/rs/``; BOB's commit
deletes the twin and sets ``approved``; ``rq`` (control): Mallory's ``rejected`` in
``PLANS/rq/``; ALICE deletes the twin and approves in one commit.

The release by a merge: ``rm`` (``PLANS/rm/``), ``rb`` (``plans/rb\\PLAN.yml``): Alice's
``rejected`` while held; the agent's branch deletes the twin, merged ``--no-ff`` by Bob.

Gated plans paused at the gate: Alice's ``aborted`` in ``PLANS/gu/``, ``plans/gb\\PLAN.yml``,
``plans/gz<U+200C>/PLAN.yml``; ``gm``: hers on her branch (``PLANS/gm/``) merged by Mallory
while held; ``gk`` (control): Mallory's ``aborted`` in ``PLANS/gk/``. Bob approves the gate.

Several twins at once: ``sm``: ``PLANS/sm/`` (Mallory ``approved``), ``plans/SM/`` (Alice
``rejected``), ``plans/sm/PLAN.yaml`` (Mallory ``approved``); ``sn``: Alice's ``rejected`` in
``PLANS/sn/``, that twin deleted while ``plans/sn/PLAN.yaml`` (Mallory ``approved``) still
holds; ``sv``: Alice's in ``plans/sv./``, Bob's ``approved`` after it in ``plans /sv/``.

Merged while held (each on its own branch forked after the twins): ``vm`` (``PLANS/vm/``),
``vb`` (``plans/vb\\PLAN.yml``): Alice's ``rejected`` of v2, merged by Mallory, v2 brought
back; ``ms``: hers in ``plans./ms/``; ``wm``, ``wb``, ``wy``, ``wp``: MALLORY's ``rejected`` in
``PLANS/wm/``, ``plans/wb\\PLAN.yml``, ``plans/wy/PLAN.yaml``, the plan file itself (held by a
``PLAN.yaml`` twin), merged by ALICE; ``nw``: the same with no hold (the reference).

A hold that starts and ends inside one merged branch (``bw-side``: the agent adds the twins,
Alice rejects in them, the agent deletes them; Mallory merges ``--no-ff``): ``bwu``
(``PLANS/``), ``bwb`` (``plans/bwb\\PLAN.yml``), ``bwf`` (``plan.yml``), ``bwc``
(``plans/BWC/``), ``bwz`` (``PLAN<U+200C>.yml``); ``bwk`` (control): Mallory's.

Release by ``git mv -f`` ACROSS spellings: the twin, a byte copy committed ``approved`` by the
agent (``mx``: ``PLANS/mx/``, ``mb``: ``plans/mb\\PLAN.yml``) or Mallory (``mz``:
``plans/mz<U+200C>/``, ``my``: ``plans/my/plan.yml``, ``md``: ``plans./md/``), moved over the
plan by Alice. Nobody allowed set ``approved``: nothing may run.

Controls: ``rq``, ``gk``, ``wn`` (Mallory's ``rejected`` in ``plans/wn\\PLAN.yml``), ``vn``
(Mallory's ``rejected`` of v2 in ``PLANS/vn/``; v2 back, Bob approves), ``bwk``: run once.

Seen (round 89): 10 ids broke, 2 classes; the fresh-clone audit agreed with the controller
each time (it called every run valid).

1. **A hold made and ended inside one merged branch loses the withdrawal set in its twin**
   (``bwu``, ``bwb``, ``bwf``, ``bwz`` ``:{ran,audit}``): after Mallory's merge the rows read
   only ``agent@example.com set status pending_approval``, ``plangate: freeze plans/bwu``;
   Alice's ``rejected`` in ``PLANS/bwu/PLAN.yml`` (``plans/bwb\\PLAN.yml``, ``plan.yml``,
   ``PLAN<U+200C>.yml``) appears nowhere and Bob's approval ran each: ``approval request
   (approve) by bob@ops.example.com``, ``plangate: start plans/bwu``, ``complete``. The same
   in a case folder ``plans/BWC/`` held (``refuse plans/bwc``, 0 runs): the one rule is not
   applied to the branch's own twins.
2. **A release by ``git mv -f`` of another version's twin over the plan loses its veto**
   (``vx`` ``:{ran,audit}``): at the release ``a plan frozen as another than the one the
   controller recorded at plans/vx/PLAN.yml moved there: a new life of the path``,
   ``E_ILLEGAL_TRANSITION: alice@example.com set status rejected (from nothing) in ...;
   ignored``; the agent's ``pending_approval`` and Bob's approval then ran v2 (``plangate:
   freeze plans/vx``, ``approval request (approve) by bob@ops.example.com``, ``start``,
   ``complete``). Alice (an allowed approver) withdrew exactly v2 while held.

Held: ``rn``, ``rc`` (renames/copies across spellings: ``alice@example.com set status
rejected``, later statuses ``E_ILLEGAL_TRANSITION ... (from rejected)``), ``rx``, ``rs`` (Bob's
approval in the release commit ``E_ILLEGAL_TRANSITION ... (from rejected)``), ``rm``, ``rb``
(release by merge), ``gu``, ``gb``, ``gz``, ``gm`` (``abort requested by alice@example.com``,
``on a merged branch`` for ``gm``; action 2 never ran), ``sm``, ``sn``, ``sv``, ``vm``, ``vb``
(``plangate: refuse``), ``ms``, every ``git mv -f`` across spellings (``mx``, ``mb``, ``mz``,
``my``, ``md``: ``approval request (approve) by agent@example.com, made while the plan was
held E_PLAN_AMBIGUOUS``, ``refuse``), the controls ran once (``gk``: ``E_APPROVER_NOT_ALLOWED:
mallory@example.com set status aborted ...; ignored``). ``rq``: Alice's approval in her own
release commit was refused ``E_SELF_APPROVAL`` (she deleted a claim: round 69's rule, as
documented) and Bob's approval ran it once. ``wm``, ``wb``, ``wy``, ``wp``: Mallory's branch
``rejected`` merged by Alice is Alice's (``alice@example.com set status rejected``), exactly
as with no hold (``nw``: the same note): "a status it brings is judged as the merge's change
as before"; they stay rejected, consistent, not a break. Changed (2026-12-06, round 120's
rule, fix122c): Mallory's merged ``rejected`` is hers, ignored, and Bob's approval runs each
once (``wm``, ``wb``, ``wy``, ``wp``, ``nw``).

Fixed (2026-12-02, r89held2): a merged branch's withdrawal is matched to its plan by the one
rule of which files are the plan's, read in the branch commit's own tree, for every plan the
index knows, held now or not, and the plan folder it lands on when the index has none there
yet (``Lifecycle._side_withdrawal`` asks ``_file_owners`` with no held-only filter,
``_landed_plan``), so a hold made and ended on the branch keeps Alice's ``rejected`` set in
``PLANS/x/``, ``plans/x\\PLAN.yml``, ``plan.yml`` or ``PLAN<U+200C>.yml`` (class 1), and one of
another version set while the branch's tree held the plan vetoes that version by hash
(``apply_side_withdrawals``). A release that leaves the plan file as a status set while held
left another version (a twin moved over it by ``git mv -f``, a new life of the path) vetoes
that version by hash when the status is a withdrawal its maker may make, as the statuses
before it do (``_held_steps``, ``_held_veto``: class 2). All 105 ids pass.

Should (docs/approvals.md): "Every entry that claims the plan file's place ... holds the plan,
and a status set in any of them while held is kept and judged at the release as above
(``_held_owners``), on the first-parent line and on a merged branch alike"; "With or without a
hold, a rejection or an abort a commit on a merged branch made is judged as that commit";
"A withdrawal set in a file of another version ... vetoes the version it withdrew by hash
when its maker may withdraw it (so it does not run when brought back)"; "the status of the
file it leaves is judged as the commit that set it while held, never re-attributed to the
releaser".
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

#: slug -> twin path Alice (or Mallory) decides in while held, on the first-parent line
TWIN = {
    "rn": "PLANS/rn/PLAN.yml",  # renamed to plans/RN/ while held (a spelling to another)
    "rc": "plans/rc/PLAN.yaml",  # copied to PLANS/rc/ and deleted in one commit while held
    "rx": "PLANS/rx/PLAN.yml",  # the release: git mv -f PLANS/rx/PLAN.yml plans/rx/PLAN.yml
    "rs": "PLANS/rs/PLAN.yml",  # the release by Bob with his approval in the same commit
    "rq": "PLANS/rq/PLAN.yml",  # control: Mallory rejects; Alice releases and approves
    "rm": "PLANS/rm/PLAN.yml",  # the release by a merge
    "rb": "plans/rb\\PLAN.yml",  # the release by a merge (a split name)
    "gu": "PLANS/gu/PLAN.yml",  # a gated plan paused at its gate: Alice's aborted
    "gb": "plans/gb\\PLAN.yml",
    "gz": "plans/gz\u200c/PLAN.yml",
    "gk": "PLANS/gk/PLAN.yml",  # control: Mallory's aborted (ignored)
    "wn": "plans/wn\\PLAN.yml",  # control: Mallory's rejected (ignored)
    "vx": "PLANS/vx/PLAN.yml",  # v2 rejected by Alice, moved over the plan as the release
    "vn": "PLANS/vn/PLAN.yml",  # control: v2 rejected by Mallory; brought back, runs
}
#: several twins at once: (twin, who sets what) in order
MANY = {
    "sm": [
        ("PLANS/sm/PLAN.yml", MALLORY, "approved"),
        ("plans/SM/PLAN.yml", ALICE, "rejected"),
        ("plans/sm/PLAN.yaml", MALLORY, "approved"),
    ],
    "sn": [
        ("PLANS/sn/PLAN.yml", ALICE, "rejected"),
        ("plans/sn/PLAN.yaml", MALLORY, "approved"),
    ],
    "sv": [
        ("plans/sv./PLAN.yml", ALICE, "rejected"),
        ("plans /sv/PLAN.yml", BOB, "approved"),
    ],
}
#: merged while held: twin, the branch's author, the status
SIDE = {
    "gm": ("PLANS/gm/PLAN.yml", ALICE, "aborted"),
    "vm": ("PLANS/vm/PLAN.yml", ALICE, "rejected"),  # v2
    "vb": ("plans/vb\\PLAN.yml", ALICE, "rejected"),  # v2
    "ms": ("plans./ms/PLAN.yml", ALICE, "rejected"),
    "wm": ("PLANS/wm/PLAN.yml", MALLORY, "rejected"),  # Mallory's, merged by Alice
    "wb": ("plans/wb\\PLAN.yml", MALLORY, "rejected"),
    "wy": ("plans/wy/PLAN.yaml", MALLORY, "rejected"),
    "wp": ("plans/wp/PLAN.yml", MALLORY, "rejected"),  # in the plan file itself
}
#: the same with no hold: Mallory's rejected on her branch, merged by Alice
NOHOLD = ["nw"]
#: a hold that starts and ends inside one merged branch (twin, who rejects in it)
BRANCH = {
    "bwu": ("PLANS/bwu/PLAN.yml", ALICE),
    "bwb": ("plans/bwb\\PLAN.yml", ALICE),
    "bwf": ("plans/bwf/plan.yml", ALICE),
    "bwc": ("plans/BWC/PLAN.yml", ALICE),
    "bwz": ("plans/bwz/PLAN\u200c.yml", ALICE),
    "bwk": ("PLANS/bwk/PLAN.yml", MALLORY),  # control
}
#: the twin, a byte copy committed approved by its maker, moved over the plan by Alice
MOVE = {
    "mx": ("PLANS/mx/PLAN.yml", AGENT),
    "mb": ("plans/mb\\PLAN.yml", AGENT),
    "mz": ("plans/mz\u200c/PLAN.yml", MALLORY),
    "my": ("plans/my/plan.yml", MALLORY),
    "md": ("plans./md/PLAN.yml", MALLORY),
}
#: wp's status is set in the plan file itself: a byte-copy twin holds it
HOLDER = {"wp": "plans/wp/PLAN.yaml"}
GATED = {"gu", "gb", "gz", "gk", "gm"}
V2 = {"vx", "vn", "vm", "vb"}
SLUGS = [*TWIN, *MANY, *SIDE, *BRANCH, *MOVE, *NOHOLD]
#: runs expected (gated: action 2 after the gate)
RUNS = {"rq": 1, "gk": 1, "wn": 1, "vn": 1, "bwk": 1}
#: Mallory's ``rejected`` on a branch Alice merges, held or not, is Mallory's, ignored, and
#: Bob's approval runs the plan once (round 120, merged-rejection-charged-to-merger: a merged
#: commit's rejection is its maker's, never the merger's; before, Alice's and 0 runs)
RUNS |= {"wm": 1, "wb": 1, "wy": 1, "wp": 1, "nw": 1}


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


def _gone(lab: Lab, rel: str) -> None:
    (lab.repo / rel).unlink()


def _gated(v: str) -> str:
    return plan_text(v) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{v}2"}}\n'
    )


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _brief(row: dict[str, Any]) -> Any:
    return (
        row.get("status"),
        row.get("approved_by"),
        row.get("code"),
        (row.get("notes") or [])[-4:],
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, _gated(slug) if slug in GATED else plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()  # P1: frozen
    for slug in GATED:
        lab.set_status(slug, "approved")
    lab.commit("alice: approve the gated plans", ALICE)
    lab.run()  # P2: action 1 ran, paused at the gate
    got["paused"] = {s: _rows(lab).get(f"plans/{s}", {}).get("status") for s in GATED}

    # -- twins (the agent's byte copies; v2 where a veto is probed)
    for slug, rel in TWIN.items():
        _put(lab, rel, plan_text(f"{slug}-v2") if slug in V2 else lab.read(slug))
    for slug, twins in MANY.items():
        for rel, _who, _st in twins:
            _put(lab, rel, lab.read(slug))
    for slug, (rel, _who, _st) in SIDE.items():
        _put(lab, rel, plan_text(f"{slug}-v2") if slug in V2 else lab.read(slug))
    for slug, rel in HOLDER.items():
        _put(lab, rel, lab.read(slug))
    lab.commit("agent: twins", AGENT)
    for slug, (rel, who) in MOVE.items():
        _put(lab, rel, lab.read(slug))
        _set(lab, rel, "approved")
        lab.commit(f"{who[0]}: {slug} twin approved", who)
    for slug, (rel, who, status) in SIDE.items():  # each on its own branch
        lab.git("checkout", "-q", "-b", f"side-{slug}")
        _set(lab, rel, status)
        lab.commit(f"{who[0]}: {status} on my branch", who)
        lab.git("checkout", "-q", "main")
    lab.git("checkout", "-q", "-b", "side-nw")
    lab.set_status("nw", "rejected")
    lab.commit("mallory: reject nw on my branch", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.run()  # P3: held
    got["held"] = _rows(lab)

    # -- while held
    for slug in ("rn", "rc", "rx", "rs", "rm", "rb", "vx"):
        _set(lab, TWIN[slug], "rejected")
    for slug in ("gu", "gb", "gz"):
        _set(lab, TWIN[slug], "aborted")
    lab.commit("alice: reject in the twins", ALICE)
    for slug in ("rq", "wn", "vn"):
        _set(lab, TWIN[slug], "rejected")
    _set(lab, TWIN["gk"], "aborted")
    lab.commit("mallory: reject in the twins", MALLORY)
    for twins in MANY.values():  # several twins: each status by its maker in turn
        for rel, who, status in twins:
            _set(lab, rel, status)
            lab.commit(f"{who[0]}: {status} in {rel}", who)
    for slug, (_rel, who, _st) in SIDE.items():  # merged by the other one
        merger = MALLORY if who == ALICE else ALICE
        lab.git("merge", "-q", "--no-ff", "-m", f"merge side-{slug}", f"side-{slug}", who=merger)
    lab.git("merge", "-q", "--no-ff", "-m", "merge side-nw", "side-nw", who=ALICE)
    # rn: renamed to another spelling; rc: copied to another spelling, the old one deleted
    (lab.repo / "plans/RN").mkdir()
    lab.git("mv", "PLANS/rn/PLAN.yml", "plans/RN/PLAN.yml")
    _put(lab, "PLANS/rc/PLAN.yml", (lab.repo / TWIN["rc"]).read_text(encoding="utf-8"))
    _gone(lab, TWIN["rc"])
    lab.commit("agent: move twins", AGENT)
    _gone(lab, "PLANS/sn/PLAN.yml")  # sn: one twin of two gone: still held
    lab.commit("agent: one sn twin gone", AGENT)
    # a hold that starts and ends inside one merged branch
    lab.git("checkout", "-q", "-b", "bw-side")
    for slug, (rel, _who) in BRANCH.items():
        _put(lab, rel, lab.read(slug))
    lab.commit("agent: branch twins", AGENT)
    for who in (ALICE, MALLORY):
        for rel, w in BRANCH.values():
            if w == who:
                _set(lab, rel, "rejected")
        lab.commit(f"{who[0]}: reject in the branch twins", who)
    for rel, _w in BRANCH.values():
        _gone(lab, rel)
    lab.commit("agent: branch twins gone", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge bw-side", "bw-side", who=MALLORY)
    lab.run()  # P4
    got["during"] = _rows(lab)

    # -- releases
    gone = [TWIN[s] for s in ("gu", "gb", "gz", "gk", "wn", "vn")]
    gone += ["plans/RN/PLAN.yml", "PLANS/rc/PLAN.yml"]
    gone += [r for s in ("sm", "sv") for r, _w, _s in MANY[s]] + ["plans/sn/PLAN.yaml"]
    gone += [HOLDER.get(s, r) for s, (r, _w, _s) in SIDE.items()]
    for rel in gone:
        _gone(lab, rel)
    lab.commit("agent: twins gone", AGENT)
    lab.git("mv", "-f", TWIN["rx"], "plans/rx/PLAN.yml")
    lab.git("mv", "-f", TWIN["vx"], "plans/vx/PLAN.yml")
    lab.commit("agent: keep the twins' files", AGENT)
    for slug, (rel, _who) in MOVE.items():
        lab.git("mv", "-f", rel, f"plans/{slug}/PLAN.yml")
    lab.commit("alice: keep the twins", ALICE)
    _gone(lab, TWIN["rs"])
    lab.set_status("rs", "approved")
    lab.commit("bob: release and approve rs", BOB)
    _gone(lab, TWIN["rq"])
    lab.set_status("rq", "approved")
    lab.commit("alice: release and approve rq", ALICE)
    lab.git("checkout", "-q", "-b", "release-side")
    _gone(lab, TWIN["rm"])
    _gone(lab, TWIN["rb"])
    lab.commit("agent: release on a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge release-side", "release-side", who=BOB)
    lab.run()  # P5
    got["released"] = _rows(lab)

    # -- after: v2 brought back; Bob approves
    for slug in ("vn", "vm", "vb"):
        lab.write(slug, plan_text(f"{slug}-v2"))
    lab.set_status("vx", "pending_approval")
    lab.commit("agent: v2", AGENT)
    lab.run()  # P6: v2 frozen
    for slug in SLUGS:
        if slug not in MOVE:
            lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.run()  # P7
    lab.run()  # P8
    got["calls"] = {
        s: len(lab.calls(f"{s}2")) if s in GATED else len(lab.calls(s)) + len(lab.calls(f"{s}-v2"))
        for s in SLUGS
    }
    got["first"] = {s: len(lab.calls(s)) for s in GATED}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r89-approve-atk89d", _build)


HELD = [s for s in SLUGS if s not in BRANCH and s not in NOHOLD]
IDS = (
    [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")]
    + [f"{s}:held" for s in HELD]
    + ["all:paused"]
)
#: Fixed (2026-12-02, r89held2): no id is expected to fail.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round89_atk89d(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "paused":  # the lab is live: each gated plan paused at its gate, action 1 once
        assert set(got["paused"].values()) == {"awaiting_approval"}, got["paused"]
        assert set(got["first"].values()) == {1}, got["first"]
        return
    if what == "held":  # the twin did hold the plan (the attack is no vacuous one)
        held = got["held"].get(plan, {})
        assert "E_PLAN_AMBIGUOUS" in json.dumps(held, ensure_ascii=False), _brief(held)
        return
    if what == "audit":
        done = row.get("status") == "completed"
        if slug in GATED:  # started on Alice's first approval: valid; completed if expected
            assert plan in got["valid"], (plan, got["valid"])
            assert done == (slug in RUNS), _brief(row)
            return
        assert (plan in got["valid"]) == done, (plan, got["valid"], _brief(row))
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk89d", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r89d-", dir="/tmp/atk89d"))
    got = _build(out).got  # type: ignore[attr-defined]
    for key in ("held", "during", "released", "rows"):
        got[key] = {p: _brief(r) for p, r in got[key].items()}
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
