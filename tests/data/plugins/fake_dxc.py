"""A stand-in for DXC: ``fake_dxc.py -T ps_6_0 -E main -D NAME=VALUE ... -Fo OUT INPUT``.

Appends its command line (one JSON list per line) to ``$FAKE_DXC_LOG`` when set, and
writes OUT: ``DXIL`` followed by the SHA-256 of the input text and the defines.  An input
line holding ``#error`` fails with ``INPUT:LINE:COL: error: MESSAGE`` on stderr, as DXC does.
"""

import hashlib
import json
import os
import sys


def main(argv):
    log = os.environ.get("FAKE_DXC_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(argv) + "\n")
    out = argv[argv.index("-Fo") + 1]
    source = argv[-1]
    defines = [argv[i + 1] for i, a in enumerate(argv) if a == "-D"]
    text = open(source, encoding="utf-8").read()
    for number, line in enumerate(text.splitlines(), 1):
        if "#error" in line:
            col = line.index("#error") + 1
            print(f"{source}:{number}:{col}: error: {line.strip()[len('#error'):].strip()}", file=sys.stderr)
            return 1
    with open(out, "wb") as f:
        f.write(b"DXIL" + hashlib.sha256((text + "\0" + "\0".join(defines)).encode()).digest())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
