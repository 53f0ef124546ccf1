"""Keys: evaluating rule sets over draws into permutation keys, and per-chunk key records for incremental cooks."""
