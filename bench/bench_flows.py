"""Data-flow analysis (SPEC §16, issue 18): ≤ 20 ms added to validating a 1,000-action plan.

The plan is a chain: each action's params reference the previous action's output, inside a
longer string and nested in a list, and every action's tool has a sensitive param fed by
that untrusted output and guarded. Reported: the flow analysis alone (``plan_flows`` plus
the E_UNGUARDED_FLOW check, as validation runs them), and the whole in-process validation
with the catalog as the floor it is part of.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import median, report, timed

from controller.plan import flows, plans
from controller.settings import config_from_data

GUARDS = (
    '    guards: [{param: to, matches: "^[^@]+@customer\\\\.example$"}, {param: cc, one_of: [a]}]'
)


def plan_text(n: int) -> str:
    lines = [
        "plan:",
        '  name: "flows"',
        '  task: "benchmark"',
        "  status: pending_approval",
        "available_tools: [{name: send}]",
        "actions:",
    ]
    for i in range(1, n + 1):
        source = '"x@customer.example"' if i == 1 else f'"$<actions[{i - 1}].outputs.to>"'
        lines += [
            f"  - id: {i}",
            "    tool: send",
            f'    why: "step {i}"',
            f'    params: {{to: {source}, cc: ["Re: $<actions[{max(i - 1, 1)}].result>"]}}'
            if i > 1
            else f"    params: {{to: {source}}}",
            '    outputs: [{name: to, path: "$.to"}]',
            GUARDS if i > 1 else "",
        ]
    return "\n".join(line for line in lines if line) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeat = 5 if args.quick else 15
    n = 1000
    config = config_from_data(
        {
            "repo": "/tmp",
            "limits": {"max_actions": 1000},
            "tools": {"send": {"kind": "echo", "sensitive": ["to", "cc"]}},
        },
        Path("/tmp/plangate.yml"),
    )
    text = plan_text(n)
    loaded = plans.validate_text(text, Path("plans/flows/PLAN.yml"), config)
    assert loaded.valid, loaded.problems[:3]
    model = loaded.model
    path = Path("plans/flows/PLAN.yml")
    real = flows.unguarded_problems
    withs, withouts = [], []
    for _ in range(repeat):  # alternate, so load on the machine hits both alike
        withs += timed(lambda: plans.validate_text(text, path, config), 1)
        flows.unguarded_problems = lambda *_: []  # type: ignore[assignment]
        try:
            withouts += timed(lambda: plans.validate_text(text, path, config), 1)
        finally:
            flows.unguarded_problems = real  # type: ignore[assignment]
    whole, without = median(withs), median(withouts)
    alone = median(timed(lambda: real(model, config.tools), repeat))  # type: ignore[arg-type]
    count = len(flows.plan_flows(model, config.tools))  # type: ignore[arg-type]
    print(f"{n}-action plan, {count} flows, median of {repeat}")
    report("validation without flow analysis (floor)", without)
    report("validation with flow analysis", whole, floor=("the floor", without))
    report("added by flow analysis (difference of medians)", whole - without, 0.020)
    report("flow analysis alone, after validation", alone, 0.020)
    return 0


if __name__ == "__main__":
    sys.exit(main())
