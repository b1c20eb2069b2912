"""Round 40, can a signer hide (or swap) the certificate that names her as a plan's writer
by giving the commit a second SSH signature blob?

git reads every ``gpgsig`` header line of a commit (and its continuation lines) into one
signature buffer and hands it to ``ssh-keygen -Y verify``, which reads the FIRST armored
``SSH SIGNATURE`` blob and ignores what follows its END line. So a commit whose signature
is Alice's (certificate) blob followed by another blob still verifies as Alice (``%G?`` G,
``%GS`` alice, ``%GK`` her key). docs/approvals.md (round 30): plangate reads the
certificate "from the commit's own signature (the public key of the SSHSIG blob in its
``gpgsig`` header, which git verified)": the question is whether it reads the blob git
verified.

Config: the bench's, ``require_signed: true``, ``allowed_signers``: the controller's key and
``*@example.com,*@ops.example.com cert-authority <ca>``; Alice, Bob and Carol sign with CA
certificates for their addresses (``mallory`` is an uncertified key). Per variant, Alice
writes the plan (a commit under the agent's name, signed with her certificate), then:

- ``control``: nothing more (one blob).
- ``tail-bob``: the commit is rewritten (``git hash-object -t commit``) with a second
  ``gpgsig`` header holding a blob Bob's certificate made (any of Bob's public signatures).
- ``cont-bob``: the same blob appended as continuation lines of the one ``gpgsig`` header.
- ``tail-nobody``: a blob of the uncertified ``mallory`` key appended as a second header.
- ``cont-nobody``: the same as continuation lines.
- ``cont-junk``: a text line after Alice's END line (``-----BEGIN SSH SIGNATURE-----`` and
  garbage base64).
- ``sha-after-bob`` / ``sha-before-bob``: Bob's blob in a ``gpgsig-sha256`` header after /
  before Alice's ``gpgsig`` (a SHA-1 repository: git leaves both signature headers out of
  the signed payload and verifies ``gpgsig`` only, so Alice's signature still verifies).
- ``merge-plain``: Alice's signed merge (the agent's name) of a side branch, the merge
  itself adding the plan (content no parent holds).
- ``mergetag-bob``: the same merge of a tag Bob signed with his certificate: git puts the
  tag and its ``SSH SIGNATURE`` blob in a ``mergetag`` header before the merge's own
  ``gpgsig``.

The controller freezes every plan; Alice approves each (signed with her certificate, under
her own name); the controller passes; a fresh clone is audited.

Before main's approvals, a pull request branch per variant sets ``approved`` (Alice, signed)
and ``plangate check --as alice@example.com --format json`` predicts its merge.

Asserted (the defence): git still calls every written commit good for Alice (the bench);
``check`` predicts ``E_SELF_APPROVAL``;
Alice's key made the content, so her approval is refused ``E_SELF_APPROVAL`` and ``rec``
never runs; the audit flags no run.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import signkit
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

HOW = {
    "control": ("", ""),
    "tail-bob": ("tail", "bob"),
    "cont-bob": ("cont", "bob"),
    "tail-nobody": ("tail", "nobody"),
    "cont-nobody": ("cont", "nobody"),
    "cont-junk": ("cont", "junk"),
    "sha-after-bob": ("sha-after", "bob"),
    "sha-before-bob": ("sha-before", "bob"),
    "merge-plain": ("merge", ""),
    "mergetag-bob": ("merge", "bob"),
}
VARIANTS = list(HOW)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _key(keys: Path, name: str, principal: str | None = None) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    if principal:
        subprocess.run(
            ["ssh-keygen", "-q", "-s", str(keys / "ca"), "-I", name, "-n", principal,
             str(keys / f"{name}.pub")],
            check=True,
            capture_output=True,
        )  # fmt: skip
    return (keys / f"{name}.pub").read_text().strip()


def _signkey(lab: Lab, name: str) -> str:
    keys = lab.root / "keys"
    cert = keys / f"{name}-cert.pub"
    return str(cert if cert.exists() else keys / name)


def _commit(lab: Lab, msg: str, key: str, who: tuple[str, str]) -> str:
    lab.git("add", "-A")
    lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={_signkey(lab, key)}",
        "commit", "-q", "-S", "--allow-empty", "-m", msg, who=who,
    )  # fmt: skip
    return lab.head()


def _sigblock(raw: str) -> list[str]:
    out, on = [], False
    for line in raw.split("\n"):
        if line.startswith("gpgsig "):
            on = True
            out.append(line)
        elif on and line.startswith(" "):
            out.append(line)
        elif on:
            break
    return out


def _donor(lab: Lab, key: str, who: tuple[str, str]) -> list[str]:
    """A signature blob made by ``key`` over some other commit (public in any history)."""
    lab.git("checkout", "-q", "-b", f"donor-{key}")
    sha = _commit(lab, f"donor {key}", key, who)
    lab.git("checkout", "-q", "main")
    return _sigblock(lab.git("cat-file", "commit", sha))


def _graft(lab: Lab, how: str, donor: list[str]) -> None:
    """Rewrite HEAD with ``donor``'s blob after its own (same parent, same payload)."""
    raw = lab.git("cat-file", "commit", "HEAD")
    own = _sigblock(raw)
    if not donor:  # junk
        extra = [
            " -----BEGIN SSH SIGNATURE-----",
            " U1NIU0lHAAAAAQ==",
            " -----END SSH SIGNATURE-----",
        ]
    elif how == "tail":
        extra = donor
    else:
        extra = [" " + donor[0][len("gpgsig ") :], *donor[1:]]
    new = raw.replace("\n".join(own), "\n".join([*own, *extra]), 1)
    if how.startswith("sha"):  # git leaves gpgsig-sha256 out of a SHA-1 commit's payload
        other = ["gpgsig-sha256 " + donor[0][len("gpgsig ") :], *donor[1:]]
        both = [*own, *other] if how == "sha-after" else [*other, *own]
        new = raw.replace("\n".join(own), "\n".join(both), 1)
    sha = lab.git("hash-object", "-t", "commit", "-w", "--stdin", input=new).strip()
    lab.git("update-ref", "refs/heads/main", sha)
    lab.git("reset", "-q", "--hard", sha)


def _merge_in(lab: Lab, vid: str, tagger: str) -> None:
    """Alice's signed merge (the agent's name) that itself adds the plan; with ``tagger``
    it merges a tag signed by that person's certificate (git writes a ``mergetag`` header
    holding the tag and its SSH signature blob, before the merge's own ``gpgsig``)."""
    lab.git("checkout", "-q", "-b", f"side-{vid}")
    lab.commit(f"side {vid}", AGENT)
    ref = f"side-{vid}"
    if tagger:
        ref = f"t-{vid}"
        lab.git(
            "-c", "gpg.format=ssh", "-c", f"user.signingkey={_signkey(lab, tagger)}",
            "tag", "-s", "-m", f"release {vid}", ref, who=BOB,
        )  # fmt: skip
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", ref, who=AGENT)
    lab.write(vid, plan_text(vid))
    _commit(lab, f"merge {ref}", "alice", AGENT)
    raw = lab.git("cat-file", "commit", "HEAD")
    if tagger and "\nmergetag object " not in raw:
        raise RuntimeError(f"no mergetag header: {raw[:400]}")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ca = _key(keys, "ca")
    bot = _key(keys, "bot")
    _key(keys, "alice", "alice@example.com")
    _key(keys, "bob", "bob@ops.example.com")
    _key(keys, "mallory")
    signers = root / "allowed_signers"
    signers.write_text(
        f"plangate@localhost {bot}\n*@example.com,*@ops.example.com cert-authority {ca}\n"
    )
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    lab.write("seed", plan_text("seed"))
    lab.commit("agent seeds", AGENT)
    signkit.signed_run(lab)
    donors = {"bob": _donor(lab, "bob", BOB), "nobody": _donor(lab, "mallory", AGENT)}
    lab.verified = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        if HOW[vid][0] != "merge":
            lab.write(vid, plan_text(vid))
            _commit(lab, f"add {vid}", "alice", AGENT)  # Alice's key, the agent's name
        how, who = HOW[vid]
        if how == "merge":
            _merge_in(lab, vid, who)
        elif how:
            _graft(lab, how, donors.get(who, []))
        lab.verified[vid] = lab.git(  # type: ignore[attr-defined]
            "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G? %GS", "HEAD"
        ).strip()  # fmt: skip
    signkit.signed_run(lab)  # freezes
    time.sleep(1.05)
    base = lab.head()
    lab.check = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", base)
        lab.set_status(vid, "approved")
        _commit(lab, f"approve {vid}", "alice", ALICE)
        res = lab.cli(
            "check", "--base", "main", "--head", f"pr-{vid}", "--as", "alice@example.com",
            "--format", "json", "--config", str(lab.config), cwd=lab.repo,
        )  # fmt: skip
        lab.check[vid] = res.stdout or res.stderr  # type: ignore[attr-defined]
        lab.git("checkout", "-q", "main")
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
        _commit(lab, f"approve {vid}", "alice", ALICE)
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
    return shared(tmp_path_factory, "r40-sigblobs", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_git_calls_every_written_commit_alices(lab: Lab) -> None:
    verified = lab.verified  # type: ignore[attr-defined]
    assert set(verified.values()) == {"G alice@example.com"}, verified


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_the_writer_may_not_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == len(lab.calls(vid)), report
    assert all(e.get("approval_valid") for e in runs), runs


@pytest.mark.parametrize("vid", _p(VARIANTS))
def test_check_predicts_the_refusal(lab: Lab, vid: str) -> None:
    """``plangate check --as alice`` for a pull request setting ``approved`` predicts the
    controller's verdict (``E_SELF_APPROVAL``, no ``start``)."""
    text = lab.check[vid]  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in text, text[-2000:]
    assert '"outcome": "start"' not in text, text[-2000:]
