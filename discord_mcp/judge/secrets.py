"""Paths whose reading asks the owner even for a program that only reads: keys, tokens,
credentials, environments, devices and other processes.

A word is read as every path it may name: itself, and its pieces at ``:`` (``HEAD:.env``) and
``=`` (``--file=.env``); each piece in every form :func:`~.paths.forms` gives (``//dev/sda``
is ``/dev/sda``, ``a/../.env`` is ``.env``, ``../../proc`` may be ``/proc``). A form is a
secret when it is under ``/proc``, ``/dev`` or ``/sys`` (``/dev/null`` aside), when one of its
parts is named like a secret (compared in lower case), or when it is a repository's
``.git/.../config`` (remotes there carry credentials). The list errs towards asking: a file
named ``secrets.md`` asks too. Directories read recursively (``grep -r x .``) are not looked
into; the values of options that choose which files a search reads (``grep --include``,
``rg --glob``) are checked like operands. See the README for what that leaves open.
"""

from __future__ import annotations

import re

from discord_mcp.judge.paths import forms

_NAMES = frozenset(
    {
        ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", "_netrc",
        ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".password-store",
        ".vault-token", ".boto", ".s3cfg", ".terraformrc", ".htpasswd", "shadow", "gshadow",
        "sudoers", "gcloud", "hosts.yml", "auth.json", ".bashrc", ".zshrc", ".profile",
        ".bash_profile", ".zprofile", ".zshenv", ".envrc", "environ",
        "authorized_keys", "known_hosts", ".claude.json", "rclone.conf", "kaggle.json",
        ".kaggle",
    }
)  # fmt: skip
_PREFIXES = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "ssh_host_")
_SUFFIXES = (
    ".env", ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk",
    "_history", ".history", ".tfstate", ".tfvars", ".tfstate.backup",
)  # fmt: skip
_INSIDE = ("secret", "credential", "passw", "creds", "apikey", "api_key", "private_key")
_TOKEN = re.compile(r"(?:^|[._-])tokens?(?:$|[._-])")
_SYSTEM = ("/proc", "/dev", "/sys")
_HARMLESS = frozenset({"/dev/null"})


def looks_secret(word: str) -> bool:
    """Whether ``word`` names (or may name) a secret: see the module doc."""
    pieces = {word, *re.split(r"[:=]", word)}
    return any(_secret_form(form) for piece in pieces if piece for form in forms(piece))


def _secret_form(path: str) -> bool:
    if path in _HARMLESS:
        return False
    if any(path == root or path.startswith(root + "/") for root in _SYSTEM):
        return True
    parts = [part for part in path.split("/") if part]
    if ".git" in parts and "config" in parts[parts.index(".git") + 1 :]:
        return True
    return any(
        part in _NAMES
        or part.startswith(_PREFIXES)
        or part.endswith(_SUFFIXES)
        or any(fragment in part for fragment in _INSIDE)
        or _TOKEN.search(part)
        for part in parts
    )
