"""The recorded policy (SPEC §11): the controller's effective policy as a file in git.

``plangate audit`` must reach the controller's verdicts from git alone, long after the config
changed (an approver left, a tool was retired). So the controller commits what decides a
verdict to ``.plangate/policy.json`` whenever it changes, and names it in every start
commit (``Policy-Hash:``). :func:`policy_document` says what goes in: the controller's
identity and plans folder (how the audit recognises its commits), every ``approval:`` key
(approvers, aliases, groups, rules, signatures, ``max_age``; the allowed-signers file by its
text: public keys), ``limits:``, and per catalog tool what validation, risk and the flow
guards read (kind, risk, estimate, idempotent, params schema, output trust, sensitive
params) and a SHA-256 of its definition. Never a secret: a tool's ``env`` and ``headers``
values, the secrets settings and every endpoint are left out (env and header *names* stay).

The file is RFC 8785 canonical JSON, so its bytes and its ``sha256:`` hash follow from the
policy alone. The file is a record, never an input of the controller: its policy is its
config. What makes a policy recorded is a commit of the controller's, never the file's bytes
(round 61: anyone can commit the next policy's bytes first): a ``plangate: record policy``
commit, author and committer the controller, naming it in its ``Policy-Hash:`` trailer and
sealed (``Controller-Seal:``, round 94), with the file holding those bytes
(:func:`recorded_hash`; its tree may equal its parent's).
:func:`config_of` turns a recorded document back into a :class:`~controller.settings.Config`
for the audit (tools as records: they cannot run).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.plan.hashing import PREFIX, canonical_bytes, controller_sealed
from controller.plan.names import same_path
from controller.settings import Config, Estimate, ToolSpec
from controller.settings.signersfile import signers_copy

#: Where the policy is recorded, from the repository's root.
POLICY_PATH = ".plangate/policy.json"
#: git pathspecs finding every path a checkout could make :data:`POLICY_PATH` (then judged by
#: :func:`is_twin`): the folder's name in any case, with code points HFS+ ignores between its
#: letters or the end NTFS drops (``.PLANGATE/``, ``.plangate./``), its 8.3 short name
#: (``PLANGA~1/``), and the file's name so spelled in either (round 75); a root file whose
#: name holds a backslash (``.plangate\\policy.json``: git for Windows splits it there,
#: :func:`controller.plan.names.path_parts`; round 77), and the files below a root folder so
#: named (``.plangate\\/policy.json``, ``\\/.plangate/policy.json``: round 80).
TWIN_SPECS = (
    ":(glob,icase)*.*p*l*a*n*g*a*t*e*/*",
    ":(glob,icase)*p*~*/*",
    ":(glob)*\\\\*",
    ":(glob)*\\\\*/**",
)


def is_twin(path: str) -> bool:
    """Is ``path`` another entry than :data:`POLICY_PATH` that IS it on a case-insensitive,
    HFS+ or NTFS checkout (:func:`controller.plan.names.same_path`: ``.PLANGATE/policy.json``,
    ``PLANGA~1/policy.json``, ``.plangate./policy.json``)? Git writes it there at the
    record's place, so a reader of the checkout's file reads it (round 75)."""
    return path != POLICY_PATH and same_path(path, POLICY_PATH)


#: The subject of the controller's record commits (:func:`recorded_hash`).
RECORD_SUBJECT = "plangate: record policy"
#: The trailer of a record commit made right after the config's ``identity`` changed: the
#: identity the controller's own previous record named (its state directory's record of its
#: commits held that record). ``plangate audit`` follows the controller from that identity to
#: the record's (:class:`controller.approval.timeline.Timeline`; round 126).
PREVIOUS_IDENTITY = "Previous-Identity"
#: The document's format; a reader refuses one it does not know.
VERSION = 1
#: What a tool's record keeps as it is (everything validation, risk and flows read).
_TOOL_FIELDS = (
    "kind",
    "risk",
    "idempotent",
    "params_schema",
    "output_trust",
    "sensitive",
)
#: Keys of a tool's definition whose values may be credentials: only their names count.
_NAMES_ONLY = ("env", "headers")


def policy_document(config: Config) -> dict[str, Any]:
    """The effective policy of ``config`` as plain JSON data (no secret in it)."""
    approval = config.approval.model_dump(mode="json")
    approval["allowed_signers"] = _signers_text(config.approval.allowed_signers)
    return {
        "version": VERSION,
        "identity": {"email": config.identity.email},
        "plans_dir": config.plans_dir,
        "approval": approval,
        "limits": config.limits.model_dump(mode="json"),
        "tools": {name: tool_record(spec) for name, spec in sorted(config.tools.items())},
    }


def tool_record(spec: ToolSpec) -> dict[str, Any]:
    """What the policy keeps of one catalog tool, with the hash of its definition: the
    definition as the catalog shows it, each credential the redactor hides written ``***``
    (round 72: a hash over the password in ``argv`` or a URL let anyone who reads the
    branch confirm a guess of it offline, a short one by enumeration). A credential's change
    alone, like an ``env`` or header value's, changes nothing recorded."""
    from controller.settings.toolspec import tool_credentials

    dumped = spec.model_dump(mode="json")
    record = {key: dumped[key] for key in _TOOL_FIELDS}
    record["estimate"] = dumped.get("estimate")
    definition = {k: (sorted(v) if k in _NAMES_ONLY else v) for k, v in dumped.items()}
    hidden = sorted(tool_credentials(spec), key=len, reverse=True)
    masked = _masked(definition, hidden) if hidden else definition
    record["definition"] = PREFIX + hashlib.sha256(canonical_bytes(masked)).hexdigest()
    return record


def _masked(value: Any, hidden: list[str]) -> Any:
    """``value`` with every occurrence of each of ``hidden`` (longest first) in its strings,
    keys included, written ``***``."""
    if isinstance(value, str):
        for secret in hidden:
            value = value.replace(secret, "***")
        return value
    if isinstance(value, list):
        return [_masked(item, hidden) for item in value]
    if isinstance(value, dict):
        return {_masked(key, hidden): _masked(item, hidden) for key, item in value.items()}
    return value


def policy_bytes(config: Config) -> bytes:
    """The file's bytes: canonical JSON (RFC 8785) of :func:`policy_document`."""
    return canonical_bytes(policy_document(config))


def hash_of(data: bytes) -> str:
    """``sha256:<hex>`` of the file's bytes: the ``Policy-Hash:`` that names it."""
    return PREFIX + hashlib.sha256(data).hexdigest()


def recorded_hash(
    subject: str, trailers: Mapping[str, str], author: str, committer: str, identity: str
) -> str | None:
    """The ``Policy-Hash`` a commit records when it is a record commit of the controller's
    shape under ``identity`` (author AND committer: git's own rewrites keep the author only;
    and a ``Controller-Seal:`` of the seal's form, :func:`seal_shaped`, as every controller
    commit carries since round 66: round 94's unsealed forgery under its full identity was
    the fresh-clone audit's record), else None. Whether the controller made it (its record
    of its commits, its key) and the file's bytes are the caller's. ``trailers``: git's parse
    of the trailer block (``CommitRecord.trailers``), as :func:`controller_sealed` reads them
    (round 95: ``check`` parsed every line of the body, so a seal outside the block made a
    forgery the policy in force)."""
    named = claimed_hash(subject, trailers, author, committer, identity)
    sealed = controller_sealed(author, committer, trailers, identity)
    return named if named is not None and sealed else None


def claimed_hash(
    subject: str, trailers: Mapping[str, str], author: str, committer: str, identity: str
) -> str | None:
    """The ``Policy-Hash`` a commit under ``identity`` (author and committer) with the record
    subject names, sealed or not: a look-alike of a record when :func:`recorded_hash` is
    None for it (a forged record, flagged by the audit)."""
    if subject != RECORD_SUBJECT or not identity:
        return None
    if author.lower() != identity.lower() or committer.lower() != identity.lower():
        return None
    named = (trailers.get("Policy-Hash") or "").strip()
    return named or None


def parse_blob(repo: Any, blob: str | None) -> dict[str, Any] | None:
    """:func:`parse` of a blob; None for one too large to be read (a record is a few KB:
    round 31 committed a 60 MB ``policy.json``)."""
    from controller.errors import PlanTooLarge

    if blob is None:
        return None
    try:
        return parse(repo.blob(blob))
    except PlanTooLarge:
        return None


def parse(data: bytes) -> dict[str, Any] | None:
    """A recorded document, or None when ``data`` is not one (not JSON, not canonical, an
    unknown version, a missing section): such a file was not written by a controller."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        return None
    needed = {"identity": dict, "plans_dir": str, "approval": dict, "limits": dict, "tools": dict}
    if any(not isinstance(doc.get(key), kind) for key, kind in needed.items()):
        return None
    try:
        if canonical_bytes(doc) != data:
            return None
    except Exception:  # a value RFC 8785 cannot write (a float out of range)
        return None
    return doc


def config_of(doc: dict[str, Any], signers_dir: Path) -> Config:
    """A config that judges as the recorded policy did (``signers_dir``: where to write the
    allowed-signers text for git). Raises pydantic's ValidationError on a bad document."""
    approval = dict(doc["approval"])
    text = approval.pop("allowed_signers", None)
    if isinstance(text, str):  # the copy a controller that pinned this text judged by
        approval["allowed_signers"] = str(signers_copy(text.encode("utf-8"), signers_dir))
    # the catalog's names go in with the rest: a rule matching ``tools`` is checked against
    # them (round 89: validated without them, every such record was unreadable); the
    # recorded tools themselves (:func:`_tool_of`, which cannot run) replace the stand-ins
    config = Config.model_validate(
        {
            "plans_dir": doc["plans_dir"],
            "identity": {"email": doc["identity"]["email"]},
            "approval": approval,
            "limits": doc["limits"],
            "tools": {name: {"kind": "echo"} for name in doc["tools"]},
        }
    )
    tools = {str(name): _tool_of(record) for name, record in doc["tools"].items()}
    return config.model_copy(update={"tools": tools})


def _tool_of(record: Any) -> ToolSpec:
    """A catalog entry that validates and profiles like the recorded one (it cannot run)."""
    if not isinstance(record, dict):
        raise ValueError("a tool record is not an object")
    fields = {key: record[key] for key in _TOOL_FIELDS if key in record}
    estimate = record.get("estimate")
    checked = ToolSpec.model_validate({**fields, "kind": "echo"})
    values = {**checked.__dict__, "kind": fields.get("kind", "echo")}
    values["estimate"] = Estimate.model_validate(estimate) if estimate is not None else None
    return ToolSpec.model_construct(**values)


def differences(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Which keys differ between two documents, e.g. ``approval.approvers``, ``tools.scale``
    (for a commit body and the audit's note; never the values: a reader sees them in git)."""
    if old is None:
        return ["everything (first record)"]
    found = []
    for section in sorted(set(old) | set(new)):
        before, after = old.get(section), new.get(section)
        if before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict) and section != "identity":
            found += [
                f"{section}.{key}"
                for key in sorted(set(before) | set(after))
                if before.get(key) != after.get(key)
            ]
        else:
            found.append(section)
    return found


def _signers_text(path: Path | None) -> str | None:
    """The allowed-signers file's text (public keys; None when there is none or unreadable)."""
    if path is None:
        return None
    from controller.fsutil import read_operator_file

    try:
        return read_operator_file(path).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
