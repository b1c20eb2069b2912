"""Round 30, self-approval under ``require_signed``: a key listed in ``allowed_signers`` in a
spelling ssh-keygen and git accept, used by Alice to sign the agent's content.

Config: the bench's (approvers Alice and ``*@ops.example.com``), ``require_signed: true``,
``allowed_signers``: Alice's approving key ``alice`` on a plain line, and one more key of hers
per variant, on a line spelled as below. The agent's commit adding the variant's plan is
signed with that key (author and committer the agent); the controller freezes; Alice approves
signed with ``alice``.

- ``quoted``: the principal in double quotes (``"alice@example.com" <key>``).
- ``tab``: fields separated by a tab.
- ``optcase``: an option in capitals (``NAMESPACES="git"``: ssh matches option names
  case-insensitively).
- ``crlf``: the line ends in CR LF.
- ``lead``: the line starts with blanks.
- ``upper``: the principal in capitals (``ALICE@EXAMPLE.COM``).
- ``plain``: control: the key on a plain line.

And a principal that is Alice by the config's ``identity_aliases`` (``plus_tags:
["*@example.com"]``, ``people: [[alice@example.com, a.smith@corp.example]]``) or by the
address rules: ``plus`` (``alice+sign@example.com``), ``people``
(``a.smith@corp.example``), ``fullwidth`` (``\uff41lice@example.com``), ``comment``
(``alice(laptop)@example.com``): git names that principal (not asserted).

Each variant first checks that git itself names Alice (``%G?`` ``G``, ``%GS`` her address
in any case) for the content commit (``git-<v>``), so the spelling is one git accepts.
Defence: ``E_SELF_APPROVAL`` (a key that signed the content names its holder whatever the
spelling of its line); ``rec`` never runs. ``ctl``: the agent's unsigned plan, approved by
Alice: runs once.

``w-alias``: ``people`` also holds ``[agent@example.com, agent.bot@corp.example]`` and the
agent's key is listed for ``agent.bot@corp.example``; the agent rejects its pending plan,
signed with that key (author the agent); Alice approves. Defence: the author's signed
withdrawal counts; ``rec`` never runs.

Results: every variant held (git names Alice for each spelling; ``E_SELF_APPROVAL`` for
every variant, the alias and address spellings too; ``w-alias`` stays ``rejected``, Alice's
approval ``E_ILLEGAL_TRANSITION``; ``ctl`` ran once).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["quoted", "tab", "optcase", "crlf", "lead", "upper", "plain"]
SPELLED = ["plus", "people", "fullwidth", "comment"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _key(keys: Path, name: str) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(keys / name)],
        check=True,
        capture_output=True,
    )
    return (keys / f"{name}.pub").read_text().strip()


def _line(vid: str, key: str) -> str:
    return {
        "quoted": f'"alice@example.com" {key}\n',
        "tab": f"alice@example.com\t{key}\n",
        "optcase": f'alice@example.com NAMESPACES="git" {key}\n',
        "crlf": f"alice@example.com {key}\r\n",
        "lead": f"   alice@example.com {key}\n",
        "upper": f"ALICE@EXAMPLE.COM {key}\n",
        "plain": f"alice@example.com {key}\n",
        "plus": f"alice+sign@example.com {key}\n",
        "people": f"a.smith@corp.example {key}\n",
        "fullwidth": f"\uff41lice@example.com {key}\n",
        "comment": f"alice(laptop)@example.com {key}\n",
    }[vid]


def _commit(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    lab.git("add", "-A")
    path = lab.root / "keys" / key
    lab.git(
        "-c", "gpg.format=ssh", "-c", f"user.signingkey={path}",
        "commit", "-q", "-S", "--allow-empty", "-m", message, who=who,
    )  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    text = f"alice@example.com {_key(keys, 'alice')}\n"
    for vid in [*VIDS, *SPELLED]:
        text += _line(vid, _key(keys, f"k-{vid}"))
    text += f"agent.bot@corp.example {_key(keys, 'k-agent')}\n"
    signers = root / "allowed_signers"
    signers.write_bytes(text.encode())
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        "identity_aliases:\n"
        '  plus_tags: ["*@example.com"]\n'
        "  people: [[alice@example.com, a.smith@corp.example],"
        " [agent@example.com, agent.bot@corp.example]]\n"
    )
    shows = {}
    for vid in [*VIDS, *SPELLED]:
        lab.write(vid, plan_text(vid))
        _commit(lab, f"k-{vid}", AGENT, f"add {vid}")
        shows[vid] = lab.git(
            "-c", f"gpg.ssh.allowedSignersFile={signers}", "log", "-1", "--format=%G? %GS"
        ).strip()
    lab.shows = shows  # type: ignore[attr-defined]
    lab.write("ctl", plan_text("ctl"))
    lab.write("w-alias", plan_text("w-alias"))
    lab.commit("add ctl", AGENT)
    lab.run()
    lab.set_status("w-alias", "rejected")
    _commit(lab, "k-agent", AGENT, "the agent withdraws w-alias")
    lab.run()
    for vid in [*VIDS, *SPELLED, "ctl", "w-alias"]:
        lab.set_status(vid, "approved")
        _commit(lab, "alice", ALICE, f"approve {vid}")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r30-signerlines", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p([f"git-{v}" for v in VIDS]))
def test_git_names_alice(lab: Lab, vid: str) -> None:
    assert lab.shows[vid.removeprefix("git-")].lower() == "g alice@example.com"  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p([*VIDS, *SPELLED]))
def test_the_key_names_its_holder(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


def test_an_authors_withdrawal_signed_with_her_aliased_key_counts(lab: Lab) -> None:
    assert lab.calls("w-alias") == [], lab.codes("w-alias")
