"""The approval policy (SPEC §11): which approvals a plan needs, and whether it has them.

A plan's :class:`~controller.plan.profile.Profile` (risk, tools, path) selects the first
``approval.rules`` entry whose ``match`` fits; its ``require`` list says how many distinct
people, from which ``approval.groups``, must approve the same hash. No rule matches: one
approval by an allowed approver (§5, unchanged).

:func:`tally` assigns approvers to requirements as a bipartite matching: one person counts
once, in one entry, and an approver who belongs to two groups is placed where they unlock
the quorum (alice in ops and security, bob in ops: alice fills security, bob ops).

Pure data in, data out: the live controller, ``plangate check`` and ``plangate audit`` call
the same functions, so they cannot disagree about what a quorum is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from controller.approval.approvals import approver_allowed, canonical
from controller.plan.profile import Profile, risk_rank
from controller.settings import ApprovalRule, ApprovalSettings, Config, IdentityAliases, Requirement

#: The requirement when no rule matches: one allowed approver.
DEFAULT_REQUIRE = (Requirement(group=None, count=1),)


@dataclass(frozen=True)
class Need:
    """The requirement list in force for one plan, and which rule set it (None: default)."""

    rule: int | None
    require: tuple[Requirement, ...]

    @property
    def is_default(self) -> bool:
        return self.rule is None

    def describe(self) -> str:
        return describe(self.require)

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "require": [{"group": r.group, "count": r.count} for r in self.require],
        }


def need_for(profile: Profile, settings: ApprovalSettings) -> Need:
    """The first rule whose match fits the plan decides; none: one allowed approver."""
    for index, rule in enumerate(settings.rules):
        if rule_matches(rule, profile):
            return Need(index, tuple(rule.require))
    return Need(None, DEFAULT_REQUIRE)


def needs_by_folder(
    profile: Profile, settings: ApprovalSettings
) -> tuple[Need, list[tuple[tuple[str, ...], Need]]]:
    """What a plan needs before it has a folder (MCP ``validate`` without a ``slug``): the
    requirement in a folder no ``paths`` rule covers, and each ``paths`` rule before it whose
    other keys fit the plan, with its globs. In that order, the first whose globs match the
    folder decides (as :func:`need_for` at that folder does); a folder none matches gets the
    first. Round 122: ``validate`` answered "1 approval (default: no rule matches)" for a plan
    a ``plans/q/**`` rule gave 2 approvals where it was then submitted."""
    by_folder: list[tuple[tuple[str, ...], Need]] = []
    for index, rule in enumerate(settings.rules):
        if not rule_matches(rule, profile, paths=False):
            continue
        if rule.match.paths is None:
            return Need(index, tuple(rule.require)), by_folder
        if rule.match.paths:  # an empty list matches no folder
            by_folder.append((tuple(rule.match.paths), Need(index, tuple(rule.require))))
    return Need(None, DEFAULT_REQUIRE), by_folder


def rule_matches(rule: ApprovalRule, profile: Profile, *, paths: bool = True) -> bool:
    """Does ``rule`` apply to the plan? ``paths`` False: every key but ``paths`` fits."""
    match = rule.match
    if match.risk is not None and risk_rank(profile.risk) < risk_rank(match.risk):
        return False
    if (
        paths
        and match.paths is not None
        and not any(path_matches(profile.plan_id, p) for p in match.paths)
    ):
        return False
    if match.flows == "untrusted_to_sensitive" and not profile.untrusted_to_sensitive:
        return False
    return match.tools is None or bool(profile.tools & set(match.tools))


def path_matches(plan_id: str, pattern: str) -> bool:
    """Glob on a plan's path: ``*`` and ``?`` stay within one folder, ``**`` crosses them.
    The plan's folder or its file may match: ``plans/two/**`` covers ``plans/two`` itself
    (its ``PLAN.yml`` is under it), as a reader of the rule expects."""
    glob = _glob(pattern.strip("/"))
    folder = plan_id.strip("/")
    return glob.fullmatch(folder) is not None or glob.fullmatch(f"{folder}/PLAN.yml") is not None


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


# --- quorum -----------------------------------------------------------------------------


def person(email: str, aliases: IdentityAliases | None = None) -> str:
    """The key under which an approver counts once: the person behind the address, as the
    trust rules see them (Unicode NFC, case, git's punctuation, ``identity_aliases``), so
    ``ALICE@Example.com.`` and ``alice+ci@example.com`` never fill two slots of a quorum."""
    return canonical(email, aliases)


@dataclass(frozen=True)
class Tally:
    """How the approvals collected for one hash fill the requirements."""

    met: bool
    #: person -> index of the requirement they fill (people who fill none are absent).
    placed: dict[str, int]
    #: Per requirement, how many are still needed.
    short: tuple[int, ...]
    require: tuple[Requirement, ...]

    @property
    def missing(self) -> str:
        """What is still needed, e.g. ``1 more from ops, 1 from security`` ('' when met)."""
        parts = [
            _amount(count, need.group, more=count < need.count)
            for need, count in zip(self.require, self.short, strict=True)
            if count
        ]
        return ", ".join(parts)


def eligible(email: str, need: Requirement, settings: ApprovalSettings) -> bool:
    """Can this person fill this requirement? (They must be an approver at all, too.)"""
    if not approver_allowed(email, settings.approvers, settings.identity_aliases):
        return False
    return need.group is None or approver_allowed(
        email, settings.groups.get(need.group, []), settings.identity_aliases
    )


def fits_any(email: str, need: Need, settings: ApprovalSettings) -> bool:
    return any(eligible(email, r, settings) for r in need.require)


def tally(approvers: Iterable[str], need: Need, settings: ApprovalSettings) -> Tally:
    """Place distinct people into requirement slots (maximum bipartite matching)."""
    people = list(dict.fromkeys(person(a, settings.identity_aliases) for a in approvers))
    slots = [i for i, r in enumerate(need.require) for _ in range(r.count)]
    fits = {
        p: [s for s, i in enumerate(slots) if eligible(p, need.require[i], settings)]
        for p in people
    }
    holder: dict[int, str] = {}
    for p in people:
        _augment(p, fits, holder, set())
    placed = {p: slots[s] for s, p in holder.items()}
    short = tuple(
        r.count - sum(1 for i in placed.values() if i == index)
        for index, r in enumerate(need.require)
    )
    return Tally(not any(short), placed, short, need.require)


def _augment(p: str, fits: dict[str, list[int]], holder: dict[int, str], seen: set[int]) -> bool:
    for slot in fits[p]:
        if slot in seen:
            continue
        seen.add(slot)
        if slot not in holder or _augment(holder[slot], fits, holder, seen):
            holder[slot] = p
            return True
    return False


def describe(require: Sequence[Requirement]) -> str:
    """``2 from ops, 1 from security`` / ``1 approval``."""
    return ", ".join(_amount(r.count, r.group) for r in require)


def _amount(count: int, group: str | None, *, more: bool = False) -> str:
    extra = " more" if more else ""
    if group is None:
        return f"{count}{extra} approval{'s' if count != 1 else ''}"
    return f"{count}{extra} from {group}"


def frozen_facts(
    plan_id: str, data: object, config: Config, origin: Path | None = None
) -> dict[str, object]:
    """``frozen:``'s risk, estimate and policy for a plan about to be frozen (not hashed);
    nested plans are read from the working tree (``config.repo``, or around ``origin``)."""
    from controller.plan import nested
    from controller.plan import profile as profiles

    reader = nested.file_reader(config, origin)
    found = profiles.profile_of(plan_id, data, config.tools, reader)
    return {**profiles.frozen_facts(found), "policy": need_for(found, config.approval).as_dict()}


def describe_record(record: dict[str, Any], default: str = "default: no rule matches") -> str:
    """``2 from ops, 1 from security (approval.rules[0])`` from a ``{rule, require}`` record
    (as written in ``frozen.policy``); ``default``: what the parentheses say when no rule
    set it."""
    parts = []
    for need in record.get("require") or []:
        if isinstance(need, dict):
            count, group = need.get("count", 1), need.get("group")
            parts.append(_amount(count, group))
    rule = record.get("rule")
    where = f" (approval.rules[{rule}])" if rule is not None else f" ({default})"
    return (", ".join(parts) or "?") + where


def unplaced_facts(data: object, config: Config) -> dict[str, object]:
    """:func:`frozen_facts` of a plan that has no folder yet (MCP ``validate`` without a
    ``slug``), read as if at ``plans/unnamed``, and beside ``policy`` (the requirement in a
    folder no ``paths`` rule covers) ``by_path``: each ``paths`` rule that would decide
    instead where its globs match the folder (:func:`needs_by_folder`), in order."""
    from controller.plan import nested
    from controller.plan import profile as profiles

    reader = nested.file_reader(config, None)
    found = profiles.profile_of(UNPLACED, data, config.tools, reader)
    elsewhere, by_folder = needs_by_folder(found, config.approval)
    return {
        **profiles.frozen_facts(found),
        "policy": elsewhere.as_dict(),
        "by_path": [{"paths": list(globs), "policy": n.as_dict()} for globs, n in by_folder],
    }


#: The plan id a plan without a folder is read at (MCP ``validate`` without a ``slug``).
UNPLACED = "plans/unnamed"
