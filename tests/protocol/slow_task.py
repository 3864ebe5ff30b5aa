"""A task whose fits take a set time (importable by Dask workers)."""

import time
from dataclasses import dataclass

from multiview_lab.protocol import ViewsTask


@dataclass
class SlowViewsTask(ViewsTask):
    """A :class:`ViewsTask` that sleeps ``seconds`` before each fit."""

    seconds: float = 0.3

    def fit(self, model, data, split, method):
        time.sleep(self.seconds)
        super().fit(model, data, split, method)
