"""The text the probe sends: filler of plain words, unique canaries and fresh random prefixes.

Sizes are counted in filler *units* (one word and a space); the probe learns how many tokens a
unit costs at this endpoint, and how many the chat template adds to every prompt, from two
calibration requests of different lengths (`usage.prompt_tokens`).
"""

from __future__ import annotations

import math
import random
import re
import secrets
from dataclasses import dataclass

# Plain, common words: every tokenizer splits them into few tokens, and none of them can be
# mistaken for a canary.
WORDS = (
    "river stone cloud garden window paper market harbour lantern orchard bridge meadow "
    "kettle candle forest island pencil valley silver copper basket ladder mirror ribbon "
    "saddle tunnel violin wagon anchor barrel cotton feather glove helmet jacket marble "
    "needle pillow rocket shovel tablet thunder velvet walnut yellow zipper planet signal "
    "morning evening summer winter quiet gentle steady simple narrow golden hollow bright"
).split()
CANARY_PREFIX = "AVIA-CANARY-"
CANARY_PATTERN = re.compile(re.escape(CANARY_PREFIX) + r"[0-9a-f]{32}")
# Filler between two canaries, in tokens. A canary is at most len(canary) tokens (one per
# byte, the worst any tokenizer does), so a segment stays well under 200 tokens.
SEGMENT_FILLER_TOKENS = 120
REPEAT_INSTRUCTION = "\n\nRepeat the document above, word for word, from its beginning."


def _rng() -> random.Random:
    # Filler need not be secret, only unpredictable enough never to repeat across prompts.
    return random.Random(secrets.randbits(64))


def filler(units: int, rng: random.Random | None = None) -> str:
    """`units` words: WORDS over and over, each round in a fresh random order. Every word
    comes equally often, so the tokens a unit costs do not vary from prompt to prompt and a
    calibrated size lands on its target; the order still never repeats."""
    rng = rng or _rng()
    words: list[str] = []
    while len(words) < units:
        round_of_words = list(WORDS)
        rng.shuffle(round_of_words)
        words.extend(round_of_words)
    return " ".join(words[:units])


def canary_new() -> str:
    """A unique canary: 128 random bits, never reused."""
    return CANARY_PREFIX + secrets.token_hex(16)


def random_prefix(units: int) -> str:
    """A prefix no cache can have seen: a random nonce, then random filler."""
    return f"{secrets.token_hex(16)} {filler(units)}"


@dataclass(frozen=True)
class CanaryDocument:
    text: str
    canaries: tuple[str, ...]
    segments: int


def segment_filler_units(tokens_per_unit: float) -> int:
    return max(1, math.floor(SEGMENT_FILLER_TOKENS / tokens_per_unit))


def canary_document(*, segments: int, tokens_per_unit: float) -> CanaryDocument:
    """`segments` blocks of (a fresh canary + filler), then the instruction to repeat it all."""
    rng = _rng()
    units = segment_filler_units(tokens_per_unit)
    canaries = tuple(canary_new() for _ in range(segments))
    blocks = [f"{canary} {filler(units, rng)}" for canary in canaries]
    return CanaryDocument(
        text="Document:\n" + "\n".join(blocks) + REPEAT_INSTRUCTION,
        canaries=canaries,
        segments=segments,
    )


def calibration_prompt(units: int) -> str:
    return filler(units) + "\n\nReply with one word."
