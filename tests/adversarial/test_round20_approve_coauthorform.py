"""Round 20, self-approval: a ``Co-authored-by:`` trailer in a form git itself reads as that
person, but plangate's reader does not.

docs/approvals.md: the history index records "every ``Co-authored-by:`` person (any spelling
of the key, anywhere in the message)" of a commit that changed a plan's content; earlier
rounds tried the key's case and separators, an address's spellings, encodings, CRLF. Here
the *value* takes another shape. Config: the bench's (approvers Alice and
``*@ops.example.com``; one approval). The agent commits each plan with the trailer below in
its message (Bob, an approver, co-wrote it); the controller freezes it; Bob approves.

- ``cont``: a folded trailer, ``Co-authored-by: Bob`` then `` <bob@ops.example.com>`` on a
  continuation line (git's trailer grammar; ``git log --format='%(trailers:unfold)'`` and
  ``git interpret-trailers --parse`` print ``Co-authored-by: Bob <bob@ops.example.com>``).
- ``cont-key``: ``Co-authored-by:`` with the whole value on the continuation line.
- ``cont-tab``: as ``cont``, the continuation indented by a tab.
- ``multi``: two people on one line, ``Carl <carl@example.org>, Bob <bob@ops.example.com>``.
- ``mailto``: ``Bob <mailto:bob@ops.example.com>``.
- ``angle-name``: ``<Bob> bob@ops.example.com``.
- ``bare``: a bare ``bob@ops.example.com`` (no angle brackets).
- ``quoted-lt``: ``"Bob <x>" <bob@ops.example.com>`` (an RFC 5322 name-addr whose quoted
  display name holds ``<x>``; ``email.utils.parseaddr`` gives ``bob@ops.example.com``).
- ``name-lt``: ``B<o>b <bob@ops.example.com>``.
- ``crlf-cont``: ``cont`` with a CRLF line end before the continuation.
- ``semicolon``: ``Carl <carl@example.org>; Bob <bob@ops.example.com>``.
- ``suffix`` (``... <bob@ops.example.com> (reviewer)``), ``nospace`` (``Bob<bob@...>``),
  ``double`` (``<bob@...>>``), ``two-angles`` (``<bob@...> <carl@...>``).
- ``ctl``: ``Co-authored-by: Bob <bob@ops.example.com>`` (control).
- ``audit-cont``: a fresh clone's ``plangate audit --json`` must not call Bob's start of
  ``cont`` a valid approval.

Defence: Bob's approval is ``E_SELF_APPROVAL``, nothing runs.

Results: ``bare``, ``suffix``, ``nospace``, ``double``, ``two-angles`` and ``ctl`` held
(``E_SELF_APPROVAL``). Broke (strict xfails): ``cont``, ``cont-key``, ``cont-tab``,
``crlf-cont``, ``multi``, ``semicolon``, ``mailto``, ``angle-name``, ``quoted-lt`` and
``name-lt`` started on Bob's approval and ran once (it reads the first ``<...>`` of the
first line, or nothing, as the co-author); the audit calls the ``cont`` start
``approval_valid: true``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, BOB, Lab, plan_text
from test_round2_execution_kit import shared

TRAILERS = {
    "cont": "Co-authored-by: Bob\n <bob@ops.example.com>",
    "cont-key": "Co-authored-by:\n Bob <bob@ops.example.com>",
    "cont-tab": "Co-authored-by: Bob\n\t<bob@ops.example.com>",
    "multi": "Co-authored-by: Carl <carl@example.org>, Bob <bob@ops.example.com>",
    "mailto": "Co-authored-by: Bob <mailto:bob@ops.example.com>",
    "angle-name": "Co-authored-by: <Bob> bob@ops.example.com",
    "bare": "Co-authored-by: bob@ops.example.com",
    "quoted-lt": 'Co-authored-by: "Bob <x>" <bob@ops.example.com>',
    "name-lt": "Co-authored-by: B<o>b <bob@ops.example.com>",
    "crlf-cont": "Co-authored-by: Bob\r\n <bob@ops.example.com>",
    "semicolon": "Co-authored-by: Carl <carl@example.org>; Bob <bob@ops.example.com>",
    "suffix": "Co-authored-by: Bob <bob@ops.example.com> (reviewer)",
    "nospace": "Co-authored-by: Bob<bob@ops.example.com>",
    "double": "Co-authored-by: Bob <bob@ops.example.com>>",
    "two-angles": "Co-authored-by: Bob <bob@ops.example.com> <carl@example.org>",
    "ctl": "Co-authored-by: Bob <bob@ops.example.com>",
}


def _mark(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 20: {what}")


#: round 20: all broke; fixed since: a Co-authored-by value is unfolded as git does and
#: credits every address it names (each <...> and each word with an @, mailto: dropped)
FOUND = {
    "cont": _mark("a folded Co-authored-by (git unfolds it to Bob) is not read"),
    "cont-key": _mark("a Co-authored-by whose value is on the continuation line is not read"),
    "cont-tab": _mark("a folded Co-authored-by (tab continuation) is not read"),
    "multi": _mark("a second person on one Co-authored-by line is not read"),
    "mailto": _mark("Co-authored-by naming <mailto:address> is not read"),
    "angle-name": _mark("Co-authored-by '<Bob> address' is not read"),
    "quoted-lt": _mark(
        "a quoted display name holding '<x>' hides the address (RFC 5322 name-addr)"
    ),
    "name-lt": _mark("a display name holding '<o>' hides the address"),
    "crlf-cont": _mark("a folded Co-authored-by with a CRLF line end is not read"),
    "semicolon": _mark("a second person after ';' on one Co-authored-by line is not read"),
    "audit-cont": _mark("the audit calls Bob's approval of his co-written plan valid"),
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid, trailer in TRAILERS.items():
        lab.write(vid, plan_text(vid))
        lab.commit(f"add {vid}\n\n{trailer}\n", AGENT)
    lab.run()  # freeze
    for vid in TRAILERS:
        lab.approve(vid, BOB)
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    (root / "audit.json").write_text(lab.cli("audit", "--json", cwd=clone).stdout)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-coauthorform", _build)


def test_git_reads_the_folded_trailer_as_bob(lab: Lab) -> None:
    out = lab.git(
        "log", "--format=%(trailers:key=Co-authored-by,unfold,valueonly)", "--author=agent"
    )
    assert out.count("Bob <bob@ops.example.com>") >= 4, out


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in TRAILERS])
def test_a_co_author_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param("audit-cont", marks=BROKEN.get("audit-cont", []))])
def test_the_audit_finds_no_valid_self_approval(lab: Lab, vid: str) -> None:
    import json

    report = json.loads((lab.root / "audit.json").read_text())
    valid = [
        e for e in report.get("executions", []) if e["plan"] == "plans/cont" and e["approval_valid"]
    ]
    assert valid == [], valid
