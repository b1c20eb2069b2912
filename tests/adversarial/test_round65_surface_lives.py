"""Round 65, agent-facing surfaces: round 64's hash-mismatch rule ("every reader carries
``E_PLAN_HASH_MISMATCH`` when a plan's content no longer matches its kept ``frozen.hash``; a
record belongs to one life of its path") where round 64 did not look.

Lab (one, module scope), local mode with ``agent.identity``. Plans complete on Alice's
approval, then in ONE agent commit: ``sw1``/``sw2`` swap folders (each content still matches
its own ``frozen.hash``, each path now holds the other's run); ``kr``'s action is changed AND
its ``frozen.hash`` rewritten to the new text's hash (``plangate hash``), the ``approval:``
and ``execution:`` blocks kept; ``rl``'s PLAN.yml is replaced by a new pending plan with no
blocks (``tag: rl-EVIL``), its EXECUTION_LOG.md left; ``cp`` is copied to ``cp2`` (blocks and
log); ``cm`` gets a comment line only (the hash is the same: honest); ``ed``'s action is
changed with every block kept, and reverted in the next commit (honest again). Readers:
``status --json``, ``show --config``, MCP ``log`` and ``status``, before the next pass.

Asserted: a reader showing the controller's run at a path whose text is not that run's
carries a problem (``E_PLAN_HASH_MISMATCH``/``E_OWNED_BLOCK_CHANGED``/``STALE``) or shows no
run; the honest ones (``cm``, ``ed`` after the revert) show their run with no such problem;
nothing changed runs.

Broke (strict xfails, 6): ``sw1-status``, ``sw1-mcp-status``, ``sw2-status``,
``sw2-mcp-status``, ``kr-status``, ``kr-mcp-status``: the status row (``status --json``, MCP
``status``) says ``completed``, approver alice, ``hash`` equal to ``frozen_hash``, its notes
only the path's own freeze/approve/start/complete, for a text that is not the one that ran
there (the swapped-in plan of the other folder; ``kr-EVIL`` with a rehashed ``frozen:``),
while ``show`` and MCP ``log`` of the same path carry ``E_OWNED_BLOCK_CHANGED`` ("the
execution:/approval: block on the branch is not the controller's record") and show no run.
Round 64's row rule compares the text with its OWN ``frozen.hash``, which the agent moved or
rewrote with it. Should: the row compares the text's hash with the hash the controller
recorded for the path's life (as ``show`` compares the blocks with its record) and carries a
note (``E_OWNED_BLOCK_CHANGED``/``E_PLAN_HASH_MISMATCH``). Held: ``show`` and MCP ``log`` of
``sw*``, ``kr``, ``cp2`` (``E_OWNED_BLOCK_CHANGED``, no run shown), ``rl`` (no run shown by
``show``/``log``; its row says completed with an ``E_ILLEGAL_TRANSITION`` note), ``cp2``'s
row (no status, no approver, ``E_ILLEGAL_TRANSITION``); honest ``cm`` (a comment) and ``ed``
(edited then reverted) show their run with no problem; nothing changed ran.

Fixed (2026-11-29): the status row carries ``show``'s notes (the six ids pass). A row of a plan
frozen, approved or run whose file someone else committed last is judged by
``controller.git.ownrecord.record_notes``, the notes of ``shown_record`` (``show``, the page,
MCP ``log``): the text is compared with the controller's record of the path's life, not with
the ``frozen.hash`` the text carries, so a swapped folder or a rewritten ``frozen:`` block
ends the recorded life and the row notes ``E_OWNED_BLOCK_CHANGED`` (``sw*``, ``kr``), as
``show`` does; the honest ``cm``/``ed`` rows still carry no note. A file the controller
committed last is its own record and is not read again (no git per unchanged plan).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases, plan_text
from oraclekit import record_lab, shown_records
from test_round2_execution_kit import shared

SLUGS = ("sw1", "sw2", "kr", "rl", "cp", "cm", "ed")
READ = ("sw1", "sw2", "kr", "rl", "cp2", "cm", "ed")
WHERE = ("status", "show", "mcp-log", "mcp-status")


def _build(root: Path) -> Lab:
    lab = record_lab(root, "@1795400000 +0000", {slug: plan_text(slug) for slug in SLUGS})
    done = {slug: lab.status()[f"plans/{slug}"]["status"] for slug in SLUGS}
    assert set(done.values()) == {"completed"}, done
    lab.git("mv", "plans/sw1", "plans/swx")
    lab.git("mv", "plans/sw2", "plans/sw1")
    lab.git("mv", "plans/swx", "plans/sw2")
    kr = lab.read("kr").replace('tag: "kr"', 'tag: "kr-EVIL"')
    lab.write("kr", kr)
    new = lab.cli("hash", str(lab.repo / "plans/kr/PLAN.yml"), cwd=lab.repo).stdout
    new_hash = re.search(r"sha256:[0-9a-f]{64}", new)
    assert new_hash, new
    head, tail = kr.split("\nfrozen:", 1)
    tail = re.sub(r"sha256:[0-9a-f]{64}", new_hash.group(0), tail, count=1)
    lab.write("kr", head + "\nfrozen:" + tail)
    lab.write("rl", plan_text("rl-EVIL", name="rl"))
    lab.git("add", "-A")
    (lab.repo / "plans/cp2").mkdir()
    for f in ("PLAN.yml", "EXECUTION_LOG.md"):
        (lab.repo / "plans/cp2" / f).write_bytes((lab.repo / "plans/cp" / f).read_bytes())
    lab.write("cm", "# reviewed by the agent\n" + lab.read("cm"))
    ed = lab.read("ed")
    lab.write("ed", ed.replace('tag: "ed"', 'tag: "ed-EVIL"'))
    lab.commit("agent: swap, rehash, replace, copy, comment, edit")
    lab.write("ed", ed)
    lab.commit("agent: revert ed")
    got = shown_records(lab, READ)
    lab.run()
    got["calls"] = {t: len(lab.calls(t)) for t in ("kr-EVIL", "rl-EVIL", "ed-EVIL", "cp")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r65-surface-lives", _build)


FLAGS = ("E_PLAN_HASH_MISMATCH", "E_OWNED_BLOCK_CHANGED", "STALE", "changed since")


def _text(shown: Any) -> str:
    return shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)


def _shows_run(what: str, shown: Any) -> bool:
    text = _text(shown)
    if what == "mcp-log":
        return bool(shown.get("execution")) or bool(shown.get("execution_log"))
    if what == "show":
        return "ran: succeeded" in text or "Approved: by" in text
    row = shown["plans"][0] if what == "mcp-status" else shown
    return row.get("status") == "completed" or bool(row.get("approver"))


def _row_flagged(what: str, shown: Any) -> bool:
    row = shown["plans"][0] if what == "mcp-status" else shown
    return any("E_" in str(n) for n in [*(row.get("notes") or []), row.get("problem")])


IDS = [f"{slug}-{what}" for slug in READ for what in WHERE] + ["norun"]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_record_is_shown_only_with_what_it_recorded(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    if vid == "norun":
        assert got["calls"] == {"kr-EVIL": 0, "rl-EVIL": 0, "ed-EVIL": 0, "cp": 1}, got["calls"]
        return
    slug, what = vid.split("-", 1)
    shown = got[f"{slug}:{what}"]
    assert shown is not None, vid
    text = _text(shown)
    assert "Traceback" not in text, text[-1500:]
    flagged = any(f in text for f in FLAGS)
    if what in ("status", "mcp-status"):
        flagged = _row_flagged(what, shown)
    if slug in ("cm", "ed"):  # honest: the text is the run's
        assert _shows_run(what, shown) and not flagged, text[:2000]
        return
    assert not _shows_run(what, shown) or flagged, text[:2000]
