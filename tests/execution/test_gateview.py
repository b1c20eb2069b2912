"""The gate's preview (controller/execution/gateview.py): bounded by what it can show.

Round 23: 200 nested actions each repeating a 40 KB output ten times made the pausing pass
spend 10 s resolving and redacting values the preview then cut to 2,000 characters. The
preview resolves one value up to VALUE_CHARS and all of them up to PREVIEW_CHARS; past
either, a value says it is not shown, and nothing larger is ever built."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from controller.execution import gateview
from controller.execution.secrets import Redactor
from controller.plan import refs


def _resolver(secret: str = "483920") -> Any:
    run = SimpleNamespace(redactor=Redactor([secret]))
    return gateview._Resolver(run)  # type: ignore[arg-type]


def _ctx(output: str) -> refs.Context:
    return refs.Context(outputs={1: {"o": output}}, results={1: {"o": output}}, max_chars=None)


def test_a_value_past_its_bound_is_not_resolved_whole() -> None:
    resolver = _resolver()
    value, ok = resolver.value("$<actions[1].outputs.o>" * 10, _ctx("x" * 40_000))
    assert not ok and value == f"(not shown: more than {gateview.VALUE_CHARS} characters)"
    assert resolver.left >= gateview.PREVIEW_CHARS - gateview.VALUE_CHARS  # charged no more


def test_the_whole_preview_stops_at_its_bound_and_says_so() -> None:
    resolver = _resolver()
    ctx = _ctx("y" * 60_000)
    shown = [resolver.value("$<actions[1].outputs.o>", ctx) for _ in range(40)]
    whole = [v for v, ok in shown if ok]
    assert all(v == "y" * 60_000 for v in whole)
    assert len(whole) * 60_000 <= gateview.PREVIEW_CHARS + 60_000
    assert shown[-1] == (
        f"(not shown: the preview resolved {gateview.PREVIEW_CHARS} characters already)",
        False,
    )


def test_a_resolved_value_is_redacted_and_a_secret_is_masked() -> None:
    resolver = _resolver("483920")
    ctx = gateview._masked(
        refs.Context(outputs={1: {"o": "pin=483920"}}, secret=lambda name: "483920")
    )
    assert resolver.value("$<actions[1].outputs.o>", ctx) == ("pin=***", True)
    assert resolver.value("$<secrets.PIN>", ctx) == ("***", True)


def test_a_value_the_plan_wrote_is_shown_as_written_even_equal_to_a_secret() -> None:
    """Round 64: the preview masked a literal param equal to a secret: a right guess of the
    plan's author read apart from a wrong one. What a reference filled in is still masked."""
    resolver = _resolver("483920")
    ctx = gateview._masked(
        refs.Context(
            outputs={1: {"o": "pin=483920"}},
            plan={"name": "483920", "task": "t", "hash": "h"},
            secret=lambda name: "483920",
        )
    )
    assert resolver.value("483920", ctx) == ("483920", True)
    assert resolver.value("$<plan.name>", ctx) == ("483920", True)
    written = {"a": "483920", "b": "$<actions[1].outputs.o>", "c": "483920 $<secrets.PIN>"}
    # round 67: a mixed string is built from its parts, the author's as written
    shown = {"a": "483920", "b": "pin=***", "c": "483920 ***"}
    assert resolver.value(written, ctx) == (shown, True)


def test_a_long_value_is_cut_with_its_length_and_digest() -> None:
    cut = gateview._cut("z" * 3000, gateview.GATE_VALUE_CHARS)
    assert isinstance(cut, str) and cut.startswith('"' + "z" * 1999 + "…")
    assert "3002 chars as JSON" in cut and "sha256:" in cut
    assert gateview._cut("short", gateview.GATE_VALUE_CHARS) == "short"


def test_the_plans_own_inputs_are_shown_as_written_even_equal_to_a_secret() -> None:
    """Round 65: ``$<inputs.g>`` read from the plan's own ``inputs:`` is its author's
    literal. A nested plan's inputs are read as its parent's values show them
    (``Context.shown_inputs``, round 67); one not shown there is masked."""
    resolver = _resolver("483920")
    ctx = gateview._masked(refs.Context(inputs={"g": "483920", "e": ""}))
    assert resolver.value("$<inputs.g>", ctx) == ("483920", True)
    assert resolver.value("483920$<inputs.e>", ctx) == ("483920", True)
    # a nested plan's (round 67: ``shown_inputs``, its parent's values as the preview shows
    # them): an input not shown there is the controller's, masked
    nested = gateview._masked(refs.Context(inputs={"g": "483920"}, shown_inputs={}))
    assert resolver.value("$<inputs.g>", nested) == ("***", True)
