"""Reading Gemini CLI's settings files: JSON with comments and trailing commas."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def read_settings(path: Path) -> dict[str, Any] | None:
    """A Gemini settings file (JSON with comments); {} when there is none, None if unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    if not text.strip():
        return {}
    try:
        document = json.loads(strip_json_comments(text))
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(?=\s*[}\]])')


def strip_json_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments and trailing commas, made plain JSON."""

    def keep_strings(match: re.Match[str]) -> str:
        return match.group(0) if match.group(0).startswith('"') else ""

    return _TRAILING_COMMA.sub(keep_strings, _COMMENT.sub(keep_strings, text))
