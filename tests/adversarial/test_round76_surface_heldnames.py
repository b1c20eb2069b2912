"""Round 76, agent-facing surfaces: round 75's names held for themselves (a folder whose NAME
the controller holds ``E_UNSAFE_PATH``: the one folder verdict first in every CLI path and
reader) tried with the other held names docs/plan-format.md lists and a few it does not:
bidi controls, U+FEFF, non-plain blanks, zero-width format characters, line breaks, a tab,
an over-long name, blank-looking letters (Hangul fillers, the braille blank), at the plan's
folder, one level up, and at a source's folder; honest non-ASCII names as controls.

Lab (one, module scope; two ``run --once`` passes):
- pass 1: the agent commits, pending, one plan per name (``rec h-<id>``) at
  ``plans/<name>/PLAN.yml`` (``HELD``), at ``plans/<name>/x/PLAN.yml`` (``UP``, the name one
  level up), a source ``plans/<name>/PLAN.json`` (``SRC``), and the controls (``CONTROLS``:
  ``ok``, ``a..b``, ``na<U+00EF>ve``, ``<CJK>``);
- pass 2: Alice approves every plan file (a status edit) and the controls;
- then Alice, in her working tree, runs ``plangate reject -m`` on each held folder (what
  she was shown), and on a copy of the tree ``plangate freeze``; the lab resets main.
Readers: the ``status --json`` row, ``show --json``, ``validate``, ``hash``, ``freeze``,
``reject``, MCP ``log``, the ``rec`` calls, the fresh-clone audit.
Variants:
- ``<id>`` (21) for each held name (``rlo``, ``lri``, ``bom``, ``nbsp``, ``ideo``, ``wj``,
  ``shy``, ``mvs``, ``ls``, ``nel``, ``tab``, ``nl``; one level up ``up-{nbsp,rlo,tab}``;
  blank-looking letters ``hf`` U+3164, ``hfw`` U+FFA0, ``hcf`` U+115F, ``brl`` U+2800; sources
  ``src-{nbsp,rlo}``, also ``convert``): the row
  holds E_UNSAFE_PATH (docs/plan-format.md: "a control character, any kind of line break
  (LF, CR, VT, FF, NEL, U+2028, U+2029), a bidi/zero-width character, a blank other than
  the plain space (U+00A0, U+3000, ...) ..."), never runs, and every
  CLI path and MCP says so: no hash, no document, nothing written or committed;
- ``{ok,dots,naive,cjk}`` (4, controls): they run once, approved by alice, MCP agrees;
- the fresh-clone audit agrees with the rows (1).

Seen (round 76): nothing broke here. Held: every name above is held E_UNSAFE_PATH by the row
("a control, line-break or invisible character ...; rename the folder"), at the plan's
folder, one level up and at a source's folder, including characters the doc does not list
(U+2060, U+00AD, U+180E, U+0085, the Hangul fillers U+3164/U+FFA0/U+115F, U+2800);
``show``/``validate``/``hash``/``freeze``/``reject``/``convert`` and MCP ``log`` each answer
E_UNSAFE_PATH, write nothing and commit nothing; the honest ``a..b``, ``na<U+00EF>ve``,
``<CJK>`` and ``ok`` ran once; the audit agrees. Not tried: names over 255 bytes (the lab's
file system refuses them in the working tree).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from mcpkit import PLANGATE, session
from test_round2_execution_kit import shared

HELD: dict[str, str] = {
    "rlo": "rl\u202eo",  # bidi override
    "lri": "lr\u2066i",  # bidi isolate
    "bom": "\ufeffbom",  # U+FEFF first
    "nbsp": "nb\u00a0sp",  # a blank other than the plain space
    "ideo": "id\u3000sp",
    "wj": "w\u2060j",  # word joiner: zero-width
    "shy": "s\u00adhy",  # soft hyphen: invisible
    "mvs": "m\u180evs",  # Mongolian vowel separator: zero-width
    "ls": "l\u2028s",  # line separator
    "nel": "n\u0085el",
    "tab": "ta\tb",
    "nl": "n\nl",
}
UP = {"up-nbsp": "te\u00a0am/x", "up-rlo": "u\u202ep/x", "up-tab": "u\tp/x"}
SRC = {"src-nbsp": "c\u00a0src", "src-rlo": "c\u202esrc"}
CONTROLS = {"ok": "ok", "dots": "a..b", "naive": "na\u00efve", "cjk": "\u65e5\u672c"}
# letters and symbols that render as a blank (Hangul fillers, the braille blank), at a name's
# end: "deploy<U+3164>" reads as "deploy " in a commit subject or on the page
LOOK = {"hf": "hf\u3164", "hfw": "hfw\uffa0", "hcf": "hcf\u115f", "brl": "brl\u2800"}
ALL = {**HELD, **UP, **LOOK}


def _as(lab: Lab, who: tuple[str, str], *args: str, cwd: Path | None = None) -> str:
    env = lab.env(who)
    env["REC_LOG"] = str(lab.log)
    done = subprocess.run(
        [PLANGATE, *args], cwd=cwd or lab.repo, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    return f"{done.returncode} {done.stdout}{done.stderr}"


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    for tag, name in {**ALL, **CONTROLS}.items():
        lab.write(name, plan_text(tag))
    for tag, name in SRC.items():
        lab.write(name, json.dumps(dict(load_yaml(plan_text(tag))), indent=1), "PLAN.json")
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for name in {**ALL, **CONTROLS}.values():
        lab.set_status(name, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    got: dict[str, Any] = {"cli": {}}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in [*ALL, *SRC, *CONTROLS]}
    tip = lab.head()
    copy = root / "fz"
    shutil.copytree(lab.repo, copy, symlinks=True)
    for tag, name in {**ALL, **SRC}.items():
        where = f"plans/{name}"
        for verb in ("show", "validate", "hash"):
            got["cli"][f"{tag}:{verb}"] = _as(lab, ALICE, verb, "--config", cfg, where)
        text = _as(lab, ALICE, "freeze", "--config", cfg, where, cwd=copy)
        changed = subprocess.run(
            ["git", "status", "--porcelain", "-z"], cwd=copy, capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip
        got["cli"][f"{tag}:freeze"] = f"{text}\nchanged: {changed}"
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=copy, check=True)
        before = lab.head()
        text = _as(lab, ALICE, "reject", "--config", cfg, "-m", "not this one", where)
        made = lab.git("log", "--format=%an %s", f"{before}..HEAD").strip()
        dirty = lab.git("status", "--porcelain", "-z").strip()
        lab.git("reset", "-q", "--hard", before)
        got["cli"][f"{tag}:reject"] = f"{text}\ndirty: {dirty}\ncommits: {made}"
    for tag, name in SRC.items():
        src = str(lab.repo / "plans" / name / "PLAN.json")
        got["cli"][f"{tag}:convert"] = _as(lab, ALICE, "convert", "--config", cfg, src)
    names = {**ALL, **SRC, **CONTROLS}
    replies = session(lab, [("log", {"path": f"plans/{n}"}) for n in names.values()])[0]
    for tag, reply in zip(names, replies, strict=True):
        got["cli"][f"{tag}:mcp-log"] = json.dumps(reply, ensure_ascii=False)
    lab.git("reset", "-q", "--hard", tip)
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-surface-heldnames", _build)


HIDS = [*ALL, *SRC]
NAMES = {**ALL, **SRC}
VERBS = ("show", "validate", "hash", "freeze", "reject", "mcp-log")


@pytest.mark.parametrize("vid", cases(HIDS, HIDS, {}))
def test_a_folder_held_by_its_name_is_held_everywhere(lab: Lab, vid: str) -> None:
    """A folder (or a folder one level up, or a source's folder) whose name holds a bidi
    control, U+FEFF, a non-plain blank, a zero-width format character, a line break, a tab or
    a letter that renders blank: the row holds it E_UNSAFE_PATH (docs/plan-format.md), Alice's
    approval never runs it, and ``show``, ``validate``, ``hash``, ``freeze`` (on a copy),
    ``reject -m`` (and ``convert`` of a source) and MCP ``log`` say E_UNSAFE_PATH: no hash,
    no document, nothing written, no commit."""
    got = lab.got  # type: ignore[attr-defined]
    name = NAMES[vid]
    row = got["rows"].get(f"plans/{name}")
    assert row and row.get("held") == "E_UNSAFE_PATH", sorted(got["rows"])
    assert row["status"] in (None, "unreadable"), row
    assert got["calls"][vid] == 0, got["calls"]
    assert not [s for s in got["subjects"] if s.startswith("plangate") and name in s]
    for verb in [*VERBS, *(("convert",) if vid in SRC else ())]:
        text = got["cli"][f"{vid}:{verb}"]
        answer = text.split("\nchanged: ")[0].split("\ndirty: ")[0]
        assert "E_UNSAFE_PATH" in answer, (verb, answer[:600])
        assert "sha256:" not in answer and f"attack variant {vid}" not in answer, (verb, answer)
        if verb == "freeze":
            assert not text.split("\nchanged: ")[1].strip(), (verb, text[-400:])
        if verb == "reject":
            tail = text.split("\ndirty: ")[1]
            assert tail.strip() == "commits:", (verb, tail)


@pytest.mark.parametrize("vid", cases(list(CONTROLS), list(CONTROLS), {}))
def test_honest_names_run(lab: Lab, vid: str) -> None:
    """Controls: ``plans/ok``, ``plans/a..b``, ``plans/na<U+00EF>ve`` (NFC), ``plans/<CJK>``
    run once on Alice's approval; MCP ``log`` answers their completed record."""
    got = lab.got  # type: ignore[attr-defined]
    name = CONTROLS[vid]
    row = got["rows"][f"plans/{name}"]
    assert got["calls"][vid] == 1 and row["status"] == "completed", (got["calls"], row)
    assert row["approver"] == ALICE[1], row
    text = got["cli"][f"{vid}:mcp-log"]
    assert "completed" in text and "E_UNSAFE_PATH" not in text, text[:600]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert got["audit"]["runs"] == len(completed) == len(CONTROLS), got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r76hn-", dir="/tmp/atk76b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
