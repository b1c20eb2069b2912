"""Round 69, approval side: round 68's lapse "she committed herself" (docs/approvals.md,
"Replayed approvals": a lapse whose committer is the decision's author is dated by the dates
SHE wrote, its committer date, and its author date only when she is its author too;
"herself" compares identities as approvals do, with the ``identity_aliases`` of the policy in
force THERE, the fresh-clone audit reading them from ``.plangate/policy.json``).

Lab (one, local mode, fake dates, no sleep): the config names ``a.smith@corp.example`` and
(for a while) ``agent@example.com`` as Alice (``identity_aliases.people``); the agent commits
one ``rec`` plan per id; pass P0 freezes them; P1 freezes a filler plan (a controller
commit). Alice's approval of the plan on main is X, her approval of the same version on her
unmerged review branch is Y (made after P1, before the lapse). The agent's alias is in force
only until P1b (the operator drops it; P1b records the policy); before P2 the operator drops
``a.smith`` too (P2 records it); passes P2 and P3. The agent's picks of Y come after P1b.

Lapsed, then brought back by another hand (asserted: ``rec`` never ran, no valid run in the
controller-side and fresh-clone audits):

- ``cdi-rebase``: the agent reverts X on its branch, both dates 1990; Alice rebases the
  agent's branch onto main with ``--committer-date-is-author-date`` (a common option to keep
  reproducible commits) and fast-forwards main: committer Alice, committer date 1990 (git
  copied the agent's author date into HER committer date). The agent picks Y.
- ``cdi-am``: the same through ``format-patch | git am --committer-date-is-author-date``.
- ``amend-agent``: Alice checks out the agent's 1990 revert and ``commit --amend --no-edit``s
  it (she touched it: committer Alice now, author the agent 1990), fast-forwards main.
- ``amend-date``: the same, her amend given ``--date`` 1990 by the agent's instructions
  (author still the agent: its author date is not hers to count).
- ``agent-amends-hers``: Alice reverts X herself on a branch (now); the agent amends her
  revert with ``--date`` 1990 (author Alice 1990, committer the agent) and merges it.
- ``agent-alias`` (documented, asserted as such: ran once, both audits agree): while the
  recorded policy names ``agent@example.com`` as Alice, the agent reverts X with both dates
  in 1990 (a lapse "she" committed, by the alias); the operator drops the alias; the agent
  picks Y. (The plan is the agent's; dropping the alias is how an operator undoes a mistaken
  alias.)

Honest (asserted: ran at P2, once, hers, both audits valid):

- ``cdi-self``: Alice reverts X herself, rebases it with ``--committer-date-is-author-date``
  (her own dates), then approves again in the forge's web editor.
- ``alias-dropped``: Alice reverts X as ``a.smith@corp.example`` (an alias in force), then
  approves again in the web editor; the operator drops the alias before P2.
- ``alias-forged``: the same, after the agent committed a ``.plangate/policy.json`` with the
  ``people`` aliases deleted (a human commit of the record: "changes nothing", flagged).

Seen (round 69): ``cdi-rebase`` and ``cdi-am`` BROKE (slip): ``--committer-date-is-author-date``
makes git write the agent's 1990 author date as HER committer date (asserted by the shape
test); round 68's rule dates a lapse she committed by her committer date, so the lapse is
dated 1990, her review-branch approval Y (made before she brought the lapse in) is "a
decision dated after the lapse", and the agent's cherry-pick of Y ran on her approval
(approver alice), the controller-side and fresh-clone audits valid. Should: a date git copied
from another's commit is that person's word in the committer field too (a lapse she committed
but did not author dated as another hand's, by the next controller commit). Held:
``amend-agent``, ``amend-date`` (her amend leaves her committer date now), ``agent-amends-hers``
(the agent's amend is another hand's). Honest ``cdi-self``, ``alias-dropped``, ``alias-forged``
ran at once, hers, both audits valid (the fresh-clone audit read the recorded aliases, not the
agent's edit of the record). ``agent-alias`` ran, as documented (the alias in force said the
agent's commits were hers). The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30): ``cdi-rebase``, ``cdi-am``. Only a lapse she wrote AND committed (its
author and committer her identity, compared as approvals compare identities) is dated by its
own dates; a lapse she committed but did not write is another hand's, whatever its dates
say: dated by the first controller commit after it (``Lifecycle._lapse_time``, round 67's
``OPEN``). Her review-branch approval Y, made before that commit, is the lapsed decision, and
the agent's pick of it is ``E_APPROVAL_REPLAYED``. Round 68's ``her-pick``, ``her-am``,
``her-rebase`` stay refused (by the same rule now); ``alias-self``, ``plus-self``,
``case-self`` and this module's honest ids run as before. What it costs: her own pick, ``am``
or rebase of a revert someone else wrote, then her re-approval through the forge's web
editor before the next controller commit, is refused once (docs/approvals.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from policykit import LapseClock, config_audits, filler, lapse_plans, review_approvals
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
SMITH = ("A. Smith", "a.smith@corp.example")
OLD = 631152000  # 1990-01-01
LAPSED = ["cdi-rebase", "cdi-am", "amend-agent", "amend-date", "agent-amends-hers"]
HONEST = ["cdi-self", "alias-dropped", "alias-forged"]
ALIASED = ["agent-alias"]
BROKEN: dict[str, object] = {}
ALIASES = """\
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@corp.example, agent@example.com]]
"""
SMITH_ONLY = """\
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@corp.example]]
"""
NO_PEOPLE = """\
identity_aliases:
  plus_tags: ["*@example.com"]
"""


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=ALIASES)
    c = LapseClock(lab)
    lapse_plans(c, [*LAPSED, *HONEST, *ALIASED])  # P0 records the policy: agent@ is hers
    old = f"@{OLD} +0000"
    x: dict[str, str] = {}
    y = review_approvals(c, [*LAPSED, *ALIASED])
    # agent-alias: the agent's own 1990 revert while agent@ is Alice's alias, then the
    # operator drops that alias (P1b records it: a controller commit)
    x["agent-alias"] = c.set("agent-alias", "approved", msg="approve")
    c.git("revert", "--no-edit", x["agent-alias"], adate=old, cdate=old)
    lab.write_config(approval=SMITH_ONLY)
    c.run()  # P1b
    for v in [*LAPSED, *HONEST]:
        if True:
            x[v] = c.set(v, "approved", msg="approve")
    # cdi-rebase: the agent's 1990 revert rebased by Alice with --committer-date-is-author-date
    c.git("checkout", "-q", "-b", "agent/cdi-rebase", "main")
    c.git("revert", "--no-edit", x["cdi-rebase"], adate=old, cdate=old)
    c.git("checkout", "-q", "main")
    filler(c, "cdi-rebase")
    c.git("checkout", "-q", "agent/cdi-rebase")
    c.git("rebase", "-q", "--committer-date-is-author-date", "main", who=ALICE, by=ALICE)
    lab.cdi = lab.git("log", "-1", "--format=%ae %ad|%ce %cd", "--date=unix")  # type: ignore[attr-defined]
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "agent/cdi-rebase", who=ALICE, by=ALICE)
    # cdi-am
    c.git("checkout", "-q", "-b", "agent/cdi-am", "main")
    c.git("revert", "--no-edit", x["cdi-am"], adate=old, cdate=old)
    patch = lab.git("format-patch", "-1", "--stdout", "HEAD")
    c.git("checkout", "-q", "main")
    c.feed(patch, "am", "-q", "--committer-date-is-author-date", who=ALICE, by=ALICE)
    # amend-agent / amend-date: she amends the agent's 1990 revert
    for v, extra in (("amend-agent", []), ("amend-date", ["--date", old])):
        c.git("checkout", "-q", "-b", f"agent/{v}", "main")
        c.git("revert", "--no-edit", x[v], adate=old, cdate=old)
        c.git("commit", "-q", "--amend", "--no-edit", *extra, who=AGENT, by=ALICE,
              adate=old)  # fmt: skip
        c.git("checkout", "-q", "main")
        c.git("merge", "-q", "--ff-only", f"agent/{v}", who=ALICE, by=ALICE)
    # agent-amends-hers: her revert amended by the agent, dated 1990
    c.git("checkout", "-q", "-b", "alice/agent-amends-hers", "main")
    c.git("revert", "--no-edit", x["agent-amends-hers"], who=ALICE, by=ALICE)
    c.git("commit", "-q", "--amend", "--no-edit", "--date", old, who=ALICE, by=AGENT,
          adate=old, cdate=old)  # fmt: skip
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "alice/agent-amends-hers")
    # honest: cdi-self, alias-dropped, then the agent's forged record, then alias-forged
    c.git("checkout", "-q", "-b", "alice/cdi-self", "main")
    c.git("revert", "--no-edit", x["cdi-self"], who=ALICE, by=ALICE)
    c.git("checkout", "-q", "main")
    filler(c, "cdi-self")
    c.git("checkout", "-q", "alice/cdi-self")
    c.git("rebase", "-q", "--committer-date-is-author-date", "main", who=ALICE, by=ALICE)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "alice/cdi-self", who=ALICE, by=ALICE)
    c.git("revert", "--no-edit", x["alias-dropped"], who=SMITH, by=SMITH)
    c.set("alias-dropped", "approved", msg="Update PLAN.yml", by=FORGE)
    pol = lab.repo / ".plangate" / "policy.json"
    data = json.loads(pol.read_text())
    lab.recorded_aliases = json.dumps(data["approval"].get("identity_aliases"))  # type: ignore[attr-defined]
    data["approval"]["identity_aliases"] = {"plus_tags": ["*@example.com"]}
    pol.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: tidy the policy record")
    c.git("revert", "--no-edit", x["alias-forged"], who=SMITH, by=SMITH)
    c.set("alias-forged", "approved", msg="Update PLAN.yml", by=FORGE)
    c.set("cdi-self", "approved", msg="Update PLAN.yml", by=FORGE)
    # the agent's picks of Y
    for v in [*LAPSED, *ALIASED]:
        c.git("cherry-pick", y[v])
    # the operator drops the people aliases (the agent's among them)
    lab.write_config(approval=NO_PEOPLE)
    c.run()  # P2
    lab.first = {v: len(lab.calls(v)) for v in [*LAPSED, *HONEST, *ALIASED]}  # type: ignore[attr-defined]
    c.run()  # P3
    return config_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-lapsedates", _build)


def test_the_rebase_copied_the_agents_date_into_her_committer_date(lab: Lab) -> None:
    author, committer = lab.cdi.strip().split("|")  # type: ignore[attr-defined]
    assert author == f"agent@example.com {OLD}" and committer == f"alice@example.com {OLD}"


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_lapse_dated_by_the_agents_word_bars_her_older_decision(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALIASED)
def test_a_lapse_the_alias_made_hers_is_dated_by_its_own_word(lab: Lab, vid: str) -> None:
    """Documented, not a break: while the recorded policy names the agent's address as
    Alice's, its commits are hers (it could as well approve as her); her decision dated after
    that lapse's (1990) date is a new one, under the policy in force there, and both audits
    read the recorded alias alike."""
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_new_decision_after_her_own_lapse_runs_at_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.codes(vid)[:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", [*LAPSED, *HONEST, *ALIASED])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
