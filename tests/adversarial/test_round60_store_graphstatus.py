"""Round 60, object store: a forged commit-graph in the shared ``.git``, read by a LOCKLESS
reader that writes the controller's state, makes the controller run a version an approver
rejected (local mode).

The controller's own store (``<state_dir>/objects.git``) holds the true history (round 53's
fix: its fetch pins the commit-graph off). The readers that run without the state lock read
the shared store (round 58: each object hashed against its name). A commit-graph forges no
object: it only gives git another first parent for a genuine commit, so ``git log`` in the
shared checkout walks past commits that are on the branch.

Lab (one, plain approvals; rounds played one variant after the other on one branch, a pass
after each): the agent adds ``r-<v>`` for every variant, the controller freezes them. Per
variant: Alice (an approver) rejects ``r-<v>`` (commit R, a veto of that version); the agent
sets it back to ``pending_approval`` (ignored by the controller: an illegal transition); Bob
approves it (ignored too). Then the agent writes ``git commit-graph write --reachable`` and
patches the reopen commit's first parent to R's parent: in the shared checkout's ``git log``
Alice's rejection is gone and the reopen changes nothing. Then the variant's reader runs once
in the shared checkout, then one ``plangate run --once``.

- ``status``: the operator runs ``plangate status --json --config`` (no daemon: without the
  lock; docs: a reader of the shared store).
- ``status-text``: ``plangate status --config`` (text).
- ``status-bloom``: ``status --json`` over a graph written with ``--changed-paths`` whose
  Bloom filter for R is zeroed ("touches no path"; no parent changed): a path-limited
  ``git log`` skips R.
- ``mcp-status``: the agent's own MCP server (``plangate mcp --config``, the controller's
  config, as docs/agents.md configures it) answers the agent's ``status`` call.
- ``mcp-log``: the agent's MCP ``log`` call for ``plans/r-mcp-log``.
- ``show``: ``plangate show plans/r-show/PLAN.yml --config`` in the shared checkout.
- ``audit``: ``plangate audit --json --config`` in the shared checkout.
- ``check``: ``plangate check --as bob`` over the reopen..Bob range.
- ``no-reader`` (control): the forged graph and no reader: the pass alone.
- ``no-graph`` (control): ``status`` with no forged graph.

Asserted for each: ``rec`` never ran for ``r-<v>`` (Alice's rejection vetoes it; the
controller's own store says so), and the pass exits 0.

Seen: BROKE (strict xfails): ``status``, ``status-text``, ``status-bloom``, ``mcp-status``:
the lockless reader rewrote ``<state_dir>/index.sqlite`` and ``memory.sqlite`` from the chain
git walked in the shared store (the forged graph), and the next pass started and completed
``r-<v>``, the version Alice rejected (no ``E_GIT``, no finding). The agent can do it alone
through its MCP server when that server runs as the controller's user. Held: ``mcp-log``,
``show``, ``audit``, ``check``, ``no-reader``, ``no-graph``. Should: a reader without the
lock never writes the controller's state from the shared store (or reads the controller's
own store), and git walks over the shared store pin the commit-graph off.

Fixed (2026-11-29): a reader without the state lock (``status``, the MCP server's tools)
works on private copies of ``index.sqlite``, ``memory.sqlite`` and ``held.json``
(``StateDir.read_only``, copied read-only, removed when it closes): nothing it computes
reaches the controller's state, which only the lock's holder writes from its own store
(``status``, ``status-text``, ``status-bloom``, ``mcp-status``). And every git child over a
store nobody verified runs with the commit-graph off (``core.commitGraph=false``, also
``fetch``/``gc.writeCommitGraph``, replace refs off; ``GitGuard.unverified``, set once by the
repository handle), so the reader's own answer follows the branch's real chain too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round53_approve_commitgraph import patch_graph, write_graph
from test_round55_approve_mcpsubmit import mcp

VIDS = [
    "status",
    "status-text",
    "status-bloom",
    "mcp-status",
    "mcp-log",
    "show",
    "audit",
    "check",
    "no-reader",
    "no-graph",
]
BROKEN: dict[str, pytest.MarkDecorator] = {}  # all fixed (2026-11-29), see the docstring


def _reader(lab: Lab, vid: str, base: str, head: str) -> str:
    cfg = ("--config", str(lab.config))
    if vid in ("status", "status-bloom"):
        out = lab.cli("status", "--json", *cfg, cwd=lab.repo)
    elif vid in ("status-text", "no-graph"):
        out = lab.cli("status", *cfg, cwd=lab.repo)
    elif vid == "mcp-status":
        return repr(mcp(lab, [("status", {})]))[-800:]
    elif vid == "mcp-log":
        return repr(mcp(lab, [("log", {"path": "plans/r-mcp-log"})]))[-800:]
    elif vid == "show":
        out = lab.cli("show", "plans/r-show/PLAN.yml", *cfg, cwd=lab.repo)
    elif vid == "audit":
        out = lab.cli("audit", "--json", *cfg, cwd=lab.repo)
    elif vid == "check":
        out = lab.cli(
            "check",
            "--base",
            base,
            "--head",
            head,
            "--as",
            "bob@ops.example.com",
            *cfg,
            cwd=lab.repo,
        )
    else:
        return ""
    return f"{out.returncode} {(out.stdout + out.stderr)[-800:]}"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.config.write_text(
        lab.config.read_text() + "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
    )
    lab.git_date = "@1790000000 +0000"
    for vid in VIDS:
        lab.write(f"r-{vid}", plan_text(f"r-{vid}"))
    lab.commit("agent adds the plans", AGENT)
    lab.run()
    lab.said, lab.passes = {}, {}  # type: ignore[attr-defined]
    for vid in VIDS:
        slug = f"r-{vid}"
        lab.set_status(slug, "rejected")
        rejection = lab.commit(f"alice rejects {slug}", ALICE)
        lab.set_status(slug, "pending_approval")
        reopen = lab.commit(f"agent reopens {slug}", AGENT)
        lab.set_status(slug, "approved")
        bob = lab.commit(f"bob approves {slug}", BOB)
        if vid == "status-bloom":
            write_graph(lab, bloom=True)
            patch_graph(lab, rejection, zero_bloom=True)
            chain = lab.git("log", "--format=%s", "-4", "--", f"plans/{slug}")
            if f"alice rejects {slug}" in chain:
                raise AssertionError(f"bench: the Bloom filter did not hide R: {chain}")
        elif vid != "no-graph":
            write_graph(lab)
            patch_graph(lab, reopen, parent=lab.head(f"{rejection}^"))
            chain = lab.git("log", "--format=%s", "-4")
            if f"alice rejects {slug}" in chain:
                raise AssertionError(f"bench: the graph did not hide R: {chain}")
        lab.said[vid] = _reader(lab, vid, rejection + "^", bob)  # type: ignore[attr-defined]
        lab.passes[vid] = lab.run(check=False)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-graphstatus", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_rejected_version_never_runs(lab: Lab, vid: str) -> None:
    result = lab.passes[vid]  # type: ignore[attr-defined]
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-1500:]
    ran = lab.calls(f"r-{vid}")
    assert ran == [], (ran, lab.said[vid])  # type: ignore[attr-defined]
