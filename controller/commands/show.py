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
    from controller.commands._shared import (
        as_git_stores,
        catalog_redactor,
        checkout_holds,
        optional_config,
        plan_path,
        print_problems,
    )
    from controller.errors import PlanInvalid
    from controller.plan import nested, rendering
    from controller.plan.discovery import converted_source, source_name
    from controller.plan.plans import load_plan

    plan_file = plan_path(path, "show")
    config = optional_config(config_path)
    stored = as_git_stores(plan_file, config)  # as git would store it (round 80)
    written: dict[str, bytes] = {}
    source = source_name(plan_file) is not None
    if source:  # shown as the daemon converts it, as validate and hash read it (round 122)
        with checkout_holds(plan_file) as holds:  # and held where it holds it (round 123)
            plan, written = converted_source(plan_file, config, data=stored, holds=holds)
    else:
        plan = load_plan(plan_file, config, data=stored)
    fmt = "json" if as_json else fmt
    if plan.model is None:
        problems = [*plan.problems, *_record_problems(plan, config)]
        if config is not None:  # the controller's status too, as for a valid plan
            problems += _row_problems(plan, config, problems)
        if fmt in ("json", "toon"):  # the --json error shape, with every problem
            raise PlanInvalid(problems, str(plan_file))
        print_problems(plan_file, problems)
        return 1
    plan, warning = _as_recorded(plan, config)
    redactor = catalog_redactor(config) if config is not None else None
    with nested.writing(written):  # a source's nested plans as its convert commit writes them
        view = rendering.plan_view(plan, config, _review(plan, config), redactor)
    if source:
        view["converted_from"] = plan_file.name
        warning = _source_warning(plan_file, view, config, warning)
    held = _held_status(plan, config) if config is not None else None
    if held is not None:  # the controller's status, not one it ignored (round 82)
        status, why = held
        view["file_status"] = view["plan"]["status"]
        view["plan"]["status"] = status
        warning = "; ".join(w for w in (warning, why) if w)
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


def _source_warning(
    path: Path, view: dict[str, Any], config: Any, warning: str | None
) -> str | None:
    """A source's warning as ``hash`` and ``validate`` give it
    (:func:`controller.plan.discovery.discovery_warning`), said on stderr too, and beside a
    PLAN.yml the view's reason: the source is a note, never converted, frozen nor run (round
    125, ``show-source-beside-plan-unwarned``: it showed "waiting to be frozen" under a hash
    nothing would freeze). ``warning``: the record's, joined."""
    from controller.display import visible
    from controller.plan.discovery import discovery_warning, plan_beside

    said = discovery_warning(path, config)
    if said is None:
        return warning
    print(f"{visible(str(path))}: warning: {visible(said)}", file=sys.stderr)
    beside = plan_beside(path)
    if beside is not None:
        view["reason"] = f"not the plan: the controller runs {beside} and never converts this"
    return "; ".join(w for w in (warning, said) if w)


def _held_status(plan: Any, config: Any) -> tuple[str, str] | None:
    """(the controller's status of the plan, why it differs) where the file says another: a
    status the controller ignored (a person not entitled to it, a transition it refuses,
    a forged ``completed`` mid-run) is the file's text, not the plan's state (round 82:
    ``show --config`` printed it while ``status``, the page and MCP said the controller's).
    Read as ``plangate status`` reads it: the controller's row of the plan. None when the
    row agrees, or there is none (a plan outside the config's repository, not committed)."""
    from controller.commands._shared import plan_id_for
    from controller.errors import PlangateError
    from controller.service.reconcile import Controller

    plan_id = plan_id_for(plan.path, config)
    try:
        controller = Controller(config, lock=False)
        try:
            rows = controller.status(plan=plan_id)
        finally:
            controller.close()
    except PlangateError:  # no controller to ask (its repository is none): the file's
        return None
    if not rows or rows[0].get("status") in (None, plan.status):
        return None
    row = rows[0]
    said = f"the file says status {plan.status!r}; the controller holds {row['status']!r}"
    last = row.get("last_event")
    return str(row["status"]), f"{said} (last event: {last})" if last else said


def _row_problems(plan: Any, config: Any, problems: list[Any]) -> list[Any]:
    """With a config, the controller's row of a plan that does not validate, as a problem
    (``status``: the row's status and code, beside the file's own problems): the status
    shown is the controller's whether the file validates or not (round 85: a run killed
    mid-action, then its nested plan broken, showed only ``E_YAML_PARSE`` where every other
    reader said ``failed`` with ``E_ACTION_IN_DOUBT``). None when the row is none (a plan
    outside the config's repository, not committed) or cannot be read."""
    from controller.commands._shared import plan_id_for
    from controller.errors import PlangateError, Problem
    from controller.service.reconcile import Controller

    plan_id = plan_id_for(plan.path, config)
    try:
        controller = Controller(config, lock=False)
        try:
            rows = controller.status(reasons=True, plan=plan_id)
        finally:
            controller.close()
    except PlangateError:  # no controller to ask: the file's problems alone
        return []
    if not rows or not rows[0].get("status"):
        return []
    row = rows[0]
    reason = str(row.get("reason") or row.get("waiting") or "")
    code, sep, why = reason.partition(": ")
    if not (sep and code.startswith("E_") and code.replace("_", "").isalnum() and code.isupper()):
        # no code of its own: the plan's first problem is why the controller holds it
        code, why = (problems[0].code if problems else "E_SCHEMA_INVALID"), reason
    said = f"the controller holds status {row['status']}" + (f": {why}" if why else "")
    return [Problem(code, said, "status")]


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
    (round 5). The record is read as every reader reads it (round 62:
    :func:`controller.git.ownrecord.shown_record`, the page's and MCP ``log``'s rule): the
    ``execution:`` block of the controller's last commit at the file's path that wrote it,
    ``approval:`` of its last commit of the file (none for a folder copied or moved there
    and never run at its path, nor for a new plan at a path reused since, round 63: the
    record is read within the path's current life). The controller is the config's (its
    record of its commits, else its identity), or without one the one the recorded policy
    names (round 23)."""
    import dataclasses

    from controller.git.ownrecord import OWNED

    owned = {key: plan.data.get(key) for key in OWNED} if isinstance(plan.data, dict) else {}
    is_own, unsure = _controller_of(plan.path, config)
    plans_dir = config.plans_dir if config is not None else "plans"
    found = _recorded_owned(plan.path, is_own, plan.text, plans_dir) if is_own is not None else None
    if found is None:
        return plan, unsure if any(owned.values()) else None
    recorded, notes = found
    if recorded == owned and not notes:
        return plan, None
    data = {**plan.data, **{k: v for k, v in recorded.items() if v is not None}}
    for key in OWNED:
        if recorded.get(key) is None:
            data.pop(key, None)
    # the model too: the view dumps it (its blocks are plain mappings, nothing to check)
    model = plan.model.model_copy(update={key: recorded.get(key) for key in OWNED})
    return dataclasses.replace(plan, data=data, model=model), "; ".join(notes) or None


def _record_problems(plan: Any, config: Any) -> list[Any]:
    """The record's notes of a plan that does not validate, as problems: they do not depend
    on the plan's validity (round 68: an invalid plan beside the agent's forged log showed
    only its validation problems, where the row and MCP noted the log)."""
    from controller.errors import Problem

    if not Path(plan.path).parent.is_dir():  # no folder (a path through a file): no record
        return []
    is_own, _ = _controller_of(plan.path, config)
    plans_dir = config.plans_dir if config is not None else "plans"
    found = _recorded_owned(plan.path, is_own, plan.text or None, plans_dir) if is_own else None
    notes = found[1] if found is not None else []
    return [Problem(*_code_and_message(note)) for note in notes]


def _code_and_message(note: str) -> tuple[str, str]:
    """``"E_X: why"`` -> ``("E_X", "why")`` (a note without a code is the record's)."""
    code, sep, message = note.partition(": ")
    if sep and code.startswith("E_") and code.replace("_", "").isalnum() and code.isupper():
        return code, message
    return "E_OWNED_BLOCK_CHANGED", note


def _controller_of(path: Path, config: Any) -> tuple[Any, str | None]:
    """(is a commit the controller's?, why ``show`` cannot tell): the config's controller
    (by its record of the commits it made, else its identity, as every read-only reader
    decides), or without a config the identity the recorded policies name."""
    if config is not None:
        from controller.service.statedir import is_own_commit

        return is_own_commit(config), None
    email, unsure = _recorded_controller(path)
    if not email:
        return None, unsure
    wanted = email.casefold()
    return (lambda record: record.author.email.casefold() == wanted), None


def _recorded_controller(path: Path) -> tuple[str | None, str | None]:
    """(the controller's identity, None), from the policy the controller records on its
    branch (``.plangate/policy.json``, every version on HEAD's first-parent history), when
    they all name one; else (None, why ``show`` cannot tell). Round 23: without a config,
    ``show`` took a committed rewrite of the ``execution:`` block as the record; the audit
    finds the identity the same way (:mod:`controller.approval.timeline`)."""
    import subprocess

    from controller.approval import recorded
    from controller.git.guard import argv, guarded_env
    from controller.git.records import parse_trailers

    folder = path.resolve().parent
    env = guarded_env(folder)
    spec = f":(top){recorded.POLICY_PATH}"
    form = "--format=%H%x00%ae%x00%ce%x00%s%x00%(trailers:only,unfold)%x00"
    commits: dict[str, list[str]] = {}
    # the commits that change the file, and the record commits by their subject (whose tree
    # may equal their parent's: round 61), as the audit's timeline reads them
    grep = ["--fixed-strings", f"--grep={recorded.RECORD_SUBJECT}", "HEAD"]
    for which in (["HEAD", "--", spec], grep):
        log = subprocess.run(
            argv(["log", "--first-parent", form, *which]),
            cwd=folder, env=env, capture_output=True, check=False,
        )  # fmt: skip
        fields = log.stdout.decode("utf-8", "replace").split("\0") if log.returncode == 0 else []
        for i in range(0, len(fields) - 4, 5):
            commits.setdefault(fields[i].strip(), fields[i + 1 : i + 5])
    shas = list(commits)
    if not shas:
        return None, None  # no recorded policy (or no repository): nothing to check against
    wanted = "".join(f"{sha}:{recorded.POLICY_PATH}\n" for sha in shas).encode()
    batch = subprocess.run(
        ["git", "cat-file", "--batch"], cwd=folder, env=env, input=wanted,
        capture_output=True, check=False,
    )  # fmt: skip
    named: set[str] = set()
    #: the identities some version's own sealed record commit names (round 110: once there
    #: is one, an unsealed edit or another hand's commit of the file names nobody)
    own: set[str] = set()
    out, at = batch.stdout, 0
    for author, committer, subject, trailers in commits.values():
        end = out.find(b"\n", at)
        header = out[at:end].split()
        if end < 0 or len(header) != 3:
            at = end + 1 if end >= 0 else len(out)
            continue  # "missing": the file was deleted in that commit
        size = int(header[2])
        doc = recorded.parse(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
        if doc is None:
            continue
        identity = str(doc["identity"].get("email", "")).lower()
        named.add(identity)
        parsed = parse_trailers(trailers)
        if recorded.recorded_hash(subject, parsed, author, committer, identity) is not None:
            own.add(identity)
    if own:
        named = own
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


def _recorded_owned(
    path: Path, is_own: Any, text: str | None, plans_dir: str
) -> tuple[dict[str, Any], list[str]] | None:
    """(the owned blocks as recorded, an ``E_OWNED_BLOCK_CHANGED`` note per version that is
    not the record) or None outside a git work tree or for an untracked file. ``text`` is
    the file as read (None: not read, nothing to compare with the branch). Git runs at the
    repository's top with the file's path from there (the paths its log records)."""
    import subprocess

    from controller.git import ownrecord
    from controller.git.guard import argv, guarded_env

    folder = path.resolve().parent
    env = guarded_env(folder)

    def run(*args: str, cwd: Path = folder) -> str | None:
        result = subprocess.run(
            argv(["-c", "core.quotePath=false", *args]),
            cwd=cwd,
            env=env,
            capture_output=True,
            check=False,
        )
        return result.stdout.decode("utf-8", "replace") if result.returncode == 0 else None

    top, prefix = run("rev-parse", "--show-toplevel"), run("rev-parse", "--show-prefix")
    if top is None or prefix is None:
        return None  # not in a repository: the file is all there is
    root = Path(top.strip())
    file = f"{prefix.strip()}{path.name}"
    branch = ownrecord.blocks_at(lambda *a: run(*a, cwd=root), "HEAD", file)
    if branch is None:
        return None  # not tracked: the file is all there is
    record = ownrecord.shown_record(
        lambda *a: run(*a, cwd=root), "HEAD", file, is_own, branch, plans_dir=plans_dir
    )
    notes = list(record.notes)
    working = (ownrecord.owned_blocks(text, path.name) or {}) if text is not None else branch
    if working != branch:
        notes.append(
            "E_OWNED_BLOCK_CHANGED: the execution:/approval: blocks of this file are not the "
            "controller's record (the working tree differs from the branch: uncommitted "
            "edits); shown as the controller recorded them"
        )
    return record.blocks, notes
