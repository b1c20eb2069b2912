"""Property: one bad entry costs that plan a coded error and never stalls other plans
(SPEC §15, E_UNSAFE_PATH, E_PLAN_TOO_LARGE, E_YAML_PARSE).

Attacks committed beside an honest plan: a gitlink where PLAN.yml should be, a gitlink as
the plan folder, a committed symlink PLAN.yml (to another plan, to /etc/passwd, dangling), a
symlinked plan folder, PLAN.yml as a directory, invalid UTF-8, NUL bytes, an empty file, a
top-level list or scalar, 100,000 nested brackets, a CRLF plan, a BOM, a file over the size
limit. In the working tree (uncommitted): FIFOs named PLAN.yml, as EXECUTION_LOG.md of a
running plan, and as a stray file. Defence: the pass exits 0, the honest plan runs, the
bad plan never runs and ``plangate status`` names it with an E_ code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared


def _gitlink(lab: Lab, path: str) -> None:
    commit = lab.head()
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{commit},{path}")


def _symlink(lab: Lab, path: str, target: str) -> None:
    blob = lab.git("hash-object", "-w", "--stdin", input=target).strip()
    lab.git("update-index", "--add", "--cacheinfo", f"120000,{blob},{path}")


def _blob(lab: Lab, path: str, data: bytes) -> None:
    file = lab.root / "blob.tmp"
    file.write_bytes(data)
    blob = lab.git("hash-object", "-w", str(file)).strip()
    lab.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")


def _valid(tag: str) -> bytes:
    return plan_text(tag).encode()


COMMITTED = {
    "gitlink-plan-file": lambda lab, p: _gitlink(lab, f"{p}/PLAN.yml"),
    "gitlink-folder": lambda lab, p: _gitlink(lab, p),
    "symlink-to-plan": lambda lab, p: _symlink(lab, f"{p}/PLAN.yml", "../bystander/PLAN.yml"),
    "symlink-to-passwd": lambda lab, p: _symlink(lab, f"{p}/PLAN.yml", "/etc/passwd"),
    "symlink-dangling": lambda lab, p: _symlink(lab, f"{p}/PLAN.yml", "nowhere/PLAN.yml"),
    "symlink-folder": lambda lab, p: _symlink(lab, p, "bystander"),
    "invalid-utf8": lambda lab, p: _blob(lab, f"{p}/PLAN.yml", _valid("utf8") + b"# \xff\xfe\n"),
    "nul-bytes": lambda lab, p: _blob(
        lab, f"{p}/PLAN.yml", _valid("nul").replace(b"why:", b"wh\0y:")
    ),
    "empty": lambda lab, p: _blob(lab, f"{p}/PLAN.yml", b""),
    "top-level-list": lambda lab, p: _blob(lab, f"{p}/PLAN.yml", b"- plan: x\n"),
    "top-level-scalar": lambda lab, p: _blob(lab, f"{p}/PLAN.yml", b"just text\n"),
    "deep-nesting": lambda lab, p: _blob(
        lab,
        f"{p}/PLAN.yml",
        _valid("deep") + b"metadata: " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
    ),
    "too-large": lambda lab, p: _blob(
        lab, f"{p}/PLAN.yml", _valid("large") + b"# " + b"x" * (1024 * 1024 + 10) + b"\n"
    ),
}

# Not attacks on others, but must not be lost: these must be frozen (or refused with a code).
ODD_BUT_FINE = {
    "crlf": lambda tag: _valid(tag).replace(b"\n", b"\r\n"),
    "bom": lambda tag: b"\xef\xbb\xbf" + _valid(tag),
}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("bystander", plan_text("bystander"))
    for vid, make in ODD_BUT_FINE.items():
        lab.write(vid, make(vid))
    lab.commit("honest plans", AGENT)
    for vid, make in COMMITTED.items():
        make(lab, f"plans/{vid}")
    lab.git("commit", "-q", "-m", "hostile entries", who=AGENT)
    lab.runs = [lab.run(check=False)]  # type: ignore[attr-defined]
    lab.set_status("bystander", "approved")
    for vid in ODD_BUT_FINE:
        if "frozen:" in lab.read(vid):
            lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.runs.append(lab.run(check=False))  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-badentry", _build_lab)


def test_the_passes_survive_and_the_honest_plan_runs(lab: Lab) -> None:
    for run in lab.runs:  # type: ignore[attr-defined]
        assert run.returncode == 0, run.stderr[-800:]
        assert "Traceback" not in run.stderr
    assert len(lab.calls("bystander")) == 1


@pytest.mark.parametrize("vid", list(COMMITTED))
def test_a_bad_entry_never_runs(lab: Lab, vid: str) -> None:
    for tag in ("utf8", "nul", "deep", "large"):
        assert lab.calls(tag) == []
    assert not lab.started(vid)


# Each is reported since issue 11 (E_UNSAFE_PATH, E_YAML_PARSE, E_SCHEMA_INVALID,
# E_PLAN_TOO_LARGE in status, and a plan_problem line in the controller's log).
REPORT_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(COMMITTED), list(COMMITTED), REPORT_BROKEN))
def test_a_bad_entry_is_reported_with_a_code(lab: Lab, vid: str) -> None:
    rows = lab.status()
    mine = json.dumps([row for name, row in rows.items() if name.startswith(f"plans/{vid}")])
    logged = [
        line
        for run in lab.runs  # type: ignore[attr-defined]
        for line in run.stderr.splitlines()
        if f"plans/{vid}" in line
    ]
    assert "E_" in mine or any("E_" in line for line in logged), (mine, logged)


@pytest.mark.parametrize("vid", ["crlf", "bom"])
def test_an_odd_but_honest_plan_is_frozen_or_told_why(lab: Lab, vid: str) -> None:
    text = lab.read(vid)
    if "frozen:" in text:
        assert len(lab.calls(vid)) == 1, "frozen and approved, but it did not run"
    else:
        assert "E_" in json.dumps(lab.status().get(f"plans/{vid}", {}))


FIFOS = {
    "fifo-plan-file": "PLAN.yml",
    "fifo-log": "EXECUTION_LOG.md",
    "fifo-stray": "notes.txt",
}


@pytest.mark.parametrize("vid", list(FIFOS))
def test_a_fifo_in_the_working_tree_never_hangs_a_pass(tmp_path: Path, vid: str) -> None:
    lab = Lab(tmp_path)
    lab.write("bystander", plan_text("bystander"))
    if vid != "fifo-plan-file":
        lab.write(vid, plan_text(vid))
    lab.commit("plans", AGENT)
    lab.run()
    (lab.repo / "plans" / vid).mkdir(exist_ok=True)
    os.mkfifo(lab.repo / "plans" / vid / FIFOS[vid])
    lab.set_status("bystander", "approved")
    if vid != "fifo-plan-file":
        lab.set_status(vid, "approved")
    lab.git(
        "add",
        "plans/bystander",
        f"plans/{vid}/PLAN.yml" if vid != "fifo-plan-file" else "plans/bystander",
    )
    lab.git("commit", "-q", "-m", "approve", who=ALICE)
    result = lab.run(timeout=20, check=False)
    assert result.returncode == 0, result.stderr[-800:]
    assert len(lab.calls("bystander")) == 1
