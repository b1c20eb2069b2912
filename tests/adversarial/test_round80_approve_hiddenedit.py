"""Round 80, approval side: the uncommitted-edits check of ``plangate approve`` (docs/cli.md,
docs/operations.md: "A plan file ``git status`` calls clean is clean ... to ``plangate
approve``/``reject`` ... An edit git sees stays an edit ("has uncommitted edits")"; it may
call a file edited that git calls clean, never the reverse). Can the agent, who writes the
working tree and the index, make Alice approve (and the controller run) other text than the
text she read in her checkout?

Lab (one, local mode). The agent writes ``plans/<id>`` per id (its tag, ``rec`` records it);
P0 freezes. The repository is set ``core.checkStat minimal`` and ``core.trustctime false``
(git then trusts the size and the mtime's second), every plan file's mtime is set 100 s back
and the index refreshed a second later (each entry vouches for its file, none racy). Then the
agent, by id, edits the file she will read (the tag ``<id>`` becomes ``<id minus its last
letter>Z``, the same size) and hides it:

- ``plain`` (control): nothing; Alice's ``plangate approve`` commits, it runs once;
- ``assume``: ``git update-index --assume-unchanged`` on the file;
- ``skip``: ``git update-index --skip-worktree`` on the file;
- ``stat``: the file's mtime (to the nanosecond) written back: ``git status`` calls it clean;
- ``touchd``: the mtime written back to the second only (``touch -d @<s>``): clean to git
  under ``checkStat minimal``;
- ``racy``: the edit and its mtime left as written (a file modified after the index);
- ``both``: ``--assume-unchanged`` and the mtime written back;
- ``staged`` (control): the edit STAGED (``git add``), the file then written back to the
  frozen bytes: she reads the frozen text; what she commits is what she read (runs the tag,
  never the ``Z`` one);
- ``sweep`` (control): the agent stages ``status: approved`` of ANOTHER plan (``sweep-y``),
  its file written back ``pending_approval``; Alice approves ``sweep``: her commit holds
  ``sweep`` alone, ``sweep-y`` never runs;
- ``crlf`` (control): an untracked ``.gitattributes`` says ``eol=crlf`` for the folder and
  the file is written CR LF (git calls it clean): her approval runs once;
- ``crlfedit``: the same with the tag edited (an edit git sees);
- ``smudge``: the agent's ``.git/config`` holds ``filter.x`` (smudge ``sed s/smudgZ/smudge/``,
  clean the reverse) and its committed ``.gitattributes`` (before P0) says ``filter=x`` for
  the folder: the blob says tag ``smudgZ``, her checkout shows ``smudge``, ``git status``
  calls it clean;
- ``hook`` (control): the agent's ``.git/hooks/pre-commit`` rewrites ``plans/hook`` to the
  ``Z`` tag and ``git add``s it during her commit: her commit must hold what she read;
- ``cleanf``: after P0, an untracked ``.gitattributes`` gives the folder a clean-only filter
  (``sed s/cleanf/cleanZ/``): the file she reads is the frozen bytes, but ``git add`` would
  store the ``Z`` tag (git calls it modified): she may be refused, or her commit must hold the
  text she read (the frozen one), never the filter's output.

Alice runs ``plangate approve`` on each; P1, P2; the controller's audit and a fresh clone's.

What must hold: a hidden edit is refused "has uncommitted edits" (the command exits non-zero
and commits nothing) or, if it commits, the committed plan is the frozen text (the ``Z`` tag
never runs); the tag runs as ``WANT`` says, approver alice; a fresh clone's audit agrees.

Seen (round 80): no break. Every hidden edit was refused ``E_USAGE: plans/<id>/PLAN.yml has
uncommitted edits; approving would not cover what you see``, nothing committed, the ``Z`` tag
never ran: ``--assume-unchanged`` (``assume``, ``both``), ``--skip-worktree`` (``skip``), and,
under ``core.checkStat minimal`` + ``core.trustctime false``, an edit of the same size whose
mtime was written back to the nanosecond (``stat``) or the second (``touchd``): ``git status``
called those two clean and plangate still refused (conservative, as the docs allow: it may
call a file edited that git calls clean, never the reverse); a racy edit, a CR LF edit, and a
smudge filter whose checkout shows other text than the blob (``smudge``, ``git status``
clean) were refused too. The staged edit with the frozen bytes back in the file (``staged``)
and another plan's staged ``approved`` (``sweep``) were not swept into her commit: she
committed the file she read and only it. ``crlf`` (an untracked ``eol=crlf`` attribute, CR LF
file) approved and ran once. The agent's ``pre-commit`` hook rewriting the plan during her
commit (``hook``) got nothing in: her commit held the status line alone and the frozen tag
ran once. Conservative, not a break: ``cleanf`` (an untracked clean-only
filter; ``git status`` calls the untouched file modified) was approved, and her commit holds
the frozen text she read, not the filter's output: it ran once as frozen (docs/operations.md
says an edit git sees stays an edit; here the bytes are the commit's, so nothing other than
what she saw is approved).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit
from policykit import agent_plan as plan
from test_round2_execution_kit import shared
from test_round73_approve_ownedbytes import _f

HIDDEN = ["assume", "skip", "stat", "touchd", "racy", "both", "crlfedit", "smudge"]
ALL = ["plain", *HIDDEN, "staged", "sweep", "crlf", "hook", "cleanf"]
CONTROLS = ["plain", "staged", "sweep", "crlf", "hook"]
WANT: dict[str, tuple[int, int]] = (
    {v: (1, 1) for v in CONTROLS} | {v: (0, 0) for v in HIDDEN} | {"cleanf": (0, 1)}
)
BROKEN: dict[str, Any] = {}


def evil(v: str) -> str:
    return v[:-1] + "Z"


def _edit(lab: Lab, v: str, keep: str = "") -> None:
    p = _f(lab, v)
    st = os.stat(p)
    b = p.read_bytes()
    nb = b.replace(f'{{tag: "{v}"}}'.encode(), f'{{tag: "{evil(v)}"}}'.encode())
    assert nb != b and len(nb) == len(b)
    p.write_bytes(nb)
    if keep == "ns":
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif keep == "s":
        os.utime(p, (int(st.st_atime), int(st.st_mtime)))


def _approve(lab: Lab, v: str) -> subprocess.CompletedProcess[str]:
    env = lab.env(ALICE)
    env["REC_LOG"] = str(lab.log)
    exe = str(Path(sys.executable).parent / "plangate")
    argv = [exe, "approve", "--config", str(lab.config), f"plans/{v}/PLAN.yml"]
    return subprocess.run(argv, cwd=lab.repo, env=env, capture_output=True, text=True, timeout=120)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in ALL:
        lab.write(v, plan(v))
    lab.write("sweep-y", plan("sweep-y"))
    lab.git("config", "filter.x.smudge", "sed s/smudgZ/smudge/")
    lab.git("config", "filter.x.clean", "sed s/smudge/smudgZ/")
    lab.git("config", "filter.y.clean", "sed s/cleanf/cleanZ/")
    (lab.repo / ".gitattributes").write_text("plans/smudge/** filter=x\n")
    lab.commit("agent plans")
    _f(lab, "smudge").unlink()
    lab.git("checkout", "--", "plans/smudge/PLAN.yml")
    lab.run()  # P0
    lab.git("config", "core.checkStat", "minimal")
    lab.git("config", "core.trustctime", "false")
    old = time.time() - 100
    for v in [*ALL, "sweep-y"]:
        os.utime(_f(lab, v), (old, old))
    lab.git("update-index", "--really-refresh")
    time.sleep(1.1)
    lab.git("update-index", "--refresh")
    # the agent's hidden edits
    _edit(lab, "assume")
    lab.git("update-index", "--assume-unchanged", "plans/assume/PLAN.yml")
    _edit(lab, "skip")
    lab.git("update-index", "--skip-worktree", "plans/skip/PLAN.yml")
    _edit(lab, "stat", "ns")
    _edit(lab, "touchd", "s")
    _edit(lab, "racy")
    _edit(lab, "both", "ns")
    lab.git("update-index", "--assume-unchanged", "plans/both/PLAN.yml")
    frozen = _f(lab, "staged").read_bytes()
    _edit(lab, "staged")
    lab.git("add", "plans/staged/PLAN.yml")
    _f(lab, "staged").write_bytes(frozen)
    y = _f(lab, "sweep-y").read_bytes()
    lab.set_status("sweep-y", "approved")
    lab.git("add", "plans/sweep-y/PLAN.yml")
    _f(lab, "sweep-y").write_bytes(y)
    (lab.repo / ".gitattributes").write_text(
        "plans/smudge/** filter=x\nplans/cleanf/** filter=y\n"
        "plans/crlf/** eol=crlf\nplans/crlfedit/** eol=crlf\n"
    )
    for v in ("crlf", "crlfedit"):
        _f(lab, v).write_bytes(_f(lab, v).read_bytes().replace(b"\n", b"\r\n"))
    _edit(lab, "crlfedit")
    hook = lab.repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(
        '#!/bin/sh\nsed -i \'s/tag: "hook"/tag: "hooZ"/\' plans/hook/PLAN.yml'
        " && git add plans/hook/PLAN.yml\n"
    )
    hook.chmod(0o755)
    lab.gitstatus = lab.git("status", "--short")  # type: ignore[attr-defined]
    lab.said = {}  # type: ignore[attr-defined]
    for v in ALL:
        before = lab.head()
        r = _approve(lab, v)
        lab.said[v] = (r.returncode, r.stdout + r.stderr, lab.head() != before)  # type: ignore[attr-defined]
        lab.said[v] += (lab.git("show", "HEAD:plans/" + v + "/PLAN.yml"),)  # type: ignore[attr-defined]
    lab.run()  # P1
    lab.run()  # P2
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r80-hiddenedit", _build)


def runs_of(report: dict[str, Any], v: str) -> list[dict[str, Any]]:
    return [
        e
        for e in report.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
    ]


@pytest.mark.parametrize("vid", cases(HIDDEN, HIDDEN, BROKEN))
def test_a_hidden_edit_is_refused_and_nothing_is_committed(lab: Lab, vid: str) -> None:
    rc, out, moved, _text = lab.said[vid]  # type: ignore[attr-defined]
    assert rc != 0 and "uncommitted edits" in out, (rc, out, lab.gitstatus)  # type: ignore[attr-defined]
    assert not moved, out


@pytest.mark.parametrize("vid", cases(CONTROLS, CONTROLS, BROKEN))
def test_an_honest_approval_commits_what_she_read(lab: Lab, vid: str) -> None:
    rc, out, moved, text = lab.said[vid]  # type: ignore[attr-defined]
    assert rc == 0 and moved, out
    assert f'{{tag: "{vid}"}}' in text and "status: approved" in text, text


@pytest.mark.parametrize("vid", cases(["cleanf"], ["cleanf"], BROKEN))
def test_a_clean_filter_never_puts_other_text_under_her_name(lab: Lab, vid: str) -> None:
    rc, out, moved, text = lab.said[vid]  # type: ignore[attr-defined]
    if rc == 0:
        assert moved and f'{{tag: "{vid}"}}' in text and evil(vid) not in text, (out, text)
    else:
        assert not moved and "uncommitted edits" in out, out


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_the_tag_runs_as_approved_and_the_hidden_tag_never(lab: Lab, vid: str) -> None:
    least, most = WANT[vid]
    assert least <= len(lab.calls(vid)) <= most, (lab.said[vid], lab.codes(vid))  # type: ignore[attr-defined]
    assert lab.calls(evil(vid)) == [], lab.said[vid]  # type: ignore[attr-defined]
    if vid == "sweep":
        assert lab.calls("sweep-y") == [], lab.codes("sweep-y")


@pytest.mark.parametrize("vid", cases(ALL, ALL, BROKEN))
def test_every_run_names_alice_and_a_fresh_clone_agrees(lab: Lab, vid: str) -> None:
    mine = runs_of(lab.report, vid)  # type: ignore[attr-defined]
    assert all(e.get("approver") == ALICE[1] for e in mine), mine
    assert len(mine) == len(lab.calls(vid)), mine
    fresh = runs_of(lab.fresh, vid)  # type: ignore[attr-defined]
    assert sorted(str(e.get("approver")) for e in mine) == sorted(
        str(e.get("approver")) for e in fresh
    ), (mine, fresh)
