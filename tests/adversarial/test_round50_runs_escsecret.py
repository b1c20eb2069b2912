# ruff: noqa: E501
"""Round 50, secrets never reaching git or status output: a secret whose own characters are
ones the controller's display rule (round 49: ``show``/``status``; the YAML writer of round
41) writes escaped: a no-break space, a decomposed accent, a tab, a bidi mark. If a channel
escapes before it redacts, the secret reaches it in its escaped spelling.

Lab ``es``: ``secrets.file`` holds the secrets below; the exec tool ``say`` gets ``key:
$<secrets.NAME>`` and prints it in a form, on stdout and stderr, then exits 1 (``-fail``:
the value also in the error message, the outcome commit and ``status``). Alice approves all; one pass. Per plan ``<secret>-<form>-<mode>``:

- secrets: ``nbsp`` ``Zq8W<U+00A0>xx3Yv7Ut2``, ``nfd`` ``Kp4Rde<U+0301>mm9Qw2Lx``, ``tab``
  ``Hv6T<TAB>yy2Lp8Ns4``, ``lrm`` ``Jc5B<U+200E>ww4Tn7Gh3``, ``bslash`` ``Wm3\\u00e9Xx7Rr2Pk``
  (a literal backslash-u text).
- forms: ``raw`` (``print(v)``), ``json`` (``json.dumps({"v": v})``, ASCII escapes),
  ``repr`` (Python ``repr``).

Held: all 15.

Asserted per variant: the secret's distinctive tail (after its special character) is written
nowhere in the committed history about the plan (diffs, messages), ``plangate status`` (text,
JSON) or ``plangate show --config`` of the plan.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

SECRETS = {
    "nbsp": ("Zq8W\u00a0xx3Yv7Ut2", "xx3Yv7Ut2"),
    "nfd": ("Kp4Rde\u0301mm9Qw2Lx", "mm9Qw2Lx"),
    "tab": ("Hv6T\tyy2Lp8Ns4", "yy2Lp8Ns4"),
    "lrm": ("Jc5B\u200eww4Tn7Gh3", "ww4Tn7Gh3"),
    "bslash": ("Wm3\\u00e9Xx7Rr2Pk", "Xx7Rr2Pk"),
}
FORMS = ["raw", "json", "repr"]
VIDS = [f"{s}-{f}-{m}" for s in SECRETS for f in FORMS for m in ("fail",)]
BROKEN: dict[str, str] = {}
SAY = """\
import json, sys
form, mode = sys.argv[1], sys.argv[2]
v = json.loads(sys.stdin.read())["key"]
out = {"raw": v, "json": json.dumps({"v": v}), "repr": repr(v)}[form]
print(out)
print(out, file=sys.stderr)
sys.exit(0 if mode == "ok" else 1)
"""


def _build(root: Path) -> Lab:
    (root / "say.py").write_text(SAY)
    (root / "sec.yml").write_text(
        "".join(f"{k.upper()}: {json.dumps(v)}\n" for k, (v, _) in SECRETS.items())
    )
    lab = Lab(
        root / "es",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"say: {{kind: exec, argv: [{json.dumps(sys.executable)}, {json.dumps(str(root / 'say.py'))}, '{{f}}', '{{m}}']}}\n",
    )
    for vid in VIDS:
        sec, form, mode = vid.split("-")
        lab.write(
            vid,
            f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: say}]\nactions:\n  - id: 1\n    tool: say\n    why: w\n"
            f'    params: {{f: {form}, m: {mode}, key: "$<secrets.{sec.upper()}>"}}\n',
        )
    lab.commit("plans")
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    cfg = str(lab.config)
    status = (
        lab.cli("status", "--config", cfg).stdout
        + lab.cli("status", "--json", "--config", cfg).stdout
    )
    lab.seen = {}  # type: ignore[attr-defined]
    for vid in VIDS:
        hist = lab.git("log", "-p", "--format=%B", "--", f"plans/{vid}")
        show = lab.cli("show", str(lab.repo / "plans" / vid), "--config", cfg)
        lab.seen[vid] = (hist, show.stdout + show.stderr, status)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r50-escsecret", _build)


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            id=v,
            marks=[
                pytest.mark.xfail(
                    strict=True, raises=AssertionError, reason=f"round 50: {BROKEN[v]}"
                )
            ]
            if v in BROKEN
            else [],
        )
        for v in VIDS
    ],
)
def test_an_escaped_secret_is_masked(lab: Lab, vid: str) -> None:
    hist, show, status = lab.seen[vid]  # type: ignore[attr-defined]
    tail = SECRETS[vid.split("-")[0]][1]
    assert "completed" in hist or "failed" in hist, hist[-1500:]
    for where, text in (("history", hist), ("show", show), ("status", status)):
        assert tail not in text, (where, [ln for ln in text.splitlines() if tail in ln][:3])
