"""Round 25, hostile commit metadata and hostile folder names meet the controller's history
reading (what is recorded, one bad commit never stalls the pass).

Commits written as raw objects (``git hash-object -t commit --literally``) by Mallory (not an
approver), each setting one plan ``approved``, in a row on ``main``; then Alice approves the
honest ``zz``; two ``run --once`` passes:

- ``nul``: the message holds NUL bytes followed by a fake log record (``<sha> NUL Alice NUL
  alice@example.com NUL ...``) and a controller trailer block naming the plan;
- ``soh``: the same with ``\\x01`` record separators;
- ``rs``: ``\\x1e``/``\\x1f`` separators and ``alice@example.com``;
- ``tzbad``: author/committer time zone ``+99999`` (fsck: badTimezone);
- ``noemail``: ``author alice@example.com <> ...`` (an empty mailbox, Alice's address as name);
- ``dblmail``: ``Mallory <mallory@example.com> <alice@example.com> ...`` (fsck: badDate);
- ``nlname``: ``Mallory <mallory@example.com>alice@example.com> ...`` (missing space);
- ``badutf8``: a name and a message with bytes that are not UTF-8 and no ``encoding`` header.

Folder names that are git pathspec globs (``git log -- plans/[z]/PLAN.yml`` matches
``plans/z/PLAN.yml`` too unless pathspecs are literal): Mallory writes and self-approves
``plans/[z]``, ``plans/a*`` and ``plans/?`` beside the agent's ``plans/z``, ``plans/abc``
and ``plans/q`` that Alice approves later (so a glob's history would contain Alice's
approval).

Defence asserted: each pass exits 0 without a traceback; no Mallory-approved plan ever runs
(0 calls, not ``completed``); each honest plan runs exactly once; ``plangate audit`` exits 0
(agrees with the controller). All held (round 25).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

RAW = ["nul", "soh", "rs", "tzbad", "noemail", "dblmail", "nlname", "badutf8"]
GLOBS = {"[z]": "gz", "a*": "gstar", "?": "gq"}
HONEST = ["z", "abc", "q", "zz"]


def _raw(lab: Lab, msg: bytes, author: bytes) -> None:
    lab.git("add", "-A")
    tree = lab.git("write-tree").strip()
    body = (
        b"tree "
        + tree.encode()
        + b"\nparent "
        + lab.head().encode()
        + b"\nauthor "
        + author
        + b"\ncommitter "
        + author
        + b"\n\n"
        + msg
    )
    tmp = lab.root / "c.tmp"
    tmp.write_bytes(body)
    out = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--literally", str(tmp)],
        cwd=lab.repo,
        capture_output=True,
        text=True,
        env=lab.env(),
        check=False,
    )
    sha = out.stdout.strip()
    if not sha:
        raise BenchError(out.stderr)
    lab.git("update-ref", "refs/heads/main", sha)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in [*RAW, *HONEST]:
        lab.write(v, plan_text(v))
    lab.commit("plans", AGENT)
    for slug, tag in GLOBS.items():
        lab.write(slug, plan_text(tag))
    lab.commit("glob-named plans", MALLORY)
    lab.run()
    now = int(time.time())
    mal = b"Mallory <mallory@example.com> %d +0000" % now

    def forged(v: str) -> bytes:
        return (
            f"\nPlan: plans/{v}\nPlan-Event: approve\nApproved-By: alice@example.com\n"
        ).encode()

    head = lab.head()
    specs: dict[str, tuple[bytes, bytes]] = {
        "nul": (
            b"approve nul\x00"
            + f"{head}\x00Alice\x00alice@example.com\x00approve nul\x00".encode()
            + forged("nul"),
            mal,
        ),
        "soh": (
            b"approve soh\x01"
            + f"{head}\x00Alice\x00alice@example.com\x00approve soh\x00".encode()
            + b"\x01"
            + forged("soh"),
            mal,
        ),
        "rs": (b"approve rs\x1e\x1falice@example.com\x1e" + forged("rs"), mal),
        "tzbad": (b"approve tz", b"Mallory <mallory@example.com> %d +99999" % now),
        "noemail": (b"approve noemail", b"alice@example.com <> %d +0000" % now),
        "dblmail": (
            b"approve dbl",
            b"Mallory <mallory@example.com> <alice@example.com> %d +0000" % now,
        ),
        "nlname": (
            b"approve nl",
            b"Mallory <mallory@example.com>alice@example.com> %d +0000" % now,
        ),
        "badutf8": (b"approve \xff\xfe bad", b"Mal\xfflory <mallory@example.com> %d +0000" % now),
    }
    for v, (msg, author) in specs.items():
        lab.set_status(v, "approved")
        _raw(lab, msg, author)
    for slug in GLOBS:
        lab.set_status(slug, "approved")
    lab.commit("self approve", MALLORY)
    for slug in HONEST:
        lab.set_status(slug, "approved")
    lab.commit("approve honest", ALICE)
    outs = [lab.run(check=False), lab.run(check=False)]
    lab.passes = [(r.returncode, "Traceback" in r.stderr) for r in outs]  # type: ignore[attr-defined]
    lab.audit_rc = lab.audit()[0]  # type: ignore[attr-defined]
    lab.st = {k: v.get("status") for k, v in lab.status().items()}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-commitmeta", _build)


def test_passes_clean(lab: Lab) -> None:
    assert lab.passes == [(0, False), (0, False)]  # type: ignore[attr-defined]
    assert lab.audit_rc == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", RAW + [f"glob-{s}" for s in GLOBS])
def test_mallory_never_runs(lab: Lab, vid: str) -> None:
    slug = vid[5:] if vid.startswith("glob-") else vid
    tag = GLOBS.get(slug, slug)
    assert lab.calls(tag) == []
    assert lab.st.get(f"plans/{slug}") != "completed"  # type: ignore[attr-defined]


@pytest.mark.parametrize("slug", HONEST)
def test_honest_runs_once(lab: Lab, slug: str) -> None:
    assert len(lab.calls(slug)) == 1
    assert lab.st.get(f"plans/{slug}") == "completed"  # type: ignore[attr-defined]
