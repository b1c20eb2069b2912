"""The web page over 10,000 plans (issue 16): an overview rendered in ≤ 200 ms.

The daemon publishes a snapshot of its plan rows after each pass; a request renders from
that snapshot alone, so this measures what a request costs: the overview as HTML and as
JSON, through the real router. Floor: ``json.dumps`` of the snapshot's rows (the least any
page listing these plans could cost). A request never takes the controller's locks, so it
cannot block a pass (tests/test_ui.py shows the page against a running daemon).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import median, report, timed

from controller.service.ui.data import UiData
from controller.service.ui.server import route
from controller.settings import config_from_data

STATUSES = ("completed",) * 6 + ("pending_approval", "failed", "executing", "invalid")


def rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "plan": f"plans/p{i:05d}",
            "file": f"plans/p{i:05d}/PLAN.yml",
            "status": STATUSES[i % len(STATUSES)],
            "hash": "sha256:" + f"{i:064x}",
            "frozen_hash": "sha256:" + f"{i:064x}",
            "approver": "alice@example.com",
            "last_event": f"{i:012x} plangate: event plans/p{i:05d}"
            + (" E_TOOL_FAILED" if i % 10 == 7 else ""),
            "last_commit": f"{i:040x}",
            "running": False,
            "waiting": None,
            "notes": [],
        }
        for i in range(n)
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n, repeat = (2_000, 5) if args.quick else (10_000, 15)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = config_from_data(
            {
                "repo": str(root),
                "state_dir": str(root / "state"),
                "approval": {"approvers": ["*@example.com"]},
            },
            root / "plangate.yml",
        )
        data = UiData(config, lambda: root)
        snapshot = rows(n)
        data.publish(snapshot)
        floor = median(timed(lambda: json.dumps(snapshot), repeat))
        html = median(timed(lambda: route("/", data, lambda: root, None), repeat))
        api = median(timed(lambda: route("/api/", data, lambda: root, None), repeat))
        page2 = median(
            timed(lambda: route("/?status=completed&page=3", data, lambda: root, None), repeat)
        )
        data.close()
    print(f"{n} plans, median of {repeat}")
    report("overview HTML (/)", html, 0.200, ("json.dumps(rows)", floor))
    report("overview JSON (/api/)", api, 0.200, ("json.dumps(rows)", floor))
    report("one status, page 3", page2, 0.200, ("json.dumps(rows)", floor))
    return 0


if __name__ == "__main__":
    sys.exit(main())
