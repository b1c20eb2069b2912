"""Round 37, self-approval through a signing key git does not accept for that commit.

docs/approvals.md (round 14): "A commit's good signature (git's ``%G?`` G or U) names the key
that made it, whatever names the commit carries"; "an approver whose key (by principal, alias
or pattern in that file) signed a commit that wrote or changed a plan's content ... cannot
approve it"; and (round 30) "For who wrote content none of these limits apply (an expired
certificate, like a retired key, still names its holder)". A listed key git refuses for the
commit in question (its line's ``namespaces`` or validity window) still proves who signed.

Config: ``require_signed``; ``allowed_signers``: Alice's git key; and per variant a second
key of Alice's on a line git refuses for the content commit:

- ``ns-file``: ``alice@example.com namespaces="file" <key>`` (her file-signing key).
- ``before-window``: ``alice@example.com valid-after="20200101" <key>``; her content commit
  is dated 2019-06-01 (``GIT_COMMITTER_DATE``/``GIT_AUTHOR_DATE``: her own clock).
- ``not-yet``: ``alice@example.com valid-after="20990101" <key>`` (a key scheduled for later).
- ``signed`` (control, round 14): the content commit signed with her git key.

Per variant the agent's plan ``plans/<vid>``; Alice edits a param in a commit made under the
agent's name, signed with the variant's key; the controller freezes; Alice approves, signed
with her git key. Asserted: ``E_SELF_APPROVAL``, ``rec`` never runs. ``ctl``: the agent's own
edit, Alice approves: runs once.

Results: every variant held (``E_SELF_APPROVAL``; the control ran once).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

VIDS = {
    "ns-file": 'namespaces="file"',
    "before-window": 'valid-after="20200101"',
    "not-yet": 'valid-after="20990101"',
    "signed": None,
}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _edit(lab: Lab, slug: str) -> None:
    text = lab.read(slug)
    lab.write(slug, text.replace('      tag: "', '      extra: "alice"\n      tag: "'))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    lines = [f"alice@example.com {_keygen(keys / 'alice')}"]
    for vid, opts in VIDS.items():
        if opts:
            lines.append(f"alice@example.com {opts} {_keygen(keys / vid)}")
    signers = root / "allowed_signers"
    signers.write_text("\n".join(lines) + "\n")
    lab.write_config(approval=f"require_signed: true\nallowed_signers: {signers}\n")
    for vid in [*VIDS, "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid, opts in VIDS.items():
        _edit(lab, vid)
        lab.git("add", "-A")
        key = vid if opts else "alice"
        if vid == "before-window":
            lab.extra_env = {
                "GIT_AUTHOR_DATE": "2019-06-01T00:00:00Z",
                "GIT_COMMITTER_DATE": "2019-06-01T00:00:00Z",
            }
        lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "-m", f"edit {vid}", who=AGENT)
        lab.extra_env = {}
    _edit(lab, "ctl")
    lab.commit("agent edits ctl", AGENT)
    lab.run()
    for vid in [*VIDS, "ctl"]:
        lab.set_status(vid, "approved")
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, "alice"), "commit", "-q", "-S", "-m", "alice approves", who=ALICE)
    lab.run()
    rows = lab.git("log", "--format=%H %G? %GK %GS %s", "-n", "12")
    (root / "sigs.txt").write_text(rows)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r37-keyscope", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in VIDS]
)
def test_the_key_holder_cannot_approve(lab: Lab, vid: str) -> None:
    sigs = (lab.root / "sigs.txt").read_text()
    assert "extra" in lab.read(vid)
    assert lab.calls(vid) == [], lab.codes(vid) + sigs
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid) + sigs


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")
