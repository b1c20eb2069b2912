"""Round 117, the surfaces given notify receivers that redirect, fail, hang or answer huge
bodies, tool errors written with line breaks and terminal controls, commit messages that
carry the controller's trailers, a quorum, the daemon under many plans and hostile entries,
a plan read mid-run, and odd repository states (a linked worktree on another branch, a
detached HEAD, a shallow clone) (atk117b).

Lab (one module-scoped build, three labs). ``main``: a local-mode plans repo driven by
``run --once`` whose ``notify:`` lists eight receivers in the test process, each on its own
loopback port (so the log's ``url`` names which): ``ok`` (200), ``r301``/``r302``/``r303``/
``r308`` (a redirect to a second server ``target``), ``e500`` (always 500), ``hang`` (never
answers) and ``huge`` (200 with a 200 MiB body); a rule ``plans/q`` needs 2 approvals. The
exec tool ``boom`` writes its ``msg`` to stderr and exits 1. Plans: ``f-nl``, ``f-cr``,
``f-esc``, ``f-ls`` (stderr with LF and forged trailers, CR, ESC CSI/OSC 8/BEL,
U+2028/U+2029/U+0085), approved by Alice, failing; ``ok`` approved by Alice in a commit whose
message carries ``Co-authored-by: Agent``, ``Approved-By: bob@...`` and ``Plan-Status:``;
``fk`` which the agent sets ``completed`` in a commit authored as ``plangate
<plangate@localhost>`` with the controller's trailers; ``q`` voted by Alice (``partial``),
then Bob. Then a pass with HEAD detached, and ``audit`` in a fresh and a ``--depth 1``
clone. ``wt``: a linked worktree (``git worktree add -b review``) where the agent commits an
edit of a frozen plan; the reviewer's CLI run there. ``daemon``: ``plangate run`` with page,
``/api/`` and ``/metrics``; 40 frozen plans, a symlinked plan folder, a 2 MiB PLAN.yml, a
duplicate-key plan, a FIFO in a plan folder, and ``hold`` (approved by Alice) whose tool
waits for a file: every surface asked while action 1 runs, then after.

Ids (127): ``<f>:{notify-text,notify-message,status-json,status-text,show,show-json,
show-json-error,mcp-log,mcp-log-error,mcp-status,trailers,audit}`` (4 x 12);
``recv:<kind>:<plan>-<event>`` (8 receivers x 4 events); ``ok``/``fk`` approver and forged
status checks (10); ``wt:*`` (6); ``odd:detached-{run,status,approve}``, shallow audit;
``many``/``bad:*``/``mid:*``/after (18); ``partial``/``quorum:*`` (9).

Seen (round 117, 127 ids, 105 passed and 22 xfailed in ~65 s wall on 2 busy cores). 22
broke, 5 classes:
**notify-redirect-post-lost-silently** (12 ids: ``recv:{r301,r302,r303}:*``): a receiver
answering ``301``/``302``/``303 Location: http://127.0.0.1:<target>/t`` gets every post; the
notifier follows the redirect as a ``GET`` with no body (the target saw 16 GETs, 0 POSTs) and
counts it delivered: no ``notify_failed``/``notify_dropped`` line for that URL, no retry.
docs/operations.md: "no post is lost without a log line". (``307``/``308`` are logged
``notify_failed ... HTTP 307``: held; the notifier also follows a redirect to any host.)
**notify-post-raw-terminal-controls** (2 ids: ``f-esc:notify-text``, ``f-esc:notify-message``):
a tool's stderr ``ESC[2J ESC]8;;https://evil.example BEL click ...`` reaches the ``fail``
post's ``text`` and ``message`` as raw ESC/BEL, while the fail commit, ``status``, ``show``
and EXECUTION_LOG.md write ``\\x1b``/``\\x07``; docs/operations.md says the post's message is
"the outcome commit's recorded form". (The JSON readers, ``status --json``, ``show --json``
and MCP, carry the raw value PLAN.yml holds in git: counted as held.)
**page-oversized-plan-misdiagnosed** (2 ids: ``bad:big-api``, ``bad:big-html``): a 2 MiB
regular ``plans/big/PLAN.yml``: the row (``/api/``, ``status``, MCP, ``show``) says
``E_PLAN_TOO_LARGE``, but ``/api/plan/plans/big`` lists ``problems: [{code: E_UNSAFE_PATH,
message: "no readable PLAN file"}]`` and the page says the same: a link/FIFO diagnosis for a
file that is only too large.
**status-running-false-mid-run** (2 ids: ``mid:status-json-running``,
``mid:mcp-status-running``): while ``hold``'s action 1 runs under the daemon, ``/api/plan``
shows ``progress: {running: ["1"]}`` but ``status --json`` and MCP ``status`` give the row
``running: false`` (status ``executing``); the field is not documented, the two surfaces
disagree on the same plan at the same moment.
**quorum-approvers-not-shown** (4 ids: ``quorum:partial-post-by``, ``start-post``,
``start-trailer``, ``status-approver``): ``plans/q`` needs two approvals; PLAN.yml records
``approval.approvals: [alice, bob]``, but the ``start`` post (``"by": "bob@ops.example.com"``,
``text`` "was approved by bob@ops.example.com"), the start commit's only ``Approved-By:``
trailer and ``status``'s ``approver`` name Bob alone; the ``partial`` post has no ``by`` at
all (docs/approvals.md lists ``by`` among a post's fields), so no notice says Alice voted.
Held: tool stderr with LF, CR, U+2028/U+2029/U+0085 is cut to its last line everywhere
alike (status, show, commit, post) and never adds a line or a trailer (git's
``%(trailers)`` of the fail commits are the controller's only); ESC is escaped in every
text view; ``Approved-By: bob``/``Co-authored-by`` in Alice's approval message change
nothing (Alice everywhere, audit valid); the agent's commit under the controller's name
with controller trailers is ``E_ILLEGAL_TRANSITION``, no run, no valid audit; 500/hang/huge
receivers are logged ``notify_failed``/``notify_dropped`` per plan and event or delivered,
``run --once`` exits 0; a detached HEAD answers ``E_GIT`` "HEAD is detached" with ``git
switch main`` for ``run``, ``status --json`` (the error shape) and ``approve``, committing
nothing; ``audit`` in a ``--depth 1`` clone refuses ``E_GIT`` with ``git fetch --unshallow``;
in a linked worktree ``status`` reads the watched branch, ``show`` marks the agent's edit
STALE and ``approve`` refuses ``E_PLAN_HASH_MISMATCH``; the daemon's page, ``/api/``,
``status`` and ``/metrics`` list all 40 plans beside the hostile entries, each coded; the
FIFO stops nothing; mid-run ``show --json``, MCP ``log`` and ``/metrics`` claim no outcome.
By hand, not in the module: ``reject -m no`` in the linked worktree commits the rejection on
branch ``review`` (``rejected plans/x in <sha> on review``, exit 0): it names the branch, and
main is untouched; an approval commit by Alice whose message carries ``Plan: plans/md``
refuses her approvals of the other plans in it ``E_APPROVAL_REPLAYED`` (round 4's binding).
Not tried: remote mode, Markdown-reading receivers (documented as unescaped), submodules,
the drain bound with many slow URLs under a daemon, MCP ``wait`` across a run.
"""

from __future__ import annotations

import http.server
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit_got, load_yaml, plan_text, until
from mcpkit import answers
from oraclekit import listening, page_text
from test_round2_execution_kit import shared

PY = sys.executable
BOOM = "import sys; sys.stderr.write(sys.argv[1]); sys.exit(1)"
CTL = ("plangate", "plangate@localhost")

FAILS = {
    "f-nl": "line1\nPlan: plans/other\nApproved-By: mallory@example.com\n\nplangate: complete x",
    "f-cr": "deploy broke\rplans/f-cr completed fine",
    "f-esc": "\x1b[2J\x1b]8;;https://evil.example\x07click\x1b]8;;\x07 \x1b[31mred",
    "f-ls": "a\u2028Approved-By: mallory@example.com\u2029b\x85c",
}
RECV = ["ok", "r301", "r302", "r303", "r308", "e500", "hang", "huge"]


def _boom(msg: str) -> str:
    return (
        "plan:\n  name: boom\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: boom}]\nactions:\n  - id: 1\n    tool: boom\n"
        f"    why: w\n    params: {{msg: {json.dumps(msg)}}}\n"
    )


def _server(kind: str, got: dict[str, list[str]], target: int = 0) -> Any:
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            got[kind].append(self.rfile.read(n).decode("utf-8", "replace"))
            if kind == "hang":
                time.sleep(40)
                return
            if kind.startswith("r3"):
                self.send_response(int(kind[1:]))
                self.send_header("Location", f"http://127.0.0.1:{target}/t")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            code = 500 if kind == "e500" else 200
            self.send_response(code)
            if kind == "huge":
                self.send_header("Content-Length", str(200 * 1024 * 1024))
                self.end_headers()
                try:
                    for _ in range(3200):
                        self.wfile.write(b"x" * 65536)
                except OSError:
                    pass
                return
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            got[kind + ":GET"].append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def _build(root: Path) -> Lab:
    got: dict[str, Any] = {}
    posts: dict[str, list[str]] = {k: [] for k in [*RECV, "target"]}
    posts.update({f"{k}:GET": [] for k in [*RECV, "target"]})
    target = _server("target", posts)
    servers = {"target": target}
    for k in RECV:
        servers[k] = _server(k, posts, target.server_address[1])
    ports = {k: s.server_address[1] for k, s in servers.items()}
    urls = [f"http://127.0.0.1:{ports[k]}/hook" for k in RECV]
    lab = Lab(
        root / "main",
        approval='rules:\n  - match: {paths: ["plans/q", "plans/q/**"]}\n'
        "    require: [{count: 2}]\n",
        extra=f"notify: {json.dumps(urls)}\n",
        tools=f"boom: {{kind: exec, argv: [{json.dumps(PY)}, '-c', {json.dumps(BOOM)}, "
        "'{msg}']}\n",
    )
    for k, msg in FAILS.items():
        lab.write(k, _boom(msg))
    lab.write("ok", plan_text("ok"))
    lab.write("fk", plan_text("fk"))
    lab.write("q", plan_text("q"))
    lab.commit("agent: plans")
    logs = [lab.run().stderr]
    for k in [*FAILS, "q"]:
        lab.set_status(k, "approved")
    lab.commit("alice: approve the boom plans and q", ALICE)
    lab.set_status("ok", "approved")
    lab.commit(
        "approve ok\n\nCo-authored-by: Agent <agent@example.com>\n"
        "Approved-By: bob@ops.example.com\nPlan-Status: completed",
        ALICE,
    )
    lab.set_status("fk", "completed")
    lab.commit(
        "plangate: complete plans/fk\n\nPlan: plans/fk\nPlan-Status: completed\n"
        "Approved-By: alice@example.com",
        CTL,
    )
    logs.append(lab.run().stderr)
    c = ["--config", str(lab.config)]
    got["q-partial"] = _drows(lab.cli("status", "--json", *c).stdout)["plans/q"]
    got["q-mcp"] = answers(lab, [("status", {})])[0]
    lab.set_status("q", "approved")
    lab.commit("bob: approve q", BOB)
    logs.append(lab.run().stderr)
    got["posts"] = posts
    got["ports"] = ports
    got["log"] = "\n".join(logs)
    c = ["--config", str(lab.config)]
    got["status-json"] = lab.cli("status", "--json", *c).stdout
    st = lab.cli("status", *c)
    got["status-text"] = st.stdout + st.stderr
    for k in [*FAILS, "ok", "fk"]:
        r = lab.cli("show", f"plans/{k}", "--json", *c, cwd=lab.repo)
        got[f"show-json:{k}"] = (r.returncode, r.stdout, r.stderr[-1500:])
        r = lab.cli("show", f"plans/{k}", *c, cwd=lab.repo)
        got[f"show:{k}"] = (r.returncode, r.stdout, r.stderr[-1500:])
    calls = [("status", {})] + [("log", {"path": f"plans/{k}"}) for k in [*FAILS, "ok", "fk"]]
    got["mcp"] = answers(lab, calls)
    got["rows"] = lab.log_rows()
    got["truth"] = {
        k: load_yaml(lab.git("show", f"HEAD:plans/{k}/PLAN.yml"))["execution"]["actions"][0][
            "error"
        ]["message"]
        for k in FAILS
    }
    got["audit"] = clone_audit_got(lab, root)
    got["shallow"] = clone_audit_got(lab, root, "--depth", "1", name="shallow", transport=True)
    got["trailers"] = {
        sha: lab.git("log", "-1", "--format=%(trailers:only,unfold)", sha)
        for sha in lab.git("rev-list", "HEAD").split()
    }
    for s in servers.values():
        s.shutdown()
    got["wt"] = _worktree(root / "wt")
    got["odd"] = _detached(lab)
    got["d"] = _daemon(root / "daemon")
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _worktree(root: Path) -> dict[str, Any]:
    """A lab whose reviewer works in a linked worktree on branch ``review``, where the agent
    changed the frozen plan ``x`` (``tag: EVIL``); every reader run there."""
    lab = Lab(root)
    lab.write("x", plan_text("x"))
    lab.commit("agent: plans")
    lab.run()
    wt = root / "linked"
    lab.git("worktree", "add", "-q", "-b", "review", str(wt))
    f = wt / "plans/x/PLAN.yml"
    f.write_text(f.read_text().replace('tag: "x"', 'tag: "EVIL"'))
    subprocess.run(["git", "commit", "-qam", "agent: edit"], cwd=wt, env=lab.env(AGENT), check=True)
    head = lab.head()
    got: dict[str, Any] = {}
    c = ["--config", str(lab.config)]
    asks = {
        "status": ["status", *c],
        "status-json": ["status", "--json", *c],
        "show": ["show", "plans/x", *c],
        "show-json": ["show", "plans/x", "--json", *c],
        "approve": ["approve", "plans/x"],
        "reject": ["reject", "plans/x", "-m", "no"],
    }
    for key, argv in asks.items():
        r = lab.cli(*argv, cwd=wt)
        got[key] = (r.returncode, r.stdout[-3000:], r.stderr[-3000:])
    got["unmoved"] = lab.head() == head
    got["review-head"] = lab.git("log", "-1", "--format=%an %s", "review")
    got["frozen"] = lab.git("show", "main:plans/x/PLAN.yml")
    lab.run()
    got["main-status"] = lab.git("show", "main:plans/x/PLAN.yml")
    return got


HOLD = (
    "import os, sys, time\n"
    "while not os.path.exists(sys.argv[1]):\n"
    "    time.sleep(0.05)\n"
    "print('{\"ok\": true}')\n"
)
MANY = 40


def _daemon(root: Path) -> dict[str, Any]:
    """A lab whose daemon serves the page, ``/api/`` and ``/metrics``: ``MANY`` frozen
    plans, hostile entries beside them (a symlinked plan folder, a 2 MiB plan, duplicate
    keys, a FIFO), and ``hold`` approved by Alice whose tool waits for a file: every surface
    asked while it runs, then after."""
    import os

    (root).mkdir(parents=True, exist_ok=True)
    (root / "hold.py").write_text(HOLD)
    release = root / "release"
    lab = Lab(
        root / "lab",
        extra='ui: {listen: 0}\nmetrics: {listen: "127.0.0.1:0"}\n',
        tools=f"hold: {{kind: exec, argv: [{json.dumps(PY)}, {json.dumps(str(root / 'hold.py'))}, "
        f"{json.dumps(str(release))}], timeout: 300}}\n",
    )
    for i in range(MANY):
        lab.write(f"p{i:02d}", plan_text(f"p{i:02d}"))
    lab.write(
        "hold",
        "plan:\n  name: hold\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: hold}]\nactions:\n  - id: 1\n    tool: hold\n    why: w\n"
        "  - id: 2\n    tool: hold\n    why: w2\n",
    )
    lab.write("big", plan_text("big") + "# " + "x" * (2 * 1024 * 1024) + "\n")
    lab.write("dup", plan_text("dup") + "plan:\n  name: again\n")
    (lab.repo / "plans/sym").symlink_to("p00")
    lab.commit("agent: plans")
    os.mkfifo(lab.repo / "plans/p01/fifo.yml")
    lab.run()
    lab.set_status("hold", "approved")
    lab.commit("alice: approve hold", ALICE)
    got: dict[str, Any] = {}
    c = ["--config", str(lab.config)]

    def row(plan: str) -> dict[str, Any]:
        out = lab.cli("status", "--json", *c).stdout
        return {r["plan"]: r for r in json.loads(out)}.get(plan, {})

    with listening(lab, lab.config, "plans/p39", names=("ui", "metrics")) as ports:
        got["running"] = until(
            lambda: '"running": [\n    "1"' in page_text(ports["ui"], "/api/plan/plans/hold"), 120
        )
        got["mid-status"] = lab.cli("status", "--json", *c).stdout
        got["mid-status-text"] = lab.cli("status", *c).stdout
        r = lab.cli("show", "plans/hold", "--json", *c, cwd=lab.repo)
        got["mid-show"] = (r.returncode, r.stdout, r.stderr[-1500:])
        got["mid-api"] = page_text(ports["ui"], "/api/")
        got["mid-api-plan"] = page_text(ports["ui"], "/api/plan/plans/hold")
        got["mid-metrics"] = page_text(ports["metrics"], "/metrics")
        got["mid-mcp"] = answers(lab, [("status", {}), ("log", {"path": "plans/hold"})])
        release.write_text("go")
        got["done"] = until(lambda: row("plans/hold").get("status") == "completed", 120)
        head = lab.head()
        until(lambda: head in page_text(ports["ui"], "/api/"), 60)
        got["api"] = page_text(ports["ui"], "/api/")
        got["page"] = page_text(ports["ui"], "/")
        got["pages"] = {
            k: page_text(ports["ui"], f"/api/plan/plans/{k}") for k in ("p00", "p39", "hold")
        }
        got["big-html"] = page_text(ports["ui"], "/plan/plans/big")
        got["bad-pages"] = {
            k: page_text(ports["ui"], f"/api/plan/plans/{k}") for k in ("big", "dup", "sym")
        }
        got["settled"] = until(
            lambda: (
                'plangate_plans{status="completed"} 1.0' in page_text(ports["metrics"], "/metrics")
            ),
            60,
        )
        got["metrics"] = page_text(ports["metrics"], "/metrics")
    r = lab.cli("show", "plans/big", *c, cwd=lab.repo)
    got["big-show"] = (r.returncode, r.stdout[-1500:], r.stderr[-1500:])
    got["status"] = lab.cli("status", "--json", *c).stdout
    got["heads"] = lab.git("show", "HEAD:plans/hold/PLAN.yml")
    got["calls"] = len(lab.calls("p00"))
    return got


def _detached(lab: Lab) -> dict[str, Any]:
    """The main lab's repo with HEAD detached at main: one pass, ``status``, ``approve``."""
    got: dict[str, Any] = {}
    lab.write("det", plan_text("det"))
    lab.commit("agent: det")
    lab.git("checkout", "-q", "--detach")
    r = lab.run(check=False)
    got["run"] = (r.returncode, r.stdout[-2000:], r.stderr[-3000:])
    r = lab.cli("status", "--json", "--config", str(lab.config))
    got["status"] = (r.returncode, r.stdout[-6000:], r.stderr[-2000:])
    head = lab.head()
    r = lab.cli("approve", "plans/ok", cwd=lab.repo)
    got["approve"] = (r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    got["unmoved"] = lab.head() == head
    got["main"] = lab.head("main")
    lab.git("checkout", "-q", "main")
    return got


def xf(cls: str, what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 117: {cls}: {what}")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r117-atk117b", _build)


CTRL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
FK = list(FAILS)
#: notify-post-raw-terminal-controls (f-esc:notify-text, f-esc:notify-message) and
#: notify-redirect-post-lost-silently (recv:r30x:*) were fixed the same day: their ids pass;
#: so were page-oversized-plan-misdiagnosed (bad:big-api, bad:big-html) and
#: status-running-false-mid-run (mid:status-json-running, mid:mcp-status-running) and
#: quorum-approvers-not-shown (quorum:*)
BROKEN: dict[str, Any] = {}


def _recorded(lab: Lab, key: str) -> str:
    """The error line the controller's fail commit of ``plans/<key>`` records."""
    for row in lab.got["rows"]:
        if row[3] == f"plangate: fail plans/{key}":
            return next(ln for ln in row[4].split("\n") if ln.startswith("E_"))
    raise AssertionError([r[3] for r in lab.got["rows"]][:20])


def _posts(lab: Lab, kind: str, key: str, event: str) -> list[dict[str, Any]]:
    return [
        d
        for d in map(json.loads, lab.got["posts"][kind])
        if d.get("plan") == f"plans/{key}" and d.get("event") == event
    ]


def _rows(lab: Lab) -> dict[str, Any]:
    return {r["plan"]: r for r in json.loads(lab.got["status-json"])}


def _mcp(lab: Lab, i: int) -> Any:
    res = lab.got["mcp"][i].get("result") or {}
    assert not res.get("isError"), res
    data = res.get("structuredContent")
    return json.loads(res["content"][0]["text"]) if data is None else data


# -- a tool's error written with line breaks and terminal controls -------------------------
@pytest.mark.parametrize("key", cases([f"{k}:notify-text" for k in FK], FK, BROKEN))
def test_fail_post_text_is_one_plain_line(lab: Lab, key: str) -> None:
    """The ``fail`` post's ``text`` is one line with no terminal control, the plan named."""
    posts = _posts(lab, "ok", key, "fail")
    assert posts, [json.loads(p)["event"] for p in lab.got["posts"]["ok"]]
    for post in posts:
        assert f"plans/{key}" in post["text"] and "E_TOOL_FAILED" in post["text"], post
        assert not CTRL.search(post["text"]) and "\n" not in post["text"], repr(post["text"])


@pytest.mark.parametrize("key", cases([f"{k}:notify-message" for k in FK], FK, BROKEN))
def test_fail_post_message_is_the_recorded_one(lab: Lab, key: str) -> None:
    """The post's ``message`` is the fail commit's recorded error (docs/operations.md: "the
    message in the outcome commit's recorded form")."""
    for post in _posts(lab, "ok", key, "fail"):
        assert post["message"] == _recorded(lab, key), (post["message"], _recorded(lab, key))


@pytest.mark.parametrize("key", cases([f"{k}:status-json" for k in FK], FK, BROKEN))
def test_fail_status_json_names_the_recorded_error(lab: Lab, key: str) -> None:
    """``status --json`` has the plan ``failed``, approved by Alice, its reason holding the
    error PLAN.yml in git records (JSON carries the value; the text views escape it)."""
    row = _rows(lab)[f"plans/{key}"]
    assert (row["status"], row["approver"]) == ("failed", "alice@example.com"), row
    truth = lab.got["truth"][key]
    assert (row["reason"] or "").endswith(truth), (row["reason"], truth)


@pytest.mark.parametrize("key", cases([f"{k}:status-text" for k in FK], FK, BROKEN))
def test_fail_status_text_prints_no_control(lab: Lab, key: str) -> None:
    """``status`` (text) shows the row with the recorded error on the line below it, and
    prints no control character but the line ends."""
    text = lab.got["status-text"]
    assert not CTRL.search(text.replace("\n", "")), repr(text)[:800]
    lines = text.split("\n")
    i = next(i for i, ln in enumerate(lines) if f" plans/{key} " in ln)
    assert lines[i].startswith("failed") and "alice@example.com" in lines[i], lines[i]
    assert _recorded(lab, key) in lines[i + 1], (lines[i + 1], _recorded(lab, key))


@pytest.mark.parametrize("key", cases([f"{k}:show" for k in FK], FK, BROKEN))
def test_fail_show_text(lab: Lab, key: str) -> None:
    """``show`` prints the run's error as recorded, with no raw control."""
    rc, out, err = lab.got[f"show:{key}"]
    assert rc == 0 and "Traceback" not in err, err
    assert not CTRL.search(out.replace("\n", "")), repr(out)[-800:]
    assert "error: " + _recorded(lab, key).split("action 1: ")[-1] in out, out[-800:]


@pytest.mark.parametrize("key", cases([f"{k}:show-json" for k in FK], FK, BROKEN))
def test_fail_show_json_agrees_with_status(lab: Lab, key: str) -> None:
    """``show --json`` has the frozen hash ``status`` names and the run ``failed``."""
    rc, out, err = lab.got[f"show-json:{key}"]
    assert rc == 0, err
    data = json.loads(out)
    row = _rows(lab)[f"plans/{key}"]
    assert data["frozen"]["hash"] == row["hash"], (data["frozen"], row["hash"])
    assert data["execution"]["status"] == "failed", data["execution"]


@pytest.mark.parametrize("key", cases([f"{k}:mcp-log" for k in FK], FK, BROKEN))
def test_fail_mcp_log_agrees(lab: Lab, key: str) -> None:
    """MCP ``log`` answers the plan ``failed`` with the recorded error."""
    data = _mcp(lab, 1 + FK.index(key))
    text = json.dumps(data, ensure_ascii=False)
    assert data.get("status") == "failed", text[:800]
    assert _recorded(lab, key).split(": ", 1)[0] in text, text[:800]


@pytest.mark.parametrize("key", cases([f"{k}:mcp-status" for k in FK], FK, BROKEN))
def test_fail_mcp_status_reason_as_recorded(lab: Lab, key: str) -> None:
    """MCP ``status`` gives the plan's reason exactly as ``status --json`` does."""
    data = _mcp(lab, 0)
    rows = data.get("plans", data) if isinstance(data, dict) else data
    rows = {r["plan"]: r for r in (rows["result"] if isinstance(rows, dict) else rows)}
    row = rows[f"plans/{key}"]
    assert row.get("reason") == _rows(lab)[f"plans/{key}"]["reason"], row


def _strings(data: Any) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in _strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in _strings(v)]
    return []


@pytest.mark.parametrize("key", cases([f"{k}:show-json-error" for k in FK], FK, BROKEN))
def test_fail_show_json_error_as_recorded(lab: Lab, key: str) -> None:
    """``show --json``'s action error is the one PLAN.yml in git records."""
    data = json.loads(lab.got[f"show-json:{key}"][1])
    err = data["execution"]["actions"][0]["error"]["message"]
    assert err == lab.got["truth"][key], (err, lab.got["truth"][key])


@pytest.mark.parametrize("key", cases([f"{k}:mcp-log-error" for k in FK], FK, BROKEN))
def test_fail_mcp_log_error_is_gits(lab: Lab, key: str) -> None:
    """MCP ``log`` of the run carries the action error PLAN.yml in git records."""
    data = _mcp(lab, 1 + FK.index(key))
    assert any(lab.got["truth"][key] in x for x in _strings(data)), str(data)[:900]


@pytest.mark.parametrize("key", cases([f"{k}:trailers" for k in FK], FK, BROKEN))
def test_fail_commit_trailers_are_the_controllers(lab: Lab, key: str) -> None:
    """The fail commit's trailers (as git parses them) are the controller's own: the plan,
    its hash, ``failed``, Alice; none the tool wrote (``Approved-By: mallory``)."""
    sha = next(r[0] for r in lab.got["rows"] if r[3] == f"plangate: fail plans/{key}")
    trailers = lab.got["trailers"][sha]
    assert f"Plan: plans/{key}\n" in trailers and "Plan-Status: failed" in trailers, trailers
    assert "mallory" not in trailers and "Approved-By: alice@example.com" in trailers, trailers
    assert trailers.count("Plan: ") == 1, trailers


@pytest.mark.parametrize("key", cases([f"{k}:audit" for k in FK], FK, BROKEN))
def test_fail_audit_valid(lab: Lab, key: str) -> None:
    """``audit --json`` in a fresh clone calls the run's approval valid."""
    assert f"plans/{key}" in lab.got["audit"]["valid"], lab.got["audit"]


# -- receivers that redirect, fail, hang or answer huge bodies ------------------------------
EVENTS = [("f-nl", "awaiting-approval"), ("f-nl", "start"), ("f-nl", "fail"), ("ok", "complete")]
RIDS = [f"recv:{k}:{p}-{e}" for k in RECV for p, e in EVENTS]
RVALS = [(k, p, e) for k in RECV for p, e in EVENTS]


@pytest.mark.parametrize(("kind", "key", "event"), cases(RIDS, RVALS, BROKEN))
def test_every_post_arrives_or_is_logged(lab: Lab, kind: str, key: str, event: str) -> None:
    """Each event reaches the receiver (its JSON body at the URL or where it redirects), or
    the controller's log says it was not delivered there (``notify_failed`` or
    ``notify_dropped`` naming that receiver's port, the plan and the event): never lost in
    silence (docs/operations.md)."""
    port = lab.got["ports"][kind]
    delivered = kind in ("ok", "huge") and _posts(lab, kind, key, event)
    if kind.startswith("r3"):
        delivered = any(
            json.loads(b).get("event") == event for b in lab.got["posts"]["target"] if b
        )
    told = [
        ln
        for ln in lab.got["log"].split("\n")
        if re.search(r"notify_(failed|dropped)", ln)
        and f":{port}" in ln
        and f'"plan": "plans/{key}"' in ln
        and f'"notice": "{event}"' in ln
    ]
    assert delivered or told, (kind, key, event, len(lab.got["posts"][kind]))
    assert "Traceback" not in lab.got["log"]


# -- approvers, trailers, forged statuses ------------------------------------------------------
def _start_trailers(lab: Lab, plan: str) -> str:
    """The trailers of ``plan``'s start: a one-plan ``plangate: start <plan>`` commit's, or
    its ``Plan:`` group in a batched start (under load a pass starts several plans in one
    commit)."""
    for sha, _name, _email, subject, body in lab.got["rows"]:
        if subject == f"plangate: start {plan}":
            return str(lab.got["trailers"][sha])
        if subject.startswith("plangate: ") and f"Plan: {plan}\n" in body + "\n":
            group = (body + "\n").split(f"Plan: {plan}\n", 1)[1].split("\nPlan: ", 1)[0]
            if "Plan-Event: start" in group:
                return group
    raise AssertionError(f"no start of {plan}")


def test_ok_status_approver_is_alice(lab: Lab) -> None:
    """Alice's approval commit carries ``Approved-By: bob`` and ``Co-authored-by: Agent``:
    ``status`` names Alice, the run completed."""
    row = _rows(lab)["plans/ok"]
    assert (row["status"], row["approver"]) == ("completed", "alice@example.com"), row


def test_ok_show_approver_is_alice(lab: Lab) -> None:
    """``show`` names Alice as the approver, never Bob."""
    _rc, out, _err = lab.got["show:ok"]
    assert "by alice@example.com" in out and "bob@" not in out, out[:800]


def test_ok_mcp_status_agrees(lab: Lab) -> None:
    """MCP ``status`` has the row ``status`` has: completed, Alice, the same hash."""
    data = _mcp(lab, 0)
    rows = data.get("plans", data) if isinstance(data, dict) else data
    rows = {r["plan"]: r for r in (rows["result"] if isinstance(rows, dict) else rows)}
    cli = _rows(lab)
    for k in [*FK, "ok", "fk"]:
        m, c = rows[f"plans/{k}"], cli[f"plans/{k}"]
        assert (m["status"], m["approver"], m["hash"]) == (c["status"], c["approver"], c["hash"])


def test_ok_start_trailer_names_alice(lab: Lab) -> None:
    """The start commit's ``Approved-By:`` trailer is Alice, not the approval message's Bob."""
    trailers = _start_trailers(lab, "plans/ok")
    assert "Approved-By: alice@example.com" in trailers and "bob@" not in trailers, trailers


def test_ok_posts_name_alice(lab: Lab) -> None:
    """The ``start`` post names Alice in ``by`` and ``text``."""
    posts = _posts(lab, "ok", "ok", "start")
    assert posts and all(p["by"] == "alice@example.com" for p in posts), posts
    assert all("bob@" not in p["text"] for p in posts), posts


def test_ok_audit_valid(lab: Lab) -> None:
    """``audit`` in a fresh clone calls the run of ``plans/ok`` valid."""
    assert "plans/ok" in lab.got["audit"]["valid"], lab.got["audit"]


def test_fk_status_ignores_the_forged_completion(lab: Lab) -> None:
    """The agent's commit under the controller's name, with controller trailers, setting
    ``completed``: ``status`` keeps the plan pending, no approver, ``E_ILLEGAL_TRANSITION``."""
    row = _rows(lab)["plans/fk"]
    assert row["status"] == "pending_approval" and row["approver"] is None, row
    assert "E_ILLEGAL_TRANSITION" in json.dumps(row), row


def test_fk_mcp_log_has_no_run(lab: Lab) -> None:
    """MCP ``log`` of ``plans/fk`` has no run and not the forged status."""
    data = _mcp(lab, 1 + len(FK) + 1)
    assert not data.get("execution_log") and data.get("status") != "completed", data


def test_fk_audit_no_valid_run(lab: Lab) -> None:
    """``audit`` counts no valid run of ``plans/fk``."""
    assert "plans/fk" not in lab.got["audit"]["valid"], lab.got["audit"]


def test_fk_not_run(lab: Lab) -> None:
    """Nothing ran for ``plans/fk`` (the recorder never saw it)."""
    assert not lab.calls("fk"), lab.calls("fk")


# -- a linked worktree on another branch -------------------------------------------------------
def test_wt_status_reads_the_watched_branch(lab: Lab) -> None:
    """``status`` run in a linked worktree on ``review`` shows the watched branch's row:
    pending with main's frozen hash."""
    w = lab.got["wt"]
    rc, out, _err = w["status-json"]
    row = {r["plan"]: r for r in json.loads(out)}["plans/x"]
    assert rc == 0 and row["status"] == "pending_approval", row
    assert row["hash"] in w["frozen"], row


def test_wt_status_text(lab: Lab) -> None:
    """``status`` (text) there names the same hash."""
    w = lab.got["wt"]
    rc, out, _err = w["status"]
    row = json.loads(w["status-json"][1])[0]
    assert rc == 0 and row["hash"][7:19] in out, out


def test_wt_show_flags_stale(lab: Lab) -> None:
    """``show`` there of the agent's edited file says it is not what was frozen."""
    rc, out, _err = lab.got["wt"]["show"]
    assert rc == 0 and "STALE" in out and "EVIL" in out, out[:800]


def test_wt_show_json_flags_stale(lab: Lab) -> None:
    """``show --json`` there: the hash differs from ``frozen.hash``, STALE said."""
    data = json.loads(lab.got["wt"]["show-json"][1])
    assert data["hash"] != data["frozen"]["hash"] and "STALE" in data["freeze_state"], data


def test_wt_approve_refused(lab: Lab) -> None:
    """``approve`` there of the edited plan is refused with a code and a remedy, and main
    does not move."""
    w = lab.got["wt"]
    rc, _out, err = w["approve"]
    assert rc != 0 and "E_PLAN_HASH_MISMATCH" in err and "remedy:" in err, err
    assert w["unmoved"], w


def test_wt_main_untouched(lab: Lab) -> None:
    """After a pass, main's plan is still pending: no commit made in the linked worktree
    approved or rejected it."""
    assert "status: pending_approval" in lab.got["wt"]["main-status"]


# -- odd repository states -----------------------------------------------------------------------
ODD = ["run", "status", "approve"]


@pytest.mark.parametrize("key", cases([f"odd:detached-{k}" for k in ODD], ODD, {}))
def test_detached_head_coded(lab: Lab, key: str) -> None:
    """With HEAD detached, ``run --once``, ``status --json`` and ``approve`` answer
    ``E_GIT`` with a remedy naming the branch, commit nothing, no traceback."""
    o = lab.got["odd"]
    rc, out, err = o[key]
    assert rc == 2 and "E_GIT" in err and "detached" in err, err
    assert "git switch main" in err and "Traceback" not in err, err
    assert o["unmoved"]
    if key == "status":
        assert json.loads(out)["code"] == "E_GIT"


def test_shallow_clone_audit_coded(lab: Lab) -> None:
    """``audit --json`` in a ``--depth 1`` clone refuses ``E_GIT`` with the unshallow remedy
    and calls nothing valid."""
    s = lab.got["shallow"]
    assert s["rc"] == 2 and s["report"].get("code") == "E_GIT", s
    assert "unshallow" in s["report"].get("remedy", "") and not s["valid"], s


# -- the daemon's surfaces under many plans, hostile entries among them, and mid-run ---------
def _d(lab: Lab) -> dict[str, Any]:
    return lab.got["d"]


def _drows(text: str) -> dict[str, Any]:
    return {r["plan"]: r for r in json.loads(text)}


def test_many_api_lists_every_plan(lab: Lab) -> None:
    """``/api/`` counts every plan folder (40 pending, the completed one, the hostile three)
    and lists each pending plan."""
    api = json.loads(_d(lab)["api"])
    assert api["counts"].get("pending_approval") == MANY, api["counts"]
    assert api["counts"].get("completed") == 1 and api["total"] == MANY + 4, api["counts"]
    listed = {p["plan"] for sec in api["sections"] for p in sec["plans"]}
    assert all(f"plans/p{i:02d}" in listed for i in range(MANY)), sorted(listed)[:5]


def test_many_page_lists_every_plan(lab: Lab) -> None:
    """The page names every pending plan (one hostile entry stops no other row)."""
    page = _d(lab)["page"]
    assert not page.startswith("HTTP "), page[:300]
    missing = [i for i in range(MANY) if f"plans/p{i:02d}" not in page]
    assert not missing, missing


def test_many_status_lists_every_plan(lab: Lab) -> None:
    """``status --json`` has every plan, the hostile entries coded."""
    rows = _drows(_d(lab)["status"])
    assert all(f"plans/p{i:02d}" in rows for i in range(MANY))
    assert rows["plans/big"]["problem"]["code"] == "E_PLAN_TOO_LARGE", rows["plans/big"]
    assert rows["plans/dup"]["problem"]["code"] == "E_YAML_PARSE", rows["plans/dup"]
    assert "E_UNSAFE_PATH" in (rows["plans/sym"]["reason"] or ""), rows["plans/sym"]


def test_many_metrics_agree_with_api(lab: Lab) -> None:
    """``/metrics`` counts the plans by status as ``/api/`` does, once settled."""
    d = _d(lab)
    assert d["settled"], d["metrics"][:800]
    api = json.loads(d["api"])["counts"]
    for status, n in api.items():
        line = f'plangate_plans{{status="{status}"}} {float(n)}'
        assert line in d["metrics"], (line, d["metrics"][:1200])


BAD = ["big", "dup", "sym"]


@pytest.mark.parametrize("key", cases([f"bad:{k}-api" for k in BAD], BAD, BROKEN))
def test_bad_entry_api_names_its_own_code(lab: Lab, key: str) -> None:
    """``/api/plan/<path>`` of a hostile entry answers its row's code, and every problem it
    lists carries that same code (the truth status gives), no other diagnosis."""
    data = json.loads(_d(lab)["bad-pages"][key])
    code = data["row"]["code"]
    want = {"big": "E_PLAN_TOO_LARGE", "dup": "E_YAML_PARSE", "sym": "E_UNSAFE_PATH"}[key]
    assert code == want, data["row"]
    assert data["problems"] and {p["code"] for p in data["problems"]} == {want}, data["problems"]


@pytest.mark.parametrize("key", cases(["bad:big-html"], ["big"], BROKEN))
def test_big_page_names_the_size(lab: Lab, key: str) -> None:
    """The page of the oversized plan names ``E_PLAN_TOO_LARGE`` and not ``E_UNSAFE_PATH``
    (it is a regular file, not a link or a FIFO)."""
    page = _d(lab)["big-html"]
    assert "E_PLAN_TOO_LARGE" in page and "E_UNSAFE_PATH" not in page, page[-1500:]


def test_big_show_coded(lab: Lab) -> None:
    """``show`` of the oversized plan answers ``E_PLAN_TOO_LARGE`` with its file and a remedy
    (split the plan or raise the limit), exit 1 or 2, no traceback."""
    rc, out, err = _d(lab)["big-show"]
    text = out + err
    assert rc in (1, 2) and "E_PLAN_TOO_LARGE" in text and "split the plan" in text, text[-800:]
    assert "Traceback" not in text


def _mid_hold(lab: Lab) -> dict[str, Any]:
    return _drows(_d(lab)["mid-status"])["plans/hold"]


def test_mid_api_shows_action_running(lab: Lab) -> None:
    """While action 1 of ``hold`` runs, ``/api/plan`` shows it executing, approved by Alice,
    action 1 running."""
    d = _d(lab)
    assert d["running"], d["mid-api-plan"][:600]
    row = json.loads(d["mid-api-plan"])["row"]
    assert (row["status"], row["approver"]) == ("executing", "alice@example.com"), row
    assert row["progress"]["running"] == ["1"], row


def test_mid_status_json_executing(lab: Lab) -> None:
    """``status --json`` mid-run: executing, Alice, the frozen hash ``/api/`` names."""
    row = _mid_hold(lab)
    api = json.loads(_d(lab)["mid-api-plan"])["row"]
    assert (row["status"], row["approver"], row["hash"]) == (
        "executing",
        "alice@example.com",
        api["hash"],
    ), row


MID = ["status-json", "mcp-status"]


@pytest.mark.parametrize("key", cases([f"mid:{m}-running" for m in MID], MID, BROKEN))
def test_mid_running_flag_agrees_with_api(lab: Lab, key: str) -> None:
    """The row's ``running`` agrees with ``/api/``'s progress while action 1 runs: the same
    plan is running on every surface."""
    d = _d(lab)
    if key == "status-json":
        row = _mid_hold(lab)
    else:
        data = json.loads(d["mid-mcp"][0]["result"]["content"][0]["text"])
        row = {r["plan"]: r for r in data["plans"]}["plans/hold"]
    assert row["status"] == "executing", row
    assert row["running"], {k: row[k] for k in ("status", "running", "waiting", "reason")}


def test_mid_metrics_executing(lab: Lab) -> None:
    """``/metrics`` mid-run counts one executing plan and one start."""
    m = _d(lab)["mid-metrics"]
    assert 'plangate_plans{status="executing"} 1.0' in m and "plangate_plans_started_total 1.0" in m


def test_mid_show_json(lab: Lab) -> None:
    """``show --json`` mid-run: the approval by Alice, the frozen hash, no outcome claimed."""
    rc, out, err = _d(lab)["mid-show"]
    assert rc == 0, err
    data = json.loads(out)
    assert data["approval"]["by"] == "alice@example.com", data["approval"]
    assert data["frozen"]["hash"] == _mid_hold(lab)["hash"]
    assert (data.get("execution") or {}).get("status") in (None, "executing"), data["execution"]


def test_mid_mcp_log_no_outcome(lab: Lab) -> None:
    """MCP ``log`` mid-run: executing, no outcome claimed."""
    data = json.loads(_d(lab)["mid-mcp"][1]["result"]["content"][0]["text"])
    assert data["status"] == "executing" and not data.get("execution_log"), data


def test_after_completed_everywhere(lab: Lab) -> None:
    """After the release: ``status --json``, ``/api/plan`` and the file in git say completed,
    approved by Alice."""
    d = _d(lab)
    assert d["done"]
    row = _drows(d["status"])["plans/hold"]
    api = json.loads(d["pages"]["hold"])["row"]
    assert row["status"] == api["status"] == "completed", (row["status"], api["status"])
    assert row["approver"] == api["approver"] == "alice@example.com"
    assert "status: completed" in d["heads"]


def test_fifo_did_not_stop_the_pass(lab: Lab) -> None:
    """The FIFO in ``plans/p01`` stopped nothing: ``p01`` is frozen and pending, nothing ran
    but ``hold``."""
    d = _d(lab)
    row = _drows(d["status"])["plans/p01"]
    assert row["status"] == "pending_approval" and row["hash"], row
    assert d["calls"] == 0


# -- a quorum's partial approval --------------------------------------------------------------
def test_partial_post_missing_agrees_with_status(lab: Lab) -> None:
    """The ``partial`` post after Alice's vote on ``plans/q`` (rule: 2 approvals): its
    ``missing`` is what ``status --json`` says is missing, the plan pending."""
    posts = _posts(lab, "ok", "q", "partial")
    row = lab.got["q-partial"]
    assert posts, [json.loads(p)["event"] for p in lab.got["posts"]["ok"]]
    assert row["status"] == "pending_approval", row
    for post in posts:
        assert post["missing"] and post["missing"] in json.dumps(row), (post["missing"], row)


QUORUM = ["partial-post-by", "start-post", "start-trailer", "status-approver"]


@pytest.mark.parametrize("key", cases([f"quorum:{q}" for q in QUORUM], QUORUM, BROKEN))
def test_quorum_surfaces_name_every_approver(lab: Lab, key: str) -> None:
    """``plans/q`` needs two approvals; Alice voted, then Bob. Every surface naming who
    approved names whom the run rests on, as PLAN.yml's ``approval.approvals`` does: the
    ``partial`` post names Alice's counted vote (docs list ``by`` among the post's fields);
    the ``start`` post, the start commit's trailers and ``status``'s approver name both."""
    both = ("alice@example.com", "bob@ops.example.com")
    if key == "partial-post-by":
        posts = _posts(lab, "ok", "q", "partial")
        assert posts and all("alice@example.com" in json.dumps(p) for p in posts), posts
        return
    if key == "start-post":
        said = json.dumps(_posts(lab, "ok", "q", "start"))
    elif key == "start-trailer":
        said = _start_trailers(lab, "plans/q")
    else:
        row = _rows(lab)["plans/q"]
        assert row["status"] == "completed", row
        said = str(row["approvers"])  # fix117s: `approver` stays the one that met the policy
    assert all(who in said for who in both), said


def test_partial_text_one_line(lab: Lab) -> None:
    """The ``partial`` post's ``text`` is one plain line naming the plan and what is missing."""
    for post in _posts(lab, "ok", "q", "partial"):
        assert "plans/q" in post["text"] and not CTRL.search(post["text"]), post["text"]
        assert "\n" not in post["text"], post["text"]


def test_partial_mcp_agrees(lab: Lab) -> None:
    """MCP ``status`` after the partial vote: the row ``status --json`` has."""
    data = json.loads(lab.got["q-mcp"]["result"]["content"][0]["text"])
    row = {r["plan"]: r for r in data["plans"]}["plans/q"]
    cli = lab.got["q-partial"]
    assert (row["status"], row["reason"], row["approver"]) == (
        cli["status"],
        cli["reason"],
        cli["approver"],
    ), row


def test_quorum_ran_once_after_both(lab: Lab) -> None:
    """``plans/q`` ran once, only after Bob's vote: one ``start`` post, completed."""
    assert len(_posts(lab, "ok", "q", "start")) == 1
    assert _rows(lab)["plans/q"]["status"] == "completed"
    assert len(lab.calls("q")) == 1, lab.calls("q")


def test_quorum_audit_valid(lab: Lab) -> None:
    """``audit`` in a fresh clone calls the quorum run valid."""
    assert "plans/q" in lab.got["audit"]["valid"], lab.got["audit"]
