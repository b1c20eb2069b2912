"""Reading the plan versions a scan needs in bulk, in the background and in parallel.

A cold scan of a long history would otherwise read and parse tens of thousands of PLAN.yml
versions one by one. :class:`_Prefetcher` batches them into ``cat-file --batch`` reads while
the history is still being walked; a big scan's batches are parsed by child processes
started once for the scan (``python -m controller.git.prefetch``, fed length-prefixed
marshalled batches of blobs on stdin, answering with their facts on stdout).
"""

from __future__ import annotations

import os
import threading
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

from controller.git.planstate import BlobFacts, facts_of, path_name, too_large
from controller.git.records import CommitRecord, FileChange, Person
from controller.plan.plans import PLAN_FILES

if TYPE_CHECKING:  # the parsing children import this module: not GitPython, nor sqlite
    from subprocess import Popen

    from controller.git.gitrepo import GitRepo
    from controller.git.indexstore import IndexStore

#: Plan versions read and parsed per background batch while the history is still walked.
PREFETCH_BLOBS = 2000
#: The most bytes of plan versions a batch holds at once (read, parsed, dropped).
READ_BYTES = 16 * 1024 * 1024
#: One commit naming at least this many plan versions (a merge or a commit bringing a burst
#: of plans) has them read in one batch too; fewer are read one by one by apply() (a lone
#: approval: no batch process on its path).
PREFETCH_ONE_COMMIT = 32
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
        #: (commits whose plan versions the batch completes, its facts): oldest first
        self.futures: list[tuple[int, Any]] = []
        #: Commits whose plan versions are all in the index's facts cache (see :meth:`ready`).
        self.done = 0
        self.pool: Any = None
        #: The parsing children, once a batch is big enough to want them (one scan's).
        self.parsers: _Parsers | None = None
        #: The facts' repeated strings, held once (:func:`shared`; the prefetch thread's).
        self.strings: dict[str, str] = {}
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
        self.futures.append((self.commits, self.pool.submit(self._read, batch)))

    def ready(self) -> int:
        """How many of the commits added so far (in order) have every plan version they
        name in the index's facts cache; batches parsed by now are put there, none is
        waited for."""
        with self.lock:
            while self.futures and self.futures[0][1].done():
                covered, future = self.futures.pop(0)
                self.index._facts.update(future.result())
                self.done = covered
            if not self.futures and not self.wanted:
                self.done = self.commits
            return self.done

    def _read(self, batch: list[str]) -> dict[str, BlobFacts]:
        """The facts of ``batch``'s blobs. Their sizes are asked first: one over
        ``limits.max_plan_bytes`` is never read, and the rest are read and parsed at most
        :data:`READ_BYTES` at a time (round 31: 90 versions of 900 KB in one push were all
        held at once, with their copies 1.8 MB each)."""
        limit = self.index.max_plan_bytes
        sizes = self.repo.blob_sizes(batch)
        facts = {sha: too_large(size, limit) for sha, size in sizes.items() if size > limit}
        wanted = [sha for sha in sizes if sha not in facts]
        workers = min(os.cpu_count() or 1, 8)
        if self.parsers is None and len(wanted) >= PREFETCH_BLOBS and workers >= 2:
            self.parsers = _Parsers(workers)
        start = 0
        while start < len(wanted):
            end, held = start + 1, sizes[wanted[start]]
            while end < len(wanted) and held + sizes[wanted[end]] <= READ_BYTES:
                held += sizes[wanted[end]]
                end += 1
            found = self.repo.blobs(wanted[start:end])
            blobs = list(found.values())
            if self.parsers is None:
                parsed = [facts_of(b, limit) for b in blobs]
            else:
                parsed = self.parsers.facts(blobs, limit)
            facts.update(zip(found, (shared(f, self.strings) for f in parsed), strict=True))
            start = end
        return facts

    def __exit__(self, *exc: object) -> None:
        many = self.commits > 1 or len(self.wanted) >= PREFETCH_ONE_COMMIT
        if exc[0] is None and self.wanted and many:
            self._submit()  # a few plans of one commit are read one by one by apply()
        try:
            for _, future in self.futures:
                if exc[0] is None:
                    self.index._facts.update(future.result())
                else:
                    future.cancel()
        finally:
            if self.pool is not None:
                self.pool.shutdown(wait=True)
            if self.parsers is not None:
                self.parsers.close()


#: The most strings a scan's :func:`shared` pool holds (a digest of a version's own blocks
#: repeats only among its copies: past this, a new one is not pooled).
SHARED_STRINGS = 4096


def shared(facts: BlobFacts, pool: dict[str, str]) -> BlobFacts:
    """``facts`` holding the strings many versions repeat once (perf85mem): a version's
    status, risk and the digests of its owned blocks (every version without an
    ``approval:`` or ``execution:`` block has the same two), and its frozen hash as the very
    string of its hash when equal. Each version's facts came as their own strings (a
    parsing child's answer): 425 bytes of strings per version, 21 MB of a 50,000-plan cold
    scan's peak, held until the scan's end."""

    def one(value: str | None) -> str | None:
        if value is None:
            return None
        held = pool.get(value)
        if held is None:
            if len(pool) >= SHARED_STRINGS:
                return value
            held = pool[value] = value
        return held

    frozen = facts.hash if facts.frozen_hash == facts.hash else one(facts.frozen_hash)
    return replace(
        facts,
        status=one(facts.status),
        frozen_hash=frozen,
        owned_digest=one(facts.owned_digest) or "",
        risk=one(facts.risk),
        execution_digest=one(facts.execution_digest) or "",
    )


class _Parsers:
    """Parsing processes for one scan, started once (a python and its imports, 0.06 s of
    CPU each; a pair was started per batch of 8,000 versions) and fed batch after batch; a
    batch is split evenly among them. A child that fails is not used again: its part, and
    every later one it would have had, is parsed in this process."""

    def __init__(self, count: int) -> None:
        import subprocess
        import sys

        self.procs: list[Popen[bytes] | None] = []
        for _ in range(count):
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "controller.git.prefetch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError:
                proc = None
            self.procs.append(proc)

    def facts(self, blobs: list[bytes], max_bytes: int) -> list[BlobFacts]:
        from concurrent.futures import ThreadPoolExecutor

        size = -(-len(blobs) // len(self.procs)) or 1
        chunks = [blobs[i : i + size] for i in range(0, len(blobs), size)]
        with ThreadPoolExecutor(len(chunks) or 1) as pool:
            parts = pool.map(self._exchange, range(len(chunks)), chunks, [max_bytes] * len(chunks))
            return [facts for part in parts for facts in part]

    def _exchange(self, at: int, blobs: list[bytes], max_bytes: int) -> list[BlobFacts]:
        import marshal

        proc = self.procs[at]
        if proc is not None:
            assert proc.stdin is not None and proc.stdout is not None
            try:
                _send(proc.stdin, marshal.dumps((max_bytes, blobs)))
                rows = marshal.loads(_receive(proc.stdout))
                if len(rows) == len(blobs):
                    return [
                        facts_of(b, max_bytes) if row is None else BlobFacts(*row)
                        for b, row in zip(blobs, rows, strict=True)
                    ]
            except (OSError, EOFError, ValueError, TypeError):
                pass
            self.procs[at] = None
            _stop(proc)
        return [facts_of(b, max_bytes) for b in blobs]

    def close(self) -> None:
        for proc in self.procs:
            if proc is not None:
                _stop(proc)
        self.procs = []


def _send(pipe: Any, data: bytes) -> None:
    pipe.write(len(data).to_bytes(8, "little"))
    pipe.write(data)
    pipe.flush()


def _receive(pipe: Any) -> bytes:
    head = pipe.read(8)
    if len(head) != 8:
        raise EOFError("the parsing process ended")
    size = int.from_bytes(head, "little")
    data: bytes = pipe.read(size)
    if len(data) != size:
        raise EOFError("the parsing process ended")
    return data


def _stop(proc: Popen[bytes]) -> None:
    import contextlib

    proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


def _facts_worker() -> None:
    """A parsing child: batch after batch of blobs in, their facts out, until stdin ends."""
    import marshal
    import sys

    from controller.plan import yamlio

    yamlio.forget_parses(keep=False)  # each version is read once here: nothing to keep
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            request = _receive(source)
        except EOFError:
            return
        max_bytes, blobs = marshal.loads(request)
        rows = [_row(facts_of(b, max_bytes)) for b in blobs]
        try:
            answer = marshal.dumps(rows)
        except ValueError:  # a value marshal cannot write (a float subclass): parsed there
            answer = marshal.dumps([row if _marshals(row) else None for row in rows])
        _send(sink, answer)


#: BlobFacts' fields, in order: a row is ``BlobFacts(*row)``'s arguments.
_FIELDS = tuple(f.name for f in fields(BlobFacts))


def _row(facts: BlobFacts) -> tuple[Any, ...]:
    """``tuple(asdict(facts).values())`` without ``asdict``'s deep copy (marshal writes the
    values as they are; 8% of a child's time went to copying them)."""
    return tuple(getattr(facts, name) for name in _FIELDS)


def _marshals(row: tuple[Any, ...]) -> bool:
    import marshal

    try:
        marshal.dumps(row)
    except ValueError:
        return False
    return True


if __name__ == "__main__":
    _facts_worker()
