r"""Round 35, how a run is recorded: the size of the committed EXECUTION_LOG.md when the
plan is a dense graph.

Round 19 bounded the log (params and result blocks share a budget, the log stops at
1,000,000 bytes: "nothing the controller commits is over 1 MiB"). The log also draws the
plan's graph as a Mermaid diagram, one ``aI --> aJ`` line per ``needs`` edge, and a plan of
N actions may hold N(N-1)/2 edges in a few hundred KB of YAML.

One lab: ``plans/dense``, 400 ``echo`` actions, action I ``needs`` every J < I (79,800
edges, a 330 KB PLAN.yml under every plan limit), and ``plans/zz`` (one ``rec`` action);
the agent writes both, a pass freezes them, Alice approves both in one commit, a pass runs.

- ``dense-runs``: the dense plan completes (control: it is a valid plan) and ``zz`` ran once.
- ``dense-log-size``: every blob the controller committed for ``plans/dense`` is at most
  1 MiB.

Held: ``dense-runs``. **Broke** (round 35): ``dense-log-size``: the start and the outcome
commits each hold a 1,254,879-byte EXECUTION_LOG.md (79,800 ``aI --> aJ`` lines in the
Mermaid block; with 500 actions, the default ``max_actions``, 1.97 MB). Duplicate entries in
one ``needs`` list are drawn once (checked by hand, 150,000 ``1``\s: one edge).

Fixed (round 35): the graph draws the needs no other path implies (the transitive
reduction: here the chain of 399 edges), at most 500 edges and 120,000 bytes, and says
under it how many were not drawn; it counts toward the log's 1,000,000 bytes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

N = 400
MIB = 1 << 20


def _dense() -> str:
    lines = [
        'plan:\n  name: "dense"\n  task: "t"\n  status: pending_approval\n'
        "available_tools:\n  - name: echo\nactions:\n"
    ]
    for i in range(1, N + 1):
        needs = ",".join(str(j) for j in range(1, i))
        lines.append(
            f'  - {{id: {i}, tool: echo, why: "w", needs: [{needs}], params: {{i: {i}}}}}\n'
        )
    return "".join(lines)


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    lab = Lab(root / "lab")
    lab.write("dense", _dense())
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    lab.set_status("dense", "approved")
    lab.set_status("zz", "approved")
    lab.commit("approve", ALICE)
    lab.run()
    sizes = []
    for sha in lab.git("log", f"--author={BOT[1]}", "--format=%H", "HEAD").split():
        for row in lab.git("ls-tree", "-r", "-l", sha, "--", "plans/dense").splitlines():
            meta, path = row.split("\t", 1)
            sizes.append((int(meta.split()[3]), sha[:12], path))
    lab.sizes = sizes  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-runs-graphlog", lambda root: _build(root / "g"))


def test_dense_runs(lab: Lab) -> None:
    rows = lab.status()
    assert rows["plans/dense"]["status"] == "completed", rows["plans/dense"]
    assert len(lab.calls("zz")) == 1


def test_dense_log_size(lab: Lab) -> None:
    too_big = [s for s in lab.sizes if s[0] > MIB]  # type: ignore[attr-defined]
    assert not too_big, too_big
