"""Round 40, what is recorded in remote mode when the forge refuses a push of the
controller's own commit (a pre-receive hook on the bare repository: a stand-in for a forge's
push protection, which refuses a push whose diff carries something that looks like a
credential, or for a transient refusal).

docs/approvals.md ("Remote mode"): "Execution starts only after the start commit is pushed. A
rejected push ... drops the unpublished commit, fetches, re-evaluates from the new history,
and retries". The promise: at most once, and git history alone proves it (a fresh clone's
``plangate audit`` agrees with the controller).

One lab (remote mode, ``file://`` bare repository with the hook). Alice approves ``r-start``,
``r-done``, ``aa`` in one push (three passes), then ``leak`` and ``mm`` in one push (three
passes), then the agent submits ``zz`` and Alice approves it (three passes):

- ``start-once``: the hook refuses the first push holding ``start plans/r-start``: its tool
  runs once in all (held);
- ``outcome-once``: the hook refuses the first push holding ``complete plans/r-done``: its tool
  runs once, its outcome reaches the remote on a later pass (held);
- ``others-go-on-same-push``: ``aa`` runs once and its outcome reaches the remote (held);
- ``approved-with-leak``: ``mm``, approved in the same push as ``leak``, runs once and its
  outcome reaches the remote;
- ``others-go-on-later``: ``zz`` (submitted and approved afterwards) runs once and its outcome
  reaches the remote (held);
- ``refused-for-good``: ``leak``'s tool prints ``FORBIDDENMARK`` (the reverse of its param, so
  the plan itself is pushed fine), which the hook refuses in any push, for good (as push
  protection refuses a token pattern): the outcome commit can never be published.

Asserted for ``refused-for-good``: ``leak`` ran once, and ``plangate status`` does not report a
state the remote does not hold: its row's ``last_commit`` is on the remote's branch, or the
row says the outcome is waiting (``waiting`` set); and the fresh clone's audit agrees.

**Broke** (round 40, ``approved-with-leak``): ``mm``'s start commit reaches the remote (status
``executing``) but its tool never runs in six passes: each pass first tries to push the
refused ``complete plans/leak`` and ends ``E_GIT`` (exit 2) before running anything started;
only a new push to the remote (``zz``) makes a pass go further, and ``mm`` still waits. One
hostile tool output stalls a plan the controller already started. Should: a refused record
costs only its own plan (``leak``); ``mm`` runs and its outcome is published.

**Broke** (round 40, ``refused-for-good``): every later pass exits 2 (``E_GIT: git push origin``)
and the controller's clone keeps ``plangate: complete plans/leak`` on top of the other
commits it publishes (``zz``'s start and outcome reach the remote beneath it); ``status
--json`` says ``completed`` with that unpublished commit as ``last_commit`` and
``waiting: null``, while ``plangate audit`` on a fresh clone of the remote says ``plans/leak:
... valid -> running`` and ``audit: ok``. Should: a record the remote refused is not reported
as the plan's state (``status`` names the refused outcome, e.g. under ``waiting`` with
``E_GIT``), or the controller publishes an outcome the forge accepts.

**Fixed** (both): ``GitRepo.push`` tells a refusal by the remote's hook (``[remote rejected]``,
``pre-receive hook declined``: ``PushRefused``) from a lost race and an unreachable remote. A
refused controller commit leaves the clone, its plan is set aside in
``<state_dir>/refused.json`` and the pass goes on: ``mm`` runs once and its outcome is
published, every pass exits 0. ``leak`` waits: ``status`` keeps the state the remote holds
(``executing``, the audit's ``running``) and says under ``waiting`` ``E_GIT: the remote
refused the outcome of plans/leak ...`` with the remote's reason and the remedy; each new
process retries the outcome from the run's journal, never running the tool again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

HOOK = """#!/bin/sh
while read old new ref; do
  range=$old..$new
  if [ "$old" = 0000000000000000000000000000000000000000 ]; then range=$new; fi
  if git log -p "$range" | grep -q FORBIDDENMARK; then
    echo "push protection: FORBIDDENMARK" >&2; exit 1
  fi
  subj=$(git log --format=%s "$range")
  for pat in "start plans/r-start" "complete plans/r-done"; do
    m="$MARKS/$(echo "$pat" | tr ' /' '__')"
    case "$subj" in *"$pat"*)
      if [ ! -e "$m" ]; then touch "$m"; echo "refused once: $pat" >&2; exit 1; fi;;
    esac
  done
done
exit 0
"""

LEAK = """\
plan:
  name: leak
  task: "a tool prints what the forge refuses"
  status: pending_approval
available_tools: [{name: rev}]
actions:
  - id: 1
    tool: rev
    why: "print the reverse of s"
    params: {s: KRAMNEDDIBROF}
"""

FIRST = ["r-start", "r-done", "aa"]
SECOND = ["leak", "mm"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    bare = root / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(HOOK.replace("$MARKS", str(root)))
    hook.chmod(0o755)
    lab.git("remote", "add", "origin", str(bare))
    lab.git("fetch", "-q", "origin")
    (root / "rev.py").write_text(
        "import json, os, sys\n"
        "row = json.dumps({'argv': ['leak'], 'stdin': ''})\n"
        "open(os.environ['REC_LOG'], 'a').write(row + '\\n')\n"
        "print(json.dumps({'v': sys.argv[1][::-1]}))\n"
    )
    argv = json.dumps([sys.executable, str(root / "rev.py"), "{s}"])
    lab.write_config(
        tools=f"rev: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
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

    for slug in [*FIRST, *SECOND]:
        lab.write(slug, LEAK if slug == "leak" else plan_text(slug))
    lab.commit("plans")
    push()
    lab.run()
    sync()
    for slug in FIRST:
        lab.approve(slug, ALICE)
    push()
    lab.passes = [lab.run(check=False).returncode for _ in range(3)]  # type: ignore[attr-defined]
    sync()
    for slug in SECOND:
        lab.approve(slug, ALICE)
    push()
    lab.passes += [lab.run(check=False).returncode for _ in range(3)]  # type: ignore[attr-defined]
    sync()
    lab.write("zz", plan_text("zz"))
    lab.commit("zz")
    push()
    lab.run(check=False)
    sync()
    lab.approve("zz", ALICE)
    push()
    lab.passes += [lab.run(check=False).returncode for _ in range(3)]  # type: ignore[attr-defined]
    lab.remote_log = subprocess.run(  # type: ignore[attr-defined]
        ["git", "--git-dir", str(bare), "log", "--format=%H %s", "main"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    clone = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True, env=lab.env())
    lab.audit_out = lab.cli("audit", cwd=clone).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-forgereject", lambda root: _build(root / "lab"))


def _on_remote(lab: Lab, subject: str) -> bool:
    return any(line.split(" ", 1)[1] == subject for line in lab.remote_log.splitlines())  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param("r-start", id="start-once"),
        pytest.param("r-done", id="outcome-once"),
        pytest.param("aa", id="others-go-on-same-push"),
        pytest.param("mm", id="approved-with-leak"),
        pytest.param("zz", id="others-go-on-later"),
    ],
)
def test_a_refused_push_runs_nothing_twice_and_the_outcome_lands(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1, lab.calls(slug)
    assert _on_remote(lab, f"plangate: complete plans/{slug}"), lab.remote_log  # type: ignore[attr-defined]
    assert f"plans/{slug}: start" in lab.audit_out and "-> complete" in lab.audit_out  # type: ignore[attr-defined]


def test_an_outcome_the_forge_refuses_ran_once(lab: Lab) -> None:
    assert len(lab.calls("leak")) == 1, lab.calls("leak")


def test_status_does_not_report_an_outcome_the_remote_refused(lab: Lab) -> None:
    row = lab.status()["plans/leak"]
    published = row["last_commit"] in lab.remote_log  # type: ignore[attr-defined]
    assert published or row.get("waiting"), json.dumps(row)[:600]
    line = next(x for x in lab.audit_out.splitlines() if x.startswith("plans/leak:"))  # type: ignore[attr-defined]
    # the audit's words for a status: a started plan with no outcome is "running"
    said = {"completed": "complete", "executing": "running"}.get(row["status"], row["status"])
    assert line.endswith(f"-> {said}"), (line, row["status"])
    if not published:  # what waits is named: the refusal, its code and the remote's reason
        assert row["waiting"].startswith("E_GIT: the remote refused the outcome of plans/leak")
        assert "pre-receive hook declined" in row["waiting"], row["waiting"]
        assert "plangate run --once" in row["waiting"], row["waiting"]


def test_no_pass_fails_on_a_refused_push(lab: Lab) -> None:
    """A refusal costs its plan only: every pass of the lab ends 0 (round 40: each pass after
    the refusal exited 2, ``E_GIT: git push origin``)."""
    assert lab.passes == [0] * len(lab.passes), lab.passes  # type: ignore[attr-defined]
