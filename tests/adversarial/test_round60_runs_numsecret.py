"""Round 60 (runs): a numeric secret handed back as a JSON number in another notation.

The attack: round 40 hid a numeric secret grouped by threes (``918,273,645,012``), and the
controller's own intake reads every JSON float with an integral value as that integer
(docs/execution.md step 5; threat-model "Values that hash alike"). So a tool that prints a
numeric secret (a PIN, an account number: ``48151623``) as a JSON number in exponent or
fraction notation (``4.8151623e7``, ``4.8151623E+07``, ``0.48151623e8``, ``481516230e-1``,
``48151623.0``) hands the controller a result whose ``json`` value IS the secret (the
controller reads it so itself), while the recorded stdout text spells it with a dot or an
exponent the digit views do not read. Nobody tried JSON's own number notations. And the
converse: a secret whose text is a number JSON writes otherwise (leading zeros
``0072946183``, trailing fraction zeros ``5550193.2500``) printed by a tool that reads it
as a number (``int(pin)``, ``float(amount)``).

Lab ``ns`` (local mode): secret ``PIN`` = ``48151623`` in the secrets file (``lead0``:
``PIN0`` = ``0072946183``, ``trail0``: ``PIN2`` = ``5550193.2500``); catalog ``say``
(exec: prints ``{"v": <form>}``, the form its param ``f`` names built from the secret as param
``key``). One plan per form: action 1 ``say`` (``key: $<secrets.PIN>``), output ``o`` =
``$.json.v``; action 2 ``rec`` gets ``n: $<actions[1].outputs.o>``. Alice approves; one
pass.

Asserted: neither the secret's digits nor the form the tool printed (which reads as the
secret) appear in git history of the plan (``git log -p``, messages included), nor in
``plangate status`` (text and JSON).

Broke (history only; ``status`` held): ``lead0`` (``0072946183`` printed ``72946183``) and
``trail0`` (``5550193.2500`` printed ``5550193.25``): the number is committed in plain in
PLAN.yml and EXECUTION_LOG.md: the recorded stdout, the ``json`` value, output ``o`` and the
next action's recorded params. Should: a numeric secret is hidden wherever its number is
written (any JSON spelling of the same value, as the intake itself reads numbers), or the
accepted limits say so. Held: all 11 forms of ``48151623`` (``int``, ``float``, ``sci``,
``sci-up``, ``frac``, ``negexp``, ``zeros``, ``sci-big``, ``exp-zeros`` ``4.8151623e+0007``,
and as text: ``text-sci`` ``pin=4.8151623e7``, ``text-str`` the JSON string
``"4.8151623e7"``): the recorded stdout reads ``{"v": ***}``, the output and the next tool's
recorded params ``***`` (the next tool itself got the number), nothing in history or
``status``.

Fixed (2026-11-29): ``lead0`` and ``trail0`` pass: a secret whose text is a number (JSON's
grammar, or with leading zeros, a sign, trailing fraction zeros) has the canonical forms of
that number among its values (``secrets._number_forms``: the integer without leading zeros,
the decimal without trailing zeros, the float's shortest repr; forms of 6 characters or
more), so every view and every writer hides ``72946183`` and ``5550193.25`` as it hides the
secret, and the 11 held notations stay held.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

PIN = "48151623"
SAY = """\
import json, sys
p = json.loads(sys.stdin.read())
k = p["key"]
forms = {
    "int": k, "float": k + ".0", "sci": k[0] + "." + k[1:] + "e7",
    "sci-up": k[0] + "." + k[1:] + "E+07", "frac": "0." + k + "e8", "negexp": k + "0e-1",
    "zeros": k + ".000000", "sci-big": k[:-1] + "." + k[-1] + "e1",
    "exp-zeros": k[0] + "." + k[1:] + "e+0007", "lead0": k.isdigit() and str(int(k)),
    "trail0": "." in k and json.dumps(float(k)),
}
texts = {
    "text-sci": "pin=" + k[0] + "." + k[1:] + "e7\\n",
    "text-str": '{"v": "' + k[0] + "." + k[1:] + 'e7"}',
}
if p["f"] in texts:
    sys.stdout.write(texts[p["f"]])
else:
    sys.stdout.write('{"v": ' + forms[p["f"]] + '}')
"""

FORMS: dict[str, str] = {
    "int": "48151623",
    "float": "48151623.0",
    "sci": "4.8151623e7",
    "sci-up": "4.8151623E+07",
    "frac": "0.48151623e8",
    "negexp": "481516230e-1",
    "zeros": "48151623.000000",
    "sci-big": "4815162.3e1",
    "exp-zeros": "4.8151623e+0007",
    "text-sci": "4.8151623e7",
    "text-str": "4.8151623e7",
    "lead0": "72946183",
    "trail0": "5550193.25",
}
PIN0 = "0072946183"  # lead0's secret: a PIN with leading zeros, printed as a JSON integer
PIN2 = "5550193.2500"  # trail0's secret: an amount with trailing zeros, printed as a number
KEYS = {"lead0": "PIN0", "trail0": "PIN2"}


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "sec.yml").write_text(f'PIN: "{PIN}"\nPIN0: "{PIN0}"\nPIN2: "{PIN2}"\n')
    argv = [sys.executable, str(root / "say.py")]
    lab = Lab(
        root / "ns",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"say: {{kind: exec, argv: {json.dumps(argv)}}}\n",
    )
    for vid in FORMS:
        lab.write(
            vid,
            f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: say}, {name: rec}]\nactions:\n"
            f"  - id: 1\n    tool: say\n    why: w\n"
            f'    params: {{f: "{vid}", key: "$<secrets.{KEYS.get(vid, "PIN")}>"}}\n'
            f"    outputs: [{{name: o, path: {'$.stdout' if vid == 'text-sci' else '$.json.v'}}}]\n"
            f"  - id: 2\n    tool: rec\n    why: use\n"
            f'    params: {{tag: {vid}-2, n: "$<actions[1].outputs.o>"}}\n',
        )
    lab.commit("plans")
    lab.run()
    for vid in FORMS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.status_text = (  # type: ignore[attr-defined]
        lab.cli("status", "--config", str(lab.config)).stdout
        + lab.cli("status", "--json", "--config", str(lab.config)).stdout
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-numsecret", _build)


BROKEN: dict[str, Any] = {}
BROKEN_STATUS: dict[str, Any] = {}


def _found(text: str, form: str) -> list[str]:
    low = text.lower()
    return [w for w in {PIN, form.lower()} if w in low]


def test_bench_ran(lab: Lab) -> None:
    """Every plan completed and its second tool got a value: the attack was played."""
    got = {v: (lab.plan(v)["plan"]["status"], len(lab.calls(f"{v}-2"))) for v in FORMS}
    assert [v for v, g in got.items() if g != ("completed", 1)] == [], got


@pytest.mark.parametrize("vid", cases(list(FORMS), list(FORMS), BROKEN))
def test_number_forms_never_committed(lab: Lab, vid: str) -> None:
    hist = lab.history(vid)
    assert _found(hist, FORMS[vid]) == [], [
        line for line in hist.splitlines() if _found(line, FORMS[vid])
    ][:6]


@pytest.mark.parametrize("vid", cases(list(FORMS), list(FORMS), BROKEN_STATUS))
def test_number_forms_never_in_status(lab: Lab, vid: str) -> None:
    text = lab.status_text  # type: ignore[attr-defined]
    assert _found(text, FORMS[vid]) == [], [
        line[:300] for line in text.splitlines() if _found(line, FORMS[vid])
    ][:4]
