"""Round 31, self-approval and quorum: ``identity_aliases`` (plus tags, people) meeting an
address whose domain is an IDNA A-label (``xn--``, any case of the prefix) that decodes to a
spelling the identity rules reduce.

Config: the bench's, plus ``identity_aliases: {plus_tags: ["*@ops.example.com"], people:
[[alice@example.com, a.smith@corp.example]]}`` and ``plans/two/**`` needs two approvals.

Self-approval (the writer commits the plan as author and committer; the controller freezes;
the writer approves on main under the plain address). Defence: ``E_SELF_APPROVAL``, ``rec``
never runs:

- ``plus-zwsp``: Bob writes as ``bob+ci@xn--ops-7m0a.example.com`` (``ops`` + U+200B), a plus
  tag on an A-label domain;
- ``plus-full``: Bob writes as ``bob+ci@xn--0i7ccj.example.com`` (fullwidth ``ｏｐｓ``);
- ``people-zwsp``: Alice writes as ``a.smith@xn--corp-y76a.example`` (``corp`` + U+200B: her
  declared second address); approves as ``alice@example.com``;
- ``ace-upper``: Bob writes as ``bob@XN--OPS-7M0A.EXAMPLE.COM`` (the ACE prefix in capitals);
- ``ace-mixed``: Bob writes as ``bob@Xn--ops-7m0a.example.com``;
- ``ace-plus``: Bob writes as ``bob+ci@XN--ops-7m0a.example.com``.

Quorum (the agent writes ``plans/two/*``; Bob votes twice, each vote its own commit and pass).
Defence: one person counts once: ``partial``, ``rec`` never runs:

- ``two/q-plus``: ``bob@ops.example.com``, then ``bob+ci@xn--ops-7m0a.example.com``;
- ``two/q-ace``: ``bob@ops.example.com``, then ``bob@XN--ops-7m0a.example.com``;
- ``two/q-people``: ``alice@example.com``, then ``a.smith@xn--corp-y76a.example`` (not an
  approver under that name; counted as Alice if at all).

Controls: ``ctl`` (the agent writes, Bob approves) and ``two/ctl`` (Bob, then Carol) run once.

``junk-as-*``: ``plangate check --as`` with a domain label that does not decode
(``xn--55555555555555555555``, ``xn--999999999999999999999999a``, ``xn--a``, ``XN--``): an
answer or an ``E_...`` code, never a traceback.

``plangate check`` (``check-*``): the same writers (``chk-<variant>``, plus ``chk-ctl`` the
agent wrote) on a pull request in which the agent sets the plan ``approved``; in a fresh clone,
``plangate check --config ... --as <writer's plain address>`` predicts; then the writer merges
it ``--no-ff`` and the controller passes. Asserted: check predicts ``start`` exactly when the
controller starts.

Results: every variant held (``E_SELF_APPROVAL``; ``partial`` with one vote; check agreed
with the controller; no traceback for undecodable labels; controls ran once).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

WRITERS = {
    "plus-zwsp": ("Bob", "bob+ci@xn--ops-7m0a.example.com", BOB),
    "plus-full": ("Bob", "bob+ci@xn--0i7ccj.example.com", BOB),
    "people-zwsp": ("Alice", "a.smith@xn--corp-y76a.example", ALICE),
    "people-plain": ("Alice", "a.smith@corp.example", ALICE),
    "people-nolabel": ("Alice", "a.smith@corp\u200b.example", ALICE),
    "people-full": ("Alice", "a.smith@xn--oi7cyadh.example", ALICE),
    "people-cgj": ("Alice", "a.smith@xn--corp-06c.example", ALICE),
    "people-shy": ("Alice", "a.smith@xn--corp-tga.example", ALICE),
    "people-ace": ("Alice", "a.smith@XN--corp-y76a.example", ALICE),
    "people-label": ("Alice", "a.smith@xn--corp-.example", ALICE),
    "ace-upper": ("Bob", "bob@XN--OPS-7M0A.EXAMPLE.COM", BOB),
    "ace-mixed": ("Bob", "bob@Xn--ops-7m0a.example.com", BOB),
    "ace-plus": ("Bob", "bob+ci@XN--ops-7m0a.example.com", BOB),
}
VOTES = {
    "q-plus": (BOB, ("Bob", "bob+ci@xn--ops-7m0a.example.com")),
    "q-ace": (BOB, ("Bob", "bob@XN--ops-7m0a.example.com")),
    "q-people": (ALICE, ("A Smith", "a.smith@xn--corp-y76a.example")),
    "ctl": (BOB, CAROL),
}
FOUND: dict[str, pytest.MarkDecorator] = {}
ALIASES = (
    "identity_aliases:\n"
    '  plus_tags: ["*@ops.example.com"]\n'
    "  people: [[alice@example.com, a.smith@corp.example]]\n"
    'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=ALIASES)
    for vid, (name, email, _) in WRITERS.items():
        lab.write(vid, plan_text(vid))
        lab.commit(f"writes {vid}", (name, email))
    lab.write("ctl", plan_text("ctl"))
    for vid in VOTES:
        lab.write(f"two/{vid}", plan_text(f"two-{vid}"))
    lab.commit("agent writes the rest", AGENT)
    for vid, (name, email, _) in WRITERS.items():
        lab.write(f"chk-{vid}", plan_text(f"chk-{vid}"))
        lab.commit(f"writes chk-{vid}", (name, email))
    lab.write("chk-ctl", plan_text("chk-ctl"))
    lab.commit("agent writes chk-ctl", AGENT)
    lab.run()
    _checks(lab, root)
    for vid, (_, _, who) in WRITERS.items():
        lab.approve(vid, who)
    lab.approve("ctl", BOB)
    for vid, (first, _) in VOTES.items():
        lab.approve(f"two/{vid}", first)
    lab.run()
    for vid, (_, second) in VOTES.items():
        lab.approve(f"two/{vid}", second)
    lab.run()
    return lab


JUNK_AS = [
    "bob@xn--55555555555555555555.com",
    "bob@xn--999999999999999999999999a.example.com",
    "bob@xn--a.com",
    "B <bob@XN--.com>",
]
CHK = {**{v: w[2] for v, w in WRITERS.items()}, "ctl": BOB}


def _checks(lab: Lab, root: Path) -> None:
    for vid in CHK:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(f"chk-{vid}", "approved")
        lab.commit(f"agent asks chk-{vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid, who in CHK.items():
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", who[1], "--format", "json", cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    for i, junk in enumerate(JUNK_AS):
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", "origin/pr-ctl", "--as", junk, "--format", "json", cwd=chk,
        )  # fmt: skip
        report[f"junk{i}"] = {"rc": out.returncode, "out": out.stdout, "err": out.stderr[-2000:]}
    (root / "check.json").write_text(json.dumps(report))
    shutil.rmtree(chk, ignore_errors=True)
    time.sleep(1.05)
    for vid, who in CHK.items():
        lab.git("merge", "--no-ff", "-q", "-m", f"merge chk-{vid}", f"pr-{vid}", who=who)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-aliaslabels", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_controls_run_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")
    assert len(lab.calls("two-ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("vid", _p(list(WRITERS)))
def test_writer_behind_alias_and_a_label_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(["q-plus", "q-ace", "q-people"]))
def test_one_person_behind_an_a_label_votes_once(lab: Lab, vid: str) -> None:
    assert lab.calls(f"two-{vid}") == [], lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in CHK]))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    name = vid.removeprefix("check-")
    row = json.loads((lab.root / "check.json").read_text())[name]
    assert row["out"].strip(), row["err"]
    assert "Traceback" not in row["err"], row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/chk-{name}"]
    assert mine, row["out"][:2000]
    predicted = mine[0].get("outcome") == "start"
    started = any(x.startswith("plangate: start ") for x in lab.subjects(f"chk-{name}"))
    assert predicted == started, (started, json.dumps(mine)[:2000])
    assert started == (name == "ctl"), lab.codes(f"chk-{name}")


@pytest.mark.parametrize("i", [pytest.param(i, id=f"junk-as-{i}") for i in range(len(JUNK_AS))])
def test_check_as_undecodable_label_answers(lab: Lab, i: int) -> None:
    row = json.loads((lab.root / "check.json").read_text())[f"junk{i}"]
    assert "Traceback" not in row["err"], row["err"]
    assert row["rc"] in (0, 1, 2), row
    assert row["out"].strip() or "E_" in row["err"], row
