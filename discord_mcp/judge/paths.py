"""A path as the secret and system checks compare it: normalised the way the kernel reads it.

``//dev/sda``, ``/./dev/sda``, ``/tmp/../dev/sda`` and ``~//.ssh`` name the same files as
``/dev/sda`` and ``~/.ssh``; a check that compares the words as written misses them. So
:func:`forms` gives every form of a word the checks must see:

- the word with empty and ``.`` parts removed (exact: the kernel reads ``a//./b`` as
  ``a/b``), in lower case (on a case-insensitive file system ``.ENV`` is ``.env``);
- the word normalised lexically: ``..`` also taken back against the part before it (``/..``
  at the root stays at the root);
- for a word with a ``..`` part, what follows the last one read from the root too: the
  working directory is not known here (enough ``..`` reach ``/``), and across a symbolic
  link ``..`` is the parent of the link's target, not of the link (``link/../dev/sda`` is
  ``/dev/sda`` when ``link`` points to ``/tmp``), so a lexical reading alone is not enough.

A symbolic link itself is not followed: the judge reads words, not the file system (see the
README).
"""

from __future__ import annotations


def _join(parts: list[str], absolute: bool) -> str:
    joined = "/".join(parts)
    if absolute:
        return "/" + joined
    return joined or "."


def squeeze(path: str) -> str:
    """``path`` without empty and ``.`` parts (``//dev/./sda`` is ``/dev/sda``)."""
    return _join([part for part in path.split("/") if part not in ("", ".")], path.startswith("/"))


def normalise(path: str) -> str:
    """``path`` with ``//``, ``/./`` and ``..`` resolved lexically (``~`` kept as a part)."""
    absolute = path.startswith("/")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append("..")
            continue
        parts.append(part)
    return _join(parts, absolute)


def forms(word: str) -> list[str]:
    """Every form of ``word`` the checks compare (see the module doc), in lower case."""
    lowered = word.lower()
    found = [squeeze(lowered), normalise(lowered)]
    parts = lowered.split("/")
    if ".." in parts:
        last = len(parts) - 1 - parts[::-1].index("..")
        found.append(squeeze("/" + "/".join(parts[last + 1 :])))
    return found
