"""Effective permissions as Discord documents them, computed on the emulator's state."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from discord_mcp.emulator.models import PUBLIC_THREAD, Role
from discord_mcp.emulator.permissions import (
    ADD_REACTIONS,
    ADMINISTRATOR,
    ALL_PERMISSIONS,
    ATTACH_FILES,
    BOT_ROLE_PERMISSIONS,
    EMBED_LINKS,
    EVERYONE_PERMISSIONS,
    MANAGE_THREADS,
    PERMISSION_BITS,
    READ_MESSAGE_HISTORY,
    SEND_MESSAGES,
    SEND_MESSAGES_IN_THREADS,
    VIEW_CHANNEL,
    Overwrite,
    apply_overwrites,
    names,
)
from discord_mcp.emulator.state import State

NEEDED = {
    "VIEW_CHANNEL": 1 << 10,
    "SEND_MESSAGES": 1 << 11,
    "READ_MESSAGE_HISTORY": 1 << 16,
    "CREATE_PUBLIC_THREADS": 1 << 35,
    "SEND_MESSAGES_IN_THREADS": 1 << 38,
    "MANAGE_THREADS": 1 << 34,
    "ADD_REACTIONS": 1 << 6,
    "EMBED_LINKS": 1 << 14,
    "ATTACH_FILES": 1 << 15,
}


def _bot_in_channel(state: State) -> int:
    return state.permissions_for(state.bot.id, state.channel)


def _add_role(state: State, role_id_suffix: int, permissions: int) -> Role:
    role = Role(str(int(state.bot_role.id) + role_id_suffix), f"role {role_id_suffix}", permissions)
    state.roles[role.id] = role
    return role


def test_the_bot_role_grants_exactly_the_nine_permissions_discord_mcp_needs() -> None:
    state = State()

    assert sum(NEEDED.values()) == BOT_ROLE_PERMISSIONS
    assert state.roles[state.bot_role.id].permissions == BOT_ROLE_PERMISSIONS
    assert state.members[state.bot.id].role_ids == [state.bot_role.id]
    assert not EVERYONE_PERMISSIONS & BOT_ROLE_PERMISSIONS


def test_by_default_the_bot_has_everything_it_needs_in_the_channel() -> None:
    state = State()

    permissions = _bot_in_channel(state)

    assert permissions & BOT_ROLE_PERMISSIONS == BOT_ROLE_PERMISSIONS
    assert permissions == EVERYONE_PERMISSIONS | BOT_ROLE_PERMISSIONS


def test_everyone_role_has_the_guilds_id_and_the_owner_owns_the_guild() -> None:
    state = State()

    assert state.everyone.id == state.guild.id
    assert state.guild.owner_id == state.owner.id
    assert state.members[state.owner.id].role_ids == []


def test_taking_a_bit_from_the_bot_role_takes_it_from_the_bot() -> None:
    state = State()

    state.set_role_permissions(state.bot_role.id, BOT_ROLE_PERMISSIONS & ~SEND_MESSAGES)

    assert not _bot_in_channel(state) & SEND_MESSAGES
    assert _bot_in_channel(state) & VIEW_CHANNEL


def test_administrator_grants_everything_and_ignores_overwrites() -> None:
    state = State()
    state.set_role_permissions(state.bot_role.id, ADMINISTRATOR)
    state.set_overwrites(
        state.channel.id,
        [
            Overwrite(state.guild.id, 0, deny=VIEW_CHANNEL),
            Overwrite(state.bot.id, 1, deny=ALL_PERMISSIONS),
        ],
    )

    assert _bot_in_channel(state) == ALL_PERMISSIONS


def test_the_guild_owner_has_everything_whatever_the_overwrites() -> None:
    state = State()
    state.set_overwrites(state.channel.id, [Overwrite(state.owner.id, 1, deny=VIEW_CHANNEL)])

    assert state.permissions_for(state.owner.id, state.channel) == ALL_PERMISSIONS


def test_everyone_deny_is_overridden_by_a_role_allow() -> None:
    state = State()
    state.set_role_permissions(state.bot_role.id, 0)
    state.set_role_permissions(state.everyone.id, VIEW_CHANNEL | SEND_MESSAGES)
    state.set_overwrites(
        state.channel.id,
        [
            Overwrite(state.guild.id, 0, deny=VIEW_CHANNEL | SEND_MESSAGES),
            Overwrite(state.bot_role.id, 0, allow=VIEW_CHANNEL),
        ],
    )

    permissions = _bot_in_channel(state)

    assert permissions & VIEW_CHANNEL
    assert not permissions & SEND_MESSAGES


def test_one_role_allowing_beats_another_denying_in_the_same_channel() -> None:
    # The docs' #coolstuff example: role positions do not matter for overwrites.
    state = State()
    other = _add_role(state, 100, 0)
    state.set_member_roles(state.bot.id, [state.bot_role.id, other.id])
    state.set_overwrites(
        state.channel.id,
        [
            Overwrite(state.bot_role.id, 0, deny=VIEW_CHANNEL),
            Overwrite(other.id, 0, allow=VIEW_CHANNEL),
        ],
    )

    assert _bot_in_channel(state) & VIEW_CHANNEL


def test_a_member_overwrite_wins_over_role_overwrites() -> None:
    state = State()
    state.set_overwrites(
        state.channel.id,
        [
            Overwrite(state.bot_role.id, 0, allow=SEND_MESSAGES),
            Overwrite(state.bot.id, 1, deny=SEND_MESSAGES),
        ],
    )
    denied = _bot_in_channel(state)
    state.set_overwrites(
        state.channel.id,
        [
            Overwrite(state.bot_role.id, 0, deny=ADD_REACTIONS),
            Overwrite(state.bot.id, 1, allow=ADD_REACTIONS),
        ],
    )
    allowed = _bot_in_channel(state)

    assert not denied & SEND_MESSAGES
    assert allowed & ADD_REACTIONS


def test_overwrites_of_roles_the_member_lacks_do_not_apply() -> None:
    state = State()
    other = _add_role(state, 100, 0)
    state.set_overwrites(state.channel.id, [Overwrite(other.id, 0, deny=VIEW_CHANNEL)])

    assert _bot_in_channel(state) & VIEW_CHANNEL


def test_without_view_channel_nothing_else_counts() -> None:
    state = State()
    state.set_overwrites(state.channel.id, [Overwrite(state.bot.id, 1, deny=VIEW_CHANNEL)])

    assert _bot_in_channel(state) == 0


def test_without_send_messages_embeds_and_files_are_implicitly_denied_in_a_channel() -> None:
    state = State()
    state.set_overwrites(state.channel.id, [Overwrite(state.bot.id, 1, deny=SEND_MESSAGES)])

    permissions = _bot_in_channel(state)

    assert not permissions & (EMBED_LINKS | ATTACH_FILES)
    assert permissions & READ_MESSAGE_HISTORY


def test_a_thread_inherits_its_parents_overwrites() -> None:
    state = State()
    thread = state.create_thread(state.channel.id, state.bot.id, {"name": "t", "type": 11})
    state.set_overwrites(
        state.channel.id,
        [Overwrite(state.bot_role.id, 0, deny=SEND_MESSAGES_IN_THREADS | ADD_REACTIONS)],
    )

    permissions = state.permissions_for(state.bot.id, thread)

    assert thread.type == PUBLIC_THREAD
    assert permissions & VIEW_CHANNEL
    assert not permissions & (SEND_MESSAGES_IN_THREADS | ADD_REACTIONS)


def test_send_messages_means_nothing_in_a_thread() -> None:
    state = State()
    thread = state.create_thread(state.channel.id, state.bot.id, {"name": "t", "type": 11})
    state.set_overwrites(state.channel.id, [Overwrite(state.bot.id, 1, deny=SEND_MESSAGES)])

    permissions = state.permissions_for(state.bot.id, thread)

    # The implicit "no SEND_MESSAGES, no embeds" rule is a channel rule.
    assert permissions & (SEND_MESSAGES_IN_THREADS | EMBED_LINKS) == (
        SEND_MESSAGES_IN_THREADS | EMBED_LINKS
    )


def test_a_private_thread_is_hidden_from_non_members_without_manage_threads() -> None:
    state = State()
    person = state.create_user("alice")
    state.set_role_permissions(state.everyone.id, EVERYONE_PERMISSIONS | VIEW_CHANNEL)
    thread = state.create_thread(state.channel.id, state.bot.id, {"name": "secret"})

    assert state.permissions_for(person.id, thread) == 0
    assert state.permissions_for(state.bot.id, thread) & VIEW_CHANNEL

    state.set_role_permissions(
        state.everyone.id, EVERYONE_PERMISSIONS | VIEW_CHANNEL | MANAGE_THREADS
    )

    assert state.permissions_for(person.id, thread) & VIEW_CHANNEL


def test_outside_the_guild_the_bot_has_no_permissions() -> None:
    state = State()

    state.set_bot_in_guild(False)

    assert _bot_in_channel(state) == 0
    assert not state.bot_in_guild


def test_names_lists_the_documented_names_of_set_bits() -> None:
    assert sorted(names(BOT_ROLE_PERMISSIONS)) == sorted(NEEDED)
    assert PERMISSION_BITS["PIN_MESSAGES"] == 1 << 51


_BITS = st.integers(min_value=0, max_value=ALL_PERMISSIONS).map(lambda n: n & ALL_PERMISSIONS)


@given(base=_BITS, deny=_BITS, allow=_BITS)
def test_a_member_overwrite_always_decides_the_bits_it_names(
    base: int, deny: int, allow: int
) -> None:
    base &= ~ADMINISTRATOR
    result = apply_overwrites(
        base,
        guild_id="1",
        member_id="2",
        member_roles=["3"],
        overwrites=[
            Overwrite("1", 0, allow=deny, deny=allow),
            Overwrite("3", 0, allow=deny, deny=allow),
            Overwrite("2", 1, allow=allow, deny=deny & ~allow),
        ],
    )

    assert result & allow == allow
    assert not result & (deny & ~allow)
