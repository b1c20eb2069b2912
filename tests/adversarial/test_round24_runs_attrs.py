"""Round 24, git's built-in checkout conversions selected by a committed ``.gitattributes``
(no program of the agent's: ``ident`` expands ``$Id$`` to ``$Id: <blob> $`` on checkout;
``text eol=crlf`` writes CRLF line ends): the bytes in a working tree differ from the
committed, hashed and reviewed blob while ``git status`` says clean.

Plans: ``idt`` has ``v: "$Id$"``; ``blk`` has a block scalar ``v: "a\\nb\\n"``. The agent
commits them and a ``.gitattributes``, then Alice approves.

- ``remote-*``: remote mode (the controller's own clone checks the branch out with
  ``* text eol=crlf`` and ``*.yml ident``). Asserted: each plan ran once, with the committed
  values (``$Id$``, ``a\\nb\\n``). Held.
- ``local-ident``: local mode, ``*.yml ident``; the agent re-checks the files out (``rm`` +
  ``git checkout``) after each commit, so the shared tree holds the expanded ``$Id: ... $``.
  Asserted: ``idt`` never runs with the expanded value (it waits: "uncommitted edits", the
  documented safe side of raw-byte comparison), ``blk`` runs once as approved. Held.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

WANT = {"idt": "$Id$", "blk": "a\nb\n"}


def _build(mode: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        remote = mode == "remote"
        if remote:
            bare = root / "bare.git"
            subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
            lab.git("remote", "add", "origin", str(bare))
            lab.config.write_text(
                lab.config.read_text().replace(
                    f"repo: {lab.repo}\n",
                    f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
                )
            )
        lab.write("idt", plan_text("idt", params='v: "$Id$"\n'))
        lab.write("blk", plan_text("blk", params="v: |\n  a\n  b\n"))
        lab.commit("plans")
        (lab.repo / ".gitattributes").write_text(
            "* text eol=crlf\n*.yml ident\n" if remote else "*.yml ident\n"
        )
        lab.commit("attributes")

        def sync() -> None:
            if remote:
                lab.git("push", "-q", "origin", "HEAD:main")
                return
            for slug in WANT:
                os.remove(lab.repo / "plans" / slug / "PLAN.yml")
                lab.git("checkout", "--", f"plans/{slug}/PLAN.yml")

        sync()
        lab.run()
        if remote:
            lab.git("pull", "-q", "--rebase", "origin", "main")
        for slug in WANT:
            lab.set_status(slug, "approved")
        lab.commit("approve", ALICE)
        sync()
        lab.run()
        lab.run()
        if remote:
            lab.git("pull", "-q", "--rebase", "origin", "main")
        return lab

    return build


@pytest.fixture(scope="module", params=["remote", "local"])
def lab(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Lab]:
    return request.param, shared(
        tmp_path_factory, f"r24-attrs-{request.param}", _build(request.param)
    )


@pytest.mark.parametrize("slug", list(WANT))
def test_runs_the_committed_value(lab: tuple[str, Lab], slug: str) -> None:
    mode, lab_ = lab
    got = [json.loads(c["stdin"])["v"] for c in lab_.calls(slug)]
    if mode == "local" and slug == "idt":
        assert got in ([], [WANT[slug]]), got
        return
    assert got == [WANT[slug]], got
    assert lab_.status()[f"plans/{slug}"]["status"] == "completed"
