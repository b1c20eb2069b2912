# ruff: noqa: E501
"""Round 23, the gate preview (``execution.gate``, recorded by the engine since round 22)
rewritten by the agent, read the way README's "How a plan moves" (step 3) tells a reviewer:
``plangate show plans/<name>`` inside the plans repository, with no config.

Each plan: action 1 (``rec``) echoes ``evil@attacker.example`` as output ``o``; action 2 is
gated and takes ``to: "$<actions[1].outputs.o>"``. Alice approves, one pass pauses every
plan at the gate. Then the agent rewrites the value in PLAN.yml (the ``execution.gate``
record and the ``outputs`` of action 1) to ``team@example.com``:

- ``tree``: in the working tree only. ``show`` without config, in the repository.
- ``commit``: in a commit of its own on the branch (author: the agent). ``show`` without
  config, in the repository.
- ``commit-config`` (control): the same commit; ``show --config`` (round 5's defence).

Asserted: what ``show`` says "approving the gate runs it with these values" is the value
the gated action then receives (``evil@attacker.example``), or ``show`` warns
``E_OWNED_BLOCK_CHANGED``. After Bob approves each gate, ``rec`` receives
``evil@attacker.example`` once per plan.

**Broke** (``commit``): ``show`` prints ``to = "team@example.com"`` and no warning (the
JSON view likewise, with no ``record_warning``); with ``--config`` it prints the real
value and ``WARNING: E_OWNED_BLOCK_CHANGED``. The controller's identity is recorded in
``.plangate/policy.json`` (the audit uses it without a config), but ``show`` without a
config takes a later agent commit's ``execution:`` block as the record.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab
from test_round2_execution_kit import shared

EVIL, NICE = "evil@attacker.example", "team@example.com"
VARIANTS = {"tree": "gf-tree", "commit": "gf-commit", "commit-config": "gf-commit"}


def _plan(slug: str) -> str:
    return f"""plan:
  name: {slug}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {slug}-1, x: "{EVIL}"}}, outputs: [{{name: o, path: "$.json.echo.x"}}]}}
  - {{id: 2, tool: rec, why: w, requires_approval: true, params: {{tag: {slug}-2, to: "$<actions[1].outputs.o>"}}}}
"""


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    for slug in ("gf-tree", "gf-commit"):
        lab.write(slug, _plan(slug))
    lab.commit("plans")
    lab.run()
    for slug in ("gf-tree", "gf-commit"):
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    saved = {}
    for slug in ("gf-tree", "gf-commit"):
        path = lab.repo / "plans" / slug / "PLAN.yml"
        saved[slug] = path.read_bytes()
        text = saved[slug].decode()
        assert EVIL in text[text.index("execution:") :]
        path.write_text(
            text[: text.index("execution:")] + text[text.index("execution:") :].replace(EVIL, NICE)
        )
    lab.commit("tidy the record", AGENT, "plans/gf-commit/PLAN.yml")
    previews = {}
    for vid, slug in VARIANTS.items():
        args = ["show", f"plans/{slug}"]
        if vid.endswith("-config"):
            args += ["--config", str(lab.config)]
        out = lab.cli(*args, cwd=lab.repo)
        previews[vid] = out.stdout + out.stderr
    (lab.repo / "plans/gf-tree/PLAN.yml").write_bytes(saved["gf-tree"])
    for slug in ("gf-tree", "gf-commit"):
        lab.set_status(slug, "approved")
        lab.commit(f"gate {slug}", BOB, f"plans/{slug}/PLAN.yml")
    lab.run()
    lab.previews = previews  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-gateforge", _build)


#: What round 23 found (fixed: without a config, the controller is the one the recorded
#: policy names, and its last commit of the file is the record).
FOUND = {
    "commit": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 23: `plangate show` without a config shows an agent's committed rewrite of "
        "execution.gate as the values approving the gate runs with, with no E_OWNED_BLOCK_CHANGED",
    )
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, ())) for v in VARIANTS])
def test_show_at_a_gate_shows_what_runs_or_warns(lab: Lab, vid: str) -> None:
    text = lab.previews[vid]  # type: ignore[attr-defined]
    tail = text.split("approving the gate runs it with these values:", 1)
    assert len(tail) == 2, text[-1500:]
    shown = tail[1][:400]
    assert ("E_OWNED_BLOCK_CHANGED" in text and EVIL in shown) or (
        EVIL in shown and NICE not in shown
    ), shown


@pytest.mark.parametrize("slug", ["gf-tree", "gf-commit"])
def test_the_gated_action_gets_the_journals_value_once(lab: Lab, slug: str) -> None:
    got = [json.loads(c["stdin"])["to"] for c in lab.calls(f"{slug}-2")]
    assert got == [EVIL], got
