"""Plan: the compile jobs a set of keys needs (identity, stage projection, exact preprocessing, generated families)."""
