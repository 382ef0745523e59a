"""Messages, reactions and history an agent reads and posts (the chat tools' logic)."""
