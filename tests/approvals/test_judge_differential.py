"""The differential proof of the read-only judge (issue 32): what it lets through, the real
programs run without writing a file, starting a program, or printing a secret.

For each program family, Hypothesis generates 2,000 distinct commands near the
judge's grammar, with hostile mutations among them (:mod:`tests.support.judge_families`).
Every command the judge calls read-only runs against the real program in a throwaway
repository under ``strace -f`` (:mod:`tests.support.syscall_trace`, which lists the exceptions
it allows: ``/dev/null``, git's index refresh, a program starting itself again); the test
fails on any exec, write, printed environment marker or printed secret, and names the
commands. The seed is fixed
(``derandomize``), so CI runs the same commands every time.

And the checker itself can fail: a judge that calls everything read-only is caught writing,
executing and leaking, each for the reason it did.
"""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from discord_mcp.judge.readonly import is_read_only
from tests.support.judge_families import BATCH, FAMILIES
from tests.support.requirements import missing, require_program
from tests.support.syscall_trace import Finding, Sandbox, check

GENERATED = 2000
"""Distinct commands per family (the first ones generated)."""
PROGRAMS = {
    "strace": "strace", "sed": "sed", "gawk": "gawk", "mawk": "mawk", "jq": "jq", "git": "git",
    "find": "findutils", "sort": "coreutils", "grep": "grep", "rg": "ripgrep",
    "ag": "silversearcher-ag", "tree": "tree", "file": "file",
}  # fmt: skip


@pytest.fixture(scope="module")
def programs() -> None:
    """The real programs (and strace) are installed; scripts/test installs them in CI."""
    for program, package in PROGRAMS.items():
        require_program(program, f"the differential judge test runs it (Debian: {package})")
    if not (shutil.which("fd") or shutil.which("fdfind")):
        missing("fd is not on PATH (the differential judge test runs it; Debian: fd-find)")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, programs: None) -> Sandbox:
    """One throwaway world for every family (a command that changed it would be a finding)."""
    return Sandbox(tmp_path_factory.mktemp("judge"))


@functools.cache
def generated(family: str) -> list[str]:
    """The family's commands, generated with a fixed seed, each once."""
    found: list[str] = []

    @settings(
        max_examples=GENERATED * 2 // BATCH,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(FAMILIES[family])
    def collect(commands: list[str]) -> None:
        found.extend(commands)

    collect()
    return list(dict.fromkeys(found))[:GENERATED]


def described(findings: list[Finding]) -> str:
    return "\n".join(f"{f.reason}: {f.command}  [{f.detail[:200]}]" for f in findings[:30])


HOSTILE = {
    "sed": ["[[:alpha:]/]", "/e", "w out", "e touch X", "r notes.txt", "-i", "//proc"],
    "awk": ["system(", '> "out"', "getline", "ENVIRON", "-f", "x=1"],
    "jq": ["$ ENV", "$ENV", "env", "input_filename", "\\(env)", "--rawfile", "~/.netrc"],
    "git": [
        "core.pager",
        "--format=%G?",
        "--output=out",
        "remote -v",
        "branch newbranch",
        "--column",
        "--ext-diff",
        ".git/config",
    ],
    "find": ["-exec", "-fprint", "-delete", "-fls", "-ok"],
    "sort": ["-S 1K", "--parallel", "-o out", "--compress-program", "-m"],
    "grep": ["-f notes.txt", "egrep", "//proc/self/environ", "../home/.netrc"],
    "rg": ["--pre", "-z", "--hidden"],
    "ag-fd": ["-x touch", "-X touch", "ag "],
    "head-tail": ["-f", "//dev/zero"],
    "tree": ["-o out", "-R", "--fromfile"],
    "coreutils": ["uniq notes.txt out.txt", "file -C"],
}
"""Hostile pieces each family's generator must produce (and the judge must ask about)."""


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_generators_make_hostile_commands_and_the_judge_asks_about_them(family: str) -> None:
    asked = [c for c in generated(family) if not is_read_only(c)]
    assert {piece for piece in HOSTILE[family] if not any(piece in c for c in asked)} == set()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_what_the_judge_calls_read_only_neither_writes_nor_runs_a_program_nor_leaks(
    family: str, sandbox: Sandbox
) -> None:
    commands = generated(family)
    assert len(commands) == GENERATED
    report = check(commands, sandbox, is_read_only)
    assert report.findings == [], described(report.findings)
    # near the grammar (many ran for real) and hostile too (many asked)
    assert len(report.ran) >= len(commands) * 2 // 5, (len(report.ran), len(commands))
    assert len(commands) - len(report.ran) >= len(commands) // 4


BROKEN = {
    "sed -n 'w out' notes.txt": "write",
    "sed 's/.*[[:alpha:]/]/touch X/e' README.md": "exec",
    "find . -name notes.txt -exec true '{}' ';'": "exec",
    "find . -maxdepth 0 -fprint out": "write",
    "sort -S 1K big.txt": "write",
    "sort --parallel=2 -S 64K big.txt": "write",
    "sort -m " + " ".join(f"parts/p{n:02d}.txt" for n in range(18)): "write",
    "awk 'BEGIN{system(\"true\")}'": "exec",
    "awk '{print > \"out2\"}' notes.txt": "write",
    "jq -n env": "environment",
    "jq -n '$ ENV'": "environment",
    "cat ~/.netrc": "secret",
    "cat ../home/.netrc": "secret",
    "git remote -v": "secret",
    "git log -1 '--format=%G?' feature": "exec",
    "tree -o out3": "write",
    "rg --pre=cat alpha README.md": "exec",
    "fd -x true": "exec",
    "ag alpha": "exec",
    "egrep alpha notes.txt": "exec",
    "uniq notes.txt out4": "write",
    "tail -f notes.txt": "timeout",
}
"""Commands a broken judge lets through, and what the checker must see each do."""
CLEAN = ["git status", "git describe --dirty --always", "cat notes.txt", "sort big.txt",
         "jq .name data.json", "head -c 10 /dev/null"]  # fmt: skip
"""Reads the checker must not flag (git's index refresh is an allowed exception)."""


def test_the_checker_catches_what_a_broken_judge_lets_through(
    tmp_path: Path, programs: None
) -> None:
    report = check([*BROKEN, *CLEAN], Sandbox(tmp_path), lambda command: True, timeout=3)
    reasons: dict[str, set[str]] = {}
    for finding in report.findings:
        reasons.setdefault(finding.command, set()).add(finding.reason)
    assert {c: r for c, r in BROKEN.items() if r not in reasons.get(c, set())} == {}
    assert {c: reasons[c] for c in CLEAN if c in reasons} == {}


def test_a_judge_that_asks_about_everything_runs_nothing(tmp_path: Path, programs: None) -> None:
    report = check(BROKEN, Sandbox(tmp_path), lambda command: False)
    assert report.ran == []
    assert report.findings == []
