"""The mutation check: each guard broken on purpose, one at a time, must fail a test.

    scripts/mutate                      every mutation in scripts/mutations.toml
    scripts/mutate run-id-anchor ...    only these (ids, or a file's path: its mutations)
    scripts/mutate --ci                 only the CI list (``ci = true``: tests/test_mutations.py)
    scripts/mutate --list               the mutations, with what each breaks
    scripts/mutate --diff ID            the change a mutation makes
    scripts/mutate --jobs 1             one at a time (default: one per core)
    scripts/mutate --no-baseline        skip the unmutated run of every named test

A mutation is a small bug a person could write in a guard (a dropped anchor, an inverted
condition, a removed check, a fail-open ``except``, a widened allow-list...): a ``find`` text
that occurs exactly once in its ``file`` and the ``replace`` text put in its place. Each runs
against the tests it names, in a copy of the work tree (tracked and untracked files, as ``git
ls-files`` lists them; the checkout is never changed), with ``pytest -x``: a test that fails
(pytest's exit code 1) catches it; all passing means it SURVIVED, a real gap in the tests.
A mutation whose text is not found once, whose result does not compile, or whose run ends any
other way (no test collected, an error, a time-out) is a failure of this list, never "caught".

First (unless ``--no-baseline``) every named test runs once unmutated in the same kind of copy,
and must pass: a test that fails there would "catch" everything.

Every process of a run sees the mutated code, not the checkout's: the ``.venv``'s editable
install names the checkout, so each copy gets its own ``.venv`` (a few links and files beside
the real one: the same interpreter and installed packages, with the copy in the checkout's
place on ``sys.path``, its console scripts pointing at it). A test that starts the product
with an environment of its own (no ``PYTHONPATH``) through ``sys.executable``, a console
script or ``PATH`` then runs the mutated copy too; each copy is checked for that before its
tests run (a check that fails is an ERROR, never "caught").

Cheap by design (CI runs it beside the suite): one process imports pytest and the heavy
third-party packages once, then forks one child per mutation, which imports this project from
its copy and runs pytest in-process. There is one copy per job, made once: each mutation is
applied to a free copy and its file put back after its run, so the copy's compiled bytecode
serves every run but the mutated module's.

Exit code: 0 when every mutation was caught, 1 when any survived, 2 when any could not be
checked (not applied, an error) or the baseline failed. ``--report FILE`` writes the results
as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTATIONS = ROOT / "scripts" / "mutations.toml"
RUN_TIMEOUT_S = 300.0
"""A mutation's test run that takes longer is ended and counted as an error (not caught)."""
PYTEST_ARGS = (
    "-q",
    "-x",
    "-rf",
    "--no-header",
    "-p",
    "no:cacheprovider",
    # Plugins by name, none found by entry point: what is preloaded below is then never marked
    # for assertion rewriting after its import (pytest warns, and the suite makes warnings errors).
    "--disable-plugin-autoload",
    "-p",
    "pytest_asyncio.plugin",
    "-p",
    "pytest_timeout",
    "-p",
    "_hypothesis_pytestplugin",
    "-p",
    "respx.plugin",
)
PRELOAD = (
    "pytest",
    "hypothesis",
    "hypothesis.strategies",
    "respx",
    "httpx",
    "anyio",
    "pydantic",
    "starlette.applications",
    "uvicorn",
    "websockets",
    "dotenv",
    "jsonschema",
    "openapi_schema_validator",
    "mcp",
    "fastmcp",
    "fastmcp.client",
    "fastmcp.client.auth.bearer",
    "fastmcp.server",
    "acp",
    "cryptography.x509",
    "cryptography.hazmat.primitives.asymmetric.ed25519",
    "griffe",
)
"""Imported once by the parent: every child starts with them (never this project's modules).
The CI list's tests import these heavy ones (``acp``'s schema alone, about 0.9 s of CPU): each
child left to import them itself paid that once per mutation."""
_OURS = ("discord_mcp", "tests", "bench")


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    breaks: str
    find: str
    replace: str
    tests: tuple[str, ...]
    ci: bool = False
    """In the CI list (tests/test_mutations.py runs it beside the suite)."""

    def apply(self, root: Path) -> None:
        """Write the mutated file under ``root``.

        Raises:
            NotApplied: the text is not there exactly once, or the result does not compile.
        """
        path = root / self.file
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise NotApplied(f"{self.file} cannot be read ({exc.strerror})") from None
        count = source.count(self.find)
        if count != 1:
            raise NotApplied(f"its text occurs {count} times in {self.file}, not once")
        mutated = source.replace(self.find, self.replace)
        if mutated == source:
            raise NotApplied("it changes nothing")
        if path.suffix == ".py":
            try:
                compile(mutated, str(path), "exec")
            except SyntaxError as exc:
                raise NotApplied(f"the mutated {self.file} does not compile ({exc})") from None
        path.write_text(mutated, encoding="utf-8")
        # Its bytecode (copied from the baseline tree) must not be the unmutated module's.
        for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            cached.unlink()

    def restore(self, root: Path, pristine: Path) -> None:
        """Put the file under ``root`` back as ``pristine`` has it (its time too) and drop
        the mutated module's bytecode."""
        shutil.copy2(pristine / self.file, root / self.file)
        path = root / self.file
        for cached in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
            cached.unlink()

    def diff(self, root: Path) -> str:
        source = (root / self.file).read_text(encoding="utf-8")
        count = source.count(self.find)
        if count != 1:
            return f"    NOT APPLIED: its text occurs {count} times in {self.file}, not once\n"
        mutated = source.replace(self.find, self.replace, 1)
        return "".join(
            difflib.unified_diff(
                source.splitlines(keepends=True),
                mutated.splitlines(keepends=True),
                f"a/{self.file}",
                f"b/{self.file}",
            )
        )


class NotApplied(Exception):
    """A mutation that cannot be applied to the current code (the message says why)."""


@dataclass
class Result:
    id: str
    file: str
    breaks: str
    verdict: str  # caught | SURVIVED | NOT APPLIED | ERROR
    seconds: float = 0.0
    caught_by: list[str] = field(default_factory=list)
    detail: str = ""


_FIELDS = frozenset({"id", "file", "breaks", "find", "replace", "tests", "ci"})


def load(path: Path = MUTATIONS) -> list[Mutation]:
    """The mutations of ``path``; each needs every field, and the ids are unique."""
    document = tomllib.loads(path.read_text(encoding="utf-8"))
    found: list[Mutation] = []
    for entry in document.get("mutation", []):
        tests = entry.get("tests")
        if not isinstance(tests, list) or not tests or not all(isinstance(t, str) for t in tests):
            raise SystemExit(f"{path}: mutation {entry.get('id')!r} names no tests")
        ci = entry.get("ci", False)
        if not isinstance(ci, bool):
            raise SystemExit(f"{path}: mutation {entry.get('id')!r}: ci is true or false")
        unknown = sorted(set(entry) - _FIELDS)
        if unknown:
            raise SystemExit(f"{path}: mutation {entry.get('id')!r}: unknown {', '.join(unknown)}")
        found.append(
            Mutation(
                id=str(entry["id"]),
                file=str(entry["file"]),
                breaks=" ".join(str(entry["breaks"]).split()),
                find=str(entry["find"]),
                replace=str(entry["replace"]),
                tests=tuple(tests),
                ci=ci,
            )
        )
    ids = [m.id for m in found]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise SystemExit(f"{path}: duplicate ids {', '.join(duplicates)}")
    return found


def tree_files(root: Path) -> list[str]:
    """The work tree's files as a fresh clone would have them, with uncommitted changes."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and (root / name).is_file()]


def copy_tree(source: Path, files: list[str] | None, destination: Path) -> None:
    """``files`` of ``source`` (all of a copy, bytecode included, when None) to
    ``destination``, times kept (so copied bytecode stays valid), the checkout's
    ``.agent-clis`` linked, and a ``.venv`` of its own (:func:`own_venv`)."""
    if files is None:
        shutil.copytree(
            source,
            destination,
            symlinks=True,
            ignore=lambda folder, names: [".venv"] if Path(folder) == source else [],
        )
    else:
        for name in files:
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target)
        if (ROOT / ".agent-clis").exists():
            (destination / ".agent-clis").symlink_to((ROOT / ".agent-clis").resolve())
    own_venv(destination)


VENV = ROOT / ".venv"
"""The checkout's environment; its editable install puts the checkout itself on sys.path."""


def own_venv(tree: Path) -> Path:
    """Give ``tree`` a ``.venv`` of its own that imports this project from ``tree``.

    It holds links to the real environment's interpreter and files, a ``pyvenv.cfg``, the
    console scripts rewritten to start its own interpreter, and one ``.pth`` that adds the
    real environment's packages (their own ``.pth`` files too) and then puts ``tree`` where
    the checkout was on ``sys.path``. Returns its interpreter.
    """
    real = VENV.resolve()
    venv = tree / ".venv"
    bin_dir = venv / "bin"
    bin_dir.mkdir(parents=True)
    shutil.copy2(real / "pyvenv.cfg", venv / "pyvenv.cfg")
    interpreter = Path(sys.executable).resolve()
    # Console scripts name the interpreter by the path they were installed under.
    real_python = {str(VENV / "bin"), str(real / "bin")}
    for entry in sorted((real / "bin").iterdir()):
        target = bin_dir / entry.name
        if entry.name.startswith("python"):
            target.symlink_to(interpreter)
            continue
        text = _script_text(entry)
        if text is None:
            target.symlink_to(entry)
            continue
        for named in real_python:
            text = text.replace(named, str(bin_dir))
        target.write_text(text, encoding="utf-8")
        target.chmod(0o755)
    for site_dir in dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib")):
        inside = Path(site_dir).resolve().relative_to(real)
        own = venv / inside
        own.mkdir(parents=True, exist_ok=True)
        checkout = {str(ROOT), str(ROOT.resolve())}
        line = (
            "import os, site, sys; "
            f"site.addsitedir({str(Path(site_dir).resolve())!r}); "
            f"sys.path[:] = [{str(tree)!r} if os.path.realpath(p) in {sorted(checkout)!r} "
            "else p for p in sys.path]"
        )
        (own / "_mutate_own_tree.pth").write_text(line + "\n", encoding="utf-8")
    return bin_dir / "python"


def _script_text(path: Path) -> str | None:
    """A console script's text (``#!`` and small), else None (binaries stay links)."""
    try:
        if not path.is_file() or path.stat().st_size > 64_000:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if not data.startswith(b"#!"):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def imports_itself(tree: Path) -> str | None:
    """None when a process started from ``tree``'s interpreter, with an empty environment
    (no PYTHONPATH, as the tests' ``env_for`` gives), imports this project from ``tree``;
    else what it imports instead."""
    python = tree / ".venv" / "bin" / "python"
    probe = (
        "import importlib.util as u\n"
        "for n in ('discord_mcp', 'tests', 'bench'):\n"
        "    print(getattr(u.find_spec(n), 'origin', None))"
    )
    try:
        found = subprocess.run(
            [str(python), "-c", probe],
            env={},
            cwd=tree.parent,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"its interpreter did not start ({exc})"
    lines = found.stdout.split("\n")[:3]
    wrong = [line for line in lines if not line.startswith(str(tree) + os.sep)]
    if found.returncode != 0 or len(lines) < 3 or wrong:
        return f"it imports {'; '.join(wrong) or found.stderr.strip()[-300:]}, not {tree}"
    return None


def preload() -> None:
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:
            continue
    leaked = sorted(n for n in sys.modules if n.split(".")[0] in _OURS)
    if leaked:
        raise SystemExit(f"preloading imported this project's modules ({leaked[:3]}): stop")
    # What is loaded now lives as long as every child: out of the collector's sight, a child's
    # full collections (pytest runs two at its end) skip it and never copy its pages.
    gc.collect()
    gc.freeze()


@dataclass
class Child:
    """A forked pytest run (its own process group), its log, its clock."""

    pid: int
    log: Path
    started: float
    key: str


def start(key: str, tree: Path, tests: tuple[str, ...], log: Path, *, stop_first: bool) -> Child:
    """Fork a child that runs pytest on ``tests`` in ``tree``, output to ``log``."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 3
        try:
            os.setsid()
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.close(fd)
            os.chdir(tree)
            enter(tree)
            import pytest

            args = [*PYTEST_ARGS, f"--basetemp={tree.parent / 'tmp'}"]
            if not stop_first:
                args.remove("-x")
            code = int(pytest.main([*args, *tests]))
        except BaseException as exc:
            print(f"scripts/mutate: the run failed to start: {exc!r}", file=sys.stderr)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return Child(pid, log, time.monotonic(), key)


def enter(tree: Path) -> None:
    """Make this (forked) process and every process it starts run ``tree``'s code: its
    interpreter as ``sys.executable``, its ``.venv/bin`` first on ``PATH``, ``tree`` in the
    checkout's place on ``sys.path`` and first on ``PYTHONPATH``."""
    checkout = {str(ROOT), str(ROOT.resolve())}
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") not in checkout]
    sys.path.insert(0, str(tree))
    venv = tree / ".venv"
    sys.executable = str(venv / "bin" / "python")
    os.environ["VIRTUAL_ENV"] = str(venv)
    own = {str(VENV / "bin"), str(VENV.resolve() / "bin")}
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p not in own]
    os.environ["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), old]))


def reap(child: Child, *, block: bool) -> int | None:
    """The child's exit code once it ended (its process group killed after it), else None."""
    pid, status = os.waitpid(child.pid, 0 if block else os.WNOHANG)
    if pid == 0:
        return None
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)  # whatever its tests left running
    return os.waitstatus_to_exitcode(status)


def failed_tests(log: Path) -> list[str]:
    text = log.read_text(encoding="utf-8", errors="replace")
    return re.findall(r"^FAILED (\S+)", text, re.MULTILINE)


def verdict_of(mutation: Mutation, code: int | None, child: Child, seconds: float) -> Result:
    result = Result(mutation.id, mutation.file, mutation.breaks, "ERROR", round(seconds, 1))
    if code == 1:
        result.verdict = "caught"
        result.caught_by = failed_tests(child.log)[:3]
    elif code == 0:
        result.verdict = "SURVIVED"
        result.detail = "every named test passed with the mutation in place"
    elif code is None:
        result.detail = f"its tests ran longer than {RUN_TIMEOUT_S:.0f} s"
    else:
        tail = child.log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
        result.detail = f"pytest ended with exit code {code}: " + " / ".join(tail)
    return result


def run_all(
    mutations: list[Mutation], *, jobs: int, baseline: bool, keep: bool, quiet: bool
) -> tuple[list[Result], bool]:
    """(a result per mutation, whether the baseline passed)."""
    work = Path(tempfile.mkdtemp(prefix="mutate-"))
    try:
        pristine = work / "base" / "src"
        copy_tree(ROOT, tree_files(ROOT), pristine)
        preload()
        baseline_ok = True
        wrong = imports_itself(pristine)
        if wrong is not None:
            raise SystemExit(f"scripts/mutate: a copy's own processes do not run it: {wrong}")
        if baseline:
            union = tuple(dict.fromkeys(t for m in mutations for t in m.tests))
            log = work / "baseline.log"
            child = start("baseline", pristine, union, log, stop_first=False)
            code = reap(child, block=True)
            baseline_ok = code == 0
            seconds = time.monotonic() - child.started
            if not quiet:
                state = "passed" if baseline_ok else f"FAILED (exit code {code})"
                print(f"baseline: {len(union)} test paths unmutated {state} in {seconds:.0f} s")
            if not baseline_ok:
                sys.stdout.write(log.read_text(encoding="utf-8", errors="replace")[-4000:])
                return [], False
        results = run_mutations(mutations, work, pristine, jobs=jobs, quiet=quiet)
        return results, baseline_ok
    finally:
        if keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def run_mutations(
    mutations: list[Mutation], work: Path, pristine: Path, *, jobs: int, quiet: bool
) -> list[Result]:
    """Each mutation in one of ``jobs`` copies of ``pristine`` (made once each, with their own
    ``.venv``): applied, its tests run, then its file put back as it was (time included, so
    the copy's bytecode stays valid) before the copy takes the next."""
    results: dict[str, Result] = {}
    queue = list(mutations)
    free = [work / f"copy-{n}" / "src" for n in range(jobs)]
    made: set[Path] = set()
    running: dict[str, tuple[Child, Mutation, Path]] = {}
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    width = max(len(m.id) for m in mutations)

    def done(result: Result) -> None:
        results[result.id] = result
        _show(result, width, quiet)

    while queue or running:
        while queue and free:
            mutation = queue.pop(0)
            tree = free[-1]
            if tree not in made:
                copy_tree(pristine, None, tree)
                made.add(tree)
                wrong = imports_itself(tree)
                if wrong is not None:
                    raise SystemExit(
                        f"scripts/mutate: a copy's own processes do not run it: {wrong}"
                    )
            try:
                mutation.apply(tree)
            except NotApplied as exc:
                done(
                    Result(
                        mutation.id, mutation.file, mutation.breaks, "NOT APPLIED", detail=str(exc)
                    )
                )
                continue
            free.pop()
            log = logs / f"{mutation.id}.log"
            child = start(mutation.id, tree, mutation.tests, log, stop_first=True)
            running[mutation.id] = (child, mutation, tree)
        for key, (child, mutation, tree) in list(running.items()):
            code = reap(child, block=False)
            seconds = time.monotonic() - child.started
            if code is None and seconds > RUN_TIMEOUT_S:
                os.killpg(child.pid, signal.SIGKILL)
                reap(child, block=True)
            elif code is None:
                continue
            mutation.restore(tree, pristine)
            del running[key]
            free.append(tree)
            done(verdict_of(mutation, code, child, seconds))
        if running:
            select.select([], [], [], 0.05)
    return [results[m.id] for m in mutations]


def _show(result: Result, width: int, quiet: bool) -> None:
    if quiet:
        return
    how = ", ".join(result.caught_by) if result.caught_by else result.detail
    print(
        f"{result.verdict:<12} {result.id:<{width}} {result.seconds:6.1f}s  {result.file}  {how}",
        flush=True,
    )


def select_mutations(
    mutations: list[Mutation], wanted: list[str], *, ci: bool = False
) -> list[Mutation]:
    if ci:
        mutations = [m for m in mutations if m.ci]
    if not wanted:
        return mutations
    chosen = [m for m in mutations if m.id in wanted or m.file in wanted]
    unknown = [w for w in wanted if not any(w in (m.id, m.file) for m in mutations)]
    if unknown:
        raise SystemExit(f"no mutation {', '.join(unknown)} (see scripts/mutate --list)")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/mutate", description=__doc__.split("\n")[0])
    parser.add_argument("ids", nargs="*", help="mutation ids or files (default: every one)")
    parser.add_argument("--ci", action="store_true", help="only the CI list (ci = true)")
    parser.add_argument("--list", action="store_true", help="list the mutations and stop")
    parser.add_argument("--diff", action="store_true", help="show each mutation's change")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the copies and logs (to debug)")
    parser.add_argument("--report", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    mutations = select_mutations(load(), args.ids, ci=args.ci)
    if args.list or args.diff:
        for mutation in mutations:
            ci = "  [ci]" if mutation.ci else ""
            print(f"{mutation.id}{ci}  ({mutation.file}; {', '.join(mutation.tests)})")
            print(f"    breaks: {mutation.breaks}")
            if args.diff:
                try:
                    print(mutation.diff(ROOT))
                except OSError as exc:
                    print(f"    cannot be read: {exc}")
        return 0
    started = time.monotonic()
    results, baseline_ok = run_all(
        mutations,
        jobs=max(1, args.jobs),
        baseline=not args.no_baseline,
        keep=args.keep,
        quiet=False,
    )
    if args.report is not None:
        document = {"baseline_passed": baseline_ok, "results": [asdict(r) for r in results]}
        args.report.write_text(json.dumps(document, indent=1), encoding="utf-8")
    if not baseline_ok:
        print("the named tests fail without any mutation: fix them first")
        return 2
    counts = {
        v: sum(r.verdict == v for r in results) for v in dict.fromkeys(r.verdict for r in results)
    }
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    print(f"{len(results)} mutations in {time.monotonic() - started:.0f} s: {summary}")
    if any(r.verdict in ("NOT APPLIED", "ERROR") for r in results):
        return 2
    return 1 if any(r.verdict == "SURVIVED" for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
