"""Routing by interest: the holder hands each event to the followers that want its thread, and
only to them; a dead follower's interests go; a mailbox that fills up loses nothing."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from pathlib import Path

from discord_mcp.relay.interest import Interests, Router
from discord_mcp.relay.spool import SpoolReader, encode
from discord_mcp.state.leases import ProcessLease, lease_alive

T1, T2, T3 = "1100000000000000001", "1100000000000000002", "1100000000000000003"


def line(thread_id: str, n: int = 0) -> bytes:
    return encode("MESSAGE_CREATE", {"channel_id": thread_id, "n": n}, n, session="s1")


def mail(interests: Interests) -> list[dict[str, object]]:
    reader = SpoolReader(interests.mailbox, at_end=False)
    try:
        return [event["d"] for event in reader.poll()]
    finally:
        reader.close()


def test_an_event_reaches_the_mailboxes_of_the_followers_that_want_its_thread_only(
    tmp_path: Path,
) -> None:
    first, second, third = (ProcessLease(tmp_path) for _ in range(3))
    a = Interests(tmp_path, first.name)
    b = Interests(tmp_path, second.name)
    c = Interests(tmp_path, third.name)  # wants nothing
    assert a.want(T1)
    assert b.want(T2)
    assert b.want(T1)
    router = Router(tmp_path)
    assert sorted(router.route(T1, line(T1, 1))) == sorted([first.name, second.name])
    assert router.route(T2, line(T2, 2)) == [second.name]
    assert router.route(T3, line(T3, 3)) == []  # nobody waits there
    assert router.route("", line("", 4)) == []  # an event of no channel
    assert [d["n"] for d in mail(a)] == [1]
    assert [d["n"] for d in mail(b)] == [1, 2]
    assert mail(c) == []


def test_what_is_not_a_snowflake_is_never_a_path(tmp_path: Path) -> None:
    lease = ProcessLease(tmp_path)
    interests = Interests(tmp_path, lease.name)
    for bad in ("../leases", "12/34", ".", "", "1" * 40, "١٢٣"):
        assert not interests.want(bad)
        assert Router(tmp_path).route(bad, line(T1)) == []
    assert interests.threads() == set()


def test_a_thread_wanted_twice_is_wanted_until_both_let_go(tmp_path: Path) -> None:
    lease = ProcessLease(tmp_path)
    interests = Interests(tmp_path, lease.name)
    router = Router(tmp_path)
    assert interests.want(T1)
    assert interests.want(T1)  # two questions in one thread
    interests.drop(T1)
    assert router.route(T1, line(T1, 1)) == [lease.name]
    interests.drop(T1)
    assert router.route(T1, line(T1, 2)) == []
    assert not (tmp_path / "gateway" / "interest" / T1).exists()  # no empty folder is left


def test_a_holder_that_starts_after_a_follower_asked_routes_to_it(tmp_path: Path) -> None:
    """Nothing is kept in the holder's memory: a successor, or a holder that comes up after the
    follower registered, reads the same files."""
    lease = ProcessLease(tmp_path)
    interests = Interests(tmp_path, lease.name)
    assert interests.want(T1)  # while no holder runs
    assert Router(tmp_path).route(T1, line(T1, 1)) == [lease.name]
    assert Router(tmp_path).route(T1, line(T1, 2)) == [lease.name]  # the next holder
    assert [d["n"] for d in mail(interests)] == [1, 2]


def test_the_holder_skips_its_own_interests(tmp_path: Path) -> None:
    lease = ProcessLease(tmp_path)
    interests = Interests(tmp_path, lease.name)
    assert interests.want(T1)
    assert Router(tmp_path, own=lease.name).route(T1, line(T1)) == []
    assert mail(interests) == []


DIE_WAITING = """
import os, signal, sys
from pathlib import Path
from discord_mcp.relay.interest import Interests
from discord_mcp.state.leases import ProcessLease, lease_alive
home = Path(sys.argv[1])
lease = ProcessLease(home)
interests = Interests(home, lease.name)
for thread in sys.argv[2:]:
    assert interests.want(thread)
print(lease.name, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_follower(home: Path, *threads: str) -> str:
    """A follower process that asked for ``threads`` and was killed; its name."""
    done = subprocess.run(
        [sys.executable, "-c", DIE_WAITING, str(home), *threads],
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
        timeout=60,
    )
    assert done.returncode == -signal.SIGKILL
    return done.stdout.strip()


def test_a_killed_followers_interest_and_mailbox_go_at_the_next_event_of_its_thread(
    tmp_path: Path,
) -> None:
    dead = killed_follower(tmp_path, T1)
    lease = ProcessLease(tmp_path)
    alive = Interests(tmp_path, lease.name)
    assert alive.want(T1)
    probes: list[str] = []

    def probe(name: str) -> bool:
        probes.append(name)
        return lease_alive(tmp_path, name)

    router = Router(tmp_path, alive=probe)
    assert router.route(T1, line(T1, 1)) == [lease.name]
    assert not (tmp_path / "gateway" / "interest" / T1 / dead).exists()
    assert not (tmp_path / "gateway" / "mail" / f"{dead}.ndjson").exists()
    probes.clear()
    assert router.route(T1, line(T1, 2)) == [lease.name]
    assert dead not in probes  # it costs nothing any more
    assert [d["n"] for d in mail(alive)] == [1, 2]


def test_a_starting_holder_removes_every_dead_followers_files(tmp_path: Path) -> None:
    dead = killed_follower(tmp_path, T1, T2, T3)
    lease = ProcessLease(tmp_path)
    alive = Interests(tmp_path, lease.name)
    assert alive.want(T2)
    gateway = tmp_path / "gateway"
    assert (gateway / "mail" / f"{dead}.ndjson").exists()
    removed = Router(tmp_path).sweep()
    assert removed == 4  # three interests and a mailbox
    left = sorted(str(p.relative_to(gateway)) for p in gateway.rglob("*") if p.is_file())
    assert left == [f"interest/{T2}/{lease.name}", f"mail/{lease.name}.ndjson"]


def test_a_follower_that_closes_leaves_nothing_behind(tmp_path: Path) -> None:
    lease = ProcessLease(tmp_path)
    interests = Interests(tmp_path, lease.name)
    assert interests.want(T1)
    assert interests.want(T2)
    interests.close()
    gateway = tmp_path / "gateway"
    assert [p for p in gateway.rglob("*") if p.is_file()] == []
    assert Router(tmp_path).route(T1, line(T1)) == []


def test_a_full_mailbox_is_started_afresh_and_its_reader_loses_nothing(tmp_path: Path) -> None:
    lease = ProcessLease(tmp_path)
    interests = Interests(tmp_path, lease.name)
    assert interests.want(T1)
    reader = SpoolReader(interests.mailbox, at_end=False)
    router = Router(tmp_path, rotate_bytes=400)  # a few events per mailbox
    sizes = []
    got = []
    try:
        for n in range(30):
            assert router.route(T1, line(T1, n)) == [lease.name]
            sizes.append(os.path.getsize(interests.mailbox))
            got.extend(event["d"]["n"] for event in reader.poll())
    finally:
        reader.close()
    assert sum(after < before for before, after in itertools.pairwise(sizes)) > 3  # started afresh
    assert got == list(range(30))
    assert os.path.getsize(interests.mailbox) < 400
