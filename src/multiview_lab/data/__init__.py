"""Pure loaders and view builders for the real data sets in ``data/01_raw`` (no Kedro here)."""
