"""Round 94, agent surfaces (atk94b): past round 93's display overrides (``guard.DISPLAY``
on ``log``/``show``/``diff``): the git settings an agent plants in local mode's
``.git/config`` that act on git commands OTHER than the display ones (``core.commentChar``,
which git's trailer parser uses; ``commit.gpgSign`` with ``gpg.program``; ``gpg.format=ssh``
programs; ``index.*``/``feature.manyFiles``/``core.splitIndex``; ``core.ignoreCase``;
``gc.auto=1`` with ``pruneExpire=now``; ``grep.*``; ``alias.*`` over builtins;
``core.repositoryformatversion=1`` with an unknown ``extensions.*``, ``extensions.objectFormat
=sha256``, ``extensions.worktreeConfig`` with a ``config.worktree`` naming an fsmonitor;
``core.bare``; ``transfer``/``fetch``/``fsck`` checks; ``pack.*`` limits; ``protocol.*``/
``uploadpack.*``; ``-diff``/``binary`` attributes from ``core.attributesFile`` and
``.git/info/attributes``; ``includeIf`` of a file setting ``commentChar`` and hooks), refs it plants
(a branch named as the approval's full hash and as its 12-digit abbreviation, both at the
agent's commit; ``refs/tags/main``, ``refs/main``, ``refs/heads/HEAD`` at the agent's
commit; ``refs/replace/`` of the approved plan's BLOB; a garbage line in ``packed-refs``;
a ``packed-refs`` claiming ``sorted`` and not; ``refs/heads/main`` made a symbolic ref),
and commits with odd headers (``mergetag`` on a non-merge, an unknown extra header, a bogus
``gpgsig``, a 3 MB message ending in forged trailers).

Lab (one, local mode, built once). The agent commits plan ``p`` and the four odd-header
plans (``hmt``, hex``, ``hsig``, ``hbig``: each its own commit written with
``git hash-object -t commit``); a pass freezes them; Alice approves each; a pass runs them.
A daemon serves the page. With nothing planted every reader is read (the baseline: the
page's ``/commit/`` of the agent's and of the approval's commit, ``/api/``,
``/api/plan/plans/p``, MCP ``log``, ``status --json``, ``show --json``, ``audit --json``);
then each plant of :data:`PLANTS` alone is made (the config restored, the refs undone
after), and every reader read again. Then the non-fatal plants together: the agent commits
plan ``pd``, a pass freezes it, Alice approves it with ``plangate approve`` under them, a
pass runs it.
Ids: ``<plant>:<reader>``, ``base:*``, ``odd:<plan>:<ran|row|page>``, ``run:*``.

Seen (round 94): 15 ids broke, 3 classes.
``page-stat-binary`` (``{bigfile,attrfile,infoattr}:{commit,appr}``): with ``[core]
bigFileThreshold = 1`` in ``.git/config`` (or ``core.attributesFile`` naming a file with
``*.yml -diff``, or ``.git/info/attributes`` with ``* -diff binary``: the same lines) the
page's ``/commit/<sha>`` of the agent's commit
says `` plans/p/PLAN.yml | Bin 0 -&gt; 200 bytes`` / ``1 file changed, 0 insertions(+), 0
deletions(-)`` (baseline `` plans/p/PLAN.yml | 12 ++++++++++++``), and of Alice's approval
``Bin 450 -&gt; 442 bytes`` (baseline ``2 +-``): the reviewer's view of what changed follows
a setting the agent planted, past round 93's display overrides.
``page-repofmt-absent`` (``unknownext:{commit,appr,plan}``, ``sha256:{commit,appr,plan}``):
with ``repositoryformatversion = 1`` and ``extensions.noSuchExt = yes`` (or
``extensions.objectFormat = sha256``) git refuses the repository; the page's ``/commit/``
of both commits answers 404 "Not found · plangate" and ``/api/plan/plans/p`` answers the
completed row with ``"problems": [{"code": "E_UNSAFE_PATH", "message": "no readable PLAN
file"}]``, ``"log": null``: no remedy, the wrong cause, the record read as absent.
``cli-repofmt-misread`` (``unknownext:{status,log,audit}``): the same unknown extension:
``status --json`` and MCP ``log`` answer ``E_GIT: <repo>: HEAD is detached; plangate watches
a branch``, remedy ``check out the watched branch (git switch main)`` (HEAD is on main);
``audit --json`` answers ``E_GIT: the repository has no commits to audit``. (For
``sha256`` the same readers say ``E_GIT: <repo> uses sha256 object ids; plangate writes
SHA-1 objects only``, remedy "use a SHA-1 repository": right.)
Held: no program of the agent's ran from any git child of plangate (hooks in
``.git/hooks`` including ``reference-transaction`` and ``post-index-change``, ``hooksPath``
and ``fsmonitor`` through ``includeIf`` and ``config.worktree``, ``gpg.program``,
``gpg.ssh.program``, ``alias.*`` over builtins, ``sshCommand``/``gitProxy``/``askPass``,
``uploadpack.packObjectsHook``; the lab's own git commands fired the hooks, plangate's
never); every other plant left every reader equal to its baseline (``commentChar`` ``P``
and ``auto``, index v4/split/skipHash, ``ignoreCase``, ``gc.auto=1`` with prune now,
``grep.*``, fsck checks, ``pack.*``, ``protocol.*``, ``core.bare``, a branch named as the
approval's full and short hash, ``refs/tags/main``, ``refs/main``, ``refs/heads/HEAD``,
a ``refs/replace/`` of the approved blob, garbage and falsely sorted ``packed-refs``,
``config.worktree``); ``refs/heads/main`` made a symbolic ref: ``status``/MCP ``log``
``E_GIT: the working tree is on branch real, but plangate watches main`` with a remedy.
Odd headers: ``mergetag``, an extra header, a bogus ``gpgsig`` and a 900 KB message
ending in forged trailers each froze, ran once on Alice's approval, showed on the page;
a 3 MB message was refused as documented ("E_SELF_APPROVAL: a commit that wrote this
content has a message over 1 MiB ..."). Under ``commit.gpgSign`` with the agent's
``gpg.program`` the controller's freeze committed (rc 0) and Alice's ``plangate approve``
refused ``E_GIT: git commit-tree -S: error: gpg failed to sign the data`` without running
the program (noted: the agent's setting blocks her approve in local mode). With ten
plants at once a plan froze, was approved with ``plangate approve``, ran once; both
audits (the lab's and a fresh ``--no-local`` clone's) ``ok``, no finding.

Fixed (2026-12-02, r94surf): ``page-stat-binary``: the page reads a commit through an
empty repository directory of its own over the same objects (``GIT_DIR`` made by hand,
``GIT_OBJECT_DIRECTORY`` the store or the repository's objects: ``ui/server.py``
``_show_commit``, ``_bare_dir``), so no ``.git/config``, ``info/attributes`` or working-tree
``.gitattributes`` decides how its stat reads (git's ``--text`` does not reach ``--stat``:
checked on git 2.39). ``page-repofmt-absent``, ``cli-repofmt-misread``: one check where
every reader opens a repository (``guard.accepted``, in ``GitGuard.read``, which
``RepoBase`` and ``guarded_env`` use) reads git's own refusal in what its ``git config
--list`` says ("ignoring git dir '...': <why>", no extra process; the object format from
the local scope) and answers it as ``E_GIT: git refuses the repository: unknown repository
extension found: nosuchext`` with a remedy (a SHA-256 repository: ``... uses sha256 object
ids``, formerly ``RepoBase``'s own check); the page's ``/commit/`` shows that error (500)
and ``/api/plan/`` answers it as the plan's problem.

Should: round 93's ``test_round93_surface_display.py``: "a reader's answer does not depend
on how the agent asked git to display things" (``page-bigfile-binary``). The brief's
property: "what an agent or reviewer reads
through plangate's surfaces ... is exactly what the controller would run and has
recorded; a failed read is an error with its E_ code, the location and a remedy, never
absent, never a traceback ... no program of the agent's runs; one bad entry never stops
other plans". A reader's answer does not depend on what the agent planted: each equals
its baseline, or, where git itself can no longer read the repository (``FATAL``), is an
error with its ``E_`` code, never a traceback or "no plan".
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import AGENT, ALICE, Lab, cases, page_settled, plan_text
from test_round2_execution_kit import shared
from writerkit import free_port

MARK = (
    "#!/bin/sh\ngp=$(ps -o ppid= -p $PPID | tr -d ' ')\n"
    "echo \"$0 $* <- $(tr '\\0' ' ' < /proc/$PPID/cmdline)"
    " <- $(tr '\\0' ' ' < /proc/$gp/cmdline)\" "
    ">> {root}/fired\nexit 1\n"
)
#: One plant each: (config lines appended to .git/config, ref plant name or "").
PLANTS: dict[str, tuple[str, str]] = {
    "commentchar": ("[core]\n\tcommentChar = P\n", ""),
    "commentauto": ("[core]\n\tcommentChar = auto\n", ""),
    "gpgsign": ("[commit]\n\tgpgSign = true\n[tag]\n\tgpgSign = true\n"
                "[gpg]\n\tprogram = {mark}\n", ""),
    "sshsign": ("[gpg]\n\tformat = ssh\n[gpg \"ssh\"]\n\tprogram = {mark}\n"
                "\tdefaultKeyCommand = {mark}\n[user]\n\tsigningKey = key::x\n"
                "[commit]\n\tgpgSign = true\n", ""),
    "index": ("[index]\n\tversion = 4\n\tskipHash = true\n[feature]\n\tmanyFiles = true\n"
              "[core]\n\tsplitIndex = true\n\tuntrackedCache = true\n", ""),
    "ignorecase": ("[core]\n\tignoreCase = true\n\tprecomposeUnicode = true\n", ""),
    "gc": ("[gc]\n\tauto = 1\n\tautoPackLimit = 1\n\tautoDetach = false\n\tpruneExpire = now\n"
           "\treflogExpire = now\n\treflogExpireUnreachable = now\n[maintenance]\n\tauto = true\n",
           ""),
    "grep": ("[grep]\n\tpatternType = perl\n\tlineNumber = true\n\tcolumn = true\n"
             "\tfullName = true\n", ""),
    "alias": ("[alias]\n\tcat-file = !{mark}\n\trev-list = !{mark}\n\tls-tree = !{mark}\n"
              "\tfor-each-ref = !{mark}\n\trev-parse = !{mark}\n", ""),
    "fsck": ("[transfer]\n\tfsckObjects = true\n[fetch]\n\tfsckObjects = true\n"
             "[receive]\n\tfsckObjects = true\n[fsck]\n\textraHeaderEntry = error\n"
             "\tbadTimezone = error\n", ""),
    "bigfile": ("[core]\n\tbigFileThreshold = 1\n", ""),
    "pack": ("[pack]\n\tthreads = 1\n\twindowMemory = 1\n\tdepth = 4095\n[core]\n"
             "\tcompression = 9\n\tpackedGitWindowSize = 1\n"
             "\tpackedGitLimit = 1\n\tdeltaBaseCacheLimit = 1\n", ""),
    "protocol": ("[protocol]\n\tallow = always\n\tversion = 0\n"
                 "[protocol \"ext\"]\n\tallow = always\n"
                 "[uploadpack]\n\tallowAnySHA1InWant = true\n\tpackObjectsHook = {mark}\n"
                 "[core]\n\tsshCommand = {mark}\n\tgitProxy = {mark}\n\taskPass = {mark}\n", ""),
    "include": ("[includeIf \"gitdir:/\"]\n\tpath = {root}/inc.cfg\n", ""),
    "unknownext": ("[core]\n\trepositoryformatversion = 1\n"
                   "[extensions]\n\tnoSuchExt = yes\n", ""),
    "sha256": ("[core]\n\trepositoryformatversion = 1\n"
               "[extensions]\n\tobjectFormat = sha256\n", ""),
    "wtconfig": ("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true\n",
                 "wtconfig"),
    "bare": ("[core]\n\tbare = true\n", ""),
    "attrfile": ("[core]\n\tattributesFile = {root}/attrs\n", ""),
    "infoattr": ("", "infoattr"),
    "hashfull": ("", "hashfull"),
    "hashshort": ("", "hashshort"),
    "tagmain": ("", "tagmain"),
    "refsmain": ("", "refsmain"),
    "headbranch": ("", "headbranch"),
    "replaceblob": ("", "replaceblob"),
    "packedbad": ("", "packedbad"),
    "packedsort": ("", "packedsort"),
    "symmain": ("", "symmain"),
}  # fmt: skip
#: Plants after which git itself refuses the repository: an E_ error is an answer too.
FATAL = {"unknownext", "sha256", "bare", "packedbad", "packedsort", "symmain"}
#: Plants made together for the run section (none stops git).
TOGETHER = ("commentchar", "bigfile", "index", "gc", "grep", "alias", "fsck", "pack",
            "protocol", "include")  # fmt: skip
READERS = ("commit", "appr", "api", "plan", "log", "status", "show", "audit")
ODD = ("hmt", "hex", "hsig", "hmid", "hbig")
#: What git says, which a FATAL plant's error must name (never "absent", never another cause).
SAYS = {"unknownext": "nosuchext", "sha256": "sha256"}
_VOLATILE = re.compile(r"(^|_)(at|age|ago|time|seconds|published|now|took|ms|elapsed)$")


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if not _VOLATILE.search(str(k))}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _json(text: str) -> Any:
    try:
        return _steady(json.loads(text))
    except ValueError:
        return f"NOT JSON: {text[-1500:]}"


def _pre(code: int, text: str) -> Any:
    start = text.find("<pre")
    if start < 0:
        return {"code": code, "text": text[:1500]}
    return text[start : text.find("</pre>", start)]


def _read(lab: Lab, port: int, shas: dict[str, str]) -> dict[str, Any]:
    c = str(lab.config)
    cli = {
        "status": ("status", "--json", "--config", c),
        "show": ("show", "--json", "--config", c, str(lab.repo / "plans/p/PLAN.yml")),
        "audit": ("audit", "--json", "--config", c),
    }

    def run(args: tuple[str, ...]) -> Any:
        try:
            r = lab.cli(*args, timeout=120)
        except subprocess.TimeoutExpired:
            return {"rc": -9, "out": "TIMEOUT", "err": ""}
        return {"rc": r.returncode, "out": _json(r.stdout), "err": r.stderr[-1500:]}

    def mcp() -> Any:
        replies, err = mcpkit.session(lab, [("log", {"path": "plans/p"})])
        res = (replies[0] or {}).get("result", {}) if replies else {}
        text = "".join(c.get("text", "") for c in res.get("content", []))
        if not replies or replies[0] is None:
            text = "NO REPLY " + err[-1500:]
        return {"rc": 1 if not replies or res.get("isError") else 0, "out": _json(text)}

    with ThreadPoolExecutor(4) as pool:
        futures = {k: pool.submit(run, args) for k, args in cli.items()}
        futures["log"] = pool.submit(mcp)
        got: dict[str, Any] = {
            "commit": _pre(*_get(port, f"/commit/{shas['agent']}")),
            "appr": _pre(*_get(port, f"/commit/{shas['approval']}")),
            "api": _json(_get(port, "/api/")[1]),
            "plan": _json(_get(port, "/api/plan/plans/p")[1]),
        }
        got.update({k: f.result() for k, f in futures.items()})
    return got


def _odd_commit(lab: Lab, slug: str, headers: bytes, message: bytes) -> str:
    """Commit plan ``slug`` as the agent, the commit object written by hand."""
    lab.write(slug, plan_text(slug))
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    now = int(time.time())
    body = (
        (
            f"tree {tree}\nparent {lab.head()}\n"
            f"author Agent <agent@example.com> {now} +0000\n"
            f"committer Agent <agent@example.com> {now} +0000\n"
        ).encode()
        + headers
        + b"\n"
        + message
    )
    sha = subprocess.run(
        ["git", "hash-object", "--literally", "-w", "-t", "commit", "--stdin"], cwd=lab.repo,
        input=body, capture_output=True, env=lab.env(), check=True,
    ).stdout.decode().strip()  # fmt: skip
    lab.git("update-ref", "refs/heads/main", sha)
    lab.git("reset", "-q", "--hard", "HEAD")
    return sha


def _plant_ref(lab: Lab, kind: str, shas: dict[str, str], root: Path) -> None:
    g = lab.git
    if kind == "hashfull":
        g("update-ref", f"refs/heads/{shas['approval']}", shas["agent"])
    elif kind == "hashshort":
        g("update-ref", f"refs/heads/{shas['approval'][:12]}", shas["agent"])
        g("update-ref", f"refs/heads/{shas['approval'][:7]}", shas["agent"])
    elif kind == "tagmain":
        g("update-ref", "refs/tags/main", shas["agent"])
    elif kind == "refsmain":
        g("update-ref", "refs/main", shas["agent"])
    elif kind == "headbranch":
        g("update-ref", "refs/heads/HEAD", shas["agent"])
        g("update-ref", "refs/remotes/main", shas["agent"])
    elif kind == "replaceblob":
        old = g("rev-parse", f"{shas['approval']}:plans/p/PLAN.yml").strip()
        evil = plan_text("p", status="approved", params='note: "replaced"\n')
        new = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=lab.repo,
                             input=evil.encode(), capture_output=True, env=lab.env(),
                             check=True).stdout.decode().strip()  # fmt: skip
        g("update-ref", f"refs/replace/{old}", new)
    elif kind in ("packedbad", "packedsort"):
        g("pack-refs", "--all")
        packed = lab.repo / ".git" / "packed-refs"
        lines = packed.read_text().splitlines()
        if kind == "packedbad":
            lines.insert(1, "this is not a ref line")
        else:  # claims sorted, is reversed
            head, rest = lines[0], lines[1:]
            lines = [head if "sorted" in head else head + " sorted", *reversed(rest)]
        packed.write_text("\n".join(lines) + "\n")
    elif kind == "symmain":
        g("update-ref", "refs/heads/real", shas["main"])
        g("symbolic-ref", "refs/heads/main", "refs/heads/real")
    elif kind == "infoattr":
        (lab.repo / ".git" / "info").mkdir(exist_ok=True)
        (lab.repo / ".git" / "info" / "attributes").write_text("* -diff binary\n")
    elif kind == "wtconfig":
        (lab.repo / ".git" / "config.worktree").write_text(
            f"[core]\n\tfsmonitor = {root / 'mark.sh'}\n\thooksPath = {root / 'hooks'}\n"
        )


def _undo_refs(lab: Lab, shas: dict[str, str]) -> None:
    """Back to the lab's refs: main at its tip, nothing else but what the base had."""
    git = lab.repo / ".git"
    (git / "config.worktree").unlink(missing_ok=True)
    (git / "info" / "attributes").unlink(missing_ok=True)
    (git / "packed-refs").unlink(missing_ok=True)
    main = git / "refs" / "heads" / "main"
    main.unlink(missing_ok=True)
    main.write_text(shas["main"] + "\n")
    keep = set(shas["refs"])
    for path in sorted((git / "refs").rglob("*"), reverse=True):
        rel = path.relative_to(git).as_posix()
        if path.is_file() and rel not in keep:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()) and rel.count("/") > 1:
            path.rmdir()


def _fired(root: Path) -> str:
    """The marker's lines from programs that plangate's own git children ran (the lab's own
    git commands fire the hooks too: those are set aside)."""
    if not (root / "fired").exists():
        return ""
    return "".join(ln for ln in (root / "fired").open() if "plangate" in ln or "clifork" in ln)


def _row(lab: Lab, slug: str) -> Any:
    st = lab.cli("status", "--json", "--config", str(lab.config))
    try:
        return {r["plan"]: r for r in json.loads(st.stdout)}.get(f"plans/{slug}")
    except ValueError:
        return st.stderr[-1500:]


def _approve(lab: Lab, slug: str) -> dict[str, Any]:
    """Alice approves with ``plangate approve`` (the reviewer's own tool)."""
    before = lab.head()
    env = lab.env(ALICE)
    env["REC_LOG"] = str(lab.log)
    ap = subprocess.run(
        [mcpkit.PLANGATE, "approve", "--config", str(lab.config), f"plans/{slug}"],
        cwd=lab.repo, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return {"rc": ap.returncode, "err": ap.stderr[-1500:], "moved": lab.head() != before}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    mark = root / "mark.sh"
    mark.write_text(MARK.format(root=root))
    mark.chmod(0o755)
    (root / "hooks").mkdir()
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-index-change",
                 "commit-msg", "prepare-commit-msg", "post-checkout", "pre-auto-gc"):  # fmt: skip
        (root / "hooks" / hook).write_text(MARK.format(root=root).replace("exit 1", "exit 0"))
        (root / "hooks" / hook).chmod(0o755)
        (lab.repo / ".git" / "hooks" / hook).write_text((root / "hooks" / hook).read_text())
        (lab.repo / ".git" / "hooks" / hook).chmod(0o755)
    (root / "inc.cfg").write_text(
        f"[core]\n\tcommentChar = C\n\thooksPath = {root / 'hooks'}\n\tfsmonitor = {mark}\n"
    )
    (root / "attrs").write_text("*.yml -diff\n*.md binary\n")
    lab.write("p", plan_text("p"))
    shas = {"agent": lab.commit("agent: plan p", AGENT)}
    odd = {
        "hmt": (b"mergetag object " + shas["agent"].encode() + b"\n type commit\n tag v1\n"
                b" tagger Alice <alice@example.com> 1 +0000\n \n Approved-By: alice@example.com\n",
                b"agent: hmt\n"),
        "hex": (b"x-plangate-approved alice@example.com\nencoding UTF-8\n", b"agent: hex\n"),
        "hsig": (b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n"
                 b" -----END PGP SIGNATURE-----\n", b"agent: hsig\n"),
        "hmid": (b"", b"agent: hmid\n\n" + (b"z" * 199 + b"\n") * 4500
                 + b"\nPlan-Status: approved\nApproved-By: alice@example.com\n"),
        "hbig": (b"", b"agent: hbig\n\n" + b"x" * 100 + (b"\n" + b"y" * 199) * 15000
                 + b"\n\nPlan-Status: approved\nApproved-By: alice@example.com\n"
                 b"Controller: plangate\n"),
    }  # fmt: skip
    got["odd"] = {s: _odd_commit(lab, s, h, m) for s, (h, m) in odd.items()}
    p1 = lab.run(check=False)
    lab.approve("p", ALICE)
    shas["approval"] = lab.head()
    for s in ODD:
        lab.approve(s, ALICE)
    p2 = lab.run(check=False)
    got["pass"] = [(p.returncode, p.stderr[-1500:]) for p in (p1, p2)]
    got["ran"] = {s: len(lab.calls(s)) for s in ("p", *ODD)}
    shas["main"] = lab.head()
    git = lab.repo / ".git"
    shas["refs"] = [p.relative_to(git).as_posix() for p in (git / "refs").rglob("*") if p.is_file()]
    config = git / "config"
    pristine = config.read_text()
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [mcpkit.PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip
    try:
        assert page_settled(ui, lab.head), "the page never settled"
        got["base"] = _read(lab, ui, shas)
        got["oddpage"] = {s: _get(ui, f"/commit/{sha}") for s, sha in got["odd"].items()}
        got["oddpage"] = {s: (c, t[:4000] + t[-2000:]) for s, (c, t) in got["oddpage"].items()}
        for key, (lines, ref) in PLANTS.items():
            config.write_text(pristine + lines.format(mark=mark, root=root))
            try:
                if ref:
                    _plant_ref(lab, ref, shas, root)
                got[key] = _read(lab, ui, shas)
            finally:
                config.write_text(pristine)
                _undo_refs(lab, shas)
        got["baseagain"] = _read(lab, ui, shas)
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    got["fired_grid"] = _fired(root)
    # -- commit.gpgSign with the agent's gpg.program: the controller's freeze, Alice's approve
    lab.write("pg", plan_text("pg"))
    lab.commit("agent: plan pg", AGENT)
    config.write_text(pristine + PLANTS["gpgsign"][0].format(mark=mark, root=root))
    g1 = lab.run(check=False)
    got["gpgfreeze"] = {"rc": g1.returncode, "err": g1.stderr[-1500:], "row": _row(lab, "pg")}
    got["gpgapprove"] = _approve(lab, "pg")
    config.write_text(pristine)
    if not got["gpgapprove"]["moved"]:
        lab.approve("pg", ALICE)
    lab.run(check=False)
    got["gpgran"] = len(lab.calls("pg"))
    # -- the run section: the non-fatal plants together
    lab.write("pd", plan_text("pd"))
    lab.commit("agent: plan pd", AGENT)
    config.write_text(
        pristine + "".join(PLANTS[k][0] for k in TOGETHER).format(mark=mark, root=root)
    )
    for kind in ("hashfull", "tagmain", "refsmain"):
        _plant_ref(lab, kind, shas, root)
    r3 = lab.run(check=False)
    c = str(lab.config)
    got["approve"] = _approve(lab, "pd")
    r4 = lab.run(check=False)
    r5 = lab.run(check=False)
    got["runpass"] = [(p.returncode, p.stderr[-1500:]) for p in (r3, r4, r5)]
    got["runran"] = len(lab.calls("pd"))
    st = lab.cli("status", "--json", "--config", c)
    got["runstatus"] = {"rc": st.returncode, "out": _json(st.stdout), "err": st.stderr[-1500:]}
    au = lab.cli("audit", "--json", "--config", c)
    got["runaudit"] = {"rc": au.returncode, "out": _json(au.stdout), "err": au.stderr[-1500:]}
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", "--no-local", str(lab.repo), str(clone)],
                   env=lab.env(), check=True, capture_output=True)  # fmt: skip
    ca = subprocess.run([mcpkit.PLANGATE, "audit", "--json"], cwd=clone, env=lab.env(),
                        capture_output=True, text=True, timeout=180, check=False)  # fmt: skip
    got["cloneaudit"] = {"rc": ca.returncode, "out": _json(ca.stdout), "err": ca.stderr[-1500:]}
    got["fired"] = _fired(root)
    got["daemonerr"] = (root / "daemon.err").read_text()[-3000:]
    got["shas"] = shas
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r94-surface-atk94b", _build)


GRID = [f"{k}:{r}" for k in PLANTS for r in READERS]
ODDIDS = [f"odd:{s}:{w}" for s in ODD for w in ("ran", "row", "page")]
RUN = ["run:approve", "run:pass", "run:ran", "run:status", "run:audit", "run:cloneaudit",
       "run:fired", "run:firedgrid", "base:again",
       "gpg:freeze", "gpg:approve", "gpg:ran"]  # fmt: skip
IDS = [f"base:{r}" for r in READERS] + GRID + ODDIDS + RUN
#: Fixed (2026-12-02, r94surf): page-stat-binary, page-repofmt-absent, cli-repofmt-misread.
BROKEN: dict[str, Any] = {}


def _no_trace(value: Any) -> None:
    text = json.dumps(value)
    assert "Traceback" not in text and "NO REPLY" not in text, text[-2000:]


def _base(got: dict[str, Any], reader: str) -> None:
    seen = got["base"][reader]
    _no_trace(seen)
    if reader in ("commit", "appr"):
        assert isinstance(seen, str) and re.search(r"commit [0-9a-f]{40}\n", seen), seen
    elif reader == "plan":
        text = json.dumps(seen)
        assert "E_OWNED_BLOCK_CHANGED" not in text and "alice@example.com" in text, text
        assert seen.get("log"), text
    elif reader == "api":
        assert "E_" not in json.dumps(seen), seen
    else:
        assert seen["rc"] == 0, seen
        if reader == "audit":
            assert seen["out"]["ok"] and not seen["out"].get("findings"), seen
        if reader == "status":
            rows = {r["plan"]: r["status"] for r in seen["out"]}
            assert rows.pop("plans/hbig") == "pending_approval", seen  # over 1 MiB: refused
            assert set(rows.values()) == {"completed"}, seen
        if reader == "log":
            assert "alice@example.com" in json.dumps(seen), seen


def _grid(got: dict[str, Any], key: str, reader: str) -> None:
    seen, base = got[key][reader], got["base"][reader]
    _no_trace(seen)
    if seen == base:
        return
    text = json.dumps(seen)
    assert key in FATAL, (seen, base)
    # git refuses the repository: an error with its code and a remedy, never "absent"
    assert re.search(r"E_[A-Z_]+", text), (seen, base)
    assert "no plan" not in text.lower() and "remedy" in text.lower(), (seen, base)
    for word in ("no commits", "detached", "no readable plan", "not found"):
        assert word not in text.lower(), (word, seen)
    if key in SAYS:
        assert SAYS[key] in text.lower(), (SAYS[key], seen)


def _gpg(got: dict[str, Any], key: str) -> None:
    assert "mark.sh" not in got["fired"], got["fired"]
    if key == "freeze":  # the controller's own commits ignore the agent's signing wish
        seen = got["gpgfreeze"]
        assert seen["rc"] == 0 and (seen["row"] or {}).get("frozen_hash"), seen
    elif key == "approve":  # committed, or refused with a code naming gpg and a remedy
        seen = got["gpgapprove"]
        assert seen["moved"] or (re.search(r"E_[A-Z]+", seen["err"]) and "gpg" in seen["err"]
                                 and "remedy" in seen["err"]), seen  # fmt: skip
    else:
        assert got["gpgran"] == 1, got["gpgran"]


def _run(got: dict[str, Any], key: str) -> None:
    if key == "approve":
        assert got["approve"]["rc"] == 0 and got["approve"]["moved"], got["approve"]
    elif key == "pass":
        assert all(rc == 0 for rc, _ in got["runpass"]), got["runpass"]
    elif key == "ran":
        assert got["runran"] == 1, got["runran"]
    elif key == "status":
        rows = {r["plan"]: r for r in got["runstatus"]["out"]}
        assert rows["plans/pd"]["status"] == "completed", rows["plans/pd"]
        assert rows["plans/pd"]["approver"] == "alice@example.com", rows["plans/pd"]
    elif key in ("audit", "cloneaudit"):
        seen = got["runaudit" if key == "audit" else "cloneaudit"]
        _no_trace(seen)
        assert seen["rc"] == 0 and seen["out"]["ok"], seen
        assert not seen["out"].get("findings"), seen["out"].get("findings")
        runs = sorted(e["plan"] for e in seen["out"]["executions"] if e.get("approval_valid"))
        want = ("p", "pd", "pg", *[s for s in ODD if s != "hbig"])
        assert runs == sorted(f"plans/{s}" for s in want), runs
    elif key == "fired":
        assert not got["fired"], got["fired"]
    elif key == "firedgrid":
        assert not got["fired_grid"], got["fired_grid"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round94_surface(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    part, key = vid.split(":", 1)
    if vid == "base:again":
        assert _steady(got["baseagain"]) == _steady(got["base"]), got["baseagain"]
    elif part == "base":
        _base(got, key)
    elif part == "odd":
        slug, what = key.split(":")
        if slug == "hbig" and what in ("ran", "row"):  # over 1 MiB: refused (documented)
            rows = {r["plan"]: r for r in got["base"]["status"]["out"]}
            assert got["ran"][slug] == 0, got["ran"]
            assert "over 1 MiB" in (rows["plans/hbig"].get("reason") or ""), rows["plans/hbig"]
        elif what == "ran":
            assert got["ran"][slug] == 1 and all(rc == 0 for rc, _ in got["pass"]), got["pass"]
        elif what == "row":
            rows = {r["plan"]: r for r in got["base"]["status"]["out"]}
            assert rows[f"plans/{slug}"]["status"] == "completed", rows.get(f"plans/{slug}")
            assert rows[f"plans/{slug}"]["approver"] == "alice@example.com", rows[f"plans/{slug}"]
        else:
            code, text = got["oddpage"][slug]
            assert code == 200 and "Traceback" not in text, (code, text[:1500])
            assert f"agent: {slug}" in text, text[:1500]
    elif part == "run":
        _run(got, key)
    elif part == "gpg":
        _gpg(got, key)
    else:
        _grid(got, part, key)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r94-", dir="/tmp/atk94b"))
    g = _build(out).got  # type: ignore[attr-defined]
    Path("/tmp/atk94b/got.json").write_text(json.dumps(g, default=str, indent=1))
