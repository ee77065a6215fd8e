"""Deciding tasks on the machine's Redis: one waits to start at a time, and a send that
failed leaves no mark behind (Celery's send is replaced: what is tested is the mark)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kombu.exceptions import OperationalError

from referee.queue import DECIDE, WANTED_FOR, Queue
from referee.settings import Settings
from tests.servers import redis_url

pytestmark = pytest.mark.service


class _Sent:
    """Stands for Celery's `send_task`: keeps what would have gone, or fails."""

    def __init__(self) -> None:
        self.tasks: list[tuple[str, tuple[Any, ...]]] = []
        self.failing = False

    def __call__(self, name: str, args: tuple[Any, ...]) -> None:
        if self.failing:
            raise OperationalError("the broker is away")
        self.tasks.append((name, args))


@pytest.fixture
def queue() -> Iterator[tuple[Queue, _Sent]]:
    name = f"referee-test-{uuid.uuid4().hex[:8]}"
    made = Queue(Settings(redis_url=redis_url(), queue=name), lambda *_: None)
    sent = _Sent()
    made.celery.send_task = sent  # type: ignore[method-assign,assignment]
    yield made, sent
    made.client().delete(f"referee:decisions-wanted:{name}")


def test_one_deciding_task_waits_at_a_time(queue: tuple[Queue, _Sent]) -> None:
    deciding, sent = queue
    deciding.enqueue_decisions(["a"])
    deciding.enqueue_decisions(["b", "c"])
    assert sent.tasks == [(DECIDE, ("a",))]
    # The mark lapses on its own, should the task be lost.
    ttl = deciding.client().ttl(f"referee:decisions-wanted:{deciding.settings.queue}")
    assert 0 < ttl <= WANTED_FOR
    # Once it started, the next submission sends one of its own.
    deciding.decisions_taken()
    deciding.enqueue_decisions(["d"])
    deciding.enqueue_decisions([])
    assert sent.tasks == [(DECIDE, ("a",)), (DECIDE, ("d",))]


def test_a_task_that_could_not_be_sent_holds_up_no_later_one(
    queue: tuple[Queue, _Sent],
) -> None:
    deciding, sent = queue
    sent.failing = True
    with pytest.raises(OperationalError):
        deciding.enqueue_decisions(["a"])
    sent.failing = False
    deciding.enqueue_decisions(["b"])
    assert sent.tasks == [(DECIDE, ("b",))]


def test_without_redis_every_submission_sends_its_task(queue: tuple[Queue, _Sent]) -> None:
    deciding, sent = queue
    nowhere = Queue(
        Settings(redis_url="redis://127.0.0.1:1/0", queue=deciding.settings.queue),
        lambda *_: None,
    )
    nowhere.celery.send_task = sent  # type: ignore[method-assign,assignment]
    nowhere.enqueue_decisions(["a"])
    nowhere.enqueue_decisions(["b"])
    nowhere.decisions_taken()
    assert sent.tasks == [(DECIDE, ("a",)), (DECIDE, ("b",))]


def test_a_waiting_request_hears_a_batchs_message_and_an_earlier_workers(
    queue: tuple[Queue, _Sent],
) -> None:
    deciding, _sent = queue
    decided = {"status": "accepted", "seq": 3, "game_id": "g"}
    with deciding.decided_signal("a") as heard_a, deciding.decided_signal("b") as heard_b:
        assert deciding._listener().subscribed.wait(10)
        # One message for a batch's decisions: each waiter hears its own.
        deciding.announce_decided([{**decided, "id": "a"}, {**decided, "id": "b", "seq": 4}])
        assert _decision(heard_a) == {**decided, "id": "a"}
        assert _decision(heard_b) == {**decided, "id": "b", "seq": 4}
        # A worker not yet upgraded announces one decision alone, as an object.
        channel = deciding.decided_channel()
        deciding.client().publish(channel, json.dumps({**decided, "id": "a", "seq": 5}))
        assert _decision(heard_a) == {**decided, "id": "a", "seq": 5}
        assert heard_b(0.2) is False


def _decision(heard: Callable[[float], Any]) -> Any:
    """The next decision `heard` hears (passing over the wake-up of the subscription)."""
    for _ in range(3):
        found = heard(10)
        if isinstance(found, dict):
            return found
    return None
