"""Round 84, approval and policy: round 83's two fixes at their edges: a writer through a
spelling of the PLANS FOLDER ITSELF, twin notes gone before the plan came, a twin one level
up (r83twinwriter); and approvals made while a plan is held ``E_PLAN_AMBIGUOUS``, released by
different people, slipped in with another version, or held and released inside one merge
(r83gatetwin).

Lab (one, built once, a handful of ``run --once`` passes). Bob (an approver) commits notes;
the agent commits its plans and twins; Alice approves while plans are held; the twins go;
Bob approves the plans his notes sit beside; Alice approves the controls.

Variants, writers (``<slug>:ran`` nothing ran on Bob's approval, or the twin spelling got
exactly what its own-spelling analog got; ``<slug>:audit`` the fresh clone's ``plangate
audit`` (no config) calls valid exactly the runs the controller made):
- ``own`` (control of the rule): Bob's ``plans/own/NOTES.md``: ``E_SELF_APPROVAL``.
- ``pt``: Bob's ``plans./pt/NOTES.md`` (the plans folder with a trailing dot: ``plans/pt`` on
  Windows).
- ``pb``: Bob's ``plans /pb/NOTES.md`` (a trailing blank on the plans folder).
- ``pw``: Bob's ``ｐｌａｎｓ/pw/NOTES.md`` (NFKC of the plans folder's name).
- ``pc``: Bob's ``Plans/pc/NOTES.md`` (a case twin of the plans folder other than
  ``PLANS``).
- ``pf``: Bob's root FILE ``plans\\pf\\NOTES.md`` (two backslashes: ``plans/pf/NOTES.md`` on
  git for Windows).
- ``up`` vs ``upo``: Bob's note in ``plans/GRP/`` (a twin of the folder ABOVE the agent's
  ``plans/grp/ch``) vs his note in ``plans/grq/`` above ``plans/grq/ch``: the same verdict.
- ``rb`` vs ``rbo``: Bob's twin note ``plans/RB/NOTES.md`` removed before the agent's
  ``plans/rb`` came, vs ``plans/rbo/NOTES.md`` removed before ``plans/rbo``: the same verdict.
- ``rn`` vs ``rno``: the same, the note moved away (``git mv``) instead.
- ``rk`` vs ``rko``: Bob's twin note ``plans/RK/NOTES.md`` removed while the agent's
  ``plans/Rk/README.md`` (another twin) stays; vs the same in one spelling ``plans/rko``:
  the folder never emptied, so Bob stays a writer in both (``E_SELF_APPROVAL``).
- ``ok`` (control): the agent's plan approved by Alice runs once.

Variants, held (the plan frozen, then a twin ``plans/<SLUG>/PLAN.yml`` committed by the
agent; Alice sets ``approved`` while held; ``<slug>:held`` after the release nothing ran and
the refusal is ``E_PLAN_AMBIGUOUS`` ``by:`` alice; ``<slug>:audit`` as above):
- ``fa``: the agent removes the twin. Then Alice approves again: ``fa:again`` runs once.
- ``fb``: Bob removes the twin (the refusal is still Alice's).
- ``fc``: Alice removes the twin herself, in a later commit.
- ``fv``: while held the agent rewrites the plan's action (tag ``fv2``, a new version) and
  Alice approves that file; the agent removes the twin: neither version runs.
- ``ff``: a hold that starts and ends between two passes on main (twin added, Alice
  approves, twin removed): one pass reads all three commits.
- ``fm``: the same three commits on a branch the agent merges ``--no-ff``: the hold starts
  and ends inside the merged branch.

Seen (round 84): 18 ids broke, 2 classes. Class 1 fixed (2026-12-01, r84plansdir): a
top-level entry one folder with the plans folder on some checkout (``names.same_path``) is
read by the history walk and by ``git log`` (its spellings found from the trees) and counts as
the plans folder for writers; a root file's folder is its split. ``pw`` (fullwidth
``ｐｌａｎｓ``: one folder with ``plans`` on no checkout, ``names.fold`` has no NFKC) is
decided by design: no write in ``plans/pw``, Bob's approval runs once. Added: ``ps``
(``PLANS~1/``), ``pk`` (``Plans::$DATA/``), ``pr`` (``PLANS\\pr/``).

1. **Twin-folder writer through the plans folder's own spelling** (16 ids: ``pt``, ``pb``,
   ``pw``, ``pf``, ``pd``, ``pe``, ``pu``, ``pm`` ``:{ran,audit}``). Round 83 made a file in a
   twin of the PLAN's folder (and in ``PLANS/``, ``Plans/``: ``pc`` held) make its committer a
   writer, but not a twin of the PLANS FOLDER by a trailing dot (``plans./``, ``plans.../``,
   ``PLANS./``, ``plans./PM/`` for ``plans/pm``), a trailing blank (``plans /``, ``plans. /``),
   NFKC (``ｐｌａｎｓ/``), or the root file ``plans\\pf\\NOTES.md`` (while a root FILE
   ``plans\\rf\\PLAN.yml`` does hold ``plans/rf``: test_round84_approve_planstwin ``rf``)::

       # agent: plans/pt/PLAN.yml (pending), run --once (frozen)
       mkdir -p plans./pt && echo Reviewed > plans./pt/NOTES.md
       git add -A && git -c user.name=Bob -c user.email=bob@ops.example.com commit -qm note
       sed -i 's/status: pending_approval/status: approved/' plans/pt/PLAN.yml
       git -c user.name=Bob -c user.email=bob@ops.example.com commit -qam approve
       plangate run --once --config ../plangate.yml; plangate status --config ../plangate.yml
       completed  plans/pt  87ccd50099e7 medium bob@ops.example.com ... plangate: complete plans/pt
       plangate audit    # fresh clone, no config
       plans/pt: start ... approved by bob@ops.example.com in af53f579afa7: valid -> complete

   The same note in ``plans/own/`` is ``E_SELF_APPROVAL``. Should (docs/approvals.md):
   "Whoever commits any file into a plan's folder ... is a writer of the plan that folder
   holds or will hold"; CHANGELOG round 83: "a file an approver committed into a folder that
   is one with the plan's folder on some checkout ... made him no writer" (fixed for
   ``PLANS/rr/``, ``plans/dt./``, ``plans/sp /``, ``plans\\nb/``). On Windows ``plans.``
   and ``plans `` are ``plans``; git for Windows splits ``plans\\pf\\NOTES.md`` into
   ``plans/pf/NOTES.md``. Caveat: docs/plan-format.md says "The plans folder itself is compared
   as written (a ``Plans/`` beside ``plans/`` holds no plan)" for PLAN files; for writers round
   83 already reads ``PLANS/``/``Plans/``, so these spellings are the same hole.
2. **Held approval brought by a merge** (``fm:held``, ``fm:audit``; arguable): twin
   ``plans/FM/PLAN.yml`` added, Alice sets ``approved`` in ``plans/fm``, twin removed, all on a
   branch ``fmb``; Alice merges ``--no-ff``: ``fm`` runs (``by: alice``), audit valid. The same
   three commits on main (``ff``) are refused ``E_PLAN_AMBIGUOUS`` by alice. docs/approvals.md:
   "a status someone sets in its file meanwhile approves nothing: what the approver saw may
   have been the twin's file". The lead may rule her own merge a fresh decision (``fn``: her
   branch approval with no twin, merged by her, runs; merged by the agent it is the agent's,
   ``E_APPROVER_NOT_ALLOWED``). Decided by the lead (2026-12-01): by design. Her merge is
   her approval of the merge result, made where nothing is held (main's first parent never
   saw the twin), as any pull request's merge is; ``fm`` now asserts it runs once and the
   audit agrees.

Held: ``own``, ``pc`` (``Plans/``), ``up``/``upo`` alike (a note one level up makes no writer
in either spelling), ``rb``/``rbo``, ``rn``/``rno`` alike (a note removed or moved before the
plan came: no writer in either), ``rk``/``rko`` alike (``E_SELF_APPROVAL``: the twin folder
never emptied); ``fa``/``fb``/``fc``/``fv``/``ff`` refused ``E_PLAN_AMBIGUOUS`` by alice
whoever released (agent, Bob, Alice), ``fv2`` (another version slipped in while held) never
ran, ``fa:again`` ran once; the audit agreed with the controller on every plan.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

SPELL = ["pt", "pb", "pw", "pc", "pf", "pd", "pe", "pu", "pm", "ps", "pk", "pr"]
WRITERS = ["own", *SPELL, "up", "rb", "rn", "rk"]
PAIRS = {"up": "upo", "rb": "rbo", "rn": "rno", "rk": "rko"}
FOLDER = {"up": "grp/ch", "upo": "grq/ch"}
HELD = ["fa", "fb", "fc", "fv", "ff", "fm", "fn"]
NOTES = {
    "own": "plans/own/NOTES.md",
    "pt": "plans./pt/NOTES.md",
    "pb": "plans /pb/NOTES.md",
    "pw": "\uff50\uff4c\uff41\uff4e\uff53/pw/NOTES.md",
    "pc": "Plans/pc/NOTES.md",
    "pf": "plans\\pf\\NOTES.md",
    "pd": "plans.../pd/NOTES.md",
    "pe": "plans. /pe/NOTES.md",
    "pu": "PLANS./pu/NOTES.md",
    "pm": "plans./PM/NOTES.md",
    "ps": "PLANS~1/ps/NOTES.md",
    "pk": "Plans::$DATA/pk/NOTES.md",
    "pr": "PLANS\\pr/NOTES.md",
    "up": "plans/GRP/NOTES.md",
    "upo": "plans/grq/NOTES.md",
    "rb": "plans/RB/NOTES.md",
    "rbo": "plans/rbo/NOTES.md",
    "rn": "plans/RN/NOTES.md",
    "rno": "plans/rno/NOTES.md",
    "rk": "plans/RK/NOTES.md",
    "rko": "plans/rko/NOTES.md",
}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _verdict(lab: Lab, folder: str) -> dict[str, Any]:
    try:
        data = lab.plan(folder)
    except Exception as why:  # recorded, asserted by the tests
        return {"error": str(why)[-300:]}
    approval = data.get("approval") or {}
    return {
        "status": (data.get("plan") or {}).get("status"),
        "code": approval.get("code"),
        "by": approval.get("by"),
        "astatus": approval.get("status"),
    }


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    # Bob's notes first (rb/rn/rk and their analogs before the plans exist)
    for slug in ("rb", "rbo", "rn", "rno", "rk", "rko"):
        _put(lab, NOTES[slug], "Reviewed.\n")
    lab.commit("bob: early notes", BOB)
    _put(lab, "plans/Rk/README.md", "agent's readme\n")
    _put(lab, "plans/rko/README.md", "agent's readme\n")
    lab.commit("agent: readmes", AGENT)
    lab.git("rm", "-q", NOTES["rb"], NOTES["rbo"], NOTES["rk"], NOTES["rko"])
    lab.git("mv", "plans/RN", "plans/zzn")
    lab.git("mv", "plans/rno", "plans/zzo")
    lab.commit("bob: notes removed or moved", BOB)
    tags = ["own", *SPELL, "ok", "rb", "rbo", "rn", "rno", "rk", "rko"]
    for slug in tags + HELD:
        lab.write(slug, plan_text(slug))
    lab.write("grp/ch", plan_text("up"))
    lab.write("grq/ch", plan_text("upo"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in ("own", *SPELL, "up", "upo"):
        _put(lab, NOTES[slug], "Reviewed. Run it with care.\n")
    lab.commit("bob: notes", BOB)
    # held: twins committed by the agent
    for slug in ("fa", "fb", "fc", "fv"):
        lab.write(slug.upper(), plan_text(f"{slug}-twin"))
    lab.commit("agent: twins", AGENT)
    lab.run()
    got["held_rows"] = {s: _verdict(lab, s) for s in ("fa", "fb", "fc", "fv")}
    got["held_status"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
        if r["plan"] in {f"plans/{s}" for s in ("fa", "fb", "fc", "fv")}
    }
    text = lab.read("fv").replace('tag: "fv"', 'tag: "fv2"')
    lab.write("fv", text)
    lab.commit("agent: fv, another version while held", AGENT)
    for slug in ("fa", "fb", "fc", "fv"):
        lab.set_status(slug, "approved")
    lab.commit("alice: approve while held", ALICE)
    lab.run()
    lab.git("rm", "-rq", "plans/FA", "plans/FV")
    lab.commit("agent: twins gone", AGENT)
    lab.git("rm", "-rq", "plans/FB")
    lab.commit("bob: twin gone", BOB)
    lab.git("rm", "-rq", "plans/FC")
    lab.commit("alice: twin gone", ALICE)
    # ff: a hold that starts and ends between two passes
    lab.write("FF", plan_text("ff-twin"))
    lab.commit("agent: twin FF", AGENT)
    lab.approve("ff", ALICE)
    lab.git("rm", "-rq", "plans/FF")
    lab.commit("agent: twin FF gone", AGENT)
    # fm: the same inside a merged branch
    lab.git("checkout", "-q", "-b", "fmb")
    lab.write("FM", plan_text("fm-twin"))
    lab.commit("agent: twin FM", AGENT)
    lab.approve("fm", ALICE)
    lab.git("rm", "-rq", "plans/FM")
    lab.commit("agent: twin FM gone", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge fmb", "fmb", who=ALICE)
    # fn (control of fm): Alice's approval on a branch with no twin, merged by her
    lab.git("checkout", "-q", "-b", "fnb")
    lab.approve("fn", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge fnb", "fnb", who=ALICE)
    # Bob approves the plans beside his notes; Alice the control
    for slug in ["own", *SPELL, "rb", "rbo", "rn", "rno", "rk", "rko"]:
        lab.set_status(slug, "approved")
    lab.set_status("grp/ch", "approved")
    lab.set_status("grq/ch", "approved")
    lab.commit("bob: approve", BOB)
    lab.approve("ok", ALICE)
    lab.run()
    lab.run()
    every = [*tags, "up", "upo", *HELD, "fv2"]
    got["calls"] = {t: len(lab.calls(t)) for t in every}
    got["verdict"] = {
        s: _verdict(lab, FOLDER.get(s, s)) for s in [*tags, "up", "upo", *HELD] if s not in ("fv2",)
    }
    lab.approve("fa", ALICE, "alice: approve fa again")
    lab.run()
    got["again"] = len(lab.calls("fa"))
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
    return shared(tmp_path_factory, "r84-approve-heldwriters", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 84 approve: {cls}: {what}"
    )


IDS = (
    [f"{s}:{w}" for s in WRITERS for w in ("ran", "audit")]
    + ["ok:ran", "ok:audit"]
    + [f"{s}:{w}" for s in HELD if s != "fn" for w in ("held", "audit")]
    + ["fn:ran", "fn:audit", "fa:again"]
)
_W = "twin-folder writer through the plans folder's own spelling"
_WHY = {
    "pt": "Bob's note in plans./pt let his approval of plans/pt run",
    "pb": "Bob's note in 'plans /pb' let his approval of plans/pb run",
    "pw": "Bob's note in the NFKC spelling of plans/pw let his approval run",
    "pf": "Bob's root file plans\\pf\\NOTES.md let his approval of plans/pf run",
    "pd": "Bob's note in plans.../pd let his approval of plans/pd run",
    "pe": "Bob's note in 'plans. /pe' let his approval of plans/pe run",
    "pu": "Bob's note in PLANS./pu let his approval of plans/pu run",
    "pm": "Bob's note in plans./PM let his approval of plans/pm run",
}
# pw (decided by the lead, 2026-12-01): the fullwidth ``ｐｌａｎｓ`` is one folder with
# ``plans`` on no checkout (names.fold: case, canonical forms, HFS+'s ignored code points,
# NTFS's tail; no compatibility mapping, as for ``plans/ｘ`` beside ``plans/x``), so Bob's
# note there is no write in ``plans/pw``: his approval runs once and the audit agrees.
DECIDED = ("pw",)
BROKEN: dict[str, Any] = {}
# fm (decided by the lead, 2026-12-01): her merge is her approval, made where nothing is
# held (main never saw the twin: the first parent's view), as a pull request's merge is;
# consistent with ``fn``. It runs once and the audit agrees.


def _ran(got: dict[str, Any]) -> list[str]:
    return sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round84_heldwriters(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    calls, verdict = got["calls"], got["verdict"]
    if what == "audit":
        folders = [slug] + ([PAIRS[slug]] if slug in PAIRS else [])
        ran = _ran(got)
        for s in folders:
            plan = f"plans/{FOLDER.get(s, s)}"
            assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        if slug in ("own", *SPELL, *HELD) and slug not in ("fn", "fa", "fm", *DECIDED):
            assert f"plans/{slug}" not in got["valid"], got["valid"]
        return
    if slug in ("ok", "fn", "fm", *DECIDED):
        assert calls[slug] == 1, (calls, verdict[slug])
    elif what == "again":
        assert got["again"] == 1, (got["again"], verdict["fa"])
    elif what == "ran" and slug in PAIRS:
        other = PAIRS[slug]
        assert calls[slug] == calls[other], (
            calls[slug],
            calls[other],
            verdict[slug],
            verdict[other],
        )
        assert verdict[slug].get("code") == verdict[other].get("code"), (
            verdict[slug],
            verdict[other],
        )
        if slug == "rk":
            assert calls["rk"] == 0 and verdict["rk"].get("code") == "E_SELF_APPROVAL", verdict
    elif what == "ran":
        assert calls[slug] == 0, (calls[slug], verdict[slug])
        assert verdict[slug].get("code") == "E_SELF_APPROVAL", verdict[slug]
    else:  # held
        assert calls[slug] == 0 and calls.get("fv2", 0) == 0, (calls, verdict[slug])
        assert verdict[slug].get("code") == "E_PLAN_AMBIGUOUS", verdict[slug]
        assert "alice" in str(verdict[slug].get("by")), verdict[slug]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk84a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r84hw-", dir="/tmp/atk84a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
