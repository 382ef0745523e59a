"""Every run folder file a test wrote follows its JSON Schema
(``discord_mcp/runs/folders/schemas``).

Used by an autouse fixture (tests/conftest.py): after each test, the run folders under its
``tmp_path`` are found and their ``request.json``, ``session.json`` and ``result.json``
validated, so the whole suite checks the contract, not one test.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from discord_mcp.runs.folders.folders import SCHEMAS, is_run_id, schema

_DEPTH = 5
"""How deep under tmp_path a state directory may be (tmp/home/runs/run_x/: depth 2)."""


def run_folders(root: Path) -> list[Path]:
    """The run folders under ``root`` (``<state>/runs/run_*``)."""
    found: list[Path] = []
    for depth in range(_DEPTH):
        pattern = "/".join(["*"] * depth + ["runs", "run_*"])
        found.extend(p for p in root.glob(pattern) if p.is_dir() and is_run_id(p.name))
    return sorted(set(found))


def problems(root: Path) -> list[str]:
    """What is wrong with the run folder files under ``root`` (empty: nothing)."""
    validators = {
        name: jsonschema.Draft202012Validator(
            schema(name), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
        for name in SCHEMAS
    }
    found = []
    for folder in run_folders(root):
        for name, validator in validators.items():
            path = folder / f"{name}.json"
            if not path.exists():
                continue
            try:
                document = json.loads(path.read_text(encoding="utf-8"))
            except ValueError as exc:
                found.append(f"{path}: not JSON ({exc})")
                continue
            found.extend(
                f"{path}: {'/'.join(map(str, error.absolute_path))}: {error.message}"
                for error in validator.iter_errors(document)
            )
    return found


def checked_files(root: Path) -> int:
    """How many run folder files there are under ``root`` (for tests of this check)."""
    return sum(
        (folder / f"{name}.json").exists() for folder in run_folders(root) for name in SCHEMAS
    )
