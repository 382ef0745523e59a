"""discord-mcp installed the way people install MCP servers: its wheel and sdist, ``uvx``, a
fresh virtual environment outside the repository, and ``install`` writing the ``uvx`` form.

The wheel is built once per session (the ``packages`` fixture, from a fresh copy of the
repository), with ``uv`` from PyPI (the dev extras).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from discord_mcp.setup.clients import desired_entry, install_source, launcher
from tests.conftest import Packages
from tests.support.browser import wait_for
from tests.support.packages import REPO_ROOT, uv_binary, uv_env


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env,
        cwd=cwd,
        capture_output=True,
        encoding="utf-8",
        text=True,
        timeout=180,
        check=False,
    )


@pytest.fixture(scope="module")
def installed(
    packages: Packages, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, str]]:
    """A fresh virtual environment outside the repository with only the wheel installed, and
    an environment for its programs (uv and uvx on PATH, a HOME of its own, no settings)."""
    root = tmp_path_factory.mktemp("fresh")
    uv = str(uv_binary())
    env = uv_env(packages.uv_cache, offline=True, path="/usr/bin:/bin")
    env["HOME"] = str(root / "home")
    (root / "home").mkdir()
    for argv in (
        [uv, "venv", "--quiet", str(root / "venv")],
        [uv, "pip", "install", "--quiet", "--python", str(root / "venv"), str(packages.wheel)],
    ):
        done = run(argv, env, root)
        assert done.returncode == 0, done.stderr
    return root / "venv" / "bin", env


def test_the_wheel_and_sdist_pass_twine_check(packages: Packages) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "twine",
            "check",
            "--strict",
            str(packages.wheel),
            str(packages.sdist),
        ],
        capture_output=True,
        encoding="utf-8",
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_wheel_holds_the_page_the_catalogues_the_answer_words_and_the_entry_points(
    packages: Packages,
) -> None:
    with zipfile.ZipFile(packages.wheel) as wheel:
        names = set(wheel.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(info).decode()
        entry_points = wheel.read(info.replace("METADATA", "entry_points.txt")).decode()
    source = REPO_ROOT / "discord_mcp"
    data = [
        p.relative_to(REPO_ROOT).as_posix()
        for pattern in ("emulator/page/*", "i18n/*.toml", "decisions/words/*.toml")
        for p in source.glob(pattern)
        if p.is_file()  # not the interpreter's __pycache__ beside the page's own files
    ]
    assert len(data) > 15
    assert set(data) <= names
    assert "discord_mcp/py.typed" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "discord-mcp = discord_mcp.cli:main" in entry_points
    assert "discord-watch = discord_mcp.watch.cli:main" in entry_points
    assert "Description-Content-Type: text/markdown" in metadata
    assert "# discord-mcp" in metadata  # the README is the long description
    assert "License-Expression: MIT" in metadata
    assert "Classifier: Programming Language :: Python :: 3.11" in metadata
    assert not any(n.startswith("tests/") for n in names)


def test_uvx_runs_discord_mcp_from_the_wheel_in_a_fresh_environment(
    packages: Packages, tmp_path: Path
) -> None:
    uvx = str(uv_binary().with_name("uvx"))
    env = uv_env(packages.uv_cache, offline=True, path="/usr/bin:/bin")
    done = run([uvx, "--from", str(packages.wheel), "discord-mcp", "--help"], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "usage: discord-mcp" in done.stdout
    assert "emulator" in done.stdout
    watch = run([uvx, "--from", str(packages.wheel), "discord-watch", "--help"], env, tmp_path)
    assert watch.returncode == 0, watch.stderr


def test_the_installed_wheel_serves_the_owners_page_and_doctor_passes_against_it(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    emulator = subprocess.Popen(
        [str(bin_dir / "discord-mcp"), "emulator", "--port", "0"],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        encoding="utf-8",
        text=True,
    )
    try:
        assert emulator.stderr is not None
        banner: list[str] = []
        wait_for(
            lambda: banner.append(emulator.stderr.readline()) or "Press Ctrl-C" in banner[-1],  # type: ignore[union-attr]
            timeout=30,
            what="the emulator's banner",
        )
        text = "".join(banner)
        base = re.search(r"Open (http://127\.0\.0\.1:\d+)/", text)
        assert base, text
        page = httpx.get(base.group(1) + "/", timeout=10)
        assert page.status_code == 200
        for asset in ("/page/app.js", "/page/style.css", "/page/render.js"):
            assert httpx.get(base.group(1) + asset, timeout=10).status_code == 200, asset
        settings = dict(re.findall(r"export (DISCORD_\w+)=(\S+)", text))
        settings["DISCORD_MCP_HOME"] = str(tmp_path / "state")
        env_file = tmp_path / "discord.env"
        env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        doctor = run(
            [str(bin_dir / "discord-mcp"), "doctor", "--env-file", str(env_file)], env, tmp_path
        )
    finally:
        emulator.send_signal(signal.SIGTERM)
        emulator.communicate(timeout=20)
    for name in ("configuration", "token", "channel", "owners", "state directory"):
        assert re.search(rf"^OK +{name}:", doctor.stdout, re.MULTILINE), doctor.stdout
    assert "FAIL" not in doctor.stdout, doctor.stdout


def test_the_installed_wheel_speaks_every_language_and_reads_answers_in_each(
    installed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = installed
    probe = (
        "import json, discord_mcp, discord_mcp.i18n as i18n\n"
        "from discord_mcp.decisions.parser import parse_answer\n"
        "langs = {c: i18n.text(c, 'approval.button_allow_once') for c in ('en','ko','ja','zh')}\n"
        "picked = parse_answer('2번', ['a', 'b']).selected_index\n"
        "print(json.dumps({'file': discord_mcp.__file__, 'langs': langs, 'picked': picked}))\n"
    )
    done = run([str(bin_dir / "python"), "-c", probe], env, tmp_path)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert str(bin_dir.parent) in found["file"]  # the wheel's copy, not the repository's
    assert all(found["langs"].values()), found["langs"]
    assert len(set(found["langs"].values())) == 4
    assert found["picked"] == 1


def test_install_from_the_wheel_writes_the_uvx_form_with_that_wheel(
    installed: tuple[Path, dict[str, str]], packages: Packages, tmp_path: Path
) -> None:
    bin_dir, env = installed
    home = tmp_path / "home"
    (home / ".config" / "discord-mcp").mkdir(parents=True)
    (home / ".config" / "discord-mcp" / ".env").write_text(
        "DISCORD_BOT_TOKEN=x\n", encoding="utf-8"
    )
    done = run(
        [str(bin_dir / "discord-mcp"), "install", "claude", "--approvals"],
        {**env, "HOME": str(home)},
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]["discord"]
    uvx = str(uv_binary().with_name("uvx"))
    # --offline: install saw that form start from uv's cache (issue 37).
    assert [entry["command"], *entry["args"]] == [
        uvx,
        "--offline",
        "--from",
        str(packages.wheel),
        "discord-mcp",
    ]
    assert entry["env"] == {"DISCORD_MCP_ENV_FILE": str(home / ".config" / "discord-mcp" / ".env")}
    hooks = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"]
    [group] = hooks["PermissionRequest"]
    assert group["hooks"][0]["command"].startswith(
        f"{uvx} --offline --from {packages.wheel} discord-mcp hook"
    )
    # And what it wrote starts the server from the cache, where the package index cannot be
    # reached (a proxy that refuses, as a TLS proxy refuses Gemini's servers) and nothing
    # tells uv to stay offline: the same command without --offline fails there.
    unreachable = {k: v for k, v in env.items() if k != "UV_OFFLINE"}
    unreachable |= {"HOME": str(home), "HTTPS_PROXY": "http://127.0.0.1:9"}
    unreachable |= {"HTTP_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9"}
    listing = run([entry["command"], *entry["args"], "--version"], unreachable, tmp_path)
    assert listing.returncode == 0, listing.stderr
    online = [a for a in entry["args"] if a != "--offline"]
    assert run([entry["command"], *online, "--version"], unreachable, tmp_path).returncode != 0


def test_install_from_a_clone_writes_this_venvs_python() -> None:
    assert launcher() == [sys.executable, "-m", "discord_mcp"]  # the tests run from a clone
    entry = desired_entry("claude", Path("/x/.env"))
    assert [entry["command"], *entry["args"]] == [sys.executable, "-m", "discord_mcp"]


def test_outside_a_clone_install_writes_the_uvx_form_when_uv_is_there_else_this_python(
    tmp_path: Path,
) -> None:
    wheel = tmp_path / "discord_mcp-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    from_wheel = json.dumps({"url": wheel.as_uri(), "archive_info": {}})
    without_uv = launcher(
        clone=False, find=lambda _: None, direct_url=from_wheel, offline=lambda u, s: True
    )
    assert without_uv == [sys.executable, "-m", "discord_mcp"]
    cached = launcher(
        clone=False, find=lambda _: "/opt/uv/uvx", direct_url=from_wheel, offline=lambda u, s: True
    )
    assert cached == ["/opt/uv/uvx", "--offline", "--from", str(wheel), "discord-mcp"]
    uncached = launcher(
        clone=False, find=lambda _: "/opt/uv/uvx", direct_url=from_wheel, offline=lambda u, s: False
    )
    assert uncached == ["/opt/uv/uvx", "--from", str(wheel), "discord-mcp"]


def test_the_uvx_source_is_the_wheel_the_git_commit_or_the_released_version(
    tmp_path: Path,
) -> None:
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"")
    assert install_source(json.dumps({"url": wheel.as_uri(), "archive_info": {}}), "1") == str(
        wheel
    )
    git = {"url": "https://example.org/d.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}}
    assert install_source(json.dumps(git), "1") == "git+https://example.org/d.git@abc"
    gone = {"url": (tmp_path / "gone.whl").as_uri(), "archive_info": {}}
    assert install_source(json.dumps(gone), "0.3.0") == "discord-mcp==0.3.0"
    assert install_source(None, "0.3.0") == "discord-mcp==0.3.0"


def test_the_committed_uv_lock_matches_pyproject(packages: Packages, tmp_path: Path) -> None:
    done = run(
        [str(uv_binary()), "lock", "--check"],
        uv_env(packages.uv_cache),
        REPO_ROOT,
    )
    assert done.returncode == 0, done.stderr
