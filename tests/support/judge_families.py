"""The program families of the differential test: one Hypothesis strategy each (see
:mod:`tests.support.judge_commands` for what the strategies aim at).

git's commands are drawn from the judge's own tables (every read-only subcommand with any of
its options), so the real git is asked about each option the judge allows; the other families
draw from option lists written here, near the judge's tables, plus hostile extras.
"""

from __future__ import annotations

from hypothesis.strategies import SearchStrategy

from discord_mcp.judge import git as judge_git
from discord_mcp.judge.options import Table
from tests.support.judge_commands import (
    DIRECTORIES,
    FILES,
    HOSTILE_PATHS,
    Choices,
    awk,
    family,
    join,
    jq,
    mixed,
    paths,
    sed,
)

GIT_VALUES = ["1", "2", "3", "HEAD", "main", "alpha", "1,3", "1,3:README.md", "*.md",
              "oneline", "short", "format:%h %s", "%h", "relative", "iso", "-committerdate",
              "refname", "v:refname", "x", "2023-01-01", "README.md", "M", "v*",
              "%(path)"]  # fmt: skip
GIT_OPTIONAL = ["always", "never", "auto", "short", "2", "plain", "%h %s", "full", "no"]
GIT_REFS = ["HEAD", "HEAD~1", "main", "feature", "v1", "v2", "main..feature", "HEAD^",
            "feature~1", "stash@{0}"]  # fmt: skip
GIT_PATHS = ["README.md", "src", "src/app.py", "notes.txt", "docs", "."]
GIT_GLOBAL = ["-C .", "--no-pager", "-P", "--no-optional-locks", "-C src", "--literal-pathspecs"]
GIT_HOSTILE_GLOBAL = ["-c core.pager=touch X", "-c alias.st=!touch X", "--exec-path=.",
                      "-c core.fsmonitor=touch X", "--git-dir=.git", "-c diff.external=touch",
                      "-C //proc/self", "--work-tree=."]  # fmt: skip
GIT_HOSTILE_OPTIONS = ["--output=out", "--ext-diff", "--textconv", "-Oorder", "--column",
                       "--open-files-in-pager=touch", "--format=%G?", "--pretty=%GS",
                       "--format=%(describe)", "--submodule=diff", "--show-signature",
                       "--sort=describe", "--format=%(signature)", "-O", "--recurse-submodules",
                       "--contents=notes.txt", "--ignore-revs-file=notes.txt"]  # fmt: skip
GIT_HOSTILE_COMMANDS = ["branch newbranch", "tag newtag", "remote -v", "remote get-url origin",
                        "config --list", "stash", "gc", "checkout feature", "update-index",
                        "commit --allow-empty -m x", "notes add -m x", "var -l", "difftool",
                        "column", "grep -O x", "status --column", "log --show-signature",
                        "describe --dirty=x --broken", "fsck", "maintenance run"]  # fmt: skip


_NESTED = {
    "stash list": ("stash", "list"),
    "stash show": ("stash", "show"),
    "worktree list": ("worktree", "list"),
    "reflog": ("reflog", "show"),
}


def _git_options(c: Choices, table: Table) -> list[str]:
    words: list[str] = []
    for _ in range(c.number(0, 3)):
        kind = c.pick(["plain", "plain", "valued", "optional"])
        names = sorted(
            {"plain": table.plain, "valued": table.valued, "optional": table.optional}[kind]
        )
        if not names:
            continue
        name = c.pick(names)
        if kind == "plain":
            words.append(name)
        elif kind == "valued":
            value = c.pick(GIT_VALUES)
            words += [f"{name}={value}"] if name.startswith("--") else [name, value]
        else:
            words.append(name if c.number(0, 1) == 1 else f"{name}={c.pick(GIT_OPTIONAL)}")
    return words


def git(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 3) if hostile else -1
    globals_ = c.some(GIT_GLOBAL, 1)
    if where == 0:
        globals_.append(c.pick(GIT_HOSTILE_GLOBAL))
    if where == 1:
        rest = c.pick(GIT_HOSTILE_COMMANDS).split(" ")
        return join(["git", *[w for g in globals_ for w in g.split(" ", 1)], *rest])
    if c.number(0, 5) == 0:
        subcommand = c.pick(sorted(_NESTED))
        table = judge_git.table_for(*_NESTED[subcommand]) or Table()
    else:
        subcommand = c.pick(sorted(judge_git.READERS))
        table = judge_git.READERS[subcommand]
    options = _git_options(c, table)
    if where == 2:
        options.append(c.pick(GIT_HOSTILE_OPTIONS))
    operands: list[str] = []
    if subcommand == "grep":
        operands.append(c.pick(["alpha", "TODO", "^b", "x[0-9]"]))
    elif subcommand in ("branch", "tag"):
        operands += ["--list", *c.some(["v*", "m*", "*"], 1)] if c.number(0, 1) == 1 else []
    elif subcommand != "remote":
        operands += c.some(GIT_REFS, 1)
    with_paths = subcommand in ("log", "diff", "show", "blame", "grep", "ls-files", "status")
    if with_paths and c.number(0, 1) == 1:
        operands += ["--", *c.some(GIT_PATHS, 2)]
    if where == 3:
        operands.append(c.pick(HOSTILE_PATHS))
    words = [w for g in globals_ for w in g.split(" ", 1)] + subcommand.split(" ")
    return join(["git", *words, *options, *operands])


# -- find ------------------------------------------------------------------------------------

FIND_TESTS = ["-name *.py", "-iname readme*", "-path ./src/*", "-regex .*md", "-type f",
              "-type d", "-type l", "-xtype f", "-size -2k", "-mtime -1", "-mmin +1",
              "-newer README.md", "-newermt 2020-01-01", "-user root", "-perm -u+r",
              "-links 1", "-maxdepth 1", "-mindepth 1", "-empty", "-readable", "-executable",
              "-not -name x", "! -name x", "( -name a -o -name b )", "-depth", "-xdev",
              "-samefile notes.txt", "-lname notes.txt", "-regextype posix-extended",
              "-daystart", "-noleaf", "-true", "-false", "-writable", "-nouser", "-iregex .*PY",
              "-uid 0", "-group root", "-inum 1", "-used 1", "-anewer notes.txt"]  # fmt: skip
FIND_ACTIONS = ["-print", "-print0", "-ls", "-printf %p_%s\\n", "-prune", "-quit", ""]
FIND_HOSTILE = ["-exec touch X {} ;", "-execdir true {} +", "-ok true {} ;", "-delete",
                "-fprint out", "-fprint0 out", "-fprintf out %p", "-fls out",
                "-files0-from notes.txt", "-D exec", "-O3", "-newer ~/.netrc",
                "-okdir true {} ;", "-exec cat {} +"]  # fmt: skip


def find(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    words = c.some(["-H", "-L", "-P"], 1)
    words += paths(c, [*DIRECTORIES, "link", "notes.txt"], 2, hostile=where == 0)
    for test in c.some(FIND_TESTS, 3):
        words += test.split(" ")
    action = c.pick(FIND_ACTIONS)
    if action:
        words += action.split(" ", 1)
    if where == 1:
        words += c.pick(FIND_HOSTILE).split(" ")
    return join(["find", *words])


# -- sort, grep, rg, ag, fd, head, tail, tree ------------------------------------------------

SORT_OPTIONS = ["-b", "-d", "-f", "-g", "-h", "-i", "-M", "-n", "-R", "-r", "-V", "-s", "-u",
                "-z", "-c", "-C", "-k 2", "-k2,2", "-k 1n", "-t ,", "-t :", "--reverse",
                "--unique", "--key=3r", "--field-separator=,", "--check=quiet", "--sort=numeric",
                "--stable", "-nr"]  # fmt: skip
SORT_HOSTILE = ["-S 1K", "-S1K", "--buffer-size=64K", "--parallel=2", "-m", "--merge",
                "--batch-size=2", "-o out", "--output=out", "-T .", "--temporary-directory=.",
                "--compress-program=gzip", "--random-source=notes.txt",
                "--files0-from=notes.txt", "--debug"]  # fmt: skip
PARTS = [f"parts/p{n:02d}.txt" for n in range(18)]


def sort(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    options = [w for o in c.some(SORT_OPTIONS, 3) for w in o.split(" ")]
    if where == 0:
        options += c.pick(SORT_HOSTILE).split(" ")
    pool = ["big.txt", "data.csv", "notes.txt", "README.md", "big.txt"]
    files = PARTS[:] if c.number(0, 5) == 0 else paths(c, pool, 2, hostile=where == 1)
    return join(["sort", *mixed(c, options, files)])


GREP_OPTIONS = ["-r", "-R", "-n", "-i", "-v", "-w", "-x", "-c", "-l", "-L", "-o", "-q", "-s",
                "-H", "-h", "-F", "-E", "-G", "-P", "-I", "-a", "-z", "-Z", "-b", "-T", "-A 1",
                "-B 2", "-C 1", "-m 2", "--include=*.md", "--exclude=*.py",
                "--exclude-dir=src", "-d skip", "--color=never", "--binary-files=text",
                "--label=x", "-2", "--count", "-rn", "-il"]  # fmt: skip
GREP_HOSTILE = ["-f notes.txt", "-e x", "--exclude-from=notes.txt", "-D read",
                "--devices=read", "--file=notes.txt", "--regexp=x"]  # fmt: skip
PATTERNS = ["alpha", "TODO", "^b", "x[0-9]", "note$", "a|b", "line [0-9]+", "(a)", "\\w+"]


def grep(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    options = [w for o in c.some(GREP_OPTIONS, 3) for w in o.split(" ")]
    if where == 0:
        options += c.pick(GREP_HOSTILE).split(" ")
    files = paths(c, FILES + DIRECTORIES, 2, hostile=where == 1)
    pattern = c.pick(PATTERNS)
    program = c.pick(["egrep", "fgrep"]) if where == 1 and c.chance(30) else "grep"
    return join([program, *mixed(c, options, [pattern, *files])])


RG_OPTIONS = ["-i", "-S", "-s", "-n", "-N", "-l", "--files-without-match", "-c",
              "--count-matches", "-v", "-w", "-x", "-F", "-o", "-H", "-I", "-L", "--no-heading",
              "--heading", "--vimgrep", "--json", "--stats", "--trim", "--column", "-b",
              "--no-messages", "-q", "-U", "-P", "--null", "-p", "--passthru", "-a",
              "--no-config", "-A 1", "-B 1", "-C 2", "-m 1", "-t py", "-T md", "-g *.md",
              "--iglob=*.PY", "-M 40", "--max-depth=1", "--max-filesize=1M", "-j 1",
              "--sort=path", "--sortr=modified", "-E utf-8", "--color=never",
              "--context-separator=--", "--path-separator=/"]  # fmt: skip
RG_HOSTILE = ["--pre=touch", "--pre-glob=*", "-z", "--search-zip", "--hostname-bin=touch",
              "--hidden", "-uu", "--no-ignore", "-e x", "-f notes.txt",
              "--ignore-file=notes.txt", "--type-add=x:*.x", "--debug", "-."]  # fmt: skip


def rg(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    options = [w for o in c.some(RG_OPTIONS, 3) for w in o.split(" ", 1)]
    if where == 0:
        options += c.pick(RG_HOSTILE).split(" ")
    files = paths(c, FILES + DIRECTORIES, 2, hostile=where == 1)
    if c.number(0, 6) == 0:
        return join(["rg", "--files", *options, *files])
    return join(["rg", *options, c.pick(PATTERNS), *files])


AG_OPTIONS = ["-i", "-s", "-S", "-l", "-L", "-c", "-v", "-w", "-Q", "--nocolor", "--noheading",
              "--nobreak", "--column", "--nogroup", "--filename", "--numbers", "--vimgrep",
              "--stats", "--null", "-o", "--silent", "-A 1", "-B 1", "-C 1", "-m 1",
              "-G .*md", "--ignore=*.py", "--depth=1"]  # fmt: skip
FD_OPTIONS = ["-H", "-I", "-u", "-s", "-i", "-g", "-F", "-a", "-L", "-p", "-0", "--prune",
              "-1", "-q", "--show-errors", "--one-file-system", "-d 1", "--min-depth=1",
              "-t f", "-t d", "--extension=py", "-E src", "-S -1k", "--changed-within=1d",
              "-c never", "-j 1", "--max-results=3", "--path-separator=/"]  # fmt: skip
AGFD_HOSTILE = ["--pager=touch", "-p notes.txt", "-z", "-x touch", "-X touch", "-l",
                "--exec=touch", "--list-details", "-e py", "--exec-batch=touch",
                "--ignore-file=notes.txt", "--hidden -u"]  # fmt: skip


def ag_fd(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    program = "ag" if where == 0 and c.chance(30) else "fd"
    pool = AG_OPTIONS if program == "ag" else FD_OPTIONS
    options = [w for o in c.some(pool, 3) for w in o.split(" ", 1)]
    if where == 0:
        options += c.pick(AGFD_HOSTILE).split(" ")
    files = paths(c, DIRECTORIES, 1, hostile=where == 1)
    pattern = c.pick(["alpha", "app", "md$", "util", "^n"])
    return join([program, *options, pattern, *files])


HEAD_OPTIONS = ["-n 2", "-n5", "-c 10", "-c1K", "-q", "-v", "-z", "-3", "--lines=2",
                "--bytes=5", "--quiet", "--verbose", "-n +2", "-n -1", "-c -3"]  # fmt: skip
HEAD_HOSTILE = ["-f", "-F", "--follow", "--pid=1", "-s 1", "--retry", "-r"]


def head_tail(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    options = [w for o in c.some(HEAD_OPTIONS, 2) for w in o.split(" ")]
    if where == 0:
        options.append(c.pick(HEAD_HOSTILE))
    files = paths(c, [*FILES, "big.txt"], 2, hostile=where == 1)
    return join([c.pick(["head", "tail"]), *mixed(c, options, files)])


TREE_OPTIONS = ["-a", "-d", "-l", "-f", "-x", "-i", "-q", "-N", "-Q", "-p", "-u", "-g", "-s",
                "-h", "-D", "-F", "-v", "-t", "-c", "-U", "-r", "-C", "-n", "-J", "-X",
                "--noreport", "--dirsfirst", "--du", "--si", "--prune", "--inodes", "--device",
                "--matchdirs", "--ignore-case", "--gitignore", "-L 1", "-P *.py", "-I src",
                "--filelimit=3", "--timefmt=%Y", "--sort=name", "--charset=ascii"]  # fmt: skip
TREE_HOSTILE = ["-o out", "-R", "--fromfile", "-H x -o out", "--infile", "-T t",
                "--hintro=notes.txt", "--houtro=notes.txt", "-X -o out",
                "--gitfile=notes.txt"]  # fmt: skip


def tree(c: Choices) -> str:
    hostile = c.chance()
    where = c.number(0, 1) if hostile else -1
    options = [w for o in c.some(TREE_OPTIONS, 3) for w in o.split(" ")]
    if where == 0:
        options += c.pick(TREE_HOSTILE).split(" ")
    directories = paths(c, DIRECTORIES, 1, hostile=where == 1)
    return join(["tree", *options, *directories])


MISC = {
    "ls": [
        "-a",
        "-l",
        "-h",
        "-1",
        "-R",
        "-t",
        "-S",
        "-r",
        "-d",
        "-F",
        "-i",
        "-n",
        "-L",
        "--color=never",
        "-I *.py",
        "--sort=size",
        "--time-style=iso",
        "--hyperlink=never",
    ],
    "cat": ["-n", "-b", "-s", "-A", "-E", "-T", "-v"],
    "wc": ["-l", "-w", "-c", "-m", "-L", "--total=never"],
    "stat": ["-L", "-t", "-c %n_%s", "--printf=%n\\n"],
    "file": ["-b", "-i", "-L", "-h", "-k", "-N", "--mime-type"],
    "du": ["-s", "-h", "-a", "-c", "-k", "-b", "-L", "-d 1", "--exclude=*.py", "--time"],
    "diff": ["-u", "-q", "-r", "-N", "-w", "-y", "-U 1", "--color=never", "--label=x"],
    "cmp": ["-b", "-l", "-s", "-n 10"],
    "uniq": ["-c", "-d", "-u", "-i", "-f 1", "-w 3"],
    "cut": ["-d ,", "-f 1", "-c 1-3", "-s", "--complement -f 2 -d ,"],
    "nl": ["-b a", "-w 3", "-s :", "-v 5"],
    "realpath": ["-e", "-m", "-s", "-q", "--relative-to=src"],
    "readlink": ["-f", "-e", "-m", "-n", "-v"],
    "md5sum": ["-b", "-t", "--tag", "-z"],
    "sha256sum": ["-b", "--tag"],
}
MISC_HOSTILE = ["uniq notes.txt out.txt", "file -C -m notes.txt", "wc --files0-from=notes.txt",
                "md5sum -c notes.txt", "du --files0-from=notes.txt", "cat -e notes.txt",
                "ls -Z9", "stat --cached=never", "diff --paginate a b", "diff -X notes.txt a b",
                "file -z notes.txt", "cut --output-delimiter"]  # fmt: skip


def misc(c: Choices) -> str:
    hostile = c.chance()
    if hostile and c.number(0, 1) == 1:
        return c.pick(MISC_HOSTILE)
    program = c.pick(sorted(MISC))
    options = [w for o in c.some(MISC[program], 2) for w in o.split(" ")]
    pool = DIRECTORIES if program in ("ls", "du") else FILES
    files = paths(c, pool, 2, hostile=hostile) or ["notes.txt"]
    return join([program, *options, *files])


BATCH = 20
"""Commands per Hypothesis example (an example costs far more than a command)."""
FAMILIES: dict[str, SearchStrategy[list[str]]] = {
    name: family(build, BATCH)
    for name, build in {
        "sed": sed, "awk": awk, "jq": jq, "git": git, "find": find, "sort": sort, "grep": grep,
        "rg": rg, "ag-fd": ag_fd, "head-tail": head_tail, "tree": tree, "coreutils": misc,
    }.items()
}  # fmt: skip
"""Every family's strategy (a batch of commands per example), by the name the test reports."""
