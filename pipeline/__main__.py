"""``python -m pipeline`` and the ``pipeline`` command: the command line.

A ``pipeline cook`` whose inputs and outputs did not change since its last run is
answered from its stamp (:mod:`pipeline.cook.noop`) before the command line itself
(click, the commands) is imported.
"""

import contextlib
import sys

from pipeline import interrupt
from pipeline.heap import collection_paused, frozen


def run() -> None:
    interrupt.arm()
    try:
        _run()
    finally:
        interrupt.finishing()


def _run() -> None:
    with contextlib.ExitStack() as held:
        if sys.argv[1:2] == ["cook"]:
            from pipeline.cook.noop import fast_cook

            with collection_paused():  # the check's stat walk makes a list per file of the world, and no cycle
                code = fast_cook(sys.argv[2:])
                if code is not None:
                    sys.exit(code)
                # what the missed check walked lives until the cook has used it: the collector need not
                # walk it at each collection that the imports and the cook bring
                held.enter_context(frozen())
        from pipeline.cli import main

        main(prog_name="pipeline", stamp_checked=sys.argv[1:2] == ["cook"])


if __name__ == "__main__":
    run()
