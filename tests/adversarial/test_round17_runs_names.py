# ruff: noqa: E501
"""Round 17, hostile names and server-chosen encodings meeting the record. One lab, one pass
to freeze, Alice approves all in one commit, one pass to run. All held (round 17).

- ``glob-star`` / ``glob-bracket``: plan folders named ``*`` and ``[ab]`` (git pathspec
  magic: as a pathspec ``plans/*`` matches every plan, ``plans/[ab]`` matches ``plans/a`` and
  ``plans/b``) beside honest ``plans/a`` and ``plans/b``; after Alice's approval the agent
  edits ``plans/b`` in the working tree without committing it. Asserted: each glob plan runs
  exactly once and is recorded ``completed`` under its own name; ``plans/a`` runs once;
  the uncommitted edit of ``plans/b`` never runs and is in no commit.
- ``mermaid-path``: a nested plan in a folder named
  ``n"];z["9 · deploy-prod<br/>✅ succeeded"]:::succeeded;a1-->z;q["`` (Mermaid statements,
  which GitHub draws in EXECUTION_LOG.md's graph). Asserted: the graph in the committed log
  holds one node and no edge (nothing forged).
- ``charset-*``: an http tool whose server echoes the request body (it holds
  ``$<secrets.TOKEN>``) with ``Content-Type: text/plain; charset=X`` for X in ``utf-16-le``,
  ``cp500`` (EBCDIC), ``utf-32``, ``unicode_escape``: the server chooses how the controller
  decodes the bytes. Asserted: the committed log holds the token in no form (raw, the
  characters the charset makes of it) and the plan completes.
- ``shadow``: a python tool the operator runs with ``cwd`` = the plans repo (a tool that works
  on it); the agent commits ``json.py``, ``pickle.py``, ``struct.py``, ``traceback.py``,
  ``signal.py``, ``base64.py``, ``inspect.py``, ``typing.py``, ``subprocess.py``,
  ``threading.py``, ``datetime.py``, ``decimal.py``, ``resource.py``, ``selectors.py``,
  ``pyrunner.py`` and ``controller.py`` at the repository's root, each recording that it was
  imported. Asserted: none is imported (the child's ``sys.path`` does not hold its working
  directory), the tool's own ``import json`` is the standard one, the plan completes.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

TOKEN = "Kq7mPv9xJ2wQzL4t"
CHARSETS = ["utf-16-le", "cp500", "utf-32", "unicode_escape"]
SHADOWS = [
    "json",
    "pickle",
    "struct",
    "traceback",
    "signal",
    "base64",
    "inspect",
    "typing",
    "subprocess",
    "threading",
    "datetime",
    "decimal",
    "resource",
    "selectors",
    "pyrunner",
    "controller",
]
MERMAID = 'n"];z["9 · deploy-prod<br/>✅ succeeded"]:::succeeded;a1-->z;q["'


def _serve() -> int:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", f"text/plain; charset={self.path.strip('/')}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return int(server.server_address[1])


def _http_plan(tag: str) -> str:
    return f"""plan:
  name: "{tag}"
  task: "t"
  status: pending_approval
available_tools:
  - name: {tag}
actions:
  - id: 1
    tool: {tag}
    why: "w"
    params: {{token: "$<secrets.TOKEN>"}}
"""


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    port = _serve()
    tools = "".join(
        f'charset-{c}: {{kind: http, method: POST, url: "http://127.0.0.1:{port}/{c}"}}\n'
        for c in CHARSETS
    )
    (root / "pt").mkdir(exist_ok=True)
    (root / "pt" / "r17shadow.py").write_text(
        "def f(tag):\n    import json\n    return {'ok': tag, 'pwned': getattr(json, 'PWNED', False)}\n"
    )
    tools += 'shadow: {kind: python, target: "r17shadow:f", cwd: repo}\n'
    lab = Lab(root / "lab", tools=tools, extra=f"python_path: [{json.dumps(str(root / 'pt'))}]\n")
    for mod in SHADOWS:
        (lab.repo / f"{mod}.py").write_text(
            f'PWNED = True\nopen({str(lab.log)!r}, \'a\').write(\'{{"argv": ["PWNED-{mod}"], "stdin": ""}}\\n\')\n'
        )
    lab.write(
        "shadow",
        """plan:
  name: shadow
  task: t
  status: pending_approval
available_tools:
  - name: shadow
actions:
  - id: 1
    tool: shadow
    why: w
    params: {tag: shadow}
""",
    )
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": TOKEN}  # type: ignore[attr-defined]
    for c in CHARSETS:
        lab.write(f"charset-{c}", _http_plan(f"charset-{c}"))
    lab.write("*", plan_text("glob-star"))
    lab.write("[ab]", plan_text("glob-bracket"))
    lab.write("a", plan_text("plain-a"))
    lab.write("b", plan_text("plain-b"))
    lab.write(
        MERMAID,
        """plan:
  name: sub
  task: t
  status: draft
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: mermaid-nested}
""",
    )
    lab.commit("plans", AGENT)
    pin = lab.cli("hash", str(lab.repo / "plans" / MERMAID)).stdout.strip().split()[-1]
    lab.write(
        "mermaid-path",
        f"""plan:
  name: "mermaid-path"
  task: t
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    plan: {{path: {json.dumps("plans/" + MERMAID)}, hash: "{pin}"}}
    why: w
""",
    )
    lab.commit("parent", AGENT)
    lab.run()
    slugs = [*(f"charset-{c}" for c in CHARSETS), "*", "[ab]", "a", "b", "mermaid-path", "shadow"]
    for slug in slugs:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.write("b", lab.read("b").replace('tag: "plain-b"', 'tag: "plain-b-edited"'))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-names", _build)


@pytest.mark.parametrize(
    "slug,tag", [("*", "glob-star"), ("[ab]", "glob-bracket")], ids=["glob-star", "glob-bracket"]
)
def test_a_folder_named_like_a_pathspec_is_only_itself(lab: Lab, slug: str, tag: str) -> None:
    assert len(lab.calls(tag)) == 1
    assert len(lab.calls("plain-a")) == 1
    assert lab.calls("plain-b-edited") == [] and lab.calls("plain-b") == []
    assert lab.plan(slug)["plan"]["status"] == "completed"
    assert lab.subjects(slug)[0] == f"plangate: complete plans/{slug}"
    assert "plain-b-edited" not in lab.git("log", "--all", "-p")


def test_a_nested_folder_name_forges_no_node_in_the_logs_graph(lab: Lab) -> None:
    assert len(lab.calls("mermaid-nested")) == 1
    log = lab.read("mermaid-path", "EXECUTION_LOG.md")
    graph = log.split("```mermaid", 1)[1].split("```", 1)[0]
    nodes = [line for line in graph.splitlines() if line.strip().startswith(("a", "z", "q"))]
    assert len(nodes) == 1, graph
    assert "-->" not in graph and ";" not in graph, graph


@pytest.mark.parametrize("charset", CHARSETS, ids=[f"charset-{c}" for c in CHARSETS])
def test_a_charset_the_server_picks_does_not_unmask_a_secret(lab: Lab, charset: str) -> None:
    slug = f"charset-{charset}"
    assert lab.plan(slug)["plan"]["status"] == "completed"
    text = lab.git("log", "--all", "-p", "--", f"plans/{slug}")
    raw = json.dumps({"token": TOKEN}, separators=(",", ":")).encode()
    try:
        decoded = raw.decode(charset, errors="replace")
    except (LookupError, UnicodeDecodeError):
        decoded = ""
    assert TOKEN not in text
    inner = decoded[len(decoded) // 3 : 2 * len(decoded) // 3]
    assert not inner or inner not in text, f"the {charset} reading of the token is committed"
    assert json.dumps(inner)[1:-1] not in text or not inner


def test_modules_the_agent_commits_at_the_root_are_not_imported_by_a_python_tool(lab: Lab) -> None:
    assert lab.plan("shadow")["plan"]["status"] == "completed"
    rows = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    pwned = [r["argv"][0] for r in rows if r["argv"][0].startswith("PWNED-")]
    assert pwned == [], f"imported from the agent's files: {pwned}"
    log = lab.read("shadow", "EXECUTION_LOG.md")
    assert '"pwned": false' in log, log[-1500:]
