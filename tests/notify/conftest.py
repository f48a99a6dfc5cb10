"""The notification API and pages run over the real hub and API of tests/dashboard."""

from tests.dashboard.conftest import api, clock, service  # noqa: F401  (fixtures)
from tests.dashboard.pages_client import pages  # noqa: F401  (fixture)
