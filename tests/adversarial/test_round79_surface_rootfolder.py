"""Round 79, agent surfaces, found by the lead after the round (2026-12-01): a root FOLDER
whose own name holds a backslash.

Round 79's fix (r79bsroot) made the history index read the root's own backslash FILES
(``PLANS\\rt\\PLAN.yml``). A root FOLDER so named is the next spelling of the same claim:
the agent commits ``plans\\rf/PLAN.yml`` (the folder ``plans\\rf`` at the repository's root,
holding an ordinary ``PLAN.yml``) beside the pending ``plans/rf``. On git for Windows that
folder IS ``plans/rf`` (docs/plan-format.md: a backslash is a folder separator there, "at
any level from the repository's root down"), so its ``PLAN.yml`` lands on the plan's file
and a reviewer there reads one text while the controller runs the other.

Lab (one, built once): the agent commits ``plans/rf``, the root folder ``plans\\rf`` with its
own ``PLAN.yml`` (tag ``rf-tw``), and the control ``plans/ok``; a pass freezes; Alice
approves ``rf`` and ``ok``; two passes.

- ``rf:held``: the row holds ``plans/rf`` (``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH``).
- ``rf:never``: neither ``rf`` nor the twin ever runs.
- ``rf:show``: ``plangate show`` names the code.
- ``ok:ran`` (control): the honest plan beside it ran once.

Seen (round 79, lead): ``rf:held``, ``rf:never``, ``rf:show`` (3 ids, strict xfails):
``plans/rf`` ran once on Alice's approval, its row says completed, ``show`` prints its run;
the index reads ``git log -- plans ':(glob)*\\*'``, which lists no file BELOW a root folder
whose name holds a backslash, and the readers' walks start at the plans folder. Should
(docs/plan-format.md, twins): held by the row, the pass and every reader, never run.
Fixed (2026-12-01, lead): ``planstate.history_paths`` adds ``:(glob)*\\*/**`` (the files
below such a folder), the cold scan reads them from the root listing it walks anyway, the
index notes every path with a backslash in any part, and ``names.split_files`` counts the
entries of a backslash folder that lands on the plan's folder itself (every reader).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for tag in ("rf", "ok"):
        lab.write(tag, plan_text(tag))
    twin = lab.repo / "plans\\rf" / "PLAN.yml"
    twin.parent.mkdir(parents=True)
    twin.write_text(plan_text("rf-tw", name="rf"), encoding="utf-8")
    lab.commit("agent: plans and a root folder", AGENT)
    lab.run()
    time.sleep(1.1)
    for tag in ("rf", "ok"):
        lab.set_status(tag, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in ("rf", "rf-tw", "ok")}
    done = lab.cli("show", "--config", cfg, str(lab.repo / "plans" / "rf"))
    got["show"] = f"{done.returncode} {done.stdout}{done.stderr}"
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-surface-rootfolder", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 79: {what}")


IDS = ["rf:held", "rf:never", "rf:show", "ok:ran"]
BROKEN: dict[str, Any] = {}  # fixed (2026-12-01, lead, branch rootfold)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_root_backslash_folder_holds_the_plan(lab: Lab, vid: str) -> None:
    """The root folder ``plans\\rf`` is ``plans/rf`` on git for Windows: the plan is held by
    the row and ``show``, and neither text runs; the honest ``ok`` beside it runs once."""
    got = lab.got  # type: ignore[attr-defined]
    row = got["rows"].get("plans/rf") or {}
    if vid == "ok:ran":
        assert got["calls"]["ok"] == 1, got["calls"]
        assert got["rows"]["plans/ok"]["status"] == "completed", got["rows"]
    elif vid == "rf:held":
        assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row
    elif vid == "rf:never":
        assert got["calls"]["rf"] == 0 and got["calls"]["rf-tw"] == 0, got["calls"]
    else:
        text = got["show"]
        assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, text[-600:]
