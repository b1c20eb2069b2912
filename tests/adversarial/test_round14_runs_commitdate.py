"""Round 14, stall every plan: one agent commit whose author/committer header holds a date
Python cannot represent.

docs/threat-model.md: commit metadata (names, emails, dates) is untrusted; "one commit stops
every pass" was closed in round 11 for names git cannot hold and for a header git cannot
print ("an unprintable commit reads as made by nobody at time 0"). git itself stores any
decimal number as a date; ``git hash-object -t commit --literally`` (or any forge client)
writes such a commit. Each variant: the agent commits ``status: approved`` on its own plan
``plans/p`` (an approval request the controller refuses as self-approval) with plumbing,
under a hostile header; then Alice approves the honest ``plans/h``.

- ``year-3170843``: ``author Agent <agent@example.com> 99999999999999 +0000`` (a valid
  64-bit time, past year 9999);
- ``time-t-overflow``: ``18446744073709551617`` seconds (over 2^64).
- held (one lab, each commit in turn, each flipping ``plans/p``'s status): a negative date, a zone
  ``+99999`` / ``-9999``, no date, no email, two ``author`` lines, no ``committer`` line, and
  the year-3170843 date on a commit that touches only README, and on one that changes
  ``plans/p``'s content (the controller re-freezes it).

Defence asserted: every later ``run --once`` pass exits 0 with no internal error, the honest
plan runs exactly once, and a plan the agent adds afterwards is frozen.

**Broke** (both, round 14): every pass dies, ``plangate: internal error: ValueError: year
3170843 is out of range`` / ``OverflowError: timestamp out of range for platform time_t``
(after logging ``plan_started`` for ``h``): ``h`` never runs, the new plan is never frozen,
and it stays so on every later pass: one commit stalls every plan in the repository.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, Lab, plan_text
from test_round2_execution_kit import shared

WHO = "Agent <agent@example.com>"
BROKE = {
    "year-3170843": (
        f"author {WHO} 99999999999999 +0000\ncommitter {WHO} 99999999999999 +0000",
        "p",
    ),
    "time-t-overflow": (
        f"author {WHO} 18446744073709551617 +0000\ncommitter {WHO} 18446744073709551617 +0000",
        "p",
    ),
}
HELD = [
    (f"author {WHO} -99999999999 +0000\ncommitter {WHO} -1 +0000", "p"),
    (f"author {WHO} 1700000000 +99999\ncommitter {WHO} 1700000000 -9999", "p"),
    (f"author {WHO}\ncommitter {WHO}", "p"),
    ("author Agent 1700000000 +0000\ncommitter Agent 1700000000 +0000", "p"),
    (
        f"author Alice <alice@example.com> 1700000000 +0000\nauthor {WHO} 1700000000 +0000\n"
        f"committer {WHO} 1700000000 +0000",
        "p",
    ),
    (f"author {WHO} 1700000000 +0000", "p"),
    (f"author {WHO} 99999999999999 +0000\ncommitter {WHO} 99999999999999 +0000", "README"),
    (f"author {WHO} 99999999999999 +0000\ncommitter {WHO} 99999999999999 +0000", "content"),
]


def _hostile(lab: Lab, header: str, touch: str, n: int) -> None:
    if touch == "README":
        (lab.repo / "README").write_text(f"plans {n}\n")
    elif touch == "content":
        path = lab.repo / "plans" / "p" / "PLAN.yml"
        path.write_text(path.read_text().replace('task: "', f'task: "{n} '))
    else:
        text = lab.read(touch)
        lab.set_status(touch, "pending_approval" if "status: approved" in text else "approved")
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    raw = f"tree {tree}\nparent {lab.head()}\n{header}\n\nhostile metadata {n}\n"
    sha = lab.git("hash-object", "-t", "commit", "-w", "--literally", "--stdin", input=raw).strip()
    lab.git("update-ref", "refs/heads/main", sha)
    lab.git("reset", "-q", "--hard", sha)


def _build(root: Path, commits: list[tuple[str, str]]) -> Lab:
    lab = Lab(root)
    lab.write("h", plan_text("h"))
    lab.write("p", plan_text("p"))
    lab.commit("plans", AGENT)
    lab.run()
    for n, (header, touch) in enumerate(commits):
        _hostile(lab, header, touch, n)
    lab.approve("h")
    passes = [lab.run(check=False), lab.run(check=False)]
    lab.write("k", plan_text("k"))
    lab.commit("a later plan", AGENT)
    passes.append(lab.run(check=False))
    lab.passes = [(r.returncode, r.stderr[-400:]) for r in passes]  # type: ignore[attr-defined]
    return lab


def _lab(factory: pytest.TempPathFactory, key: str, commits: list[tuple[str, str]]) -> Lab:
    return shared(factory, f"r14-date-{key}", lambda root: _build(root / "lab", commits))


def _defence(lab: Lab) -> None:
    for code, tail in lab.passes:  # type: ignore[attr-defined]
        assert code == 0 and "internal error" not in tail, tail
    assert len(lab.calls("h")) == 1, lab.codes("h")
    assert lab.plan("k").get("frozen"), lab.codes("k")


# round 14: both broke (strict xfails: every pass died); fixed since: a commit time outside
# 1970..9999 reads as 0 (git.records._time)
@pytest.mark.parametrize("vid", list(BROKE))
def test_an_unrepresentable_date_does_not_stall_the_pass(
    tmp_path_factory: pytest.TempPathFactory, vid: str
) -> None:
    _defence(_lab(tmp_path_factory, vid, [BROKE[vid]]))


def test_other_hostile_headers_do_not_stall_the_pass(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    _defence(_lab(tmp_path_factory, "held", HELD))
