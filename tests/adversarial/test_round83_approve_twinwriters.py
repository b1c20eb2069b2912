"""Round 83, approval and policy: who WROTE a plan when its folder has a twin (case, NFKC, an
8.3 short name, a backslash spelling) on some checkout, and when the content came from a
source the twin rule holds (never converted).

Lab (one, built once, six ``run --once`` passes). The agent commits its plans; Bob (an
approver) then commits his writing beside them, in twin spellings; the agent finally
carries Bob's bytes into plans it writes itself; Bob approves each with a one-line status
edit, Alice approves the control ``ok``.

Variants (``<slug>:ran`` nothing of Bob's writing ran on his own approval, the control ran
exactly once; ``<slug>:audit`` the fresh clone's ``plangate audit`` calls no such run
valid and agrees with the controller):
- ``nn`` (control of the rule): Bob's ``plans/nn/NOTES.md`` in the plan's own folder, then
  his approval: refused ``E_SELF_APPROVAL``.
- ``nc``: Bob's ``plans/NC/NOTES.md``, a case twin of the agent's ``plans/nc``.
- ``nk``: Bob's ``plans/fia/NOTES.md``, the NFKC twin of the agent's ``plans/ﬁa``.
- ``n8``: Bob's ``plans/SHORTN~1/NOTES.md``, the 8.3 short name of ``plans/shortname-long``.
- ``nb``: Bob's ``plans\\nb/NOTES.md`` (a root folder: ``plans/nb/NOTES.md`` on git for
  Windows).
- ``nt``: Bob's ``plans/nt\\/NOTES.md`` (a trailing backslash).
- ``sc``: the agent's decoy ``plans/SC/PLAN.yml``; Bob's source ``plans/sc/PLAN.md`` (his
  own plan, held: twin); the agent writes Bob's exact bytes over ``plans/SC/PLAN.yml``.
- ``sd``: as ``sc``, but the agent copies Bob's held source's bytes to a new folder
  ``plans/sd2/PLAN.yml`` (no twin of anything Bob touched).
- ``se`` (control of the content rule): Bob's source ``plans/se/PLAN.md`` alone (converted);
  the agent copies its bytes to ``plans/se2/PLAN.yml``.
- ``cv``: Bob's source ``plans/cv/PLAN.md`` held by the agent's twin ``plans/CV``; the agent
  removes ``plans/CV``, the source converts; Bob approves ``plans/cv``.
- ``bw``: Bob's ``plans/BW/PLAN.yml`` beside the agent's twin source ``plans/bw/PLAN.md``
  (a PLAN.yml beside a twin source is the plan; Bob is its author).
- ``bs``: Bob's source ``plans/bs/PLAN.md`` (held, never converted) beside the agent's twin
  ``plans/BS/PLAN.yml`` (the plan: "a PLAN.yml beside a twin source is still the plan").
- ``np``: Bob's ``plans/NP/NOTES.md`` committed BEFORE the agent's ``plans/np`` ("the plan
  that folder holds or will hold").
- ``nm`` (held): Bob's ``plans/NM/NOTES.md``; the agent ``git mv``s its ``plans/nm/PLAN.yml``
  into ``plans/NM``: refused ``E_SELF_APPROVAL``.
- ``ok`` (control): the agent's plan approved by Alice runs once.

Seen (round 83), fixed (2026-12-01, r83twinwriter): a folder's writers are keyed by its place
on a checkout (``folder_key`` folds every part by ``names.fold_path``, the backslash split of
``path_parts``; an 8.3 short-named writer folder is matched against the plan's folder by
``same_path``; the plans folder's case twins are read by the history walk), so a file in a twin
folder is exactly what the same file in the plan's folder is: its committer is refused
``E_SELF_APPROVAL`` by the controller, ``check`` and the fresh-clone audit alike. Before the
fix: 14 ids broke, one class (twin-folder writer): ``nc``, ``nk``, ``n8``, ``nb``, ``nt``,
``bs``, ``np`` (``:ran`` and ``:audit``). A file Bob commits into a folder that is ONE folder
with the plan's on some checkout (the controller's own words for a twin source: "plans/bs is
one folder with plans/BS on some checkout") never makes him a writer of the plan, while the
same note in the plan's own spelling (``nn``) does. Shortest reproduction::

    # agent: plans/nc/PLAN.yml (pending), run --once (frozen)
    mkdir plans/NC && echo Reviewed > plans/NC/NOTES.md
    git add -A && git -c user.name=Bob -c user.email=bob@ops.example.com commit -m note
    sed -i 's/status: pending_approval/status: approved/' plans/nc/PLAN.yml
    git -c user.name=Bob -c user.email=bob@ops.example.com commit -am approve
    plangate run --once --config plangate.yml
    plangate status --config plangate.yml
    completed  plans/nc  0829eb3ca6aa medium bob@ops.example.com ... plangate: complete plans/nc
    pending_approval plans/nn ... approval refused: E_SELF_APPROVAL: bob@ops.example.com wrote
        or changed this plan's content and cannot approve it          # the same note in plans/nn
    plangate audit   # fresh clone, no config
    plans/nc: start ... approved by bob@ops.example.com in a910070e9fe1: valid -> complete
    plans/BS: start ... approved by bob@ops.example.com in a910070e9fe1: valid -> complete

On a case-insensitive (macOS, Windows) checkout ``plans/NC/NOTES.md`` IS
``plans/nc/NOTES.md``; the same holds for ``plans/fia`` (NFKC of ``plans/ﬁa``, HFS+),
``plans/SHORTN~1`` (NTFS 8.3), ``plans\\nb/`` and ``plans/nt\\/`` (git for Windows), and for
Bob's held ``plans/bs/PLAN.md`` beside ``plans/BS/PLAN.yml``. docs/approvals.md: "Whoever
commits any file into a plan's folder (notes, a draft, a patch, anything but the status
change of an approval) is a writer of the plan that folder holds or will hold, whatever the
file's bytes"; "the approver is not among the identities that changed the hashed content"
-> ``E_SELF_APPROVAL``. Held: ``nn``, ``nm`` (plan moved into the twin holding his note),
``sc``/``sd``/``se``/``cv`` (Bob's held source's bytes written over a twin, copied to a new
folder, converted after the twin went: all ``E_SELF_APPROVAL``), ``bw`` (his own PLAN.yml
beside the agent's twin source: ``E_SELF_APPROVAL``); the audit agreed with the controller on
every plan (it agrees on the broken ones too: both call Bob's approval valid).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

# slug -> (the folder Bob approves, the tag that must not run on his approval)
SHAPES: dict[str, tuple[str, str]] = {
    "nn": ("nn", "nn"),
    "nc": ("nc", "nc"),
    "nk": ("ﬁa", "nk"),
    "n8": ("shortname-long", "n8"),
    "nb": ("nb", "nb"),
    "nt": ("nt", "nt"),
    "sc": ("SC", "sc-bob"),
    "sd": ("sd2", "sd-bob"),
    "se": ("se2", "se-bob"),
    "cv": ("cv", "cv-bob"),
    "bw": ("BW", "bw-bob"),
    "bs": ("BS", "bs"),
    "np": ("np", "np"),
    "nm": ("NM", "nm"),
    "ok": ("ok", "ok"),
}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in ("nn", "nc", "nb", "nt", "ok"):
        lab.write(slug, plan_text(slug))
    lab.write("ﬁa", plan_text("nk"))
    lab.write("shortname-long", plan_text("n8"))
    lab.write("SC", plan_text("sc-decoy"))
    lab.write("SD", plan_text("sd-decoy"))
    lab.write("CV", plan_text("cv-decoy"))
    lab.write("BS", plan_text("bs"))
    lab.write("nm", plan_text("nm"))
    lab.commit("agent: plans", AGENT)
    lab.write("BW", plan_text("bw-bob"))
    _put(lab, "plans/NP/NOTES.md", "Reviewed before the plan came.\n")
    lab.commit("bob: his plan BW, a note in NP", BOB)
    lab.run()
    lab.write("np", plan_text("np"))
    lab.write("bw", plan_text("bw-agent"), "PLAN.md")
    lab.commit("agent: np, and a source twin of BW", AGENT)
    lab.run()
    note = "Reviewed. Run it with care.\n"
    for rel in (
        "plans/nn/NOTES.md",
        "plans/NC/NOTES.md",
        "plans/fia/NOTES.md",
        "plans/SHORTN~1/NOTES.md",
        "plans\\nb/NOTES.md",
        "plans/nt\\/NOTES.md",
        "plans/NM/NOTES.md",
    ):
        _put(lab, rel, note)
    bobs = {s: plan_text(f"{s}-bob", name=f"bob {s}") for s in ("sc", "sd", "se", "cv")}
    for slug, text in bobs.items():
        lab.write(slug, text, "PLAN.md")
    lab.write("bs", plan_text("bs-bob"), "PLAN.md")
    lab.commit("bob: notes and plans", BOB)
    lab.run()
    lab.write("SC", bobs["sc"])
    lab.write("sd2", bobs["sd"])
    lab.write("se2", bobs["se"])
    lab.git("rm", "-rq", "plans/CV")
    lab.git("mv", "plans/nm/PLAN.yml", "plans/NM/PLAN.yml")
    lab.commit("agent: carry", AGENT)
    lab.run()
    lab.run()
    got["before"] = {t: len(lab.calls(t)) for _, t in SHAPES.values()}
    for slug, (folder, _) in SHAPES.items():
        if slug == "ok":
            continue
        lab.set_status(folder, "approved")
    lab.commit("bob: approve", BOB)
    lab.approve("ok", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {t: len(lab.calls(t)) for _, t in SHAPES.values()}
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    report, valid = clone_audit(lab, root)
    got["audit"] = sorted(e["plan"] for e in report["executions"])
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%an %s", "--name-status")[-6000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-approve-twinwriters", _build)


IDS = [f"{s}:{w}" for s in SHAPES for w in ("ran", "audit")]
_CLS = "twin-folder writer"
_WHAT = {
    "nc": "Bob's note in the case twin plans/NC let his approval of plans/nc run",
    "nk": "Bob's note in the NFKC twin plans/fia let his approval of plans/\ufb01a run",
    "n8": "Bob's note in plans/SHORTN~1 let his approval of plans/shortname-long run",
    "nb": "Bob's note in the root folder plans\\nb let his approval of plans/nb run",
    "nt": "Bob's note in plans/nt\\ let his approval of plans/nt run",
    "bs": "Bob's held twin source plans/bs/PLAN.md let his approval of plans/BS run",
    "np": "Bob's note in plans/NP before the plan came let his approval of plans/np run",
}
BROKEN: dict[str, Any] = {}  # the 14 ids fixed (2026-12-01, r83twinwriter)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_bobs_writing_in_a_twin(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    folder, tag = SHAPES[slug]
    if what == "ran":
        if slug == "ok":
            assert got["calls"][tag] == 1, got["calls"]
        else:
            assert got["calls"][tag] == 0, (got["calls"], got["rows"].get(f"plans/{folder}"))
    else:
        plan = f"plans/{folder}"
        if slug == "ok":
            assert plan in got["valid"], got["valid"]
        else:
            assert plan not in got["valid"], got["valid"]
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert got["valid"] == ran, (got["valid"], ran)


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk83a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r83tw-", dir="/tmp/atk83a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
