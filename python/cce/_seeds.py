"""Stochastic-rounding seeds of the framework adapters (``cce.jax``, ``cce.torch``): one rule,
docs/MODEL.md C18. A seed is a pure function of numbers the program itself fixes — never of a
clock, a thread or a process-global counter — so the same program and seed replay the same bits."""


def derived_seed(base, position, step):
    """The seed of a collective called without an explicit seed: the base seed, the call's
    position (``cce.jax``: trace order; ``cce.torch``: the process group's call count) and the
    step (``cce.jax``: this device's earlier runs of the call; ``cce.torch``: the group's
    number), SplitMix64-mixed by the library (cce-api's ``collective::framework_seed``), which
    cce.jax's XLA handler calls too."""
    from . import _cce

    return _cce.derived_seed(int(base), int(position), int(step))
