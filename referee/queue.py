"""The queue between the processes: enqueueing tasks, and hearing of decisions.

Each process builds one `Queue` from its settings (through the service's
`Referee`) and hands it down; nothing is read at import. The names of the
tasks are shared by whoever enqueues (the API, mail-in, the sweeps) and the
worker that runs them (`workers.tasks` registers the service's jobs on the
queue's Celery app under these names), so the entry points never import
each other.

Without `REDIS_URL` there is no broker: a task runs in the process that
enqueues it, as it is enqueued (the embedded default), through the `run`
the queue is given.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

import redis
from celery import Celery

from referee.delivery import CHANNELS
from referee.settings import Settings

DECIDE = "referee.decide"
SWEEP = "referee.sweep"
NOOP = "referee.noop"
# One channel's deliveries (its name the argument; none: every channel's, each apart).
DELIVER = "referee.deliver"
DEADLINES = "referee.deadlines"
# A sign-in link asked for an address: looked up and written apart from the request,
# so that its answer is the same, and as quick, whether or not the address is a player's.
SIGN_IN = "referee.sign_in"
# The digests due this hour (`referee.service.digests`), and the daily mails of new
# open games (`referee.service.seek_telling.sweep_seek_news`).
DIGESTS = "referee.digests"
# The bots' seats to act in a game at a version (`referee.service.bots`): on their own
# queue, `<REFEREE_QUEUE>.bots`, so that a bot thinking for seconds never holds up a
# decision; and the sweep that enqueues again a bot's turn whose task was lost.
BOT = "referee.bot"
BOT_SWEEP = "referee.bot_sweep"
# Open games: those whose time ran out expire, and standing seeks are topped up
# (`referee.service.standing_seeks`).
SEEKS = "referee.seeks"
# Ratings (`referee.service.rating.rate_finished`): every finished game not taken in
# yet is, in order; enqueued once a game's last move is committed, and swept.
RATINGS = "referee.ratings"
# Finished games' cached states and old deliveries dropped after REFEREE_KEEP_DAYS
# (`referee.service.trimming`).
TRIM = "referee.trim"
# Outbound delivery (mail, webhooks): its own queue, `<REFEREE_QUEUE>.delivery`,
# so a slow recipient never holds up a decision.
DELIVERY = (DELIVER,)
# The periodic sweeps: pending submissions, deadlines, digests, bots, open games,
# ratings, trimming, due mail and webhooks.
SWEEPS = (SWEEP, DEADLINES, DIGESTS, BOT_SWEEP, SEEKS, RATINGS, TRIM, *DELIVERY)
# Time limits of every task (s): the soft one raises inside the task, the
# hard one kills its pool process. Deciding takes milliseconds; a delivery
# task stops claiming after a minute and each webhook post has its own
# deadline; both stay below the broker's visibility timeout (300 s), after
# which an unacknowledged task would be handed out again.
SOFT_TIME_LIMIT = 180
HARD_TIME_LIMIT = 240

# How long (s) at most a deciding task waiting to start keeps the submissions recorded
# meanwhile from sending tasks of their own (`Queue.enqueue_decisions`): a task the
# broker lost holds up later submissions no longer than this.
WANTED_FOR = 2

_log = logging.getLogger(__name__)

# Tasks waiting for the embedded default's background thread (`enqueue_apart`);
# beyond it, more are dropped: a flood must not take the process's memory.
BACKGROUND_KEPT = 1000

# Runs a task in this process: its name and arguments.
Run = Callable[[str, tuple[Any, ...]], Any]
Heard = Callable[[float], "dict[str, Any] | bool"]


def celery_settings(chosen: Settings) -> dict[str, Any]:
    broker = chosen.redis_url
    return dict(
        broker_url=broker or "memory://",
        task_always_eager=not broker,
        task_ignore_result=True,
        # A task is acknowledged once it has run, and requeued if its worker
        # dies: deciding is idempotent, so running one twice is harmless.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=chosen.queue,
        task_routes={
            **{task: {"queue": chosen.delivery_queue} for task in DELIVERY},
            BOT: {"queue": chosen.bots_queue},
        },
        task_soft_time_limit=SOFT_TIME_LIMIT,
        task_time_limit=HARD_TIME_LIMIT,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": 300},
        worker_hijack_root_logger=False,
        # What `referee beat` sends; used only where REFEREE_SWEEPS=beat.
        beat_schedule={task: {"task": task, "schedule": chosen.sweep_every} for task in SWEEPS},
    )


class Queue:
    """This process's way to the tasks: a broker (`REDIS_URL`), or `run` right here."""

    def __init__(self, chosen: Settings, run: Run) -> None:
        self.settings = chosen
        self.eager = not chosen.redis_url
        self._run = run
        # The Celery app that sends to the broker (and that a worker runs).
        self.celery = Celery("referee")
        self.celery.conf.update(celery_settings(chosen))
        self._redis: list[redis.Redis] = []
        # What hears of changed games in this process (`listen_changes`).
        self._change_hooks: list[Callable[[str | None], None]] = []
        self._listeners: list[_Listener] = []
        self._listeners_lock = threading.Lock()
        # The embedded default's delivery threads, woken by `deliver_soon`.
        self._delivery_wanted: list[threading.Event] = []
        # The embedded default's background threads (`enqueue_apart`), one per lane,
        # each made on first use, with the process that made it.
        self._background: dict[str, tuple[int, queue.Queue[tuple[str, tuple[Any, ...]]]]] = {}
        self._background_lock = threading.Lock()

    def enqueue(self, name: str, *args: Any) -> None:
        """Run task `name` soon: on a worker, or right here in the embedded default."""
        if self.eager:
            self._run(name, args)
        else:
            self.celery.send_task(name, args=args)

    def enqueue_decisions(self, submission_ids: Sequence[str]) -> None:
        """Have recorded submissions decided soon: each right here in the embedded default.

        With a broker, a deciding task is sent only when none is waiting to
        start: a task decides its own submission, then every submission
        pending that no one holds, a batch a transaction
        (`referee.service.deciding.decide`), so under load one task serves
        many moves instead of one each. The mark that a task waits
        (`decisions_taken` clears it as the task starts) expires after
        `WANTED_FOR` seconds; the sweep finds what a lost task left.
        """
        if self.eager:
            for submission_id in submission_ids:
                self._run(DECIDE, (submission_id,))
            return
        if not submission_ids:
            return
        first = submission_ids[0]
        waiting = self._decisions_wanted()
        try:
            sent_already = not self.client().set(waiting, first, nx=True, ex=WANTED_FOR)
        except redis.RedisError:
            sent_already = False
        if sent_already:
            return
        try:
            self.celery.send_task(DECIDE, args=(first,))
        except Exception:
            # The next submission must not count on a task that was never sent.
            with suppress(redis.RedisError):
                self.client().delete(waiting)
            raise

    def decisions_taken(self) -> None:
        """Say that a deciding task started: a submission recorded after this sends a
        task of its own."""
        if self.eager:
            return
        try:
            self.client().delete(self._decisions_wanted())
        except redis.RedisError:
            # Deciding goes on: the mark lapses by itself (`WANTED_FOR`).
            _log.warning("could not clear the mark of a deciding task waiting", exc_info=True)

    def _decisions_wanted(self) -> str:
        # Named by the queue, as the decisions' channel is (`decided_channel`).
        return f"referee:decisions-wanted:{self.settings.queue}"

    def enqueue_apart(self, name: str, *args: Any, lane: str = "background") -> None:
        """Run task `name` soon, never in the calling thread: on a worker, or in the
        embedded default on this process's background thread for `lane`, one task
        after another (the bots have a lane of their own, so that a bot thinking
        never holds up a sign-in mail)."""
        if not self.eager:
            self.celery.send_task(name, args=args)
            return
        try:
            self._background_tasks(lane).put_nowait((name, args))
        except queue.Full:
            _log.warning("task %s dropped: %d tasks wait already", name, BACKGROUND_KEPT)

    def _background_tasks(self, lane: str) -> queue.Queue[tuple[str, tuple[Any, ...]]]:
        with self._background_lock:
            # A forked child has the queue but not the thread: it makes its own.
            found = self._background.get(lane)
            if found is None or found[0] != os.getpid():
                tasks: queue.Queue[tuple[str, tuple[Any, ...]]] = queue.Queue(BACKGROUND_KEPT)
                self._background[lane] = (os.getpid(), tasks)

                def loop() -> None:
                    while True:
                        name, args = tasks.get()
                        try:
                            self._run(name, args)
                        except Exception:
                            _log.exception("background task %s failed", name)
                        finally:
                            tasks.task_done()

                name = f"referee-{lane}"
                threading.Thread(target=loop, name=name, daemon=True).start()
            return self._background[lane][1]

    def idle(self, lane: str = "background") -> bool:
        """Whether no task waits or runs on the embedded default's `lane` (tests wait on it)."""
        found = self._background.get(lane)
        return found is None or found[1].unfinished_tasks == 0

    def deliver_soon(self) -> None:
        """Have the outbox sent soon: by the delivery queue's workers, or, in the embedded
        default, by this process's delivery threads (`start_delivery`), never here."""
        if not self.eager:
            for channel in CHANNELS:
                self.celery.send_task(DELIVER, args=(channel,))
            return
        for wanted in self._delivery_wanted:
            wanted.set()

    def client(self) -> redis.Redis:
        if not self._redis:
            url = self.settings.redis_url
            assert url is not None, "announcements need a broker"
            self._redis.append(redis.Redis.from_url(url))
        return self._redis[0]

    def decided_channel(self) -> str:
        """The channel this deployment's decisions are announced on.

        Redis's publish/subscribe ignores the database number, so on a fixed
        name deployments sharing one Redis (other database numbers, other
        queues) would hear each other's decisions: every web process would
        read all their traffic, and a test's or a staging stack's decisions
        would reach production's listeners. The name holds the database number
        and the queue name (`REFEREE_QUEUE`), which tell deployments apart.
        """
        database = self.client().connection_pool.connection_kwargs.get("db", 0)
        return f"referee:decided:{database}:{self.settings.queue}"

    def announce_decided(self, decisions: Sequence[dict[str, Any]]) -> None:
        """Tell whoever waits on a submission (`?wait=`) how it was decided.

        Each of `decisions` holds a submission's `id` and the fields a decision
        sets (status, code, reason, seq, decided_at), so a waiting request can
        answer without reading the submission again; and `game_id`, so that
        the followers of a game (`GET .../events`) hear of an accepted move on
        the same message. A batch's decisions go in one message: every web
        process reads every message.
        """
        if not self.eager:
            message = json.dumps(list(decisions), separators=(",", ":"))
            self.client().publish(self.decided_channel(), message)
            return
        for decided in decisions:
            if decided.get("status") == "accepted" and decided.get("game_id"):
                # Decided in this very process: its followers are told at once.
                self.tell_changed(str(decided["game_id"]))

    def announce_changed(self, game_id: str) -> None:
        """Tell the followers of a game that it changed outside a decision (a timeout)."""
        self.announce_decided([{"game_id": game_id, "status": "accepted"}])

    def listen_changes(self, hook: Callable[[str | None], None]) -> None:
        """Have `hook(game_id)` called on each announced change of a game, in this process.

        `hook(None)` says announcements may have been lost (the subscription
        was just made or made again): read every followed game once more. With
        a broker this starts the process's one subscription; in the embedded
        default the hooks are called by the decision itself.
        """
        self._change_hooks.append(hook)
        if not self.eager:
            self._listener()

    def hearing_changes(self) -> bool:
        """Whether announcements reach this process now (the subscription is up, or none
        is needed)."""
        if self.eager:
            return True
        return self._listener().subscribed.is_set()

    def tell_changed(self, game_id: str | None) -> None:
        for hook in list(self._change_hooks):
            try:
                hook(game_id)
            except Exception:
                _log.exception("a follower of game changes failed")

    def _listener(self) -> _Listener:
        with self._listeners_lock:
            # A forked child (a gunicorn worker) has the list but not the thread.
            if not self._listeners or self._listeners[0].pid != os.getpid():
                self._listeners[:] = [_Listener(self)]
            return self._listeners[0]

    @contextmanager
    def decided_signal(self, submission_id: str) -> Iterator[Heard]:
        """Listen for `announce_decided` of one submission; yields `wait(seconds)`.

        `wait` returns the announced decision, True when the caller should read
        the database (woken without one), or False when `seconds` passed.
        Listen before enqueueing, so an announcement is not missed. In the
        embedded default decisions are made before the request goes on, so
        `wait` only sleeps.
        """
        if self.eager:
            yield lambda seconds: threading.Event().wait(seconds)
            return
        listener = self._listener()
        waiter = _Waiter(submission_id)
        listener.add(waiter)

        def wait(seconds: float) -> dict[str, Any] | bool:
            if not waiter.event.wait(seconds):
                return False
            waiter.event.clear()
            return waiter.decided or True

        try:
            yield wait
        finally:
            listener.remove(waiter)

    def sweeps_in_workers(self) -> bool:
        """Whether each worker runs the sweeps itself (`REFEREE_SWEEPS=worker`, the default).

        With `REFEREE_SWEEPS=beat` one `referee beat` process (Celery beat) sends
        them instead, and workers only run tasks.
        """
        return self.settings.sweeps == "worker"

    def start_sweeper(self) -> threading.Thread:
        """A daemon thread that enqueues the sweeps every `REFEREE_SWEEP_EVERY` seconds.

        Like Celery beat, but inside the worker (or `referee serve` alone): the
        sweeps for pending submissions, due outbox rows and deadlines are all
        idempotent, so a sweeper per worker does no harm. Deadlines live in the
        database; nothing waits on the broker with a long ETA. In the embedded
        default the tasks run on this thread, except delivery, which has threads
        of its own (`start_delivery`): a slow recipient must not stop the sweeps.
        """
        if self.eager:
            self.start_delivery()

        pause = threading.Event()
        sweeps = [task for task in SWEEPS if not (self.eager and task in DELIVERY)]
        # One sweep at a time, spread over the period: all at once, they would take every
        # pool process of the worker together, and moves would wait behind them.
        apart = self.settings.sweep_every / len(sweeps)

        def loop() -> None:
            for task in itertools.cycle(sweeps):
                if pause.wait(apart):
                    return
                try:
                    self.enqueue(task)
                except Exception:
                    _log.exception("sweep %s could not be enqueued; trying again later", task)

        thread = threading.Thread(target=loop, name="referee-sweeper", daemon=True)
        thread.start()
        return thread

    def start_delivery(self) -> list[threading.Thread]:
        """The embedded default's delivery: a thread per channel (mail, webhooks), each
        running its task every `REFEREE_SWEEP_EVERY` seconds and whenever `deliver_soon`
        asks. Apart from the request threads that decide and from the sweeper."""
        threads = []
        for channel in CHANNELS:
            wanted = threading.Event()
            self._delivery_wanted.append(wanted)

            def loop(channel: str = channel, wanted: threading.Event = wanted) -> None:
                while True:
                    wanted.wait(self.settings.sweep_every)
                    wanted.clear()
                    try:
                        self._run(DELIVER, (channel,))
                    except Exception:
                        _log.exception("delivery (%s) failed; trying again later", channel)

            name = f"referee-deliver-{channel}"
            thread = threading.Thread(target=loop, name=name, daemon=True)
            thread.start()
            threads.append(thread)
        return threads


class _Listener:
    """One subscription to the decisions per process, handing each to the requests awaiting it.

    A subscription per waiting request cost a connection and two round
    trips each. While Redis is away the thread reconnects every half
    second; the waiters read the database after each slice of waiting in
    the meantime, and are woken to read it once more when it is back, as
    announcements made in the gap are lost.
    """

    def __init__(self, queue: Queue) -> None:
        self.queue = queue
        self.lock = threading.Lock()
        self.waiters: dict[str, list[_Waiter]] = {}
        self.subscribed = threading.Event()
        self.pid = os.getpid()
        threading.Thread(target=self.run, name="referee-decided", daemon=True).start()

    def add(self, waiter: _Waiter) -> None:
        with self.lock:
            self.waiters.setdefault(waiter.submission_id, []).append(waiter)

    def remove(self, waiter: _Waiter) -> None:
        with self.lock:
            found = self.waiters.get(waiter.submission_id, [])
            if waiter in found:
                found.remove(waiter)
            if not found:
                self.waiters.pop(waiter.submission_id, None)

    def run(self) -> None:
        while True:
            try:
                self.listen()
            except Exception as error:
                _log.warning("lost the decisions channel (%s); polling until it is back", error)
            time.sleep(0.5)

    def listen(self) -> None:
        pubsub = self.queue.client().pubsub()  # type: ignore[no-untyped-call]
        try:
            pubsub.subscribe(self.queue.decided_channel())
            while True:
                message = pubsub.get_message(timeout=30)
                if message is None:
                    continue
                if message["type"] == "subscribe":
                    self.subscribed.set()
                    self.wake_all()
                elif message["type"] == "message":
                    announced = json.loads(message["data"])
                    # One decision alone is how a worker of an earlier version says it.
                    for decided in announced if isinstance(announced, list) else [announced]:
                        self.dispatch(decided)
        finally:
            self.subscribed.clear()
            with suppress(redis.RedisError):
                pubsub.close()

    def dispatch(self, decided: dict[str, Any]) -> None:
        with self.lock:
            found = list(self.waiters.get(decided.get("id", ""), ()))
        for waiter in found:
            waiter.decided = decided
            waiter.event.set()
        if decided.get("status") == "accepted" and decided.get("game_id"):
            self.queue.tell_changed(str(decided["game_id"]))

    def wake_all(self) -> None:
        # (Re)subscribed: what was announced before is lost, so every
        # waiter reads the database once more.
        with self.lock:
            found = [waiter for waiters in self.waiters.values() for waiter in waiters]
        for waiter in found:
            waiter.event.set()
        self.queue.tell_changed(None)


class _Waiter:
    __slots__ = ("decided", "event", "submission_id")

    def __init__(self, submission_id: str) -> None:
        self.submission_id = submission_id
        self.event = threading.Event()
        self.decided: dict[str, Any] | None = None
