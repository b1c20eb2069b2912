"""Round 116, the surfaces given plan paths, tool errors and plan text written in a chat
service's own markup, controllers that exit with posts queued, and working trees that hide
part of the branch (a sparse checkout, index bits set by the agent) (atk116b).

The notify post's ``text`` is, by docs/approvals.md ("Notifications"), "a one-line summary,
so the same body is a Slack incoming-webhook message"; every other reader of the same plan
is asked beside it: ``status`` (text and ``--json``), ``show --json``, the controller's
commit subjects and trailers, MCP ``status``/``log`` (raw JSON-RPC, ``mcpkit``), the
daemon's page, ``/api/`` and ``/metrics``, ``audit --json`` in a fresh clone.

Lab (one module-scoped build, five small labs): ``main``, a local-mode plans repo whose
daemon (``plangate run``, page and metrics on loopback) posts ``notify`` to a receiver in the
test process; an exec tool ``boom`` writes its ``msg`` to stderr and exits 1. With the daemon
running the agent commits one plan per variant (an ``awaiting-approval`` post each) and two
plans already ``completed``/``executing``; Mallory's approval of two is refused (``refuse``);
Alice approves the ``ok-*``, ``f-*`` and ``v-check`` plans (``start``, ``complete``,
``fail``). ``once`` and ``sigterm``: a receiver that answers each post after 0.5 s (healthy,
slow) and 12 plans frozen by one ``run --once`` / by a daemon then SIGTERMed after the first
post. ``sparse``: ``git sparse-checkout set plans/a notes`` after ``plans/b/out`` was frozen;
the agent's ``plans/b/new`` pulled in and frozen by a pass. ``bits``: two frozen plans whose
file the agent edits (``tag: EVIL``) and hides with ``git update-index --assume-unchanged`` /
``--skip-worktree`` in the shared ``.git``.

Ids (183):
* ``<variant>:<surface>`` (14 variants x 10 surfaces): variants ``n-channel``
  (``plans/n-channel<!channel>``), ``n-here``, ``n-everyone``, ``n-user`` (``<@U024BE7LH>``),
  ``n-group`` (``<!subteam^S0123>``), ``n-link`` (``<mailto:ops@evil.example|Approve now>``),
  ``n-entity`` (``&lt;b&gt;``), ``n-amp`` (``&amp;``), ``n-plain`` (control), ``ok-here``,
  ``ok-link`` (approved, run), ``f-channel``, ``f-link`` (a tool's stderr in markup),
  ``v-check`` (a ``verify`` whose expected value, the author's text, is ``<!channel> ...``);
  surfaces ``notify-plan``, ``notify-text``, ``status-json``, ``status-text``, ``show-json``,
  ``subject`` (subject or batch group and ``Plan:`` trailer), ``mcp-status``, ``mcp-log``,
  ``page`` (HTML-escaped), ``api``.
* ``<f>:error-agree`` (3), ``<ran>:approver-agree`` (5), ``<ran>:audit`` (5): one error text,
  one approver and a valid audit on every surface.
* ``z-fake-{completed,executing}:{metrics,status,api,mcp-log}`` (8): statuses the agent
  forged are counted and shown as no run.
* ``once:awaiting-posts``, ``sigterm:awaiting-posts``.
* ``sparse:{show,show-file,show-json,show-config,validate,hash,freeze-check}``,
  ``sparse:{approve,reject,abort}``, ``test_sparse_status_and_mcp_agree_with_git``.
* ``bits:{au,sw}-show-stale``, ``-approve-refused``, ``-approve-remedy``;
  ``dirty:{approve,reject,abort}`` (a plain uncommitted edit in the bits lab).

Seen (round 116, 183 ids, 155 passed and 28 xfailed in ~65 s wall on 2 busy cores). 28
broke, 5 classes:
**notify-text-chat-markup** (13 ids: ``<k>:notify-text`` for every variant but
``n-plain``): the post's ``text`` writes the plan path, a tool's error and the author's
expected value as they are. Posted: ``"text": "plangate: plans/n-channel<!channel> is waiting
for approval (...)"``; ``"plangate: plans/f-link failed: E_TOOL_FAILED: boom: ... exited with
status 1: see <https://evil.example/approve|plans/prod rollback approved>"``;
``"plangate: plans/v-check failed: E_VERIFY_FAILED: action 1: verify does not hold: $.json.ok
is true (expected equals \"<!channel> rollback approved\")"``.
Read by Slack (the receiver the docs name), ``<!channel>``/``<!here>``/``<!everyone>``/
``<!subteam^..>``/``<@U..>`` notify the whole channel or a person, ``<url|label>`` is a link
showing only its label (an agent's "plans/prod rollback approved" linking anywhere), and
``&lt;b&gt;`` shows ``plans/n-ent<b>``, a path that is not in git. Slack asks senders to
escape ``&``, ``<``, ``>`` in ``text``. The ``plan``/``message`` fields, ``status``, ``show``,
MCP, the page (``&lt;!channel&gt;``), ``/api/`` and the commits all agree with git.
**exit-drops-notify-silently** (2 ids: ``once:awaiting-posts``, ``sigterm:awaiting-posts``):
``run --once`` that froze 12 plans exits 0 after ~2 s; a healthy endpoint answering each post
in 0.5 s got 1 of 12 ``awaiting-approval`` posts (1 or 2 at 0.2 s); a daemon SIGTERMed after
the first post got 2 of 12 (``daemon.stopped`` logged). Neither logs ``notify_dropped`` or
``notify_failed`` (docs/operations.md: endpoints that are down "only delay or drop posts
(``notify_failed``, ``notify_dropped`` in the log)"); the approvers are never told of 10 or
11 plans. (Without the delay, 3 of 13 arrived from a plain ``run --once`` by hand.)
**sparse-absent-plan-misdiagnosed** (7 ids: ``sparse:show``, ``show-file``, ``show-json``,
``show-config``, ``validate``, ``hash``, ``freeze-check``): a plan on the branch that the
sparse checkout left out: ``E_USAGE: plans/b/out: no such plan file``, remedy "give a PLAN.yml
path" (also for ``plans/b/out/PLAN.yml``), while ``status`` lists it ``pending_approval`` and
``approve`` answers "is on the branch but not in this working tree (a sparse checkout left it
out ...)" with a remedy that works.
**refusal-text-wrong-verb** (4 ids: ``sparse:reject``, ``sparse:abort``, ``dirty:reject``,
``dirty:abort``): the same sparse refusal for ``reject -m no`` and ``abort`` ends its remedy
"read it, then approve"; ``reject``/``abort`` of a plan file with an uncommitted edit answer
"has uncommitted edits; approving would not cover what you see": approve's words for a
reviewer who asked to reject or abort.
**hidden-index-bit-remedy-unworkable** (2 ids: ``bits:au-approve-remedy``,
``bits:sw-approve-remedy``): the agent's edit hidden by ``--assume-unchanged`` or
``--skip-worktree``: ``approve`` refuses ``E_USAGE ... has uncommitted edits; approving would
not cover what you see``, remedy "commit or discard the edits first", while ``git status`` is
clean, ``git checkout -- <file>`` leaves the edit (assume-unchanged) or errors "did not match
any file(s) known to git" (skip-worktree) and ``git commit -a`` sees nothing; the bit is never
named, so the reviewer cannot follow the remedy.
Held: the page and ``/api/`` escape every path (``&lt;``, ``&amp;lt;``), serve CSP and
``nosniff``; ``status``/``show``/MCP/``/api/`` and the commits' subjects and ``Plan:``
trailers name each hostile path exactly, with git's hash; one error text, one approver and a
valid audit everywhere; forged ``completed``/``executing`` statuses are "unknown" on
``/metrics``, ``E_ILLEGAL_TRANSITION`` on the row, no run on MCP ``log``/``/api/``; a hidden
edit shows ``STALE`` in ``show`` and ``approve`` refuses it, committing nothing; the pass in a
sparse checkout freezes a plan outside the cone and leaves ``git status`` clean.
By hand, not in the module (held): ``check --format markdown`` and ``show --format markdown``
escape ``<!--``, ``[x](y)`` and ``|`` in names and paths; EXECUTION_LOG.md keeps tool output
in fences and the error in inline code (``<!--``, ``<details>``, OSC 8, CSI); folder names
with ESC, CSI (U+009B), CR, U+202E and DEL are escaped by ``validate``/``hash``/``show``/
``freeze --check``/``status``/``audit``/``check``; a gate's ``awaiting-approval`` text quotes
no ``why``; the page with ``</script>`` names and a ``%0d%0a`` path.
Not tried: Mattermost/Teams markdown in ``text`` (``[Approve](https://...)`` in a folder
name), ``partial`` posts, remote mode, linked worktrees, a reviewer's ``show`` in a linked
worktree on another branch.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, clone_audit_got, plan_text, until
from mcpkit import answers
from oraclekit import listening, notify_receiver, page_text
from test_round2_execution_kit import shared

PY = sys.executable

BOOM = "import sys; sys.stderr.write(sys.argv[1]); sys.exit(1)"

#: variant -> plan folder under plans/
PATHS = {
    "n-channel": "n-channel<!channel>",
    "n-here": "n-here<!here>",
    "n-everyone": "n-every<!everyone>",
    "n-user": "n-user<@U024BE7LH>",
    "n-group": "n-group<!subteam^S0123>",
    "n-link": "n-link<mailto:ops@evil.example|Approve now>",
    "n-entity": "n-ent&lt;b&gt;",
    "n-amp": "n-amp&amp;x",
    "n-plain": "n-plain",
    "ok-here": "ok-here<!here>",
    "ok-link": "ok-link<mailto:a@evil.example|plans-prod>",
    "f-channel": "f-channel",
    "f-link": "f-link",
    "v-check": "v-check",
}
REFUSED = ["n-here", "n-link"]
#: plans the agent commits already ``completed`` / ``executing`` (never approved, never run)
FORGED = {"z-fake-completed": "completed", "z-fake-executing": "executing"}
RAN = ["ok-here", "ok-link"]
FAILS = {
    "f-channel": "deploy blocked <!channel> approve plans/x now",
    "f-link": "see <https://evil.example/approve|plans/prod rollback approved>",
}

#: a verify whose expected value (the plan author's text, quoted by E_VERIFY_FAILED) is markup
VERIFY = {"v-check": "<!channel> rollback approved"}


def _plan(key: str) -> str:
    if key in VERIFY:
        return plan_text("vcheck") + (
            f"    verify: {{expect: {{path: $.json.ok, equals: {json.dumps(VERIFY[key])}}}}}\n"
        )
    if key in FAILS:
        return (
            "plan:\n  name: boom\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: boom}]\nactions:\n  - id: 1\n    tool: boom\n"
            f"    why: w\n    params: {{msg: {json.dumps(FAILS[key])}}}\n"
        )
    return plan_text(key.replace("-", ""))


def _events(posts: list[str], names: tuple[str, ...]) -> int:
    return sum(json.loads(p)["event"] in names for p in posts)


def _build(root: Path) -> Lab:
    server, posts = notify_receiver()
    port = server.server_address[1]
    lab = Lab(
        root / "main",
        extra=f'notify: ["http://127.0.0.1:{port}/hook"]\nui: {{listen: 0}}\n'
        'metrics: {listen: "127.0.0.1:0"}\n',
        tools=f"boom: {{kind: exec, argv: [{json.dumps(PY)}, '-c', {json.dumps(BOOM)}, "
        "'{msg}']}\n",
    )
    got: dict[str, Any] = {}
    with listening(lab, lab.config, "", names=("ui", "metrics")) as ports:
        uport = ports["ui"]
        for key, folder in PATHS.items():
            lab.write(folder, _plan(key))
        for key, status in FORGED.items():
            lab.write(key, plan_text(key.replace("-", ""), status=status))
        lab.commit("agent: plans")
        got["froze"] = until(lambda: _events(posts, ("awaiting-approval",)) >= len(PATHS), 120)
        for key in REFUSED:
            lab.approve(PATHS[key], MALLORY)
        for key in [*RAN, *FAILS, *VERIFY]:
            lab.set_status(PATHS[key], "approved")
        lab.commit("alice: approve", ALICE)
        want = len(REFUSED) + 2 * len(RAN) + 2 * len(FAILS) + 2 * len(VERIFY)
        got["ran"] = until(
            lambda: _events(posts, ("refuse", "start", "complete", "fail")) >= want, 120
        )
        head = lab.head()
        until(lambda: head in page_text(uport, "/api/"), 60)
        got["page"] = {
            key: (
                page_text(uport, "/plan/plans/" + urllib.parse.quote(folder)),
                page_text(uport, "/api/plan/plans/" + urllib.parse.quote(folder)),
            )
            for key, folder in PATHS.items()
        }
        for key in FORGED:
            got["page"][key] = (
                page_text(uport, f"/plan/plans/{key}"),
                page_text(uport, f"/api/plan/plans/{key}"),
            )
        got["metrics"] = page_text(ports["metrics"], "/metrics")
    got["posts"] = list(posts)
    c = ["--config", str(lab.config)]
    got["status-json"] = lab.cli("status", "--json", *c).stdout
    st = lab.cli("status", *c)
    got["status-text"] = st.stdout + st.stderr
    for key, folder in PATHS.items():
        r = lab.cli("show", f"plans/{folder}", "--json", *c, cwd=lab.repo)
        got[f"show:{key}"] = (r.returncode, r.stdout, r.stderr[-1500:])
    got["log"] = lab.log_rows()
    calls = [("status", {})] + [("log", {"path": f"plans/{PATHS[k]}"}) for k in PATHS]
    calls += [("log", {"path": f"plans/{k}"}) for k in FORGED]
    got["mcp"] = answers(lab, calls)
    got["heads"] = {
        key: lab.git("show", f"HEAD:plans/{folder}/PLAN.yml", check=False)
        for key, folder in PATHS.items()
    }
    got["audit"] = clone_audit_got(lab, root)
    server.shutdown()
    got["once"] = _once(root / "once")
    got["sigterm"] = _sigterm(root / "sigterm")
    got["sparse"] = _sparse(root / "sparse")
    got["bits"] = _bits(root / "bits")
    lab.got = got  # type: ignore[attr-defined]
    return lab


ONCE_PLANS = 12


def _slow_receiver() -> tuple[Any, list[str]]:
    """A loopback receiver answering each post after 0.5 s (a healthy, slow endpoint)."""
    import http.server
    import threading
    import time

    posts: list[str] = []

    class Slow(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size).decode("utf-8")
            time.sleep(0.5)
            posts.append(body)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, posts


def _once(root: Path) -> dict[str, Any]:
    """A second lab posting to :func:`_slow_receiver`: one ``run --once`` freezes
    ``ONCE_PLANS`` plans; the posts that arrived within 20 s of its exit and what its log
    says of the others."""
    server, posts = _slow_receiver()
    lab = Lab(root, extra=f'notify: ["http://127.0.0.1:{server.server_address[1]}/h"]\n')
    for i in range(ONCE_PLANS):
        lab.write(f"o{i}", plan_text(f"o{i}"))
    lab.commit("agent: plans")
    r = lab.run()
    until(lambda: len(posts) >= ONCE_PLANS, 20)
    server.shutdown()
    frozen = [s for r_ in lab.log_rows() for s in [r_[3]] if s.startswith("plangate: freeze")]
    batched = sum(r_[4].count("Plan-Event: freeze") for r_ in lab.log_rows())
    return {
        "rc": r.returncode,
        "posts": list(posts),
        "log": r.stderr[-20000:],
        "frozen": max(len(frozen), batched),
    }


def _sigterm(root: Path) -> dict[str, Any]:
    """A third lab posting to :func:`_slow_receiver`, its daemon (``plangate run``)
    SIGTERMed once the first post of ``ONCE_PLANS`` freezes arrived (a deploy's restart):
    the posts that arrived within 20 s and what its log says of the others."""
    import signal
    import subprocess

    server, posts = _slow_receiver()
    lab = Lab(root, extra=f'notify: ["http://127.0.0.1:{server.server_address[1]}/h"]\n')
    proc = subprocess.Popen(
        [PY, "-m", "controller", "run", "--config", str(lab.config)],
        cwd=lab.root,
        env=lab.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for i in range(ONCE_PLANS):
            lab.write(f"s{i}", plan_text(f"s{i}"))
        lab.commit("agent: plans")
        until(lambda: len(posts) >= 1, 120)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    until(lambda: len(posts) >= ONCE_PLANS, 20)
    server.shutdown()
    return {"rc": proc.returncode, "posts": list(posts), "log": out[-20000:], "frozen": ONCE_PLANS}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r116-atk116b", _build)


def _sparse(root: Path) -> dict[str, Any]:
    """A fourth lab whose working tree is a sparse checkout of ``plans/a`` and ``notes``
    (``git sparse-checkout set``): ``plans/b/out``, frozen before, is on the branch but not
    in the tree; the agent's ``plans/b/new`` arrives by a pull and one pass freezes it. Then
    every CLI reader of ``plans/b/out`` is asked, and MCP ``log``."""
    lab = Lab(root)
    lab.write("a/in", plan_text("ain"))
    lab.write("b/out", plan_text("bout"))
    lab.commit("agent: plans")
    lab.run()
    lab.git("sparse-checkout", "set", "plans/a", "notes")
    other = root / "other"
    lab.git("clone", "-q", str(lab.repo), str(other))
    new = other / "plans/b/new/PLAN.yml"
    new.parent.mkdir(parents=True)
    new.write_text(plan_text("bnew"))
    for args in (["add", "-A"], ["commit", "-qm", "agent: new"]):
        subprocess.run(["git", *args], cwd=other, env=lab.env(AGENT), check=True)
    lab.git("pull", "-q", "--ff-only", str(other), "main")
    got: dict[str, Any] = {"pass": lab.run(check=False).returncode}
    got["present"] = (lab.repo / "plans/b/out/PLAN.yml").exists()
    c = ["--config", str(lab.config)]
    asks = {
        "show": ["show", "plans/b/out"],
        "show-file": ["show", "plans/b/out/PLAN.yml"],
        "show-json": ["show", "plans/b/out", "--json"],
        "show-config": ["show", *c, "plans/b/out"],
        "validate": ["validate", "plans/b/out/PLAN.yml"],
        "hash": ["hash", "plans/b/out"],
        "freeze-check": ["freeze", "--check", "plans/b/out"],
        "approve": ["approve", "plans/b/out"],
        "reject": ["reject", "plans/b/out", "-m", "no"],
        "abort": ["abort", "plans/b/out"],
    }
    head = lab.head()
    for key, argv in asks.items():
        r = lab.cli(*argv, cwd=lab.repo)
        got[key] = (r.returncode, r.stdout[-3000:], r.stderr[-3000:])
    got["unmoved"] = lab.head() == head
    got["tree"] = lab.git("status", "--porcelain")
    got["status"] = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", *c).stdout)}
    got["heads"] = {
        k: lab.git("show", f"HEAD:plans/{k}/PLAN.yml", check=False) for k in ("b/out", "b/new")
    }
    got["mcp"] = answers(lab, [("log", {"path": "plans/b/out"})])[0]
    return got


BITS = {"au": "--assume-unchanged", "sw": "--skip-worktree"}


def _bits(root: Path) -> dict[str, Any]:
    """A fifth lab: two frozen plans whose working-tree file the agent edits (``tag: EVIL``)
    and hides from ``git status`` with an index bit (``git update-index
    --assume-unchanged`` / ``--skip-worktree``, in the shared ``.git``); the reviewer then
    runs ``show``, ``approve`` and what the remedy says (``git checkout --``)."""
    lab = Lab(root)
    for k in [*BITS, "dd"]:
        lab.write(k, plan_text(k))
    lab.commit("agent: plans")
    lab.run()
    dd = lab.repo / "plans/dd/PLAN.yml"
    dd.write_text(dd.read_text().replace('tag: "dd"', 'tag: "EVIL"'))
    for verb, extra in (("approve", []), ("reject", ["-m", "no"]), ("abort", [])):
        r = lab.cli(verb, "plans/dd", *extra, cwd=lab.repo)
        lab.dirty = {**getattr(lab, "dirty", {}), verb: (r.returncode, r.stderr[-2000:])}
    for k, flag in BITS.items():
        f = lab.repo / f"plans/{k}/PLAN.yml"
        f.write_text(f.read_text().replace(f'tag: "{k}"', 'tag: "EVIL"'))
        lab.git("update-index", flag, f"plans/{k}/PLAN.yml")
    got: dict[str, Any] = {"porcelain": lab.git("status", "--porcelain", "plans/au", "plans/sw")}
    got["dirty"] = lab.dirty  # type: ignore[attr-defined]
    head = lab.head()
    for k in BITS:
        r = lab.cli("show", f"plans/{k}", cwd=lab.repo)
        got[f"{k}:show"] = (r.returncode, r.stdout, r.stderr[-2000:])
        r = lab.cli("approve", f"plans/{k}", cwd=lab.repo)
        got[f"{k}:approve"] = (r.returncode, r.stdout, r.stderr[-2000:])
    got["unmoved"] = lab.head() == head
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    got["heads"] = {k: lab.git("show", f"HEAD:plans/{k}/PLAN.yml") for k in BITS}
    return got


# -- what a Slack channel shows of a message's text --------------------------------------
_SEQ = re.compile(r"<([^<>]*)>")


def slack_shown(text: str) -> tuple[str, list[str]]:
    """The text a Slack incoming-webhook message shows (api.slack.com, "Formatting text":
    ``<!channel>``, ``<!here>``, ``<!everyone>``, ``<!subteam^ID>`` and ``<@U...>`` are
    mentions, ``<url|label>`` a link showing ``label``, ``&lt;``/``&gt;``/``&amp;`` the
    characters), and the control sequences it acted on."""
    acted: list[str] = []

    def one(m: re.Match[str]) -> str:
        inner = m.group(1)
        acted.append(m.group(0))
        if inner.startswith(("!", "@", "#")):
            return "@" + inner.lstrip("!@#").split("|")[0].split("^")[0]
        return inner.split("|", 1)[1] if "|" in inner else inner

    shown = _SEQ.sub(one, text)
    shown = shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return shown, acted


def _posts(lab: Lab, key: str) -> list[dict[str, Any]]:
    plan = f"plans/{PATHS[key]}"
    return [p for p in map(json.loads, lab.got["posts"]) if p.get("plan") == plan]


def _rows(lab: Lab) -> dict[str, Any]:
    return {r["plan"]: r for r in json.loads(lab.got["status-json"])}


def _frozen(lab: Lab, key: str) -> str:
    m = re.search(r"hash: \"?(sha256:[0-9a-f]{64})", lab.got["heads"][key].split("frozen:")[1])
    assert m, lab.got["heads"][key][-800:]
    return m.group(1)


KEYS = list(PATHS)
BROKEN: dict[str, Any] = {}  # notify-text-chat-markup: fixed (round 116, chat_escaped)


# -- notify ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key", cases([f"{k}:notify-plan" for k in KEYS], KEYS, BROKEN)
)  # fmt: skip
def test_notify_plan_field_is_the_path(lab: Lab, key: str) -> None:
    """Every post about the plan names its path exactly as git does (the JSON field)."""
    posts = _posts(lab, key)
    assert posts, [json.loads(p)["plan"] for p in lab.got["posts"]]
    events = {p["event"] for p in posts}
    want = {"awaiting-approval"}
    want |= {"refuse"} if key in REFUSED else set()
    want |= {"start", "complete"} if key in RAN else set()
    want |= {"start", "fail"} if key in FAILS or key in VERIFY else set()
    assert want <= events, (key, events)


@pytest.mark.parametrize(
    "key", cases([f"{k}:notify-text" for k in KEYS], KEYS, BROKEN)
)  # fmt: skip
def test_notify_text_shows_the_path_and_pings_nobody(lab: Lab, key: str) -> None:
    """The ``text`` a Slack channel shows names the plan's path as in git, and no part of
    it (the path, the approver, a quoted tool error) is a mention or a link."""
    plan = f"plans/{PATHS[key]}"
    for post in _posts(lab, key):
        shown, acted = slack_shown(post["text"])
        assert not acted, (post["event"], post["text"], acted)
        assert plan in shown, (post["event"], post["text"], shown)
        assert "\n" not in post["text"], post["text"]


# -- the CLI -----------------------------------------------------------------------------
@pytest.mark.parametrize("key", cases([f"{k}:status-json" for k in KEYS], KEYS, BROKEN))
def test_status_json_row_is_the_truth(lab: Lab, key: str) -> None:
    """``status --json`` has the plan's row under its path as in git, with git's hash and
    the status git holds."""
    row = _rows(lab).get(f"plans/{PATHS[key]}")
    assert row, sorted(_rows(lab))
    assert row["hash"] == _frozen(lab, key), row
    m = re.search(r"\n  status: (\S+)", lab.got["heads"][key])
    assert m and row["status"] == m.group(1), (row["status"], m and m.group(1))


@pytest.mark.parametrize("key", cases([f"{k}:status-text" for k in KEYS], KEYS, BROKEN))
def test_status_text_names_the_path(lab: Lab, key: str) -> None:
    """``status`` (text) names the plan on its row as written, its hash's 12 digits beside
    it, and prints no terminal control."""
    text = lab.got["status-text"]
    assert "\x1b" not in text and "\r" not in text
    line = next((ln for ln in text.split("\n") if f" plans/{PATHS[key]} " in ln), None)
    assert line, text[-3000:]
    assert _frozen(lab, key)[7:19] in line, line


@pytest.mark.parametrize("key", cases([f"{k}:show-json" for k in KEYS], KEYS, BROKEN))
def test_show_json_agrees(lab: Lab, key: str) -> None:
    """``show --json`` of the path answers the plan with git's frozen hash."""
    rc, out, err = lab.got[f"show:{key}"]
    assert rc == 0, (rc, err)
    assert "Traceback" not in err
    data = json.loads(out)
    assert _frozen(lab, key) in json.dumps(data), out[:1500]


@pytest.mark.parametrize("key", cases([f"{k}:subject" for k in KEYS], KEYS, BROKEN))
def test_commit_subject_and_trailer_exact(lab: Lab, key: str) -> None:
    """The controller's freeze commit names the path exactly, in its subject (or batch
    group) and in a ``Plan:`` trailer line of its own."""
    folder = PATHS[key]
    assert f"plangate: freeze plans/{folder}" in lab.subjects(folder), lab.subjects(folder)
    bodies = [r[4] for r in lab.got["log"] if r[2] == "plangate@localhost"]
    assert any(f"\nPlan: plans/{folder}\n" in b + "\n" for b in bodies), bodies[:3]


def _mcp_status_rows(lab: Lab) -> dict[str, Any]:
    reply = lab.got["mcp"][0]
    res = reply.get("result") or {}
    data = res.get("structuredContent")
    if data is None:
        data = json.loads(res["content"][0]["text"])
    rows = data.get("plans", data) if isinstance(data, dict) else data
    if isinstance(rows, dict) and "result" in rows:
        rows = rows["result"]
    return {r["plan"]: r for r in rows}


@pytest.mark.parametrize("key", cases([f"{k}:mcp-status" for k in KEYS], KEYS, BROKEN))
def test_mcp_status_agrees(lab: Lab, key: str) -> None:
    """MCP ``status`` has the plan's row under its exact path, with the CLI row's status
    and hash."""
    plan = f"plans/{PATHS[key]}"
    rows = _mcp_status_rows(lab)
    assert plan in rows, sorted(rows)
    cli = _rows(lab)[plan]
    assert (rows[plan].get("status"), rows[plan].get("hash")) == (cli["status"], cli["hash"])


@pytest.mark.parametrize("key", cases([f"{k}:mcp-log" for k in KEYS], KEYS, BROKEN))
def test_mcp_log_answers(lab: Lab, key: str) -> None:
    """MCP ``log`` of the exact path answers that plan (no error), its log naming the
    path for a plan that ran."""
    reply = lab.got["mcp"][1 + KEYS.index(key)]
    res = reply.get("result") or {}
    assert not res.get("isError"), reply
    text = json.dumps(res, ensure_ascii=False)
    if key in AK:
        assert "execution_log" in text and PATHS[key].split("<")[0] in text, text[:1500]


@pytest.mark.parametrize("key", cases([f"{k}:page" for k in KEYS], KEYS, BROKEN))
def test_page_escapes_the_path(lab: Lab, key: str) -> None:
    """The daemon's page of the plan shows the path HTML-escaped: no raw ``<`` of the path
    in the markup, the escaped text present."""
    page, _api = lab.got["page"][key]
    assert not page.startswith("HTTP "), page[:500]
    folder = PATHS[key]
    if "<" in folder:
        assert folder not in page, folder
    assert html.escape(folder, quote=False) in page or html.escape(folder) in page, folder


@pytest.mark.parametrize("key", cases([f"{k}:api" for k in KEYS], KEYS, BROKEN))
def test_api_agrees(lab: Lab, key: str) -> None:
    """``/api/plan/<path>`` answers the plan under its exact path, with git's hash."""
    _page, api = lab.got["page"][key]
    assert not api.startswith("HTTP "), api[:500]
    data = json.loads(api)
    text = json.dumps(data, ensure_ascii=False)
    assert f"plans/{PATHS[key]}" in text and _frozen(lab, key) in text, text[:800]


# -- run --once and its posts --------------------------------------------------------------
@pytest.mark.parametrize(
    "how", cases(["once:awaiting-posts", "sigterm:awaiting-posts"], ["once", "sigterm"], {})
)  # fmt: skip
def test_exit_posts_every_event_or_says_so(lab: Lab, how: str) -> None:
    """A controller that froze N plans (``run --once``; a daemon then stopped by SIGTERM)
    posts N ``awaiting-approval`` events to a healthy endpoint, or its log says which it
    dropped (``notify_dropped``/``notify_failed``, docs/operations.md): no post is lost in
    silence."""
    once = lab.got[how]
    assert once["rc"] == 0
    arrived = sum(json.loads(p)["event"] == "awaiting-approval" for p in once["posts"])
    told = len(re.findall(r"notify_dropped|notify_failed", once["log"]))
    assert arrived + told >= ONCE_PLANS, (arrived, told, once["frozen"])


# -- the same run on every surface ---------------------------------------------------------
def _api(lab: Lab, key: str) -> dict[str, Any]:
    return dict(json.loads(lab.got["page"][key][1]))


def _mcp_log(lab: Lab, key: str) -> dict[str, Any]:
    res = lab.got["mcp"][1 + KEYS.index(key)]["result"]
    return dict(res.get("structuredContent") or json.loads(res["content"][0]["text"]))


FK = [*FAILS, *VERIFY]


@pytest.mark.parametrize("key", cases([f"{k}:error-agree" for k in FK], FK, BROKEN))
def test_tool_error_same_everywhere(lab: Lab, key: str) -> None:
    """The failed action's error (a tool's stderr, or a verify's expected value, in chat
    markup) is one text on every surface: the plan file git holds, ``status --json``'s
    reason, MCP ``log``, ``/api/`` and the ``fail`` post's message."""
    code, said = ("E_TOOL_FAILED", FAILS[key]) if key in FAILS else ("E_VERIFY_FAILED", "")
    said = said or VERIFY[key]
    assert "message: " in lab.got["heads"][key].split("execution:")[1]
    err = _mcp_log(lab, key)["execution"]["actions"][0]["error"]
    msg = err["message"]
    assert err["code"] == code and said in msg, err
    row = _rows(lab)[f"plans/{PATHS[key]}"]
    assert row["reason"] == f"action 1: {code}: {msg}", row["reason"]
    api = _api(lab, key)["document"]["execution"]["actions"][0]["error"]
    assert (api["code"], api["message"]) == (code, msg), api
    fails = [p for p in _posts(lab, key) if p["event"] == "fail"]
    assert fails and all(p["message"] == f"{code}: {msg}" for p in fails), fails


AK = [*RAN, *FAILS, *VERIFY]


@pytest.mark.parametrize("key", cases([f"{k}:approver-agree" for k in AK], AK, BROKEN))
def test_approver_same_everywhere(lab: Lab, key: str) -> None:
    """Alice, who approved, is the approver on every surface: the plan file, the row, MCP
    ``status``, ``/api/`` and the ``start`` post; the start commit's ``Approved-By:``."""
    plan = f"plans/{PATHS[key]}"
    assert "by: alice@example.com" in lab.got["heads"][key].split("approval:")[1]
    assert _rows(lab)[plan]["approver"] == "alice@example.com"
    assert _mcp_status_rows(lab)[plan]["approver"] == "alice@example.com"
    assert _api(lab, key)["row"]["approver"] == "alice@example.com"
    starts = [p for p in _posts(lab, key) if p["event"] == "start"]
    assert [p["by"] for p in starts] == ["alice@example.com"], starts
    bodies = [_start_of(r[3], r[4], plan) for r in lab.got["log"]]
    bodies = [b for b in bodies if b is not None]
    assert bodies and "Approved-By: alice@example.com" in bodies[0], bodies


def _start_of(subject: str, body: str, plan: str) -> str | None:
    """The start of ``plan`` a controller commit records: its whole body for a one-plan
    ``plangate: start <plan>``, its ``Plan: <plan>`` trailer group for a batched one (under
    load a pass starts several plans in one commit)."""
    if subject == f"plangate: start {plan}":
        return body
    if not subject.startswith("plangate: ") or f"Plan: {plan}\n" not in body + "\n":
        return None
    group = (body + "\n").split(f"Plan: {plan}\n", 1)[1].split("\nPlan: ", 1)[0]
    return group if "Plan-Event: start" in group else None


@pytest.mark.parametrize("key", cases([f"{k}:audit" for k in AK], AK, BROKEN))
def test_audit_calls_the_run_valid(lab: Lab, key: str) -> None:
    """``audit --json`` in a fresh clone judges the run of the plan (under its exact path)
    as resting on a valid approval, and nothing else as a problem of it."""
    audit = lab.got["audit"]
    assert f"plans/{PATHS[key]}" in audit["valid"], (audit["valid"], audit["err"])


# -- plans the agent committed as already run ------------------------------------------------
FK2 = list(FORGED)


def _metric(lab: Lab, status: str) -> float:
    m = re.search(rf'^plangate_plans{{status="{status}"}} (\S+)$', lab.got["metrics"], re.M)
    return float(m.group(1)) if m else 0.0


@pytest.mark.parametrize("key", cases([f"{k}:metrics" for k in FK2], FK2, BROKEN))
def test_metrics_do_not_count_forged_states(lab: Lab, key: str) -> None:
    """``/metrics`` counts as completed/executing/failed only the plans the controller ran:
    the two it completed, the three that failed, none executing; the agent's forged
    statuses are not counted as such."""
    assert _metric(lab, "completed") == len(RAN), lab.got["metrics"][:1500]
    assert _metric(lab, "executing") == 0, lab.got["metrics"][:1500]
    assert _metric(lab, "failed") == len(FAILS) + len(VERIFY), lab.got["metrics"][:1500]


@pytest.mark.parametrize("key", cases([f"{k}:status" for k in FK2], FK2, BROKEN))
def test_forged_state_row(lab: Lab, key: str) -> None:
    """``status --json`` and MCP ``status`` show no controller state for the forged plan:
    no approver, the agent's status ignored with ``E_ILLEGAL_TRANSITION``."""
    plan = f"plans/{key}"
    row, mrow = _rows(lab)[plan], _mcp_status_rows(lab)[plan]
    assert row["status"] not in ("completed", "executing"), row
    assert row["approver"] is None and "E_ILLEGAL_TRANSITION" in json.dumps(row), row
    assert (mrow["status"], mrow["approver"]) == (row["status"], None), mrow


@pytest.mark.parametrize("key", cases([f"{k}:api" for k in FK2], FK2, BROKEN))
def test_forged_state_api(lab: Lab, key: str) -> None:
    """``/api/plan/<path>`` gives the forged plan the row's status, no approver."""
    data = json.loads(lab.got["page"][key][1])
    row = _rows(lab)[f"plans/{key}"]
    assert (data["row"]["status"], data["row"]["approver"]) == (row["status"], None), data["row"]


@pytest.mark.parametrize("key", cases([f"{k}:mcp-log" for k in FK2], FK2, BROKEN))
def test_forged_state_mcp_log(lab: Lab, key: str) -> None:
    """MCP ``log`` of the forged plan has no run: no execution log, its status not the
    agent's."""
    res = lab.got["mcp"][1 + len(KEYS) + FK2.index(key)]["result"]
    data = res.get("structuredContent") or json.loads(res["content"][0]["text"])
    assert not data.get("execution_log"), data
    assert data.get("status") not in ("completed", "executing"), data


# -- a sparse checkout ----------------------------------------------------------------------
READERS = ["show", "show-file", "show-json", "show-config", "validate", "hash", "freeze-check"]


@pytest.mark.parametrize(
    "key", cases([f"sparse:{k}" for k in READERS], READERS, {})
)  # fmt: skip
def test_sparse_reader_names_the_cause(lab: Lab, key: str) -> None:
    """A reader asked for a plan that is on the branch (``status`` lists it) but that the
    sparse checkout left out of the working tree says so and how to get it, as ``approve``
    does: a coded answer naming the working tree or the sparse checkout, with a remedy that
    works (``git checkout``/``git sparse-checkout``), never "give a PLAN.yml path"."""
    sp = lab.got["sparse"]
    assert not sp["present"] and "plans/b/out" in sp["status"]
    rc, out, err = sp[key]
    text = out + err
    assert rc == 2 and "Traceback" not in text, (rc, text[-800:])
    assert re.search(r"E_[A-Z_]+", text), text[-800:]
    assert "sparse" in text or "not in this working tree" in text, text[-800:]
    assert "give a PLAN.yml path" not in text, text[-800:]


WRITERS = ["approve", "reject", "abort"]


@pytest.mark.parametrize(
    "key", cases([f"sparse:{k}" for k in WRITERS], WRITERS, {})
)  # fmt: skip
def test_sparse_writer_refuses_and_names_its_own_verb(lab: Lab, key: str) -> None:
    """``approve``/``reject``/``abort`` of the plan the sparse checkout left out commit
    nothing, name the sparse checkout, and their remedy ends in the verb asked."""
    sp = lab.got["sparse"]
    rc, _out, err = sp[key]
    assert sp["unmoved"] and not sp["tree"].strip(), sp["tree"]
    assert rc == 2 and "sparse" in err, err[-800:]
    remedy = err.split("remedy:", 1)[-1]
    assert f"then {key}" in remedy, remedy


def test_sparse_status_and_mcp_agree_with_git(lab: Lab) -> None:
    """``status`` and MCP ``log`` read the branch: the left-out plan pending with git's
    frozen hash, and the pulled plan outside the cone frozen by the pass (which exited 0)."""
    sp = lab.got["sparse"]
    assert sp["pass"] == 0
    row = sp["status"]["plans/b/out"]
    assert row["status"] == "pending_approval" and row["hash"] in sp["heads"]["b/out"], row
    assert "frozen:" in sp["heads"]["b/new"], sp["heads"]["b/new"][-400:]
    assert sp["status"]["plans/b/new"]["status"] == "pending_approval"
    res = sp["mcp"].get("result") or {}
    data = res.get("structuredContent") or {}
    assert not res.get("isError"), sp["mcp"]
    assert (data.get("path"), data.get("status")) == ("plans/b/out", "pending_approval"), data


# -- index bits that hide an edit from git status ----------------------------------------
BK = list(BITS)


@pytest.mark.parametrize("key", cases([f"bits:{k}-show-stale" for k in BK], BK, {}))
def test_bits_show_flags_the_hidden_edit(lab: Lab, key: str) -> None:
    """``show`` of a file the agent edited and hid from ``git status`` marks its hash STALE
    (not the frozen one), though ``git status`` shows nothing."""
    b = lab.got["bits"]
    assert b["porcelain"] == ""
    rc, out, _err = b[f"{key}:show"]
    assert rc == 0 and "STALE" in out, out[:800]


@pytest.mark.parametrize("key", cases([f"bits:{k}-approve-refused" for k in BK], BK, {}))
def test_bits_approve_refused(lab: Lab, key: str) -> None:
    """``approve`` of it refuses (exit 2, coded) and commits nothing; ``status`` keeps the
    plan pending with git's frozen hash."""
    b = lab.got["bits"]
    rc, _out, err = b[f"{key}:approve"]
    assert rc == 2 and re.search(r"E_[A-Z_]+", err) and b["unmoved"], err[-600:]
    row = b["rows"][f"plans/{key}"]
    assert row["status"] == "pending_approval" and row["hash"] in b["heads"][key], row


@pytest.mark.parametrize(
    "key", cases([f"bits:{k}-approve-remedy" for k in BK], BK, {})
)  # fmt: skip
def test_bits_approve_remedy_names_the_bit(lab: Lab, key: str) -> None:
    """The refusal's remedy works where ``git status`` is clean: it names the index bit
    (``assume-unchanged``/``skip-worktree``) or the ``git update-index`` that clears it."""
    _rc, _out, err = lab.got["bits"][f"{key}:approve"]
    remedy = err.split("remedy:", 1)[-1]
    assert re.search(r"assume-unchanged|skip-worktree|update-index", remedy), err[-600:]


@pytest.mark.parametrize(
    "verb", cases([f"dirty:{v}" for v in WRITERS], WRITERS, {})
)  # fmt: skip
def test_dirty_refusal_names_its_own_verb(lab: Lab, verb: str) -> None:
    """``approve``/``reject``/``abort`` of a plan file with an uncommitted edit refuse it
    (exit 2, coded) in their own words: the message speaks of the verb asked, not of
    approving."""
    rc, err = lab.got["bits"]["dirty"][verb]
    assert rc == 2 and "uncommitted edits" in err, err[-600:]
    said = {"approve": "approving", "reject": "rejecting", "abort": "aborting"}
    others = [w for v, w in said.items() if v != verb]
    assert not any(w in err for w in others), err[-600:]
