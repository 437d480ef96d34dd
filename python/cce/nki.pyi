from typing import Callable, Sequence, Union

import numpy as np
import numpy.typing as npt

NKI_MAX_SOURCES: int

def dma_compute(
    dst: np.ndarray,
    srcs: Sequence[npt.ArrayLike],
    reduce_op: Union[str, Callable[..., object]],
    scales: Sequence[float] | None = ...,
    *,
    strict: bool = ...,
    rounding: str = ...,
    seed: int = ...,
) -> None: ...
def dma_copy(dst: np.ndarray, src: npt.ArrayLike, *, rounding: str = ..., seed: int = ...) -> None: ...
