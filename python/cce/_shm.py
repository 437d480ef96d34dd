"""Shared-memory segments for ``cce.torch``'s same-host transport: one segment per rank, mapped
by the rank that owns it and by the group's leader (rank 0).

A segment is a file under /dev/shm, named from a token the leader draws and a generation number,
created by its rank, mapped, and unlinked as soon as the leader has mapped it too — a process that
dies leaves no file behind. It grows (a new generation) when a call needs more; every rank of the
group grows at the same call, because every rank of a collective passes the same size. Layout:
a 4 KiB header (the leader's status for the call: 0 done, else an error kind and message),
then the rank's input, then its output.
"""
import mmap
import os
import struct

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
        import numpy as np

        length = HEADER + self.capacity
        fd = os.open(path, os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0), 0o600)
        try:
            if create:
                os.ftruncate(fd, length)
            m = mmap.mmap(fd, length)
        finally:
            os.close(fd)
        return m, np.frombuffer(m, dtype=np.uint8)

    def ensure(self, payload, barrier):
        """Room for ``payload`` bytes of input and as many of output in every segment. A
        collective step: ``barrier()`` synchronises the group while the segments change."""
        if 2 * payload <= self.capacity:
            return
        self.maps.clear()
        self.generation += 1
        self.capacity = max(2 * payload, 2 * self.capacity, _MIB)
        self.capacity = -(-self.capacity // mmap.PAGESIZE) * mmap.PAGESIZE
        own = self._path(self.rank)
        self.maps[self.rank] = self._map(own, create=True)
        barrier()
        try:
            if self.rank == 0:
                for r in range(1, self.size):
                    self.maps[r] = self._map(self._path(r), create=False)
        finally:
            barrier()
            os.unlink(own)

    def array(self, rank=None):
        """The whole segment of ``rank`` (this rank's by default) as a uint8 array."""
        return self.maps[self.rank if rank is None else rank][1]

    def input(self, rank, nbytes):
        return self.array(rank)[HEADER:HEADER + nbytes]

    def output(self, rank, nbytes):
        return self.array(rank)[HEADER + nbytes:HEADER + 2 * nbytes]

    # The leader's status for a call, in each rank's own header (a rank maps only its own).

    def set_status(self, rank, kind, message=""):
        """Leader: ``rank``'s status for this call. 0: its output is written; 1 CceError,
        2 EngineFault, 3 RankFailed, 4 another error (the message says which)."""
        import numpy as np

        text = message.encode()[:HEADER - 8]
        self.array(rank)[:8 + len(text)] = np.frombuffer(struct.pack("<II", kind, len(text)) + text, dtype=np.uint8)

    def status(self):
        """(kind, message): this rank's status, as the leader set it."""
        kind, n = struct.unpack("<II", bytes(self.array()[:8]))
        return kind, bytes(self.array()[8:8 + n]).decode(errors="replace")
