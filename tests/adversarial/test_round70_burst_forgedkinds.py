"""Round 70, bursts: controller-named commits of every OTHER kind than round 69's starts (freeze,
await-approval, complete, fail, abort, a forged batch) unsealed or carrying a copied real seal
line, and a look-alike end of ANOTHER version of a plan in the middle of its run, all before one
merge approving many plans.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds plain plans
``p-01``..``p-07``, gated plans ``g-01``..``g-04`` and ``x-01``/``x-02`` (one action) in one
commit; a pass freezes them. Alice approves the gated four and ``x-*``; a pass pauses each
``g-*`` at its gate and completes ``x-*`` (v1). The agent empties the ``x-*`` folders (a
recurring plan, docs/approvals.md) and writes ``x-*`` v2 (gated) there; a pass freezes; Alice
approves; a pass runs v2's action 1 and pauses at its gate. Then the agent, under the
controller's identity (``plangate@localhost``):

- ``ffreezeu``: ``p-01`` rewritten (``note: v2``), frozen with ``plangate freeze`` by hand, and
  committed as ``plangate: freeze plans/p-01`` with no seal; ``ffreezec``: the same for ``p-02``
  with a real commit's seal line;
- ``fpauseu``: an unsealed ``await-approval`` of the pending ``p-03``;
- ``ffailc``: a ``fail`` of the pending ``p-04`` with a copied seal;
- ``fcompleteu``: an unsealed ``complete`` of the paused ``g-01``; ``fcompletec``: the same for
  ``g-02`` with a copied seal;
- ``fabortu``: an unsealed ``abort`` of the paused ``g-03`` (``Aborted-By: alice``, no request);
- ``fbatch``: one unsealed batch ``plangate: 2 plan events``: a ``complete`` of ``g-04`` and an
  ``await-approval`` of ``p-05``;
- ``xendc``: ``x-01`` v1's real sealed ``complete`` message replayed onto the tip, file
  ``completed``, in the middle of v2's run; ``xendu``: the same for ``x-02`` with the seal cut.

Then Alice's review branch approves ``p-01``..``p-06`` and the gates of ``g-*`` and ``x-*``,
merged ``--no-ff`` (one merge approving twelve); one pass; one more pass.

Asserted per forgery: ``<v>-run``: what Alice approved ran exactly once (for ``ffreeze*``: the
content she approved, ``note: v2``; for the gates: action 2 once, action 1 never again);
``<v>-row``: the plan's ``status`` row is ``completed``; ``<v>-clone`` / ``<v>-config``: the
fresh-clone audit and ``audit --config`` list exactly the runs that happened as valid (a gate's
resume counts one more start). Controls: ``p-06`` ran once, ``p-07`` (never approved) not at
all.

Seen. HELD (all 45 and the lab): every forgery's plan ran what Alice approved exactly once (the
hand-frozen ``p-01``/``p-02`` ran their ``note: v2`` content; each gate's action 2 once, action
1 never again; ``x-*`` v2's action 2 once after v1's replayed end, sealed or not), every row is
``completed``, and the fresh-clone audit and ``audit --config`` agree on every plan (the
unsealed and copied-seal outcomes, the abort with no request, the forged batch and v1's replayed
end flagged ``controller-unexplained``/``illegal``, never read as a run's end).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, clone_audit, plan_text, valid_runs
from burstkit import (
    approved_plans,
    bot_rows,
    counts,
    date_steps,
    forge,
    gated,
    gated_as,
    review_merge,
    save_out,
    set_committed,
    status_rows,
)
from test_round2_execution_kit import shared

P = [f"p-{i:02d}" for i in range(1, 8)]
G = [f"g-{i:02d}" for i in range(1, 5)]
X = ["x-01", "x-02"]
BROKEN: dict[str, object] = {}


TAGS = (
    [*P, *X] + [f"{g}-{n}" for g in G for n in (1, 2)] + [f"{x}v2-{n}" for x in X for n in (1, 2)]
)


def _hash_of(lab: Lab, slug: str) -> str:
    return str(lab.plan(slug)["frozen"]["hash"])


def _group(lab: Lab, slug: str, event: str, status: str, approval: str | None) -> str:
    g = f"Plan: plans/{slug}\nPlan-Event: {event}\nPlan-Hash: {_hash_of(lab, slug)}\n"
    g += f"Plan-Status: {status}\n"
    if approval:
        g += f"Approved-By: alice@example.com\nApproval-Commit: {approval}\n"
    return g


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)

    plans = {v: plan_text(v) for v in P} | {v: gated(v) for v in G} | {v: plan_text(v) for v in X}
    approval = approved_plans(lab, date, plans, [*G, *X], "approve the gated four and x")
    lab.run()
    ends = {}
    for r in bot_rows(lab):
        for x in X:
            if r[3] == f"plangate: complete plans/{x}" and x not in ends:
                ends[x] = r[4]
    assert set(ends) == set(X), [r[3] for r in bot_rows(lab)]
    seal = next(
        line
        for r in bot_rows(lab)
        for line in r[4].split("\n")
        if line.startswith("Controller-Seal:")
    )
    date()
    for x in X:  # a recurring plan: the finished folder emptied, then its next version
        lab.git("rm", "-q", "-r", f"plans/{x}")
    lab.commit("x done: empty the folders")
    date()
    for x in X:
        lab.write(x, gated_as(f"{x}v2", f"{x} v2"))
    lab.commit("x v2")
    lab.run()
    date()
    for x in X:
        lab.set_status(x, "approved")
    xapproval = lab.commit("approve x v2", ALICE)
    lab.run()
    lab.first = counts(lab, TAGS)  # type: ignore[attr-defined]
    date()
    ctl = "Controller: host/3f2a9c1b\n"
    # ffreezeu / ffreezec: a hand-frozen v2 committed as the controller's freeze
    for slug, sealed in (("p-01", False), ("p-02", True)):
        lab.write(slug, plan_text(slug, params='note: "v2"\n'))
        fr = lab.cli("freeze", str(lab.repo / "plans" / slug / "PLAN.yml"), cwd=lab.repo)
        assert fr.returncode == 0, fr.stderr[-800:]
        lab.git("add", "-A")
        body = f"plangate: freeze plans/{slug}\n\n" + _group(
            lab, slug, "freeze", "pending_approval", None
        ).replace("Plan-Event: freeze\n", "")
        forge(lab, body + ctl + (seal + "\n" if sealed else ""))
    # fpauseu
    set_committed(lab, "p-03", "awaiting_approval")
    forge(lab, "plangate: await-approval plans/p-03\n\n"
           + _group(lab, "p-03", "await-approval", "awaiting_approval", approval)
           .replace("Plan-Event: await-approval\n", "") + ctl)  # fmt: skip
    # ffailc
    set_committed(lab, "p-04", "failed")
    forge(lab, "plangate: fail plans/p-04\n\n"
           + _group(lab, "p-04", "fail", "failed", approval).replace("Plan-Event: fail\n", "")
           + ctl + seal + "\n")  # fmt: skip
    # fcompleteu / fcompletec
    for slug, sealed in (("g-01", False), ("g-02", True)):
        set_committed(lab, slug, "completed")
        forge(lab, f"plangate: complete plans/{slug}\n\n"
               + _group(lab, slug, "complete", "completed", approval)
               .replace("Plan-Event: complete\n", "")
               + ctl + (seal + "\n" if sealed else ""))  # fmt: skip
    # fabortu
    set_committed(lab, "g-03", "aborted")
    forge(lab, "plangate: abort plans/g-03\n\n"
           + _group(lab, "g-03", "abort", "aborted", approval).replace("Plan-Event: abort\n", "")
           + "Aborted-By: alice@example.com\n" + ctl)  # fmt: skip
    # fbatch
    set_committed(lab, "g-04", "completed")
    set_committed(lab, "p-05", "awaiting_approval")
    forge(lab, "plangate: 2 plan events\n\n"
           + _group(lab, "g-04", "complete", "completed", approval)
           + _group(lab, "p-05", "await-approval", "awaiting_approval", approval)
           + ctl)  # fmt: skip
    # xendc / xendu: v1's real end replayed in the middle of v2's run
    for x, sealed in (("x-01", True), ("x-02", False)):
        set_committed(lab, x, "completed")
        msg = ends[x]
        if not sealed:
            msg = "\n".join(ln for ln in msg.split("\n") if not ln.startswith("Controller-Seal:"))
        forge(lab, msg)
    lab.git("reset", "-q", "--hard")
    date()
    review_merge(lab, [*P[:6], *G, *X], date, "approve seven plans and six gates")
    run = lab.run(check=False)
    lab.pass1 = {"rc": run.returncode, "err": run.stderr[-1500:]}  # type: ignore[attr-defined]
    date()
    lab.run(check=False)
    lab.after = counts(lab, TAGS)  # type: ignore[attr-defined]
    lab.rows = status_rows(lab)  # type: ignore[attr-defined]
    lab.params = {  # type: ignore[attr-defined]
        s: [c.get("params", c) for c in lab.calls(s)] for s in ("p-01", "p-02")
    }
    report, _ = clone_audit(lab, root)
    slugs = [*P, *G, *X]
    lab.valid = {s: len(valid_runs(report, s)) for s in slugs}  # type: ignore[attr-defined]
    lab.cfind = [  # type: ignore[attr-defined]
        {k: f.get(k) for k in ("plan", "kind", "code", "message", "commit")}
        for f in report.get("findings", [])
    ]
    _, creport = lab.audit(config=lab.config)
    lab.cvalid = {s: len(valid_runs(creport, s)) for s in slugs}  # type: ignore[attr-defined]
    lab.xapproval = xapproval  # type: ignore[attr-defined]
    save_out(lab, root, ["first", "pass1", "after", "rows", "params", "valid", "cvalid", "cfind"])
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-forgedkinds", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    assert all(first[f"{g}-1"] == 1 and first[f"{g}-2"] == 0 for g in G), first
    assert all(first[x] == 1 and first[f"{x}v2-1"] == 1 for x in X), first
    assert lab.pass1["rc"] == 0, lab.pass1  # type: ignore[attr-defined]


WHO = {
    "ffreezeu": "p-01",
    "ffreezec": "p-02",
    "fpauseu": "p-03",
    "ffailc": "p-04",
    "fcompleteu": "g-01",
    "fcompletec": "g-02",
    "fabortu": "g-03",
    "fbatch": "g-04",
    "fbatchp": "p-05",
    "xendc": "x-01",
    "xendu": "x-02",
}
#: valid runs (starts; a gate's resume is one more) the audits should list
EXPECTED = {**{p: 1 for p in P[:6]}, "p-07": 0, **{g: 2 for g in G}, **{x: 3 for x in X}}
IDS = [f"{v}-{k}" for v in WHO for k in ("run", "row", "clone", "config")] + ["control"]


def _ran(slug: str) -> dict[str, int]:
    if slug.startswith("g-"):
        return {f"{slug}-1": 1, f"{slug}-2": 1}
    if slug.startswith("x-"):
        return {slug: 1, f"{slug}v2-1": 1, f"{slug}v2-2": 1}
    return {slug: 1}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_forged_event_of_another_kind(lab: Lab, vid: str) -> None:
    after, rows = lab.after, lab.rows  # type: ignore[attr-defined]
    if vid == "control":
        got = {t: after[t] for t in ("p-06", "p-07")}
        assert got == {"p-06": 1, "p-07": 0}, (got, rows)
        return
    how, what = vid.split("-", 1)
    slug = WHO[how]
    said = {"row": rows.get(slug), "pass1": lab.pass1["err"][-400:]}  # type: ignore[attr-defined]
    if what == "run":
        want = _ran(slug)
        assert {t: after[t] for t in want} == want, said
        if how.startswith("ffreeze"):
            got = json.dumps(lab.params[slug])  # type: ignore[attr-defined]
            assert "v2" in got, got
    elif what == "row":
        assert (rows.get(slug) or {}).get("status") == "completed", said
    else:
        valid = lab.valid if what == "clone" else lab.cvalid  # type: ignore[attr-defined]
        mine = [f for f in lab.cfind if f.get("plan") == f"plans/{slug}"]  # type: ignore[attr-defined]
        assert valid[slug] == EXPECTED[slug], (valid[slug], EXPECTED[slug], mine, said)
