"""Round 59 (runs): output queries the RFC 9535 grammar does not allow.

The attack: a query a reviewer cannot read by the RFC, because the RFC has no reading for it
(an index with a leading zero, ``-0``, a fullwidth or Arabic-Indic digit, ``1_0``, ``+1``,
an index past I-JSON's range, ``True``, a non-singular query compared, a function result
used where its type is not allowed, a lone surrogate escape, ``\\U``, ``.1``, a trailing
``..``, a filter without ``?``). docs/plan-format.md: outputs are "an RFC 9535 JSONPath
query"; round 3's rule: what the engine cannot read as documented does not validate. A
parser that reads such text its own way (Python's ``int()`` takes ``١``, ``１``, ``1_0``,
``+1``, ``01``) lets the agent's query select something no reviewer can predict.

Lab: the shared ``jp`` lab of ``test_round59_runs_jsonsemantics.py`` (one plan per variant,
action 1 echoes ``{"items": [...], "a": [1, 2, 3]}`` with output ``o`` the query, action 2
gets ``$<actions[1].outputs.o>``).

Asserted per variant: the plan is ``invalid`` (refused at validation, the query's location
named) and neither action ran.

Broke: none. Held: all 18 (each ``E_SCHEMA_INVALID`` at the output's path).
"""

from __future__ import annotations

from typing import Any

import pytest
from advkit import Lab, cases
from test_round59_runs_jsonsemantics import SYNTAX, jp_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return jp_lab(tmp_path_factory)


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(SYNTAX), list(SYNTAX), BROKEN))
def test_query_outside_the_grammar_is_refused(lab: Lab, vid: str) -> None:
    status = lab.plan(vid)["plan"]["status"]
    ran = lab.calls(f"{vid}-1") + lab.calls(f"{vid}-2")
    assert status == "invalid", (status, ran, lab.codes(vid)[-1200:])
    assert ran == [], ran
