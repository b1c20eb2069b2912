"""Approvals against someone trying to break them (issue 11): identities normalised and
aliased, co-authors, an author index that never forgets, approvals bound to their version,
who may reject or abort, and ``max_age`` against a freeze dated in the future.

Pure rules first, then the controller on real git repos (see tests/adversarial/ for the
attacker's suite through the CLI alone)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.approval.approvals import (
    approver_allowed,
    canonical,
    coauthors,
    is_address,
    normalize_identity,
)
from controller.errors import ERROR_CLASSES, AlreadyExecuted, ApprovalReplayed
from controller.service.reconcile import Controller
from controller.settings import ApprovalSettings, IdentityAliases, config_from_data
from tests.approval.test_approvals import GOOD, POLICY, code
from tests.support.gitkit import (
    AGENT,
    ALICE,
    GATED,
    MALLORY,
    PLAN,
    approve,
    commit_all,
    edit_status,
    head_plan,
    subjects,
    write_plan,
)

# --- pure rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling",
    [
        "alice@example.com",
        "ALICE@EXAMPLE.COM",
        "Alice@Example.Com",
        "<alice@example.com>",
        "alice@example.com.",
        " alice@example.com ",
        "'alice@example.com'",
        # RFC 5322 spellings of the same addr-spec (round 9): comments, quotes, quoted
        # pairs, folding white space, and Unicode compatibility forms (NFKC)
        "alice(work)@example.com",
        "alice@(c)example.com",
        "(c)alice@example.com(c)",
        "al((nested))ice@example.com",
        '"alice"@example.com',
        '"al"ice@example.com',
        "al\\ice@example.com",
        "alice @ example.com",
        "\uff41lice@example.com",
        "ＡＬＩＣＥ@ＥＸＡＭＰＬＥ.ＣＯＭ",
        # invisible characters are no part of it (round 10): controls, format characters,
        # every other default-ignorable one, the Braille blank
        "ali\u200bce@example.com",
        "alice\x01@example.com",
        "al\u034fice@example.com",
        "alice\ufe0f@example.com",
        "ali\U000e0100ce@example.com",
        "a\u3164lice@example.com",
        "alic\u17b4e@example.com",
        "al\u180bice@example.com",
        "alice\u2800@example.com",
    ],
)
def test_one_person_has_one_normalised_address(spelling: str) -> None:
    assert normalize_identity(spelling) == "alice@example.com"


def test_unicode_forms_of_an_address_are_one_person() -> None:
    nfd = unicodedata.normalize("NFD", "josé@example.com")
    nfc = unicodedata.normalize("NFC", "josé@example.com")
    assert nfd != nfc and normalize_identity(nfd) == normalize_identity(nfc)
    assert approver_allowed(nfd, [nfc]) and approver_allowed(nfc, [nfd])


@pytest.mark.parametrize(
    "email",
    [
        "",
        "alice",
        "@example.com",
        "alice@",
        "a@b@example.com",
        "<@example.com>",
        '"a@b"@example.com',  # a quoted @ is still a second @
        '"alice smith"@example.com',  # a blank in the mailbox
        "alice(@example.com",  # an unclosed comment swallows the domain
    ],
)
def test_an_address_without_one_at_and_both_parts_never_approves(email: str) -> None:
    assert not is_address(normalize_identity(email))
    assert not approver_allowed(email, ["*", "*@*", "*@example.com"])


def test_aliases_plus_tags_and_declared_people() -> None:
    aliases = IdentityAliases(
        plus_tags=["*@example.com"], people=[["alice@example.com", "a.smith@corp.example"]]
    )
    assert canonical("Alice+ops@Example.com", aliases) == "alice@example.com"
    assert canonical("a.smith@corp.example", aliases) == "alice@example.com"
    assert canonical("bob+x@other.example", aliases) == "bob+x@other.example"  # not listed
    policy = POLICY.model_copy(update={"identity_aliases": aliases})
    self_tagged = dataclasses.replace(GOOD, changers=frozenset({"alice+agent@example.com"}))
    assert code(self_tagged) is None  # without aliases, another address
    assert code(self_tagged, policy) == "E_SELF_APPROVAL"
    other_address = dataclasses.replace(GOOD, changers=frozenset({"a.smith@corp.example"}))
    assert code(other_address, policy) == "E_SELF_APPROVAL"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("x\n\nCo-authored-by: Alice <alice@example.com>", ["alice@example.com"]),
        ("x\n\nco-authored-by:Alice <ALICE@example.com>", ["alice@example.com"]),
        ("x\n\nCO-AUTHORED-BY: <alice@example.com>", ["alice@example.com"]),
        ("x\n\nCo-authored-by: alice@example.com", ["alice@example.com"]),
        (
            "x\nsome text\nCo-authored-by: A <a@x.org>\nCo-authored-by: B <b@y.org>",
            ["a@x.org", "b@y.org"],
        ),
        ("x\n\nReviewed-by: Alice <alice@example.com>", []),
    ],
)
def test_co_authors_in_any_spelling(message: str, expected: list[str]) -> None:
    assert coauthors(message) == expected


@pytest.mark.parametrize(
    "change",
    [
        {"author_time": 900, "version_since": 1000},  # written before the version existed
        {"replay_of": "e" * 40},
        {"bound_hash": "sha256:" + "b" * 64},
    ],
)
def test_a_replayed_approval_is_refused(change: dict[str, Any]) -> None:
    assert code(dataclasses.replace(GOOD, **change)) == "E_APPROVAL_REPLAYED"


def test_an_approval_bound_to_its_version_is_not_a_replay() -> None:
    fresh = dataclasses.replace(
        GOOD, author_time=1001, version_since=1000, bound_hash=GOOD.current_hash
    )
    assert code(fresh) is None
    # a merge is written after its parents: dated before the version, it is a merge
    # re-created by git (``merge -C``, ``rebase -r``) over another branch (round 18)
    merged = dataclasses.replace(GOOD, author_time=900, version_since=1000, merge=True)
    assert code(merged) == "E_APPROVAL_REPLAYED"


def test_an_approval_of_the_versions_own_second_counts_only_from_its_authors_hand() -> None:
    """git dates are whole seconds (round 104): authored in the second the version (or the
    pause) came to be, an approval cannot be ordered after it by its date. Committed by its
    author it counts; put on the branch by another hand (a cherry-pick keeps her author
    date) it may be her approval of the version before, and is refused."""
    tie = dataclasses.replace(
        GOOD,
        author_time=1000,
        version_since=1000,
        commit_time=1000,
        committer_email=GOOD.author_email,
    )
    assert code(tie) is None
    respelled = dataclasses.replace(tie, committer_email="ALICE@Example.COM")
    assert code(respelled) is None  # one person, by the identity rules
    picked = dataclasses.replace(tie, committer_email="agent@example.com")
    assert code(picked) == "E_APPROVAL_REPLAYED"
    later = dataclasses.replace(picked, author_time=1001)
    assert code(later) is None  # a second later: ordered by its date, whoever committed it
    # round 106: a trailer naming this version is written by whoever writes the commit
    bound = dataclasses.replace(picked, bound_hash=GOOD.current_hash)
    assert code(bound) == "E_APPROVAL_REPLAYED"
    # under identity: committer the committer is the approver: her own hand (round 90's lab)
    committer_mode = POLICY.model_copy(update={"identity": "committer"})
    assert (
        code(dataclasses.replace(tie, author_email="mallory@example.com"), committer_mode) is None
    )


def test_a_freeze_dated_after_the_verification_is_not_younger_than_now() -> None:
    policy = ApprovalSettings(approvers=["alice@example.com"], max_age=3600)
    future = dataclasses.replace(GOOD, frozen_since=GOOD.commit_time + 10 * 86400)
    assert code(future, policy) is None  # age 0, never negative
    unknowable = dataclasses.replace(GOOD, frozen_since=0)
    assert code(unknowable, policy) == "E_PLAN_EXPIRED"
    assert ERROR_CLASSES["E_APPROVAL_REPLAYED"] is ApprovalReplayed
    assert ERROR_CLASSES["E_ALREADY_EXECUTED"] is AlreadyExecuted


# --- the controller on real git ----------------------------------------------------------


def _config(repo: Path, **approval: Any) -> Any:
    data = {
        "repo": str(repo),
        "state_dir": str(repo.parent / "state"),
        "approval": {"approvers": ["alice@example.com", "*@ops.example.com"], **approval},
        "tools": {"greet": {"kind": "echo"}},
    }
    return config_from_data(data, repo.parent / "plangate.yml")


def _once(repo: Path, **approval: Any) -> None:
    ctl = Controller(_config(repo, **approval))
    try:
        ctl.run_once()
    finally:
        ctl.close()


def _git(repo: Path, *args: str, who: tuple[str, str] = AGENT, **env: str) -> str:
    name, email = who
    result = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            **env,
        },
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def _submitted(repo: Path, who: tuple[str, str] = AGENT, message: str = "add") -> None:
    write_plan(repo)
    commit_all(repo, message, who)
    _once(repo)


def _refusal(repo: Path, slug: str = "greet") -> str | None:
    block = head_plan(repo, slug).get("approval") or {}
    return block.get("code") if block.get("status") == "refused" else None


def test_a_plus_tag_alias_of_the_author_cannot_approve(repo: Path) -> None:
    _submitted(repo, ("Alice", "alice+bot@example.com"))
    approve(repo, who=ALICE)
    _once(repo, identity_aliases={"plus_tags": ["*@example.com"]})
    assert _refusal(repo) == "E_SELF_APPROVAL"
    assert head_plan(repo)["plan"]["status"] == "pending_approval"


def test_a_co_author_of_the_content_cannot_approve(repo: Path) -> None:
    _submitted(repo, message="add\n\nCo-authored-by: Alice <ALICE@example.com>")
    approve(repo, who=ALICE)
    _once(repo)
    assert _refusal(repo) == "E_SELF_APPROVAL"


def test_a_cherry_picked_approval_of_an_older_version_is_replayed(repo: Path) -> None:
    _submitted(repo)
    _git(repo, "checkout", "-q", "-b", "review")
    edit_status(repo, "greet", "approved")
    _git(repo, "add", "-A")
    earlier = str(int(time.time()) - 60) + " +0000"  # she approved a minute ago, on review
    _git(repo, "commit", "-q", "-m", "approve v1", who=ALICE, GIT_AUTHOR_DATE=earlier)
    old = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "checkout", "-q", "main")
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: everyone"))
    commit_all(repo, "widen", AGENT)
    _once(repo)  # the controller freezes the new version
    _git(repo, "cherry-pick", old, who=AGENT)
    _once(repo)
    assert _refusal(repo) == "E_APPROVAL_REPLAYED"
    assert "execution" not in head_plan(repo)


def test_a_plan_approved_trailer_binds_the_approval_to_its_hash(repo: Path) -> None:
    _submitted(repo)
    edit_status(repo, "greet", "approved")
    commit_all(repo, f"approve\n\nPlan-Approved: plans/greet sha256:{'0' * 64}", ALICE)
    _once(repo)
    assert _refusal(repo) == "E_APPROVAL_REPLAYED"


def test_a_fresh_approval_of_the_same_version_runs(repo: Path) -> None:
    _submitted(repo)
    approve(repo, who=ALICE)
    _once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"


def _row(repo: Path) -> dict[str, Any]:
    ctl = Controller(_config(repo))
    try:
        ctl.run_once()
        return next(r for r in ctl.status() if r["plan"] == "plans/greet")
    finally:
        ctl.close()


def test_a_stranger_cannot_reject(repo: Path) -> None:
    _submitted(repo)
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "reject it", MALLORY)
    row = _row(repo)
    assert row["status"] == "pending_approval"
    assert "E_APPROVER_NOT_ALLOWED" in row["last_event"]
    approve(repo, who=ALICE)  # the plan is still open: an approver can approve it
    assert _row(repo)["status"] == "completed"


def test_a_stranger_cannot_abort_a_paused_plan(repo: Path) -> None:
    write_plan(repo, text=GATED)
    commit_all(repo, "add", AGENT)
    _once(repo)
    approve(repo, who=ALICE)
    _once(repo)
    assert head_plan(repo)["plan"]["status"] == "awaiting_approval"
    edit_status(repo, "greet", "aborted")
    commit_all(repo, "abort it", MALLORY)
    row = _row(repo)
    assert row["status"] == "awaiting_approval"
    assert "E_APPROVER_NOT_ALLOWED" in row["last_event"]
    assert "plangate: abort plans/greet" not in subjects(repo)


def test_the_author_may_withdraw_and_an_approver_may_reject(repo: Path) -> None:
    _submitted(repo)
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "withdraw", AGENT)
    ctl = Controller(_config(repo))
    try:
        ctl.run_once()
        row = next(r for r in ctl.status() if r["plan"] == "plans/greet")
    finally:
        ctl.close()
    assert row["status"] == "rejected"


def test_a_future_dated_freeze_does_not_dodge_max_age(repo: Path) -> None:
    """The agent freezes the plan itself and dates that commit a year ahead. A controller
    commit after it on the branch, made two days ago by the controller's clock, proves the
    freeze is at least that old: the approval now is past max_age (1h)."""
    from controller.plan import plans

    path = write_plan(repo)
    loaded = plans.validate_text(path.read_text(), path, _config(repo))
    path.write_text(plans.freeze_text(loaded).text)
    future = "2031-06-01T00:00:00Z"
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "frozen", GIT_COMMITTER_DATE=future, GIT_AUTHOR_DATE=future)
    other = write_plan(repo, "other")
    other.write_text(other.read_text() + "# noted\n")
    two_days_ago = str(int(time.time()) - 2 * 86400) + " +0000"
    _git(repo, "add", "-A")
    _git(
        repo,
        "commit",
        "-q",
        "-m",
        "plangate: freeze plans/other",
        who=("plangate", "plangate@localhost"),
        GIT_COMMITTER_DATE=two_days_ago,
        GIT_AUTHOR_DATE=two_days_ago,
    )
    approve(repo, who=ALICE)
    _once(repo, max_age="1h")
    assert _refusal(repo) == "E_PLAN_EXPIRED"
    assert "execution" not in head_plan(repo)


def test_a_copy_of_a_plan_that_ran_is_already_executed(repo: Path) -> None:
    """A frozen hash runs at most once per controller: the same plan copied to another
    folder (with a new comment) and approved there is refused, and did not run again."""
    _submitted(repo)
    approve(repo, who=ALICE)
    _once(repo)
    assert head_plan(repo)["plan"]["status"] == "completed"
    copy = write_plan(repo, "greet-again", "# once more\n" + PLAN)
    commit_all(repo, "copy", AGENT)
    _once(repo)
    edit_status(repo, "greet-again", "approved")
    commit_all(repo, "approve the copy", ALICE)
    _once(repo)
    block = head_plan(repo, "greet-again").get("approval") or {}
    assert block.get("code") == "E_ALREADY_EXECUTED", block
    assert "execution" not in head_plan(repo, "greet-again")
    assert copy.exists()


def test_a_copy_of_a_rejected_version_is_withdrawn_and_a_new_version_is_not(repo: Path) -> None:
    """A version an approver rejected before it ran is not approved again under another
    name (E_VERSION_WITHDRAWN, round 10); the same plan changed (a new version) is."""
    _submitted(repo)
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "no", ALICE)
    _once(repo)
    write_plan(repo, "greet-again", "# once more\n" + PLAN)  # a comment: the same hash
    write_plan(repo, "greet-changed", PLAN.replace('"Greet"', '"Greet, changed"'))
    commit_all(repo, "resubmit", AGENT)
    _once(repo)
    for slug in ("greet-again", "greet-changed"):
        edit_status(repo, slug, "approved")
    commit_all(repo, "approve both", ALICE)
    _once(repo)
    block = head_plan(repo, "greet-again").get("approval") or {}
    assert block.get("code") == "E_VERSION_WITHDRAWN", block
    assert "plans/greet was set rejected by alice@example.com" in block.get("message", ""), block
    assert "execution" not in head_plan(repo, "greet-again")
    assert head_plan(repo, "greet-changed")["plan"]["status"] == "completed"


def test_content_from_a_message_too_long_to_read_has_every_author() -> None:
    """Round 15: commit messages are read up to records.MAX_MESSAGE (an 8 MB message cost
    190 MB); a ``Co-authored-by:`` past that cut cannot be read, so nobody may approve."""
    from controller.approval.approvals import EVERYONE

    everyone = dataclasses.replace(GOOD, changers=frozenset({"agent@example.com", EVERYONE}))
    assert code(everyone) == "E_SELF_APPROVAL"
    assert code(dataclasses.replace(GOOD, changers=frozenset({"agent@example.com"}))) is None


def test_a_long_commit_message_is_cut_and_marked() -> None:
    from controller.git import records

    tag = "t"
    big = "Plan-Approved: x y\n" * (records.MAX_MESSAGE // 10)
    fields = ["a" * 40, "", "A", "a@x", "1", "A", "a@x", "1", "", "", "s", big, big, ""]
    record = records._parse_header((records._FIELD + tag).join(fields), tag)
    assert record.oversized
    assert len(record.body) == records.MAX_MESSAGE
    small = records._parse_header((records._FIELD + tag).join([*fields[:11], "x", "y", ""]), tag)
    assert not small.oversized and small.body == "y"


@pytest.mark.parametrize(
    "spelling",
    [
        "alice@xn--example-6z6c.com",  # example + U+200B (zero-width space)
        "alice@XN--example-6z6c.com",
        "alice@xn--example-sye.com",  # exampl + U+034F (combining grapheme joiner) + e
    ],
)
def test_an_a_label_decoding_to_what_reduces_again_is_one_spelling(spelling: str) -> None:
    """Round 31: what an ``xn--`` label decodes to (an invisible character, a full stop) is
    reduced as the address was: one spelling, applied once or twice (a signing key listed
    under such a principal was no key of Alice's, while her commits so spelled were hers)."""
    once = normalize_identity(spelling)
    assert normalize_identity(once) == once
    assert once.startswith("alice@example") and "\u200b" not in once and "\u034f" not in once


@given(st.text(alphabet=st.sampled_from("ab.\u200b\u034f\u3002\uff0e\u00ad\u2060Ａé"), max_size=12))
@settings(max_examples=300, deadline=None)
def test_normalizing_an_address_twice_changes_nothing(label: str) -> None:
    """Whatever an A-label encodes, the address reduced once is reduced for good."""
    try:
        a_label = "xn--" + label.encode("punycode").decode("ascii")
    except UnicodeError:
        return
    for address in (f"alice@{a_label}.com", f"alice@{label}.com"):
        once = normalize_identity(address)
        assert normalize_identity(once) == once


def _moved_onto(repo: Path, commit: str, slug: str, n: int) -> None:
    """The agent's ``format-patch | am`` of ``commit`` re-pathed onto ``slug``'s plan."""
    patch = _git(repo, "format-patch", "-1", "--stdout", commit)
    patch = patch.replace("plans/greet/", f"plans/{slug}/")
    subprocess.run(
        ["git", "am", "-q", "-3"],
        cwd=repo,
        input=patch,
        text=True,
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_COMMITTER_NAME": AGENT[0],
            "GIT_COMMITTER_EMAIL": AGENT[1],
            "GIT_COMMITTER_DATE": f"{int(time.time()) + 60 * (n + 1)} +0000",
        },
    )


def test_every_copy_of_an_approval_moved_onto_another_plan_is_replayed(repo: Path) -> None:
    write_plan(repo, "other", PLAN.replace("world   # trailing", "there   # trailing"))
    _submitted(repo)
    edit_status(repo, "greet", "approved")
    _git(repo, "add", "-A")
    now = str(int(time.time())) + " +0000"  # a copy gets a committer date of its own
    _git(repo, "commit", "-q", "-m", "lgtm", who=ALICE, GIT_COMMITTER_DATE=now)
    hers = _git(repo, "rev-parse", "HEAD").strip()
    _once(repo)  # greet runs on her approval
    for n in range(3):  # brought again after each refusal: still nobody's decision here
        _moved_onto(repo, hers, "other", n)
        _once(repo)
        assert _refusal(repo, "other") == "E_APPROVAL_REPLAYED"
        assert "execution" not in head_plan(repo, "other")


def test_a_copy_made_in_the_second_of_the_original_is_replayed(repo: Path) -> None:
    """Round 107: the agent's ``commit -C`` of her approval onto another plan, in the second
    she made it, has equal author and committer dates (a fresh commit's shape); read in her
    original's pass it counted as hers. Another hand's copy is a copy whatever its dates."""
    write_plan(repo, "other", PLAN.replace("world   # trailing", "there   # trailing"))
    _submitted(repo)
    time.sleep(1.05 - time.time() % 1 + 0.05)  # a second after the freeze (round 104's rule)
    now = str(int(time.time())) + " +0000"
    edit_status(repo, "greet", "approved")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "lgtm", who=ALICE, GIT_COMMITTER_DATE=now)
    hers = _git(repo, "rev-parse", "HEAD").strip()
    edit_status(repo, "other", "approved")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-C", hers, who=AGENT, GIT_COMMITTER_DATE=now)
    copy = _git(repo, "log", "-1", "--format=%ae %at %ce %ct").split()
    assert copy[0] == ALICE[1] and copy[2] == AGENT[1] and copy[1] == copy[3], copy
    _once(repo)  # one pass reads both
    assert head_plan(repo)["plan"]["status"] == "completed"
    assert _refusal(repo, "other") == "E_APPROVAL_REPLAYED"
    assert "execution" not in head_plan(repo, "other")


def _status_of(repo: Path, slug: str) -> str | None:
    """A pass, then the status row's status of ``plans/<slug>`` (the controller's reading:
    the file keeps whatever a person last wrote in it)."""
    ctl = Controller(_config(repo))
    try:
        ctl.run_once()
        rows = {str(r["plan"]): r for r in ctl.status()}
    finally:
        ctl.close()
    return rows[f"plans/{slug}"].get("status")


def _reject_copied_onto(repo: Path, hers: str, slug: str) -> None:
    """The agent sets ``slug`` rejected in a commit re-made from ``hers`` (``commit -C``:
    her author, date and subject, the agent committing, a second later)."""
    edit_status(repo, slug, "rejected")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-C", hers, who=AGENT)


@pytest.mark.parametrize("where", ["line", "merged"])
def test_a_copy_of_a_rejection_onto_another_plan_withdraws_it(repo: Path, where: str) -> None:
    """Round 108 read her rejection of one plan, re-made by the agent on another a pass later
    (on the branch, or on a branch it merges), as withdrawing nothing; round 117 (fix117w):
    a copy of an entitled person's withdrawal withdraws, whatever hand brought it (the same
    shape is the forge's rebase-merge of a genuine one). In doubt a plan does not run: the
    other plan stays rejected and Bob's approval runs nothing. Her identity is still
    remembered, so no copy of it counts as her approval."""
    write_plan(repo, "other", PLAN.replace("world   # trailing", "there   # trailing"))
    write_plan(repo, "third", PLAN.replace("world   # trailing", "all   # trailing"))
    commit_all(repo, "add", ("Owner", "owner@example.com"))
    _once(repo)
    time.sleep(1.05 - time.time() % 1 + 0.05)
    edit_status(repo, "third", "rejected")
    commit_all(repo, "no", ALICE)
    hers = _git(repo, "rev-parse", "HEAD").strip()
    _once(repo)  # her rejection counts
    assert head_plan(repo, "third")["plan"]["status"] == "rejected"
    time.sleep(1.1)  # a pass later, with a committer date of its own
    if where == "merged":
        _git(repo, "checkout", "-q", "-b", "side")
        _reject_copied_onto(repo, hers, "other")
        _git(repo, "checkout", "-q", "main")
        (repo / "notes.md").write_text("x\n")
        commit_all(repo, "notes", AGENT)
        _git(repo, "merge", "-q", "--no-ff", "--no-edit", "side")
    else:
        _reject_copied_onto(repo, hers, "other")
    _once(repo)
    assert head_plan(repo, "other")["plan"]["status"] == "rejected"
    approve(repo, "other", who=("Bob", "bob@ops.example.com"))
    assert _status_of(repo, "other") == "rejected"  # his approval: "from rejected", ignored
    assert "execution" not in head_plan(repo, "other")


@pytest.mark.parametrize("hand", ["agent", "hers"])
def test_a_rejection_of_an_earlier_version_copied_by_another_hand_withdraws(
    repo: Path, hand: str
) -> None:
    """Round 109 read her rejection of v1 (on a branch never merged), brought onto v2 by the
    agent's cherry-pick, as withdrawing nothing (written before v2 came to be, committed by
    another hand); round 117 (fix117w): the forge's rebase-merge of a genuine review has that
    very shape, and ignoring it let Bob's approval run a rejected plan. A copy of an entitled
    person's withdrawal withdraws, by any hand: v2 is rejected, Bob's approval runs nothing."""
    owner = ("Owner", "owner@example.com")
    write_plan(repo)
    commit_all(repo, "add", owner)
    _once(repo)
    _git(repo, "checkout", "-q", "-b", "alice-no")
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "no", ALICE)
    hers = _git(repo, "rev-parse", "HEAD").strip()
    _git(repo, "checkout", "-q", "main")
    time.sleep(1.1)
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: everyone"))
    commit_all(repo, "v2", owner)
    _once(repo)  # v2 frozen, after her rejection was written
    time.sleep(1.1)
    _git(repo, "cherry-pick", hers, who=AGENT if hand == "agent" else ALICE)
    _once(repo)
    assert head_plan(repo)["plan"]["status"] == "rejected"
    approve(repo, who=("Bob", "bob@ops.example.com"))
    assert _status_of(repo, "greet") == "rejected"  # his approval: "from rejected", ignored
    assert "execution" not in head_plan(repo)


_CHILD = """\
plan:
  name: "Child"
  task: "A plan meant to be nested"
  status: draft
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "from the child"
    params: {who: child}
"""


def test_a_nested_plan_is_read_from_the_branch_never_the_working_tree(repo: Path) -> None:
    """Round 109: in local mode the pinned child was read from the working tree: never
    committed (only on disk), it started its approved parent, which git history alone then
    called unapproved; an uncommitted edit of it refused her approval. The controller reads
    it from its branch tip, in both modes."""
    from controller.plan import hashing, yamlio

    pinned = hashing.plan_hash(yamlio.read_yaml(_CHILD, "child").data)
    parent = PLAN + (
        f"  - id: 2\n    plan: {{path: plans/child, hash: '{pinned}'}}\n"
        '    why: "then the child"\n'
    )
    write_plan(repo, "child", _CHILD)  # on disk only, never committed
    write_plan(repo, "greet", parent)
    _git(repo, "add", "plans/greet")
    _git(repo, "commit", "-q", "-m", "parent")
    _once(repo)
    assert head_plan(repo)["plan"]["status"] == "invalid"  # no child on the branch
    commit_all(repo, "the child", AGENT)  # committed: a new pass reads it
    edit_status(repo, "greet", "pending_approval")
    commit_all(repo, "again", AGENT)
    _once(repo)
    assert head_plan(repo)["plan"]["status"] == "pending_approval"
    (repo / "plans" / "child" / "PLAN.yml").write_text(_CHILD.replace("child}", "evil}"))
    edit_status(repo, "greet", "approved")  # the uncommitted edit of the child decides nothing
    _git(repo, "add", "plans/greet")
    _git(repo, "commit", "-q", "-m", "approve", who=ALICE)
    _once(repo)
    done = head_plan(repo)
    assert done["plan"]["status"] == "completed", done.get("approval")


@pytest.mark.parametrize("route", ["commit", "cherry-pick"])
def test_under_committer_identity_a_withdrawal_is_its_committers(repo: Path, route: str) -> None:
    """Round 116 (``committer-withdrawal-read-as-replay``): under ``identity: committer``
    Alice's rejection of a commit Mallory authored, dated before the freeze, was
    ignored as a replay of an earlier version's withdrawal, and Bob's approval then ran the
    plan. The committer is who decides, and she decided when she committed it: it counts,
    the status row and the audit name her, and no approval of the version counts after."""
    mode, status = {"identity": "committer"}, "rejected"
    write_plan(repo)
    commit_all(repo, "add", ("Owner", "owner@example.com"))
    _once(repo, **mode)
    frozen_at = _git(repo, "log", "-1", "--format=%ct", "--", "plans/greet").strip()
    mallory = {"GIT_AUTHOR_DATE": f"@{int(frozen_at) - 60} +0000"}
    if route == "cherry-pick":  # written on a side branch a minute before the freeze
        _git(repo, "checkout", "-q", "-b", "side")
    edit_status(repo, "greet", status)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "no", who=MALLORY, **mallory)
    if route == "cherry-pick":
        picked = _git(repo, "rev-parse", "HEAD").strip()
        _git(repo, "checkout", "-q", "main")
        _git(repo, "cherry-pick", picked, who=ALICE, GIT_AUTHOR_NAME=MALLORY[0],
             GIT_AUTHOR_EMAIL=MALLORY[1])  # fmt: skip
    else:  # Mallory wrote it, Alice commits it: ``commit --amend`` keeps the author
        _git(repo, "commit", "-q", "--amend", "--no-edit", who=ALICE,
             GIT_AUTHOR_NAME=MALLORY[0], GIT_AUTHOR_EMAIL=MALLORY[1], **mallory)  # fmt: skip
    made = _git(repo, "log", "-1", "--format=%ae %ce %at").split()
    assert made[:2] == [MALLORY[1], ALICE[1]] and int(made[2]) < int(frozen_at), made
    _once(repo, **mode)
    assert head_plan(repo)["plan"]["status"] == status, _git(repo, "log", "--format=%s %ae %ce")
    approve(repo, who=("Bob", "bob@ops.example.com"))
    _once(repo, **mode)
    plan = head_plan(repo)
    assert "execution" not in plan, plan.get("execution")
    ctl = Controller(_config(repo, **mode))
    try:
        rows = {str(row["plan"]): row for row in ctl.status(reasons=True)}
    finally:
        ctl.close()
    notes = " ".join(map(str, rows["plans/greet"].get("notes") or []))
    assert "E_APPROVAL_REPLAYED" not in notes, notes
    assert f"{ALICE[1]} set status {status}" in notes, notes
    assert f"{MALLORY[1]} set status" not in notes, notes
