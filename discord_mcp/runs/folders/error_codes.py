"""The stable error codes of runs, and whether trying the same thing again may help.

Theory (issue 23). A caller that delegates work (another agent, a script, cron) needs two
things from a failure: a code it can branch on, and whether to try again. ``retryable`` means
"the same request may succeed later without changes" (a usage limit that resets, a model API
that was down, a daemon that was not running); a failure that needs a change first (a missing
CLI, a refused path) is not retryable. An engine timeout and an engine crash are retryable, as
the CodeBridge seed's table says (issue 34): the same turn may finish, or not crash, next time.
Every code a run folder's ``result.json`` or ``discord-watch submit|resume`` can report is in
:data:`CODES`, and the README's table is checked against it (tests/runs/test_run_folders.py).

The engine journals the code the CLI's output called for (``E_CLI_ERROR``, ...); for the
result a failure the model's side caused is named by what it was (:func:`result_code`):
``E_USAGE_LIMIT``, ``E_RATE_LIMITED`` or ``E_MODEL_UNAVAILABLE``. One automatic retry of such
a failure is still made by the engine (:mod:`discord_mcp.runs.engine.controls`).
"""

from __future__ import annotations

from dataclasses import dataclass

from discord_mcp.errors import CloudflareBanned, DiscordError, RateLimited
from discord_mcp.runs.engine.failures import RETRIABLE_CODES, limit_without_reset
from discord_mcp.runs.engine.failures import classify_text as classify_failure


@dataclass(frozen=True)
class ErrorCode:
    code: str
    retryable: bool
    meaning: str


CODES: dict[str, ErrorCode] = {
    entry.code: entry
    for entry in (
        # -- the model's side: try again later
        ErrorCode(
            "E_USAGE_LIMIT",
            True,
            "the account's usage limit is spent; it resets later (held and run again by "
            "itself when the CLI said when)",
        ),
        ErrorCode("E_RATE_LIMITED", True, "the model API refused: too many requests (429)"),
        ErrorCode(
            "E_MODEL_UNAVAILABLE",
            True,
            "the model API failed or could not be reached (5xx, overloaded, connection "
            "refused); already tried once more by itself",
        ),
        # -- the CLI's run
        ErrorCode("E_CLI_ERROR", False, "the CLI reported an error of its own (e.g. its login)"),
        ErrorCode("E_CLI_EXIT_NONZERO", False, "the CLI ended with a non-zero exit code"),
        ErrorCode("E_ADAPTER_MISSING_RESULT", False, "the CLI ended without its final result"),
        ErrorCode(
            "E_ADAPTER_PARSE",
            False,
            "the CLI's output could not be read: not one line was an event of its JSON stream "
            "(another version or output format)",
        ),
        ErrorCode(
            "E_ADAPTER_SESSION_KEY_MISSING",
            False,
            "the CLI did not report its session id, so the run cannot be resumed",
        ),
        ErrorCode(
            "E_RESUME_FAILED",
            False,
            "the CLI no longer knows the run's session: submit a new run",
        ),
        ErrorCode(
            "E_CLI_TIMEOUT",
            True,
            "ran longer than its timeout and was stopped; the same run may finish next time "
            "(or raise --timeout)",
        ),
        ErrorCode(
            "E_CLI_CRASHED",
            True,
            "the CLI was killed by a signal nobody here sent (a crash, out of memory) before "
            "its final result",
        ),
        ErrorCode(
            "E_UNKNOWN_AFTER_CRASH",
            True,
            "discord-watch stopped while the CLI ran and its result was lost: check the work "
            "tree, then resume",
        ),
        ErrorCode("E_INTERNAL", False, "discord-watch lost track of the run (its log says why)"),
        ErrorCode(
            "E_AGENT_EXITED",
            True,
            "the ACP agent's process ended during the turn (its stderr's tail says why); the "
            "next turn starts it again and loads the session",
        ),
        ErrorCode(
            "E_INTERRUPTED",
            False,
            "a newer message interrupted the turn (the project's busy setting is interrupt)",
        ),
        ErrorCode(
            "E_AGENT_SILENT",
            False,
            "the ACP agent sent nothing for DISCORD_WATCH_ACP_IDLE_MINUTES (the watchdog): it "
            "was ended and the session closed; reopen it to go on",
        ),
        ErrorCode(
            "E_WATCH_STOPPED",
            True,
            "discord-watch stopped during an ACP agent's turn and ended it (the message says "
            "why); the next turn starts the agent again and loads the session",
        ),
        # -- starting the CLI
        ErrorCode("E_CLI_NOT_FOUND", False, "the CLI is not on discord-watch's PATH"),
        ErrorCode("E_SPAWN_FAILED", True, "the CLI could not be started (an OS error)"),
        ErrorCode("E_AGENT_NOT_FOUND", False, "no ACP agent of that name is registered"),
        ErrorCode(
            "E_AGENT_START", False, "the ACP agent did not start or did not answer initialize"
        ),
        ErrorCode("E_SECRET_IN_ARGV", False, "the project's arguments carry a secret's value"),
        ErrorCode(
            "E_CODEX_HOME",
            False,
            "a chat channel's own CODEX_HOME could not be made (Codex's config.toml unreadable, "
            "or the folder not writable): the turn did not run with the owner's",
        ),
        ErrorCode(
            "E_NETWORK_NOT_ENFORCEABLE",
            False,
            "--no-network was asked, but the run cannot be kept off the network: the "
            "project's arguments or config would undo it, no network namespace can be made on "
            "this machine, or the engine is an ACP agent (the run was not started)",
        ),
        # -- the request
        ErrorCode("E_PROJECT_NOT_FOUND", False, "no project of that name"),
        ErrorCode("E_INVALID_PATH", False, "the project's folder is refused (outside the roots)"),
        ErrorCode("E_TOOL_NOT_ENABLED", False, "the project does not enable that CLI"),
        ErrorCode(
            "E_INVALID_TOOLSET",
            False,
            "not a CLI we can run (claude, codex, gemini) or a registered ACP agent",
        ),
        ErrorCode(
            "E_INVALID_MODEL", False, "not a model name (or one the ACP agent does not offer)"
        ),
        ErrorCode("E_INVALID_TIMEOUT", False, "not a timeout"),
        ErrorCode("E_CONTEXT_FILE", False, "a --context file cannot be read"),
        ErrorCode("E_BAD_ARGUMENTS", False, "a malformed request"),
        ErrorCode("E_RUN_NOT_FOUND", False, "no run of that id"),
        ErrorCode("E_SESSION_CLOSED", False, "the run's session was closed in Discord"),
        ErrorCode("E_QUEUE_FULL", True, "20 messages already wait for this run"),
        ErrorCode(
            "E_NOT_STARTED",
            True,
            "discord-watch took the request but stopped before starting it",
        ),
        ErrorCode("E_DISCORD", True, "Discord refused a step (opening the run's thread)"),
        ErrorCode(
            "E_DISCORD_RATE_LIMIT",
            True,
            "Discord rate-limited a step for longer than the command may wait: try again later",
        ),
        ErrorCode(
            "E_THREAD_ACCESS_FAILED",
            False,
            "session open: the session's thread cannot be opened (deleted, or out of the bot's "
            "sight)",
        ),
        ErrorCode("E_STATE", False, "a state file is unreadable (the message says which)"),
        ErrorCode("E_CONFIG_CORRUPT", False, "the project list was corrupt and set aside"),
        ErrorCode("E_INVALID_PROJECT", False, "the project's entry is invalid: add it again"),
        ErrorCode("E_NOT_FOUND", False, "stop: neither a run, a job nor a run thread"),
        ErrorCode("E_JOB_NOT_FOUND", False, "no job of that id (or too old to show)"),
        ErrorCode("E_JOB_NOT_RUNNING", False, "stop: the job is over already"),
        ErrorCode("E_UNKNOWN_COMMAND", False, "the running daemon is older than this command"),
        # -- worktrees and landing (issue 35)
        ErrorCode(
            "E_NOT_A_GIT_REPO",
            False,
            "a run with a worktree of its own needs a git repository (or git is missing)",
        ),
        ErrorCode("E_NO_COMMITS", False, "the repository has no commit to start a worktree from"),
        ErrorCode("E_WORKTREE_FAILED", False, "git could not make the run's worktree"),
        ErrorCode("E_WORKTREE_GONE", False, "the run's worktree was removed: start a new run"),
        ErrorCode("E_RUN_LANDED", False, "the run was merged or discarded: start a new run"),
        ErrorCode("E_NO_WORKTREE", False, "the run has no worktree of its own to land"),
        ErrorCode("E_RUN_BUSY", True, "the run is still working: land it when it is done"),
        ErrorCode(
            "E_LANDING_BUSY", True, "another Merge, Open PR or Discard of the run is under way"
        ),
        ErrorCode("E_ALREADY_LANDED", False, "the run was merged or discarded already"),
        ErrorCode("E_NOTHING_TO_MERGE", False, "the run changed nothing: discard it"),
        ErrorCode(
            "E_NO_BASE_BRANCH",
            False,
            "the run started on a detached HEAD, or its branch is gone: nowhere to merge",
        ),
        ErrorCode(
            "E_MERGE_CONFLICT",
            False,
            "the merge conflicts (the files are named); nothing was changed, the branch is kept",
        ),
        ErrorCode(
            "E_CHECKOUT_CONFLICT",
            False,
            "uncommitted changes in the checkout touch the run's files: commit or stash them",
        ),
        ErrorCode("E_BASE_MOVED", True, "the base branch moved during the merge: merge again"),
        ErrorCode("E_NO_REMOTE", False, "the project has no git remote to push the branch to"),
        ErrorCode("E_PUSH_FAILED", True, "pushing the run's branch failed (the message says why)"),
        ErrorCode("E_GIT_FAILED", False, "git failed (the message says how); nothing was lost"),
        ErrorCode("E_CONFIRM", False, "discard deletes the run's work: confirm with --yes"),
        ErrorCode("E_DAEMON_NOT_RUNNING", True, "discord-watch is not running: start it"),
        ErrorCode("E_NO_ANSWER", True, "discord-watch took the request but did not answer"),
    )
}


def discord_failure(exc: DiscordError) -> tuple[str, str]:
    """The code and sentence of a command that failed talking to Discord: E_DISCORD_RATE_LIMIT
    when Discord held it back longer than the command may wait (seed 000's code), else
    E_DISCORD."""
    if isinstance(exc, RateLimited | CloudflareBanned):
        return "E_DISCORD_RATE_LIMIT", f"Discord rate-limited a step of it ({exc}): try again later"
    return "E_DISCORD", f"Discord refused a step of it: {exc}"


def is_retryable(code: str | None) -> bool:
    """Whether a failure with ``code`` may succeed if tried again unchanged (unknown: no)."""
    entry = CODES.get(code or "")
    return entry.retryable if entry is not None else False


def result_code(
    error_code: str | None, error_message: str | None, resets_at: float | None = None
) -> str:
    """The code a failed job has in its run's result (see the module doc)."""
    code = error_code or "E_INTERNAL"
    if code not in RETRIABLE_CODES:
        return code
    message = error_message or ""
    kind = classify_failure(code, message, resets_at)
    if kind == "usage_limit":
        return "E_USAGE_LIMIT"
    if kind == "temporary":
        return "E_MODEL_UNAVAILABLE"
    if limit_without_reset(message):
        return "E_RATE_LIMITED"
    return code
