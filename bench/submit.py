#!/usr/bin/env python
"""Submit → scored, and the scoring path's throughput, with real Celery workers.

Builds a fresh portfolio (bench/common.py: assessments made by `assessments.factories` and
copied in bulk), starts a private Redis and `celery -A config worker` (prefork, two processes
unless --workers says otherwise), then measures:

- submit → scored visible, idle: one submission at a time (`assessment_submit`, as the web
  page and the API call it), then polling the database every 10 ms until the assessment reads
  "scored"; p50 / p95 over --idle submissions;
- the same under a burst: --burst submissions one right after another, each timed from its
  own submission to its own "scored";
- rescoring: runs made by `assessment_rescore` for --rescore scored assessments, scored by
  `score_assessment_runs` in chunks of --chunk (what a rescore batch's chunks do), from the
  first chunk queued to the last run finished; runs/s and failed runs (a lock must never fail
  a run).

Targets (issue 15): submit → scored p95 ≤ 1 s idle, ≤ 5 s under a burst of 50; rescore
≥ 500/s with 2 workers on PostgreSQL, ≥ 200/s on SQLite, zero failed runs.

Usage: .venv/bin/python bench/submit.py --database sqlite|postgres [--workers 2]
           [--idle 30] [--burst 50] [--rescore 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ORGANIZATION, ROOT, build_portfolio, configure, percentiles  # noqa: E402

REDIS_PORT = int(os.environ.get("AVIA_BENCH_REDIS_PORT", "6499"))
POLL_SECONDS = 0.01


def start_worker(workers: int, queue: str) -> subprocess.Popen:
    from config.celery import app

    log = open(ROOT / "artifacts" / "bench-submit-worker.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "prefork",
         "--concurrency", str(workers), "--loglevel", "WARNING", "--queues", queue,
         "--without-gossip", "--without-mingle", "--without-heartbeat",
         "--hostname", f"{queue}@bench"],
        cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not app.control.ping(destination=[f"{queue}@bench"], timeout=0.5):
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit("the worker did not start: see artifacts/bench-submit-worker.log")
    return process


def wait_until(done: callable, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit("timed out waiting for the worker")
        time.sleep(POLL_SECONDS)


def submit_latencies(member: object, assessments: list, *, burst: bool) -> list[float]:
    from assessments.models import Assessment, Channel
    from assessments.services.submission import assessment_submit

    submitted: dict[int, float] = {}
    scored: dict[int, float] = {}

    def poll() -> bool:
        waiting = [pk for pk in submitted if pk not in scored]
        now = time.perf_counter()
        for pk in Assessment.objects.filter(pk__in=waiting, status="scored").values_list(
            "pk", flat=True
        ):
            scored[pk] = now
        return len(scored) == len(submitted)

    for assessment in assessments:
        assessment_submit(assessment=assessment, actor=member.user, channel=Channel.WEB)
        submitted[assessment.pk] = time.perf_counter()  # committed: the task is queued
        if not burst:
            wait_until(poll)
    wait_until(poll)
    return [scored[pk] - submitted[pk] for pk in submitted]


def rescore_queued(member: object, assessments: list) -> list[int]:
    """Runs for a rescore of each assessment, through `assessment_rescore`."""
    from assessments.models import Channel
    from assessments.services.submission import assessment_rescore

    return [
        assessment_rescore(assessment=a, member=member, channel=Channel.WEB).pk for a in assessments
    ]


def rescore_throughput(runs: list[int], *, chunk: int) -> dict:
    """From queueing the runs in chunks (`score_assessment_runs`, what a rescore batch's
    chunks run) to the last run finished."""
    from assessments.models import RunStatus, ScoringRun
    from assessments.tasks import score_assessment_runs

    started = time.perf_counter()
    for start in range(0, len(runs), chunk):
        score_assessment_runs.delay(runs[start : start + chunk])
    finished = ScoringRun.objects.filter(
        pk__in=runs, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]
    )
    wait_until(lambda: finished.count() == len(runs))
    elapsed = time.perf_counter() - started
    failed = ScoringRun.objects.filter(pk__in=runs, status=RunStatus.FAILED).count()
    return {"runs": len(runs), "chunk": chunk, "seconds": elapsed,
            "runs_per_second": len(runs) / elapsed, "failed": failed}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--idle", type=int, default=30)
    parser.add_argument("--burst", type=int, default=50)
    parser.add_argument("--rescore", type=int, default=2000)
    parser.add_argument("--chunk", type=int, default=100)
    args = parser.parse_args()
    subprocess.run([str(ROOT / "scripts" / "redis.sh"), "start", str(REDIS_PORT)], check=True)
    os.environ["REDIS_URL"] = f"redis://127.0.0.1:{REDIS_PORT}/0"
    (ROOT / "artifacts").mkdir(exist_ok=True)
    stop = configure(args.database, "avia_bench_scoring", rebuild=True, eager=False)
    worker = None
    try:
        from accounts.models import Organization
        from accounts.tenancy import org_context_for
        from assessments.models import Assessment
        from config.celery import route_all_tasks_to

        # A portfolio of which a quarter are unsubmitted (the vendor answered through a link)
        # and a quarter scored (after remediation): enough of each for the measurements.
        needed = 4 * max(args.idle + args.burst, args.rescore) + 4
        build_portfolio(needed)
        organization = Organization.objects.get(name=ORGANIZATION)
        member = org_context_for(
            user=organization.memberships.get(role="assessor").user,
            organization_slug=organization.slug,
        )
        assessments = Assessment.objects.filter(organization=organization).order_by("pk")
        waiting = list(assessments.filter(status="sent")[: args.idle + args.burst])
        scored = list(assessments.filter(status="scored")[: args.rescore])

        # The rescore's runs are made first, their one-run messages left in a queue no worker
        # reads: the chunks below score them, as a rescore batch does.
        route_all_tasks_to({"*": {"queue": f"avia-bench-unread-{uuid.uuid4().hex[:8]}"}})
        runs = rescore_queued(member, scored)
        queue = f"avia-bench-{uuid.uuid4().hex[:8]}"
        route_all_tasks_to({"*": {"queue": queue}})
        worker = start_worker(args.workers, queue)
        idle = percentiles(submit_latencies(member, waiting[: args.idle], burst=False))
        burst = percentiles(submit_latencies(member, waiting[args.idle :], burst=True))
        rescore = rescore_throughput(runs, chunk=args.chunk)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
        stop()
        subprocess.run([str(ROOT / "scripts" / "redis.sh"), "stop", str(REDIS_PORT)], check=False)
    print(f"{args.database}, {args.workers} worker processes")
    print(f"submit → scored, idle ({args.idle}): p50 {idle[0]:.0f} ms, p95 {idle[1]:.0f} ms "
          f"(target ≤ 1000)")  # fmt: skip
    print(f"submit → scored, burst of {args.burst}: p50 {burst[0]:.0f} ms, p95 {burst[1]:.0f} ms "
          f"(target ≤ 5000)")  # fmt: skip
    print(f"rescore {rescore['runs']} in chunks of {rescore['chunk']}: "
          f"{rescore['runs_per_second']:.0f} runs/s "
          f"({rescore['seconds']:.1f} s, {rescore['failed']} failed)")  # fmt: skip
    out = ROOT / "artifacts" / f"bench-submit-{args.database}.json"
    out.write_text(json.dumps({"database": args.database, "workers": args.workers,
                               "idle_ms": idle, "burst_ms": burst, "rescore": rescore}, indent=1))  # fmt: skip
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
