"""The documentation site: it builds strictly, its reference is the code's, README is its door.

``mkdocs build --strict`` fails on a broken link or anchor and on a page missing from the
navigation; ``scripts/reference/generate.py --check`` fails when a page under
``docs/reference/`` is not what the code would generate now.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GENERATE = ROOT / "scripts" / "reference" / "generate.py"


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
        env={"PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
    )


REMOTE_ASSET = re.compile(r"<(?:link|script|img)\b[^>]*\b(?:href|src)=\"(?:https?:)?//", re.I)


@pytest.mark.timeout(300)
def test_the_site_builds_strictly_and_loads_nothing_from_the_network(tmp_path: Path) -> None:
    done = _run([str(BIN / "mkdocs"), "build", "--strict", "--site-dir", str(tmp_path)], 280)

    assert done.returncode == 0, done.stderr[-4000:]
    pages = list(tmp_path.rglob("*.html"))
    assert (tmp_path / "index.html") in pages
    assert (tmp_path / "reference" / "errors" / "index.html") in pages
    assert "Coming from" in (tmp_path / "coming-from" / "codebridge" / "index.html").read_text(
        encoding="utf-8"
    )
    remote = [p for p in pages if REMOTE_ASSET.search(p.read_text(encoding="utf-8"))]
    assert remote == []


@pytest.mark.timeout(300)
def test_the_generated_reference_is_what_the_code_says_now() -> None:
    done = _run([sys.executable, str(GENERATE), "--check"], 280)

    assert done.returncode == 0, done.stderr[-4000:]


def _generator() -> Any:
    sys.path.insert(0, str(GENERATE.parent))
    try:
        import generate
    finally:
        sys.path.remove(str(GENERATE.parent))
    return generate


def test_a_reference_page_that_differs_from_the_code_is_stale_and_is_rewritten(
    tmp_path: Path,
) -> None:
    generate = _generator()
    shipped = (ROOT / "docs" / "reference" / "errors.md").read_text(encoding="utf-8")
    edited = shipped.replace("| `E_USAGE_LIMIT` | yes |", "| `E_USAGE_LIMIT` | no |")
    assert edited != shipped
    (tmp_path / "errors.md").write_text(edited, encoding="utf-8")

    assert generate.refresh(tmp_path, ["errors.md"], check=True) == ["errors.md"]
    assert generate.refresh(tmp_path, ["errors.md"], check=False) == ["errors.md"]
    assert (tmp_path / "errors.md").read_text(encoding="utf-8") == shipped
    assert generate.refresh(tmp_path, ["errors.md"], check=True) == []


def test_every_variable_the_package_reads_is_described_and_no_other() -> None:
    generate = _generator()

    described = tomllib.loads((GENERATE.parent / "environment.toml").read_text(encoding="utf-8"))
    read = generate.variables_read()

    assert {"DISCORD_BOT_TOKEN", "DISCORD_MCP_HOME", "PROJECT_NAME"} <= read
    assert set(described) == read


def test_the_readme_is_a_front_page_whose_links_all_lead_somewhere() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]

    assert text.startswith("# discord-mcp\n")
    assert len(text.splitlines()) < 200
    assert "docs/getting-started.md" in local
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))

    assert [page for page in pages if f": {page}\n" not in nav] == []


def test_every_picture_in_the_docs_is_made_by_the_screenshots_script() -> None:
    """A picture a person took by hand goes stale (the owner's page once showed a yes/no rule
    that was gone); scripts/screenshots makes each one from the running page tests."""
    script = (ROOT / "scripts" / "screenshots").read_text(encoding="utf-8")
    made = set(re.findall(r"\bdocs/([\w.-]+\.png)\b", script))
    shown = {
        Path(link).name
        for page in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", page.read_text(encoding="utf-8"))
    }
    assert shown, "no picture found: the pattern is wrong"
    assert shown <= made, f"pictures no script makes: {sorted(shown - made)}"
