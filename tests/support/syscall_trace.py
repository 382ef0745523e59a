"""Runs shell commands against the real programs under ``strace -f`` and reports every exec and
every write they attempt: the differential check of the read-only judge (issue 32).

:class:`Sandbox` is a throwaway world: a small git repository with files (one large enough to
make ``sort`` spill if it were allowed to, a symbolic link to a file and one to a directory,
a commit with a signature header, a stash, a remote whose address carries credentials), a home
directory with a ``.netrc`` and an empty ``TMPDIR``. :func:`check` runs the commands a judge
calls read-only there, in batches: one ``strace`` over one driver process
(:mod:`tests.support.trace_driver`) that starts each command in turn, then maps every traced
call back to its command through the process tree (the driver's n-th clone is the n-th
command; ``clone``/``fork``/``vfork`` results give every other process its parent).

A command is flagged (:class:`Finding`) when, in its own process or any descendant:

- ``exec``: it calls ``execve``/``execveat`` beyond the one that starts the program itself
  (a failed attempt counts: it tried), for any program but its own (a file with the same
  bytes: ``git stash list`` runs ``git log``, ``git describe --dirty`` runs ``git
  diff-index``, each checked like the rest);
- ``write``: it opens a file with ``O_WRONLY``, ``O_RDWR``, ``O_CREAT``, ``O_TRUNC``,
  ``O_APPEND`` or ``O_TMPFILE``, or calls ``creat``, ``unlink*``, ``rename*``, ``link*``,
  ``symlink*``, ``mkdir*``, ``rmdir``, ``truncate``, ``chmod``/``fchmodat``,
  ``chown``/``fchownat``/``lchown``, ``utime*``, ``mknod*`` or ``*setxattr``/``*removexattr``;
- ``environment``: its output holds the value of a marker variable of its environment;
- ``secret``: its output holds the content of ``~/.netrc``, or (for git) the credentials in
  the repository's remote address;
- ``timeout``: it did not end within the time allowed.

The exceptions, all of them: opening ``/dev/null`` or ``/dev/tty`` for writing (programs make
sure their standard descriptors are open: git does at every start), and for git, the index
refresh (``.git/index.lock`` created, then renamed to ``.git/index`` or removed), which is git
keeping its own cache of file times and which ``--no-optional-locks`` stops.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from discord_mcp.judge.readers import program_of
from discord_mcp.judge.words import split

ENV_MARKER = "envmarker-5c1e9a0f7d"
"""The value of a variable in every command's environment; no read-only output may hold it."""
NETRC_MARKER = "netrcmarker-81b2f4"
CREDENTIAL_MARKER = "credmarker-3d70aa"
_WRITE_CALLS = (
    "creat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "link", "linkat",
    "symlink", "symlinkat", "mkdir", "mkdirat", "rmdir", "truncate", "chmod", "fchmodat",
    "chown", "fchownat", "lchown", "utime", "utimes", "utimensat", "futimesat", "mknod",
    "mknodat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
    "fremovexattr",
)  # fmt: skip
_OPEN_CALLS = ("open", "openat", "openat2")
_EXEC_CALLS = ("execve", "execveat")
_CLONE_CALLS = ("clone", "clone3", "fork", "vfork")
TRACED = ",".join(f"?{name}" for name in (*_EXEC_CALLS, *_OPEN_CALLS, *_WRITE_CALLS, *_CLONE_CALLS))
_WRITE_FLAGS = re.compile(r"\bO_(?:WRONLY|RDWR|CREAT|TRUNC|APPEND|TMPFILE)\b")
_LINE = re.compile(r"^(\d+)\s+(.*)$")
_START = re.compile(r"^([a-z0-9_]+)\((.*)$")
_RESUMED = re.compile(r"^<\.\.\. ([a-z0-9_]+) resumed>(.*)$")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+)")
_PATHS = re.compile(r'"((?:[^"\\]|\\.)*)"')
_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/tty"})


@dataclass(frozen=True)
class Finding:
    """One thing a command did that a read-only command must not do."""

    command: str
    reason: str
    detail: str


@dataclass
class Report:
    """What :func:`check` found: the commands it ran and what they did."""

    ran: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


class Sandbox:
    """A throwaway repository, home and ``TMPDIR`` under ``root`` (see the module doc)."""

    def __init__(self, root: Path) -> None:
        root = root.resolve()  # git and strace print real paths
        self.root = root
        self.work = root / "work"
        self.home = root / "home"
        self.tmp = root / "tmp"
        self.bin = root / "bin"
        for folder in (self.work, self.home, self.tmp, self.bin):
            folder.mkdir(parents=True)
        (self.home / ".netrc").write_text(
            f"machine example.invalid password {NETRC_MARKER}\n", encoding="utf-8"
        )
        fdfind = shutil.which("fdfind")
        if fdfind and not shutil.which("fd"):
            (self.bin / "fd").symlink_to(fdfind)  # Debian names fd fdfind
        _fill(self.work)
        _repository(self.work, self.home)

    def environment(self) -> dict[str, str]:
        return {
            "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "JUDGE_MARKER": ENV_MARKER,
        }

    def argv(self, command: str) -> list[str] | None:
        """The words ``bash -c command`` would run (``~`` expanded), or None."""
        words = split(command)
        if words is None:
            return None
        program = program_of(words[0])
        found = shutil.which(program, path=self.environment()["PATH"]) if program else None
        if found is None:
            return None
        home = str(self.home)
        expanded = [home + w[1:] if w == "~" or w.startswith("~/") else w for w in words[1:]]
        return [found, *expanded]


def _fill(work: Path) -> None:
    lines = [f"line {n} alpha beta {n * 7 % 13} TODO key=value x{n % 5}" for n in range(40)]
    (work / "README.md").write_text("# Project\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    (work / "notes.txt").write_text(
        "b note\na note\nc note\n# comment\n\nlast line\n", encoding="utf-8"
    )
    (work / "data.csv").write_text(
        "name,count,kind\nalpha,3,x\nbeta,1,y\ngamma,2,x\n", encoding="utf-8"
    )
    document = {
        "name": "demo",
        "scripts": {"test": "pytest", "build": "make"},
        "items": [{"id": n, "x": n * 2, "name": f"item{n}", "tags": ["a", "b"]} for n in range(4)],
        "a": {"b": [1, 2, 3], "c": None},
    }
    (work / "data.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text(
        "def main():\n    return 'alpha'  # TODO\n", encoding="utf-8"
    )
    (work / "src" / "util.py").write_text("VALUE = 1\n", encoding="utf-8")
    (work / "docs").mkdir()
    (work / "docs" / "guide.md").write_text("Guide\n=====\nalpha beta\n", encoding="utf-8")
    (work / "empty").mkdir()
    (work / "parts").mkdir()
    for n in range(18):
        (work / "parts" / f"p{n:02d}.txt").write_text(f"{n}\n{n * 3}\n", encoding="utf-8")
    words = ["alpha", "beta", "gamma", "delta", "omega", "zeta", "kappa", "sigma"]
    big = [f"{words[n * 7 % 8]} {n * 7919 % 100003} {words[n % 8]}" for n in range(15_000)]
    (work / "big.txt").write_text(
        "\n".join(big) + "\n", encoding="utf-8"
    )  # 300 kB: sort -S 64K spills
    (work / "link").symlink_to("notes.txt")
    (work / "dirlink").symlink_to("src")
    (work / ".gitignore").write_text("*.log\nscratch/\nbig.txt\n", encoding="utf-8")


def _git(work: Path, home: Path, *args: str, stdin: str | None = None) -> str:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.invalid",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.invalid",
        "GIT_AUTHOR_DATE": "1700000000 +0000",
        "GIT_COMMITTER_DATE": "1700000000 +0000",
    }
    done = subprocess.run(
        ["git", *args],
        cwd=work,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    return done.stdout.strip()


def _repository(work: Path, home: Path) -> None:
    _git(work, home, "-c", "init.defaultBranch=main", "init", "-q")
    _git(work, home, "add", "-A")
    _git(work, home, "commit", "-q", "-m", "first")
    _git(work, home, "tag", "v1")
    _git(work, home, "checkout", "-q", "-b", "feature")
    (work / "src" / "util.py").write_text("VALUE = 2\n", encoding="utf-8")
    _git(work, home, "commit", "-q", "-am", "second")
    tree = _git(work, home, "rev-parse", "HEAD^{tree}")
    parent = _git(work, home, "rev-parse", "HEAD")
    signed = (
        f"tree {tree}\nparent {parent}\n"
        "author A <a@example.invalid> 1700000000 +0000\n"
        "committer A <a@example.invalid> 1700000000 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEexample\n"
        " -----END PGP SIGNATURE-----\n\nsigned\n"
    )
    commit = _git(work, home, "hash-object", "-t", "commit", "-w", "--stdin", stdin=signed)
    _git(work, home, "update-ref", "refs/heads/feature", commit)
    _git(work, home, "reset", "-q", "--hard")
    _git(work, home, "tag", "-a", "v2", "-m", "second tag")
    _git(work, home, "checkout", "-q", "main")
    (work / "notes.txt").write_text("stashed change\n", encoding="utf-8")
    _git(work, home, "stash", "-q")
    (work / "notes.txt").write_text("b note\na note\nchanged\n", encoding="utf-8")
    (work / "scratch.txt").write_text("untracked\n", encoding="utf-8")
    url = f"https://user:{CREDENTIAL_MARKER}@example.invalid/repo.git"
    _git(work, home, "remote", "add", "origin", url)


@dataclass
class _Process:
    pid: int
    parent: _Process | None = None
    command: int | None = None
    execs: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)


def check(
    commands: Iterable[str],
    sandbox: Sandbox,
    judge: Callable[[str], bool],
    *,
    batches: int = 2,
    timeout: float = 30.0,
) -> Report:
    """Run each of ``commands`` that ``judge`` calls read-only under ``strace`` in
    ``sandbox`` (the same command once) and report what they did (see the module doc)."""
    report = Report()
    runnable: list[tuple[str, list[str]]] = []
    for command in dict.fromkeys(commands):
        if not judge(command):
            continue
        argv = sandbox.argv(command)
        if argv is None:
            raise AssertionError(f"the judge calls {command!r} read-only but it cannot be run")
        runnable.append((command, argv))
    report.ran = [command for command, _ in runnable]
    groups = [runnable[n::batches] for n in range(batches)]
    runs = [_start(group, sandbox, n, timeout) for n, group in enumerate(groups) if group]
    for group, (process, job_dir) in zip([g for g in groups if g], runs, strict=True):
        _, errors = process.communicate()
        if process.returncode != 0:
            raise AssertionError(f"strace or its driver failed: {errors[-2000:]}")
        report.findings.extend(_findings(group, job_dir, sandbox))
        shutil.rmtree(job_dir)  # traces are large; what they showed is in the report
    return report


def _start(
    group: Sequence[tuple[str, list[str]]], sandbox: Sandbox, number: int, timeout: float
) -> tuple[subprocess.Popen[str], Path]:
    job_dir = Path(tempfile.mkdtemp(prefix=f"job{number}-", dir=sandbox.root))
    job = {
        "commands": [argv for _, argv in group],
        "cwd": str(sandbox.work),
        "env": sandbox.environment(),
        "timeout": timeout,
        "markers": [ENV_MARKER, NETRC_MARKER, CREDENTIAL_MARKER],
    }
    (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
    driver = Path(__file__).with_name("trace_driver.py")
    strace = [
        "strace", "-f", "--seccomp-bpf", "-q", "-s", "4096", "-e", "signal=none",
        "-e", f"trace={TRACED}", "-o", str(job_dir / "trace.txt"),
    ]  # fmt: skip
    argv = [*strace, sys.executable, "-S", "-B", str(driver)]
    argv += [str(job_dir / "job.json"), str(job_dir / "results.json")]
    process = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        cwd=sandbox.root,
    )
    return process, job_dir


def _findings(
    group: Sequence[tuple[str, list[str]]], job_dir: Path, sandbox: Sandbox
) -> list[Finding]:
    results = json.loads((job_dir / "results.json").read_text(encoding="utf-8"))
    processes = _trace(job_dir / "trace.txt", len(group))
    found: list[Finding] = []
    by_command: dict[int, list[_Process]] = {}
    for process in processes:
        root = process
        while root.command is None and root.parent is not None:
            root = root.parent
        if root.command is None:
            continue  # the driver itself
        by_command.setdefault(root.command, []).append(process)
    for index, ((command, argv), result) in enumerate(zip(group, results, strict=True)):
        mine = by_command.get(index, [])
        starter = next((p for p in mine if p.command == index), None)
        if starter is None or not starter.execs or argv[0] not in starter.execs[0]:
            raise AssertionError(f"the trace lost {command!r}: {starter}")
        git = Path(argv[0]).name == "git"
        for process in mine:
            execs = process.execs[1:] if process is starter else process.execs
            found.extend(Finding(command, "exec", e) for e in execs if not _itself(e, argv[0]))
            for write in process.writes:
                if not _allowed(write, git, sandbox):
                    found.append(Finding(command, "write", write))
        if result["timed_out"]:
            found.append(Finding(command, "timeout", "did not end in time"))
        markers = set(result["markers"])
        if 0 in markers:
            found.append(Finding(command, "environment", "printed the marker variable"))
        if 1 in markers or (git and 2 in markers):
            found.append(Finding(command, "secret", "printed a secret's content"))
    return found


@functools.cache
def _digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return ""


def _itself(execve: str, program: str) -> bool:
    """Whether ``execve`` starts the same program (the same bytes) as ``program``."""
    paths = _PATHS.findall(execve)
    if not paths:
        return False
    digest = _digest(paths[0])
    return digest != "" and digest == _digest(program)


def _allowed(write: str, git: bool, sandbox: Sandbox) -> bool:
    paths = _PATHS.findall(write)
    if write.startswith(_OPEN_CALLS) and paths and paths[0] in _HARMLESS_DEVICES:
        return True
    if not git:
        return False
    lock = str(sandbox.work / ".git" / "index.lock")
    index = str(sandbox.work / ".git" / "index")
    if write.startswith(_OPEN_CALLS) or write.startswith(("unlink", "unlinkat")):
        return paths[:1] == [lock]
    if write.startswith(("rename", "renameat", "renameat2")):
        return paths == [lock, index]
    return False


def _trace(path: Path, commands: int) -> list[_Process]:
    """Every process in the trace, with its parent, the command it started (the driver's n-th
    clone), its ``execve`` targets and its writes."""
    current: dict[int, _Process] = {}
    latest: dict[int, _Process] = {}
    every: list[_Process] = []
    driver: _Process | None = None
    clones = 0

    def process_of(pid: int) -> _Process:
        found = current.get(pid)
        if found is None:
            found = current[pid] = latest[pid] = _Process(pid)
            every.append(found)
        return found

    with path.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            matched = _LINE.match(line.rstrip("\n"))
            if matched is None:
                continue
            pid, rest = int(matched.group(1)), matched.group(2)
            if rest.startswith("+++ "):
                current.pop(pid, None)  # exited or killed: the next use of the pid is another
                continue
            process = process_of(pid)
            if driver is None:
                driver = process
            start = _START.match(rest)
            resumed = _RESUMED.match(rest)
            name = start.group(1) if start else resumed.group(1) if resumed else ""
            if start is not None and name in _EXEC_CALLS:
                process.execs.append(rest)
            elif start is not None and name in _OPEN_CALLS:
                if _WRITE_FLAGS.search(rest):
                    process.writes.append(rest)
            elif start is not None and name in _WRITE_CALLS:
                process.writes.append(rest)
            if name in _CLONE_CALLS:
                result = _RESULT.search(rest)
                if result is None or int(result.group(1)) <= 0:
                    continue
                child_pid = int(result.group(1))
                child = current.get(child_pid) or latest.get(child_pid)
                if child is None or child.parent is not None or child is driver:
                    child = process_of(child_pid)
                child.parent = process
                if process is driver:
                    child.command = clones
                    clones += 1
    if clones != commands:
        raise AssertionError(f"the driver started {clones} processes for {commands} commands")
    return every
