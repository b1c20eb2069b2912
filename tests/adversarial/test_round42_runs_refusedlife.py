# ruff: noqa: E501
"""Round 42, what happens to a plan the forge refused (remote mode, ``<state_dir>/refused.json``,
new in round 41) when people act on it while it waits, and what ``status`` says about it.

docs/approvals.md ("Remote mode"): a refused controller commit sets only its plan aside; "a
refused start ran nothing and is decided again"; "a refused outcome is never a reason to run
the tool again"; ``status`` shows the plan under ``waiting`` with the remote's reason
(redacted), and the refused event is retried on each process's first pass.

One lab: a ``file://`` bare repository whose pre-receive hook refuses commits by the
controller (committer ``plangate@localhost``) when their full diff holds ``FREEZEMARK`` (for
good), ``CTLMARK`` (the reason holds ESC sequences, BEL and U+202E), ``SECMARK`` (the reason
prints the configured secret ``PLANGATE_SECRET_TOKEN`` plainly, base64'd and percent-encoded),
and, while the file ``strict`` exists, a start of a ``plans/s-*`` plan (its diff adds
``status: executing``) or ``OUTMARK`` (printed by the ``out`` tool). Phases: the plans are
pushed (2 passes), Alice approves the ``s-*``/``o-*`` plans and ``good`` (2 passes), then,
while they wait: Alice rejects ``s-rej``, aborts ``s-abort`` and ``o-abort``; the agent
removes ``s-rm`` and moves ``o-move`` to ``o-moved``; the agent (its author) rejects ``f-rej``
(1 pass); then the hook relaxes (``strict`` removed) and three ``run --once`` passes follow.

Variants and what is asserted:

- ``start-once`` (``s-ok``): start refused, then published: its tool ran once. Held.
- ``start-then-rejected`` / ``-aborted`` / ``-removed``: the refused start is decided again:
  the tool ran 0 times. Held.
- ``outcome-then-aborted`` / ``-moved``: the refused outcome is replayed, the tool ran once,
  and the fresh clone's audit reads the same final state as ``status``. Held.
- ``others``: ``good`` ran once; every pass exited 0. Held.
- ``reason-controls``: ``status`` text never writes the raw ESC/BEL/U+202E of the remote's
  reason (it writes ``\\x1b``...). Held.
- ``reason-secret``: the secret (in the three forms) is in neither ``status`` text nor JSON.
  Held.
- ``waiting-*``: once the forge accepts (or the plan no longer needs that commit), ``status``
  does not say the plan waits on a refused commit and ``refused.json`` no longer lists it.
  ``waiting-freeze-then-withdrawn`` (``f-rej``): its freeze is refused for good, then its
  author (the agent) sets it ``rejected`` (a withdrawal): the plan needs no freeze any more.

**Broke** (``waiting-start-then-rejected``): the start of ``s-rej`` is refused; Alice rejects
the plan (pushed, final); the hook relaxes and three ``plangate run --once`` passes run (each
a process's first pass, which retries refused events). ``status`` still shows the rejected plan
with ``waiting: E_GIT: the remote refused the start commit of plans/s-rej (...): pre-receive
hook declined; ...; then `plangate run --once` retries; plans/s-rej waits, nothing else
does``, and ``refused.json`` still holds the entry after the three passes. The aborted
and the removed twins are cleared.

**Broke** (``waiting-freeze-then-withdrawn``), the same way: ``f-rej`` (freeze refused for
good, FREEZEMARK in its name) withdrawn by its author: ``status`` shows it ``rejected`` with
``waiting: E_GIT: the remote refused the freeze commit of plans/f-rej ...; plans/f-rej waits``
and ``refused.json`` keeps the entry, whose commit (a freeze made on a tip before the
withdrawal) stays as it was after the three passes. Should (both): a refused event the plan
no longer needs (it is rejected: it will never freeze or start) is dropped like the aborted
one's, and ``status`` does not tell the operator to retry a plan that can never start.

Fixed (both; the markers removed): a refused decision event (start, freeze, refuse, partial)
is decided again from the branch on the retry pass (a process's first); when that pass
commits nothing for the plan (rejected or withdrawn: nothing to start or freeze) and no job
of the controller's is left for it, the entry is released (``refusal_cleared``,
``ControllerCore._release_unneeded``). A refused outcome stays until an outcome commit of the
plan is published (the run happened); a commit of another event of the plan no longer
releases it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SECRET = "Zq7hunter2Xy"
HOOK = r"""#!/bin/sh
while read old new ref; do
  if [ "$old" = 0000000000000000000000000000000000000000 ]; then range=$new; else range=$old..$new; fi
  for c in $(git rev-list "$range"); do
    [ "$(git log -1 --format=%ce $c)" = plangate@localhost ] || continue
    full=$(git show -U100000 $c)
    case "$full" in *FREEZEMARK*) echo "push protection: FREEZEMARK" >&2; exit 1;; esac
    case "$full" in *CTLMARK*) printf 'evil \033[2J\033]0;pwned\007 \342\200\256gnp.exe\n' >&2; exit 1;; esac
    case "$full" in *SECMARK*) echo "found Zq7hunter2Xy / WnE3aHVudGVyMlh5 / Zq7%68unter2Xy" >&2; exit 1;; esac
    if [ -e ROOT/strict ]; then
      if git show $c -- 'plans/s-*/PLAN.yml' | grep -q '^+.*status: executing'; then
        echo "policy: no start of s-*" >&2; exit 1
      fi
      case "$full" in *OUTMARK*) echo "push protection: OUTMARK" >&2; exit 1;; esac
    fi
  done
done
exit 0
"""
OUT = (
    "import json, os, sys\n"
    "open(os.environ['REC_LOG'], 'a').write(json.dumps({'argv': [sys.argv[1]], 'stdin': ''}) + '\\n')\n"
    "print(json.dumps({'v': sys.argv[2][::-1]}))\n"
)
STARTS = ["s-ok", "s-rej", "s-abort", "s-rm"]
OUTCOMES = ["o-abort", "o-move"]


def _out_plan(tag: str) -> str:
    return (
        f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: out}]\n"
        f"actions:\n  - id: 1\n    tool: out\n    why: w\n    params: {{tag: {tag}, s: KRAMTUO}}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}  # type: ignore[attr-defined]
    bare = root / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(HOOK.replace("ROOT", str(root)))
    hook.chmod(0o755)
    (root / "strict").write_text("")
    lab.git("remote", "add", "origin", str(bare))
    lab.git("fetch", "-q", "origin")
    (root / "out.py").write_text(OUT)
    argv = json.dumps([sys.executable, str(root / "out.py"), "{tag}", "{s}"])
    lab.write_config(
        tools=f"out: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
        )
    )

    def sync() -> None:
        lab.git("pull", "-q", "--rebase", "origin", "main")

    def push() -> None:
        lab.git("push", "-q", "origin", "HEAD:main")

    passes: list[int] = []
    for slug in [*STARTS, "good"]:
        lab.write(slug, plan_text(slug))
    for slug in OUTCOMES:
        lab.write(slug, _out_plan(slug))
    lab.write("f-rej", plan_text("f-rej", name="FREEZEMARK"))
    lab.write("n-ctl", plan_text("n-ctl", name="CTLMARK"))
    lab.write("n-sec", plan_text("n-sec", name="SECMARK"))
    lab.commit("plans")
    push()
    passes += [lab.run(check=False).returncode for _ in range(2)]
    sync()
    for slug in [*STARTS, *OUTCOMES, "good"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    push()
    passes += [lab.run(check=False).returncode for _ in range(2)]
    sync()
    lab.waiting_before = {  # type: ignore[attr-defined]
        k: bool(v.get("waiting")) for k, v in lab.status().items()
    }
    # while they wait: people act on them
    lab.set_status("s-rej", "rejected")
    lab.commit("reject s-rej", ALICE)
    lab.git("config", "user.name", ALICE[0])
    lab.git("config", "user.email", ALICE[1])
    for slug in ["s-abort", "o-abort"]:
        result = lab.cli("abort", str(lab.repo / "plans" / slug), cwd=lab.repo)
        assert result.returncode == 0, result.stderr
    lab.git("rm", "-q", "-r", "plans/s-rm")
    lab.commit("remove s-rm", AGENT)
    lab.git("mv", "plans/o-move", "plans/o-moved")
    lab.commit("move o-move", AGENT)
    lab.set_status("f-rej", "rejected")
    lab.commit("withdraw f-rej", AGENT)
    push()
    passes.append(lab.run(check=False).returncode)
    (root / "strict").unlink()
    passes += [lab.run(check=False).returncode for _ in range(3)]
    sync()
    lab.passes = passes  # type: ignore[attr-defined]
    lab._status = None  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    text = lab.cli("status", "--config", str(lab.config))
    lab.status_text = text.stdout + text.stderr  # type: ignore[attr-defined]
    lab.status_json = json.dumps(list(lab.rows.values()))  # type: ignore[attr-defined]
    refused = lab.state / "refused.json"
    lab.refused = json.loads(refused.read_text()) if refused.exists() else {}  # type: ignore[attr-defined]
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True, env=lab.env())
    lab.audit_out = lab.cli("audit", cwd=clone).stdout  # type: ignore[attr-defined]
    shutil.rmtree(clone)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r42-refusedlife", lambda root: _build(root / "lab"))


def test_the_refusals_happened(lab: Lab) -> None:
    """The bench: each plan the hook refuses waited before the people acted."""
    for slug in [*STARTS, *OUTCOMES, "n-ctl", "n-sec", "f-rej"]:
        assert lab.waiting_before.get(f"plans/{slug}"), (slug, lab.waiting_before)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("slug", "times"),
    [
        pytest.param("s-ok", 1, id="start-once"),
        pytest.param("s-rej", 0, id="start-then-rejected"),
        pytest.param("s-abort", 0, id="start-then-aborted"),
        pytest.param("s-rm", 0, id="start-then-removed"),
        pytest.param("o-abort", 1, id="outcome-then-aborted"),
        pytest.param("o-move", 1, id="outcome-then-moved"),
        pytest.param("good", 1, id="others"),
    ],
)
def test_runs_at_most_once(lab: Lab, slug: str, times: int) -> None:
    assert len(lab.calls(slug)) == times, lab.calls(slug)
    assert lab.passes == [0] * len(lab.passes), lab.passes  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", ["o-abort", "o-move", "s-ok"])
def test_audit_reads_what_status_says(lab: Lab, slug: str) -> None:
    row = lab.rows[f"plans/{slug}"]  # type: ignore[attr-defined]
    said = {"completed": "complete", "executing": "running"}.get(row["status"], row["status"])
    lines = [x for x in lab.audit_out.splitlines() if x.startswith(f"plans/{slug}: start")]  # type: ignore[attr-defined]
    assert lines and lines[-1].endswith(f"-> {said}"), (lines, row["status"])


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param("s-ok", id="waiting-start-once"),
        pytest.param("s-rej", id="waiting-start-then-rejected"),
        pytest.param("s-abort", id="waiting-start-then-aborted"),
        pytest.param("s-rm", id="waiting-start-then-removed"),
        pytest.param("o-abort", id="waiting-outcome-then-aborted"),
        pytest.param("o-move", id="waiting-outcome-then-moved"),
        pytest.param("f-rej", id="waiting-freeze-then-withdrawn"),
    ],
)
def test_status_stops_saying_it_waits(lab: Lab, slug: str) -> None:
    row = lab.rows.get(f"plans/{slug}") or {}  # type: ignore[attr-defined]
    assert not row.get("waiting"), json.dumps(row)[:800]
    assert f"plans/{slug}" not in lab.refused, lab.refused  # type: ignore[attr-defined]


def test_reason_controls_are_escaped(lab: Lab) -> None:
    text = lab.status_text  # type: ignore[attr-defined]
    assert "plans/n-ctl" in text and "gnp.exe" in text, text[-2000:]
    for raw in ["\x1b", "\x07", "\u202e"]:
        assert raw not in text, repr(text[-2000:])


def test_reason_secret_is_redacted(lab: Lab) -> None:
    assert "the remote refused the freeze commit of plans/n-sec" in lab.status_json  # type: ignore[attr-defined]
    for form in [SECRET, "WnE3aHVudGVyMlh5", "Zq7%68unter2Xy"]:
        assert form not in lab.status_text, form  # type: ignore[attr-defined]
        assert form not in lab.status_json, form  # type: ignore[attr-defined]
