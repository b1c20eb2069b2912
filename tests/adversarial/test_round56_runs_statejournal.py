"""Round 56 (runs): one plan's journal entry in the state directory unusable. Not an agent's
attack (the state directory is the controller's, SPEC §15), but what a full or damaged disk,
a restored backup or an operator's slip leaves: docs/execution.md keeps each plan's journal
at ``<state_dir>/journal/<plan id, URL-quoted>/<hex of frozen hash>.jsonl``, and SPEC §15
says one bad entry "costs that plan a coded error and never stalls other plans" (written
for the plans tree; the brief's "read-only state" asks the same of the state directory).

One lab per variant: plan(s) ``bad*`` and an honest ``ok``, all approved by Alice in one
commit; before the run pass the journal entry of each ``bad*`` plan's frozen hash is made
unusable; two ``run --once`` passes (8 s bound each).

- ``dirfile``: the plan's journal folder is a regular file; ``jdir``: the journal file is a
  folder; ``jlink``: the journal file is a dangling symlink. Held, each: the plan waits
  (``plan_waiting``, ``E_INTERNAL: journal ...``), its tool never runs, ``ok`` runs once.
- ``two-jdir``, ``dirfile-jdir``: two such plans. **Broke**: every pass exits 1 with
  ``plangate: E_INTERNAL: journal ...: Is a directory`` ("check that the state directory is
  writable") before ``ok`` starts: each alone is tolerated, two stall every plan.
- ``jfifo``: the journal file is a FIFO. **Broke**: the pass blocks opening it (no reader)
  and never ends (killed at 8 s, twice); ``ok`` never runs. Should: refuse a journal that is
  no regular file (as for every file of the plans tree), that plan only.

Asserted: ``ok`` ran once and every ``bad*`` tool never ran.

Fixed (2026-11-29): a journal is opened non-blocking and refused unless it is a regular file
(``journal.Journal._open``), and a journal that cannot be opened or written is E_STORAGE,
owned by its plan: a batched start whose journal fails is tried alone and only that plan
waits (``committing._not_written``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

VARIANTS: dict[str, list[str]] = {
    "dirfile": ["dirfile"],
    "jdir": ["jdir"],
    "jlink": ["jlink"],
    "two-jdir": ["jdir", "jdir2"],
    "dirfile-jdir": ["dirfile", "jdir"],
    "jfifo": ["jfifo"],
}
IDS = list(VARIANTS)
BROKEN: dict[str, Any] = {}


def _build(root: Path, vid: str) -> dict[str, Any]:
    kinds = VARIANTS[vid]
    lab = Lab(root / vid)
    for v in [*kinds, "ok"]:
        lab.write(v, plan_text(v))
    lab.commit("plans")
    lab.run()
    for v in [*kinds, "ok"]:
        lab.set_status(v, "approved")
    lab.commit("approve", ALICE)
    journal = lab.state / "journal"
    journal.mkdir(exist_ok=True)
    for kind in kinds:
        hx = re.search(r"hash: sha256:([0-9a-f]+)", lab.git("show", f"HEAD:plans/{kind}/PLAN.yml"))
        assert hx
        folder = journal / f"plans%2F{kind}"
        if kind == "dirfile":
            folder.write_text("x")
            continue
        folder.mkdir()
        path = folder / f"{hx.group(1)}.jsonl"
        if kind.startswith("jdir"):
            path.mkdir()
        elif kind == "jlink":
            os.symlink("/nonexistent/journal", path)
        elif kind == "jfifo":
            os.mkfifo(path)
    passes = []
    for _ in range(2):
        try:
            r = lab.run(check=False, timeout=8)
            passes.append((r.returncode, r.stderr[-600:]))
        except subprocess.TimeoutExpired:
            passes.append((None, "timed out"))
        except Exception as why:  # clifork reports the kill its own way
            passes.append((None, f"{type(why).__name__}: {why}"[-300:]))
    return {
        "passes": passes,
        "ok": len(lab.calls("ok")),
        "bad": {k: len(lab.calls(k)) for k in kinds},
    }


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    def build(root: Path) -> Lab:
        lab = Lab.__new__(Lab)
        lab.seen = {vid: _build(root, vid) for vid in IDS}  # type: ignore[attr-defined]
        return lab

    return shared(tmp_path_factory, "r56-statejournal", build).seen  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_one_unusable_journal_costs_that_plan_only(
    seen: dict[str, dict[str, Any]], vid: str
) -> None:
    s = seen[vid]
    assert all(n == 0 for n in s["bad"].values()), s
    assert s["ok"] == 1, s
