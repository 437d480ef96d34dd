"""Shared memory for ``cce.torch``'s same-host transport: one segment per rank, mapped by the
rank that owns it and by the group's leader (rank 0), and one doorbell (a FIFO) per rank.

A segment is a file under /dev/shm, named from a token the leader draws and a generation number,
created by its rank, mapped, and unlinked as soon as the leader has mapped it too — a process that
dies leaves no file behind. It grows (a new generation) when a call needs more; every rank of the
group grows at the same call, because every rank of a collective passes the same size. Its space
is reserved when it is made (``posix_fallocate``): a full /dev/shm is an error on every rank of
the call, never a SIGBUS when the memory is first written. Layout:
a 4 KiB header (the leader's status for the call: 0 done, else an error kind and message),
then the rank's input, then its output.
"""
import mmap
import os
import select
import struct
import time

import numpy as np

from ._errors import CceError

#: Bytes before a segment's input: the leader's status for the call and its error message.
HEADER = 4096
#: Where segments live (Linux's tmpfs of shared memory).
SHM_DIR = "/dev/shm"
_MIB = 1 << 20


def available():
    """True when this machine has a shared-memory directory to make segments in."""
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK)


class Segments:
    """The group's segments as this rank sees them: its own, and (leader) every rank's."""

    def __init__(self, token, rank, size):
        self.token, self.rank, self.size = token, rank, size
        self.generation = 0
        self.capacity = 0  # bytes of input + output a segment holds
        self.maps = {}  # rank -> (mmap, uint8 array)

    def _path(self, rank):
        return os.path.join(SHM_DIR, f"cce-torch-{self.token}-{self.generation}-{rank}")

    def _map(self, path, create):
        length = HEADER + self.capacity
        fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0), 0o600)
        try:
            if create:
                os.posix_fallocate(fd, 0, length)
            m = mmap.mmap(fd, length)
        finally:
            os.close(fd)
        return m, np.frombuffer(m, dtype=np.uint8)

    def ensure(self, payload, agree):
        """Room for ``payload`` bytes of input and as many of output in every segment. A
        collective step: ``agree(ok)`` returns whether every rank of the group passed ``ok``
        (it synchronises them while the segments change). Raises CceError on every rank when
        some rank could not make its segment (/dev/shm full)."""
        if 2 * payload <= self.capacity:
            return
        self.maps.clear()
        self.generation += 1
        self.capacity = max(2 * payload, 2 * self.capacity, _MIB)
        self.capacity = -(-self.capacity // mmap.PAGESIZE) * mmap.PAGESIZE
        own = self._path(self.rank)
        why = None
        try:
            self.maps[self.rank] = self._map(own, create=True)
        except OSError as e:
            why = e
            if os.path.exists(own):
                os.unlink(own)
        if not agree(why is None):
            if why is None:
                os.unlink(own)
            self.maps.clear()
            self.capacity = 0
            need = self.size * (HEADER + 2 * payload)
            raise CceError(f"cce.torch: no room in {SHM_DIR} for the group's {need} bytes of segments"
                           f"{f' ({why})' if why else ' (another rank could not make its own)'}; "
                           f"CCE_TRANSPORT=gloo moves the bytes over gloo instead")
        try:
            if self.rank == 0:
                for r in range(1, self.size):
                    self.maps[r] = self._map(self._path(r), create=False)
        finally:
            agree(True)
            os.unlink(own)

    def array(self, rank=None):
        """The whole segment of ``rank`` (this rank's by default) as a uint8 array."""
        return self.maps[self.rank if rank is None else rank][1]

    def input(self, rank, nbytes):
        return self.array(rank)[HEADER:HEADER + nbytes]

    def output(self, rank, nbytes):
        return self.array(rank)[HEADER + nbytes:HEADER + 2 * nbytes]

    # The leader's status for a call, in each rank's own header (a rank maps only its own).

    def set_status(self, rank, kind, message="", failed_rank=None):
        """Leader: ``rank``'s status for this call. 0: its output is written; 1 CceError,
        2 EngineFault, 3 RankFailed (``failed_rank``: the rank it names), 4 another error (the
        message says which)."""
        text = message.encode()[:HEADER - 12]
        head = struct.pack("<III", kind, len(text), 0 if failed_rank is None else failed_rank + 1)
        self.array(rank)[:12 + len(text)] = np.frombuffer(head + text, dtype=np.uint8)

    def status(self):
        """(kind, message, failed rank or None): this rank's status, as the leader set it."""
        kind, n, failed = struct.unpack("<III", bytes(self.array()[:12]))
        return kind, bytes(self.array()[12:12 + n]).decode(errors="replace"), failed - 1 if failed else None


class PeerFailed(Exception):
    """A doorbell wait ended without the ring: ``ranks`` (the ranks whose process is gone or that
    did not ring within the timeout) and ``dead`` (True when their processes are gone)."""

    def __init__(self, ranks, dead):
        super().__init__(f"rank(s) {ranks} {'exited' if dead else 'did not arrive in time'}")
        self.ranks, self.dead = ranks, dead


def _alive(pid):
    """True while process ``pid`` runs (a zombie — exited, not yet reaped — counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


class Doorbells:
    """One FIFO per rank under /dev/shm, the same-host transport's synchronisation: a rank rings
    the leader's bell (writing its rank number) when its input is in place; the leader rings each
    rank's bell when that rank's output (or error) is. A wait wakes on the ring — one system call
    and one wake-up, where a gloo barrier takes several round trips through gloo's threads — and
    looks every ``POLL_SECONDS`` whether the awaited processes still run. FIFOs are unlinked once
    every rank has opened them (``unlink`` after the group's barrier)."""

    POLL_SECONDS = 0.5

    def __init__(self, token, rank, size, pids):
        self.rank, self.size, self.pids = rank, size, pids
        self.paths = [os.path.join(SHM_DIR, f"cce-torch-{token}-bell-{r}") for r in range(size)]
        os.mkfifo(self.paths[rank], 0o600)
        self.fds = {}

    def open(self):
        """Opens this rank's bell and the bells it rings (after every rank made its own)."""
        # O_RDWR: a FIFO opened so never blocks in open() and never reads end-of-file.
        self.fds[self.rank] = os.open(self.paths[self.rank], os.O_RDWR)
        for r in (range(1, self.size) if self.rank == 0 else (0,)):
            self.fds[r] = os.open(self.paths[r], os.O_RDWR)

    def unlink(self):
        os.unlink(self.paths[self.rank])

    def close(self):
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()

    def ring(self, rank):
        os.write(self.fds[rank], struct.pack("<H", self.rank))

    def wait(self, ranks, timeout):
        """Waits until every rank in ``ranks`` rang this rank's bell; raises PeerFailed naming
        those whose process is gone, or that did not ring within ``timeout`` seconds."""
        pending = set(ranks)
        fd = self.fds[self.rank]
        deadline = time.monotonic() + timeout
        buf = b""
        while pending:
            ready, _, _ = select.select([fd], [], [], self.POLL_SECONDS)
            if ready:
                buf += os.read(fd, 2 * len(pending))
                while len(buf) >= 2:
                    (r,), buf = struct.unpack("<H", buf[:2]), buf[2:]
                    pending.discard(r)
                continue
            gone = sorted(r for r in pending if not _alive(self.pids[r]))
            if gone:
                raise PeerFailed(gone, True)
            if time.monotonic() > deadline:
                raise PeerFailed(sorted(pending), False)
