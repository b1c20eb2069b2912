"""Round 18, what ``plangate show`` displays vs what runs: reference text where the engine
never resolves one, and params an http tool never sends.

docs/formats.md: the text view shows "params (references marked ``«$<...>»``)";
docs/plan-format.md: "Only strings inside ``params`` (and the ``params`` of checks and
fallback steps) are resolved; mapping keys never are". One lab: the agent submits the plans
below, one pass freezes them, the bench takes ``plangate show --config`` of each (the text the
reviewer approves), Alice approves them all in one commit, one pass runs them.

Every break below is fixed since: reference text in a key or an expect value is refused
(E_REF_INVALID) and a GET sends its other params as the query string.

- ``key-ref``: ``params: {m: {"$<inputs.k>": v}}`` with ``inputs.k: real``. ``show`` prints
  ``param m = {"«$<inputs.k>»": "v"}`` (a reference, to be resolved). Asserted: the tool
  gets the key ``real``, or ``show`` marks no reference in that line. **Broke**: the tool
  gets the literal key ``$<inputs.k>``.
- ``pre-not-equals``: action 1 (``rec``) has a precondition ``chk {state: stop}`` with
  ``expect: {path: $.state, not_equals: "$<inputs.k>"}`` and ``inputs.k: stop``. ``show``
  prints ``$.state not equals "«$<inputs.k>»"``: the check the reviewer approves does *not*
  hold (the state is ``stop``), so the tool must not run. Asserted: ``rec`` is not called,
  or ``show`` marks no reference in that check. **Broke**: the expect value is compared as
  the literal text ``$<inputs.k>``, the precondition holds and ``rec`` runs.
- ``verify-not-equals``: action 1's ``verify: {expect: {path: $.json.echo.tag,
  not_equals: "$<inputs.k>"}}`` with ``inputs.k`` equal to the tag the tool echoes; action 2
  follows. The shown verify fails, so action 2 must not run. **Broke**: action 2 runs, the
  plan is ``completed``.
- ``verify-equals``: the same with ``equals``: the shown verify holds. **Broke** (the safe
  direction): the plan fails ``E_VERIFY_FAILED`` (``expected equals "$<inputs.k>"``).
- ``http-get``: an ``http`` tool with ``method: GET`` and ``url: .../items/{id}``; the plan
  passes ``{id: "7", limit: 5, only_mine: true}``. ``show`` lists all three params and the
  committed EXECUTION_LOG.md records all three as "Params (resolved)". Asserted: the plan is
  refused, or every param reaches the server (path, query or body). **Broke**: the server
  gets ``GET /items/7`` with no body; ``limit`` and ``only_mine`` are silently dropped
  (docs/execution.md: "params as JSON body (not for GET/HEAD)") while git records them as
  what the tool got.
- ``http-delete``: the same with ``method: DELETE`` and ``dry_run: true``: held, the body
  carries every param.
- ``key-flow``: an untrusted output written as a *key* of a ``sensitive`` param (``to:
  {"$<actions[1].outputs.f>": 1}``): held, the plan froze without ``E_UNGUARDED_FLOW`` and
  the sensitive tool got the literal key, never the attacker's value.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

R18 = "round 18: show marks a reference the engine never resolves"

PLANS = {
    "key-ref": """plan: {name: key-ref, task: t, status: pending_approval}
inputs: {k: real}
available_tools: [{name: rec}]
actions:
  - id: 1
    tool: rec
    why: w
    params:
      tag: key-ref
      m: {"$<inputs.k>": v}
""",
    "pre-not-equals": """plan: {name: pre-not-equals, task: t, status: pending_approval}
inputs: {k: stop}
available_tools: [{name: rec}, {name: chk}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: pre-not-equals}
    preconditions:
      - {tool: chk, params: {state: stop}, expect: {path: "$.state", not_equals: "$<inputs.k>"}}
""",
    "verify-not-equals": """plan: {name: verify-not-equals, task: t, status: pending_approval}
inputs: {k: verify-not-equals}
available_tools: [{name: rec}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: verify-not-equals}
    verify: {expect: {path: "$.json.echo.tag", not_equals: "$<inputs.k>"}}
  - {id: 2, tool: rec, why: w, params: {tag: verify-not-equals-2}}
""",
    "verify-equals": """plan: {name: verify-equals, task: t, status: pending_approval}
inputs: {k: verify-equals}
available_tools: [{name: rec}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: verify-equals}
    verify: {expect: {path: "$.json.echo.tag", equals: "$<inputs.k>"}}
""",
    "http-get": """plan: {name: http-get, task: t, status: pending_approval}
available_tools: [{name: hget}]
actions:
  - {id: 1, tool: hget, why: w, params: {id: "7", limit: 5, only_mine: true}}
""",
    "http-delete": """plan: {name: http-delete, task: t, status: pending_approval}
available_tools: [{name: hdel}]
actions:
  - {id: 1, tool: hdel, why: w, params: {id: "8", dry_run: true}}
""",
    "key-flow": """plan: {name: key-flow, task: t, status: pending_approval}
available_tools: [{name: src}, {name: send}]
actions:
  - id: 1
    tool: src
    why: w
    params: {from: "evil@attacker.example"}
    outputs: [{name: f, path: "$.from"}]
  - id: 2
    tool: send
    why: w
    params:
      to: {"$<actions[1].outputs.f>": 1}
""",
}


def _server() -> tuple[ThreadingHTTPServer, list[list[str]]]:
    seen: list[list[str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            seen.append([self.command, self.path, self.rfile.read(size).decode()])
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_DELETE = _answer

        def log_message(self, *args: object) -> None:
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, seen


def _approve_all(lab: Lab, slugs: list[str]) -> None:
    for slug in slugs:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("approve all", ALICE)


def _build(root: Path) -> Lab:
    srv, seen = _server()
    port = srv.server_address[1]
    lab = Lab(
        root,
        tools=f"""\
chk: {{kind: echo, idempotent: true, risk: low}}
src: {{kind: echo, output_trust: untrusted}}
send: {{kind: echo, sensitive: [to]}}
hget: {{kind: http, method: GET, url: "http://127.0.0.1:{port}/items/{{id}}"}}
hdel: {{kind: http, method: DELETE, url: "http://127.0.0.1:{port}/items/{{id}}"}}
""",
    )
    for slug, text in PLANS.items():
        lab.write(slug, text)
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    shows = {}
    for slug in PLANS:
        out = lab.cli("show", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
        shows[slug] = out.stdout
    lab.shows = shows  # type: ignore[attr-defined]
    _approve_all(lab, [*PLANS, "zz"])
    lab.run()
    lab.http_seen = list(seen)  # type: ignore[attr-defined]
    srv.shutdown()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r18-showrefs", _build)


def _line(lab: Lab, slug: str, needle: str) -> str:
    lines = [ln for ln in lab.shows[slug].splitlines() if needle in ln]  # type: ignore[attr-defined]
    assert lines, f"show of {slug} has no line with {needle!r}:\n{lab.shows[slug]}"  # type: ignore[attr-defined]
    return lines[0]


def _stdin(lab: Lab, tag: str) -> list[dict]:
    return [json.loads(c["stdin"]) for c in lab.calls(tag)]


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1


# round 18: the four reference variants and http-get broke; fixed since. Reference text
# where the engine never resolves one (a mapping key, an expect value) is refused at
# validation (E_REF_INVALID), so no reviewer is shown a reference that stays text; a GET
# sends the params no placeholder takes as its query string.
UNRESOLVED = {
    "key-ref": ["key-ref"],
    "pre-not-equals": ["pre-not-equals"],
    "verify-not-equals": ["verify-not-equals", "verify-not-equals-2"],
    "verify-equals": ["verify-equals", "verify-equals-2"],
}


@pytest.mark.parametrize("slug", list(UNRESOLVED))
def test_reference_text_the_engine_never_resolves_is_refused(lab: Lab, slug: str) -> None:
    assert "E_REF_INVALID" in lab.codes(slug), lab.codes(slug)
    assert lab.plan(slug).get("execution") is None
    for tag in UNRESOLVED[slug]:
        assert lab.calls(tag) == [], tag
    assert "\u00ab" not in lab.shows[slug] and "«" not in lab.shows[slug]  # type: ignore[attr-defined]


def test_http_get(lab: Lab) -> None:
    assert "param limit = 5" in lab.shows["http-get"]  # type: ignore[attr-defined]
    seen = [s for s in lab.http_seen if s[0] == "GET"]  # type: ignore[attr-defined]
    refused = lab.plan("http-get").get("validation") or lab.refusal("http-get")
    if refused:
        assert not seen
        return
    assert len(seen) == 1, seen
    sent = seen[0][1] + seen[0][2]
    assert "limit" in sent and "only_mine" in sent, seen


def test_http_delete(lab: Lab) -> None:
    seen = [s for s in lab.http_seen if s[0] == "DELETE"]  # type: ignore[attr-defined]
    assert len(seen) == 1, seen
    assert json.loads(seen[0][2]) == {"id": "8", "dry_run": True}


def test_key_flow(lab: Lab) -> None:
    execution = lab.plan("key-flow").get("execution") or {}
    log = lab.read("key-flow", "EXECUTION_LOG.md") if execution else ""
    assert "evil@attacker.example" not in log.split("## Action 2", 1)[-1] or not execution
    assert execution.get("status") in ("completed", None), execution
