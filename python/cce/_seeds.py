"""Stochastic-rounding seeds of the framework adapters (``cce.jax``, ``cce.torch``): one rule,
docs/MODEL.md C18. A seed is a pure function of numbers the program itself fixes — never of a
clock, a thread or a process-global counter — so the same program and seed replay the same bits."""


def _mix64(x):
    """SplitMix64's finaliser: a 64-bit integer to 64 well-mixed bits."""
    m = (1 << 64) - 1
    x = (x + 0x9E3779B97F4A7C15) & m
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & m
    return x ^ (x >> 31)


def derived_seed(base, position, step):
    """The seed of a collective called without an explicit seed: the base seed, the call's
    position (``cce.jax``: trace order; ``cce.torch``: the process group's call count) and the
    step (``cce.jax``: this device's earlier runs of the call; ``cce.torch``: the group's
    number), mixed."""
    return _mix64(_mix64(_mix64(int(base)) ^ int(position)) ^ int(step))
