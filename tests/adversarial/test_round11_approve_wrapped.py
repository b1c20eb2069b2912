# ruff: noqa: E501  (attack steps read best on one line)
"""Round 11, who may make a plan run: plan text Alice committed under the plans folder in a
file that is *not quite* a plan, unwrapped by the agent.

Round 7's fix: "a non-plan file under the plans folder that reads as a plan, or converts as a
source, adds its writers to that content". Here Alice's file holds the whole plan but does
not read as one as it stands; the agent, in its own commit, deletes it and writes
``PLAN.yml`` holding exactly her plan (the same hashed content); the controller freezes it;
Alice approves alone.

- ``md-two-fences``: ``notes.md``: prose and two fenced YAML blocks (her plan, an
  alternative); a model's reply with *one* block would be a source, two are not.
- ``commented``: ``draft.yml``: every line of her plan commented out (``# ``).
- ``wrapped``: ``drafts.yml``: her plan under a key ``alice_draft:``.
- ``listed``: ``drafts.yml``: her plan as the one item of a YAML list.
- ``extra-key``: ``draft.yml``: her plan plus an unknown top-level key ``notes:``.
- ``bad-status``: ``draft.yml``: her plan with ``status: ready`` (no status; the status is
  not hashed).
- ``json-comma``: ``draft.json``: her plan as JSON with a trailing comma.
- ``patch``: ``plan.patch``: a ``git diff`` adding ``PLAN.yml``; the agent ``git apply``s it.
- ``md-one-fence``: ``notes.md`` with one fenced block (a model's reply, but not named
  ``PLAN.md``).
- ``json-comment``: ``draft.json`` with a ``//`` comment line.
- what plangate's strict reader refuses: ``anchor`` (``&n`` / ``*n``), ``str-tag``
  (``!!str``), ``nel-comment`` (a U+2028 in a comment), ``utf16`` (``draft.yml`` in UTF-16
  with a BOM, which YAML itself allows).

Defence: ``E_SELF_APPROVAL``, nothing runs. Results (round 11): **broke** (13, strict xfails):
every wrapping but ``bad-status`` runs on Alice's lone approval (``status`` shows her as the
approver), and a fresh clone's audit calls the approvals valid. Held: ``bad-status`` (a
plan whose only fault is its status line is hers: the status is not hashed). Control: ``plain`` (the agent's own text, Alice
approves) runs once; ``draft-same`` (``draft.yml`` renamed, round 5) is ``E_SELF_APPROVAL``.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, load_yaml, plan_text
from test_round2_approval_authors import shared_lab

VIDS = [
    "md-two-fences",
    "md-one-fence",
    "commented",
    "wrapped",
    "listed",
    "extra-key",
    "bad-status",
    "json-comma",
    "json-comment",
    "patch",
    "anchor",
    "str-tag",
    "nel-comment",
    "utf16",
]


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 11: {what}")


_WHY = (
    "plan text Alice committed under the plans folder as {how} (no plan as it stands, no"
    " source) is not counted as hers once the agent unwraps it into PLAN.yml with the same"
    " hashed content: she approves alone and it runs"
)
_HOW = {
    "md-two-fences": "notes.md with two fenced YAML blocks",
    "commented": "draft.yml with every line commented out",
    "wrapped": "drafts.yml with the plan under one key",
    "listed": "drafts.yml with the plan as a one-item list",
    "extra-key": "draft.yml with an extra unknown top-level key",
    "json-comma": "draft.json with a trailing comma",
    "patch": "plan.patch (a git diff adding PLAN.yml), applied by the agent",
    "md-one-fence": "notes.md with one fenced YAML block (not named PLAN.md)",
    "json-comment": "draft.json with a // comment line",
    "anchor": "draft.yml using an anchor and an alias (refused by the strict reader)",
    "str-tag": "draft.yml using an explicit !!str tag (refused by the strict reader)",
    "nel-comment": "draft.yml with a U+2028 in a comment (refused by the strict reader)",
    "utf16": "draft.yml in UTF-16 with a BOM (YAML allows it)",
}
#: What broke when found (round 11); fixed since: whoever writes a file in a plan's folder
#: writes that plan (lifecycle._blob_writers, the folder's writers in the author index).
FOUND: dict[str, object] = {k: _xf(_WHY.format(how=h)) for k, h in _HOW.items()}
BROKEN: dict[str, object] = {}


def _alice_file(vid: str, text: str) -> tuple[str, str]:
    """Alice's file (name, content) holding ``text`` (the plan) in the variant's wrapping."""
    if vid == "md-two-fences":
        other = text.replace(f'tag: "{vid}"', f'tag: "{vid}-alt"')
        return "notes.md", f"My plan:\n\n```yaml\n{text}```\n\nOr else:\n\n```yaml\n{other}```\n"
    if vid == "md-one-fence":
        return "notes.md", f"My plan:\n\n```yaml\n{text}```\n"
    if vid == "json-comment":
        return "draft.json", "// Alice's draft\n" + json.dumps(load_yaml(text), indent=2) + "\n"
    if vid == "anchor":  # plangate's strict reader refuses anchors and aliases
        return "draft.yml", text.replace('name: "anchor"', 'name: &n "anchor"').replace(
            'tag: "anchor"', "tag: *n"
        )
    if vid == "str-tag":  # ... and explicit tags
        return "draft.yml", text.replace('tag: "str-tag"', 'tag: !!str "str-tag"')
    if vid == "nel-comment":  # ... and a U+2028 outside quotes
        return "draft.yml", "# Alice\u2028s draft\n" + text
    if vid == "commented":
        return "draft.yml", "".join(f"# {line}\n" for line in text.splitlines())
    if vid == "wrapped":
        return "drafts.yml", "alice_draft:\n" + textwrap.indent(text, "  ")
    if vid == "listed":
        return "drafts.yml", "- " + textwrap.indent(text, "  ")[2:]
    if vid == "extra-key":
        return "draft.yml", text + 'notes: "Alice\'s draft"\n'
    if vid == "bad-status":
        return "draft.yml", text.replace("status: pending_approval", "status: ready")
    if vid == "json-comma":
        body = json.dumps(load_yaml(text), indent=2)
        return "draft.json", body[:-2] + ",\n}\n"
    if vid in ("draft-same", "utf16"):
        return "draft.yml", text
    raise AssertionError(vid)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    texts = {vid: plan_text(vid) for vid in [*VIDS, "draft-same"]}
    for vid in [v for v in texts if v != "patch"]:
        name, body = _alice_file(vid, texts[vid])
        lab.write(vid, body.encode("utf-16") if vid == "utf16" else body, filename=name)
    # patch: Alice's diff adding PLAN.yml, made in a scratch index
    lab.write("patch", texts["patch"])
    lab.git("add", "-N", "plans/patch/PLAN.yml")
    diff = lab.git("diff", "--", "plans/patch/PLAN.yml")
    lab.git("rm", "-q", "--cached", "plans/patch/PLAN.yml")
    (lab.repo / "plans/patch/PLAN.yml").unlink()
    lab.write("patch", diff, filename="plan.patch")
    lab.commit("alice's drafts", ALICE)

    for vid in [v for v in texts if v != "patch"]:
        for f in (lab.repo / "plans" / vid).iterdir():
            f.unlink()
        lab.write(vid, texts[vid])
    (lab.repo / "plans/patch/plan.patch").unlink()
    lab.git("apply", input=diff)
    lab.write("plain", plan_text("plain"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    (lab.root / "frozen.json").write_text(
        json.dumps(
            {v: bool((lab.plan(v).get("frozen") or {}).get("hash")) for v in [*VIDS, "plain"]}
        )
    )
    for vid in [*VIDS, "draft-same", "plain"]:
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-wrapped", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("plain")) == 1, lab.codes("plain")


def test_the_round5_control_holds(lab: Lab) -> None:
    assert lab.calls("draft-same") == [] and lab.refusal("draft-same") == "E_SELF_APPROVAL", (
        lab.codes("draft-same")
    )


def test_the_plans_were_frozen(lab: Lab) -> None:
    frozen = json.loads((lab.root / "frozen.json").read_text())
    assert all(frozen.values()), frozen


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_her_plan_unwrapped_is_still_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)


@pytest.fixture(scope="module")
def audit_valid(lab: Lab, tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    clone = tmp_path_factory.mktemp("clone") / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    result = lab.cli("audit", "--json", cwd=clone)
    report = json.loads(result.stdout)
    return {e["plan"] for e in report["executions"] if e.get("approval_valid")}


def test_a_fresh_clone_audit_agrees(audit_valid: set[str]) -> None:
    """Only the variants that held are checked here (the broken ones are valid to the audit
    too: it agrees with what ran); see test_a_fresh_clone_audit_flags_the_unwrapped_plans."""
    valid = audit_valid
    assert "plans/plain" in valid, sorted(valid)
    assert not valid & {f"plans/{v}" for v in VIDS if v not in BROKEN}, sorted(valid)


def test_a_fresh_clone_audit_flags_the_unwrapped_plans(audit_valid: set[str]) -> None:
    valid = audit_valid
    assert "plans/plain" in valid, sorted(valid)
    assert not valid & {f"plans/{v}" for v in VIDS}, sorted(valid)
