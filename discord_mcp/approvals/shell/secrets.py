"""Paths whose reading asks the owner even for a program that only reads: keys, tokens,
credentials, environments.

A word is split into its path parts (at ``/``, ``:`` as in ``HEAD:.env``, and ``=`` as in
``--file=.env``) and each part is compared in lower case. The list errs towards asking: a
file named ``secrets.md`` asks too. Directories read recursively (``grep -r x .``) are not
looked into; the values of options that choose which files a search reads (``grep
--include``, ``rg --glob``) are checked like operands. See the README for what that leaves
open.
"""

from __future__ import annotations

import re

_NAMES = frozenset(
    {
        ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".netrc", "_netrc",
        ".git-credentials", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".password-store",
        ".vault-token", ".boto", ".s3cfg", ".terraformrc", ".htpasswd", "shadow", "gshadow",
        "sudoers", "gcloud", "hosts.yml", "auth.json", ".bashrc", ".zshrc", ".profile",
        ".bash_profile", ".zprofile", ".zshenv", ".envrc", "environ",
        "authorized_keys", "known_hosts", ".claude.json",
    }
)  # fmt: skip
_PREFIXES = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
_SUFFIXES = (
    ".env", ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk",
    "_history", ".history", ".tfstate", ".tfvars", ".tfstate.backup",
)  # fmt: skip
_INSIDE = ("secret", "credential", "passw", "creds", "apikey", "api_key", "private_key")
_TOKEN = re.compile(r"(?:^|[._-])tokens?(?:$|[._-])")
_SYSTEM = ("/proc/", "/dev/", "/sys/")
_HARMLESS = frozenset({"/dev/null"})


def looks_secret(word: str) -> bool:
    """Whether ``word`` names (or may name) a secret: see the module doc."""
    lowered = word.lower()
    if lowered in _HARMLESS:
        return False
    if lowered.startswith(_SYSTEM) or lowered in ("/proc", "/dev", "/sys"):
        return True
    for part in re.split(r"[/:=]", lowered):
        if not part:
            continue
        if (
            part in _NAMES
            or part.startswith(_PREFIXES)
            or part.endswith(_SUFFIXES)
            or any(fragment in part for fragment in _INSIDE)
            or _TOKEN.search(part)
        ):
            return True
    return False
