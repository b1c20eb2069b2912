"""Round 43's check labs (``plangate check`` against the controller), played once here.

Each lab's variants are the agent's plans ``plans/<vid>``, frozen on main. The agent opens
``pr-<vid>`` setting one ``approved`` (:func:`ask_in_prs`); in a clone, ``plangate check
--as alice@example.com`` predicts each merge (:func:`predict`); Alice merges every branch
``--no-ff`` (:func:`merge_as_alice`); after the passes, a fresh clone's ``plangate audit
--json`` says which runs were valid (:func:`audit_in_clone`). A module keeps its variants,
what Alice or the agent writes before, its ``FOUND`` entries, its sleeps and its
assertions; :func:`prediction` and :func:`audited` read the reports for them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab


def pinning(vid: str, path: str, digest: str, why: str = "run the pinned plan") -> str:
    """The agent's parent plan ``vid``: one action running the plan ``path`` pinned by
    ``digest``."""
    return f"""\
plan:
  name: "{vid}"
  task: "attack variant {vid}"
  status: pending_approval
actions:
  - id: 1
    plan: {{path: {path}, hash: "{digest}"}}
    why: "{why}"
"""


def params(vids: list[str], found: dict[str, Any], prefix: str = "") -> list[Any]:
    """One ``pytest.param`` per variant, id ``<prefix><vid>``, marked from ``found``."""
    return [
        pytest.param(v, id=prefix + v, marks=[found[prefix + v]] if prefix + v in found else [])
        for v in vids
    ]


def ask_in_prs(
    lab: Lab,
    vids: list[str],
    before: Callable[[Lab, str], None] | None = None,
    prefix: str = "pr-",
) -> None:
    """Per variant, branch ``<prefix><vid>`` off main: ``before(lab, vid)`` (a commit of
    its own), then the agent's commit setting ``plans/<vid>`` approved."""
    for vid in vids:
        lab.git("checkout", "-q", "-b", f"{prefix}{vid}", "main")
        if before is not None:
            before(lab, vid)
        lab.set_status(vid, "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")


def predict(lab: Lab, root: Path, vids: list[str], prefix: str = "pr-") -> Path:
    """``plangate check --as alice@example.com`` of each ``<prefix><vid>``'s merge, in a clone
    ``root/chk`` (returned): ``lab.check_report[vid]`` holds its stdout and stderr."""
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in vids:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/{prefix}{vid}", "--as", "alice@example.com", "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    return chk


def merge_as_alice(lab: Lab, vids: list[str], passes: int = 2, prefix: str = "pr-") -> None:
    """Alice merges every ``<prefix><vid>`` ``--no-ff`` (the approval request); ``passes``
    passes."""
    for vid in vids:
        branch = f"{prefix}{vid}"
        lab.git("merge", "--no-ff", "-q", "-m", f"merge {branch}", branch, who=ALICE)
    for _ in range(passes):
        lab.run()


def audit_in_clone(lab: Lab, root: Path) -> None:
    """The check clone removed; ``plangate audit --json`` in a fresh clone ``root/clone``
    as ``lab.audit_report``."""
    shutil.rmtree(root / "chk", ignore_errors=True)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]


def prediction(lab: Lab, vid: str, slug: str | None = None) -> dict[str, Any]:
    """``check``'s row for ``plans/<slug>`` (``slug``: ``vid``) in the report of variant
    ``vid`` (what it predicts of that merge)."""
    row = lab.check_report[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/{slug or vid}"]
    assert mine, row["out"][:2000]
    return dict(mine[0])


def predicts_start(text: str) -> bool:
    """Does ``check --format json``'s report in ``text`` (its stdout, maybe followed by its
    stderr) predict ``outcome: start`` for some plan? The merge commit's prediction only: a
    plan's ``fast_forward`` (round 97) predicts another way of landing the branch."""
    start = text.find("{")
    if start < 0:
        return False
    try:
        report, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return False
    rows = report.get("plans", []) if isinstance(report, dict) else []
    return any(isinstance(r, dict) and r.get("outcome") == "start" for r in rows)


def audited(lab: Lab, vid: str) -> list[dict[str, Any]]:
    """The fresh-clone audit's executions of ``plans/<vid>``."""
    report = lab.audit_report  # type: ignore[attr-defined]
    return [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
