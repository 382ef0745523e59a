"""Judging shell commands by their words: which only read, and what a session rule covers.

- :mod:`.words`: a command as the words the shell would pass to one program, or nothing when
  the shell would do more than that (pipes, lists, redirections, substitutions, expansions,
  assignments) or when a character could be misread (controls, invisible, look-alikes).
- :mod:`.options`: a program's options as a table (which exist, which take a value) and a
  command's words read against it; an option outside the table makes the reading fail.
- :mod:`.readers` (with :mod:`.programs` and :mod:`.git`): the programs whose every known
  word only reads; :mod:`.sed`, :mod:`.jq` and :mod:`.awk`: the narrow grammars in which
  their scripts are read completely (anything else asks); :mod:`.secrets` (with
  :mod:`.paths`, which normalises ``//dev/./sda`` to ``/dev/sda``): the paths whose reading
  asks anyway.
- :mod:`.rules`: the session rule "Allow for this session" records for a command, what it
  covers, and the sentence on the card that says so.

Every judgement here fails closed: what is not known to be harmless asks the owner. That the
forms accepted as reads neither write, run a program nor print the environment is checked
against the real programs under ``strace`` (``tests/approvals/test_judge_differential.py``).
"""
