"""On PYTHONPATH of the test subprocesses when the suite runs with ``PIPELINE_TEST_NO_FCNTL=1``:
``import fcntl`` fails there as on Windows."""

import sys

sys.modules["fcntl"] = None
