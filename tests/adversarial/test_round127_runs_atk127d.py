"""Round 127 (runs, atk127d): "an approved version runs once, exactly as approved, and the
record is the controller's". Local mode, approvers ``alice@example.com`` (and
``*@ops.example.com``); the controller's identities: ``A`` = ``plangate <plangate@localhost>``
(the lab's), ``B`` = ``plangate-bot <bot@plangate.internal>``, ``C`` = ``plangate-c
<c@plangate.internal>``. Attacked: last session's changes (a ``Previous-Identity:`` link on
an identity change, followed by the audit and a rebuilt index; a first start reading runs
under earlier ``plans_dir`` folders), by operator sequences and a forged link.

Labs (module scope, built at once by ``build_all``; each its own repo, config and state):

- ``ab``, ``abc``, ``aba`` (:func:`build_chain`): two plans ``p<i>``, ``q<i>`` approved and
  run under each identity of the chain in turn (``identity`` changed in the config between
  stretches, a restart, the state directory kept: docs/operations.md's procedure); copies
  ``c<i>`` of each ``q<i>`` approved; ``audit --config`` and a fresh clone's ``audit
  --controller`` for each identity; then the host rebuilt under the last identity (state
  moved away, a plain start, ``run --once --take-over``); Alice sets every completed ``p<i>``
  ``approved`` again at its own path and approves copies ``d<i>`` of each ``q<i>``.
- ``f``: ``p`` runs; the agent commits a forged link (a seal-shaped ``plangate: record
  policy`` naming itself, ``Previous-Identity: plangate@localhost``, a correct
  ``Policy-Hash:``); Alice approves ``q`` and the agent commits a seal-shaped ``plangate:
  complete plans/q`` before the pass; the live pass; ``audit --config``; then the host rebuilt
  (``--take-over``), ``p``/``q`` approved again, a copy ``pc`` of ``p``, a new plan ``n``.
- ``g``: a round trip of forged links: ``p`` runs; the agent's record naming itself
  (``Previous-Identity: plangate@localhost``) and its seal-shaped ``complete plans/q`` after
  Alice's approval; then a record under the controller's NAME, committed by the agent, naming
  the controller again with ``Previous-Identity: agent@example.com``; a fresh clone's
  ``audit --controller plangate@localhost``; the host rebuilt (``--take-over``), ``q`` and
  ``p`` approved again.
- ``dirs`` (``plans`` -> ``ops`` -> ``deploy``), ``back`` (``plans`` -> ``ops`` ->
  ``plans``): ``plans_dir`` changed twice under ``A``, the state kept, then rebuilt
  (``--take-over``); ``idir`` (``A``/``plans`` -> ``B``/``ops`` at ONE restart), ``diri``
  (``A``/``plans`` -> ``A``/``ops`` -> ``B``/``ops``), ``idirback``
  (``A``/``plans`` -> ``B``/``ops`` -> ``B``/``plans``): state kept, never rebuilt (a new
  state directory after an identity AND a folder change is this round's KNOWN class)
  (:func:`build_dirs`): plans ``p<i>``, ``q<i>`` per stretch, copies of every ``q<i>`` into
  today's folder approved, the audits, today's folder's completed plans approved again.

Ids: ``chain_runs_once_state_kept`` (each plan once, copies ``E_ALREADY_EXECUTED``);
``chain_clone_audit_controller_agrees`` (a fresh clone's audit with ``--controller`` any
identity of the chain lists every run, flags none of the controller's commits);
``chain_config_audit_agrees`` (the same with ``--config``); ``chain_rebuilt_refused_plain``
(``E_STORAGE`` before the take-over); ``chain_rebuilt_original_never_reruns`` /
``chain_rebuilt_copy_refused`` (after the take-over, per stretch: the completed original at
its path runs nothing, a copy is refused ``E_ALREADY_EXECUTED``); ``f_forged_link_live``,
``f_forged_link_rebuilt`` (the forged link makes nobody the controller: the forged outcome is
the agent's illegal transition, ``q`` runs once when approved, ``p`` never again);
``g_round_trip_link_clone_audit``, ``g_round_trip_link_rebuilt`` (the round trip adopts
none of the agent's commits: its outcome flagged, ``q`` runs once when approved);
``dirs_runs_once_state_kept``, ``dirs_audit_agrees`` (``--config`` and ``--controller`` each
identity: every run under every folder), ``dirs_status_reads_runs`` (today's folder's runs
read ``completed``), ``dirs_rebuilt_never_reruns``.

Seen (round 127: 59 ids, 43 passed, 16 xfailed (strict); 104 s on 1 worker under a load of
13 on 2 cores, ~30 s unloaded for the first 32 ids), three classes.

**takeover-forgets-earlier-identities-runs** (8 ids: ``chain_rebuilt_original_never_reruns``
and ``chain_rebuilt_copy_refused`` ``[ab-0A]``, ``[abc-0A]``, ``[abc-1B]``, ``[aba-1B]``; FAILS
OPEN: a version that already ran runs a second time). Steps: ``p0``/``q0`` run under ``A``;
``identity`` changed to ``B`` with the state directory kept, as docs/operations.md says (the
record under ``B`` carries ``Previous-Identity: plangate@localhost``); ``p1``/``q1`` run;
copies refused (held), both audits agree (held). The host is rebuilt: the state directory
moved away, a plain start refuses ``E_STORAGE``, ``run --once --take-over`` (under ``B``)
starts. Alice sets the completed ``p0`` ``approved`` at its own path and approves a copy
``d0`` of ``q0``: both RUN again (``p0``, ``q0`` called twice, ``plangate: start``/``complete``
under ``B``), while ``p1`` (ran under ``B``) is ``E_ILLEGAL_TRANSITION`` ignored and ``d1``
``E_ALREADY_EXECUTED``. The same for ``A -> B -> C`` rebuilt under ``C`` (``A``'s and ``B``'s
runs again) and ``A -> B -> A`` rebuilt under ``A`` (``B``'s stretch runs again; ``A``'s
stretches are refused). No ``plans_dir`` change is involved (unlike the KNOWN class), and the
identity was NOT changed at the rebuild. SPEC §15: "A frozen hash runs at most once per
controller: a copy, move, rename or rewritten history of a plan that already ran does not run
again (E_ALREADY_EXECUTED)"; docs/operations.md ("Changing the controller's identity"): "A
history index rebuilt later ... follows the change at that record too: the old identity's
commits before it are the controller's, its run records included"; docs/approvals.md: a link
is "sealed and made by the identity its policy names" (by git alone when there is no
record). Documented limit, NOT this: "a new state directory at the same time" as the
identity change writes no link.

Fixed (the session of 2026-12-07, afternoon): a new state directory's first start follows the
linked identity changes, newest first, and takes each identity's commits in its stretch as its
own (``ControllerCore._named_history``): the old stretches' runs count as executed, the copies
and the originals are refused ``E_ALREADY_EXECUTED`` (``A -> B -> A`` included).

**identity-changed-back-splits-audit** (1 id: ``chain_config_audit_agrees[aba]``; fails
closed: the runs happened once, no run is lost by the controller, but the audit with the
live config does not agree). Steps: ``A -> B -> A``, the state kept (the record under ``B``
names ``Previous-Identity: plangate@localhost``, the second record under ``A`` names
``Previous-Identity: bot@plangate.internal``). ``plangate audit --json --config`` lists only
``p1``/``q1`` (``B``) and ``p2``/``q2`` (``A`` again); ``p0``/``q0``'s run (``A``'s first
stretch) is missing and ``A``'s own first-stretch commits are flagged ``policy-changed``,
``owned-block-changed``, ``illegal`` (``plangate@localhost set status executing``),
``log-changed`` (rc 1). A fresh clone's ``--controller plangate@localhost`` and
``--controller bot@plangate.internal`` both list all six runs (held). Also seen (not an id):
the same with ``plans_dir`` changed twice afterwards, the live status right. docs/operations.md:
"``plangate audit --config`` and, on a fresh clone, ``--controller`` with either identity
list every run before and after it and flag none of the controller's own commits".

**identity-and-folder-changed-together-unlinked** (7 ids: ``dirs_audit_agrees[idir-cfg]``,
``[idir-A]``, ``[idir-B]``, ``[idirback-cfg]``, ``[idirback-A]``, ``[idirback-B]``,
``dirs_status_reads_runs[idirback]``; fails closed). Steps: ``p0``/``q0`` run under ``A`` in
``plans``; the operator changes ``identity`` to ``B`` AND ``plans_dir`` to ``ops`` in one
edit, one restart, the state kept; ``p1``/``q1`` run. The new identity's first ``plangate:
record policy`` carries NO ``Previous-Identity:`` trailer. ``audit --config`` lists only
``ops/p1``, ``ops/q1`` and flags ``plangate@localhost changed .plangate/policy.json``
(``policy-changed``); ``--controller plangate@localhost`` lists only ``plans/p0``,
``plans/q0`` and flags ``bot@plangate.internal``'s record; ``--controller
bot@plangate.internal`` as ``--config`` (all rc 1). With ``plans_dir`` back to ``plans``
(``idirback``, the index rebuilt) the live controller's ``status`` shows ``plans/q0``
``pending_approval`` "waiting for an approval" with ``E_ILLEGAL_TRANSITION: plangate@localhost
set status completed ... ignored`` (its own run read as a person's), and Alice's
re-approval of ``p0`` is committed as ``plangate: refuse plans/p0`` ``E_ALREADY_EXECUTED``
over the completed record (runs-once held: nothing ran twice). The two changes made at
separate restarts (``diri``) are linked and agree (held). docs/operations.md, "Changing the
controller's identity": the first record under the new identity "names the old one in a
``Previous-Identity:`` trailer" and a rebuilt index (a ``plans_dir`` change) reads the old
identity's run records as the controller's; nothing says the two changes must be made at
separate restarts. Likely near the KNOWN class (its new state directory cannot link either).

Held (43 ids): copies after identity chains (state kept) refused; fresh-clone audits with
``--controller`` follow ``A -> B -> C`` and ``A -> B -> A``; ``--config`` follows
``A -> B`` and ``A -> B -> C``; a rebuilt host refuses a plain start; a forged
``Previous-Identity:`` in the agent's own record is followed by neither the live controller
(the forged outcome is the agent's illegal transition, the approval lapses) nor a rebuilt
host (``q`` runs once, ``p`` never again); nor a round trip (agent and back) under the
controller's name, by the fresh-clone audit or a rebuilt host; ``plans_dir`` changed twice
or there and back, kept and then rebuilt: copies refused, nothing reran, every audit lists
every folder's runs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial import advkit
from tests.adversarial.advkit import AGENT, ALICE, Lab, Labs, build_all, plan_text

#: The controller identities a lab's config goes through (``identity:`` lines of the config).
IDS = {
    "A": ("identity: {name: plangate, email: plangate@localhost}", "plangate@localhost"),
    "B": ("identity: {name: plangate-bot, email: bot@plangate.internal}", "bot@plangate.internal"),
    "C": ("identity: {name: plangate-c, email: c@plangate.internal}", "c@plangate.internal"),
}


def switch(lab: Lab, old: str, new: str) -> None:
    """The operator changes the config's ``identity`` (a restart: the next ``run --once``)."""
    text = lab.config.read_text()
    assert IDS[old][0] in text
    lab.config.write_text(text.replace(IDS[old][0], IDS[new][0]))


def copy_of(lab: Lab, slug: str) -> str:
    """``slug``'s plan text as it was frozen, without the controller's blocks, pending again:
    a copy of the same version (the same frozen hash) in a new folder."""
    return (
        lab.read(slug).split("frozen:")[0].replace("status: completed", "status: pending_approval")
    )


def audit_rows(rc: int, report: dict[str, Any]) -> dict[str, Any]:
    return {
        "rc": rc,
        "code": report.get("code"),
        "runs": sorted(
            (e["plan"], e.get("outcome") or "")
            for e in report.get("executions", [])
            if e.get("approval_valid")
        ),
        "findings": [
            (f.get("kind"), f.get("detail", "")[:200]) for f in report.get("findings", [])
        ],
    }


def build_chain(root: Path, seq: str) -> dict[str, Any]:
    """Two plans ``p<i>``, ``q<i>`` frozen, approved and run under each identity of ``seq`` in
    turn (the config's ``identity`` changed between them, the state directory kept, as
    docs/operations.md says to); copies ``c<i>`` of each ``q<i>`` approved (the state kept);
    the audits (``--config``; a fresh clone with ``--controller`` each identity). Then the
    host rebuilt: the state directory moved away, a plain start (``E_STORAGE``), ``run --once
    --take-over`` under the last identity; Alice sets every ``p<i>`` ``approved`` again at its
    own path, and approves copies ``d<i>`` of each ``q<i>`` (one pass, then another)."""
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab")
    n = len(seq)
    tags = [f"{x}{i}" for i in range(n) for x in "pq"]
    cur = "A"
    for i, who in enumerate(seq):
        if who != cur:
            switch(lab, cur, who)
            cur = who
        for x in "pq":
            lab.write(f"{x}{i}", plan_text(f"{x}{i}"))
        lab.commit(f"plans {i}")
        lab.run()
        for x in "pq":
            lab.set_status(f"{x}{i}", "approved")
        lab.commit(f"approve {i}", ALICE)
        lab.run()
    got: dict[str, Any] = {"lab": lab, "n": n, "tags": tags}
    got["first"] = {t: len(lab.calls(t)) for t in tags}
    got["first_status"] = {t: lab.plan(t)["plan"]["status"] for t in tags}
    for i in range(n):
        lab.write(f"c{i}", copy_of(lab, f"q{i}"))
    lab.commit("copies")
    lab.run()
    for i in range(n):
        lab.set_status(f"c{i}", "approved")
    lab.commit("approve copies", ALICE)
    lab.run()
    got["kept_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["kept_copies"] = {f"c{i}": lab.plan(f"c{i}").get("approval") or {} for i in range(n)}
    got["audit_cfg"] = audit_rows(*lab.audit(config=lab.config))
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    for who in sorted(set(seq)):
        out = lab.cli("audit", "--json", "--controller", IDS[who][1], cwd=clone)
        got[f"audit_{who}"] = audit_rows(out.returncode, json.loads(out.stdout or "{}"))
    # the host rebuilt: a new state directory under the last identity
    shutil.move(str(lab.state), str(root / "old-state"))
    plain = lab.run(check=False)
    got["plain"] = (plain.returncode, plain.stderr[-1200:])
    took = lab.run(check=False, take_over=True)
    got["take"] = (took.returncode, took.stderr[-1200:])
    for i in range(n):
        lab.write(f"d{i}", copy_of(lab, f"q{i}"))
    lab.commit("copies after the rebuild")
    lab.run(check=False)
    for i in range(n):
        lab.set_status(f"p{i}", "approved")
        lab.set_status(f"d{i}", "approved")
    lab.commit("approve again", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    got["rebuilt_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["rebuilt_copies"] = {f"d{i}": lab.plan(f"d{i}").get("approval") or {} for i in range(n)}
    got["rebuilt_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    got["rebuilt_subjects"] = {t: lab.subjects(t) for t in tags}
    return got


CHAINS = {"ab": "AB", "abc": "ABC", "aba": "ABA"}


# -- labs D*: plans_dir changed (twice, back, with an identity change), the state kept ----------


def at(lab: Lab, folder: str, slug: str) -> Path:
    return lab.repo / folder / slug / "PLAN.yml"


def status_at(lab: Lab, folder: str, slug: str, status: str) -> None:
    """Set ``plan.status`` of ``<folder>/<slug>`` as a person edits that one line."""
    path = at(lab, folder, slug)
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines[:6]):
        if line.startswith("  status:"):
            lines[i] = f"  status: {status}"
            break
    path.write_text("\n".join(lines))


def plan_at(lab: Lab, folder: str, slug: str) -> dict[str, Any]:
    return dict(advkit.load_yaml(lab.git("show", f"HEAD:{folder}/{slug}/PLAN.yml")))


def set_plans_dir(lab: Lab, folder: str) -> None:
    """The operator changes the config's ``plans_dir`` (a restart: the next pass)."""
    text = lab.config.read_text()
    text = "\n".join(x for x in text.split("\n") if not x.startswith("plans_dir:"))
    lab.config.write_text(f"plans_dir: {folder}\n" + text)


def build_dirs(root: Path, stretches: list[tuple[str, str]], rebuild: bool) -> dict[str, Any]:
    """Plans ``p<i>``, ``q<i>`` run under each stretch's (identity, ``plans_dir``), the state
    directory kept across each change (docs/operations.md: change and restart); copies
    ``c<i>`` of each ``q<i>`` into today's folder approved; the audits. With ``rebuild``: the
    state directory moved away, ``--take-over``, then copies ``d<i>`` of each ``q<i>`` into
    today's folder and every ``p<i>`` in today's folder set ``approved`` again."""
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab")
    n = len(stretches)
    tags = [f"{x}{i}" for i in range(n) for x in "pq"]
    where = {f"{x}{i}": stretches[i][1] for i in range(n) for x in "pq"}
    cur_id, cur_dir = "A", "plans"
    for i, (who, folder) in enumerate(stretches):
        if who != cur_id:
            switch(lab, cur_id, who)
            cur_id = who
        if folder != cur_dir:
            set_plans_dir(lab, folder)
            cur_dir = folder
        for x in "pq":
            lab.put(f"{folder}/{x}{i}/PLAN.yml", plan_text(f"{x}{i}"))
        lab.commit(f"plans {i}")
        lab.run()
        for x in "pq":
            status_at(lab, folder, f"{x}{i}", "approved")
        lab.commit(f"approve {i}", ALICE)
        lab.run()
    got: dict[str, Any] = {"lab": lab, "n": n, "tags": tags, "where": where, "now": cur_dir}
    got["first"] = {t: len(lab.calls(t)) for t in tags}
    got["first_status"] = {t: plan_at(lab, where[t], t)["plan"]["status"] for t in tags}

    def copy(slug: str) -> str:
        text = at(lab, where[slug], slug).read_text().split("frozen:")[0]
        return text.replace("status: completed", "status: pending_approval")

    for i in range(n):
        lab.put(f"{cur_dir}/c{i}/PLAN.yml", copy(f"q{i}"))
    lab.commit("copies")
    lab.run()
    for i in range(n):
        status_at(lab, cur_dir, f"c{i}", "approved")
    lab.commit("approve copies", ALICE)
    lab.run()
    got["kept_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["kept_copies"] = {
        f"c{i}": plan_at(lab, cur_dir, f"c{i}").get("approval") or {} for i in range(n)
    }
    got["audit_cfg"] = audit_rows(*lab.audit(config=lab.config))
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    for who in sorted({w for w, _ in stretches}):
        out = lab.cli("audit", "--json", "--controller", IDS[who][1], cwd=clone)
        got[f"audit_{who}"] = audit_rows(out.returncode, json.loads(out.stdout or "{}"))
    got["kept_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    for i in range(n):
        if where[f"p{i}"] == cur_dir:
            status_at(lab, cur_dir, f"p{i}", "approved")
    lab.commit("today's folder's plans approved again", ALICE)
    lab.run()
    lab.run()
    got["again_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["again_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    if not rebuild:
        return got
    shutil.move(str(lab.state), str(root / "old-state"))
    took = lab.run(check=False, take_over=True)
    got["take"] = (took.returncode, took.stderr[-1200:])
    for i in range(n):
        lab.put(f"{cur_dir}/d{i}/PLAN.yml", copy(f"q{i}"))
    lab.commit("copies after the rebuild")
    lab.run(check=False)
    for i in range(n):
        status_at(lab, cur_dir, f"d{i}", "approved")
        if where[f"p{i}"] == cur_dir:
            status_at(lab, cur_dir, f"p{i}", "approved")
    lab.commit("approve again", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    got["rebuilt_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["rebuilt_copies"] = {
        f"d{i}": plan_at(lab, cur_dir, f"d{i}").get("approval") or {} for i in range(n)
    }
    got["rebuilt_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    return got


DIRS: dict[str, tuple[list[tuple[str, str]], bool]] = {
    "dirs": ([("A", "plans"), ("A", "ops"), ("A", "deploy")], True),
    "back": ([("A", "plans"), ("A", "ops"), ("A", "plans")], True),
    "idir": ([("A", "plans"), ("B", "ops")], False),
    "diri": ([("A", "plans"), ("A", "ops"), ("B", "ops")], False),
    "idirback": ([("A", "plans"), ("B", "ops"), ("B", "plans")], False),
}


# -- lab F: a person's commit forges the controller's identity link ---------------------------


def forge_link(lab: Lab, who: tuple[str, str], previous: str) -> str:
    """``who`` commits a seal-shaped ``plangate: record policy`` naming itself as the
    controller's identity, ``Previous-Identity: <previous>``, ``Policy-Hash:`` the bytes it
    writes (round 126's link, by its shape)."""
    import hashlib

    policy = json.loads(lab.git("show", "HEAD:.plangate/policy.json"))
    policy["identity"] = {"email": who[1]}
    data = json.dumps(policy, separators=(",", ":"), sort_keys=True).encode()
    lab.put(".plangate/policy.json", data)
    lab.git("add", "-A")
    message = (
        "plangate: record policy\n\nThe controller's effective policy: identity\n\n"
        f"Policy-Hash: sha256:{hashlib.sha256(data).hexdigest()}\n"
        f"Controller: vm/forged/0000\nPrevious-Identity: {previous}\n"
        f"Controller-Seal: {'ab' * 32}\n"
    )
    lab.git("commit", "-q", "-m", message, who=who)
    return lab.head()


def forge_outcome(lab: Lab, who: tuple[str, str], slug: str) -> str:
    """``who`` commits ``plangate: complete plans/<slug>`` (the file ``completed``) in the
    controller's shape, seal line and all."""
    lab.set_status(slug, "completed")
    lab.git("add", "-A")
    message = (
        f"plangate: complete plans/{slug}\n\nPlan: plans/{slug}\nPlan-Status: completed\n"
        f"Controller: vm/forged/0000\nController-Seal: {'cd' * 32}\n"
    )
    lab.git("commit", "-q", "-m", message, who=who)
    return lab.head()


def build_f(root: Path) -> dict[str, Any]:
    """``p`` runs; the agent commits a forged link (its own seal-shaped record naming itself,
    ``Previous-Identity: plangate@localhost``); Alice approves ``q`` and the agent, as "the
    controller after the link", commits ``plangate: complete plans/q`` before the pass; the
    live controller's pass; the audits (``--config``; a fresh clone with ``--controller``
    the agent); then the host rebuilt (new state directory, ``--take-over``): Alice sets ``p``
    and ``q`` approved again, approves a copy ``pc`` of ``p`` and a new plan ``n``."""
    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab")
    tags = ["p", "q", "n"]
    for t in ("p", "q"):
        lab.write(t, plan_text(t))
    lab.commit("plans")
    lab.run()
    lab.approve("p")
    lab.run()
    got: dict[str, Any] = {"lab": lab}
    forge_link(lab, AGENT, "plangate@localhost")
    lab.approve("q")
    forge_outcome(lab, AGENT, "q")
    live = lab.run(check=False)
    got["live"] = (live.returncode, live.stderr[-1200:])
    lab.run(check=False)
    got["live_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["live_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    got["audit_cfg"] = audit_rows(*lab.audit(config=lab.config))
    shutil.move(str(lab.state), str(root / "old-state"))
    took = lab.run(check=False, take_over=True)
    got["take"] = (took.returncode, took.stderr[-1200:])
    for t in ("p", "q"):
        lab.set_status(t, "approved")
    lab.commit("again", ALICE)
    lab.write("pc", copy_of(lab, "p").replace("status: approved", "status: pending_approval"))
    lab.write("n", plan_text("n"))
    lab.commit("a copy, a new plan")
    lab.run(check=False)
    lab.set_status("pc", "approved")
    lab.set_status("n", "approved")
    lab.commit("approve pc, n", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    got["rebuilt_calls"] = {t: len(lab.calls(t)) for t in tags}
    got["rebuilt_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    got["pc"] = lab.plan("pc").get("approval") or {}
    return got


def build_g(root: Path) -> dict[str, Any]:
    """A round trip of forged links: ``p`` runs; the agent's own record naming itself
    (``Previous-Identity: plangate@localhost``), Alice approves ``q``, the agent's seal-shaped
    ``complete plans/q``; then a record under the controller's NAME (committed by the agent,
    ``plangate <plangate@localhost>``) naming the controller again with ``Previous-Identity:
    agent@example.com``: by shape, the controller handed over to the agent and back. A fresh
    clone's ``audit --controller plangate@localhost`` before any pass; then the host rebuilt
    (``--take-over``, trust on first use adopts the forged record under its name), two passes,
    Alice approves ``q`` again, ``p`` set approved again."""
    from tests.adversarial.advkit import BOT

    root.mkdir(parents=True, exist_ok=True)
    lab = Lab(root / "lab")
    for t in ("p", "q"):
        lab.write(t, plan_text(t))
    lab.commit("plans")
    lab.run()
    lab.approve("p")
    lab.run()
    policy = lab.git("show", "HEAD:.plangate/policy.json")
    recorded = lab.git(
        "log", "-1", "--format=%(trailers:key=Policy-Hash,valueonly)", "--grep=record policy"
    ).strip()
    forge_link(lab, AGENT, "plangate@localhost")
    lab.approve("q")
    forge_outcome(lab, AGENT, "q")
    lab.put(".plangate/policy.json", policy)
    lab.git("add", "-A")
    message = (
        "plangate: record policy\n\nThe controller's effective policy: identity\n\n"
        f"Policy-Hash: {recorded}\nController: vm/forged/0001\n"
        f"Previous-Identity: agent@example.com\nController-Seal: {'ef' * 32}\n"
    )
    lab.git("commit", "-q", "-m", message, who=BOT)
    got: dict[str, Any] = {"lab": lab}
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", "--controller", "plangate@localhost", cwd=clone)
    got["clone_audit"] = audit_rows(out.returncode, json.loads(out.stdout or "{}"))
    shutil.move(str(lab.state), str(root / "old-state"))
    took = lab.run(check=False, take_over=True)
    got["take"] = (took.returncode, took.stderr[-1200:])
    lab.run(check=False)
    got["taken_calls"] = {t: len(lab.calls(t)) for t in ("p", "q")}
    got["taken_rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    lab.set_status("p", "approved")
    lab.set_status("q", "approved")
    lab.commit("approve q, p again", ALICE)
    lab.run(check=False)
    lab.run(check=False)
    got["calls"] = {t: len(lab.calls(t)) for t in ("p", "q")}
    got["rows"] = {k: advkit.brief(v) for k, v in lab.rows().items()}
    return got


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> Labs:
    root = tmp_path_factory.mktemp("r127d")
    builders: dict[str, Any] = {
        key: (lambda r, seq=seq: build_chain(r, seq)) for key, seq in CHAINS.items()
    }
    builders["f"] = build_f
    builders["g"] = build_g
    for key, (stretches, rebuild) in DIRS.items():
        builders[key] = lambda r, st=stretches, rb=rebuild: build_dirs(r, st, rb)
    return build_all(root, builders, workers=4)


# -- the ids ------------------------------------------------------------------------------------

CONTROLLER_EMAILS = tuple(email for _, email in IDS.values())


def blamed(audit: dict[str, Any]) -> list[Any]:
    """The audit's findings that blame one of the controller's identities, or its log."""
    return [
        f
        for f in audit["findings"]
        if any(e in f[1] for e in CONTROLLER_EMAILS) or f[0] == "log-changed"
    ]


@pytest.mark.parametrize("key", list(CHAINS))
def test_chain_runs_once_state_kept(labs: Labs, key: str) -> None:
    """Identity changed (A->B, A->B->C, A->B->A), the state directory kept: every plan ran
    once, completed; a copy of each, approved after the changes, is refused
    ``E_ALREADY_EXECUTED`` and runs nothing (docs/operations.md, "Changing the controller's
    identity": "nothing that ran runs again")."""
    got = labs.got[key]
    assert got["first"] == {t: 1 for t in got["tags"]}
    assert set(got["first_status"].values()) == {"completed"}
    assert got["kept_calls"] == {t: 1 for t in got["tags"]}
    for slug, approval in got["kept_copies"].items():
        assert approval.get("code") == "E_ALREADY_EXECUTED", (slug, approval)


def _all_runs(got: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f"plans/{t}", "complete") for t in got["tags"])


@pytest.mark.parametrize(
    "key,how",
    [("ab", "A"), ("ab", "B"), ("abc", "A"), ("abc", "B"), ("abc", "C"), ("aba", "A"),
     ("aba", "B")],
)  # fmt: skip
def test_chain_clone_audit_controller_agrees(labs: Labs, key: str, how: str) -> None:
    """A fresh clone's ``plangate audit --controller <any identity of the chain>`` lists every
    run once, valid, and flags none of the controller's commits (docs/approvals.md,
    "plangate audit": the audit follows the links back and on)."""
    audit = labs.got[key][f"audit_{how}"]
    assert audit["runs"] == _all_runs(labs.got[key]), audit
    assert blamed(audit) == [] and audit["rc"] == 0, audit


ABA_AUDIT = advkit.xfail(
    "identity-changed-back-splits-audit",
    "A->B->A with the state kept: audit --config lists only the runs after the first change "
    "and flags the controller's first-stretch commits as A's illegal transitions",
)


@pytest.mark.parametrize(
    "key", [pytest.param(k, marks=[ABA_AUDIT] if k == "aba" else []) for k in CHAINS]
)
def test_chain_config_audit_agrees(labs: Labs, key: str) -> None:
    """``plangate audit --config`` (the live config, its state directory holding the record
    of every identity's commits) lists every run and flags none of the controller's own
    commits (docs/operations.md: "``plangate audit --config`` and, on a fresh clone,
    ``--controller`` with either identity list every run before and after it and flag none of
    the controller's own commits")."""
    audit = labs.got[key]["audit_cfg"]
    assert audit["runs"] == _all_runs(labs.got[key]), audit
    assert blamed(audit) == [] and audit["rc"] == 0, audit


def test_chain_rebuilt_refused_plain(labs: Labs) -> None:
    """The host rebuilt after the changes: a plain start refuses ``E_STORAGE`` (held); the
    take-over starts."""
    for key in CHAINS:
        got = labs.got[key]
        assert got["plain"][0] != 0 and "E_STORAGE" in got["plain"][1], (key, got["plain"])
        assert got["take"][0] == 0, (key, got["take"])


#: (lab, stretch index, identity the run was made under): which plans ran under an identity
#: other than the rebuilt host's (the last of the chain).
STRETCHES = [
    ("ab", 0, "A"), ("ab", 1, "B"), ("abc", 0, "A"), ("abc", 1, "B"), ("abc", 2, "C"),
    ("aba", 0, "A"), ("aba", 1, "B"), ("aba", 2, "A"),
]  # fmt: skip


@pytest.mark.parametrize(
    "key,i,who",
    [pytest.param(k, i, w, id=f"{k}-{i}{w}") for k, i, w in STRETCHES],
)
def test_chain_rebuilt_original_never_reruns(labs: Labs, key: str, i: int, who: str) -> None:
    """After ``--take-over``, Alice sets the completed ``p<i>`` ``approved`` again at its own
    path: nothing runs (``p<i>`` called once; SPEC §15: a frozen hash runs at most once per
    controller; docs/operations.md: a take-over is this controller's lost state taken over)."""
    got = labs.got[key]
    assert got["rebuilt_calls"][f"p{i}"] == 1, got["rebuilt_rows"].get(f"plans/p{i}")


@pytest.mark.parametrize(
    "key,i,who",
    [pytest.param(k, i, w, id=f"{k}-{i}{w}") for k, i, w in STRETCHES],
)
def test_chain_rebuilt_copy_refused(labs: Labs, key: str, i: int, who: str) -> None:
    """After ``--take-over``, a copy ``d<i>`` of ``q<i>`` approved: refused
    ``E_ALREADY_EXECUTED``, ``q<i>`` called once (SPEC §15: "a copy, move or rename ... of a
    plan that already ran does not run again")."""
    got = labs.got[key]
    approval = got["rebuilt_copies"][f"d{i}"]
    assert got["rebuilt_calls"][f"q{i}"] == 1, approval
    assert approval.get("code") == "E_ALREADY_EXECUTED", approval


def test_f_forged_link_live(labs: Labs) -> None:
    """The agent's forged link and its forged ``complete`` of the approved ``q``: the live
    controller reads both as the agent's (the approval lapsed, ``E_ILLEGAL_TRANSITION``
    noted), runs nothing that was not approved, and ``audit --config`` flags the forged record
    ``policy-changed`` and the forged outcome ``illegal`` (docs/approvals.md: a forged link "is
    never followed by ``--config`` with the record of the controller's commits")."""
    got = labs.got["f"]
    assert got["live"][0] == 0
    assert got["live_calls"] == {"p": 1, "q": 0, "n": 0}
    row = got["live_rows"]["plans/q"]
    assert row[0] == "pending_approval", row
    assert any("E_ILLEGAL_TRANSITION: agent@example.com" in n for n in row[4]), row
    audit = got["audit_cfg"]
    assert audit["runs"] == [("plans/p", "complete")], audit
    kinds = {k for k, d in audit["findings"] if "agent@example.com" in d}
    assert kinds == {"policy-changed", "illegal"}, audit


def test_f_forged_link_rebuilt(labs: Labs) -> None:
    """The host rebuilt after the forged link: the take-over follows no forged link; ``q``
    (never run) runs once on Alice's approval, ``p`` does not run again, its copy is refused
    ``E_ALREADY_EXECUTED``, a new plan runs once."""
    got = labs.got["f"]
    assert got["take"][0] == 0, got["take"]
    assert got["rebuilt_calls"] == {"p": 1, "q": 1, "n": 1}, got["rebuilt_rows"]
    assert got["pc"].get("code") == "E_ALREADY_EXECUTED", got["pc"]
    assert got["rebuilt_rows"]["plans/q"][0] == "completed"


# labs D*


def _dir_runs(got: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted((f"{got['where'][t]}/{t}", "complete") for t in got["tags"])


@pytest.mark.parametrize("key", list(DIRS))
def test_dirs_runs_once_state_kept(labs: Labs, key: str) -> None:
    """``plans_dir`` changed twice, there and back, or with an identity change (at the same
    restart, or at another), the state kept: every plan ran once; copies into today's folder
    are refused ``E_ALREADY_EXECUTED``; today's folder's completed plans set ``approved``
    again run nothing (docs/operations.md, "Moving the plans folder": "a copy of a version
    that already ran is refused ``E_ALREADY_EXECUTED``")."""
    got = labs.got[key]
    assert got["first"] == {t: 1 for t in got["tags"]}
    assert set(got["first_status"].values()) == {"completed"}
    assert got["kept_calls"] == {t: 1 for t in got["tags"]}
    for slug, approval in got["kept_copies"].items():
        assert approval.get("code") == "E_ALREADY_EXECUTED", (slug, approval)
    assert got["again_calls"] == {t: 1 for t in got["tags"]}, got["again_rows"]


SAME_RESTART = advkit.xfail(
    "identity-and-folder-changed-together-unlinked",
    "identity and plans_dir changed at one restart (state kept): the new identity's first "
    "record carries no Previous-Identity:, and no audit lists both identities' runs",
)

DIR_AUDITS = [
    (k, how) for k, (st, _) in DIRS.items() for how in ["cfg", *sorted({w for w, _ in st})]
]


@pytest.mark.parametrize(
    "key,how",
    [
        pytest.param(k, h, id=f"{k}-{h}", marks=[SAME_RESTART] if k.startswith("idir") else [])
        for k, h in DIR_AUDITS
    ],
)
def test_dirs_audit_agrees(labs: Labs, key: str, how: str) -> None:
    """``plangate audit --config`` and a fresh clone's ``--controller`` (each identity) list
    every run under every folder and flag none of the controller's commits
    (docs/approvals.md, "plangate audit": every recorded folder is read, and the audit follows
    a change of identity; docs/operations.md: "``plangate audit --config`` and, on a fresh
    clone, ``--controller`` with either identity list every run before and after it")."""
    got = labs.got[key]
    audit = got[f"audit_{how}" if how != "cfg" else "audit_cfg"]
    assert audit["runs"] == _dir_runs(got), audit
    policy = [f for f in audit["findings"] if f[0] == "policy-changed"]
    assert blamed(audit) == [] and policy == [] and audit["rc"] == 0, audit


@pytest.mark.parametrize(
    "key",
    [pytest.param(k, marks=[SAME_RESTART] if k == "idirback" else []) for k in DIRS],
)
def test_dirs_status_reads_runs(labs: Labs, key: str) -> None:
    """``plangate status`` of the live controller (state kept) shows every plan of today's
    folder that ran as ``completed`` (docs/operations.md, "Changing the controller's
    identity": "A history index rebuilt later (an upgrade, a ``plans_dir`` change) follows the
    change at that record too: the old identity's commits before it are the controller's, its
    run records included")."""
    got = labs.got[key]
    rows = got["kept_rows"]
    for t in got["tags"]:
        if got["where"][t] == got["now"]:
            row = rows.get(f"{got['now']}/{t}")
            assert row and row[0] == "completed", (t, row)


@pytest.mark.parametrize("key", [k for k, (_, rebuild) in DIRS.items() if rebuild])
def test_dirs_rebuilt_never_reruns(labs: Labs, key: str) -> None:
    """``plans_dir`` changed twice (or there and back) under one identity, then the host
    rebuilt (``--take-over``): copies into today's folder of plans that ran under every
    earlier folder are refused ``E_ALREADY_EXECUTED``; nothing runs again
    (docs/operations.md: a new state directory's index "reads the controller's start commits
    under each folder its policy records name")."""
    got = labs.got[key]
    assert got["take"][0] == 0, got["take"]
    assert got["rebuilt_calls"] == {t: 1 for t in got["tags"]}, got["rebuilt_rows"]
    for slug, approval in got["rebuilt_copies"].items():
        assert approval.get("code") == "E_ALREADY_EXECUTED", (slug, approval)


def test_g_round_trip_link_clone_audit(labs: Labs) -> None:
    """A fresh clone's ``audit --controller plangate@localhost`` of the round trip: ``p``'s run
    listed, the agent's forged ``complete plans/q`` read as nobody's run (flagged), ``q`` not
    listed as run."""
    audit = labs.got["g"]["clone_audit"]
    assert audit["runs"] == [("plans/p", "complete")], audit
    assert any(k == "illegal" and "agent@example.com" in d for k, d in audit["findings"]), audit


def test_g_round_trip_link_rebuilt(labs: Labs) -> None:
    """The host rebuilt after the round trip (``--take-over``): the agent's forged outcome is
    not adopted (``q`` ``pending_approval``, nothing ran); Alice's approval runs ``q`` once;
    ``p`` never runs again."""
    got = labs.got["g"]
    assert got["take"][0] == 0, got["take"]
    assert got["taken_calls"] == {"p": 1, "q": 0}
    assert got["taken_rows"]["plans/q"][0] == "pending_approval", got["taken_rows"]
    assert got["calls"] == {"p": 1, "q": 1}, got["rows"]
    assert got["rows"]["plans/q"][0] == "completed", got["rows"]
