"""Discord's error bodies, as the emulator sends them.

Every REST failure is a :class:`DiscordError` raised from the state or a route handler and
turned into a response in one place (``app.py``). The body is Discord's JSON error object::

    {"code": 50035, "message": "Invalid Form Body",
     "errors": {"content": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH",
                                         "message": "Must be 2000 or fewer in length."}]}}}

``errors`` is present only for form errors (50035). Its tree mirrors the request body: object
keys stay keys, list indexes become string keys ("0", "1", ...), and each leaf holds
``_errors``. :class:`FormErrors` collects several problems before raising, as Discord reports
them all at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class DiscordError(Exception):
    """A REST failure with Discord's HTTP status, JSON error code and message."""

    def __init__(
        self, status: int, code: int, message: str, errors: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def body(self) -> dict[str, Any]:
        """The JSON body Discord sends for this error."""
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.errors is not None:
            body["errors"] = self.errors
        return body


def unauthorized() -> DiscordError:
    return DiscordError(401, 0, "401: Unauthorized")


def not_found() -> DiscordError:
    return DiscordError(404, 0, "404: Not Found")


def method_not_allowed() -> DiscordError:
    return DiscordError(405, 0, "405: Method Not Allowed")


def unknown_channel() -> DiscordError:
    return DiscordError(404, 10003, "Unknown Channel")


def unknown_guild() -> DiscordError:
    return DiscordError(404, 10004, "Unknown Guild")


def unknown_member() -> DiscordError:
    return DiscordError(404, 10007, "Unknown Member")


def unknown_message() -> DiscordError:
    return DiscordError(404, 10008, "Unknown Message")


def unknown_user() -> DiscordError:
    return DiscordError(404, 10013, "Unknown User")


def unknown_role() -> DiscordError:
    return DiscordError(404, 10011, "Unknown Role")


def unknown_emoji() -> DiscordError:
    return DiscordError(400, 10014, "Unknown Emoji")


def unknown_webhook() -> DiscordError:
    return DiscordError(404, 10015, "Unknown Webhook")


def unknown_interaction() -> DiscordError:
    return DiscordError(404, 10062, "Unknown interaction")


def already_acknowledged() -> DiscordError:
    return DiscordError(400, 40060, "Interaction has already been acknowledged.")


def cannot_edit_other_users_message() -> DiscordError:
    return DiscordError(403, 50005, "Cannot edit a message authored by another user")


def missing_access() -> DiscordError:
    """The bot cannot see the resource (a channel without VIEW_CHANNEL, a guild it left)."""
    return DiscordError(403, 50001, "Missing Access")


def missing_permissions() -> DiscordError:
    """The bot sees the resource but lacks the permission the action needs."""
    return DiscordError(403, 50013, "Missing Permissions")


def cannot_message_user() -> DiscordError:
    """The user does not accept direct messages from the bot (privacy settings, blocked)."""
    return DiscordError(403, 50007, "Cannot send messages to this user")


def invalid_recipient() -> DiscordError:
    return DiscordError(400, 50033, "Invalid Recipient(s)")


def empty_message() -> DiscordError:
    return DiscordError(400, 50006, "Cannot send an empty message")


def wrong_channel_type() -> DiscordError:
    return DiscordError(400, 50024, "Cannot execute action on this channel type")


def thread_archived() -> DiscordError:
    return DiscordError(400, 50083, "Thread is archived")


def invalid_json() -> DiscordError:
    return DiscordError(400, 50109, "The request body contains invalid JSON.")


def thread_already_exists() -> DiscordError:
    return DiscordError(400, 160004, "A thread has already been created for this message")


def thread_locked() -> DiscordError:
    return DiscordError(400, 160005, "Thread is locked")


def max_active_threads() -> DiscordError:
    return DiscordError(400, 160006, "Maximum number of active threads reached")


_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def generic(status: int) -> DiscordError:
    """The body Discord sends for a bare HTTP failure (``{"message": "500: ...", "code": 0}``)."""
    if status == 403:
        return missing_permissions()
    reason = _REASONS.get(status, "Error")
    return DiscordError(status, 0, f"{status}: {reason}")


class FormErrors:
    """Collects field errors for one request; :meth:`raise_if_any` raises 50035 with the tree."""

    def __init__(self) -> None:
        self._tree: dict[str, Any] = {}

    def add(self, path: Sequence[str | int], code: str, message: str) -> None:
        """Record an error at ``path`` (keys and list indexes of the request body)."""
        node = self._tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def __bool__(self) -> bool:
        return bool(self._tree)

    def error(self) -> DiscordError:
        """The 50035 error carrying every recorded field error."""
        return DiscordError(400, 50035, "Invalid Form Body", self._tree)

    def raise_if_any(self) -> None:
        if self._tree:
            raise self.error()


def invalid_form(path: Sequence[str | int], code: str, message: str) -> DiscordError:
    """A 50035 error with a single field error."""
    errors = FormErrors()
    errors.add(path, code, message)
    return errors.error()
