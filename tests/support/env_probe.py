"""Record some environment variables, then become another program (test-only).

    python env_probe.py <log.jsonl> <NAME,NAME,...> -- <command...>

Appends ``{"NAME": value-or-null, ...}`` as one JSON line to the log, then ``exec``s the
command (same pid, same stdio), so it can stand in front of an MCP server to prove which
variables the agent CLI gave that server. Prints nothing: stdout belongs to the MCP protocol.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    log, names = sys.argv[1], sys.argv[2].split(",")
    command = sys.argv[sys.argv.index("--", 3) + 1 :]
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({name: os.environ.get(name) for name in names}) + "\n")
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
