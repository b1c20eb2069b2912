"""Round 31, one hostile push never starves the pass (memory bound): many versions of a plan,
each within ``limits.max_plan_bytes``, in one push.

Every version is small enough to be read (900 KB, under the 1 MiB limit), and git stores a
push of them cheaply (the versions differ by one line; 90 of them add about 2 MB to
``.git``). The agent writes them with ``git fast-import`` (one commit per version of
``plans/<vid>/PLAN.yml``, as a burst of commits by an agent would), checks the branch out,
then Alice approves one honest plan ``h-<vid>`` and one ``run --once`` pass follows with the
controller's resident memory sampled every 50 ms from ``/proc`` (round 27's bench):

- ``few-versions`` (control): 5 versions.
- ``many-versions``: 90 versions (peak 252 MB with 120).

Asserted: the pass exits 0 without a traceback, the honest plan ran once, and the
controller's peak RSS stays under 150 MB (45-60 MB for an ordinary pass).

**Broke** (round 31): ``many-versions``: the peak grows with the number of versions in the
push, about 1.8 MB per 900 KB version (113 MB for 40, 218 MB for 100, 465 MB for 250): the
controller holds every version of the push in memory at once while it indexes the history.
A push of a few thousand such commits (a few MB over the wire) takes it to several GB:
OOM-killed on every pass before the history is indexed, every plan stalls. Should: index
the versions a bounded number at a time (read, hash, drop) so memory does not grow with the
push. Held: ``few-versions``.

Fixed (round 31): the scan asks the versions' sizes first and reads and parses them at most
16 MB at a time (``prefetch.READ_BYTES``), dropping each batch before the next.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared
from test_round27_runs_bigresult import _measured_pass

LIMIT_MB = 150
PAD = 900_000
VARIANTS = {"few-versions": 5, "many-versions": 90}
R31 = "round 31: the controller holds every plan version of a push in memory at once"
#: Found broken in round 31 (kept as the record; fixed: no marks).
FOUND = {"many-versions"}
BROKEN: set[str] = set()


def _push_versions(lab: Lab, slug: str, count: int) -> None:
    """``count`` commits by the agent, each a new version of ``plans/<slug>/PLAN.yml``."""
    name, email = AGENT
    parts = []
    for i in range(count):
        blob = (plan_text(slug) + f"# version {i}\n# " + "x" * PAD + "\n").encode()
        msg = f"{slug} v{i}\n".encode()
        parts.append(
            b"commit refs/heads/main\n"
            + f"committer {name} <{email}> {1_790_000_000 + i} +0000\n".encode()
            + b"data %d\n" % len(msg)
            + msg
            + (b"from refs/heads/main^0\n" if i == 0 else b"")
            + f"M 100644 inline plans/{slug}/PLAN.yml\n".encode()
            + b"data %d\n" % len(blob)
            + blob
            + b"\n"
        )
    env = lab.env(AGENT)
    subprocess.run(
        ["git", "fast-import", "--quiet", "--force"],
        cwd=lab.repo,
        env=env,
        input=b"".join(parts),
        check=True,
    )
    lab.git("reset", "-q", "--hard")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VARIANTS:
        lab.write(f"h-{vid}", plan_text(f"h-{vid}"))
    lab.commit("honest plans")
    lab.run()
    lab.passes = {}  # type: ignore[attr-defined]
    for vid, count in VARIANTS.items():
        _push_versions(lab, vid, count)
        lab.approve(f"h-{vid}", ALICE)
        lab.passes[vid] = _measured_pass(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-runs-versions", _build)


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
def test_versions_memory(lab: Lab, vid: str) -> None:
    code, traceback, peak_mb, _ = lab.passes[vid]  # type: ignore[attr-defined]
    assert code == 0 and not traceback
    assert len(lab.calls(f"h-{vid}")) == 1
    assert lab.status()[f"plans/h-{vid}"]["status"] == "completed"
    assert peak_mb < LIMIT_MB, f"controller peak RSS {peak_mb} MB"
