"""Writes for assessments: every change to tenant data in this app goes through here, one
module per concern — `vendors`, `answers` (assessments and their answers), `evidence`,
`vendor_links`, `submission` (submission and scoring requests), `reviews` (reviews and risk
decisions) — and `guards`, the checks they all apply first. Import each service from its module.

Keyword-only, typed, atomic; validation happens before anything is saved, and a request with
any error saves nothing. Scoring is queued by its task's name once the transaction commits
(`core.queueing.publish_on_commit`), never from inside an open transaction.
"""
