# ruff: noqa: E501
"""Round 16, one bad entry and what is recorded: a plan folder name that git and the file
system accept (under NAME_MAX, 255 bytes) but whose URL-quoted form, the name of the plan's
journal folder (docs/execution.md: ``<state_dir>/journal/<plan id, URL-quoted>/<hex>.jsonl``),
is over 255 bytes. Round 11 (``test_round11_runs_names.py``) tried names *over* 255 bytes.

Variants (folder under ``plans/``; each a valid one-action plan, approved by Alice in one
commit together with the honest ``zz``):

- ``eacute``: 120 x ``é`` (240 bytes; quoted 720);
- ``percent``: 250 x ``%`` (250 bytes; quoted 750);
- ``spaces``: ``a`` + 200 spaces + ``b`` (202 bytes; quoted 602);
- ``sub-eacute``: ``x/`` + 120 x ``é`` (a nested folder, each component short enough).

Defence asserted: the pass that meets them exits 0 with no ``E_INTERNAL`` and the honest
``zz`` runs once in it; each variant either runs once or is refused with an ``E_`` code
before a start is committed (never a ``start`` commit for a run that can never happen: the
plan then sits ``executing`` for good, "the outcome waits").

**Broke** (round 16): the controller commits ``plangate: start`` for each, then fails to
create the journal (``File name too long``): nothing runs, the plan stays ``executing``
("waiting: the outcome waits: cannot write ...") with no code of its own, forever. With
``eacute`` among them the ``run --once`` pass dies: exit 1, ``plangate: E_INTERNAL: journal
.../plans%2F%C3%A9...jsonl: File name too long``, and ``zz``, started in that same pass,
does not run in it (it ran in the next pass).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

NAMES = {
    "eacute": "é" * 120,
    "percent": "%" * 250,
    "spaces": "a" + " " * 200 + "b",
    "sub-eacute": "x/" + "é" * 120,
}
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 16: a plan folder whose URL-quoted name is over 255 bytes: start committed, journal not creatable, plan stuck executing",
)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid, name in NAMES.items():
        lab.write(name, plan_text(vid))
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    for name in [*NAMES.values(), "zz"]:
        lab.set_status(name, "approved")
    lab.commit("approve", ALICE)
    first = lab.run(check=False)
    lab.first = (first.returncode, "E_INTERNAL" in first.stderr, len(lab.calls("zz")))  # type: ignore[attr-defined]
    lab.run(check=False)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r16-runs-statenames", lambda root: _build(root / "names"))


# round 16: broke (BROKE was its strict xfail); fixed since: a journal folder name too long
# for a file system is the plan id's digest (execution.journal.journal_path)
def test_the_pass_survives_and_the_bystander_runs_in_it(lab: Lab) -> None:
    assert lab.first == (0, False, 1)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", list(NAMES))  # round 16: BROKE, fixed since (above)
def test_no_start_is_committed_for_a_run_that_cannot_happen(lab: Lab, vid: str) -> None:
    name = NAMES[vid]
    ran = len(lab.calls(vid))
    assert ran <= 1
    if ran == 0:
        assert not lab.started(name), lab.status().get(f"plans/{name}")
        assert "E_" in lab.codes(name)


def test_the_bystander_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
