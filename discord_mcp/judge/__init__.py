"""Judges of what an agent is about to do, read from its words alone: pure functions, no I/O,
no Discord, cheap to import (a hook that answers a harmless read at once loads nothing else).

- :mod:`.readonly`: whether a shell command only reads (a Codex run's calls that skip the
  card). :mod:`.words` reads a command as the words one program gets, or nothing when the
  shell would do more; :mod:`.options` reads a program's options against a table;
  :mod:`.readers` (with :mod:`.programs` and :mod:`.git`) knows the programs whose every known
  word only reads; :mod:`.sed`, :mod:`.jq` and :mod:`.awk` accept their scripts only in
  grammars small enough to read completely.
- :mod:`.secrets` (with :mod:`.paths`, which normalises ``//dev/./sda`` to ``/dev/sda``): the
  paths whose reading asks the owner anyway.
- :mod:`.network`: whether a tool call of a run without network would use the network (the
  early, explained refusal; the operating system keeps the promise).

Every judgement fails closed: what is not known to be harmless asks (or is refused). That the
forms accepted as reads neither write, run a program nor print the environment is checked
against the real programs under ``strace`` (``tests/approvals/test_judge_differential.py``).
The session rules that "Allow for this session" records are the approvals' own
(:mod:`discord_mcp.approvals.shell_rules`).
"""
