"""Round 2, approval side: a quorum is met only by enough distinct allowed people, for this
version, by the rule the plan really falls under (SPEC §11).

Rules in the config (first match decides): ``plans/two/**`` needs two approvals;
``plans/grp/**`` one from ops and one from security (Alice is in both, Mallory is in security
but no approver); risk high needs two; a plan calling the check tool ``peek`` needs two.

Attacks: the same person twice (upper case, ``+tag``, a declared second address, a signed
``Plan-Approved:`` trailer commit plus her own merge); one person filling two entries; a
group member who is no approver; a partial approval surviving a change of the content (the
next approval of the new version; the agent freezing its edit itself and the approval landing
in the same push; the content changed and changed back); forged votes (a human writing the
``approval:`` partial block; a commit under the controller's identity, one-plan and batched,
recording a partial vote of Alice's); a trailer commit signed by Alice that also writes the
content it approves; and risk or tools hidden from the rule (a high-risk tool only in a
fallback, or in a nested plan's action or fallback; the ``peek`` tool only in checks, in a
nested plan's checks or plan preconditions). Defence: the plan never starts, nothing runs.
Controls: honest quorums run once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, BOT, MALLORY, Lab, cases, identity, plan_text, play
from test_round2_approval_authors import shared_lab

Step = Callable[[Lab, str], None]
SEC = ("Sec", "sec@example.com")

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
  security: ["sec@example.com", "alice@example.com", "mallory@example.com"]
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@corp.example]]
allowed_signers: {signers}
rules:
  - match: {{paths: ["plans/two/**"]}}
    require: [{{count: 2}}]
  - match: {{paths: ["plans/grp/**"]}}
    require: [{{group: ops, count: 1}}, {{group: security, count: 1}}]
  - match: {{risk: high}}
    require: [{{count: 2}}]
  - match: {{tools: [peek]}}
    require: [{{count: 2}}]
"""


def tools(lab: Lab) -> str:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = json.dumps(str(lab.log))
    return (
        f"danger: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: high}}\n"
        f"peek: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: low,"
        " idempotent: true}\n"
    )


# -- plan texts ------------------------------------------------------------------------------

CHECK = '{{tool: peek, params: {{tag: "{tag}-check"}}, expect: {{path: $.json.ok, equals: true}}}}'


def text_for(slug: str, kind: str, pin: str = "") -> str:
    """The plan of variant ``kind`` (tag = slug)."""
    base = plan_text(slug, params="note: v1\n")
    tools_block = "available_tools:\n  - name: rec\n"
    if kind == "plain":
        return base
    if kind == "danger":
        return base.replace("tool: rec", "tool: danger").replace(
            tools_block, "available_tools:\n  - name: danger\n"
        )
    if kind == "fallback":
        return base.replace(tools_block, tools_block + "  - name: danger\n") + (
            "    on_failure: fallback\n    fallback:\n"
            f'      - {{id: "1.1", tool: danger, why: "undo", params: {{tag: "{slug}-fb"}}}}\n'
        )
    if kind == "precondition":
        return base.replace(tools_block, tools_block + "  - name: peek\n") + (
            f"    preconditions:\n      - {CHECK.format(tag=slug)}\n"
        )
    if kind == "verify":
        return base.replace(tools_block, tools_block + "  - name: peek\n") + (
            f'    verify: {{tool: peek, params: {{tag: "{slug}-check"}},'
            " expect: {path: $.json.ok, equals: true}, timeout: 5, interval: 1}\n"
        )
    if kind == "plan-precondition":
        return base.replace(tools_block, tools_block + "  - name: peek\n").replace(
            "actions:\n",
            "preconditions:\n  - " + CHECK.format(tag=slug) + "\nactions:\n",
        )
    if kind == "nested":
        return base + (
            f'  - id: 2\n    plan: {{path: plans/{slug}-lib, hash: "{pin}"}}\n'
            '    why: "run the library"\n'
        )
    raise AssertionError(kind)


def lib_text(slug: str, kind: str) -> str:
    """The nested library plan: ``kind`` as in :func:`text_for`, status draft."""
    return text_for(slug + "-lib", kind).replace("status: pending_approval", "status: draft")


# -- steps -----------------------------------------------------------------------------------


def submit(kind: str = "plain") -> Step:
    def step(lab: Lab, slug: str) -> None:
        if kind.startswith("nested-"):
            lab.write(f"{slug}-lib", lib_text(slug, kind.removeprefix("nested-")))
            lab.commit(f"library for {slug}", AGENT)
            pin = lab.cli("hash", str(lab.repo / "plans" / f"{slug}-lib")).stdout.strip()
            assert pin.startswith("sha256:"), pin
            lab.write(slug, text_for(slug, "nested", pin))
        else:
            lab.write(slug, text_for(slug, kind))
        lab.commit(f"add {slug}", AGENT)

    return step


def approve(who: tuple[str, str]) -> Step:
    def step(lab: Lab, slug: str) -> None:
        lab.approve(slug, who)

    return step


def bump(lab: Lab, slug: str, value: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text(encoding="utf-8")
    start = text.index("      note: ")
    end = text.index("\n", start)
    path.write_text(text[:start] + f"      note: {value}" + text[end:], encoding="utf-8")


def edit(value: str) -> Step:
    def step(lab: Lab, slug: str) -> None:
        bump(lab, slug, value)
        lab.commit(f"edit {slug} ({value})", AGENT)

    return step


def edit_freeze_and_approve(lab: Lab, slug: str) -> None:
    """In one push: the agent edits and freezes the new version itself, then Bob approves."""
    bump(lab, slug, "v2")
    frozen = lab.cli("freeze", str(lab.repo / "plans" / slug))
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    lab.commit(f"edit and freeze {slug}", AGENT)
    lab.approve(slug, BOB)


def alice_commit(lab: Lab) -> str:
    (lab.repo / "README-alice").write_text(f"alice was here {lab.head()}\n")
    return lab.commit("alice tidies the README", ALICE)


def _partial_block(lab: Lab, slug: str, commit: str) -> str:
    frozen_hash = lab.plan(slug)["frozen"]["hash"]
    return (
        "approval:\n  status: partial\n"
        f"  plan_hash: {frozen_hash}\n"
        f"  approvals:\n  - by: alice@example.com\n    at: '2026-11-25T12:00:00Z'\n"
        f"    commit: {commit}\n"
        "  missing: 1 more approval\n"
    )


def forge_partial(style: str) -> Step:
    """A partial vote of Alice's that Alice never cast, written into the plan."""

    def step(lab: Lab, slug: str) -> None:
        commit = alice_commit(lab)
        frozen_hash = lab.plan(slug)["frozen"]["hash"]
        path = lab.repo / "plans" / slug / "PLAN.yml"
        text = path.read_text().split("\napproval:")[0].rstrip("\n") + "\n"
        path.write_text(text + _partial_block(lab, slug, commit))
        lab.git("add", "-A")
        if style == "human":
            lab.git("commit", "-q", "-m", f"note alice's vote on {slug}", who=AGENT)
            return
        freeze = next(
            r for r in lab.log_rows("%H%x00%B%x01") if r[1].startswith("plangate: freeze")
        )
        controller = next(
            (ln.split(": ", 1)[1] for ln in freeze[1].splitlines() if ln.startswith("Controller")),
            "vm/00000000",
        )
        if style == "controller":
            message = (
                f"plangate: partial plans/{slug}\n\n"
                "1 approval(s); still needs 1 more approval\n\n"
                f"Plan: plans/{slug}\nPlan-Hash: {frozen_hash}\n"
                f"Plan-Status: pending_approval\nController: {controller}\n"
            )
        else:
            message = (
                "plangate: 1 plan events\n\n"
                f"Plan: plans/{slug}\nPlan-Event: partial\nPlan-Hash: {frozen_hash}\n"
                "Plan-Status: pending_approval\n"
                "Plan-Note: 1 approval(s); still needs 1 more approval\n"
                f"Controller: {controller}\n"
            )
        lab.git("commit", "-q", "-m", message, who=BOT)

    return step


# -- signed trailer commits on a review branch -----------------------------------------------


def _keygen(path: Path) -> str:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", path.name, "-f", str(path)],
        check=True,
        capture_output=True,
    )
    return path.with_suffix(".pub").read_text().strip()


def signed_commit(lab: Lab, key: str, who: tuple[str, str], message: str) -> None:
    keyfile = lab.root / "keys" / key
    args = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={keyfile}"]
    lab.git("add", "-A")
    lab.git(*args, "commit", "-q", "--allow-empty", "-S", "-m", message, who=who)


def pr(
    trailers: list[tuple[str, tuple[str, str]]], merger: tuple[str, str], content: bool = False
) -> Step:
    """A review branch: each (key, author) signs an empty ``Plan-Approved:`` commit (with
    ``content``, the first one also changes the plan and freezes the new version), the agent
    sets ``approved``, ``merger`` merges it with a merge commit."""

    def step(lab: Lab, slug: str) -> None:
        lab.git("checkout", "-q", "-b", f"{slug}-review")
        for index, (key, who) in enumerate(trailers):
            if content and index == 0:
                bump(lab, slug, "v2-signed")
                frozen = lab.cli("freeze", str(lab.repo / "plans" / slug))
                assert frozen.returncode == 0, frozen.stdout + frozen.stderr
            frozen_hash = lab.cli("hash", str(lab.repo / "plans" / slug)).stdout.strip()
            signed_commit(
                lab,
                key,
                who,
                f"approve plans/{slug} (trailer)\n\nPlan-Approved: plans/{slug} {frozen_hash}",
            )
        lab.set_status(slug, "approved")
        lab.commit(f"request {slug}", AGENT)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "--no-edit", f"{slug}-review", who=merger)

    return step


def tool_trailer_then_merge(lab: Lab, slug: str) -> None:
    """Control: ``plangate approve --trailer`` by Alice, then Bob merges."""
    lab.git("checkout", "-q", "-b", f"{slug}-review")
    key = lab.root / "keys" / "alice"
    lab.extra_env = {  # type: ignore[attr-defined]
        **identity(ALICE),
        "GIT_CONFIG_COUNT": "2",
        "GIT_CONFIG_KEY_0": "gpg.format",
        "GIT_CONFIG_VALUE_0": "ssh",
        "GIT_CONFIG_KEY_1": "user.signingKey",
        "GIT_CONFIG_VALUE_1": str(key),
    }
    try:
        out = lab.cli("approve", "--trailer", f"plans/{slug}", cwd=lab.repo)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    assert out.returncode == 0, out.stdout + out.stderr
    lab.set_status(slug, "approved")
    lab.commit(f"request {slug}", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", f"{slug}-review", who=BOB)


A_SMITH = ("A. Smith", "a.smith@corp.example")
ATTACKS: dict[str, list[Step | None]] = {
    # the same person twice
    "two/same-upper": [submit(), approve(ALICE), approve(("Alice", "ALICE@EXAMPLE.COM"))],
    "two/same-plus-tag": [submit(), approve(ALICE), approve(("Alice", "alice+2@example.com"))],
    "two/same-declared-alias": [submit(), approve(ALICE), approve(A_SMITH)],
    "two/same-alias-then-upper": [
        submit(),
        approve(A_SMITH),
        approve(("Alice", "Alice+x@Example.COM")),
    ],
    "two/trailer-and-own-merge": [submit(), pr([("alice", ALICE)], ALICE)],
    "two/trailer-as-other-author-and-own-merge": [submit(), pr([("alice", BOB)], ALICE)],
    "two/two-trailers-one-signer": [
        submit(),
        pr([("alice", ALICE), ("alice", ("Alice", "alice+pr@example.com"))], MALLORY),
    ],
    # a trailer commit that writes the content it approves
    "two/signed-trailer-writes-content": [
        submit(),
        pr([("alice", AGENT)], BOB, content=True),
    ],
    "two/signed-trailer-writes-content-as-herself": [
        submit(),
        pr([("alice", ALICE)], BOB, content=True),
    ],
    # votes for another version
    "two/vote-survives-edit": [submit(), approve(ALICE), edit("v2"), approve(BOB)],
    "two/vote-survives-self-freeze": [submit(), approve(ALICE), edit_freeze_and_approve],
    "two/vote-survives-edit-and-back": [
        submit(),
        approve(ALICE),
        edit("v2"),
        edit("v1"),
        approve(BOB),
    ],
    # forged votes
    "two/forged-block-by-agent": [submit(), forge_partial("human"), approve(BOB)],
    "two/forged-partial-as-controller": [submit(), forge_partial("controller"), approve(BOB)],
    "two/forged-partial-batched": [submit(), forge_partial("batched"), approve(BOB)],
    # groups
    "grp/one-person-both-entries": [submit(), approve(ALICE)],
    "grp/member-not-approver": [submit(), approve(MALLORY), approve(BOB)],
    # risk and tools hidden from the rule (only Alice approves)
    "high/fallback-only": [submit("fallback"), approve(ALICE)],
    "high/nested-action": [submit("nested-danger"), approve(ALICE)],
    "high/nested-fallback": [submit("nested-fallback"), approve(ALICE)],
    "peek/precondition": [submit("precondition"), approve(ALICE)],
    "peek/verify": [submit("verify"), approve(ALICE)],
    "peek/plan-precondition": [submit("plan-precondition"), approve(ALICE)],
    "peek/nested-precondition": [submit("nested-precondition"), approve(ALICE)],
    "peek/nested-verify": [submit("nested-verify"), approve(ALICE)],
    "peek/nested-plan-precondition": [submit("nested-plan-precondition"), approve(ALICE)],
}
BROKEN: dict[str, object] = {}

CONTROLS: dict[str, list[Step | None]] = {
    "two/honest": [submit(), approve(ALICE), approve(BOB)],
    "two/honest-trailer": [submit(), pr([("alice", ALICE)], BOB)],
    "two/honest-approve-trailer-tool": [submit(), tool_trailer_then_merge],
    "grp/honest": [submit(), approve(BOB), approve(ALICE)],
    "high/honest": [submit("danger"), approve(ALICE), approve(BOB)],
    "peek/honest": [submit("precondition"), approve(ALICE), approve(BOB)],
}
#: a sanity check that the rules bite at all: a high-risk action with one approval waits
SANITY: dict[str, list[Step | None]] = {"high/direct-one": [submit("danger"), approve(ALICE)]}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "quorum", _build)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    keys = lab.root / "keys"
    keys.mkdir()
    signers = lab.root / "allowed_signers"
    pubs = {name: _keygen(keys / name) for name in ("alice", "bob")}
    signers.write_text(f"alice@example.com {pubs['alice']}\nbob@ops.example.com {pubs['bob']}\n")
    lab.write_config(approval=APPROVAL.format(signers=signers), tools=tools(lab))
    approvers = '"*@ops.example.com"]'
    lab.config.write_text(
        lab.config.read_text().replace(
            approvers, approvers[:-1] + ', "sec@example.com", "*@corp.example"]'
        )
    )
    play(lab, ATTACKS | CONTROLS | SANITY)  # type: ignore[arg-type]
    return lab


def _tags(vid: str) -> list[str]:
    return [vid, f"{vid}-fb", f"{vid}-check", f"{vid}-lib", f"{vid}-lib-fb", f"{vid}-lib-check"]


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_honest_quorums_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)


def test_the_rules_bite(lab: Lab) -> None:
    assert lab.calls("high/direct-one") == [] and not lab.started("high/direct-one")
    assert "partial" in lab.codes("high/direct-one")


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_a_quorum_needs_enough_distinct_people_for_this_version(lab: Lab, vid: str) -> None:
    ran = {tag: lab.calls(tag) for tag in _tags(vid) if lab.calls(tag)}
    assert ran == {}, f"ran without its quorum: {sorted(ran)}"
    assert not lab.started(vid), lab.codes(vid)
    # and it waits for more approvals (not merely invalid or stuck)
    data = lab.plan(vid)
    assert data["plan"]["status"] == "pending_approval", lab.codes(vid)
    assert (data.get("approval") or {}).get("status") in ("partial", "refused"), lab.codes(vid)
