"""Round 14, stall the pass: a tool output that makes redacting it cost minutes.

docs/execution.md: every configured secret is redacted from everything written, in every
per-character encoding (escapes of escapes, URL-encoding once or twice, HTML references,
NULs between characters). A tool's stdout and stderr are kept up to
``limits.max_result_bytes`` (default 64 KiB) each and then redacted in the controller's own
process, outside the tool's timeout. The plan needs no ``$<secrets...>`` at all: it is enough
that the operator configured one secret (``PLANGATE_SECRET_TOKEN``).

- ``backslash-flood``: the tool prints 240,000 backslashes on stdout and on stderr (480 KB
  in all, under the lab's 1 MiB limit; round 14 found it at 60,000) and exits 0.
  ``zz-ctl``, an honest plan, is approved in the same commit (sorted after it).
- held (own lab): ``u00-flood`` (``\\u00`` x 60,000), ``pct-flood`` (``%25`` x 80,000),
  ``amp-flood`` (``&#`` x 120,000), ``nul-flood`` (``\\u0000`` x 40,000), together with their
  own ``zz-ctl``.

Defence asserted: the ``run --once`` pass ends and the honest plan runs exactly once. The
lab raises ``limits.max_result_bytes`` to 1 MiB and prints four times the round's floods
(240,000 backslashes on each stream): a linear redactor takes seconds, the quadratic one of
round 14 would take about 18 minutes (67 s at 60,000), so the pass's ``LIMIT`` is a wait,
never a close timing bound.

**Broke** (round 14, ``backslash-flood``; ``FOUND``, held since: the redactor's escape view
consumes a run of backslashes as one token, each view is one linear pass): the pass is still
busy when it is killed after ``LIMIT`` s; by hand the pass took 67 s (stdout alone: 20,000
backslashes 2.1 s, 40,000 7.1 s: quadratic in the run of backslashes), the hostile plan stays
``executing`` meanwhile and every plan behind it waits; one plan of N such actions costs N
minutes, and an abort cannot be honoured in between (nothing yields).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

FLOOD = r"""
import sys
pats = {
    "backslash-flood": "\\" * 240000,
    "u00-flood": "\\u00" * 60000,
    "pct-flood": "%25" * 80000,
    "amp-flood": "&#" * 120000,
    "nul-flood": "\\u0000" * 40000,
}
out = pats[sys.argv[1]]
sys.stdout.write(out)
sys.stderr.write(out)
"""
#: A wait, not a timing assert: with outputs of up to 1 MiB (the lab raises
#: limits.max_result_bytes), the linear redactor needs seconds and the quadratic one hours.
LIMIT = 180.0
HELD = ["u00-flood", "pct-flood", "amp-flood", "nul-flood"]


def _plan(vid: str) -> str:
    return f"""\
plan:
  name: "{vid}"
  task: "a tool prints a long run of escape-like text"
  status: pending_approval
available_tools:
  - name: flood
actions:
  - id: 1
    tool: flood
    why: "print it"
    params: {{mode: "{vid}"}}
"""


def _build(root: Path, vids: list[str]) -> Lab:
    lab = Lab(root)
    (root / "flood.py").write_text(FLOOD)
    argv = json.dumps([sys.executable, "-I", "-S", str(root / "flood.py"), "{mode}"])
    lab.write_config(
        tools=f"flood: {{kind: exec, argv: {argv}}}\n",
        extra="limits: {max_result_bytes: 1048576}\n",
    )
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": "Kq7mPvqWnTzL"}  # type: ignore[attr-defined]
    for vid in vids:
        lab.write(vid, _plan(vid))
    lab.write("zz-ctl", plan_text("zz-ctl"))
    lab.commit("plans", AGENT)
    lab.run()
    for vid in [*vids, "zz-ctl"]:
        lab.set_status(vid, "approved")
    lab.commit("approve them", ALICE)
    start = time.monotonic()
    try:
        lab.run(timeout=LIMIT)
        lab.elapsed = time.monotonic() - start  # type: ignore[attr-defined]
    except subprocess.TimeoutExpired:
        lab.elapsed = None  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def flood(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(
        tmp_path_factory, "r14-redact-bs", lambda root: _build(root / "lab", ["backslash-flood"])
    )


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-redact-held", lambda root: _build(root / "lab", HELD))


def _bounded(lab: Lab) -> None:
    elapsed = lab.elapsed  # type: ignore[attr-defined]
    assert elapsed is not None, f"the pass was still busy after {LIMIT} s"
    assert len(lab.calls("zz-ctl")) == 1, lab.codes("zz-ctl")


FOUND = {  # round 14: broke (strict xfail); fixed since, see BROKEN
    "backslash-flood": "round 14: redacting a 60,000-backslash tool output takes over a minute"
    " in the controller's process (quadratic): one tool output stalls the pass for every plan",
}
BROKEN: dict[str, str] = {}  # holds now: every view of the redactor is one linear pass


def _marks(vid: str) -> list[pytest.MarkDecorator]:
    if vid not in BROKEN:
        return []
    return [pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[vid])]


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in FOUND])
def test_backslash_flood_does_not_stall_the_pass(flood: Lab, vid: str) -> None:
    _bounded(flood)


def test_other_escape_floods_do_not_stall_the_pass(held: Lab) -> None:
    _bounded(held)
    for vid in HELD:
        assert held.status()[f"plans/{vid}"]["status"] in ("completed", "failed"), vid
