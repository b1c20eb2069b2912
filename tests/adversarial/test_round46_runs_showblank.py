"""Round 46, what ``show`` displays vs what runs: a param value holding a blank that is not the
plain space.

``plangate show`` escapes the characters a reviewer cannot see (``\\u200b``, ``\\u2028``,
``\\u202e``, ``\\xad``, ``\\ufeff``, control characters), and docs/plan-format.md refuses "a
blank other than the plain space (U+00A0, U+3000, ...)" in a plan's path because it "could
pass for another plan in front of a reviewer". In a param VALUE, those blanks are printed raw:
the reviewer reads ``"John Smith"`` (or ``"rm -rf /tmp/x /"``) where the tool gets
``"John\\u00a0Smith"``, another string to every exact-match lookup, allow list or program.

One plan (no controller run needed: ``show`` is the reviewer's view), action 1 ``rec`` with
one param per character, ``pXXXX: "a<char>b"``; ``plangate show`` of it. Asserted per
character: the line of that param does not hold the character raw (it is written as an
escape, as ``show`` does for U+200B).

Held: U+200B, U+2028, U+2060, U+FEFF, U+00AD, U+3164 (escaped). Broke (round 46): U+00A0,
U+1680, U+2000, U+2007, U+200A, U+202F, U+205F, U+3000 (every Unicode space separator but the
plain space): printed raw, indistinguishable from a space in the reviewer's terminal.

Fixed (round 46): every space separator (Zs) but the plain space is one of
``display.HIDDEN``'s characters, so everything a person reads (``show``, ``status``,
messages, the log) writes it as an escape, and the controller's YAML writer escapes it too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab
from test_round2_execution_kit import shared

HELD = [0x200B, 0x2028, 0x2060, 0xFEFF, 0x00AD, 0x3164]
BROKE = [0x00A0, 0x1680, 0x2000, 0x2007, 0x200A, 0x202F, 0x205F, 0x3000]


def _build(root: Path) -> Lab:
    lab = Lab(root / "sb")
    params = "".join(f'      p{c:04x}: "a\\U{c:08x}b"\n' for c in HELD + BROKE)
    lab.write(
        "blanks",
        "plan:\n  name: blanks\n  task: t\n  status: draft\navailable_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n    why: w\n    params:\n" + params,
    )
    result = lab.cli("show", "plans/blanks", cwd=lab.repo)
    lab.shown = result.stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r46-showblank", _build)


@pytest.mark.parametrize(
    "code",
    [pytest.param(c, id=f"U+{c:04X}") for c in HELD]
    + [pytest.param(c, id=f"U+{c:04X}") for c in BROKE],
)
def test_show_writes_a_blank_that_is_not_a_space_as_an_escape(lab: Lab, code: int) -> None:
    shown: str = lab.shown  # type: ignore[attr-defined]
    lines = [line for line in shown.splitlines() if f"param p{code:04x} " in line]
    assert lines, shown[-2000:]
    assert chr(code) not in lines[0], f"show printed {lines[0]!r}"
