"""Round 80 (runs): remote mode, the served branch rewritten between passes.

Lab (one, ``writerkit.served``: a real ``git daemon`` on 127.0.0.1). The agent commits one
plan per variant and pushes; a pass freezes them; Alice pulls. Then phases, each followed by
passes (every exit code kept) and, where the attacker rewrote ``main``, the owner's restore
(a force push of the tip read before):

1. Alice approves ``ctl1`` and ``rw``; a pass runs both.
2. REWIND: the agent force-pushes ``main`` back to Alice's approval commit (the controller's
   ``start``/``complete`` commits dropped; her approval of ``rw`` still there); two passes; the
   owner restores; Alice approves ``ctl2``; a pass.
3. UNRELATED: the agent force-pushes an orphan commit (its own, the whole tree, ``un`` and
   ``rw`` set ``approved``, ``ctl1``'s record kept); two passes; restore; Alice approves
   ``ctl3``; a pass.
4. SHALLOW LATER: Alice commits her own plan ``sown`` and the agent commits ``shc``; Bob
   commits notes; the served repository is swapped for a ``--depth 1`` copy (Bob's commit the
   boundary, which the controller's clone never saw); Alice approves ``sown`` and ``shc`` on it;
   two passes; the served repository is made whole (the full copy plus her approval); two
   passes.
5. GRAFT: Alice commits her own plan ``gown``; a pass freezes it; the agent pushes
   ``refs/replace/<her commit>`` (the same tree and parents, author Bob) and a
   ``refs/replace`` graft of the agent's plan commit onto her commit's parent (her commit
   gone from its history, so ``gown`` would look the agent's); Alice approves ``gown`` and ``gctl``;
   two passes.
6. REFS: side commits approving one plan each (in Alice's name) are pushed as
   ``refs/plangate/push/main`` (``pp``), the branch ``refs/plangate/push/main``
   (``refs/heads/refs/plangate/push/main``, ``hpp``), a branch ``evil`` that the served
   repository's ``HEAD`` is made to point at (``sym``), and a tag ``ctl4`` that shares the
   control's name (``tagc``); Alice approves ``ctl4`` on main; two passes.

Variants. CONTROLS (``rec`` once, the audit lists one valid run): ``ctl1``..``ctl4``, ``rw`` (its
one run, before the rewind), ``gctl``. ATTACKS (never run, or never again): ``rw`` again after the
rewind and the orphan; ``un`` (the agent's own orphan approval); ``shc`` (the agent's plan Alice
approved while the remote was shallow, so before any freeze: ``E_PLAN_NOT_FROZEN`` once whole, never
run); ``sown`` (Alice's own plan, during and after the shallow phase: ``E_GIT`` then
``E_SELF_APPROVAL``); ``gown`` (Alice's own plan behind a replace ref naming Bob, and a graft that
drops her commit from the agent's); ``pp``, ``hpp``, ``sym``, ``tagc`` (approvals off the branch).
Per variant: ``ran`` (calls), ``audit`` (fresh-clone valid runs); ``nothing_ran_while_shallow``
(``sown``, ``shc``); per rewrite ``status_while_rewritten`` (right after the rewrite's passes
``status`` holds ``rw`` ``E_HISTORY_REWRITTEN``, docs/approvals.md "A rewritten branch", or the
remote's ``main`` holds the controller's record again: never a ``completed`` row the remote does not
hold); per phase ``passes`` (no traceback; the shallow passes exit 2 ``E_GIT``, every other pass 0)
and ``mcp_while_orphaned`` (the agent's MCP ``status`` row and ``log`` of ``rw``, on its checkout of
the orphan, carry ``E_OWNED_BLOCK_CHANGED`` or the hold); ``kept`` (after the phase, and the owner's
restore, the remote's ``main`` holds every controller commit made before it: no record lost).

Seen (round 80): no break. Held: after the REWIND the controller's passes pushed its own
``start``/``complete`` commits back onto the rewound ``main`` (the remote's history held its record
again before the owner's restore; ``rw`` never ran twice, ``ctl2`` ran after); the ORPHAN history
was held (``status``: ``E_HISTORY_REWRITTEN``), its ``un`` refused ``E_APPROVER_NOT_ALLOWED``,
nothing re-ran, and the agent's MCP ``log`` of ``rw`` on its checkout of the orphan said
``E_OWNED_BLOCK_CHANGED`` (MCP in remote mode is refused ``E_CONFIG_INVALID`` "local-mode repository
for now", as documented); the remote made shallow after a good start was refused ``E_GIT`` on every
pass (nothing frozen or run) and went on once whole (``sown`` ``E_SELF_APPROVAL``, ``shc``
``E_PLAN_NOT_FROZEN``); ``refs/replace`` objects on the remote (an author swapped to Bob, a graft
dropping Alice's commit) were never read (``gown`` never ran, ``gctl`` ran once); approvals pushed
as ``refs/plangate/push/main``, a branch of that name, a branch the remote's ``HEAD`` points at and
a tag named like a plan never ran; no controller commit was lost; the fresh-clone audit agreed."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, served_audit, valid_runs
from mcpkit import session
from test_round2_execution_kit import shared
from writerkit import served

CONTROLS = ["ctl1", "ctl2", "ctl3", "ctl4", "rw", "gctl"]
ATTACKS = ["un", "sown", "shc", "gown", "pp", "hpp", "sym", "tagc"]
VIDS = CONTROLS + ATTACKS
PHASES = ["rewind", "orphan", "shallow", "graft", "refs"]


def _bare(lab: Lab) -> Path:
    return lab.root / "served" / "origin.git"


def _bgit(lab: Lab, *args: str) -> str:
    res = subprocess.run(
        ["git", "-C", str(_bare(lab)), *args],
        env=lab.env(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    return res.stdout.strip()


def _ctl_commits(lab: Lab) -> set[str]:
    out = _bgit(lab, "log", "--format=%H %an", "refs/heads/main")
    return {line.split()[0] for line in out.splitlines() if line.split()[1:] == ["plangate"]}


def _status(lab: Lab) -> str:
    res = lab.cli("status", "--json", "--config", str(lab.config))
    return res.stdout + res.stderr


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in [*CONTROLS, "un", "pp", "hpp", "sym", "tagc"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent plans", AGENT)
    mcp = (
        root / "mcp.yml"
    )  # the agent's MCP server: local mode on its clone (docs: MCP is local-only)
    mcp.write_text(lab.config.read_text().replace(str(lab.state), str(root / "state-mcp")))
    lab.passes, lab.kept = [], {}  # type: ignore[attr-defined]
    with served(lab) as url:

        def run(phase: str) -> None:
            res = lab.run(check=False)
            lab.passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-700:]))  # type: ignore[attr-defined]

        def push(force: bool = False, ref: str = "HEAD:refs/heads/main") -> None:
            lab.git("push", "-q", *(["--force"] if force else []), "origin", ref)

        def pull() -> None:
            lab.git("fetch", "-q", "origin", "refs/heads/main")
            lab.git("reset", "-q", "--hard", "FETCH_HEAD")

        def keep(phase: str, before: set[str]) -> None:
            lab.kept[phase] = sorted(before - _ctl_commits(lab))  # type: ignore[attr-defined]

        push()
        run("freeze")
        pull()
        # 1
        lab.set_status("ctl1", "approved")
        lab.set_status("rw", "approved")
        a1 = lab.commit("approve ctl1 rw", ALICE)
        push()
        run("p1")
        pull()
        t1, seen = lab.head(), _ctl_commits(lab)
        # 2 rewind
        lab.git("push", "-q", "--force", "origin", f"{a1}:refs/heads/main")
        run("rewind")
        run("rewind")
        lab.held_status = {"rewind": _status(lab)}  # type: ignore[attr-defined]
        lab.remote_log = {"rewind": _bgit(lab, "log", "--format=%s", "refs/heads/main")}  # type: ignore[attr-defined]
        lab.git("push", "-q", "--force", "origin", f"{t1}:refs/heads/main")
        run("rewind-restored")
        pull()
        lab.set_status("ctl2", "approved")
        lab.commit("approve ctl2", ALICE)
        push()
        run("rewind-ctl")
        pull()
        keep("rewind", seen)
        t2, seen = lab.head(), _ctl_commits(lab)
        # 3 orphan
        lab.set_status("un", "approved")
        lab.git("checkout", "-q", "--orphan", "fresh")
        lab.commit("agent: fresh start", AGENT)
        push(force=True)
        run("orphan")
        run("orphan")
        lab.held_status["orphan"] = _status(lab)  # type: ignore[attr-defined]
        lab.remote_log["orphan"] = _bgit(lab, "log", "--format=%s", "refs/heads/main")  # type: ignore[attr-defined]
        replies, _ = session(lab, [("status", {}), ("log", {"path": "plans/rw"})], config=mcp)
        lab.mcp_orphan = [json.dumps(r) for r in replies]  # type: ignore[attr-defined]
        lab.git("checkout", "-q", "-f", "main")
        lab.git("branch", "-q", "-D", "fresh")
        lab.git("push", "-q", "--force", "origin", f"{t2}:refs/heads/main")
        lab.git("reset", "-q", "--hard", t2)
        run("orphan-restored")
        pull()
        lab.set_status("ctl3", "approved")
        lab.commit("approve ctl3", ALICE)
        push()
        run("orphan-ctl")
        pull()
        keep("orphan", seen)
        seen = _ctl_commits(lab)
        # 4 shallow later
        lab.write("sown", plan_text("sown"))
        lab.commit("alice plan", ALICE)
        lab.write("shc", plan_text("shc"))
        lab.commit("agent plan", AGENT)
        (lab.repo / "notes.txt").write_text("bob\n")
        lab.commit("notes", BOB)
        push()
        whole = lab.root / "served" / "whole.git"
        shutil.move(str(_bare(lab)), str(whole))
        subprocess.run(
            ["git", "clone", "-q", "--bare", "--depth", "1", f"file://{whole}", str(_bare(lab))],
            env=lab.env(), check=True,
        )  # fmt: skip
        lab.set_status("sown", "approved")
        lab.set_status("shc", "approved")
        lab.commit("approve sown shc", ALICE)
        push()
        run("shallow")
        run("shallow")
        lab.shallow_ran = {v: len(lab.calls(v)) for v in ("sown", "shc")}  # type: ignore[attr-defined]
        shutil.rmtree(_bare(lab))
        shutil.move(str(whole), str(_bare(lab)))
        push()
        run("shallow-whole")
        run("shallow-whole")
        pull()
        keep("shallow", seen)
        seen = _ctl_commits(lab)
        # 5 graft
        lab.write("gown", plan_text("gown"))
        g1 = lab.commit("alice plan gown", ALICE)
        lab.write("gctl", plan_text("gctl"))
        g2 = lab.commit("agent plan gctl", AGENT)
        push()
        run("graft-freeze")
        pull()
        env = {**lab.env(), "GIT_AUTHOR_NAME": BOB[0], "GIT_AUTHOR_EMAIL": BOB[1]}
        fake = subprocess.run(
            ["git", "commit-tree", f"{g1}^{{tree}}", "-p", f"{g1}^", "-m", "bob plan gown"],
            cwd=lab.repo, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        lab.git("push", "-q", "origin", f"{fake}:refs/replace/{g1}")
        lab.git("replace", "--graft", g2, f"{g1}^")
        lab.git("push", "-q", "origin", f"refs/replace/{g2}:refs/replace/{g2}")
        lab.git("replace", "-d", g2)
        lab.set_status("gown", "approved")
        lab.set_status("gctl", "approved")
        lab.commit("approve gown gctl", ALICE)
        push()
        run("graft")
        run("graft")
        pull()
        keep("graft", seen)
        seen = _ctl_commits(lab)
        # 6 refs
        tip = lab.head()
        lab.pushed = {}  # type: ignore[attr-defined]
        for vid, ref in (
            ("pp", "refs/plangate/push/main"),
            ("hpp", "refs/heads/refs/plangate/push/main"),
            ("sym", "refs/heads/evil"),
            ("tagc", "refs/tags/ctl4"),
        ):
            lab.git("checkout", "-q", "--detach", tip)
            lab.set_status(vid, "approved")
            side = lab.commit(f"approve {vid}", ALICE)
            res = subprocess.run(
                ["git", "push", "-q", "origin", f"{side}:{ref}"],
                cwd=lab.repo, env=lab.env(), capture_output=True, text=True, check=False,
            )  # fmt: skip
            lab.pushed[vid] = (ref, res.returncode, res.stderr[-300:])  # type: ignore[attr-defined]
        _bgit(lab, "symbolic-ref", "HEAD", "refs/heads/evil")
        lab.git("checkout", "-q", "-f", "main")
        lab.git("reset", "-q", "--hard", tip)
        lab.set_status("ctl4", "approved")
        lab.commit("approve ctl4", ALICE)
        push()
        run("refs")
        run("refs")
        _bgit(lab, "symbolic-ref", "HEAD", "refs/heads/main")
        pull()
        keep("refs", seen)
        served_audit(lab, url, root / "fresh")
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-rewrite", _build)


BROKEN: dict[str, Any] = {}
PASS_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_ran(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    assert len(calls) == (1 if vid in CONTROLS else 0), (calls, lab.passes[-3:])  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_audit(lab: Lab, vid: str) -> None:
    assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == (1 if vid in CONTROLS else 0), (runs, lab.audit_err)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["sown", "shc"], ["sown", "shc"], {}))
def test_nothing_ran_while_shallow(lab: Lab, vid: str) -> None:
    assert lab.shallow_ran[vid] == 0, lab.shallow_ran  # type: ignore[attr-defined]


@pytest.mark.parametrize("phase", cases(PHASES, PHASES, PASS_BROKEN))
def test_passes(lab: Lab, phase: str) -> None:
    mine = [p for p in lab.passes if p[0].startswith(phase)]  # type: ignore[attr-defined]
    assert mine and not any(p[2] for p in mine), mine
    for name, code, _, err in mine:
        if name == "shallow":
            assert code != 0 and "E_GIT" in err, (name, code, err)
        else:
            assert code == 0, (name, code, err)


@pytest.mark.parametrize("phase", cases(["rewind", "orphan"], ["rewind", "orphan"], {}))
def test_status_while_rewritten(lab: Lab, phase: str) -> None:
    """Right after the rewrite's passes: either the controller put its record back on the
    remote's ``main`` (its commits pushed again) or ``status`` holds the plan
    ``E_HISTORY_REWRITTEN``; never a ``completed`` row the remote's history does not hold."""
    out, log = lab.held_status[phase], lab.remote_log[phase]  # type: ignore[attr-defined]
    if "plangate: complete plans/rw" not in log:
        assert "E_HISTORY_REWRITTEN" in out, (log, out[-3000:])
    else:
        assert "plangate: start plans/rw" in log, log


@pytest.mark.parametrize("which", cases(["status", "log"], [0, 1], {}))
def test_mcp_while_orphaned(lab: Lab, which: int) -> None:
    """While ``main`` is the agent's orphan, the agent's MCP server on its checkout of it
    (local mode, its own state: MCP is local-only) answers ``rw``'s record with a problem
    (``E_OWNED_BLOCK_CHANGED``: the orphan's ``execution:`` block and log are no record of the
    controller's in this history, or the hold ``E_HISTORY_REWRITTEN``), never a bare run."""
    got = json.loads(lab.mcp_orphan[which])["result"]["structuredContent"]  # type: ignore[attr-defined]
    if which == 0:
        got = [r for r in got["plans"] if r["plan"] == "plans/rw"]
    text = json.dumps(got)
    assert "E_OWNED_BLOCK_CHANGED" in text or "E_HISTORY_REWRITTEN" in text, text[-2000:]


@pytest.mark.parametrize("phase", cases(PHASES, PHASES, {}))
def test_kept(lab: Lab, phase: str) -> None:
    assert lab.kept[phase] == [], lab.kept[phase]  # type: ignore[attr-defined]
