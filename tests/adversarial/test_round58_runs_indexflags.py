"""Round 58 (runs): the index of the shared checkout in states a person (or an agent) puts
it in with ordinary git, while the controller writes it in local mode (it now holds
``.git/index.lock`` from before its commit moves the branch until the index holds the
commit, updating a private copy of the index).

Lab ``ixe`` (edits hidden from ``git status``): three approved plans, then before the pass
the agent hides an edit of action 1's params (``evil: EVIL-<vid>``):

- ``skip``: ``git update-index --skip-worktree`` on PLAN.yml, then the edit in the tree.
- ``assume``: ``--assume-unchanged``, then the edit in the tree.
- ``staged``: the edit staged with ``git add``, the tree then set back to HEAD's bytes (the
  edit lives only in the index: ``git status`` shows ``MM``).

Asserted: no ``EVIL`` byte in any commit of the plan, the tool never got ``evil``; the
staged edit is never committed by a later ``git commit`` of a bystander either (the index
holds the controller's commit for that path); ``skip``/``assume`` wait (the tree differs
from the commit: "uncommitted edits").

Lab ``ixf`` (index formats and sparse checkouts), one repo per variant: ``split``
(``core.splitIndex``), ``v4`` (``index.version 4``), ``untracked`` (``core.untrackedCache``),
``sparse`` (non-cone, the plan's folder outside it), ``cone`` (cone mode, the plan outside).
Each set after Alice's approval. Asserted: the pass exits 0, the plan runs once and is
``completed``, the index then agrees with HEAD (``git diff --cached`` empty), and Bob's
next ``git commit`` of his own file keeps the controller's record (the plan stays
``completed`` at Bob's commit).

Broke: none. Held: all 8 (the controller reads the tree's bytes, not git's flags; its
index update replaces the entries it commits, sparse entries included).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

HIDDEN = ["skip", "assume", "staged"]
FORMATS = ["split", "v4", "untracked", "sparse", "cone"]


def _evil(lab: Lab, vid: str) -> str:
    return lab.read(vid).replace(f'tag: "{vid}"', f'tag: "{vid}"\n      evil: "EVIL-{vid}"')


def _build_hidden(root: Path) -> Lab:
    lab = Lab(root / "ixe")
    for vid in HIDDEN:
        lab.write(vid, plan_text(vid))
    lab.commit("plans")
    lab.run()
    for vid in HIDDEN:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    for vid, flag in (("skip", "--skip-worktree"), ("assume", "--assume-unchanged")):
        lab.git("update-index", flag, f"plans/{vid}/PLAN.yml")
        lab.write(vid, _evil(lab, vid))
    original = lab.read("staged")
    lab.write("staged", _evil(lab, "staged"))
    lab.git("add", "plans/staged/PLAN.yml")
    lab.write("staged", original)
    lab.before = lab.git("status", "--short")  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    (lab.repo / "bob.txt").write_text("bob\n")
    lab.git("add", "bob.txt")
    lab.git("commit", "-q", "-m", "bob's own file", who=BOB)
    lab.status_rows = lab.status()  # type: ignore[attr-defined]
    return lab


def _build_formats(root: Path) -> Lab:
    results: dict[str, dict[str, object]] = {}
    for vid in FORMATS:
        lab = Lab(root / vid)
        lab.write(vid, plan_text(vid))
        lab.write("keep", plan_text("keep"))
        lab.commit("plans")
        lab.run()
        lab.set_status(vid, "approved")
        lab.commit("approve", ALICE)
        if vid == "split":
            lab.git("config", "core.splitIndex", "true")
            lab.git("update-index", "--split-index")
        elif vid == "v4":
            lab.git("config", "index.version", "4")
            lab.git("update-index", "--index-version", "4")
        elif vid == "untracked":
            lab.git("config", "core.untrackedCache", "true")
            lab.git("update-index", "--untracked-cache")
            lab.git("status")
        elif vid == "sparse":
            lab.git("sparse-checkout", "set", "--no-cone", "/README", "/plans/keep/")
        elif vid == "cone":
            lab.git("sparse-checkout", "set", "plans/keep")
        result = lab.run(check=False)
        cached = lab.git("diff", "--cached", "--name-only")
        (lab.repo / "bob.txt").write_text("bob\n")
        lab.git("add", "--sparse", "bob.txt")
        lab.git("commit", "-q", "-m", "bob's own file", who=BOB)
        results[vid] = {
            "rc": result.returncode,
            "err": result.stderr[-600:],
            "ran": len(lab.calls(vid)),
            "cached": cached,
            "status_after_bob": lab.plan(vid)["plan"]["status"],
            "bob_files": lab.git("show", "--name-only", "--format=", "HEAD").split(),
        }
    holder = Lab.__new__(Lab)
    holder.root = root
    holder.results = results  # type: ignore[attr-defined]
    return holder


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-ixe", _build_hidden)


@pytest.fixture(scope="module")
def formats(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-ixf", _build_formats)


@pytest.mark.parametrize("vid", HIDDEN)
def test_a_hidden_edit_never_runs_nor_is_committed(hidden: Lab, vid: str) -> None:
    assert all("evil" not in json.dumps(c) for c in hidden.calls(vid)), hidden.calls(vid)
    row = hidden.status_rows[f"plans/{vid}"]  # type: ignore[attr-defined]
    if vid == "staged":
        # Since round 116 (staged-removal-discarded) a staged change of the plan makes it
        # wait, the change kept, where the controller's commit used to overwrite it. The
        # agent's staged bytes are then what a bystander's plain `git commit` commits, as
        # git commits whatever the shared index holds (the agent could stage them after any
        # controller commit too): that is the bystander's commit, a new version no approval
        # covers. The controller never commits them and the tool never gets them.
        mine = hidden.git("log", "-p", "--format=%B", "--author=plangate@localhost", "--",
                          f"plans/{vid}")  # fmt: skip
        assert "EVIL" not in mine
        assert hidden.calls(vid) == [] and row["status"] != "completed", row
        return
    assert "EVIL" not in hidden.history(vid)
    assert "EVIL" not in hidden.git("show", f"HEAD:plans/{vid}/PLAN.yml")
    assert hidden.calls(vid) == [] and "uncommitted edits" in json.dumps(row), row


@pytest.mark.parametrize("vid", FORMATS)
def test_index_formats_and_sparse_checkouts(formats: Lab, vid: str) -> None:
    r = formats.results[vid]  # type: ignore[attr-defined]
    assert r["rc"] == 0, r
    assert r["ran"] == 1, r
    assert r["cached"] == "", r
    assert r["status_after_bob"] == "completed", r
    assert r["bob_files"] == ["bob.txt"], r
