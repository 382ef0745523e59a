"""Judging shell commands by their words: which only read, and what a session rule covers.

- :mod:`.words`: a command as the words the shell would pass to one program, or nothing when
  the shell would do more than that (pipes, lists, redirections, substitutions, expansions,
  assignments) or when a character could be misread (controls, invisible, look-alikes).
- :mod:`.options`: a program's options as a table (which exist, which take a value) and a
  command's words read against it; an option outside the table makes the reading fail.
- :mod:`.readers` (with :mod:`.git` and :mod:`.sed`): the programs whose every known word
  only reads, and :mod:`.secrets`, the paths whose reading asks anyway.
- :mod:`.rules`: the session rule "Allow for this session" records for a command, what it
  covers, and the sentence on the card that says so.

Every judgement here fails closed: what is not known to be harmless asks the owner.
"""
