"""Property: the hash is what runs (SPEC §2, §5, §15 "values that hash alike reach tools alike").

Attack: write a value in a form that hashes like the reviewed one (JCS canonicalises 1.0 to
1) but reaches the tool differently (``--replicas=1.0``, ``{"n": 1.0}``), or a value the hash
cannot represent faithfully (an overflow, a timestamp, a tag). Defence: either the two forms
hash differently, or the tool gets the very same bytes; values JSON cannot hold are refused.

One repo: for every form a variant plan and a canonical twin (shared by the forms of one
value), each in three placements (a
direct param, a whole ``$<inputs.n>`` reference, a reference inside a string); the agent
submits them all, the controller freezes, Alice approves them all in one commit, one pass
runs them. The recording tool gets ``n`` both as an argv element and in the stdin JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared

# (variant form, canonical form): YAML 1.2 reads both as the same JSON number.
PAIRS = [
    ("1.0", "1"),
    ("1e2", "100"),
    ("1E2", "100"),
    ("100.0", "100"),
    ("1.0e+2", "100"),
    ("-0", "0"),
    ("-0.0", "0"),
    ("0.0", "0"),
    ("+1", "1"),
    ("0x10", "16"),
    ("0o10", "8"),
    ("1.50", "1.5"),
    (".5", "0.5"),
    ("5e-1", "0.5"),
    ("010", "10"),
    ("0.1e1", "1"),
    ("9007199254740991.0", "9007199254740991"),
    ("0b11", "3"),
    ("1_000", "1000"),
    ("0x1F", "31"),
    ("1e0", "1"),
    ("-0x1", "-1"),
    ("0o17", "15"),
    ("!!float 1", "1"),
    ("!!int 0x1", "1"),
]
PLACEMENTS = ["direct", "input", "embedded"]

# Values JSON (and so the hash) cannot hold faithfully: refused before anything runs.
UNREPRESENTABLE = [
    "1E400",
    "-1E400",
    ".inf",
    "-.inf",
    ".nan",
    "9007199254740993",
    "-9007199254740993",
    "12345678901234567890",
    "1.0000000000000001",  # round 22: no double holds it as written (it would run as 1)
    "0x20000000000001",
    "2026-11-22",
    "2026-11-22T10:00:00Z",
    "!!binary aGVsbG8=",
    "!!set {a}",
    "!foo bar",
]
REFUSAL_CODES = {"E_SCHEMA_INVALID", "E_YAML_PARSE"}


def _plan(tag: str, form: str, placement: str) -> str:
    inputs = f"inputs:\n  n: {form}\n" if placement != "direct" else ""
    value = {"direct": form, "input": '"$<inputs.n>"', "embedded": '"v=$<inputs.n>"'}[placement]
    return (
        "plan:\n"
        f'  name: "{tag}"\n'
        '  task: "number forms"\n'
        "  status: pending_approval\n"
        f"{inputs}"
        "available_tools:\n"
        "  - name: recn\n"
        "actions:\n"
        "  - id: 1\n"
        "    tool: recn\n"
        '    why: "pass n to a tool"\n'
        "    params:\n"
        f'      tag: "{tag}"\n'
        f"      n: {value}\n"
    )


def _twin(canonical: str, placement: str) -> str:
    """One canonical twin per (value, placement), shared by every form of that value."""
    return f"c{sorted({c for _, c in PAIRS}).index(canonical)}-{placement}"


def _slugs() -> dict[str, tuple[str, str]]:
    """slug -> (form, placement) for every plan in the repo."""
    out: dict[str, tuple[str, str]] = {}
    for i, (form, canonical) in enumerate(PAIRS):
        for placement in PLACEMENTS:
            out[f"v{i}-{placement}"] = (form, placement)
            out[_twin(canonical, placement)] = (canonical, placement)
    for i, form in enumerate(UNREPRESENTABLE):
        for placement in ("direct", "input"):
            out[f"u{i}-{placement}"] = (form, placement)
    return out


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    recn = json.dumps([sys.executable, "-I", "-S", str(lab.recorder), "{tag}", "{n}"])
    lab.write_config(
        tools=f"recn: {{kind: exec, argv: {recn}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for slug, (form, placement) in _slugs().items():
        lab.write(slug, _plan(slug, form, placement))
    lab.commit("plans with numbers", AGENT)
    lab.run()  # freeze (or mark invalid)
    for slug in _slugs():
        lab.set_status(slug, "approved")
    lab.commit("approve them all", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-hashrun", _build_lab)


def _validate_all(lab: Lab, paths: list[Path]) -> dict[str, dict[str, Any]]:
    """``plangate validate --json`` over many files in one call: path -> report."""
    result = lab.cli("validate", "--json", "--config", str(lab.config), *map(str, paths))
    assert "Traceback" not in result.stderr, result.stderr
    reports: dict[str, dict[str, Any]] = {}
    decoder = json.JSONDecoder()
    text, pos = result.stdout, 0
    while True:
        while pos < len(text) and text[pos] in " \n\r\t[],":
            pos += 1
        if pos >= len(text):
            break
        obj, pos = decoder.raw_decode(text, pos)
        reports[obj["path"]] = obj
    return reports


@pytest.fixture(scope="module")
def hashes(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Per variant: its validation report, and the report of the same plan (same tag) with
    the canonical form instead: equal hashes mean an approval of one covers the other."""
    folder = tmp_path_factory.mktemp("forms")
    paths: list[Path] = []
    for slug, (form, placement) in _slugs().items():
        own = folder / f"{slug}.yml"
        own.write_text(_plan(slug, form, placement))
        paths.append(own)
        if slug.startswith("v"):
            twin = folder / f"{slug}.canonical.yml"
            twin.write_text(_plan(slug, PAIRS[int(slug[1:].split("-")[0])][1], placement))
            paths.append(twin)
    reports = _validate_all(lab, paths)
    return {Path(p).name.removesuffix(".yml"): r for p, r in reports.items()}


def _frozen(lab: Lab, slug: str) -> str | None:
    try:
        data = lab.plan(slug)
    except Exception:  # not even YAML: nothing could have frozen it
        return None
    frozen = data.get("frozen") or {}
    return frozen.get("hash")


def _seen(lab: Lab, slug: str) -> list[tuple[str, str]]:
    """What the tool got: (argv text of n, stdin with the tag replaced), per call."""
    return [(call["argv"][1], call["stdin"].replace(slug, "TAG")) for call in lab.calls(slug)]


# Every form reaches the tool as the canonical number since the reader yields it (issue 11,
# one canonical value tree): no variant is broken.
_BROKEN: dict[str, Any] = {}
_IDS = [f"{pair[0]}-{placement}" for pair in PAIRS for placement in PLACEMENTS]
_VALUES = [(i, pair, placement) for i, pair in enumerate(PAIRS) for placement in PLACEMENTS]


@pytest.mark.parametrize(("index", "pair", "placement"), cases(_IDS, _VALUES, _BROKEN))
def test_forms_that_hash_alike_reach_the_tool_alike(
    lab: Lab, hashes: dict[str, Any], index: int, pair: tuple[str, str], placement: str
) -> None:
    variant, canonical = f"v{index}-{placement}", _twin(pair[1], placement)
    # The canonical twin always runs, exactly once: the bench itself works.
    assert len(lab.calls(canonical)) == 1, lab.codes(canonical)
    own, twin = hashes[variant], hashes[f"{variant}.canonical"]
    if not own["valid"]:
        # Refused outright: never frozen, never ran.
        assert {e["code"] for e in own["errors"]} & REFUSAL_CODES, own
        assert lab.calls(variant) == []
        assert not lab.started(variant)
        return
    assert own["hash"] == _frozen(lab, variant)
    if own["hash"] != twin["hash"]:
        return  # different hash: an approval of one never covers the other
    assert len(lab.calls(variant)) == 1
    assert _seen(lab, variant) == _seen(lab, canonical), (
        f"{pair[0]!r} and {pair[1]!r} hash alike but reached the tool differently"
    )


@pytest.mark.parametrize("placement", ["direct", "input"])
@pytest.mark.parametrize(("index", "form"), list(enumerate(UNREPRESENTABLE)), ids=UNREPRESENTABLE)
def test_values_json_cannot_hold_are_refused(
    lab: Lab, hashes: dict[str, Any], index: int, form: str, placement: str
) -> None:
    slug = f"u{index}-{placement}"
    report = hashes[slug]
    assert report["valid"] is False
    codes = {e["code"] for e in report["errors"]}
    assert codes & REFUSAL_CODES, report
    # Never frozen, and the approval ran nothing.
    assert not _frozen(lab, slug)
    if "E_SCHEMA_INVALID" in codes:  # parsed, so the controller could say why in the file
        data = lab.plan(slug)
        assert {e["code"] for e in data["validation"]["errors"]} & REFUSAL_CODES
    assert lab.calls(slug) == []
    assert not lab.started(slug)


def test_the_hash_command_agrees_with_the_freeze(lab: Lab, tmp_path: Path) -> None:
    """`plangate hash` on a fresh copy of the approved file gives the frozen hash (anyone can
    recompute it from the file alone)."""
    slug = "v0-direct"
    copy = tmp_path / "PLAN.yml"
    copy.write_text(lab.git("show", f"HEAD:plans/{slug}/PLAN.yml"))
    result = lab.cli("hash", str(copy))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == _frozen(lab, slug)
