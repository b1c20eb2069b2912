"""``approval:`` in ``plangate.yml``: who may approve, how an approval is checked, and the
policy rules (groups, which plans need which approvals; SPEC §5, §11).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from controller.settings.fields import (
    Count,
    Risk,
    _invalid,
    _optional_duration,
    _shown,
    _Strict,
)


class RuleMatch(_Strict):
    """What a plan must have for a rule to apply; every key given must fit (empty: any plan)."""

    risk: Risk | None = None
    """The plan's risk is at least this."""
    paths: list[str] | None = None
    """Globs on the plan's path (``plans/sandbox/**``); one must match."""
    tools: list[str] | None = None
    """Catalog tool names; the plan must call one of them."""
    flows: Literal["untrusted_to_sensitive"] | None = None
    """``untrusted_to_sensitive``: outside data reaches a tool's ``sensitive`` param somewhere
    in the plan (guarded or not; docs/plan-format.md, Flows and guards)."""


class Requirement(_Strict):
    """``count`` distinct approvers, from ``group`` (or any allowed approver)."""

    group: str | None = None
    count: Count = 1


class ApprovalRule(_Strict):
    """One policy rule: which plans (``match``) need which approvals (``require``)."""

    match: RuleMatch = RuleMatch()
    require: Annotated[list[Requirement], Field(min_length=1)]


class IdentityAliases(_Strict):
    """Addresses that are one person (SPEC §5). Identities are always compared normalised
    (case-insensitive, Unicode NFC, git's stripping of surrounding punctuation); these add
    equivalences that only the operator can know."""

    plus_tags: list[str] = []
    """Glob patterns of addresses where ``local+tag@domain`` is ``local@domain``."""
    people: list[list[str]] = []
    """Groups of addresses of one person; the first one names them."""


class ApprovalSettings(_Strict):
    """Who may approve plans, and how an approval is checked (SPEC §5)."""

    approvers: list[str] = []
    """Glob patterns on the approver's email; an empty list allows nobody."""
    identity: Literal["author", "committer"] = "author"
    """Which identity of the approving commit is the approver."""
    allow_self_approval: bool = False
    """Allow an approver who changed the plan's hashed content to approve it."""
    require_signed: bool = False
    """Require ``git verify-commit`` to accept the approving commit."""
    allowed_signers: Path | None = None
    """File for git's ``gpg.ssh.allowedSignersFile`` (SSH signatures)."""
    max_age: float | None = None
    """Seconds (or ``7d``-style text): a plan frozen longer ago cannot be approved."""
    groups: dict[str, list[str]] = {}
    """Named sets of approver patterns (globs on the email), used by ``rules``."""
    rules: list[ApprovalRule] = []
    """The first rule whose ``match`` fits a plan says which approvals it needs (SPEC §11);
    no rule matches -> one approval by an allowed approver."""
    identity_aliases: IdentityAliases = IdentityAliases()
    """Further equivalences between addresses (``+tag`` addressing, one person's addresses)."""

    _duration = field_validator("max_age", mode="before")(_optional_duration)

    @field_validator("groups")
    @classmethod
    def _group_names(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
                raise _invalid(
                    f"found the group name {_shown(name)}",
                    "name groups with letters, digits, _ and -, starting with a letter or _",
                    key=name,
                )
        return value

    @model_validator(mode="after")
    def _known_groups(self) -> ApprovalSettings:
        for r_index, rule in enumerate(self.rules):
            for q_index, need in enumerate(rule.require):
                if need.group is not None and need.group not in self.groups:
                    known = ", ".join(self.groups) or "none"
                    raise _invalid(
                        f"rules[{r_index}].require[{q_index}] names the group "
                        f"{_shown(need.group)}, which approval.groups does not define",
                        f"define it under approval.groups (defined: {known}) or fix the name",
                        key="rules",
                    )
        return self
