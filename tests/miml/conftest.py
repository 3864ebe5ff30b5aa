"""Run the MIML tests with single-threaded BLAS: their matrices are small, and on a shared
2-core machine multithreaded BLAS made the suite ~10x slower (100 s instead of 10 s)."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _single_threaded_blas():
    with threadpool_limits(1):
        yield
