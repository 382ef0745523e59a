"""Git for runs: a worktree per run, and landing what a run changed (issue 35).

- :mod:`.command`: the one place git (and ``gh``) are started: argv lists, bounded waits off
  the event loop, no prompts, no pager.
- :mod:`.worktrees`: a run's own ``git worktree`` under the state directory, on a branch
  ``discord-mcp/<run_id>`` from the project's HEAD; its record in the run folder
  (``worktree.json``); committing what the agent left at the end of each turn; its changes.
- :mod:`.landing`: Merge, Open PR and Discard, each refused with a sentence when it cannot be
  done without losing work, and recorded in the run folder.
- :mod:`.remotes`: pushing a run's branch and opening its pull request.
- :mod:`.sweep`: removing abandoned worktrees (``discord-watch gc``).
"""
