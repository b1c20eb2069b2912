"""Round 31, one hostile file never starves the pass (memory bound): files far over
``limits.max_plan_bytes`` that the controller reads although it never parses them.

docs/plan-format.md: "A plan version in history larger than ``limits.max_plan_bytes`` is
``E_PLAN_TOO_LARGE`` in ``status`` and is never parsed ... Each of these costs only that plan".
Round 27 bounded the controller at 150 MB for results of 200 MB and more; this round asks the
same of files the agent commits. Each variant is its own step in one lab: the agent writes
one hostile file of 60 MB (``x`` repeated), then Alice approves one honest plan ``h-<vid>``
(only its PLAN.yml staged), then one ``run --once`` pass with the controller's resident memory
sampled every 50 ms from ``/proc`` (round 27's bench):

- ``plan-tree``: ``plans/big/PLAN.yml`` of 60 MB committed by the agent (a comment line).
- ``plan-hist``: the same committed, then removed in the next commit (only history has it).
- ``plan-untracked``: the same left untracked in the shared working tree, never committed.
- ``policy-json``: the agent commits a 60 MB ``.plangate/policy.json`` (the controller's
  record of the policy, a path every pass reads).
- ``log-blob``: a 60 MB ``EXECUTION_LOG.md`` committed in a plan folder (control).
- ``data-blob``: a 60 MB ``data.bin`` committed in a plan folder (control).

Asserted: the pass exits 0 without a traceback, the honest plan ran once, and the
controller's peak RSS stays under 120 MB (it is 45-60 MB without the hostile file).

**Broke** (round 31): ``plan-tree`` (peak about 3.3x the file: 259 MB for 80 MB, 613 MB for
200 MB, on every pass while the file is there), ``plan-hist``, ``plan-untracked`` and
``policy-json`` (about 2.4x the file, once): the file is read whole, then found too large.
A 2 GB PLAN.yml (a few MB once compressed in a push) takes the controller's memory to
several GB on every pass: OOM-killed, every plan stalls. Should: take the size first
(``git cat-file -s``, ``fstat``) and never read more than the limit (plus one byte).
Held: ``log-blob``, ``data-blob``.

Fixed (round 31, every variant and the audit pass): no file or git blob over
``fsutil.READ_LIMIT`` (4 MiB) is read whole: a blob's size is asked first (``Objects.blob``,
the scan's batches), a working-tree file is read at most that far (``fsutil.read_regular``),
an uncommitted file's id is hashed a megabyte at a time, and ``limits.max_plan_bytes`` may
not exceed it.

- ``test_audit_memory``: after those steps, ``plangate audit --json`` in a fresh clone of the
  branch (history holding ``plans/big`` and ``plans/bighist`` at 60 MB). Asserted: no
  traceback, peak RSS under 120 MB. **Broke** (round 31): the audit reads the versions whole
  too (301 MB for one 100 MB PLAN.yml, by hand), so "git history alone proves it" costs
  memory in proportion to any file an agent committed.
"""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared
from test_round27_runs_bigresult import _measured_pass

SIZE = 60_000_000
LIMIT_MB = 120
VARIANTS = ["log-blob", "data-blob", "plan-hist", "policy-json", "plan-untracked", "plan-tree"]
R31 = "round 31: a file over max_plan_bytes is read whole into the controller's memory"
#: Found broken in round 31 (kept as the record; fixed: no marks).
FOUND = {"plan-hist", "policy-json", "plan-untracked", "plan-tree", "audit"}
BROKEN: set[str] = set()


def _big_plan() -> str:
    return plan_text("big") + "# " + "x" * SIZE + "\n"


def _hostile(lab: Lab, vid: str) -> None:
    if vid == "log-blob":
        lab.write("h-log-blob", "x" * SIZE, "EXECUTION_LOG.md")
    elif vid == "data-blob":
        lab.write("h-data-blob", "x" * SIZE, "data.bin")
    elif vid == "plan-hist":
        lab.write("bighist", _big_plan())
        lab.commit("huge plan", AGENT)
        (lab.repo / "plans" / "bighist" / "PLAN.yml").unlink()
    elif vid == "policy-json":
        (lab.repo / ".plangate").mkdir(exist_ok=True)
        (lab.repo / ".plangate" / "policy.json").write_text("{" + " " * SIZE + "}")
    elif vid == "plan-untracked":
        lab.write("biguntracked", _big_plan())
        return
    elif vid == "plan-tree":
        lab.write("big", _big_plan())
    lab.commit(f"hostile {vid}", AGENT)


def _measured_audit(lab: Lab, root: Path) -> tuple[int, bool, int]:
    """``plangate audit --json`` in a fresh clone, its resident memory sampled as above."""
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], env=lab.env(), check=True)
    plangate = str(Path(__file__).resolve().parents[2] / ".venv" / "bin" / "plangate")
    proc = subprocess.Popen(
        [plangate, "audit", "--json"],
        cwd=clone,
        env=lab.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))  # type: ignore[union-attr]
    reader.start()
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    reader.join()
    return proc.returncode, b"Traceback" in b"".join(err), peak // 1024


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VARIANTS:
        lab.write(f"h-{vid}", plan_text(f"h-{vid}"))
    lab.commit("honest plans")
    lab.run()
    lab.passes = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        _hostile(lab, vid)
        lab.set_status(f"h-{vid}", "approved")
        lab.git("add", f"plans/h-{vid}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"approve h-{vid}", who=ALICE)
        lab.passes[vid] = _measured_pass(lab, root)  # type: ignore[attr-defined]
        if vid == "plan-untracked":
            (lab.repo / "plans" / "biguntracked" / "PLAN.yml").unlink()
    lab.audit_result = _measured_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-runs-bigfile", _build)


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=R31)]
            if v in BROKEN
            else [],
        )
        for v in VARIANTS
    ],
)
def test_big_file_memory(lab: Lab, vid: str) -> None:
    code, traceback, peak_mb, _ = lab.passes[vid]  # type: ignore[attr-defined]
    assert code == 0 and not traceback
    assert len(lab.calls(f"h-{vid}")) == 1
    assert lab.status()[f"plans/h-{vid}"]["status"] == "completed"
    assert peak_mb < LIMIT_MB, f"controller peak RSS {peak_mb} MB"


def test_audit_memory(lab: Lab) -> None:
    code, traceback, peak_mb = lab.audit_result  # type: ignore[attr-defined]
    assert code in (0, 1) and not traceback
    assert peak_mb < LIMIT_MB, f"audit peak RSS {peak_mb} MB"
