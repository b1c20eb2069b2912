"""Local mode's own object store: history read only from objects named by their content.

In local mode the agent shares the working tree, and so ``.git/objects``. git trusts what it
finds there: a commit-graph file (also a ``--split`` chain, or an alternate's) gives a commit
another root tree or other parents without the commit object being read; a one-object pack
that shadows a real object, or a rewritten loose object, gives an id other bytes. git reads
none of them against their names, and ``verify-commit`` still accepts the approver's
signature over the untouched commit object: her signed approval of one plan approved
another, her signed rejection vanished (round 53).

So the controller reads no object from the shared store. Its repository handle runs every git
child with ``GIT_OBJECT_DIRECTORY`` set to the store of a bare repository in its state
directory (``objects.git``), which nothing fills but ``git fetch`` from the shared repository:
``upload-pack`` reads the shared store, ``index-pack`` names every object it receives by the
hash of its bytes, and fetch's connectivity check refuses a tip whose objects did not all
arrive. A forged object reaches the store under its true name, where nothing refers to it; a
forgery upload-pack cannot get past (a rewritten object the tip needs) fails the fetch,
``E_GIT``, loudly, and nothing runs. A commit-graph or alternate of the shared store is never
read: the store's ``info/`` is the controller's.

What the controller writes (blobs, trees, its commits) goes to both stores, the same bytes
under the same names: its commits stay readable by everyone's git in the shared checkout.

The fetch runs only when the branch points at a commit the store does not hold: the
controller's own commits are there already, a human's commit costs one fetch (about 10 ms:
``bench_daemon``'s approval-to-first-action includes it). ``upload-pack`` runs in the shared
repository, with its config, but from a command line that pins what it could be made to run
or read: no transport (a "partial clone" would lazily fetch through a program the agent
names), no commit-graph or replace refs (they would only make it send less and the fetch
fail), no hooks.

A fetch that fails leaves what it received in the store, so "the store holds the commit" is
never the test: a commit is known whole when the store's branch names it (fetch moves the
branch only after its connectivity check) or this process made it on a whole parent.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from controller.errors import GitError

#: The store's folder in the state directory.
STORE_NAME = "objects.git"

#: What ``upload-pack`` runs with in the shared repository (its ``-c`` is the command scope:
#: nothing in the repository's config overrides it; git clears ``GIT_CONFIG_*`` and the
#: object directory variables for a local transport's server side, so they are set here).
_UPLOAD_PACK_PINS = (
    ("protocol.allow", "never"),
    *((f"protocol.{name}.allow", "never") for name in ("file", "git", "ssh", "http", "https")),
    *((f"protocol.{name}.allow", "never") for name in ("ext", "fd", "testgit")),
    ("core.commitGraph", "false"),
    ("core.useReplaceRefs", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.alternateRefsCommand", ""),
    ("advice.graftFileDeprecated", "false"),
    ("uploadpack.allowAnySHA1InWant", "false"),
)


def upload_pack_command() -> str:
    """The ``--upload-pack`` program (git runs it through the shell, then the repository)."""
    pins = " ".join(f"-c {shlex.quote(f'{key}={value}')}" for key, value in _UPLOAD_PACK_PINS)
    return f"git {pins} upload-pack"


def ensure_store(path: Path) -> Path:
    """The bare repository at ``path``, made (empty) when missing; returns its objects dir.

    Made in a temporary folder beside it and renamed: a killed start leaves no half store."""
    if (path / "objects").is_dir() and (path / "HEAD").is_file():
        return path / "objects"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".objects-", dir=path.parent))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    result = subprocess.run(
        ["git", "init", "-q", "--bare", str(tmp)], env=env, capture_output=True, check=False
    )
    if result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise GitError(
            f"cannot make the controller's object store {path}: {message}",
            path=str(path),
            remedy="make the state directory writable by the controller",
        )
    try:
        tmp.rename(path)
    except OSError:  # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
        if not (path / "objects").is_dir():
            raise
    return path / "objects"
