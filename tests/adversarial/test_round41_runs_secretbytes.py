"""Round 41, what is recorded: a secret a tool prints in a byte-dump or character form that
the redactor's listed views (docs/execution.md "Secrets") do not name.

One lab; the secret ``TOKEN`` is ``Kq7mZp2VtR9xLw4B``. Each variant is one plan whose exec
tool ``enc`` gets ``$<secrets.TOKEN>`` and prints ``value: <form>``; all approved by Alice
and run in one pass.

Asserted: every plan completed, and none of the variant's needles (the printed form, or its
lines of 8 characters or more) is in that plan's git history (``log --all -p``, messages
included) nor its ``status --json`` row.

Fixed (round 41, by cause, not one decoder per form): the number views became one *code-run
view* (``execution/secrets.py``, ``_code_run_view``): a run of character or byte codes in
one notation (hex, decimal, octal, binary; bare or with a prefix) separated by list
separators or by the same bounded filler between each two (``CHAR(75)||CHAR(113)``,
``chr(75)+chr(113)``, ``\\x{4b}\\x{71}``), its hex codes read as code points, as bytes in
order (``xxd``'s groups, UTF-32 dumps) and as ``od -x``'s byte-swapped words; the secret's
UTF-32 is one of its unit forms. A *compatibility view* searches text in NFKC (fullwidth,
ligatures), and secrets of 8 characters or more with letters are found in any case. The
uuencoding of a secret is one of its block forms (base64's bits, uuencode's alphabet).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

TOKEN = "Kq7mZp2VtR9xLw4B"
ENC = r"""import base64, binascii, json, sys
# changed (fix130s): secret on stdin, argv refuses it
m, s = sys.argv[1], json.loads(sys.stdin.buffer.read())["s"]
b = s.encode()
def wrap(t, n):
    return "\n".join(t[i:i + n] for i in range(0, len(t), n))
forms = {
    "od-x": " ".join(f"{b[i + 1]:02x}{b[i]:02x}" for i in range(0, len(b), 2)),
    "od-b": " ".join(f"{c:03o}" for c in b),
    "bin": " ".join(f"{c:08b}" for c in b),
    "xxd-groups": " ".join(b[i:i + 2].hex() for i in range(0, len(b), 2)),
    "b64-w20": wrap(base64.b64encode(b).decode(), 20),
    "b32-w16": wrap(base64.b32encode(b).decode(), 16),
    "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in s),
    "utf32-hex": s.encode("utf-32-le").hex(),
    "uu": binascii.b2a_uu(b).decode().rstrip("\n"),
    "perl-x": "".join(f"\\x{{{ord(c):x}}}" for c in s),
    "sql-char": "||".join(f"CHAR({ord(c)})" for c in s),
    "upper": s.upper(),
    "hex-json-list": json.dumps([f"{c:02x}" for c in b]),
    "dec-dashes": "-".join(str(c) for c in b),
    "octal-0o": " ".join(f"0o{c:o}" for c in b),
    "py-chr-plus": "+".join(f"chr({ord(c)})" for c in s),
    "plain": s,
}
print("value: " + forms[m])
"""


VARIANTS = [
    "od-x",
    "od-b",
    "bin",
    "xxd-groups",
    "b64-w20",
    "b32-w16",
    "fullwidth",
    "utf32-hex",
    "uu",
    "perl-x",
    "sql-char",
    "upper",
    "hex-json-list",
    "dec-dashes",
    "octal-0o",
    "py-chr-plus",
    "plain",
]
#: variant -> strict xfail marker (none left: round 41's breaks are fixed)
BROKEN: dict[str, object] = {}


def _needles(root: Path) -> dict[str, list[str]]:
    import subprocess

    out = {}
    for m in VARIANTS:
        form = (
            subprocess.run(
                [sys.executable, str(root / "enc.py"), m],
                input=json.dumps({"s": TOKEN}),  # the tool's stdin, as run
                capture_output=True,
                text=True,
            )
            .stdout[len("value: ") :]
            .rstrip("\n")
        )
        lines = [ln.strip() for ln in form.split("\n") if len(ln.strip()) >= 8]
        out[m] = sorted({x for t in (form, *lines) for x in (t, json.dumps(t)[1:-1])})
    return out


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "enc.py").write_text(ENC)
    # changed (fix130s): secret on stdin, argv refuses it
    argv = json.dumps([sys.executable, str(root / "enc.py"), "{m}"])
    lab.write_config(tools=f"enc: {{kind: exec, argv: {argv}}}\n")
    for m in VARIANTS:
        lab.write(
            m,
            f"plan:\n  name: {m}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: enc}]\n"
            "actions:\n  - id: 1\n    tool: enc\n    why: w\n"
            f"    params: {{m: {m}, s: '$<secrets.TOKEN>'}}\n",
        )
    lab.commit("plans")
    lab.run()
    for m in VARIANTS:
        lab.set_status(m, "approved")
    lab.commit("approve them", ALICE)
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": TOKEN}  # type: ignore[attr-defined]
    lab.run()
    lab.extra_env = {}  # type: ignore[attr-defined]
    rows = json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    lab.written = {  # type: ignore[attr-defined]
        m: lab.git("log", "--all", "-p", "--text", "--format=%H%n%B", "--", f"plans/{m}")
        + json.dumps([r for r in rows if r["plan"] == f"plans/{m}"])
        for m in VARIANTS
    }
    lab.needles = _needles(root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r41-secretbytes", lambda root: _build(root / "lab"))


def test_every_plan_ran_with_the_secret(lab: Lab) -> None:
    rows = lab.status()
    for m in VARIANTS:
        assert rows[f"plans/{m}"]["status"] == "completed", lab.codes(m)


@pytest.mark.parametrize(
    "m", [pytest.param(m, id=m, marks=[BROKEN[m]] if m in BROKEN else []) for m in VARIANTS]
)
def test_a_dumped_secret_is_not_written(lab: Lab, m: str) -> None:
    text: str = lab.written[m]  # type: ignore[attr-defined]
    for needle in lab.needles[m]:  # type: ignore[attr-defined]
        assert needle not in text, needle
    assert TOKEN not in text
