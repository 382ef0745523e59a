"""Which commands only read (Codex runs with approvals ``ask`` let those through unasked).

An allow-list: a command skips the card only when every word is known to be harmless for its
program. Each case of the security review is a test here, and so is every plain read that must
still skip the card.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from discord_mcp.emulator import RunningEmulator
from discord_mcp.hooks.pre_tool_use import handle
from discord_mcp.hooks.runner import HookOptions
from discord_mcp.judge.readonly import is_read_only
from tests.support.hook_runs import cli_reading, run_hook
from tests.support.people import People
from tests.support.settings import env_for

PLAIN_READS = [
    "ls", "ls -la", "ls -la src/", "ls --color=auto -1", "/bin/ls", "/usr/bin/git status",
    "cat README.md", "cat -n notes.txt", "cat 문서.txt",
    "head -n 20 f", "head -20 f", "head -c 100 f", "tail -n 50 log.txt", "tail -5 log.txt",
    "wc -l f", "wc -l src/a.py src/b.py",
    "git status", "git status --short", "git status -sb", "git log -n 5", "git log -5",
    "git log --oneline -5", "git log --oneline --graph --decorate --all",
    "git log -p -- src/app.py", "git diff", "git diff HEAD~1", "git diff --stat main...HEAD",
    "git diff --cached -- src/", "git show HEAD --stat", "git show HEAD~2:README.md",
    "git branch", "git branch -a", "git branch --show-current", "git tag", "git tag -l 'v1.*'",
    "git remote", "git rev-parse HEAD", "git rev-parse --show-toplevel", "git ls-files",
    "git blame -L 1,20 README.md", "git grep -n TODO", "git describe --tags",
    "git stash list", "git shortlog -sn", "git ls-tree HEAD", "git rev-list --count HEAD",
    "git cat-file -p HEAD", "git merge-base main HEAD", "git --no-pager log -3",
    "rg pattern src/", "rg -n 'foo|bar' src/", "rg --files", "rg -i -t py todo",
    "rg -l -g '*.md' install", "grep -rn TODO src", "grep -i 'a b' notes.txt",
    "find . -name '*.py'", "find src -maxdepth 2 -type f -name '*.md'",
    "find . -type d -name node_modules -prune -o -type f -print", "find . -newer setup.py",
    "fd pattern", "fd --extension py", "fd -t f test src", "tree", "tree -L 2 src",
    "pwd", "echo hello", "echo -n 'two words'", "printf '%s\\n' x", "stat f", "file x.bin",
    "du -sh .", "df -h", "which python", "uname -a", "whoami", "id -u", "hostname",
    "date", "date +%Y-%m-%d", "date -u", "date -d yesterday +%F",
    "diff a.txt b.txt", "diff -u a b", "diff -ru dir1 dir2", "cmp a b",
    "sort f", "sort -n -r f", "sort -t, -k2 data.csv", "sort -u f", "uniq -c f", "uniq f",
    "cut -d, -f1 data.csv", "tr a-z A-Z", "tr -d '\\r'", "nl f",
    "sed -n '1,20p' f", "sed 's/a/b/g' f", "sed -n '/start/,/end/p' f", "sed -n '$p' f",
    "sed 's|a|b|' f", "sed -E 's/(a)/\\1b/I' f", "sed -n '/x/{p;q}' f", "sed = f",
    "jq .name package.json", "jq -r '.scripts | keys[]' package.json",
    "realpath .", "basename /a/b", "dirname /a/b", "readlink -f x", "sha256sum f", "md5sum f",
    "true", "type ls",
]  # fmt: skip


@pytest.mark.parametrize("command", PLAIN_READS)
def test_plain_reads_run_without_asking(command: str) -> None:
    assert is_read_only(command)


SECURITY_REVIEW = [
    # the review's cases, each of which ran without a card
    "sed -n '1e touch X'", "sed 'w file'", "rg --pre prog pattern", "fd -x rm", "fd -X rm",
    "sort --compress-program=prog f", "git grep -Oevil TODO", "git grep --open-files-in-pager TODO",
    "tree -o out.txt", "uniq in out", "find . -fprint out", "ag --pager=prog x", "date -s 10:00",
    "date --set=10:00", "less README.md", "more README.md",
]  # fmt: skip


@pytest.mark.parametrize("command", SECURITY_REVIEW)
def test_the_security_reviews_commands_ask(command: str) -> None:
    assert not is_read_only(command)


SED_SCRIPTS = [
    "sed 's/a/b/w out' f", "sed 's/a/b/gw out' f", "sed 's/a/b/e' f", "sed 's/x/y/2e' f",
    "sed 's|a|b|w /tmp/x' f", "sed '/x/w out' f", "sed '1,5W out' f", "sed 'r /etc/passwd' f",
    "sed 'R other' f", "sed -n '$e date' f", "sed 'e' f", "sed 'y/abc/xyz/;e' f",
    "sed -n 'p;w out' f", "sed '1{w out' f", "sed '1{w out}' f", "sed -n '/a/ !e ls' f",
    "sed 'v;e id' f", "sed 's/a/b' f", "sed -e 's/a/b/' f",
    "sed --expression=p f", "sed -f script.sed f", "sed -i 's/a/b/' f", "sed -i.bak p f",
    "sed --in-place p f", "sed -s -n --debug p f", "sed 'k' f", "sed ':a;s/x/y/;ta;e ls' f",
]  # fmt: skip


@pytest.mark.parametrize("command", SED_SCRIPTS)
def test_sed_scripts_that_write_read_files_or_execute_ask(command: str) -> None:
    assert not is_read_only(command)


SHELL_SYNTAX = [
    "FOO=1 ls", "LESSOPEN='|rm x %s' ls", "PAGER=evil git log", "ls > x.txt", "ls >> x",
    "cat < /etc/passwd", "ls 2>/dev/null", "cat a | sh", "ls | head", "ls; rm -rf /",
    "ls && rm x", "ls || rm x", "ls &", "ls $(rm x)", "ls `rm x`", 'cat "$(rm x)"',
    "cat <(rm x)", "echo $HOME", 'echo "$HOME"', "echo ${HOME}", "cat *", "ls ~/.ss?",
    "ls [a]", "ls {a,b}", "ls ~root", "ls # comment", "(ls)", "echo $'\\x41'", "ls\nrm x",
    "ls\rrm x", "ls\x1b[2J", "ls\u200b", "l\u200bs", "ls\u00a0-la", "ｌｓ", "ls -la\u202e",
    "ls 'a\tb'", "'unterminated", 'cat "unterminated', "", "   ", "!ls", "ls !x",
]  # fmt: skip


@pytest.mark.parametrize("command", SHELL_SYNTAX)
def test_shell_syntax_beyond_one_plain_command_asks(command: str) -> None:
    assert not is_read_only(command)


OPTIONS_THAT_WRITE_OR_RUN = [
    "rg --pre=prog x", "rg --pre-glob '*.gz' x", "rg -z x", "rg --search-zip x",
    "rg --hostname-bin=prog x", "rg -e x", "rg --hidden TOKEN", "rg -uu TOKEN", "rg -. x",
    "rg --no-ignore x", "grep -e x f", "grep -f patterns f", "ag --pager prog x",
    "fd --exec rm", "fd --exec-batch rm", "fd -l", "fd -e py",
    "sort -o out in", "sort --output=out in", "sort -oout in", "sort -T /tmp f",
    "sort --compress-program prog f", "sort --comp=prog f", "sort --out=x f",
    "find . -exec rm {} ;", "find . -execdir rm {} +", "find . -ok rm {} ;", "find . -okdir rm",
    "find . -delete", "find . -fprintf out %p", "find . -fls out", "find . -fprint0 out",
    "find . -name x -delete", "find -files0-from list",
    "git -c core.pager=evil log", "git -ccore.pager=evil log", "git --exec-path=/tmp log",
    "git --git-dir=/tmp/x log", "git --work-tree=/tmp log", "git st", "git lg",
    "git log --output=out", "git diff --output=out", "git diff --ext-diff", "git show --textconv",
    "git log --show-signature", "git diff -Oorder", "git grep -O TODO",
    "git grep --open-files-in-pager=vi x",
    "git branch new-feature", "git branch -d x", "git branch -D x", "git branch -m a b",
    "git tag v1", "git tag -d v1", "git remote add x url", "git remote show origin",
    "git remote set-url origin x", "git config user.name x", "git config --list",
    "git config --get user.email", "git stash", "git stash pop", "git reflog expire --all",
    "git push", "git commit -m x", "git checkout main", "git fetch", "git help log",
    "tree -o x", "tree --fromfile list", "tree -R -H . -o x",
    "uniq in out", "uniq -c in out", "date 010100002030", "date -s now", "date --set now",
    "date -f dates", "hostname evil", "diff -l a b", "diff --paginate a b", "diff -X list a b",
    "file -C", "file -m magic x", "file -z x", "file -f list",
    "wc --files0-from=list", "du --files0-from=list", "sort --files0-from=list",
    "tail -f log", "cat -e f", "echo -e 'a'", "printf -v x y", "head -n",
    "md5sum -c sums", "sha256sum --check sums", "jq -n env", "jq -n '$ENV.HOME'",
    "jq 'include \"x\"; .' f", "jq --rawfile x .env .", "jq -f prog.jq f", "jq -L dir . f",
    "ls --frobnicate", "ls -Z9", "cat --number=5 f", "git log --frobnicate",
    "git status --porcelain=v9 -X",
]  # fmt: skip


@pytest.mark.parametrize("command", OPTIONS_THAT_WRITE_OR_RUN)
def test_options_that_write_run_or_are_unknown_ask(command: str) -> None:
    assert not is_read_only(command)


OTHER_PROGRAMS = [
    "awk 'BEGIN{system(\"rm x\")}'", "awk '{print > \"out\"}' f", "gawk 1 f",
    "env", "env rm x", "printenv", "printenv TOKEN", "ps aux", "less f", "more f", "most f",
    "vi f", "vim f", "nano f", "man ls", "xargs rm", "tee out", "dd if=a of=b", "bash -c ls",
    "sh -c ls", "python x.py", "node x.js", "make", "rm x", "touch x", "./ls", "/tmp/ls",
    "bin/ls", "../ls", "~/bin/ls", "/usr/local/evil/ls", "sudo ls", "nice ls", "timeout 5 ls",
    "command ls", "exec ls", "eval ls", "source x", ". x", "time ls", "watch ls", "open x",
    "xdg-open x", "curl https://x", "wget https://x",
]  # fmt: skip


@pytest.mark.parametrize("command", OTHER_PROGRAMS)
def test_programs_outside_the_allow_list_ask(command: str) -> None:
    assert not is_read_only(command)


SECRETS = [
    "cat ~/.ssh/id_rsa", "cat id_rsa", "cat keys/id_ed25519.pub", "ls ~/.ssh", "cat .env",
    "cat .env.local", "cat config/prod.env", "head -n 5 server.pem", "cat tls.key",
    "cat ~/.netrc", "ls ~/.aws", "cat ~/.aws/credentials", "cat ~/.kube/config",
    "cat ~/.docker/config.json", "cat .git-credentials", "cat ~/.npmrc", "cat ~/.pypirc",
    "cat ~/.pgpass", "ls ~/.gnupg", "cat /proc/self/environ", "cat /proc/1/cmdline",
    "head /dev/sda", "git show HEAD:.env", "git diff -- .env", "git log -p -- secrets.yaml",
    "cat client_secret.json", "cat credentials.json", "cat ~/.config/gh/hosts.yml",
    "cat ~/.codex/auth.json", "cat ~/.bash_history", "cat ~/.bashrc", "sha256sum id_rsa",
    "grep -r password ~/.ssh", "rg token .env", "diff .env .env.example", "cat terraform.tfstate",
    "cat CONFIG/.ENV", "stat ~/.ssh/id_rsa", "sed -n 1p .env", "jq . secrets.json",
    "cut -d= -f2 .env", "find ~/.ssh", "tree ~/.aws", "wc -c ~/.netrc", "cat /etc/shadow",
]  # fmt: skip


@pytest.mark.parametrize("command", SECRETS)
def test_reading_secrets_asks(command: str) -> None:
    assert not is_read_only(command)


# -- properties ---------------------------------------------------------------------------------

SIMPLE_READS = [
    "ls -la src", "cat README.md", "git status", "git log -n 5", "rg pattern src/",
    "head -n 20 f", "wc -l f", "grep -rn TODO src", "sort -n f", "find . -name x",
    "sed -n 1p f", "diff a b", "tree -L 2", "du -sh .", "git diff HEAD",
]  # fmt: skip
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=14)


def _unknown(words: list[str], flag: str) -> bool:
    from discord_mcp.judge.readers import known_flag

    return not known_flag(words[0], words[1] if words[0] == "git" else None, flag)


@given(st.sampled_from(SIMPLE_READS), WORD, st.booleans())
def test_adding_an_unknown_long_flag_never_makes_a_command_read_only(
    command: str, name: str, append: bool
) -> None:
    words = command.split()
    flag = f"--{name.strip('-') or 'x'}"
    assume(_unknown(words, flag))
    at = 2 if words[0] == "git" else 1
    mutated = [*words, flag] if append else [*words[:at], flag, *words[at:]]
    assert not is_read_only(" ".join(mutated))
    assert not is_read_only(" ".join([*words, f"{flag}=x"]))


UNKNOWN_SHORT = st.sampled_from(list("jkqyzBJKOWY"))


@given(st.sampled_from(SIMPLE_READS), UNKNOWN_SHORT)
def test_adding_a_short_flag_outside_the_table_never_makes_a_command_read_only(
    command: str, letter: str
) -> None:
    words = command.split()
    assume(_unknown(words, f"-{letter}"))
    assert not is_read_only(f"{command} -{letter}")
    assert not is_read_only(f"{command} -a{letter}")  # hidden in a cluster


ODD = st.characters(categories=["Cc", "Cf", "Co", "Cs", "Zl", "Zp"]) | st.sampled_from(
    ["\u00a0", "\u2007", "\u200b", "\u202e", "\u2066", "\ufeff", "\u3000", "\uff0d"]
)


@given(st.sampled_from(SIMPLE_READS), ODD, st.integers(min_value=0))
def test_an_odd_character_anywhere_makes_a_command_ask(
    command: str, character: str, where: int
) -> None:
    at = where % (len(command) + 1)
    assert not is_read_only(command[:at] + character + command[at:])


@pytest.mark.parametrize(
    "command",
    ["echo 'a\u200bb'", 'grep -n "TO\u200bDO" src', "cat 'notes\u202etxt.sh'",
     'echo "\u2066x\u2069"', "grep -rn 'a\ufeff' src", "rg 'x\u00ady' src"],
)  # fmt: skip
def test_an_invisible_or_direction_character_inside_quotes_makes_a_command_ask(
    command: str,
) -> None:
    """Quotes hide nothing: a zero-width, direction or other format character makes what the
    owner reads differ from what runs, so the command always asks."""
    assert not is_read_only(command)


SHELL_TAILS = ["; rm -rf x", "| sh", "> out", ">> out", "< in", "&", "&& rm x", "|| rm x",
               "$(rm x)", "`rm x`", "2>&1", ">|out", "<(rm x)", "\nrm x"]  # fmt: skip


@given(st.sampled_from(SIMPLE_READS), st.sampled_from(SHELL_TAILS), st.booleans())
def test_shell_operators_anywhere_make_a_command_ask(command: str, tail: str, space: bool) -> None:
    assert not is_read_only(command + (" " if space else "") + tail)
    assert not is_read_only(f"{tail} {command}")


@given(
    st.sampled_from(SIMPLE_READS),
    st.from_regex(r"\A[A-Za-z_][A-Za-z0-9_]{0,10}\Z"),
    st.text(alphabet="abc/.=:", max_size=8),
)
def test_an_environment_assignment_makes_a_command_ask(command: str, name: str, value: str) -> None:
    assert not is_read_only(f"{name}={value} {command}")


SECRET_PATHS = [
    "~/.ssh/id_rsa", ".env", "deploy/key.pem", "~/.aws/credentials", ".netrc",
    "~/.kube/config", "~/.docker/config.json", ".git-credentials", "id_ed25519",
]  # fmt: skip


@given(
    st.sampled_from(["cat", "head -n 5", "tail", "wc -l", "sort", "nl", "grep -n x", "ls -la"]),
    st.sampled_from(SECRET_PATHS),
)
def test_a_secret_among_the_operands_makes_a_read_ask(command: str, secret: str) -> None:
    assert is_read_only(f"{command} notes.txt")
    assert not is_read_only(f"{command} notes.txt {secret}")
    assert not is_read_only(f"{command} {secret} notes.txt")


# -- the hook ------------------------------------------------------------------------------------


def options(ask_all: bool = False) -> HookOptions:
    return HookOptions("pre-tool-use", "codex", None, None, ask_all)


def test_codexs_pre_tool_use_hook_lets_reads_and_its_own_tools_through_at_once() -> None:
    read = {"tool_name": "Bash", "tool_input": {"command": "git status"}}
    assert handle(read, options(), {}) is None
    own = {"tool_name": "mcp__discord__ask_decision", "tool_input": {}}
    assert handle(own, options(ask_all=True), {}) is None
    write = {"tool_name": "Bash", "tool_input": {"command": "touch x"}}
    assert handle(write, options(), {"DISCORD_MCP_APPROVALS": "off"}) is None


def test_ask_all_in_the_environment_makes_codexs_reads_ask_the_owner_too(
    discord: RunningEmulator, people: People, tmp_path: Path
) -> None:
    """``DISCORD_MCP_APPROVALS=ask-all`` (a project's ask-all) asks in Discord for every call,
    a plain read included; no one answering in time is a no. The hook runs as Codex runs it."""
    read = {
        "session_id": "s-ask-all",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
    }
    environ = {
        "PATH": "/usr/bin:/bin",
        **env_for(discord, tmp_path / "home"),
        "DISCORD_MCP_RUN": "1",
        "DISCORD_MCP_APPROVALS": "ask-all",
    }
    args = ["pre-tool-use", "--client", "codex", "--wait", "0.2"]
    run = run_hook(args, read, environ, within=60)
    assert cli_reading("codex", "pre-tool-use", run).verdict == "block", run.describe()
    cards = [
        m["content"]
        for thread in people.threads()
        for m in people.messages(thread["id"])
        if "Approval needed" in m["content"]
    ]
    assert len(cards) == 1
    assert "git status" in cards[0]


def test_claudes_pre_tool_use_hook_turns_every_call_into_a_question() -> None:
    claude = HookOptions("pre-tool-use", "claude", None, None, True)
    answer = handle({"tool_name": "Read", "tool_input": {}}, claude, {})
    assert answer is not None
    assert answer["hookSpecificOutput"]["permissionDecision"] == "ask"
