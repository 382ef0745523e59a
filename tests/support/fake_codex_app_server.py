"""A stand-in for ``codex app-server`` (JSON lines on stdio) for the client's narrow sequences:
it answers ``initialize`` and ``thread/start`` / ``thread/resume``, and says that the run's hooks
run (the ``warning`` the pinned Codex sends) only when the thread's config bypasses hook trust
and it was started with ``--confirm-hooks``; with ``--late`` that warning comes after the
thread's result. Every request it gets is appended to the file named by ``--record``."""

from __future__ import annotations

import argparse
import json
import sys

from discord_mcp.runs.adapters.codex_app import HOOK_TRUST_WARNING


def _write(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--confirm-hooks", action="store_true")
    parser.add_argument("--late", action="store_true")
    parser.add_argument("--record", required=True)
    args = parser.parse_args()
    warning = {"method": "warning", "params": {"message": f"`{HOOK_TRUST_WARNING}."}}
    for line in sys.stdin:
        message = json.loads(line)
        with open(args.record, "a", encoding="utf-8") as record:
            record.write(line)
        if "id" not in message:
            continue
        method = message["method"]
        if method not in ("thread/start", "thread/resume"):
            _write({"id": message["id"], "result": {}})
            continue
        trusted = (message["params"].get("config") or {}).get("bypass_hook_trust") is True
        confirm = trusted and args.confirm_hooks
        if confirm and not args.late:
            _write(warning)
        _write({"id": message["id"], "result": {"thread": {"id": "thr-fake"}}})
        if confirm and args.late:
            _write(warning)


if __name__ == "__main__":
    main()
