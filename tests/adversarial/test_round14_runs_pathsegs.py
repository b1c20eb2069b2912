"""Round 14, what reaches the tool and what is committed: path segments that are not
plain names.

**URL placeholders** (docs/configuration.md: an http tool's "``{param}`` placeholders in the
URL are URL-encoded", as an exec ``{param}`` "always stays exactly one argv element"). The
catalog's ``hook`` tool posts to ``http://127.0.0.1:<port>/hooks/{channel}/post`` (a local
server records every request). Action 1 (``src``, an exec tool whose output is outside data)
returns a channel name; action 2 calls ``hook`` with ``channel: $<actions[1].outputs.c>``.
Defence asserted: the request's path is ``/hooks/<one segment>/post`` and that segment,
URL-decoded, is exactly the value the tool got.

- held: ``slashes`` (``../../admin/delete``: ``/`` becomes ``%2F``), ``slash`` (``a/b``),
  ``query`` (``x?admin=1#``), ``backslash`` (``..\\..\\admin``), ``pct`` (``%2e%2e``: the
  ``%`` is encoded again).
- **Broke** ``dotdot``: the value ``..`` (unreserved characters: URL-encoding leaves it as
  is) makes the URL ``/hooks/../post``, which the HTTP client normalises: the request goes
  to ``/post``, outside ``/hooks/``. **Broke** ``dot``: ``.`` makes it ``/hooks/post`` (the
  placeholder's segment vanishes). With ``/{a}/{b}/`` templates each ``..`` climbs one more
  level: a tool output picks another endpoint of the host than the catalog's template.

**Folder names that are git pathspec globs** (``*``, ``?``, ``[..]`` are allowed in a plan's
folder name). ``plans/w*``, ``plans/z?`` and ``plans/q[ab]`` are approved by Alice (added with
``:(literal)`` pathspecs); the agent leaves uncommitted edits in the working tree of
``plans/wx``, ``plans/zz`` and ``plans/qa`` (names each glob matches) plus an untracked file.
Defence asserted: each glob-named plan runs once; every controller commit of the pass
touches only files of the plan it names; the agent's edits stay uncommitted. Held (round 14).
"""

from __future__ import annotations

import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

CHANNELS = {
    "slashes": "../../admin/delete",
    "slash": "a/b",
    "query": "x?admin=1#",
    "backslash": "..\\..\\admin",
    "pct": "%2e%2e",
    "dotdot": "..",
    "dot": ".",
}
BROKE = {"dotdot", "dot"}
FIXED = True  # dots are percent-encoded in URL placeholders (tools/http.py)
GLOBS = {"w*": "wx", "z?": "zz", "q[ab]": "qa"}


def _url_plan(vid: str) -> str:
    return f"""\
plan:
  name: "url {vid}"
  task: "post to the channel a lookup returns"
  status: pending_approval
available_tools:
  - name: src
  - name: hook
actions:
  - id: 1
    tool: src
    why: "look the channel up"
    params: {{v: {json.dumps(CHANNELS[vid])}, tag: "{vid}"}}
    outputs:
      - {{name: c, path: "$.json.c"}}
  - id: 2
    tool: hook
    why: "post to it"
    params: {{channel: "$<actions[1].outputs.c>", tag: "{vid}"}}
"""


def _tag(slug: str) -> str:
    return "glob-" + "".join(c if c.isalnum() else "_" for c in slug)


def _build(root: Path) -> Lab:
    seen: list[tuple[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            seen.append((self.path, body.decode()))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"ok": true}')

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lab = Lab(root)
    src = json.dumps(
        [
            sys.executable,
            "-I",
            "-S",
            "-c",
            "import sys,json; print(json.dumps({'c': sys.argv[1]}))",
            "{v}",
        ]
    )
    url = f"http://127.0.0.1:{server.server_port}/hooks/{{channel}}/post"
    lab.write_config(
        tools=f"src: {{kind: exec, argv: {src}}}\n"
        f"hook: {{kind: http, method: POST, url: '{url}', timeout: 5}}\n"
    )
    for vid in CHANNELS:
        lab.write(f"url-{vid}", _url_plan(vid))
    for glob, victim in GLOBS.items():
        lab.write(glob, plan_text(_tag(glob)))
        lab.write(victim, plan_text(_tag(victim)))
    lab.commit("plans", AGENT)
    lab.run()
    base = lab.head()
    for vid in CHANNELS:
        lab.set_status(f"url-{vid}", "approved")
    for glob, victim in GLOBS.items():
        lab.set_status(glob, "approved")
        victim_file = lab.repo / "plans" / victim / "PLAN.yml"
        victim_file.write_text(victim_file.read_text().replace('tag: "', 'tag: "EVIL-'))
        (lab.repo / "plans" / victim / "junk.txt").write_text("agent bytes\n")
    paths = [f":(literal)plans/url-{v}/PLAN.yml" for v in CHANNELS]
    paths += [f":(literal)plans/{g}/PLAN.yml" for g in GLOBS]
    lab.git("add", "--", *paths)
    lab.git("commit", "-q", "-m", "approve them", who=ALICE)
    approved = lab.head()
    lab.run()
    server.shutdown()
    lab.seen = list(seen)  # type: ignore[attr-defined]
    lab.base = base  # type: ignore[attr-defined]
    lab.approved = approved  # type: ignore[attr-defined]
    touched = {}
    for row in lab.log_rows(fmt="%H%x00%ae%x00%s%x01", rev=f"{approved}..HEAD"):
        files = lab.git("show", "--name-only", "--format=", "-z", row[0]).split("\0")
        touched[row[0]] = (row[1], row[2], [f for f in files if f])
    lab.touched = touched  # type: ignore[attr-defined]
    lab.dirty = lab.git("status", "--porcelain=v1", "-z").split("\0")  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-pathsegs", lambda root: _build(root / "lab"))


def _marks(vid: str) -> list[Any]:  # round 14: BROKE were strict xfails; fixed since
    if vid not in BROKE or FIXED:
        return []
    return [
        pytest.mark.xfail(
            strict=True,
            raises=AssertionError,
            reason="round 14: a URL placeholder filled with a dot segment is normalised away:"
            " the request leaves the catalog's path (URL-encoding leaves '.' and '..' as is)",
        )
    ]


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in CHANNELS])
def test_a_url_placeholder_stays_one_segment(lab: Lab, vid: str) -> None:
    value = CHANNELS[vid]
    requests = [p for p, body in lab.seen if json.loads(body).get("tag") == vid]  # type: ignore[attr-defined]
    assert len(requests) == 1, (lab.codes(f"url-{vid}"), lab.seen)  # type: ignore[attr-defined]
    path = requests[0].split("?", 1)[0]
    parts = path.split("/")
    assert len(parts) == 4 and parts[:2] == ["", "hooks"] and parts[3] == "post", path
    assert urllib.parse.unquote(parts[2]) == value, path


@pytest.mark.parametrize("glob", list(GLOBS))
def test_a_glob_named_plan_commits_only_its_own_files(lab: Lab, glob: str) -> None:
    assert len(lab.calls(_tag(glob))) == 1, lab.codes(glob)
    victim = GLOBS[glob]
    assert lab.calls(_tag(victim)) == [] and lab.calls("EVIL-" + _tag(victim)) == []
    touched: dict[str, tuple[str, str, list[str]]] = lab.touched  # type: ignore[attr-defined]
    for email, subject, files in touched.values():
        assert email == BOT[1], subject
        slug = subject.split(" ", 2)[-1]
        if slug.startswith("plans/"):
            assert all(f.startswith(slug + "/") for f in files), (subject, files)
        assert not any(f.startswith(f"plans/{victim}/") for f in files), (subject, files)
    dirty: list[str] = lab.dirty  # type: ignore[attr-defined]
    assert f" M plans/{victim}/PLAN.yml" in dirty, dirty
    assert f"?? plans/{victim}/junk.txt" in dirty, dirty
