# ruff: noqa: E501
"""Round 8, what runs and what is recorded: git settings that are not programs.

docs/threat-model.md ("The shared `.git`") pins every git key that names a program or a
trust anchor and says the repository's own config "chooses nothing for the controller"; a
committed `.gitattributes` runs no filter. Other git settings change the *bytes* git hands
the controller or writes for it without running anything: the commit-message encoding
(a commit object's ``encoding`` header, and ``i18n.logOutputEncoding``), ``core.commentChar``
with ``commit.cleanup=strip`` (would strip the controller's ``Plan...`` trailer lines), a
committed ``.gitignore`` of the controller's files, the built-in ``ident`` and
``working-tree-encoding`` attributes, ``log.showSignature``, ``diff.relative``/``noprefix``,
``core.ignoreCase``, ``i18n.logOutputEncoding=ISO-8859-1`` with a non-ASCII agent commit.
(Also tried, held, dropped for suite time: agent commits whose ``encoding`` header is
UTF-7 with ``+AAA-``/``+AAE-`` escapes for NUL/SOH — the local git does not convert them.)

Each lab: the agent submits two plans, the controller freezes them, Alice approves both, the
attack lands (a commit of the agent's, or the agent's write to ``.git/config`` in the shared
checkout, local mode), then one ``run --once`` pass. Defence asserted: each plan ran exactly
once with its approved params, ``status`` shows both completed, the passes exit 0.

Breaks (round 8):
- ``commit-encoding-config`` / ``log-output-encoding``: the agent writes
  ``i18n.commitEncoding=UTF-16`` (git's default for the log output encoding) or
  ``i18n.logOutputEncoding=UTF-16`` into the shared ``.git/config`` after Alice approved two
  plans: every ``run --once`` exits 2 with ``internal error: ValueError: not enough values to
  unpack (expected 11, got 1)`` (or ``embedded null byte`` when set before the freeze), and
  ``status --json`` dies the same way (E_INTERNAL): no plan in the repository runs, nothing
  names the cause. The pins of docs/threat-model.md cover programs, not the bytes git prints.
  Held: a single agent commit whose object says ``encoding UTF-16`` (no config left behind).

Changed (2026-12-01, r78stat; round 78's rule: bytes equal to the commit are clean only when
git calls them clean): ``working-tree-encoding`` (the UTF-8 plans left on disk when the agent
commits ``PLAN.yml working-tree-encoding=UTF-16LE``) ran before because the raw bytes equal the
blob. ``git status`` calls the files modified in this lab whenever Alice's approval commit left
their index entries racily clean (the index written in the files' second: the usual timing,
not under load): the agent's commit of the attribute, writing the index, reads them under the
new attribute (UTF-8 read as UTF-16LE is other text) and marks them changed (git's racy-git
smudge). Plangate now agrees with git: such a plan waits "has uncommitted edits" (a discard
checks it out in UTF-16LE and it runs) and nothing ran; the lab records ``git status`` right
after the attack and the test asserts, per plan, that plangate saw it as git did.
``working-tree-encoding-settled``: the same attack after Alice's ``git status`` a second
later rewrote the index (entries no longer racy): git calls the untouched files clean by their
stat data, and both run once, as before.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab, plan_text


def _cfg(*kv: tuple[str, str]) -> Callable[[Lab], None]:
    def step(lab: Lab) -> None:
        for key, value in kv:
            lab.git("config", key, value)

    return step


def _files(**files: str) -> Callable[[Lab], None]:
    def step(lab: Lab) -> None:
        for name, text in files.items():
            (lab.repo / name).write_text(text)
        lab.git("add", *files)  # only these files: the plans' blobs stay as approved
        lab.git("commit", "-q", "-m", "agent: housekeeping", who=AGENT)

    return step


def _encoded_commit(lab: Lab) -> None:
    lab.write("p3", plan_text("p3"))
    lab.git("add", "plans/p3")
    lab.git("-c", "i18n.commitEncoding=UTF-16", "commit", "-q", "-m", "agent: notes", who=AGENT)


def _latin1(lab: Lab) -> None:
    lab.git("config", "i18n.logOutputEncoding", "ISO-8859-1")
    (lab.repo / "NOTES").write_text("notes\n")
    lab.git("add", "NOTES")
    lab.git(
        "commit",
        "-q",
        "-m",
        "agent: notes \u00e9\u00e8 caf\u00e9",
        who=("Agent Jos\u00e9", AGENT[1]),
    )


def _settled(step: Callable[[Lab], None]) -> Callable[[Lab], None]:
    """``step`` after Alice's ``git status`` a second later (it rewrites the racy index)."""

    def settled(lab: Lab) -> None:
        time.sleep(1.1)
        lab.git("status", "--porcelain")
        step(lab)

    return settled


_UTF16LE = _files(
    **{
        ".gitattributes": "EXECUTION_LOG.md working-tree-encoding=UTF-16LE\n*.json working-tree-encoding=UTF-16LE\nPLAN.yml working-tree-encoding=UTF-16LE\n"
    }
)
#: git calls the plan files modified after the attack (see the docstring): they wait
WAITS_AS_GIT_SEES = {"working-tree-encoding"}


# Each attack lands after the plans were frozen and approved (before the run pass), except
# the ones that must be in place when the plan text is checked in (the ``ident`` param).
ATTACKS: dict[str, tuple[Callable[[Lab], None], str]] = {
    "encoding-header": (_encoded_commit, ""),
    "commit-encoding-config": (_cfg(("i18n.commitEncoding", "UTF-16")), ""),
    "latin1-output-non-ascii": (_latin1, ""),
    "log-output-encoding": (_cfg(("i18n.logOutputEncoding", "UTF-16")), ""),
    "comment-char-cleanup": (_cfg(("core.commentChar", "P"), ("commit.cleanup", "strip")), ""),
    "gitignore-controller-files": (
        _files(**{".gitignore": "EXECUTION_LOG.md\n*.md\n.plangate/\nPLAN.yml\n"}),
        "",
    ),
    "ident-attribute": (
        _files(**{".gitattributes": "PLAN.yml ident\nEXECUTION_LOG.md ident\n"}),
        'v: "$Id$"\n',
    ),
    "working-tree-encoding": (_UTF16LE, ""),
    "working-tree-encoding-settled": (_settled(_UTF16LE), ""),
    "show-signature-relative": (
        _cfg(
            ("log.showSignature", "true"),
            ("diff.relative", "true"),
            ("diff.noprefix", "true"),
            ("core.quotePath", "false"),
            ("core.ignoreCase", "true"),
        ),
        "",
    ),
}

#: Fixed: git's output and commit encodings are pinned to UTF-8 for every git child
#: (controller/git/guard.py, FIXED).
BROKEN: dict[str, str] = {}


def _build(name: str, root: Path, attacks: dict[str, Any] | None = None) -> dict[str, Any]:
    setup, params = (attacks or ATTACKS)[name]
    lab = Lab(root)
    lab.write("p1", plan_text("p1", params=params))
    lab.write("p2", plan_text("p2"))
    lab.commit("submit p1 p2", AGENT)
    lab.run()
    lab.approve("p1")
    lab.approve("p2")
    setup(lab)
    # git's verdict (none where the attack leaves no work tree: round 8's index bits)
    seen = lab.git("--no-optional-locks", "status", "--porcelain", "plans", check=False)
    passes = [lab.run(check=False)]
    st = lab.cli("status", "--json", "--config", str(lab.config))
    try:
        rows = {r["plan"]: r["status"] for r in json.loads(st.stdout)}
        waiting = {r["plan"]: r.get("waiting") for r in json.loads(st.stdout)}
    except (ValueError, TypeError):
        rows = {"error": st.stdout[-300:] + st.stderr[-300:]}
        waiting = {}
    return {
        "exits": [p.returncode for p in passes],
        "errors": [p.stderr[-300:] for p in passes if p.returncode],
        "calls": {t: [json.loads(c["stdin"]) for c in lab.calls(t)] for t in ("p1", "p2")},
        "status": rows,
        "params": params,
        "git_status": seen,
        "waiting": waiting,
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Built once for both xdist workers (a file lock; the second reads the JSON)."""
    base = tmp_path_factory.getbasetemp()
    if base.name.startswith("popen-gw"):
        base = base.parent
    done = base / "r8-gitenc.json"
    with open(base / "r8-gitenc.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return dict(json.loads(done.read_text()))
        folder = base / "r8-gitenc"
        folder.mkdir()
        with ThreadPoolExecutor(4) as pool:
            futures = {n: pool.submit(_build, n, folder / n) for n in ATTACKS}
            out = {n: f.result() for n, f in futures.items()}
        done.write_text(json.dumps(out))
        return out


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(
            n,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[n])]
            if n in BROKEN
            else [],
        )
        for n in ATTACKS
    ],
)
def test_git_bytes_settings_change_nothing_that_runs(
    results: dict[str, dict[str, Any]], name: str
) -> None:
    got = results[name]
    assert got["exits"] == [0], got["errors"]
    if name in WAITS_AS_GIT_SEES:  # each plan as git saw its file after the attack
        _as_git_sees(got)
        return
    if name == "working-tree-encoding-settled":  # clean to git by the stat data: it runs
        assert got["git_status"] == "", got["git_status"]
    expected_p1 = {"tag": "p1"}
    if got["params"]:
        expected_p1["v"] = "$Id$"  # the approved bytes, never git's expansion
    assert got["calls"] == {"p1": [expected_p1], "p2": [{"tag": "p2"}]}, got["calls"]
    shown = {k: v for k, v in got["status"].items() if k != "plans/p3"}  # p3: the agent's new draft
    assert shown == {"plans/p1": "completed", "plans/p2": "completed"}, got["status"]


def _as_git_sees(got: dict[str, Any]) -> None:
    """A plan file ``git status`` called modified after the attack waited "has uncommitted
    edits" and never ran; one it called clean ran once (whichever the lab's timing gave)."""
    for slug in ("p1", "p2"):
        plan = f"plans/{slug}"
        if f" M {plan}/PLAN.yml" in got["git_status"]:
            assert got["calls"][slug] == [], got
            assert got["status"][plan] == "approved", got["status"]
            assert "has uncommitted edits" in (got["waiting"][plan] or ""), got["waiting"]
        else:
            assert got["calls"][slug] == [{"tag": slug}], got
            assert got["status"][plan] == "completed", got["status"]
