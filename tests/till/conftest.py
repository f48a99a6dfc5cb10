from tests.dashboard.conftest import api, clock, service  # noqa: F401 - the API client over a running hub
