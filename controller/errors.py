"""Every failure plangate reports, with its stable ``E_...`` code and a remedy.

One base class, :class:`PlangateError`, and one subclass per code (SPEC §10). Code that
finds a problem raises the subclass; the CLI's single error handler turns it into a clear
message and an exit code. Validation collects :class:`Problem` records instead of raising,
so that every error in a file is reported at once.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

#: Marks of a cut made by shortening text for a message. The redactor hides a secret's
#: start right before one (:mod:`controller.execution.secrets`): only in the controller's
#: material, never in the author's text (round 63, :func:`redacted_around`).
CUT_MARKS = ("\u2026", "...")


@dataclass(frozen=True)
class Problem:
    """One finding about a file: what, where (YAML location and line), and its code."""

    code: str
    message: str
    path: str = ""
    line: int | None = None
    #: What to do about it; None: the remedy of the code's error class.
    remedy: str | None = None
    #: The message also quotes the controller's catalog (a ``params_schema``): those parts
    #: are what an answer redacts (:meth:`answered`). False: the plan's text and fixed words.
    quotes_catalog: bool = field(default=False, compare=False, repr=False)
    #: The plan's own text such a message quotes (``repr`` of the failing value): kept as
    #: written, so the answer cannot confirm a guess of a secret (round 61).
    own_quotes: tuple[str, ...] = field(default=(), compare=False, repr=False)
    #: The catalog's text such a message quotes (``repr`` of the schema's failing keyword):
    #: redacted whatever the plan wrote, even where it holds a quote of the plan's (round 71).
    catalog_quotes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """``{code, message, path, line, remedy}``: the one error shape of ``--json``."""
        return {
            "code": self.code,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "remedy": self.remedy or remedy_for(self.code),
        }

    def answered(self, redact: Callable[[str], str]) -> Problem:
        """This problem as an answer to whoever wrote the plan: its own text as written
        (masking it would tell a right guess of a secret from a wrong one, round 61), the
        catalog's parts of the message through ``redact`` (round 49)."""
        if not self.quotes_catalog:
            return self
        message = redacted_around(self.message, self.own_quotes, redact, self.catalog_quotes)
        return replace(self, message=message)

    def own_text(self) -> tuple[str, ...]:
        """What of this problem is its author's text (:func:`redacted_around` keeps it):
        the location, and the whole message unless it quotes the catalog (round 62)."""
        own = self.own_quotes if self.quotes_catalog else (self.message,)
        return (self.path, *own)

    def render(self, source: str = "") -> str:
        where = source
        if self.line is not None:
            where = f"{where}:{self.line}" if where else f"line {self.line}"
        loc = f" at {self.path}" if self.path else ""
        prefix = f"{where}: " if where else ""
        return f"{prefix}{self.code}{loc}: {self.message}"


@functools.lru_cache(maxsize=4096)
def _spellings(quote: str) -> tuple[str, str]:
    """``quote`` as written and as a JSON string spells it (between its quotes)."""
    return quote, json.dumps(quote)[1:-1]


def redacted_around(
    text: str, own: Iterable[str], redact: Callable[[str], str], catalog: Iterable[str] = ()
) -> str:
    """``text`` through ``redact`` except where it quotes ``own`` (longest first), the
    author's own text, as written and as a JSON string spells it: the one rule of every
    answer and record that quotes the asker (docs/execution.md, Secrets; round 62: masking
    the asker's own text where it equals a secret confirms a guess of the secret).

    ``catalog``: the controller's text the message quotes (a schema's ``enum``, ``not``):
    redacted whole wherever it stands, an ``own`` quote inside it too; only a longer quote of
    the author's holds one as written (round 71: ``{'enum': ['<secret>']}`` was kept as
    written because the asker's guess equalled the secret)."""
    whole = redact(text)
    if whole == text:
        return text  # nothing of it is hidden: no quote to keep apart (and no scan of them)
    parts = _catalog_parts(text, own, catalog)
    if len(parts) > 1:
        return _around_catalog(text, parts, own, redact)
    return _redacted_around(text, own, redact)


def _catalog_parts(text: str, own: Iterable[str], catalog: Iterable[str]) -> list[str]:
    """``text`` split at the catalog's quotes (odd pieces), those inside a longer quote of
    the author's left to it; one piece when it quotes none."""
    theirs = {s for q in catalog if q for s in _spellings(q) if s in text}
    if not theirs:
        return [text]
    mine = sorted({s for q in own if q for s in _spellings(q) if s in text}, key=len, reverse=True)
    held = [m.span() for q in mine for m in re.finditer(re.escape(q), text)]
    spans: list[tuple[int, int]] = []
    for quote in sorted(theirs, key=len, reverse=True):
        for m in re.finditer(re.escape(quote), text):
            start, stop = m.span()
            inside = any(a <= start and stop <= b and b - a > stop - start for a, b in held)
            if not inside and all(stop <= a or start >= b for a, b in spans):
                spans.append((start, stop))
    pieces, at = [], 0
    for start, stop in sorted(spans):
        pieces += [text[at:start], text[start:stop]]
        at = stop
    return [*pieces, text[at:]]


def _around_catalog(
    text: str, parts: list[str], own: Iterable[str], redact: Callable[[str], str]
) -> str:
    """The catalog's pieces redacted whole, the text between them by the author's rule; a
    secret across a catalog piece's edge: all of ``text`` redacted."""
    own = tuple(own)
    shown = [redact(p) if i % 2 else _redacted_around(p, own, redact) for i, p in enumerate(parts)]
    for i in range(1, len(parts), 2):
        before, after = parts[i - 1], parts[i + 1]
        if redact(before + parts[i] + after) != redact(before) + shown[i] + redact(after):
            return redact(text)
    return "".join(shown)


def _redacted_around(text: str, own: Iterable[str], redact: Callable[[str], str]) -> str:
    """:func:`redacted_around` of a text that quotes nothing of the catalog's."""
    # only the quotes the text holds: a check's record quotes every clause of its expect
    # (round 38's 3,000 clauses) in each of its failures, one clause each
    spelled = {s for q in own if q for s in _spellings(q) if s in text}
    quotes = sorted(spelled, key=len, reverse=True)
    if not quotes:
        return redact(text)
    pieces = re.split("(" + "|".join(map(re.escape, quotes)) + ")", text)
    shown = [p if i % 2 else redact(p) if p else p for i, p in enumerate(pieces)]
    for i in range(1, len(pieces), 2):  # a secret across a quote's edge: nothing is kept
        # a cut right after the author's text makes no secret's start of it (round 63: the
        # author can only confirm what they wrote), and no secret spans a cut mark
        after = "" if pieces[i + 1].startswith(CUT_MARKS) else pieces[i + 1]
        around = pieces[i - 1] + pieces[i] + after
        if redact(around) != shown[i - 1] + redact(pieces[i]) + (redact(after) if after else ""):
            return redact(text)
    return "".join(shown)


class PlangateError(Exception):
    """Base of every error plangate reports to a user."""

    code: ClassVar[str] = "E_INTERNAL"
    remedy: ClassVar[str] = ""
    exit_code: ClassVar[int] = 1
    #: Permanent errors are never retried by the executor (kopf's PermanentError).
    permanent: ClassVar[bool] = True
    #: 1-based line in the file the error is about, when known.
    line: int | None = None
    #: The asker's own text the message quotes (set by ``quotes=``; see ``__init__``).
    own_quotes: tuple[str, ...] = ()
    #: The format a plan source was read as, when the error was found after that was known
    #: (:func:`controller.plan.convert.convert_text` sets it on a refused conversion): every
    #: answer names it whatever the conversion's outcome (round 127, atk127b).
    source_format: str | None = None

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        remedy: str | None = None,
        quotes: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        #: The asker's own text the message quotes (a path, a slug, a key it sent): an
        #: answer keeps it as written (:func:`redacted_around`, round 62).
        self.own_quotes = quotes
        if remedy is not None:
            self.remedy = remedy  # type: ignore[misc]

    def __str__(self) -> str:
        text = f"{self.code}: {self.message}"
        if self.path:
            text = f"{self.code} at {self.path}: {self.message}"
        return text

    def render(self) -> str:
        return f"{self}\n  remedy: {self.remedy}" if self.remedy else str(self)

    def quoted(self) -> tuple[str, ...]:
        """Everything of the asker's own text this error quotes, its problems' included."""
        problems = getattr(self, "problems", None) or []
        return (*self.own_quotes, *(q for p in problems for q in p.own_text()))

    def recorded(self, redact: Callable[[str], str]) -> str:
        """The message as a record or an answer gives it: through ``redact`` except the
        asker's own text it quotes (:func:`redacted_around`; round 65: a check's expected
        value, masked inside the controller's message, confirmed a guess of a secret)."""
        return redacted_around(self.message, self.quoted(), redact, self.catalog_quoted())

    def catalog_quoted(self) -> tuple[str, ...]:
        """The catalog's text its problems quote (:attr:`Problem.catalog_quotes`): redacted
        whatever the asker wrote (round 71)."""
        problems = getattr(self, "problems", None) or []
        return tuple(q for p in problems for q in p.catalog_quotes)

    def to_problem(self) -> Problem:
        return Problem(self.code, self.message, self.path)

    def to_json(self) -> dict[str, Any]:
        """The one error shape of every command's ``--json`` output (SPEC §14)."""
        shape: dict[str, Any] = {
            "ok": False,
            "code": self.code,
            "message": self.message,
            "path": self.path or None,
            "line": self.line,
            "remedy": self.remedy or None,
        }
        problems = getattr(self, "problems", None)
        if problems:
            shape["errors"] = [p.to_json() for p in problems]
        if self.source_format is not None:  # a conversion's refusal names what it read
            shape["format"] = self.source_format
        return shape


# --- reading and validation -------------------------------------------------------------


class YamlParseError(PlangateError):
    code = "E_YAML_PARSE"
    remedy = (
        "fix the YAML syntax; anchors, aliases, merge keys, tags and duplicate keys are refused"
    )


class SchemaInvalid(PlangateError):
    code = "E_SCHEMA_INVALID"
    remedy = "correct the field as the message says (see docs/plan-format.md)"


class PlanTooLarge(PlangateError):
    code = "E_PLAN_TOO_LARGE"
    remedy = "split the plan, or raise limits.max_plan_bytes in the controller config"


class BlobTooLarge(PlanTooLarge):
    """A git blob over the most plangate reads of one file (``fsutil.READ_LIMIT``): never
    read (round 31: a 60 MB PLAN.yml, read to be found too large, cost 3.3 times its size in
    memory on every pass)."""

    def __init__(self, sha: str, size: int, limit: int) -> None:
        super().__init__(
            f"git object {sha[:12]} is {size} bytes, over the {limit} bytes plangate reads of "
            "one file; it is not read"
        )
        self.size = size


class PlanVersionUnsupported(PlangateError):
    code = "E_PLAN_VERSION_UNSUPPORTED"
    remedy = "upgrade plangate or write the plan in a supported format version"


class PlanInvalid(PlangateError):
    """A plan failed validation; carries every problem found."""

    code = "E_SCHEMA_INVALID"
    remedy = "run `plangate validate PATH` and fix each error listed"

    def __init__(self, problems: list[Problem], source: str = "") -> None:
        self.problems = problems
        first = problems[0] if problems else Problem(self.code, "invalid plan")
        self.code = first.code  # type: ignore[misc]
        super().__init__(f"{source}: {len(problems)} problem(s); first: {first.message}")


# --- tools, parameters, references ------------------------------------------------------


class ToolNotDeclared(PlangateError):
    code = "E_TOOL_NOT_DECLARED"
    remedy = "add the tool to available_tools, or use a declared tool"


class ToolUnknown(PlangateError):
    code = "E_TOOL_UNKNOWN"
    remedy = "use a tool from the controller's catalog (`tools:` in plangate.yml)"


class RefInvalid(PlangateError):
    code = "E_REF_INVALID"
    remedy = (
        "write references as $<actions[N].outputs.NAME>, $<inputs.KEY>, ...; `$$<` for a literal"
    )


class RefForward(PlangateError):
    code = "E_REF_FORWARD"
    remedy = "reference only actions with a smaller id than the current one"


class RefUnknown(PlangateError):
    code = "E_REF_UNKNOWN"
    remedy = "reference an existing action id, a declared output, or a defined input"


class ParamsInvalid(PlangateError):
    code = "E_PARAMS_INVALID"
    remedy = "make the params match the tool's params_schema in the controller's catalog"


class LimitExceeded(PlangateError):
    code = "E_LIMIT_EXCEEDED"
    remedy = "reduce the plan, or raise the limit in the controller config (limits:)"


class UnguardedFlow(PlangateError):
    code = "E_UNGUARDED_FLOW"
    remedy = (
        "add a guard on that param (guards: [{param: NAME, matches: ...}] or one_of/min/max) "
        "so only values the reviewer approved can reach it (docs/plan-format.md, Guards)"
    )


class PlanAmbiguous(PlangateError):
    code = "E_PLAN_AMBIGUOUS"
    remedy = (
        "keep one plan file per folder: delete PLAN.yml or PLAN.yaml (a reviewer could read "
        "one while the other ran)"
    )


class UnsafePath(PlangateError):
    code = "E_UNSAFE_PATH"
    remedy = (
        "plan files and folders must be regular files and folders (no symlink, FIFO, device "
        "or submodule) with names free of control characters and line breaks; rename or "
        "replace it"
    )


class AttributeUnsupported(PlangateError):
    """A git attribute of a plan file plangate cannot apply as git does (an encoding Python
    does not know): the file is never compared or written through a guess (round 76)."""

    code = "E_ATTRIBUTE_UNSUPPORTED"
    remedy = "remove the attribute for the plan file and commit .gitattributes"


class ActionIds(PlangateError):
    code = "E_ACTION_IDS"
    remedy = "number actions 1, 2, 3, ... in file order"


class ConvertUnsupported(PlangateError):
    code = "E_CONVERT_UNSUPPORTED"
    remedy = (
        "PLAN.yml cannot express this: change the source as the message says, or write "
        "PLAN.yml by hand (docs/formats.md lists what each format maps to)"
    )


class ParseMultiblock(PlangateError):
    code = "E_PARSE_MULTIBLOCK"
    remedy = "answer with exactly one plan: one JSON object, or one fenced ```json block"


class ParseNonJson(PlangateError):
    code = "E_PARSE_NONJSON"
    remedy = "answer with the plan alone: no prose before or after the object or fenced block"


class ConvertFailed(PlangateError):
    """A conversion found one or more problems; carries every one of them."""

    code = "E_CONVERT_UNSUPPORTED"
    remedy = ConvertUnsupported.remedy

    def __init__(self, problems: list[Problem], source: str = "") -> None:
        self.problems = problems
        first = problems[0] if problems else Problem(self.code, "cannot convert")
        self.code = first.code  # type: ignore[misc]
        self.remedy = (  # type: ignore[misc]
            first.remedy or ERROR_CLASSES.get(first.code, ConvertUnsupported).remedy
        )
        lines = [p.render(source) for p in problems]
        super().__init__("\n".join(lines), path=first.path)
        self.line = first.line

    def __str__(self) -> str:
        return self.message


# --- approval ---------------------------------------------------------------------------


class PlanNotFrozen(PlangateError):
    code = "E_PLAN_NOT_FROZEN"
    remedy = "let the controller freeze the plan (or run `plangate freeze`), then approve it"


class PlanHashMismatch(PlangateError):
    code = "E_PLAN_HASH_MISMATCH"
    remedy = "the plan changed after freezing: re-freeze it and approve it again in its own commit"


class ApproverNotAllowed(PlangateError):
    code = "E_APPROVER_NOT_ALLOWED"
    remedy = "have an identity listed in approval.approvers approve the plan"


class SelfApproval(PlangateError):
    code = "E_SELF_APPROVAL"
    remedy = "someone who did not write the plan must approve it"


class SignatureInvalid(PlangateError):
    code = "E_SIGNATURE_INVALID"
    remedy = "sign the approval commit (`plangate approve --sign`) with a key in allowed_signers"


class PlanExpired(PlangateError):
    code = "E_PLAN_EXPIRED"
    remedy = "re-freeze the plan (change it or ask the author to resubmit), then approve again"


class ApprovalReplayed(PlangateError):
    code = "E_APPROVAL_REPLAYED"
    remedy = (
        "an approval approves only the version it was made for; approve the current "
        "version in a new commit (`plangate approve PATH`)"
    )


class AlreadyExecuted(PlangateError):
    code = "E_ALREADY_EXECUTED"
    remedy = "this exact plan already ran here; change the plan (a new version) to run it again"


class VersionWithdrawn(PlangateError):
    code = "E_VERSION_WITHDRAWN"
    remedy = (
        "this exact version was rejected (or aborted before it ran) by someone entitled to; "
        "change the plan (a new version) to submit it again"
    )


class HistoryRewritten(PlangateError):
    code = "E_HISTORY_REWRITTEN"
    remedy = (
        "the branch was reset, rebased or force-pushed over the controller's commits of this "
        "plan; restore them (git reset --hard / git push --force the old tip, from the "
        "reflog), or delete the plan and submit it again under a new name"
    )


class FirstParentSwapped(HistoryRewritten):
    """The branch moved to a commit whose first-parent line no longer runs through the tip
    the controller saw: a fast-forward to a merge of the branch into another line (a
    "foxtrot": `git pull` without rebase, or an updated feature branch, pushed as the branch).
    Its decisions would read as the merger's and its records of the controller sit behind a
    second parent, so nothing is decided until the line is put back (round 63)."""

    remedy = (
        "move the branch back to the tip the controller last read (it committed nothing "
        "since; `git push --force-with-lease=<branch>:<new tip> origin <last tip>:<branch>`) "
        "and merge the branches again with merge commits, each by whoever decides what it "
        "brings (the forge's merge button does); never fast-forward the branch to a merge of it"
    )


class IllegalTransition(PlangateError):
    code = "E_ILLEGAL_TRANSITION"
    remedy = "only the controller sets that status; see the lifecycle in docs/plan-format.md"


# --- execution --------------------------------------------------------------------------


class ToolFailed(PlangateError):
    code = "E_TOOL_FAILED"
    remedy = "see the action's result in EXECUTION_LOG.md; fix the cause and approve a resume"
    permanent = False


class ToolTimeout(PlangateError):
    code = "E_TIMEOUT"
    remedy = "raise the action's timeout or make the tool faster"
    permanent = False


class OutputMissing(PlangateError):
    code = "E_OUTPUT_MISSING"
    remedy = "fix the output's JSONPath or mark it optional: true"


class ToolOutputInvalid(PlangateError):
    code = "E_TOOL_OUTPUT_INVALID"
    remedy = (
        "the tool returned a value JSON cannot carry exactly (NaN, Infinity, a number beyond "
        "±(2^53−1), a lone surrogate, a non-string key, nesting over 100 levels); have the tool "
        "return such a value as a string, or fix the tool"
    )


class RefUnavailable(PlangateError):
    code = "E_REF_UNAVAILABLE"
    remedy = "the referenced action was skipped or its optional output matched nothing"


class GuardFailed(PlangateError):
    code = "E_GUARD_FAILED"
    remedy = (
        "the value did not pass the plan's guard, so the tool was not called; if the value "
        "is legitimate, change the guard in the plan and have it approved again"
    )
    #: The guard checks made on the action, the failing one last (journal and log).
    checks: list[dict[str, Any]] = []  # noqa: RUF012 - set per instance before raising


class ActionInDoubt(PlangateError):
    code = "E_ACTION_IN_DOUBT"
    remedy = "check whether the action took effect, then approve a resume (it will re-run) or abort"


class PreconditionFailed(PlangateError):
    code = "E_PRECONDITION_FAILED"
    remedy = (
        "see the check's result in EXECUTION_LOG.md; make the condition hold, then approve a resume"
    )
    permanent = False


class VerifyFailed(PlangateError):
    code = "E_VERIFY_FAILED"
    remedy = (
        "see the verify result in EXECUTION_LOG.md: the action ran but did not have the "
        "effect expected; check the system, then approve a resume or abort"
    )
    permanent = False


class CheckTool(PlangateError):
    code = "E_CHECK_TOOL"
    remedy = (
        "use a tool the catalog marks idempotent: true and risk: low for preconditions and verify"
    )


class Aborted(PlangateError):
    code = "E_ABORTED"
    remedy = "the plan was aborted on request; write a new plan to continue the work"


# --- controller -------------------------------------------------------------------------


#: What ``approval.allowed_signers`` must name (the config's check and the verify's alike).
SIGNERS_FILE = "a regular file of 'email key' lines (ssh-keygen(1), ALLOWED SIGNERS)"


class ConfigInvalid(PlangateError):
    code = "E_CONFIG_INVALID"
    remedy = "fix plangate.yml as the message says (see docs/configuration.md)"
    exit_code = 2


class GitError(PlangateError):
    code = "E_GIT"
    remedy = "see git's message; fix the repository state and retry"
    exit_code = 2
    permanent = False


class NotInWorkTree(GitError):
    """No git working tree holds the folder (and no repository there that git refuses: that
    is git's refusal, a plain :class:`GitError`)."""

    remedy = "run the command on a plan in a clone of the plans repo"


class PushRefused(GitError):
    """The remote's hook or policy declined a push (``[remote rejected]``, ``pre-receive hook
    declined``): neither a lost race (the branch moved) nor an unreachable remote. ``reason``
    is the remote's own words (its ``remote:`` lines and the declined ref's reason)."""

    remedy = "fix the forge's rule or what the refused commit holds, then run again"

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class PushHeld(GitError):
    """The remote already held the very commit this controller just made and pushed (``git
    push`` answered "up to date"): the push put nothing there, so the commit is another
    process's, not this one's (round 91, twinrun: two controllers sharing a state directory
    made byte-identical start commits, and each took the one that landed for its own)."""

    remedy = (
        "run one controller per branch: stop the other controller using a copy of this state "
        "directory (a failover's old host), then run again"
    )


class Locked(PlangateError):
    code = "E_LOCKED"
    remedy = "another controller holds this state directory; stop it or use another state_dir"
    exit_code = 2


class StorageFailed(PlangateError):
    """A write of the controller's own (a journal record, a working-tree file, a git object
    or ref) failed: a full disk, a file size limit, a damaged or odd entry where the file
    goes. Owned by the plan being written, never the pass (round 56)."""

    code = "E_STORAGE"
    remedy = (
        "free space on the state directory's and the repository's disk (or raise the file "
        "size limit, LimitFSIZE), or remove what is in the way at the path named; the next "
        "pass retries this plan, the others go on"
    )
    permanent = False


def storage_failed(what: str, exc: OSError) -> StorageFailed:
    """The coded error of a failed write: ``what`` names the file (its path)."""
    return StorageFailed(f"the write failed: {exc.strerror or exc}", path=what)


class NotFound(PlangateError):
    """The reviewers' page was asked for a plan or page it does not have (HTTP 404)."""

    code = "E_NOT_FOUND"
    remedy = "check the path: GET /api/ lists the plans on the watched branch"


class NotReady(PlangateError):
    """The reviewers' page was asked before the daemon published its first snapshot (HTTP
    503 with ``Retry-After``): the controller is still reading history, so no plan can be
    said absent yet (round 95, ``page-startup-absent``)."""

    code = "E_NOT_READY"
    remedy = "retry in a few seconds: the page answers once the daemon's first pass is done"
    permanent = False


class UsageError(PlangateError):
    code = "E_USAGE"
    remedy = "see `plangate --help`"
    exit_code = 2


ERROR_CLASSES: dict[str, type[PlangateError]] = {
    cls.code: cls
    for cls in PlangateError.__subclasses__()
    if cls not in (PlanInvalid, ConvertFailed) and cls.code != "E_INTERNAL"
}


def error_for(
    code: str, message: str, path: str = "", quotes: tuple[str, ...] = ()
) -> PlangateError:
    """Build the error of a given code (used when replaying journaled errors)."""
    cls = ERROR_CLASSES.get(code, PlangateError)
    err = cls(message, path=path, quotes=quotes)
    if cls is PlangateError:
        err.code = code  # type: ignore[misc]
    return err


def remedy_for(code: str) -> str:
    """The remedy of the error class with this code ("" for an unknown code)."""
    cls = ERROR_CLASSES.get(code)
    return cls.remedy if cls is not None else ""
