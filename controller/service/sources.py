"""Plan folders written in another format: the daemon converts them to PLAN.yml (SPEC §13).

An agent may put a ``PLAN.json``, ``PLAN.toon`` or ``PLAN.md`` (any format of
docs/formats.md) in a plan folder that has no PLAN.yml. The controller converts it and
commits, in one ``convert`` commit, the new PLAN.yml (and any nested plan it pins) and the
removal of the source: from then on the plan is its PLAN.yml. The history index counts the
authors of the source file's commits as the plan's authors (they wrote what runs; see
``HistoryIndex._source_authors``), so none of them can approve it (E_SELF_APPROVAL). A
source that does not convert is reported once per version with its code, and waits.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from controller.display import visible
from controller.git.twins import FolderTwins
from controller.plan.discovery import MAX_SOURCE_BYTES as MAX_SOURCE_BYTES
from controller.plan.names import RECORD_FILES, plan_file_claims, source_claims
from controller.plan.names import source_verdict as source_verdict
from controller.plan.plans import PLAN_FILES, SOURCE_FILES

#: The names of a plan folder's files, each held once by every folder's entries.
_NAMES = {name: name for name in (*PLAN_FILES, *SOURCE_FILES, *RECORD_FILES)}

if TYPE_CHECKING:
    from controller.errors import Problem
    from controller.git.gitrepo import GitRepo


@dataclass
class Converted:
    """The files of one convert commit (None: delete) and what to say about it."""

    plan_id: str
    source: str
    files: dict[str, bytes | None]
    plan_text: str
    format: str


@dataclass
class SourceFinder:
    """Committed sources in folders without PLAN.yml, listed once, then followed by the
    change from one branch head to the next (issue 17: a pass's work is what changed; the
    listing of 10,000 plan folders and every folder's verdict was 40% of an approving pass)."""

    plans_dir: str
    _head: str | None = None
    _found: dict[str, str] = field(default_factory=dict)
    #: folders whose source waits (its value in :meth:`committed` is ""): (code, message)
    held: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: problems already reported, by (source path, blob)
    refused: dict[tuple[str, str], str] = field(default_factory=dict)
    #: the head :attr:`_entries` lists exactly (None: list the next head whole)
    _listed: str | None = None
    #: folder -> entry name -> how many files of the listing lie at or below that entry; a
    #: folder with one entry holding one file (a plan folder's ``PLAN.yml``): that name
    #: alone (perf80mem: a dict per plan folder was 5 MB of 20,000 plans' RSS)
    _entries: dict[str, dict[str, int] | str] = field(default_factory=dict)
    #: folders :meth:`advance` settled since :attr:`_listed`: judged again at the next head
    _settled: set[str] = field(default_factory=set)
    #: folders whose entries claim a plan file's or a source's place: a source's folder one
    #: with any of them on some checkout is held (:meth:`twins`; round 82). Held in the twin
    #: map alone, a folder discarded from it when it claims no more (perf85mem: a set of
    #: them beside the map was a 2 MB table of 20,000 plan folders)
    _twins: FolderTwins = field(default_factory=FolderTwins)
    #: ``canon(folder)``: the string a folder's path is kept as (the controller's: the index's
    #: plan id for a plan's folder, one string per plan; perf85mem)
    canon: Callable[[str], str] | None = field(default=None, repr=False, compare=False)

    def committed(self, repo: GitRepo, head: str) -> dict[str, str]:
        """plan folder -> its source file, for folders with a source and no PLAN.yml; ""
        for a folder whose source waits, :attr:`held` saying why. Every entry of a folder
        counts, whatever its kind (a file, a symlink, a gitlink, a folder: the first name of
        the paths below it), its name compared by :func:`controller.plan.names.fold`, as the
        history index and MCP ``submit`` judge a folder (round 73: ``PLAN.json`` beside a
        symlink ``plan.yml`` or a folder ``PLAN.YML/`` was converted into a PLAN.yml no
        reader would read, and beside ``plan.JSON`` from one of the two). The first head is
        listed whole (``ls-tree -r``); a later one is read as the files added and deleted
        since the last head listed (``diff-tree``), and only the folders whose entries that
        changes (or the controller's own commits touched) are judged again: the same answer
        as a whole listing (``tests/service/test_sources_incremental.py``)."""
        if head == self._head:
            return dict(self._found)
        changes = self._changes(repo, head)
        if changes is None:
            self._entries, self._found, self.held = {}, {}, {}
            self._twins = FolderTwins()
            for path, _blob in repo.ls_files(head, [self.plans_dir]):
                self._count(path, 1)
            judged: set[str] = set(self._entries)
        else:
            judged = set(self._settled)
            for path, delta in changes:
                judged.update(self._count(path, delta))
        judged = self._with_twins(judged, whole=changes is None)
        for folder in judged:
            self._judge(folder)
        self._head = self._listed = head
        self._settled = set()
        return dict(self._found)

    def _changes(self, repo: GitRepo, head: str) -> list[tuple[str, int]] | None:
        """The files added (+1) and deleted (-1) under the plans folder from the last head
        listed to ``head`` (no renames: a moved file is both), or None when there is no
        such head or git cannot tell (then the head is listed whole)."""
        if self._listed is None:
            return None
        out = repo.run_raw(
            "--literal-pathspecs", "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff",
            "--no-textconv", "--diff-filter=AD", self._listed, head, "--", self.plans_dir,
        )  # fmt: skip
        if out.returncode != 0:
            return None
        fields = out.stdout.decode("utf-8", "surrogateescape").split("\0")
        return [
            (path, 1 if meta.endswith("A") else -1)
            for meta, path in zip(fields[0::2], fields[1::2], strict=False)
            if meta.startswith(":")
        ]

    def _count(self, path: str, delta: int) -> list[str]:
        """Count ``path`` in (``delta`` 1) or out (-1) of every folder above it; the folders
        whose entries that adds or removes."""
        parts = path.split("/")
        changed = []
        for depth in range(1, len(parts)):
            folder, name = "/".join(parts[:depth]), parts[depth]
            if self.canon is not None and folder not in self._entries:
                folder = self.canon(folder)
            name = _NAMES.get(name, name)  # one copy of the names every plan folder holds
            held = self._entries.get(folder)
            entries = {} if held is None else {held: 1} if isinstance(held, str) else held
            count = entries.get(name, 0) + delta
            if count > 0:
                entries[name] = count
            else:
                entries.pop(name, None)
            if not entries:
                self._entries.pop(folder, None)
            elif len(entries) == 1 and next(iter(entries.values())) == 1:
                self._entries[folder] = next(iter(entries))
            else:
                self._entries[folder] = entries
            if count <= 0 or count == delta:
                changed.append(folder)
        return changed

    def _with_twins(self, folders: set[str], whole: bool) -> set[str]:
        """``folders`` (those whose entries changed), their claims of a plan file's or a
        source's place counted again, and the claimed folders one with any of them on some
        checkout: a twin that comes or goes changes the other's verdict (round 82: a twin
        removed releases the source). A whole listing judges every folder anyway."""
        for folder in folders:
            names = self._names(folder)
            if plan_file_claims(names) or source_claims(names):
                self._twins.add(folder)
            else:
                self._twins.discard(folder)
        if whole:
            return folders
        return folders.union(*(self.twins(folder) for folder in folders))

    def _names(self, folder: str) -> Collection[str]:
        """``folder``'s entries' names (one name: a folder of one file, kept as its name)."""
        entries = self._entries.get(folder, ())
        return (entries,) if isinstance(entries, str) else entries

    def twins(self, folder: str) -> list[str]:
        """The folders of the branch other than ``folder`` holding a plan file, a source or a
        claim of either's place that are one folder with ``folder`` on some checkout (case,
        NFKC, an 8.3 short name, a backslash split: :class:`FolderTwins`, the history index's
        rule). ``folder`` need not be on the branch (an uncommitted source's, a nested plan's
        a conversion would write)."""
        return self._twins.of(folder, self._twins)

    def twin_problem(self, source: str, paths: Iterable[str]) -> tuple[str, str] | None:
        """E_PLAN_AMBIGUOUS, as (code, why), when the folder of a file of ``paths`` (those a
        conversion of ``source`` writes: its PLAN.yml, its nested plans') is one with another
        folder of the branch on some checkout (:meth:`twins`): the controller's own commit
        would make a twin no reader reads, the source waits (rounds 81, 82: a nested
        ``step-2`` written beside the agent's ``STEP-2``); else None. The one twin rule of
        the pass, the status rows and ``check``."""
        for path in paths:
            folder = str(PurePosixPath(path).parent)
            twins = self.twins(folder)
            if twins:
                return "E_PLAN_AMBIGUOUS", _twin_why(folder, twins, source)
        return None

    def _judge(self, folder: str) -> None:
        """``folder``'s verdict by every reader's rule (:func:`source_verdict`) from its
        entries now; a source whose folder is one with another plan's or source's folder on
        some checkout (:meth:`twins`) waits E_PLAN_AMBIGUOUS whatever else it is (round 82:
        two twin sources had no row, and ``check`` predicted ``convert``)."""
        self._found.pop(folder, None)
        self.held.pop(folder, None)
        names = self._names(folder)
        why = source_verdict(folder, names) if names else None
        if why is None:
            return
        twins = self.twins(folder)
        if twins:
            why = ("E_PLAN_AMBIGUOUS", _twin_why(folder, twins, why[1] if not why[0] else ""))
        if why[0]:
            self.held[folder] = why
            self._found[folder] = ""
        else:
            self._found[folder] = f"{folder}/{why[1]}"

    def advance(self, parent: str, sha: str, files: Mapping[str, bytes | None]) -> None:
        """The controller's own commit ``sha`` on ``parent`` wrote ``files``: carry the
        answer over instead of reading the change again. Its commits never add a source; a
        PLAN.yml it writes or a source it deletes settles that folder (judged again, from
        the tree, at the next head)."""
        if self._head != parent:
            return
        for path, data in files.items():
            folder = str(PurePosixPath(path).parent)
            self._found.pop(folder, None)
            self._settled.add(folder)
            if data is not None and is_plan_file(path):  # a twin of it is held at once
                self._twins.add(folder)
        self._head = sha


def _twin_why(folder: str, twins: list[str], source: str) -> str:
    shown = " and ".join(map(visible, twins))
    what = f"{PurePosixPath(source).name} is" if source else "its source is"
    return (
        f"{visible(folder)} is one folder with {shown} on some checkout: {what} not converted "
        "(neither plan would be read or run); rename one folder"
    )


def source_outcome(
    finder: SourceFinder, repo: GitRepo, head: str, plan_id: str, source: str
) -> Converted | Problem:
    """What the daemon does with ``plan_id``'s source at ``head`` (its value in
    :meth:`SourceFinder.committed`): the convert commit it makes, or the problem for which
    the source waits (its folder's verdict, :func:`controller.plan.names.source_verdict`, or
    its conversion's error). The status row and ``plangate check`` (round 74: it listed no
    source the merge would leave held) both answer from it."""
    from controller.errors import PlangateError, Problem

    if not source:
        code, why = finder.held.get(plan_id, ("E_PLAN_AMBIGUOUS", "keep one"))
        return Problem(code, f"cannot convert {plan_id}: {why}")
    held = source_held(repo, head, source)
    if held is not None:  # never read (rounds 121, 122)
        return held
    try:
        data = repo.read_file(head, source) or b""
        converted = convert_source(plan_id, source, data, delete_source=True)
    except PlangateError as exc:
        # the converter's location and remedy kept (round 111: the row had neither)
        message = f"cannot convert {source}: {exc.message}"
        return Problem(exc.code, message, path=exc.path, remedy=exc.remedy)
    twin = finder.twin_problem(source, converted.files)
    if twin is not None:
        return Problem(twin[0], f"cannot convert {source}: {twin[1]}")
    written = written_held(repo, head, source, converted.files)
    return converted if written is None else written


def source_held(
    repo: GitRepo, commit: str, source: str, *, mode: str | None = None
) -> Problem | None:
    """Why the daemon converts no byte of ``source`` at ``commit``, whatever it says, or
    None: ``E_UNSAFE_PATH`` when its entry is no regular file (a symbolic link: git stores
    the link's target path, which was read as the source, while ``hash``, ``validate`` and
    ``freeze`` followed the link to another file; a gitlink), ``E_ATTRIBUTE_UNSUPPORTED``
    when the committed ``.gitattributes`` hide its lines from a review (:func:`review_hidden`;
    round 121). ``mode``: the entry's git mode as the caller found it (a working tree's file,
    as ``git add`` would store it); else the commit's. The one rule of the pass, the status
    rows, ``check`` (:func:`source_outcome`) and the readers of a checkout
    (:class:`CheckoutHolds`; round 122, ``source-prediction-ignores-hold``: they printed the
    hash of a source the daemon held)."""
    from controller.errors import Problem
    from controller.git.planstate import NOT_A_FILE

    kind = mode if mode is not None else repo.mode_of(commit, source)
    if kind in NOT_A_FILE:
        return Problem(
            "E_UNSAFE_PATH",
            f"cannot convert {source}: it is {NOT_A_FILE[kind]} in the plans folder; it is not "
            "followed",
            "",
            None,
            "commit the plan source itself as a regular file",
        )
    return review_hidden(repo, commit, source, what="source")


def written_held(
    repo: GitRepo, commit: str, source: str, files: Mapping[str, bytes | None]
) -> Problem | None:
    """Why the daemon does not write ``files`` (a conversion of ``source``: its PLAN.yml and
    each nested plan's ``step-N/PLAN.yml``) on ``commit``, or None: ``E_UNSAFE_PATH`` for a
    link, gitlink or file the branch holds where a folder on a file's way should be (the
    write would land in another plan or out of the repository); ``E_CONVERT_UNSUPPORTED``
    for a plan file the branch already holds there (a conversion only creates plans: the
    agent's own ``step-2/PLAN.yml`` beside a parent whose nested step writes it). The branch's
    half of the pass's check (the working tree's is the pass's own), asked by the status
    rows, ``check`` and the readers alike (round 122, ``nested-source-over-agent-kid``: the
    pass waited on it while its row, ``check``, ``hash`` and ``validate`` said it converts)."""
    from controller.errors import Problem

    for path, data in files.items():
        if data is None:
            continue
        parts = PurePosixPath(path).parts
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            if repo.mode_of(commit, prefix) is not None:  # an entry, and no folder
                return Problem(
                    "E_UNSAFE_PATH",
                    f"cannot convert {source}: {prefix} is a link or a file on the branch, not "
                    f"a folder, where the conversion writes {path}",
                    "",
                    None,
                    f"remove {prefix} (or write the plan in a new folder)",
                )
        if is_plan_file(path) and repo.blob_sha(commit, path) is not None:
            return Problem(
                "E_CONVERT_UNSUPPORTED",
                f"cannot convert {source}: converting would replace the plan {path} the branch "
                "already holds",
                "",
                None,
                "a conversion only creates plans: move that plan, or rename the step",
            )
    return None


@dataclass
class CheckoutHolds:
    """The daemon's hold rules of one source (:func:`source_held`, :func:`written_held`),
    asked of the commit a checkout is at: what ``validate``, ``hash`` and ``freeze`` of a
    source in a working tree answer, as its row and ``check`` do (round 122). ``source``:
    its path in the repository; ``mode``: its entry as ``git add`` would store it."""

    repo: GitRepo
    commit: str
    source: str
    mode: str

    def of_source(self) -> Problem | None:
        return source_held(self.repo, self.commit, self.source, mode=self.mode)

    def of_written(self, files: Mapping[str, bytes | None]) -> Problem | None:
        return written_held(self.repo, self.commit, self.source, files)


def review_hidden(
    repo: GitRepo,
    commit: str,
    file: str,
    *,
    pinned_by: str | None = None,
    what: str = "plan file",
) -> Problem | None:
    """``E_ATTRIBUTE_UNSUPPORTED`` when the ``.gitattributes`` committed in ``commit`` hide
    every line of ``file`` from a review (``-diff``, ``binary``: git's diff says "Binary
    files differ"; a forge's "generated" folds it away): a plan file (round 113), the plan
    file of a nested plan ``pinned_by`` pins, or a source the controller would convert
    (round 121: ``PLAN.md -diff`` beside a markdown plan hid every line the reviewer was
    to read, and it was converted, frozen and run). None when its review shows it."""
    from controller.errors import Problem

    hiding = repo.review_hiding(commit, file)
    if hiding is None:
        return None
    whose = f", the nested plan {pinned_by} pins," if pinned_by is not None else ""
    return Problem(
        "E_ATTRIBUTE_UNSUPPORTED",
        f"the committed .gitattributes give {file}{whose} `{hiding}`: git's diff and a "
        "forge's review show none of its lines, so no approver can read what she would "
        "approve",
        "",
        None,
        f"remove `{hiding}` for the {what} from .gitattributes and commit it",
    )


def is_plan_file(path: str) -> bool:
    return PurePosixPath(path).name in PLAN_FILES


def is_source(path: str) -> bool:
    return PurePosixPath(path).name in SOURCE_FILES


def convert_source(plan_id: str, source: str, data: bytes, delete_source: bool) -> Converted:
    """The convert commit's files for ``source`` (raises the conversion's error)."""
    from controller.plan.convert import convert_text
    from controller.plan.discovery import source_text

    # the readers' own reading: its code and words on the row are theirs (round 125)
    text = source_text(data)
    conversion = convert_text(text, PurePosixPath(source).name, nested_base=plan_id)
    files: dict[str, bytes | None] = {f"{plan_id}/PLAN.yml": conversion.text.encode("utf-8")}
    for child, child_text in conversion.children:
        files[f"{child}/PLAN.yml"] = child_text.encode("utf-8")
    if delete_source:
        files[source] = None
    return Converted(plan_id, source, files, conversion.text, conversion.format)
