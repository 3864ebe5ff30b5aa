"""Kedro project settings for Multiview Lab."""

import warnings

from kedro.config import OmegaConfigLoader

from multiview_lab.hooks import ExecutionHooks, MlflowHooks

# Known deprecations inside Kedro's and MLflow's own dependencies, which a user cannot act on.
warnings.filterwarnings(
    "ignore", message=r"register_new_resolver\(\) is deprecated", category=UserWarning
)
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"sqlalchemy(\.|$)")
warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"omegaconf(\.|$)")

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
