"""Round 35, secrets never reaching git or status output: a secret written by a tool in the
quoting or wrapping of a common text format (not an escape the redactor decodes).

One lab, one secret per form (``PLANGATE_SECRET_<FORM>``). Tool ``emit`` gets the secret as
``$<secrets.<FORM>>`` and prints it as the form says, inside a line of text, both on stdout
(mode ``out``: exit 0, its stdout recorded) and on stderr (mode ``err``: exit 3, the error's
last line kept in the record):

- ``plain`` (control): the secret as it is;
- ``yaml-sq``: YAML single-quoted, a ``'`` doubled (``'Zx9Qp7Lm''42kTr8Wv'``);
- ``csv``: a CSV field, a ``"`` doubled;
- ``sh``: POSIX shell quoting, a ``'`` written ``'\\''``;
- ``yaml-fold``: a passphrase with spaces in a long double-quoted YAML scalar, folded by the
  emitter (newline and indentation between two of its words);
- ``yaml-nbsp``: a secret holding U+00A0 written by a YAML emitter as ``\\_``;
- ``qp-soft``: quoted-printable with a soft line break (``=\\r\\n``) inside the secret;
- ``wrap``: the secret hard-wrapped after 9 characters (a newline, as ``fold -w`` does);
- ``mojibake``: a secret with ``ä``/``Ö`` printed as its UTF-8 bytes read as Latin-1;
- ``nfd``: a secret with ``é`` printed decomposed (NFD).

Asserted per form and mode: no commit about the plan (message or content) and not its
``status --json`` row
holds either distinctive run of the secret's characters (each run survives the form as is).

Held (round 35): ``plain``, ``nfd`` (both modes), ``out-qp-soft`` (the recorded stdout shows
``key: ***``). **Broke**: ``yaml-sq``, ``csv``, ``sh``, ``yaml-fold``, ``yaml-nbsp``, ``wrap``,
``mojibake`` in both modes (the recorded stdout/stderr, the error message and the log show
the secret in that form), and ``err-qp-soft``: the stderr recorded in the result is
redacted (``key: ***``), but the error message keeps only the last stderr line, which
holds the secret's tail after the soft break (``... exited with status 3: Lz4Xc8Vb1``),
in the committed PLAN.yml, the log and ``status``.

Fixed (round 35, every id passes): the redactor's break view reads a line end with the
indentation after it as nothing or as a blank and a quote written twice or escaped as the
quote, over the text and over what the escape view decoded; the escape view reads every
YAML escape (``\\_``, ``\\N``, ``\\L``, ``\\P``, ``\\e``, ``\\a``); a secret's UTF-8 read as
Latin-1 or cp1252 is one of its forms; a failed tool's message cuts the last stderr line
from the redacted whole.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

#: form -> (secret, distinctive runs the form leaves as they are)
SECRETS = {
    "plain": ("Gb5Yh8Nj'3Uk7Im0Ol", ("Gb5Yh8Nj", "3Uk7Im0Ol")),
    "yaml-sq": ("Zx9Qp7Lm'42kTr8Wv", ("Zx9Qp7Lm", "42kTr8Wv")),
    "csv": ('Hj3Nb6Vc"58pLs2Qd', ("Hj3Nb6Vc", "58pLs2Qd")),
    "sh": ("Mn4Bv8Cx'71rTy5Ue", ("Mn4Bv8Cx", "71rTy5Ue")),
    "yaml-fold": ("Rq5tulip orbit7canyon Wx3marble9stove", ("Rq5tulip", "Wx3marble9stove")),
    "yaml-nbsp": ("Pk2Lw9Xs\u00a0Xs4Gh7Jd", ("Pk2Lw9Xs", "Xs4Gh7Jd")),
    "wrap": ("Fd8Sa1Qw3Ez6Rx9Tc2", ("Fd8Sa1Qw3", "Ez6Rx9Tc2")),
    "qp-soft": ("Ty6Gh2Jk9Lz4Xc8Vb1", ("Ty6Gh2Jk", "Lz4Xc8Vb1")),
    "mojibake": ("W\u00e47Qs3Rd\u00d6p9Rt5Ym2", ("7Qs3Rd", "p9Rt5Ym2")),
    "nfd": ("Ke\u0301y4Mn8Bv2Cx6Zl", ("y4Mn8Bv2Cx6Zl",)),
}
MODES = ("out", "err")
EMIT = """\
import json, sys, unicodedata
from ruamel.yaml import YAML
import io
p = json.loads(sys.stdin.read())
form, s = p["form"], p["s"]
if form == "plain":
    v = "password: " + s
elif form == "yaml-sq":
    v = "password: '" + s.replace("'", "''") + "'"
elif form == "csv":
    v = 'id,pw\\n1,"' + s.replace('"', '""') + '"'
elif form == "sh":
    v = "export PW='" + s.replace("'", "'\\\\''") + "'"
elif form in ("yaml-fold", "yaml-nbsp"):
    y = YAML(typ="safe", pure=True)
    y.default_style = '"'
    y.allow_unicode = form != "yaml-nbsp"
    y.width = 60
    buf = io.StringIO()
    pad = "note " * 9 if form == "yaml-fold" else ""
    y.dump({"pw": pad + s + "\\a"}, buf)
    v = buf.getvalue()
elif form == "wrap":
    v = "token: " + s[:9] + "\\n" + s[9:]
elif form == "qp-soft":
    v = "Content-Transfer-Encoding: quoted-printable\\r\\n\\r\\nkey: " + s[:9] + "=\\r\\n" + s[9:]
elif form == "mojibake":
    v = "pw: " + s.encode("utf-8").decode("latin-1")
elif form == "nfd":
    v = "pw: " + unicodedata.normalize("NFD", s)
if p["mode"] == "out":
    sys.stdout.write(v + "\\n")
else:
    sys.stderr.write(v + "\\n")
    sys.exit(3)
"""


def _slug(form: str, mode: str) -> str:
    return f"{mode}-{form}"


def _plan(form: str, mode: str) -> str:
    name = form.upper().replace("-", "_")
    text = f"""plan:
  name: "{_slug(form, mode)}"
  task: "t"
  status: pending_approval
available_tools:
  - name: emit
actions:
  - id: 1
    tool: emit
    why: "w"
    on_failure: skip
    params: {{mode: "{mode}", form: "{form}", s: "$<secrets.{name}>"}}
"""
    return text


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    (root / "emit.py").write_text(EMIT)
    argv = json.dumps([sys.executable, str(root / "emit.py")])
    lab = Lab(
        root / "lab",
        tools=f"emit: {{kind: exec, argv: {argv}}}\n",
        extra="secrets: {env_prefix: PLANGATE_SECRET_}\n",
    )
    lab.extra_env = {  # type: ignore[attr-defined]
        "PLANGATE_SECRET_" + form.upper().replace("-", "_"): secret
        for form, (secret, _) in SECRETS.items()
    }
    for form in SECRETS:
        for mode in MODES:
            lab.write(_slug(form, mode), _plan(form, mode))
    lab.commit("plans")
    lab.run()
    for form in SECRETS:
        for mode in MODES:
            lab.set_status(_slug(form, mode), "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.gitlog = {  # type: ignore[attr-defined]
        slug: lab.git("log", "-p", "--format=%B", "HEAD", "--", f"plans/{slug}")
        for slug in (_slug(f, m) for f in SECRETS for m in MODES)
    }
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    lab.statusrows = {r["plan"]: json.dumps(r) for r in json.loads(out)}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-runs-secretquote", lambda root: _build(root / "sq"))


#: Ids still broken (strict xfail): none since the fix of round 35 (see the docstring).
BROKEN: dict[str, str] = {}


def _cases() -> list:
    out = []
    for form in SECRETS:
        for mode in MODES:
            slug = _slug(form, mode)
            marks = []
            if slug in BROKEN:
                marks.append(
                    pytest.mark.xfail(
                        strict=True, raises=AssertionError, reason=f"round 35: {BROKEN[slug]}"
                    )
                )
            out.append(pytest.param(form, mode, id=slug, marks=marks))
    return out


def test_every_case_ran(lab: Lab) -> None:
    rows = lab.status()
    for form in SECRETS:
        for mode in MODES:
            slug = _slug(form, mode)
            assert rows[f"plans/{slug}"]["status"] in ("completed", "failed")
            log = lab.git("show", f"HEAD:plans/{slug}/EXECUTION_LOG.md")
            assert f'"exit_code": {0 if mode == "out" else 3}' in log, slug


@pytest.mark.parametrize(("form", "mode"), _cases())
def test_no_secret_run_recorded(lab: Lab, form: str, mode: str) -> None:
    slug = _slug(form, mode)
    _, runs = SECRETS[form]
    gitlog = lab.gitlog[slug]  # type: ignore[attr-defined]
    for where in (gitlog, lab.statusrows[f"plans/{slug}"]):  # type: ignore[attr-defined]
        for run in runs:
            assert run not in where, (run, slug)
