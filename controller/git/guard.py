"""What every git child of plangate runs with: a scrubbed environment and pinned programs.

In local mode the agent shares the working tree, and so ``.git``: it can write hooks,
``.git/config`` (``core.hooksPath``, ``core.fsmonitor``, ``gpg.program``, credential helpers,
``include.path``...) and attributes. Git runs those programs for the controller's own git
calls, as the controller, in its environment (which holds ``PLANGATE_SECRET_*``); a
``reference-transaction`` hook could even veto every controller commit. So every git child
plangate starts (its own ``subprocess`` calls and GitPython's persistent ``cat-file``) gets:

- **an environment of what git needs** (:data:`PASS_ENV`, ``GIT_*``, ``LC_*``): no
  ``PLANGATE_*`` variable, no secret, no ``GIT_TRACE*`` (a trace sent to stdout would read
  as git's answer), nothing else of the controller's environment;
- **configuration at the highest precedence** (the command scope git reads after every
  file, as ``GIT_CONFIG_PARAMETERS``, the last of it: :func:`_config_env`): hooks and
  fsmonitor off, no pager, editor
  or alternate-refs command, and every program, key and trust anchor git could take from a
  config file (ssh, askpass, credential helpers, gpg/gpgsm/ssh-keygen, the allowed-signers and
  revocation files, the signing key and format) set to what the *trusted* scopes say, else
  git's default. Trusted: the system and global config of the controller's user and its own
  environment (``git -c``, ``GIT_CONFIG_*``); never the repository's own config (local and
  worktree scopes, and what they include). A person running plangate in their clone
  (``trust_repo_config``: ``approve``, ``check``) may choose the signing key and format
  there, never a program or a trust anchor (:data:`PERSONAL`), nor whether to sign at all
  (``commit.gpgSign``: :meth:`~controller.git.signing.Signing.signs_commits`, round 122).
- **no credential on a command line**: the user and password of an http(s) ``remote.url``
  reach git through a credential helper reading them from the environment of the calls
  that talk to the remote (:class:`RemoteAuth`); git is given the URL without them, so
  neither ``git clone`` nor the ``git-remote-http`` git starts carries them in its argv,
  which every process on the host reads in ``/proc/<pid>/cmdline`` (round 128).

Commands that read working-tree contents through attributes (``status``, ``diff`` of the
working tree, ``add``...) are not run by the controller: filters and diff drivers named in a
``.gitattributes`` the agent commits never run (:meth:`WorkTree.worktree_changes` compares
contents itself, through git's built-in conversions alone: :mod:`controller.git.conversion`).
Trusted, not covered: the ``git`` binary found on ``PATH`` and the programs the trusted
config names.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller import GIT_LOCATION_ENV
from controller.errors import GitError

#: Variables a git child may see besides ``GIT_*`` and ``LC_*``: locating config and keys,
#: signing agents, proxies and certificates for fetch and push.
PASS_ENV = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
        "XDG_CONFIG_HOME", "GNUPGHOME", "GPG_AGENT_INFO", "GPG_TTY", "SSH_AUTH_SOCK",
        "SSH_AGENT_PID", "SSH_ASKPASS", "http_proxy", "https_proxy", "HTTP_PROXY",
        "HTTPS_PROXY", "no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "SSL_CERT_FILE",
        "SSL_CERT_DIR", "CURL_CA_BUNDLE", "EMAIL",
    }
)  # fmt: skip
PASS_PREFIXES = ("GIT_", "LC_")
#: git's tracing variables (``GIT_TRACE``, ``GIT_TRACE_PERFORMANCE``, ``GIT_TRACE2_EVENT``...,
#: every name with this prefix), never passed: pointed at ``/dev/stdout`` or ``2`` they mix
#: trace lines into the answer plangate parses (round 111: ``status`` read "HEAD is
#: detached" on main, ``approve`` a fromhex error).
TRACE_PREFIX = "GIT_TRACE"
#: git's location variables, never passed (:data:`controller.GIT_LOCATION_ENV`): the
#: repository is the config's or the plan's, never the environment's.
LOCATION_ENV = GIT_LOCATION_ENV
#: git's variables that change what a read means, never passed: how pathspecs match
#: (round 87: ``GIT_ICASE_PATHSPECS``/``GIT_GLOB_PATHSPECS`` made ``plangate check``'s
#: ``ls-tree`` fail "pathspec magic not supported", and ``NOGLOB``/``LITERAL`` change which
#: paths a pathspec names), where replace refs live (the grafts file is pinned to
#: ``/dev/null`` below). plangate's git reads history as the branch holds it, whoever
#: invokes it.
READING_ENV = frozenset(
    {
        "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
        "GIT_LITERAL_PATHSPECS", "GIT_REPLACE_REF_BASE", "GIT_NOTES_REF",
        "GIT_NOTES_DISPLAY_REF", "GIT_NOTES_REWRITE_REF", "GIT_NOTES_REWRITE_MODE",
    }
)  # fmt: skip

#: Pinned whatever any config says: git never runs these for plangate.
FIXED = (
    ("core.hooksPath", "/dev/null"),  # no hook exists there: none runs, none vetoes
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("advice.graftFileDeprecated", "false"),  # the hint named a grafts file in audit details
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("diff.external", ""),
    ("core.alternateRefsCommand", ""),
    ("protocol.ext.allow", "never"),
    # what git prints to plangate and writes for it is UTF-8, whatever the repository's
    # config says (`i18n.logOutputEncoding=UTF-16` crashed every pass: round 8)
    ("i18n.logOutputEncoding", "UTF-8"),
    ("i18n.commitEncoding", "UTF-8"),
    # a commit's people as the commit names them, never as a `.mailmap` the agent commits
    # (or `mailmap.file` in the repository's config) renames them: the page's `/commit/`
    # showed the agent's commits as Alice's (round 92, `page-mailmap-author`)
    ("log.mailmap", "false"),
    # a commit message's trailers as git parses them by default: `core.commentChar` makes the
    # lines that start with it comments, dropped from `%(trailers)` (an included
    # `commentChar = C` hid every `Controller:` and `Controller-Seal:` trailer, so the audit
    # took the controller's sealed policy records for look-alikes: round 94), and
    # `trailer.separators` decides which lines are trailers at all
    ("core.commentChar", "#"),
    ("trailer.separators", ":"),
)

#: Pinned for a repository plangate never fetches into or pushes from (local mode): no
#: transport at all, so a lazy fetch of a "missing" object (``extensions.partialClone``)
#: cannot run a ``remote.<name>.uploadpack``, ``core.gitProxy`` or ``url.<base>.insteadOf``
#: target the agent configured. (``protocol.<name>.allow`` beats ``protocol.allow``: each
#: name git knows is pinned too.)
OFFLINE = (
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in ("file", "git", "ssh", "http", "https")),
    *((f"protocol.{name}.allow", "never") for name in ("ext", "fd", "testgit")),
)

#: Pinned for every git child reading a store nobody verified (local mode's shared
#: ``.git/objects`` read by a person's plangate, ``status``, ``audit``, the MCP server): the
#: same pins the store fetch's ``upload-pack`` runs with (:mod:`controller.git.store`). A
#: commit-graph the agent writes gives git a commit's parents, root tree and changed paths
#: without reading the commit: ``git log`` walked past Alice's rejection (round 60).
UNVERIFIED_STORE = (
    ("core.commitGraph", "false"),
    ("fetch.writeCommitGraph", "false"),
    ("gc.writeCommitGraph", "false"),
    ("core.useReplaceRefs", "false"),
)

#: Taken from the trusted config, else git's default (or a value that runs nothing).
TRUSTED_OR_DEFAULT = (
    ("core.askPass", ""),  # empty: git asks no program (then SSH_ASKPASS, if the env has it)
    ("gpg.format", "openpgp"),
    ("gpg.x509.program", "gpgsm"),
    ("gpg.ssh.program", "ssh-keygen"),
    ("gpg.ssh.allowedSignersFile", "/dev/null"),  # no principal: no "Good ... for <who>"
    ("gpg.ssh.revocationFile", "/dev/null"),
    ("gpg.ssh.defaultKeyCommand", "false"),
    ("gpg.minTrustLevel", "undefined"),
    ("user.signingKey", ""),
)
#: Of those, what a person's own clone may choose (``trust_repo_config``): which key signs
#: and in which format. Programs and trust anchors come from the system, global and command
#: scopes only: a checkout an agent also writes must not choose what runs with her key.
PERSONAL = frozenset({"gpg.format", "user.signingKey"})
_TRUSTED_SCOPES = frozenset({"system", "global", "command"})
_CONFIG_ENV = ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


#: git commands that compare trees (or a tree and the index) and so ask, for each gitlink they
#: meet, how ``.gitmodules`` says to show it: git parses the working tree's ``.gitmodules``
#: (else the index's or ``HEAD``'s) and *dies* on an entry it calls invalid (``update =
#: !cmd``, a bad ``fetchRecurseSubmodules``, a line it cannot parse): one agent commit
#: stopped every pass, the audit and ``status`` (round 91). ``--ignore-submodules=none``
#: overrides that file (git never reads it) and hides no gitlink: :func:`argv` adds it.
#: (No config setting does it: ``diff.ignoreSubmodules`` is read beside the file, not
#: instead of it.)
DIFFING = frozenset({"log", "show", "diff", "diff-tree", "diff-index", "diff-files", "whatchanged"})
NO_GITMODULES = "--ignore-submodules=none"
#: git's options before the command that take the next word as their value.
_VALUED = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


#: What a diffing command prints, whatever the porcelain display settings of any config say
#: (round 93, ``page-gitconfig-format``: the agent's ``.git/config`` with ``color.ui=always``,
#: ``core.abbrev=4``, ``log.date=relative`` reached the page's ``/commit/``). Each option is
#: git's own override of a setting, put right after the command, so an option the caller
#: writes after it wins: colour (``color.*``), external diff and textconv drivers, a path
#: relative to a folder (``diff.relative``), the order of files (``diff.orderFile``; the
#: empty order of ``/dev/null``), the ``a/``/``b/`` prefixes (``diff.noprefix``,
#: ``diff.mnemonicPrefix``), full object names (``core.abbrev``).
DIFF_DISPLAY = (
    "--no-color", "--no-ext-diff", "--no-textconv", "--no-relative", "--src-prefix=a/",
    "--dst-prefix=b/", f"-O{os.devnull}", "--no-abbrev",
)  # fmt: skip
#: With a ``--stat`` asked for (each of these options asks for one): as wide as git makes
#: it (``diff.statGraphWidth``, ``diff.statNameWidth``; 0: no limit).
STAT_DISPLAY = ("--stat-graph-width=0", "--stat-name-width=0")
#: The history commands: besides :data:`DIFF_DISPLAY`, which commits and which text. No
#: notes (a note is no commit, and its ref names objects the controller's store never took
#: in: every ``git show REV:PATH`` of the page failed "Failed to read notes tree", round 93
#: ``page-notes-record``; ``notes.displayRef``, ``core.notesRef``, ``GIT_NOTES_REF``), no
#: decorations (``log.decorate``), full commit names (``log.abbrevCommit``), git's own date,
#: format, names (``log.date``, ``format.pretty``, ``log.mailmap``), no signature check
#: (``log.showSignature``), the root commit's changes (``log.showRoot``), no rename following
#: (``log.follow``), renames as git finds them by default (``diff.renames``), and ``--grep``
#: read as a basic regular expression (``grep.patternType``, ``grep.extendedRegexp``).
LOG_DISPLAY = (
    *DIFF_DISPLAY, "--no-notes", "--no-decorate", "--no-abbrev-commit", "--date=default",
    "--pretty=medium", "--no-mailmap", "--no-show-signature", "--root", "--no-follow",
    "--find-renames", "--basic-regexp",
)  # fmt: skip
#: The options :func:`argv` puts after each command: every read whose output plangate
#: parses or shows reads through plumbing or through these, never by the display settings
#: of a config file (an agent writes local mode's ``.git/config``). Settings with no option
#: shape only a patch, which no reader prints or parses (``diff.context``,
#: ``diff.algorithm``...); ``core.quotePath`` is a caller's ``-z`` or its ``-c``.
DISPLAY = {
    **dict.fromkeys(("log", "show", "whatchanged"), LOG_DISPLAY),
    "diff": (*DIFF_DISPLAY, "--find-renames"),
    **dict.fromkeys(("diff-tree", "diff-index", "diff-files"), DIFF_DISPLAY),
}


def argv(args: Sequence[str]) -> list[str]:
    """The command line of a git child running ``args`` (global options, the command, its
    arguments): a command of :data:`DIFFING` never reads ``.gitmodules``, and prints by
    :data:`DISPLAY`, never by a config's display settings."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in _VALUED else 1
    if at < len(args) and args[at] in DIFFING:
        display = DISPLAY.get(args[at], ())
        if any(arg == "--stat" or arg.startswith("--stat=") for arg in args[at + 1 :]):
            display = (*display, *STAT_DISPLAY)
        return ["git", *args[: at + 1], NO_GITMODULES, *display, *args[at + 1 :]]
    return ["git", *args]


#: git's words when it refuses a repository's format (``core.repositoryformatversion`` over
#: what it knows, an ``extensions.*`` it does not know, a v1-only extension under version 0).
_REFUSED = re.compile(r"repository extension|repo version|extension found|repository format")
_IGNORED = re.compile(r"ignoring git dir '.*?': (.*)")
ACCEPT_REMEDY = (
    "restore the repository's config (remove the [extensions] entry git names, and set "
    "core.repositoryformatversion back to 0 if nothing else needs it), or use a repository "
    "git reads"
)


def accepted(cwd: Path, stderr: str, local: Iterable[tuple[str, str | None]]) -> None:
    """E_GIT unless git reads the repository at ``cwd`` (if any) as a SHA-1 repository: its
    format version and extensions as git itself judges them (round 94,
    ``page-repofmt-absent``: with ``repositoryformatversion = 1`` and an unknown
    ``extensions.*`` git ignores the repository, and the readers answered "no readable PLAN
    file", 404, "HEAD is detached", "no commits to audit"). ``stderr``: what ``git config
    --list`` said (git warns "ignoring git dir '...': <why>" when it refuses the format);
    ``local``: the local scope's entries. Every reader opens a repository through
    :meth:`GitGuard.read`: this is the one check, and it costs no git process."""
    lines = stderr.splitlines()
    for at, line in enumerate(lines):
        found = _IGNORED.search(line)
        if found is None:
            continue
        why = [found.group(1).strip()]
        why += [more.strip() for more in lines[at + 1 :] if more[:1].isspace() and more.strip()]
        if _REFUSED.search(why[0]):
            raise GitError(
                f"git refuses the repository: {' '.join(why)}", path=str(cwd), remedy=ACCEPT_REMEDY
            )
    fmt = next((v for k, v in reversed(list(local)) if k == "extensions.objectformat"), None)
    if fmt is not None and fmt.lower() not in ("", "sha1"):
        raise GitError(
            f"{cwd} uses {fmt} object ids; plangate writes SHA-1 objects only",
            remedy="use a SHA-1 repository (the default of git init) for plans",
        )


_DUBIOUS = re.compile(r"detected dubious ownership in repository at '(.*?)'")
#: Folders another user owns that git was seen to accept (``safe.directory``), this process.
_OWNER_ACCEPTED: set[str] = set()


def owned_here(cwd: Path) -> None:
    """E_GIT when git refuses the repository at ``cwd`` for its owner (``safe.directory``):
    git then reads no repository there, and every reader answered with a false cause
    (round 111: "HEAD is detached; git switch main", "no PLAN.yml there", "no commits to
    audit"). Checked where a repository is opened (:class:`controller.git.base.RepoBase`).
    A folder this user owns costs nothing; another's is asked of git itself."""
    if str(cwd) in _OWNER_ACCEPTED or not _owned_by_another(cwd):
        return
    env = {k: v for k, v in os.environ.items() if passes(k)}
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--git-dir"], cwd=cwd, env=env, capture_output=True, check=False
        )
    except OSError:
        return  # git cannot start: the caller's own call says why
    found = _DUBIOUS.search(result.stderr.decode("utf-8", "replace"))
    if found is None:
        _OWNER_ACCEPTED.add(str(cwd))  # a shared tree the operator trusts: asked once
        return
    if result.returncode != 0:
        where = found.group(1)
        raise GitError(
            f"git refuses the repository {where}: it is owned by another user (git: "
            "detected dubious ownership), so git reads no repository there",
            path=str(cwd),
            remedy=f"run plangate as the repository's owner, or trust it: "
            f"git config --global --add safe.directory {shlex.quote(where)}",
        )


def _owned_by_another(cwd: Path) -> bool:
    """Is a working tree or git directory holding ``cwd`` (as git finds one, going up)
    owned by another user than this process's?"""
    try:
        place = Path(cwd).resolve()
        for folder in (place, *place.parents):
            dot = folder / ".git"
            if dot.exists():
                return any(p.stat().st_uid != os.geteuid() for p in (folder, dot))
            if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
                return folder.stat().st_uid != os.geteuid()
    except OSError:
        return False
    return False


def passes(name: str) -> bool:
    """May a git child see the controller's environment variable ``name``?"""
    if name in LOCATION_ENV or name in READING_ENV or name.startswith(TRACE_PREFIX):
        return False
    return name in PASS_ENV or name.startswith(PASS_PREFIXES)


@dataclass(frozen=True)
class GitGuard:
    """The pins for git children, from the config scopes plangate trusts."""

    #: Trusted entries as git lists them: (lower-cased key, value) in reading order.
    trusted: tuple[tuple[str, str | None], ...] = ()
    #: No fetch or push from here (see :data:`OFFLINE`).
    offline: bool = False
    #: The entries of the scopes trusted for programs: never the repository's own config,
    #: even in a person's clone (a shared checkout's ``gpg.ssh.program`` would run as the
    #: approver with her key: round 6). None: the same as ``trusted``.
    strict: tuple[tuple[str, str | None], ...] | None = None
    #: The object directory every git child reads and writes (local mode's own store,
    #: :mod:`controller.git.store`), never the repository's own nor an alternate of it.
    objects: str | None = None
    #: The objects git reads are a store nobody verified (:data:`UNVERIFIED_STORE`).
    unverified: bool = False
    pins: tuple[tuple[str, str], ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pins", tuple(self._pins()))

    @classmethod
    def read(
        cls,
        cwd: Path,
        *,
        trust_repo_config: bool = False,
        offline: bool = False,
        unverified: bool = False,
    ) -> GitGuard:
        """Read the trusted config as git sees it from ``cwd`` (a repository or not)."""
        args = ["git", "config", "--list", "-z", "--show-scope", "--includes"]
        # The environment without pins: a pin must not read back as a trusted value.
        env = {k: v for k, v in os.environ.items() if passes(k)}
        inherited_config(env)  # E_GIT naming a variable git would refuse, before git does
        try:
            result = subprocess.run(args, cwd=cwd, env=env, capture_output=True, check=False)
        except OSError as exc:
            raise cannot_run(exc, cwd) from None
        if result.returncode != 0:
            message = result.stderr.decode("utf-8", "replace").strip()
            named = [name for name in ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT") if name in env]
            remedy = "fix the git config file git names (git config --list shows the rest)"
            if named:  # a key git refuses (`invalid key`) in the inherited command scope
                remedy += f", or unset {' and '.join(named)} if git names the command line"
            raise GitError(f"git config: {message}", path=str(cwd), remedy=remedy)
        accepted(
            cwd, result.stderr.decode("utf-8", "replace"), _parse_list(result.stdout, {"local"})
        )
        scopes = _TRUSTED_SCOPES | ({"local", "worktree"} if trust_repo_config else set())
        strict = tuple(_parse_list(result.stdout, _TRUSTED_SCOPES))
        trusted = tuple(_parse_list(result.stdout, scopes))
        return cls(trusted, offline, strict, unverified=unverified)

    def value(self, key: str, *, program: bool = False) -> str | None:
        """The last trusted value of ``key`` (None: not set; a bare key reads as "true");
        ``program``: from the scopes trusted to name a program or a trust anchor."""
        found: str | None = None
        entries = self.strict if program and self.strict is not None else self.trusted
        for name, value in entries:
            if name == key.lower():
                found = "true" if value is None else value
        return found

    def env(
        self,
        extra: Mapping[str, str] | None = None,
        pins: Iterable[tuple[str, str]] = (),
        *,
        auth: RemoteAuth | None = None,
    ) -> dict[str, str]:
        """A git child's whole environment: what passes, the pins, then ``extra``;
        ``auth``: a call that talks to the remote, given its credential (:class:`RemoteAuth`)."""
        env = {k: v for k, v in os.environ.items() if passes(k)}
        env["GIT_TERMINAL_PROMPT"] = "0"
        # History as the branch holds it: `git replace` refs and a grafts file let whoever
        # writes .git show other commits (another author, another approver) in their place.
        env["GIT_NO_REPLACE_OBJECTS"] = "1"
        env["GIT_GRAFT_FILE"] = os.devnull
        own = self.pins if auth is None else tuple(self._pins(auth))
        env.update(_config_env(env, (*own, *pins)))
        for name in [k for k in env if k.startswith(_CONFIG_ENV[1:])]:
            del env[name]  # read into GIT_CONFIG_PARAMETERS (a count of 0 hides the rest)
        if self.objects is not None:
            env["GIT_OBJECT_DIRECTORY"] = self.objects
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = ""
        if auth is not None:
            env.update(auth.env())
        env.update(extra or {})
        return env

    def env_over_environ(self) -> dict[str, str]:
        """For a library that starts from ``os.environ`` and lets us only add or replace
        variables (GitPython): every variable that must not pass is blanked."""
        # a location variable cannot be blanked (git reads GIT_DIR="" as a repository):
        # the process dropped them at its start (:func:`controller.cli.entry`)
        blanks = {k: "" for k in os.environ if not passes(k) and k not in LOCATION_ENV}
        return {**blanks, **self.env()}

    def _pins(self, auth: RemoteAuth | None = None) -> Iterable[tuple[str, str]]:
        yield from FIXED
        if self.unverified:
            yield from UNVERIFIED_STORE
        if self.offline:
            yield from OFFLINE
        strict = self.strict if self.strict is not None else self.trusted
        yield "core.sshCommand", self.value("core.sshCommand", program=True) or _default_ssh()
        yield "credential.helper", ""  # an empty helper resets the list git gathered so far
        if auth is not None:  # the remote's own credential first: as the URL's was
            yield auth.pin()
        for name, value in strict:
            if name.startswith("credential.") and name.endswith(".helper") and value:
                yield name, value
        program = None
        for name, value in strict:
            if name in ("gpg.program", "gpg.openpgp.program") and value is not None:
                program = value
        yield "gpg.program", program or "gpg"
        yield "gpg.openpgp.program", program or "gpg"
        for key, default in TRUSTED_OR_DEFAULT:
            trusted = self.value(key, program=key not in PERSONAL)
            yield key, default if trusted is None else trusted


#: The schemes whose URL git hands, whole, to a remote helper's command line
#: (``git-remote-http origin <url>``), and whose userinfo git's credential protocol carries.
CREDENTIAL_SCHEMES = frozenset({"http", "https", "ftp", "ftps"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
#: The environment variables the helper of :meth:`RemoteAuth.pin` reads (only the calls
#: that talk to the remote get them: an environment is readable by its own user alone).
USERNAME_ENV = "PLANGATE_GIT_USERNAME"
PASSWORD_ENV = "PLANGATE_GIT_PASSWORD"
#: The credential helper (git runs it through ``sh -c``; its command line holds this text
#: only): it reads git's request to its end, then answers a ``get`` with the values of
#: :data:`USERNAME_ENV` and, when set, :data:`PASSWORD_ENV`; ``store`` and ``erase`` do
#: nothing (the config holds the credential, not a file).
HELPER = (
    '!f() { while read -r l && test -n "$l"; do :; done; test "$1" = get || return 0; '
    f"printf 'username=%s\\n' \"${USERNAME_ENV}\"; "
    f'test -z "${{{PASSWORD_ENV}+x}}" || printf \'password=%s\\n\' "${PASSWORD_ENV}"; '
    "}; f"
)


@dataclass(frozen=True)
class RemoteAuth:
    """The userinfo of an http(s) remote URL, kept off every command line (round 128,
    ``credential-in-git-argv``: ``git clone http://deploy:PW@host/...`` and the
    ``git-remote-http origin <url>`` it starts held the password in ``/proc/<pid>/cmdline``,
    readable by every process on the host). git is given the URL without it
    (:func:`remote_auth`); a call that talks to the remote gets it through
    :data:`HELPER`, a credential helper scoped to the URL's scheme, host and port, reading
    it from that call's environment."""

    #: ``scheme://host[:port]``: the URLs git asks the helper about
    scope: str
    username: str
    password: str | None

    def pin(self) -> tuple[str, str]:
        """The config entry naming the helper (the first one git asks for this host)."""
        return f"credential.{self.scope}.helper", HELPER

    def env(self) -> dict[str, str]:
        """What the helper reads: the user, and the password when the URL had one."""
        env = {USERNAME_ENV: self.username}
        if self.password is not None:
            env[PASSWORD_ENV] = self.password
        return env


def remote_auth(url: str) -> tuple[str, RemoteAuth | None]:
    """``url`` as git is given it, and the credential taken out of it: an http(s) (ftp(s))
    URL's userinfo, user and password (percent-decoded, as git decodes them), everything up
    to the last ``@`` of the authority (so no reading of a ``@`` in a password leaves a
    part of it behind). Any other URL (ssh, git, a path) or one without userinfo is
    unchanged (None). A user or password holding a line break or NUL, which git's
    credential protocol cannot carry, is ``E_GIT``."""
    from urllib.parse import unquote

    found = _SCHEME.match(url)
    if found is None or found.group(1).lower() not in CREDENTIAL_SCHEMES:
        return url, None
    start = found.end()
    end = start + len(re.split(r"[/?#]", url[start:], maxsplit=1)[0])
    authority = url[start:end]
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return url, None
    user, colon, password = userinfo.partition(":")
    username, secret = unquote(user), unquote(password) if colon else None
    if any(c in value for value in (username, secret or "") for c in "\n\r\0"):
        raise GitError(
            "remote.url: its user or password holds a line break or NUL, which git cannot "
            "send as a credential",
            remedy="write the URL's user and password without control characters",
        )
    scope = f"{found.group(1).lower()}://{host}"
    return url[:start] + host + url[end:], RemoteAuth(scope, username, secret)


def _parse_list(raw: bytes, scopes: frozenset[str] | set[str]) -> Iterable[tuple[str, str | None]]:
    """``git config --list -z --show-scope``: ``scope NUL key [LF value] NUL`` per entry."""
    parts = raw.decode("utf-8", "surrogateescape").split("\0")
    for scope, entry in zip(parts[0::2], parts[1::2], strict=False):
        if scope in scopes:
            key, newline, value = entry.partition("\n")
            yield key.lower(), value if newline else None


def _config_env(env: Mapping[str, str], pins: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The command scope a git child reads: the operator's own entries, then the pins.

    git reads ``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` first, then ``GIT_CONFIG_PARAMETERS``
    (what ``git -c`` exports to its children: a hook, an alias, a harness running plangate
    under ``git -c``), the last entry of a key winning. Both inherited lists go, in that
    order, into one ``GIT_CONFIG_PARAMETERS`` with the pins after them, and the count is 0: no
    inherited entry comes after a pin (round 86: ``core.hooksPath``, ``core.fsmonitor``,
    ``core.useReplaceRefs`` and ``i18n.logOutputEncoding`` from ``git -c`` won over them)."""
    entries = [*inherited_config(env), *pins]
    return {
        "GIT_CONFIG_COUNT": "0",
        "GIT_CONFIG_PARAMETERS": " ".join(_sq_pair(key, value) for key, value in entries),
    }


def inherited_config(env: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """The command-scope entries ``env`` gives git, in git's reading order (``config.c``,
    ``git_config_from_parameters``): ``GIT_CONFIG_COUNT``'s, then ``GIT_CONFIG_PARAMETERS``'
    (None: a key without a value, "true"). One git would refuse is ``E_GIT`` naming the
    variable: every git call would fail on it."""
    entries: list[tuple[str, str | None]] = []
    raw = env.get("GIT_CONFIG_COUNT")
    if raw is not None:
        count = _strtoul(raw)
        if count is None:
            raise _bad_config_env("GIT_CONFIG_COUNT", f"is not a count git reads: {raw!r}")
        for n in range(count):
            key, value = env.get(f"GIT_CONFIG_KEY_{n}"), env.get(f"GIT_CONFIG_VALUE_{n}")
            if key is None or value is None:
                missing = f"GIT_CONFIG_KEY_{n}" if key is None else f"GIT_CONFIG_VALUE_{n}"
                raise _bad_config_env("GIT_CONFIG_COUNT", f"is {raw!r} but {missing} is not set")
            entries.append((key, value))
    text = env.get("GIT_CONFIG_PARAMETERS")
    if text:
        entries += _parse_parameters(text)
    return entries


#: White space as git's ``isspace`` has it (between ``GIT_CONFIG_PARAMETERS`` entries).
_BLANK = " \t\n\r"


def _strtoul(raw: str) -> int | None:
    """``GIT_CONFIG_COUNT`` as git's ``strtoul`` reads it (leading blanks, a sign; empty is 0);
    None where git refuses it (anything after the digits, a negative or huge count)."""
    if raw == "":
        return 0
    match = re.fullmatch(r"[ \t\n\v\f\r]*([+-]?)([0-9]+)", raw)
    if match is None:
        return None
    count = int(match.group(2))
    if (match.group(1) == "-" and count) or count > 2**31 - 1:
        return None
    return count


def _parse_parameters(text: str) -> list[tuple[str, str | None]]:
    """``GIT_CONFIG_PARAMETERS`` as git parses it (``config.c``, ``parse_config_env_list``):
    single-quoted words (``'\\''`` and ``'\\!'`` inside), each entry ``'key'='value'``,
    ``'key'=`` (no value) or the older ``'key=value'``, separated by white space."""
    entries: list[tuple[str, str | None]] = []
    pos = 0
    while pos < len(text):
        key, pos = _sq_word(text, pos)
        if pos < len(text) and text[pos] == "=":
            pos += 1
            value: str | None = None
            if pos < len(text) and text[pos] == "'":
                value, pos = _sq_word(text, pos)
            if pos < len(text) and text[pos] not in _BLANK:
                raise _bad_parameters(text)
            entries.append((key, value))
        elif pos == len(text) or text[pos] in _BLANK:
            name, equals, value = key.partition("=")  # the older 'key=value'
            if not name.strip():
                raise _bad_parameters(text)
            entries.append((name.strip(), value if equals else None))
        else:
            raise _bad_parameters(text)
        while pos < len(text) and text[pos] in _BLANK:
            pos += 1
    return entries


def _sq_word(text: str, pos: int) -> tuple[str, int]:
    """One single-quoted word at ``pos`` (git's ``sq_dequote_step``): its text and the
    position after it."""
    if pos >= len(text) or text[pos] != "'":
        raise _bad_parameters(text)
    out: list[str] = []
    pos += 1
    while True:
        end = text.find("'", pos)
        if end < 0:
            raise _bad_parameters(text)
        out.append(text[pos:end])
        pos = end + 1
        escaped = text[pos : pos + 1] == "\\" and text[pos + 2 : pos + 3] == "'"
        if escaped and text[pos + 1 : pos + 2] in ("'", "!"):  # '\'' or '\!'
            out.append(text[pos + 1])
            pos += 3
            continue
        return "".join(out), pos


def _sq_pair(key: str, value: str | None) -> str:
    """An entry as ``git -c`` writes it (``'key'='value'``; ``'key'=``: no value)."""
    return f"{_sq(key)}={'' if value is None else _sq(value)}"


def _sq(word: str) -> str:
    """``word`` single-quoted as git's ``sq_quote_buf`` does (``'`` and ``!`` escaped)."""
    return "'" + word.replace("'", "'\\''").replace("!", "'\\!'") + "'"


def _bad_parameters(text: str) -> GitError:
    shown = text if len(text) <= 200 else text[:200] + "..."
    return _bad_config_env("GIT_CONFIG_PARAMETERS", f"is not as git writes it: {shown!r}")


def _bad_config_env(name: str, what: str) -> GitError:
    return GitError(
        f"the git settings inherited from the environment cannot be read: {name} {what}",
        remedy=f"unset {name} (and GIT_CONFIG_KEY_<n>/GIT_CONFIG_VALUE_<n>) in the "
        "environment that runs plangate, or set it as git -c does",
    )


def _default_ssh() -> str:
    """git's own choice without ``core.sshCommand``: ``$GIT_SSH`` (one program), else ssh."""
    program = os.environ.get("GIT_SSH")
    return shlex.quote(program) if program else "ssh"


def guarded_env(cwd: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a one-off git call in ``cwd`` that fetches nothing; over the
    repository's own object store (no ``GIT_OBJECT_DIRECTORY`` in ``extra``) with the pins
    of a store nobody verified."""
    unverified = "GIT_OBJECT_DIRECTORY" not in (extra or {})
    return GitGuard.read(cwd, offline=True, unverified=unverified).env(extra)


def cannot_run(exc: OSError, cwd: Path | str) -> GitError:
    """Why git could not be started: the folder it was to run in is not one (a path too long,
    missing, not a folder), or git itself is missing."""
    if not os.path.isdir(cwd):
        return GitError(
            f"cannot run git in {os.fsdecode(cwd)}: not a folder that exists",
            remedy="name an existing folder, each part of its path at most 255 bytes",
        )
    return GitError(f"cannot run git: {exc.strerror}", remedy="install git")
