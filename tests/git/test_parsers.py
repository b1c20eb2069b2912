"""The scan's parsing children: the facts of each plan version are what this process finds,
batch after batch, also when a child fails (its part is parsed here)."""

from __future__ import annotations

from controller.git.planstate import facts_of
from controller.git.prefetch import _Parsers

PLAN = """plan:
  name: "p{n}"
  status: {status}
frozen: {{hash: "h{n}", risk: low, estimate: {{minutes: {n}}}}}
actions:
  - id: 1
    tool: greet
    params: {{n: {n}}}
"""

ODD = [
    b"plan: [unclosed",
    b"\xff\xfe not utf-8",
    b"- a list\n",
    b"a: &x 1\nb: *x\n",
    b"plan: {status: approved}\nfrozen: {estimate: {x: 9007199254740993.0}}\n",
    b"x" * 300,
    b"",
]


def _blobs(count: int) -> list[bytes]:
    statuses = ["pending_approval", "approved", "executing", "completed"]
    made = [PLAN.format(n=n, status=statuses[n % len(statuses)]).encode() for n in range(count)]
    return made + ODD


def test_children_find_what_this_process_finds_batch_after_batch() -> None:
    parsers = _Parsers(2)
    try:
        for batch in (_blobs(50), _blobs(7)[::-1], ODD):
            assert parsers.facts(batch, 200) == [facts_of(b, 200) for b in batch]
        assert all(proc is not None for proc in parsers.procs)
    finally:
        parsers.close()


def test_a_child_that_fails_has_its_part_parsed_here() -> None:
    parsers = _Parsers(2)
    try:
        first = parsers.procs[0]
        assert first is not None
        first.kill()
        first.wait()
        batch = _blobs(20)
        assert parsers.facts(batch, 200) == [facts_of(b, 200) for b in batch]
        assert parsers.procs[0] is None and parsers.procs[1] is not None
        assert parsers.facts(batch, 200) == [facts_of(b, 200) for b in batch]
    finally:
        parsers.close()
