"""Round 46, who may make a plan run: round 45's "a merge whose status comes from a merged
branch approves the version that branch held" versus merges with SEVERAL merged branches
(octopus), one of which holds the new content (without the status) and another the status
(with the old content).

Config: the bench's; ``plans/two/**`` needs two approvals. Each plan ``plans/<one|two>/<vid>``
is the agent's (``n: 1``). The controller freezes. The agent opens the stale ``pr-<vid>``
setting ``approved`` (Bob reviews ``n: 1``). On main the agent edits ``n: 1`` -> ``n: 2``; the
controller freezes the new version. Then Bob merges:

- ``octo-other``: ``git merge pr-<vid> side-<vid>`` (octopus), ``side-<vid>`` an unrelated
  branch (adds a README below ``docs/``);
- ``octo-holder``: octopus of ``pr-<vid>`` and ``hold-<vid>``, a branch cut from main AFTER the
  edit (holds the new ``n: 2`` version, ``pending_approval``, plus an unrelated file): a merged
  branch holds the result's content, another the status;
- ``octo-holder-first``: the same, the holder named first (``git merge hold-<vid> pr-<vid>``);
- ``two-holder`` (two approvals): Alice approves the NEW version on main (partial), then Bob's
  octopus of the stale ``pr`` and the holder;
- ``ctl-octo``: an octopus of a fresh ``pr`` (cut after the edit, sets ``approved``) and an
  unrelated side branch (starts).

Asserted (the defence): no merged branch held ``n: 2`` with ``approved``: the merge is refused
``E_PLAN_HASH_MISMATCH``; ``rec`` never runs for it; a clone's ``check --as bob`` (for the stale
``pr`` branch) predicts no start.

Seen: all held (each stale octopus refused ``E_PLAN_HASH_MISMATCH``, ``rec`` never ran for
it, ``two-holder`` too despite Alice's vote for the new version; the control ran once;
``check`` agreed with the controller on every variant).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
WHERE = {
    "octo-other": "one",
    "octo-holder": "one",
    "octo-holder-first": "one",
    "two-holder": "two",
    "ctl-octo": "one",
}
ATTACKS = [v for v in WHERE if not v.startswith("ctl")]

FOUND: dict[str, pytest.MarkDecorator] = {}


def _slug(vid: str) -> str:
    return f"{WHERE[vid]}/{vid}"


def _branch(lab: Lab, name: str, fn: Any) -> None:
    lab.git("checkout", "-q", "-b", name, "main")
    fn()
    lab.git("checkout", "-q", "main")


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in WHERE:
        lab.write(_slug(vid), plan_text(vid, params="n: 1\n"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in ATTACKS:

        def ask(vid: str = vid) -> None:
            lab.set_status(_slug(vid), "approved")
            lab.commit(f"agent asks {vid}", AGENT)

        _branch(lab, f"pr-{vid}", ask)
    for vid in WHERE:
        text = lab.read(_slug(vid))
        lab.write(_slug(vid), text.replace("n: 1", "n: 2"))
    lab.commit("agent edits on main", AGENT)
    lab.run()  # freeze the new versions
    time.sleep(1.05)
    lab.approve(_slug("two-holder"), ALICE)
    lab.run()  # partial
    time.sleep(1.05)
    for vid in WHERE:

        def side(vid: str = vid) -> None:
            (lab.repo / "docs").mkdir(exist_ok=True)
            (lab.repo / "docs" / f"{vid}.md").write_text(f"{vid}\n")
            lab.commit(f"side {vid}", AGENT)

        name = "side" if vid in ("octo-other", "ctl-octo") else "hold"
        _branch(lab, f"{name}-{vid}", side)
    lab.git("checkout", "-q", "-b", "pr-ctl-octo", "main")
    lab.set_status(_slug("ctl-octo"), "approved")
    lab.commit("agent asks ctl-octo", AGENT)
    lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in WHERE:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", BOB[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    merged: dict[str, str] = {}
    for vid in WHERE:
        other = ("side" if vid in ("octo-other", "ctl-octo") else "hold") + f"-{vid}"
        heads = [other, f"pr-{vid}"] if vid == "octo-holder-first" else [f"pr-{vid}", other]
        out = lab.git("merge", "--no-ff", "-q", "-m", f"merge {vid}", *heads, who=BOB, check=False)
        status = lab.plan(_slug(vid))["plan"]["status"]
        parents = len(lab.git("rev-list", "--parents", "-n1", "HEAD").split())
        merged[vid] = f"{status} {parents} {out}"
    lab.merged = merged  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r46-octopus", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_every_merge_is_an_octopus_carrying_approved(lab: Lab) -> None:
    for vid, row in lab.merged.items():  # type: ignore[attr-defined]
        assert row.startswith("approved 4"), (vid, row)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl-octo")) == 1, lab.codes(_slug("ctl-octo"))


@pytest.mark.parametrize("vid", _p(ATTACKS))
def test_the_stale_octopus_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(_slug(vid))
    assert not lab.started(_slug(vid)), lab.codes(_slug(vid))
    assert "E_PLAN_HASH_MISMATCH" in lab.codes(_slug(vid)), lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", _p(list(WHERE), "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    import json

    mine = checkkit.prediction(lab, vid, _slug(vid))
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(_slug(vid)), json.dumps(mine)[:2000]
