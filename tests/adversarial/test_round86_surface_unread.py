"""Round 86, agent surfaces: the controller's own EXECUTION_LOG.md, committed, whose blob is
gone from the object store (a damaged store, a ``git gc`` with a broken alternate, someone
deleting a loose object): do the readers of the log say git could not read it, or do they
say the plan has no log?

Lab (one, local mode, built once). The agent's ``plans/lg`` and ``plans/ok``, approved by
Alice, completed by the controller (its commits write each plan's EXECUTION_LOG.md). Then
``plans/lg``'s log blob is deleted from the shared ``.git/objects`` (every pack unpacked
first: one loose file per object); the checkout's files stay. Ids: ``lg:mcp-log`` (MCP
``log`` of ``plans/lg``: ``E_GIT`` naming the object, never ``"execution_log": null``),
``lg:mcp-status`` (MCP ``status``: the controller's ``completed`` row, or ``E_GIT``),
``lg:show`` (``show --json --config``: ``completed``, or ``E_GIT``); controls ``ok:mcp-log``
(the log as committed), ``ok:mcp-status``, ``ok:show``.

Seen (round 86): 1 id broke (``lg:mcp-log``), 1 class.
**An unreadable own log read as no log**: MCP ``log`` of ``plans/lg`` answered ``ok`` with
``"execution_log": null`` (and its ``execution`` block), as for a plan that never ran, where
``git show <commit>:plans/lg/EXECUTION_LOG.md`` says ``fatal: unable to read <blob>``.
Should (round 85's rule, docs/agents.md: "a read that failed is never an absence"): ``E_GIT``
naming the object, with a remedy (``git fsck``); a log the controller removed, or an odd tree
whose entry git's lookup misses while its object is in the store (round 58), reads as none.
Held: MCP ``status`` and ``show`` (they do not read the log from git).
Fixed (2026-12-01, r86gitparams): a version the controller's own commit wrote is read
through the blob that commit names (``controller.git.ownrecord.written``): git's "missing"
with that blob absent from the store is ``E_GIT`` naming it (remedy ``git fsck``); with the
blob present (round 58's odd trees) it is git's own reading; a removal reads as no log.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, Lab, cases, plan_text
from test_round2_execution_kit import shared

AGENT_CFG = "agent: {identity: {name: Agent, email: agent@example.com}}\n"
SLUGS = ("lg", "ok")
READERS = ("mcp-log", "mcp-status", "show")


def _unpack(lab: Lab) -> None:
    """Every pack of the shared store as loose objects (a blob can then be deleted alone)."""
    pack_dir = lab.repo / ".git" / "objects" / "pack"
    for pack in sorted(pack_dir.glob("*.pack")):
        moved = lab.root / pack.name
        pack.rename(moved)
        for other in pack_dir.glob(pack.stem + ".*"):
            other.unlink()
        with open(moved, "rb") as data:
            subprocess.run(
                ["git", "unpack-objects", "-q"], cwd=lab.repo, env=lab.env(), stdin=data,
                check=True,
            )  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=AGENT_CFG)
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in SLUGS:
        lab.approve(slug)
    lab.run()
    got: dict[str, Any] = {"status": {s: lab.plan(s)["plan"]["status"] for s in SLUGS}}
    got["logs"] = {s: lab.git("show", f"HEAD:plans/{s}/EXECUTION_LOG.md") for s in SLUGS}
    _unpack(lab)
    blob = lab.git("rev-parse", "HEAD:plans/lg/EXECUTION_LOG.md").strip()
    (lab.repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    got["blob"] = blob
    got["git"] = lab.git("show", "HEAD:plans/lg/EXECUTION_LOG.md", check=False)
    replies, err = mcpkit.session(
        lab, [(op, {"path": f"plans/{s}"}) for s in SLUGS for op in ("log", "status")]
    )
    got["read"] = {}
    for (slug, op), reply in zip(
        [(s, op) for s in SLUGS for op in ("mcp-log", "mcp-status")], replies, strict=True
    ):
        res = (reply or {}).get("result", {})
        text = "".join(c.get("text", "") for c in res.get("content", []))
        got["read"][f"{slug}:{op}"] = (1 if res.get("isError") or not reply else 0, text)
    got["err"] = err[-3000:]
    for slug in SLUGS:
        r = lab.cli(
            "show",
            "--json",
            "--config",
            str(lab.config),
            str(lab.repo / "plans" / slug / "PLAN.yml"),
        )
        got["read"][f"{slug}:show"] = (r.returncode, r.stdout + "\n--\n" + r.stderr[-2000:])
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r86-surface-unread", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 86 surface: {cls}: {what}"
    )


IDS = [f"{s}:{r}" for s in SLUGS for r in READERS]
BROKEN: dict[str, Any] = {}


def test_round86_unread_lab(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    assert got["status"] == {"lg": "completed", "ok": "completed"}, got["status"]
    assert all(got["logs"].values()), got["logs"]  # both logs committed
    assert got["git"] == "", got["git"]  # git itself cannot read lg's log now


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round86_unread(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, reader = vid.split(":")
    rc, text = got["read"][vid]
    assert "Traceback" not in text and "Traceback" not in got["err"], (text, got["err"])
    if rc:  # a refusal: git's failure, naming the object, never a verdict on the plan
        assert slug == "lg", text
        assert "E_GIT" in text, text
        assert got["blob"] in text or reader != "mcp-log", text
        return
    if reader == "mcp-log":
        body = json.loads(text)
        assert body["status"] == "completed", text[:1500]
        # the log as the controller committed it; never "no log" for one git cannot read
        assert slug == "ok" and body["execution_log"] == got["logs"]["ok"], text[:1500]
    elif reader == "mcp-status":
        body = json.loads(text)
        row = body["plans"][0] if "plans" in body else body
        assert row["status"] == "completed", text[:1500]
    else:
        shown = json.loads(text.split("\n--\n")[0])
        assert shown["plan"]["status"] == "completed", text[:1500]


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/r86gitparams", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r86ur-", dir="/tmp/r86gitparams"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
