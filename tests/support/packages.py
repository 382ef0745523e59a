"""discord-mcp as people install it: a fresh copy of the repository, its wheel and sdist, and uv.

The session fixtures in ``tests/conftest.py`` use these once per test session (building and
warming uv's cache take seconds; the tests after the first reuse them):

- :func:`copy_repository`: the files a fresh clone has (tracked, plus new files not ignored),
  so nothing of the developer's ``.venv`` or caches leaks into a package or a plugin;
- :func:`uv_env`: the environment for ``uv``/``uvx`` with a cache of the session's own and no
  Python downloads; with ``offline=True`` nothing is fetched (the cache must be warm).

``uv`` comes from PyPI as the dev extras' ``uv`` package (in the same venv as pytest).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.requirements import missing

REPO_ROOT = Path(__file__).resolve().parents[2]


def copy_repository(destination: Path) -> Path:
    """The repository's files as a fresh clone has them, under ``destination``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO_ROOT / name
        if not source.is_file():
            continue  # deleted in the work tree, not yet committed
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)
    return destination


def uv_binary() -> Path:
    """``uv`` from the dev extras (beside this Python), else from PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file():
        return beside
    found = shutil.which("uv")
    if found is None:
        missing("uv is not installed (it comes with the dev extras: scripts/bootstrap --dev)")
    return Path(found)


def uv_env(cache: Path, *, offline: bool = False, path: str | None = None) -> dict[str, str]:
    """An environment for ``uv``/``uvx``: its own cache, no Python downloads, no user config;
    ``uvx`` on PATH (the directory of :func:`uv_binary`, which holds both)."""
    binaries = str(uv_binary().parent)
    env = {
        "PATH": os.pathsep.join([binaries, path or os.environ.get("PATH", os.defpath)]),
        "HOME": os.environ.get("HOME", str(cache)),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "UV_CACHE_DIR": str(cache),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_CONFIG": "1",
        "UV_PYTHON": sys.executable,
    }
    if offline:
        env["UV_OFFLINE"] = "1"
    for name in ("SSL_CERT_FILE", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_NATIVE_TLS"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env
