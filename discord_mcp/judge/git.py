"""git: the subcommands and options that only read, and what a plain ``git push`` is.

git runs other programs in places a reader does not expect: ``-c`` sets any configuration for
the call (``core.pager``, ``diff.external``, ``core.fsmonitor``), ``--exec-path`` and
``--git-dir``/``--work-tree`` point it elsewhere, aliases can be shell commands, and options
such as ``--output``, ``--ext-diff``, ``--textconv``, ``-O``/``--open-files-in-pager`` and
``--show-signature`` write files or start programs; so do ``--column`` (``git column``),
``--submodule=diff`` and ``--recurse-submodules`` (git in each submodule), and the format
placeholders ``%G?``/``%GS``... (gpg) and ``%(describe)`` (``git describe``). So only the
subcommands below count as reads (a builtin always wins over an alias of the same name), each
with its own options, no value with ``%G`` or ``%(`` (but the index atoms of ``ls-files`` and
``ls-tree --format``), only plain ``--sort`` keys, and only ``-C``, ``--no-pager``/``-P`` and
``--no-optional-locks`` before the subcommand. ``git remote`` lists names only: ``-v`` and
``get-url`` print the remotes' addresses, which may carry credentials.

Exceptions the differential test allows (``tests/approvals/test_judge_differential.py``):
``git status`` and ``git describe --dirty`` refresh the index (``.git/index.lock`` written,
then renamed to ``.git/index``; ``--no-optional-locks`` stops it), which is git keeping its own
cache, not a change the owner would see; and git running git (``git stash list`` runs ``git
log`` with its options, ``git describe --dirty`` runs ``git diff-index``). Not covered there:
in a repository with submodules ``git status`` and ``git diff`` run git in each submodule to
see whether it changed.

The configuration git already has (``.git/config``) is the owner's; commands that change it
are not reads, so an agent cannot plant a pager or filter there without a card.
"""

from __future__ import annotations

from collections.abc import Sequence

from discord_mcp.judge.options import Parsed, Table, parse

GLOBAL = Table.of("--no-pager -P --no-optional-locks --literal-pathspecs", "-C")

_DIFF_PLAIN = (
    "-p -u --patch -s --no-patch --raw --stat --numstat --shortstat --summary --name-only "
    "--name-status --compact-summary --no-color --no-renames --full-index --binary "
    "--check --minimal --patience --histogram -w -b --ignore-all-space --ignore-space-change "
    "--ignore-blank-lines --ignore-space-at-eol --ignore-cr-at-eol -R --text -a --exit-code "
    "--quiet --no-ext-diff --no-textconv --no-prefix -z --cumulative --find-copies-harder "
    "-M -C -B -D --irreversible-delete --function-context -W"
)
_DIFF_VALUED = (
    "-U --unified --inter-hunk-context --stat-width --diff-filter -S -G "
    "--anchored --diff-algorithm --src-prefix --dst-prefix --line-prefix -l"
)
_DIFF_OPTIONAL = (
    "--color --word-diff --word-diff-regex --dirstat --color-moved --find-renames "
    "--find-copies --break-rewrites --ws-error-highlight --color-words --abbrev "
    "--relative"
)
_LOG_PLAIN = (
    "--oneline --graph --all --branches --tags --remotes --reverse --first-parent "
    "--no-merges --merges --abbrev-commit --no-abbrev-commit --follow --source --left-right "
    "--cherry-pick --cherry-mark --topo-order --date-order --author-date-order --full-history "
    "--simplify-by-decoration --boundary --no-walk --children --parents -i "
    "--regexp-ignore-case --all-match --invert-grep -E -F --extended-regexp --fixed-strings "
    "--mailmap --use-mailmap --no-decorate --walk-reflogs -g -m -c --cc --dense --sparse "
    "--ancestry-path --log-size --count --no-notes --show-linear-break"
)
_LOG_VALUED = (
    "-n --max-count --skip --since --after --until --before --author --committer --grep "
    "--date --max-parents --min-parents -L --exclude --glob"
)
_LOG_OPTIONAL = "--decorate --pretty --format --notes --show-notes"
_LOG_PATTERNS = "-S -G --grep --author --committer --exclude --glob"
_LOG = Table.of(
    f"{_DIFF_PLAIN} {_LOG_PLAIN}",
    f"{_DIFF_VALUED} {_LOG_VALUED}",
    f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}",
    numeric=True,
    patterns=_LOG_PATTERNS,
)
_DIFF = Table.of(
    f"{_DIFF_PLAIN} --cached --staged --merge-base --no-index",
    _DIFF_VALUED,
    _DIFF_OPTIONAL,
    patterns="-S -G",
)
_LISTING = "--contains --no-contains --merged --no-merged --points-at --sort"

READERS: dict[str, Table] = {
    "status": Table.of(
        "-s --short -b --branch --long -v --verbose -z --show-stash --ahead-behind "
        "--no-ahead-behind --renames --no-renames -u",
        "",
        "--porcelain --untracked-files --ignored --ignore-submodules --find-renames",
    ),
    "log": _LOG,
    "show": _LOG,
    "rev-list": _LOG,
    "diff": _DIFF,
    "branch": Table.of(
        "-a --all -r --remotes -v -vv --verbose -l --list --show-current -i --ignore-case "
        "--no-column --omit-empty",
        _LISTING,
        "--color --abbrev",
    ),
    "tag": Table.of("-l --list -i --ignore-case --no-column --omit-empty -n", _LISTING, "--color"),
    "remote": Table(),
    "rev-parse": Table.of(
        "--show-toplevel --show-prefix --show-cdup --git-dir --absolute-git-dir "
        "--git-common-dir --is-inside-work-tree --is-inside-git-dir --is-bare-repository "
        "--is-shallow-repository --verify -q --quiet --symbolic --symbolic-full-name "
        "--all --branches --tags --remotes --show-object-format",
        "--since --after --until --before --default --prefix",
        "--short --abbrev-ref --show-superproject-working-tree --path-format",
    ),
    "ls-files": Table.of(
        "-c --cached -d --deleted -m --modified -o --others -i --ignored -s --stage -u "
        "--unmerged -k --killed -z --directory --no-empty-directory --exclude-standard "
        "--full-name --error-unmatch -t -v -f --eol --deduplicate",
        "-x --exclude --format",
        "--abbrev",
        patterns="-x --exclude",
    ),
    "ls-tree": Table.of(
        "-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree",
        "--format",
        "--abbrev",
    ),
    "blame": Table.of(
        "-b -c -l -t -s -f -n -p -w -M -C --root --show-stats --porcelain --line-porcelain "
        "--incremental --show-name --show-number --show-email --minimal --reverse "
        "--first-parent",
        "-L --since --date",
        "--abbrev --color-lines --color-by-age",
    ),
    "describe": Table.of(
        "--all --tags --long --always --exact-match --first-parent --contains",
        "--match --exclude --candidates",
        "--abbrev --dirty --broken",
        patterns="--match --exclude",
    ),
    "shortlog": Table.of(
        "-n --numbered -s --summary -e --email -c --committer -w", "--group --format"
    ),
    "grep": Table.of(
        "--cached --untracked --no-index --exclude-standard -a --text "
        "--no-textconv -i --ignore-case -I -r --recursive -w --word-regexp -v --invert-match "
        "-h -H --full-name -E --extended-regexp -G --basic-regexp -P --perl-regexp -F "
        "--fixed-strings -n --line-number --column -l --files-with-matches --name-only -L "
        "--files-without-match -z --null -o --only-matching -c --count --heading --break -p "
        "--show-function -W --function-context -q --quiet --all-match",
        "-A --after-context -B --before-context -C --context -m --max-count --threads --max-depth",
        "--color",
        numeric=True,
    ),
    "cat-file": Table.of("-t -s -e -p"),
    "show-ref": Table.of(
        "--head --tags --heads --branches -d --dereference -q --quiet --verify --exists",
        "",
        "-s --hash --abbrev",
    ),
    "merge-base": Table.of("-a --all --octopus --independent --is-ancestor --fork-point"),
    "count-objects": Table.of("-v --verbose -H --human-readable"),
}
"""Subcommands that only read, with their harmless options."""
_NESTED: dict[tuple[str, str], Table] = {
    ("stash", "list"): _LOG,
    ("stash", "show"): _DIFF,
    ("worktree", "list"): Table.of("--porcelain -v --verbose -z", "--expire"),
    ("reflog", "show"): _LOG,
}
PATTERN_FIRST = frozenset({"grep"})
"""Subcommands whose first operand is a pattern (not a path to read)."""


def split_global(words: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """``git [global options] <subcommand> ...`` → (the global words, the rest); None when a
    global option is not one we know to be harmless."""
    index = 0
    while index < len(words) and words[index].startswith("-"):
        word = words[index]
        if word in GLOBAL.valued:
            index += 2
        elif (word.startswith("-C") and len(word) > 2) or word in GLOBAL.plain:
            index += 1
        else:
            return None
    if index > len(words):
        return None
    return list(words[:index]), list(words[index:])


def table_for(subcommand: str, action: str | None = None) -> Table | None:
    """The options of a read-only subcommand (``action``: ``stash list``'s ``list``)."""
    if action is not None:
        return _NESTED.get((subcommand, action))
    return READERS.get(subcommand)


def reads(words: Sequence[str]) -> tuple[Parsed, int, Table] | None:
    """``words`` after ``git`` read as a read-only subcommand: what was read, how many
    leading operands are patterns, and the options table; None when it is not a read."""
    split = split_global(words)
    if split is None or not split[1]:
        return None
    subcommand, arguments = split[1][0], split[1][1:]
    if subcommand in ("stash", "worktree", "reflog"):
        if subcommand == "reflog" and (not arguments or arguments[0].startswith("-")):
            arguments = ["show", *arguments]
        table = _NESTED.get((subcommand, arguments[0] if arguments else ""))
        if table is None:
            return None
        parsed = parse(arguments[1:], table)
        if parsed is None or not _harmless_values(subcommand, parsed):
            return None
        return parsed, 0, table
    table = READERS.get(subcommand)
    if table is None:
        return None
    parsed = parse(arguments, table)
    if parsed is None or not _harmless_values(subcommand, parsed):
        return None
    if subcommand in ("branch", "tag") and parsed.operands and not parsed.has("-l", "--list"):
        return None  # naming a branch or tag creates it
    if subcommand == "remote" and parsed.operands:
        return None  # add, remove, rename, set-url, prune, show (the network), get-url
    if subcommand in ("branch", "tag"):
        return parsed, len(parsed.operands), table  # --list patterns
    return parsed, (1 if subcommand in PATTERN_FIRST else 0), table


_SORT_KEYS = Table.of(
    "refname objectname objecttype objectsize committerdate creatordate authordate "
    "taggerdate version:refname v:refname HEAD upstream subject"
).plain
"""``git branch``/``git tag --sort`` keys: fields of the ref, never ``describe`` (which runs
``git describe``) or a signature."""
_ATOM_FORMATS = frozenset({"ls-files", "ls-tree"})
"""Subcommands whose ``--format`` takes ``%(atom)`` placeholders of the index or tree only."""


def _harmless_values(subcommand: str, parsed: Parsed) -> bool:
    """No value asks git to run a program: pretty formats with ``%G`` (signatures: gpg) or
    ``%(...)`` (``%(describe)`` runs ``git describe``), and only plain ``--sort`` keys."""
    for name, value in parsed.options:
        if value is None:
            continue
        if "%G" in value or ("%(" in value and subcommand not in _ATOM_FORMATS):
            return False
        if name == "--sort" and value.removeprefix("-") not in _SORT_KEYS:
            return False
    return True


PUSH = Table.of("-u --set-upstream -v --verbose -q --quiet -n --dry-run --porcelain --atomic")
"""The options of a plain ``git push``: tracking, verbosity, a dry run. Never force
(``-f --force --force-with-lease --force-if-includes``), delete (``-d --delete``), mirror,
``--all``/``--branches``, ``--prune``, ``--tags``/``--follow-tags``, push options
(``-o --push-option``), another remote (``--repo``), another program (``--receive-pack``,
``--exec``), hooks skipped (``--no-verify``), signing, or submodules."""
PUSH_NEVER = "force, delete, mirror, `--all`, `--tags`, `--prune`, push options or `--no-verify`"
"""What :data:`PUSH` leaves out, as the card says it."""


def plain_push(words: Sequence[str]) -> tuple[str | None, list[str]] | None:
    """``words`` after ``git push``: (the remote or None, the refspecs) when it is a plain
    push (see :data:`PUSH`), else None. A refspec that forces (``+x``), deletes or renames
    (``:x``, ``x:y``), or matches many (``*``, ``^``) is not plain."""
    parsed = parse(words, PUSH)
    if parsed is None:
        return None
    for operand in parsed.operands:
        if not operand or operand.startswith(("+", "-")) or any(c in operand for c in ":*^"):
            return None
    remote = parsed.operands[0] if parsed.operands else None
    return remote, list(parsed.operands[1:])
