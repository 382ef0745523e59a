"""The programs whose known options only read: one :class:`Reader` each.

A reader is a program with a table of the options we know to be harmless
(:mod:`~discord_mcp.judge.options`); the rest of what we know about it is here: how
many leading operands are patterns rather than paths, how many operands it may have
(``uniq IN OUT`` writes OUT), and any check of its own (``date +FORMAT`` only: another operand
sets the clock). git, find, sed and jq need more than a table: see
:mod:`~discord_mcp.judge.readers`.

Left out on purpose: every option that writes a file, runs a program or reads one we do not
see (``-o``, ``--pre``, ``-x``/``--exec``, ``-e``, ``-f``, ``--compress-program``,
``--pager``, ``--files0-from``, ``--hidden``...), ``tail -f`` (it never ends), and ``sort``'s
``-S``/``--buffer-size``, ``--parallel``, ``-m``/``--merge`` and ``--batch-size`` (a small
buffer, threads or a merge of many files spill temporary files into ``TMPDIR``; without them
GNU sort sizes its buffer to its input and writes none below a large share of the memory) and
``df --sync`` (it flushes every file system). Not readers at all, because the differential
test caught them running other programs on every call: ``ag`` (it runs ``sh -c "git config
..."`` to find the global ignore file) and ``egrep``/``fgrep`` (shell scripts that run
``grep``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from discord_mcp.judge.options import Parsed, Table


@dataclass(frozen=True, slots=True)
class Reader:
    """How one program reads.

    Attributes:
        table: its harmless options.
        patterns: leading operands that are patterns (not checked as paths).
        max_operands: at most this many operands (None: any number).
        text: its operands are text to print or sets of characters, not paths.
        check: anything else the program needs (True: fine).
    """

    table: Table
    patterns: int = 0
    max_operands: int | None = None
    text: bool = False
    check: Callable[[Parsed], bool] | None = None


def _sums(extra: str = "") -> Reader:
    return Reader(Table.of("-b -t -z --binary --text --tag --zero", extra))


_GREP = Table.of(
    "-r -R -n -i -y -v -w -x -c -l -L -o -q -s -H -h -F -E -G -P -I -a -z -Z -b -T -U "
    "--recursive --dereference-recursive --line-number --ignore-case --no-ignore-case "
    "--invert-match --word-regexp --line-regexp --count --files-with-matches "
    "--files-without-match --only-matching --quiet --silent --no-messages --with-filename "
    "--no-filename --fixed-strings --extended-regexp --basic-regexp --perl-regexp --text "
    "--null --null-data --byte-offset --initial-tab --line-buffered",
    "-A -B -C -m -d --after-context --before-context --context --max-count --include "
    "--exclude --exclude-dir --label --binary-files --directories",
    "--color --colour",
    numeric=True,
    patterns="--exclude-dir --label",
)
_RG = Table.of(
    "-i --ignore-case -S --smart-case -s --case-sensitive -n --line-number -N "
    "--no-line-number -l --files-with-matches --files-without-match -c --count "
    "--count-matches -v --invert-match -w --word-regexp -x --line-regexp -F --fixed-strings "
    "-o --only-matching -H --with-filename -I --no-filename -L --follow --no-heading "
    "--heading --vimgrep --json --stats --trim --column -b --byte-offset --no-messages -q "
    "--quiet -U --multiline --multiline-dotall -P --pcre2 --crlf --null -0 -p --pretty "
    "--passthru --files --type-list -a --text --no-config --line-buffered --block-buffered "
    "--include-zero --max-columns-preview",
    "-A --after-context -B --before-context -C --context -m --max-count -t --type -T "
    "--type-not -g --glob --iglob -M --max-columns --max-depth -d --max-filesize -j "
    "--threads --sort --sortr -E --encoding --context-separator --field-match-separator "
    "--field-context-separator --path-separator --color --colors",
    patterns="-t --type -T --type-not",
)
_FD = Table.of(
    "-H --hidden -I --no-ignore -u --unrestricted -s --case-sensitive -i --ignore-case -g "
    "--glob -F --fixed-strings -a --absolute-path -L --follow -p --full-path -0 --print0 "
    "--prune -1 -q --quiet --show-errors --one-file-system --no-ignore-vcs --no-require-git",
    "-d --max-depth --min-depth --exact-depth -t --type --extension -E --exclude -S --size "
    "--changed-within --changed-before --change-newer-than --change-older-than -o --owner "
    "-c --color -j --threads --max-results --base-directory --path-separator --search-path",
    patterns="--extension -E --exclude",
)


def _date(parsed: Parsed) -> bool:
    # An operand that is not +FORMAT sets the clock (as root).
    return all(operand.startswith("+") for operand in parsed.operands)


def _pattern_unless(*listing: str) -> Callable[[Parsed], int]:
    def count(parsed: Parsed) -> int:
        return 0 if parsed.has(*listing) else 1

    return count


PATTERN_COUNT: dict[str, Callable[[Parsed], int]] = {
    "rg": _pattern_unless("--files", "--type-list"),
}

READERS: dict[str, Reader] = {
    "ls": Reader(
        Table.of(
            "-a -A -l -h -1 -R -t -S -r -d -F -p -i -s -n -o -g -c -u -U -v -X -x -C -m -q "
            "-b -N -L -H -k -G --all --almost-all --human-readable --recursive --reverse "
            "--directory --inode --size --numeric-uid-gid --literal --quote-name --escape "
            "--dereference --group-directories-first --no-group --author --full-time --si "
            "--hide-control-chars --show-control-chars --file-type",
            "-w --width -I --ignore --hide --sort --time --time-style --format "
            "--indicator-style --block-size --tabsize -T --quoting-style",
            "--color --colour --hyperlink --classify",
            patterns="-I --ignore --hide",
        )
    ),
    "cat": Reader(
        Table.of(
            "-n -b -s -A -E -T -v -u --number --number-nonblank --squeeze-blank --show-all "
            "--show-ends --show-tabs --show-nonprinting"
        )
    ),
    "head": Reader(
        Table.of(
            "-q -v -z --quiet --silent --verbose --zero-terminated",
            "-n -c --lines --bytes",
            numeric=True,
        )
    ),
    "tail": Reader(
        Table.of(
            "-q -v -z -r --quiet --silent --verbose --zero-terminated",
            "-n -c --lines --bytes",
            numeric=True,
        )
    ),
    "wc": Reader(
        Table.of("-l -w -c -m -L --lines --words --bytes --chars --max-line-length", "", "--total")
    ),
    "grep": Reader(_GREP, patterns=1),
    "rg": Reader(_RG),
    "fd": Reader(_FD, patterns=1),
    "tree": Reader(
        Table.of(
            "-a -d -l -f -x -i -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -C -n -J -X "
            "--noreport --dirsfirst --du --si --prune --inodes --device --matchdirs "
            "--ignore-case --gitignore",
            "-L -P -I --filelimit --timefmt --sort --charset",
            patterns="-P -I",
        )
    ),
    "pwd": Reader(Table.of("-L -P"), max_operands=0),
    "echo": Reader(Table.of("-n -E"), text=True),
    "printf": Reader(Table(), text=True),
    "true": Reader(Table(), text=True),
    "stat": Reader(
        Table.of("-L -f -t --dereference --file-system --terse", "-c --format --printf")
    ),
    "file": Reader(
        Table.of(
            "-b -i -L -h -k -N -E -r --brief --mime --mime-type --mime-encoding --dereference "
            "--no-dereference --keep-going --no-pad --raw"
        )
    ),
    "du": Reader(
        Table.of(
            "-s -h -a -c -k -m -b -x -L -P -H -l -S -0 --summarize --human-readable --all "
            "--total --apparent-size --si --one-file-system --dereference --count-links "
            "--separate-dirs --null",
            "-d --max-depth --exclude -t --threshold --block-size -B --time-style",
            "--time",
            patterns="--exclude",
        )
    ),
    "df": Reader(
        Table.of(
            "-h -H -T -i -a -l -k -P --human-readable --si --print-type --inodes --all "
            "--local --portability --total --no-sync",
            "-t --type -x --exclude-type -B --block-size",
        )
    ),
    "which": Reader(Table.of("-a"), text=True),
    "type": Reader(Table.of("-a -t -p -P"), text=True),
    "id": Reader(
        Table.of("-u -g -G -n -r -z --user --group --groups --name --real --zero"), text=True
    ),
    "whoami": Reader(Table(), max_operands=0),
    "uname": Reader(
        Table.of(
            "-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release "
            "--kernel-version --machine --processor --hardware-platform --operating-system"
        ),
        max_operands=0,
    ),
    "hostname": Reader(
        Table.of(
            "-f -s -i -I -d -A --fqdn --long --short --ip-address --all-ip-addresses "
            "--domain --all-fqdns"
        ),
        max_operands=0,  # an operand sets the host name
    ),
    "date": Reader(
        Table.of(
            "-u -I -R --utc --universal --rfc-email",
            "-d --date -r --reference --rfc-3339",
            "--iso-8601",
        ),
        max_operands=1,
        text=True,
        check=_date,
    ),
    "diff": Reader(
        Table.of(
            "-u -c -q -r -N -w -b -B -i -y -s -a -t -T -p -d --brief --recursive --new-file "
            "--unidirectional-new-file --ignore-all-space --ignore-space-change "
            "--ignore-blank-lines --ignore-case --ignore-tab-expansion --ignore-trailing-space "
            "--side-by-side --suppress-common-lines --report-identical-files --text "
            "--strip-trailing-cr --expand-tabs --initial-tab --show-c-function --minimal "
            "--speed-large-files --normal --left-column --no-dereference",
            "-U -C -W -x -I -F --width --exclude --ignore-matching-lines --label "
            "--show-function-line --tabsize --from-file --to-file --horizon-lines",
            "--color --unified --context",
            patterns="-x --exclude -I --ignore-matching-lines -F --show-function-line --label",
        )
    ),
    "cmp": Reader(
        Table.of(
            "-b -l -s --print-bytes --verbose --quiet --silent", "-i --ignore-initial -n --bytes"
        ),
        max_operands=4,
    ),
    "sort": Reader(
        Table.of(
            "-b -d -f -g -h -i -M -n -R -r -V -s -u -z -c -C --ignore-leading-blanks "
            "--dictionary-order --ignore-case --general-numeric-sort --human-numeric-sort "
            "--ignore-nonprinting --month-sort --numeric-sort --random-sort --reverse "
            "--version-sort --stable --unique --zero-terminated",
            "-k --key -t --field-separator",
            "--check --sort",
        )
    ),
    "uniq": Reader(
        Table.of(
            "-c -d -D -u -i -z --count --repeated --unique --ignore-case --zero-terminated",
            "-f -s -w --skip-fields --skip-chars --check-chars",
            "--all-repeated --group",
        ),
        max_operands=1,  # a second operand is the file it writes
    ),
    "cut": Reader(
        Table.of(
            "-s -n -z --only-delimited --complement --zero-terminated",
            "-b -c -f -d --bytes --characters --fields --delimiter --output-delimiter",
        )
    ),
    "tr": Reader(
        Table.of("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1"),
        max_operands=2,
        text=True,
    ),
    "nl": Reader(
        Table.of(
            "-p --no-renumber",
            "-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter "
            "--footer-numbering --header-numbering --line-increment --join-blank-lines "
            "--number-format --number-separator --starting-line-number --number-width",
        )
    ),
    "realpath": Reader(
        Table.of(
            "-e -m -s -q -z -L -P --canonicalize-existing --canonicalize-missing --strip "
            "--no-symlinks --quiet --zero --logical --physical",
            "--relative-to --relative-base",
        )
    ),
    "readlink": Reader(
        Table.of(
            "-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing "
            "--canonicalize-missing --no-newline --quiet --silent --verbose --zero"
        )
    ),
    "dirname": Reader(Table.of("-z --zero"), text=True),
    "basename": Reader(Table.of("-a -z --multiple --zero", "-s --suffix"), text=True),
    "md5sum": _sums(),
    "sha1sum": _sums(),
    "sha224sum": _sums(),
    "sha256sum": _sums(),
    "sha384sum": _sums(),
    "sha512sum": _sums(),
    "b2sum": _sums("-l --length"),
    "cksum": _sums("-a --algorithm -l --length"),
}
