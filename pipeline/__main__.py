"""``python -m pipeline`` and the ``pipeline`` command: the command line.

A ``pipeline cook`` whose inputs and outputs did not change since its last run is
answered from its stamp (:mod:`pipeline.cook.noop`) before the command line itself
(click, the commands) is imported; any other cook imports its modules with the cyclic
collector off, then freezes them (:mod:`pipeline.heap`).  The command ends without the
interpreter's teardown (:func:`pipeline.interrupt.leave`).
"""

import contextlib
import os
import sys

from pipeline import interrupt
from pipeline.heap import collection_paused, frozen


def command() -> None:
    """The ``pipeline`` command: :func:`run`, then the exit with its code, the interpreter not torn down."""
    try:
        run()
    except SystemExit as exc:
        interrupt.leave(exc.code)
    else:
        interrupt.leave(0)


def run() -> None:
    interrupt.arm()
    try:
        _run()
    finally:
        interrupt.finishing()


def _run() -> None:
    # pydantic looks for its plug-ins (hooks that observe validation) in every installed package's
    # metadata when it first builds a model: a pass over site-packages that this command's own
    # validation of rule sets and pipeline.toml does not want (unless the environment says otherwise)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    with contextlib.ExitStack() as held:
        if sys.argv[1:2] == ["cook"]:
            from pipeline.cook.noop import fast_cook

            with collection_paused():  # the check's stat walk makes a list per file of the world, and no cycle
                code = fast_cook(sys.argv[2:])
                if code is not None:
                    sys.exit(code)
                # the cook's modules, imported with the collector off too: some 400 modules and their
                # classes are no garbage, and the young collections their allocations bring walk the
                # heap again and again (about a tenth of the imports' time)
                try:
                    import pipeline.cli.cook  # noqa: F401
                except KeyboardInterrupt:  # as the command line answers a Ctrl-C
                    print("pipeline: interrupted", file=sys.stderr)
                    sys.exit(interrupt.EXIT_INTERRUPTED)
                # what the missed check walked and the modules live until the cook has used them: the
                # collector need not walk them at each collection that the cook brings
                held.enter_context(frozen())
        from pipeline.cli import main

        main(prog_name="pipeline", stamp_checked=sys.argv[1:2] == ["cook"])


if __name__ == "__main__":
    command()
