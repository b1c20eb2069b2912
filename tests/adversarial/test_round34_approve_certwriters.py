"""Round 34, self-approval under ``require_signed`` through a certificate that names someone
else (or nobody, or carries limits) on a key an approver holds, and ``plangate check``'s
prediction of the same.

docs/approvals.md (round 30): "For who wrote content none of these limits apply (an expired
certificate, like a retired key, still names its holder)"; round 33: the controller knows a
certificate's key. Config: the bench's (approvers Alice and ``*@ops.example.com``),
``require_signed: true``, ``allowed_signers``: Alice's, Bob's and Carol's listed keys and
``*@example.com,*@ops.example.com cert-authority <ca>``.

Each variant: the agent's commit adding the plan (author and committer the agent) is signed
with the certificate below; the controller freezes; the approver named last approves on main
signed with her (his) *listed* key. Defence: ``E_SELF_APPROVAL``, ``rec`` never runs.

- ``bob-as-carol``: a CA certificate for ``carol@ops.example.com`` on Bob's listed key; Bob
  approves (git names Carol as the content's signer).
- ``alice-nopr``: a CA certificate with no principal on Alice's listed key (git: ``U``, no
  signer named); Alice approves.
- ``alice-as-agent``: a certificate for ``agent@example.com`` on Alice's listed key; Alice.
- ``alice-fc``: a certificate for Alice with ``force-command`` on her listed key; Alice.
- ``alice-exp``: an expired certificate for Alice on her listed key (git: ``U``); Alice.
- ``solo-exp`` / ``solo-fut`` / ``solo-fc``: a key nobody lists with an expired /
  not-yet-valid / ``force-command`` certificate for Alice; Alice.
- ``ctl``: the agent's unsigned plan; Alice approves: runs once.

``plangate check`` (``chk-*``): plans the agent added unsigned and the controller froze; on a
pull request the agent commits ``NOTES.md`` into the plan's folder signed with the certificate
below and sets ``approved``; in a fresh clone ``plangate check --as <approver>`` is recorded;
then the approver merges ``--no-ff``, signed with the listed key. Asserted: check does not
predict ``start`` where the controller does not start, and the controller refuses:

- ``chk-bob-as-carol`` (``--as`` Bob), ``chk-alice-as-agent``, ``chk-alice-nopr``
  (``--as`` Alice).

Results: every variant held (the refusal names the listed holder of the certificate's key).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

#: certificate id -> (the key it certifies, its principal, extra ssh-keygen options)
CERTS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "bob-as-carol": ("bob", "carol@ops.example.com", ()),
    "alice-nopr": ("alice", None, ()),
    "alice-as-agent": ("alice", "agent@example.com", ()),
    "alice-fc": ("alice", "alice@example.com", ("-O", "force-command=/bin/true")),
    "alice-exp": ("alice", "alice@example.com", ("-V", "20200101:20200102")),
    "solo-exp": ("solo1", "alice@example.com", ("-V", "20200101:20200102")),
    "solo-fut": ("solo2", "alice@example.com", ("-V", "20990101:20990102")),
    "solo-fc": ("solo3", "alice@example.com", ("-O", "force-command=/bin/true")),
}
APPROVER = {v: (BOB, "bob") if v.startswith("bob") else (ALICE, "alice") for v in CERTS}
CHECKS = ["chk-bob-as-carol", "chk-alice-as-agent", "chk-alice-nopr"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _key(keys: Path, name: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    return (keys / f"{name}.pub").read_text().strip()


def _cert(keys: Path, ident: str) -> None:
    base, principal, opts = CERTS[ident]
    args = ["ssh-keygen", "-q", "-s", str(keys / "ca"), "-I", ident, *opts]
    if principal:
        args += ["-n", principal]
    subprocess.run([*args, str(keys / f"{base}.pub")], check=True, capture_output=True)
    (keys / f"{base}-cert.pub").rename(keys / f"{ident}.cert")


def _signed(lab: Lab, key: str | None, who: tuple[str, str], *args: str) -> None:
    if key is None:
        lab.git(*args, who=who)
        return
    keys = lab.root / "keys"
    if key in CERTS:  # ssh-keygen finds the private key beside ``<key>-cert.pub``
        base = CERTS[key][0]
        path = keys / f"{base}-cert.pub"
        path.write_text((keys / f"{key}.cert").read_text())
    else:
        path = keys / f"{key}.pub"
        (keys / f"{key}-cert.pub").unlink(missing_ok=True)
    lab.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={path}", *args[:1], "-S", *args[1:],
            who=who)  # fmt: skip


def _commit(lab: Lab, key: str | None, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    _signed(lab, key, who, "commit", "-q", "--allow-empty", "-m", message)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    ca = _key(keys, "ca")
    alice = _key(keys, "alice")
    bob = _key(keys, "bob")
    carol = _key(keys, "carol")
    for solo in ("solo1", "solo2", "solo3"):
        _key(keys, solo)
    for ident in CERTS:
        _cert(keys, ident)
    signers = root / "allowed_signers"
    signers.write_text(
        f"alice@example.com {alice}\nbob@ops.example.com {bob}\n"
        f"carol@ops.example.com {carol}\n"
        f"*@example.com,*@ops.example.com cert-authority {ca}\n"
    )
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in CERTS:
        lab.write(vid, plan_text(vid))
        _commit(lab, vid, AGENT, f"add {vid}")
    for vid in ["ctl", *CHECKS]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in [*CERTS, "ctl"]:
        who, key = APPROVER.get(vid, (ALICE, "alice"))
        lab.set_status(vid, "approved")
        _commit(lab, key, who, f"approve {vid}")
    lab.run()
    for vid in CHECKS:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.write(vid, "see the ticket\n", filename="NOTES.md")
        _commit(lab, vid.removeprefix("chk-"), AGENT, f"notes {vid}")
        lab.approve(vid, AGENT, f"ready {vid}")
        lab.git("checkout", "-q", "main")
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    checks = {}
    for vid in CHECKS:
        who, _ = APPROVER[vid.removeprefix("chk-")]
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", who[1], "--format", "json", cwd=clone,
        )  # fmt: skip
        assert "Traceback" not in out.stderr, out.stderr
        plans = {p["plan"]: p for p in json.loads(out.stdout)["plans"]}
        checks[vid] = plans[f"plans/{vid}"]["outcome"]
    lab.checks = checks  # type: ignore[attr-defined]
    for vid in CHECKS:
        who, key = APPROVER[vid.removeprefix("chk-")]
        _signed(lab, key, who, "merge", "-q", "--no-ff", "-m", f"merge {vid}", f"pr-{vid}")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r34-certwriters", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(list(CERTS)))
def test_the_key_holder_is_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(CHECKS))
def test_check_agrees_and_the_controller_refuses(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert lab.checks[vid] != "start", (lab.checks[vid], lab.codes(vid))  # type: ignore[attr-defined]
