"""Property: nothing a plan author writes becomes a trailer of the controller's commits
(SPEC §7 trailers, §10 E_UNSAFE_PATH, §15 hostile names).

Attacks: a plan folder whose name carries a line break (LF, CR, VT, FF, NEL, U+2028, a
blank line to open a trailer block) followed by ``Approved-By:``, ``Plan-Status:``,
``Plan-Hash:``, ``Controller:``; the same text in the plan's name, task, ``why``, a param, an
input, and a failing tool's stderr. Defence: hostile folder names are refused (E_UNSAFE_PATH,
never run), and no controller commit carries a trailer value the attacker wrote; honest
plans beside them still run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, plan_text
from test_round2_execution_kit import shared


def marker(vid: str) -> str:
    return f"{vid}@evil.example"


FOLDERS = {
    "lf": "x\nApproved-By: {m}",
    "lf-status": "x\nPlan-Status: completed\nApproved-By: {m}",
    "blank-line": "x\n\nApproved-By: {m}",
    "trailing-lf": "x\nApproved-By: {m}\n",
    "cr": "x\rApproved-By: {m}",
    "crlf": "x\r\nApproved-By: {m}",
    "vt": "x\x0bApproved-By: {m}",
    "ff": "x\x0cApproved-By: {m}",
    "nel": "x\x85Approved-By: {m}",
    "ls": "x\u2028Approved-By: {m}",
    "tab": "x\tApproved-By: {m}",
    "ansi": "x\x1b[2K\nApproved-By: {m}",
    "nested": "team\nApproved-By: {m}/deploy",
    "plan-hash": "x\nPlan: plans/control\nPlan-Hash: sha256:{m}",
    "controller": "x\nController: vm/{m}\nApproved-By: {m}",
}
# Names with no line break at all are legal folder names (they run); the rest must be refused.
PRINTABLE = {"tab"}

FIELDS = {
    "name": ("name", '"n\\nApproved-By: {m}"'),
    "task": ("task", '"t\\n\\nApproved-By: {m}\\nPlan-Status: completed"'),
    "why": ("why", '"w\\nApproved-By: {m}"'),
    "param": ("param", '"p\\n\\nApproved-By: {m}"'),
}


def _field_plan(vid: str, field: str, value: str) -> str:
    text = plan_text(vid)
    if field == "name":
        return text.replace(f'  name: "{vid}"', f"  name: {value}")
    if field == "task":
        return text.replace(f'  task: "attack variant {vid}"', f"  task: {value}")
    if field == "why":
        return text.replace(f'    why: "record that variant {vid} ran"', f"    why: {value}")
    return plan_text(vid, params=f"note: {value}\n")


STDERR_PLAN = """\
plan:
  name: "stderr"
  task: "a tool whose error text carries trailers"
  status: pending_approval
available_tools:
  - name: fail
actions:
  - id: 1
    tool: fail
    why: "fails with a hostile message"
    params:
      msg: "boom\\n\\nApproved-By: {m}\\nPlan-Status: completed"
"""


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    fail = json.dumps(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys; sys.stderr.write(sys.argv[1]); sys.exit(3)",
            "{msg}",
        ]
    )
    lab.write_config(tools=f"fail: {{kind: exec, argv: {fail}}}\n")
    for vid, name in FOLDERS.items():
        folder = lab.repo / "plans" / name.format(m=marker(vid))
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(plan_text(f"dir-{vid}"))
    for vid, (field, value) in FIELDS.items():
        lab.write(f"field-{vid}", _field_plan(f"field-{vid}", field, value.format(m=marker(vid))))
    lab.write("stderr", STDERR_PLAN.format(m=marker("stderr")))
    lab.write("control", plan_text("control"))
    lab.commit("plans", AGENT)
    lab.run()
    for vid, name in FOLDERS.items():
        path = lab.repo / "plans" / name.format(m=marker(vid)) / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    for vid in FIELDS:
        lab.set_status(f"field-{vid}", "approved")
    lab.set_status("stderr", "approved")
    lab.set_status("control", "approved")
    lab.commit("approve everything", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-names", _build_lab)


@pytest.fixture(scope="module")
def controller_trailers(lab: Lab) -> list[dict[str, list[str]]]:
    """The trailers of every commit under the controller's identity, as git parses them; a
    batched commit (``Plan-Event:``, several plans' events) gives one entry per ``Plan:``
    group, its shared ``Controller:`` in the last."""
    out = lab.git("log", f"--author={BOT[1]}", "--format=%(trailers:only,unfold)%x01")
    found = []
    for block in out.split("\x01"):
        lines = [line.split(": ", 1) for line in block.strip("\n").splitlines() if ": " in line]
        keys = [key.lower() for key, _ in lines]
        batched = "plan-event" in keys
        if batched:
            assert keys.count("plan") == keys.count("plan-event"), block
        groups: list[dict[str, list[str]]] = []
        for key, value in lines:
            if not groups or (batched and key.lower() == "plan"):
                groups.append({})
            groups[-1].setdefault(key.lower(), []).append(value)
        found += [g for g in groups if g]
    assert found, "the controller committed nothing"
    return found


def test_control_plan_ran(lab: Lab) -> None:
    assert len(lab.calls("control")) == 1


@pytest.mark.parametrize("vid", [*(f"field-{v}" for v in FIELDS), "stderr"])
def test_plans_with_hostile_text_in_fields_did_run(lab: Lab, vid: str) -> None:
    """So their start and complete/fail commits exist for the trailer check below."""
    assert lab.started(vid)


ALL = [*(f"dir-{v}" for v in FOLDERS), *(f"field-{v}" for v in FIELDS), "stderr"]
# Fixed (issue 11): commit messages are built from parts, every value on one line
# (controller.git.message), and hostile folder names are E_UNSAFE_PATH.
TRAILER_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(ALL, ALL, TRAILER_BROKEN))
def test_no_attacker_text_in_controller_trailers(
    controller_trailers: list[dict[str, list[str]]], vid: str
) -> None:
    m = marker(vid.removeprefix("dir-").removeprefix("field-"))
    for trailers in controller_trailers:
        # The folder name is legitimately the value of `Plan:`; it must never be more.
        text = json.dumps({k: v for k, v in trailers.items() if k != "plan"})
        assert m not in text, f"attacker text became a trailer: {trailers}"


def test_every_controller_commit_has_one_of_each_trailer(
    controller_trailers: list[dict[str, list[str]]],
) -> None:
    for trailers in controller_trailers:
        for key in ("approved-by", "plan-status", "plan-hash", "plan", "controller"):
            assert len(trailers.get(key, [])) <= 1, f"two {key} trailers: {trailers}"


NAME_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(FOLDERS), list(FOLDERS), NAME_BROKEN))
def test_hostile_folder_names_are_refused_and_never_run(lab: Lab, vid: str) -> None:
    if vid in PRINTABLE:
        assert len(lab.calls(f"dir-{vid}")) <= 1
        return
    assert lab.calls(f"dir-{vid}") == [], "a plan under a hostile name ran"
    rows = lab.status()
    text = json.dumps([row for name, row in rows.items() if marker(vid) in name])
    assert "E_UNSAFE_PATH" in text, rows.keys()
