"""What was hashed and reviewed is what runs (SPEC §2, §5, §15; issue 11).

Two roots, tested through the real CLI and a real ``plangate run --once`` on a real repo:

- one canonical value tree: every spelling of a JSON number that RFC 8785 hashes alike
  (``1.0``, ``1e2``, ``-0.0``, ...) reaches a tool as the very same value, in its argv, on
  its stdin and inside a longer string;
- no hidden line breaks: U+0085, U+2028, U+2029 and a lone CR, which YAML reads as line
  breaks but git diff and review tools show inside one line, are refused (E_YAML_PARSE with
  line and column) outside quoted strings, so no key or action can hide behind them.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from controller.plan import hashing, yamlio
from tests.support.gitenv import commit_all, git, run_cli

ALICE = ("Alice", "alice@example.com")

RECORDER = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
print("{}")
"""

# (written form, the integer or float every one of them must reach the tool as). A form a
# double cannot hold as written (``1.0000000000000001``) is refused instead (round 22:
# tests/plan/test_plans.py::test_non_json_values_are_schema_invalid_with_quote_hint).
FORMS = {
    "1.0": 1,
    "1e2": 100,
    "1E2": 100,
    "100.0": 100,
    "1.0e+2": 100,
    "-0.0": 0,
    "0.0": 0,
    "0.1e1": 1,
    "9007199254740991.0": 9007199254740991,
    "2.50": 2.5,
    "1e20": 1e20,
}


def plan(tag: str, value: str, status: str = "pending_approval") -> str:
    return textwrap.dedent(
        f"""\
        plan:
          name: "{tag}"
          task: "number form {tag}"
          status: {status}
        inputs:
          n: {value}
        available_tools:
          - name: rec
        actions:
          - id: 1
            tool: rec
            why: "record the values"
            params:
              tag: "{tag}"
              direct: {value}
              ref: "$<inputs.n>"
              text: "n=$<inputs.n>"
        """
    )


class Bench:
    """A plans repo with the config, state and recorder outside it."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        commit_all(self.repo, "initial", ("Owner", "owner@example.com"))
        self.log = root / "ran.log"
        recorder = root / "rec.py"
        recorder.write_text(RECORDER)
        argv = json.dumps([sys.executable, str(recorder), "{tag}", "--n={direct}"])
        self.config = root / "plangate.yml"
        self.config.write_text(
            f"repo: {self.repo}\nstate_dir: {root / 'state'}\n"
            "approval: {approvers: [alice@example.com]}\n"
            f"tools:\n  rec: {{kind: exec, argv: {argv}, env: {{REC_LOG: '{self.log}'}}}}\n"
        )

    def write(self, slug: str, text: str | bytes) -> Path:
        path = self.repo / "plans" / slug / "PLAN.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        return path

    def run_once(self) -> None:
        result = run_cli("run", "--once", "--config", str(self.config), timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]
        assert "Traceback" not in result.stderr

    def approve_all(self) -> None:
        for path in (self.repo / "plans").glob("*/PLAN.yml"):
            data = path.read_bytes()
            if b"status: pending_approval" in data:
                path.write_bytes(data.replace(b"status: pending_approval", b"status: approved"))
        commit_all(self.repo, "approve", ALICE)

    def calls(self) -> dict[str, dict[str, Any]]:
        rows = [json.loads(line) for line in self.log.read_text().splitlines()]
        return {r["argv"][0]: {"argv": r["argv"], "stdin": json.loads(r["stdin"])} for r in rows}


@pytest.fixture(scope="module")
def numbers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every form, and its integer twin, approved and run by one controller."""
    bench = Bench(tmp_path_factory.mktemp("numbers"))
    for index, form in enumerate(FORMS):
        bench.write(f"form-{index}", plan(f"form-{index}", form))
        bench.write(f"twin-{index}", plan(f"twin-{index}", json.dumps(FORMS[form])))
    commit_all(bench.repo, "plans")
    bench.run_once()
    bench.approve_all()
    bench.run_once()
    calls = bench.calls()
    for index, form in enumerate(FORMS):
        # the same plan, but for the number's spelling: its hash must not change
        path, twin = bench.repo.parent / "form.yml", bench.repo.parent / "twin.yml"
        path.write_text(plan("same", form))
        twin.write_text(plan("same", json.dumps(FORMS[form])))
        hashes = [run_cli("hash", str(p)).stdout.strip() for p in (path, twin)]
        calls[f"form-{index}"]["hashes"] = hashes
    return calls


@pytest.mark.parametrize(("index", "form"), list(enumerate(FORMS)))
def test_number_forms_that_hash_alike_reach_the_tool_alike(
    numbers: dict[str, dict[str, Any]], index: int, form: str
) -> None:
    got, twin = numbers[f"form-{index}"], numbers[f"twin-{index}"]
    first, second = got.pop("hashes")
    assert first == second and first.startswith("sha256:"), f"{form} must hash like its twin"
    # argv placeholder, whole-value reference, JSON on stdin and text interpolation alike
    assert got["argv"][1:] == twin["argv"][1:]
    assert {k: v for k, v in got["stdin"].items() if k != "tag"} == {
        k: v for k, v in twin["stdin"].items() if k != "tag"
    }
    assert got["stdin"]["direct"] == FORMS[form]
    assert type(got["stdin"]["direct"]) is type(FORMS[form])


@pytest.mark.parametrize("form", list(FORMS))
def test_the_reader_yields_the_value_the_hash_writes(form: str) -> None:
    value = yamlio.read_yaml(f"n: {form}\n").data["n"]
    assert value == json.loads(hashing.canonical_bytes(value)) == FORMS[form]
    assert type(value) is type(FORMS[form])


SEPARATORS = {"nel": "\x85", "ls": "\u2028", "ps": "\u2029", "cr": "\r"}
BASE = plan("hidden", "1")
PLACES = {
    # where the hidden break goes: (text to replace, its replacement)
    "comment": ('  tag: "hidden"\n', '  tag: "hidden"  # reviewed{sep}      evil: 1\n'),
    "plain": ("      direct: 1\n", "      direct: 1{sep}      evil: 1\n"),
    "after-quoted": ('  tag: "hidden"\n', '  tag: "hidden"{sep}      evil: 1\n'),
    "block-scalar": ('  tag: "hidden"\n', '  tag: "hidden"\n      note: |\n        a{sep}x: 1\n'),
    "key": ('  tag: "hidden"\n', '  tag: "hidden"\n      ev{sep}il: 1\n'),
    "action": (
        '  text: "n=$<inputs.n>"\n',
        '  text: "n=$<inputs.n>"  # end{sep}  - id: 2{sep}    tool: rec{sep}    why: "x"\n',
    ),
}


def hidden(place: str, sep: str) -> str:
    old, new = PLACES[place]
    assert old in BASE
    return BASE.replace(old, new.format(sep=sep), 1)


@pytest.mark.parametrize("sep", list(SEPARATORS))
@pytest.mark.parametrize("place", list(PLACES))
def test_hidden_line_break_is_refused_with_line_and_column(
    tmp_path: Path, place: str, sep: str
) -> None:
    text = hidden(place, SEPARATORS[sep])
    path = tmp_path / "PLAN.yml"
    path.write_bytes(text.encode())
    result = run_cli("validate", "--json", str(path))
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["valid"] is False and report["hash"] is None
    (error,) = report["errors"]
    at = text.index(SEPARATORS[sep])
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    assert error["code"] == "E_YAML_PARSE"
    assert error["line"] == line, "the line a reviewer sees, not the one YAML counts"
    assert f"U+{ord(SEPARATORS[sep]):04X}" in error["message"]
    assert f"column {column}" in error["message"]
    assert "remove it" in error["message"]
    assert run_cli("hash", str(path)).returncode == 1


@pytest.mark.parametrize("sep", ["ls", "ps"])
def test_line_and_paragraph_separators_inside_quotes_stay_text(tmp_path: Path, sep: str) -> None:
    char = SEPARATORS[sep]
    path = tmp_path / "PLAN.yml"
    path.write_bytes(BASE.replace('tag: "hidden"', f'tag: "hid{char}den"').encode())
    assert run_cli("validate", str(path)).returncode == 0
    data = yamlio.read_yaml(path.read_bytes().decode()).data
    assert data["actions"][0]["params"]["tag"] == f"hid{char}den"
    shown = run_cli("show", str(path)).stdout
    assert char not in shown and f"\\u{ord(char):04x}" in shown


@pytest.mark.parametrize("sep", ["nel", "cr"])
def test_separators_the_reader_folds_are_refused_inside_quotes(tmp_path: Path, sep: str) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_bytes(BASE.replace('tag: "hidden"', f'tag: "hid{SEPARATORS[sep]}den"').encode())
    result = run_cli("validate", "--json", str(path))
    error = json.loads(result.stdout)["errors"][0]
    assert (error["code"], error["line"]) == ("E_YAML_PARSE", 14)
    assert "folds it into a space" in error["message"]


def test_a_hidden_key_never_runs_and_other_plans_do(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    for sep in SEPARATORS:
        bench.write(f"hid-{sep}", hidden("after-quoted", SEPARATORS[sep]))
    bench.write("honest", plan("honest", "1"))
    commit_all(bench.repo, "plans")
    bench.run_once()
    bench.approve_all()
    bench.run_once()
    calls = bench.calls()
    assert list(calls) == ["honest"]
    assert "evil" not in json.dumps(calls)
    started = [s for s in git(bench.repo, "log", "--format=%s").splitlines() if "start" in s]
    assert started == ["plangate: start plans/honest"]


def test_escaped_separators_in_double_quotes_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_text(BASE.replace('tag: "hidden"', 'tag: "a\\u2028b\\x85c\\rd"'))
    assert run_cli("validate", str(path)).returncode == 0
    data = yamlio.read_yaml(path.read_text()).data
    assert data["actions"][0]["params"]["tag"] == "a\u2028b\x85c\rd"


def test_hash_of_a_crlf_file_equals_its_lf_twin(tmp_path: Path) -> None:
    lf, crlf = tmp_path / "lf.yml", tmp_path / "crlf.yml"
    lf.write_bytes(BASE.encode())
    crlf.write_bytes(BASE.replace("\n", "\r\n").encode())
    hashes = [run_cli("hash", str(p)).stdout for p in (lf, crlf)]
    assert hashes[0] == hashes[1] and hashes[0].startswith("sha256:")
