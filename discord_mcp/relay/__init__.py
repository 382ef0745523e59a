"""One gateway connection per bot token per machine, shared by every process.

Processes that share a state directory elect the *holder* with an OS file lock
(``gateway/holder.lock``): the kernel releases it when the holder dies, even on ``kill -9``.
The holder runs the gateway, answers interactions, and appends the events others need to the
*spool* (``gateway/spool.ndjson``); every other process follows the spool. The holder also
publishes its session (``gateway/status.json``), so a successor resumes it instead of spending
an identify. ``discord-watch`` is the preferred holder: a server holding the gateway hands it
over when the daemon asks (``gateway/prefer.json``). Identifies are budgeted machine-wide
(``gateway/identifies.json``).
"""
