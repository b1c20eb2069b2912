"""Round 5, who may make a plan run: the authors of a plan the daemon converted from a
``PLAN.json`` source (docs/formats.md, "Who wrote the plan": the author and committer of
every commit that changed the source file count as the plan's authors).

Alice (an approver) writes the source; the agent only runs git; Alice then approves the
converted PLAN.yml. Each variant must end ``E_SELF_APPROVAL`` with nothing run:

- ``own``: Alice commits ``plans/own/PLAN.json`` herself (the documented case; control).
- ``moved``: Alice commits ``plans/moved-draft/PLAN.json``; in the same push the agent
  ``git mv``s the folder to ``plans/moved`` (the source file's path history starts with the
  agent's rename).
- ``renamed-file``: Alice commits ``plans/renamed-file/plan.json`` (not a source name); the
  agent renames it to ``PLAN.json``.
- ``coauthor``: the agent commits the source with ``Co-authored-by: Alice`` (for a PLAN.yml a
  co-author is an author).
- ``both-sides``: Alice adds the source on a side branch, the agent adds the same bytes on
  main and merges the side branch (the merge changes nothing; history simplification hides
  her commit: round 2's ``treesame-both-sides`` for a PLAN.yml).
- ``copy``: Alice's source at ``plans/copy-a`` is converted (and stays pending); the agent
  then adds the same bytes at ``plans/copy`` (same hashed content: the index keeps, per
  content, everyone who produced it).
- ``note``: Alice commits ``PLAN.json`` beside an existing PLAN.yml (a note, left alone); the
  agent deletes the PLAN.yml, so her file becomes the plan's source.
- ``nested``: Alice's source at ``plans/lib`` is converted; the agent's PLAN.yml
  ``plans/nested`` pins it as a nested plan (approving a parent approves its pinned plans,
  whose authors are authors of the parent's version).
- ``merged``: Alice adds the source on a side branch; the agent merges it (``--no-ff``).
- ``readd``: Alice commits the source; the agent deletes it and adds the same bytes again.
- ``yaml-renamed``: not a source: Alice commits ``plans/yaml-renamed/PLAN.yaml``; the agent
  renames it to ``PLAN.yml`` in the same push.
- ``draft-renamed``: Alice commits ``plans/draft-renamed/draft.yml`` (plan text, in the plans
  folder, not yet a plan file); the agent renames it to ``PLAN.yml``.
- ``yml-then-json``: Alice commits ``plans/yml-then-json-a/PLAN.yml``, exactly what
  ``plangate convert`` makes of a source; the agent commits that source as
  ``plans/yml-then-json/PLAN.json`` (the same hashed content, by the per-content index).

Broke (7 of 13): moved, renamed-file, coauthor, both-sides, copy, nested (one root: a
source's writers are found only through that path's own history, never per converted
content or through renames/co-authors/merged branches), and draft-renamed (a file that
becomes PLAN.yml by a rename is not followed). Held: own, note, merged, readd, yaml-renamed,
yml-then-json (the per-content index knows a PLAN.yml's writer, not a source's).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared
from test_round4_runs_convert import _ap, _lab, _put

R5 = "round 5: "
VIDS = [
    "own",
    "moved",
    "renamed-file",
    "coauthor",
    "both-sides",
    "copy",
    "note",
    "nested",
    "merged",
    "readd",
    "yaml-renamed",
    "draft-renamed",
    "yml-then-json",
]


#: Every break of this file was fixed (the author index keeps a non-plan file's writers by its
#: bytes; a convert commit adds its source's writers to the content; merged_in reads every
#: merged branch's commits): none is left.
BROKEN: dict[str, list[pytest.MarkDecorator]] = {}


NESTED = """\
plan:
  name: "nested"
  task: "run the library plan"
  status: pending_approval
actions:
  - id: 1
    why: "the library"
    plan: {path: plans/lib, hash: "%s"}
"""


def _src(tag: str) -> str:
    return json.dumps(_ap(tag), indent=2) + "\n"


def _approve(lab: Lab, slugs: list[str]) -> None:
    for slug in slugs:
        text = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
        new = text.replace('status: "pending_approval"', "status: approved", 1).replace(
            "status: pending_approval", "status: approved", 1
        )
        assert new != text, text
        _put(lab, f"plans/{slug}/PLAN.yml", new)
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "approve " + " ".join(slugs), who=ALICE)


def _build(root: Path) -> Lab:
    lab = _lab(root)
    # Alice's commits
    _put(lab, "plans/own/PLAN.json", _src("own"))
    _put(lab, "plans/moved-draft/PLAN.json", _src("moved"))
    _put(lab, "plans/renamed-file/plan.json", _src("renamed-file"))
    _put(lab, "plans/copy-a/PLAN.json", _src("copy"))
    lab.write("note", plan_text("note-yml"))
    _put(lab, "plans/note/PLAN.json", _src("note"))
    lab.write("yaml-renamed", plan_text("yaml-renamed"), "PLAN.yaml")
    lab.write("draft-renamed", plan_text("draft-renamed"), "draft.yml")
    src = lab.root / "yj.json"
    src.write_text(_src("yml-then-json"))
    converted = lab.cli("convert", str(src))
    if converted.returncode != 0:
        raise BenchError(converted.stderr)
    lab.write("yml-then-json-a", converted.stdout)
    lab.commit("alice drafts plans", ALICE)
    _put(lab, "plans/yml-then-json/PLAN.json", _src("yml-then-json"))
    lab.commit("agent submits a source", AGENT)
    # side branch: Alice adds both-sides
    lab.git("checkout", "-q", "-b", "side")
    _put(lab, "plans/both-sides/PLAN.json", _src("both-sides"))
    lab.commit("alice: both-sides", ALICE)
    lab.git("checkout", "-q", "main")
    _put(lab, "plans/both-sides/PLAN.json", _src("both-sides"))
    lab.commit("agent: both-sides", AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    # the agent's moves
    lab.git("mv", "plans/moved-draft", "plans/moved")
    lab.git("mv", "plans/renamed-file/plan.json", "plans/renamed-file/PLAN.json")
    lab.git("rm", "-q", "plans/note/PLAN.yml")
    lab.git("mv", "plans/yaml-renamed/PLAN.yaml", "plans/yaml-renamed/PLAN.yml")
    lab.git("mv", "plans/draft-renamed/draft.yml", "plans/draft-renamed/PLAN.yml")
    lab.commit("agent tidies", AGENT)
    _put(lab, "plans/coauthor/PLAN.json", _src("coauthor"))
    lab.commit("pair work\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    _put(lab, "plans/lib/PLAN.json", _src("nested"))
    lab.commit("alice: a library plan", ALICE)
    lab.git("checkout", "-q", "-b", "side2")
    _put(lab, "plans/merged/PLAN.json", _src("merged"))
    lab.commit("alice: merged", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side2", "side2", who=AGENT)
    _put(lab, "plans/readd/PLAN.json", _src("readd"))
    lab.commit("alice: readd", ALICE)
    lab.git("rm", "-q", "plans/readd/PLAN.json")
    lab.commit("agent removes readd", AGENT)
    _put(lab, "plans/readd/PLAN.json", _src("readd"))
    lab.commit("agent adds readd", AGENT)
    lab.run()  # converts and freezes
    lib_hash = lab.plan("lib")["frozen"]["hash"]
    lab.write("nested", NESTED % lib_hash)
    _put(lab, "plans/copy/PLAN.json", _src("copy"))
    lab.commit("agent copies", AGENT)
    lab.run()
    time.sleep(1.1)
    _approve(lab, VIDS)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r5-sources", _build)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_the_writer_of_a_source_cannot_approve_its_plan(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.fixture(scope="module")
def audit(lab: Lab) -> dict:
    _, report = lab.audit()  # no config: the recorded policy and git history alone
    return report


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_the_audit_never_calls_a_self_approval_of_a_source_valid(audit: dict, vid: str) -> None:
    valid = [
        e
        for e in audit.get("executions", [])
        if e["plan"] == f"plans/{vid}" and e["approval_valid"]
    ]
    assert valid == [], valid
