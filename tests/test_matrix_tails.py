"""``tests/matrix_tails.txt`` names tests that exist: a renamed test would otherwise leave its
whole matrix in the default suite, or a line would silently name nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_line_names_a_test_function() -> None:
    lines = [
        line.strip()
        for line in (ROOT / "tests" / "matrix_tails.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines and len(lines) == len(set(lines))
    for line in lines:
        module, _, name = line.partition("::")
        source = (ROOT / module).read_text()
        assert re.search(rf"\ndef {re.escape(name)}\(", source), f"{line}: no such test"
