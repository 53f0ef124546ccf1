"""The on-disk cache: the store (diskcache + content-addressed blobs) and its record kinds."""
