"""Round 84 (surface, atk84b): the shared writer's crash note (round 83, r83mcpkill) forged by
the agent, who writes ``.git`` in local mode (docs/threat-model.md: "In local mode the agent
writes `.git` too (it must, to commit)").

docs/operations.md: a writer "killed in that window ... leaves both [``.git/index.lock`` and
``.git/plangate-index-lock``]; the next such writer, the next `plangate mcp` start, or the
controller's next start or pass finishes its writes and removes that `.git/index.lock`".
SPEC §15: "The controller never commits bytes it did not produce, never follows a symlink or
opens a non-regular file in the plans tree"; the property under attack: "no reader writes where
it should not".

The note's shape, read from a real one (a ``plangate mcp`` submit SIGKILLed the moment ``main``
moved): ``L <dev> <ino> <mtime_ns>`` of the ``index.lock`` it holds, the byte length of the new
entries, the entries ``<mode> <blob>\\t<path>\\0``, the commit before, then that commit's
entries (``-\\t<path>\\0``: absent). The agent can write all of it: it stats the empty
``index.lock`` it creates and writes blobs with ``git hash-object -w``.

Lab (one, local mode, ``agent.identity`` set; plans ``y-<vid>`` committed and frozen by one pass,
Alice's approval targets; a committed symlink ``plans/lnk`` to a folder outside). Each variant
``<kind>:<finisher>`` forges a note, then the finisher runs: ``mcp`` (a ``plangate mcp``
session's ``status`` call: its start finishes notes), ``run`` (a ``run --once`` pass) or
``approve`` (Alice's ``plangate approve plans/y-<vid>``). Kinds:
- ``blob``: the note's new entry ``plans/fx-<vid>/PLAN.yml`` is the agent's blob, not on the branch;
- ``up``: a new entry ``../outside-<vid>.txt`` (outside the working tree);
- ``gitdir``: a new entry ``.git/hooks/post-commit``, mode 100755;
- ``link``: a new entry ``plans/lnk/PLAN-<vid>.yml`` through the committed symlink;
- ``olddel``: the "before" side names ``plans/y-<vid>/PLAN.yml`` absent (a roll-back deleting it);
- ``oldup``: the "before" side writes ``../oldout-<vid>.txt`` and rewrites ``y-<vid>``;
- ``oldforge``: "before" is ``HEAD~1``, the new entry ``y-<vid>``'s file with the agent's text;
- ``locklink`` (``mcp``, ``run``): ``.git/index.lock`` is a symlink to a file of the operator's;
- ``flocklink``, ``notelink`` (``submit``): ``.git/plangate-index-lock.flock`` or the note
  itself a symlink to a file of the operator's, then an honest MCP ``submit``;
- ``real:<finisher>`` (controls): a real killed submit's note, finished by that finisher
  (the plan's file and index entry written, the lock gone).
Races (``test_the_shared_writer_under_races``): ``v2:{answer,clean}``: a submit of ``s-dv``
SIGKILLed the moment ``main`` moves, then the agent's slightly different ``s-dv`` (another task):
answered ``ok``, the branch holds v2, ``git status`` clean; ``q:submits``, ``ra:approve``,
``rb:approve``, ``race:clean``: one MCP session of four submits, Alice's two ``plangate
approve`` and a ``run --once`` started at once, then two passes: each submit ``ok`` and
committed once, each approve either committed once (its plan ran once) or refused with an
``E_`` code committing nothing (its plan still pending), ``git status`` clean.
Checks per variant: nothing written outside the tree, into ``.git/hooks`` or through the link,
the operator's file unchanged, ``y-<vid>`` as committed, no forged entry in the index or any
commit, ``git status`` clean; for ``approve`` its approval committed (exit 0).

Seen (round 84): nothing broke. Every forged note was dropped with its lock and nothing it named
was written (neither side), by each finisher; a symlinked ``index.lock`` was left alone (the
operator's file untouched; ``run --once`` refuses ``E_GIT ... index.lock': File exists``, the
remedy "if no git process is running, remove ... index.lock", the bench removes it); a symlinked
flock file or note was not written through, the honest ``submit`` answered ``ok``.
Races held: v2 was
committed as the new version over the finished v1; the four submits were committed once each; one
racing ``plangate approve`` was refused ``E_GIT: main moved while committing`` (remedy "run the
command again"; noted: it does not retry as ``submit`` does for about 4 s), nothing committed,
its plan pending; the other committed and ran once. Noted: the
readers (``plangate status --json``, ``show``, ``hash``) do not finish a killed writer's note
(no reader writes); ``status`` answered the submitted plan's row from the branch
(``pending_approval``, "waiting to be frozen") while its file was still missing from the tree.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from mcpkit import PLANGATE, _requests, call
from test_round2_execution_kit import shared

EXTRA = "agent:\n  identity: {name: Agent, email: agent@example.com}\n"
KINDS = ["blob", "up", "gitdir", "link", "olddel", "oldup", "oldforge"]
VIDS = (
    [f"{k}:{f}" for k in KINDS for f in ("mcp", "run")]
    + [f"{k}:approve" for k in ("blob", "up", "olddel", "oldforge")]
    + ["locklink:mcp", "locklink:run", "flocklink:submit", "notelink:submit"]
    + ["real:mcp", "real:run", "real:approve"]
)


def _tag(vid: str) -> str:
    return vid.replace(":", "-")


def _blob(lab: Lab, text: str) -> str:
    return lab.git("hash-object", "-w", "--stdin", input=text).strip()


def _note(lab: Lab, new: bytes, old: bytes, before: str) -> None:
    git = lab.repo / ".git"
    lock = git / "index.lock"
    if not lock.is_symlink():
        lock.write_bytes(b"")
    st = os.stat(lock)
    body = b"L %d %d %d\n" % (st.st_dev, st.st_ino, st.st_mtime_ns)
    (git / "plangate-index-lock").write_bytes(
        body + b"%d\n" % len(new) + new + before.encode() + b"\n" + old
    )


def _e(mode: str, blob: str, path: str) -> bytes:
    return f"{mode} {blob}\t{path}\0".encode()


def _forge(lab: Lab, vid: str) -> None:
    kind, tag = vid.split(":")[0], _tag(vid)
    head = lab.head()
    evil = _blob(lab, f"forged by the agent {tag}\n")
    y = f"plans/y-{tag}/PLAN.yml"
    if kind == "blob":
        _note(lab, _e("100644", evil, f"plans/fx-{tag}/PLAN.yml"), b"", head)
    elif kind == "up":
        _note(lab, _e("100644", evil, f"../outside-{tag}.txt"), b"", head)
    elif kind == "gitdir":
        _note(lab, _e("100755", evil, ".git/hooks/post-commit"), b"", head)
    elif kind == "link":
        _note(lab, _e("100644", evil, f"plans/lnk/PLAN-{tag}.yml"), b"", head)
    elif kind == "olddel":
        new = _e("100644", evil, f"plans/fx-{tag}/PLAN.yml")
        _note(lab, new, f"-\t{y}\0".encode(), head)
    elif kind == "oldup":
        new = _e("100644", evil, f"plans/fx-{tag}/PLAN.yml")
        _note(lab, new, _e("100644", evil, f"../oldout-{tag}.txt") + _e("100644", evil, y), head)
    elif kind == "oldforge":
        text = plan_text(f"y-{tag}", name="forged by the agent")
        _note(lab, _e("100644", _blob(lab, text), y), f"-\t{y}\0".encode(), lab.head("HEAD~1"))
    elif kind == "locklink":
        (lab.repo / ".git" / "index.lock").symlink_to(lab.root / f"victim-{tag}")
        _note(lab, _e("100644", lab.git("rev-parse", f"HEAD:{y}").strip(), y), b"", head)


def _kill_submit(lab: Lab, tag: str) -> None:
    """A real killed writer: a ``submit`` SIGKILLed the moment ``main`` moves."""
    lab.git("pack-refs", "--all")
    ref = lab.repo / ".git" / "refs" / "heads" / "main"
    p = subprocess.Popen(
        [PLANGATE, "mcp", "--config", str(lab.config)],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=lab.root, env=lab.env(), start_new_session=True, text=True,
    )  # fmt: skip
    assert p.stdin is not None
    p.stdin.write(_requests([("submit", {"plan": plan_text(f"s-{tag}"), "slug": f"s-{tag}"})]))
    p.stdin.close()
    end = time.time() + 60
    while time.time() < end and p.poll() is None:
        if ref.exists():
            os.killpg(p.pid, signal.SIGKILL)
            break
    p.wait()
    for x in (".git/HEAD.lock", ".git/refs/heads/main.lock"):  # git's own crash
        if (lab.repo / x).exists():
            (lab.repo / x).unlink()


def _finish(lab: Lab, vid: str) -> dict[str, Any]:
    kind, fin = vid.split(":")
    tag = _tag(vid)
    row: dict[str, Any] = {}
    if kind == "real":
        _kill_submit(lab, tag)
        row["noted"] = (lab.repo / ".git" / "plangate-index-lock").exists()
    elif kind in ("flocklink", "notelink"):
        name = "plangate-index-lock" + (".flock" if kind == "flocklink" else "")
        target = lab.repo / ".git" / name
        if target.exists() or target.is_symlink():
            target.unlink()
        target.symlink_to(lab.root / f"victim-{tag}")
    else:
        _forge(lab, vid)
    if fin in ("mcp", "submit"):
        args = ("status", {}) if fin == "mcp" else ("submit", {"plan": plan_text(f"h-{tag}"),
                                                             "slug": f"h-{tag}"})  # fmt: skip
        reply = call(lab, *args)
        row["answer"] = json.dumps(reply)[-600:]
        row["ok"] = not reply.get("result", {}).get("isError")
    elif fin == "run":
        done = lab.run(check=False)
        row["ok"], row["answer"] = done.returncode == 0, done.stderr[-600:]
    else:
        done = subprocess.run(
            [PLANGATE, "approve", f"plans/y-{tag}", "--config", str(lab.config)],
            cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
        )  # fmt: skip
        row["ok"], row["answer"] = done.returncode == 0, (done.stdout + done.stderr)[-600:]
    git = lab.repo / ".git"
    row["outside"] = sorted(p.name for p in lab.root.glob("*out*-*.txt"))
    row["hook"] = (git / "hooks" / "post-commit").exists()
    row["through"] = sorted(p.name for p in (lab.root / "outdir").iterdir())
    victim = lab.root / f"victim-{tag}"
    row["victim"] = victim.read_text() if victim.exists() else None
    y = lab.repo / "plans" / f"y-{tag}" / "PLAN.yml"
    row["y_kept"] = y.exists() and y.read_bytes() == lab.git("show", f"HEAD:plans/y-{tag}/PLAN.yml",
                                                              check=False).encode()  # fmt: skip
    row["forged_index"] = lab.git(
        "ls-files", "-s", f"plans/fx-{tag}", f"plans/lnk/PLAN-{tag}.yml"
    ).strip()
    row["forged_log"] = lab.git("log", "--all", "--format=%h %s", "--", f"plans/fx-{tag}").strip()
    row["forged_text"] = "forged by the agent" in lab.git("log", "--all", "-p", "--format=")
    row["lock_link"] = (git / "index.lock").is_symlink()
    if row["lock_link"]:  # the operator removes the agent's planted symlink and its note
        (git / "index.lock").unlink()
        (git / "plangate-index-lock").unlink(missing_ok=True)
    row["porcelain"] = lab.git("status", "--porcelain").strip()
    if kind == "real":
        sub = lab.repo / "plans" / f"s-{tag}" / "PLAN.yml"
        row["real_file"] = sub.exists()
        row["real_lock"] = (git / "index.lock").exists() or (git / "plangate-index-lock").exists()
    return row


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=EXTRA)
    (root / "outdir").mkdir()
    for vid in VIDS:
        lab.write(f"y-{_tag(vid)}", plan_text(f"y-{_tag(vid)}"))
    (lab.repo / "plans" / "lnk").symlink_to(root / "outdir")
    lab.commit("agent: plans")
    lab.run()
    for vid in VIDS:
        victim = root / f"victim-{_tag(vid)}"
        victim.write_text("the operator's file\n")
    lab.got = {vid: _finish(lab, vid) for vid in VIDS}  # type: ignore[attr-defined]
    lab.race = _race(lab)  # type: ignore[attr-defined]
    return lab


def _race(lab: Lab) -> dict[str, Any]:
    """A killed submit of ``dv``, then the agent's slightly different ``dv`` (v2); then one
    MCP session of four submits, Alice's two ``plangate approve`` and a ``run --once`` started
    at once; two more passes."""
    got: dict[str, Any] = {}
    lab.write("ra", plan_text("ra"))
    lab.write("rb", plan_text("rb"))
    lab.commit("agent: race plans", AGENT, "plans/ra", "plans/rb")
    lab.run()
    _kill_submit(lab, "dv")  # submits plans/s-dv
    v2 = plan_text("s-dv").replace("attack variant s-dv", "attack variant s-dv v2")
    reply = call(lab, "submit", {"plan": v2, "slug": "s-dv"})
    got["v2_ok"] = not reply.get("result", {}).get("isError")
    got["v2_head"] = "variant s-dv v2" in lab.git("show", "HEAD:plans/s-dv/PLAN.yml")
    got["v2_porcelain"] = lab.git("status", "--porcelain").strip()
    cfg = str(lab.config)
    mcp = subprocess.Popen(
        [PLANGATE, "mcp", "--config", cfg], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, cwd=lab.root, env=lab.env(), text=True,
    )  # fmt: skip
    approves = {
        s: subprocess.Popen(
            [PLANGATE, "approve", f"plans/{s}", "--config", cfg],
            cwd=lab.repo,
            env=lab.env(ALICE),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in ("ra", "rb")
    }
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    run = subprocess.Popen(
        [PLANGATE, "run", "--once", "--config", cfg], cwd=lab.root, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    calls = [("submit", {"plan": plan_text(f"q{i}"), "slug": f"q{i}"}) for i in range(4)]
    out, _ = mcp.communicate(_requests(calls), timeout=180)
    got["submits_ok"] = out.count('\\"ok\\": true')
    got["approve"] = {s: (p.wait(180), (p.stdout.read() if p.stdout else "")[-300:])
                      for s, p in approves.items()}  # fmt: skip
    got["run_rc"] = run.wait(180)
    lab.run()
    lab.run()
    got["porcelain"] = lab.git("status", "--porcelain").strip()
    got["subjects"] = lab.git("log", "--format=%an|%s").splitlines()
    got["rows"] = {k: v.get("status") for k, v in lab.status().items()}
    got["ran"] = lab.log.read_text() if lab.log.exists() else ""
    return got


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-surface-locknote", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_a_forged_note_writes_nothing_it_names(lab: Lab, vid: str) -> None:
    """The finisher writes only what the branch holds: nothing outside the tree, in
    ``.git/hooks``, through a link or a planted symlink; no forged entry indexed or committed;
    the plan ``y-<vid>`` as committed; the honest command still works."""
    row = lab.got[vid]  # type: ignore[attr-defined]
    kind, fin = vid.split(":")
    assert row["outside"] == [] and not row["hook"] and row["through"] == [], row
    assert row["victim"] == "the operator's file\n", row
    assert row["y_kept"], row
    assert row["forged_index"] == "" and row["forged_log"] == "" and not row["forged_text"], row
    assert row["porcelain"] == "", row
    if kind == "real":  # control: a real killed writer's note is finished
        if not row["noted"]:  # under load the kill can land after the writer finished
            pytest.skip(f"the kill missed the writer's window: {row.get('answer', '')[-200:]}")
        assert row["real_file"] and not row["real_lock"], row
    if kind == "locklink":
        assert row["lock_link"], row  # never taken over, never written through
    elif fin in ("mcp", "submit", "approve") or kind == "real":
        assert row["ok"], row["answer"]


RACE = ["v2:answer", "v2:clean", "q:submits", "ra:approve", "rb:approve", "race:clean"]


@pytest.mark.parametrize("vid", RACE)
def test_the_shared_writer_under_races(lab: Lab, vid: str) -> None:
    """A slightly different resubmission after a kill is committed as the new version, the
    tree clean; four submits racing two approves and a pass: each submit committed once, each
    approve either committed once (and its plan ran once) or refused with a code, committing
    nothing; ``git status`` clean."""
    got = lab.race  # type: ignore[attr-defined]
    what, check = vid.split(":")
    if vid == "v2:answer":
        assert got["v2_ok"] and got["v2_head"], got
    elif vid == "v2:clean":
        assert got["v2_porcelain"] == "", got["v2_porcelain"]
    elif vid == "q:submits":
        assert got["submits_ok"] == 4, got
        for i in range(4):
            mine = [x for x in got["subjects"] if x == f"Agent|Submit plan plans/q{i}"]
            assert len(mine) == 1, got["subjects"]
            assert got["rows"].get(f"plans/q{i}") == "pending_approval", got["rows"]
    elif check == "approve":
        code, text = got["approve"][what]
        approvals = [x for x in got["subjects"] if x.startswith("Alice|") and what in x]
        runs = got["ran"].count(f'"argv": ["{what}"]')
        if code == 0:
            assert len(approvals) == 1 and runs == 1, (text, approvals, runs)
            assert got["rows"].get(f"plans/{what}") == "completed", got["rows"]
        else:
            assert "E_" in text and approvals == [] and runs == 0, (text, approvals, runs)
            assert got["rows"].get(f"plans/{what}") == "pending_approval", got["rows"]
    else:
        assert got["porcelain"] == "" and got["run_rc"] == 0, got
