"""Reading the plan versions a scan needs in bulk, in the background and in parallel.

A cold scan of a long history would otherwise read and parse tens of thousands of PLAN.yml
versions one by one. :class:`_Prefetcher` batches them into ``cat-file --batch`` reads while
``git log`` still runs; a big batch is parsed by child processes
(``python -m controller.git.prefetch``, fed marshalled blobs on stdin).
"""

from __future__ import annotations

import os
import threading
from dataclasses import asdict
from typing import Any

from controller.git.gitrepo import CommitRecord, FileChange, GitRepo, Person
from controller.git.indexstore import IndexStore
from controller.git.planstate import BlobFacts, facts_of, path_name
from controller.plan.plans import DEFAULT_MAX_BYTES, PLAN_FILES

#: Plan versions read and parsed per background batch while ``git log`` still runs.
PREFETCH_BLOBS = 8000
#: One commit naming at least this many plan versions (a merge or a commit bringing a burst
#: of plans) has them read in one batch too; fewer are read one by one by apply() (a lone
#: approval: no batch process on its path).
PREFETCH_ONE_COMMIT = 32
PARALLEL_MIN = 4000
_NOBODY = Person("", "")


class _Prefetcher:
    """Reads and parses, in one background thread, every plan version the scanned commits
    name, in batches of PREFETCH_BLOBS (one ``cat-file --batch`` and parallel parsing each),
    so that :meth:`~controller.git.history.HistoryIndex.apply` finds them all in the facts cache."""

    def __init__(self, index: IndexStore, repo: GitRepo) -> None:
        self.index, self.repo = index, repo
        self.wanted: list[str] = []
        self.seen: set[str] = set()
        self.commits = 0
        self.futures: list[Any] = []
        self.pool: Any = None
        self.lock = threading.Lock()  # add() is called from the scan's git readers

    def __enter__(self) -> _Prefetcher:
        return self

    def add(self, record: CommitRecord) -> None:
        with self.lock:
            self._add(record)

    def add_changes(self, changes: list[FileChange]) -> None:
        """One commit's changes (a cold scan's tree walk has no records yet)."""
        with self.lock:
            self._add(CommitRecord("", (), _NOBODY, _NOBODY, 0, 0, "", changes=changes))

    def _add(self, record: CommitRecord) -> None:
        self.commits += 1
        for change in record.changes:
            if path_name(change.path) not in PLAN_FILES:
                continue
            for blob in (change.old_blob, change.new_blob):
                if blob is not None and blob not in self.seen and blob not in self.index._facts:
                    self.seen.add(blob)
                    self.wanted.append(blob)
        if len(self.wanted) >= PREFETCH_BLOBS:
            self._submit()

    def _submit(self) -> None:
        from concurrent.futures import ThreadPoolExecutor

        if self.pool is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="prefetch")
        batch, self.wanted = self.wanted, []
        self.futures.append(self.pool.submit(self._read, batch))

    def _read(self, batch: list[str]) -> dict[str, BlobFacts]:
        found = self.repo.blobs(batch)
        limit = self.index.max_plan_bytes
        return dict(zip(found, _all_facts(list(found.values()), limit), strict=True))

    def __exit__(self, *exc: object) -> None:
        many = self.commits > 1 or len(self.wanted) >= PREFETCH_ONE_COMMIT
        if exc[0] is None and self.wanted and many:
            self._submit()  # a few plans of one commit are read one by one by apply()
        try:
            for future in self.futures:
                if exc[0] is None:
                    self.index._facts.update(future.result())
                else:
                    future.cancel()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)


def _all_facts(blobs: list[bytes], max_bytes: int = DEFAULT_MAX_BYTES) -> list[BlobFacts]:
    """Facts of many plan versions; a cold scan of a big history parses them in parallel
    child processes (``python -m controller.git.prefetch``, fed marshalled blobs on stdin)."""
    workers = min(os.cpu_count() or 1, 8)
    if len(blobs) < PARALLEL_MIN or workers < 2:
        return [facts_of(b, max_bytes) for b in blobs]
    import marshal
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    size = -(-len(blobs) // workers)
    chunks = [blobs[i : i + size] for i in range(0, len(blobs), size)]

    def run(chunk: list[bytes]) -> list[BlobFacts]:
        proc = subprocess.run(
            [sys.executable, "-m", "controller.git.prefetch"],
            input=marshal.dumps((max_bytes, chunk)),
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            return [facts_of(b, max_bytes) for b in chunk]
        return [BlobFacts(*row) for row in marshal.loads(proc.stdout)]

    with ThreadPoolExecutor(len(chunks)) as pool:
        return [facts for part in pool.map(run, chunks) for facts in part]


def _facts_worker() -> None:
    import marshal
    import sys

    from controller.plan import yamlio

    yamlio.forget_parses(keep=False)  # each version is read once here: nothing to keep
    max_bytes, blobs = marshal.loads(sys.stdin.buffer.read())
    rows = [tuple(asdict(facts_of(b, max_bytes)).values()) for b in blobs]
    sys.stdout.buffer.write(marshal.dumps(rows))


if __name__ == "__main__":
    _facts_worker()
