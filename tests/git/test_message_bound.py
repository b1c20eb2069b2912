"""The controller's commit messages are bounded (round 38, issue 11): a failure's error in
the body (or a batch's ``Plan-Note:``) is cut as PLAN.yml and the journal cut it, and no
message passes 64 KiB."""

from __future__ import annotations

from controller.git.message import BODY_CHARS, MAX_MESSAGE_BYTES, commit_message, note


def test_a_long_body_is_cut() -> None:
    body = "E_VERIFY_FAILED: " + "; ".join(
        f"$.json.t is {i} (expected equals 0)" for i in range(9000)
    )
    message = commit_message("plangate: fail plans/x", body, [("Plan", "plans/x")])
    assert len(message.encode()) < 3 * BODY_CHARS
    subject, _, rest = message.partition("\n\n")
    assert subject == "plangate: fail plans/x"
    text, _, trailers = rest.partition("\n\n")
    assert text.startswith("E_VERIFY_FAILED: $.json.t is 0") and text.endswith("\u2026")
    assert trailers == "Plan: plans/x\n"


def test_a_short_body_is_kept_whole() -> None:
    message = commit_message("s", "it failed:\nexit 3", [("Plan", "p")])
    assert message == "s\n\nit failed: exit 3\n\nPlan: p\n"


def test_the_cut_follows_redaction_and_keeps_a_mask() -> None:
    body = "x" * (BODY_CHARS - 2) + "SECRET" + "y" * 50
    message = commit_message("s", body, [], lambda t: t.replace("SECRET", "***"))
    assert "SECRET" not in message and "***\u2026" in message


def test_no_message_passes_the_bound_with_long_trailers() -> None:
    trailers = [("Plan", "p" * 20_000), ("Approved-By", "a" * 40_000)]
    message = commit_message("s", "b" * 100_000, trailers)
    assert len(message.encode()) <= MAX_MESSAGE_BYTES
    assert message.endswith("a" * 40_000 + "\n")


def test_note_is_one_line_and_cut() -> None:
    assert note("a\nb") == "a b"
    assert len(note("z" * 10_000)) == BODY_CHARS + 1


def test_identity_trailers_are_not_redacted() -> None:
    """Round 43: ``Approved-By:``/``Aborted-By:`` name a git identity already in history;
    round 45: the subject and the trailers taken from git (a path, a hash, a commit id) are
    not redacted either; the body and every other trailer are (and every value is still one
    line)."""
    from controller.git.message import GIT_TRAILERS, IDENTITY_TRAILERS, commit_message

    def redact(text: str) -> str:
        return text.replace("carol", "***")

    message = commit_message(
        "plangate: start plans/carol",
        "carol ran",
        [
            ("Plan", "plans/carol"),
            ("Approved-By", "carol@ops.example.com"),
            ("Aborted-By", "carol@ops.example.com\nPlan-Status: x"),
            ("Plan-Note", "carol said"),
        ],
        redact,
    )
    assert {"Approved-By", "Aborted-By"} == IDENTITY_TRAILERS <= GIT_TRAILERS
    assert "Approved-By: carol@ops.example.com\n" in message
    assert "Aborted-By: carol@ops.example.com\\nPlan-Status: x\n" in message
    assert "Plan: plans/carol\n" in message and message.startswith("plangate: start plans/carol")
    assert "*** ran" in message and "Plan-Note: *** said\n" in message
