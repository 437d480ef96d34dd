from typing import Any, Callable, Sequence, Union, overload

import numpy as np
import numpy.typing as npt

from . import nki as nki

DType = Union[str, np.dtype, type]
ArrayLike = npt.ArrayLike

MAX_SOURCES: int

class CceError(ValueError): ...

class EngineFault(RuntimeError):
    queue: int | None
    descriptor: int | None
    reason: str | None
    def __init__(self, message: str, queue: int | None = ..., descriptor: int | None = ..., reason: str | None = ...) -> None: ...

class RankFailed(RuntimeError):
    rank: int | None
    step: int | None
    def __init__(self, message: str, rank: int | None = ..., step: int | None = ...) -> None: ...

def convert(x: ArrayLike, dtype: DType, *, rounding: str = ..., seed: int = ..., saturate: bool = ...) -> np.ndarray: ...
def reduce(
    srcs: Sequence[ArrayLike],
    *,
    op: str = ...,
    accum: DType = ...,
    out: DType | None = ...,
    scales: float | Sequence[float] | None = ...,
    clamp: float | str | None = ...,
    clamp_dtype: DType | None = ...,
    rounding: str = ...,
    seed: int = ...,
    arch: int = ...,
    dests: int = ...,
    threads: int = ...,
) -> Any: ...
def cce_name(dtype: DType) -> str: ...
def numpy_dtype(cce: str) -> np.dtype: ...
