"""``plangate init DIR``: a plans repository and a controller config, ready for a first plan.

Creates ``DIR/plans-repo`` (a git repository with ``plans/hello/PLAN.yml``, submitted by an
example agent identity, so that you, the approver, did not write it and may approve it) and
``DIR/plangate.yml`` beside it, with ``DIR/state`` as the controller's state directory. The
config decides who may approve, so it stays outside the repository plan authors write to;
the controller refuses a config or state directory inside the working tree it watches.

It prints a walkthrough that works exactly as printed (a test runs it line by line).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from controller.display import visible
from controller.errors import GitError, UsageError
from controller.git.guard import GitGuard, argv

REPO_NAME = "plans-repo"
#: The example plan's author: not you, so your approval is not a self-approval.
EXAMPLE_AGENT = ("Example Agent", "example-agent@plangate.invalid")

CONFIG_TEMPLATE = """\
# plangate controller config (see docs/configuration.md). Kept outside the plans repository:
# it decides who may approve, so plan authors must not be able to change it.
repo: {repo}
state_dir: state
plans_dir: plans
identity: {{name: controller, email: plangate@localhost}}
approval:
  approvers: ["{email}"]
  allow_self_approval: false
tools:
  echo: {{kind: echo, description: "Returns its params"}}
# For `plangate mcp` (docs/agents.md): the identity an agent's submissions are committed as.
# agent:
#   identity: {{name: "Example Agent", email: example-agent@plangate.invalid}}
"""


def init(directory: str) -> int:
    root = Path(directory)
    repo = root / REPO_NAME
    if root.exists() and not root.is_dir():
        raise UsageError(f"{visible(str(root))} is not a folder", remedy="choose a new folder")
    if (root / "plangate.yml").exists() or repo.exists():
        raise UsageError(
            f"{root} already has plangate.yml or {REPO_NAME}/", remedy="choose a new folder"
        )
    enclosing = _enclosing_repository(root)
    if enclosing is not None:
        # the config decides who may approve: inside another repository's working tree,
        # whoever writes that tree (an agent, a pull request) could change it (round 107)
        raise UsageError(
            f"{visible(str(root))} is inside the git {_kind(enclosing)} {visible(str(enclosing))}: "
            "plangate.yml decides who may approve, and whoever writes that tree could change it",
            remedy="choose a folder outside every git repository (plangate init makes the "
            "plans repository inside it, the config beside it)",
        )
    try:
        repo.mkdir(parents=True)
    except OSError as exc:
        raise UsageError(
            f"cannot make {visible(str(repo))}: {exc.strerror}", remedy="choose a new folder"
        ) from None
    _git(repo, "init", "-q", "-b", "main")
    email = _author_email(repo)
    if not email:
        raise UsageError(
            "git has no user.email", remedy="run `git config --global user.email you@example.com`"
        )
    (root / "plangate.yml").write_text(
        CONFIG_TEMPLATE.format(repo=REPO_NAME, email=email), encoding="utf-8"
    )
    example = repo / "plans" / "hello" / "PLAN.yml"
    example.parent.mkdir(parents=True)
    template = Path(__file__).resolve().parent.parent / "templates" / "hello-PLAN.yml"
    example.write_text(template.read_text(encoding="utf-8"), encoding="utf-8")
    _git(repo, "add", "plans")
    name, agent = EXAMPLE_AGENT
    _git(
        repo,
        "commit",
        "-q",
        "-m",
        "plans/hello: an example plan, submitted by an agent",
        env={
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": agent,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": agent,
        },
    )
    _print_walkthrough(root, email)
    return 0


def _enclosing_repository(root: Path) -> Path | None:
    """The working tree of a git repository ``root`` would be inside (a ``.git`` folder or
    file in ``root`` or a folder above it, as git finds one), or the git directory itself
    (a bare repository: round 111, ``init`` wrote plangate.yml and a nested plans
    repository into one), or None."""
    place = root.resolve()
    for folder in (place, *place.parents):
        if (folder / ".git").exists() or _is_git_directory(folder):
            return folder
    return None


def _kind(folder: Path) -> str:
    return "working tree" if (folder / ".git").exists() else "directory (a bare repository)"


def _is_git_directory(folder: Path) -> bool:
    """Does ``folder`` look like a git directory, by git's own test (``HEAD``, ``objects/``
    and ``refs/``)?"""
    return (
        (folder / "HEAD").is_file() and (folder / "objects").is_dir() and (folder / "refs").is_dir()
    )


def _print_walkthrough(root: Path, email: str) -> None:
    shown = visible(str(root))
    print(f"Initialized plangate in {shown}")
    print(f"  {shown}/{REPO_NAME}   the plans repository (git); plans/hello is an example plan")
    print(f"  {shown}/plangate.yml  the controller's config; approver: {visible(email)}")
    print(f"  {shown}/state         the controller's state directory")
    print("Back up state/ with its commit.key: a new state directory on this history refuses")
    print("to start until restored, or told `plangate run --take-over` (docs/operations.md).")
    print("Try it (each line as printed):")
    for line in walkthrough(root):
        print(f"  $ {visible(line)}")


def walkthrough(root: Path) -> list[str]:
    """The commands that take the example plan from submitted to completed."""
    config = "--config ../plangate.yml"
    return [
        f"cd {shlex.quote(str(root / REPO_NAME))}",
        f"plangate run --once {config}",  # freezes plans/hello
        "plangate show plans/hello",
        f"plangate approve plans/hello {config}",
        f"plangate run --once {config}",  # verifies the approval, runs the plan
        f"plangate status {config}",
        "git log --format='%h %an: %s'",
    ]


def _author_email(root: Path) -> str:
    """The email git would author commits with here (config or GIT_AUTHOR_EMAIL)."""
    ident = _git(root, "var", "GIT_AUTHOR_IDENT", check=False)
    return ident.partition("<")[2].partition(">")[0].strip()


def _git(root: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    try:
        result = subprocess.run(
            argv(args),
            cwd=root,
            capture_output=True,
            text=True,
            check=False,
            env=GitGuard.read(root, trust_repo_config=True).env(env),
        )
    except FileNotFoundError:
        raise GitError("git is not installed", remedy="install git") from None
    if result.returncode != 0 and check:
        raise GitError(f"git {args[0]} failed: {result.stderr.strip()}")
    return result.stdout
