"""Two secrets whose texts overlap are hidden whole (round 129, atk129e; fix130e).

The redactor masked one match at a time: once one secret was ``***`` the other, sharing
characters with it, no longer matched, and a tool printing ``a + b[8:]`` left
``Pf4Kd9Lx2***`` (9 of 17 characters) in everything written. Every match of every form is
now found in the text as given and the spans are masked once, overlapping ones merged.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
import structlog

from controller.execution.executor import Engine
from controller.execution.secrets import Redactor
from tests.support.executor_kit import PY, journal_records, make_plan, run

O1 = "Pf4Kd9Lx2Mq7Rz5Wn"  # its last 8 characters start O2 and E2
O2 = "Mq7Rz5WnJb3Hs8Ty6Vc"
O3 = "Gt6Yh1Nb8Vc3Xz5Aq7Sw"  # its last 6 characters start O4 (shorter)
O4 = "5Aq7SwKe2Ru4Io9"
O8 = "nQ4Zx7Lc2Vb8Mk1Xp"  # starts with O1's last character
E2 = "Mq7Rz5WnYc5Ug3Fr1De"


def _windows(*values: str, n: int = 6) -> list[str]:
    return [v[i : i + n] for v in values for i in range(len(v) - n + 1)]


def _readable(text: str, *values: str) -> list[str]:
    return [w for w in _windows(*values) if w in text]


@pytest.mark.parametrize(
    ("a", "b", "shared"),
    [(O1, O2, 8), (O3, O4, 6), (O1, O8, 1), (O2, O1, 0)],
    ids=["longer-second", "longer-first", "one-char", "no-overlap"],
)
@pytest.mark.parametrize("order", ["given", "reversed"])
def test_overlapping_secrets_are_hidden_whole(a: str, b: str, shared: int, order: str) -> None:
    values = [a, b] if order == "given" else [b, a]
    redactor = Redactor(values)
    joined = a + b[shared:]
    for text, want in [
        (joined, "***" if shared else "******"),
        (f"denied: {joined}\n", "denied: ***\n" if shared else "denied: ******\n"),
        (json.dumps({"x": joined}), json.dumps({"x": "***" if shared else "******"})),
    ]:
        assert redactor.text(text) == want, text
    shown = redactor.data({"x": {joined: 1}, "y": [joined]})
    assert not _readable(json.dumps(shown), a, b), shown


def test_a_part_of_a_structured_secret_overlapping_another_is_hidden_whole() -> None:
    part = "Mq7Rz5WnDf6Gh2Jk9"
    redactor = Redactor([O1, json.dumps({"user": "app", "password": part})])
    assert redactor.text("x " + O1 + part[8:] + " y") == "x *** y"


def test_an_encoded_form_overlapping_a_written_one_is_hidden_whole() -> None:
    """The views read the text as given: a secret's percent-encoded form whose first
    characters are another secret's last ones (written plainly) is found too."""
    odd = "Mq7Rz5Wn/Jb3?Hs8#Ty6"
    redactor = Redactor([O1, odd])
    shown = redactor.text("url " + O1 + quote(odd, safe="")[8:] + " end")
    assert shown == "url *** end", shown


def test_overlapping_occurrences_of_one_secret_are_hidden_whole() -> None:
    """A secret whose end is its own start (``Xy7...Xy7``) printed twice sharing that part:
    both occurrences, as written and percent-encoded."""
    secret = "Xy7Ab3Qw9Xy7"
    redactor = Redactor([secret])
    assert redactor.text(secret + secret[3:]) == "***"
    odd = "Xy7/Ab3?Qw9#Xy7"
    redactor = Redactor([odd])
    assert redactor.text(quote(odd + odd[3:], safe="")) == "***"


def test_overlapping_secrets_printed_by_a_tool_are_hidden_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end, a file secret and a ``PLANGATE_SECRET_*`` one run together by a tool: in
    its output (PLAN.yml, the journal), its stderr (the ``E_TOOL_FAILED`` message),
    EXECUTION_LOG.md and the structured log."""
    monkeypatch.setenv("PLANGATE_SECRET_A", O1)
    monkeypatch.setenv("PLANGATE_SECRET_B", E2)
    joined = O1 + E2[8:]
    show = "import sys,json; d=json.load(sys.stdin); print(json.dumps({'x': d['a'] + d['b'][8:]}))"
    fail = "import sys,json; d=json.load(sys.stdin); sys.exit('denied: ' + d['a'] + d['b'][8:])"
    tools = {
        "show": {"kind": "exec", "argv": [PY, "-c", show]},
        "fail": {"kind": "exec", "argv": [PY, "-c", fail]},
    }
    params = {"a": "$<secrets.A>", "b": "$<secrets.B>"}
    actions = [
        {"id": 1, "tool": "show", "params": params, "outputs": [{"name": "x", "path": "$.json.x"}]},
        {"id": 2, "tool": "fail", "params": params},
    ]
    config, plan_file = make_plan(tmp_path, actions, tools)
    with structlog.testing.capture_logs() as logs:
        outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_TOOL_FAILED"
    assert not _readable(outcome.error.message, O1, E2), outcome.error.message
    written = [plan_file.read_text(), (plan_file.parent / "EXECUTION_LOG.md").read_text()]
    written += [p.read_text() for p in (tmp_path / "state").rglob("*.jsonl")]
    written.append(json.dumps(logs, default=str))
    for text in written:
        assert joined not in text
        assert not _readable(text, O1, E2), _readable(text, O1, E2)[:4]
    ends = {r["id"]: r for r in journal_records(config, plan_file) if r["t"] == "end"}
    assert ends[1]["outputs"] == {"x": "***"}, ends[1]["outputs"]
