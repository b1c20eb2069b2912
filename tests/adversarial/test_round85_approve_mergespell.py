"""Round 85, approval and policy (r85mergespell's own variants, not the attacker's): the two
round-85 writer classes (a spelling of the plans folder that comes by a merge; a symbolic link
committed into a plan's folder) in forms the attacker did not try, and a spelled folder emptied
as its own spelling is (round 55's rule, one place for every spelling: atk85a's ``wcd``).

Lab (one, built once; ``plans_dir`` the default ``plans``). The agent commits one plan per
variant (frozen by the first pass); Bob (an allowed approver) commits what the variant names,
then approves; ``<slug>:ran`` counts the recording tool's calls (none: ``E_SELF_APPROVAL``),
``<slug>:audit`` the fresh clone's ``plangate audit`` calls valid exactly the runs made.

- ``ms``: a SYMLINK ``plans/ms/NOTES.md -> ../../README`` on Bob's branch, merged ``--no-ff``
  by the agent (both classes at once: the side walk reads a link as a file of the folder).
- ``mg``: a submodule entry (gitlink) ``Plans/mg/sub`` Bob commits on main (an entry of any
  mode, in a spelling of the plans folder).
- ``mr``: ``plans./mr/NOTES.md`` added and removed again on Bob's branch before the agent's
  ``--no-ff`` merge: only the branch's own trees hold the spelling (not the merge's, not the
  first-parent line's); the plan was in its folder all along, so the place was never emptied.
- ``ke``: BEFORE the plan, Bob's ``PLANS/ke/NOTES.md`` beside Alice's ``plans/ke/NOTES.md``;
  Bob's is removed, Alice's stays: the place ``plans/ke`` never emptied, Bob stays a writer.
- ``ko``: the mirror: Bob's ``plans/ko/NOTES.md`` removed while Alice's ``PLANS/ko/NOTES.md``
  stays (before r85mergespell only the removed folder's parent was asked for a twin: Bob was
  forgotten and his approval ran).
- ``ok`` (control): Alice approves: runs once. ``ce`` (control): Bob's ``PLANS/ce/NOTES.md``
  made and removed before the plan (the place emptied, as ``plans/cn``'s would be): his
  approval runs once.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

WRITERS = ["ms", "mg", "mr", "ke", "ko"]
SLUGS = [*WRITERS, "ok", "ce"]
RUNS = {"ok": 1, "ce": 1}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    # before the plans: notes in both spellings of ke/ko, Bob's removed; ce made and removed
    _put(lab, "PLANS/ke/NOTES.md", "Bob.\n")
    _put(lab, "plans/ke/NOTES.md", "Alice.\n")
    _put(lab, "plans/ko/NOTES.md", "Bob.\n")
    _put(lab, "PLANS/ko/NOTES.md", "Alice.\n")
    lab.commit("notes", ALICE, "plans/ke", "PLANS/ko")
    lab.commit("bob: notes", BOB)
    _put(lab, "PLANS/ce/NOTES.md", "Bob.\n")
    lab.commit("bob: note ce", BOB)
    lab.git("rm", "-q", "PLANS/ke/NOTES.md", "plans/ko/NOTES.md", "PLANS/ce/NOTES.md")
    lab.commit("bob: notes gone", BOB)
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    # a symlink on a merged branch; a spelling added and removed on a merged branch
    lab.git("checkout", "-q", "-b", "notes")
    os.symlink("../../README", lab.repo / "plans" / "ms" / "NOTES.md")
    _put(lab, "plans./mr/NOTES.md", "Reviewed.\n")
    lab.commit("bob: link and note", BOB)
    lab.git("rm", "-rq", "plans.")
    lab.commit("bob: note gone", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge notes", "notes", who=AGENT)
    # a gitlink in a spelling of the plans folder, on main (its folder left empty: unpopulated)
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{lab.head()},Plans/mg/sub")
    (lab.repo / "Plans" / "mg" / "sub").mkdir(parents=True)
    lab.git("commit", "-q", "-m", "bob: submodule", who=BOB)
    lab.run()
    for slug in [*WRITERS, "ce"]:
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    lab.approve("ok", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an %s", "--name-status")[-4000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-approve-mergespell", _build)


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")]
BROKEN: dict[str, Any] = {}


def _brief(row: dict[str, Any]) -> Any:
    return (row.get("status"), (row.get("notes") or [])[-3:])


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round85_mergespell(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))
    if slug in WRITERS:
        assert "E_SELF_APPROVAL" in json.dumps(row, ensure_ascii=False), _brief(row)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r85ms-", dir="/tmp"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
