"""Plans as graphs: 10 independent chains of 10 actions, each sleeping 100 ms, with
``execution.max_parallel_actions: 4``, end to end through the engine (journal fsynced,
PLAN.yml and EXECUTION_LOG.md written).

Target from the graph issue: <= 3.2 s. Floors measured in the same run: the same 100 actions
as one chain (no ``needs``: one at a time, >= 10 s), and the ideal 100 x 100 ms / 4 = 2.5 s.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import tempfile
import time
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import report

from controller import fsutil
from controller.execution.executor import Engine
from controller.plan import plans
from controller.settings import config_from_data

APPROVAL = {"by": "bench@example.com", "commit": "0" * 40}
SLEEP = shutil.which("sleep") or "/bin/sleep"
PARALLEL = 4


def graph_text(chains: int, length: int, with_needs: bool) -> str:
    head = "plan: {name: graph, task: bench, status: pending_approval}\n"
    head += "available_tools: [{name: nap}]\nactions:\n"
    lines = []
    for c in range(chains):
        for k in range(length):
            action = c * length + k + 1
            needs = f", needs: [{action - 1}]" if k else ", needs: []"
            lines.append(
                f"  - {{id: {action}, tool: nap, why: 'chain {c} step {k}'"
                f"{needs if with_needs else ''}}}\n"
            )
    return head + "".join(lines)


def run_once(root: Path, text: str, seconds: float) -> float:
    tools = {"nap": {"kind": "exec", "argv": [SLEEP, str(seconds)]}}
    data = {
        "repo": str(root),
        "tools": tools,
        "execution": {"max_parallel_actions": PARALLEL},
    }
    config = config_from_data(data, root / "plangate.yml")
    plan_file = root / "plans" / "graph" / "PLAN.yml"
    plan_file.parent.mkdir(parents=True, exist_ok=True)
    plan_file.write_text(text)
    loaded = plans.load_plan(plan_file, config)
    assert loaded.valid, loaded.problems
    fsutil.write_atomic(plan_file, plans.freeze_text(loaded).text)
    engine = Engine(config, state_dir=root / "state")
    start = time.perf_counter()
    outcome = engine.run(plan_file, plan_id="plans/graph", approval=APPROVAL)
    elapsed = time.perf_counter() - start
    assert outcome.status == "completed", outcome
    return elapsed


def main() -> None:
    quick = "--quick" in sys.argv
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    chains, length, seconds = (4, 3, 0.1) if quick else (10, 10, 0.1)
    actions = chains * length
    base = Path(__file__).resolve().parent.parent / ".bench-tmp"
    base.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        root = Path(tmp)
        graph = min(
            run_once(root / f"g{i}", graph_text(chains, length, True), seconds)
            for i in range(1 if quick else 2)
        )
        chain = run_once(root / "chain", graph_text(chains, length, False), seconds)
    if not any(base.iterdir()):
        base.rmdir()
    ideal = actions * seconds / PARALLEL
    name = f"{chains}x{length} graph, {int(seconds * 1000)} ms actions, {PARALLEL} at once"
    report(f"floor: ideal {actions} x {seconds:g} s / {PARALLEL}", ideal)
    report(f"sequential: the same {actions} actions as one chain", chain)
    report(name, graph, 3.2 if not quick else None, ("the ideal", ideal))
    print(f"  sequential / graph: {chain / graph:.2f}x ({PARALLEL}x for the sleeps alone)")
    print(json.dumps({"quick": quick, "graph_s": graph, "chain_s": chain, "ideal_s": ideal}))


if __name__ == "__main__":
    main()
