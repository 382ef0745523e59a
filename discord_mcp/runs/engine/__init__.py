"""The engine and its scheduling: threads are sessions, owner messages are jobs.

``engine`` (:class:`~discord_mcp.runs.engine.engine.RunEngine`: the commands, with
``engine_sessions``, ``controls`` the owner's, ``landed`` a run's landing and ``engine_views``
what it shows); ``scheduler`` starting, following and finishing jobs (``scheduling`` what its
helpers see of it, ``prepared`` turns composed when they start, ``recovery`` after a restart,
``failures`` a failed turn's cause); ``launch`` private files and the engine lock; ``notices``
delivering notifications; ``streaming`` the text shared by every engine; ``schedules`` prompts
on a schedule.
"""
