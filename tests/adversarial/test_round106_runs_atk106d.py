# ruff: noqa: E501
"""Round 106, runs (atk106d): features rounds 97, 99 and 102 did not combine: SIGKILLs in
the middle of a ``needs`` graph, a retry, an ``ask``'s new round, a gate's approved action,
a fallback step and a ``max_tool_calls`` budget; reference text in the fields that decide
WHICH actions run; the shared tree's EXECUTION_LOG.md as a committed symlink or a FIFO.

Lab (one, module scope; local mode, ``run --once``): the exec tool ``seq`` (``idempotent:
true``) and ``seqn`` (not idempotent) act by their ``seq`` param, one letter a call
(``O`` answers, ``F`` exits 1, ``K`` SIGKILLs the pass's process group, ``N`` prints a
random nonce), and record each call (argv, stdin) fsynced before acting; ``rec`` records.
``secrets.file`` holds ``TOK``; ``limits.max_params_bytes`` is 4,000. Every plan is
approved by Alice in one commit; passes are run until one is not killed; Bob then answers
the gate and the ask and passes run again; one more pass with no new approval.

Variants (``<slug>:<what>``; 54 ids):

- ``k-par``: a ``needs`` graph (1, 2=kill, 3 in parallel, 4 after all): ``once`` (each
  ``rec`` at most once), ``record`` (the committed block says what the calls say);
- ``k-nondem``: a non-idempotent kill carrying ``$<secrets.TOK>``: ``doubt`` (E_ACTION_IN_DOUBT,
  action 3 never called), ``secret``;
- ``k-nonce``: an output (a nonce) filling the killed idempotent action's params: ``once``,
  ``same`` (the rerun gets the first nonce), ``after``;
- ``k-budget``: ``max_tool_calls: 3`` over rec, kill, rerun, rec, rec: ``limit``;
- ``k-retry``: ``on_failure: retry`` (attempts 2) with F, K, O: ``tries``, ``record``;
- ``k-gate``: a gate before a killed action, Bob's approval: ``once``, ``record``, ``again``;
- ``k-ask``: ``on_failure: ask``, F, then Bob's answer, K, F: ``tries``, ``paused``;
- ``k-fb``: a fallback step killed (K, O) then a rec step: ``once``, ``record``;
- ``r-*``: ``$<...>`` of an output in ``tool``, ``needs``, ``on_failure``,
  ``requires_approval``, a nested ``plan.path`` and ``hash``, ``retry.attempts``, ``id``,
  ``fallback``: ``refused`` (nothing of the plan called);
- ``lim-fb``: a fallback step's params filled past ``max_params_bytes``: ``limit``;
- ``w-link``: EXECUTION_LOG.md committed by the agent as a symlink to ``README``: ``once``,
  ``regular``, ``target``; ``w-fifo``: a FIFO where the log goes: ``once``, ``regular``;
- ``all:secret``, ``all:audit``, ``all:nothing-more``.

Seen (round 106): 1 class broke.

1. **fifo-log-lost** (``w-fifo:regular``): an untracked FIFO the agent left at
   ``plans/w-fifo/EXECUTION_LOG.md`` before the run: the plan ran once and completed, but its
   ``complete`` commit (and HEAD) hold no EXECUTION_LOG.md at all; the log the engine
   rendered is lost from the record, and no later pass brings it. Should: commit the
   engine's log whatever the tree holds (its blobs are the engine's, docs/execution.md).

Held: each action at most once across kills in a ``needs`` graph, a retry, an ask's new
round, a gated action and a fallback step (idempotent reruns get the first run's outputs,
non-idempotent ones E_ACTION_IN_DOUBT); ``max_tool_calls`` counts the killed call;
reference text in ``tool``/``needs``/``on_failure``/``requires_approval``/nested path and
hash/``retry.attempts``/``id``/``fallback``/``timeout`` is invalid before anything runs; a
fallback step's params over ``max_params_bytes`` never called; a committed symlink log
replaced by a regular file (README untouched, the audit flags the agent's link); no secret
in history; no call after the last approval was used.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, BOB, Lab, cases
from test_round2_execution_kit import shared

SEQ = r"""import json, os, secrets, signal, sys, time, pathlib
root, tag, seq = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
data = sys.stdin.read()
log = root / "lab" / "ran.log"
n = 0
if log.exists():
    n = sum(1 for line in log.read_text().splitlines() if json.loads(line)["argv"][0] == tag)
with open(log, "a") as f:
    f.write(json.dumps({"argv": [tag], "stdin": data}) + "\n")
    f.flush()
    os.fsync(f.fileno())
c = seq[n] if n < len(seq) else seq[-1]
if c == "K":
    pid = root / "pid"
    for _ in range(600):
        if pid.exists() and pid.read_text().strip():
            break
        time.sleep(0.05)
    os.killpg(int(pid.read_text()), signal.SIGKILL)
    time.sleep(30)
if c == "F":
    sys.stderr.write("failed on purpose\n")
    sys.exit(1)
if c == "N":
    print(json.dumps({"v": secrets.token_hex(8)}))
else:
    print(json.dumps({"ok": True}))
"""

TOK = "Qm4Xr8Lt2Vz7Kp9W"
MAX_PARAMS = 4000


def _a(i: Any, tool: str, tag: str, more: str = "", params: str = "") -> str:
    p = f"tag: {tag}" + (f", {params}" if params else "")
    return f"  - id: {i}\n    tool: {tool}\n    why: w\n    params: {{{p}}}\n" + more


def _s(i: Any, tag: str, seq: str, more: str = "", params: str = "", tool: str = "seq") -> str:
    p = f"tag: {tag}, seq: {seq}" + (f", {params}" if params else "")
    return f"  - id: {i}\n    tool: {tool}\n    why: w\n    params: {{{p}}}\n" + more


def _plan(slug: str, actions: str, limits: str = "") -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        + (f"limits: {limits}\n" if limits else "")
        + "available_tools: [{name: rec}, {name: seq}, {name: seqn}]\nactions:\n"
        + actions
    )


OUTV = "    outputs: [{name: v, path: $.json.v}]\n"

PLANS: dict[str, str] = {
    "k-par": _plan(
        "k-par",
        _a(1, "rec", "k-par-1", "    needs: []\n")
        + _s(2, "k-par-2", "KO", "    needs: []\n")
        + _a(3, "rec", "k-par-3", "    needs: []\n")
        + _a(4, "rec", "k-par-4", "    needs: [1, 2, 3]\n"),
    ),
    "k-nondem": _plan(
        "k-nondem",
        _a(1, "rec", "k-nondem-1")
        + _s(2, "k-nondem-2", "KO", params='s: "$<secrets.TOK>"', tool="seqn")
        + _a(3, "rec", "k-nondem-3"),
    ),
    "k-nonce": _plan(
        "k-nonce",
        _s(1, "k-nonce-1", "N", OUTV)
        + _s(2, "k-nonce-2", "KO", params='v: "$<actions[1].outputs.v>"')
        + _a(3, "rec", "k-nonce-3", params='v: "$<actions[1].outputs.v>"'),
    ),
    "k-budget": _plan(
        "k-budget",
        _a(1, "rec", "k-budget-1")
        + _s(2, "k-budget-2", "KO")
        + _a(3, "rec", "k-budget-3")
        + _a(4, "rec", "k-budget-4"),
        limits="{max_tool_calls: 3}",
    ),
    "k-retry": _plan(
        "k-retry",
        _s(1, "k-retry-1", "FKOO", "    on_failure: retry\n    retry: {attempts: 2, delay: 0.1}\n")
        + _a(2, "rec", "k-retry-2"),
    ),
    "k-gate": _plan(
        "k-gate",
        _a(1, "rec", "k-gate-1")
        + _s(2, "k-gate-2", "KO", "    requires_approval: true\n", params='s: "$<secrets.TOK>"')
        + _a(3, "rec", "k-gate-3"),
    ),
    "k-ask": _plan(
        "k-ask",
        _s(1, "k-ask-1", "FKFF", "    on_failure: ask\n") + _a(2, "rec", "k-ask-2"),
    ),
    "k-fb": _plan(
        "k-fb",
        _s(
            1,
            "k-fb-1",
            "F",
            "    on_failure: fallback\n    fallback:\n"
            "      - {id: '1.1', tool: seq, why: w, params: {tag: k-fb-11, seq: KO}}\n"
            "      - {id: '1.2', tool: rec, why: w, params: {tag: k-fb-12}}\n",
        )
        + _a(2, "rec", "k-fb-2"),
    ),
    "lim-fb": _plan(
        "lim-fb",
        _s(1, "lim-fb-1", "N", "    outputs: [{name: v, path: $.json.v}]\n", tool="seq")
        + _s(
            2,
            "lim-fb-2",
            "F",
            "    on_failure: fallback\n    fallback:\n"
            "      - {id: '2.1', tool: rec, why: w, params: {tag: lim-fb-21, v: \""
            + "$<actions[1].outputs.v>" * 300
            + '"}}\n',
        )
        + _a(3, "rec", "lim-fb-3"),
    ),
    "w-link": _plan("w-link", _a(1, "rec", "w-link-1")),
    "w-fifo": _plan("w-fifo", _a(1, "rec", "w-fifo-1")),
}

REF = '"$<actions[1].outputs.v>"'
#: a reference (an output) in a field that decides which actions run
REFS: dict[str, str] = {
    "r-tool": f"  - id: 2\n    tool: {REF}\n    why: w\n    params: {{tag: r-tool-2}}\n",
    "r-needs": f"  - id: 2\n    tool: rec\n    why: w\n    needs: [{REF}]\n    params: {{tag: r-needs-2}}\n",
    "r-onfail": f"  - id: 2\n    tool: rec\n    why: w\n    on_failure: {REF}\n    params: {{tag: r-onfail-2}}\n",
    "r-gate": f"  - id: 2\n    tool: rec\n    why: w\n    requires_approval: {REF}\n    params: {{tag: r-gate-2}}\n",
    "r-path": f'  - id: 2\n    plan: {{path: {REF}, hash: "sha256:{"0" * 64}"}}\n    why: w\n    inputs: {{}}\n',
    "r-hash": f"  - id: 2\n    plan: {{path: plans/w-link, hash: {REF}}}\n    why: w\n    inputs: {{}}\n",
    "r-attempts": f"  - id: 2\n    tool: rec\n    why: w\n    on_failure: retry\n    retry: {{attempts: {REF}}}\n    params: {{tag: r-attempts-2}}\n",
    "r-id": f"  - id: {REF}\n    tool: rec\n    why: w\n    params: {{tag: r-id-2}}\n",
    "r-fallback": f"  - id: 2\n    tool: rec\n    why: w\n    on_failure: fallback\n    fallback: {REF}\n    params: {{tag: r-fallback-2}}\n",
    "r-timeout": f"  - id: 2\n    tool: rec\n    why: w\n    timeout: {REF}\n    params: {{tag: r-timeout-2}}\n",
}
for _slug, _act in REFS.items():
    PLANS[_slug] = _plan(_slug, _s(1, f"{_slug}-1", "N", OUTV) + _act)


def _passes(lab: Lab, root: Path, most: int = 12) -> list[int]:
    """``run --once`` passes until one is not killed: their exit codes."""
    codes = []
    for _ in range(most):
        pid = root / "pid"
        pid.unlink(missing_ok=True)
        env = lab.env()
        env["REC_LOG"] = str(lab.log)
        proc = subprocess.Popen(
            [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
            env=env, cwd=lab.root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        pid.write_text(str(proc.pid))
        try:
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        codes.append(proc.returncode)
        if proc.returncode != -signal.SIGKILL:
            assert b"Traceback" not in err, err[-2000:]
            break
        # a kill mid-commit leaves git's locks: the operator removes stale ones
        git_dir = lab.repo / ".git"
        for stale in [*(git_dir / "refs" / "heads").glob("*.lock"), *git_dir.glob("*.lock")]:
            stale.unlink()
    return codes


def _build(root: Path) -> Lab:
    (root / "seq.py").write_text(SEQ)
    (root / "sec.json").write_text(json.dumps({"TOK": TOK}))
    argv = json.dumps([sys.executable, str(root / "seq.py"), str(root), "{tag}", "{seq}"])
    lab = Lab(
        root / "lab",
        tools=f"seq: {{kind: exec, argv: {argv}, idempotent: true, timeout: 60}}\n"
        f"seqn: {{kind: exec, argv: {argv}, timeout: 60}}\n",
        extra=f"secrets: {{file: {root / 'sec.json'}}}\n"
        f"limits: {{max_params_bytes: {MAX_PARAMS}}}\n",
    )
    for slug, text in PLANS.items():
        lab.write(slug, text)
    lab.commit("plans")
    # the agent's own log file: a symlink to a file of the repository, committed
    os.symlink("../../README", lab.repo / "plans" / "w-link" / "EXECUTION_LOG.md")
    lab.commit("agent: notes link")
    lab.run()
    for slug in PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    # a FIFO where the controller's log checkout goes (git does not track it)
    fifo = lab.repo / "plans" / "w-fifo" / "EXECUTION_LOG.md"
    os.mkfifo(fifo)
    got: dict[str, Any] = {"codes1": _passes(lab, root)}
    got["rows1"] = lab.rows()
    got["plans1"] = {s: _safe_plan(lab, s) for s in ("k-gate", "k-ask")}
    lab.approve("k-gate", BOB)
    lab.approve("k-ask", BOB)
    got["codes2"] = _passes(lab, root)
    got["calls2"] = {t: len(lab.calls(t)) for t in _tags()}
    got["codes3"] = _passes(lab, root)
    got["calls3"] = {t: len(lab.calls(t)) for t in _tags()}
    got["rows"] = lab.rows()
    got["plans"] = {s: _safe_plan(lab, s) for s in PLANS}
    got["stdin"] = {t: [c["stdin"] for c in lab.calls(t)] for t in _tags()}
    got["history"] = lab.git("log", "-p", "--all", "--format=%B%n%an%n%ae")
    got["logs"] = {}
    got["modes"] = {}
    for slug in ("w-link", "w-fifo", "k-gate"):
        ls = lab.git("ls-tree", "HEAD", f"plans/{slug}/EXECUTION_LOG.md").split()
        got["modes"][slug] = ls[0] if ls else None
        got["logs"][slug] = lab.git("show", f"HEAD:plans/{slug}/EXECUTION_LOG.md", check=False)
    got["readme"] = (lab.repo / "README").read_text()
    got["audit"] = lab.audit()
    lab.got = got  # type: ignore[attr-defined]
    return lab


def _safe_plan(lab: Lab, slug: str) -> dict[str, Any]:
    try:
        return lab.plan(slug)
    except Exception:
        return {}


def _tags() -> list[str]:
    tags = []
    for text in PLANS.values():
        for line in text.splitlines():
            if "tag: " in line:
                tags.append(line.split("tag: ", 1)[1].split(",")[0].split("}")[0].strip())
    return tags


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r106-runs-atk106d", _build)


def n(lab: Lab, tag: str) -> int:
    return int(lab.got["calls3"].get(tag, 0))


def ex(lab: Lab, slug: str) -> dict[str, Any]:
    return lab.got["plans"][slug].get("execution") or {}


def acts(lab: Lab, slug: str) -> dict[str, str]:
    return {str(a.get("id")): a.get("status") for a in ex(lab, slug).get("actions") or []}


def row(lab: Lab, slug: str) -> dict[str, Any]:
    return lab.got["rows"].get(f"plans/{slug}", {})


#: round 106's one runs class (fifo-log-lost) was fixed the same session (r106fifo: the
#: commit holds the log, the working tree keeps the FIFO): none expected to break
BROKEN: dict[str, Any] = {}

#: id -> check(lab) (an AssertionError when the defence did not hold)
CHECKS: dict[str, Any] = {
    # actions 1 and 3 may be mid-call at the kill (in doubt then): at most once either way
    "k-par:once": lambda lab: (
        all(n(lab, f"k-par-{i}") <= 1 for i in (1, 3, 4)) and n(lab, "k-par-2") <= 2
    ),
    "k-par:record": lambda lab: (
        (
            ex(lab, "k-par").get("status") == "completed"
            and set(acts(lab, "k-par").values()) == {"succeeded"}
            and n(lab, "k-par-4") == 1
        )
        or (
            ex(lab, "k-par").get("status") == "failed"
            and "in_doubt" in acts(lab, "k-par").values()
            and n(lab, "k-par-4") == 0
            and all(
                n(lab, f"k-par-{i}") == 1
                for i, st in acts(lab, "k-par").items()
                if st in ("succeeded", "in_doubt") and i != "2"
            )
        )
    ),
    "k-nondem:doubt": lambda lab: (
        n(lab, "k-nondem-2") == 1
        and n(lab, "k-nondem-3") == 0
        and "E_ACTION_IN_DOUBT" in str(row(lab, "k-nondem").get("reason"))
    ),
    "k-nondem:record": lambda lab: (
        acts(lab, "k-nondem") == {"1": "succeeded", "2": "in_doubt", "3": "pending"}
    ),
    "k-nondem:secret": lambda lab: (
        TOK in lab.got["stdin"]["k-nondem-2"][0] and TOK not in json.dumps(ex(lab, "k-nondem"))
    ),
    "k-nonce:once": lambda lab: n(lab, "k-nonce-1") == 1 and n(lab, "k-nonce-3") == 1,
    "k-nonce:same": lambda lab: (
        len({json.loads(x)["v"] for x in lab.got["stdin"]["k-nonce-2"]}) == 1
    ),
    "k-nonce:after": lambda lab: (
        json.loads(lab.got["stdin"]["k-nonce-3"][0])["v"]
        == json.loads(lab.got["stdin"]["k-nonce-2"][0])["v"]
    ),
    "k-budget:limit": lambda lab: (
        sum(n(lab, f"k-budget-{i}") for i in range(1, 5)) <= 3
        and "E_LIMIT_EXCEEDED" in str(row(lab, "k-budget").get("reason"))
    ),
    "k-budget:record": lambda lab: (
        acts(lab, "k-budget").get("4") == "pending" and n(lab, "k-budget-4") == 0
    ),
    "k-retry:tries": lambda lab: n(lab, "k-retry-1") == 3 and n(lab, "k-retry-2") == 1,
    "k-retry:record": lambda lab: ex(lab, "k-retry").get("status") == "completed",
    "k-gate:paused": lambda lab: (
        (lab.got["plans1"]["k-gate"].get("execution") or {}).get("status") == "awaiting_approval"
    ),
    "k-gate:once": lambda lab: (
        [n(lab, "k-gate-1"), n(lab, "k-gate-2"), n(lab, "k-gate-3")] == [1, 2, 1]
    ),
    "k-gate:record": lambda lab: (
        ex(lab, "k-gate").get("status") == "completed" and lab.got["modes"]["k-gate"] == "100644"
    ),
    "k-gate:again": lambda lab: lab.got["calls2"]["k-gate-3"] == n(lab, "k-gate-3"),
    "k-gate:secret": lambda lab: (
        all(TOK in x for x in lab.got["stdin"]["k-gate-2"]) and TOK not in lab.got["logs"]["k-gate"]
    ),
    "k-ask:tries": lambda lab: n(lab, "k-ask-1") == 3 and n(lab, "k-ask-2") == 0,
    "k-ask:paused": lambda lab: ex(lab, "k-ask").get("status") == "awaiting_approval",
    "k-ask:again": lambda lab: lab.got["calls2"]["k-ask-1"] == n(lab, "k-ask-1"),
    "k-fb:once": lambda lab: (
        [n(lab, "k-fb-1"), n(lab, "k-fb-11"), n(lab, "k-fb-12"), n(lab, "k-fb-2")] == [1, 2, 1, 1]
    ),
    "k-fb:record": lambda lab: (
        acts(lab, "k-fb")
        == {"1": "skipped", "1.1": "succeeded", "1.2": "succeeded", "2": "succeeded"}
    ),
    "lim-fb:limit": lambda lab: n(lab, "lim-fb-21") == 0 and n(lab, "lim-fb-3") == 0,
    "lim-fb:code": lambda lab: "E_LIMIT_EXCEEDED" in json.dumps(ex(lab, "lim-fb")),
    "w-link:once": lambda lab: n(lab, "w-link-1") == 1,
    "w-link:regular": lambda lab: (
        lab.got["modes"]["w-link"] == "100644" and "w-link" in lab.got["logs"]["w-link"]
    ),
    "w-link:target": lambda lab: lab.got["readme"] == "plans\n",
    "w-fifo:once": lambda lab: n(lab, "w-fifo-1") == 1,
    "w-fifo:regular": lambda lab: (
        lab.got["modes"]["w-fifo"] == "100644" and "w-fifo" in lab.got["logs"]["w-fifo"]
    ),
    "all:secret": lambda lab: (
        TOK not in lab.got["history"] and TOK not in json.dumps(lab.got["rows"])
    ),
    "all:nothing-more": lambda lab: lab.got["calls2"] == lab.got["calls3"],
    "all:killed": lambda lab: (
        all(c == -signal.SIGKILL for c in lab.got["codes1"][:-1]) and len(lab.got["codes1"]) >= 6
    ),
    "all:audit-starts": lambda lab: all(
        e["approval_valid"] for e in lab.got["audit"][1]["executions"]
    ),
    "all:audit-flags-link": lambda lab: any(
        f["plan"] == "plans/w-link" and f["kind"] == "log-changed"
        for f in lab.got["audit"][1]["findings"]
    ),
}
for _slug in REFS:
    CHECKS[f"{_slug}:refused"] = lambda lab, s=_slug: (
        row(lab, s).get("status") == "invalid" and n(lab, f"{s}-1") == 0 and n(lab, f"{s}-2") == 0
    )
    CHECKS[f"{_slug}:coded"] = lambda lab, s=_slug: (
        str(row(lab, s).get("reason", "")).startswith("E_") and not ex(lab, s)
    )


@pytest.mark.parametrize("check", cases(list(CHECKS), list(CHECKS.values()), BROKEN))
def test_held(lab: Lab, check: Any) -> None:
    assert check(lab), {
        s: (
            ex(lab, s).get("status"),
            acts(lab, s),
            [n(lab, f"{s}-{i}") for i in range(1, 5)],
            str(row(lab, s).get("reason"))[:160],
        )
        for s in ("k-par",)
    }
