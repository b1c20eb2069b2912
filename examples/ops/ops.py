"""A fake operations backend for the example plans (deploy, checks, graph).

Called as an exec tool: ``python3 ops/ops.py <operation>`` with the params as JSON on stdin.
Every operation appends one line to ``ops/ops.log`` (so a reader sees what ran, in which
order) and prints its result as JSON. State lives in ``ops/state.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = HERE / "state.json"


def load() -> dict:
    return json.loads(STATE.read_text()) if STATE.exists() else {"version": "v1", "polls": 0}


def save(state: dict) -> None:
    STATE.write_text(json.dumps(state))


def main() -> int:
    op = sys.argv[1]
    params = json.loads(sys.stdin.read() or "{}")
    state = load()
    result: dict = {"op": op}
    if op == "health":
        result["ok"] = True
    elif op == "lock_status":
        result["free"] = True
    elif op == "deploy":
        state.update(version=params.get("version", "v2"), polls=0)
        result["version"] = state["version"]
    elif op == "rollout_status":
        # Rolls out on the third look, unless the release is marked bad.
        state["polls"] = state.get("polls", 0) + 1
        bad = state.get("version", "").endswith("-bad")
        ready = state["polls"] >= 3 and not bad
        result.update(status="rolled_out" if ready else "progressing", errors=1 if bad else 0)
    elif op == "rollback":
        state.update(version=params.get("to", "v1"))
        result["version"] = state["version"]
    elif op == "sleep":
        time.sleep(float(params.get("seconds", 0)))
    elif op == "flaky":
        # Fails the first `fails` calls (a service that needs a retry).
        state["flaky"] = state.get("flaky", 0) + 1
        if state["flaky"] <= int(params.get("fails", 1)):
            save(state)
            print(json.dumps({"error": "service unavailable"}))
            return 1
    elif op == "fail":
        print(json.dumps({"error": params.get("why", "failed on purpose")}))
        return 1
    result["params"] = params
    save(state)
    with (HERE / "ops.log").open("a") as log:
        log.write(f"{op} {json.dumps(params, sort_keys=True)}\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
