"""A plan shown to its readers: the reviewer's text, JSON, TOON and a pull-request comment.

One view (:func:`plan_view`, plain JSON data) feeds every machine format, so ``--format
toon`` decodes back to exactly what ``--format json`` prints. The text and markdown views
are for people: everything the plan's author wrote passes through
:func:`controller.display.visible` (text) or :func:`md_text` / :func:`md_code` (markdown),
so no control, bidi or markup character can hide or reorder what a reviewer reads.
Verbosity: ``quiet`` is one line per action, ``verbose`` adds full results and errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from controller.display import visible
from controller.plan import graphtext
from controller.plan.flows import describe_json
from controller.plan.hashing import canonical_order

if TYPE_CHECKING:
    from controller.plan.catalog import Redacting
    from controller.plan.plans import LoadedPlan
    from controller.settings import Config

Verbosity = Literal["quiet", "normal", "verbose"]
_REF = re.compile(r"\$<[^>]*>")


# --- the one data view --------------------------------------------------------------------


#: ``show`` of a plan source (PLAN.md, PLAN.json, PLAN.toon ...): what the lines mean
CONVERTED_NOTE = "shown as the daemon converts it (`plangate convert` prints the PLAN.yml)"


def plan_view(
    plan: LoadedPlan,
    config: Config | None = None,
    review: dict[str, Any] | None = None,
    redactor: Redacting | None = None,
) -> dict[str, Any]:
    """The plan as JSON data: hash, freeze state, the review (risk, estimate, approvals
    needed: ``source`` says from the config or as frozen), the model, flows, run once run.
    With a config, ``redactor`` (the records' one, ``secrets.redactor_for``) is required:
    what the catalog says is :func:`controller.plan.catalog.shown` (round 49)."""
    assert plan.model is not None
    if config is not None and redactor is None:
        raise ValueError("plan_view: a config's catalog is shown only through its redactor")
    view: dict[str, Any] = {"hash": plan.hash, "freeze_state": freeze_state(plan)}
    view.update(review or {})
    view.update(plan.model.model_dump(mode="json"))
    _with_policies(view["actions"], view.get("on_failure"))
    children = _children(plan, config)
    if config is not None:
        from controller.plan.flows import plan_flows

        models = {k: c for k, c in children.items() if not isinstance(c, dict)}
        view["flows"] = [f.to_json() for f in plan_flows(plan.model, config.tools, models)]
    if children:
        view["nested"] = [_nested_entry(plan, k, c) for k, c in children.items()]
    view.update(_second_look(plan, config, redactor))
    return view


def _children(plan: LoadedPlan, config: Config | None) -> dict[int, Any]:
    """Parent action id -> the pinned plan's model, or ``{code, message}`` of why it cannot
    be read: the reviewer approves those actions too."""
    from controller.errors import PlangateError
    from controller.plan import nested, plans

    assert plan.model is not None
    found: dict[int, Any] = {}
    for action in plan.model.actions:
        if action.plan is not None:
            try:
                child = nested.load(action.plan, config, plan.path, plans.check_document)
            except PlangateError as exc:
                found[action.id] = {"code": exc.code, "message": exc.message}
            else:
                found[action.id] = child.model
    return found


def _nested_entry(plan: LoadedPlan, action: int, child: Any) -> dict[str, Any]:
    assert plan.model is not None
    pin = next(a.plan for a in plan.model.actions if a.id == action)
    entry: dict[str, Any] = {"action": action, **(pin.model_dump(mode="json") if pin else {})}
    if isinstance(child, dict):
        entry["error"] = child
        return entry
    dumped = child.model_dump(mode="json")
    _with_policies(dumped["actions"], dumped.get("on_failure"))
    # the inputs its actions run with: the pin's, over the nested plan's own defaults (round
    # 17: the header showed the defaults while the run used the parent's values)
    given = (pin.model_dump(mode="json").get("inputs") if pin else None) or {}
    parent = next((a for a in plan.model.actions if a.id == action), None)
    given = {**given, **((parent.inputs if parent is not None else None) or {})}
    entry.update(name=child.plan.name, inputs={**(dumped["inputs"] or {}), **given})
    entry.update(preconditions=dumped["preconditions"], actions=dumped["actions"])
    return entry


def _with_policies(actions: list[dict[str, Any]], default: Any) -> None:
    """Each action's failure policy as the run applies it (``failure_policy``): its own
    ``on_failure``, else its plan's, else ``stop`` (round 17: show said "stop (plan default)"
    under a plan-level ``on_failure: skip`` or ``retry``)."""
    for action in actions:
        action["failure_policy"] = action.get("on_failure") or default or "stop"


def _second_look(
    plan: LoadedPlan, config: Config | None, redactor: Redacting | None
) -> dict[str, Any]:
    """Why the plan is where it is, what each tool maps to in the catalog, and at a gate the
    values the gated action will receive (secrets masked): what a reviewer needs before
    approving a gate or a resume."""
    from controller.plan import summary

    assert plan.model is not None
    found: dict[str, Any] = {}
    why = summary.reason(plan.data)
    if why:
        found["reason"] = why
    if config is not None and redactor is not None:
        from controller.plan.catalog import catalog_maps

        used = {str(a.tool) for a in plan.model.actions if getattr(a, "tool", None)}
        found["maps_to"] = catalog_maps(config, used, redactor)  # secrets hidden (round 49)
    if plan.status == "awaiting_approval":
        runs = summary.action_runs(plan.data)
        execution = plan.data.get("execution")
        recorded = execution.get("gate") if isinstance(execution, dict) else None
        for action in plan.model.actions:
            if runs.get(action.id, {}).get("status") in ("succeeded", "skipped"):
                continue
            if isinstance(recorded, dict) and recorded.get("action") == action.id:
                # what the engine resolved at the pause, from whole outputs and results
                # (round 22); the file's own outputs are cut and hold no results
                gate = {"action": action.id, "values": recorded.get("params") or {}}
                parts = ("inputs", "actions", "checks", "note")
                gate.update({k: recorded[k] for k in parts if k in recorded})
                found["gate"] = gate
            else:  # a pause recorded before previews were: rebuilt from the file
                found["gate"] = {
                    "action": action.id,
                    "values": summary.gate_values(plan.data, action),
                }
            break
    return found


def freeze_state(plan: LoadedPlan) -> str:
    if plan.frozen_hash is None:
        return "not frozen"
    return "frozen" if plan.frozen_hash == plan.hash else "STALE: changed since frozen"


def to_json(view: dict[str, Any]) -> str:
    return json.dumps(view, indent=2)


def to_toon(view: dict[str, Any]) -> str:
    """TOON (the maintained ``toon-format`` library): ``toon_format.decode`` gives ``view``."""
    import toon_format

    return str(toon_format.encode(view))


# --- text, for a reviewer at a terminal ---------------------------------------------------


def to_text(view: dict[str, Any], verbosity: Verbosity = "normal", color: bool = False) -> str:
    bold: Callable[[str], str] = (lambda s: f"\033[1m{s}\033[0m") if color else (lambda s: s)
    header = view["plan"]
    lines = [bold(f"Plan: {visible(header['name'])}")]
    if verbosity != "quiet":
        lines.append(f"Task:    {visible(header['task'])}")
    reason = f" - {visible(view['reason'])}" if view.get("reason") else ""
    lines.append(f"Status:  {visible(header['status'])}{reason}")
    approval: dict[str, Any] = view["approval"] if isinstance(view.get("approval"), dict) else {}
    if approval.get("by") and approval.get("status") == "approved":
        lines.append(f"Approved: by {visible(str(approval['by']))} at {approval.get('at', '?')}")
    lines.append(f"Hash:    {view['hash']}  ({view['freeze_state']})")
    for pre in view.get("preconditions") or []:  # plan-level: checked before any action
        lines.append(f"Before any action: {visible(graphtext.check_text('precondition', pre))}")
    if view.get("converted_from"):
        lines.append(f"Source:  {visible(str(view['converted_from']))}, {CONVERTED_NOTE}")
    if view.get("record_warning"):
        lines.append(f"WARNING: {visible(str(view['record_warning']))}")
    lines += review_lines(view)
    if view.get("inputs") and verbosity != "quiet":
        lines.append(f"Inputs:  {_json(view['inputs'])}")
    runs = _runs(view)
    if verbosity != "quiet":
        drawn = graphtext.graph_lines(view, runs)
        lines += ["", *drawn] if drawn else []
    nested = {n["action"]: n for n in view.get("nested") or []}
    for action in view["actions"]:
        run = runs.get(action["id"], {})
        if verbosity == "quiet":
            ran = "".join(
                f"; fallback {visible(str(key))} {visible(str(step.get('status')))}"
                for key, _, step in _fallback_runs(action, runs)
            )
            head = f"[{action['id']}] {visible(_callee(action))}"
            lines.append(f"{head}  {run.get('status', '')}{ran}".rstrip())
            continue
        lines += [
            "",
            bold(f"[{action['id']}] {visible(_callee(action))}") + f" - {visible(action['why'])}",
        ]
        mapped = (view.get("maps_to") or {}).get(action.get("tool"))
        if mapped:
            lines.append(f"    runs: {visible(mapped)}")
        lines += [f"    {line}" for line in _details(action, color)]
        lines += [f"    {line}" for line in _run_lines(run, verbosity)]
        if action.get("plan"):
            lines += [f"    {line}" for line in _nested(action, nested, runs, verbosity, color)]
        lines += [f"    {line}" for line in _fallback_lines(action, runs, verbosity)]
        gate = view.get("gate") or {}
        if gate.get("action") == action["id"]:
            lines.append("    WAITING HERE: approving the gate runs it with these values:")
            lines += [f"      {line}" for line in gate_lines(gate)]
    if "flows" not in view and verbosity != "quiet":
        lines += ["", "Flows: (no config found: run with --config to see where outside data goes)"]
    elif verbosity != "quiet":
        flows = view["flows"]
        lines += [
            "",
            f"Flows ({len(flows)}):" if flows else "Flows: none (no param uses an output)",
        ]
        lines += [f"    {visible(describe_json(flow))}" for flow in flows]
    return "\n".join(lines)


def gate_lines(gate: dict[str, Any]) -> list[str]:
    """A pause's preview: the action's params, a nested plan's inputs and its actions'
    params, and the params of the action's checks, each ``name = JSON``."""
    lines = [f"{visible(k)} = {_json(v)}" for k, v in (gate.get("values") or {}).items()]
    lines += [f"input {visible(k)} = {_json(v)}" for k, v in (gate.get("inputs") or {}).items()]
    for step in gate.get("actions") or []:
        if not isinstance(step, dict):
            continue
        if "error" in step:
            lines.append(f"nested plan: {visible(str(step['error']))}")
            continue
        head = f"[{visible(str(step.get('action')))}] {visible(str(step.get('tool')))}:"
        params = step.get("params") or {}
        lines += [f"{head} {visible(k)} = {_json(v)}" for k, v in params.items()] or [head]
    for check in gate.get("checks") or []:
        if not isinstance(check, dict):
            continue
        head = f"{visible(str(check.get('check')))} ({visible(str(check.get('tool')))}):"
        params = check.get("params") or {}
        lines += [f"{head} {visible(k)} = {_json(v)}" for k, v in params.items()] or [head]
    if gate.get("note"):
        lines.append(f"({visible(str(gate['note']))})")
    return lines


def review_lines(view: dict[str, Any]) -> list[str]:
    """``Risk:``, ``Estimate:`` and ``Needs:`` lines (none without a review)."""
    if "risk" not in view and "policy" not in view:
        return []
    suffix = "  (as frozen)" if view.get("source") == "frozen" else ""
    lines = [f"Risk:    {visible(str(view.get('risk', '?')))}{suffix}"]
    estimate = view.get("estimate")
    if isinstance(estimate, dict):
        lines.append(f"Estimate: {format_estimate(estimate)}{suffix}")
    policy = view.get("policy")
    if isinstance(policy, dict):
        from controller.approval.policy import describe_record

        lines.append(f"Needs:   {visible(describe_record(policy))}{suffix}")
    return lines


def format_estimate(estimate: dict[str, Any]) -> str:
    seconds = float(estimate.get("seconds") or 0)
    cost = float(estimate.get("cost_usd") or 0)
    return f"{seconds:g} s, ${cost:.2f}"


def _details(action: dict[str, Any], color: bool) -> list[str]:
    lines = []
    if action.get("requires_approval"):
        lines.append("GATE: pauses here for a second approval before running")
    if action.get("needs") is not None:
        lines.append(f"needs: {', '.join(map(str, action['needs'])) or 'nothing (starts at once)'}")
    if action.get("plan"):
        lines.append(
            f"nested plan {visible(action['plan']['path'])} pinned at {action['plan']['hash']}"
        )
    for key, value in (action.get("inputs") or {}).items():
        lines.append(f"input {visible(key)} = {_highlight(_json(value), color)}")
    for key, value in (action.get("params") or {}).items():
        lines.append(f"param {visible(key)} = {_highlight(_json(value), color)}")
    for output in action.get("outputs") or []:
        optional = " (optional)" if output.get("optional") else ""
        lines.append(f"output {output['name']} <- {visible(output['path'])}{optional}")
    for pre in action.get("preconditions") or []:
        lines.append(_highlight(graphtext.check_text("precondition", pre), color))
    if action.get("verify"):
        lines.append(_highlight(graphtext.check_text("verify", action["verify"]), color))
    if action.get("timeout") is not None:
        lines.append(f"timeout: {_json(action['timeout'])}")
    lines.append(f"on failure: {policy(action)}")
    for guard in action.get("guards") or []:
        lines.append(f"guard {visible(guard['param'])}: {graphtext.guard_text(guard)}")
    for step in action.get("fallback") or []:
        # a fallback step runs a tool as an action does: everything it runs with is shown
        # (its params, checks and guards), never only its name (round 6)
        lines.append(f"fallback [{step['id']}] {visible(step['tool'])} - {visible(step['why'])}")
        lines += [f"    {line}" for line in _details(step, color)]
    return lines


def _nested(
    action: dict[str, Any],
    nested: dict[Any, dict[str, Any]],
    runs: dict[Any, dict[str, Any]],
    verbosity: Verbosity,
    color: bool,
) -> list[str]:
    """The pinned plan's actions under the action that runs it, keyed as the journal keys
    them (``2/1``), each with its params, checks and (once run) its status."""
    child = nested.get(action["id"])
    if child is None:
        return ["its actions: not read (run show inside the plans repository, or with --config)"]
    if child.get("error"):
        error = child["error"]
        return [
            f"its actions: cannot be read: {visible(error['code'])}: {visible(error['message'])}"
        ]
    lines = [f'its actions ("{visible(child["name"])}", inputs {_json(child["inputs"])}):']
    for pre in child.get("preconditions") or []:
        lines.append(f"  before them: {graphtext.check_text('precondition', pre)}")
    for inner in child.get("actions") or []:
        key = f"{action['id']}/{inner['id']}"
        lines.append(f"  [{key}] {graphtext.callee(inner)} - {visible(inner['why'])}")
        lines += [f"      {line}" for line in _details(inner, color)]
        lines += [f"      {line}" for line in _run_lines(runs.get(key, {}), verbosity)]
        prefix = f"{action['id']}/"
        lines += [f"      {line}" for line in _fallback_lines(inner, runs, verbosity, prefix)]
    return lines


def _run_lines(run: dict[str, Any], verbosity: Verbosity) -> list[str]:
    if not run:
        return []
    duration = f" in {run['duration_ms']} ms" if run.get("duration_ms") is not None else ""
    lines = [f"ran: {visible(str(run.get('status')))}{duration}"]
    if run.get("outputs"):
        lines.append(f"outputs: {_json(run['outputs'])}")
    error = run.get("error")
    if isinstance(error, dict):
        message = str(error.get("message", ""))
        if verbosity != "verbose" and len(message) > 200:
            message = message[:197] + "..."
        lines.append(f"error: {visible(str(error.get('code')))}: {visible(message)}")
    if verbosity == "verbose":
        extra = {k: v for k, v in run.items() if k not in ("id", "status", "outputs", "error")}
        if extra:
            lines.append(f"run: {_json(extra)}")
    return lines


def _fallback_runs(
    action: dict[str, Any], runs: dict[Any, dict[str, Any]], prefix: str = ""
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``(key, step, run)`` of each of the action's fallback steps that ran, in order (keyed
    as the journal keys them: ``1.1``, a nested action's ``3/1.1``)."""
    found = []
    for step in action.get("fallback") or []:
        key = f"{prefix}{step.get('id')}" if isinstance(step, dict) else ""
        if runs.get(key):
            found.append((key, step, runs[key]))
    return found


def _fallback_lines(
    action: dict[str, Any], runs: dict[Any, dict[str, Any]], verbosity: Verbosity, prefix: str = ""
) -> list[str]:
    """What each fallback step that ran did, under its action (round 128: a fallback step in
    doubt or failed with its own code was shown nowhere; a human approving a resume must be
    told it may have taken effect)."""
    lines = []
    for key, _, run in _fallback_runs(action, runs, prefix):
        ran = _run_lines(run, verbosity)
        lines.append(f"fallback [{visible(key)}] {ran[0]}")
        lines += [f"    {line}" for line in ran[1:]]
    return lines


def _runs(view: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    execution = view.get("execution")
    actions = execution.get("actions") if isinstance(execution, dict) else None
    if not isinstance(actions, list):
        return {}
    return {a.get("id"): a for a in actions if isinstance(a, dict)}


def _callee(action: dict[str, Any]) -> str:
    if action.get("tool"):
        return str(action["tool"])
    nested = action.get("plan") or {}
    return f"plan {nested.get('path', '?')}"


def policy(action: dict[str, Any]) -> str:
    """``retry up to 2 times; timeout 30s``: an action's failure policy in words."""
    own = action.get("on_failure")
    effective = own or action.get("failure_policy") or "stop"
    text = str(effective) if own else f"{effective} (plan default)"
    if effective == "retry":
        retry = action.get("retry") or {}
        attempts = retry.get("attempts", action.get("retries"))
        text += f" up to {attempts if attempts is not None else 3} times"
    if action.get("timeout"):
        text += f"; timeout {action['timeout']:g}s"
    return text


def _json(value: Any) -> str:
    """JSON of a value, its mappings in the hash's order: the order the tool gets them in."""
    return visible(json.dumps(canonical_order(value), ensure_ascii=False))


def _highlight(text: str, color: bool) -> str:
    """``text`` with each reference marked, read as :func:`controller.plan.refs.parse` reads
    it: ``$$<`` is a literal ``$<``, never a reference (round 15: ``$$<inputs.k>`` was shown
    marked, as ``$`` and a reference, while the tool got the literal text)."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find("$", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        if text.startswith("$$<", j):
            out.append(text[i : j + 3])
            i = j + 3
            continue
        found = _REF.match(text, j)
        if found is None:
            out.append(text[i : j + 1])
            i = j + 1
            continue
        ref = found.group(0)
        out.append(text[i:j] + (f"\033[36m{ref}\033[0m" if color else f"«{ref}»"))
        i = found.end()


# --- markdown, for a pull-request comment -------------------------------------------------


def to_markdown(view: dict[str, Any], verbosity: Verbosity = "normal") -> str:
    header = view["plan"]
    lines = [f"### Plan: {md_text(header['name'])}", ""]
    if verbosity != "quiet":
        lines += [md_text(header["task"]), ""]
    lines += [
        "| | |",
        "|---|---|",
        f"| Status | {md_cell(header['status'])} |",
        f"| Hash | `{view['hash']}` ({md_cell(view['freeze_state'])}) |",
        f"| Actions | {len(view['actions'])} |",
        "",
    ]
    if view.get("converted_from"):
        lines += [f"Source: {md_text(str(view['converted_from']))}, {CONVERTED_NOTE}", ""]
    if view.get("record_warning"):
        lines += [f"> **Warning:** {md_text(str(view['record_warning']))}", ""]
    runs = _runs(view)
    ran = bool(runs)
    head = "| # | tool | why | on failure |" + (" ran |" if ran else "")
    lines += [head, "|---|---|---|---|" + ("---|" if ran else "")]
    nested = {n["action"]: n for n in view.get("nested") or []}
    for action in view["actions"]:
        rows = [(action["id"], action)]
        for inner in nested.get(action["id"], {}).get("actions", []):
            rows.append((f"{action['id']}/{inner['id']}", inner))
            prefix = f"{action['id']}/"
            rows += [(key, step) for key, step, _ in _fallback_runs(inner, runs, prefix)]
        rows += [(key, step) for key, step, _ in _fallback_runs(action, runs)]
        for key, item in rows:  # a nested plan's actions, then fallback steps that ran
            row = (
                f"| {key} | {md_cell(_callee(item))} | {md_cell(item['why'])} "
                f"| {md_cell(policy(item))} |"
            )
            if ran:
                row += f" {md_cell(str(runs.get(key, {}).get('status', '')))} |"
            lines.append(row)
    gate = view.get("gate") or {}
    if gate:
        lines += ["", f"**Waiting at action {gate.get('action')}: approving runs it with:**", ""]
        lines += md_code("\n".join(gate_lines(gate)))
    drawn = graphtext.graph_lines(view, runs)
    if drawn and verbosity != "quiet":
        lines += ["", "<details><summary>Graph</summary>", "", *md_code("\n".join(drawn))]
        lines += ["", "</details>"]
    if verbosity != "quiet":
        lines += ["", "<details><summary>Params, outputs and checks</summary>", ""]
        for action in view["actions"]:
            lines += [f"**[{action['id']}] {md_text(_callee(action))}**", ""]
            lines += md_code(
                json.dumps(
                    canonical_order(_md_detail(action, runs, verbosity)),
                    indent=2,
                    ensure_ascii=False,
                ),
                "json",
            )
            lines.append("")
        lines.append("</details>")
    flows = view.get("flows") or []
    unguarded = [f for f in flows if not f["trusted"] and f["sensitive"] and not f["guarded"]]
    if unguarded:
        lines += ["", "**Unguarded flows of outside data into sensitive params:**", ""]
        lines += [f"- {md_text(describe_json(f))}" for f in unguarded]
    return "\n".join(lines) + "\n"


def _md_detail(action: dict[str, Any], runs: dict[Any, Any], verbosity: Verbosity) -> Any:
    keep = {
        k: v
        for k, v in action.items()
        if k not in ("id", "tool", "why") and v not in (None, [], {}, False)
    }
    run = runs.get(action["id"])
    if run and verbosity == "verbose":
        keep["run"] = run
    elif run:
        keep["run"] = {k: run[k] for k in ("status", "outputs", "error") if k in run}
    return keep


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def md_text(text: str) -> str:
    """Author text as inert markdown: hidden characters escaped, markup and HTML escaped,
    one line (a newline could start a heading or close a table)."""
    flat = " ".join(visible(str(text)).split())
    escaped = _MD_SPECIAL.sub(r"\\\1", flat)
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_cell(text: str) -> str:
    return md_text(text)


def md_code(text: str, lang: str = "") -> list[str]:
    """A fenced block that no backtick run inside ``text`` can close early."""
    shown = "\n".join(visible(line) for line in text.split("\n"))
    longest = max((len(m) for m in re.findall(r"`+", shown)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{lang}", shown, fence]
