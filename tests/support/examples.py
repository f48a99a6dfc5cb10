"""Hypothesis budgets: the profiles tests/conftest.py registers, and the count for costly examples.

`ci` (the default) runs 50 examples a property: enough to catch a broken rule on every run, cheap
enough for ./run fast. HYPOTHESIS_PROFILE=deep runs 500, for a change to the money or pulse rules
or a night run. A test whose examples each start a hub or a fuzzing round asks for few(n): n under
`ci`, scaled with the profile's budget.
"""

from __future__ import annotations

from hypothesis import settings

PROFILE_ENV = "HYPOTHESIS_PROFILE"
CI_EXAMPLES = 50
DEEP_EXAMPLES = 500


def register_profiles() -> None:
    # No per-example deadline: Hypothesis's default (200 ms) is a timing assertion, and a property
    # whose example ran slow because the two cores were busy elsewhere is not a broken rule (a
    # withheld Z report's property failed so in a loaded full run). Speed is a bench's figure.
    settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None)
    settings.register_profile("deep", max_examples=DEEP_EXAMPLES, deadline=None)


def few(n: int) -> int:
    """max_examples for a property whose examples are costly: n under the `ci` profile, as many
    times more as the loaded profile's budget is larger."""
    return max(1, n * settings().max_examples // CI_EXAMPLES)
