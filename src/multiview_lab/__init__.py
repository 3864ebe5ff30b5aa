"""Multiview Lab: faithful re-implementations of five multiview learning methods.

The algorithms live in method subpackages (``multiview_lab.pbmvboost``, ``multiview_lab.gbc``,
``multiview_lab.mvfs``, ``multiview_lab.miml``, ``multiview_lab.memd``) and are re-exported from
:mod:`multiview_lab.estimators`. They import nothing from Kedro or MLflow; the Kedro pipelines in
:mod:`multiview_lab.pipelines` and the MLflow hooks in :mod:`multiview_lab.hooks` wrap them.
"""

__version__ = "0.1.0"
