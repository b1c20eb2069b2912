"""Round 24, self-approval through content Alice wrote, brought back in another spelling that
hashes alike.

docs/approvals.md: "The index never forgets who produced a content: it keeps, per hash,
everyone who ever wrote that exact hashed content on any path" (a copy keeps its authors).
The hash is of the parsed plan: key order, flow or block style, ``1.0`` for ``1``, ``0x1``
for ``1`` all hash alike. Config: the bench's. Alice commits a plan ``plans/hx-<vid>-src``
(``status: draft``: never frozen or run on its own). The agent then commits, in his own
commit, the same plan respelled at ``plans/hx-<vid>`` (``pending_approval``); the controller
freezes it; Alice approves it.

- ``exact``: the same bytes but the status line (control: round 23's ``copied``);
- ``reorder``: the params' keys in another order, ``a: 1.0`` for ``a: 1``;
- ``flow``: the whole plan in flow style, top-level keys in another order;
- ``hex``: ``a: 0x1``;
- ``gone``: as ``flow``, and Alice's source was deleted (by the agent) before the copy;
- ``mv-flow``: the agent ``git mv``s Alice's source to ``plans/hx-mv-flow`` and rewrites it in
  flow style in the same commit;
- ``nest-flow``: the respelled copy is a library (``draft``) at ``plans/hx-nest-flow-lib``,
  pinned by the agent's parent ``plans/hx-nest-flow``; Alice approves the parent.

Asserted: ``rec`` never runs for the plan (nor the library), it is not started, and it is
refused ``E_SELF_APPROVAL``.

Results: every variant held.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

VIDS = ["exact", "reorder", "flow", "hex", "gone", "mv-flow", "nest-flow"]


def _block(tag: str, status: str, a: str = "1", order: str = "ab") -> str:
    params = f"a: {a}, b: s" if order == "ab" else f"b: s, a: {a}"
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: {status}\n'
        "available_tools:\n  - name: rec\n"
        f'actions:\n  - id: 1\n    tool: rec\n    why: "record {tag}"\n'
        f'    params: {{tag: "{tag}", {params}}}\n'
    )


def _flow(tag: str, status: str) -> str:
    return (
        f'actions: [{{id: 1, tool: rec, why: "record {tag}", '
        f'params: {{b: s, tag: "{tag}", a: 1}}}}]\n'
        "available_tools: [{name: rec}]\n"
        f'plan: {{status: {status}, task: "attack variant {tag}", name: "{tag}"}}\n'
    )


def _parent(tag: str, lib: str, digest: str) -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "attack variant {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        f'actions:\n  - id: 1\n    tool: rec\n    why: parent\n    params: {{tag: "{tag}"}}\n'
        f'  - id: 2\n    plan: {{path: plans/{lib}, hash: "{digest}"}}\n    why: lib\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        tag = f"hx-{v}-lib" if v == "nest-flow" else f"hx-{v}"
        lab.write(f"hx-{v}-src", _block(tag, "draft"))
    lab.commit("alice drafts plans", ALICE)
    lab.git("rm", "-q", "-r", "plans/hx-gone-src")
    lab.commit("agent tidies", AGENT)
    lab.write("hx-exact", _block("hx-exact", "pending_approval"))
    lab.write("hx-reorder", _block("hx-reorder", "pending_approval", a="1.0", order="ba"))
    lab.write("hx-flow", _flow("hx-flow", "pending_approval"))
    lab.write("hx-hex", _block("hx-hex", "pending_approval", a="0x1"))
    lab.write("hx-gone", _flow("hx-gone", "pending_approval"))
    lab.git("mv", "plans/hx-mv-flow-src", "plans/hx-mv-flow")
    lab.write("hx-mv-flow", _flow("hx-mv-flow", "pending_approval"))
    lab.write("hx-nest-flow-lib", _flow("hx-nest-flow-lib", "draft"))
    lab.commit("agent writes plans", AGENT)
    result = lab.cli("hash", "--config", str(lab.config), "plans/hx-nest-flow-lib", cwd=lab.repo)
    assert result.returncode == 0, result.stdout + result.stderr
    digest = result.stdout.strip().split()[-1]
    lab.write("hx-nest-flow", _parent("hx-nest-flow", "hx-nest-flow-lib", digest))
    lab.commit("agent adds the parent", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for v in VIDS:
        path = lab.repo / "plans" / f"hx-{v}" / "PLAN.yml"
        text = path.read_text()
        assert text.count("status: pending_approval") == 1, text
        path.write_text(text.replace("status: pending_approval", "status: approved"))
    lab.commit("alice approves", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-samehash", _build)


BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VIDS]
)
def test_a_respelled_copy_keeps_its_author(lab: Lab, vid: str) -> None:
    slug = f"hx-{vid}"
    assert lab.plan(slug).get("frozen"), lab.codes(slug)
    assert lab.calls(slug) == [], lab.codes(slug)
    assert lab.calls(f"{slug}-lib") == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert lab.refusal(slug) == "E_SELF_APPROVAL", lab.codes(slug)
