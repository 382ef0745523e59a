#!/usr/bin/env bash
# Starts discord-watch in a detached tmux session, where its live status shows in the pane.
# Usage: scripts/start-discord-watch.sh [ENV_FILE]     (default: ./.env of this checkout)
# Attach with: tmux attach -t discord-watch   (DISCORD_WATCH_TMUX_SESSION changes the name)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
session="${DISCORD_WATCH_TMUX_SESSION:-discord-watch}"
env_file="$(realpath -m "${1:-$repo/.env}")"
watch="$repo/.venv/bin/discord-watch"
if ! command -v tmux >/dev/null 2>&1; then
    echo "tmux is not installed; run '$watch run' directly, or use scripts/install-systemd-unit" >&2
    exit 1
fi
if [ ! -x "$watch" ]; then
    echo "no $watch yet: run scripts/bootstrap first" >&2
    exit 1
fi
if [ ! -f "$env_file" ]; then
    echo "no $env_file yet: run '$repo/.venv/bin/discord-mcp setup' first" >&2
    exit 1
fi
if tmux has-session -t "=$session" 2>/dev/null; then
    echo "discord-watch is already running: tmux attach -t $session"
    exit 0
fi
# With a command of several arguments tmux runs it directly, without a shell.
tmux new-session -d -s "$session" -c "$repo" -e "DISCORD_MCP_ENV_FILE=$env_file" "$watch" run
echo "discord-watch started: tmux attach -t $session"
