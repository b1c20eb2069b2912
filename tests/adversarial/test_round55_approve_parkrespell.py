"""Round 55, self-approval: an approver's plan parked outside the plan paths, then RESPELLED
in place there with a one-param edit, then moved into a new plan folder.

docs/approvals.md, "Who changed the content" (round 54): "Each edit in place met on the way
back is judged as git judges a rewrite ... When git's best pairing of the new text is that
old version (a rename score of 50 or more, and no source likelier) it is an edit in place;
otherwise the text was written there anew, so it is paired as an add ... and the walk stops
there: whoever wrote the bytes the rewrite replaced wrote nothing of the plan." git scores
bytes: the same mapping written with another indent, quoted keys, trailing blanks or as JSON
shares no line with the old text, so the edit in place is judged a rewrite and her text is
dropped from the trail, though its hashed content differs from hers by one param.

Config: the bench's, one repo per variant. Alice writes ``plans/<v>-a/PLAN.yml`` (tag
``<v>``); the controller freezes it. The agent then, in three commits: ``git mv`` it to
``drafts/<v>.yml`` (a rename git pairs at 100: her bytes parked); rewrites
``drafts/<v>.yml`` in place as her plan with ``note: "moved"`` added to action 1's params,
in the spelling of the variant (``indent``: 4-space indent; ``quoted``: every key double-
quoted; ``blanks``: two trailing blanks on every line; ``json``: JSON text); ``git mv
drafts/<v>.yml plans/<v>/PLAN.yml`` (``PLAN.json`` for ``json``, which the controller
converts). Controls: ``plain`` (the edit in her own spelling), ``indent-same`` and ``json-
same`` (no edit: her hash). Alice approves every new plan; two passes; ``plangate audit
--json``.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never ran, the audit lists no run.

Seen: ``json`` broke (the parked draft rewritten in place as JSON with one param added, then
moved in as ``PLAN.json``: her approval ran her own plan, the audit found the run valid).
Held: ``indent``, ``quoted``, ``blanks`` (the YAML respellings in place keep her on the
trail), the controls ``plain``, ``indent-same``, ``json-same`` (her hash).

Fixed (2026-11-29): the break was the last hop, not the rewrite: parked bytes moved in as
``PLAN.json`` stayed parked at that path and the controller's conversion commit (which
removes the source) let them go. Parked bytes that land as a plan's source now make their
writers authors of that source's bytes, which the conversion counts (``_source_authors``).
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

SPELLED = ["indent", "quoted", "blanks", "json"]
FOUND = ["json"]
VIDS = [*SPELLED, "plain", "indent-same", "json-same"]
BROKEN: dict[str, object] = {}
EDIT = '      note: "moved"\n'


def _respelled(v: str) -> str:
    mine = plan_text(v)
    if v.endswith("-same"):
        edited = mine
    else:
        edited = mine.replace(f'      tag: "{v}"\n', f'      tag: "{v}"\n' + EDIT)
    if v.startswith("indent"):
        out = io.StringIO()
        yaml = YAML()
        yaml.indent(mapping=4, sequence=6, offset=4)
        yaml.dump(load_yaml(edited), out)
        return out.getvalue()
    if v == "quoted":
        return re.sub(r"(?m)^(\s*(?:- )?)([a-z_]+):", r'\1"\2":', edited)
    if v == "blanks":
        return "".join(line + "  \n" for line in edited.splitlines())
    if v.startswith("json"):
        return json.dumps(load_yaml(edited), indent=1) + "\n"
    return edited


def _one(root: Path, v: str) -> dict[str, object]:
    """One variant in a repo of its own (Alice's other drafts would be sources git pairs)."""
    lab = Lab(root / v)
    lab.write(f"{v}-a", plan_text(v))
    lab.commit("alice drafts her plan", ALICE)
    lab.run()
    (lab.repo / "drafts").mkdir()
    lab.git("mv", f"plans/{v}-a/PLAN.yml", f"drafts/{v}.yml")
    lab.commit("agent: park the draft", AGENT)
    (lab.repo / "drafts" / f"{v}.yml").write_text(_respelled(v))
    lab.commit("agent: tidy the draft", AGENT)
    (lab.repo / "plans" / v).mkdir(parents=True)
    name = "PLAN.json" if v.startswith("json") else "PLAN.yml"
    lab.git("mv", f"drafts/{v}.yml", f"plans/{v}/{name}")
    lab.commit("agent: propose the draft", AGENT)
    lab.run()
    time.sleep(1.05)
    path = lab.repo / "plans" / v / "PLAN.yml"
    data = path.read_bytes()
    if b"pending_approval" not in data:
        raise BenchError(f"{v}: no status to approve: {data[:300]!r}")
    path.write_bytes(data.replace(b"pending_approval", b"approved", 1))
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, report = lab.audit()
    return {
        "frozen": lab.status()[f"plans/{v}"].get("frozen_hash"),
        "codes": lab.codes(v),
        "calls": lab.calls(v),
        "runs": [e for e in report.get("executions", []) if e.get("plan") == f"plans/{v}"],
    }


def _build(root: Path) -> Lab:
    lab = Lab(root / "main")
    lab.results = {v: _one(root, v) for v in VIDS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-parkrespell", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_parked_plan_stays_hers(lab: Lab, vid: str) -> None:
    got = lab.results[vid]  # type: ignore[attr-defined]
    if not got["frozen"]:
        raise BenchError(f"{vid} was never frozen: {got['codes'][:400]}")
    assert got["calls"] == [], got["codes"]
    assert "E_SELF_APPROVAL" in got["codes"], got["codes"]
    assert got["runs"] == [], got["runs"]
