"""One line of ``discord-mcp doctor``'s report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Verdict = Literal["OK", "WARN", "FAIL"]


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report."""

    verdict: Verdict
    name: str
    detail: str
    fix: str = ""

    def render(self) -> str:
        line = f"{self.verdict:<4} {self.name}: {self.detail}"
        return line + (f"\n     fix: {self.fix}" if self.fix else "")
