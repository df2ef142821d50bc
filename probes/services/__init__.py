"""Writes of the probe, one module per concern: `setup` (the vendor's endpoint, keys and signed
authorisation), `runs` (requesting a run, executing it in the Celery task, failing it) and
`keys` (the end of a run: the test keys destroyed, then the end audited, in one place) — and
`guards`, what the set-up and the runs both check. Import each service from its module.

Nothing is sent to an endpoint without a saved set-up whose signed authorisation covers the
moment (the window) and the spend (the ceiling). Keys are encrypted at rest, never written
to the audit trail, a log or a result, and destroyed when a run finishes or fails.
"""
