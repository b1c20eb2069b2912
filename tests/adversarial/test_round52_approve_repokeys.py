"""Round 52, self-approval through other settings of the shared repository's ``.git/config``
and a committed ``.gitattributes`` that change what git prints or pairs (the rename limit is
``test_round52_approve_repoconfig.py``).

docs/threat-model.md: "The repository's own config (local and worktree scopes, and files they
include) chooses nothing for the controller". A fresh clone has none of ``.git/config``, so
the fresh-clone ``plangate audit`` must agree with the controller.

Config: the bench's. One lab per setting, each playing the same history:

- ``co``: the agent's plan, committed with ``Co-authored-by: Alice <alice@example.com>``.
- ``own``: Alice's own ``draft``, set ``pending_approval`` by the agent.
- ``mv``: Alice's draft ``plans/mva`` moved by the agent with an edit to ``plans/mvb``.
- ``sub``: the agent's ``plans/sub``; Alice commits a draft ``plans/sub/deep/PLAN.yml`` below
  it (round 41: she is a writer of ``plans/sub``).
- ``park``: Alice's draft parked by the agent out of the plans folder, then moved back with
  an edit (round 50).

Then Alice approves ``co``, ``own``, ``mvb``, ``sub``, ``parkb``; two passes; ``git clone``;
``plangate audit --json`` in the clone.

Settings (``git config`` in the watched repository unless said): ``core.commentChar=C`` and
``core.commentString=Co`` (git's trailer parser skips comment lines), ``trailer.separators=#``
(``:`` no longer separates a trailer), ``log.showSignature``, ``format.pretty=fuller`` with
``log.date=relative``/``log.decorate=full``/``log.abbrevCommit``/``core.abbrev=4``,
``log.follow``, ``core.ignorecase``/``core.precomposeunicode``, ``notes.displayRef`` with
``core.notesRef`` and a note ``Co-authored-by: Bob`` on the agent's commit,
``diff.relative``/``diff.context=0``, ``diff.renames=false``, ``diff.renames=copies``; and a
committed ``.gitattributes`` making every file ``binary``, ``-diff -delta``, or
``diff=foo`` with ``diff.foo.binary``.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never runs, the fresh-clone audit lists
no run.

Seen: all held.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SETTINGS: dict[str, tuple[list[tuple[str, str]], str]] = {
    "comment-char": ([("core.commentChar", "C")], ""),
    "comment-string": ([("core.commentString", "Co")], ""),
    "trailer-sep": ([("trailer.separators", "#")], ""),
    "show-signature": ([("log.showSignature", "true")], ""),
    "pretty": (
        [
            ("format.pretty", "fuller"),
            ("log.date", "relative"),
            ("log.decorate", "full"),
            ("log.abbrevCommit", "true"),
            ("core.abbrev", "4"),
        ],
        "",
    ),
    "follow": ([("log.follow", "true"), ("log.showRoot", "false")], ""),
    "ignorecase": ([("core.ignorecase", "true"), ("core.precomposeunicode", "true")], ""),
    "notes": ([("notes.displayRef", "refs/notes/*"), ("core.notesRef", "refs/notes/x")], ""),
    "diff-relative": ([("diff.relative", "true"), ("diff.context", "0")], ""),
    "no-renames": ([("diff.renames", "false"), ("merge.renames", "false")], ""),
    "copies": ([("diff.renames", "copies")], ""),
    "attr-binary": ([], "* binary\n"),
    "attr-nodelta": ([], "* -diff -delta\n"),
    "attr-diffdriver": ([("diff.foo.binary", "true")], "* diff=foo\n"),
}
PLANS = {"co": "co", "own": "own", "mvb": "mv", "sub": "sub", "parkb": "park"}


def _edit(path: Path) -> None:
    text = path.read_text()
    path.write_text(text.replace('task: "attack variant', 'task: "tidied attack variant'))


def _build(root: Path, name: str) -> Lab:
    keys, attrs = SETTINGS[name]
    lab = Lab(root)
    for key, value in keys:
        lab.git("config", key, value)
    if attrs:
        (lab.repo / ".gitattributes").write_text(attrs)
        lab.commit("agent adds attributes", AGENT)
    lab.write("co", plan_text("co"))
    lab.git("add", "-A")
    msg = "agent plan\n\nCo-authored-by: Alice <alice@example.com>"
    lab.git("commit", "-q", "-m", msg, who=AGENT)
    for slug, tag in [("own", "own"), ("mva", "mv"), ("parka", "park")]:
        lab.write(slug, plan_text(tag, status="draft"))
    lab.write("sub", plan_text("sub"))
    lab.commit("alice writes", ALICE)
    lab.write("sub/deep", plan_text("deep", status="draft"))
    lab.commit("alice nests a draft", ALICE)
    (lab.repo / "parked").mkdir()
    lab.git("mv", "plans/parka", "parked/park")
    lab.commit("agent parks", AGENT)
    lab.git("mv", "parked/park", "plans/parkb")
    _edit(lab.repo / "plans/parkb/PLAN.yml")
    lab.git("mv", "plans/mva", "plans/mvb")
    _edit(lab.repo / "plans/mvb/PLAN.yml")
    lab.commit("agent moves", AGENT)
    for slug in ["own", "mvb", "parkb"]:
        lab.set_status(slug, "pending_approval")
    lab.commit("agent submits", AGENT)
    if name == "notes":
        first = lab.git("rev-list", "--max-parents=0", "HEAD").split()[0]
        agent_commit = lab.git("rev-list", "--reverse", "HEAD").split()[1]
        assert agent_commit != first
        note = "Co-authored-by: Bob <bob@ops.example.com>"
        lab.git("notes", "--ref=refs/notes/x", "add", "-m", note, agent_commit)
    lab.run()
    for slug in PLANS:
        lab.set_status(slug, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    fresh = root / "fresh"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(fresh)], check=True, env=lab.env())
    result = lab.cli("audit", "--json", cwd=fresh)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    lab.fresh_audit = json.loads(result.stdout)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module", params=list(SETTINGS))
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    name = str(request.param)
    return shared(tmp_path_factory, f"r52-repokeys-{name}", lambda r: _build(r, name))


@pytest.mark.parametrize("slug", list(PLANS))
def test_her_plan_is_not_hers_to_approve(
    lab: Lab, slug: str, request: pytest.FixtureRequest
) -> None:
    assert lab.calls(PLANS[slug]) == [], lab.codes(slug)
    if "[attr-binary-" in request.node.name or "[attr-nodelta-" in request.node.name:
        # round 113: committed attributes that hide the plan's every line from a diff
        # hold it before any approval (E_ATTRIBUTE_UNSUPPORTED): never frozen, never run
        said = lab.codes(slug)
        assert "E_SELF_APPROVAL" in said or "E_ATTRIBUTE_UNSUPPORTED" in said, said
        return
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


@pytest.mark.parametrize("slug", list(PLANS))
def test_the_fresh_clone_audit_agrees(lab: Lab, slug: str) -> None:
    runs = [e for e in lab.fresh_audit.get("executions", []) if e.get("plan") == f"plans/{slug}"]  # type: ignore[attr-defined]
    assert runs == [], runs
