# ruff: noqa: E501
"""Round 18, what is recorded and how often: the size of what the controller commits, and
plans moved or copied *with* their controller blocks while they wait at a gate.

One lab; the agent submits, one pass freezes, Alice approves all in one commit, one pass
runs (and a few more for the gate variants).

Disk bounds. ``test_resource_bounds.py`` (round 1) holds that "nothing the controller
wrote" lands in git over 1 MiB; ``limits.max_result_bytes`` (64 KiB) cuts each stream of a
tool's result and ``limits.max_params_bytes`` (1 MiB) one action's resolved params.

- ``many``: 20 actions of ``big``, an exec tool printing 70 KB of JSON to stdout and 70 KB
  to stderr (an email body, a web page: data a tool brings in). **Broke**: the controller
  commits a 1.3 MB EXECUTION_LOG.md (about 65 KB per action, so a 500-action plan, the
  default ``max_actions``, commits some 33 MB in one blob).
- ``amplified``: two actions: ``big60`` outputs a 60 KB string, an ``echo`` action passes it
  16 times (960 K characters, under ``max_params_bytes``). Held: the log cuts the resolved
  params at 64 KiB too (a 198 KB log).

Asserted: every blob under the plan's folder in the controller's commits is at most 1 MiB,
and the honest ``zz`` runs once in the same pass.

At most once (round 15 moved and copied gated plans *reset to* ``pending_approval``; here
the agent keeps the controller's blocks, so the copy claims to wait at the gate):

- ``gate-move``: ``plans/gm`` waits at its gate (action 1 ran); the agent ``git mv``\\s it to
  ``plans/gm2`` with ``status: awaiting_approval`` and its ``execution:`` block; Bob
  approves the gate at ``plans/gm2``;
- ``gate-copy``: ``plans/gc`` copied whole to ``plans/gc2``; Bob approves both gates in one
  commit.

Asserted (held): action 1 ran once, action 2 at most once in all, the moved/copied folder is
refused (E_ALREADY_EXECUTED) and never started.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BOT, Lab, cases, plan_text
from test_round2_execution_kit import shared

MIB = 1024 * 1024
BIG = 'import json, sys\nsys.stdin.read()\nn = int(sys.argv[1])\nprint(json.dumps({"t": "A" * n}))\nsys.stderr.write("B" * n)\n'


def _gated(tag: str) -> str:
    return f"""plan: {{name: {tag}, task: t, status: pending_approval}}
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {tag}-1}}}}
  - {{id: 2, tool: rec, why: w, params: {{tag: {tag}-2}}, requires_approval: true}}
"""


MANY = (
    "plan: {name: many, task: t, status: pending_approval}\navailable_tools: [{name: big}]\nactions:\n"
    + "".join(f"  - {{id: {i}, tool: big, why: w, params: {{n: 70000}}}}\n" for i in range(1, 21))
)
REFS = ", ".join(['"$<actions[1].outputs.t>"'] * 16)
AMPLIFIED = f"""plan: {{name: amplified, task: t, status: pending_approval}}
available_tools: [{{name: big}}, {{name: echo}}]
actions:
  - id: 1
    tool: big
    why: w
    params: {{n: 60000}}
    outputs: [{{name: t, path: "$.json.t"}}]
  - {{id: 2, tool: echo, why: w, params: {{copies: [{REFS}]}}}}
"""


def _set(lab: Lab, slug: str, old: str, new: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    path.write_text(path.read_text().replace(f"status: {old}", f"status: {new}", 1))


def _build(root: Path) -> Lab:
    (root / "big.py").write_text(BIG)
    argv = json.dumps([sys.executable, str(root / "big.py"), "{n}"])
    lab = Lab(root, tools=f"big: {{kind: exec, argv: {argv}}}\n")
    plans = {
        "many": MANY,
        "amplified": AMPLIFIED,
        "gm": _gated("gm"),
        "gc": _gated("gc"),
        "zz": plan_text("zz"),
    }
    for slug, text in plans.items():
        lab.write(slug, text)
    lab.commit("plans")
    lab.run()
    for slug in plans:
        _set(lab, slug, "pending_approval", "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    lab.zz_first_pass = len(lab.calls("zz"))  # type: ignore[attr-defined]
    lab.git("mv", "plans/gm", "plans/gm2")
    lab.commit("move the gated plan", AGENT)
    shutil.copytree(lab.repo / "plans" / "gc", lab.repo / "plans" / "gc2")
    lab.commit("copy the gated plan", AGENT)
    lab.run()
    for slug in ("gm2", "gc", "gc2"):
        _set(lab, slug, "awaiting_approval", "approved")
    lab.commit("approve the gates", BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-record", _build)


def _controller_blobs(lab: Lab, slug: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for row in lab.log_rows(fmt="%H%x00%ae%x01"):
        if row[1] != BOT[1]:
            continue
        for line in lab.git("ls-tree", "-r", "-l", row[0], f"plans/{slug}").splitlines():
            meta, name = line.split("\t", 1)
            sizes[f"{row[0][:8]}:{name}"] = int(meta.split()[3])
    return sizes


def test_the_honest_plan_ran_once_in_the_same_pass(lab: Lab) -> None:
    assert lab.zz_first_pass == 1  # type: ignore[attr-defined]
    assert len(lab.calls("zz")) == 1


#: round 18: ``many`` broke (a 1.3 MB log); fixed since: the log's params and result blocks
#: share a budget (execution/checkpoints.py, LOG_BLOCKS_BYTES)
FOUND = {"many": "round 18: the controller commits an EXECUTION_LOG.md over 1 MiB"}
BROKEN: dict[str, object] = {}  # every FOUND variant holds now


@pytest.mark.parametrize("slug", cases(["many", "amplified"], ["many", "amplified"], BROKEN))
def test_nothing_the_controller_commits_is_over_a_mib(lab: Lab, slug: str) -> None:
    assert lab.plan(slug)["execution"]["status"] == "completed"
    sizes = _controller_blobs(lab, slug)
    assert sizes
    over = {k: v for k, v in sizes.items() if v > MIB}
    assert not over, over


@pytest.mark.parametrize(
    ("orig", "copy"),
    [pytest.param("gm", "gm2", id="gate-move"), pytest.param("gc", "gc2", id="gate-copy")],
)
def test_a_gated_plan_moved_or_copied_with_its_blocks_runs_nothing_twice(
    lab: Lab, orig: str, copy: str
) -> None:
    assert len(lab.calls(f"{orig}-1")) == 1
    assert len(lab.calls(f"{orig}-2")) <= 1
    assert not lab.started(copy), lab.subjects(copy)
    assert lab.refusal(copy) == "E_ALREADY_EXECUTED", lab.codes(copy)
