"""Round 24, self-approval through a pinned plan whose pin path is spelled another way, and
through a pinned library's folder at a gate.

Round 23 made whoever commits any file into a pinned plan's folder a writer of the parent.
``plangate validate`` accepts other spellings of the same folder in ``plan: {path}``:
``plans/lib/``, ``plans//lib``, ``./plans/lib``, ``plans/./lib``, ``plans/lib/.``. Config:
the bench's. Each variant: the agent commits a library ``plans/sp-<vid>-lib`` (``status:
draft``); Alice commits ``NOTES.md`` into its folder; the agent's parent ``plans/sp-<vid>``
pins it by hash through the spelled path; the controller freezes; Alice approves the parent.

- ``plain`` (control, round 23's fixed case), ``slash``, ``dslash``, ``dot``, ``middot``,
  ``tdot``: asserted: ``rec`` never runs (parent or library), the parent is not started,
  refused ``E_SELF_APPROVAL``.

Gates (docs/approvals.md: a writer "cannot approve it or its gates"): a parent
``plans/gt-<vid>`` (action 1 ``rec``, action 2 ``rec`` with ``requires_approval: true``,
action 3 the library ``plans/gt-<vid>-lib``, written by the agent). Bob approves; action 1
runs and the plan pauses at the gate.

- ``before``: Alice commits ``NOTES.md`` into the library's folder before Bob's approval;
- ``after``: she commits it while the plan is paused;
- ``after-dslash``: as ``after``, the pin spelled ``plans//gt-after-dslash-lib``.

Then Alice approves the gate. Asserted: action 2 and the library never run.

``check``: on a pull request branch the agent sets ``plans/ck-<vid>`` (built like
``sp-<vid>``) ``approved``; ``plangate check --as alice@example.com`` must not predict a
start (it is the controller's decision: refused, ``E_SELF_APPROVAL``).

Results: every variant held.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

SPELL = {
    "plain": "plans/{lib}",
    "slash": "plans/{lib}/",
    "dslash": "plans//{lib}",
    "dot": "./plans/{lib}",
    "middot": "plans/./{lib}",
    "tdot": "plans/{lib}/.",
}
GATES = {"before": "plans/{lib}", "after": "plans/{lib}", "after-dslash": "plans//{lib}"}
CHECK = ["plain", "dslash", "tdot"]


def _lib(tag: str) -> str:
    return plan_text(tag, status="draft")


def _parent(tag: str, path: str, digest: str, gate: bool = False) -> str:
    text = (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n    why: parent\n"
        f'    params: {{tag: "{tag}"}}\n'
    )
    if gate:
        text += (
            "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
            f'    params: {{tag: "{tag}-2"}}\n'
        )
    n = 3 if gate else 2
    return text + f'  - id: {n}\n    plan: {{path: "{path}", hash: "{digest}"}}\n    why: lib\n'


def _hash(lab: Lab, slug: str) -> str:
    result = lab.cli("hash", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip().split()[-1]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    sp = [f"sp-{v}" for v in SPELL] + [f"ck-{v}" for v in CHECK]
    for s in sp:
        lab.write(f"{s}-lib", _lib(f"{s}-lib"))
    for v in GATES:
        lab.write(f"gt-{v}-lib", _lib(f"gt-{v}-lib"))
    lab.commit("agent writes libraries", AGENT)
    for s in sp:
        lab.write(f"{s}-lib", "Alice: fine\n", filename="NOTES.md")
    lab.write("gt-before-lib", "Alice: fine\n", filename="NOTES.md")
    lab.commit("alice writes notes", ALICE)
    for s in sp:
        spell = SPELL[s.split("-", 1)[1]]
        lab.write(s, _parent(s, spell.format(lib=f"{s}-lib"), _hash(lab, f"{s}-lib")))
    for v, spell in GATES.items():
        s = f"gt-{v}"
        lab.write(s, _parent(s, spell.format(lib=f"{s}-lib"), _hash(lab, f"{s}-lib"), True))
    lab.commit("agent adds parents", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for v in SPELL:
        lab.approve(f"sp-{v}", ALICE)
    for v in GATES:
        lab.approve(f"gt-{v}", BOB)
    lab.run()  # sp-*: refused; gt-*: action 1, pause
    time.sleep(1.05)
    for v in GATES:
        if v.startswith("after"):
            lab.write(f"gt-{v}-lib", "Alice: one more thought\n", filename="NOTES.md")
    lab.commit("alice notes at the pause", ALICE)
    lab.run()
    time.sleep(1.05)
    for v in GATES:
        lab.approve(f"gt-{v}", ALICE)
    lab.run()
    lab.git("checkout", "-q", "-b", "pr-check")
    for v in CHECK:
        lab.set_status(f"ck-{v}", "approved")
    lab.commit("agent asks to approve", AGENT)
    lab.git("checkout", "-q", "main")
    out = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        "pr-check",
        "--as",
        ALICE[1],
        "--format",
        "json",
        cwd=lab.repo,
    )
    (root / "check.json").write_text(out.stdout + "\n--stderr--\n" + out.stderr)
    lab.check_out = out.stdout
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-pinspell", _build)


BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in SPELL]
)
def test_a_pin_spelled_another_way_keeps_the_librarys_writers(lab: Lab, vid: str) -> None:
    slug = f"sp-{vid}"
    assert lab.plan(slug).get("frozen"), lab.codes(slug)
    assert lab.calls(slug) == [], lab.codes(slug)
    assert lab.calls(f"{slug}-lib") == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert lab.refusal(slug) == "E_SELF_APPROVAL", lab.codes(slug)


GBROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[GBROKEN[v]] if v in GBROKEN else []) for v in GATES]
)
def test_the_librarys_writer_cannot_open_the_parents_gate(lab: Lab, vid: str) -> None:
    slug = f"gt-{vid}"
    assert len(lab.calls(slug)) == 1, lab.codes(slug)  # action 1 ran under Bob's approval
    assert lab.calls(f"{slug}-2") == [], lab.codes(slug)
    assert lab.calls(f"{slug}-lib") == [], lab.codes(slug)


CBROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[CBROKEN[v]] if v in CBROKEN else []) for v in CHECK]
)
def test_check_does_not_predict_a_start_for_the_librarys_writer(lab: Lab, vid: str) -> None:
    rows = json.loads(lab.check_out)
    text = json.dumps(rows)
    assert f"plans/ck-{vid}" in text, text[:3000]
    plans = rows.get("plans", rows) if isinstance(rows, dict) else rows
    row = next(r for r in plans if r.get("plan") == f"plans/ck-{vid}")
    assert row.get("outcome") != "start", json.dumps(row)[:3000]
    assert "E_SELF_APPROVAL" in json.dumps(row), json.dumps(row)[:3000]
