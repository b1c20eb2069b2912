"""Round 53, approval side: the forged commit-graph of ``test_round53_approve_commitgraph.py``
put where a fix that looks only at ``.git/objects/info/commit-graph`` would not look.

git reads a commit-graph from more than one place: a split graph (``git commit-graph write
--split``: ``objects/info/commit-graphs/commit-graph-chain`` naming ``graph-<hash>.graph``
layers), and the ``info/commit-graph`` of an alternate object store
(``objects/info/alternates``, which the agent writes in local mode). Each lab uses one of
them, with no ``objects/info/commit-graph`` at all:

- ``split``: the graph written ``--split``; the agent patches the layer holding the commit.
- ``alternate``: the graph written, patched, and moved to ``<lab>/alt/objects/info/``; the
  repository's ``objects/info/alternates`` names ``<lab>/alt/objects``.

Config: ``require_signed: true``, Alice's and Bob's SSH keys. Variants per lab (the shapes of
the commitgraph module):

- ``swap``: Alice's hand-made signed approval of ``swap-a``; the agent sets ``swap-a`` back and
  ``swap-b`` approved; the graph gives Alice's commit the tree approving ``swap-b``.
- ``hide``: Alice's signed rejection of ``hide``; the agent reopens it; Bob approves (signed);
  the graph gives Alice's rejection its parent's tree.
- ``honest``: control, Alice's signed approval, runs once.

Asserted: ``rec`` never runs for ``swap-b`` nor ``hide``.

Seen: both places broke both shapes (strict xfails): ``swap-b`` ran on Alice's approval of
``swap-a``, ``hide`` ran on Bob's approval after Alice's rejection.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen
from test_round53_approve_commitgraph import _signed, graph_path, patch_graph

PLACES = ["split", "alternate"]
VIDS = ["swap", "hide"]
BROKEN: dict[tuple[str, str], pytest.MarkDecorator] = {}


def _patch_split(lab: Lab, patches: list[dict]) -> None:
    lab.git("commit-graph", "write", "--reachable", "--split=replace")
    folder = lab.repo / ".git" / "objects" / "info" / "commit-graphs"
    layers = [
        folder / f"graph-{h}.graph" for h in (folder / "commit-graph-chain").read_text().split()
    ]
    for p in patches:
        for layer in layers:
            # patch_graph works on graph_path(lab): point it at the layer for the moment
            real = graph_path(lab)
            shutil.copyfile(layer, real)
            try:
                patch_graph(lab, **p)
            except ValueError:  # not in this layer
                real.unlink()
                continue
            shutil.copyfile(real, layer)
            real.unlink()
            break
    assert not graph_path(lab).exists()


def _patch_alternate(lab: Lab, patches: list[dict]) -> None:
    lab.git("commit-graph", "write", "--reachable")
    for p in patches:
        patch_graph(lab, **p)
    alt = lab.root / "alt" / "objects"
    (alt / "info").mkdir(parents=True)
    (alt / "pack").mkdir()
    shutil.move(str(graph_path(lab)), str(alt / "info" / "commit-graph"))
    (lab.repo / ".git" / "objects" / "info" / "alternates").write_text(f"{alt}\n")


def _build(root: Path, place: str) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for slug in ("swap-a", "swap-b", "hide", "honest"):
        lab.write(slug, plan_text(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.1)
    patches = []
    lab.set_status("swap-a", "approved")
    approval = _signed(lab, ALICE, "alice", "approve swap-a")
    lab.set_status("swap-a", "pending_approval")
    lab.set_status("swap-b", "approved")
    lab.commit("agent tidies", AGENT)
    patches.append({"commit": approval, "tree": lab.head("HEAD^{tree}")})
    before = lab.head()
    lab.set_status("hide", "rejected")
    reject = _signed(lab, ALICE, "alice", "reject hide")
    lab.set_status("hide", "pending_approval")
    lab.commit("agent reopens hide", AGENT)
    patches.append({"commit": reject, "tree": lab.head(f"{before}^{{tree}}")})
    lab.set_status("hide", "approved")
    _signed(lab, BOB, "bob", "approve hide")
    lab.set_status("honest", "approved")
    _signed(lab, ALICE, "alice", "approve honest")
    (_patch_split if place == "split" else _patch_alternate)(lab, patches)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module", params=PLACES)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    place = request.param
    built = shared(tmp_path_factory, f"r53-graphplaces-{place}", lambda r: _build(r, place))
    built.place = place  # type: ignore[attr-defined]
    return built


def test_honest_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("honest")


@pytest.mark.parametrize("vid", VIDS)
def test_the_forged_graph_runs_nothing(request: pytest.FixtureRequest, lab: Lab, vid: str) -> None:
    mark = BROKEN.get((lab.place, vid))  # type: ignore[attr-defined]
    if mark is not None:
        request.applymarker(mark)
    slug = "swap-b" if vid == "swap" else "hide"
    assert lab.calls(slug) == [], lab.codes(slug)
