"""Run folders and the result contract (issue 23): ``folders`` the layout, the request queue and
reading; ``recorder`` keeping them up to date (``turn_files`` what a turn leaves, ``recorded``
how far that went); ``results`` and ``error_codes`` the result contract, ``schemas/`` its JSON
Schemas; ``transcript``, ``patches``; ``retention`` removing old folders."""
