"""Round 74, agent-facing surfaces: ``plangate check`` (the CI reader of a pull request,
"what merging a pull request would do with each plan it changes") against round 73's held
SOURCES: a pull request whose plans are ``PLAN.json``/``PLAN.md`` sources the
daemon would convert, some beside a claim of the plan file's place or a twin source, and
claims added by the pull request beside plans already frozen on main. Round 72 made ``check``
report a held PLAN.yml as the controller does (outcome ``held``); round 73 made the controller
hold a SOURCE beside a claim. Does ``check`` (and MCP ``status``) hold the source too?

Lab (one, module scope; two ``run --once`` passes): on main, the agent's plans ``m-ok``,
``m-sym``, ``m-dir`` (PLAN.yml, frozen by pass 1). The agent's branch ``pr`` adds: ``s-ok``
(``PLAN.json`` alone: the control, converted after the merge), ``s-md`` (a fenced ``PLAN.md``
alone: control), ``s-sym`` (``PLAN.json`` beside a symlink ``plan.yml``), ``s-mdsym``
(``PLAN.md`` beside a symlink ``plan.yml``), ``s-dir`` (``PLAN.md`` beside a folder
``PLAN.YML/`` holding an ``approved`` plan), ``s-twin`` (``PLAN.json`` beside ``plan.JSON``),
``s-two`` (``PLAN.json`` beside ``PLAN.md``), ``s-zw`` (``PLAN.json`` beside a file
``PLAN.y<U+200C>ml``); beside the frozen plans: ``m-sym`` a symlink ``plan.yml``, ``m-dir`` a
folder ``PLAN.YML/``. Alice approves ``m-ok``, ``m-sym``, ``m-dir`` on the branch.
``plangate check --base main --head pr --as alice --format json``; Alice merges ``--no-ff``;
pass 2 (converts and freezes).
Readers (``<folder>:<reader>``): ``check``'s outcome (``check-outcome``: ``held`` for a held
folder, never ``start``) and code (``check-code``: E_PLAN_AMBIGUOUS or E_UNSAFE_PATH), the
row after the merge (``row``), whether the source was converted (``convert``), the ``rec``
calls (``ran``); the fresh-clone audit.
Must hold: ``check`` names the verdict the controller then acts on (held, E_PLAN_AMBIGUOUS)
for a held source as for a held PLAN.yml; the controls are reported valid with no problem and
converted; ``m-ok`` starts and runs once, nothing held runs; the audit agrees.

Seen (round 74):
- ``{s-sym,s-mdsym,s-dir,s-twin,s-two,s-zw}:{check-outcome,check-code}`` (12 ids, one class):
  ``plangate check`` of the pull request lists none of the held sources (no entry for
  ``plans/<f>``; only ``s-dir``'s folder ``PLAN.YML/`` itself, E_UNSAFE_PATH), so CI reports
  nothing for six folders the controller then holds ``E_PLAN_AMBIGUOUS: cannot convert ...``
  (the row after the merge), while the same claims beside frozen PLAN.yml files (``m-sym``,
  ``m-dir``) are ``held`` E_PLAN_AMBIGUOUS in the same report. Should (docs/plan-format.md:
  "``plangate check`` reports such a plan as every reader does (outcome ``held``, invalid,
  ``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH``)"; a source beside a claim "waits
  ``E_PLAN_AMBIGUOUS``"): an entry ``held``, E_PLAN_AMBIGUOUS for each held source. Nothing
  runs; the harm is a reviewer's CI silent on what the merge leaves held. Fixed (2026-11-30,
  r74heldcli): ``check`` lists every source in a folder the range changes (the daemon's
  ``SourceFinder`` at the merge) and answers as the daemon's converter does
  (``controller.service.sources.source_outcome``, the status row's answer): ``held`` with the
  folder's verdict (``controller.plan.names.folder_verdict``), E_PLAN_AMBIGUOUS.
Noted, not counted: the honest sources (``s-ok``, ``s-md``) are not listed by ``check``
either, though the merge makes the daemon commit ``plangate: convert`` for each (a pending
plan; nothing starts). Since r74heldcli they are: outcome ``convert`` (valid, the converted
plan's hash), or ``invalid`` when they do not convert or convert to an invalid plan.
Held: nothing held is converted or run (nor a twin or claim plan); ``m-ok`` ``start`` and
runs once; ``m-sym``/``m-dir`` ``held`` E_PLAN_AMBIGUOUS in ``check`` and on the row; the
controls converted, pending; the fresh-clone audit agrees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from test_round2_execution_kit import shared

SOURCES: dict[str, list[tuple[str, str]]] = {
    "s-ok": [("PLAN.json", "json")],
    "s-md": [("PLAN.md", "md")],
    "s-sym": [("PLAN.json", "json"), ("plan.yml", "sym")],
    "s-mdsym": [("PLAN.md", "md"), ("plan.yml", "sym")],
    "s-dir": [("PLAN.md", "md"), ("PLAN.YML", "dir")],
    "s-twin": [("PLAN.json", "json"), ("plan.JSON", "json2")],
    "s-two": [("PLAN.json", "json"), ("PLAN.md", "md2")],
    "s-zw": [("PLAN.json", "json"), ("PLAN.y\u200cml", "file")],
}
SRC_OK = ("s-ok", "s-md")
MAIN = {"m-ok": None, "m-sym": "sym", "m-dir": "dir"}


def _data(tag: str) -> str:
    return json.dumps(dict(load_yaml(plan_text(tag))), indent=1)


def _entry(lab: Lab, folder: str, name: str, kind: str) -> None:
    where = lab.repo / "plans" / folder
    where.mkdir(parents=True, exist_ok=True)
    tag = f"{folder}-2" if kind.endswith("2") else folder
    if kind in ("json", "json2"):
        (where / name).write_text(_data(tag))
    elif kind in ("md", "md2"):
        (where / name).write_text(f"```json\n{_data(tag)}\n```\n")
    elif kind == "sym":
        (where / name).symlink_to("../m-ok/PLAN.yml")
    elif kind == "dir":
        lab.write(f"{folder}/{name}", plan_text(f"{folder}-in", "approved"))
    else:
        (where / name).write_text(plan_text(f"{folder}-in", "approved"))


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    for plan in MAIN:
        lab.write(plan, plan_text(plan))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    lab.git("checkout", "-q", "-b", "pr")
    for folder, entries in SOURCES.items():
        for name, kind in entries:
            _entry(lab, folder, name, kind)
    _entry(lab, "m-sym", "plan.yml", "sym")
    _entry(lab, "m-dir", "PLAN.YML", "dir")
    lab.commit("agent: sources and notes", AGENT)
    for plan in MAIN:
        lab.set_status(plan, "approved")
    lab.commit("alice: approve on the branch", ALICE)
    done = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    got: dict[str, Any] = {"check-rc": done.returncode, "check-err": done.stderr[-2000:]}
    got["check"] = {p["plan"]: p for p in json.loads(done.stdout)["plans"]}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=ALICE)
    lab.run()
    cfg = str(lab.config)
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    names = [*SOURCES, *MAIN]
    got["calls"] = {t: len(lab.calls(t)) for n in names for t in (n, f"{n}-2", f"{n}-in")}
    got["converts"] = {
        f: [t for t in lab.subjects(f) if t.startswith("plangate: convert")] for f in SOURCES
    }
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-surface-checksources", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 74: {what}")


HELD_SRC = [f for f in SOURCES if f not in SRC_OK]
READERS = ("check-outcome", "check-code", "row", "convert", "ran")
IDS = [f"{f}:{r}" for f in [*SOURCES, *MAIN] for r in READERS if f in SOURCES or r != "convert"]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_check_holds_what_the_controller_holds(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    folder, reader = vid.split(":")
    held = folder in HELD_SRC or (MAIN.get(folder, "") is not None and folder in MAIN)
    entry = got["check"].get(f"plans/{folder}")
    row = got["rows"].get(f"plans/{folder}") or {}
    if reader == "check-outcome":
        if folder == "m-ok":
            assert entry and entry["outcome"] == "start", entry
        elif held:
            assert entry and entry["outcome"] == "held", (entry, sorted(got["check"]))
        else:
            assert entry is None or entry["outcome"] != "start", entry
    elif reader == "check-code":
        codes = {p["code"] for p in (entry or {}).get("problems", [])}
        if held:
            assert "E_PLAN_AMBIGUOUS" in codes, (entry, sorted(got["check"]))
        else:
            assert entry is None or (entry["valid"] and not codes), entry
    elif reader == "row":
        if held:
            assert row.get("status") != "completed", row
            assert "E_PLAN_AMBIGUOUS" in json.dumps(row), row
        elif folder == "m-ok":
            assert row.get("status") == "completed" and row.get("approver") == ALICE[1], row
        else:
            assert row.get("status") == "pending_approval", row
    elif reader == "convert":
        assert bool(got["converts"][folder]) == (folder in SRC_OK), got["converts"]
    else:
        assert got["calls"][folder] == (1 if folder == "m-ok" else 0), got["calls"]
        assert got["calls"][f"{folder}-2"] == got["calls"][f"{folder}-in"] == 0, got["calls"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed == ["plans/m-ok"], (got["audit"], completed)
    assert got["audit"]["runs"] == 1, got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r74cs-", dir="/tmp/atk74b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
