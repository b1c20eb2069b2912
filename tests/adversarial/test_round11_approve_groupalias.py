"""Round 11, who may make a plan run: one person filling two group entries of a rule under
two of her aliases, and ``plangate check`` predicting it.

SPEC §11: "every ``require`` entry is met by distinct people (one person counts once, in one
entry)". The operator declares aliases (``people``, ``plus_tags``), and lists a person's
other mailbox in another group (the security team knows her as ``a.smith@corp.example``).

Config: approvers ``alice@example.com``, ``*@ops.example.com``, ``sec@example.com``; groups
``ops: [alice@example.com, "*@ops.example.com"]``, ``security: [sec@example.com,
"*@corp.example", alice+sec@example.com, rob@sec.example.com]``; people ``[alice@example.com,
a.smith@corp.example]``, ``[bob@ops.example.com, rob@sec.example.com]``; plus tags on
``*@example.com``. ``plans/grp/**`` needs one from ops and one from security;
``plans/two/**`` needs two.

Each second vote is a pull request (the agent's commit sets ``approved``) merged ``--no-ff``
by the voter under the spelling; ``plangate check --as <spelling>`` is recorded before.

- ``grp/alias``: Alice votes as ``alice@example.com``, then merges as ``a.smith@corp.example``;
- ``grp/alias-rev``: first ``a.smith@corp.example``, then ``alice@example.com``;
- ``grp/alias-spell``: then as ``A.Smith(x)@Corp.Example``;
- ``grp/plus``: then as ``alice+sec@example.com``;
- ``grp/rob``: Bob votes as ``bob@ops.example.com``, then as ``rob@sec.example.com``;
- ``two/alias``: Alice, then ``a.smith@corp.example`` under ``count: 2``.

Defence: every one stays ``partial`` (one person), nothing runs; ``check`` predicted no start.
Control: ``grp/honest``: Bob (ops) then ``sec@example.com`` runs once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, APPROVERS, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
  security: ["sec@example.com", "*@corp.example", "alice+sec@example.com", "rob@sec.example.com"]
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@corp.example], [bob@ops.example.com, rob@sec.example.com]]
rules:
  - match: {paths: ["plans/grp/**"]}
    require: [{group: ops, count: 1}, {group: security, count: 1}]
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""
SMITH = ("A. Smith", "a.smith@corp.example")
SEC = ("Sec", "sec@example.com")
#: vid -> (first voter, second voter)
VOTES = {
    "grp/alias": (ALICE, SMITH),
    "grp/alias-rev": (SMITH, ALICE),
    "grp/alias-spell": (ALICE, ("A. Smith", "A.Smith(x)@Corp.Example")),
    "grp/plus": (ALICE, ("Alice", "alice+sec@example.com")),
    "grp/rob": (BOB, ("Rob", "rob@sec.example.com")),
    "two/alias": (ALICE, SMITH),
}
CONTROL = {"grp/honest": (BOB, SEC)}
VIDS = list(VOTES)
CHECKED = ["grp/alias", "grp/rob", "two/alias", "grp/honest"]  # `check` is slow: a subset
BROKEN: dict[str, object] = {}


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


def _check(lab: Lab, branch: str, email: str) -> str:
    result = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        branch,
        "--as",
        email,
        "--format",
        "json",
        cwd=lab.repo,
    )
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stdout


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    lab.config.write_text(
        lab.config.read_text().replace(
            json.dumps(APPROVERS), json.dumps([*APPROVERS, "sec@example.com"])
        )
    )
    for vid in [*VOTES, *CONTROL]:
        lab.write(vid, plan_text(_tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    for vid, (first, _) in {**VOTES, **CONTROL}.items():
        lab.approve(vid, first)
    lab.run()
    partial = {v: (lab.plan(v).get("approval") or {}).get("status") for v in [*VOTES, *CONTROL]}
    (lab.root / "partial.json").write_text(json.dumps(partial))
    checks = {}
    for vid, (_, second) in {**VOTES, **CONTROL}.items():
        branch = "pr-" + _tag(vid)
        lab.git("checkout", "-q", "-b", branch, "main")
        lab.approve(vid, AGENT)
        lab.git("checkout", "-q", "main")
        if vid in CHECKED:
            checks[vid] = _check(lab, branch, second[1])
        lab.git("merge", "-q", "--no-ff", "--no-edit", branch, who=second)
    (lab.root / "checks.json").write_text(json.dumps(checks))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-groupalias", _build)


def test_the_first_votes_were_partial(lab: Lab) -> None:
    partial = json.loads((lab.root / "partial.json").read_text())
    assert set(partial.values()) == {"partial"}, partial


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("grp-honest")) == 1, lab.codes("grp/honest")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_one_person_fills_one_entry(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", CHECKED)
def test_check_predicted_what_the_controller_did(lab: Lab, vid: str) -> None:
    out = json.loads((lab.root / "checks.json").read_text())[vid]
    row = next(r for r in json.loads(out)["plans"] if r["plan"] == f"plans/{vid}")
    assert (row["outcome"] == "start") == lab.started(vid), row


# (a fresh-clone audit of this lab was dropped for suite time: it agreed when tried)
