"""Round 42, self-approval through round 41's new exemption: "a plan file's committer is a
writer of every plan folder above its own unless her commit only sets that nested plan's
status".

Each variant ``plans/<vid>`` is the agent's plan with the agent's own nested plan
``plans/<vid>/child/PLAN.yml`` (tag ``<vid>-child``, ``pending_approval``); the controller
freezes both. Then Alice (an allowed approver) makes ONE commit that approves the nested
child (``status: approved``, the exempt change) and also does one more thing inside that
file or folder; afterwards she approves the agent's parent:

- ``ctl-status``: only the status line (the exemption): the parent runs once (control).
- ``status-comment``: plus a comment line ``# alice: ...`` in the child's PLAN.yml;
- ``status-metadata``: plus a ``metadata:`` block (not hashed) in the child's PLAN.yml;
- ``status-crlf``: plus every line ending of the child's PLAN.yml turned into CRLF;
- ``status-bom``: plus a UTF-8 BOM in front of the child's PLAN.yml;
- ``status-note``: plus ``child/NOTES.md`` in the same commit;
- ``status-rename``: the approved child moved to ``child2/PLAN.yml`` in the same commit
  (since round 69 a byte-exact move writes nothing: it runs once, as the control);
- ``comment-only``: no status change, only the comment line in the child (no exemption).
- ``status-mode``: plus the child's PLAN.yml made executable (mode 100755);
- ``status-dotnote``: plus ``child/.review/NOTES.md`` (a dot folder) in the same commit;
- ``status-attr``: plus ``child/.gitattributes`` in the same commit;
- ``reject-comment``: ``status: rejected`` (a withdrawal) plus the comment line.
- ``pin-comment``: the agent's parent pins the agent's plan ``plans/pin-comment-lib``; Alice
  approves that library plus the comment line in one commit (round 23's pinned-folder writer
  rule), then approves the parent.
- ``mrg-comment``: ``status-comment`` made on a branch ``review`` that the agent merges.
- ``together-comment``: ONE commit of Alice approves the parent, approves its nested plan and
  adds the comment line to the nested PLAN.yml. Control ``together-ctl``: the same without
  the comment runs once.

- ``nest-mv``: Alice writes her own plan ``plans/nest-mv-src`` (draft); the agent ``git mv``s
  it into ``plans/nest-mv/child`` (moves make nothing: its producer stays Alice); Alice
  approves the agent's parent, whose folder now holds her plan.
- ``nest-deep``: the same, moved to ``plans/nest-deep/a/b/child``.
- ``nest-cp``: the same, but the agent COPIES her folder in (her source stays).
- ``pin-mv``: the agent moves her draft to ``plans/pin-mv-lib`` and his parent ``plans/pin-mv``
  pins it (round 23's pinned-plan writers); Alice approves the parent.

Asserted (the defence): a writer of anything but the status of a nested plan cannot approve
the enclosing plan: ``rec`` never runs for the parent and ``E_SELF_APPROVAL`` is named; the
controls run once; a fresh clone's audit agrees with the controller.

Seen: held: ``comment-only`` (the same comment WITHOUT a status change: ``E_SELF_APPROVAL``),
``status-note``, ``status-rename``, ``status-mode``, ``status-dotnote``, ``status-attr``,
``pin-mv``; controls ran once. BROKE (strict xfail):

- the exemption: ``status-comment``, ``status-metadata``, ``status-crlf``, ``status-bom``,
  ``reject-comment``, ``pin-comment``, ``mrg-comment``, ``together-comment``: a commit that
  sets a nested (or pinned) plan's status and ALSO changes bytes of that PLAN.yml the hash
  ignores is taken as "only sets that nested plan's status"; its committer is no writer of
  the enclosing plan (or of the pinning parent) and her approval of it ran it once
  (``completed``, approver alice@example.com), while ``comment-only`` shows the controller
  counts that very comment as a write when no status changes. The audit agrees.
- carried in: ``nest-mv``, ``nest-deep``, ``nest-cp``: Alice's own plan (written under
  ``plans/``), moved or copied by the agent below another plan's folder, makes her no writer
  of that enclosing plan: her approval of it ran it once; the same plan carried to a folder
  the parent PINS (``pin-mv``) held. The audit agrees.

**Fixed** (the same session): a change to a nested plan file counts as "only its status"
when the file is byte for byte the same but for one line, and that line is a plain
``status: <state>`` (no comment) (``Lifecycle._status_line_only``); its committer's other
bytes in a pinned plan's own file are kept under ``file:<folder>`` and count as writing
what a parent pins (``verdicts``; not as authorship of that plan itself, round 23: since
round 71 they are, see ``RUNS``); and a
nested plan file brings the writers of its bytes (the authors of its content and blob) to
every plan folder above it, as a moved plan's folder writers are carried to every folder
above its new place (``_carried_writers``, ``_carry``). History index version 13.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared


def _comment(t: str) -> str:
    return t + "# alice: reviewed, run it with care\n"


def _metadata(t: str) -> str:
    return t + 'metadata:\n  note: "alice was here"\n'


def _crlf(t: str) -> str:
    return t.replace("\n", "\r\n")


def _bom(t: str) -> str:
    return "\ufeff" + t


EDITS = {
    "status-comment": _comment,
    "status-metadata": _metadata,
    "status-crlf": _crlf,
    "status-bom": _bom,
}
OTHERS = [
    "status-note",
    "status-rename",
    "comment-only",
    "reject-comment",
    "status-mode",
    "status-dotnote",
    "status-attr",
]
CARRIED = ["nest-mv", "nest-cp", "nest-deep", "pin-mv"]
TOGETHER = ["together-comment", "together-ctl"]
VIDS = [*EDITS, *OTHERS, *CARRIED, "pin-comment", "mrg-comment", "together-comment"]
#: every variant held since the fix (round 42's 11 breaks: the docstring)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    # pin-comment: the agent's library (Alice may approve it) pinned by the agent's parent.
    lab.write("pin-comment-lib", plan_text("pin-comment-lib"))
    lab.commit("agent library", AGENT)
    digest = lab.cli("hash", "plans/pin-comment-lib", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("pin-comment", checkkit.pinning("pin-comment", "plans/pin-comment-lib", digest))
    lab.write("mrg-comment", plan_text("mrg-comment"))
    lab.write("mrg-comment/child", plan_text("mrg-comment-child"))
    lab.commit("agent adds a parent and a plan", AGENT)
    for vid in CARRIED:
        lab.write(f"{vid}-src", plan_text(f"{vid}-child", status="draft"))
    lab.commit("alice drafts plans", ALICE)
    digest = lab.cli("hash", "plans/pin-mv-src", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("pin-mv", checkkit.pinning("pin-mv", "plans/pin-mv-lib", digest))
    for vid in [*EDITS, *OTHERS, "ctl-status", *TOGETHER]:
        lab.write(vid, plan_text(vid))
        lab.write(f"{vid}/child", plan_text(f"{vid}-child"))
    for vid in ["nest-mv", "nest-cp", "nest-deep"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    (lab.repo / "plans/nest-deep/a/b").mkdir(parents=True)
    lab.git("mv", "plans/nest-mv-src", "plans/nest-mv/child")
    lab.git("mv", "plans/nest-deep-src", "plans/nest-deep/a/b/child")
    lab.git("mv", "plans/pin-mv-src", "plans/pin-mv-lib")
    shutil.copytree(lab.repo / "plans/nest-cp-src", lab.repo / "plans/nest-cp/child")
    lab.commit("agent nests alice's drafts", AGENT)
    lab.run()
    for vid in [*EDITS, *OTHERS, "ctl-status"]:
        child = f"{vid}/child"
        if vid != "comment-only":
            lab.set_status(child, "rejected" if vid == "reject-comment" else "approved")
        path = lab.repo / "plans" / child / "PLAN.yml"
        text = path.read_text(encoding="utf-8")
        if vid in EDITS:
            path.write_bytes(EDITS[vid](text).encode("utf-8"))
        elif vid in ("comment-only", "reject-comment"):
            path.write_text(_comment(text))
        elif vid == "status-mode":
            path.chmod(0o755)
        elif vid == "status-dotnote":
            (path.parent / ".review").mkdir()
            (path.parent / ".review" / "NOTES.md").write_text("alice: reviewed\n")
        elif vid == "status-attr":
            (path.parent / ".gitattributes").write_text("* -text\n")
        elif vid == "status-note":
            (path.parent / "NOTES.md").write_text("alice: reviewed\n")
        elif vid == "status-rename":
            lab.git("add", "-A")
            (lab.repo / "plans" / vid / "child2").mkdir()
            lab.git("mv", f"plans/{child}/PLAN.yml", f"plans/{vid}/child2/PLAN.yml")
        lab.commit(f"alice approves the child of {vid}", ALICE)
    lab.set_status("pin-comment-lib", "approved")
    path = lab.repo / "plans/pin-comment-lib/PLAN.yml"
    path.write_text(_comment(path.read_text()))
    lab.commit("alice approves the library", ALICE)
    # mrg-comment: the same approval + comment on a branch the agent merges.
    lab.git("checkout", "-q", "-b", "review")
    lab.set_status("mrg-comment/child", "approved")
    path = lab.repo / "plans/mrg-comment/child/PLAN.yml"
    path.write_text(_comment(path.read_text()))
    lab.commit("alice approves the child of mrg-comment", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge review", "review", who=AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in [*VIDS, "ctl-status"]:
        lab.approve(vid, ALICE)
    for vid in TOGETHER:  # one commit approves the parent and its nested plan
        lab.set_status(vid, "approved")
        lab.set_status(f"{vid}/child", "approved")
        if vid == "together-comment":
            path = lab.repo / "plans" / vid / "child" / "PLAN.yml"
            path.write_text(_comment(path.read_text()))
        lab.commit(f"alice approves {vid} and its child", ALICE)
    lab.run()
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r42-nested", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


# what really ran for the parent: a pinning parent runs its library's tag (the library
# ``pin-comment-lib`` also ran once on its own approval).
#: Since round 71 (r72comment, 2026-11-30) a comment beside one's approval writes the plan
#: itself too: Alice's comment in ``pin-comment-lib`` beside her approval of it makes her a
#: writer of the library, so that approval is refused as well (``E_SELF_APPROVAL``) and the
#: library does not run (round 42 counted its one run: the comment was no authorship then).
RUNS = {"pin-comment": ("pin-comment-lib", 0), "pin-mv": ("pin-mv-child", 0)}


def _ran(lab: Lab, vid: str) -> int:
    tag, own = RUNS.get(vid, (vid, 0))
    return len(lab.calls(tag)) - own


#: since round 69 (r69date) a plan file moved with its bytes kept (all but a plain status
#: line) writes nothing: her approval of the nested child moved to ``child2`` with it is the
#: exemption's "only its status", and her approval of the parent runs (round 42 held it as a
#: write).
MOVED = ["status-rename"]


@pytest.mark.parametrize("vid", ["ctl-status", "together-ctl", *MOVED])
def test_control_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p([v for v in VIDS if v not in MOVED]))
def test_a_writer_of_the_nested_plan_cannot_approve_the_parent(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == 0, lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", [*VIDS, "ctl-status", "together-ctl"])
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == _ran(lab, vid), report
    assert all(e.get("approval_valid") for e in runs), runs
