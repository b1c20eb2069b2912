"""Round 74, bursts (sibling of ``test_round74_burst_squashspell.py``, whose lab and checks it
reuses): first starts on a branch whose plan files are indented (a root block mapping may be
indented: the same YAML), on histories rewritten with parents kept, and on an orphan branch
merged in; honest new deployments beside them (controls).

Lab (one, local mode, fake commit dates): as the sibling's. The agent adds ``f-01``..``f-08``
and the gated ``fg-1``; Alice's review merge approves ``f-01``..``f-04`` and ``fg-1``; four
complete, ``fg-1`` pauses at its gate. Cloned once per ``<shape>-<state>``:

- ``ind`` (attack): the agent's squash (one parentless commit of its own) with every plan file
  indented by one space: must be refused (``key``: ``E_HISTORY_REWRITTEN``, ``new``:
  ``E_STORAGE``), then ``--take-over`` reruns nothing;
- ``strip`` (attack for ``key``, the documented upgrade for ``new``): the agent's
  ``git filter-branch --msg-filter`` deleting every ``Controller-Seal:`` line: parents,
  authors and committers kept (the controller's commits still under its name, unsealed, as
  history from before plangate sealed). ``key``: the key verifies none of the controller's
  commits: ``E_HISTORY_REWRITTEN`` (``own_line_gone``), take-over reruns nothing; ``new``
  (control, docs/operations.md: "history from before sealing, an upgrade, has them: it starts
  as before"): starts at once, trust on first use, nothing reruns;
- ``ofox`` (attack): the agent's orphan branch (one parentless commit of main's tree) with
  main merged INTO it (``--allow-unrelated-histories``), main fast-forwarded to the merge:
  every seal behind a second parent: ``E_HISTORY_REWRITTEN`` (round 72), then the line put
  back (main reset to the merge's second parent): ``key`` starts, ``new`` ``E_STORAGE`` then
  ``--take-over``;
- ``fresh`` (control): a NEW repository (``ran.log`` empty) whose first commit is P0's tree,
  the plans never frozen; ``freshdq`` (control): the same, the plan's keys double-quoted
  (``"status":``); ``freshind`` (control): the same, every plan file indented by one space.
  Each must start at once, freeze, and run what Alice approves (``f-01``, ``fg-1`` with its
  gate, ``f-06``) once.

Then Alice approves ``fg-1``'s gate, re-approves ``f-01`` and approves ``f-06`` (in the file's
own spelling); two passes. Asserted per clone (``<shape>-<state>-<v>``), as the sibling:
``start`` (refused with its code, or at once for the controls), ``done`` (``f-01``..``f-04``
once in all), ``gate`` (``fg-1``'s action 1 once, action 2 at most once), ``ctl`` (``f-06``
once, ``f-05``/``f-07``/``f-08`` never), ``audit`` (a fresh clone's ``plangate audit --json``:
no valid run of the unapproved, ``f-06`` as the tool ran it, no valid start of ``f-01`` /
``fg-1`` on a squashed line). ``botpar`` (attack): the agent's squash (``plain``), then ONE
empty commit on it under the controller's name (author and committer ``plangate``, unsealed,
``plangate: record policy``): a controller-named commit WITH a parent, as an upgrade's history
has: ``key`` must refuse ``E_HISTORY_REWRITTEN``, ``new`` ``E_STORAGE``, and nothing reruns.

Seen (round 74): BROKEN (14 ids, 3 classes; 6 FIXED 2026-11-30, r74squash, below).
**A squash with one unsealed controller-named
commit on top passes for an upgrade** (4: ``botpar-new-start``, ``-done``, ``-gate``,
``-audit``): the agent's parentless squash (files saying ``completed``/``awaiting_approval``
with their ``execution:`` blocks) plus one ``git commit --allow-empty`` made as ``plangate``
on it; a new state directory starts at once by trust on first use (no ``own_line_squashed``:
a controller-named commit with a parent exists), Alice's re-approval of completed ``f-01``
RUNS IT AGAIN, her gate approval of ``fg-1`` RUNS ITS ACTION 1 AGAIN, the audit calls both
valid. ``botpar-key`` holds (``E_HISTORY_REWRITTEN``). Should (docs/operations.md, "A squashed
line": "history from before sealing, an upgrade, has them"; SPEC §15 at most once): an
upgrade's history holds the controller's commits that MADE the records (the start and outcome
of each run); a controller-named commit that made none of the records the files hold is no
upgrade, and the start refuses ``E_STORAGE`` (or counts the recorded runs as executed).
**An indented squash starts, and the controller then starts what ran** (6: ``ind-key-*``,
``ind-new-*``, ``-start``, ``-ctl``, ``-audit``): the agent's squash with every plan file
indented by one space (a root block mapping may be indented; the same YAML) is not refused
(key or new state); on Alice's approvals the controller commits ``plangate: start plans/f-01``
(a version that ran before the squash) and starts ``fg-1`` and ``f-06``, its own write then
leaves each file unreadable (``E_YAML_PARSE ... did not find expected <document start>``:
its block appended at column 0 under an indented root); the tool is not called
(``run_continued`` "run from the start commit" each pass, nothing ends), ``f-06`` never runs,
and the fresh-clone audit lists a valid start of ``f-01`` and ``fg-1`` on the squashed line.
Should: as the sibling's spellings (refused; ``--take-over`` counts them executed).
**Honest work refused: an indented plan file is corrupted by the controller's own write**
(4: ``freshind-new-done``, ``-gate``, ``-ctl``, ``-audit``): a new repository whose plans are
indented by one space (valid YAML; docs/operations.md "Plans that cannot carry a status" names
tabs, lists and flow mappings, not this): the first pass cannot freeze them (``plan_waiting``
"cannot write plans/f-07/PLAN.yml: E_YAML_PARSE"), Alice's approvals are answered by a
``plangate: refuse`` commit that leaves the file unreadable; nothing she approved runs. Should:
the writer keeps the document's indentation (or the file is reported unreadable/invalid with
its reason before any write), never a controller commit that breaks a readable plan. FIXED
(2026-11-30, r74indent): the controller's one edit (``yamlio.edit``; the freeze, start record,
outcome, refusal, status changes and ``validation:`` all go through it) writes its blocks at
the root mapping's own column, and reads back every text it makes before it is handed on: an
edit that would not read back as the file with exactly those changes raises ``E_YAML_PARSE``
(the file reported, nothing written). The indented plans are frozen and run once. With the
writer fixed, the indented squash (``ind-*``, r74squash's) no longer stops at its own broken
write: ``ind-{key,new}-ctl`` hold (``f-06`` runs once), and ``ind-{key,new}-{done,gate}`` now
fail (``f-01`` and ``fg-1``'s action 1 RUN AGAIN, as the ``dq`` squash's do) until the squash is
refused: strict xfails here, to drop with r74squash's fix. HELD:
``strip`` (the agent's ``filter-branch`` deleting every ``Controller-Seal:`` line, parents
kept: the key alone ``E_HISTORY_REWRITTEN``, take-over reruns nothing; a new state directory
starts as an upgrade and reruns nothing); ``ofox`` (an orphan branch with main merged into
it: ``E_HISTORY_REWRITTEN``, the line put back, key starts, new ``E_STORAGE`` then take-over;
nothing reruns); ``botpar-key``; controls ``fresh``, ``freshdq`` (quoted keys in an honest
new repository: frozen and run once on Alice's approvals).
FIXED (2026-11-30, r74squash): ``botpar-new-*`` and ``ind-{key,new}-start``. A new state
directory takes a run its files record as an upgrade's only when a commit under the
controller's name WITH a parent changed that plan's folder (made its records); the empty
commit made none: ``E_STORAGE``, and the take-over reruns nothing. The first start reads what
the files parse to (the sibling's fix): the indented squash is refused (``E_HISTORY_REWRITTEN``
/ ``E_STORAGE``), the take-over counts ``f-01``..``f-04`` and ``fg-1`` executed, and no start
of ``f-01`` or ``fg-1`` is committed or audited valid. OPEN (r74indent's writer):
``ind-{key,new}-ctl`` / ``-audit``: after the take-over, Alice's approval of the indented
``f-06`` is committed as a start whose write breaks the file, so it never runs while the audit
counts that start valid: the same break as ``freshind-*``.
Merged (2026-11-30, the lead): with both fixes every ``ind-*`` id holds (the squash refused,
``f-06`` frozen and run once after the take-over) and no id of this module is open.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, BOT, Lab, cases
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone
from test_round74_burst_squashspell import _squash, build, check

CLONES = ["ind-key", "ind-new", "strip-key", "strip-new", "ofox-key", "ofox-new", "botpar-key",
          "botpar-new",
          "fresh-new", "freshdq-new", "freshind-new"]  # fmt: skip
#: round 74: see the module docstring's "Seen (round 74)": every id fixed (2026-11-30: the
#: indented squash refused by r74squash, the indented files' writer by r74indent)
BROKEN: dict[str, object] = {}


def _shape(clone: Clone, shape: str, p0_tree: str) -> None:
    g = clone.git
    if shape == "strip":
        env = clone.lab.env(AGENT)
        env["FILTER_BRANCH_SQUELCH_WARNING"] = "1"
        import subprocess

        subprocess.run(
            ["git", "filter-branch", "-f", "--msg-filter", "sed '/^Controller-Seal:/d'", "--",
             "main"], cwd=clone.repo, env=env, capture_output=True, check=True,
        )  # fmt: skip
        g("update-ref", "-d", "refs/original/refs/heads/main")
        assert "Controller-Seal:" not in g("log", "--format=%B", "main")
    elif shape == "ofox":
        tree = g("rev-parse", "HEAD^{tree}").strip()
        orphan = g("commit-tree", tree, "-m", "agent line", who=AGENT).strip()
        tip = g("rev-parse", "HEAD").strip()
        g("reset", "-q", "--hard", orphan)
        g("merge", "-q", "--allow-unrelated-histories", "--no-ff", "-m", "merge main", tip,
          who=AGENT)  # fmt: skip

        def fix() -> None:  # the line put back: main to the merge's second parent
            g("reset", "-q", "--hard", "HEAD^2")

        clone.fix = fix  # type: ignore[attr-defined]
    elif shape == "botpar":  # the squash, then one commit under the controller's name on it
        _squash(clone, "plain", p0_tree)
        g("commit", "-q", "--allow-empty", "-m", "plangate: record policy", who=BOT)
    else:
        _squash(clone, shape, p0_tree)


def _build(root: Path) -> Lab:
    return build(root, CLONES, _shape, 1792000000)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-indentwriter", _build)


VS = ["start", "done", "gate", "ctl", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_first_start_reruns_nothing_and_starts_honest_work(lab: Lab, vid: str) -> None:
    check(lab, vid)
