"""Round 6, approval side: ``plangate approve --sign`` in the checkout the agent shares.

With ``require_signed`` an approval counts only when signed by the approver's key: forged
authorship is no longer enough, so the agent needs Alice's key. In local mode the agent
writes ``.git/config`` (docs/threat-model.md, "The shared .git"). The controller pins every
program setting, but ``plangate approve`` "run by a person in their own clone" takes signing
settings from that clone's config "as git would". An approver who runs ``plangate approve
--sign`` in the shared checkout (round 5 tried hooks there: off) then runs the program the
agent named in ``gpg.ssh.program``, as herself, with her key in reach.

- ``signprog``: the agent sets ``gpg.ssh.program`` in ``.git/config`` to its script, which
  copies the key file ``ssh-keygen -Y sign -f KEY`` is given and then signs as asked (Alice
  sees a normal approval). Alice approves ``plans/victim`` with ``plangate approve --sign``.
  The agent then signs, with the copy, a commit as Alice that approves ``plans/evil``.

Defence: the agent's program never runs for Alice, and ``plans/evil`` never runs.
Control: ``plans/victim`` (Alice's real signed approval) runs.
"""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, identity, plan_text
from test_round2_approval_authors import shared_lab

SCRIPT = """#!/bin/sh
prev=""
for a in "$@"; do
  if [ "$prev" = "-f" ] && [ -f "$a" ]; then cp "$a" "{stolen}"; chmod 600 "{stolen}"; fi
  prev="$a"
done
echo ran >> "{ran}"
exec ssh-keygen "$@"
"""


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    keys = root / "keys"
    keys.mkdir()
    pub = _keygen(keys / "alice")
    signers = root / "allowed_signers"
    signers.write_text(f"alice@example.com {pub}\n")
    lab = Lab(root, approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in ("victim", "evil"):
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freeze
    # the agent's program, named in the shared checkout's .git/config
    script = root / "agent-sign.sh"
    script.write_text(SCRIPT.format(stolen=root / "stolen_key", ran=root / "agent-ran.log"))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    lab.git("config", "gpg.ssh.program", str(script))
    # Alice approves the plan she reviewed, signed, with her own settings
    env = lab.env()
    env.update(
        identity(ALICE),
        GIT_CONFIG_COUNT="2",
        GIT_CONFIG_KEY_0="gpg.format",
        GIT_CONFIG_VALUE_0="ssh",
        GIT_CONFIG_KEY_1="user.signingKey",
        GIT_CONFIG_VALUE_1=str(keys / "alice"),
    )
    env["REC_LOG"] = str(lab.log)
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller",
            "approve",
            "--sign",
            "--config",
            str(lab.config),
            "plans/victim",
        ],
        cwd=lab.repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    (root / "approve.out").write_text(f"{out.returncode}\n{out.stdout}\n{out.stderr}")
    # the agent signs an approval of plans/evil as Alice with whatever it took
    lab.set_status("evil", "approved")
    lab.git("add", "-A")
    stolen = root / "stolen_key"
    sign = ["-c", "gpg.ssh.program=ssh-keygen"]
    if stolen.exists():
        sign += ["-c", "gpg.format=ssh", "-c", f"user.signingKey={stolen}"]
        lab.git(*sign, "commit", "-q", "-S", "-m", "approve plans/evil", who=ALICE)
    else:
        lab.git(*sign, "commit", "-q", "-m", "approve plans/evil", who=ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r6-signprog", _build)


def test_alices_signed_approval_runs_what_she_approved(lab: Lab) -> None:
    assert len(lab.calls("victim")) == 1, (lab.root / "approve.out").read_text() + lab.codes(
        "victim"
    )


def test_the_agents_program_never_signs_for_alice(lab: Lab) -> None:
    assert not (lab.root / "agent-ran.log").exists(), "the agent's gpg.ssh.program ran as Alice"
    assert not (lab.root / "stolen_key").exists(), "the agent copied Alice's key"


def test_a_plan_alice_never_approved_never_runs(lab: Lab) -> None:
    assert lab.calls("evil") == [], lab.codes("evil")
    assert not lab.started("evil"), lab.codes("evil")
