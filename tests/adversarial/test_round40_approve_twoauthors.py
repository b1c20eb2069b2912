"""Round 40, a signed approval commit object with TWO ``author`` headers (or two
``committer`` headers), crafted with ``git hash-object`` and signed over exactly those bytes
with ``ssh-keygen -Y sign -n git`` (git verifies it: ``%G?`` G). Two readers may take
different headers (git 2.39's ``%an``/``%ae`` showed the LAST ``author`` header).

Config: the bench's, ``require_signed: true``, ``allowed_signers``: the controller's key,
Alice's, and Mallory's (listed, not an approver). The agent writes each plan; the
controller freezes it; then Mallory, with her own key, commits ``approved``:

- ``mallory-first``: ``author Mallory`` then ``author Alice`` (committer Mallory).
- ``alice-first``: ``author Alice`` then ``author Mallory`` (committer Mallory).
- ``committers``: author Mallory; ``committer Mallory`` then ``committer Alice``.
- ``mergetag-approval``: Alice signs a tag (her listed key) on a side commit and merges the
  tag into main with an UNSIGNED merge that sets ``approved``: her signature is only in the
  merge's ``mergetag`` header (``%G?`` N); under ``require_signed`` it must be refused
  ``E_SIGNATURE_INVALID``.

Asserted (the defence): no variant runs; Mallory's key approves nothing: ``rec`` never runs, and the
fresh-clone audit flags no start. Seen: held (``mallory-first``, where git names Alice the
author: ``E_SIGNATURE_INVALID`` "signed by mallory@example.com, who is not an approver";
the others ``E_APPROVER_NOT_ALLOWED`` for Mallory).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, Lab, plan_text
from test_round2_execution_kit import shared

M = "Mallory <mallory@example.com>"
A = "Alice <alice@example.com>"
HEADERS = {
    "mallory-first": [("author", M), ("author", A), ("committer", M)],
    "alice-first": [("author", A), ("author", M), ("committer", M)],
    "committers": [("author", M), ("committer", M), ("committer", A)],
}
VARIANTS = [*HEADERS, "mergetag-approval"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _key(keys: Path, name: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    return (keys / f"{name}.pub").read_text().strip()


def _crafted(lab: Lab, vid: str) -> str:
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    stamp = int(time.time())
    head = f"tree {tree}\nparent {lab.head()}\n" + "".join(
        f"{k} {who} {stamp} +0000\n" for k, who in HEADERS[vid]
    )
    body = f"\napprove {vid}\n"
    payload = lab.root / f"payload-{vid}"
    payload.write_text(head + body)
    subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-n", "git", "-f", str(lab.root / "keys" / "mallory"),
         str(payload)],
        check=True, capture_output=True,
    )  # fmt: skip
    sig = Path(f"{payload}.sig").read_text().rstrip("\n").split("\n")
    gpgsig = "gpgsig " + "\n".join([sig[0], *(" " + x for x in sig[1:])]) + "\n"
    sha = lab.git("hash-object", "-t", "commit", "-w", "--stdin", input=head + gpgsig + body)
    lab.git("update-ref", "refs/heads/main", sha.strip())
    lab.git("reset", "-q", "--hard", sha.strip())
    return sha.strip()


def _tag_merge(lab: Lab, vid: str) -> None:
    """Alice's UNSIGNED merge of a tag she signed (her listed key), setting ``approved``:
    her signature is only in the merge's ``mergetag`` header."""
    lab.git("checkout", "-q", "-b", f"side-{vid}")
    lab.commit(f"side {vid}", AGENT)
    lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={lab.root / 'keys' / 'alice'}",
        "tag", "-s", "-m", f"ok {vid}", f"t-{vid}", who=("Alice", "alice@example.com"),
    )  # fmt: skip
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", f"t-{vid}", who=("Alice", "alice@example.com"))
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--no-edit", who=("Alice", "alice@example.com"))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    bot, alice, mallory = _key(keys, "bot"), _key(keys, "alice"), _key(keys, "mallory")
    signers = root / "allowed_signers"
    signers.write_text(
        f"plangate@localhost {bot}\nalice@example.com {alice}\nmallory@example.com {mallory}\n"
    )
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in VARIANTS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    signkit.signed_run(lab)
    time.sleep(1.05)
    lab.verified = {}  # type: ignore[attr-defined]
    _tag_merge(lab, "mergetag-approval")
    lab.tag_merge = lab.git("cat-file", "commit", "HEAD")  # type: ignore[attr-defined]
    lab.tag_merge_sig = lab.git("log", "-1", "--format=%G?", "HEAD").strip()  # type: ignore[attr-defined]
    for vid in HEADERS:
        sha = _crafted(lab, vid)
        lab.verified[vid] = lab.git(  # type: ignore[attr-defined]
            "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1",
            "--format=%G? %GS %ae %ce", sha,
        ).strip()  # fmt: skip
    signkit.signed_run(lab)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = (  # type: ignore[attr-defined]
        json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-twoauthors", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_tag_merge_is_unsigned_with_a_mergetag(lab: Lab) -> None:
    assert lab.tag_merge_sig == "N", lab.tag_merge_sig  # type: ignore[attr-defined]
    assert "\nmergetag object " in lab.tag_merge, lab.tag_merge  # type: ignore[attr-defined]


def test_the_tag_merge_is_refused_unsigned(lab: Lab) -> None:
    assert "E_SIGNATURE_INVALID" in lab.codes("mergetag-approval"), lab.codes("mergetag-approval")


def test_git_verifies_mallorys_signature(lab: Lab) -> None:
    verified = lab.verified  # type: ignore[attr-defined]
    assert all(v.startswith("G mallory@example.com") for v in verified.values()), verified


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_mallorys_key_approves_nothing(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.verified, lab.codes(vid))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == len(lab.calls(vid)), report
    assert all(e.get("approval_valid") for e in runs), runs
