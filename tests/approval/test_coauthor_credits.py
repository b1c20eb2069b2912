"""A ``Co-authored-by:`` credit names its person anywhere in a commit's message (round 128,
coauthor-credit-read-only-at-line-start): in the subject, after ``> `` or ``- ``, after other
words, behind a no-break or zero-width space, in any case and spelling of the key. The one
reader (:func:`controller.approval.approvals.coauthors`, its key found by
:func:`~controller.approval.approvals.credit_keys`) is what the history index, the controller
and the fresh-clone audit read, so a person so credited is an author of what the commit
changed: she may not approve it, and she may withdraw it. Text the controller or an agent's
MCP ``submit`` quotes into a message has every key's colon escaped, so it credits nobody.

Real git and the real controller on a repo (tests/adversarial/test_round128_approve_atk128a.py
is the attacker's suite through the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.approval.approvals import coauthors
from controller.git.message import commit_message, one_line
from tests.approval.test_approval_trust import _refusal, _row, _submitted
from tests.approval.test_audit import _audit, _forge_start
from tests.support.gitkit import AGENT, ALICE, MALLORY, approve, commit_all, edit_status

CREDIT = "Co-authored-by: Alice <alice@example.com>"

#: Messages crediting Alice (as ``git commit -m`` takes them) that the line-start reader missed.
PLACES = {
    "subject": f"add greet {CREDIT}",
    "subject-only": CREDIT,
    "quoted": f"add greet\n\n> {CREDIT}\n",
    "bullet": f"add greet\n\n- {CREDIT}\n",
    "inline": f"add greet\n\nwritten with {CREDIT} over a call\n",
    "nbsp": f"add greet\n\n\u00a0{CREDIT}\n",
    "zwsp": f"add greet\n\n\u200b{CREDIT}\n",
    "fullwidth-key": "add greet\n\n\uff23\uff4f-authored-by\uff1a Alice <alice@example.com>\n",
    "hidden-in-key": "add greet\n\nCo-author\u200bed-by: Alice <alice@example.com>\n",
    "blanks-in-key": "add greet\n\nco authored by : Alice <alice@example.com>\n",
    "second-on-line": f"add greet\n\nCo-authored-by: Bob <bob@example.com> {CREDIT}\n",
}
#: What the line-start reader read already, kept.
KEPT = {
    "trailer": f"add greet\n\n{CREDIT}\n",
    "indented": f"add greet\n\n   {CREDIT}\n",
    "tab": f"add greet\n\n\t{CREDIT}\n",
    "upper": "add greet\n\nCO-AUTHORED-BY: Alice <alice@example.com>\n",
    "folded": "add greet\n\nCo-authored-by: Alice\n <alice@example.com>\n",
    "tab-in-value": "add greet\n\nCo-authored-by:\tAlice\u00a0<alice@example.com>\n",
}


def _git_split(message: str) -> tuple[str, str]:
    """The message as git's ``%s`` and ``%b`` give it: the first paragraph on one line."""
    head, _, rest = message.partition("\n\n")
    return " ".join(head.split("\n")), rest


@pytest.mark.parametrize("name", [*PLACES, *KEPT])
def test_a_credit_anywhere_in_the_message_names_its_person(name: str) -> None:
    assert "alice@example.com" in coauthors({**PLACES, **KEPT}[name])


@pytest.mark.parametrize("name", [*PLACES, *KEPT])
def test_the_message_read_is_subject_and_body(name: str) -> None:
    from controller.approval.approvals import message_of

    message = {**PLACES, **KEPT}[name]
    assert "alice@example.com" in coauthors(message_of(*_git_split(message)))


@pytest.mark.parametrize(
    "text",
    [
        "add greet\n\nauthored by Alice <alice@example.com>",
        "add greet\n\nCo-authored-by Alice <alice@example.com>",  # no colon: no key
        "add greet\n\nReviewed-by: Alice <alice@example.com>",
    ],
)
def test_no_key_credits_nobody(text: str) -> None:
    assert coauthors(text) == []


def test_the_keys_span_is_of_the_line_as_written() -> None:
    from controller.approval.approvals import credit_keys

    line = "x \u200b\uff23o-authored-by\uff1a Alice"
    [(start, end)] = credit_keys(line)
    assert line[start:end] == "\uff23o-authored-by\uff1a"


@pytest.mark.parametrize("name", list(PLACES))
def test_quoted_text_in_a_controller_message_credits_nobody(name: str) -> None:
    from controller.git.message import defused

    quoted = PLACES[name]
    assert coauthors(one_line(quoted)) == []
    assert coauthors(defused(quoted.replace("\n", " "))) == []
    message = commit_message("plangate: fail plans/greet", f"tool said: {quoted}", [("Plan", "x")])
    assert coauthors(message) == []
    assert "alice@example.com" in message  # kept as text a reader sees


@pytest.mark.parametrize("name", ["subject", "quoted", "inline", "nbsp"])
def test_a_co_author_credited_anywhere_cannot_approve(repo: Path, name: str) -> None:
    _submitted(repo, message=PLACES[name])
    approve(repo, who=ALICE)
    assert _row(repo)["status"] == "pending_approval"
    assert _refusal(repo) == "E_SELF_APPROVAL"


def test_a_co_author_credited_in_the_subject_may_withdraw(repo: Path) -> None:
    _submitted(repo, message="add greet Co-authored-by: Mallory <mallory@example.com>")
    edit_status(repo, "greet", "rejected")
    commit_all(repo, "withdraw it", MALLORY)
    row = _row(repo)
    assert row["status"] == "rejected", row


def test_the_audit_reads_a_credit_in_the_subject(repo: Path) -> None:
    _submitted(repo, AGENT, message=PLACES["subject"])
    _forge_start(repo, ALICE)
    code, report = _audit(repo)
    assert code == 1
    assert report["executions"][0]["code"] == "E_SELF_APPROVAL"
