"""``doctor`` sees the Claude Code plugin and the Gemini CLI extension as the real CLIs
install them: a client wired by its bundle is wired, and a bundle beside the entry ``install``
wrote is two servers at once (every tool twice). The CLIs write their records into a
throwaway home; nothing here is written by hand but our own ``install``."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from discord_mcp.setup.checks import Check
from discord_mcp.setup.client_checks import client_checks
from discord_mcp.setup.install import install
from tests.support.agent_clis import require_cli

ROOT = Path(__file__).resolve().parents[2]
BUNDLE_FILES = (".claude-plugin", "hooks", "gemini-extension.json", "discord_mcp/skills")
"""What the plugin and the extension are made of (the repository is their root)."""


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """The repository's bundle files alone: the plugin install copies its whole root."""
    root = tmp_path / "discord-mcp"
    for name in BUNDLE_FILES:
        source, target = ROOT / name, root / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def cli(name: str, home: Path, cwd: Path, *args: str) -> None:
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        # no network: anything the CLI reports fails at once
        **{v: "http://127.0.0.1:9" for v in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy")},
    }
    done = subprocess.run(
        [str(require_cli(name)), *args],  # type: ignore[arg-type]
        env=env,
        cwd=cwd,
        capture_output=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{name} {' '.join(args)}: {done.stdout}\n{done.stderr}"


def checks(home: Path, project: Path) -> dict[str, Check]:
    return {c.name.split(" (")[0]: c for c in client_checks(home=home, cwd=project, environ={})}


def test_a_client_wired_by_the_plugin_or_the_extension_is_wired(
    bundle: Path, home: Path, project: Path
) -> None:
    cli("claude", home, project, "plugin", "marketplace", "add", str(bundle))
    cli("claude", home, project, "plugin", "install", "discord-mcp@discord-mcp")
    cli("gemini", home, project, "extensions", "link", str(bundle), "--consent")
    found = checks(home, project)
    assert "agent clients" not in found, found  # registered, by the bundles
    for client, kind in (("claude", "plugin"), ("gemini", "extension")):
        assert found[client].verdict == "OK", found[client].render()
        assert f"from the {kind}" in found[client].detail
        for what in ("approvals", "hooks"):
            check = found[f"{client} {what}"]
            assert check.verdict == "OK", check.render()
            assert f"wired by the {kind}" in check.detail
    assert "plugin_discord-mcp_discord" in found["claude"].detail


def test_a_bundle_beside_what_install_registered_is_two_servers_and_a_disabled_one_is_off(
    bundle: Path, home: Path, project: Path, tmp_path: Path
) -> None:
    cli("claude", home, project, "plugin", "marketplace", "add", str(bundle))
    cli("claude", home, project, "plugin", "install", "discord-mcp@discord-mcp")
    cli("gemini", home, project, "extensions", "link", str(bundle), "--consent")
    env_file = tmp_path / "discord.env"
    env_file.write_text("DISCORD_BOT_TOKEN=x\n", encoding="utf-8")
    for client in ("claude", "gemini"):
        install(client, "user", env_file=env_file, home=home, cwd=project, environ={})
    found = checks(home, project)
    for client in ("claude", "gemini"):
        bundled = [
            c
            for c in client_checks(home=home, cwd=project, environ={})
            if c.name.startswith(f"{client} (") and ("plugin" in c.name or "extension" in c.name)
        ]
        assert [c.verdict for c in bundled] == ["WARN"], [c.render() for c in bundled]
        assert "two discord-mcp servers at once" in bundled[0].detail
        assert f"{client} mcp remove discord" in bundled[0].fix
    assert found["claude approvals"].verdict == "OK"  # install wrote no approval hook here
    cli("gemini", home, project, "extensions", "disable", "discord-mcp", "--scope", "workspace")
    [gemini] = [
        c
        for c in client_checks(home=home, cwd=project, environ={})
        if c.name.startswith("gemini (extension")
    ]
    assert gemini.verdict == "OK"
    assert "not enabled here" in gemini.detail
