"""A webhook that trickles one header byte every 2 s stops nothing, on real processes.

While the slow server holds its connection, other games keep being decided
and mailed, and the slow game's own moves too; the delivery gives up at the
deadline (`REFEREE_WEBHOOK_DEADLINE`, 15 s here), the seat sees why, and it
is tried again only after its backoff. Once on the embedded default
(`referee serve` alone: its delivery threads), once on workers (a deciding
and a delivering worker on PostgreSQL and Redis).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mail.players import told
from tests.security.webhook_servers import (
    SlowServer,
    Stack,
    embedded_stack,
    wait_until,
    worker_stack,
)

pytestmark = pytest.mark.long

BACKOFF = 2.0  # REFEREE_MAIL_BACKOFF of the stacks: the first wait after a failure


def stops_nothing(stack: Stack, slow: SlowServer) -> None:
    slow_game, slow_tokens, _ = stack.game()
    assert stack.hook(slow_game, slow_tokens[1], slow.url).status_code == 200
    stack.play_one(slow_game, slow_tokens[0])  # now seat 1's turn: its webhook is called
    wait_until(slow.held.is_set, 60, "the slow webhook to be called")

    others = [stack.game(emails=True) for _ in range(2)]
    for game_id, tokens, _ in others:
        stack.play_one(game_id, tokens[0])
        stack.play_one(game_id, tokens[1])
    stack.play_one(slow_game, slow_tokens[1])
    for _, _, addresses in others:
        for address in addresses:
            # The invitation and a your-turn mail each (told in one mail where they
            # were waiting together).
            wait_until(
                lambda: set(told(stack.mailbox.to(address))) >= {"invitation", "your_turn"},  # noqa: B023
                60,
                "the invitation and a turn mail",
            )
    assert slow.holding(), "the slow server was let go before the others were done"

    wait_until(lambda: slow.left, 60, "the referee to give up on the slow webhook")
    # It records the failure after letting go of the socket, which the server sees first.
    wait_until(
        lambda: stack.health(slow_game, slow_tokens[1])["failures"],
        30,
        "the failure to be recorded",
    )
    health = stack.health(slow_game, slow_tokens[1])
    assert health["active"] and health["failures"] >= 1, health
    assert "deadline" in health["last_error"] and health["retry_at"], health
    wait_until(lambda: len(slow.accepted) >= 2, 60, "the delivery to be tried again")
    # Not before its backoff ran out (a lower bound: load only makes it later).
    assert slow.accepted[1] >= slow.left[0] + BACKOFF - 0.5


def test_a_slow_webhook_stops_nothing_in_the_embedded_default(
    tmp_path: Path, slow: SlowServer
) -> None:
    with embedded_stack(tmp_path, REFEREE_WEBHOOK_ALLOW_PRIVATE="1") as stack:
        stops_nothing(stack, slow)


def test_a_slow_webhook_stops_nothing_on_workers(
    pg_database: str, tmp_path: Path, slow: SlowServer
) -> None:
    with worker_stack(pg_database, tmp_path, REFEREE_WEBHOOK_ALLOW_PRIVATE="1") as stack:
        stops_nothing(stack, slow)
