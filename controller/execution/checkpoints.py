"""Checkpoints of a run: PLAN.yml's ``execution:`` block and EXECUTION_LOG.md (SPEC §7).

Both are rendered from the journal's folded state (already redacted) at the run's start,
gates and end, and in between at most every ``execution.checkpoint_interval`` seconds, and
never more than about 1/``CHECKPOINT_SHARE`` of the run's time: a long plan costs O(N)
journal records rather than N rewrites of an N-action file. The state is read under the
run's lock, since actions of a graph end on other threads meanwhile.

Each is rendered with the controller's own marks (``✅``, ``·``, ``…``) unless its checkout
would not give it back (the caller's ``gives_back``, asked of the blob as committed at its
path: :func:`controller.git.conversion.gives_back`, round 79's rule), and then again with
their ASCII forms (:data:`controller.execution.logbook.ASCII_MARKS`; round 80: a
``working-tree-encoding=ISO-8859-1`` folder's log read modified after every run). Where that
rendering still would not come back (round 83: it quotes the plan's text or a tool's output
the encoding cannot hold), every character the checkout cannot hold (each asked alone, once a
run) is written in a reversible ASCII form, whoever wrote it: the log's HTML references
(:func:`controller.execution.logbook.escaped`), the block's YAML escapes
(:class:`controller.plan.yamlio.Escaped`). Both are applied to the rendering of the journal's
state, which is redacted already. What no such form reaches is committed all the same: the
record is never lost or stalled.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from controller import fsutil
from controller.errors import PlangateError
from controller.execution import logbook
from controller.plan import plans, refs, yamlio
from controller.plan.hashing import idempotency_key

if TYPE_CHECKING:
    from pathlib import Path

    import structlog

    from controller.execution.journal import ActionKey, ActionRecord, Replay
    from controller.plan.graph import Graph
    from controller.plan.schema import Action, FallbackStep, PlanDocument
    from controller.settings import Config

#: Checkpoints take at most about 1/this of a run's time.
CHECKPOINT_SHARE = 10
#: Output values longer than this (as JSON) are shown cut in PLAN.yml; the log has them whole.
STATE_VALUE_CHARS = 200
#: What the params and result blocks of one EXECUTION_LOG.md hold together, at most: each
#: block is cut at ``limits.max_result_bytes`` or at its share of this, the smaller (round
#: 18: 20 actions printing 70 KB each committed a 1.3 MB log), so the whole log stays under
#: 1 MiB for a plan within the default limits.
LOG_BLOCKS_BYTES = 640 * 1024
#: No block is cut shorter than this.
MIN_BLOCK_BYTES = 512

#: Would git give these blobs (by path in the repository) back from its checkout?
GivesBack = Callable[[Mapping[str, bytes]], bool]
_Rendered = TypeVar("_Rendered")


class Checkpoints:
    """Brings PLAN.yml's ``execution:`` and EXECUTION_LOG.md up to date, at most so often."""

    def __init__(
        self,
        *,
        config: Config,
        plan: plans.LoadedPlan,
        model: PlanDocument,
        graph: Graph,
        plan_hash: str,
        plan_id: str,
        approval: dict[str, Any],
        state: Replay,
        lock: threading.Lock,
        log: structlog.stdlib.BoundLogger,
        nested: dict[int, PlanDocument] | None = None,
        root: Path | None = None,
        mask: Callable[[Any], Any] | None = None,
        gives_back: GivesBack | None = None,
        on_disk: bool = True,
    ) -> None:
        self.config = config
        #: False: the run's files are never written (the controller's commits write them;
        #: :attr:`controller.execution.executor.Engine.on_disk`): a checkpoint is rendered
        #: only for the run's outcome, never while it runs.
        self.on_disk = on_disk
        #: Asked of each rendering (None: every checkout gives it back); see the docstring.
        self.gives_back = gives_back
        #: The redactor's search for secrets' values: the log's params are built from their
        #: parts with it (:func:`refs.recorded`, round 67); None: as the journal holds them.
        self.mask = mask
        #: prefix -> (outputs, results) the journal holds, for one rendering of the log.
        self._journaled: dict[str, tuple[dict[int, Any], dict[int, Any]]] = {}
        #: The working tree the plan's files lie in: no folder below it is followed as a link.
        self.root = root if root is not None and plan.path.is_relative_to(root) else None
        self.plan = plan
        self.model = model
        self.graph = graph
        self.hash = plan_hash
        self.plan_id = plan_id
        self.approval = approval
        self.state = state
        self.lock = lock
        self.log = log
        self.nested = nested if nested is not None else {}
        self._limit: int | None = None
        #: The execution block this checkpoint built and its YAML (``{"execution": block}``),
        #: when :func:`_bounded` dumped it to measure it: the same text is what PLAN.yml gets.
        self._dumped: tuple[dict[str, Any], str] | None = None
        #: the graph's edges as the log draws them (logbook.reduced_needs), once per run
        self._reduced: tuple[list[tuple[int, int]], int] | None = None
        self.interval = config.execution.checkpoint_interval
        self.last = 0.0
        self.cost = 0.0
        self.controller = f"{config.identity.name}@{socket.gethostname()}"
        self.plan_file = plan.path
        self.log_file = plan.path.with_name("EXECUTION_LOG.md")
        # Sections of finished actions never change: render each once (per form of the
        # marks). Nor does the section of an action nothing has happened to yet (a
        # 1,000-action plan's checkpoints rendered all the pending ones again each time).
        self._done_sections: dict[tuple[bool, int], str] = {}
        self._pending_sections: dict[tuple[bool, int], str] = {}
        #: What the last checkpoint produced: the controller commits these, never the files
        #: (an agent sharing the working tree may rewrite them or swap in a symlink).
        self.block: dict[str, Any] | None = None
        self.log_text: str | None = None
        #: The text of PLAN.yml this run wrote last.
        self._written: str | None = None
        #: At a pause: what approving it runs with (:mod:`controller.execution.gateview`).
        self.gate: dict[str, Any] | None = None
        #: (path, character) -> does that record's checkout give it back (round 83)
        self._held: dict[tuple[str, str], bool] = {}

    def progress(self, status: str) -> None:
        """A checkpoint of the run going on (its start), on disk only."""
        if self.on_disk:
            self.write(status)

    def maybe_write(self) -> None:
        if not self.on_disk:
            return
        # Never spend more than ~1/CHECKPOINT_SHARE of the run rewriting state files, however
        # large the plan: the gap grows with the cost of the last write.
        gap = max(self.interval, self.cost * CHECKPOINT_SHARE)
        if time.monotonic() - self.last >= gap:
            self.write("executing")

    def render(self, status: str, *, final: bool = False) -> tuple[dict[str, Any], str]:
        """Produce the execution block and the log text in memory (kept as :attr:`block`,
        :attr:`log_text`)."""
        # The journal's outcome time: a re-rendering (a completed run asked again, whose first
        # outcome commit did not land) produces the very bytes written the first time.
        finished = (self.state.last_outcome_at or plans.now_utc()) if final else None
        plan_file = f"{self.plan_id}/{self.plan_file.name}"
        with self.lock:
            self.block = block = self._given_back(
                plan_file,
                lambda: self.execution_block(status, finished),
                self._block_bytes,
                _escaped_block,
            )
            self.log_text = text = self._given_back(
                f"{self.plan_id}/{self.log_file.name}",
                lambda: self.render_log(status, finished),
                str.encode,
                logbook.escaped,
            )
        return block, text

    def _given_back(
        self,
        path: str,
        produce: Callable[[], _Rendered],
        blob: Callable[[_Rendered], bytes],
        escape: Callable[[_Rendered, Callable[[str], bool]], _Rendered],
    ) -> _Rendered:
        """``produce()`` with the controller's marks, or with their ASCII forms where that
        rendering's checkout at ``path`` would not give it back (round 80), and then, where
        it still would not, with every character the checkout cannot hold in its reversible
        ASCII form (``escape``; round 83: the plan's own text and a tool's output)."""
        rendered = produce()
        data = blob(rendered)
        # an ASCII rendering holds no mark to write otherwise: git is asked nothing
        if self.gives_back is None or data.isascii() or self.gives_back({path: data}):
            return rendered
        with logbook.ascii_marks():
            rendered = produce()
        data = blob(rendered)
        if data.isascii() or self.gives_back({path: data}):
            return rendered

        def held(char: str) -> bool:
            return self._holds(path, char)

        with logbook.ascii_marks(), logbook.escaping(held):  # the log's bound counts escapes
            return escape(produce(), held)

    def _holds(self, path: str, char: str) -> bool:
        """Does the checkout of ``path`` give ``char`` back (asked of it alone, once a run)?"""
        known = self._held.get((path, char))
        if known is None:
            gives_back = self.gives_back
            known = gives_back is None or gives_back({path: char.encode("utf-8", "replace")})
            self._held[(path, char)] = known
        return known

    def write(self, status: str, *, final: bool = False) -> None:
        started = time.monotonic()
        try:
            block, text = self.render(status, final=final)
            if self.on_disk:
                self._write_plan(block)
                fsutil.write_atomic(self.log_file, text, root=self.root)
        except (PlangateError, OSError) as exc:
            # The journal is the record of truth; a state file we cannot write is reported.
            self.log.error("checkpoint_failed", error=str(exc))
        finally:
            self._dumped = None  # the block is the outcome's from here: never read again
        self.last = time.monotonic()
        self.cost = self.last - started

    def execution_block(self, status: str, finished: str | None) -> dict[str, Any]:
        actions = []
        for action in self.model.actions:
            actions.append(self._action_state(action.id))
            actions += [self._action_state(k) for k in self._inner_keys(action) if self._ran(k)]
        block: dict[str, Any] = {
            "status": status,
            "controller": self.controller,
            "started_at": self.state.first_run_at,
            "finished_at": finished,
            "actions": actions,
        }
        if finished and self.state.last_outcome_error:  # a failure of no single action
            block["error"] = self.state.last_outcome_error
        if status == "awaiting_approval" and self.gate is not None:
            block["gate"] = self.gate
        room = plans.controller_room(self.config.limits.max_plan_bytes)
        bounded, text = _bounded(block, room * 3 // 4)
        self._dumped = (bounded, text) if text is not None else None
        return bounded

    def _block_bytes(self, block: dict[str, Any]) -> bytes:
        """The ``execution:`` block as PLAN.yml holds it (its marks' checkout is asked of it):
        the text :func:`_bounded` measured it by, when it is that very block."""
        return self._block_text(block).encode("utf-8")

    def _block_text(self, block: dict[str, Any]) -> str:
        dumped = self._dumped
        if dumped is not None and dumped[0] is block:
            return dumped[1]  # built for this checkpoint, unchanged since: dumped once
        text = yamlio.dump({"execution": block})
        self._dumped = (block, text)
        return text

    def _inner_keys(self, action: Action) -> list[ActionKey]:
        """Keys of a nested plan's actions (and their fallbacks), then the action's fallbacks:
        the nested plan's in its order, and every other the journal holds under the action
        (round 109: a nested plan not known on this pass still had its steps recorded)."""
        keys: list[ActionKey] = []
        child = self.nested.get(action.id)
        for inner in child.actions if child is not None else ():
            keys.append(f"{action.id}/{inner.id}")
            keys += [f"{action.id}/{step.id}" for step in inner.fallback]
        if action.plan is not None:
            prefix, known = f"{action.id}/", set(keys)
            held = [k for k in self.state.actions if str(k).startswith(prefix) and k not in known]
            keys += sorted(held, key=_step_order)
        return keys + [step.id for step in action.fallback]

    def _ran(self, key: ActionKey) -> bool:
        return key in self.state.actions

    def _action_state(self, key: ActionKey) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": key, "key": idempotency_key(self.hash, key)}
        entry["status"] = "pending"
        rec = self.state.actions.get(key)
        if rec is None:
            return entry
        entry.update(status=rec.status, attempts=rec.attempts)
        end = rec.end if not rec.open_start else None
        if rec.last_start:
            entry["started_at"] = rec.last_start.get("at")
        elif end is not None and end.get("from_record") and end.get("started_at"):
            entry["started_at"] = end["started_at"]  # as the committed record said (round 45)
        if end is not None:
            entry["duration_ms"] = end.get("duration_ms")
            entry["outputs"] = {k: _shown(v) for k, v in (end.get("outputs") or {}).items()}
            if end.get("error"):
                entry["error"] = end["error"]
        return entry

    def _write_plan(self, block: dict[str, Any]) -> None:
        # never through a symlink or into a FIFO an agent swapped in (E_UNSAFE_PATH)
        try:
            text = fsutil.read_regular(self.plan_file, root=self.root).decode("utf-8")
        except UnicodeDecodeError:  # round 76: a working-tree-encoding: another text (below)
            return
        loaded = self.plan
        if loaded.doc is not None and text in (loaded.text, self._written):
            # the file holds the plan as run, or as this run last wrote it (the same text with
            # another execution block): edit the parse the run started from, never reparse
            doc = loaded.doc
        elif loaded.doc is not None:
            # Another text now (an edit, or the folder removed and another plan put there
            # during the run, round 42): not this run's file any more. The run's record is
            # its journal and the outcome commit (RunOutcome.execution); nothing is written
            # over someone else's file (the old doc was once written back over a new plan).
            return
        else:
            doc = yamlio.read_yaml(text, str(self.plan_file))
        # not read back (a 1,000-action run writes one per action): never committed, and
        # the start and the outcome commit make the same edit of this parse, checked
        dumped = {"execution": self._block_text(block)}
        self._written = yamlio.set_block(doc, "execution", block, checked=False, dumped=dumped)
        fsutil.write_atomic(self.plan_file, self._written, root=self.root)

    def render_log(self, status: str, finished: str | None) -> str:
        approval = self.approval
        header = logbook.LogHeader(
            name=self.model.plan.name,
            plan_id=self.plan_id,
            plan_hash=self.hash,
            approved_by=str(approval.get("by") or ""),
            approval_commit=str(approval.get("commit") or ""),
            started_at=self.state.first_run_at or "",
            status=status,
            finished_at=finished,
        )
        self._journaled.clear()  # the outputs and results the log's params read, per render
        sections = [self._section(a) for a in self.model.actions]
        views = {a.id: self._view(self.state.actions.get(a.id)) for a in self.model.actions}
        if self._reduced is None:
            ids = [a.id for a in self.model.actions]
            self._reduced = logbook.reduced_needs(ids, self.graph.needs)
        graph = logbook.render_graph(self.model.actions, self.graph.needs, views, self._reduced)
        checks = logbook.render_checks(
            "Plan preconditions", self.model.preconditions, self.state.plan_checks
        )
        waiting = logbook.render_gate(self.gate) if status == "awaiting_approval" else ""
        return logbook.render(header, sections, graph=graph, plan_checks=checks, waiting=waiting)

    def _block_limit(self) -> int:
        """Where each params or result block of the log is cut: ``max_result_bytes``, or the
        block's share of :data:`LOG_BLOCKS_BYTES` among every step that may run (actions,
        fallback steps, nested plans' actions), the smaller."""
        if self._limit is None:
            plans_run = [self.model, *self.nested.values()]
            steps = sum(1 + len(a.fallback) for doc in plans_run for a in doc.actions)
            share = max(MIN_BLOCK_BYTES, LOG_BLOCKS_BYTES // (2 * max(1, steps)))
            self._limit = min(self.config.limits.max_result_bytes, share)
        return self._limit

    def _view(self, rec: ActionRecord | None) -> logbook.ActionView:
        if rec is None:
            return logbook.ActionView()
        end = None if rec.open_start else rec.end
        checks = [c for c in rec.checks if c.get("attempt") == rec.attempts]
        return logbook.ActionView(rec.status, rec.last_start, end, rec.attempts, checks)

    def _plan_fields(self) -> dict[str, Any]:
        """What ``$<plan.*>`` reads in this plan's actions: its author's text and its hash."""
        meta = self.model.plan
        return {"name": meta.name, "task": meta.task, "hash": self.hash}

    def _section(self, action: Action) -> str:
        key = (logbook.ascii_marks_on(), action.id)
        if key in self._done_sections:
            return self._done_sections[key]
        rec = self.state.actions.get(action.id)
        pending = rec is None and not any(self._ran(k) for k in self._inner_keys(action))
        if pending and key in self._pending_sections:
            return self._pending_sections[key]
        limit = self._block_limit()
        own = self._plan_fields()
        mine = self.model.inputs  # a top-level plan's inputs: its author's literals
        ctx = self._recorded_ctx(own, mine, "")
        child = self.nested.get(action.id)
        shown = self._child_inputs(action, child, ctx)
        text = logbook.render_action(
            action, self._view(rec), limit, fields=own, inputs=mine,
            recorded=self._shown(ctx, shown if child is not None else None),
        )  # fmt: skip
        if child is not None:
            text += self._nested_sections(action, child, shown, limit)
        for step in action.fallback:
            if self._ran(step.id):
                text += "\n" + logbook.render_action(
                    step,
                    self._view(self.state.actions.get(step.id)),
                    limit,
                    fields=own,
                    inputs=mine,
                    recorded=self._shown(ctx),
                )
        if rec is not None and rec.done:
            self._done_sections[key] = text
        elif pending:
            self._pending_sections[key] = text
        return text

    def _nested_sections(
        self, action: Action, child: PlanDocument, shown: dict[str, Any], limit: int
    ) -> str:
        """The sections of a nested plan's actions that ran, its fallbacks'."""
        # a child's inputs are its authors' where every value filling them is (round 66)
        own, mine = self._plan_fields(), self.model.inputs
        theirs = refs.authored_inputs(action.inputs or {}, child.inputs, own, mine)
        pin = getattr(action.plan, "hash", "")
        fields = {"name": child.plan.name, "task": child.plan.task, "hash": pin}
        inner_ctx = self._recorded_ctx(fields, shown, f"{action.id}/", shown)
        text = ""
        for inner in child.actions:
            specs: list[Action | FallbackStep] = [inner, *inner.fallback]
            for spec in specs:
                key = f"{action.id}/{spec.id}"
                if self._ran(key):
                    view = self._view(self.state.actions.get(key))
                    text += "\n" + logbook.render_action(
                        spec, view, limit, key=key, inputs=theirs,
                        recorded=self._shown(inner_ctx),
                    )  # fmt: skip
        return text

    def _recorded_ctx(
        self,
        fields: dict[str, Any],
        inputs: Any,
        prefix: str,
        shown: Any = None,
    ) -> refs.Context | None:
        """What the log's params are built from (round 67): the plan's fields and inputs,
        the journal's outputs and results (redacted: the controller's material as recorded)
        of the actions under ``prefix``, and every secret ``***``."""
        if self.mask is None:
            return None
        if prefix not in self._journaled:
            self._journaled[prefix] = self._journaled_under(prefix)
        outputs, results = self._journaled[prefix]
        return refs.Context(
            inputs=dict(inputs or {}), plan=fields, outputs=outputs, results=results,
            secret=lambda name: refs.MASKED, shown_inputs=shown,
        )  # fmt: skip

    def _journaled_under(self, prefix: str) -> tuple[dict[int, Any], dict[int, Any]]:
        outputs: dict[int, Any] = {}
        results: dict[int, Any] = {}
        for key, rec in self.state.actions.items():
            local = str(key)[len(prefix) :] if str(key).startswith(prefix) else ""
            end = rec.end
            if local.isdigit() and rec.done and end and end.get("status") == "succeeded":
                outputs[int(local)] = end.get("outputs") or {}
                results[int(local)] = end.get("result")
        return outputs, results

    def _child_inputs(
        self, action: Action, child: PlanDocument | None, ctx: refs.Context | None
    ) -> dict[str, Any]:
        """A nested plan's inputs as its parent's record shows them: its defaults and the
        parent's values built from their parts (the child reads them so)."""
        if child is None or ctx is None:
            return {}
        try:
            given = refs.recorded(action.inputs or {}, ctx, self._mask)
        except PlangateError:
            return {}
        return {**child.inputs, **given}

    def _mask(self, value: Any) -> Any:
        return value if self.mask is None else self.mask(value)

    def _shown(
        self, ctx: refs.Context | None, nested_inputs: dict[str, Any] | None = None
    ) -> Callable[[Any], Any] | None:
        """The log's params of a step as built from their parts, or None (as the journal
        holds them, :func:`refs.authored`): a nested plan's action shows its inputs."""
        if ctx is None:
            return None
        if nested_inputs is not None:
            return lambda written: nested_inputs or None
        return lambda written: refs.recorded(written, ctx, self._mask)


def _bounded(block: dict[str, Any], limit: int) -> tuple[dict[str, Any], str | None]:
    """The execution block within ``limit`` bytes of YAML (three quarters of the room every
    plan keeps for the controller: 48 KiB by default): whole; else each
    step with its id, status and attempts only; else a count of the steps by status. The
    log and the journal keep every step; PLAN.yml stays within ``limits.max_plan_bytes``
    (round 19: 1,000 steps and 5,000 outputs grew a plan past it, unreadable for good).
    With it, the YAML of ``{"execution": block}`` when it was dumped to be measured (round
    83: the checkpoint's checkout question and PLAN.yml's edit dumped it twice more)."""
    if len(json.dumps(block, ensure_ascii=False)) * 2 <= limit:
        return block, None  # the usual plan: YAML is well under twice its JSON
    steps = block["actions"]
    slim = [{k: a[k] for k in ("id", "status", "attempts") if k in a} for a in steps]
    for actions in (steps, slim):
        candidate = {**block, "actions": actions}
        floor = yamlio.dump_floor({"execution": candidate})
        if floor is not None and floor > limit:
            continue  # longer than the limit for sure: not dumped to be measured
        text = yamlio.dump({"execution": candidate})
        if len(text.encode("utf-8")) <= limit:
            return candidate, text
    counts: dict[str, int] = {}
    for step in steps:
        counts[str(step.get("status"))] = counts.get(str(step.get("status")), 0) + 1
    counted = {
        **block,
        "actions": [],
        "steps": {"count": len(steps), "by_status": counts, "see": "EXECUTION_LOG.md"},
    }
    return counted, None


def _shown(value: Any) -> Any:
    """An output value for PLAN.yml: whole when short, else cut (the log has it whole)."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= STATE_VALUE_CHARS:
        return value
    cut = logbook.mark("…")
    return f"{text[:STATE_VALUE_CHARS]}{cut} (cut; {len(text)} chars, see EXECUTION_LOG.md)"


def _escaped_block(block: dict[str, Any], held: Callable[[str], bool]) -> dict[str, Any]:
    """``block`` with each string (key or value) holding a character ``held`` says the
    checkout of PLAN.yml cannot hold written as YAML's double-quoted escapes
    (:class:`controller.plan.yamlio.Escaped`: ``\\u2014``, the very value read back; round
    83)."""

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            lost = any(not char.isascii() and not held(char) for char in item)
            return yamlio.Escaped(item) if lost else item
        if isinstance(item, dict):
            return {walk(k): walk(v) for k, v in item.items()}
        if isinstance(item, list):
            return [walk(v) for v in item]
        return item

    escaped: dict[str, Any] = walk(block)
    return escaped


def _step_order(key: ActionKey) -> tuple[bool, tuple[int, ...], str]:
    """A nested step's place (``"2/3"``, its fallback ``"2/3.1"``): by its numbers."""
    local = str(key).split("/", 1)[-1]
    parts = local.split(".")
    if all(p.isdigit() for p in parts):
        return False, tuple(int(p) for p in parts), ""
    return True, (), local
