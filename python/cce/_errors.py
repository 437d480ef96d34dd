"""The exceptions cce raises. Every failure is one of these (or a TypeError for a wrong type)."""


class CceError(ValueError):
    """Bad input: an unknown or unsupported dtype, mismatched lengths, a rule of the runtime's
    dispatcher (the study's message, e.g. ``Unsupported CCE Op! 0``), a size over the memory
    budget. The message is the one line the ``cce`` CLI prints for the same input."""


class EngineFault(RuntimeError):
    """The engine stopped on a packet: ``queue``, ``descriptor`` (program index of the packet's
    first tx descriptor) and ``reason``. A faulted packet writes nothing."""

    def __init__(self, message, queue=None, descriptor=None, reason=None):
        super().__init__(message)
        self.queue = queue
        self.descriptor = descriptor
        self.reason = reason


class RankFailed(RuntimeError):
    """A rank of a collective failed: ``rank`` and ``step``; every rank stopped, no output."""

    def __init__(self, message, rank=None, step=None):
        super().__init__(message)
        self.rank = rank
        self.step = step
