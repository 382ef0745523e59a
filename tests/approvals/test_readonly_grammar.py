"""The judge's grammar is small enough to be complete (issue 32).

sed, jq and awk skip the card only in narrow forms the judge reads completely; every path is
normalised before it is compared with the secret and system lists; and every other reader
lost the options that can write, run a program or read a file the judge does not see. Each
case of the review that ran without a card is a test here, and so is each form that must
still run without one.
"""

from __future__ import annotations

import re

import pytest

from discord_mcp.judge import awk
from discord_mcp.judge.readonly import is_read_only

REVIEW = [
    # issue 32: each ran without a card
    "sed 's/.*[[:alpha:]/]/ a;touch /tmp/x;id/e' README",
    "jq -n '$ ENV'",
    "head -c 64 //dev/sda",
    "grep -a KEY /./dev/sda",
    "cat //proc/1/cmdline",
]


@pytest.mark.parametrize("command", REVIEW)
def test_the_reviews_commands_ask(command: str) -> None:
    assert not is_read_only(command)


SED_NARROW = [
    "sed -n 1p f", "sed -n '1,20p' f", "sed -n '$p' f", "sed -n '3,$p' f", "sed 5q f",
    "sed '1d' f", "sed '$d' f", "sed -n '$=' f", "sed = f", "sed q f", "sed 'q3' f",
    "sed 's/a/b/' f", "sed 's/a/b/g' f", "sed 's|a|b|' f", "sed 's,a,b,g' f",
    "sed 's:a:b:2' f", "sed 's@a@b@gI' f", "sed -E 's/(a+)/\\1b/i' f",
    "sed 's/a\\.b/c\\&d/p' f", "sed 's/^ *//;s/ *$//' f", "sed -n '/start/,/end/p' f",
    "sed -n '/x/Ip' f", "sed '/^#/d' f", "sed -n '/x/{p;q}' f", "sed -n '2,4!p' f",
    "sed 's/x/&&/' f", "sed -n 's/a/b/p' f", "sed 's/\\(a\\)\\(b\\)/\\2\\1/' f",
]  # fmt: skip


def test_the_narrow_sed_grammar_still_skips_the_card() -> None:
    assert [c for c in SED_NARROW if not is_read_only(c)] == []


SED_OUTSIDE = [
    # brackets and classes, whatever the delimiter
    "sed 's/[/]/x/e' f", "sed 's/[[:alpha:]]/x/' f", "sed 's/[a-z]/x/' f",
    "sed 's|[|]|x|' f", "sed -n '/[/]/p' f", "sed 's/a/[b]/' f",
    # the delimiter inside a part, escaped or not, and odd delimiters
    "sed 's/a\\/b/c/' f", "sed 's/a/b\\/c/' f", "sed 'sxaxbx' f", "sed 's a b ' f",
    "sed 's\\a\\b\\' f", "sed 'sea\\eeb' f", "sed 's;a;b;' f", "sed 's}a}b}' f",
    # flags beyond g p I i and a number
    "sed 's/a/b/e' f", "sed 's/a/b/w out' f", "sed 's/a/b/gw out' f", "sed 's/a/b/m' f",
    "sed 's/a/b/M' f", "sed 's/a/b/ e' f", "sed 's/a/b/g e' f", "sed 's/a/b/2e' f",
    # escapes outside the small set
    "sed 's/\\x2f/x/' f", "sed 's/\\cA/x/' f", "sed 's/a/\\U&/' f", "sed 's/\\w/x/' f",
    "sed 's/a/b\\\\' f", "sed 's/\\d047/x/' f", "sed 's/\\o57/x/' f",
    # commands and addresses beyond p d = q
    "sed 'y/abc/xyz/' f", "sed '1!G;h;$!d' f", "sed 'F;z;Q;L' f", "sed '2a text' f",
    "sed '1i text' f", "sed 'c text' f", "sed 'e' f", "sed '1e touch X' f", "sed 'w out' f",
    "sed 'W out' f", "sed 'r /etc/passwd' f", "sed 'R other' f", "sed 'v' f", "sed 'l' f",
    "sed 'n;p' f", "sed ':a;ba' f", "sed 'x' f", "sed 'z' f", "sed 'F' f", "sed '1~2p' f",
    "sed '1,+2p' f", "sed '1,~4p' f", "sed '\\,x,p' f", "sed '/x/Mp' f", "sed '#n' f",
    "sed 'p # comment' f", "sed -n '1{p' f", "sed -n 'p}' f", "sed '' f",
    # options beyond the narrow set
    "sed -l 5 p f", "sed --debug p f", "sed -e p f", "sed -i p f", "sed --follow-symlinks p f",
]  # fmt: skip


@pytest.mark.parametrize("command", SED_OUTSIDE)
def test_sed_outside_the_narrow_grammar_asks(command: str) -> None:
    assert not is_read_only(command)


JQ_NARROW = [
    "jq . package.json", "jq .name package.json", "jq -r '.scripts | keys[]' package.json",
    "jq '.a.b[0]' f.json", "jq '.[] | select(.x > 1) | .name' f.json", "jq -c '{a: .b, c}' f",
    "jq 'map(.x) | add' f", "jq '.items | length' f", "jq -r '.[\"key\"]' f",
    "jq '[.[] | .id] | unique | sort' f", "jq 'to_entries | map(.key)' f",
    "jq '.a // \"none\"' f", "jq 'if .a then 1 else 2 end' f", "jq -n '1 + 2'",
    "jq '.x | tostring | ascii_downcase' f", "jq '.[2:4]' f", "jq '.a?' f",
    "jq 'has(\"a\") and (.b | not)' f", "jq '.a | test(\"x\"; \"i\")' f", "jq '@base64' f",
    "jq -S . f", "jq --tab . f", "jq '..' f", "jq '{\"a\": 1, (.k): .v}' f",
]  # fmt: skip


def test_the_narrow_jq_grammar_still_skips_the_card() -> None:
    assert [c for c in JQ_NARROW if not is_read_only(c)] == []


JQ_OUTSIDE = [
    "jq -n '$ENV'", "jq -n '$ ENV'", "jq -n '$ENV.HOME'", "jq -n env", "jq -n 'env.HOME'",
    "jq -n '[env]'", "jq '{a: env}' f", "jq '.[env:]' f", "jq '.. | env' f", "jq '..env' f",
    "jq '$__loc__' f", "jq 'input_filename' f", "jq 'input' f", "jq '[inputs]' f",
    "jq 'def f: env; f' f", "jq 'import \"a\" as a; .' f", "jq 'include \"a\"; .' f",
    "jq 'get_search_list' f", "jq 'get_prog_origin' f", "jq 'get_jq_origin' f",
    "jq '. as $x | $x' f", "jq 'reduce .[] as $x (0; . + $x)' f", "jq 'label $out | 1' f",
    "jq '\"\\(env)\"' f", "jq '\"\\(.a)\"' f", "jq '@sh \"echo \\(.)\"' f", "jq 'builtins' f",
    "jq 'modulemeta' f", "jq 'debug' f", "jq 'stderr' f", "jq 'halt_error' f",
    "jq 'input_line_number' f", "jq 'a::b' f", "jq '. # comment' f", "jq 'splits(env)' f",
    "jq 'repeat(.)' f", "jq 'range(1e9)' f", "jq 'recurse(.+1)' f", "jq 'while(1; .)' f",
    "jq 'ENV' f", "jq '.a | $ENV' f", "jq '$__prog_args' f", "jq -f prog.jq f",
    "jq -L dir . f", "jq --arg x y '$x' f", "jq --rawfile x .env . f",
]  # fmt: skip


@pytest.mark.parametrize("command", JQ_OUTSIDE)
def test_jq_outside_the_token_allow_list_asks(command: str) -> None:
    assert not is_read_only(command)


AWK_NARROW = [
    "awk '{print}' f", "awk '{print $1}' f", "awk '{print $1, $3}' f", "awk -F, '{print $2}' f",
    "awk -F: '{print $1 \" \" $NF}' f", "awk 'NR==2' f", "awk 'NR>1 {print $2}' f",
    "awk '/x/ {print NR}' f", "awk 'END {print NR}' f", "gawk '{print NF}' f",
    "awk '$2 == \"a\" {print $1}' f", "awk 'NF' f",
]  # fmt: skip


def test_the_narrow_awk_grammar_skips_the_card() -> None:
    assert [c for c in AWK_NARROW if not is_read_only(c)] == []


AWK_OUTSIDE = [
    "awk 'BEGIN{system(\"id\")}'", "awk '{print > \"out\"}' f", "awk '{print | \"sh\"}' f",
    "awk '{print >> \"out\"}' f", "awk '{system($0)}' f", "awk '{\"id\" | getline x}' f",
    "awk '{getline < \"/etc/passwd\"}' f", "awk '{print ENVIRON[\"HOME\"]}' f",
    "awk '{print PROCINFO[\"pid\"]}' f", "awk 'BEGIN{print ENVIRON}'", "awk -f prog.awk f",
    "awk -v x=1 '{print x}' f", "awk -e '{print}' f", "gawk -l filefuncs '{print}' f",
    "awk '@include \"x\"' f", "awk '{print $(system(\"id\"))}' f", "awk '{print $99999}' f",
    "awk '{print}' FS=x f", "awk '{print \"a\\x41\"}' f", "awk '/[/]/' f",
    "awk '{print}' .env", "awk '{printf \"%s\", $1}' f", "awk '{print $1}' //proc/1/environ",
    "mawk -W exec x f", "awk --exec x f", "awk '{print $1' f",
]  # fmt: skip


@pytest.mark.parametrize("command", AWK_OUTSIDE)
def test_awk_outside_the_narrow_grammar_asks(command: str) -> None:
    assert not is_read_only(command)


# Every code point up to U+07FF and the last sixteen; beyond U+007F nothing can match a class
# made only of ASCII ranges, which the middle of Unicode would only confirm more slowly.
CODE_POINTS = [*range(0x800), *range(0x10FFF0, 0x110000)]


def test_awks_regex_and_string_characters_are_printable_ascii_but_their_exclusions() -> None:
    regex, string = re.compile(awk._REGEX_CHARACTER), re.compile(awk._STRING_CHARACTER)
    printable = {chr(code) for code in range(0x20, 0x7F)}
    assert {chr(c) for c in CODE_POINTS if regex.fullmatch(chr(c))} == printable - set("/[\\]")
    assert {chr(c) for c in CODE_POINTS if string.fullmatch(chr(c))} == printable - set('"\\')
    # and the program, character by character: an excluded one only escaped, as the grammar says
    assert not is_read_only("awk '/\u00e9/' f")
    assert not is_read_only("awk '{print \"\u00e9\"}' f")
    assert is_read_only("awk '/a.b~c/ {print \"x y\"}' f")


PATHS = [
    "head -c 64 //dev/sda", "grep -a KEY /./dev/sda", "cat //proc/1/cmdline",
    "cat /../dev/sda", "cat /dev/../dev/sda", "cat /tmp/../proc/self/environ",
    "cat ../../../../../../../dev/sda", "cat ./../../../../proc/1/environ", "ls /sys//",
    "cat ///dev/mem", "cat /dev/./stdin", "wc -c /proc/./self/environ", "tail //sys/x",
    "cat ~//.ssh/id_rsa", "cat ~/./.netrc", "cat docs/../.env", "cat .git//config",
    "cat ./.git/./config", "cat .git/hooks/../config", "sort -k1 //proc/self/environ",
    "diff --from-file=//dev/sda f", "git diff --no-index //dev/null //proc/self/environ",
    "sed -n 1p //proc/self/environ", "jq . //proc/self/environ", "find //proc -name x",
    "tree //sys", "rg x //proc/1", "git -C //proc/self status",
]  # fmt: skip


@pytest.mark.parametrize("command", PATHS)
def test_paths_are_normalised_before_the_secret_and_system_checks(command: str) -> None:
    assert not is_read_only(command)


@pytest.mark.parametrize(
    "command",
    ["cat //dev/null", "cat /dev/./null", "cat src//app.py", "cat ./src/../README.md",
     "ls ~/projects", "head -n 5 a/./b.txt"],
)  # fmt: skip
def test_harmless_paths_stay_reads_after_normalising(command: str) -> None:
    assert is_read_only(command)


SECRETS = [
    "cat /etc/ssh/ssh_host_ed25519_key", "cat /etc/ssh/ssh_host_rsa_key",
    "head /etc/ssh/ssh_host_ecdsa_key", "cat ~/.config/rclone/rclone.conf", "cat rclone.conf",
    "cat ~/.kaggle/kaggle.json", "cat kaggle.json", "cat .git/config", "cat sub/.git/config",
    "cat .git/modules/lib/config", "cat ~/.netrc", "cat ~/.docker/config.json",
    "cat ~/.kube/config", "grep url .git/config", "sed -n 1p .git/config",
    "jq . ~/.docker/config.json", "awk '{print}' ~/.kube/config",
]  # fmt: skip


@pytest.mark.parametrize("command", SECRETS)
def test_reading_these_secrets_asks(command: str) -> None:
    assert not is_read_only(command)


READER_OPTIONS = [
    # sort spills temporary files with a small buffer, in parallel, or merging many files
    "sort -S 1K big.txt", "sort -S1K big.txt", "sort --buffer-size=1K big.txt",
    "sort --parallel=4 big.txt", "sort -m a b", "sort --merge a b", "sort --batch-size=2 a b",
    # git: what prints the remotes' addresses (credentials in .git/config), runs gpg or git
    "git remote -v", "git remote --verbose", "git remote get-url origin",
    "git log --format=%G?", "git log --pretty='format:%GS'", "git show --format=%GG",
    "git log --format='%(describe)'", "git log --pretty=tformat:%(describe:tags)",
    "git branch --format='%(describe)'", "git tag --format='%(signature)'",
    "git branch --sort=describe", "git diff --submodule=diff", "git log --submodule",
    "git grep --recurse-submodules x", "git ls-files --recurse-submodules",
    "git status --column", "git branch --column", "git tag --column",
    # df --sync flushes every file system
    "df --sync",
    # the differential test saw these run other programs: ag runs sh -c "git config ..." on
    # every search, egrep and fgrep are shell scripts that run grep
    "ag alpha", "ag -l x src", "egrep -c x f", "fgrep x f",
]  # fmt: skip


@pytest.mark.parametrize("command", READER_OPTIONS)
def test_reader_options_that_write_run_or_leak_ask(command: str) -> None:
    assert not is_read_only(command)


@pytest.mark.parametrize(
    "command",
    ["sort -n -k2 big.txt", "sort -u -t, -k1,1 data.csv", "git remote",
     "git log --format='%h %s'", "git log --pretty=oneline -3", "git branch --sort=-committerdate",
     "git tag --sort=v:refname", "git status --porcelain", "git branch -vv"],
)  # fmt: skip
def test_the_common_forms_of_those_readers_still_skip_the_card(command: str) -> None:
    assert is_read_only(command)
