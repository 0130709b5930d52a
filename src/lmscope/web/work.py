"""Model work off the request threads: one queue, bounded in expected seconds of work.

Every forward pass (and every other computation of a model's size: per-position
predictions, the logit lens, an ablation) runs on the queue's own worker thread(s), in two
classes: the work of the requests a page waits for (a trace, a lens) goes ahead of background
work (each token of a generation stream, which shows its progress as it goes), so a class
generating text does not hold up everyone's views. Page requests run shortest first (a
class's first burst of traces answers its short prompts at once), those that can still answer
within ``target_s`` (2 s) of their arrival ahead of those already past it, but never so that
one passed could no longer start in time; background work runs in its order. Queued jobs of one
group run as one batch after the group's batcher: the tokens of several generation streams
(one model step reads the weights for all of them, see ``web.generation.steps_together``), or
the traces of several new short prompts (one forward pass, ``TraceStore._traces_together``),
the shortest first, up to the group's ``batch_units``. A
request that needs such work is a coroutine awaiting its job, so a thousand waiting requests
hold no thread, and the cheap requests (model facts, the step list, static files, /docs,
views of cached traces) are answered by the event loop and the ordinary thread pool, never
behind the model.

The queue is bounded by time, not by count: each job comes with its size in work units (about
floating-point operations, see ``Costs``), and ``Rate`` turns units into seconds from what the
jobs of its kind before it measured (a generated token, which reads every weight for one row
of arithmetic, takes far longer per unit than a forward pass over a prompt). A job that would
finish later than ``limit_s`` from now is refused at once with ``Busy`` (HTTP 503) and a
``Retry-After`` saying when the queue should have room; an empty queue takes any job, so a
single long one still runs. A job whose wait passes ``limit_s`` all the same (the estimate was
wrong) is withdrawn with a 503 instead of starting late. Identical concurrent jobs (the same
``key``) share one computation.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from lmscope.web.limits import Busy, ClientGone, client_gone

__all__ = ["Costs", "Job", "Rate", "Steps", "WorkQueue"]


class Rate:
    """Seconds per work unit, measured: an exponential average (in log space, so one slow
    job moves it by a factor, not to its value) of the jobs that finished."""

    def __init__(self, seconds_per_unit: float = 1e-10, overhead_s: float = 0.015):
        self.seconds_per_unit, self.overhead_s = seconds_per_unit, overhead_s
        self.measured = 0

    def seconds(self, units: float) -> float:
        return self.overhead_s + units * self.seconds_per_unit

    def observe(self, units: float, seconds: float, weight: float = 0.3) -> None:
        work = seconds - self.overhead_s
        if units <= 0 or work <= 0.002:  # too short to tell the rate from the overhead
            return
        seen = work / units
        if self.measured == 0 or weight >= 1:
            self.seconds_per_unit = seen
        else:
            log_rate = (1 - weight) * math.log(self.seconds_per_unit) + weight * math.log(seen)
            self.seconds_per_unit = math.exp(log_rate)
        self.measured += 1


@dataclass(eq=False)
class Job:
    key: Hashable | None
    fn: Callable[[], Any]
    units: float
    deadline: float  # time.monotonic() by which it must have started, at the estimate it had
    answer_by: float = math.inf  # the request's arrival + the limit (inf: no limit applies)
    target_by: float = math.inf  # the request's arrival + the queue's target_s
    background: bool = False  # runs when no page request is queued (a generated token)
    kind: str = "forward"  # whose measured rate turns its units into seconds
    together: Hashable | None = None  # queued jobs of one group may run as one batch
    payload: Any = None  # what the group's batcher reads (a generation run)
    future: Future = field(default_factory=Future)
    state: str = "queued"  # queued, running, done, withdrawn (refused or nobody waits)
    started: float = 0.0
    waiters: int = 0  # requests waiting for its value (identical ones share a job)


def seconds(value: float) -> int | float:
    """Seconds as a message shows them: 60.0 as 60, 0.5 as 0.5."""
    return int(value) if float(value).is_integer() else value


class WorkQueue:
    """Jobs run on ``workers`` threads of their own (one by default: on a CPU, parallel
    forward passes only slow each other down), each holding ``gate`` while it runs.

    Estimates are kept in units and turned into seconds at the current rate, so when the
    machine turns out slower than measured, the queue's whole backlog grows at once: the jobs
    that can no longer start in time are refused (``_shed``) instead of waiting for nothing.
    """

    MARGIN = 1.5  # a job may take this many times its estimate and still answer in time
    POLL_S = 0.25  # how often a queued request looks whether its client is still there

    def __init__(
        self,
        limit_s: float = 60.0,
        *,
        workers: int = 1,
        gate=None,
        name="model",
        target_s: float = 2.0,
    ):
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.limit_s, self.workers, self.gate, self.name = limit_s, workers, gate, name
        # the wait a page request should answer within, when the queue can manage it
        self.target_s = target_s
        self.rate = Rate()  # a forward pass's, and any kind's until that kind is measured
        self.rates: dict[str, Rate] = {"forward": self.rate}
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[Job] = deque()  # the requests a page waits for
        self._later: deque[Job] = deque()  # background work, run when _queue is empty
        self._running: set[Job] = set()
        self._by_key: dict[Hashable, Job] = {}
        self._threads: list[threading.Thread] = []
        # group -> run before a batch of that group's jobs (say, one model step for them all)
        self.batchers: dict[Hashable, Callable[[list[Job]], None]] = {}
        self.batch_units: dict[Hashable, float] = {}  # group -> most units in one batch
        # run by a worker once the queue has stood empty IDLE_S after some work (the server
        # hands the memory it kept for the next trace back to the system)
        self.on_idle: Callable[[], None] | None = None
        self._worked = False  # work ran since on_idle last did
        self.done = self.refused = self.shared = self.withdrawn = self.batched = 0
        self.cancelled = 0  # dropped before they ran: every request for them had gone

    # --- admission ----------------------------------------------------------------------------
    def backlog_s(self) -> float:
        """Expected seconds until the queue is empty (the running jobs' rest included)."""
        with self._cond:
            return self._backlog()

    def _backlog(self, background: bool = True) -> float:
        """Expected seconds of work ahead of a new job (a page request's: without the queued
        background work, which it goes ahead of)."""
        queued = sum(self._seconds(job) for job in self._queued(background))
        return (queued + self._running_rest()) / self.workers

    def _running_rest(self) -> float:
        """Expected seconds the running jobs still take, together."""
        now = time.monotonic()
        return sum(max(0.0, self._seconds(job) - (now - job.started)) for job in self._running)

    def _seconds(self, job: Job) -> float:
        return self._rate(job.kind).seconds(job.units)

    def _rate(self, kind: str) -> Rate:
        rate = self.rates.get(kind)
        return rate if rate is not None and rate.measured else self.rate

    def _queued(self, background: bool = True) -> Iterator[Job]:
        """The queued jobs, page requests by the time they must start (earliest first), then
        background work in its order."""
        yield from sorted((job for job in self._queue if job.state == "queued"), key=self._start_by)
        if background:
            yield from (job for job in self._later if job.state == "queued")

    def _latest_start(self, units: float, kind: str = "forward") -> float:
        """Seconds from now by which a job must start to answer within the limit."""
        return self.limit_s - self.MARGIN * self._rate(kind).seconds(units)

    def _busy(self, wait: float, units: float, spent: float = 0.0, kind: str = "forward") -> Busy:
        """The refusal: the work queued ahead, what the request already waited (read, checked,
        before its job was queued), and when a new request should be in time."""
        alone = self._rate(kind).seconds(units)
        if self.MARGIN * alone > self.limit_s:  # never in time behind other work: only when idle
            retry = max(1, math.ceil(round(wait, 3)))
            return Busy(
                "error.web.busy.alone",
                retry_after=retry,
                need=round(alone),
                limit=seconds(self.limit_s),
                wait=round(wait),
                retry=retry,
            )
        retry = max(1, math.ceil(round(wait - self._latest_start(units, kind), 3)))
        numbers = {"wait": round(wait), "limit": seconds(self.limit_s), "retry": retry}
        if spent >= 0.5:
            return Busy("error.web.busy.queued-waited", retry, waited=round(spent), **numbers)
        return Busy("error.web.busy.queued", retry, **numbers)

    def _start_by(self, job: Job) -> float:
        """When ``job`` must start at the latest to answer in time, at the current rate (the
        machine may have turned out slower than when it was queued)."""
        return min(job.deadline, job.answer_by - self.MARGIN * self._seconds(job))

    def submit(
        self,
        key: Hashable | None,
        units: float,
        fn: Callable[[], Any],
        arrived=None,
        *,
        background: bool = False,
        kind: str = "forward",
        together: Hashable | None = None,
        payload: Any = None,
    ) -> Job:
        """Queue ``fn`` (``units`` of work), or join the same ``key``'s job; ``Busy`` when it
        could not start in time to answer within ``limit_s`` of ``arrived`` (when the request
        came, time.monotonic(); default now). ``background`` work runs only when no other job
        is queued; ``kind`` names the rate its units are measured at. Queued jobs of one
        ``together`` group (and kind) run as one batch, after that group's batcher
        (``batchers``) has seen them all with their ``payload``s."""
        with self._cond:
            if key is not None and key in self._by_key:
                self.shared += 1
                self._by_key[key].waiters += 1
                return self._by_key[key]
            now = time.monotonic()
            spent = 0.0 if arrived is None else max(0.0, now - arrived)
            wait, latest = self._backlog(background), self._latest_start(units, kind) - spent
            idle = not (self._queue or self._later or self._running)
            if not idle and wait > latest:
                self.refused += 1
                raise self._busy(wait, units, spent, kind)
            # an idle queue takes even a job longer than the limit: it starts at once
            deadline = now + (self.limit_s if idle else latest)
            job = Job(key, fn, units, deadline, background=background, kind=kind, waiters=1)
            job.together, job.payload = together, payload
            job.target_by = now - spent + self.target_s
            if not idle:
                job.answer_by = now - spent + self.limit_s
            (self._later if background else self._queue).append(job)
            if key is not None:
                self._by_key[key] = job
            self._start_threads()
            self._cond.notify()
            return job

    async def run(
        self, key: Hashable | None, units: float, fn: Callable[[], Any], arrived=None, **options
    ):
        """``fn()``'s value, computed on the queue (``submit``'s ``options``: background,
        kind)."""
        return await self.wait(self.submit(key, units, fn, arrived, **options))

    async def wait(self, job: Job):
        """The job's value; ``Busy`` when it has not started by its deadline; ``ClientGone``
        when the request's client left while it was queued (then, if no other request waits
        for it, it never runs)."""
        result = asyncio.wrap_future(job.future)
        while True:
            left = job.deadline - time.monotonic()
            try:
                return await asyncio.wait_for(asyncio.shield(result), min(self.POLL_S, left))
            except asyncio.TimeoutError:
                if job.state != "queued":  # started: it finishes, so stop looking
                    return await result
                if time.monotonic() >= job.deadline:
                    with self._cond:
                        self._withdraw(job)  # unless it started meanwhile: then it finishes
                    return await result
                if await client_gone():
                    self._leave(job)
                    raise ClientGone() from None

    def _leave(self, job: Job) -> None:
        """One request stops waiting for ``job``; when it was the last and the job has not
        started, the job is dropped."""
        with self._cond:
            job.waiters -= 1
            if job.waiters > 0 or job.state != "queued":
                return
            job.state = "withdrawn"
            self.cancelled += 1
            self._forget(job)
            job.future.cancel()

    def _withdraw(self, job: Job) -> None:
        """Refuse a queued job (under the lock)."""
        if job.state != "queued":
            return
        job.state = "withdrawn"
        self.withdrawn += 1
        self._forget(job)
        wait = self._backlog(job.background)
        job.future.set_exception(self._busy(wait, job.units, kind=job.kind))

    def _shed(self) -> None:
        """Refuse the queued jobs that the backlog ahead of them now makes too late (under
        the lock)."""
        now, ahead, late = time.monotonic(), self._running_rest(), []
        for job in self._queued():
            if now + ahead / self.workers > self._start_by(job):
                late.append(job)
            else:
                ahead += self._seconds(job)
        for job in late:
            self._withdraw(job)

    def _forget(self, job: Job) -> None:
        with contextlib.suppress(ValueError):
            (self._later if job.background else self._queue).remove(job)
        if job.key is not None and self._by_key.get(job.key) is job:
            del self._by_key[job.key]

    # --- the workers ----------------------------------------------------------------------------
    def _start_threads(self) -> None:
        while len(self._threads) < self.workers:
            thread = threading.Thread(
                target=self._work, name=f"lmscope-{self.name}-{len(self._threads)}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _pick(self) -> Job | None:
        """The page request to run next (under the lock): the one expected to be shortest, so
        in a burst of traces the short prompts answer at once and only the long ones wait, of
        those that can still answer within ``target_s`` of their arrival when any can (a
        request already past it cannot be made prompt again, so it yields to one that can);
        unless running it first would make a request it passes miss the time that request must
        start by (its own time counted with the margin), then the one that must start first."""
        waiting = list(self._queued(background=False))
        if not waiting:
            return None
        start = time.monotonic() + self._running_rest() / self.workers
        timely = [job for job in waiting if start + self._seconds(job) <= job.target_by]
        shortest = min(timely or waiting, key=self._seconds)  # of equals, the earliest to start
        delay = self.MARGIN * self._seconds(shortest)
        for job in waiting:  # the jobs that would run before it, each delayed by its time
            if job is shortest:
                return shortest
            if 0 <= self._start_by(job) - start < delay:  # (a job already late is shed anyway)
                return waiting[0]
            start += self._seconds(job) / self.workers
        return shortest

    BATCH = 16  # at most this many jobs of one group run together
    IDLE_S = 5.0  # an empty queue this long after work is idle (see on_idle)

    def _next(self) -> list[Job]:
        """The next job to run, with the queued background jobs of its group (a batch); an
        empty list when the queue has become idle (the worker then runs ``on_idle``)."""
        with self._cond:
            while True:
                while not (self._queue or self._later):
                    if not (self._worked and self.on_idle is not None):
                        self._cond.wait()
                    elif not self._cond.wait(self.IDLE_S) and not (self._queue or self._later):
                        self._worked = False
                        return []
                job = self._pick() or (self._later or self._queue)[0]
                (self._later if job.background else self._queue).remove(job)
                if not self._start(job):
                    continue
                return [job, *self._companions(job)]

    def _companions(self, job: Job) -> list[Job]:
        """The queued jobs of ``job``'s group that run with it as one batch (under the lock):
        background work in its order, page requests shortest first, at most ``BATCH`` jobs and
        ``batch_units[group]`` units in all."""
        if job.together is None:
            return []
        queue = self._later if job.background else self._queue
        # one kind: the batch's time is measured at that kind's rate
        group = [j for j in queue if j.together == job.together and j.kind == job.kind]
        if not job.background:
            group.sort(key=self._seconds)
        room = self.batch_units.get(job.together, math.inf) - job.units
        taken = []
        for other in group:
            if len(taken) == self.BATCH - 1 or other.units > room:
                break
            queue.remove(other)
            if self._start(other):
                taken.append(other)
                room -= other.units
        return taken

    def _start(self, job: Job) -> bool:
        """Mark a job taken off the queue as running (under the lock); False when it was
        withdrawn, or is now too late to answer in time (then refused)."""
        if job.state != "queued":
            return False
        if time.monotonic() > self._start_by(job):
            self._withdraw(job)
            return False
        job.state, job.started = "running", time.monotonic()
        self._running.add(job)
        return True

    def _timed(self, fn: Callable[[], Any]) -> tuple[Any, float]:
        """(fn(), seconds it took once the gate was held)."""
        with self.gate if self.gate is not None else contextlib.nullcontext():
            begun = time.monotonic()
            value = fn()
            return value, time.monotonic() - begun

    def _work(self) -> None:
        while True:
            batch = self._next()
            if not batch:
                self._idle()
                continue
            outcomes, took = self._run(batch)
            with self._cond:
                self._worked = True
                for job, (failed, value) in zip(batch, outcomes, strict=True):
                    if failed:  # the request shows it; the worker goes on
                        job.future.set_exception(value)
                    else:
                        job.future.set_result(value)
                    job.state = "done"
                    self._running.discard(job)
                    self._forget(job)
                    self.done += 1
                if took is not None:  # a failed job says nothing about the rate
                    units = sum(job.units for job in batch)
                    self.rates.setdefault(batch[0].kind, Rate()).observe(units, took)
                self.batched += len(batch) if len(batch) > 1 else 0
                self._shed()

    def _idle(self) -> None:
        hook = self.on_idle
        if hook is not None:
            with contextlib.suppress(Exception):  # a hook's failure must not stop the worker
                hook()

    def _run(self, batch: list[Job]) -> tuple[list[tuple[bool, Any]], float | None]:
        """Each job's (failed, value or error), and the seconds the batch took (None if a
        job failed). A batch of several runs its group's batcher first; if that fails, so do
        they all (their shared work is not done)."""
        batcher = self.batchers.get(batch[0].together) if len(batch) > 1 else None

        def run_all():
            if batcher is not None:
                try:
                    batcher(batch)
                except BaseException as err:
                    return [(True, err)] * len(batch)
            outcomes = []
            for job in batch:
                try:
                    outcomes.append((False, job.fn()))
                except BaseException as err:
                    outcomes.append((True, err))
            return outcomes

        try:
            outcomes, took = self._timed(run_all)
        except BaseException as err:  # the gate refused: the model stayed busy too long
            return [(True, err)] * len(batch), None
        return outcomes, None if any(failed for failed, _ in outcomes) else took

    def calibrate(self, units: float, fn: Callable[[], Any]) -> float:
        """Run ``fn`` (``units`` of work) here, twice (the first warms up), and start the
        rate from the second; the seconds it took."""
        self._timed(fn)
        _, took = self._timed(fn)
        self.rate.observe(units, took, weight=1.0)
        return took

    def stats(self) -> dict:
        with self._cond:
            return {
                "queued": sum(1 for _ in self._queued()),
                "queued_background": sum(job.state == "queued" for job in self._later),
                "running": len(self._running),
                "backlog_s": round(self._backlog(), 3),
                "seconds_per_unit": {
                    kind: rate.seconds_per_unit for kind, rate in self.rates.items()
                },
                "done": self.done,
                "refused": self.refused,
                "shared": self.shared,
                "withdrawn": self.withdrawn,
                "cancelled": self.cancelled,
                "batched": self.batched,
            }


class Steps:
    """A sync iterator advanced one item per background job on ``queue`` (a token stream:
    each token is a job, so other requests interleave with a long run, and go first). ``next``
    is None at its end."""

    _END = object()

    def __init__(
        self, queue: WorkQueue, items: Iterator, together: Hashable | None = None, payload=None
    ):
        self.queue, self.items = queue, items
        self.together, self.payload = together, payload

    async def next(self, units: float, kind: str = "step"):
        """The next item, ``units`` of work of ``kind`` (the first, which reads the whole
        prompt, is a "forward" pass; the others may run in a batch of ``together``'s group)."""
        step = lambda: next(self.items, self._END)  # noqa: E731 - a job is a callable
        options = {}
        if kind == "step":
            options = {"together": self.together, "payload": self.payload}
        item = await self.queue.run(None, units, step, background=True, kind=kind, **options)
        return None if item is self._END else item


class Costs:
    """Work units of the jobs a served Transformer runs, from its shape alone: about
    floating-point operations, plus weights for the work that is not a matrix product
    (fitted on GPT-2 and SmolLM2 shapes on a CPU; ``Rate`` scales them to this machine)."""

    ATTENTION_WEIGHT = 600.0  # per attention score (layer x head x query x key): softmax, masks
    VOCAB_WEIGHT = 600.0  # per logit beyond its product: log-softmax, top-k, copies

    def __init__(self, model):
        c = model.config
        self.n_layer, self.n_head, self.d = c.n_layer, c.n_head, c.n_embd
        self.vocab = c.vocab_size
        # the weights every token goes through (not the embedding rows it only looks up)
        self.body = sum(p.numel() for p in model.net.parameters() if p.shape[0] != self.vocab)

    def forward(self, t: int) -> float:
        """A forward pass over ``t`` tokens (a trace, with or without its probes)."""
        return 2.0 * self.body * t + self.ATTENTION_WEIGHT * self.n_layer * self.n_head * t * t

    def logits(self, rows: int) -> float:
        """``rows`` positions read out over the whole vocabulary."""
        return rows * self.vocab * (2.0 * self.d + self.VOCAB_WEIGHT)

    def step(self, t: int) -> float:
        """One generated token after ``t`` cached ones."""
        attention = self.ATTENTION_WEIGHT * self.n_layer * self.n_head * t
        return 2.0 * self.body + attention + self.logits(1)

    @staticmethod
    def whole(model, t: int) -> float:
        """Any model (a char-RNN too) over ``t`` tokens, every output read: a generous 4
        operations per weight and token."""
        return 4.0 * sum(p.numel() for p in model.net.parameters()) * t
