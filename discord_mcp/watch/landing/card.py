"""A finished run's changes card: what it changed, and Show diff / Merge / Open PR / Discard.

Pure functions of the run's worktree record (:mod:`discord_mcp.runs.git.worktrees`), or of its
``result.json`` for a run that worked in the project's folder (Show diff only). The buttons'
``custom_id`` follows the cards' scheme (:func:`~discord_mcp.decisions.interactive.custom_id`)
with the run id in the id's place: ``dmcp:<run_id>:<part>:<machine>``, so of several machines
sharing the bot only the one that ran it answers. The labels are a contract (tests and people
find the buttons by them): **Show diff**, **Merge**, **Open PR**, **Discard**, and for the
confirmation **Discard it** / **Keep it**.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from discord_mcp.decisions.interactive import custom_id, parse_custom_id
from discord_mcp.runs.folders.folders import is_run_id

SHOW_DIFF, MERGE, OPEN_PR, DISCARD = "Show diff", "Merge", "Open PR", "Discard"
DISCARD_IT, KEEP_IT = "Discard it", "Keep it"
PARTS = ("diff", "merge", "pr", "discard", "discard-yes", "discard-no")
PRIMARY, SECONDARY, SUCCESS, DANGER = 1, 2, 3, 4
FILES_SHOWN = 8
LIMIT = 2000


def click_of(custom: str) -> tuple[str, str, str | None] | None:
    """``(run_id, part, machine)`` of a click on a changes card; None for any other click."""
    click = parse_custom_id(custom)
    if click is None or not is_run_id(click.decision_id) or click.part not in PARTS:
        return None
    return click.decision_id, click.part, click.machine


def _button(label: str, run_id: str, part: str, style: int, machine: str) -> dict[str, Any]:
    return {
        "type": 2,
        "style": style,
        "label": label,
        "custom_id": custom_id(run_id, part, machine),
    }


def _counts(changes: Mapping[str, Any] | None) -> str:
    changes = changes or {}
    files = int(changes.get("files") or 0)
    return (
        f"{files} file{'s' if files != 1 else ''} · +{int(changes.get('insertions') or 0)} "
        f"−{int(changes.get('deletions') or 0)}"
    )


def counts_of(changes: Mapping[str, Any] | None) -> str:
    """`` · 2 files · +3 −1`` (nothing when the counts are unknown)."""
    return f" · {_counts(changes)}" if changes else ""


def _files(listed: Sequence[Mapping[str, Any]], total: int) -> list[str]:
    lines = [
        f"`{_tick(str(f.get('path')))}` +{f.get('insertions', 0)} −{f.get('deletions', 0)}"
        for f in listed[:FILES_SHOWN]
    ]
    if total > len(lines):
        lines.append(f"… and {total - len(lines)} more")
    return lines


def _tick(text: str) -> str:
    """A path shown in backticks it cannot close."""
    return text.replace("`", "'")[:150]


def card_text(record: Mapping[str, Any], *, extra: str | None = None) -> str:
    """The card of a run with a worktree: its changes, where they are, what became of them."""
    run_id = str(record["run_id"])
    changes = record.get("changes") or {}
    total = int(changes.get("files") or 0)
    base = str(record.get("base_commit") or "")[:10]
    into = record.get("base_branch")
    start = f"`{into}` @ `{base}`" if into else f"`{base}` (a detached HEAD)"
    if total:
        head = f"**Changes** · {_counts(changes)} · branch `{record['branch']}` from {start}"
    else:
        head = f"**No changes** · branch `{record['branch']}` from {start}"
    lines = [head, *_files(record.get("files") or [], total)]
    kept_out = int(record.get("kept_out") or 0)
    if kept_out:
        lines.append(
            f"-# {kept_out} uncommitted path{'s' if kept_out != 1 else ''} of the project "
            "stayed out of this run's worktree (it started from the last commit)"
        )
    outcome = landed_line(record.get("landed"))
    if outcome:
        lines.append(outcome)
    if extra:
        lines.append(extra)
    lines.append(f"-# run `{run_id}` · in a git worktree of its own")
    return _fit(lines)


def folder_card_text(run_id: str, changes: Mapping[str, Any]) -> str:
    """The card of a run that worked in the project's own folder: its changes.patch."""
    return _fit(
        [
            f"**Changes** · {_counts(changes)} · made in the project's folder",
            f"-# run `{run_id}` · artifacts/changes.patch",
        ]
    )


def landed_line(landed: Mapping[str, Any] | None) -> str | None:
    """What became of the run's work, in one line (None: nothing yet)."""
    if not landed:
        return None
    who = _who(landed)
    action = landed.get("action")
    if action == "merged":
        how = "squashed" if landed.get("squash") else None
        how = how or ("fast-forward" if landed.get("fast_forward") else "merge commit")
        commit = str(landed.get("commit") or "")[:10]
        line = f"✅ **Merged** into `{landed.get('into')}` by {who} ({how}, now at `{commit}`)"
    elif action == "pr":
        url = landed.get("url")
        where = f"<{url}>" if url else f"branch pushed to `{landed.get('remote')}`"
        line = f"🔀 **Pull request** by {who}: {where}"
    else:
        line = f"🗑️ **Discarded** by {who}: the worktree and its branch are gone"
    if landed.get("kept"):
        line += f"\n-# {landed['kept']}"
    return line


def _who(landed: Mapping[str, Any]) -> str:
    by = str(landed.get("by") or "the owner")
    return f"<@{by}>" if by.isdigit() else by


def components(
    record: Mapping[str, Any] | None, run_id: str, machine: str, *, has_patch: bool
) -> list[dict[str, Any]]:
    """The card's buttons: Show diff when there is a patch; Merge, Open PR and Discard while
    the worktree is there (Merge and Open PR only when the run changed something)."""
    buttons = []
    if has_patch:
        buttons.append(_button(SHOW_DIFF, run_id, "diff", SECONDARY, machine))
    landed = (record or {}).get("landed") or {}
    if record is not None and landed.get("action") not in ("merged", "discarded"):
        changed = int((record.get("changes") or {}).get("files") or 0) > 0
        into = record.get("base_branch")
        if changed:
            label = f"{MERGE} into {into}" if into else MERGE
            buttons.append(_button(label[:80], run_id, "merge", SUCCESS, machine))
            # After a PR it pushes the branch again (the PR follows it).
            buttons.append(_button(OPEN_PR, run_id, "pr", PRIMARY, machine))
        buttons.append(_button(DISCARD, run_id, "discard", DANGER, machine))
    return [{"type": 1, "components": buttons}] if buttons else []


def confirm_components(run_id: str, machine: str) -> list[dict[str, Any]]:
    """Discard's confirmation: Discard it / Keep it."""
    return [
        {
            "type": 1,
            "components": [
                _button(DISCARD_IT, run_id, "discard-yes", DANGER, machine),
                _button(KEEP_IT, run_id, "discard-no", SECONDARY, machine),
            ],
        }
    ]


def confirm_text(record: Mapping[str, Any]) -> str:
    commits = "its commits" if (record.get("changes") or {}).get("files") else "it"
    return (
        f"**Discard run `{record['run_id']}`?** Its worktree and the branch "
        f"`{record['branch']}` with {commits} are deleted: this cannot be undone."
    )


def _fit(lines: list[str]) -> str:
    text = "\n".join(lines)
    return text if len(text) <= LIMIT else text[: LIMIT - 1] + "…"
