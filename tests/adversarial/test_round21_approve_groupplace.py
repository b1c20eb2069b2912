"""Round 21, quorum: one person filling two entries of a rule (groups that overlap, an entry
without a group, one group listed twice).

docs/approvals.md (Quorum): "One person counts once and in one entry (an approver in two
groups is placed where the quorum needs them)". Earlier rounds used ``{count: 2}`` rules or
``ops`` + ``security`` with disjoint members; here the entries overlap.

Config: approvers ``alice@example.com``, ``*@ops.example.com``, ``sec@example.com``; groups
``ops: [alice@example.com, "*@ops.example.com"]``, ``sec: [alice@example.com,
sec@example.com]``; ``identity_aliases.people: [[carol@ops.example.com, sec@example.com]]``
(Carol also signs as the security desk). Rules by folder:

- ``plans/any/**``: ``[{group: ops, count: 1}, {count: 1}]``
- ``plans/both/**``: ``[{group: ops, count: 1}, {group: sec, count: 1}]``
- ``plans/dup/**``: ``[{group: ops, count: 1}, {group: ops, count: 1}]``
- ``plans/three/**``: ``[{group: sec, count: 1}, {count: 2}]``

Variants (each vote its own approval commit and controller pass):

- ``any-bob``: Bob alone (ops, and "any").
- ``both-alice``: Alice alone (in ops and in sec).
- ``both-carol``: Carol, then the same person as ``sec@example.com`` (an alias of Carol).
- ``dup-bob``: Bob alone.
- ``three-ab``: Alice, then Bob (two people for three places).

Defence: still ``partial``; ``rec`` never runs. Controls: ``any-ctl`` (Bob, Carol),
``both-ctl`` (Bob, Alice), ``three-ctl`` (Alice, Bob, Carol) run once.

Results: every variant held (``partial``), every control ran once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text, play
from test_round2_execution_kit import shared

SEC = ("Security desk", "sec@example.com")


def _submit(slug: str):
    def step(lab: Lab, vid: str) -> None:
        lab.write(slug, plan_text(vid))
        lab.commit(f"add {vid}", AGENT)

    return step


def _vote(slug: str, who: tuple[str, str]):
    def step(lab: Lab, vid: str) -> None:
        lab.approve(slug, who)

    return step


PLANS = {
    "any-bob": ("any/bob", [BOB]),
    "both-alice": ("both/alice", [ALICE]),
    "both-carol": ("both/carol", [CAROL, SEC]),
    "dup-bob": ("dup/bob", [BOB]),
    "three-ab": ("three/ab", [ALICE, BOB]),
}
CONTROLS = {
    "any-ctl": ("any/ctl", [BOB, CAROL]),
    "both-ctl": ("both/ctl", [BOB, ALICE]),
    "three-ctl": ("three/ctl", [ALICE, BOB, CAROL]),
}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        approval="""\
        groups:
          ops: [alice@example.com, "*@ops.example.com"]
          sec: [alice@example.com, sec@example.com]
        identity_aliases:
          people: [[carol@ops.example.com, sec@example.com]]
        rules:
          - match: {paths: ["plans/any/**"]}
            require: [{group: ops, count: 1}, {count: 1}]
          - match: {paths: ["plans/both/**"]}
            require: [{group: ops, count: 1}, {group: sec, count: 1}]
          - match: {paths: ["plans/dup/**"]}
            require: [{group: ops, count: 1}, {group: ops, count: 1}]
          - match: {paths: ["plans/three/**"]}
            require: [{group: sec, count: 1}, {count: 2}]
        """,
    )
    text = lab.config.read_text()
    old = json.dumps(["alice@example.com", "*@ops.example.com"])
    new = json.dumps(["alice@example.com", "*@ops.example.com", "sec@example.com"])
    assert old in text
    lab.config.write_text(text.replace(old, new))
    scenarios = {
        vid: [_submit(slug), *(_vote(slug, who) for who in voters)]
        for vid, (slug, voters) in (PLANS | CONTROLS).items()
    }
    play(lab, scenarios)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-groupplace", _build)


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_control_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(CONTROLS[vid][0])


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in PLANS])
def test_one_person_fills_one_entry(lab: Lab, vid: str) -> None:
    slug = PLANS[vid][0]
    assert lab.calls(vid) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert "partial" in lab.codes(slug), lab.codes(slug)
