"""Handing work to Celery after the database change is committed, without failing the request
when the broker is down.

The row (a queued scoring run, a queued report) is the record of the work; the broker message is
only a wake-up call. If publishing fails the row stays `queued` and the sweeper
(`config.sweeper`) publishes it again once the broker answers, so a Redis outage delays work
but never loses it or turns a committed request into a 500. (The code is in `core.queueing`,
which the accounts app uses too.)
"""

from core.queueing import BROKER_ERRORS, PUBLISH_RETRY_POLICY, publish, publish_on_commit

__all__ = ["BROKER_ERRORS", "PUBLISH_RETRY_POLICY", "publish", "publish_on_commit"]
