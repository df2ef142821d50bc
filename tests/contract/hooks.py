"""Schemathesis hooks of the contract run (loaded by the CLI through SCHEMATHESIS_HOOKS).

The run is authenticated as Acme's owner while Other Org has the same kinds of objects. The path
parameters are drawn from fuzzed ids, Acme's real ids and Other Org's ids, so that the
operations reach real objects of both; `foreign_objects_are_404` then fails any answer other
than a 404 for an object of Other Org. The ids come from `tests.contract.seed` through the
AVIA_FUZZ_IDS environment variable.
"""

from __future__ import annotations

import json
import os
from typing import Any

import schemathesis
from hypothesis import strategies as st

_IDS = json.loads(os.environ.get("AVIA_FUZZ_IDS", '{"ours": {}, "foreign": {}}'))
OURS: dict[str, list[int]] = _IDS["ours"]
FOREIGN: dict[str, list[int]] = _IDS["foreign"]


def _with(ids: dict[str, list[int]], value: dict[str, Any]) -> st.SearchStrategy:
    known = [name for name in value if name in ids]
    if not known:
        return st.just(value)
    return st.fixed_dictionaries(
        {
            name: st.sampled_from(ids[name]) if name in ids else st.just(v)
            for name, v in value.items()
        }
    )


@schemathesis.hook
def flatmap_path_parameters(ctx: Any, path_parameters: dict[str, Any] | None) -> Any:
    if not path_parameters:
        return st.just(path_parameters)
    # Acme's ids twice: most of its objects refuse most schema-valid bodies (a draft is not
    # reviewed, a question code is not a file question), so they are drawn more often for every
    # operation to be served at least once.
    ours = _with(OURS, path_parameters)
    return st.one_of(st.just(path_parameters), ours, ours, _with(FOREIGN, path_parameters))


@schemathesis.check
def foreign_objects_are_404(ctx: Any, response: Any, case: Any) -> bool | None:
    """Another organization's object is a 404, whatever the method and the body."""
    parameters = case.path_parameters or {}
    foreign = [
        name
        for name, value in parameters.items()
        if value in FOREIGN.get(name, []) and value not in OURS.get(name, [])
    ]
    if foreign and response.status_code != 404:
        raise AssertionError(
            f"{case.method} {case.formatted_path}: another organization's "
            f"{', '.join(foreign)} answered {response.status_code}, not 404"
        )
    return None
