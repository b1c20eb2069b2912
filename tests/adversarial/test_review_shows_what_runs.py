"""Property: what a reviewer sees is what runs (SPEC §1, §15).

Attacks: (1) a key hidden behind a character that line-based review (git diff, a pull
request view) does not break lines on but YAML does (U+0085, U+2028, U+2029, a lone CR), so
the reviewer sees a comment or one value and the tool gets an extra parameter or a whole
extra action; (2) two plan files in one folder, so ``show`` displays one and the controller
runs the other; (3) bidi and zero-width characters that make ``show`` display text other
than what is there. Defences: refused outside quoted strings; E_PLAN_AMBIGUOUS; shown escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

SEPARATORS = {"nel": "\x85", "ls": "\u2028", "ps": "\u2029", "cr": "\r"}


def _hidden(tag: str, where: str, sep: str) -> str:
    """A plan whose reviewer sees one line where YAML reads two."""
    base = plan_text(tag)
    quoted = f'      tag: "{tag}"\n'
    line = {
        "comment": f'      tag: "{tag}"  # reviewed{sep}      evil: 1\n',
        "plain": f'      tag: "{tag}"\n      note: hello{sep}      evil: 1\n',
        "quoted": f'      tag: "{tag}"{sep}      evil: 1\n',
        "action": f'      tag: "{tag}"  # end{sep}  - id: 2{sep}    tool: rec{sep}'
        f'    why: "hidden"{sep}    params: {{tag: "{tag}-hidden"}}\n',
    }[where]
    assert quoted in base
    return base.replace(quoted, line)


HIDDEN = [
    (where, name) for where in ("comment", "plain", "quoted", "action") for name in SEPARATORS
]
HIDDEN_IDS = [f"{where}-{name}" for where, name in HIDDEN]
# Refused since issue 11 (E_YAML_PARSE), the lone-CR variants included.
HIDDEN_BROKEN: dict[str, Any] = {}

AMBIGUOUS = {
    # variant: (PLAN.yml status, PLAN.yaml status)
    "both-pending": ("pending_approval", "pending_approval"),
    "yaml-approved-at-birth": ("pending_approval", "approved"),
    "yml-approved-at-birth": ("approved", "pending_approval"),
    "both-approved-at-birth": ("approved", "approved"),
}

INVISIBLE = {
    "rlo": "\u202e",
    "lro": "\u202d",
    "rle": "\u202b",
    "lri": "\u2066",
    "rli": "\u2067",
    "fsi": "\u2068",
    "pdi": "\u2069",
    "zwsp": "\u200b",
    "zwnj": "\u200c",
    "zwj": "\u200d",
    "bom": "\ufeff",
    "lrm": "\u200e",
    "rlm": "\u200f",
    "alm": "\u061c",
    "word-joiner": "\u2060",
}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    for (where, name), vid in zip(HIDDEN, HIDDEN_IDS, strict=True):
        lab.write(f"hid-{vid}", _hidden(f"hid-{vid}", where, SEPARATORS[name]))
    for vid, (yml, yaml) in AMBIGUOUS.items():
        lab.write(f"amb-{vid}", plan_text(f"amb-{vid}-yml", status=yml), "PLAN.yml")
        lab.write(f"amb-{vid}", plan_text(f"amb-{vid}-yaml", status=yaml), "PLAN.yaml")
    lab.write("control", plan_text("control"))
    lab.commit("plans", AGENT)
    lab.run()
    for vid in HIDDEN_IDS:
        lab.set_status(f"hid-{vid}", "approved")
    lab.set_status("control", "approved")
    lab.set_status("amb-both-pending", "approved", "PLAN.yaml")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-review", _build_lab)


def test_control_plan_ran(lab: Lab) -> None:
    """The bench works: an honest plan in the same repo, approved alongside, ran once."""
    assert len(lab.calls("control")) == 1


@pytest.mark.parametrize("vid", cases(HIDDEN_IDS, HIDDEN_IDS, HIDDEN_BROKEN))
def test_hidden_line_break_never_smuggles_content(lab: Lab, vid: str) -> None:
    tag = f"hid-{vid}"
    path = lab.repo / "plans" / tag / "PLAN.yml"
    report = json.loads(
        lab.cli("validate", "--json", "--config", str(lab.config), str(path)).stdout
    )
    assert report["valid"] is False, "a hidden line break outside quotes must be refused"
    assert all(e["code"].startswith("E_") for e in report["errors"])
    for call in lab.calls(tag):
        assert "evil" not in json.loads(call["stdin"]), "the hidden key reached the tool"
    assert lab.calls(f"{tag}-hidden") == [], "the hidden action ran"
    assert not lab.started(tag)


@pytest.mark.parametrize("vid", list(AMBIGUOUS))
def test_two_plan_files_in_one_folder_run_neither(lab: Lab, vid: str) -> None:
    slug = f"amb-{vid}"
    assert lab.calls(f"{slug}-yml") == []
    assert lab.calls(f"{slug}-yaml") == []
    assert not lab.started(slug)


@pytest.mark.parametrize("vid", list(AMBIGUOUS))
def test_two_plan_files_in_one_folder_are_reported(lab: Lab, vid: str) -> None:
    assert "E_PLAN_AMBIGUOUS" in json.dumps(lab.status().get(f"plans/amb-{vid}", {}))


@pytest.mark.parametrize("command", ["show", "validate", "hash"])
def test_reviewer_commands_refuse_an_ambiguous_folder(lab: Lab, command: str) -> None:
    folder = lab.repo / "plans" / "amb-both-pending"
    result = lab.cli(command, "--config", str(lab.config), str(folder))
    assert result.returncode != 0
    assert "E_PLAN_AMBIGUOUS" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def shown(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``plangate show`` of one plan carrying every invisible character in every field."""
    marks = "".join(INVISIBLE.values())
    text = (
        "plan:\n"
        f'  name: "name{marks}"\n'
        f'  task: "task{marks}"\n'
        "  status: pending_approval\n"
        f'inputs: {{in: "v{marks}"}}\n'  # input keys are plain names (round 56)
        "available_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n"
        f'    why: "why{marks}"\n'
        f'    params: {{tag: "t{marks}", "k{marks}": "v{marks}"}}\n'
    )
    path = tmp_path_factory.mktemp("invisible") / "PLAN.yml"  # this worker's (the lab is shared)
    path.write_text(text, encoding="utf-8")
    result = lab.cli("show", "--config", str(lab.config), str(path))
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("name", list(INVISIBLE))
def test_show_escapes_bidi_and_zero_width(shown: str, name: str) -> None:
    char = INVISIBLE[name]
    assert char not in shown, f"show printed a raw {name} character"
    assert f"\\u{ord(char):04x}" in shown.lower() or f"<u+{ord(char):04x}>" in shown.lower()


# Keys that look different in a diff but are one key to YAML, and YAML that expands what the
# reviewer reads: all refused E_YAML_PARSE (a duplicate would let the last one win unseen).
DUPLICATES = {
    "plain-twice": "n: 1\nn: 2",
    "quoted-and-plain": '"n": 1\nn: 2',
    "single-quoted": "n: 1\n'n': 2",
    "escaped-key": 'n: 1\n"\\u006e": 2',
    "explicit-key": "n: 1\n? n\n: 2",
    "flow-mapping": "m: {n: 1, n: 2}",
    "anchor-alias": "a: &x 1\nb: *x",
    "merge-key": "base: &b {n: 1}\nmore:\n  <<: *b\n  n: 2",
    "tag-on-key": "!!str n: 1\nn: 2",
}


@pytest.fixture(scope="module")
def duplicate_reports(
    lab: Lab, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, object]]:
    paths = []
    dups = tmp_path_factory.mktemp("dups")  # this worker's (the lab is shared)
    for vid, params in DUPLICATES.items():
        path = dups / vid / "PLAN.yml"
        path.parent.mkdir(parents=True)
        path.write_text(plan_text(vid, params=params + "\n"), encoding="utf-8")
        paths.append(str(path))
    result = lab.cli("validate", "--json", "--config", str(lab.config), *paths)
    reports = {}
    decoder = json.JSONDecoder()
    text, pos = result.stdout, 0
    while pos < len(text):
        while pos < len(text) and text[pos] in " \n\r\t[],":
            pos += 1
        if pos >= len(text):
            break
        obj, pos = decoder.raw_decode(text, pos)
        reports[obj["path"].split("/")[-2]] = obj
    return reports


@pytest.mark.parametrize("vid", list(DUPLICATES))
def test_one_key_written_twice_or_expanded_is_refused(
    duplicate_reports: dict[str, dict[str, object]], vid: str
) -> None:
    report = duplicate_reports[vid]
    assert report["valid"] is False, report
    text = json.dumps(report["errors"])
    assert "E_YAML_PARSE" in text, report
    why = (
        "anchor"
        if vid.startswith(("anchor", "merge"))
        else "tag"
        if vid == "tag-on-key"
        else "duplicate"
    )
    assert why in text, report
