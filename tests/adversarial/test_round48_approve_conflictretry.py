"""Round 48, who may make a plan run again after a failure: the stale retry/resume of
round 47 (``ask-stale``, ``resume-stale``) merged with ``-X ours`` over a conflict the agent
planted in the plan file: its branch adds a YAML comment inside the ``execution:`` block,
right after the failed action's ``started_at:`` line, which the next failure rewrites (a
second later). So re-merging the parents (``git merge-tree``) conflicts while Bob's merge
shows him nothing. (Until 2026-11-29 the comment went after ``duration_ms:``, which two
failures of the same quick tool can share to the millisecond: the merge was then clean and
the bench's premise failed about one run in twenty.)

Config: the bench's plus ``flop`` (records a call, exits 1). Each plan ``plans/one/<vid>``
is the agent's: action 1 ``rec``; action 2 ``flop`` (tag ``<vid>-2``), with
``on_failure: ask`` (``ask-xours``) or the default stop (``resume-xours``). The controller
freezes; Alice approves; action 1 runs, ``flop`` fails: the plan waits
(``awaiting_approval``) or is ``failed``. The agent cuts ``pr-<vid>`` and sets ``approved``
there, plus the comment ``    # agent: please retry`` after that line. On main Carol
answers (retry / resume); ``flop`` fails again and the plan waits / fails again. Bob merges
``git merge --no-ff -X ours pr-<vid>`` (no conflict shown).

- ``ask-union`` (no ``-X``): the agent committed ``.gitattributes`` with
  ``plans/one/ask-union/PLAN.yml merge=union`` beside its plans and puts the comment right
  after ``  signature: null``, where Carol's answer makes the controller insert
  ``gate: true``; Bob's plain ``git merge --no-ff`` union-merges that hunk (no conflict shown).

Asserted (the defence): no merged branch held ``approved`` over the second failure:
``flop`` ran exactly twice (the first try and Carol's answer), never a third time.

Seen: ``ask-union`` held (``flop`` ran twice; ``git merge-tree`` of the merge's parents in
the lab's repo was clean too). BROKE (strict xfails): ``ask-xours``,
``resume-xours``: ``flop`` ran a third time; the controller recorded the
merge as Bob's approval (``approval: {by: bob, gate: true}``) of the second failure. Without
the planted conflict (the comment at the file's end, which the failures do not touch) the
same merges ran nothing more (``flop`` twice; ``resume-xours`` refused ``E_APPROVAL_REPLAYED``).

Fixed (round 48): a merge brought a status whenever a merged branch holds it for the plan
(in a plan file the branch changed since the merge base), whatever the merger resolved or
``-X`` chose; no re-merge of the parents decides it. The stale branches hold ``approved``
over the first failure only (another ``execution:`` block): ``ask-xours`` and
``resume-xours`` are refused ``E_APPROVAL_REPLAYED``, ``flop`` runs twice. ``ask-union``
holds as before. ``Lifecycle._merged_another_version``; docs/approvals.md "Merges".
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

CASES = ["ask-xours", "resume-xours", "ask-union"]
FLOP = (
    "import json, os, sys\n"
    "with open(os.environ['REC_LOG'], 'a') as f:\n"
    "    f.write(json.dumps({'argv': sys.argv[1:], 'stdin': ''}) + '\\n')\n"
    "sys.exit(1)\n"
)
COMMENT = "# agent: please retry\n"
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed in round 48 (see the docstring)


def _slug(vid: str) -> str:
    return f"one/{vid}"


def _text(vid: str) -> str:
    fail = "    on_failure: ask\n" if vid.startswith("ask-") else ""
    extra = (
        f'  - id: 2\n    tool: flop\n    why: "fails"\n{fail}    params:\n      tag: "{vid}-2"\n'
    )
    return plan_text(vid, extra_actions=extra).replace(
        "  - name: rec\n", "  - name: rec\n  - name: flop\n"
    )


def _build(root: Path) -> Lab:
    (root / "flop.py").write_text(FLOP)
    argv = json.dumps([sys.executable, str(root / "flop.py"), "{tag}"])
    env = json.dumps(str(root / "ran.log"))
    lab = Lab(root, tools=f"flop: {{kind: exec, argv: {argv}, env: {{REC_LOG: {env}}}}}\n")
    for vid in CASES:
        lab.write(_slug(vid), _text(vid))
    (lab.repo / ".gitattributes").write_text("plans/one/ask-union/PLAN.yml merge=union\n")
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(_slug(vid), "approved")
    lab.commit("alice approves", ALICE)
    lab.run()  # action 1, flop fails
    time.sleep(1.05)
    trace: dict[str, Any] = {}
    for vid in CASES:
        trace[vid] = [lab.plan(_slug(vid))["plan"]["status"]]
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(_slug(vid), "approved")
        path = lab.repo / "plans" / _slug(vid) / "PLAN.yml"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        if vid == "ask-union":  # where the next answer inserts ``gate: true``
            at = lines.index("  signature: null\n")
            lines.insert(at + 1, COMMENT)
        else:
            # beside a line the next failure rewrites: its start, a second later (its
            # duration may be the same to the millisecond)
            at = max(i for i, line in enumerate(lines) if line.startswith("    started_at:"))
            lines.insert(at + 1, "    " + COMMENT)
        path.write_text("".join(lines))
        lab.commit(f"agent asks a retry of {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    for vid in CASES:
        lab.set_status(_slug(vid), "approved")
    lab.commit("carol answers", CAROL)
    lab.run()  # flop fails again
    time.sleep(1.05)
    for vid in CASES:
        trace[vid].append(lab.plan(_slug(vid))["plan"]["status"])
        opts = [] if vid == "ask-union" else ["-X", "ours"]
        out = lab.git(
            "merge", "--no-ff", "-q", *opts, "-m", f"merge pr-{vid}", f"pr-{vid}",
            who=BOB, check=False,
        )  # fmt: skip
        mt = lab.git("merge-tree", "--write-tree", "HEAD^1", "HEAD^2", check=False)
        trace[vid].append(
            lab.plan(_slug(vid))["plan"]["status"]
            + f" merge-tree-clean={not mt.strip().count(chr(10))} {out[-200:]}"
        )
    lab.trace = trace  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r48-conflictretry", _build)


def test_the_bench_failed_twice_and_merged_approved(lab: Lab) -> None:
    for vid, row in lab.trace.items():  # type: ignore[attr-defined]
        paused = "failed" if vid == "resume-xours" else "awaiting_approval"
        assert row[0] == paused and row[1] == paused, (vid, row)
        if vid == "ask-union":  # Bob's plain merge went through (the union driver)
            assert row[2].startswith("approved "), (vid, row)
            continue
        assert row[2].startswith("approved merge-tree-clean=False"), (vid, row)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in CASES]
)
def test_a_stale_retry_answers_no_later_failure(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-2")) == 2, lab.codes(_slug(vid))
