"""Round 47, bad input gets an ``E_...`` code, never a traceback, and one hostile value never
stalls the pass: http catalog URLs whose ``{param}`` placeholder sits OUTSIDE the path (in the
host, the userinfo, the fragment), filled with values a plan (or a tool output reaching it)
can hold. docs/configuration.md: placeholders are URL-encoded, ``.`` too; earlier rounds
tried path segments (round 24: an empty one is E_PARAMS_INVALID) and the query, and round
22 made "a URL no client can send" E_PARAMS_INVALID, permanent, nothing sent. (A port
placeholder is refused by the config check: held.)

Lab ``hs`` (local mode). Catalog http tools (POST, nothing listens on port 9):
``hhost`` ``http://{h}.localhost:9/x``, ``huser`` ``http://{u}@127.0.0.1:9/x``, ``hfrag``
``http://127.0.0.1:9/x#{f}``. Each plan ``<vid>``: action 1 calls one of them with the value
below (``on_failure: skip``; ``h-64-retry``: ``on_failure: retry``, 2 more tries), action 2
``rec`` so we see the plan went on; a control plan ``ctl`` runs ``rec`` only. Alice approves
all; two passes.

Values: host ``evil.net`` (``h-dot``), ``a b``, ``x@evil.net``, ``é``, ``[::1]``, ``ab%zz``,
a NUL, U+007F, U+202E, 63 ``a`` (``h-63``); and ``h-long`` (300 ``a``), ``h-64`` (64 ``a``),
``h-empty`` (``""``), ``h-uni-long`` (40 ``é``), ``h-xn`` (``xn--a``), ``h-xn-upper``
(``XN--a``), ``h-xn-bad`` (``xn--zz-``); userinfo ``a:b``, ``é``, a NUL, ``""``, 5,000
``u``; fragment ``x y``, a NUL.

Asserted per variant: the plan ends with a code (or completed), no ``tool_crashed``
traceback for it in the controller's log, no "internal error" in its record; every pass
exits 0 and ``ctl`` ran once; ``h-64-retry``'s action 1 is tried once (permanent).

Held: every pass exits 0, ``ctl`` ran, the others beside each plan ran; the path-free
values above that httpx can encode end E_TOOL_FAILED (name or connection refused);
``h-64-retry`` is not retried.

Broke (round 47): a host label the IDNA codec refuses (``h-long``, ``h-64``, ``h-empty``,
``h-uni-long``: "label empty or too long"; ``h-xn``, ``h-xn-upper``, ``h-xn-bad``: an
``xn--`` label that is no valid Punycode, ``InvalidCodepoint``): httpx raises while
resolving, the controller logs ``tool_crashed`` with a full Python traceback and records
``E_TOOL_FAILED`` "hhost: internal error: UnicodeError(\"encoding with 'idna' codec failed
(UnicodeError: label empty or too long)\")" in PLAN.yml, the log and the outcome commit.
Should be, as rounds 22/24 did for the URL length and an empty path segment: refused before
anything is sent, ``E_PARAMS_INVALID`` (permanent) with a message naming the placeholder and
the rule (a host label 1 to 63 characters, valid IDNA), and no traceback.

Fixed (round 47): the http tool builds the request before anything is sent, in the one
place the URL is made (``HttpTool.request``): the URL parsed by httpx, the host decoded as
httpx decodes it (``idna`` for an ``xn--`` label) and encoded as the socket will (Python's
``idna`` codec), then the request itself. Every error that can raise (``InvalidURL``,
``UnicodeError`` and idna's, ``ValueError``) is E_PARAMS_INVALID, permanent, naming the
placeholder(s) that filled the failing part (``{h}``) and the rule, the URL's userinfo and
query values masked; an httpx error while sending that is no ``HTTPError`` is mapped too
(E_PARAMS_INVALID for a URL, E_TOOL_FAILED for the others). All eight pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VALUES = {
    "h-dot": ("hhost", "h", "evil.net"),
    "h-space": ("hhost", "h", "a b"),
    "h-at": ("hhost", "h", "x@evil.net"),
    "h-long": ("hhost", "h", "a" * 300),
    "h-uni": ("hhost", "h", "é"),
    "h-v6": ("hhost", "h", "[::1]"),
    "h-xn": ("hhost", "h", "xn--a"),
    "h-pct": ("hhost", "h", "ab%zz"),
    "h-empty": ("hhost", "h", ""),
    "h-uni-long": ("hhost", "h", "é" * 40),
    "h-xn-upper": ("hhost", "h", "XN--a"),
    "h-xn-bad": ("hhost", "h", "xn--zz-"),
    "h-63": ("hhost", "h", "a" * 63),
    "h-64": ("hhost", "h", "a" * 64),
    "h-64-retry": ("hhost", "h", "a" * 64),
    "h-nul": ("hhost", "h", "a\u0000b"),
    "h-del": ("hhost", "h", "a\u007fb"),
    "h-bidi": ("hhost", "h", "a\u202eb"),
    "u-nul": ("huser", "u", "a\u0000b"),
    "u-empty": ("huser", "u", ""),
    "u-long": ("huser", "u", "u" * 5000),
    "f-nul": ("hfrag", "f", "a\u0000b"),
    "u-colon": ("huser", "u", "a:b"),
    "u-uni": ("huser", "u", "é"),
    "f-space": ("hfrag", "f", "x y"),
}


def _plan(vid: str, tool: str, key: str, value: str) -> str:
    policy = "on_failure: skip"
    if vid.endswith("-retry"):
        policy = "on_failure: retry\n    retry: {attempts: 2, delay: 0.1, max_delay: 0.1}"
    return f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: {tool}}}, {{name: rec}}]
actions:
  - id: 1
    tool: {tool}
    why: call
    params: {{{key}: {json.dumps(value)}}}
    {policy}
  - id: 2
    tool: rec
    why: after
    params: {{tag: {vid}}}
"""


def _build(root: Path) -> Lab:
    tools = (
        "hhost: {kind: http, method: POST, url: 'http://{h}.localhost:9/x', timeout: 3}\n"
        "huser: {kind: http, method: POST, url: 'http://{u}@127.0.0.1:9/x', timeout: 3}\n"
        "hfrag: {kind: http, method: POST, url: 'http://127.0.0.1:9/x#{f}', timeout: 3}\n"
    )
    lab = Lab(root / "hs", tools=tools)
    for vid, (tool, key, value) in VALUES.items():
        lab.write(vid, _plan(vid, tool, key, value))
    lab.write("ctl", plan_text("ctl"))
    lab.commit("plans")
    lab.runs = [lab.run(check=False)]  # type: ignore[attr-defined]
    for vid in [*VALUES, "ctl"]:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.runs += [lab.run(check=False), lab.run(check=False)]  # type: ignore[attr-defined]
    lab.runs = [  # type: ignore[attr-defined]
        {"returncode": r.returncode, "stderr": r.stderr}
        for r in lab.runs  # type: ignore[attr-defined]
    ]
    lab.status_rows = lab.status()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-httpspots", _build)


def test_every_pass_ended_and_the_control_ran(lab: Lab) -> None:
    for r in lab.runs:  # type: ignore[attr-defined]
        assert r["returncode"] == 0, r["stderr"][-3000:]
    assert len(lab.calls("ctl")) == 1


def _crashes(lab: Lab, vid: str) -> list[str]:
    found = []
    for r in lab.runs:  # type: ignore[attr-defined]
        for line in r["stderr"].splitlines():
            if f'"plans/{vid}"' in line and ("Traceback" in line or "tool_crashed" in line):
                found.append(line[:300] + " ... " + line[-300:])
    return found


@pytest.mark.parametrize("vid", [pytest.param(v, id=v) for v in VALUES])
def test_a_bad_url_value_gets_a_code(lab: Lab, vid: str) -> None:
    rows = lab.status_rows  # type: ignore[attr-defined]
    row = rows.get(f"plans/{vid}", {})
    text = json.dumps(row) + json.dumps(lab.plan(vid), default=str)
    assert "Traceback" not in text
    assert not _crashes(lab, vid), _crashes(lab, vid)
    assert "internal error" not in text, text[:1500]
    assert row.get("status") in ("completed", "failed", "invalid"), text[:1500]
    assert len(lab.calls(vid)) <= 1
    if row.get("status") != "invalid":
        assert "E_" in text, text[:1500]


def test_a_value_no_client_can_send_is_not_retried(lab: Lab) -> None:
    """A URL no client can send is permanent bad input (round 22's E_PARAMS_INVALID): one try."""
    acts = (lab.plan("h-64-retry").get("execution") or {}).get("actions") or []
    first = [a for a in acts if a.get("id") == 1]
    assert first and first[0].get("attempts") == 1, first
