"""Round 43, exactly the approved values across a gate: an earlier action's output that holds
a secret reaches the gated action as the literal text ``***``.

Lab ``g`` (local mode), ``secrets.file`` holding ``TOK``; each plan's action 1 hands
``s: "$<secrets.TOK>"`` to ``echo`` and declares the output ``x: $.s`` (a login step handing
back a session token is the real-world shape); action 2 calls ``rec`` with
``q: "$<actions[1].outputs.x>"`` (whole value) and ``r: "<x> tail"`` (inside text):

- ``gated``: action 2 has ``requires_approval: true``; the run pauses (``awaiting_approval``),
  Bob approves the gate (``status: approved``), the next pass runs action 2;
- ``plain`` (control): no gate, both actions run in one pass;
- ``gated-overhidden`` / ``plain-overhidden``: action 1 hands back the plain text
  ``deploy-7 done`` (no secret); the catalog holds an unrelated exec tool ``clone`` whose
  ``argv`` has ``https://deploy@git.example/r.git`` (a clone URL with an ordinary user name,
  which docs/execution.md says is hidden "in every output (harmless: a word shown as
  ``***``, never a leak)").

- ``ask-resume`` / ``retry`` (control): action 2 (exec ``flaky``, failing on its first try
  only) gets ``q: "$<actions[1].outputs.x>"`` (the secret); ``on_failure: ask`` pauses the
  plan after the failure and Bob approves the resume (``status: approved``), or
  ``on_failure: retry`` tries again in the same pass.

- ``gated-values`` (control): a long text, floats (``1.0``, ``-0.0``, ``1e300``), U+2028 and
  NUL in text and a mapping reach a gated action as the output held them.

Asserted: ``rec`` ran once and got ``q`` equal to output ``x``'s real value (the secret,
``deploy-7 done``) and ``r`` to it then `` tail``: what the approved references resolve
to; the secret in no commit.

Broke (round 43): ``gated``: after the gate ``rec`` got ``q: "***"``, ``r: "*** tail"``: the
outputs are read back from the (redacted) journal on the resume, so a gated action never gets
an earlier output that held a secret (docs/execution.md lists this only for a crash replay;
here it is the ordinary path of every gate, and the gate preview shows ``***`` too). The
controller should resume with the real value (kept outside git, as the secret itself is), or
refuse a plan whose gated action reads an output a secret may reach. ``gated-overhidden``:
``rec`` got ``q: "***-7 done"``: the over-hiding the docs call harmless changes the value a
gated action runs with, for any output holding the word (here a user name of an unrelated
catalog URL); the un-gated control got ``deploy-7 done``. ``ask-resume``: the first try got
the secret, the resumed second try (same idempotency key) ``q: "***"``; ``retry`` held.

Fixed (round 43): a succeeded action's journaled end (and a ``called`` record) carries, when
redaction changed its result or outputs, the real ones *sealed* (``Redactor.seal``: a
SHAKE-256 key stream and an HMAC-SHA-256 tag under a key derived from every value the
redactor hides); a run that goes on after a gate, an ask or a crash unseals them
(``steps.journaled``), so it resolves exactly what an unpaused run would. No secret is
readable in the journal without the secrets themselves; if they changed meanwhile, the
redacted values are used (as before). ``gated-overhidden``: a URL's user part is a
credential only when the URL has no password and it looks like a token (16 characters or
more: ``toolspec.url_credentials``), so ``deploy`` is no longer hidden at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

SECRET = "Kp4Rt7Wy2Zx9Qm"
#: a plain word the catalog's clone URL uses as its user name (no credential of any plan)
WORD = "deploy"
VARIANTS = ["gated", "plain", "gated-overhidden", "plain-overhidden"]
RETRY = ["ask-resume", "retry"]
#: variant -> the value action 1's output ``x`` really holds
VALUE = {
    "gated": SECRET,
    "plain": SECRET,
    "gated-overhidden": f"{WORD}-7 done",
    "plain-overhidden": f"{WORD}-7 done",
}


def _plan(vid: str) -> str:
    gate = "    requires_approval: true\n" if vid.startswith("gated") else ""
    s = '"$<secrets.TOK>"' if vid in ("gated", "plain") else f'"{VALUE[vid]}"'
    return f"""\
plan:
  name: "{vid}"
  task: "token across a gate"
  status: pending_approval
available_tools:
  - name: echo
  - name: rec
actions:
  - id: 1
    tool: echo
    why: "log in"
    params: {{s: {s}}}
    outputs:
      - {{name: x, path: "$.s"}}
  - id: 2
    tool: rec
    why: "use the session"
{gate}    params:
      tag: "{vid}"
      q: "$<actions[1].outputs.x>"
      r: "$<actions[1].outputs.x> tail"
"""


FLAKY = """import sys, os
data = sys.stdin.read()
mark = sys.argv[1]
with open(mark + ".log", "a") as f:
    f.write(data + "\\n")
if not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit(1)
print("{}")
"""


def _retry_plan(vid: str) -> str:
    how = (
        "    on_failure: ask\n"
        if vid == "ask-resume"
        else "    on_failure: retry\n    retry: {attempts: 2, delay: 1}\n"
    )
    return f"""\
plan:
  name: "{vid}"
  task: "token into a failing step"
  status: pending_approval
available_tools:
  - name: echo
  - name: flaky
actions:
  - id: 1
    tool: echo
    why: "log in"
    params: {{s: "$<secrets.TOK>"}}
    outputs:
      - {{name: x, path: "$.s"}}
  - id: 2
    tool: flaky
    why: "use the session (fails on its first try)"
{how}    params: {{tag: "{vid}", q: "$<actions[1].outputs.x>"}}
"""


#: ``gated-values``: values that a journal round trip could change (a long text, a float
#: written ``1.0``, ``-0.0``, ``1e300``, U+2028 and NUL in text, key order)
VALUES = {
    "s": "b" * 20000,
    "f": 1.0,
    "z": -0.0,
    "e": 1e300,
    "u": "x\u2028y\u0000z",
    "k": {"b": 1, "a": 2},
}
VALUES_PLAN = f"""\
plan:
  name: "gated-values"
  task: "values across a gate"
  status: pending_approval
available_tools:
  - name: echo
  - name: rec
actions:
  - id: 1
    tool: echo
    why: "hand back"
    params: {json.dumps(VALUES)}
    outputs:
      - {{name: x, path: "$"}}
  - id: 2
    tool: rec
    why: "gated"
    requires_approval: true
    params: {{tag: gated-values, q: "$<actions[1].outputs.x>"}}
"""


def _build(root: Path) -> Lab:
    (root / "g").mkdir()
    secrets = root / "secrets.yml"
    secrets.write_text(f"TOK: {SECRET}\n")
    clone = f'clone: {{kind: exec, argv: ["/bin/true", "https://{WORD}@git.example/r.git"]}}\n'
    (root / "flaky.py").write_text(FLAKY)
    flaky = json.dumps([sys.executable, str(root / "flaky.py"), str(root / "{tag}")])
    clone += f"flaky: {{kind: exec, argv: {flaky}}}\n"
    lab = Lab(root / "g", extra=f"secrets: {{file: {secrets}}}\n", tools=clone)
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    for vid in RETRY:
        lab.write(vid, _retry_plan(vid))
    lab.write("gated-values", VALUES_PLAN)
    lab.commit("plans")
    lab.run()
    for vid in [*VARIANTS, *RETRY, "gated-values"]:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.set_status("gated", "approved")
    lab.set_status("gated-overhidden", "approved")
    lab.set_status("ask-resume", "approved")
    lab.set_status("gated-values", "approved")
    lab.commit("approve the gates", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-gatereplay", _build)


@pytest.mark.parametrize(
    "vid",
    [
        "gated",
        "plain",
        "gated-overhidden",
        "plain-overhidden",
    ],
)
def test_the_approved_reference_reaches_the_tool(lab: Lab, vid: str) -> None:
    assert (lab.plan(vid).get("execution") or {}).get("status") == "completed"
    assert SECRET not in lab.git("log", "--all", "-p")
    calls = lab.calls(vid)
    assert len(calls) == 1, calls
    got = json.loads(calls[0]["stdin"])
    want = VALUE[vid]
    assert got["q"] == want and got["r"] == f"{want} tail", got


@pytest.mark.parametrize(
    "vid",
    [
        "ask-resume",
        "retry",
    ],
)
def test_a_second_try_gets_the_first_tries_params(lab: Lab, vid: str) -> None:
    assert (lab.plan(vid).get("execution") or {}).get("status") == "completed"
    tries = [
        json.loads(line)
        for line in (lab.root.parent / f"{vid}.log").read_text().splitlines()
        if line.strip()
    ]
    assert len(tries) == 2, tries
    assert tries[0] == tries[1] == {"tag": vid, "q": SECRET}, tries


def test_plain_values_cross_a_gate_unchanged(lab: Lab) -> None:
    assert (lab.plan("gated-values").get("execution") or {}).get("status") == "completed"
    calls = lab.calls("gated-values")
    assert len(calls) == 1, calls
    assert json.loads(calls[0]["stdin"])["q"] == VALUES
