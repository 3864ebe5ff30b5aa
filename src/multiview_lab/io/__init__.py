"""Kedro dataset classes specific to Multiview Lab."""

from multiview_lab.io.latest_results import LatestResultsDataset
from multiview_lab.io.npz_dataset import NpzDataset
from multiview_lab.io.raw_dataset import RawDataset

__all__ = ["LatestResultsDataset", "NpzDataset", "RawDataset"]
