"""The page's HTTP endpoint: GET and HEAD only, optional bearer token, bounded work.

Routes (each HTML page has a JSON twin under ``/api``):

- ``/`` and ``/api/``: plans by status; ``?status=S&page=N`` pages through one status;
- ``/plan/<plan id>`` and ``/api/plan/<plan id>``: one plan;
- ``/audit`` and ``/api/audit``: the audit of the branch (computed in the background);
- ``/commit/<sha>``: a commit's message, author and files (``git show --stat``, bounded).

Any other method is 405: no request can change anything. Until the daemon publishes its
first snapshot (its first pass, reading history, has not ended) every GET and HEAD is 503
``E_NOT_READY`` with ``Retry-After``, never a 404 or an empty list (round 95). At most
``MAX_INFLIGHT`` requests are served at once (503 beyond), each reading at most a bounded
number of bytes. Only the overview reads a query (``status``, ``page``); every route's query
is read by :mod:`.query`, and one that does not fit is 400 ``E_USAGE`` (round 126).
"""

from __future__ import annotations

import hmac
import json
import os
import re
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from controller.errors import ConfigInvalid, GitError, UsageError
from controller.git.guard import argv, guarded_env
from controller.service.httpd import HttpServer, QuietHandler
from controller.service.ui import query, render
from controller.service.ui.data import UiData
from controller.service.ui.query import OverviewQuery
from controller.settings import Config

MAX_INFLIGHT = 8
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
RETRY_AFTER = 2
NOT_READY = (
    "the controller is still reading history (the daemon's first pass has not ended): no "
    "plan is known present or absent yet"
)
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def serve(config: Config, data: UiData, workdir: Callable[[], Path]) -> HttpServer:
    """Start the page on ``ui.listen``; refuses to start without the token it was told to use."""
    token = _token(config)
    slots = threading.BoundedSemaphore(MAX_INFLIGHT)
    commit_url = config.ui.commit_url

    class Handler(QuietHandler):
        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            if token is not None and not _authorised(self.headers.get("Authorization"), token):
                self._reply(401, b"unauthorised\n", "text/plain", {"WWW-Authenticate": "Bearer"})
                return
            if not slots.acquire(blocking=False):
                self._reply(503, b"busy, retry\n", "text/plain", {"Retry-After": "1"})
                return
            try:
                if not data.ready:  # before the first snapshot: nothing is known absent yet
                    status, body, kind = not_ready(self.path, data.failure)
                    self._reply(status, body, kind, {"Retry-After": str(RETRY_AFTER)})
                    return
                status, body, kind = route(self.path, data, workdir, commit_url)
            finally:
                slots.release()
            self._reply(status, body, kind)

        def _refuse(self) -> None:
            self.send_error(405)

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

        def send_error(
            self, code: int, message: str | None = None, explain: str | None = None
        ) -> None:
            """Every error the HTTP library answers (a method it has no handler for, a
            request line or headers too long, a malformed request) with the page's own
            headers and shape, never the library's HTML page (round 111,
            ``page-stdlib-errors``: TRACE/CONNECT 501, 414 and 431 had no
            Content-Security-Policy, and under ``/api/`` no error shape)."""
            status, body, kind, extra = http_error(code, self._asked_path())
            words = (getattr(self, "raw_requestline", b"") or b"").split()
            if len(words) == 3 and words[2].startswith(b"HTTP/"):
                # a version the library refused (HTTP/2.0: 505) left the request as HTTP/0.9,
                # which has no status line nor headers: this client wrote a version
                self.request_version = "HTTP/1.1"
            self.close_connection = True
            self._reply(status, body, kind, {**extra, "Connection": "close"})

        def _asked_path(self) -> str:
            """The path asked for, as far as the request was read (a request line too long
            to read whole has none parsed)."""
            path = getattr(self, "path", None)
            if isinstance(path, str):
                return path
            raw = getattr(self, "raw_requestline", b"") or b""
            parts = raw.decode("latin-1").split()
            return parts[1] if len(parts) > 1 else ""

        def _reply(
            self, status: int, body: bytes, kind: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            for name, value in {
                "Content-Type": kind,
                "Content-Length": str(len(body)),
                "Content-Security-Policy": CSP,
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "no-referrer",
                "Cache-Control": "no-store",
                **(extra or {}),
            }.items():
                self.send_header(name, value)
            self.end_headers()
            if getattr(self, "command", None) != "HEAD":
                self.wfile.write(body)

    return HttpServer(config.ui.listen or "", "ui.listen", Handler).start()


def _token(config: Config) -> str | None:
    name = config.ui.token_env
    if not name:
        return None
    value = os.environ.get(name, "")
    if not value:
        raise ConfigInvalid(
            f"ui.token_env: the environment variable {name} is empty or not set",
            remedy=f"export {name}=<a long random token>, or remove ui.token_env to serve "
            "the page without a token (loopback only is advised then)",
        )
    return value


def _authorised(header: str | None, token: str) -> bool:
    if not header or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(header[7:].strip().encode(), token.encode())


HTML = "text/html; charset=utf-8"
JSON = "application/json"


def route(
    raw: str, data: UiData, workdir: Callable[[], Path], commit_url: str | None
) -> tuple[int, bytes, str]:
    """``(status, body, content type)`` for one GET."""
    parts = urlsplit(raw)
    path = unquote(parts.path)
    api = path.startswith("/api/") or path == "/api"
    if api:
        path = path[4:] or "/"
    try:
        return _answer(path, parts.path, parts.query, api, data, workdir, commit_url)
    except UsageError as exc:  # a query that does not fit the route (round 126)
        return _bad_request(api, exc)


def _answer(
    path: str,
    asked: str,
    raw_query: str,
    api: bool,
    data: UiData,
    workdir: Callable[[], Path],
    commit_url: str | None,
) -> tuple[int, bytes, str]:
    """One route's answer, its query read by :mod:`.query` (a UsageError when it does not
    fit); a path that is no route is 404 whatever its query."""
    if path == "/":
        view = data.overview(OverviewQuery.read(raw_query, asked))
        return (200, _json(view), JSON) if api else (200, render.overview(view), HTML)
    if path.startswith("/plan/"):
        query.params(raw_query, path, asked)  # reads none: a parameter is refused
        plan_id = path[len("/plan/") :].strip("/")
        plan_view = data.plan(plan_id)
        if plan_view is None:
            return _missing(api, f"no plan {plan_id!r} on the watched branch", asked)
        if api:
            return 200, _json(plan_view), JSON
        return 200, render.plan_page(plan_id, plan_view, commit_url), HTML
    if path == "/audit":
        query.params(raw_query, path, asked)
        report = data.audit()
        return (
            (200, _json(report), JSON)
            if api
            else (200, render.audit_page(report, commit_url), HTML)
        )
    if path.startswith("/commit/") and not api:
        query.params(raw_query, path, asked)
        sha = path[len("/commit/") :]
        text = _show_commit(workdir(), sha, data.store()) if _SHA.match(sha) else None
        if text is None:
            return _missing(False, "no such commit")
        if isinstance(text, GitError):  # git cannot read the repository: say why (round 94)
            return 500, render.commit_error(sha, text.to_json()), HTML
        return 200, render.commit_page(sha, text), HTML
    return _missing(api, "no such page", asked)


#: What the page says of each error the HTTP library meets: (title, message, remedy).
_HTTP_ERRORS = {
    400: ("Bad request", "the request is not one HTTP/1.1 request", "send a well-formed request"),
    405: (
        "Method not allowed",
        "the page is read-only: GET and HEAD only",
        "read the page with GET or HEAD; plans change by commits to the repository",
    ),
    408: ("Request timeout", "the request was not sent in time", "send the request at once"),
    414: (
        "URI too long",
        "the request line is over 65536 bytes",
        "shorten the path and query (?status=S&page=N is all a page reads)",
    ),
    505: (
        "HTTP version not supported",
        "the page speaks HTTP/1.1 and HTTP/1.0",
        "send an HTTP/1.1 request",
    ),
    431: (
        "Request header fields too large",
        "a header line is over 65536 bytes, or there are more than 100 headers",
        "send fewer and shorter headers",
    ),
}


def http_error(code: int, raw_path: str) -> tuple[int, bytes, str, dict[str, str]]:
    """``(status, body, content type, extra headers)`` for an error the HTTP library meets:
    under ``/api`` the one error shape, else an HTML page; a method the page has no handler
    for (the library's 501) is 405, as every method but GET and HEAD is."""
    from controller.errors import UsageError

    status = 405 if code in (405, 501) else code
    title, message, remedy = _HTTP_ERRORS.get(
        status, ("Bad request", f"the request cannot be served ({status})", "send a GET request")
    )
    extra = {"Allow": "GET, HEAD"} if status == 405 else {}
    try:
        path = urlsplit(raw_path).path if raw_path.isprintable() else ""
    except ValueError:  # not a URL at all (``http://[``)
        path = ""
    if path.startswith("/api/") or path == "/api":
        err = UsageError(message, path=path, remedy=remedy)
        return status, _json(err.to_json()), JSON, extra
    return status, render.http_error(status, title, message, remedy), HTML, extra


def not_ready(raw: str, failure: tuple[str, str] | None = None) -> tuple[int, bytes, str]:
    """503 for every route before the daemon's first snapshot (round 95,
    ``page-startup-absent``: read from the moment the page listens, plans the branch had
    held all along answered 404 "no plan ... on the watched branch" until the first pass
    published). Under ``/api`` the one error shape (``E_NOT_READY``), else an HTML page."""
    from controller.errors import NotReady

    path = urlsplit(raw).path
    why = NOT_READY
    if failure is not None:  # a first pass that failed: said, and retried by the daemon
        why += f"; its last pass failed ({failure[0]}: {failure[1]}) and is retried"
    err = NotReady(why, path=path)
    if path.startswith("/api/") or path == "/api":
        return 503, _json(err.to_json()), JSON
    return 503, render.not_ready(why, err.remedy), HTML


def _bad_request(api: bool, exc: UsageError) -> tuple[int, bytes, str]:
    """400 for a query that does not fit its route: under ``/api`` the one error shape
    (``E_USAGE``, where, remedy), else the page's error page saying the same."""
    if api:
        return 400, _json(exc.to_json()), JSON
    return 400, render.http_error(400, "Bad request", exc.message, exc.remedy), HTML


def _missing(api: bool, what: str, path: str = "") -> tuple[int, bytes, str]:
    """404: under ``/api`` the one error shape of every ``--json`` answer (code, message,
    path, line, remedy)."""
    if api:
        from controller.errors import NotFound

        return 404, _json(NotFound(what, path=path).to_json()), JSON
    return 404, render.not_found(what), HTML


def _json(value: Any) -> bytes:
    return json.dumps(value, indent=1, default=str).encode()


_BARE: list[str] = []


def _bare_dir() -> str:
    """An empty bare repository directory of this process (made once, by hand: no template,
    no hook), for reading objects of another store through ``GIT_OBJECT_DIRECTORY``."""
    with _BARE_LOCK:
        if not _BARE:
            import atexit
            import shutil
            import tempfile

            root = Path(tempfile.mkdtemp(prefix="plangate-show-"))
            for sub in ("objects", "refs", "info"):
                (root / sub).mkdir()
            (root / "HEAD").write_text("ref: refs/heads/main\n")
            (root / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = true\n")
            atexit.register(shutil.rmtree, root, True)
            _BARE.append(str(root))
        return _BARE[0]


_BARE_LOCK = threading.Lock()


def _objects(repo: Path) -> str:
    """The object directory of the repository at ``repo`` (its common directory's)."""
    env = guarded_env(repo)
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=repo,
            env=env,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git rev-parse: {exc}", path=str(repo)) from None
    if proc.returncode != 0:
        raise GitError(proc.stderr.decode("utf-8", "replace").strip(), path=str(repo))
    return str(Path(proc.stdout.decode("utf-8", "surrogateescape").strip()) / "objects")


def _show_commit(repo: Path, sha: str, store: Path | None = None) -> str | GitError | None:
    """``git show --stat`` of one commit, at most 64 KiB of it, never a patch; read from the
    controller's own object store when it has one (round 58). None: no such commit; a
    :class:`GitError`: git cannot read the repository at all (round 94: its format, an
    extension git refuses), never shown as an absent commit."""
    objects = None
    if store is not None:
        objects = {
            "GIT_OBJECT_DIRECTORY": str(store / "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": "",
        }
    try:
        env = guarded_env(repo, objects)
        env["GIT_OBJECT_DIRECTORY"] = objects["GIT_OBJECT_DIRECTORY"] if objects else _objects(repo)
    except GitError as exc:
        return exc
    # git reads the commit with a repository directory holding nothing but its objects: no
    # `.git/config` of the agent's (`core.bigFileThreshold`, `core.attributesFile`, display
    # settings) and no `.git/info/attributes` or working-tree `.gitattributes` (`-diff`,
    # `binary`) decides how its stat reads (round 94, `page-stat-binary`: "Bin 0 -> 200
    # bytes" for a plan's 12 lines; git's `--text` does not reach `--stat`)
    env["GIT_DIR"] = _bare_dir()
    try:
        proc = subprocess.run(
            argv(
                [
                    "-c",
                    "core.quotePath=true",
                    "show",
                    "--stat",
                    "--format=fuller",
                    "--no-show-signature",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--end-of-options",
                    sha + "^{commit}",  # a blob's or tree's sha is no commit (round 111)
                ]
            ),
            cwd=env["GIT_DIR"],
            env=env,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired, GitError):
        return None
    if proc.returncode != 0:
        return None
    text = proc.stdout[:65536].decode("utf-8", "replace")
    return text if _shown_commit(text, sha) else None


def _shown_commit(text: str, sha: str) -> bool:
    """Is ``text`` the commit ``sha`` names, and not one a tag object of that sha peels to?
    Round 111 (``commit-page-non-commit-object``): a blob's sha showed the blob's bytes, a
    tree's its listing, as a "Commit" page."""
    first = re.match(r"(?:\x1b\[[0-9;]*m)*commit ([0-9a-f]{40,64})", text)
    return first is not None and first.group(1).startswith(sha)
