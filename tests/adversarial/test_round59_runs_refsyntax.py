"""Round 59 (runs): ``$<...>`` reference paths written with digits no doc names.

The attack: docs/plan-format.md "References": ``$<actions[N].outputs.NAME>`` with ``N`` an
action id, and a path of ``.name``, ``[index]``, ``['key']``. The agent writes ``N`` or an
index as an Arabic-Indic ``١``, a fullwidth ``１``, ``+1``, ``01``, `` 1`` or ``0_0``: a
reader built on Python's ``int()`` takes every one as a number, so the reference silently
reads action 1's output while ``show`` and the reviewer see text that names no action.

Lab: the shared ``jp`` lab of ``test_round59_runs_jsonsemantics.py``: action 1 echoes
``[5, 6]`` (output ``o`` is ``$.json.echo.data``), action 2's param ``v`` is the reference.

Asserted per variant: the plan is refused at validation (``invalid``, ``E_REF_INVALID`` or
``E_REF_UNKNOWN``) and neither action ran. ``ref-zero-lead-id`` (``actions[01]``) is
accepted and reads action 1, which is how a reviewer reads it too (``show`` prints the
reference as written): asserted as such, not a break.

Broke: none. Held: all 7 (every odd digit refused ``E_REF_INVALID``; ``01`` reads 1).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from advkit import Lab, cases
from test_round59_runs_jsonsemantics import REFS, jp_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return jp_lab(tmp_path_factory)


BROKEN: dict[str, Any] = {}


ODD = [v for v in REFS if v != "ref-zero-lead-id"]


@pytest.mark.parametrize("vid", cases(ODD, ODD, BROKEN))
def test_reference_with_odd_digits_is_refused(lab: Lab, vid: str) -> None:
    status = lab.plan(vid)["plan"]["status"]
    ran = lab.calls(f"{vid}-1") + lab.calls(f"{vid}-2")
    codes = lab.codes(vid)
    assert status == "invalid", (status, ran, codes[-1200:])
    assert "E_REF_INVALID" in codes or "E_REF_UNKNOWN" in codes, codes[-1200:]
    assert ran == [], ran


def test_leading_zero_id_reads_action_1(lab: Lab) -> None:
    got = lab.calls("ref-zero-lead-id-2")
    assert len(got) == 1 and json.loads(got[0]["stdin"])["v"] == [5, 6], got
