"""Kedro pipelines: one folder per method, plus the shared ``reporting`` modular pipeline."""
