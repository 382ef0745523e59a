"""Chat channels (issue 25): an agent that lives in a channel, reads the room, replies, reacts
and keeps a heartbeat, through the run engine like any run thread.

- ``channels``: the chat channels' settings (``<state>/chat/channels.json``, a public contract)
  and the projects of chats that have none of their own;
- ``routing``: who a chat channel answers (owners, everyone, roles);
- ``context``: what the agent is told (the channel, its history, the new messages, untrusted);
- ``persona``: the persona files, the chat rules and the heartbeat's prompt;
- ``desk``: messages to turns (one conversation per channel), composing each turn as it
  starts, heartbeats;
- ``notifier``: typing while a turn works, then only what the agent said;
- ``cli``: ``discord-watch chat add|list|remove``.
"""
