"""Round 56 (runs): the state directory full while a plan runs. Nobody had run the controller
short of space. A per-file size limit (``RLIMIT_FSIZE``, as ``ulimit -f`` or systemd's
``LimitFSIZE=`` sets it; Python ignores ``SIGXFSZ``, so a write past it fails ``EFBIG``) stands
for a full disk at a chosen size: the state directory's databases (under 60 KB here) still
fit, a journal record of a 60 KB tool result does not. docs/execution.md: "one JSON record
per line, each written with ``O_APPEND`` and ``fdatasync`` before the engine moves on";
SPEC §15: "One bad entry ... costs that plan a coded error and never stalls other plans".

Lab ``df`` (limit 100,000 bytes per file for one ``run --once``, then ordinary passes):
``big`` is an exec tool that records its call and prints ``{"blob": N random hex}``.

- ``torn``: action 1 ``big`` (60,000 hex: its ``end`` record, stdout and ``json`` and the
  output, is cut by the limit), action 2 ``rec``.
- ``refused``: action 1 ``big`` (20,000 hex, fits), action 2 ``rec`` with ``x`` three
  references to that output (its ``start`` record, 60 KB, does not fit).
- ``bigfile`` + ``ok`` (lab ``dfb``): a 150 KB plan (an input of 150,000 ``y``: under
  ``max_plan_bytes``) whose start commit's object does not fit, and an ordinary plan
  approved in the same commit.

Asserted per variant: ``*-once``/``-not-called``: the tool whose journal record could not be
written never ran, nothing ran twice (held, each); ``*-resume``: Alice's resume goes on
without running the finished action again (held). ``*-recorded``: the outcome commit the
controller makes for the run (``plangate: fail``) records the action whose tool it called
(``execution.actions``). **Broke** (2): the fail commit's PLAN.yml has no ``execution:``
block at all (its message says ``E_INTERNAL: journal ... short write``): history shows a
failed plan of which nothing ran, while ``big`` ran (exit 0, and for ``refused`` it is
journaled ``succeeded``). ``*-no-stray``: nothing the controller wrote is left in the
working tree outside its commits. **Broke** (2): ``EXECUTION_LOG.md`` ("executing", every
action pending) stays untracked after the fail commit and after later passes: an agent's next
``git add -A`` commits the controller's stale log under the agent's name. ``bigfile-other``:
the ordinary plan runs. **Broke**: the pass dies with ``internal error: OSError: [Errno 27]
File too large`` (exit 2) while writing the big plan's start commit, before ``ok`` is
started, and again on every pass while the limit holds: one plan stalls all.
``bigfile-not-called`` held.

Fixed (2026-11-29): a journal record the disk cannot take ends its step in the engine
(``executor.PlanRun.record``): ``in_doubt`` with E_ACTION_IN_DOUBT when its tool was called,
``failed`` (E_STORAGE, ``no_call``) when not; the run fails with what is known, so the fail
commit carries the ``execution:`` block and the log. A controller commit whose objects cannot
be written (``committing._not_written``) costs its plan a wait (E_STORAGE, path and remedy);
the other plans go on.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

LIMIT = 100_000
BIG = """\
import json, os, sys
data = sys.stdin.read()
p = json.loads(data)
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": [p["tag"]], "stdin": data}) + "\\n")
print(json.dumps({"ok": True, "blob": os.urandom(p["n"] // 2).hex()}))
"""
REF = '"$<actions[1].outputs.b>"'


def _plan(tag: str, n: int, x: str = "", inputs: str = "") -> str:
    return (
        f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n{inputs}"
        "available_tools: [{name: big}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: big\n    why: w\n    params: {{tag: {tag}, n: {n}}}\n"
        "    outputs: [{name: b, path: $.json.blob}]\n"
        f"  - id: 2\n    tool: rec\n    why: w\n    params: {{tag: {tag}-2{x}}}\n"
    )


def _lab(root: Path) -> Lab:
    (root / "big.py").parent.mkdir(parents=True, exist_ok=True)
    (root / "big.py").write_text(BIG)
    py = json.dumps(sys.executable)
    script = json.dumps(str(root / "big.py"))
    log = json.dumps(str(root / "lab" / "ran.log"))
    lab = Lab(
        root / "lab",
        tools=f"big: {{kind: exec, argv: [{py}, {script}], env: {{REC_LOG: {log}}}}}\n",
    )
    return lab


def limited(lab: Lab) -> subprocess.CompletedProcess[str]:
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    return subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
        cwd=lab.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT)),
    )


def _build(root: Path) -> Lab:
    lab = _lab(root)
    lab.write("torn", _plan("torn", 60_000))
    lab.write("refused", _plan("refused", 20_000, x=f", x: [{REF}, {REF}, {REF}]"))
    lab.commit("plans")
    lab.run()
    lab.set_status("torn", "approved")
    lab.set_status("refused", "approved")
    lab.commit("approve", ALICE)
    first = limited(lab)
    seen: dict[str, Any] = {"rc": first.returncode, "stderr": first.stderr[-2000:]}
    for slug in ("torn", "refused"):
        seen[slug] = {
            "calls": (len(lab.calls(slug)), len(lab.calls(f"{slug}-2"))),
            "subject": lab.git("log", "-1", "--format=%s", "--", f"plans/{slug}/PLAN.yml").strip(),
            "execution": lab.plan(slug).get("execution"),
        }
    seen["stray"] = lab.git("status", "--porcelain", "--untracked-files=all").splitlines()
    lab.run()
    lab.run()
    seen["stray-later"] = lab.git("status", "--porcelain", "--untracked-files=all").splitlines()
    for slug in ("torn", "refused"):
        seen[slug]["calls-later"] = (len(lab.calls(slug)), len(lab.calls(f"{slug}-2")))
    lab.git("add", "plans/refused/PLAN.yml")  # the log stays as the controller left it
    lab.set_status("refused", "approved")
    lab.git("add", "plans/refused/PLAN.yml")
    lab.git("commit", "-q", "-m", "resume refused", who=ALICE)
    lab.run()
    lab.run()
    seen["refused"]["calls-resumed"] = (len(lab.calls("refused")), len(lab.calls("refused-2")))
    seen["refused"]["status-resumed"] = (lab.plan("refused").get("plan") or {}).get("status")
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


def _build_b(root: Path) -> Lab:
    lab = _lab(root)
    lab.write("bigfile", _plan("bigfile", 10, inputs=f"inputs: {{pad: {'y' * 150_000}}}\n"))
    lab.write("ok", plan_text("ok"))
    lab.commit("plans")
    lab.run()
    lab.set_status("bigfile", "approved")
    lab.set_status("ok", "approved")
    lab.commit("approve", ALICE)
    runs = [limited(lab), limited(lab)]
    lab.seen = {  # type: ignore[attr-defined]
        "rcs": [r.returncode for r in runs],
        "stderr": [r.stderr[-1500:] for r in runs],
        "bigfile": len(lab.calls("bigfile")) + len(lab.calls("bigfile-2")),
        "ok": len(lab.calls("ok")),
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-diskfull", _build)


@pytest.fixture(scope="module")
def labb(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r56-diskfull-b", _build_b)


IDS = [
    "torn-once",
    "torn-recorded",
    "torn-no-stray",
    "refused-not-called",
    "refused-recorded",
    "refused-resume",
    "bigfile-not-called",
    "bigfile-other",
]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_a_full_state_directory(lab: Lab, labb: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    if vid == "torn-once":
        assert seen["torn"]["calls"] == (1, 0), seen["torn"]
        assert seen["torn"]["calls-later"] == (1, 0), seen["torn"]
    elif vid in ("torn-recorded", "refused-recorded"):
        slug = vid.split("-")[0]
        assert seen[slug]["subject"] == f"plangate: fail plans/{slug}", seen[slug]
        actions = (seen[slug]["execution"] or {}).get("actions") or []
        first = next((a for a in actions if a.get("id") == 1), {})
        assert first.get("status") in ("succeeded", "in_doubt", "failed"), seen[slug]["execution"]
    elif vid == "torn-no-stray":
        assert seen["stray"] == [] and seen["stray-later"] == [], (
            seen["stray"],
            seen["stray-later"],
        )
    elif vid == "refused-not-called":
        assert seen["refused"]["calls"] == (1, 0), seen["refused"]
        assert seen["refused"]["calls-later"] == (1, 0), seen["refused"]
    elif vid == "refused-resume":
        assert seen["refused"]["calls-resumed"] == (1, 1), seen["refused"]
        assert seen["refused"]["status-resumed"] == "completed", seen["refused"]
    elif vid == "bigfile-not-called":
        assert labb.seen["bigfile"] == 0, labb.seen  # type: ignore[attr-defined]
    elif vid == "bigfile-other":
        s = labb.seen  # type: ignore[attr-defined]
        assert s["ok"] == 1 and "internal error" not in "".join(s["stderr"]), s
