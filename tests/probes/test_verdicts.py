"""The prefix-cache verdicts of probe-v2.md, from synthetic timings (no endpoint): sequential
sampling, α split over the planned looks, the three tests behind `isolated`, and the figure
that matters most — a shared cache is never called `isolated`."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from probes.check_context import CheckFailed
from probes.client import BudgetExceeded
from probes.prefix_cache_statistics import (
    SIGNIFICANCE,
    PrefixCacheTests,
    Sample,
    alpha_per_look,
    planned_looks,
    prefix_cache_sequential,
    prefix_cache_tests,
    prefix_cache_verdict,
)
from probes.result import TimingSamples

MISS_MS, HIT_MS = 40.0, 5.0


def timings(
    rng: random.Random, *, cross_hit: float, same_hit: float, miss: float = MISS_MS, noise=0.1
) -> Callable[[], Sample]:
    """Draws samples whose times scatter (log-normally) around the given medians."""

    def around(median: float) -> float:
        return median * rng.lognormvariate(0, noise)

    def draw() -> Sample:
        return Sample(around(cross_hit), around(miss), around(same_hit), around(miss))

    return draw


def test_the_looks_start_at_ten_and_add_five_up_to_the_maximum():
    assert planned_looks(40) == (10, 15, 20, 25, 30, 35, 40)
    assert planned_looks(12) == (10, 12)
    assert planned_looks(8) == (8,)
    # Bonferroni: α split evenly over the planned looks.
    assert alpha_per_look(40) == pytest.approx(SIGNIFICANCE / 7)
    assert alpha_per_look(8) == SIGNIFICANCE


def test_a_clearly_shared_cache_is_called_shared_at_the_first_look():
    run = prefix_cache_sequential(
        timings(random.Random(1), cross_hit=HIT_MS, same_hit=HIT_MS), max_samples=40
    )
    assert (run.result, run.looks, len(run.cross_tenant.hit)) == ("shared", 1, 10)
    assert run.tests is not None and run.tests.p_cross_tenant < alpha_per_look(40)


def test_a_per_tenant_cache_is_called_isolated_when_all_three_tests_agree():
    run = prefix_cache_sequential(
        timings(random.Random(2), cross_hit=MISS_MS, same_hit=HIT_MS), max_samples=40
    )
    assert run.result == "isolated"
    tests = run.tests
    assert tests is not None
    assert tests.p_same_tenant < alpha_per_look(40) / 10
    assert tests.p_cross_slower_than_same < alpha_per_look(40) / 10
    assert tests.p_cross_tenant >= 0.05


def test_no_cache_at_all_is_no_cache_seen():
    run = prefix_cache_sequential(
        timings(random.Random(3), cross_hit=MISS_MS, same_hit=MISS_MS), max_samples=40
    )
    assert run.result == "no_cache_seen"


def test_isolated_needs_evidence_that_the_tenants_differ():
    """The first edition said `isolated` whenever the control was significant and the
    cross-tenant test was not. Here the cross-tenant test is not significant (B's "misses"
    were as fast as its hits, as when an engine keeps both) but B's hits are as fast as A's:
    nothing says the tenants differ, so no verdict."""
    same = TimingSamples(hit=tuple(5.0 + i / 10 for i in range(10)), miss=(40.0,) * 10)
    cross = TimingSamples(
        hit=tuple(5.05 + i / 10 for i in range(10)), miss=tuple(5.0 + i / 10 for i in range(10))
    )
    tests = prefix_cache_tests(cross, same)
    assert tests.p_cross_tenant >= 0.05 and tests.p_same_tenant < 0.001
    assert tests.p_cross_slower_than_same >= 0.01
    assert prefix_cache_verdict(tests, alpha=SIGNIFICANCE) is None


@pytest.mark.parametrize(
    ("p_cross", "p_same", "p_third", "verdict"),
    [
        (0.0001, 0.0001, 0.9, "shared"),
        (0.0001, 0.9, 0.9, "shared"),
        (0.5, 0.0001, 0.0001, "isolated"),
        (0.04, 0.0001, 0.0001, None),  # the cross-tenant test is not far from significant
        (0.5, 0.005, 0.0001, None),  # the control shows the cache, but not at α/10
        (0.5, 0.0001, 0.005, None),  # B's hits are not clearly slower than A's (α/10)
        (0.5, 0.5, 0.5, "no_cache_seen"),
        (0.5, 0.03, 0.5, None),  # a hint of a cache in the control: sample on
    ],
)
def test_each_verdict_needs_its_conditions(p_cross, p_same, p_third, verdict):
    tests = PrefixCacheTests(p_cross, p_same, p_third)
    assert prefix_cache_verdict(tests, alpha=SIGNIFICANCE) == verdict


def test_without_a_verdict_it_samples_up_to_the_maximum_and_says_why():
    # A weak cache effect in both designs: neither clearly there nor clearly absent.
    rng = random.Random(4)
    draws = 0

    def draw() -> Sample:
        nonlocal draws
        draws += 1
        return Sample(
            MISS_MS * rng.lognormvariate(-0.25, 0.8),
            MISS_MS * rng.lognormvariate(0, 0.8),
            MISS_MS * rng.lognormvariate(-0.35, 0.8),
            MISS_MS * rng.lognormvariate(0, 0.8),
        )

    found = None
    for _ in range(20):  # find a seed of this weak effect that ends without a verdict
        run = prefix_cache_sequential(draw, max_samples=20)
        if run.result == "inconclusive":
            found = run
            break
        draws = 0
    assert found is not None
    assert (len(found.cross_tenant.hit), found.looks, draws) == (20, 3, 20)
    assert found.reason == "not enough evidence either way after 20 samples"


def test_a_budget_stop_makes_one_last_look_in_place_of_the_next_planned_one():
    source = timings(random.Random(5), cross_hit=HIT_MS, same_hit=HIT_MS)
    given = 0

    def draw() -> Sample:
        nonlocal given
        if given == 7:
            raise BudgetExceeded("the next request would exceed the budget")
        given += 1
        return source()

    run = prefix_cache_sequential(draw, max_samples=40)
    assert (run.result, run.looks, len(run.cross_tenant.hit)) == ("shared", 1, 7)


def test_a_budget_stop_before_a_verdict_is_inconclusive_with_both_reasons():
    def draw() -> Sample:
        raise BudgetExceeded("the next request would exceed the budget")

    run = prefix_cache_sequential(draw, max_samples=40)
    assert run.result == "inconclusive" and run.looks == 0
    assert run.reason == (
        "not enough evidence either way after 0 samples "
        "(stopped: the next request would exceed the budget)"
    )


def test_a_failed_request_is_inconclusive_without_a_look():
    def draw() -> Sample:
        raise CheckFailed("a timed request (hit) failed (HTTP 500)")

    run = prefix_cache_sequential(draw, max_samples=40)
    assert (run.result, run.looks, run.reason) == (
        "inconclusive",
        0,
        "a timed request (hit) failed (HTTP 500)",
    )


SHARED_RUNS = 1000


def test_a_shared_cache_is_never_called_isolated():
    """The false-`isolated` rate on shared caches, over SHARED_RUNS random ones from a seeded
    generator: cache effects from strong (hits at 5 % of a miss) to none at all (hits as slow
    as misses), noise from 5 % to 100 % (log-normal σ), and each run's α split over 7 looks.
    In a shared cache B's hits come from the same cache as A's, so they are drawn alike.
    Measured: 0 of these 1,000 runs called `isolated` (95 % upper bound 0.3 %, the rule of
    three); over 10,000 runs of the same generator (seed 1) 5 were (0.05 %), every one with
    timing noise of σ ≥ 0.74 (times varying twofold), where chance made A's hits look faster
    than B's. The contract asks ≤ 1 %; the Bonferroni bound of the third test is 0.1 %."""
    rng = random.Random(20261204)
    verdicts: dict[str, int] = {}
    for _ in range(SHARED_RUNS):
        effect, noise = rng.uniform(0.05, 1.0), rng.uniform(0.05, 1.0)
        hit = MISS_MS * effect
        run = prefix_cache_sequential(
            timings(rng, cross_hit=hit, same_hit=hit, noise=noise), max_samples=40
        )
        verdicts[run.result] = verdicts.get(run.result, 0) + 1
    assert verdicts.get("isolated", 0) == 0, verdicts
    # The test has teeth: most of these caches are found, the weakest are not.
    assert verdicts["shared"] > SHARED_RUNS / 2
