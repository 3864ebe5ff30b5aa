"""Tasks whose fits take a set time (importable by Dask workers)."""

import time
import warnings
from dataclasses import dataclass

from multiview_lab.protocol import ViewsTask


@dataclass
class SlowViewsTask(ViewsTask):
    """A :class:`ViewsTask` that sleeps ``seconds`` before each fit."""

    seconds: float = 0.3

    def fit(self, model, data, split, method):
        time.sleep(self.seconds)
        super().fit(model, data, split, method)


@dataclass
class BusyViewsTask(ViewsTask):
    """A :class:`ViewsTask` that computes for ``cpu_seconds`` of CPU before each fit."""

    cpu_seconds: float = 0.05

    def fit(self, model, data, split, method):
        end = time.process_time() + self.cpu_seconds
        while time.process_time() < end:
            pass
        super().fit(model, data, split, method)


@dataclass
class WarningViewsTask(ViewsTask):
    """A :class:`ViewsTask` whose every fit warns the same thing, and once more on fold 0."""

    def fit(self, model, data, split, method):
        warnings.warn(f"unit of repeat {split['repeat']} stopped early", UserWarning, stacklevel=1)
        if split["fold"] == 0:
            warnings.warn("fold 0 is special", RuntimeWarning, stacklevel=1)
        super().fit(model, data, split, method)
