"""Round 82 (runs): the daemon's page (``/api/``, ``/api/plan/<id>``), ``plangate status --json``
and ``plangate show`` while someone commits a status the controller ignores, during a run and
after it; and a run stopped by an abort whose commit is later reverted.

SPEC §15: a plan runs only after an allowed approval, exactly as approved, at most once; git
history alone proves it. docs/threat-model.md: "only an allowed approver or an author of the plan
may withdraw it; others are ignored and reported" (``E_APPROVER_NOT_ALLOWED``); a controller-only
status set by a person "is an illegal transition, ignored" (``E_ILLEGAL_TRANSITION``). Round 81
found MCP ``wait``/``log`` followed such an ignored status; here the other readers are asked.

Lab (one, local mode; ``plangate run`` as a daemon with ``ui.listen``). Tools: ``rec`` and
``hold`` (an exec tool that notes ``HELD-<tag>`` and waits for ``GO-<tag>``). Plans (the
agent's): ``fc``, ``ff``, ``ma``, ``rv``, ``rr`` (``rec`` ``<vid>``, ``hold``, ``rec``
``<vid>2``), ``na``, ``post``, ``ctl`` (``rec``). Stories, one after another while the daemon runs:

- ``na``: Mallory (no approver, no author) commits ``status: approved`` on the pending plan.
- ``fc``: Alice approves; while ``hold`` runs Mallory commits ``status: completed`` (every
  ``status: executing`` in the file); the page, ``status --json`` and ``show`` are read; ``GO``.
- ``ff``: the same, the agent (the plan's author) commits ``status: failed``.
- ``ma``: the same, Mallory commits ``status: aborted`` (not entitled to abort: ignored).
- ``rv``: Alice approves; while ``hold`` runs she runs ``plangate abort plans/rv``; ``GO``; once
  the controller records the abort she ``git revert``s her abort commit (the file says
  ``executing`` again); a while later the page and the row are read.
- ``rr``: the same abort, then the agent ``git reset --hard``s main to before Alice's abort
  commit (her abort and the controller's abort record erased); 4 s later the page, the row and
  ``show`` are read; then the owner resets main back to the old tip.
- ``post``: Alice approves, it completes; then Mallory commits ``status: failed`` over it and the
  agent ``status: approved`` again.
- ``ctl``: Alice approves last; it runs once.

Variants. ``ran`` (``rec`` calls per tag: ``fc``, ``fc2``, ``ff``, ``ff2``, ``ma``, ``ma2``,
``rv``, ``rr``, ``post``, ``ctl`` once; ``rv2``, ``rr2``, ``na`` never). ``mid`` (``<vid>:page``,
``:row``, ``:show`` (JSON), ``:text`` (show's ``Status:`` line), ``:html`` (the daemon's
``/plan/plans/<vid>`` status chip) for ``fc``, ``ff``, ``ma``: while ``hold`` still runs, the
page's row and ``status --json`` say ``executing``, and ``show --config``'s status is the
controller's or names the ignored ``E_ILLEGAL_TRANSITION``; ``na``: ``pending_approval``; ``rv``:
``aborted`` after the revert; ``rr``: ``rr2`` never ran, the row ``aborted`` or held
``E_HISTORY_REWRITTEN``, ``show`` never ``completed``; ``post``: ``completed``). ``end`` (the
page's row and ``status --json`` at the end: ``completed`` for ``fc``, ``ff``, ``ma``, ``post``,
``ctl``; ``aborted`` for ``rv``, ``rr``; ``pending_approval`` for ``na``). ``abort_cli``
(``plangate abort`` exit 0). ``index`` (the page's ``/api/`` counts after Mallory's ``fc`` forgery:
no more ``completed`` than the controller recorded). ``audit`` (a fresh clone: one valid run each,
``rv``, ``rr`` ``abort``; none of ``na``).

Seen (round 82): one class, 10 ids (``mid:{fc,ff,ma,rv,post}:{show,text}``). ``plangate show
--config`` reports as its status (``plan.status`` in JSON, ``Status:`` in text) whatever status
line the file holds, including one the controller ignored: mid-run Mallory's ``completed`` (``fc``)
and ``aborted`` (``ma``), the author's ``failed`` (``ff``), the ``executing`` Alice's revert of her
own abort put back (``rv``), the agent's ``approved`` over a completed run (``post``); it names no
``E_ILLEGAL_TRANSITION`` (only ``record_warning`` ``E_OWNED_BLOCK_CHANGED`` about the
``execution:`` block, and for ``fc`` ``execution: null``), while ``status --json`` and the page say
``executing``/``aborted``/ ``completed`` with ``last_event`` ``E_ILLEGAL_TRANSITION ... ignored``
and ``file_status``. Nothing ran twice and nothing forged ran (``fc2``/``ff2``/``ma2`` once,
``rv2``/``rr2`` never). Should (docs/errors.md, E_OWNED_BLOCK_CHANGED: "plangate shows the
controller's own record instead"; round 81's fix: readers follow the controller's row): ``show``
with a config gives the controller's status, or at least names the ignored transition beside the
file's; the lead may rule ``show`` a preview of the file. Fixed (2026-12-01, lead): with a
config, ``show`` reads the controller's row of the plan as ``plangate status`` does and gives its
status (JSON ``plan.status``, text ``Status:``), the file's as ``file_status`` and in the warning
("the file says status ..., the controller holds ...", with the row's last event).
Held: the page's HTML plan view (its status chip), ``/api/plan/<id>`` and ``/api/`` counts
and ``status --json`` followed the controller
in every story (never ``completed`` mid-run, never ``approved`` for Mallory's approval, ``aborted``
after the revert, ``executing`` with ``waiting`` ``E_HISTORY_REWRITTEN`` after the erased abort,
``completed`` after the forged ends); the reverted and the erased abort never resumed the run
(``rv2``/``rr2`` never, ``rv``/``rr`` once); Mallory's ``aborted`` did not stop ``ma`` (not
entitled: ``ma2`` ran once); Mallory's approval of ``na`` was refused; the fresh-clone audit agreed
(one valid run each, none of ``na``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, identity, plan_text, valid_runs
from mcpkit import PLANGATE
from test_round2_execution_kit import shared
from writerkit import free_port

HOLD = r"""
import os, sys, time
d, tag = os.environ["HOLD_DIR"], sys.argv[1]
open(os.path.join(d, "HELD-" + tag), "w").write(str(os.getpid()))
for _ in range(600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"held": true}')
"""
HELD = ["fc", "ff", "ma", "rv", "rr"]


def _until(pred: Any, timeout: float = 60.0) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def _get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")
    except OSError as e:
        return -1, repr(e)


def _held_plan(tag: str) -> str:
    tail = (
        f'  - id: 2\n    tool: hold\n    why: "hold"\n    params: {{h: "{tag}"}}\n'
        f'  - id: 3\n    tool: rec\n    why: "after"\n    params: {{tag: "{tag}2"}}\n'
    )
    return plan_text(tag, extra_actions=tail).replace(
        "  - name: rec\n", "  - name: rec\n  - name: hold\n"
    )


def _forge(lab: Lab, vid: str, status: str, who: tuple[str, str]) -> None:
    path = lab.repo / "plans" / vid / "PLAN.yml"
    text = path.read_text()
    old = "status: executing" if "status: executing" in text else "status: completed"
    path.write_text(text.replace(old, f"status: {status}"))
    lab.commit(f"{vid}: {status}", who, f"plans/{vid}/PLAN.yml")


def _build(root: Path) -> Lab:
    hold_dir = root / "hold"
    hold_dir.mkdir(parents=True)
    (root / "hold.py").write_text(HOLD)
    argv = json.dumps([sys.executable, str(root / "hold.py"), "{h}"])
    held = json.dumps(str(hold_dir))
    lab = Lab(root, tools=f"hold: {{kind: exec, argv: {argv}, env: {{HOLD_DIR: {held}}}}}\n")
    for vid in HELD:
        lab.write(vid, _held_plan(vid))
    for vid in ["na", "post", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent plans", AGENT)
    ui = free_port()
    lab.config.write_text(lab.config.read_text() + f"ui: {{listen: {ui}}}\n")
    seen: dict[str, Any] = {}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    errf = (root / "daemon.err").open("wb")
    d = subprocess.Popen(
        [PLANGATE, "run", "--config", str(lab.config)], cwd=root, env=env,
        stdout=subprocess.DEVNULL, stderr=errf, start_new_session=True,
    )  # fmt: skip

    def row(vid: str) -> dict[str, Any]:
        st = lab.cli("status", "--json", "--config", str(lab.config))
        rows = [r for r in json.loads(st.stdout or "[]") if r["plan"] == f"plans/{vid}"]
        return rows[0] if rows else {"raw": st.stdout[-500:] + st.stderr[-500:]}

    def look(key: str, vid: str) -> None:
        seen[f"{key}:page"] = _get(ui, f"/api/plan/plans/{vid}")
        seen[f"{key}:row"] = row(vid)
        seen[f"{key}:html"] = _get(ui, f"/plan/plans/{vid}")
        seen[f"{key}:plainshow"] = lab.cli(
            "show", "--config", str(lab.config), str(lab.repo / "plans" / vid / "PLAN.yml")
        ).stdout
        sh = lab.cli(
            "show",
            "--json",
            "--config",
            str(lab.config),
            str(lab.repo / "plans" / vid / "PLAN.yml"),
        )
        seen[f"{key}:show"] = (sh.returncode, sh.stdout, sh.stderr[-1000:])

    def frozen() -> bool:
        return all(lab.plan(v).get("frozen") for v in [*HELD, "na", "post", "ctl"])

    try:
        assert _until(lambda: _get(ui, "/api/")[0] == 200, 60), (root / "daemon.err").read_text()
        assert _until(frozen, 60), (root / "daemon.err").read_text()[-1500:]
        # na: Mallory approves a pending plan
        lab.set_status("na", "approved")
        lab.commit("approve na", MALLORY)
        time.sleep(2)
        look("na_mid", "na")
        seen["index0"] = _get(ui, "/api/")
        for vid, status, who in [
            ("fc", "completed", MALLORY),
            ("ff", "failed", AGENT),
            ("ma", "aborted", MALLORY),
        ]:
            lab.approve(vid)
            _until(lambda v=vid: (hold_dir / f"HELD-{v}").exists(), 60)
            path = lab.repo / "plans" / vid / "PLAN.yml"
            _until(lambda p=path: "execution:" in p.read_text(), 20)
            _forge(lab, vid, status, who)
            time.sleep(2)
            look(f"{vid}_mid", vid)
            seen[f"{vid}_still_held"] = not (hold_dir / f"GO-{vid}").exists()
            if vid == "fc":
                seen["index_fc"] = _get(ui, "/api/")
            (hold_dir / f"GO-{vid}").write_text("go")
            _until(
                lambda v=vid: len(lab.calls(f"{v}2")) == 1 and row(v).get("status") != "executing",
                60,
            )
        # rv: Alice aborts mid-run, then reverts her abort commit
        lab.approve("rv")
        _until(lambda: (hold_dir / "HELD-rv").exists(), 60)
        told = subprocess.run(
            [PLANGATE, "abort", "--config", str(lab.config), "plans/rv"],
            cwd=lab.repo, env={**lab.env(), **identity(ALICE)}, capture_output=True, text=True,
        )  # fmt: skip
        seen["rv_cli"] = (told.returncode, told.stderr[-800:])
        abort_commit = lab.head()
        (hold_dir / "GO-rv").write_text("go")
        _until(lambda: row("rv").get("status") == "aborted", 60)
        time.sleep(2)
        lab.git("revert", "--no-edit", abort_commit, who=ALICE)
        seen["rv_revert_file"] = lab.plan("rv").get("plan", {}).get("status")
        time.sleep(4)
        look("rv_after", "rv")
        # rr: Alice aborts mid-run; the agent resets main to before her abort (her commit and
        # the controller's abort record gone); later the owner restores the tip
        lab.approve("rr")
        _until(lambda: (hold_dir / "HELD-rr").exists(), 60)
        told = subprocess.run(
            [PLANGATE, "abort", "--config", str(lab.config), "plans/rr"],
            cwd=lab.repo, env={**lab.env(), **identity(ALICE)}, capture_output=True, text=True,
        )  # fmt: skip
        seen["rr_cli"] = (told.returncode, told.stderr[-800:])
        abort_commit = lab.head()
        (hold_dir / "GO-rr").write_text("go")
        _until(lambda: row("rr").get("status") == "aborted", 60)
        time.sleep(2)
        tip = lab.head()
        lab.git("reset", "-q", "--hard", f"{abort_commit}^")
        time.sleep(4)
        look("rr_gone", "rr")
        seen["rr_gone_calls"] = len(lab.calls("rr2"))
        lab.git("reset", "-q", "--hard", tip)
        time.sleep(3)
        # post: completed, then forged ends over it
        lab.approve("post")
        _until(lambda: row("post").get("status") == "completed", 60)
        _forge(lab, "post", "failed", MALLORY)
        time.sleep(1)
        lab.set_status("post", "approved")
        lab.commit("again", AGENT)
        time.sleep(3)
        look("post_after", "post")
        lab.approve("ctl")
        _until(lambda: len(lab.calls("ctl")) == 1, 60)
        time.sleep(2)
        for vid in [*HELD, "na", "post", "ctl"]:
            seen[f"end:{vid}:page"] = _get(ui, f"/api/plan/plans/{vid}")
            seen[f"end:{vid}:row"] = row(vid)
        seen["alive"] = d.poll() is None
    finally:
        os.killpg(d.pid, signal.SIGTERM)
        d.wait(timeout=180)
        errf.close()
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], env=lab.env(), check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    lab.audit_err = out.stderr[-2000:]  # type: ignore[attr-defined]
    lab.report = json.loads(out.stdout) if out.stdout.strip() else {}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r82-page", _build)


RAN = {"fc": 1, "fc2": 1, "ff": 1, "ff2": 1, "ma": 1, "ma2": 1, "rv": 1, "rv2": 0, "rr": 1,
       "rr2": 0, "na": 0, "post": 1, "ctl": 1}  # fmt: skip
BROKEN: dict[str, Any] = {}  # SHOWN's 10 ids fixed (2026-12-01, lead): show --config
# gives the controller's status and names the one the file says


@pytest.mark.parametrize("tag", cases(list(RAN), list(RAN), {}))
def test_ran(lab: Lab, tag: str) -> None:
    assert len(lab.calls(tag)) == RAN[tag], lab.calls(tag)


def _page_row(lab: Lab, key: str) -> dict[str, Any]:
    code, body = lab.seen[key]  # type: ignore[attr-defined]
    assert code == 200, (code, body[-800:])
    return dict(json.loads(body)["row"])


READERS = ["page", "row", "show", "text", "html"]
MID = [f"{v}:{w}" for v in ["fc", "ff", "ma", "na", "rv", "rr", "post"] for w in READERS]


@pytest.mark.parametrize("which", cases(MID, MID, BROKEN))
def test_mid(lab: Lab, which: str) -> None:
    """Each reader follows the controller, never the status it ignored."""
    vid, what = which.split(":")
    seen = lab.seen  # type: ignore[attr-defined]
    key = {"na": "na_mid", "rv": "rv_after", "rr": "rr_gone", "post": "post_after"}.get(
        vid, f"{vid}_mid"
    )
    want = {"na": "pending_approval", "rv": "aborted", "post": "completed"}.get(vid, "executing")
    if what in ("text", "html"):  # show's text view; the daemon's HTML page of the plan
        ok = ["executing", "aborted"] if vid == "rr" else [want]
        if what == "text":
            line = [ln for ln in seen[f"{key}:plainshow"].splitlines() if ln.startswith("Status:")]
            assert line and line[0].split()[1] in ok, line
        else:
            code, html = seen[f"{key}:html"]
            chips = re.findall(r"chip s-([a-z_]+)", html)
            assert code == 200 and chips and chips[0] in ok, (code, chips)
        return
    if vid == "rr":  # the abort erased: never resumed; aborted, or held E_HISTORY_REWRITTEN
        assert seen["rr_gone_calls"] == 0
        if what == "show":
            code, out, err = seen[f"{key}:show"]
            assert code == 0 and json.loads(out)["plan"]["status"] != "completed", out[-500:]
            return
        got = _page_row(lab, f"{key}:page") if what == "page" else seen[f"{key}:row"]
        assert got.get("status") == "aborted" or "E_HISTORY_REWRITTEN" in json.dumps(got), got
        return
    if vid in ("fc", "ff", "ma"):
        assert seen[f"{vid}_still_held"]
    if what == "page":
        got = _page_row(lab, f"{key}:page")
        assert got["status"] == want, got
    elif what == "row":
        got = seen[f"{key}:row"]
        assert got.get("status") == want, got
    else:  # show --json --config: the plan's status as the controller holds it, or the
        # ignored transition named (docs/errors.md: show prints the controller's record)
        code, out, err = seen[f"{key}:show"]
        assert code == 0 and "Traceback" not in err, err
        shown = json.loads(out)
        assert shown["plan"]["status"] == want or "E_ILLEGAL_TRANSITION" in out, (
            shown["plan"]["status"],
            shown.get("record_warning"),
        )


END = {"fc": "completed", "ff": "completed", "ma": "completed", "rv": "aborted", "rr": "aborted",
       "na": "pending_approval", "post": "completed", "ctl": "completed"}  # fmt: skip
END_IDS = [f"{v}:{w}" for v in END for w in ["page", "row"]]


@pytest.mark.parametrize("which", cases(END_IDS, END_IDS, BROKEN))
def test_end(lab: Lab, which: str) -> None:
    vid, what = which.split(":")
    seen = lab.seen  # type: ignore[attr-defined]
    got = _page_row(lab, f"end:{which}") if what == "page" else seen[f"end:{which}"]
    assert got.get("status") == END[vid], got


def test_index(lab: Lab) -> None:
    """``/api/`` after Mallory's ``fc`` forgery counts no plan ``completed`` that the controller
    has not recorded (before it, none had completed)."""
    seen = lab.seen  # type: ignore[attr-defined]
    code, body = seen["index_fc"]
    assert code == 200, body[-500:]
    counts = json.loads(body)["counts"]
    assert "completed" not in counts and counts.get("executing", 0) >= 1, counts
    assert seen["alive"] is True


@pytest.mark.parametrize("vid", cases(["rv", "rr"], ["rv", "rr"], {}))
def test_abort_cli(lab: Lab, vid: str) -> None:
    assert lab.seen[f"{vid}_cli"][0] == 0, lab.seen[f"{vid}_cli"]  # type: ignore[attr-defined]


AUDIT = {"fc": "complete", "ff": "complete", "ma": "complete", "rv": "abort", "rr": "abort",
         "post": "complete",
         "ctl": "complete", "na": None}  # fmt: skip


@pytest.mark.parametrize("vid", cases(list(AUDIT), list(AUDIT), BROKEN))
def test_audit(lab: Lab, vid: str) -> None:
    assert "Traceback" not in lab.audit_err, lab.audit_err  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    if AUDIT[vid] is None:
        assert runs == [], runs
    else:
        assert len(runs) == 1 and runs[0]["outcome"] == AUDIT[vid], runs
