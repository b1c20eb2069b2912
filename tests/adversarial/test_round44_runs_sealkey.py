"""Round 44, exactly the approved values across a gate when the controller's set of secrets
grows (a secret added for ANOTHER plan) while a plan waits: round 43's seal is keyed on every
value the redactor hides, so it no longer opens.

Lab ``sk`` (local mode), ``secrets.file`` holding ``TOK``. Each plan's action 1 hands
``s: "$<secrets.TOK>"`` to ``echo`` and declares output ``x: $.s`` (a login step handing back
a session token); action 2 (``requires_approval: true``) hands ``q: "$<actions[1].outputs.x>"``
to ``rec``. Alice approves; every plan pauses at the gate (action 1 ran, its end sealed).

- ``control``: Bob approves the gate; the next pass runs action 2.
- held, the same secret values spelled differently before the gate is approved:
  ``reordered`` (the file's lines swapped), ``to-env`` (``TOK`` moved to
  ``PLANGATE_SECRET_TOK``), ``to-json`` (the file rewritten as JSON), ``renamed`` (the other
  secret's name changed, its value not), ``dup-env`` (``TOK`` in both file and environment).
- ``added-file``: before Bob approves the gate the operator adds an unrelated secret
  ``OTHER: unrelated-value-77`` to ``secrets.file`` (``TOK`` unchanged, not rotated, not
  removed); the next pass runs action 2.
- ``added-env``: the same with the unrelated secret in the controller's environment
  (``PLANGATE_SECRET_OTHER``), the way a second operator's shell or a service unit adds one.
- ``added-catalog``: the config is reloaded with a new catalog tool ``api`` whose URL carries
  a password (a credential the redactor hides, unrelated to the plan).

Asserted: ``rec`` ran at most once, and if it ran it got ``q`` equal to the token (what an
unpaused run, and the control, resolve the approved reference to): never the redaction
marker ``***`` in place of an approved value.

Broke (round 44): ``added-file``, ``added-env`` and ``added-catalog``: ``rec`` ran once with
``q: "***"`` and the plan ended ``completed``. docs/execution.md names only a rotated or
removed secret as the known limit; here ``TOK`` is unchanged, yet any new secret anywhere in
the config or the environment silently turns every sealed output of every paused plan into
``***``, and the gated tool runs with a value nobody approved. It should key the seal on
something that does not change when an unrelated secret is added (or on the secrets the run
itself used), and when a seal does not open, fail the action (E_REF_UNAVAILABLE naming the
output) instead of running the tool with ``***``.

**Fixed** (the same session): the seal's key is 32 random bytes of the state directory
(``<state_dir>/seal.key``, made on first use, mode 0600; ``secrets.seal_key``), not a
derivation of the secrets: adding, renaming or moving any secret leaves every seal readable.
The trade-off, in docs/execution.md: a reader of the state directory can open the seals (as
the controller can); a journal copied out of it without the key holds no secret.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

SECRET = "Kp4Rt7Wy2Zx9Qm"
BASE = f"TOK: {SECRET}\nAAA: zq8-other-secret\n"
#: held: the same secret values spelled differently; broke: a value added
VARIANTS = [
    "control",
    "reordered",
    "to-env",
    "to-json",
    "renamed",
    "dup-env",
    "added-file",
    "added-env",
    "added-catalog",
]


def _plan(vid: str) -> str:
    return f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: echo}}, {{name: rec}}]
actions:
  - id: 1
    tool: echo
    why: log in
    params: {{s: "$<secrets.TOK>"}}
    outputs: [{{name: x, path: "$.s"}}]
  - id: 2
    tool: rec
    why: use the session
    requires_approval: true
    params: {{tag: {vid}, q: "$<actions[1].outputs.x>"}}
"""


def _gate(lab: Lab, vid: str) -> None:
    lab.set_status(vid, "approved")
    lab.commit(f"gate {vid}", BOB, f"plans/{vid}/PLAN.yml")


def _build(root: Path) -> Lab:
    (root / "sk").mkdir()
    secrets = root / "secrets.yml"
    secrets.write_text(BASE)
    extra = f"secrets: {{file: {secrets}}}\n"
    lab = Lab(root / "sk", extra=extra)
    lab.extra_env = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    paused = {vid: (lab.plan(vid).get("execution") or {}).get("status") for vid in VARIANTS}
    env: dict[str, str] = lab.extra_env  # type: ignore[attr-defined]
    _gate(lab, "control")
    lab.run()
    steps = {
        "reordered": (f"AAA: zq8-other-secret\nTOK: {SECRET}\n", {}),
        "to-env": ("AAA: zq8-other-secret\n", {"PLANGATE_SECRET_TOK": SECRET}),
        "to-json": (json.dumps({"TOK": SECRET, "AAA": "zq8-other-secret"}), {}),
        "renamed": (f"TOK: {SECRET}\nBBB: zq8-other-secret\n", {}),
        "dup-env": (BASE, {"PLANGATE_SECRET_TOK": SECRET}),
        "added-file": (BASE + "OTHER: unrelated-value-77\n", {}),
        "added-env": (BASE, {"PLANGATE_SECRET_OTHER": "another-value-99"}),
    }
    for vid, (text, added) in steps.items():
        secrets.write_text(text)
        env.update(added)
        _gate(lab, vid)
        lab.run()
        for name in added:
            del env[name]
        secrets.write_text(BASE)
    # a config reload that adds a catalog tool whose URL carries a password
    lab.write_config(
        extra=extra, tools='api: {kind: http, url: "https://svc:pw-Hq7Zr2Lm9@api.example/x"}\n'
    )
    _gate(lab, "added-catalog")
    lab.run()
    lab.results = {  # type: ignore[attr-defined]
        "paused": paused,
        "history": lab.git("log", "--all", "-p"),
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-sealkey", _build)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v) for v in VARIANTS],
)
def test_the_gated_tool_gets_the_approved_value(lab: Lab, vid: str) -> None:
    assert lab.results["paused"][vid] == "awaiting_approval"  # type: ignore[attr-defined]
    calls = lab.calls(vid)
    assert len(calls) <= 1, calls
    for call in calls:
        assert json.loads(call["stdin"])["q"] == SECRET, call


def test_the_token_is_in_no_commit(lab: Lab) -> None:
    assert SECRET not in lab.results["history"]  # type: ignore[attr-defined]
