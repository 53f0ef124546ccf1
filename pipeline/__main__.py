"""``python -m pipeline`` and the ``pipeline`` command: the command line.

A ``pipeline cook`` whose inputs and outputs did not change since its last run is
answered from its stamp (:mod:`pipeline.cook.noop`) before the command line itself
(click, the commands) is imported.
"""

import sys

from pipeline import interrupt


def run() -> None:
    interrupt.arm()
    try:
        _run()
    finally:
        interrupt.finishing()


def _run() -> None:
    if sys.argv[1:2] == ["cook"]:
        from pipeline.cook.noop import fast_cook

        code = fast_cook(sys.argv[2:])
        if code is not None:
            sys.exit(code)
    from pipeline.cli import main

    main(prog_name="pipeline", stamp_checked=sys.argv[1:2] == ["cook"])


if __name__ == "__main__":
    run()
