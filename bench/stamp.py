"""Run a command (a hook) with this process's stdin and stdout, then append the moment it
ended (``time.monotonic()``, comparable across processes) to a file: how ``bench.approvals``
sees when a hook handed its answer to the CLI.

    python -m bench.stamp STAMP_FILE -- COMMAND [ARGS...]
"""

from __future__ import annotations

import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    stamp_file, separator, *command = argv
    if separator != "--" or not command:
        sys.stderr.write("usage: python -m bench.stamp STAMP_FILE -- COMMAND [ARGS...]\n")
        return 2
    code = subprocess.run(command, check=False).returncode
    ended = time.monotonic()
    with open(stamp_file, "a", encoding="utf-8") as handle:
        handle.write(f"{ended}\n")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
