"""Helpers shared by the subcommands: finding the config, expanding plan paths, printing."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.display import visible

if TYPE_CHECKING:
    from controller.errors import Problem, UsageError
    from controller.git.gitrepo import GitRepo
    from controller.git.history import EventSink, HistoryIndex
    from controller.plan.catalog import Redacting
    from controller.plan.plans import LoadedPlan
    from controller.service.sources import CheckoutHolds
    from controller.settings import Config


def optional_config(config_path: str | None) -> Config | None:
    """The config by precedence (flag > PLANGATE_CONFIG > ./plangate.yml), or None.

    Without a config, nothing of the config models is imported (fast start-up).
    """
    from controller.settings import find_config

    found = find_config(config_path)
    if found is None:
        return None
    if not found.is_file():
        from controller.errors import ConfigInvalid

        kind = _kind_of(found)
        if kind is None:
            raise ConfigInvalid(f"config file {found} does not exist")
        raise ConfigInvalid(
            f"config file {found} is {kind}"
            + (
                ""
                if kind.startswith(("a symbolic link", "not reachable"))
                else ", not a regular file"
            )
        )
    from controller.settings import load_config

    config = load_config(found)
    _printing.clear()
    _printing.append(config)  # what the command prints from now on: printed()
    refuse_secret_catalog(config)
    return config


def _kind_of(path: Path) -> str | None:
    """What is at ``path`` when it is there but no regular file (None: nothing there)."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        import errno

        if exc.errno == errno.ELOOP:
            return "a symbolic link in a loop of them"
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"not reachable ({exc.strerror})"
        if os.path.islink(path):
            return f"a symbolic link to {visible(os.readlink(path))}, which does not exist"
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file"


def refuse_secret_catalog(config: Config) -> None:
    """E_CONFIG_INVALID when the catalog publishes a value :func:`catalog_redactor` hides
    (:func:`controller.plan.catalog.refuse_secrets_in_catalog`, round 71): every command
    that loads a config refuses it, so no answer can tell a right guess from a wrong one."""
    import os

    from controller.plan.catalog import refuse_secrets_in_catalog
    from controller.settings.credentials import may_hide_anything

    if may_hide_anything(config, os.environ):  # else it hides nothing: no import of it
        refuse_secrets_in_catalog(config, catalog_redactor(config))


def required_config(config_path: str | None) -> Config:
    from controller.errors import ConfigInvalid

    config = optional_config(config_path)
    if config is None:
        raise ConfigInvalid(
            "no config found", remedy="pass --config, set PLANGATE_CONFIG or create ./plangate.yml"
        )
    return config


def config_or_repo(config_path: str | None) -> Config:
    """The config by precedence; without one, a read-only view of the git repository around
    the current folder with the default settings (``status`` works inside a plans repo)."""
    config = optional_config(config_path)
    if config is not None:
        return config
    from controller.errors import ConfigInvalid
    from controller.plan.discovery import git_root
    from controller.settings import config_from_data

    root = git_root(Path.cwd() / "x")
    if root is None:
        raise ConfigInvalid(
            "no config found and not inside a git repository",
            remedy="run inside a plans repository, pass --config, or set PLANGATE_CONFIG",
        )
    return config_from_data({"repo": str(root)}, root / "plangate.yml")


def catalog_redactor(config: Config) -> Redacting:
    """The redactor every command that prints catalog or config text passes it through
    (:func:`controller.plan.catalog.shown`): the one of the controller's records
    (``secrets.redactor_for``: the secrets file, ``PLANGATE_SECRET_*``, the config's
    credentials). A secrets file that cannot be read is E_CONFIG_INVALID, as for a run
    (round 49)."""
    from controller.execution.secrets import redactor_for

    return redactor_for(config)


#: The config the running command loaded (:func:`optional_config`) and, once built, its
#: redactor: what :func:`printed` passes the command's messages through.
_printing: list[Any] = []

#: The paths the running command was asked about (its PATH/SRC/DIR arguments): the asker's
#: own text, as :func:`printed` keeps it in every answer (``cli.main`` calls :func:`asked`).
_asked: list[str] = []


def forget_config() -> None:
    """A new command starts: no config is known yet (``cli.main``; tests run several)."""
    _printing.clear()
    _asked.clear()


def asked(paths: Iterable[str]) -> None:
    """The paths the asker named on the command line for the running command (``cli.main``):
    every answer quotes them, and the paths derived from them, as written (round 69)."""
    _asked[:] = [p for p in paths if p and p != "-"]


def derived(path: Path) -> Path:
    """``path``, which the command built from the asker's (``convert``'s output folder: its
    ``-o DIR`` and the slug of its source's name): quoted as written too, as :func:`asked`."""
    _asked.append(str(path))
    return path


def asker_paths() -> tuple[str, ...]:
    """The asker's own paths in every form an answer quotes them: as written, absolute,
    resolved; the folder each names and its PLAN.yml; ``/<folder>/PLAN.yml``, the end of
    the path ``validate`` says the controller expects (round 69). Whole paths only, never a
    bare segment: a controller value is kept as written only where it is one of them."""
    forms: set[str] = set()
    for given in _asked:
        forms.add(given)
        # a name too long, a link loop: the path as written is all there is to quote
        with contextlib.suppress(OSError, RuntimeError):
            forms |= _forms_of(Path(given))
    return tuple(forms)


def _forms_of(path: Path) -> set[str]:
    folder = path if path.is_dir() else path.parent
    forms = {str(path.absolute()), str(path.resolve())}
    for where in {folder, folder.absolute(), folder.resolve()} - {Path(".")}:
        forms |= {str(where), str(where / "PLAN.yml")}
    if folder.resolve().name:
        forms.add(f"/{folder.resolve().name}/PLAN.yml")
    return forms


def printed(
    text: str, own: Iterable[str] = (), *, catalog: bool = False, theirs: Iterable[str] = ()
) -> str:
    """``text`` (a problem, an error, a message) as the running command may print it to a
    person or an agent: with a config loaded, every value the controller's records hide
    written ``***`` (:func:`catalog_redactor`); without one, as it is (nothing imported).

    The one choke point of what commands print (round 49: a catalog's ``params_schema``
    holding a secret's value, a ``pattern``, an ``enum`` or ``const`` value, was quoted raw
    by the problems of ``validate``, ``check``, ``show`` and ``freeze``): the ``--json``
    records, warnings, ``check``'s report and every error ``cli`` reports go through it. A
    secrets file that cannot be read is E_CONFIG_INVALID, as for a run.

    The split by provenance (docs/threat-model.md, rounds 61-63 and 69): the asker's own
    text is kept as written (:func:`controller.errors.redacted_around`): ``own`` (a key of
    its source, its plan's values: round 62) and, in every answer, the paths it named and
    those derived from them (:func:`asker_paths`, round 69: masking them for a right guess
    of a secret confirmed the guess). The catalog's parts of a plan's problems are answered
    first, alone (:func:`controller_text`), so none of them is kept as a path; ``catalog``:
    ``text`` quotes them unanswered (an invalid plan's error), so only ``own`` is kept;
    ``theirs``: those quotes (:meth:`PlangateError.catalog_quoted`), redacted whole even
    where they hold the asker's words (round 71)."""
    if not _printing:
        return text
    from controller.errors import redacted_around

    paths = () if catalog else asker_paths()
    return redacted_around(text, (*own, *paths), controller_text, theirs)


def controller_text(text: str) -> str:
    """``text`` wholly the controller's material (the catalog's parts of a problem's
    message): through the command's redactor, nothing kept (as it is without a config)."""
    if not _printing:
        return text
    if len(_printing) == 1:
        _printing.append(catalog_redactor(_printing[0]))
    return str(_printing[1].text(text))


def plan_paths(paths: Iterable[str], command: str) -> list[Path]:
    """Each argument as a plan file: a folder means its PLAN.yml (or, in a folder without
    one, the one plan source the controller would convert: PLAN.json, PLAN.toon, PLAN.md).
    A plan the branch holds but this working tree lacks is refused as :func:`left_out` says
    (``command``: the reader asked, its remedy's last step)."""
    return [plan_path(p, command) for p in paths]


def plan_path(path: str, command: str) -> Path:
    """One argument as a plan file (:func:`plan_paths`)."""
    import os

    from controller.plan.plans import plan_file_in

    plan_file = plan_file_in(Path(path))
    if not os.path.lexists(plan_file) or plan_file.is_dir():  # a folder without its file
        held = left_out(plan_file, None, f"then run `plangate {command}` again")
        if held is not None:
            raise held
    return plan_file


def left_out(plan_file: Path, watched: Path | None, then: str) -> UsageError | None:
    """The error for a plan file not in the working tree that the branch holds (a sparse
    checkout left it out, or it was deleted and not committed), else None: one diagnosis for
    every command (round 90: ``approve`` said it had no PLAN.yml; round 116,
    sparse-absent-plan-misdiagnosed: ``show``/``validate``/``hash``/``freeze --check`` said
    "no such plan file" of a plan ``status`` listed). ``then``: the remedy's last step, in
    the command's own words (round 116, refusal-text-wrong-verb). Where git refuses the
    config's repository (another user owns it), that (round 111)."""
    import os

    from controller.errors import PlangateError, UsageError
    from controller.git.gitrepo import GitRepo
    from controller.git.guard import owned_here
    from controller.plan.names import PLAN_FILES

    if watched is not None and watched.is_dir():
        owned_here(watched)
    try:
        absolute = Path(os.path.abspath(plan_file))
        start = next((p for p in absolute.parents if p.is_dir()), None)
        if start is None:  # the root folder itself (`show /`): nothing above it to look in
            return None
        repo = GitRepo.containing(start)
        named = absolute.relative_to(repo.path.resolve()).as_posix()
        names = (
            (named,) if absolute.name in PLAN_FILES else tuple(f"{named}/{n}" for n in PLAN_FILES)
        )
        rel = next((n for n in names if repo.read_file("HEAD", n) is not None), "")
        sparse = bool(rel) and repo.hiding_bit(rel) == "skip-worktree"
    except (PlangateError, ValueError, OSError):
        return None
    if not rel:
        return None
    if sparse:  # `git checkout HEAD -- <file>` answers "did not match any file(s)" there
        folder = rel.rpartition("/")[0] or "."
        return UsageError(
            f"{rel} is on the branch but not in this working tree: a sparse checkout left it out",
            remedy=f"bring it in first (`git sparse-checkout add {folder}`, or `git "
            f"sparse-checkout disable`; `git show HEAD:{rel}` prints it), {then}",
            quotes=(rel,),
        )
    return UsageError(
        f"{rel} is on the branch but not in this working tree (it was deleted)",
        remedy=f"check it out first (`git checkout HEAD -- {rel}`; `git show HEAD:{rel}` "
        f"prints it), {then}",
        quotes=(rel,),
    )


def print_problems(source: Path, problems: list[Problem]) -> None:
    """One line per problem, hidden characters escaped (messages quote the plan's values,
    as written: round 61), the catalog's parts of a message through
    :func:`controller_text`; the location, the asker's path, outside the redactor. Each is
    followed by its remedy, as every error the CLI prints is (SPEC §6; the one ``--json``
    gives as ``remedy``)."""
    for problem in problems:
        print(visible(problem.answered(controller_text).render(str(source))), file=sys.stderr)
        print(f"  remedy: {visible(problem.to_json()['remedy'])}", file=sys.stderr)


def plan_id_for(plan_file: Path, config: Config | None) -> str:
    """The plan's id (its folder relative to the repo root) as the policy matches it and
    the controller's status rows name it: the path as named, never through a link inside
    the repository (round 97: ``show plans/s``, ``s`` a committed link to ``q``'s folder,
    resolved to ``plans/q`` and printed q's row as s's). Only the way to the repository
    may pass a link (a work tree reached as ``/link/repo``): its first folder that is the
    repository, the rest of the path as written (:func:`controller.fsutil.path_in_repo`, the
    rule MCP reads an absolute path by too: round 98)."""
    import os

    from controller.fsutil import path_in_repo

    folder = Path(os.path.abspath(plan_file)).parent  # ".." folded as written, no link read
    if config is not None:
        rel = path_in_repo(folder.as_posix(), config.repo_path())
        if rel is not None:
            return rel or "."
    return Path(plan_file.parent).as_posix()


def frozen_facts_for(plan: LoadedPlan, config: Config | None) -> dict[str, object] | None:
    """Risk, estimate and policy for ``frozen:`` (None without a config's catalog)."""
    if config is None or not plan.valid:
        return None
    from controller.approval.policy import frozen_facts

    return frozen_facts(plan_id_for(plan.path, config), plan.data, config, plan.path)


def own_commits(config: Config | None) -> Callable[[str], bool] | None:
    """The controller's record of the commits it made, from the config's state directory
    (the live controller's rule, round 65); None without a config or a record it may read:
    by git alone."""
    from controller.service.statedir import OwnCommits

    if config is None:
        return None
    own = OwnCommits(config.state_path() / "commits")
    try:
        if own.known:
            own.load()
    except OSError:  # another user's state directory (a separate Unix user): git alone
        return None
    return own.__contains__ if own.known else None


@contextmanager
def signers_pinned(config: Config) -> Iterator[Config]:
    """``config`` with its allowed-signers file read once, for the whole command
    (:func:`controller.settings.signersfile.pin_signers`, in a private folder): what
    ``check`` and ``audit --config`` judge by, as a controller pass does (round 125).
    Unreadable: ``E_CONFIG_INVALID``."""
    import tempfile

    from controller.settings.signersfile import pin_signers

    if config.approval.allowed_signers is None:
        yield config
        return
    with tempfile.TemporaryDirectory(prefix="plangate-signers-") as folder:
        yield pin_signers(config, Path(folder))


@contextmanager
def read_history(
    repo: GitRepo,
    config: Config,
    head: str,
    *,
    own_commit: Callable[[str], bool] | None = None,
    sink: EventSink | None = None,
) -> Iterator[HistoryIndex]:
    """The history index the controller builds (:func:`controller.git.history.config_index`),
    in memory, scanned up to ``head``: the one way ``check``, ``approve``, ``reject`` and
    ``abort --config`` read history, so what they predict is what the controller decides
    (round 43). ``own_commit``: how the controller's commits are told (None: by the
    controller's record of its commits in the config's state directory, as the controller
    and ``audit --config`` tell them, round 112; without one, by its name); ``sink`` hears
    the scan's events."""
    import tempfile

    from controller.git.history import config_index
    from controller.settings.signersfile import pin_signers

    if own_commit is None:
        own_commit = own_commits(config)
    repo.read_signatures = config.approval.allowed_signers is not None
    with tempfile.TemporaryDirectory(prefix="plangate-history-") as signers:
        # the file as one reading (a caller that pinned it: the same bytes again)
        config = pin_signers(config, Path(signers))
        index = config_index(config, Path(signers), lambda: own_commit, repo)
        try:
            index.scan(repo, head, sink)
            yield index
        finally:
            index.close()


def _attributed(path: Path) -> tuple[GitRepo, str] | None:
    """The working tree holding ``path`` and its path there, where an attribute may convert
    it (:mod:`controller.git.attrfiles`); None, and no git asked and GitPython not even
    imported: outside a working tree, a link out of it, or no attribute can apply."""
    from controller.git import attrfiles

    checkout = attrfiles.checkout_of(path)
    if checkout is None:
        return None
    try:
        rel = path.resolve().relative_to(checkout.top.resolve()).as_posix()
    except ValueError:  # a link out of the working tree: git would not read it there
        return None
    if not attrfiles.may_apply(checkout, rel):
        return None
    from controller.git.gitrepo import GitRepo

    return GitRepo(checkout.top, trust_repo_config=True), rel


def _places(config: Config | None) -> tuple[str, Path | None]:
    """The plans folder and the watched repository of ``config`` (the defaults without)."""
    return ("plans", None) if config is None else (config.plans_dir, config.repo)


def refuse_nested(
    named: str, path: Path, plans_dir: str = "plans", watched: Path | None = None
) -> None:
    """E_UNSAFE_PATH naming the plan, for a plan (``path``: its file or folder, as ``named``)
    in a repository of its own below the plans folder
    (:func:`controller.git.planstate.nested_refusal`): a folder holding a ``.git`` (a
    submodule's checkout: round 91, ``approve`` read it as a plan ``.`` and said
    E_PLAN_HASH_MISMATCH), or a gitlink on its way at the HEAD of the work tree around it,
    checked out or not (round 91: one never checked out was "no plan" to ``show`` and
    ``approve``). Outside a work tree, or before its first commit: nothing to refuse."""
    import os

    from controller.errors import PlangateError, UnsafePath
    from controller.git.planstate import nested_refusal
    from controller.plan import plans

    absolute = Path(os.path.abspath(path))
    found = plans.nested_at(absolute, plans_dir, watched)
    if found is not None:
        raise UnsafePath(f"{named}: {found.message}", quotes=(named,))
    root = next((p for p in absolute.parents if os.path.lexists(p / ".git")), None)
    if root is None:
        return
    from controller.git.gitrepo import GitRepo

    try:
        repo = GitRepo.containing(root)
        rel = absolute.relative_to(Path(os.path.abspath(repo.path))).as_posix()
        head = repo.rev("HEAD")
    except (PlangateError, ValueError):
        return  # no repository or no commit there: the caller says so
    if head is not None:
        refused = nested_refusal(rel, plans_dir, lambda place: repo.mode_of(head, place))
        if refused is not None:
            raise refused


@contextmanager
def checkout_holds(path: Path) -> Iterator[CheckoutHolds | None]:
    """The daemon's hold rules of the plan source ``path`` (a file in a git working tree),
    asked of the commit the checkout is at (:class:`controller.service.sources.CheckoutHolds`:
    attributes hiding it, committed as a link, a conversion writing over a plan the branch
    holds), its entry taken as ``git add`` would store it (a link stays a link); None
    outside a working tree or before its first commit. ``validate``, ``hash`` and
    ``freeze`` of a source ask them, as its row and ``check`` do (round 122,
    ``source-prediction-ignores-hold``: they printed the hash "the controller will freeze"
    of a source the daemon held)."""
    import os

    from controller.errors import PlangateError
    from controller.plan.names import SOURCE_FILES
    from controller.service.sources import CheckoutHolds

    absolute = Path(os.path.abspath(path))  # never resolved: the link is the entry
    root = next((p for p in absolute.parents if os.path.lexists(p / ".git")), None)
    if absolute.name not in SOURCE_FILES:  # a name the daemon never converts
        root = None
    repo, holds = None, None
    if root is not None:
        from controller.git.gitrepo import GitRepo

        try:
            repo = GitRepo(root, trust_repo_config=True)
            commit = repo.rev("HEAD")
        except PlangateError:
            commit = None
        if repo is not None and commit is not None:
            mode = "120000" if absolute.is_symlink() else "100644"
            holds = CheckoutHolds(repo, commit, absolute.relative_to(root).as_posix(), mode)
    try:
        yield holds
    finally:
        if repo is not None:
            repo.close()


def as_git_stores(path: Path, config: Config | None) -> bytes | None:
    """The plan file ``path`` as ``git add`` would store it, where it lies in a git working
    tree whose attributes may convert it (``working-tree-encoding``, ``eol``, ``ident``):
    ``validate``, ``hash``, ``show``, ``freeze`` and ``convert`` then judge the text the
    controller will read from the commit, as its adoption does (round 80: they read a
    UTF-16 checkout's raw bytes as UTF-8). None (:func:`_attributed`), or a file that is no
    regular one or is over its size limit in any spelling: its reader reads it as it is and
    says why. :class:`~controller.errors.AttributeUnsupported`: bytes ``git add`` would
    refuse. E_UNSAFE_PATH where no file is there and the branch holds a gitlink on its way
    (:func:`refuse_nested`: a submodule never checked out is no absent plan)."""
    if not path.is_file():
        refuse_nested(str(path), path, *_places(config))
    found = _attributed(path)
    if found is None:
        return None
    from controller.errors import PlangateError
    from controller.git import conversion
    from controller.plan.discovery import MAX_SOURCE_BYTES
    from controller.plan.names import SOURCE_FILES
    from controller.plan.plans import DEFAULT_MAX_BYTES, read_bounded

    if path.name in SOURCE_FILES:
        limit = MAX_SOURCE_BYTES
    else:
        limit = config.limits.max_plan_bytes if config is not None else DEFAULT_MAX_BYTES
    try:
        raw = read_bounded(path, limit * conversion.WIDEST)
    except (OSError, PlangateError):
        return None
    if len(raw) > limit * conversion.WIDEST:
        return None
    repo, rel = found
    return repo.as_committed(rel, raw, adding=True)


def as_git_checks_out(path: Path, blob: bytes) -> bytes:
    """``blob`` (text the command is about to write at ``path``) as git would check it out
    there, so ``git status`` calls the file clean once it is committed; refused
    (:class:`~controller.errors.AttributeUnsupported`, nothing written) when git would not
    give it back from that checkout (round 79's rule for every writer,
    :meth:`~controller.git.worktree.WorkTree.check_checkouts`). ``blob`` as it is where no
    attribute can apply."""
    found = _attributed(path)
    if found is None:
        return blob
    repo, rel = found
    repo.check_checkouts({rel: blob})
    return repo.as_checked_out({rel: blob})[rel] or b""
