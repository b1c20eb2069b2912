"""A dead controller's left tool gets its grace as a whole group (the restart's
:func:`~controller.execution.tools.process.stop_orphan`).

Seen once under a load of about 20 (``tests/service/test_index_lock_crash.py``, the left
``git commit``): the restart sent SIGTERM to the left tool's group, the leader exited at once,
and the SIGKILL that followed the leader's exit reached the group's ``git`` before it had
removed its ``index.lock``, so the restart's own pass failed ``E_GIT`` on that lock. The
SIGKILL now waits while any member of the group still runs (up to ``LEFT_GRACE``).

Real processes: a leader that dies on SIGTERM at once and a member of its group that takes
its time to clean up on SIGTERM, as git does.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

from controller.execution.tools import process

MEMBER = """\
trap 'sleep 1.5; echo clean > "$1/cleaned"; exit 0' TERM
echo $$ > "$1/member"
while :; do sleep 0.05; done
"""


def test_a_member_cleaning_up_on_sigterm_is_not_killed_after_its_leader(tmp_path: Path) -> None:
    script = tmp_path / "member.sh"
    script.write_text(MEMBER)
    leader = subprocess.Popen(
        ["sh", "-c", 'sh "$0" "$1" & exec sleep 600', str(script), str(tmp_path)],
        start_new_session=True,
    )
    try:
        for _ in range(500):
            if (tmp_path / "member").exists():
                break
            time.sleep(0.02)
        member = int((tmp_path / "member").read_text())
        spawned = process.identify(leader.pid)
        assert spawned.pgid == leader.pid

        assert process.stop_orphan(spawned) is True
        leader.wait(timeout=30)
        # the member finished its SIGTERM cleanup before any SIGKILL, and is gone
        assert (tmp_path / "cleaned").read_text() == "clean\n"
        stat = Path(f"/proc/{member}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader.pid, 9)
        leader.wait(timeout=30)
