import os
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
    out: DType | np.ndarray | None = ...,
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
def encode(encoder: str, **fields: Any) -> list[int]: ...
def decode(encoder: str, words_or_bytes: bytes | int | Sequence[int]) -> dict[str, Any]: ...
def value(dtype: str, value: str | float | int, *, saturate: bool = ...) -> dict[str, Any]: ...
def tables() -> dict[str, Any]: ...

class Ring:
    def __init__(self, data: bytes) -> None: ...
    @classmethod
    def load(cls, path: str) -> "Ring": ...
    def to_bytes(self) -> bytes: ...
    def save(self, path: str) -> None: ...
    def disasm(self) -> str: ...
    @property
    def descriptors(self) -> dict[str, Any]: ...

def build(
    *, op: str, elems: int, src: int | Sequence[int], dst: int | Sequence[int], dtype: DType | None = ...,
    accum: DType = ..., out: DType | None = ..., arch: int = ..., scale: float | Sequence[float] | None = ...,
    const: float | str | None = ..., const_dtype: DType | None = ..., rounding: str = ..., seed: int = ...,
    prio: int = ..., cap: int | None = ..., no_cce_info: bool = ..., selectors: str | None = ...,
    ring_size: int | None = ..., queue: int = ..., **flags: Any,
) -> Ring: ...
def run(ring: Ring | bytes, load: dict[int, ArrayLike] | None = ..., dump: Sequence[tuple[int, int]] = ..., *, threads: int = ...) -> dict[str, Any]: ...
def allreduce(
    arrays: Sequence[ArrayLike], *, algo: str | os.PathLike[str] = ..., op: str = ..., accum: DType | None = ..., rounding: str = ...,
    seed: int = ..., arch: int = ..., compress: str | None = ..., ranks_per_node: int | None = ..., check: str = ...,
    nodes: int | None = ..., intra: str | None = ..., inter: str | None = ..., collective: str | None = ...,
    channels: int | None = ...,
) -> tuple[list[np.ndarray], dict[str, Any]]: ...
def element(
    arrays: Sequence[ArrayLike], index: int, *, algo: str | os.PathLike[str] = ..., op: str = ..., accum: DType | None = ...,
    rounding: str = ..., seed: int = ..., arch: int = ..., compress: str | None = ..., ranks_per_node: int | None = ...,
    rank: int | None = ..., nodes: int | None = ..., intra: str | None = ..., inter: str | None = ...,
    collective: str | None = ..., channels: int | None = ...,
) -> dict[str, Any]: ...
def identify(
    inputs: Sequence[ArrayLike], output: ArrayLike | Sequence[ArrayLike] | dict[int, ArrayLike], *,
    dtype: DType | None = ..., accum: DType | None = ..., rounding: str = ..., observed_rank: int = ...,
    algo_files: Sequence[str | os.PathLike[str]] = ..., arch: int = ..., threads: int | None = ...,
    ranks_per_node: int | None = ..., ranks: int | None = ..., channels: int | None = ...,
) -> dict[str, Any]: ...
def make_probe(
    ranks: int, elems: int, dtype: DType = ..., directory: str | os.PathLike[str] | None = ...,
) -> tuple[list[np.ndarray], dict[str, Any]]: ...
def reveal(
    fn: Callable[[list[np.ndarray]], Sequence[ArrayLike]], ranks: int, elems: int, dtype: DType,
) -> dict[str, Any]: ...
def repro(
    *, ranks: int | Sequence[int], algo: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    elems: int | str | Sequence[int | str] | None = ..., dtype: DType | Sequence[DType] | None = ...,
    accum: DType | Sequence[DType] | None = ..., rounding: str | Sequence[str] = ..., seed: int | Sequence[int] = ...,
    arch: int | Sequence[int] = ..., compress: str | Sequence[str] = ..., ranks_per_node: int | Sequence[int] | None = ...,
    channels: int | Sequence[int] = ..., op: str = ..., input_seed: int = ..., inputs: Sequence[ArrayLike] | None = ..., all_pairs: bool = ...,
) -> dict[str, Any]: ...
