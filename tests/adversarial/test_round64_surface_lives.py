"""Round 64, agent-facing surfaces: round 63's record lives (``ownrecord.life_of``: the
controller's record at a path belongs to one life, which ends where the plan file was removed
or the path holds a plan frozen as another ``frozen.hash`` than the controller last recorded)
attacked where the agent controls what the rule reads: the ``frozen:`` block is the plan's
own text, so a plan whose content changes while its ``frozen.hash`` is kept stays in the old
life; and the other ways a path's file can go and come back.

Lab (one, module scope), local mode with ``agent.identity``. Five plans ``kh``, ``kp``,
``mv``, ``mve``, ``rs`` complete on Alice's approval. Then, in ONE agent commit: ``kh``'s
action is changed (``tag: kh-EVIL``, why "drop the prod database"), every block and
``status: completed`` kept; ``kp`` is replaced by another plan (``tag: kp-EVIL``) with
``status: pending_approval`` and the old ``frozen``/``approval``/``execution`` blocks
copied; ``mv`` is ``git mv``'d to ``plans/mv2``, ``mve`` to ``plans/mve2`` with its
EXECUTION_LOG.md rewritten (``FORGED-R64``); ``rs``'s PLAN.yml is removed (its log stays),
and restored in the next commit. Readers are asked before and after two more passes:
``status --json``, ``show`` (with and without ``--config``), MCP ``log``; then the audit.

Asserted: nothing changed runs (``*-norun``); a reader that shows the controller's run of a
path whose content has changed since that run says so (``STALE``, a problem, a note), and a
copy shows no record (``mv*``), as docs/plan-format.md promises.

Broke (strict xfails): ``kh-mcp-log`` (MCP ``log`` of the changed completed plan answers the
old run, action 1 ``succeeded``, "Approved by alice", with ``problems: []``: nothing tells
the agent's reader that the action it shows as run is not the one that ran; ``show`` says
``STALE``), ``kp-mcp-log`` (the same for the swapped-in PENDING plan ``kp-EVIL``: MCP
``log`` answers ``status: pending_approval`` beside Alice's completed run of the plan it
replaced, action 1 ``succeeded``, ``problems: []``; ``show`` says "Status: pending_approval
- waiting for an approval", "Approved: by alice", "ran: succeeded", marked ``STALE``),
``kh-status`` (``status --json``: completed, approver alice, no note of the
change; the audit flags ``content-after-approval``). Held: ``kh-show``/``kh-show0``
(``STALE: changed since frozen``), ``kh-audit``, the ``kp`` swap, the moved folders and the
restored file (no record, or ``E_OWNED_BLOCK_CHANGED`` naming the agent), nothing re-ran.
Should: a life is the controller's record of a HASH, not of the ``frozen:`` text the author
can copy: MCP ``log`` and the status row compare the plan's hash with the recorded run's
(as ``show`` does) and either show no record or carry the problem (``E_OWNED_BLOCK_CHANGED``
or a stale-hash note).

Fixed (2026-11-29): one rule for every reader of a plan's record
(``ownrecord.hash_mismatch``, ``show``'s ``STALE`` test): the record is of the version its
``frozen.hash`` names, and a text at the path that does not hash to it is another. The life
is kept (the controller's freeze of the new version starts the next one), but
``shown_record`` (``show``, the page and its API, MCP ``log``) carries
``E_PLAN_HASH_MISMATCH`` beside a record shown for such a text, and a ``status`` row of a
frozen, approved or run plan carries the same note: ``kh-mcp-log``, ``kp-mcp-log`` and
``kh-status`` hold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import Lab, cases, plan_text
from oraclekit import record_lab, structured
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp

SLUGS = ("kh", "kp", "mv", "mve", "rs")
READ = ("kh", "kp", "mv2", "mve2", "rs")


def _build(root: Path) -> Lab:
    lab = record_lab(root, "@1795300000 +0000", {slug: plan_text(slug) for slug in SLUGS})
    done = {slug: lab.status()[f"plans/{slug}"]["status"] for slug in SLUGS}
    assert set(done.values()) == {"completed"}, done
    lab.write(
        "kh",
        lab.read("kh")
        .replace('tag: "kh"', 'tag: "kh-EVIL"')
        .replace("record that variant kh ran", "drop the prod database"),
    )
    old = lab.read("kp")
    blocks = old[old.index("\nfrozen:") :] if "\nfrozen:" in old else ""
    assert "approval:" in blocks and "execution:" in blocks, old
    lab.write("kp", plan_text("kp-EVIL", name="kp") + blocks.lstrip("\n"))
    lab.git("mv", "plans/mv", "plans/mv2")
    lab.git("mv", "plans/mve", "plans/mve2")
    log = lab.repo / "plans/mve2/EXECUTION_LOG.md"
    log.write_text(log.read_text().replace("succeeded", "succeeded FORGED-R64"))
    lab.git("rm", "-q", "plans/rs/PLAN.yml")
    lab.commit("agent: edits, swaps, moves")
    lab.write("rs", lab.git("show", "HEAD~1:plans/rs/PLAN.yml"))
    lab.commit("agent: restore rs")
    cfg = str(lab.config)
    got: dict[str, Any] = {}

    def readers(when: str) -> None:
        rows = json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
        by = {r["plan"]: r for r in rows}
        for slug in READ:
            plan = f"plans/{slug}"
            got[f"{when}:{slug}:status"] = by.get(plan)
            got[f"{when}:{slug}:show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
            got[f"{when}:{slug}:show0"] = lab.cli("show", plan, cwd=lab.repo).stdout
        replies = mcp(lab, [("log", {"path": f"plans/{s}"}) for s in READ])
        for slug, reply in zip(READ, replies, strict=True):
            got[f"{when}:{slug}:mcp-log"] = structured(reply)

    readers("a")
    lab.run()
    lab.run()
    readers("b")
    got["audit"] = lab.audit()[1].get("findings", [])
    got["calls"] = {
        tag: len(lab.calls(tag)) for tag in ("kh", "kh-EVIL", "kp", "kp-EVIL", "mv", "mve", "rs")
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r64-surface-lives", _build)


def _flagged(text: str) -> bool:
    return any(w in text for w in ("STALE", "E_OWNED_BLOCK_CHANGED", "changed since", "E_"))


def _check(got: dict[str, Any], vid: str) -> None:
    slug, what = vid.split("-", 1)
    if what == "norun":
        assert got["calls"][f"{slug}-EVIL" if slug in ("kh", "kp") else slug] == (
            0 if slug in ("kh", "kp") else 1
        ), got["calls"]
        return
    if what == "audit":
        kinds = {(f["plan"], f["kind"]) for f in got["audit"]}
        assert (f"plans/{slug}", "content-after-approval") in kinds or (
            f"plans/{slug}",
            "owned-block-changed",
        ) in kinds, got["audit"]
        return
    for w in ("a", "b"):
        shown = got[f"{w}:{slug}:{what}"]
        text = json.dumps(shown) if not isinstance(shown, str) else shown
        if slug in ("mv2", "mve2"):  # a copy: no record of the controller's
            assert "Approved: by" not in text and "ran: succeeded" not in text, text[-1500:]
            assert "FORGED-R64" not in text, text[-1500:]
            if what == "mcp-log":
                assert shown.get("execution") is None, text[:1500]
            continue
        if what == "status":
            assert shown is not None, got
            assert _flagged(json.dumps(shown.get("notes"))), f"no note of the change: {shown}"
            continue
        if what == "mcp-log":
            shows_run = bool(shown.get("execution")) or bool(shown.get("execution_log"))
            assert not shows_run or shown.get("problems"), (
                f"the old run is shown for the changed plan with no problem: {text[:1500]}"
            )
            continue
        assert ("ran: succeeded" not in text and "Approved: by" not in text) or _flagged(text), (
            text[-1500:]
        )


IDS = [
    f"{slug}-{what}"
    for slug in READ
    for what in ("status", "show", "show0", "mcp-log")
    if not (slug in ("mv2", "mve2") and what == "status")
] + ["kh-norun", "kp-norun", "mv-norun", "mve-norun", "rs-norun", "kh-audit", "kp-audit"]

BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_record_is_shown_only_for_what_it_recorded(lab: Lab, vid: str) -> None:
    _check(lab.got, vid)  # type: ignore[attr-defined]
