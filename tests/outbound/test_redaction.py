"""Secrets are replaced in everything the bot posts for an agent; ordinary text is untouched.

The fake secrets are built at run time (prefix + filler), so this file holds none itself.
"""

from __future__ import annotations

import pytest

from discord_mcp.outbound.redaction import PATTERNS, redact, summary

A36 = "Ab1" * 12
KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n"

SECRETS = [  # (kind, text around it, the secret that must vanish)
    (
        "Discord bot token",
        "",
        "MTA5OTk5OTk5OTk5OTk5OTk5OQ" + ".GhIjKl." + "abcdefghijklmnopqrstuvwxyz012345",
    ),
    ("Discord webhook URL", "https://discord.com/api/webhooks/123456789012345678/", "x" * 68),
    ("GitHub token", "", "ghp_" + A36),
    ("GitHub token", "", "github_pat_" + "11ABCDEFG0" + "a" * 40),
    ("Anthropic API key", "", "sk-ant-api03-" + "a1B2" * 20),
    ("OpenAI API key", "OPENAI_API_KEY=", "sk-proj-" + "a1B2c3" * 8),
    ("OpenAI API key", "", "sk-" + "a1B2" * 12),
    ("AWS access key id", "", "AKIA" + "IOSFODNN7EXAMPL1"),
    (
        "AWS secret access key",
        "aws_secret_access_key = ",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
    ),
    ("Slack token", "", "xoxb-" + "1234567890-" + "abcdefABCDEF"),
    ("Slack webhook URL", "https://hooks.slack.com/services/", "T0000/B0000/" + "X" * 24),
    ("Google API key", "", "AIza" + "Sy" + "A1b2C3d4" * 4 + "x"),
    ("Google OAuth secret", "", "GOCSPX-" + "a1B2c3D4" * 4),
    ("Google OAuth token", "", "ya29." + "a0AfH6SM" * 4),
    ("Stripe key", "", "sk_live_" + "a1B2c3D4" * 3),
    (
        "JSON web token",
        "",
        "eyJhbGciOiJIUzI1NiJ9"
        + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0."
        + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("bearer token", "Authorization: Bearer ", "abc123DEF456ghi789JKL0"),
    ("password in a URL", "postgres://app:", "s3cr3t-pw"),
    (
        "private key",
        "",
        "-----BEGIN RSA PRIVATE KEY-----\n" + KEY_BODY + "-----END RSA PRIVATE KEY-----",
    ),
    (
        "private key",
        "",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + KEY_BODY + "-----END OPENSSH PRIVATE KEY-----",
    ),
    ("password", 'password = "', "hunter2-horse"),
    ("password", "DB_PASSWORD=", "Tr0ub4dor&3x"),
    ("password", '{"client_secret": "', "q8Z2pLm4vX"),
    ("password", "api_key: ", "9f8e7d6c5b4a3210"),
]
_CLOSING = {"password in a URL": "@db.internal:5432/app", "password": '"'}


@pytest.mark.parametrize(
    ("kind", "before", "secret"), SECRETS, ids=[f"{k}-{n}" for n, (k, _, _) in enumerate(SECRETS)]
)
def test_each_secret_shape_is_replaced_and_named(kind: str, before: str, secret: str) -> None:
    after = _CLOSING.get(kind, "") if before.endswith(('"', ":")) else ""
    clean = redact(f"start {before}{secret}{after} end")
    assert clean.kinds
    assert clean.kinds[0] == kind
    assert f"[redacted: {kind}]" in clean.text
    assert clean.text.startswith(f"start {before}")
    assert clean.text.endswith(f"{after} end")
    assert secret not in clean.text


def test_every_shape_has_a_test() -> None:
    assert {shape.kind for shape in PATTERNS} == {kind for kind, _, _ in SECRETS}


def test_the_bot_token_itself_is_replaced_wherever_it_appears() -> None:
    token = "emulator-token-" + "x" * 20
    clean = redact(f"my token is {token}, again:{token}", [token])
    assert token not in clean.text
    assert clean.kinds == ("bot token", "bot token")


def test_an_unterminated_private_key_is_cut_to_the_end() -> None:
    clean = redact("key:\n-----BEGIN PRIVATE KEY-----\n" + KEY_BODY)
    assert clean.text == "key:\n[redacted: private key]"


def test_the_key_name_and_quotes_stay_so_the_text_still_reads() -> None:
    assert (
        redact('password = "' + "hunter2-horse" + '"').text == 'password = "[redacted: password]"'
    )


NOT_SECRETS = [
    "The build passed: 42 tests, 0 failures.",
    "password = get_password()",
    "password: str = Field(description='the password')",
    "api_key = os.environ['OPENAI_API_KEY']",
    "SECRET_KEY = settings.SECRET_KEY",
    "secret_key = SECRET_KEY",
    'password = "changeme"',
    'password: "<your-password>"',
    "password: ********",
    'token = "${GITHUB_TOKEN}"',
    "Set DB_PASSWORD in your .env, then restart.",
    "the password reset flow sends an email",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "sha256: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "https://github.com/discord-mcp/discord-mcp/pull/12",
    "http://localhost:8800/api/v10/channels/123",
    "Use `sk-` keys from the dashboard.",
    "AKIA prefixes mark AWS key ids.",
    "a task-list: ask-ant-colony-simulation",
    "Bearer tokens go in the Authorization header.",
    "ssh user@host and git@github.com:org/repo.git",
    "Discord ids: 123456789012345678 and 223456789012345678",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_text_passes_untouched(text: str) -> None:
    assert redact(text).text == text
    assert not redact(text).changed


def test_the_summary_says_what_was_replaced_where() -> None:
    clean = redact(f"{'ghp_' + A36} and {'ghp_' + A36[::-1]}")
    assert summary([("content", clean)]) == ["GitHub token in content (x2)"]
