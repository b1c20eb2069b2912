# ruff: noqa: E501
"""Round 17, a secret a tool prints back in its raw stdout in a form whose *parsed* JSON value
the redactor hides: the committed EXECUTION_LOG.md shows ``"json": {"v": "***"}`` and, one
line above, the same value in clear in ``"stdout"``.

One lab, secrets ``PLANGATE_SECRET_PIN=48213957`` and a 76-character token ``S2``; the exec
tool ``emit`` gets no secret as a param (it has them in its own catalog ``env``, as a tool that
holds its credentials does) and prints one JSON object per mode. One pass freezes, Alice
approves all, one pass runs.

- ``qp-json``: an email tool returning a MIME body as JSON: the token quoted-printable with a
  soft line break after 40 characters, ``{"v": "tok=<S2[:40]>=\\r\\n<S2[40:]>"}``.
  **Broke** (fixed since: the quoted-printable view reads the escape view's output too):
  ``"stdout"`` in EXECUTION_LOG.md carried both halves in clear (the parsed value was
  ``"tok***"``).
- ``qp-raw`` (control): the same soft break on raw stdout (not inside JSON): held.
- ``num-exp``: ``{"v": 4.8213957e7}`` (the PIN as a JSON number in exponent form).
  **Broke**: ``"stdout"`` keeps ``4.8213957e7``; the parsed value is ``"***"``.
- ``num-shift``: ``{"v": 4821395.7e1}``: **Broke**, same.
- ``num-frac`` (control): ``{"v": 0.48213957e8}``: held (its digits are the PIN's).
- ``json-slash`` (control): PHP's ``json_encode`` escapes of ``/`` (``Zk4\\/Wq9\\/...``): held.

Asserted per variant: no form of the secret the controller itself recognised (the halves of
the token, the number's text) is in ``git log --all -p -- plans/<variant>`` or in its row of ``plangate status --json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

PIN = "48213957"
S2 = "Zq8mW2vK9pL4xR7tN3bH6yJ1cF5gD0sA8uE2iO4wQ7eT9rY3kM6nB1vC5xZ8aS2dF4gH7jK0lP3"
SL = "Zk4/Wq9/Pm2/Tx7"
EMIT = r"""import json, os, sys
sys.stdin.read()
m = sys.argv[1]
S = os.environ["S2"]
if m == "qp-json":
    print(json.dumps({"v": "tok=" + S[:40] + "=\r\n" + S[40:]}))
elif m == "qp-raw":
    sys.stdout.write("tok=" + S[:40] + "=\n" + S[40:] + "\n")
elif m == "num-exp":
    print('{"v": 4.8213957e7}')
elif m == "num-shift":
    print('{"v": 4821395.7e1}')
elif m == "num-frac":
    print('{"v": 0.48213957e8}')
elif m == "json-slash":
    print(json.dumps({"v": os.environ["SL"]}).replace("/", "\\/"))
"""
LEAKS = {
    "qp-json": [S2[:40], S2[40:]],
    "qp-raw": [S2[:40], S2[40:]],
    "num-exp": ["4.8213957e7"],
    "num-shift": ["4821395.7e1"],
    "num-frac": ["48213957e8"],
    "json-slash": ["Zk4\\\\/Wq9", "Zk4/Wq9"],
}
BROKE = {
    v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 17: {why}")
    for v, why in {
        "qp-json": "a secret quoted-printable with a soft line break inside a JSON string stays in clear in the committed stdout (its parsed value is redacted)",
        "num-exp": "a numeric secret printed as a JSON number in exponent form (4.8213957e7) stays in clear in the committed stdout (its parsed value is redacted)",
        "num-shift": "a numeric secret printed as 4821395.7e1 stays in clear in the committed stdout (its parsed value is redacted)",
    }.items()
}


# round 17: all three broke; all fixed since (a numeric secret in a number written with a
# point or an exponent; quoted-printable read through the escape view)
OPEN: set[str] = set()


def _plan(tag: str) -> str:
    return f"""plan:
  name: "{tag}"
  task: "t"
  status: pending_approval
available_tools:
  - name: emit
actions:
  - id: 1
    tool: emit
    why: "w"
    params: {{m: "{tag}"}}
"""


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "emit.py").write_text(EMIT)
    lab = Lab(root / "lab")
    lab.extra_env = {  # type: ignore[attr-defined]
        "PLANGATE_SECRET_PIN": PIN,
        "PLANGATE_SECRET_S2": S2,
        "PLANGATE_SECRET_SL": SL,
    }
    emit = json.dumps([sys.executable, str(root / "emit.py"), "{m}"])
    lab.write_config(
        tools=f"emit: {{kind: exec, argv: {emit}, env: {{S2: {json.dumps(S2)}, SL: {json.dumps(SL)}}}}}\n"
    )
    for vid in LEAKS:
        lab.write(vid, _plan(vid))
    lab.commit("plans", AGENT)
    lab.run()
    for vid in LEAKS:
        lab.set_status(vid, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    lab.gitlog = {v: lab.git("log", "--all", "-p", "--", f"plans/{v}") for v in LEAKS}  # type: ignore[attr-defined]
    lab.statusout = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-rawsecret", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKE[v]] if v in OPEN else []) for v in LEAKS]
)
def test_a_secret_in_raw_stdout_is_hidden_as_its_parsed_value_is(lab: Lab, vid: str) -> None:
    log = lab.read(vid, "EXECUTION_LOG.md")
    assert '"stdout"' in log, "the run did not record the tool's stdout"
    assert lab.plan(vid)["plan"]["status"] == "completed"
    gitlog: str = lab.gitlog[vid]  # type: ignore[attr-defined]
    rows = json.loads(lab.statusout)  # type: ignore[attr-defined]
    status = json.dumps([r for r in rows if r["plan"] == f"plans/{vid}"])
    for form in LEAKS[vid]:
        assert form not in gitlog, f"{form!r} is committed (EXECUTION_LOG.md of plans/{vid})"
        assert form not in status, f"{form!r} is in plangate status --json"
