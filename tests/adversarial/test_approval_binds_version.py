"""Property: an approval approves exactly the version it was made for (SPEC §5,
E_APPROVAL_REPLAYED, E_PLAN_HASH_MISMATCH).

Attack: Alice approves version 1 on a review branch (never merged). The agent then changes
the plan (a param, or a whole extra action) and the controller re-freezes it. The agent
brings Alice's old approval commit to the branch again: ``cherry-pick``, ``cherry-pick -x``,
``rebase`` of the review branch, ``format-patch | am``; git keeps Alice as the author, so the
commit looks like Alice approving version 2. Also: Alice approves and the agent changes the
content before the controller looks; and the same replays after version 1 already ran.

Defence: refused (E_APPROVAL_REPLAYED, or E_PLAN_HASH_MISMATCH when content moved under the
approval); the extra action and the new param never reach a tool.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

EXTRA_ACTION = """\
  - id: 2
    tool: rec
    why: "added after the approval"
    params:
      tag: "{tag}-extra"
"""

Step = Callable[[Lab, str], None]
review_commits: dict[str, str] = {}


def submit(lab: Lab, slug: str) -> None:
    lab.write(slug, plan_text(slug, params="note: v1\n"))
    lab.commit(f"add {slug}", AGENT)


def approve_on_review_branch(lab: Lab, slug: str) -> None:
    lab.git("checkout", "-q", "-b", f"{slug}-review")
    review_commits[slug] = lab.approve(slug, ALICE, f"approve {slug} (v1)")
    lab.git("checkout", "-q", "main")


def change(kind: str) -> Step:
    def step(lab: Lab, slug: str) -> None:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        text = path.read_text()
        if kind == "param":
            text = text.replace("note: v1", "note: v2-after-approval")
        else:
            marker = "frozen:"
            head, _, tail = text.partition(marker)
            text = head + EXTRA_ACTION.format(tag=slug) + marker + tail
        path.write_text(text)
        lab.commit(f"change {slug}", AGENT)

    return step


def replay(how: str) -> Step:
    def step(lab: Lab, slug: str) -> None:
        commit = review_commits[slug]
        if how == "cherry-pick":
            lab.git("cherry-pick", commit, who=AGENT)
        elif how == "cherry-pick-x":
            lab.git("cherry-pick", "-x", commit, who=AGENT)
        elif how == "am":
            patch = lab.git("format-patch", "-1", "--stdout", commit)
            lab.git("am", "-q", who=AGENT, input=patch)
        elif how == "rebase":
            lab.git("rebase", "-q", "main", f"{slug}-review", who=AGENT)
            lab.git("checkout", "-q", "main")
            lab.git("merge", "-q", "--ff-only", f"{slug}-review", who=AGENT)

    return step


def approve_then_change_before_the_controller_looks(lab: Lab, slug: str) -> None:
    lab.approve(slug, ALICE)
    change("param")(lab, slug)


def approve_and_run(lab: Lab, slug: str) -> None:
    approve_on_review_branch(lab, slug)
    lab.approve(slug, ALICE, f"approve {slug} for real (v1)")


def reopen(lab: Lab, slug: str) -> None:
    """After v1 ran: the agent edits the finished plan and submits it again."""
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text().replace("note: v1", "note: v2-after-run")
    text = text.replace("  status: completed", "  status: pending_approval", 1)
    path.write_text(text)
    lab.commit(f"v2 of {slug}", AGENT)


HOWS = ["cherry-pick", "cherry-pick-x", "am", "rebase"]
ATTACKS: dict[str, list[Step]] = {}
for how in HOWS:
    for kind in ("param", "action"):
        ATTACKS[f"{how}-{kind}"] = [
            submit,
            approve_on_review_branch,
            change(kind),
            replay(how),
        ]
ATTACKS["changed-before-controller-looked"] = [
    submit,
    approve_then_change_before_the_controller_looks,
]
for how in ("cherry-pick", "am"):
    ATTACKS[f"{how}-after-v1-ran"] = [submit, approve_and_run, reopen, replay(how)]

CODES = {"E_APPROVAL_REPLAYED", "E_PLAN_HASH_MISMATCH"}
#: Every variant held since approvals are bound to their version (issue 11).
BROKEN: dict[str, object] = {}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    rounds = max(len(steps) for steps in ATTACKS.values())
    for index in range(rounds):
        if index:
            # commit dates are in seconds: Alice's approval and the controller's re-freeze of
            # the changed version must not share one (docs/threat-model.md, accepted limits)
            time.sleep(1.05)
        for vid, steps in ATTACKS.items():
            if index < len(steps):
                steps[index](lab, vid)
        lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-replay", _build_lab)


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_an_approval_never_approves_another_version(lab: Lab, vid: str) -> None:
    calls = lab.calls(vid)
    assert lab.calls(f"{vid}-extra") == [], "an action added after the approval ran"
    assert all("after-approval" not in c["stdin"] for c in calls), "a changed param ran"
    if vid.endswith("after-v1-ran"):
        # A finished plan cannot be reopened; the replayed approval is ignored or refused.
        assert len(calls) == 1 and "after-run" not in calls[0]["stdin"], "version 2 ran"
        assert lab.refusal(vid) in CODES or "E_ILLEGAL_TRANSITION" in lab.codes(vid)
        return
    assert calls == [], "the plan ran on another version's approval"
    assert lab.refusal(vid) in CODES, lab.codes(vid)
