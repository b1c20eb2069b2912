# ruff: noqa: E501  (source documents are kept on one line as written)
"""Round 4, what runs / what is recorded: the daemon's conversion of a ``PLAN.json`` /
``PLAN.md`` / ``PLAN.toon`` an agent drops into a plan folder (docs/formats.md, "In a plan
folder: the daemon converts"). No earlier round touched it.

- A hostile source crashes the pass (deeply nested JSON in a ``PLAN.json`` or in a
  ``PLAN.md`` step's Parameters; an integer of 5,000 digits): every other plan stalls. Each
  in its own repo (a crash stalls the whole pass), beside an approved bystander.
- An ActionPlan ``nested_plan`` step is written at ``<plan folder>/step-N/PLAN.yml``. The
  agent makes ``step-N`` a symlink first: committed, to another plan's folder (the
  controller writes the nested plan into that plan's working-tree file; the other plan,
  approved, must still run); uncommitted, to a folder outside the repo (nothing may be
  written there).
- An honest nested conversion: ``plangate audit`` must not call the controller's own
  ``convert`` commit of the nested plan unexplained.
- A source that does not convert: ``plangate status`` shows the code (the docs promise
  ``cannot convert plans/x/PLAN.json: E_...``).
- Held: a plan that ran, submitted again as a ``PLAN.json`` (same folder after delete, and a
  new folder) and approved, never runs again (E_ALREADY_EXECUTED); a ``PLAN.json`` symlink to
  a file outside the repo is never read into a commit, status or log.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared


def _ap(tag: str, steps: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    """An ActionPlan v1 document whose one step calls ``store_data`` (recorded as ``tag``)."""
    doc: dict[str, Any] = {
        "plan_version": 1,
        "plan_id": f"plan:{tag}",
        "title": tag,
        "workspace_id": "/w",
        "steps": steps
        or [
            {
                "step_number": 1,
                "action": {"type": "store_data", "key": tag, "value": 1},
                "description": "d",
                "idempotent": False,
            }
        ],
    }
    doc.update(extra)
    return doc


def _nested(tag: str) -> dict[str, Any]:
    inner = _ap(
        f"{tag}-inner",
        steps=[
            {
                "step_number": 1,
                "action": {"type": "store_data", "key": f"{tag}-inner", "value": 1},
                "description": "inner",
            }
        ],
    )
    return _ap(
        tag,
        steps=[
            {
                "step_number": 1,
                "action": {"type": "store_data", "key": f"{tag}-1", "value": 1},
                "description": "first",
            },
            {
                "step_number": 2,
                "action": {"type": "nested_plan", "plan": inner},
                "description": "nest",
            },
        ],
    )


def _lab(root: Path) -> Lab:
    py, rec = sys.executable, root / "rec.py"
    return Lab(
        root,
        tools=f'store_data: {{kind: exec, argv: ["{py}", "{rec}", "{{key}}"], env: {{REC_LOG: "{root / "ran.log"}"}}}}\n',
    )


def _put(lab: Lab, rel: str, data: str | bytes) -> Path:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def _approve_in_index(lab: Lab, *slugs: str) -> None:
    """Alice approves HEAD's version of each plan (what she reviewed), whatever bytes the
    shared working tree holds there now."""
    for slug in slugs:
        text = lab.git("show", f"HEAD:plans/{slug}/PLAN.yml")
        text = text.replace('status: "pending_approval"', "status: approved", 1).replace(
            "status: pending_approval", "status: approved", 1
        )
        _put(lab, f"plans/{slug}/PLAN.yml", text)
        lab.git("add", f"plans/{slug}/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve " + " ".join(slugs), who=ALICE)


# -- one shared repo: the variants that leave the pass alive ------------------------------

UNCONVERTIBLE = {
    "bad-nan": json.dumps(_ap("bad-nan")).replace(
        '"idempotent": false', '"idempotent": false, "timeout_ms": NaN'
    ),
    "bad-utf16": json.dumps(_ap("bad-utf16")).encode("utf-16"),
    "bad-nul": b'{"plan_version": 1,\x00}',
}


def _build(root: Path) -> Lab:
    lab = _lab(root)
    (root / "outside").mkdir()
    (root / "secret.json").write_text(json.dumps(_ap("TOPSECRET-4b")))
    # round A: plans and sources the agent commits
    _put(lab, "plans/victim/PLAN.yml", plan_text("victim"))
    _put(lab, "plans/zz-bystander/PLAN.yml", plan_text("zz-bystander"))
    _put(lab, "plans/ok/PLAN.json", json.dumps(_nested("ok")))
    _put(lab, "plans/rep/PLAN.json", json.dumps(_ap("rep")))
    for slug, data in UNCONVERTIBLE.items():
        _put(lab, f"plans/{slug}/PLAN.json", data)
    (lab.repo / "plans/src-link").mkdir(parents=True)
    os.symlink(root / "secret.json", lab.repo / "plans/src-link/PLAN.json")
    lab.commit("plans and sources", AGENT)
    lab.run()
    # round B: the symlinked step-N folders
    (lab.repo / "plans/hop").mkdir()
    os.symlink("../victim", lab.repo / "plans/hop/step-2")
    _put(lab, "plans/hop/PLAN.json", json.dumps(_nested("hop")))
    lab.git("add", "plans/hop")
    lab.git("commit", "-q", "-m", "hop", who=AGENT)
    (lab.repo / "plans/out").mkdir()
    os.symlink(root / "outside", lab.repo / "plans/out/step-2")
    _put(lab, "plans/out/PLAN.json", json.dumps(_nested("out")))  # never committed
    lab.run()
    lab.victim_tree = (lab.repo / "plans/victim/PLAN.yml").read_text()
    lab.victim_head = lab.git("show", "HEAD:plans/victim/PLAN.yml")
    # round C: Alice approves the victim, rep and the bystander (HEAD's versions)
    _approve_in_index(lab, "victim", "rep", "zz-bystander")
    lab.run()
    # round D: rep ran; the agent submits it again as PLAN.json, same folder and a new one
    lab.git("rm", "-rqf", "plans/rep")
    lab.git("commit", "-q", "-m", "drop rep", who=AGENT)
    _put(lab, "plans/rep/PLAN.json", json.dumps(_ap("rep")))
    _put(lab, "plans/rep2/PLAN.json", json.dumps(_ap("rep")))
    lab.git("add", "plans/rep", "plans/rep2")
    lab.git("commit", "-q", "-m", "rep again", who=AGENT)
    lab.run()
    _approve_in_index(lab, "rep", "rep2")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r4-convert", _build)


def test_a_symlinked_step_folder_never_redirects_the_nested_plan(lab: Lab) -> None:
    assert lab.victim_tree == lab.victim_head
    assert "hop-inner" not in lab.victim_tree


def test_the_victim_runs_once_when_approved(lab: Lab) -> None:
    assert len(lab.calls("victim")) == 1


def test_nothing_is_written_outside_the_repo(lab: Lab) -> None:
    assert list((lab.root / "outside").iterdir()) == []


def test_audit_explains_the_controllers_own_nested_convert(lab: Lab) -> None:
    assert lab.started("zz-bystander")
    _, report = lab.audit("--config", str(lab.config))
    mine = [f for f in report.get("findings", []) if str(f.get("plan", "")).startswith("plans/ok")]
    assert mine == [], mine


@pytest.mark.parametrize("slug", list(UNCONVERTIBLE))
def test_status_names_why_a_source_does_not_convert(lab: Lab, slug: str) -> None:
    assert not lab.calls(slug)
    assert "E_" in json.dumps(lab.status().get(f"plans/{slug}", {}))


def test_a_plan_that_ran_never_runs_again_as_a_converted_source(lab: Lab) -> None:
    assert len(lab.calls("rep")) == 1
    assert "E_ALREADY_EXECUTED" in lab.codes("rep2")


def test_a_symlinked_source_is_never_read(lab: Lab) -> None:
    assert not lab.calls("TOPSECRET-4b")
    assert "TOPSECRET" not in lab.git("log", "-p", "--all", "--format=%B")
    assert "TOPSECRET" not in json.dumps(lab.status())


def test_the_bystander_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz-bystander")) == 1


# -- hostile sources that killed the pass: one repo each ----------------------------------

BASE = json.dumps(_ap("hostile"))
CRASHERS = {
    "json-deep-object": (
        "PLAN.json",
        BASE[:-1] + ', "metadata": ' + '{"a":' * 50000 + "1" + "}" * 50000 + "}",
    ),
    "md-deep-parameters": (
        "PLAN.md",
        "# T\n## Steps\n### Step 1: x\n- **Action**: store_data\n- **Parameters**: "
        + "[" * 50000
        + "]" * 50000
        + "\n",
    ),
    "json-5000-digit-value": ("PLAN.json", BASE.replace('"value": 1', '"value": ' + "9" * 5000)),
    "json-5000-digit-created": ("PLAN.json", BASE[:-1] + ', "created_at": ' + "9" * 5000 + "}"),
}
HELD = {
    "json-deep-array": ("PLAN.json", "[" * 100000 + "]" * 100000),
    "toon-deep": ("PLAN.toon", "a:\n" + "".join("  " * i + "b:\n" for i in range(1, 3000))),
}


@pytest.mark.parametrize(
    "name",
    list(CRASHERS) + list(HELD),
)
def test_a_hostile_source_costs_only_its_plan(tmp_path: Path, name: str) -> None:
    filename, data = {**CRASHERS, **HELD}[name]
    lab = _lab(tmp_path)
    _put(lab, "plans/zz-bystander/PLAN.yml", plan_text("zz-bystander"))
    lab.commit("bystander", AGENT)
    lab.run()
    lab.approve("zz-bystander")
    _put(lab, f"plans/hostile/{filename}", data)
    lab.commit("hostile source", AGENT, "plans/hostile")
    try:
        result = lab.run(check=False)
    except BenchError as exc:  # pragma: no cover - the bench itself
        raise exc
    assert result.returncode == 0, result.stderr[-400:]
    assert len(lab.calls("zz-bystander")) == 1
    assert not lab.calls("hostile")


# -- `plangate convert -o DIR` where the agent left a symlink in DIR ------------------------


def test_convert_out_never_writes_through_a_symlink(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "src").mkdir()
    (tmp_path / "plans").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "plans" / "x")
    (tmp_path / "src" / "x.json").write_text(json.dumps(_ap("x")))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "controller",
            "convert",
            "-o",
            str(tmp_path / "plans"),
            str(tmp_path / "src" / "x.json"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert list((tmp_path / "elsewhere").iterdir()) == []
