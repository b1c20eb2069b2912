"""``plangate hash`` reads a plan by ``validate``'s reader (round 128, atk128b,
``hash-config-ignores-plan-yml-validity``).

With a config, ``hash`` of a PLAN.yml the controller would never freeze (a tool not in the
catalog, a tool not in ``available_tools``, an action id ``"1"``) printed ``sha256:...`` and
exited 0 while ``validate --config`` refused it and ``hash --config`` of a source refused the
same plan: ``hash`` parsed a PLAN.yml without validating it. Now it gets ``validate``'s code
and no hash (docs/plan-format.md: "a file the controller would not read or freeze gets its
code, not a hash"). Without a config ``hash`` still prints the file's own hash as written
(the pin a parent names). A file named as a source by its suffix (``ap.json``) is read as
``validate`` and ``show`` read it, converted: ``hash`` hashed its JSON as YAML.

Real ``plangate`` processes over a real git repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.gitenv import commit_all, run_cli
from tests.support.plantext import greet_plan

GOOD = greet_plan("Greet", "Say hello", '"world"')
CONFIG = "repo: {repo}\ntools:\n  greet: {{kind: echo}}\n  wave: {{kind: echo}}\n"
#: name -> (the PLAN.yml, the code `validate --config` gives it)
UNFREEZABLE = {
    "unknown-tool": (
        GOOD.replace("tool: greet", "tool: nope").replace("- name: greet", "- name: nope"),
        "E_TOOL_UNKNOWN",
    ),
    "undeclared-tool": (GOOD.replace("tool: greet", "tool: wave"), "E_TOOL_NOT_DECLARED"),
    "id-string": (GOOD.replace("id: 1", 'id: "1"'), "E_SCHEMA_INVALID"),
}
HASH = re.compile(r"sha256:[0-9a-f]{64}")


def _lab(repo: Path, slug: str, text: str, name: str = "PLAN.yml") -> tuple[Path, Path]:
    path = repo / "plans" / slug / name
    path.parent.mkdir(parents=True)
    path.write_text(text)
    commit_all(repo, f"plan {slug}")
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG.format(repo=repo))
    return path, config


@pytest.mark.parametrize("name", list(UNFREEZABLE))
def test_hash_with_a_config_refuses_a_plan_yml_validate_refuses(repo: Path, name: str) -> None:
    text, code = UNFREEZABLE[name]
    path, config = _lab(repo, name, text)
    checked = run_cli("validate", "--config", str(config), str(path.parent), cwd=repo)
    assert checked.returncode == 1 and code in checked.stderr, checked
    hashed = run_cli("hash", "--config", str(config), str(path.parent), cwd=repo)
    assert hashed.returncode == 1, hashed
    assert not HASH.search(hashed.stdout), hashed.stdout
    assert re.search(rf"PLAN\.yml:\d+: {code}\b", hashed.stderr), hashed.stderr
    # without a config: the file's own hash as written, the pin a parent names (documented)
    pinned = run_cli("hash", str(path.parent), cwd=repo)
    assert pinned.returncode == 0 and HASH.fullmatch(pinned.stdout.strip()), pinned


def test_hash_with_a_config_of_a_valid_plan_yml_is_validates_hash(repo: Path) -> None:
    path, config = _lab(repo, "good", GOOD)
    checked = run_cli("validate", "--json", "--config", str(config), str(path), cwd=repo)
    record = json.loads(checked.stdout)
    hashed = run_cli("hash", "--config", str(config), str(path), cwd=repo)
    assert (hashed.returncode, hashed.stderr) == (0, ""), hashed
    assert record["valid"] and hashed.stdout.strip() == record["hash"]


def test_hash_of_a_source_named_by_its_suffix_is_the_converted_plans(repo: Path) -> None:
    """``ap.json`` is read as a plan source by ``validate`` and ``show`` (its suffix says
    so); ``hash`` read it as a PLAN.yml (JSON is YAML) and printed the hash of the JSON."""
    source = json.dumps(
        {
            "plan_version": 1,
            "goal": "greet",
            "steps": [{"step_id": "s1", "tool": "greet", "args": {"who": "x"}}],
        }
    )
    path, config = _lab(repo, "ap", source, "ap.json")
    for with_config in ((), ("--config", str(config))):
        checked = run_cli("validate", "--json", *with_config, str(path), cwd=repo)
        record = json.loads(checked.stdout)
        assert record["valid"] and record["format"] == "plan-contract", record
        hashed = run_cli("hash", *with_config, str(path), cwd=repo)
        assert hashed.returncode == 0 and hashed.stdout.strip() == record["hash"], hashed
