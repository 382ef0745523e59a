"""The files of people who are not owners, in a chat channel: kept in the chat's own folder.

An owner's attachments are kept in ``<state>/files/`` (:mod:`discord_mcp.files.store`),
where the owner's agents look for them. A stranger's never go there: they are downloaded (with
the same limits) into the chat's own folder, ``<state>/chat/<channel id>/attachments/
<message id>/``, so nothing a stranger sends lands among the owner's files, and a stranger's
turn is told only of files in that folder. In the prompt every kept file is marked
``<attachment:PATH>`` (:func:`discord_mcp.watch.chat.context.message_block`), a mark people's
own words cannot forge (it is defused in their text).
"""

from __future__ import annotations

from pathlib import Path

from discord_mcp.files.store import OwnerFiles
from discord_mcp.watch.chat.channels import default_persona_dir

FOLDER = "attachments"


def strangers_folder(home: Path, channel_id: str) -> Path:
    """Where the strangers' files of chat ``channel_id`` are kept."""
    return default_persona_dir(home, channel_id) / FOLDER


def strangers_files(home: Path, channel_id: str) -> OwnerFiles:
    """The file keeper for the strangers of chat ``channel_id`` (its own folder, never
    ``<state>/files``)."""
    return OwnerFiles(home, root=strangers_folder(home, channel_id))
