"""Turn signals: a turn's end and its streamed text, for watchers in any process.

Every door (the HTTP API, its SSE streams, A2A, MCP) is served by whichever runtime a
request reaches; with a shared store the turn may run in another one. The rows in the
store are the truth — a door always reads them — and these signals only say *when* to
read, and carry the text a model streams (which the store keeps only once the call is
done):

* **In one process** the scheduler signals each turn whose terminal state it commits
  (:meth:`TurnSignals.finished`), waking the doors following that turn
  (:meth:`TurnSignals.follow`).
* **Across processes**, a store that can carry signals (a :class:`TurnSignalBus`:
  toolang-store-postgres, over ``NOTIFY``) links the runtimes. A door following a turn
  asks the others about it (a ``watch`` signal, renewed every ``RENEW_SECONDS`` while
  someone follows). The runtime running that turn then sends its streamed text and, at
  its commit, ``finished``; a ``watch`` arriving after the turn ended here is answered
  with ``finished`` at once (the ends of the last ``RECENT`` turns are kept), so a turn
  ending between a door's look at the store and its ask is not missed.

Signals go out in batches, ``FLUSH_SECONDS`` after the first one waiting. Nothing is
sent for a turn nobody asked about. A lost signal costs latency, never an answer: the
doors also read the store on their own schedule. Text carries its offset in its model
call, so a watcher gets each part once however often it is sent (a renewed ``watch`` is
answered with the call's text so far).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, Literal, Protocol, runtime_checkable

import attrs
import structlog

from toolang_core.errors import describe_exception
from toolang_core.ids import new_id

if TYPE_CHECKING:
    from toolang_core.runtime_view import RuntimeView
    from toolang_core.turn.streaming import TurnStreams

log = structlog.get_logger("toolang.turn.signals")

STATE_KEY: Final = "toolang:turn_signals"
WATCH_SECONDS: Final = 30.0
"""How long a runtime sends a turn's signals after the last ``watch`` for it."""
RENEW_SECONDS: Final = 10.0
"""How often a runtime repeats its ``watch`` of a turn it still follows."""
FLUSH_SECONDS: Final = 0.02
RECENT: Final = 1024

SignalKind = Literal["watch", "text", "finished"]


@attrs.frozen
class TurnSignal:
    """One signal about one turn: ``watch`` (someone follows it: send its signals),
    ``text`` (``text`` streamed by model call ``call``, starting at offset ``at`` of the
    call's text) or ``finished`` (its terminal state is committed: read it)."""

    kind: SignalKind
    turn_id: str
    call: str = ""
    at: int = 0
    text: str = ""


@runtime_checkable
class TurnSignalBus(Protocol):
    """What a store shared by several runtimes may offer to carry turn signals between
    them (optional: a store without it links no processes, and doors read the store)."""

    def send_turn_signals(self, sender: str, signals: Sequence[TurnSignal]) -> None:
        """Send ``signals`` (in order) to every runtime listening, this one included;
        ``sender`` names this runtime's hub. May raise: a signal is a hint."""
        ...

    def receive_turn_signals(
        self, deliver: Callable[[str, Sequence[TurnSignal]], None] | None
    ) -> None:
        """Hand the signals other runtimes send to ``deliver(sender, signals)``, on the
        event loop of the runtime's wake-up listener (set before :meth:`listen
        <toolang_core.store.protocol.ExecutionStore.listen>`; ``None`` stops)."""
        ...


class Follow:
    """One door following one turn; close it (or use ``with``) when done."""

    def __init__(self, hub: TurnSignals, turn_id: str) -> None:
        self.turn_id = turn_id
        self._hub = hub
        self._future: asyncio.Future[None] | None = None

    def armed(self) -> asyncio.Future[None]:
        """A future done at the next signal that the turn ended (arm it before reading
        the store: an end in between still resolves it)."""
        if self._future is None or self._future.done():
            self._future = asyncio.get_running_loop().create_future()
        return self._future

    def _signal(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)

    async def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a signal; whether one came."""
        future = self.armed()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(future), timeout)
        return future.done()

    def close(self) -> None:
        self._hub._unfollow(self)

    def __enter__(self) -> Follow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class TurnSignals:
    """The runtime's turn signals (one per runtime: :meth:`of`)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.node = new_id()
        """This hub's name on the bus (its own signals come back and are ignored)."""
        self._clock = clock
        self._bus: TurnSignalBus | None = None
        self._streams: TurnStreams | None = None
        self._follows: dict[str, set[Follow]] = {}
        self._interest: dict[str, int] = {}
        """Turns followed or watched here (count), asked about on the bus."""
        self._asked: dict[str, float] = {}
        self._watched: dict[str, float] = {}
        """Turns other runtimes follow: until when to send their signals."""
        self._ended: OrderedDict[str, None] = OrderedDict()
        self._outbox: list[TurnSignal] = []
        self._flusher: asyncio.Task[None] | None = None
        self._kick: asyncio.Event | None = None

    @staticmethod
    def of(runtime: RuntimeView) -> TurnSignals:
        """The runtime's one instance, created on first use."""
        return runtime.plugin_state(STATE_KEY, TurnSignals)

    @property
    def linked(self) -> bool:
        """Whether a bus links this runtime to others (signals cross processes)."""
        return self._bus is not None

    # -- the bus -------------------------------------------------------------------------

    def attach(self, bus: TurnSignalBus) -> None:
        """Link to the other runtimes of a shared store (the run's start)."""
        self._bus = bus
        bus.receive_turn_signals(self._receive)

    async def detach(self) -> None:
        """Unlink (the run's end): what waits to be sent is sent first."""
        bus, self._bus = self._bus, None
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(BaseException):
                await self._flusher
            self._flusher = None
        if bus is not None:
            self._send(bus)
            bus.receive_turn_signals(None)
        self._watched.clear()
        self._asked.clear()

    def _queue(self, signal: TurnSignal) -> None:
        if self._bus is None:
            return
        self._outbox.append(signal)
        if self._flusher is None or self._flusher.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop here (a thread): sent with the next one
                return
            self._kick = asyncio.Event()
            self._flusher = loop.create_task(self._flush_loop(), name="turn-signals")
        if self._kick is not None:
            self._kick.set()

    async def _flush_loop(self) -> None:
        """Send what waits, ``FLUSH_SECONDS`` after it came; renew the watches of turns
        still followed here every ``RENEW_SECONDS``."""
        kick = self._kick
        assert kick is not None
        while self._bus is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(kick.wait(), RENEW_SECONDS)
            kick.clear()
            await asyncio.sleep(FLUSH_SECONDS)
            self._renew()
            if self._bus is not None:
                self._send(self._bus)
            if not self._interest and not self._watched and not self._outbox:
                return

    def _send(self, bus: TurnSignalBus) -> None:
        batch, self._outbox = self._outbox, []
        if not batch:
            return
        try:
            bus.send_turn_signals(self.node, batch)
        except Exception as exc:  # a hint: the doors read the store anyway
            log.debug("turn_signals.send_failed", error=describe_exception(exc))

    def _renew(self) -> None:
        now = self._clock()
        for turn_id in self._interest:
            if now - self._asked.get(turn_id, -RENEW_SECONDS) >= RENEW_SECONDS:
                self._asked[turn_id] = now
                self._outbox.append(TurnSignal("watch", turn_id))
        for turn_id in [t for t, until in self._watched.items() if until < now]:
            del self._watched[turn_id]

    def _receive(self, sender: str, signals: Sequence[TurnSignal]) -> None:
        if sender == self.node:
            return
        for signal in signals:
            if signal.kind == "watch":
                self._watch_asked(signal.turn_id)
            elif signal.kind == "text":
                if self._streams is not None and signal.turn_id in self._interest:
                    self._streams.relay(signal.turn_id, signal.call, signal.at, signal.text)
            elif signal.kind == "finished":
                self._wake(signal.turn_id)

    def _watch_asked(self, turn_id: str) -> None:
        if turn_id in self._ended:
            self._queue(TurnSignal("finished", turn_id))
            return
        self._watched[turn_id] = self._clock() + WATCH_SECONDS
        so_far = self._streams.so_far(turn_id) if self._streams is not None else None
        if so_far is not None:  # the call in progress, from its start: kept once
            self._queue(TurnSignal("text", turn_id, so_far[0], 0, so_far[1]))

    # -- what happens here -----------------------------------------------------------------

    def finished(self, turn_ids: Sequence[str]) -> None:
        """The terminal states of ``turn_ids`` are committed (by this runtime)."""
        for turn_id in turn_ids:
            self._wake(turn_id)
            if self._bus is None:
                continue
            self._ended[turn_id] = None
            if len(self._ended) > RECENT:
                self._ended.popitem(last=False)
            if self._watched.pop(turn_id, None) is not None:
                self._queue(TurnSignal("finished", turn_id))

    def text(self, turn_id: str, call: str, at: int, text: str) -> None:
        """Model call ``call`` of ``turn_id``, running here, showed ``text`` at ``at``."""
        if turn_id in self._watched:
            self._queue(TurnSignal("text", turn_id, call, at, text))

    def _wake(self, turn_id: str) -> None:
        for follow in self._follows.get(turn_id, ()):
            follow._signal()

    # -- who follows here ----------------------------------------------------------------

    def follow(self, turn_id: str) -> Follow:
        """Follow ``turn_id``: its end signalled here or in another runtime wakes
        :meth:`Follow.wait`. Close the follow when done."""
        follow = Follow(self, turn_id)
        self._follows.setdefault(turn_id, set()).add(follow)
        self.interested(turn_id)
        return follow

    def _unfollow(self, follow: Follow) -> None:
        follows = self._follows.get(follow.turn_id)
        if follows is not None and follow in follows:
            follows.discard(follow)
            if not follows:
                del self._follows[follow.turn_id]
            self.uninterested(follow.turn_id)

    def interested(self, turn_id: str) -> None:
        """Someone here follows or watches ``turn_id``: ask the others about it."""
        self._interest[turn_id] = self._interest.get(turn_id, 0) + 1
        if self._bus is not None and self._interest[turn_id] == 1:
            self._asked[turn_id] = self._clock()
            self._queue(TurnSignal("watch", turn_id))

    def uninterested(self, turn_id: str) -> None:
        left = self._interest.get(turn_id, 0) - 1
        if left > 0:
            self._interest[turn_id] = left
        else:
            self._interest.pop(turn_id, None)
            self._asked.pop(turn_id, None)
