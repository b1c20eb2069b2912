"""Round 40, what is recorded: a numeric secret (an account number, a PIN, a numeric API id)
a tool prints back with digit grouping, the way number formatting does (``f"{n:,}"``, a
locale's thousands separator).

One lab; the secret ``PIN`` is ``918273645012``; each plan is one ``g`` action getting
``$<secrets.PIN>`` and printing it as ``id: <form>``; all approved by Alice and run in one pass:

- ``comma`` (``918,273,645,012``), ``under`` (``918_273_645_012``, Python/Rust literals),
  ``space`` (``918 273 645 012``, SI/French grouping), ``dots`` (``918.273.645.012``, German);
- ``float`` (``918273645012.00``): control, held (``***.00``).

Asserted: the printed form (and the secret's digits with the separators removed from the
recorded text) is not in the plan's git history nor its ``status --json`` row.

**Broke** (round 40): ``comma``, ``under``, ``space`` and ``dots`` are committed readable in the
recorded ``stdout`` (``"stdout": "id: 918,273,645,012\\n"`` in PLAN.yml and EXECUTION_LOG.md).
Should: the number view that reads lists of numbers with any separators (round 14) also read
a grouped number as the digits it spells, and hide it.

**Fixed** (round 40): the redactor reads a number written with digit grouping (one separator
throughout, ``,``, ``_``, a blank, ``.``, ``'`` or a narrow blank, groups of three) as its
digits, and hides it whole when they hold a secret of 6 digits or more.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

PIN = "918273645012"
G = """import json, sys
# changed (fix130s): secret on stdin, argv refuses it
m, s = sys.argv[1], json.loads(sys.stdin.buffer.read())["s"]
n = int(s)
forms = {"comma": f"{n:,}", "under": f"{n:_}", "space": f"{n:,}".replace(",", " "),
         "dots": f"{n:,}".replace(",", "."), "float": f"{n:.2f}"}
print("id: " + forms[m])
"""
FORMS = {
    "comma": "918,273,645,012",
    "under": "918_273_645_012",
    "space": "918 273 645 012",
    "dots": "918.273.645.012",
    "float": "918273645012.00",
}
#: Broke in round 40, fixed since.
FIXED = ["comma", "under", "space", "dots"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "g.py").write_text(G)
    # changed (fix130s): secret on stdin, argv refuses it
    argv = json.dumps([sys.executable, str(root / "g.py"), "{m}"])
    lab.write_config(tools=f"g: {{kind: exec, argv: {argv}}}\n")
    for m in FORMS:
        lab.write(
            m,
            f"plan:\n  name: {m}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: g}]\n"
            "actions:\n  - id: 1\n    tool: g\n    why: w\n"
            f"    params: {{m: {m}, s: '$<secrets.PIN>'}}\n",
        )
    lab.commit("plans")
    lab.run()
    for m in FORMS:
        lab.set_status(m, "approved")
    lab.commit("approve them", ALICE)
    lab.extra_env = {"PLANGATE_SECRET_PIN": PIN}  # type: ignore[attr-defined]
    lab.run()
    lab.extra_env = {}  # type: ignore[attr-defined]
    rows = json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    lab.written = {  # type: ignore[attr-defined]
        m: lab.git("log", "--all", "-p", "--text", "--format=%H%n%B", "--", f"plans/{m}")
        + json.dumps([r for r in rows if r["plan"] == f"plans/{m}"])
        for m in FORMS
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-secretdigits", lambda root: _build(root / "lab"))


def test_every_plan_ran_with_the_secret(lab: Lab) -> None:
    rows = lab.status()
    for m in FORMS:
        assert rows[f"plans/{m}"]["status"] == "completed", lab.codes(m)
    assert "***" in lab.written["float"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "m",
    [pytest.param(m, id=m) for m in FORMS],
)
def test_a_grouped_numeric_secret_is_not_written(lab: Lab, m: str) -> None:
    text: str = lab.written[m]  # type: ignore[attr-defined]
    assert FORMS[m] not in text
    assert PIN not in text
