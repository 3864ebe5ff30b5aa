"""Kedro dataset classes specific to Multiview Lab (multiview arrays stored as ``.npz``)."""

from multiview_lab.io.npz_dataset import NpzDataset

__all__ = ["NpzDataset"]
