"""Round 34, secrets never reaching git or status output: a secret's *encoded* form (hex in
either case, base64) straddling one of the controller's own cuts. Round 14 covered a plain
secret cut at the output-limit note and messages shortened with an ellipsis; here the tool
prints an encoding of the secret placed so that each cut keeps only its first half (the
encoded half of the secret is then no whole encoding any more).

One lab (``limits.max_result_bytes: 4096``, secret ``PLANGATE_SECRET_TOKEN``); tool ``emit``
gets the secret as ``$<secrets.TOKEN>`` and ``n`` padding characters, and prints padding +
encoding:

- ``out-<enc>-<n>``: as a JSON output value, which the ``execution:`` block cuts at 200
  characters (n = 187, 189: the cut falls inside the encoding);
- ``raw-<enc>-<n>``: as raw stdout past ``max_result_bytes`` (n = 4084, 4088);
- ``err-<enc>-<n>``: as stderr of a failing tool, whose last line the error message keeps
  up to 300 characters (n = 290, 294).

Asserted: no commit (message or content) and no ``status --json`` output holds the first
eight or more characters of any encoding of the secret. All held (round 34).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

SECRET = "Zq8Rk3Vw7Pn2xT"
ENCODINGS = {
    "hex": SECRET.encode().hex(),
    "hexup": SECRET.encode().hex().upper(),
    "b64": base64.b64encode(SECRET.encode()).decode(),
}
EMIT = """\
import base64, json, sys
p = json.loads(sys.stdin.read())
sec = p["s"].encode()
body = {"hex": sec.hex(), "hexup": sec.hex().upper(),
        "b64": base64.b64encode(sec).decode()}[p["enc"]]
v = "A" * p["n"] + body
if p["mode"] == "out":
    print(json.dumps({"v": v}))
elif p["mode"] == "raw":
    sys.stdout.write(v)
else:
    sys.stderr.write(v)
    sys.exit(3)
"""
CASES = {
    f"{mode}-{enc}-{n}": (mode, enc, n)
    for enc in ENCODINGS
    for mode, ns in (("out", (187, 189)), ("raw", (4084, 4088)), ("err", (290, 294)))
    for n in ns
}


def _plan(slug: str, mode: str, enc: str, n: int) -> str:
    text = f"""plan:
  name: "{slug}"
  task: "t"
  status: pending_approval
available_tools:
  - name: emit
actions:
  - id: 1
    tool: emit
    why: "w"
    on_failure: skip
    params: {{mode: "{mode}", n: {n}, enc: "{enc}", s: "$<secrets.TOKEN>"}}
"""
    if mode == "out":
        text += '    outputs:\n      - {name: v, path: "$.json.v"}\n'
    return text


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    (root / "emit.py").write_text(EMIT)
    argv = json.dumps([sys.executable, str(root / "emit.py")])
    lab = Lab(
        root / "lab",
        tools=f"emit: {{kind: exec, argv: {argv}}}\n",
        extra="secrets: {env_prefix: PLANGATE_SECRET_}\nlimits: {max_result_bytes: 4096}\n",
    )
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}  # type: ignore[attr-defined]
    for slug, case in CASES.items():
        lab.write(slug, _plan(slug, *case))
    lab.commit("plans")
    lab.run()
    for slug in CASES:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.gitall = subprocess.run(  # type: ignore[attr-defined]
        ["git", "log", "-p", "--format=%B", "HEAD"],
        cwd=lab.repo,
        env=lab.env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lab.statusout = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r34-runs-secretcuts", lambda root: _build(root / "sc"))


def test_every_case_ran(lab: Lab) -> None:
    rows = lab.status()
    assert all(rows[f"plans/{slug}"]["status"] in ("completed", "failed") for slug in CASES)


@pytest.mark.parametrize("slug", list(CASES))
def test_no_encoded_half_secret(lab: Lab, slug: str) -> None:
    enc = ENCODINGS[CASES[slug][1]]
    prefix = enc[:8]
    for where in (lab.gitall, lab.statusout):  # type: ignore[attr-defined]
        assert prefix not in where
