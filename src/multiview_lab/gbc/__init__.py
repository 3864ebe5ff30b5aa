"""Gradient Boosting Consensus (Shi et al., SDM 2012): estimators, graphs, settings, baselines."""

from multiview_lab.gbc.gbc import GBCClassifier, GBCRegressor

__all__ = ["GBCClassifier", "GBCRegressor"]
