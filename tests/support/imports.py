"""Which modules a child process imported: run it with ``PYTHONPROFILEIMPORTTIME=1`` (the
environment's ``-X importtime``) and read its stderr. The figures themselves are not read (no
test asserts a time); only the names, which say what a start paid for."""

from __future__ import annotations

from collections.abc import Iterable

PROFILE = {"PYTHONPROFILEIMPORTTIME": "1"}
"""Add to a child's environment: each import it makes is written to its stderr."""


def imported(stderr: str) -> set[str]:
    """The modules named in ``stderr``'s ``import time:`` lines."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name)
    return names


def of_packages(names: Iterable[str], packages: Iterable[str]) -> list[str]:
    """The names in ``names`` that are ``packages`` or inside one of them, sorted."""
    tops = tuple(packages)
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in tops))
