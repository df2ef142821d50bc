"""The Celery worker process the integration tests drive, and waiting for it without sleeping
longer than needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from config.celery import app as celery_app
from config.celery import route_all_tasks_to  # noqa: F401 (the tests' import)

IDLE_TIMEOUT = 30


ROOT = Path(__file__).resolve().parents[2]


def start_celery(arguments: list[str], *, environment: dict[str, str], log_path: Path):
    """`celery -A config ARGUMENTS` in a session of its own (so that killing its process group
    kills a prefork pool's children too), logging to `log_path`."""
    with log_path.open("a", encoding="utf-8") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", *arguments],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


@dataclass
class Worker:
    process: subprocess.Popen
    nodename: str
    queue: str
    log_path: Path
    redis_url: str
    arguments: list[str] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)

    def wait_until_ready(self, timeout: float = 45) -> None:
        eventually(
            lambda: celery_app.control.ping(destination=[self.nodename], timeout=0.5),
            timeout=timeout,
            what=f"the worker {self.nodename} answers a ping",
            interval=0.1,
            worker=self,
        )

    def kill(self) -> None:
        """SIGKILL the whole worker (main process and pool children): no warm shutdown, no
        message given back to the broker."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def restart(self) -> None:
        self.process = start_celery(
            self.arguments, environment=self.environment, log_path=self.log_path
        )
        self.wait_until_ready()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        tail = "\n".join(self.log_text().splitlines()[-lines:])
        return f"--- last lines of {self.log_path} ---\n{tail}"

    def send(self, run_id: int) -> str:
        """Queue `score_assessment_run(run_id)` through the broker, as a redelivery of the
        message would; returns the task id."""
        from assessments.tasks import score_assessment_run

        return score_assessment_run.apply_async(args=[run_id]).id

    def wait_for_tasks(self, *task_ids: str, timeout: float = IDLE_TIMEOUT) -> None:
        """Until the worker has logged the end (success or error) of every one of the tasks."""

        def all_finished() -> bool:
            text = self.log_text()
            return all(
                f"[{task_id}] succeeded" in text or f"[{task_id}] raised" in text
                for task_id in task_ids
            )

        eventually(
            all_finished, timeout=timeout, what=f"the worker ends tasks {task_ids}", worker=self
        )

    def is_idle(self) -> bool:
        if redis.Redis.from_url(self.redis_url).llen(self.queue):
            return False
        inspect = celery_app.control.inspect(destination=[self.nodename], timeout=2)
        for listing in (inspect.active, inspect.reserved, inspect.scheduled):
            replies = listing()
            if replies is None or replies.get(self.nodename):
                return False
        return True

    def wait_until_idle(self, timeout: float = IDLE_TIMEOUT) -> None:
        # Twice in a row: a message just taken off the queue is briefly in no list.
        eventually(
            lambda: self.is_idle() and self.is_idle(),
            timeout=timeout,
            what="the worker has no task left",
            worker=self,
        )


def eventually(
    condition: Callable[[], Any],
    *,
    timeout: float,
    what: str,
    interval: float = 0.2,
    worker: Worker | None = None,
) -> Any:
    """Poll `condition` until it returns something truthy, and return that; fail after
    `timeout` seconds (or at once if the worker died), showing the end of the worker's log."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if worker is not None and worker.process.poll() is not None:
            pytest.fail(f"the Celery worker exited while waiting until {what}\n{worker.log_tail()}")
        if time.monotonic() > deadline:
            tail = f"\n{worker.log_tail()}" if worker is not None else ""
            pytest.fail(f"gave up after {timeout:.0f} s waiting until {what}{tail}")
        time.sleep(interval)
