"""The regex dialects, each with its own meaning (controller.plan.regexes, round 55)."""

from __future__ import annotations

import pytest

from controller.plan import regexes

# (I-Regexp, value, match() holds, search() holds)
IREGEXP = [
    ("^ab$", "ab", False, False),
    ("^ab$", "^ab$", True, True),
    ("^b", "b-first", False, False),
    ("^b", "a^b", False, True),
    ("b$", "ab\n", False, False),
    ("b$", "ab$", False, True),
    ("ab", "ab\n", False, True),
    ("a.b", "a\rb", False, False),
    ("a.b", "a\nb", False, False),
    ("a.b", "axb", True, True),
    ("[^$]+", "a$", False, True),
    ("[a&&b]", "&", True, True),
    ("\\p{Lu}+", "AB", True, True),
    ("\\p{Lu}+", "ab", False, False),
    ("a|b", "b", True, True),
    ("x{2,3}", "xxxx", False, True),
]


@pytest.mark.parametrize(("pattern", "value", "whole", "part"), IREGEXP)
def test_iregexp_means_what_rfc_9485_says(
    pattern: str, value: str, whole: bool, part: bool
) -> None:
    assert regexes.is_iregexp(pattern)
    compiled = regexes.iregexp(pattern)
    assert (compiled.fullmatch(value) is not None) is whole
    assert (compiled.search(value) is not None) is part


@pytest.mark.parametrize("pattern", ["\\d+", "(?i)ab", "a+?", "\\1", "a{,2}"])
def test_what_is_no_iregexp_is_refused(pattern: str) -> None:
    assert not regexes.is_iregexp(pattern)


# (ECMA-262 pattern, value, search holds)
ECMA = [
    ("^[a-z-]+$", "web\n", False),
    ("^[a-z-]+$", "web-a", True),
    ("^\\d+$", "\u0661\u0662", False),
    ("^\\d+$", "12", True),
    ("^\\w+$", "w\u00e9b", False),
    ("^\\w+$", "a_1", True),
    ("^\\S+$", "a\ufeffb", False),
    ("^\\s$", "\ufeff", True),
    ("^[\\s]$", "\u00a0", True),
    ("^\\D$", "\u0661", True),
    ("a.c", "a\u2028c", False),
    ("a.c", "a\rc", False),
    ("a.c", "a\u00e9c", True),
    ("^.$", "\U0001f600", False),  # two code units, not u mode
    ("^..$", "\U0001f600", True),
    ("^\\uD83D\\uDE00$", "\U0001f600", True),
    ("^\\u00e9$", "\u00e9", True),
    ("^\\x41$", "A", True),
    ("\\bfoo\\b", "\u00e9foo", True),  # \b: ECMA word characters only
    ("\\Bfoo", "afoo", True),
    ("[\\b]", "\x08", True),
    ("a{,2}", "a{,2}", True),  # no quantifier: literal in ECMA
    ("^a{2}$", "aa", True),
    ("[]", "a", False),
    ("[^]", "\n", True),
    ("^[^a]$", "\n", True),
    ("x]", "x]", True),
    ("^$", "\n", False),
    ("(?=a)a(?!b)", "ac", True),
    ("\\/", "/", True),
]


@pytest.mark.parametrize(("pattern", "value", "holds"), ECMA)
def test_ecma_pattern_means_what_ecma_262_says(pattern: str, value: str, holds: bool) -> None:
    found = regexes.ecma(pattern).search(regexes.code_units(value))
    assert (found is not None) is holds


@pytest.mark.parametrize(
    "pattern",
    [
        "(?i)a",
        "\\1",
        "a*+",
        "a**",
        "\\p{L}",
        "(?<n>a)",
        "[\\D]",
        "\\cA",
        "\\A",
        "[a",
        "*a",
        "\\u12",
    ],
)
def test_ecma_constructs_without_a_translation_are_refused(pattern: str) -> None:
    assert regexes.ecma_problem(pattern) is not None


def test_a_valid_ecma_pattern_has_no_problem() -> None:
    assert regexes.ecma_problem("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$") is None


SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "pattern": "^[a-z-]+$"}},
    "patternProperties": {"^x-\\d$": {"type": "integer"}},
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("params", "valid"),
    [
        ({"name": "web"}, True),
        ({"name": "web\n"}, False),
        ({"x-1": 1}, True),
        ({"x-1": "one"}, False),  # patternProperties' schema applies
        ({"x-\u0661": 1}, False),  # not a digit in ECMA: an additional property
        ({"x-1\n": 1}, False),
    ],
)
def test_params_schema_patterns_are_ecma_everywhere(params: dict[str, object], valid: bool) -> None:
    from controller.plan.plans import params_errors

    assert (not list(params_errors(params, SCHEMA))) is valid
