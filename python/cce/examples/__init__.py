"""Experiments that run cce on a user's kind of workload: ``python -m cce.examples.drift``."""
