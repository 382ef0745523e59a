"""Every text file and pipe the code opens names its encoding.

The suite runs with ``PYTHONWARNDEFAULTENCODING=1`` (scripts/test), which turns a default
encoding into an error, but only on the paths a test happens to run; this reads the source for
the rest: ``open()`` in text mode, ``Path.read_text``/``write_text`` and ``subprocess`` calls
with ``text=True`` must each say ``encoding=``. A machine whose locale is not UTF-8 would
otherwise read the owner's words wrongly.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("discord_mcp", "tests", "bench", "scripts")


def _mode(node: ast.Call) -> str:
    if len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
        return str(node.args[1].value)
    for keyword in node.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return "r"


def unnamed_encodings(source: str) -> list[int]:
    """Lines of calls that open text without naming its encoding."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg for k in node.keywords}
        if "encoding" in keywords:
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            if "b" not in _mode(node) and len(node.args) < 4:
                found.append(node.lineno)
        elif isinstance(func, ast.Attribute) and func.attr == "read_text":
            if not node.args:
                found.append(node.lineno)
        elif isinstance(func, ast.Attribute) and func.attr == "write_text":
            if len(node.args) < 2:
                found.append(node.lineno)
        elif any(
            k.arg in ("text", "universal_newlines")
            and isinstance(k.value, ast.Constant)
            and k.value.value is True
            for k in node.keywords
        ) and (isinstance(func, ast.Attribute) and func.attr in ("run", "Popen", "check_output")):
            found.append(node.lineno)
    return found


def test_every_text_file_and_pipe_names_its_encoding() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line in unnamed_encodings(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "name the encoding (encoding='utf-8') at: " + ", ".join(offenders)


def test_the_check_finds_each_kind_of_unnamed_encoding() -> None:
    source = (
        "open('f')\nopen('f', 'rb')\nopen('f', encoding='utf-8')\n"
        "p.read_text()\np.read_text(encoding='utf-8')\np.write_text('x')\n"
        "subprocess.run(['x'], text=True)\nsubprocess.run(['x'], text=True, encoding='utf-8')\n"
    )
    assert unnamed_encodings(source) == [1, 4, 6, 7]
