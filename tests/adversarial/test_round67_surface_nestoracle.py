"""Round 67, agent-facing surfaces: round 66's nested-input rule ("a nested plan's input is
the author's when every value filling it is; anything else the controller produced is
masked", docs/execution.md) and its notify posts, as a secret-equality ORACLE: does the
record of one approved run differ between a right and a wrong guess of a secret?

Lab (one, module scope), local mode with ``agent.identity``, two plan secrets (``TOK``, the
one guessed, and ``TOK2``, another) and a ``notify`` URL served in the test process. For each
guess of ``TOK`` (``s`` right, ``c`` wrong, same shape) the agent commits, and Alice approves:

- ``two``: nested two deep (the top's literal ``g: <guess>`` to a middle plan passing
  ``$<inputs.g>`` to a child): refused ``E_SCHEMA_INVALID`` (one level only), never runs;
- ``pin``: the parent passes ``g: "$<inputs.a>"``, ``a`` the parent's own input (the guess);
- ``join``: the parent passes ``g: "$<inputs.a>$<inputs.b>"``, ``a``/``b`` its own inputs
  holding the two halves of the guess (all the author's);
- ``pnamep``: the parent passes ``g: "$<plan.name>"``, the parent's name the guess;
- ``pname``: the child's own ``note: $<plan.name>``, the child's name the guess;
- ``mixs``: the parent passes ``g: "<guess>-$<secrets.TOK2>"`` (a literal mixed with a
  secret: not the author's);
- ``mixkid``: the parent passes ``h: <guess>`` and ``k: $<secrets.TOK2>``; the child joins
  them, ``note: "$<inputs.h>-$<inputs.k>"``;
- ``mixtop``: a top-level plan's ``note: "<guess>-$<secrets.TOK2>"`` (no nesting);
- ``kdir``: the child lives in the folder ``plans/<guess>`` (a folder name that looks like
  the secret's value), pinned by its parent.

Readers of the top plan: the committed EXECUTION_LOG.md, ``show --config``, MCP ``log``, the
``status --json`` row, the ``notify`` posts of its path, and (one daemon with ``ui.listen``
after the passes) the reviewer's page ``/plan/<path>`` and ``/api/plan/<path>``.

Asserted: for each reader, a right and a wrong guess give the same count of ``***`` (every
log carries the legend "secrets as ``***``"); ``TOK2``'s value is never written as is; the
control: each plan ran as approved.

Broke (strict xfails, 20), each in the record of the run, EXECUTION_LOG.md, and so MCP
``log``, the page and ``/api/plan/`` (all pass it on as recorded: ``*-log``, ``*-mcp-log``,
``*-page``, ``*-api``), counted by ``***``. ``mixtop-*``, ``mixs-*``, ``mixkid-*``:
a value mixing the author's literal and a secret (``note: "<guess>-$<secrets.TOK2>"`` at the
top level, a nested input filled so, or a child joining its literal input with one a secret
filled) is recorded ``"note": "***-***"`` for the right guess of ``TOK`` and
``"note": "<guess>-***"`` for a wrong one: docs/execution.md says such a string is "the
reference's, redacted whole", but the redactor runs over it, the author's part included, so
one approved run confirms a guess (any secret the plan may reference serves). Should: a mixed
value is masked whole (``***``), or its author's parts quoted as written. ``pname-*``: a
nested child's own ``note: $<plan.name>`` with the child's name the guess is ``"note":
"***"`` for the right guess (the parent's ``$<plan.name>`` passed as an input, ``pnamep``, is
quoted as written). ``kdir-*``: a nested action whose child lives in ``plans/<guess>``
records its Result ``{"plan": "plans/***", "hash": ...}`` for the right guess while the same
log's "**Tool:** ``plan plans/<guess>``" line, ``show``, the row and the posts name it as
written. Should (both): the author's text is quoted as written. Held (36 ids + the
control): ``pin``,
``join``, ``pnamep`` (a nested input filled from the parent's own input, two of its inputs
joined, its ``$<plan.name>``) on every reader; ``show``, the ``status`` row and the ``notify``
posts of every variant; ``TOK2`` never written as is in any commit or post; ``two`` (two
deep) refused ``E_SCHEMA_INVALID``, never ran; every other plan ran once.

Fixed (2026-11-30): all 20. A recorded value is now built from its parts with their
provenance (``refs.recorded``), never by searching the joined string for known secrets'
values: the author's parts (a literal, a ``$<plan.*>`` of the plan that wrote it, a
nested or top-level plan's input as its parent's record shows it, ``Context.shown_inputs``)
as written, a ``$<secrets.*>`` as ``***``, the controller's other material (outputs,
results as the journal recorded them) through the redactor, the second net.
EXECUTION_LOG.md (and so MCP ``log``, the page, ``/api/plan/``) and the gate's preview take
it, the journal stays redacted whole;
``mixtop``, ``mixs``, ``mixkid`` record ``"note": "<guess>-***"`` for either guess, ``pname``
the child's name as written. A nested action's result names its plan's path as the author
wrote it (``logbook._own_result``), as its Tool line does (``kdir``).
"""

from __future__ import annotations

import http.server
import json
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BenchError, Lab, cases
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp
from test_round65_surface_literal import QUIET

SECRET = "r67-s3cr3t-pv4nq8tz"
OTHER = "r67-other-w2mz6kx9"
GUESSES = {"s": SECRET, "c": SECRET[:-1] + "y"}
SLUGS = ("pin", "join", "pnamep", "pname", "mixs", "mixkid", "mixtop", "kdir")
WHERE = ("log", "show", "mcp-log", "status", "notify", "page", "api")


def _receiver() -> tuple[http.server.ThreadingHTTPServer, list[str]]:
    posts: list[str] = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            posts.append(self.rfile.read(size).decode("utf-8"))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, posts


def _head(name: str, more: str = "", status: str = "pending_approval") -> str:
    return (
        f'plan:\n  name: "{name}"\n  task: "t {name}"\n  status: {status}\n{more}'
        "available_tools:\n  - name: q\nactions:\n"
    )


def _rec(tag: str, note: str) -> str:
    return (
        '  - id: 1\n    tool: q\n    why: "record it"\n'
        f'    params: {{tag: {tag}, note: "{note}"}}\n'
    )


def _nest(path: str, pin: str, inputs: str = "") -> str:
    return f'  - id: 1\n    plan: {{path: {path}, hash: "{pin}"}}\n    why: "nested"\n' + (
        f"    inputs: {inputs}\n" if inputs else ""
    )


def _top(k: str, slug: str) -> str:
    return f"plans/{slug}{k}"


def _build(root: Path) -> Lab:
    server, posts = _receiver()
    (root / "sec.yml").write_text(f"TOK: {SECRET}\nTOK2: {OTHER}\n")
    py, qs = json.dumps(sys.executable), json.dumps(str(root / "q.py"))
    ran = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        extra=(
            "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
            f"secrets: {{file: {root / 'sec.yml'}}}\n"
            f'notify: ["http://127.0.0.1:{server.server_address[1]}/hook"]\n'
            "ui: {listen: 0}\n"
        ),
        tools=f"q: {{kind: exec, argv: [{py}, {qs}, '{{tag}}'], env: {{REC_LOG: {ran}}}}}\n",
    )
    (root / "q.py").write_text(QUIET)
    lab.git_date = "@1795900000 +0000"

    def pin(folder: str) -> str:
        out = lab.cli("hash", f"plans/{folder}", cwd=lab.repo).stdout
        found = re.search(r"sha256:[0-9a-f]{64}", out)
        assert found, out
        return found.group(0)

    for k, g in GUESSES.items():
        half = len(g) // 2
        # the children (drafts)
        kids = {
            "two": ('inputs: {g: "d"}\n', _rec(f"two{k}", "$<inputs.g>")),
            "pin": ('inputs: {g: "d"}\n', _rec(f"pin{k}", "$<inputs.g>")),
            "join": ('inputs: {g: "d"}\n', _rec(f"join{k}", "$<inputs.g>")),
            "pnamep": ('inputs: {g: "d"}\n', _rec(f"pnamep{k}", "$<inputs.g>")),
            "mixs": ('inputs: {g: "d"}\n', _rec(f"mixs{k}", "$<inputs.g>")),
            "mixkid": ('inputs: {h: "d", k: "d"}\n', _rec(f"mixkid{k}", "$<inputs.h>-$<inputs.k>")),
        }  # fmt: skip
        for slug, (more, body) in kids.items():
            lab.write(f"kid-{slug}{k}", _head(f"kid-{slug}{k}", more, "draft") + body)
        lab.write(f"kid-pname{k}", _head(g, "", "draft") + _rec(f"pname{k}", "$<plan.name>"))
        lab.write(g, _head(f"kid-kdir{k}", "", "draft") + _rec(f"kdir{k}", "x"))
        # the middles of the two-deep chains
        lab.write(
            f"mid-two{k}",
            _head(f"mid-two{k}", 'inputs: {g: "d"}\n', "draft")
            + _nest(f"plans/kid-two{k}", pin(f"kid-two{k}"), '{g: "$<inputs.g>"}'),
        )
        tops = {
            "two": ("", _nest(f"plans/mid-two{k}", pin(f"mid-two{k}"), f'{{g: "{g}"}}')),
            "pin": (f'inputs: {{a: "{g}"}}\n',
                    _nest(f"plans/kid-pin{k}", pin(f"kid-pin{k}"), '{g: "$<inputs.a>"}')),
            "join": (
                f'inputs: {{a: "{g[:half]}", b: "{g[half:]}"}}\n',
                _nest(f"plans/kid-join{k}", pin(f"kid-join{k}"), '{g: "$<inputs.a>$<inputs.b>"}'),
            ),
            "pnamep": ("", _nest(f"plans/kid-pnamep{k}", pin(f"kid-pnamep{k}"),
                                 '{g: "$<plan.name>"}')),
            "pname": ("", _nest(f"plans/kid-pname{k}", pin(f"kid-pname{k}"))),
            "mixs": ("", _nest(f"plans/kid-mixs{k}", pin(f"kid-mixs{k}"),
                               f'{{g: "{g}-$<secrets.TOK2>"}}')),
            "mixkid": ("", _nest(f"plans/kid-mixkid{k}", pin(f"kid-mixkid{k}"),
                                 f'{{h: "{g}", k: "$<secrets.TOK2>"}}')),
            "mixtop": ("", _rec(f"mixtop{k}", f"{g}-$<secrets.TOK2>")),
            "kdir": ("", _nest(f"plans/{g}", pin(g))),
        }  # fmt: skip
        for slug, (more, body) in tops.items():
            name = g if slug == "pnamep" else f"{slug}{k}"
            lab.write(f"{slug}{k}", _head(name, more) + body)
    lab.commit("agent plans")
    lab.run()
    rows = lab.status()
    for k in GUESSES:  # two deep: refused (one level only), nothing of it runs
        assert rows[_top(k, "two")]["status"] == "invalid", rows[_top(k, "two")]
        assert "E_SCHEMA_INVALID" in rows[_top(k, "two")]["reason"], rows[_top(k, "two")]
        for slug in SLUGS:
            plan = _top(k, slug)
            assert rows[plan]["status"] == "pending_approval", (plan, rows[plan])
            lab.set_status(plan.split("/", 1)[1], "approved")
    lab.commit("approve", ALICE)
    lab.run()
    server.shutdown()
    cfg = str(lab.config)
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    got: dict[str, dict[str, str]] = {k: {} for k in GUESSES}
    for k in GUESSES:
        calls: list[tuple[str, dict[str, Any]]] = []
        for slug in SLUGS:
            plan = _top(k, slug)
            got[k][f"{slug}-log"] = lab.git("show", f"HEAD:{plan}/EXECUTION_LOG.md", check=False)
            got[k][f"{slug}-show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
            got[k][f"{slug}-status"] = json.dumps(rows.get(plan), ensure_ascii=False)
            got[k][f"{slug}-notify"] = "\n".join(
                sorted(p for p in posts if json.loads(p)["plan"] == plan)
            )
            calls.append(("log", {"path": plan}))
        for slug, reply in zip(SLUGS, mcp(lab, calls), strict=True):
            got[k][f"{slug}-mcp-log"] = json.dumps(reply, ensure_ascii=False)
    for k, pages in _pages(lab).items():
        got[k].update(pages)
    lab.got = got  # type: ignore[attr-defined]
    lab.statuses = {p: r["status"] for p, r in rows.items()}  # type: ignore[attr-defined]
    lab.everything = "\n".join(posts) + lab.git("log", "-p", "--all")  # type: ignore[attr-defined]
    return lab


def _get(port: int, path: str) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=15) as resp:
            return resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return f"HTTP {err.code}: " + err.read().decode("utf-8", "replace")


def _pages(lab: Lab) -> dict[str, dict[str, str]]:
    """The reviewer's page and its JSON twin of each top plan, from one daemon."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=lab.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    out: dict[str, dict[str, str]] = {k: {} for k in GUESSES}
    lines: list[str] = []
    try:
        port = None
        while port is None:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                raise BenchError("the daemon never said where it listens: " + "".join(lines))
            lines.append(line)
            m = re.search(r'"endpoint": "ui\.listen", "address": "127\.0\.0\.1:(\d+)"', line)
            port = int(m.group(1)) if m else None
        for _ in range(80):  # the first snapshot names the plans
            if "plans/kdirc" in _get(port, "/api/"):
                break
            time.sleep(0.25)
        for k in GUESSES:
            for slug in SLUGS:
                plan = _top(k, slug)
                out[k][f"{slug}-page"] = _get(port, f"/plan/{plan}")
                out[k][f"{slug}-api"] = _get(port, f"/api/plan/{plan}")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-surface-nestoracle", _build)


def _norm(text: str, k: str) -> str:
    g = GUESSES[k]
    for spelled in (g, json.dumps(g)[1:-1]):
        text = text.replace(spelled, "GUESS")
    half = len(g) // 2
    text = text.replace(g[:half], "HALF1").replace(g[half:], "HALF2")
    text = re.sub(r"\b(kid-|mid-)?(" + "|".join(SLUGS) + ")" + k + r"\b", r"\1\2K", text)
    text = re.sub(r"[0-9a-f]{12,64}", "H", text)
    text = re.sub(r"\d+(\.\d+)? ?ms", "N ms", text)
    text = re.sub(r'"(duration_ms|id|waited)": [0-9.]+', r'"\1": N', text)
    return re.sub(r"duration_ms: \d+", "duration_ms: N", text)


IDS = [f"{slug}-{where}" for slug in SLUGS for where in WHERE]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_right_and_a_wrong_guess_are_answered_alike(lab: Lab, vid: str) -> None:
    s = _norm(lab.got["s"][vid], "s")  # type: ignore[attr-defined]
    c = _norm(lab.got["c"][vid], "c")  # type: ignore[attr-defined]
    assert "Traceback" not in s and "Traceback" not in c, s[-2000:]
    assert s.strip() and c.strip(), (vid, s[:500], c[:500])
    assert s.count("***") == c.count("***"), (s[:3000], c[:3000])


def test_the_plans_ran_as_approved_and_tok2_is_never_written(lab: Lab) -> None:
    tags = [c["argv"][0] for c in map(json.loads, lab.log.read_text().splitlines())]
    statuses = lab.statuses  # type: ignore[attr-defined]
    for k in GUESSES:
        for slug in SLUGS:
            assert tags.count(f"{slug}{k}") == 1, (slug, k, sorted(tags))
            assert statuses[_top(k, slug)] == "completed", (slug, statuses[_top(k, slug)])
        assert f"two{k}" not in tags
    assert OTHER not in lab.everything  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", ["mixs", "mixkid", "mixtop", "pname", "kdir"])
def test_the_authors_part_is_recorded_as_written_for_either_guess(lab: Lab, slug: str) -> None:
    # round 67's fix: built from parts, the literal as written and the secret's part ***
    shown = {"pname": '"note": "GUESS"', "kdir": '"plan": "plans/GUESS"'}
    for k in GUESSES:
        log = _norm(lab.got[k][f"{slug}-log"], k)  # type: ignore[attr-defined]
        assert shown.get(slug, '"note": "GUESS-***"') in log, log[-3000:]
