"""Round 69, bursts: ``commit.key`` spelled other ways than the controller writes it (round 68's
"64 hex digits on one line" rule), after a burst the old key sealed.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds 3 plain plans
``p-01``..``p-03`` and 4 gated plans ``g-01``..``g-04`` (action 1, then action 2 behind
``requires_approval``) in one commit; a pass freezes them. Alice approves the four gated plans
in one commit; a pass runs action 1 of each and pauses it at its gate; the state directory is
copied (``bk``, with its key). Burst: Alice's review branch approves ``p-*`` and the gates of
``g-01``..``g-03``, merged ``--no-ff``; one pass (sealed batched start and outcome commits,
made AFTER the copy). The tip is ``T``.

Each variant starts from ``T`` and from ``bk`` with the SAME key written another way; Alice
approves the gate of ``g-04``; one pass (a 3 s budget for the FIFO: a reader that blocks is a
break), then
``status --json``:

- ``nonl``: the 64 hex digits without the newline (``printf %s``; one line: must start);
- ``upper``: upper-case hex; ``crlf``: a CRLF line end; ``bom``: a UTF-8 BOM before it;
  ``spaces``: three spaces before the newline;
- ``long``: the key plus two more hex digits (66: not the key; must be refused);
- ``fifo``: a FIFO nobody writes; ``dir``: a directory (must be refused, not hang);
- ``swap``: not a restore: the LIVE state directory after the burst with another good key
  (``openssl rand -hex 32``, an operator's slip; the record holds every commit): must start.

Asserted: ``<v>-once``: no action of the burst ran again and ``g-04``'s ran at most once;
``<v>-verdict``: either the pass AND ``status`` refuse with ``E_STORAGE`` naming ``commit.key``
(nothing ran; never for ``nonl``; always for ``long``, ``fifo``, ``dir``), or the start is the
old key's: ``g-04``'s gated action ran once and every plan of the burst is ``completed``;
``<v>-after`` (``nonl``, ``crlf``, ``long``, ``fifo``, ``swap``): after a refusal, the remedy
(the good key restored from the backup) runs
``g-04``'s action once and nothing else; after a start, Alice's repeated gate approvals of
``g-01`` and ``g-02`` (as a wrong ``status`` would ask) run nothing; for ``swap`` the right key
then goes back: one more pass works and every row is still ``completed``.

Seen. HELD: ``swap`` (another good key on the live record: the burst stays its own, ``g-04``
runs once, the repeated gate approvals run nothing, and with the right key back every row is
``completed``); ``nonl`` starts (the burst adopted, every row ``completed``, ``g-04`` ran once, her
repeated gate approvals run nothing); ``upper``, ``crlf``, ``bom``, ``spaces``, ``long`` and
``dir`` are refused ``E_STORAGE`` by ``run`` and ``status`` naming ``commit.key`` with the
restore / ``openssl rand -hex 32`` remedy (``dir``: "Is a directory", remedy "restore read
access ... or move aside what is in the way"), nothing ran, and the remedy (the good key back)
runs ``g-04``'s action once and nothing again (every ``*-after``, ``fifo-after`` included).
BROKE (strict xfails): ``fifo-once``, ``fifo-verdict``: a FIFO at ``commit.key`` makes ``run
--once`` AND ``status`` block for ever in the open (no ``E_STORAGE``, no timeout; the test kills
them after 3 s). Round 9 made FIFOs in the shared ``.git`` ``E_GIT``; the state directory's key
is read with a plain open. Should: refused at once, ``E_STORAGE`` naming ``commit.key``, like
the directory.

Fixed (2026-11-30, lead): ``commit.key`` is opened without blocking and read only when it is
a regular file (a symlink to one is still followed: round 68's ``symlink`` control); a FIFO, a
directory or a device there is ``E_STORAGE`` "not a regular file" with the restore remedy
(``statedir._read_key_file``). ``fifo-once`` and ``fifo-verdict`` hold.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases
from burstkit import back_to, counts, grown, key_burst, key_refused, key_remedy, key_trial, try_cli
from test_round2_execution_kit import shared

P = [f"p-{i:02d}" for i in range(1, 4)]
G = [f"g-{i:02d}" for i in range(1, 5)]
VARIANTS = ["nonl", "upper", "crlf", "bom", "spaces", "long", "fifo", "dir", "swap"]
AFTER = ["nonl", "crlf", "long", "fifo", "swap"]  # the suite's budget: the remedy/regate for four
MUST_START = {"nonl", "swap"}
MUST_REFUSE = {"long", "fifo", "dir"}
BROKEN: dict[str, object] = {}


def _tags() -> list[str]:
    return [*P] + [f"{g}-{n}" for g in G for n in (1, 2)]


def _spell(state: Path, how: str) -> None:
    key = state / "commit.key"
    hexkey = key.read_text().strip()
    assert len(hexkey) == 64, hexkey
    key.unlink()
    if how == "fifo":
        os.mkfifo(key, 0o600)
        return
    if how == "dir":
        key.mkdir(mode=0o700)
        return
    if how == "swap":  # another good key (an operator's slip), the live record kept
        key.write_text(os.urandom(32).hex() + "\n")
        key.chmod(0o600)
        return
    data = {
        "nonl": hexkey,
        "upper": hexkey.upper() + "\n",
        "crlf": hexkey + "\r\n",
        "bom": "\ufeff" + hexkey + "\n",
        "spaces": hexkey + "   \n",
        "long": hexkey + "ab\n",
    }[how]
    key.write_bytes(data.encode("utf-8"))
    key.chmod(0o600)


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    tip, bk, date = key_burst(lab, P, G, "approve the gated four")
    lab.burst = counts(lab, _tags())  # type: ignore[attr-defined]
    lab.out = {}  # type: ignore[attr-defined]
    live = root / "live"
    shutil.copytree(lab.state, live, symlinks=True)
    for how in VARIANTS:
        back_to(lab, tip, live if how == "swap" else bk)
        _spell(lab.state, how)
        limit = 3 if how == "fifo" else 20  # a reader blocked on the FIFO: the suite's budget
        res, after = key_trial(lab, date, _tags(), "g-04", limit)
        if how not in AFTER:
            pass
        elif res["rc"] == 0:
            date()
            lab.set_status("g-01", "approved")
            lab.set_status("g-02", "approved")
            lab.commit("approve the g-01 and g-02 gates again", ALICE)
            try_cli(lab, "run", "--once")
            if how == "swap":  # the operator puts the right key back; one more pass
                key_remedy(lab, _tags(), res, after, live / "commit.key")
                res["back"] = res.pop("remedy")
            else:
                res["after"] = grown(counts(lab, _tags()), after)
        else:
            key_remedy(lab, _tags(), res, after, bk / "commit.key")
        lab.out[how] = res  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(lab.out, indent=1))  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-keyspell", _build)


def test_the_lab(lab: Lab) -> None:
    burst = lab.burst  # type: ignore[attr-defined]
    assert all(burst[p] == 1 for p in P), burst
    assert all(burst[f"{g}-2"] == 1 for g in G[:3]), burst
    assert burst["g-04-2"] == 0, burst


def _done(rows: dict) -> dict:
    return {
        s: (rows.get(s, {}).get("status"), rows.get(s, {}).get("last_event"))
        for s in [*P, *G]
        if rows.get(s, {}).get("status") != "completed"
    }


IDS = [f"{v}-{k}" for v in VARIANTS for k in ("once", "verdict")] + [f"{v}-after" for v in AFTER]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_key_spelled_another_way(lab: Lab, vid: str) -> None:
    how, what = vid.split("-", 1)
    res = lab.out[how]  # type: ignore[attr-defined]
    said = (res["rc"], res["err"][-600:], res["st_out"][-300:], res["delta"])
    burst = lab.burst  # type: ignore[attr-defined]
    if what == "once":
        twice = {t: burst[t] + n for t, n in res["delta"].items() if burst[t] + n > 1}
        assert twice == {}, said
        assert res["rc"] != -999 and res["st_rc"] != -999, ("a reader hung", said)
    elif what == "verdict":
        if key_refused(res):
            assert res["delta"] == {}, said
            assert how not in MUST_START, ("an honest key refused", said)
            return
        assert how not in MUST_REFUSE, ("a key the controller never writes was taken", said)
        assert res["rc"] == 0 and "Traceback" not in res["err"], said
        assert res["delta"] == {"g-04-2": 1}, said
        assert _done(res["rows"]) == {}, (_done(res["rows"]), said)
    elif "remedy" in res:
        rem = res["remedy"]
        assert rem["rc"] == 0, rem
        assert res["after"] == {"g-04-2": 1}, (res["after"], rem)
        assert _done(rem["rows"]) == {}, (_done(rem["rows"]), rem)
    else:
        assert res["after"] == {}, (res["after"], said)
        if "back" in res:
            back = res["back"]
            assert back["rc"] == 0 and _done(back["rows"]) == {}, (_done(back["rows"]), back)
