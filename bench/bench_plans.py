"""Plan files: `plangate validate` of a 10-action plan (whole process), freeze and hash of a
1,000-action plan. Targets from the plan-files issue: <= 300 ms, <= 1 s, <= 400 ms.
Floors measured in the same run: a bare interpreter start and a bare sha256 of the same bytes.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median, report, spawn_floor, timed, write_plan


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "controller", *args], check=True, capture_output=True)


def main() -> None:
    quick = "--quick" in sys.argv
    repeat = 3 if quick else 15
    config = {"max_actions": 1000}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "plangate.yml").write_text(
            f"tools:\n  echo: {{kind: echo}}\nlimits: {{max_actions: {config['max_actions']}}}\n"
        )
        small = write_plan(root, 10)
        big = write_plan(root, 1000)
        cfg = ["--config", str(root / "plangate.yml")]
        spawn = spawn_floor(repeat)
        report("floor: bare `python -c pass`", spawn)
        report(
            "validate 10 actions (process)",
            median(timed(lambda: cli("validate", *cfg, str(small)), repeat)),
            0.300,
            ("python start", spawn),
        )
        report(
            "hash 1,000 actions (process)",
            median(timed(lambda: cli("hash", str(big)), repeat)),
            0.400,
            ("python start", spawn),
        )
        original = big.read_text()

        def freeze() -> None:
            big.write_text(original)
            cli("freeze", *cfg, str(big))

        report(
            "freeze 1,000 actions (process)",
            median(timed(freeze, repeat)),
            1.0,
            ("python start", spawn),
        )
        data = big.read_bytes()
        sha = median(timed(lambda: hashlib.sha256(data).hexdigest(), 50))
        report(f"floor: bare sha256 of the file ({len(data)} B)", sha)
        from controller.plan import hashing, plans

        loaded = plans.read_plan(big)
        inproc = median(timed(lambda: hashing.plan_hash(loaded.data), repeat))
        report("in-process JCS+sha256 of 1,000 actions", inproc, None, ("bare sha256", sha))


if __name__ == "__main__":
    main()
