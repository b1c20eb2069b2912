"""docs/errors.md documents every error code the controller can emit, and only those.

A code counts as emitted when it appears in a string literal of ``controller/**/*.py`` (an
error class's ``code``, a ``Problem``, a note such as ``"E_HISTORY_REWRITTEN: ..."``). A code
counts as documented when the page gives it a heading (``### E_CODE``) or a table row whose
first cell is the code. Either side going stale fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "errors.md"
CODE = re.compile(r"\bE_[A-Z][A-Z_]*[A-Z]\b")
HEADING = re.compile(r"^#{2,6}\s+`?(E_[A-Z][A-Z_]*[A-Z])`?\s*$")
ROW = re.compile(r"^\|\s*`?(E_[A-Z][A-Z_]*[A-Z])`?\s*\|")


def emitted_codes() -> dict[str, str]:
    """Each code found in a string literal of the package, with one module that holds it."""
    found: dict[str, str] = {}
    for module in sorted((ROOT / "controller").rglob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"), str(module))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for code in CODE.findall(node.value):
                    found.setdefault(code, str(module.relative_to(ROOT)))
    return found


def documented_codes(text: str) -> list[str]:
    """The codes the page documents: its headings and its table rows that open with a code."""
    lines = text.splitlines()
    return [m.group(1) for line in lines if (m := HEADING.match(line) or ROW.match(line))]


def test_the_scan_finds_the_error_classes() -> None:
    """A guard on the scan itself: a few codes every version of plangate emits."""
    codes = emitted_codes()
    assert {"E_YAML_PARSE", "E_SELF_APPROVAL", "E_TOOL_FAILED", "E_GIT"} <= codes.keys()


def test_every_emitted_code_is_documented() -> None:
    documented = set(documented_codes(PAGE.read_text(encoding="utf-8")))
    missing = {code: where for code, where in emitted_codes().items() if code not in documented}
    assert not missing, f"codes the controller emits but docs/errors.md lacks: {missing}"


def test_every_documented_code_is_emitted() -> None:
    text = PAGE.read_text(encoding="utf-8")
    emitted = emitted_codes()
    stale = sorted(set(documented_codes(text)) - emitted.keys())
    assert not stale, f"docs/errors.md documents codes the controller never emits: {stale}"
    named = sorted(set(CODE.findall(text)) - emitted.keys())
    assert not named, f"docs/errors.md names codes the controller never emits: {named}"


def test_each_code_is_documented_once() -> None:
    documented = documented_codes(PAGE.read_text(encoding="utf-8"))
    twice = sorted({code for code in documented if documented.count(code) > 1})
    assert not twice, f"documented more than once in docs/errors.md: {twice}"
