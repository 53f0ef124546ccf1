"""On PYTHONPATH of the test subprocesses when the suite runs with ``PIPELINE_TEST_NO_FCNTL=1``:
``import fcntl`` fails there as on Windows.  filelock then falls back to its soft lock and warns
(on Windows it locks with ``msvcrt``, without a warning): that warning is not a message of ours."""

import sys
import warnings

sys.modules["fcntl"] = None
warnings.filterwarnings("ignore", "only soft file lock")
