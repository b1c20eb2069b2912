# ruff: noqa: E501  (attack steps read best on one line)
"""Round 19, who may make a plan run: does ``plangate check`` on a CI clone reach the
controller's verdict when the clone or the history is not what the controller reads?

docs/approvals.md (``plangate check``): check "decides with the controller's own function, so
the prediction is the controller's decision for the history as it is now". The controller and
the audit refuse a shallow clone (``E_GIT``: "history cut off cannot say who wrote what"), and
the audit flags every unsigned commit claiming the controller's identity (``forged-controller``)
under ``require_signed``. Accepted limits list only the state directory's knowledge (held,
executed, withdrawn/self under another name) as what check cannot see.

Config: ``require_signed: true``; ``allowed_signers``: the controller's key (it signs every
commit: ``commit.gpgSign`` in its environment), Bob's and Carol's; ``plans/two/**`` needs two
approvals, any other plan one. The agent merges each pull request (``--no-ff``, unsigned): it is
no approver, so only signed ``Plan-Approved:`` trailer commits inside the branch count. CI runs
``plangate check --base origin/main --head origin/pr-<v> --as agent@example.com`` in a clone,
with a copy of the config; then the branch is merged and the controller passes.

- ``forged-vote``: Bob's real signed approval of ``plans/two/real`` is collected (``partial``).
  The agent then commits, *unsigned* under the controller's identity, a copy of that
  ``plangate: partial`` commit for ``plans/two/f`` (its ``approval:`` block lists Bob's vote,
  citing Bob's real commit). Its pull request adds Carol's signed trailer for ``f`` and sets
  ``approved``. Defence: check predicts no start (one real vote), as the controller decides.
- ``shallow``: Bob wrote ``plans/mine`` (the controller froze it); noise commits follow. Its
  pull request adds Bob's own signed trailer for ``mine``; CI checks in a ``--depth 3`` clone.
  Defence: check refuses the shallow clone (``E_GIT``) as the audit does, or predicts
  ``E_SELF_APPROVAL``; never ``start``.
- ``full``: the same pull request (for ``plans/mine2``, also Bob's) checked in a full clone
  (control: refuse, ``E_SELF_APPROVAL``).
- ``blobless``: the same in a ``--filter=blob:none`` partial clone (lazy fetches): refuse.

Controller side (held in every variant): nothing of ``f``, ``mine`` or ``mine2`` runs; ``f``
stays ``partial`` with Carol's vote only; the audit of a fresh clone flags the forged commit
``forged-controller``.

Results: ``forged-vote`` BROKE: check counted the forged vote (``counted``: bob, carol) and
predicted ``start``; the controller recorded ``partial`` (Carol only, ``1 more approval``).
``shallow`` BROKE: check ran in the shallow clone (no ``E_GIT``), did not see that Bob wrote
the plan and predicted ``start`` with Bob's trailer counted; the controller refused
(``E_SELF_APPROVAL``). ``full`` and ``blobless`` held.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, BOB, BOT, CAROL, Lab, plan_text
from test_round2_execution_kit import shared
from test_round3_approve_signers import _keygen, _sign_args

RULE = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
VIDS = ["forged-vote", "shallow", "full", "blobless"]
#: round 19: both broke; fixed since: check refuses a shallow clone (E_GIT) and, under
#: require_signed, counts as the controller's only the commits it signed
FOUND = {
    "forged-vote": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 19: under require_signed, plangate check counts a vote from an unsigned commit claiming the controller's identity (a forged `plangate: partial`) and predicts start where the controller stays partial",
    ),
    "shallow": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 19: plangate check runs in a shallow clone (the controller and audit refuse one with E_GIT) and, not seeing who wrote the plan, predicts start where the controller refuses E_SELF_APPROVAL",
    ),
}
BROKEN: dict[str, object] = {}


def _bot_env(keys: Path) -> dict[str, str]:
    pairs = [
        ("commit.gpgSign", "true"),
        ("user.signingKey", str(keys / "bot")),
        ("gpg.format", "ssh"),
    ]
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for n, (k, v) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{n}"] = k
        env[f"GIT_CONFIG_VALUE_{n}"] = v
    return env


def _run(lab: Lab) -> None:
    lab.extra_env = _bot_env(lab.root / "keys")  # type: ignore[attr-defined]
    try:
        lab.run()
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def _trailer(lab: Lab, slug: str, key: str, who: tuple[str, str]) -> None:
    h = lab.plan(slug)["frozen"]["hash"]
    msg = f"approve plans/{slug} (trailer)\n\nPlan-Approved: plans/{slug} {h}"
    lab.git(*_sign_args(lab, key), "commit", "-q", "-S", "--allow-empty", "-m", msg, who=who)


def _pr(lab: Lab, vid: str, slug: str, key: str, who: tuple[str, str]) -> None:
    lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
    _trailer(lab, slug, key, who)
    lab.set_status(slug, "approved")
    lab.commit(f"agent sets {slug} approved", AGENT)
    lab.git("checkout", "-q", "main")


def _forge_partial(lab: Lab) -> None:
    """Copy the controller's ``partial`` commit of ``two/real`` onto ``two/f``, unsigned."""
    real = lab.git("log", "-1", "--format=%B", "main")
    fh = lab.plan("two/f")["frozen"]["hash"]
    rh = lab.plan("two/real")["approval"]["plan_hash"]
    text = lab.read("two/real")
    lines = text[text.index("\napproval:") + 1 :].split("\n")
    block = [lines[0]] + [line for line in lines[1:] if line.startswith(" ")]
    lab.write(
        "two/f", lab.read("two/f").rstrip("\n") + "\n" + "\n".join(block).replace(rh, fh) + "\n"
    )
    lab.git("add", "-A")
    msg = real.replace("plans/two/real", "plans/two/f").replace(rh, fh)
    lab.git("-c", "commit.gpgsign=false", "commit", "-q", "-m", msg, who=BOT)


def _clone(lab: Lab, name: str, *opts: str) -> tuple[Path, Path]:
    dest = lab.root / name
    subprocess.run(
        [
            "git",
            "clone",
            "-q",
            "--no-local",
            "--no-single-branch",
            *opts,
            f"file://{lab.repo}",
            str(dest),
        ],
        check=True,
        env=lab.env(),
        capture_output=True,
    )
    cfg = lab.root / f"{name}.yml"
    text = lab.config.read_text().replace(f"repo: {lab.repo}", f"repo: {dest}")
    cfg.write_text(
        text.replace(f"state_dir: {lab.state}", f"state_dir: {lab.root / ('ci-' + name)}")
    )
    return dest, cfg


def _check(lab: Lab, vid: str, clone: str, *opts: str) -> dict[str, Any]:
    dest, cfg = _clone(lab, clone, *opts)
    r = lab.cli(
        "--config",
        str(cfg),
        "check",
        "--base",
        "origin/main",
        "--head",
        f"origin/pr-{vid}",
        "--as",
        AGENT[1],
        "--format",
        "json",
        cwd=dest,
    )
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    try:
        return {"rc": r.returncode, **json.loads(r.stdout)}
    except ValueError:
        return {"rc": r.returncode, "raw": r.stdout, "stderr": r.stderr[-800:]}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.git("config", "uploadpack.allowFilter", "true")
    keys = root / "keys"
    keys.mkdir()
    k = {n: _keygen(keys / n) for n in ("bot", "bob", "carol")}
    signers = root / "allowed_signers"
    signers.write_text(f"{BOT[1]} {k['bot']}\n{BOB[1]} {k['bob']}\n{CAROL[1]} {k['carol']}\n")
    lab.write_config(approval=f"allowed_signers: {signers}\nrequire_signed: true\n" + RULE)
    for slug in ("two/f", "two/real"):
        lab.write(slug, plan_text(slug.split("/")[-1]))
        lab.commit(f"agent adds {slug}", AGENT)
    for slug in ("mine", "mine2"):
        lab.write(slug, plan_text(slug))
        lab.commit(f"bob writes {slug}", BOB)
    _run(lab)
    lab.set_status("two/real", "approved")
    lab.git("add", "-A")
    lab.git(*_sign_args(lab, "bob"), "commit", "-q", "-S", "-m", "approve two/real", who=BOB)
    _run(lab)  # partial: Bob's vote for two/real
    _forge_partial(lab)
    for n in range(4):
        (lab.repo / "README").write_text(f"noise {n}\n")
        lab.commit(f"noise {n}", AGENT)
    _run(lab)
    _pr(lab, "forged-vote", "two/f", "carol", CAROL)
    _pr(lab, "shallow", "mine", "bob", BOB)
    _pr(lab, "full", "mine2", "bob", BOB)
    _pr(lab, "blobless", "mine2", "bob", BOB)
    lab.checks = {  # type: ignore[attr-defined]
        "forged-vote": _check(lab, "forged-vote", "c-forged"),
        "shallow": _check(lab, "shallow", "c-shallow", "--depth", "3"),
        "full": _check(lab, "full", "c-full"),
        "blobless": _check(lab, "blobless", "c-blobless", "--filter=blob:none"),
    }
    for vid in ("forged-vote", "shallow", "full"):
        lab.git("merge", "-q", "--no-ff", "-m", f"merge pr-{vid}", f"pr-{vid}", who=AGENT)
        _run(lab)
    dest = root / "audit-clone"
    subprocess.run(
        ["git", "clone", "-q", str(lab.repo), str(dest)],
        check=True,
        env=lab.env(),
        capture_output=True,
    )
    result = lab.cli("audit", "--json", cwd=dest)
    lab.audit_report = json.loads(result.stdout)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r19-checktrust", _build)


SLUG = {"forged-vote": "two/f", "shallow": "mine", "full": "mine2", "blobless": "mine2"}


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_check_predicts_what_the_controller_decides(lab: Lab, vid: str) -> None:
    report = lab.checks[vid]  # type: ignore[attr-defined]
    if report.get("code") == "E_GIT":
        return  # refused the clone, as the audit does
    rows = [p for p in report.get("plans", []) if p["plan"] == f"plans/{SLUG[vid]}"]
    assert rows, report
    assert rows[0]["outcome"] != "start", (
        f"check predicts a start the controller refuses: {rows[0]}"
    )


@pytest.mark.parametrize("vid", ["forged-vote", "shallow", "full"])
def test_the_controller_runs_nothing(lab: Lab, vid: str) -> None:
    tag = SLUG[vid].split("/")[-1]
    assert lab.calls(tag) == [], lab.codes(SLUG[vid])
    if vid == "forged-vote":
        votes = [a["by"] for a in lab.plan("two/f")["approval"].get("approvals", [])]
        assert votes == [CAROL[1]], lab.codes("two/f")
    else:
        assert not lab.started(SLUG[vid]), lab.codes(SLUG[vid])


def test_the_audit_flags_the_forged_controller_commit(lab: Lab) -> None:
    findings = lab.audit_report["findings"]  # type: ignore[attr-defined]
    assert any(
        f.get("kind") == "forged-controller" and f.get("plan") == "plans/two/f" for f in findings
    ), findings
