"""``plangate init DIR``: a new plans repository, ready for a first plan.

Creates the git repository, ``plans/`` with one example plan (status ``draft``), and a
``plangate.yml`` that names the current git user as approver and offers an ``echo`` tool. The
config decides who may approve, so it is kept out of the repository's history: it is listed in
``.git/info/exclude`` (in production, keep it outside the working tree, e.g. /etc/plangate).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from controller.display import visible
from controller.errors import GitError, UsageError

CONFIG_TEMPLATE = """\
# plangate controller config (see docs/configuration.md). Not committed: it decides who may
# approve, so plan authors must not be able to change it through the repository.
plans_dir: plans
identity: {{name: plangate, email: plangate@localhost}}
approval:
  approvers: ["{email}"]
  allow_self_approval: false
tools:
  echo: {{kind: echo, description: "Returns its params"}}
"""


def init(directory: str) -> int:
    root = Path(directory)
    if (root / "plangate.yml").exists() or (root / "plans").exists():
        raise UsageError(f"{root} already has plangate.yml or plans/", remedy="choose a new folder")
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        _git(root, "init", "-q", "-b", "main")
    email = _author_email(root)
    if not email:
        raise UsageError(
            "git has no user.email", remedy="run `git config --global user.email you@example.com`"
        )
    (root / "plangate.yml").write_text(CONFIG_TEMPLATE.format(email=email), encoding="utf-8")
    _exclude(root, "/plangate.yml")
    example = root / "plans" / "hello" / "PLAN.yml"
    example.parent.mkdir(parents=True)
    template = Path(__file__).resolve().parent.parent / "templates" / "hello-PLAN.yml"
    example.write_text(template.read_text(encoding="utf-8"), encoding="utf-8")
    _git(root, "add", "plans")
    _git(root, "commit", "-q", "-m", "plangate init: example plan")
    shown, config = visible(str(root)), visible(str(root / "plangate.yml"))
    print(f"Initialized a plans repository in {shown}")
    print(f"  approver: {visible(email)} (edit {config} to change)")
    print(
        f"  next: edit {visible(str(example))}, set status: pending_approval, commit,"
        " and run `plangate run`"
    )
    return 0


def _author_email(root: Path) -> str:
    """The email git would author commits with here (config or GIT_AUTHOR_EMAIL)."""
    ident = _git(root, "var", "GIT_AUTHOR_IDENT", check=False)
    return ident.partition("<")[2].partition(">")[0].strip()


def _exclude(root: Path, pattern: str) -> None:
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as handle:
        handle.write(f"{pattern}\n")


def _git(root: Path, *args: str, check: bool = True) -> str:
    try:
        result = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise GitError("git is not installed", remedy="install git") from None
    if result.returncode != 0 and check:
        raise GitError(f"git {args[0]} failed: {result.stderr.strip()}")
    return result.stdout
