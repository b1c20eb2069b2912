# ruff: noqa: E501
"""Round 19, what is recorded: the controller's *own* blocks (``frozen:``, ``approval:``,
``execution:``) and log sections grow a plan that is within the default limits past them.

docs/plan-format.md: a plan version in history larger than ``limits.max_plan_bytes`` (1 MiB)
is ``E_PLAN_TOO_LARGE`` in ``status`` and is never parsed; docs/execution.md: output values
in ``execution:`` are cut at 200 characters "so that state cannot push a plan over
``limits.max_plan_bytes``", and (round 18) "the log of a plan within the default limits stays
under 1 MiB however much its tools print". Nothing else bounds what the controller adds.

One lab per module (this one and ``test_round19_runs_logbytes.py``, which plays ``grow-many``
and ``log-fallbacks`` with this module's helpers); the agent submits, one pass freezes, Alice approves all in one commit, one pass
runs. Each plan is within every default limit when submitted (size, 500 actions, 1000 tool
calls):

- ``grow-freeze``: a one-action plan 20 bytes under 1 MiB (padded by a trailing comment);
- ``grow-start``: the same, 350 bytes under (room for the ``frozen:`` block, not for the
  ``approval:`` and ``execution:`` blocks);
- ``grow-run``: the same, 600 bytes under (room for ``frozen:`` and ``approval:``);
- ``grow-gate``: 1,000 bytes under; action 1 (``echo``) outputs a 250-character value,
  action 2 (``rec``) has ``requires_approval: true``; Bob approves the gate after the pause;
- ``grow-many``: 500 ``echo`` actions, each with a failing ``verify`` (``$.nope``) and one
  ``echo`` fallback step (870-byte params): a 962 KB plan, 1000 tool calls; the
  ``execution:`` block the controller writes lists 1000 steps (about 220 KB);
- ``grow-outputs``: one ``echo`` action of a 300-character value with 5,000 outputs
  ``$.v`` (a 170 KB plan): the ``execution:`` block lists each output (cut at 200
  characters, as documented);
- ``invalid-errors``: a 121 KB plan whose one action carries 12,000 unknown keys
  (``k0: 1, k1: 1, ...``): the controller writes ``status: invalid`` and a ``validation:``
  block with every error into it (docs/plan-format.md);
- ``log-fallbacks``: 250 such actions with three fallback steps each (600-byte params):
  1000 sections in EXECUTION_LOG.md, each params/result block under its 512-byte floor.

Asserted (the defence): every PLAN.yml and EXECUTION_LOG.md the controller commits is at most
1 MiB, ``status`` never calls the plan ``unreadable``, and ``plangate audit`` has no finding
about it (the honest ``zz`` runs once in the same pass).

**Broke** (round 19): ``grow-freeze``: the controller's freeze commit writes a 1,048,806-byte
PLAN.yml (the plan was 1,048,556). ``grow-start``: its start commit writes a 1,048,705-byte
one; the plan, committed ``executing``, never runs and never ends. Either plan is then
``unreadable`` ``E_PLAN_TOO_LARGE`` for good, and the audit reports the controller's own
commit as ``controller-unexplained`` ("a freeze commit cannot set status None"). ``grow-run``: the
action runs once, then the controller commits a 1,048,752-byte PLAN.yml: ``status`` shows the
completed plan as ``unreadable``, ``show`` refuses it, the audit flags the outcome commit.
``grow-gate``: action 1 runs, the pause commit writes a 1,048,662-byte PLAN.yml (its
``execution:`` block with the output cut at 200 characters): the plan is ``unreadable``, Bob's
gate approval is never seen, action 2 never runs (the same plan 1,200 bytes under completes:
the size of a tool's output decides whether the rest of an approved plan can ever run).
``grow-many``: a 962 KB plan committed at 1.19 MB after its run, same consequences.
``grow-outputs``: the 170 KB plan is committed at 1.46 MB with a 1.59 MB EXECUTION_LOG.md
(the outputs' count is not bounded: 5,000 outputs of 200+ characters each in both files;
more outputs, more MB). ``invalid-errors``: the controller's ``invalid`` commit writes a 3,386,827-byte PLAN.yml
(28 times the plan: each 7-byte ``kN: 1`` becomes a 280-byte error entry, no cap on their
number), the plan is ``unreadable`` and the audit flags that commit. ``log-fallbacks``: a
1.21 MB EXECUTION_LOG.md (the round-18 budget's 512-byte floor per block
plus each section's fixed text, times 1000 steps).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, BOB, BOT, Lab, plan_text
from test_round2_execution_kit import shared

LIM = 1024 * 1024
R19 = "round 19: the controller's own blocks push a plan within the limits over 1 MiB"


def _padded(tag: str, room: int) -> str:
    text = plan_text(tag)
    return text + "# " + "x" * (LIM - room - len(text.encode()) - 3) + "\n"


def _fallbacks(name: str, actions: int, steps: int, size: int) -> str:
    value = "p" * size
    body = f"plan: {{name: {name}, task: t, status: pending_approval}}\navailable_tools: [{{name: echo}}]\nactions:\n"
    for i in range(1, actions + 1):
        fb = ", ".join(
            f'{{id: "{i}.{j}", tool: echo, why: w, params: {{v: "{value}"}}}}'
            for j in range(1, steps + 1)
        )
        body += (
            f'  - {{id: {i}, tool: echo, why: w, params: {{v: "{value}"}}, on_failure: fallback, '
            f'verify: {{expect: {{path: "$.nope", equals: 1}}}}, fallback: [{fb}]}}\n'
        )
    return body


def _outputs(name: str, count: int) -> str:
    outs = "".join(f'      - {{name: o{i}, path: "$.v"}}\n' for i in range(count))
    return (
        f"plan: {{name: {name}, task: t, status: pending_approval}}\navailable_tools: [{{name: echo}}]\n"
        f'actions:\n  - id: 1\n    tool: echo\n    why: w\n    params: {{v: "{"o" * 300}"}}\n    outputs:\n{outs}'
    )


def _invalid(name: str, count: int) -> str:
    keys = ", ".join(f"k{i}: 1" for i in range(count))
    return (
        f"plan: {{name: {name}, task: t, status: pending_approval}}\navailable_tools: [{{name: rec}}]\n"
        f"actions:\n  - {{id: 1, tool: rec, why: w, params: {{tag: {name}}}, {keys}}}\n"
    )


def _gated(name: str, room: int) -> str:
    text = (
        f"plan: {{name: {name}, task: t, status: pending_approval}}\n"
        "available_tools: [{name: echo}, {name: rec}]\nactions:\n"
        f'  - {{id: 1, tool: echo, why: w, params: {{v: "{"v" * 250}"}}, outputs: [{{name: o, path: $.v}}]}}\n'
        f"  - {{id: 2, tool: rec, why: w, params: {{tag: {name}}}, requires_approval: true}}\n"
    )
    return text + "# " + "x" * (LIM - room - len(text.encode()) - 3) + "\n"


PLANS = {
    "grow-freeze": lambda: _padded("grow-freeze", 20),
    "grow-start": lambda: _padded("grow-start", 350),
    "grow-run": lambda: _padded("grow-run", 600),
    "grow-many": lambda: _fallbacks("grow-many", 500, 1, 870),
    "log-fallbacks": lambda: _fallbacks("log-fallbacks", 250, 3, 600),
    "grow-outputs": lambda: _outputs("grow-outputs", 5000),
    "grow-gate": lambda: _gated("grow-gate", 1000),
    "invalid-errors": lambda: _invalid("invalid-errors", 12000),
    "zz": lambda: plan_text("zz"),
}


#: this module's plans; ``test_round19_runs_logbytes.py`` plays the other ones (suite time)
HERE = [
    "grow-freeze",
    "grow-start",
    "grow-run",
    "grow-gate",
    "grow-outputs",
    "invalid-errors",
    "zz",
]


def build(root: Path, slugs: list[str]) -> Lab:
    lab = Lab(root)
    for slug in slugs:
        text = PLANS[slug]()
        assert len(text.encode()) < LIM
        lab.write(slug, text)
    lab.commit("plans")
    lab.run()
    for slug in slugs:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("approve all", ALICE)
    lab.run(timeout=180)
    for slug in slugs:  # Bob approves every gate that paused
        path = lab.repo / "plans" / slug / "PLAN.yml"
        text = path.read_text()
        path.write_text(text.replace("status: awaiting_approval", "status: approved", 1))
    lab.commit("approve the gates", BOB)
    lab.run()
    lab.findings = lab.audit()[1].get("findings", [])  # type: ignore[attr-defined]
    lab.rows = lab.status()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r19-planbytes", lambda root: build(root, HERE))


def controller_blobs(lab: Lab, slug: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for row in lab.log_rows(fmt="%H%x00%ae%x01"):
        if row[1] != BOT[1]:
            continue
        changed = lab.git(
            "diff-tree",
            "--no-commit-id",
            "-r",
            "--name-only",
            "--root",
            row[0],
            "--",
            f"plans/{slug}",
        ).split()
        for line in (
            lab.git("ls-tree", "-l", row[0], "--", *changed).splitlines() if changed else []
        ):
            meta, name = line.split("\t", 1)
            sizes[f"{row[0][:8]}:{name}"] = int(meta.split()[3])
    return sizes


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert lab.rows["plans/zz"]["status"] == "completed"  # type: ignore[attr-defined]


#: round 19: all broke; fixed since: a plan must leave the controller 64 KiB of room
#: (plans.CONTROLLER_ROOM), its refusal is written small, the execution block and the
#: validation block are bounded, and the log stops at 1,000,000 bytes
FOUND = {
    "grow-freeze",
    "grow-start",
    "grow-run",
    "grow-gate",
    "grow-many",
    "grow-outputs",
    "invalid-errors",
    "log-fallbacks",
}
BROKEN: set[str] = set()


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(
            s,
            id=s,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=R19)]
            if s in BROKEN
            else [],
        )
        for s in HERE
        if s != "zz"
    ],
)
def test_the_controller_never_grows_a_plan_past_the_limits(lab: Lab, slug: str) -> None:
    check(lab, slug)


def check(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) <= 1
    blobs = controller_blobs(lab, slug)
    assert blobs, "the controller committed nothing about the plan"
    over = {k: v for k, v in blobs.items() if v > LIM}
    assert not over, f"controller commits over 1 MiB: {over}"
    row = lab.rows[f"plans/{slug}"]  # type: ignore[attr-defined]
    assert row["status"] != "unreadable", row["reason"]
    mine = [f for f in lab.findings if f.get("plan") == f"plans/{slug}"]  # type: ignore[attr-defined]
    assert not mine, mine
