"""Round 69, bursts: the controller's sealed batched commit at the tip, amended by the agent
(docs/approvals.md: "a seal this key verifies (even on a commit the agent amended) is its
own"; docs/operations.md: "an agent's git commit --amend of a controller commit stays
anyone's"; a rewrite of what the controller read is ``E_HISTORY_REWRITTEN``).

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds four sets of
plans in one commit, a pass freezes them (one batch): gated ``a-01``..``a-03``,
``b-01``..``b-03``, ``c-01``..``c-03`` (action 1, then action 2 behind ``requires_approval``) and
plain ``d-01``..``d-04``. Stage by stage, Alice approves a set in one commit, a pass runs it (a
batched start; the pass's last commit, at the tip, is the last plan's own ``await-approval``
or ``complete``: the first event alone, then batches, docs/performance.md); the agent then
amends that sealed tip commit (committer the agent, author kept):

- ``date``: ``a``'s tip, ``--amend --no-edit`` with another date (tree, parent and message kept:
  the seal still verifies);
- ``msg``: ``b``'s tip, a line added to its body (the seal no longer verifies);
- ``tree``: ``c``'s tip, a file added outside the plans folder;
- ``done``: ``d``'s tip (a ``complete``), another date.

Then one pass; if a row (or the pass) says ``E_HISTORY_REWRITTEN``, the owner follows its remedy
("restore them"): the branch back to the controller's commit. Alice then approves
the gates of the set (for ``d``: approves ``d-01`` and ``d-02`` again, as a plan ``status``
might show waiting); one pass; ``status``.

Asserted per variant: ``<v>-once``: no action ran twice; ``<v>-gates`` (gated sets): each
gated action 2 ran once, every plan of the set ``completed``; ``done-rows``: the ``d`` plans are
``completed`` and nothing ran again; ``<v>-pass``: the pass after the amend either refuses
``E_HISTORY_REWRITTEN`` or works (no other error); ``audit``: the fresh-clone audit lists
one valid first start and one valid resume per gated plan, one valid run per ``d`` plan.

Seen. HELD, all 13: the amended tip's plan (``a-03``, ``b-03``, ``c-03``, ``d-04``) is held, its
row ``executing`` with "E_HISTORY_REWRITTEN: a rewrite of the branch erased the controller's
commits of this plan ...; restore them or delete the plan" (also for the date-only amend
whose seal still verifies: a rewrite wins over the seal; the safe side), the pass exits 0
and commits nothing over the amend; the other plans of the burst go on; after the remedy
(the controller's commit back) her gate approvals run each action 2 once, every row
``completed``, her repeated approvals of ``d-01``/``d-02`` run nothing (``E_ILLEGAL_TRANSITION``
from completed), and the fresh-clone audit lists one first start and one resume per gated
plan, one run per plain plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, clone_audit, plan_text, valid_runs
from burstkit import clock, counts, date_steps, gated
from test_round2_execution_kit import shared

SETS = {"date": "a", "msg": "b", "tree": "c", "done": "d"}
GATED = ["a", "b", "c"]
BROKEN: dict[str, object] = {}


def slugs(s: str) -> list[str]:
    return [f"{s}-{i:02d}" for i in range(1, 5 if s == "d" else 4)]


def tags(s: str) -> list[str]:
    if s == "d":
        return slugs(s)
    return [f"{x}-{n}" for x in slugs(s) for n in (1, 2)]


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)

    date()
    for s in GATED:
        for v in slugs(s):
            lab.write(v, gated(v))
    for v in slugs("d"):
        lab.write(v, plan_text(v))
    lab.commit("agent plans")
    lab.run()
    lab.out = {}  # type: ignore[attr-defined]
    for how, s in SETS.items():
        date()
        for v in slugs(s):
            lab.set_status(v, "approved")
        lab.commit(f"approve set {s}", ALICE)
        lab.run()
        tip = lab.head()
        row = lab.log_rows(rev="-1")[0]
        res: dict = {"tip_author": row[2], "tip_subject": row[3], "first": counts(lab, tags(s))}
        date()
        if how in ("date", "done"):
            back = f"@{clock(lab) - 5000} +0000"
            lab.git("commit", "-q", "--amend", "--no-edit", "--date", back, who=AGENT)
        elif how == "msg":
            body = row[4].replace("\nPlan: ", "\nReviewed: yes\n\nPlan: ", 1)
            lab.git("commit", "-q", "--amend", "-m", body, who=AGENT)
        else:
            (lab.repo / "NOTES.md").write_text("notes\n")
            lab.git("add", "NOTES.md")
            lab.git("commit", "-q", "--amend", "--no-edit", who=AGENT)
        # git keeps the author: the controller's
        res["amended_author"] = lab.log_rows(rev="-1")[0][2]
        amended = lab.head()
        date()
        run = lab.run(check=False)
        res["pass"] = {"rc": run.returncode, "err": run.stderr[-1200:]}
        held = lab.cli("status", "--json", "--config", str(lab.config)).stdout
        res["held"] = sorted(
            r["plan"] for r in json.loads(held) if "E_HISTORY_REWRITTEN" in json.dumps(r)
        )
        res["over"] = lab.head() != amended  # the controller committed over the amend
        if res["held"] or "E_HISTORY_REWRITTEN" in run.stderr:
            # the owner restores the controller's commit (the row's remedy)
            lab.git("reset", "-q", "--hard", tip)
            again = lab.run(check=False)
            res["remedy"] = {"rc": again.returncode, "err": again.stderr[-800:]}
        date()
        if s == "d":
            for v in ("d-01", "d-02"):
                lab.set_status(v, "approved")
            lab.commit("approve d-01 and d-02 again", ALICE)
        else:
            for v in slugs(s):
                lab.set_status(v, "approved")
            lab.commit(f"approve the gates of set {s}", ALICE)
        run = lab.run(check=False)
        res["pass2"] = {"rc": run.returncode, "err": run.stderr[-1200:]}
        res["after"] = counts(lab, tags(s))
        listed = json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
        res["rows"] = {
            r["plan"][len("plans/") :]: (r.get("status"), r.get("waiting"), r.get("last_event"))
            for r in listed
            if r["plan"][len("plans/") :] in slugs(s)
        }
        lab.out[how] = res  # type: ignore[attr-defined]
    report, _ = clone_audit(lab, root)
    lab.valid = {  # type: ignore[attr-defined]
        v: len(valid_runs(report, v)) for s in SETS.values() for v in slugs(s)
    }
    (root / "out.json").write_text(json.dumps({"out": lab.out, "valid": lab.valid}, indent=1))  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-amended", _build)


def test_the_lab(lab: Lab) -> None:
    for how, s in SETS.items():
        res = lab.out[how]  # type: ignore[attr-defined]
        assert res["tip_author"] == BOT[1], res["tip_subject"]
        assert res["amended_author"] == BOT[1], res
        if s != "d":
            assert all(n == (1 if t.endswith("-1") else 0) for t, n in res["first"].items()), res


IDS = [f"{v}-{k}" for v in SETS for k in ("once", "pass")]
IDS += [f"{v}-gates" for v in ("date", "msg", "tree")] + ["done-rows", "audit"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_an_amended_controller_commit(lab: Lab, vid: str) -> None:
    how, _, what = vid.partition("-")
    if vid == "audit":
        valid = lab.valid  # type: ignore[attr-defined]
        want = {v: (1 if v.startswith("d") else 2) for v in valid}
        wrong = {v: (n, want[v]) for v, n in valid.items() if n != want[v]}
        assert wrong == {}, wrong
        return
    res = lab.out[how]  # type: ignore[attr-defined]
    said = (res["pass"], res.get("remedy"), res["pass2"], res["after"], res["rows"])
    if what == "once":
        assert all(n <= 1 for n in res["after"].values()), said
    elif what == "pass":
        p = res["pass"]
        assert p["rc"] == 0 or "E_HISTORY_REWRITTEN" in p["err"], said
        assert "Traceback" not in p["err"] and res["pass2"]["rc"] == 0, said
    elif what == "gates":
        assert all(n == 1 for n in res["after"].values()), said
        bad = {v: r for v, r in res["rows"].items() if r[0] != "completed"}
        assert bad == {}, (bad, said)
        assert res["held"] == [f"plans/{SETS[how]}-03"] and not res["over"], said
    else:
        assert res["held"] == ["plans/d-04"] and not res["over"], said
        assert all(n == 1 for n in res["after"].values()), said
        bad = {v: r for v, r in res["rows"].items() if r[0] != "completed"}
        assert bad == {}, (bad, said)
