"""The statistics of the prefix-cache check (probe-v2.md): the three one-sided Mann-Whitney U
tests, the verdict of one look at the timings, and the sequential sampling that looks again
every few samples with α split over the planned looks.

Apart from `probes.checks`, which sends the requests, because this is the part that decides
between `shared` and `isolated`: it takes timings in and gives a verdict out, and its error
rates are measured on synthetic timings (tests/probes/test_verdicts.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy.stats import mannwhitneyu

from .check_context import STOPPED, CheckFailed
from .result import INCONCLUSIVE, TimingSamples

SIGNIFICANCE = 0.01  # α
FAR_FROM_SIGNIFICANT = 0.05
# `isolated` needs the control to show the cache at α/10: an endpoint whose own cache barely
# shows cannot tell us that another tenant's requests did not use it. The third test (B's hits
# slower than A's) is held to α/10 too, stricter than probe-v2.md's α (so it still meets it):
# on a shared cache B's and A's hits come from one cache and differ only by chance, and at α
# chance alone called 1 of 1,000 random shared caches `isolated`; at α/10, 5 of 10,000 very
# noisy ones (tests/probes/test_verdicts.py). A real per-tenant cache separates B's hits from
# A's as clearly as the control does, so nothing is lost.
CONTROL_STRICTNESS = 10
FIRST_LOOK_SAMPLES, SAMPLES_PER_LOOK = 10, 5
# With fewer samples a one-sided Mann-Whitney U test cannot reach p < 0.01 even when every hit
# is faster than every miss (n = 5: p = 1/252).
MIN_SAMPLES = 5
NOT_ENOUGH_EVIDENCE = "not enough evidence either way after {samples} samples"


@dataclass(frozen=True)
class Sample:
    """One sample of both designs: times to first token in ms, unrounded."""

    cross_hit: float
    cross_miss: float
    same_hit: float
    same_miss: float


@dataclass(frozen=True)
class PrefixCacheTests:
    """The three one-sided Mann-Whitney U tests of probe-v2.md."""

    p_cross_tenant: float  # B's hits (A warmed) faster than B's misses
    p_same_tenant: float  # A's hits (A warmed) faster than A's misses: the control
    p_cross_slower_than_same: float  # B's hits slower than A's hits


def planned_looks(max_samples: int) -> tuple[int, ...]:
    """The sample counts at which the tests are made: 10, 15, 20, ... up to the maximum
    (which is always a look), or just the maximum when it is below 10."""
    first = min(FIRST_LOOK_SAMPLES, max_samples)
    looks = list(range(first, max_samples + 1, SAMPLES_PER_LOOK))
    if looks[-1] != max_samples:
        looks.append(max_samples)
    return tuple(looks)


def alpha_per_look(max_samples: int) -> float:
    """α split evenly over the planned looks (Bonferroni). Looking at the data again and again
    gives chance more tries at a small p-value; with α/K at each of K planned looks, the chance
    that any look crosses a threshold by chance is at most α whatever the looks' correlation.
    Conservative next to a group-sequential boundary, but it needs no tables and no library
    beyond scipy, and a stop forced by the budget or the time limit can take the place of the
    next planned look without spending more than α."""
    return SIGNIFICANCE / len(planned_looks(max_samples))


def _p_less(smaller: Sequence[float], larger: Sequence[float]) -> float:
    """One-sided Mann-Whitney U: are the values of `smaller` smaller than those of `larger`?
    Exact where there are no ties (times are unrounded, so ties are rare), else the normal
    approximation with scipy's tie correction."""
    tied = len(set(smaller) | set(larger)) < len(smaller) + len(larger)
    method = "asymptotic" if tied else "exact"
    return float(mannwhitneyu(smaller, larger, alternative="less", method=method).pvalue)


def prefix_cache_tests(cross: TimingSamples, same: TimingSamples) -> PrefixCacheTests:
    return PrefixCacheTests(
        p_cross_tenant=_p_less(cross.hit, cross.miss),
        p_same_tenant=_p_less(same.hit, same.miss),
        p_cross_slower_than_same=_p_less(same.hit, cross.hit),
    )


def prefix_cache_verdict(tests: PrefixCacheTests, *, alpha: float) -> str | None:
    """The verdict of one look at level `alpha`, or None to sample on.

    `shared` first: when B's hits are faster, nothing else matters. `isolated` only when the
    three tests agree: the control shows a cache (p < α/10), B's hits are slower than A's
    (p < α/10), and the cross-tenant test is far from significant. A shared cache gives B the same hits A gets,
    so the third test cannot pass on one except by chance (α). `no_cache_seen` when neither
    design is anywhere near significant."""
    if tests.p_cross_tenant < alpha:
        return "shared"
    if (
        tests.p_same_tenant < alpha / CONTROL_STRICTNESS
        and tests.p_cross_slower_than_same < alpha / CONTROL_STRICTNESS
        and tests.p_cross_tenant >= FAR_FROM_SIGNIFICANT
    ):
        return "isolated"
    if tests.p_cross_tenant >= FAR_FROM_SIGNIFICANT and tests.p_same_tenant >= FAR_FROM_SIGNIFICANT:
        return "no_cache_seen"
    return None


@dataclass(frozen=True)
class SequentialRun:
    result: str
    cross_tenant: TimingSamples
    same_tenant: TimingSamples
    looks: int
    tests: PrefixCacheTests | None
    reason: str | None


def prefix_cache_sequential(draw: Callable[[], Sample], *, max_samples: int) -> SequentialRun:
    """Draw samples until a look gives a verdict or `max_samples` is reached. `draw` sends one
    sample's six requests (or makes up timings, in tests); it may raise BudgetExceeded or
    TimeLimitReached (then one last look is made with the samples so far, in place of the next
    planned one) or CheckFailed (inconclusive, no look)."""
    looks = planned_looks(max_samples)
    alpha = alpha_per_look(max_samples)
    taken: list[Sample] = []
    made, tests, result = 0, None, None
    stopped: str | None = None

    def timings() -> tuple[TimingSamples, TimingSamples]:
        return (
            TimingSamples(tuple(s.cross_hit for s in taken), tuple(s.cross_miss for s in taken)),
            TimingSamples(tuple(s.same_hit for s in taken), tuple(s.same_miss for s in taken)),
        )

    try:
        for look_at in looks:
            while len(taken) < look_at:
                taken.append(draw())
            made += 1
            tests = prefix_cache_tests(*timings())
            result = prefix_cache_verdict(tests, alpha=alpha)
            if result is not None:
                break
    except STOPPED as stop:
        stopped = str(stop)
        if len(taken) >= MIN_SAMPLES and made < len(looks):
            made += 1
            tests = prefix_cache_tests(*timings())
            result = prefix_cache_verdict(tests, alpha=alpha)
    except CheckFailed as failure:
        cross, same = timings()
        return SequentialRun(INCONCLUSIVE, cross, same, made, tests, str(failure))
    cross, same = timings()
    if result is not None:
        return SequentialRun(result, cross, same, made, tests, None)
    reason = NOT_ENOUGH_EVIDENCE.format(samples=len(taken))
    if stopped:
        reason += f" (stopped: {stopped})"
    return SequentialRun(INCONCLUSIVE, cross, same, made, tests, reason)
