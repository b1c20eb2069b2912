"""Round 23, self-approval through a pinned plan, by signing key (``require_signed``).

Config: ``require_signed: true``; ``allowed_signers`` lists Alice and Bob. Every library commit
below is made under the agent's name; the agent's parent ``plans/<vid>`` pins the library
``plans/<vid>-lib`` (``status: draft``) by hash; the controller freezes; Bob approves the parent
on main, signed with his key, as himself.

- ``lib-signed``: the library committed with Bob's key.
- ``lib-merge-signed``: the library added on a side branch (unsigned), merged ``--no-ff`` by a
  merge commit signed with Bob's key that changes its text (an evil merge).
- ``lib-mv-signed``: the agent's library moved to its folder by a commit signed with Bob's key.
- ``ctl``: the agent's unsigned library (control: Bob's approval runs the parent once).

Defence: ``E_SELF_APPROVAL`` (Bob's key wrote the version the parent pins); ``rec`` never runs.

Results: all held (``E_SELF_APPROVAL``; the control ran once).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, BOB, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args
from test_round23_approve_libwriters import _parent

VIDS = ["lib-signed", "lib-merge-signed", "lib-mv-signed"]


def _signed(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "--allow-empty", "-m", message, who=who)


def _lib(vid: str, extra: str = "") -> str:
    return plan_text(f"{vid}-lib", status="draft", params=extra)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    pubs = {n: _keygen(keys / n) for n in ("alice", "bob")}
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    g = lab.git
    lab.write("lib-signed-lib", _lib("lib-signed"))
    _signed(lab, "bob", AGENT, "library")
    g("checkout", "-q", "-b", "side")
    lab.write("lib-merge-signed-lib", _lib("lib-merge-signed", "x: 1\n"))
    lab.commit("library on a side branch", AGENT)
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "--no-commit", "side", who=AGENT)
    lab.write("lib-merge-signed-lib", _lib("lib-merge-signed", "x: 2\n"))
    _signed(lab, "bob", AGENT, "merge side")
    lab.write("lib-mv-signed-src", _lib("lib-mv-signed"))
    lab.write("ctl-lib", _lib("ctl"))
    lab.commit("agent libraries", AGENT)
    g("mv", "plans/lib-mv-signed-src", "plans/lib-mv-signed-lib")
    _signed(lab, "bob", AGENT, "move")
    for vid in [*VIDS, "ctl"]:
        result = lab.cli("hash", "--config", str(lab.config), f"plans/{vid}-lib", cwd=lab.repo)
        assert result.returncode == 0, result.stdout + result.stderr
        lab.write(vid, _parent(vid, f"{vid}-lib", result.stdout.strip().split()[-1]))
    lab.commit("agent adds parents", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in [*VIDS, "ctl"]:
        lab.set_status(vid, "approved")
        _signed(lab, "bob", BOB, f"approve {vid}")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-libkeys", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", VIDS)
def test_the_librarys_signing_key_cannot_approve_the_parent(lab: Lab, vid: str) -> None:
    assert lab.plan(vid).get("frozen"), lab.codes(vid)
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)
