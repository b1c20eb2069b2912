"""Round 56, honest approvals wrongly refused: a recurring plan. Every week's plan carries the
same ``name`` and ``task`` (a template: "weekly key rotation"); last week's was Alice's. The
agent's commit that clears last week's plan away also adds this week's, written by the agent
from scratch (every action, ``why`` and param its own).

docs/approvals.md, "Who changed the content": a plan moved with an edit keeps its source's
writers when the removed plan and the added one are at least half alike by content (round
55, ``plan/likeness.py``): a leaf that distinguishes a plan (task, names, params, reasons)
weighs 1, the layout 0.1; "pairs that are no move at most 0.33". Two plans of one template
share exactly the two leaves a template fixes, name and task, which is half of a short plan.
Round 55 made a folder forget its writers when it is emptied because "recurring plans reuse
their folder names"; recurring plans reuse their names and tasks too.

Config: the bench's. Alice writes last week's ``plans/<v>-w47`` (name "weekly key rotation",
task "rotate the service keys", one ``rec`` action, her tag and ``why``); per variant:

- ``draft``: she left it a draft.
- ``rejected``: submitted; Bob rejects it.
- ``done``: Bob approves; it runs (``completed``).
- ``pr``: ``draft``, the agent's swap made on a branch it merges ``--no-ff``.
- ``later`` (control): ``draft``, the removal and the add in two agent commits.

Then ONE agent commit per variant removes ``plans/<v>-w47`` (``done``: ``git mv`` to
``archive/``) and adds ``plans/<v>-w48``: the same name and task, the agent's own
action (``why`` "rotate with the new vault path", tag ``<v>``, params ``vault``,
``keys``). A pass; Alice approves each ``<v>-w48``; two passes; ``plangate audit --json``.

Asserted (the promise): Alice wrote nothing of this week's plan but the template's two
strings, so her approval runs it once and the audit lists the run valid.

Seen: ``draft`` and ``pr`` broke (``E_SELF_APPROVAL: alice@example.com wrote or changed this
plan's content``): name and task equal, the rest the agent's, and her abandoned draft's
removal in the same commit makes it her move. ``later`` ran (two commits), so the verdict
hangs on the agent's commit boundaries; ``rejected`` (her vetoed plan) and ``done`` (her
finished plan moved to ``archive/``) ran. A first build with all three swaps in one commit
made ``rejected-w48`` the one refused and ``draft-w48`` run: her removed draft paired with
whichever new plan came first. Fix direction: the template's strings are what every plan of
a recurring series shares; pair a move on what says what a plan DOES (actions, why, params)
or require the removed plan's actions to carry over.

Fixed (2026-11-29): ``plan.name`` and ``plan.task`` weigh as layout (0.1) and her action,
its ``why`` and params all the agent's, does not survive: this week's plan keeps 0.086 of
hers; git's own pairing of the two (R052, from equal lines; under a copy's 66) is overruled
by the content pairing; and a removed plan goes to the plans that keep the most of it, ties to all.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BenchError, Lab, cases
from test_round2_execution_kit import shared

VIDS = ["draft", "rejected", "done", "pr", "later"]
BROKEN: dict[str, object] = {}


def weekly(tag: str, why: str, params: str, status: str) -> str:
    return (
        f'plan:\n  name: "weekly key rotation"\n  task: "rotate the service keys"\n'
        f"  status: {status}\navailable_tools:\n  - name: rec\nactions:\n  - id: 1\n"
        f'    tool: rec\n    why: "{why}"\n    params:\n      tag: "{tag}"\n{params}'
    )


def last_week(v: str, status: str) -> str:
    return weekly(f"{v}-old", "rotate keys by hand-picked list", '      list: "a,b,c"\n', status)


def this_week(v: str) -> str:
    return weekly(
        v,
        "rotate with the new vault path",
        '      vault: "secret/svc/v2"\n      keys: 4\n',
        "pending_approval",
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(
            f"{v}-w47",
            last_week(v, "draft" if v in ("draft", "pr", "later") else "pending_approval"),
        )
    lab.commit("alice writes last week's plans", ALICE)
    lab.run()
    time.sleep(1.05)
    lab.set_status("rejected-w47", "rejected")
    lab.set_status("done-w47", "approved")
    lab.commit("bob reviews", BOB)
    lab.run()
    lab.run()
    if not lab.calls("done-old"):
        raise BenchError(f"last week's plan did not run: {lab.codes('done-w47')[:400]}")
    (lab.repo / "archive").mkdir()
    for v in ("draft", "rejected", "done"):
        if v == "done":
            lab.git("mv", "plans/done-w47", "archive/done-w47")
        else:
            lab.git("rm", "-q", "-r", f"plans/{v}-w47")
        lab.write(f"{v}-w48", this_week(v))
        lab.commit(f"agent: this week's rotation ({v})", AGENT)
    lab.git("rm", "-q", "-r", "plans/later-w47")
    lab.commit("agent: clear last week", AGENT)
    lab.write("later-w48", this_week("later"))
    lab.commit("agent: this week's rotation", AGENT)
    lab.git("checkout", "-q", "-b", "side")
    lab.git("rm", "-q", "-r", "plans/pr-w47")
    lab.write("pr-w48", this_week("pr"))
    lab.commit("agent: this week's rotation (pr)", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(f"{v}-w48", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-recurring", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_approval_of_this_weeks_plan_runs(lab: Lab, vid: str) -> None:
    slug = f"{vid}-w48"
    codes = lab.codes(slug)
    if "approval request" not in codes and not lab.calls(vid):
        raise BenchError(f"{vid}: no approval was read: {codes[:600]}")
    assert "E_SELF_APPROVAL" not in codes, codes[:800]
    assert len(lab.calls(vid)) == 1, codes[:800]
    runs = [e for e in lab.report.get("executions", []) if e.get("plan") == f"plans/{slug}"]  # type: ignore[attr-defined]
    assert runs and all(e.get("approval_valid") for e in runs), runs
