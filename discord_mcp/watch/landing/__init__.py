"""Reviewing and landing runs from Discord (issue 35): the changes card (:mod:`.card`), a
patch as messages (:mod:`.diffs`), and the daemon's desk for clicks, ``/diff`` and the shell's
``merge``, ``pr`` and ``discard`` (:mod:`.desk`)."""
