"""Round 55, self-approval: an approver's plan MOVED (her folder removed in the same commit)
with a one-line edit, written in another spelling of the same YAML (CRLF line ends, another
indent, flow style, JSON, trailing blanks), is no longer hers.

docs/approvals.md, "Who changed the content": "A plan moved with an edit in the same commit
keeps its source's writers when git would call it a move (a file arriving with the same
bytes, or at least half the same lines)". Both tests read bytes: a respelling that changes
every line (two more blanks of indent, quotes on every key, trailing blanks, or JSON) leaves
no line the same and git's score near 0, while the hashed content differs from hers by one
param. Round 51 (`test_round51_approve_respell.py`) showed a respelling with the SAME hash
is caught by hash; with an edit in the same commit the hash is new, and only the move rule
could see her text. Unlike round 17's `cp-edit` (a copy of a plan left in place, accepted
for its cost) the source is gone in the same commit: the pair is one deleted plan and one
added plan of that commit, the case the move rule is for.

Config: the bench's. Alice writes ``plans/<v>-a/PLAN.yml`` (her plan, tag ``<v>``); the
controller freezes it. One agent commit removes her folder and adds ``plans/<v>/<file>``:
her plan with ``note: "moved"`` added to action 1's params, in the spelling of the variant:

- ``indent``: 4-space indent (sequences at 6); ``quoted``: every key double-quoted;
  ``json``: the same as ``PLAN.json``; ``blanks``: two trailing blanks on every line;
  ``crlf``: CRLF line ends.
- ``plain`` (control): the edit in her own spelling (more than half the lines the same).
- ``crlf-same`` (control): CRLF, no edit (her hash).

Alice approves the new plans; two passes; ``plangate audit --json``.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never ran, the audit lists no run.

Seen: ``indent``, ``quoted``, ``json``, ``blanks`` broke (her approval ran her own text with
one param added; the audit found the run valid). Held: ``crlf`` (line ends are read alike),
``plain`` and ``crlf-same``. By hand: the same plan as ONE flow-style line in PLAN.yml is
never frozen and ``status`` gives no reason (``frozen_hash: null``, no note): it cannot run,
but its author is not told why.

Fixed (2026-11-29): the move rule compares the plans' content, not their lines
(``controller.plan.likeness``): any spelling of her plan with one param added is 0.90 alike,
so the move is found (a ``PLAN.json`` source too: the folder the controller converts it in
takes her writers) and her approval is refused ``E_SELF_APPROVAL``.
"""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, load_yaml, plan_text
from ruamel.yaml import YAML
from test_round2_execution_kit import shared

SPELLED = ["indent", "quoted", "json", "blanks"]
HELD = ["crlf"]
VIDS = [*SPELLED, *HELD, "plain", "crlf-same"]
BROKEN: dict[str, object] = {}
EDIT = '      note: "moved"\n'


def _theirs(v: str) -> tuple[str, str]:
    mine = plan_text(v)
    edited = (
        mine
        if v == "crlf-same"
        else mine.replace(f'      tag: "{v}"\n', f'      tag: "{v}"\n' + EDIT)
    )
    if v in ("crlf", "crlf-same"):
        return "PLAN.yml", edited.replace("\n", "\r\n")
    if v == "indent":
        out = io.StringIO()
        yaml = YAML()
        yaml.indent(mapping=4, sequence=6, offset=4)
        yaml.dump(load_yaml(edited), out)
        return "PLAN.yml", out.getvalue()
    if v == "quoted":
        return "PLAN.yml", re.sub(r"(?m)^(\s*(?:- )?)([a-z_]+):", r'\1"\2":', edited)
    if v == "json":
        return "PLAN.json", json.dumps(load_yaml(edited), indent=1) + "\n"
    if v == "blanks":
        return "PLAN.yml", "".join(line + "  \n" for line in edited.splitlines())
    return "PLAN.yml", edited


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(f"{v}-a", plan_text(v))
    lab.commit("alice drafts her plans", ALICE)
    lab.run()
    for v in VIDS:
        lab.git("rm", "-q", "-r", f"plans/{v}-a")
        name, text = _theirs(v)
        lab.write(v, text, name)
        lab.commit(f"agent: move {v}", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        path = lab.repo / "plans" / v / "PLAN.yml"
        data = path.read_bytes()
        assert b"pending_approval" in data, (v, data[:300])
        path.write_bytes(data.replace(b"pending_approval", b"approved", 1))
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-respellmove", _build)


def test_every_new_plan_was_frozen_and_approved(lab: Lab) -> None:
    for v in VIDS:
        text = lab.codes(v)
        assert "approval request" in text or "E_SELF_APPROVAL" in text, (v, text)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_moved_plan_stays_hers(lab: Lab, vid: str) -> None:
    if not lab.status()[f"plans/{vid}"].get("frozen_hash"):
        raise BenchError(f"{vid} was never frozen: {lab.codes(vid)[:400]}")
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)
    runs = [
        e
        for e in lab.report.get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{vid}"
    ]
    assert runs == [], runs
