"""Round 2, approval side: nobody approves content they wrote, in disguises round 1 did not try.

Attacks (Alice is an approver, the agent is not): Alice writes a plan meant for nesting and
the agent writes a parent that pins it by hash (Alice then approves the parent, i.e. the
content she wrote); Alice's content edit reaches main through the *third* parent of an octopus
merge, through a merge of a merge, through a merge whose result git's history
simplification attributes to the other side (the agent made the identical edit on main), or
in a ``PLAN.yaml`` the agent then renames to ``PLAN.yml``; ``Co-authored-by:`` with CRLF line
ends or a tab after the colon; addresses equal to Alice's only through the configured
aliases (``+tag`` and a declared second address). Defence: refused E_SELF_APPROVAL (or
E_PLAN_HASH_MISMATCH for a merge that changed content), nothing of the plan runs; honest
controls beside them run once.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, play


def shared_lab(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Lab]) -> Lab:
    """One lab per module for the whole session, even under ``pytest -n 2``: the first
    worker builds it (attacks played, controller run), the other waits and observes the same
    repo, log and state (read only) instead of playing every attack a second time."""
    base = factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, shared by its workers
    root = base / f"round2-{name}"
    with open(base / f"round2-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (root / "built").exists():
            lab = Lab.__new__(Lab)
            lab.root, lab.repo, lab.config = root, root / "repo", root / "plangate.yml"
            lab.state, lab.log, lab.home = root / "state", root / "ran.log", root / "home"
            lab.recorder = root / "rec.py"
            return lab
        root.mkdir()
        lab = build(root)
        (root / "built").touch()
        return lab


Step = Callable[[Lab, str], None]
SELF = {"E_SELF_APPROVAL"}
SELF_OR_MERGE = {"E_SELF_APPROVAL", "E_PLAN_HASH_MISMATCH"}

NESTED = """\
plan:
  name: "lib {tag}"
  task: "a plan meant to be nested"
  status: draft
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "the library's step"
    params:
      tag: "{tag}-nested"
"""
PARENT = """\
plan:
  name: "parent {tag}"
  task: "reuses a reviewed library plan"
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "own step"
    params:
      tag: "{tag}"
  - id: 2
    plan: {{path: plans/{tag}-lib, hash: "{pin}"}}
    why: "run the library"
"""


def submit(who: tuple[str, str] = AGENT, message: str = "") -> Step:
    def step(lab: Lab, slug: str) -> None:
        lab.write(slug, plan_text(slug, params="note: v1\n"))
        lab.commit(f"add {slug}" + (f"\n\n{message}" if message else ""), who)

    return step


def bump(lab: Lab, slug: str, value: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text(encoding="utf-8")
    start = text.index("      note: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + f"      note: {value}" + text[end:], encoding="utf-8")


def approve(who: tuple[str, str] = ALICE) -> Step:
    def step(lab: Lab, slug: str) -> None:
        lab.approve(slug, who)

    return step


def raw_commit(lab: Lab, message: str, who: tuple[str, str]) -> None:
    """Commit with the message bytes exactly as given (``-F -``: CRs and tabs kept)."""
    lab.git("add", "-A")
    lab.git("commit", "-q", "--cleanup=verbatim", "-F", "-", who=who, input=message)


def coauthor_raw(message: str, approver: tuple[str, str] = ALICE) -> list[Step]:
    def edit(lab: Lab, slug: str) -> None:
        bump(lab, slug, "v2")
        raw_commit(lab, message, AGENT)

    return [submit(), edit, approve(approver)]


def edit_as(who: tuple[str, str]) -> list[Step]:
    def edit(lab: Lab, slug: str) -> None:
        bump(lab, slug, "v2")
        lab.commit(f"edit {slug}", who)

    return [submit(), edit, approve()]


def _nested(lib_author: tuple[str, str], approver: tuple[str, str] = ALICE) -> list[Step]:
    def write_lib(lab: Lab, slug: str) -> None:
        lab.write(f"{slug}-lib", NESTED.format(tag=slug))
        lab.commit(f"library for {slug}", lib_author)

    def write_parent(lab: Lab, slug: str) -> None:
        pin = lab.cli("hash", str(lab.repo / "plans" / f"{slug}-lib")).stdout.strip()
        assert pin.startswith("sha256:"), pin
        lab.write(slug, PARENT.format(tag=slug, pin=pin))
        lab.commit(f"add {slug}", AGENT)

    return [write_lib, write_parent, approve(approver)]


def _octopus(lab: Lab, slug: str) -> None:
    """Alice's content edit arrives through the third parent of an octopus merge."""
    lab.git("checkout", "-q", "-b", f"{slug}-b1")
    (lab.repo / f"README-{slug}").write_text("unrelated\n")
    lab.commit("unrelated", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("checkout", "-q", "-b", f"{slug}-b2")
    bump(lab, slug, "v2")
    lab.commit(f"alice edits {slug}", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-edit", f"{slug}-b1", f"{slug}-b2", who=AGENT)


def _merge_of_merge(lab: Lab, slug: str) -> None:
    """Alice edits on an inner branch, merged into an outer branch, merged into main."""
    lab.git("checkout", "-q", "-b", f"{slug}-outer")
    (lab.repo / f"README-{slug}").write_text("outer\n")
    lab.commit("outer work", AGENT)
    lab.git("checkout", "-q", "-b", f"{slug}-inner", "main")
    bump(lab, slug, "v2")
    lab.commit(f"alice edits {slug}", ALICE)
    lab.git("checkout", "-q", f"{slug}-outer")
    lab.git("merge", "-q", "--no-ff", "--no-edit", f"{slug}-inner", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", f"{slug}-outer", who=AGENT)


def _treesame(lab: Lab, slug: str) -> None:
    """Alice makes an edit on a branch, the agent makes the byte-identical edit on main, then
    merges Alice's branch: the result is TREESAME to both parents, and ``git log -- path``
    simplifies Alice's side away."""
    lab.git("checkout", "-q", "-b", f"{slug}-alice")
    bump(lab, slug, "v2")
    lab.commit(f"alice edits {slug}", ALICE)
    lab.git("checkout", "-q", "main")
    bump(lab, slug, "v2")
    lab.commit(f"agent edits {slug}", AGENT)
    lab.git("merge", "-q", "--no-ff", "--no-edit", f"{slug}-alice", who=AGENT)


def _yaml_renamed() -> list[Step]:
    def write_yaml(lab: Lab, slug: str) -> None:
        lab.write(slug, plan_text(slug, params="note: v1\n", status="draft"), "PLAN.yaml")
        lab.commit(f"alice drafts {slug}", ALICE)

    def rename(lab: Lab, slug: str) -> None:
        lab.git("mv", f"plans/{slug}/PLAN.yaml", f"plans/{slug}/PLAN.yml")
        lab.set_status(slug, "pending_approval")
        lab.commit(f"submit {slug}", AGENT)

    return [write_yaml, rename, approve()]


def _draft_by_alice() -> list[Step]:
    """Alice writes the content as a draft; the agent only flips it to pending_approval."""

    def draft(lab: Lab, slug: str) -> None:
        lab.write(slug, plan_text(slug, params="note: v1\n", status="draft"))
        lab.commit(f"alice drafts {slug}", ALICE)

    def submit_it(lab: Lab, slug: str) -> None:
        lab.set_status(slug, "pending_approval")
        lab.commit(f"submit {slug}", AGENT)

    return [draft, submit_it, approve()]


def merged(how: Callable[[Lab, str], None]) -> list[Step]:
    return [submit(), how, approve()]


CO = "Co-authored-by: Alice <alice@example.com>"
ATTACKS: dict[str, tuple[list[Step], set[str]]] = {
    "nested-plan-written-by-approver": (_nested(ALICE), SELF),
    "nested-plan-written-by-glob-approver": (_nested(BOB, BOB), SELF),
    "octopus-third-parent": (merged(_octopus), SELF_OR_MERGE),
    "merge-of-merge": (merged(_merge_of_merge), SELF_OR_MERGE),
    "treesame-both-sides": (merged(_treesame), SELF_OR_MERGE),
    "yaml-renamed-to-yml": (_yaml_renamed(), SELF),
    "draft-by-approver": (_draft_by_alice(), SELF),
    "coauthor-crlf": (coauthor_raw(f"edit\r\n\r\n{CO}\r\n"), SELF),
    "coauthor-tab": (coauthor_raw("edit\n\nCo-authored-by:\tAlice <alice@example.com>\n"), SELF),
    "coauthor-space-before-colon": (
        coauthor_raw("edit\n\nCo-authored-by : Alice <alice@example.com>\n"),
        SELF,
    ),
    "coauthor-plus-tag": (
        coauthor_raw("edit\n\nCo-authored-by: Alice <alice+bot@example.com>\n"),
        SELF,
    ),
    "author-plus-tag": (edit_as(("Alice", "alice+bot@example.com")), SELF),
    "author-plus-tag-upper": (edit_as(("Alice", "ALICE+Bot@Example.COM")), SELF),
    "author-declared-alias": (edit_as(("A. Smith", "a.smith@corp.example")), SELF),
    "author-declared-alias-upper": (edit_as(("A. Smith", "A.Smith@CORP.example")), SELF),
}
#: Variants that break the promise on this branch (round 2): id -> marker.
R2 = "round 2: "
BROKEN: dict[str, object] = {}

CONTROLS: dict[str, list[Step]] = {
    "honest": [submit(), approve()],
    "nested-plan-by-agent": _nested(AGENT),
}


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        approval="identity_aliases:\n"
        '  plus_tags: ["*@example.com"]\n'
        "  people: [[alice@example.com, a.smith@corp.example]]\n",
    )
    play(lab, {vid: steps for vid, (steps, _) in ATTACKS.items()} | CONTROLS)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "authors", _build)


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_honest_plans_beside_the_attacks_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_content_the_approver_wrote_is_never_self_approved(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], "the self-approved plan ran"
    assert lab.calls(f"{vid}-nested") == [], "the approver's nested plan ran"
    assert not lab.started(vid)
    assert lab.refusal(vid) in ATTACKS[vid][1], lab.codes(vid)
