"""Property-based API tests: schemathesis generates requests from the service's
OpenAPI document (bounded: a few examples per operation) and checks that no
response is a server error and that responses match their documented schemas."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from live_server import serving
from schemathesis.checks import not_a_server_error, response_schema_conformance, status_code_conformance

from service.app import Settings, create_app

MAX_EXAMPLES = 12


APP = create_app(Settings(max_body=200_000, max_time_limit=2.0))
schema = schemathesis.openapi.from_dict(APP.openapi())
# The coverage phase walks every keyword of every per-game position model (hundreds of
# requests, minutes); the bounded fuzzing phase stays in the default run.
schema.config.phases.coverage.enabled = False


@pytest.fixture(scope="module")
def base_url():
    with serving(APP) as url:
        yield url


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case, base_url):
    case.call_and_validate(
        base_url=base_url, timeout=60, checks=[not_a_server_error, status_code_conformance, response_schema_conformance]
    )
