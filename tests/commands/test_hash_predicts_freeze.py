"""``plangate hash`` of a PLAN.yml whose params hold a legacy ``${...}`` reference: the
freeze rewrites it to ``$<...>`` and records the rewritten form's hash, so ``hash`` names that
hash on stderr beside the file's own (round 125, atk125b: it printed only the hash of the
text as written, which no freeze records). Its stdout stays the file's own hash, the one a
nested plan's pin names (docs/plan-format.md), so existing pins keep their meaning.

Real ``plangate hash`` and ``plangate freeze`` in processes of their own.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.gitenv import run_cli
from tests.support.gitkit import PLAN

LEGACY = PLAN.replace(
    "available_tools:",
    "inputs:\n  who: world\navailable_tools:",
).replace("who: world   # trailing comment", 'who: "${inputs.who}"   # trailing comment')
CONFIG = "repo: {repo}\ntools:\n  greet: {{kind: echo}}\n"


def plan_at(tmp_path: Path, text: str) -> tuple[Path, Path]:
    path = tmp_path / "plans" / "x" / "PLAN.yml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    config = tmp_path / "plangate.yml"
    config.write_text(CONFIG.format(repo=tmp_path))
    return path, config


def frozen_hash(path: Path) -> str:
    line = next(line for line in path.read_text().splitlines() if line.strip().startswith("hash:"))
    return line.split()[-1].strip("'\"")


def test_the_hash_of_a_legacy_reference_is_the_one_the_freeze_writes(tmp_path: Path) -> None:
    path, config = plan_at(tmp_path, LEGACY)
    before = run_cli("hash", str(path), "--config", str(config))
    assert before.returncode == 0, before.stderr
    assert "legacy ${...}" in before.stderr, before.stderr
    predicted = before.stderr.rsplit("its hash will be ", 1)[1].split()[0]
    assert predicted != before.stdout.strip()
    froze = run_cli("freeze", str(path), "--config", str(config))
    assert froze.returncode == 0, froze.stdout + froze.stderr
    assert '"$<inputs.who>"' in path.read_text()  # the freeze rewrote the reference
    assert frozen_hash(path) == predicted
    after = run_cli("hash", str(path), "--config", str(config))
    assert (after.returncode, after.stdout, after.stderr) == (0, predicted + "\n", "")


def test_a_plan_with_no_legacy_reference_prints_its_hash_alone(tmp_path: Path) -> None:
    path, config = plan_at(tmp_path, PLAN)
    before = run_cli("hash", str(path), "--config", str(config))
    assert (before.returncode, before.stderr) == (0, "")
    assert run_cli("freeze", str(path), "--config", str(config)).returncode == 0
    assert frozen_hash(path) == before.stdout.strip()
