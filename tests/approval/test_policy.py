"""The approval policy (SPEC §11): risk and estimate, rule selection, quorum tally, caps."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.approval.policy import Need, need_for, path_matches, tally
from controller.errors import ConfigInvalid
from controller.plan import plans, yamlio
from controller.plan.profile import caps_for, profile_of
from controller.settings import ApprovalSettings, Config, Requirement, config_from_data

CATALOG = config_from_data(
    {
        "tools": {
            "read": {"kind": "echo", "risk": "low", "estimate": {"seconds": 1, "cost_usd": 0.5}},
            "write": {"kind": "echo", "estimate": {"seconds": 10}},
            "delete": {"kind": "echo", "risk": "high", "estimate": {"cost_usd": 2}},
        }
    }
).tools

APPROVAL = ApprovalSettings(
    approvers=["*@example.com", "*@ops.example.com"],
    groups={"ops": ["alice@example.com", "*@ops.example.com"], "security": ["sec@example.com"]},
    rules=[
        {
            "match": {"risk": "high"},
            "require": [{"group": "ops", "count": 2}, {"group": "security"}],
        },
        {"match": {"paths": ["plans/sandbox/**"]}, "require": [{"count": 1}]},
        {"match": {"tools": ["write"]}, "require": [{"count": 2}]},
    ],
)


def plan(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    actions = [{"id": i + 1, "why": "w", **s} for i, s in enumerate(steps)]
    return {"plan": {"name": "n", "task": "t", "status": "draft"}, "actions": actions, **extra}


def test_risk_is_the_highest_tool_and_estimate_sums_calls_with_retries_at_maximum() -> None:
    data = plan(
        {"tool": "read", "on_failure": "retry", "retries": 2},  # 3 calls
        {"tool": "write", "params": {"tool": "delete"}},  # a param named tool is data
    )
    found = profile_of("plans/x", data, CATALOG)
    assert found.risk == "medium"
    assert found.tools == {"read", "write"}
    assert found.estimate.seconds == 3 * 1 + 10
    assert found.estimate.cost_usd == 1.5
    assert found.max_calls == 4
    assert profile_of("plans/x", plan({"tool": "delete"}), CATALOG).risk == "high"


def test_the_first_matching_rule_decides_and_no_match_is_one_approver() -> None:
    high = profile_of("plans/sandbox/a", plan({"tool": "delete"}), CATALOG)
    assert need_for(high, APPROVAL).rule == 0  # risk first, though the path fits rule 1
    sandbox = profile_of("plans/sandbox/a", plan({"tool": "write"}), CATALOG)
    assert need_for(sandbox, APPROVAL).rule == 1
    writer = profile_of("plans/prod/a", plan({"tool": "write"}), CATALOG)
    assert need_for(writer, APPROVAL).describe() == "2 approvals"
    reader = profile_of("plans/prod/a", plan({"tool": "read"}), CATALOG)
    assert need_for(reader, APPROVAL) == Need(None, (Requirement(count=1),))


@pytest.mark.parametrize(
    ("plan_id", "pattern", "matches"),
    [
        ("plans/sandbox/a", "plans/sandbox/**", True),
        ("plans/sandbox/a/b", "plans/sandbox/**", True),
        ("plans/sandbox/a/b", "plans/sandbox/*", False),
        ("plans/sandbox", "plans/sandbox/**", True),  # its PLAN.yml is under it (round 3)
        ("plans/sandbox", "plans/sandbox", True),
        ("plans/sandboxed", "plans/sandbox/**", False),
        ("plans/sandboxed/a", "plans/sandbox/**", False),
        ("plans/x/db-migrate", "plans/**/db-*", True),
        ("plans/db-migrate", "plans/**/db-*", True),
    ],
)
def test_path_globs(plan_id: str, pattern: str, matches: bool) -> None:
    assert path_matches(plan_id, pattern) is matches


def test_quorum_counts_each_person_once_and_says_what_is_missing() -> None:
    need = Need(0, tuple(APPROVAL.rules[0].require))
    assert tally([], need, APPROVAL).missing == "2 from ops, 1 from security"
    once = tally(["alice@example.com", "Alice@Example.com "], need, APPROVAL)
    assert not once.met and once.missing == "1 more from ops, 1 from security"
    # an allowed approver in neither group fills nothing
    assert tally(["alice@example.com", "dave@example.com"], need, APPROVAL).short == (1, 1)
    full = tally(["bob@ops.example.com", "sec@example.com", "alice@example.com"], need, APPROVAL)
    assert full.met and full.missing == ""


def test_one_person_under_any_spelling_or_alias_fills_one_slot() -> None:
    """Distinct people, as the trust rules see them (SPEC §5, §11): Unicode forms, git's
    punctuation, ``+tag`` addressing and declared aliases are one person."""
    policy = ApprovalSettings.model_validate(
        {
            "approvers": ["*@example.com", "*@ops.example.com"],
            "identity_aliases": {
                "plus_tags": ["*@ops.example.com"],
                "people": [["bob@ops.example.com", "robert@example.com"]],
            },
        }
    )
    need = Need(0, (Requirement(group=None, count=2),))
    for twice in (
        ["jose\u0301@example.com", "jos\u00e9@example.com"],  # NFD and NFC
        ["alice@example.com", "<ALICE@Example.com>."],
        ["bob@ops.example.com", "bob+ci@ops.example.com"],
        ["bob@ops.example.com", "robert@example.com"],
    ):
        assert not tally(twice, need, policy).met, twice
    assert tally(["alice@example.com", "bob@ops.example.com"], need, policy).met


def test_an_approver_in_two_groups_is_placed_where_the_quorum_needs_them() -> None:
    both = ApprovalSettings(
        approvers=["*@example.com"],
        groups={"ops": ["a@example.com", "b@example.com"], "security": ["a@example.com"]},
    )
    need = Need(0, (Requirement(group="ops"), Requirement(group="security")))
    assert tally(["a@example.com", "b@example.com"], need, both).met
    assert tally(["b@example.com", "a@example.com"], need, both).met
    assert not tally(["a@example.com"], need, both).met  # one person, one entry


def test_group_members_must_also_be_approvers() -> None:
    narrow = APPROVAL.model_copy(update={"approvers": ["alice@example.com"]})
    need = Need(0, (Requirement(group="ops", count=1),))
    assert not tally(["bob@ops.example.com"], need, narrow).met


EMAILS = [f"{n}@example.com" for n in "abcde"]


@settings(max_examples=200, deadline=None)
@given(
    members=st.dictionaries(
        st.sampled_from(["g1", "g2", "g3"]), st.lists(st.sampled_from(EMAILS), max_size=5)
    ),
    require=st.lists(
        st.tuples(st.sampled_from([None, "g1", "g2", "g3"]), st.integers(1, 3)),
        min_size=1,
        max_size=3,
    ),
    voters=st.lists(st.sampled_from(EMAILS), max_size=6),
)
def test_tally_is_met_exactly_when_some_assignment_of_distinct_people_fills_every_slot(
    members: dict[str, list[str]], require: list[tuple[str | None, int]], voters: list[str]
) -> None:
    groups = {g: members.get(g, []) for g in ("g1", "g2", "g3")}
    policy = ApprovalSettings(approvers=["*@example.com"], groups=groups)
    need = Need(0, tuple(Requirement(group=g, count=c) for g, c in require))
    slots = [g for g, c in require for _ in range(c)]
    people = sorted(set(voters))

    def fits(p: str, g: str | None) -> bool:
        return g is None or p in groups[g]

    possible = any(
        all(fits(p, g) for p, g in zip(chosen, slots, strict=True))
        for chosen in itertools.permutations(people, len(slots))
    )
    result = tally(voters, need, policy)
    assert result.met is possible
    assert len(result.placed) == sum(c for c in result.require for c in [c.count]) - sum(
        result.short
    )


# --- caps -------------------------------------------------------------------------------


def test_the_smaller_cap_wins() -> None:
    config = config_from_data({"limits": {"max_tool_calls": 50, "max_runtime": "1h"}})
    caps = caps_for(plan({"tool": "read"}, limits={"max_tool_calls": 80}), config.limits)
    assert caps.max_tool_calls == 50 and caps.max_runtime == 3600
    caps = caps_for(plan({"tool": "read"}, limits={"max_runtime": "10m"}), config.limits)
    assert caps.max_runtime == 600 and caps.max_tool_calls == 50


def _problems(data: dict[str, Any], config: Config) -> list[tuple[str, str, str]]:
    text = yamlio.dump(data)  # block YAML: a plan's top level must be a block mapping
    loaded = plans.validate_text(text, Path("plans/x/PLAN.yml"), config)
    return [(p.code, p.path, p.message) for p in loaded.problems]


def test_exceeding_a_cap_at_freeze_names_what_how_much_and_the_cap() -> None:
    config = config_from_data(
        {
            "tools": {"pay": {"kind": "echo", "estimate": {"cost_usd": 4, "seconds": 60}}},
            "limits": {"max_cost_usd": 10},
        }
    )
    steps = [{"tool": "pay"}] * 3
    avail = [{"name": "pay"}]
    assert _problems(plan(*steps, available_tools=avail), config) == [
        (
            "E_LIMIT_EXCEEDED",
            "limits",
            "the estimated cost in USD is 12, over the cap of 10 (limits.max_cost_usd: the "
            "smaller of the plan's and the controller's)",
        )
    ]
    capped = plan(*steps[:2], available_tools=avail, limits={"max_runtime": "1m"})
    [(code, _, message)] = _problems(capped, config)
    assert code == "E_LIMIT_EXCEEDED" and "run time in seconds is 120" in message
    assert "cap of 60" in message
    own = plan(*steps[:2], available_tools=avail, limits={"max_actions": 1})
    assert [c for c, _, _ in _problems(own, config)] == ["E_LIMIT_EXCEEDED"]
    assert _problems(plan(*steps[:2], available_tools=avail), config) == []


def test_plan_limits_are_checked_and_hashed() -> None:
    config = config_from_data({"tools": {"pay": {"kind": "echo"}}})
    avail = [{"name": "pay"}]
    bad = plan({"tool": "pay"}, available_tools=avail, limits={"max_runtime": "soon"})
    assert {c for c, _, _ in _problems(bad, config)} == {"E_SCHEMA_INVALID"}
    from controller.plan.hashing import plan_hash

    one = plan({"tool": "pay"}, available_tools=avail, limits={"max_tool_calls": 5})
    two = plan({"tool": "pay"}, available_tools=avail, limits={"max_tool_calls": 6})
    assert plan_hash(one) != plan_hash(two)


# --- config -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("approval", "needle"),
    [
        ({"rules": [{"require": [{"group": "ops"}]}]}, "does not define"),
        ({"rules": [{"match": {"risk": "severe"}, "require": [{}]}]}, "risk"),
        ({"rules": [{"match": {"tools": ["nope"]}, "require": [{}]}]}, "not in the catalog"),
        ({"rules": [{"require": []}]}, "require"),
        ({"rules": [{"require": [{"count": 0}]}]}, "count"),
        ({"groups": {"bad name": []}}, "group name"),
        (
            {"rules": [{"match": {"flows": "anything_else"}, "require": [{}]}]},
            "untrusted_to_sensitive",
        ),
    ],
)
def test_bad_policy_config_is_refused_with_the_key(approval: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigInvalid) as caught:
        config_from_data({"approval": approval})
    assert needle in str(caught.value) + str(caught.value.remedy)


def test_notify_takes_a_list_of_urls_or_a_mapping() -> None:
    assert config_from_data({"notify": ["https://h.example/x"]}).notify.urls == [
        "https://h.example/x"
    ]
    mapping = config_from_data({"notify": {"url_env": ["HOOK"], "events": ["start"]}}).notify
    assert mapping.url_env == ["HOOK"] and mapping.events == ["start"]
    with pytest.raises(ConfigInvalid):
        config_from_data({"notify": {"events": ["launch"]}})


# --- quorum verdicts --------------------------------------------------------------------

from controller.approval.approvals import ApprovalRequest, Transition  # noqa: E402
from controller.approval.quorum import Vote, judge, trailer_request, votes_from  # noqa: E402

H = "sha256:" + "a" * 64
HIGH = Need(0, tuple(APPROVAL.rules[0].require))


def request(who: str, commit: str = "c1", **change: Any) -> ApprovalRequest:
    base = ApprovalRequest(
        plan_id="plans/x",
        commit=commit,
        kind=Transition.APPROVE,
        author_email=who,
        committer_email=who,
        commit_time=1000,
        problems=(),
        current_hash=H,
        frozen_hash=H,
        changed_in_commit=False,
        changers=frozenset({"agent@example.com"}),
    )
    import dataclasses

    return dataclasses.replace(base, **change)


def test_one_then_two_then_three_approvals() -> None:
    first = judge(request("alice@example.com", "c1"), APPROVAL, HIGH, "t1")
    assert first.outcome == "partial"
    assert first.record == {
        "status": "partial",
        "plan_hash": H,
        "approvals": [{"by": "alice@example.com", "at": "t1", "commit": "c1"}],
        "missing": "1 more from ops, 1 from security",
    }
    collected = votes_from(first.record, H)
    second = judge(request("bob@ops.example.com", "c2"), APPROVAL, HIGH, "t2", collected=collected)
    assert second.outcome == "partial" and second.missing == "1 from security"
    third = judge(
        request("sec@example.com", "c3"),
        APPROVAL,
        HIGH,
        "t3",
        collected=votes_from(second.record, H),
    )
    assert third.outcome == "start"
    assert third.record["status"] == "approved" and third.record["by"] == "sec@example.com"
    assert [a["commit"] for a in third.record["approvals"]] == ["c1", "c2", "c3"]


def test_the_same_person_twice_counts_once_and_an_outsider_is_refused_keeping_the_votes() -> None:
    collected = [Vote("alice@example.com", "t1", "c1")]
    again = judge(request("ALICE@example.com", "c2"), APPROVAL, HIGH, "t2", collected=collected)
    assert again.outcome == "partial" and len(again.votes) == 1
    outsider = judge(request("dave@example.com", "c3"), APPROVAL, HIGH, "t3", collected=collected)
    assert outsider.outcome == "refuse"
    assert outsider.record["code"] == "E_APPROVER_NOT_ALLOWED"
    assert "none of the groups" in outsider.record["message"]
    assert outsider.record["approvals"] == [v.as_dict() for v in collected]


def test_a_changed_plan_voids_the_votes_and_a_plan_level_refusal_keeps_none() -> None:
    stale = {"status": "partial", "plan_hash": "sha256:" + "b" * 64, "approvals": [
        {"by": "alice@example.com", "at": "t", "commit": "c"}]}  # fmt: skip
    assert votes_from(stale, H) == []
    voided = judge(
        request("bob@ops.example.com", voided_by="d" * 40),
        APPROVAL,
        HIGH,
        "t",
        collected=[Vote("alice@example.com", "t1", "c1")],
    )
    assert voided.outcome == "refuse" and "approvals" not in voided.record


def test_a_replayed_approval_is_refused_keeping_the_votes_a_version_refusal_drops() -> None:
    collected = [Vote("alice@example.com", "t1", "c1")]
    copy = request("alice@example.com", "c2", committer_email="agent@example.com", replay_of="s")
    replayed = judge(copy, APPROVAL, HIGH, "t2", collected=collected)
    assert replayed.outcome == "refuse" and replayed.record["code"] == "E_APPROVAL_REPLAYED"
    assert replayed.record["approvals"] == [v.as_dict() for v in collected]
    unfrozen = request("bob@ops.example.com", "c3", frozen_hash=None)
    expired = judge(unfrozen, APPROVAL, HIGH, "t3", collected=collected)
    assert expired.record["code"] == "E_PLAN_NOT_FROZEN" and "approvals" not in expired.record


def test_signed_trailer_commits_count_for_their_signer_only() -> None:
    merge = request("carol@ops.example.com", "merge")
    good = trailer_request(merge, "t1", 900, "alice@example.com", True, "Good signature")
    security = trailer_request(merge, "t2", 900, "sec@example.com", True, "Good signature")
    unsigned = trailer_request(merge, "t3", 900, None, False, "no signature")
    verdict = judge(merge, APPROVAL, HIGH, "now", trailers=[good, security, unsigned])
    assert verdict.outcome == "start"
    assert {v.by for v in verdict.votes} == {
        "alice@example.com",
        "sec@example.com",
        "carol@ops.example.com",
    }
    assert [(r.commit, r.code) for r in verdict.rejected] == [("t3", "E_SIGNATURE_INVALID")]


def test_without_a_rule_one_valid_approval_starts_as_before() -> None:
    plain = Need(None, (Requirement(count=1),))
    assert judge(request("alice@example.com"), APPROVAL, plain, "t").outcome == "start"
    refused = judge(request("mallory@evil.org"), APPROVAL, plain, "t")
    assert refused.outcome == "refuse" and "approvals" not in refused.record


def test_a_rule_can_match_plans_where_outside_data_reaches_a_sensitive_param() -> None:
    """``flows: untrusted_to_sensitive`` (SPEC §16) asks for more approvers for such plans."""
    config = config_from_data(
        {
            "approval": {
                "approvers": ["*@example.com"],
                "rules": [
                    {"match": {"flows": "untrusted_to_sensitive"}, "require": [{"count": 2}]}
                ],
            },
            "tools": {"read": {"kind": "echo"}, "send": {"kind": "echo", "sensitive": ["to"]}},
        }
    )

    def plan(to: str) -> dict[str, Any]:
        guard = [{"param": "to", "one_of": ["a@example.com"]}]
        return {
            "actions": [
                {"id": 1, "tool": "read", "params": {}},
                {
                    "id": 2,
                    "tool": "send",
                    "params": {"to": to, "n": "$<actions[1].result>"},
                    "guards": guard,
                },
            ]
        }

    flowing = profile_of("plans/x", plan("Dear $<actions[1].result.from>"), config.tools)
    literal = profile_of("plans/x", plan("a@example.com"), config.tools)
    assert flowing.untrusted_to_sensitive and not literal.untrusted_to_sensitive
    assert need_for(flowing, config.approval).rule == 0
    assert need_for(literal, config.approval).is_default
