"""Round 23, ``plangate check`` under ``require_signed``: does its prediction of the merger's
signature read ``allowed_signers`` as git and ssh-keygen do?

Round 22's fix: ``check --as EMAIL`` predicts the merge signed "with a key
``allowed_signers`` lets them sign git commits with now". Config: ``require_signed: true``;
``allowed_signers`` has one line per merger, each with its own key:

- ``ctl``: ``alice@example.com KEY`` (control);
- ``ns-file``: ``dave@ops.example.com namespaces="file" KEY`` (the key signs files, not git);
- ``expired``: ``erin@ops.example.com valid-before="20200101" KEY``;
- ``future``: ``frank@ops.example.com valid-after="20990101" KEY``;
- ``negated``: ``*@ops.example.com,!gina@ops.example.com KEY`` (Gina's key, a pattern line that
  excludes her);
- ``ns-list``: ``hank@ops.example.com namespaces="file,git" KEY`` (allowed for git: control);
- ``case``: ``Ivan@OPS.Example.com KEY`` (the principal in other case);
- ``multi``: ``x@example.com,jane@ops.example.com KEY`` (Jane is the line's second principal);
- ``wild``: ``k*@ops.example.com KEY`` (Kate's key under a pattern principal);
- ``quoted``: ``"lena@ops.example.com" KEY`` (a quoted principal: control);
- ``alias-people``: ``o.smith@corp.example KEY``, with ``identity_aliases.people``
  ``[[olga@ops.example.com, o.smith@corp.example]]``; Olga merges;
- ``alias-plus``: ``pete+git@ops.example.com KEY`` (``plus_tags: ["*@ops.example.com"]``);
  Pete merges as ``pete@ops.example.com``;
- ``alias-rev``: ``pat@ops.example.com KEY``; Pat merges as ``pat+ci@ops.example.com``;
- ``opts``: ``mona@ops.example.com namespaces="git",valid-after="20200101" KEY`` (control).

For each: the agent's plan, frozen; a pull request in which the agent sets ``approved``; CI
runs ``plangate check --base main --head pr-<vid> --as <merger> --format json``; the merger
then merges ``--no-ff -S`` with that key; one controller pass.

Defence: ``check`` predicts ``start`` exactly when the controller started the plan.

Results: ``ctl``, ``ns-list``, ``case``, ``quoted``, ``opts`` and the three ``alias-*`` held
(check: start; the controller started them). Six BROKE (strict xfails): ``check`` said ``start``
("merge signature: assumed signed by <merger> with a key allowed_signers lists (SHA256:...)",
exit 0) while the controller refused the signed merge ``E_SIGNATURE_INVALID``: ``ns-file``
("Could not verify signature": git's namespace), ``expired`` and ``future`` (git verify-commit
refused outside the key's window), ``negated`` ("signed by *@ops.example.com but the approver
identity is gina@ops.example.com"), ``multi`` ("signed by x@example.com, who is not an
approver"), ``wild`` ("signed by k*@ops.example.com but the approver identity is
kate@ops.example.com"). ``check`` matches the merger against the file's principals without its
options (``namespaces``, ``valid-before``/``valid-after``), its negations, or the way the
controller reads multi-principal and pattern lines.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

MERGERS = {
    "ctl": ("alice@example.com", "alice@example.com {key}"),
    "ns-file": ("dave@ops.example.com", 'dave@ops.example.com namespaces="file" {key}'),
    "expired": ("erin@ops.example.com", 'erin@ops.example.com valid-before="20200101" {key}'),
    "future": ("frank@ops.example.com", 'frank@ops.example.com valid-after="20990101" {key}'),
    "negated": ("gina@ops.example.com", "*@ops.example.com,!gina@ops.example.com {key}"),
    "ns-list": ("hank@ops.example.com", 'hank@ops.example.com namespaces="file,git" {key}'),
    "case": ("ivan@ops.example.com", "Ivan@OPS.Example.com {key}"),
    "multi": ("jane@ops.example.com", "x@example.com,jane@ops.example.com {key}"),
    "wild": ("kate@ops.example.com", "k*@ops.example.com {key}"),
    "quoted": ("lena@ops.example.com", '"lena@ops.example.com" {key}'),
    "alias-people": ("olga@ops.example.com", "o.smith@corp.example {key}"),
    "alias-plus": ("pete@ops.example.com", "pete+git@ops.example.com {key}"),
    "alias-rev": ("pat+ci@ops.example.com", "pat@ops.example.com {key}"),
    "opts": (
        "mona@ops.example.com",
        'mona@ops.example.com namespaces="git",valid-after="20200101" {key}',
    ),
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = root / "keys"
    keys.mkdir()
    lines = []
    for vid, (_, line) in MERGERS.items():
        lines.append(line.format(key=_keygen(keys / vid)))
    signers = root / "allowed_signers"
    signers.write_text("\n".join(lines) + "\n")
    lab.write_config(
        approval=f"require_signed: true\nallowed_signers: {signers}\n"
        "identity_aliases:\n"
        '  plus_tags: ["*@ops.example.com"]\n'
        "  people: [[olga@ops.example.com, o.smith@corp.example]]\n"
    )
    g = lab.git
    for vid in MERGERS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    checks: dict[str, Any] = {}
    for vid, (email, _) in MERGERS.items():
        merger = (vid, email)
        g("checkout", "-q", "-b", f"pr-{vid}")
        lab.set_status(vid, "approved")
        lab.commit(f"agent sets approved {vid}", AGENT)
        g("checkout", "-q", "main")
        result = lab.cli(
            "check", "--config", str(lab.config), "--base", "main", "--head", f"pr-{vid}",
            "--as", email, "--format", "json", cwd=lab.repo,
        )  # fmt: skip
        assert "Traceback" not in result.stderr, result.stderr[-2000:]
        rows = [p for p in json.loads(result.stdout)["plans"] if p.get("plan") == f"plans/{vid}"]
        checks[vid] = rows[0] if rows else {"raw": result.stdout[-2000:]}
        g(*_sign_args(lab, vid), "merge", "--no-ff", "-S", "-q", "-m", f"merge pr-{vid}",
          f"pr-{vid}", who=merger)  # fmt: skip
    lab.run()
    (lab.root / "checks.json").write_text(json.dumps(checks))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-checksigners", _build)


#: What round 23 found (fixed: check predicts the signer git names for the merger's key).
FOUND = {
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 23: under require_signed, plangate check --as predicts the merge signed "
        f"by a key allowed_signers lists ({why}), but the controller refuses the merge signed "
        "with it (E_SIGNATURE_INVALID)",
    )
    for vid, why in {
        "ns-file": 'namespaces="file"',
        "expired": "valid-before in the past",
        "future": "valid-after in the future",
        "negated": "a pattern line that negates the merger",
        "multi": "the merger as a line's second principal",
        "wild": "the merger under a pattern principal",
    }.items()
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in MERGERS]
)
def test_check_predicts_the_controllers_verdict(lab: Lab, vid: str) -> None:
    check = json.loads((lab.root / "checks.json").read_text())[vid]
    ran = len(lab.calls(vid))
    assert ran == int(lab.started(vid)), lab.codes(vid)
    assert (check.get("outcome") == "start") == lab.started(vid), (check, lab.codes(vid))
