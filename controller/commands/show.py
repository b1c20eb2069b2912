"""``plangate show PATH [--format text|json|toon|markdown] [--verbose|--quiet]``.

What a reviewer needs to see before approving a plan (text), the same as data (``json``,
and ``toon``, which decodes back to the json output) and as a pull-request comment
(``markdown``). The renderers live in :mod:`controller.plan.rendering`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

FORMATS = ("text", "json", "toon", "markdown")


def show(
    path: str,
    as_json: bool = False,
    config_path: str | None = None,
    fmt: str = "text",
    verbosity: str = "normal",
) -> int:
    from controller.commands._shared import catalog_redactor, optional_config, print_problems
    from controller.errors import PlanInvalid
    from controller.plan import rendering
    from controller.plan.plans import load_plan, plan_file_in

    plan_file = plan_file_in(Path(path))
    config = optional_config(config_path)
    plan = load_plan(plan_file, config)
    fmt = "json" if as_json else fmt
    if plan.model is None:
        if fmt in ("json", "toon"):  # the --json error shape, with every problem
            raise PlanInvalid(plan.problems, str(plan_file))
        print_problems(plan_file, plan.problems)
        return 1
    plan, warning = _as_recorded(plan, config)
    redactor = catalog_redactor(config) if config is not None else None
    view = rendering.plan_view(plan, config, _review(plan, config), redactor)
    if warning:
        view["record_warning"] = warning
    level = verbosity if verbosity in ("quiet", "verbose") else "normal"
    if fmt == "json":
        print(rendering.to_json(view))
    elif fmt == "toon":
        print(rendering.to_toon(view))
    elif fmt == "markdown":
        sys.stdout.write(rendering.to_markdown(view, level))  # type: ignore[arg-type]
    else:
        print(rendering.to_text(view, level, color=sys.stdout.isatty()))  # type: ignore[arg-type]
    return 0


def _review(plan: Any, config: Any) -> dict[str, Any]:
    """Risk, estimate and required approvals: from the catalog and policy when a config is
    given (what the controller will use), else as written in ``frozen:`` at freeze."""
    if config is None:
        frozen = plan.block("frozen")
        found = {k: frozen[k] for k in ("risk", "estimate", "policy") if k in frozen}
        return {**found, "source": "frozen"} if found else {}
    from controller.commands._shared import frozen_facts_for

    return {**(frozen_facts_for(plan, config) or {}), "source": "config"}


def _as_recorded(plan: Any, config: Any) -> tuple[Any, str | None]:
    """The plan with its controller-owned blocks as the controller recorded them, and why
    they differ from the file's, if they do. Those blocks are not hashed: an agent that
    rewrites the ``execution:`` block (in the working tree, or in a commit of its own) would
    otherwise make ``show`` promise a gate's reviewer values that are not the ones that run
    (round 5). The record is the branch (HEAD) over the working tree and the controller's
    own last commit of the file over anyone's later commit: the controller named by the
    config, or without one by the recorded policy (round 23)."""
    import dataclasses

    from controller.git.ownrecord import OWNED

    owned = {key: plan.data.get(key) for key in OWNED} if isinstance(plan.data, dict) else {}
    if not any(owned.values()):
        return plan, None  # nothing the controller wrote yet (a draft, a pending plan)
    email = getattr(getattr(config, "identity", None), "email", None)
    unsure = None
    if not email:  # no config: the identity the recorded policies name (round 23)
        email, unsure = _recorded_controller(plan.path)
    found = _recorded_owned(plan.path, email)
    if found is None:
        return plan, unsure
    recorded, where = found
    if recorded == owned:
        return plan, unsure
    data = {**plan.data, **{k: v for k, v in recorded.items() if v is not None}}
    for key in OWNED:
        if recorded.get(key) is None:
            data.pop(key, None)
    warning = (
        f"E_OWNED_BLOCK_CHANGED: the execution:/approval: blocks of this file are not the "
        f"controller's record ({where}); shown as the controller recorded them"
    )
    return dataclasses.replace(plan, data=data), warning


def _recorded_controller(path: Path) -> tuple[str | None, str | None]:
    """(the controller's identity, None), from the policy the controller records on its
    branch (``.plangate/policy.json``, every version on HEAD's first-parent history), when
    they all name one; else (None, why ``show`` cannot tell). Round 23: without a config,
    ``show`` took a committed rewrite of the ``execution:`` block as the record; the audit
    finds the identity the same way (:mod:`controller.approval.timeline`)."""
    import subprocess

    from controller.approval import recorded
    from controller.git.guard import guarded_env

    folder = path.resolve().parent
    env = guarded_env(folder)
    spec = f":(top){recorded.POLICY_PATH}"
    log = subprocess.run(
        ["git", "log", "--first-parent", "--format=%H", "HEAD", "--", spec],
        cwd=folder, env=env, capture_output=True, check=False,
    )  # fmt: skip
    shas = log.stdout.decode("ascii", "replace").split() if log.returncode == 0 else []
    if not shas:
        return None, None  # no recorded policy (or no repository): nothing to check against
    wanted = "".join(f"{sha}:{recorded.POLICY_PATH}\n" for sha in shas).encode()
    batch = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=folder, env=env, input=wanted,
        capture_output=True, check=False,
    )  # fmt: skip
    named: set[str] = set()
    out, at = batch.stdout, 0
    for _ in shas:
        end = out.find(b"\n", at)
        header = out[at:end].split()
        if end < 0 or len(header) != 3:
            at = end + 1 if end >= 0 else len(out)
            continue  # "missing": the file was deleted in that commit
        size = int(header[2])
        doc = recorded.parse(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
        if doc is not None:
            named.add(str(doc["identity"].get("email", "")).lower())
    if len(named) == 1:
        return named.pop(), None
    if not named:
        return None, None
    return None, (
        "the recorded policies name more than one controller identity "
        f"({', '.join(sorted(named))}): the execution:/approval: blocks are shown as the "
        "branch has them, unchecked; pass --config to check them against the controller's "
        "own commits"
    )


def _recorded_owned(path: Path, email: str | None) -> tuple[dict[str, Any], str] | None:
    """(the owned blocks as recorded, what differs) or None outside a git work tree.
    ``email``: the controller's identity, whose last commit of the file is the record
    (:mod:`controller.git.ownrecord`, which the controller reads its record with too)."""
    import subprocess

    from controller.git import ownrecord
    from controller.git.guard import guarded_env

    folder = path.resolve().parent
    env = guarded_env(folder)

    def git(*args: str) -> str | None:
        result = subprocess.run(
            ["git", "-c", "core.quotePath=false", *args],
            cwd=folder,
            env=env,
            capture_output=True,
            check=False,
        )
        return result.stdout.decode("utf-8", "replace") if result.returncode == 0 else None

    name = f"./{path.name}"
    head = ownrecord.blocks_at(git, "HEAD", name)
    if head is None:
        return None  # not tracked, or not in a repository: the file is all there is
    where = "the working tree differs from the branch: uncommitted edits"
    if email:
        wanted = email.casefold()
        found = ownrecord.own_record(
            git, "HEAD", name, lambda r: r.author.email.casefold() == wanted, first_parent=False
        )
        if found is not None and found.later and found.blocks not in (None, head):
            assert found.blocks is not None
            later = ", ".join(sha[:12] for sha in found.later)
            return found.blocks, (
                f"commit(s) {later} after the controller's {found.commit[:12]} changed them"
            )
    return head, where
