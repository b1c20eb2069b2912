"""Property: nobody approves what they wrote (SPEC §5 E_SELF_APPROVAL, identities normalised).

Attack: an approver (Alice, Bob, José) gets content of their own into a plan without the
history index counting them as a writer, then approves it: a ``Co-authored-by:`` trailer in
any spelling, another spelling of their address (case, Unicode NFD/NFC, git's stripped
punctuation), committing someone else's authored change, or content that reaches the branch
through merges the index does not attribute (``merge -s ours`` then a re-merge, a plan
deleted and merged or reverted back, moved or copied to a new folder), a comment line of
their own in the plan file (no hashed byte: round 71), a note of their own in a folder that
is the plan's folder on some checkout (a case, NFKC, 8.3, backslash or trailing-dot twin, the
plans folder's case twin, a folder below a twin, a note before the plan: round 83). Defence:
the approval
is refused with E_SELF_APPROVAL (or E_PLAN_HASH_MISMATCH for a merge that changed content),
the tool never runs; honest controls in the same repo still run.

All variants share one repo; each is a list of steps, and the controller runs once between
step rounds (``run --once``), as a daemon would between pushes.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared

JOSE_NFC = ("José", unicodedata.normalize("NFC", "josé@example.com"))
JOSE_NFD = ("José", unicodedata.normalize("NFD", "josé@example.com"))
SELF = {"E_SELF_APPROVAL"}
SELF_OR_MERGE = {"E_SELF_APPROVAL", "E_PLAN_HASH_MISMATCH"}

Step = Callable[[Lab, str], None]


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


def edit(
    who: tuple[str, str],
    value: str = "v2",
    message: str = "",
    committer: tuple[str, str] | None = None,
) -> Step:
    """A content change (the ``note`` param) committed as ``who`` (author) and ``committer``."""

    def step(lab: Lab, slug: str) -> None:
        bump(lab, slug, value)
        lab.git("add", "-A")
        env_who = who
        args = ["commit", "-q", "-m", f"edit {slug}" + (f"\n\n{message}" if message else "")]
        if committer is not None:
            args.append(f"--author={who[0]} <{who[1]}>")
            env_who = committer
        lab.git(*args, who=env_who)

    return step


def approve(who: tuple[str, str] = ALICE) -> Step:
    def step(lab: Lab, slug: str) -> None:
        lab.approve(slug, who)

    return step


def coauthored(trailer: str, approver: tuple[str, str] = ALICE) -> list[Step]:
    return [submit(), edit(AGENT, message=trailer), approve(approver)]


def twin_note(rel: str, who: tuple[str, str] = ALICE) -> Step:
    """A review note committed by ``who`` at ``rel`` (``{slug}``, ``{SLUG}`` its upper case,
    ``{nfkc}`` its NFKC form): a folder one with the plan's on some checkout (round 83)."""

    def step(lab: Lab, slug: str) -> None:
        nfkc = unicodedata.normalize("NFKC", slug)
        path = lab.repo / rel.format(slug=slug, SLUG=slug.upper(), nfkc=nfkc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("Reviewed.\n", encoding="utf-8")
        lab.commit(f"note on {slug}", who)

    return step


def twin_note_removed(rel: str, who: tuple[str, str] = ALICE) -> Step:
    """The note at ``rel`` (as :func:`twin_note` names it) removed by ``who``: the plan's
    own folder still holds files, so its writers stay (a twin folder is no folder emptied)."""

    def step(lab: Lab, slug: str) -> None:
        lab.git("rm", "-q", "-r", rel.format(slug=slug, SLUG=slug.upper()))
        lab.commit(f"drop the note on {slug}", who)

    return step


def _merge_ours_then_remerge() -> list[Step]:
    def branch(lab: Lab, slug: str) -> None:
        lab.git("checkout", "-q", "-b", f"{slug}-feat")
        bump(lab, slug, "v2")
        lab.commit(f"alice edits {slug} on a branch", ALICE)
        lab.git("checkout", "-q", "-b", f"{slug}-feat2")
        (lab.repo / f"README-{slug}").write_text("unrelated\n")
        lab.commit("unrelated", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "-s", "ours", "--no-edit", f"{slug}-feat", who=AGENT)

    def remerge(lab: Lab, slug: str) -> None:
        lab.git("merge", "-q", "--no-commit", "--no-ff", f"{slug}-feat2", who=AGENT, check=False)
        lab.git("checkout", f"{slug}-feat2", "--", f"plans/{slug}/PLAN.yml")
        lab.git("commit", "-q", "--no-edit", who=AGENT)

    return [submit(), branch, remerge, approve()]


def _deleted_and_merged_back() -> list[Step]:
    def delete(lab: Lab, slug: str) -> None:
        lab.git("branch", f"{slug}-old")
        lab.git("rm", "-q", "-r", f"plans/{slug}")
        lab.commit(f"delete {slug}", AGENT)

    def merge_back(lab: Lab, slug: str) -> None:
        lab.git("checkout", "-q", f"{slug}-old")
        (lab.repo / f"README-{slug}").write_text("unrelated\n")
        lab.commit("unrelated", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-commit", "--no-ff", f"{slug}-old", who=AGENT, check=False)
        lab.git("checkout", f"{slug}-old", "--", f"plans/{slug}")
        lab.git("commit", "-q", "--no-edit", who=AGENT)

    return [submit(ALICE), delete, merge_back, approve()]


def _deleted_and_reverted_back() -> list[Step]:
    deleted: dict[str, str] = {}

    def delete(lab: Lab, slug: str) -> None:
        lab.git("rm", "-q", "-r", f"plans/{slug}")
        deleted[slug] = lab.commit(f"delete {slug}", AGENT)

    def revert(lab: Lab, slug: str) -> None:
        lab.git("revert", "--no-edit", deleted[slug], who=AGENT)

    return [submit(ALICE), delete, revert, approve()]


def _moved(copy: bool) -> list[Step]:
    def move(lab: Lab, slug: str) -> None:
        src = lab.repo / "plans" / slug
        dst = lab.repo / "plans" / f"{slug}-new"
        dst.mkdir()
        (dst / "PLAN.yml").write_bytes((src / "PLAN.yml").read_bytes())
        if not copy:
            lab.git("rm", "-q", "-r", f"plans/{slug}")
        lab.commit(f"{'copy' if copy else 'move'} {slug}", AGENT)

    def approve_new(lab: Lab, slug: str) -> None:
        lab.approve(f"{slug}-new", ALICE)

    return [submit(ALICE), move, approve_new]


def _cherry_picked() -> list[Step]:
    def pick(lab: Lab, slug: str) -> None:
        lab.git("checkout", "-q", "-b", f"{slug}-feat")
        bump(lab, slug, "v2")
        commit = lab.commit(f"alice edits {slug}", ALICE)
        lab.git("checkout", "-q", "main")
        lab.git("cherry-pick", commit, who=AGENT)

    return [submit(), pick, approve()]


def _edited_then_reverted() -> list[Step]:
    return [submit(), edit(ALICE, "v2"), edit(AGENT, "v1"), approve()]


def _comment_only(who: tuple[str, str]) -> list[Step]:
    def comment(lab: Lab, slug: str) -> None:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text() + "# reviewed, looks fine\n")
        lab.commit("comment", who)

    return [submit(), comment, approve(who)]


# variant id -> (steps, the refusal codes that count as the defence holding)
ATTACKS: dict[str, tuple[list[Step], set[str]]] = {
    # a control until round 71 (round 23's "a comment beside one's approval is no
    # authorship"): any byte an approver commits into the plan file but a plain status change
    # makes her a writer of the plan's folder, as a note beside it does (round 71's b-cmt-*:
    # text commented out and uncommented by the agent ran on its writer's approval)
    "approver-comments-only": (_comment_only(ALICE), SELF),
    "coauthor-canonical": (coauthored("Co-authored-by: Alice <alice@example.com>"), SELF),
    "coauthor-lowercase-key": (coauthored("co-authored-by: Alice <alice@example.com>"), SELF),
    "coauthor-uppercase-key": (coauthored("CO-AUTHORED-BY: Alice <alice@example.com>"), SELF),
    "coauthor-upper-email": (coauthored("Co-authored-by: Alice <ALICE@EXAMPLE.COM>"), SELF),
    "coauthor-no-space": (coauthored("Co-authored-by:Alice <alice@example.com>"), SELF),
    "coauthor-no-name": (coauthored("Co-authored-by: <alice@example.com>"), SELF),
    "coauthor-among-trailers": (
        coauthored(
            "Signed-off-by: Agent <agent@example.com>\n"
            "Co-authored-by: Alice <alice@example.com>\nReviewed-by: x <x@example.com>"
        ),
        SELF,
    ),
    "coauthor-second-of-two": (
        coauthored(
            "Co-authored-by: Carol <carol@example.net>\nCo-authored-by: Alice <alice@example.com>"
        ),
        SELF,
    ),
    "coauthor-in-submit": (
        [submit(message="Co-authored-by: Alice <alice@example.com>"), approve()],
        SELF,
    ),
    "coauthor-glob-approver": (
        coauthored("Co-authored-by: Bob <BOB@OPS.EXAMPLE.COM>", BOB),
        SELF,
    ),
    "coauthor-nfd": (
        coauthored(f"Co-authored-by: José <{JOSE_NFD[1]}>", JOSE_NFC),
        SELF,
    ),
    "coauthor-squash-style": (
        [
            submit(message="* add plan\n\n---------\n\nCo-authored-by: Alice <alice@example.com>"),
            approve(),
        ],
        SELF,
    ),
    "email-upper": ([submit(), edit(("Alice", "ALICE@EXAMPLE.COM")), approve()], SELF),
    "email-mixed": ([submit(), edit(("Alice", "Alice@Example.Com")), approve()], SELF),
    "email-nfd-writes-nfc-approves": ([submit(), edit(JOSE_NFD), approve(JOSE_NFC)], SELF),
    "email-nfc-writes-nfd-approves": ([submit(), edit(JOSE_NFC), approve(JOSE_NFD)], SELF),
    "email-angle-brackets": ([submit(), edit(("Alice", "<alice@example.com>")), approve()], SELF),
    "email-trailing-dot": ([submit(), edit(("Alice", "alice@example.com.")), approve()], SELF),
    "email-glob-upper": ([submit(), edit(("Bob", "Bob@Ops.Example.com")), approve(BOB)], SELF),
    "committer-only": ([submit(), edit(AGENT, committer=ALICE), approve()], SELF),
    "author-only": ([submit(), edit(ALICE, committer=AGENT), approve()], SELF),
    "written-at-birth": ([submit(ALICE), approve()], SELF),
    "cherry-picked": (_cherry_picked(), SELF),
    "edited-then-reverted": (_edited_then_reverted(), SELF),
    "merge-ours-then-remerge": (_merge_ours_then_remerge(), SELF_OR_MERGE),
    "deleted-merged-back": (_deleted_and_merged_back(), SELF_OR_MERGE),
    "deleted-reverted-back": (_deleted_and_reverted_back(), SELF),
    "moved": (_moved(copy=False), SELF),
    "copied": (_moved(copy=True), SELF),
    # round 83: one twin spelling of each kind of the plan's folder (r83twinwriter)
    "twin-case": ([submit(), twin_note("plans/{SLUG}/NOTES.md"), approve()], SELF),
    "twin-nfkc-\ufb01": ([submit(), twin_note("plans/{nfkc}/NOTES.md"), approve()], SELF),
    "twin-shortname-long": ([submit(), twin_note("plans/TWIN-S~1/NOTES.md"), approve()], SELF),
    "twin-backslash": ([submit(), twin_note("plans\\{slug}/NOTES.md"), approve()], SELF),
    "twin-trailing-dot": ([submit(), twin_note("plans/{slug}./NOTES.md"), approve()], SELF),
    "twin-plans-folder": ([submit(), twin_note("PLANS/{slug}/NOTES.md"), approve()], SELF),
    "twin-deeper": ([submit(), twin_note("plans/{SLUG}/deep/NOTES.md"), approve()], SELF),
    "twin-before-plan": ([twin_note("plans/{SLUG}/NOTES.md"), submit(), approve()], SELF),
    "twin-83-before-plan-long": (
        [twin_note("plans/TWIN-8~1/NOTES.md"), submit(), approve()],
        SELF,
    ),
    "twin-note-removed": (
        [
            submit(),
            twin_note("plans/{SLUG}/NOTES.md"),
            twin_note_removed("plans/{SLUG}"),
            approve(),
        ],
        SELF,
    ),
}
#: Every variant held since the author index normalises identities, counts co-authors
#: and remembers who produced each content (issue 11).
BROKEN: dict[str, object] = {}

CONTROLS: dict[str, list[Step]] = {
    "honest": [submit(), approve()],
    "coauthor-is-someone-else": coauthored("Co-authored-by: Bob <bob@ops.example.com>"),
}


def _approved_slug(vid: str) -> str:
    return f"{vid}-new" if vid in ("moved", "copied") else vid


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    ops = '"*@ops.example.com"]'
    lab.config.write_text(lab.config.read_text().replace(ops, ops[:-1] + ', "josé@example.com"]'))
    scenarios = {vid: steps for vid, (steps, _) in ATTACKS.items()} | CONTROLS
    rounds = max(len(steps) for steps in scenarios.values())
    for index in range(rounds):
        for vid, steps in scenarios.items():
            if index < len(steps):
                steps[index](lab, vid)
        lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-selfapproval", _build_lab)


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_honest_plans_beside_the_attacks_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_self_approval_is_refused(lab: Lab, vid: str) -> None:
    slug = _approved_slug(vid)
    assert lab.calls(vid) == [], "the self-approved plan ran"
    assert not lab.started(slug)
    assert lab.refusal(slug) in ATTACKS[vid][1], lab.codes(slug)
