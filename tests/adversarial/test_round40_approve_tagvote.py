"""Round 40, does an inner merge's ``mergetag`` signature make its ``Plan-Approved:``
trailer a signed vote?

A commit inside a merged branch counts as a vote only when it carries ``Plan-Approved:``
and ``git verify-commit`` accepts ITS signature (docs/approvals.md). A merge of a signed
tag carries the tag (and the tagger's SSH signature blob) in a ``mergetag`` header; the
merge commit itself may be unsigned (``%G?`` N).

Config: the bench's plus ``allowed_signers`` (Alice's and Bob's listed keys) and
``approval.rules: [{match: {}, require: [{count: 2}]}]``. The agent writes each plan; the
controller freezes it. On a side branch:

- ``tag-unsigned-merge``: Bob signs a tag (his key) on a side commit; the agent merges the
  tag into the side branch with an unsigned merge whose message carries
  ``Plan-Approved: plans/<vid> <hash>``; Alice merges the side branch into main, setting
  ``approved`` (her own vote, unsigned merge: no ``require_signed``).
- ``tag-msg-trailer``: Bob's signed tag's MESSAGE carries the trailer; the agent's unsigned
  merge of that tag copies it into the merge message; Alice merges as above.
- ``control``: Bob's own signed commit with the trailer on the side branch (a real vote:
  the plan starts with Alice's and Bob's votes).

Asserted (the defence): only a commit's own signature makes a vote: the two tag variants
end ``partial`` (no ``start``, ``rec`` never ran); the control starts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = ["tag-unsigned-merge", "tag-msg-trailer"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _key(keys: Path, name: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    return (keys / f"{name}.pub").read_text().strip()


def _signed(lab: Lab, who: tuple[str, str], key: str, *args: str) -> str:
    return lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={lab.root / 'keys' / key}", *args, who=who
    )  # fmt: skip


def _side(lab: Lab, vid: str, digest: str) -> None:
    trailer = f"Plan-Approved: plans/{vid} {digest}"
    lab.git("checkout", "-q", "-b", f"side-{vid}")
    if vid == "control":
        _signed(lab, BOB, "bob", "commit", "-q", "-S", "--allow-empty", "-m", f"ok\n\n{trailer}")
    else:
        lab.git("checkout", "-q", "-b", f"tagged-{vid}")
        lab.commit(f"tagged {vid}", AGENT)
        msg = f"ok\n\n{trailer}" if vid == "tag-msg-trailer" else "release"
        _signed(lab, BOB, "bob", "tag", "-s", "-m", msg, f"t-{vid}")
        lab.git("checkout", "-q", f"side-{vid}")
        how = ["--no-edit"] if vid == "tag-msg-trailer" else ["-m", f"merge tag\n\n{trailer}"]
        # --no-edit: git writes the tag's message into the merge message
        lab.git("merge", "-q", "--no-ff", *how, f"t-{vid}", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", f"side-{vid}", who=ALICE)
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", f"merge side-{vid}", who=ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    alice, bob = _key(keys, "alice"), _key(keys, "bob")
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {alice}\nbob@ops.example.com {bob}\n")
    lab.write_config(
        approval=f"allowed_signers: {signers}\n"
        "rules:\n  - match: {}\n    require: [{count: 2}]\n"
    )
    for vid in [*VARIANTS, "control"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    lab.messages = {}  # type: ignore[attr-defined]
    for vid in [*VARIANTS, "control"]:
        _side(lab, vid, lab.plan(vid)["frozen"]["hash"])
        lab.messages[vid] = lab.git(  # type: ignore[attr-defined]
            "log", "-1", "--format=%G?|%B", f"side-{vid}"
        )
        lab.messages[vid] += lab.git("cat-file", "commit", f"side-{vid}")[:700]  # type: ignore[attr-defined]
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-tagvote", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_bench(lab: Lab) -> None:
    msgs = lab.messages  # type: ignore[attr-defined]
    for vid in VARIANTS:
        assert msgs[vid].startswith("N|"), msgs
        assert "Plan-Approved: plans/" in msgs[vid] and "mergetag object" in msgs[vid], msgs


def test_the_control_starts(lab: Lab) -> None:
    assert len(lab.calls("control")) == 1, (lab.messages, lab.codes("control"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_a_tag_signature_is_no_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert any(s.startswith("plangate: partial ") for s in lab.subjects(vid)), lab.codes(vid)
