"""The bound of every number that enters scoring, whatever its source: answers, startup-log
figures, config.json figures, probe figures. One place, read by answer validation
(questionnaires.validation) and by the evidence parsers (scoring.evidence.dispatch).

The rules compute in CEL's 64-bit integers: tokens x KV bytes per token, GiB per GPU x GPUs x
2^30, |log pool - declared pool| x 20. Each bound is far above any deployment and small enough
that no product of bounded values can overflow (largest: 2 x 2^31 bytes per token x 10^9 tokens
< 2^63). A larger answer is refused naming the question; a larger evidence figure leaves its
file kept as evidence and "not parsed: value out of range".

Pure Python: no Django.
"""

INTEGER_MAX = 10**12  # a trillion tokens, hours or days: anything larger is a typing mistake
TOKENS_MAX = 10**9  # a billion tokens: a hundred times the longest context offered in 2026
# About 500 times the largest real model's (a 128-layer MHA model with 128 heads of 128: 4.2M).
VALUES_PER_TOKEN_MAX = 2**31

# Answers the sizing rules multiply (named here, not flagged in the catalogue, so the published
# v1 and v2 files keep their content hashes).
INTEGER_MAXIMUM_BY_QUESTION = {
    "CTX-01": TOKENS_MAX,
    "CTX-02": TOKENS_MAX,
    "CTX-03": TOKENS_MAX,
    "USE-03": TOKENS_MAX,
    "PRF-12": 2**16,  # GiB of memory of one GPU
    "PRF-13": 2**16,  # GPUs of one serving instance
}

# Evidence figures by what they count: a log's KV pool and context, a probe's declared context
# (tokens); a model config.json's KV values per token.
EVIDENCE_MAXIMUM = {
    "tokens": TOKENS_MAX,
    "values_per_token": VALUES_PER_TOKEN_MAX,
}


def integer_maximum(code: str) -> int:
    """The largest whole number the question accepts."""
    return INTEGER_MAXIMUM_BY_QUESTION.get(code, INTEGER_MAX)


# -- catalogues uploaded by organizations (hostile until checked) ------------------------------
# One place for every size an uploaded catalogue may reach (scoring.catalogue_files checks them
# before anything is parsed further). Each is far above a real questionnaire (the shipped one: 40
# questions, 54 rules, conditions under 200 characters) and low enough that checking an upload
# and scoring with it stay fast (docs/catalogue-format.md, "Limits").
CATALOGUE_FILE_BYTES_MAX = 1024 * 1024
# Entries of a YAML file (every key, value and list item is one): counted before the file is
# read into objects, so that a file of tiny entries (10,000 rules) is refused in a fraction of a
# second instead of being built first. A 500-question bilingual questionnaire has about 25,000.
CATALOGUE_YAML_EVENTS_MAX = 100_000
CATALOGUE_SECTIONS_MAX = 50
CATALOGUE_QUESTIONS_MAX = 1000
CATALOGUE_OPTIONS_MAX = 100  # options of one question
CATALOGUE_RULES_MAX = 500
CATALOGUE_DERIVED_MAX = 20
CATALOGUE_FRAMEWORKS_MAX = 500
CATALOGUE_REFERENCES_MAX = 20  # framework references of one rule
CATALOGUE_TEXT_CHARS_MAX = 4000  # one text (help, rationale, remediation) in one language
CATALOGUE_LABEL_CHARS_MAX = 200  # titles and option labels (the database columns' size)
CATALOGUE_CODE_CHARS_MAX = 20  # section and question codes (the database columns' size)
CATALOGUE_ID_CHARS_MAX = 60  # rule ids, option codes, framework reference ids
CATALOGUE_SLUG_CHARS_MAX = 100
CATALOGUE_VERSION_CHARS_MAX = 20
# A condition (a rule's `when`, a `show_if`, a derived value): CEL has no loops and the Rust
# engine no cost limit of its own, so the cost of one evaluation is bounded statically: by its
# length, its nesting, and its comprehensions (`exists`, `all`, `map`, `filter`), the only
# construct that repeats work — at most a few, never one inside another, so one evaluation is
# at most linear in its length times the largest list it can read (a literal, or a
# multi-choice answer bounded by CATALOGUE_OPTIONS_MAX).
CONDITION_CHARS_MAX = 1000
CONDITION_NESTING_MAX = 12
CONDITION_COMPREHENSIONS_MAX = 4
# Conditions are type-checked when compiled by trying them with sample answers; an upload shares
# this many tries among all its conditions (each at least CONDITION_CHECKS_MIN: every value of
# each question it reads comes first), so that checking 500 rules takes about a second.
CATALOGUE_CONDITION_CHECKS = 60_000
CONDITION_CHECKS_MIN = 40
