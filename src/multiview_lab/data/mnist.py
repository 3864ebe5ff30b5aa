"""MNIST split into four views, as in the PB-MVBoost paper (Goyal et al., 2019, Sect. 5.1).

* MNIST1: the four 14x14 quarters of the 28x28 image (rows/cols ``[0:14]`` and ``[14:28]``).
* MNIST2: four overlapping 14x14 windows around the centre; the paper does not give them, the
  project default corners are (4, 4), (4, 10), (10, 4), (10, 10) (PB-MVBoost spec, Sect. 5.2).

Each view is the window flattened row-major, so view ``v`` of image ``k`` equals
``images[k, r:r + 14, c:c + 14].ravel()``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

IMAGE_SIDE = 28
MNIST1_CORNERS: tuple[tuple[int, int], ...] = ((0, 0), (0, 14), (14, 0), (14, 14))
MNIST2_CORNERS: tuple[tuple[int, int], ...] = ((4, 4), (4, 10), (10, 4), (10, 10))


def check_windows(corners: Sequence[Sequence[int]], size: int, side: int = IMAGE_SIDE) -> None:
    """Raise ``ValueError`` unless every ``size`` x ``size`` window lies inside the image."""
    if size <= 0:
        raise ValueError(f"window size must be positive; got {size}.")
    if len(corners) == 0:
        raise ValueError("at least one window corner is needed.")
    for corner in corners:
        if len(corner) != 2:
            raise ValueError(f"a window corner is (row, col); got {corner!r}.")
        r, c = (int(x) for x in corner)
        if r < 0 or c < 0 or r + size > side or c + size > side:
            raise ValueError(
                f"window at (row={r}, col={c}) of size {size} leaves the {side}x{side} image."
            )


def extract_views(
    images: np.ndarray,
    corners: Sequence[Sequence[int]],
    size: int = 14,
    dtype=np.float32,
) -> list[np.ndarray]:
    """Cut each image into square windows, one view per window.

    Parameters
    ----------
    images : ndarray of shape (n_images, 28, 28)
        Grey-level images.
    corners : sequence of (row, col)
        Top-left corner of each window.
    size : int, default=14
        Side of the windows.
    dtype : numpy dtype, default=float32
        Dtype of the returned views (pixel values are kept in 0..255).

    Returns
    -------
    views : list of ndarray of shape (n_images, size * size)
        One 2-D float array per window, flattened row-major.
    """
    images = np.asarray(images)
    if images.ndim != 3:
        raise ValueError(f"images must have shape (n, height, width); got {images.shape}.")
    check_windows(corners, size, side=min(images.shape[1:]))
    n = images.shape[0]
    return [
        images[:, r : r + size, c : c + size].reshape(n, size * size).astype(dtype)
        for r, c in ((int(a), int(b)) for a, b in corners)
    ]
