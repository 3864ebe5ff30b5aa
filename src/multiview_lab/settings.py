"""Kedro project settings for Multiview Lab."""

from kedro.config import OmegaConfigLoader

from multiview_lab.hooks import ExecutionHooks, MlflowHooks

HOOKS = (MlflowHooks(), ExecutionHooks())

CONFIG_LOADER_CLASS = OmegaConfigLoader
CONFIG_LOADER_ARGS = {
    "base_env": "base",
    "default_run_env": "local",
    # env files (conf/paper, conf/smoke) override base key by key instead of replacing a whole
    # method's parameter tree
    "merge_strategy": {"parameters": "soft", "mlflow": "soft"},
    "config_patterns": {
        "mlflow": ["mlflow*", "mlflow*/**"],
    },
}
