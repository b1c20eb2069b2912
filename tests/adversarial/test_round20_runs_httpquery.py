# ruff: noqa: E501
"""Round 20, what reaches an ``http`` tool vs what the catalog and ``show`` say it runs: the
query string of a GET whose catalog ``url`` already holds a query.

docs/execution.md (round 18's fix): "for GET/HEAD (no body) the params no placeholder takes
as the query string". The operator's catalog may fix query parameters in the tool's URL
(``url: http://h/items/{id}?dry_run=true``: a read-only or dry-run switch, an API version, a
scope); ``plangate tools`` and ``plangate show`` print that URL as what the tool runs
(``runs: http: GET http://h/items/{id}?dry_run=true``). A plan supplies params only.

One lab, a loopback server recording every request line; one pass freezes, Alice approves all
in one commit, one pass runs.

- ``fix-override``: ``hfix`` (``.../items/{id}?dry_run=true``), plan params ``{id: "7",
  dry_run: false}``. **Broke**: the server gets ``GET /items/7?dry_run=false``; the
  operator's ``dry_run=true`` is gone, while ``show`` printed the catalog's URL with
  ``?dry_run=true`` above ``param dry_run = false``. Should: refuse the plan (a param that
  names a query key the catalog fixes) or keep the catalog's value; never replace it.
- ``fix-override-q``: ``hq`` (``.../search?q={q}&scope=readonly``), params ``{q: "k",
  scope: "admin"}``: the same with a placeholder in the query. **Broke** likewise
  (``scope=admin`` only).
- ``fix-extra`` (control): ``hfix`` with ``{id: "7", limit: 5}``: held,
  ``?dry_run=true&limit=5``.
- ``key-amp``: a param *key* ``"a&admin=1"``: held, sent as one encoded key
  (``a%26admin%3D1=x``), never as a second parameter ``admin``.
- ``id-query``: a placeholder value ``"10?admin=1"``: held, encoded into the path segment.
- ``http-dupkey``: the server answers ``{"v":"first","v":"second"}`` (not I-JSON; an exec
  tool printing it is ``E_TOOL_OUTPUT_INVALID``, checked by hand): held if the http intake
  refuses it too and action 2 never gets either value.

Asserted (the defence): every request of a plan carries each catalog-fixed query pair
(``dry_run=true``, ``scope=readonly``), and no parameter the plan did not write (``admin``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

PLANS = {
    "fix-override": ("hfix", '{id: "7", dry_run: false}', ("dry_run", "true")),
    "fix-override-q": ("hq", '{q: "k", scope: "admin"}', ("scope", "readonly")),
    "fix-extra": ("hfix", '{id: "6", limit: 5}', ("dry_run", "true")),
    "key-amp": ("hget", '{id: "8", "a&admin=1": "x"}', None),
    "id-query": ("hget", '{id: "10?admin=1", z: 1}', None),
}
#: round 20: both broke; fixed since: a param named like a key of the catalog's query is
#: refused (E_PARAMS_INVALID) and the catalog's value never replaced
FOUND = {"fix-override", "fix-override-q"}
BROKEN: set[str] = set()
R20 = "round 20: a GET param replaces a query pair the catalog's url fixes (show prints the catalog's)"


def _server() -> tuple[ThreadingHTTPServer, list[tuple[str, str]]]:
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.command, self.path))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            dup = self.path.startswith("/dup")
            self.wfile.write(b'{"v":"first","v":"second"}' if dup else b'{"ok":true}')

        def log_message(self, *args: Any) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, seen


def _build(root: Path) -> Lab:
    srv, seen = _server()
    port = srv.server_address[1]
    base = f"http://127.0.0.1:{port}"
    lab = Lab(
        root,
        tools=f"""\
hfix: {{kind: http, method: GET, url: "{base}/items/{{id}}?dry_run=true"}}
hget: {{kind: http, method: GET, url: "{base}/items/{{id}}"}}
hq: {{kind: http, method: GET, url: "{base}/search?q={{q}}&scope=readonly"}}
hdup: {{kind: http, method: GET, url: "{base}/dup"}}
""",
    )
    for slug, (tool, params, _) in PLANS.items():
        lab.write(
            slug,
            f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
            f"available_tools: [{{name: {tool}}}]\n"
            f"actions:\n  - {{id: 1, tool: {tool}, why: w, params: {params}}}\n",
        )
    lab.write(
        "http-dupkey",
        "plan:\n  name: http-dupkey\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: hdup}, {name: rec}]\nactions:\n"
        "  - {id: 1, tool: hdup, why: w, params: {}, outputs: [{name: v, path: $.json.v}]}\n"
        '  - {id: 2, tool: rec, why: w, params: {tag: http-dupkey, v: "$<actions[1].outputs.v>"}}\n',
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    lab.shows = {  # type: ignore[attr-defined]
        slug: lab.cli("show", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo).stdout
        for slug in PLANS
    }
    for slug in [*PLANS, "http-dupkey", "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    lab.http_seen = list(seen)  # type: ignore[attr-defined]
    srv.shutdown()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-httpquery", _build)


def _requests(lab: Lab, slug: str) -> list[list[tuple[str, str]]]:
    first = {
        "fix-override": "/items/7",
        "fix-override-q": "/search",
        "fix-extra": "/items/6",
        "key-amp": "/items/8",
        "id-query": "/items/10",
    }[slug]
    out = []
    for _, path in lab.http_seen:  # type: ignore[attr-defined]
        parts = urlsplit(path)
        if parts.path == first or parts.path.startswith(first + "%3F"):
            out.append(parse_qsl(parts.query, keep_blank_values=True))
    return out


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(
            s,
            id=s,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=R20)]
            if s in BROKEN
            else [],
        )
        for s in PLANS
    ],
)
def test_the_catalogs_query_reaches_the_server(lab: Lab, slug: str) -> None:
    fixed = PLANS[slug][2]
    requests = _requests(lab, slug)
    refused = (
        (lab.plan(slug).get("validation") or {}).get("errors")
        or lab.refusal(slug)
        or "E_PARAMS_INVALID" in json.dumps(lab.plan(slug).get("execution"))
    )
    if fixed is not None:
        if fixed[0] == "dry_run" and slug == "fix-override":
            assert "dry_run=true" in lab.shows[slug], lab.shows[slug]  # type: ignore[attr-defined]
        assert requests or refused, f"{slug}: neither sent nor refused"
    for pairs in requests:
        if fixed is not None:
            assert fixed in pairs, f"{slug}: the server got {pairs}, not the catalog's {fixed}"
        assert "admin" not in dict(pairs), f"{slug}: a parameter the plan never wrote: {pairs}"
    if slug == "key-amp":
        assert requests == [[("a&admin=1", "x")]], requests


def test_an_http_json_body_with_a_duplicate_member_is_refused(lab: Lab) -> None:
    assert lab.calls("http-dupkey") == []
    assert "E_TOOL_OUTPUT_INVALID" in lab.codes("http-dupkey"), lab.codes("http-dupkey")


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
