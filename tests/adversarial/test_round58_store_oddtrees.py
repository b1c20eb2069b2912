"""Round 58, object store: trees git's ``fsck`` calls broken (duplicate names, entries out of
order), committed by the agent with plumbing (local mode).

``index-pack`` names objects by their bytes but does not ``fsck`` them unless asked, so such
a tree reaches the controller's store. git reads it two ways: a lookup by path
(``git show C:path``, ``cat-file``, a reviewer's ``plangate show``) stops at the FIRST
matching entry, or misses an entry past one out of order, while ``read-tree``/checkout (the
index, the working tree, an approver's next commit) keeps the LAST one. So the version an
approver is shown and the version her commit carries can differ.

Config: plain approvals (Alice). The agent adds every plan, the controller freezes it; then:

- ``dup-after``: the agent commits a tree whose ``plans/dup-after`` holds ``PLAN.yml`` twice:
  first the frozen version 1, then version 2 (another param, the frozen block kept); the
  checkout (and the working tree Alice approves in) holds version 2. Alice approves.
- ``dup-swap``: the same, version 2 first and version 1 last (lookups show version 2).
- ``unsorted``: the ``plans`` tree written with ``unsorted`` after ``zz`` (out of order) and
  ``unsorted``'s version 2 in it: a lookup of ``plans/unsorted`` misses it. Alice approves.
- ``dup-before``: the duplicate tree (version 1 first, version 2 last) before the controller
  froze anything: whatever the controller freezes, what runs must be what its own freeze
  commit shows at ``plans/dup-before/PLAN.yml`` and what Alice approved.
- ``honest``: control.

Asserted: each plan ran at most once, and what reached ``rec`` is the version Alice's
approval commit shows at the path (``git show``, a lookup) AND the version the controller's
freeze commit right before her vote shows (she was shown what runs); ``honest`` runs once.

Seen: every variant held. The controller freezes what the checkout holds (the last entry) and
its freeze commit is written whole (one entry per name, in order: ``git fsck`` flags only the
agent's tree), so an approver reviewing the controller's freeze sees version 2 before her
vote; version 2 ran on her approval of version 2. (A first draft of this module asserted
"version 2 never runs", which was wrong: the controller had re-frozen it visibly.)
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml, plan_text
from test_round2_execution_kit import shared

AFTER = ["dup-after", "dup-swap", "unsorted"]
VIDS = [*AFTER, "dup-before"]
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _w(lab: Lab, kind: str, body: bytes) -> str:
    return (
        subprocess.run(
            ["git", "hash-object", "-t", kind, "-w", "--literally", "--stdin"],
            input=body,
            cwd=lab.repo,
            env=lab.env(),
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


def _entries(lab: Lab, tree: str) -> list[tuple[str, str, str]]:
    rows = []
    for line in lab.git("ls-tree", tree).splitlines():
        meta, name = line.split("\t")
        mode, _, oid = meta.split()
        rows.append((mode.lstrip("0"), name, oid))
    return rows


def _tree(lab: Lab, rows: list[tuple[str, str, str]]) -> str:
    return _w(
        lab, "tree", b"".join(f"{m} {n}".encode() + b"\0" + bytes.fromhex(o) for m, n, o in rows)
    )


def _forged_commit(lab: Lab, plans_rows: list[tuple[str, str, str]], message: str) -> str:
    """Commit (as the agent) the index's root tree with its ``plans`` tree replaced by
    ``plans_rows`` written as given; the index and working tree stay as they are."""
    lab.git("add", "-A")
    root = lab.git("write-tree").strip()
    plans = _tree(lab, plans_rows)
    rows = [(m, n, plans if n == "plans" else o) for m, n, o in _entries(lab, root)]
    commit = lab.git(
        "commit-tree", _tree(lab, rows), "-p", "HEAD", "-m", message, who=AGENT
    ).strip()
    lab.git("update-ref", "refs/heads/main", commit)
    return commit


def _v2(lab: Lab, slug: str) -> str:
    return lab.read(slug).replace(f'tag: "{slug}"', f'tag: "{slug}"\n      extra: "v2"')


def _dup_folder(lab: Lab, slug: str, first: str, last: str) -> list[tuple[str, str, str]]:
    folder = _tree(lab, [("100644", "PLAN.yml", first), ("100644", "PLAN.yml", last)])
    lab.git("add", "-A")
    plans = lab.head(lab.git("write-tree").strip() + ":plans")
    return [(m, n, folder if n == slug else o) for m, n, o in _entries(lab, plans)]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for slug in [*VIDS, "honest", "zz"]:
        lab.write(slug, plan_text(slug))
    # dup-before: version 1 first, version 2 last, before any freeze
    lab.commit("agent adds plans", AGENT)
    v1 = lab.head("HEAD:plans/dup-before/PLAN.yml")
    (lab.repo / "plans" / "dup-before" / "PLAN.yml").write_text(_v2(lab, "dup-before"))
    v2 = _w(lab, "blob", _v2(lab, "dup-before").encode())
    _forged_commit(lab, _dup_folder(lab, "dup-before", v1, v2), "agent tidies dup-before")
    lab.run()
    time.sleep(1.1)
    for slug in ("dup-after", "dup-swap"):
        v1 = lab.head(f"HEAD:plans/{slug}/PLAN.yml")
        text = _v2(lab, slug)
        v2 = _w(lab, "blob", text.encode())
        (lab.repo / "plans" / slug / "PLAN.yml").write_text(text)
        first, last = (v1, v2) if slug == "dup-after" else (v2, v1)
        _forged_commit(lab, _dup_folder(lab, slug, first, last), f"agent tidies {slug}")
    (lab.repo / "plans" / "unsorted" / "PLAN.yml").write_text(_v2(lab, "unsorted"))
    lab.git("add", "-A")
    plans = _entries(lab, lab.head(lab.git("write-tree").strip() + ":plans"))
    moved = [r for r in plans if r[1] == "unsorted"]
    rest = [r for r in plans if r[1] != "unsorted"]
    _forged_commit(lab, rest + moved, "agent tidies unsorted")
    lab.git("read-tree", "-u", "--reset", "HEAD")
    lab.shown = {s: lab.git("show", f"HEAD:plans/{s}/PLAN.yml", check=False) for s in VIDS}  # type: ignore[attr-defined]
    lab.run()
    time.sleep(1.1)
    lab.approvals = {}  # type: ignore[attr-defined]
    for slug in [*VIDS, "honest"]:
        lab.approvals[slug] = lab.approve(slug, ALICE)  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-oddtrees", _build)


def test_honest_runs_once(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_an_odd_tree_runs_only_what_was_approved(lab: Lab, vid: str) -> None:
    ran = lab.calls(vid)
    assert len(ran) <= 1, ran
    approval = lab.approvals[vid]  # type: ignore[attr-defined]
    approved = load_yaml(lab.git("show", f"{approval}:plans/{vid}/PLAN.yml"))
    last = lab.git("log", "-1", "--format=%H %an", f"{approval}^", "--", f"plans/{vid}").split()
    assert last[1] == "plangate", "the last change before her vote is not the controller's"
    frozen = load_yaml(lab.git("show", f"{last[0]}:plans/{vid}/PLAN.yml"))
    for call in ran:
        got = load_yaml(call["stdin"])
        assert got == approved["actions"][0]["params"] == frozen["actions"][0]["params"], call
