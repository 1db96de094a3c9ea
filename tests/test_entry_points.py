"""One input, one message: the Python API (given the JSON parsed by
``json.loads``), the CLI (given the file) and the HTTP service (given the
body) refuse a bad position or route set with the same field and words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from fastapi.testclient import TestClient

from routecalc import api
from routecalc.cli import main as cli_main
from routecalc.errors import PositionError
from service.app import Settings, create_app

LILLIPUT = ROOT / "fixtures" / "lilliput-mildendo-ring.json"


def position() -> dict:
    data = json.loads(LILLIPUT.read_text())
    return data.get("position", data)


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(max_time_limit=5.0, processes=False, solve_threads=1))) as c:
        yield c


def solved(text: str, client: TestClient, tmp_path: Path, capsys) -> list[tuple[str, str]]:
    """(where, message) of the API's, the CLI's and the service's refusal of position ``text``."""
    with pytest.raises(PositionError) as err:
        api.solve(json.loads(text), time_limit=5)
    file = tmp_path / "position.json"
    file.write_text(text)
    assert cli_main(["solve", str(file)]) == 2
    cli = json.loads(capsys.readouterr().out)
    response = client.post("/v1/solve", content=text, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    service = response.json()
    return [(err.value.where, str(err.value)), (cli["where"], cli["error"]), (service["where"], service["error"])]


def validated(position_text: str, routes_text: str, client, tmp_path: Path, capsys) -> list[tuple[str, str]]:
    """As :func:`solved`, for a route set: ``routecalc validate`` reads two files, the service one body."""
    with pytest.raises(PositionError) as err:
        api.validate(json.loads(position_text), json.loads(routes_text))
    (tmp_path / "position.json").write_text(position_text)
    (tmp_path / "routes.json").write_text(routes_text)
    assert cli_main(["validate", str(tmp_path / "position.json"), str(tmp_path / "routes.json")]) == 2
    cli = json.loads(capsys.readouterr().out)
    body = f'{{"position": {position_text}, "routes": {routes_text}}}'
    response = client.post("/v1/validate", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    service = response.json()
    return [(err.value.where, str(err.value)), (cli["where"], cli["error"]), (service["where"], service["error"])]


def test_a_wrapper_reference_out_of_range_is_refused_by_all_three_naming_it(client, tmp_path, capsys):
    """The reference is not read, but is read within the limits, by the API too
    (it was let through: the API checked only the wrapper's position)."""
    text = json.dumps({"position": position(), "reference": {"revenue": 1e20}})
    message = "reference.revenue: number 1e+20 out of range (at most 1,000,000,000 either way)"
    assert solved(text, client, tmp_path, capsys) == [("reference.revenue", message)] * 3


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_number_of_31_digits_gets_one_message_from_all_three(client, tmp_path, capsys, sign):
    """Read from JSON text (the CLI, the service) or given parsed (the API):
    'a number of 31 digits', its sign not counted (the API said 'number of
    some 31 digits out of range', the text reader counted a minus as a digit)."""
    digits = sign + "1" * 31
    text = json.dumps(position()).replace('"trains": [', f'"trains": [{{"name": "4", "price": {digits}}}, ', 1)
    message = "trains[0].price: a number of 31 digits (at most 30)"
    assert solved(text, client, tmp_path, capsys) == [("trains[0].price", message)] * 3
    routes = f'[{{"train": {digits}, "nodes": []}}]'
    message = "routes[0].train: a number of 31 digits (at most 30)"
    assert validated(json.dumps(position()), routes, client, tmp_path, capsys) == [("routes[0].train", message)] * 3


def test_a_negative_number_of_30_digits_is_out_of_range_for_all_three(client, tmp_path, capsys):
    """30 digits and a minus: within the digits read, beyond the range."""
    routes = f'[{{"train": -{"1" * 30}, "nodes": []}}]'
    message = f"routes[0].train: number -{'1' * 30} out of range (at most 1,000,000,000 either way)"
    assert validated(json.dumps(position()), routes, client, tmp_path, capsys) == [("routes[0].train", message)] * 3


@pytest.mark.parametrize(
    "position_text, routes_text, where, message",
    [
        (None, "null", "routes", 'routes: must be a list of routes or {"routes": [...]}'),
        ("null", "[]", "position", "position: must be a JSON object"),
    ],
)
def test_a_null_position_or_routes_is_named_as_the_api_names_it(
    client, tmp_path, capsys, position_text, routes_text, where, message
):
    """A null is what the key holds, not a missing key (the service said 'routes: missing')."""
    given = json.dumps(position()) if position_text is None else position_text
    assert validated(given, routes_text, client, tmp_path, capsys) == [(where, message)] * 3


def test_a_validate_body_without_routes_says_they_are_missing(client):
    response = client.post("/v1/validate", json={"position": position()})
    assert (response.status_code, response.json()) == (422, {"error": "routes: missing", "where": "routes"})


@pytest.mark.parametrize(
    "train, message",
    [
        ('{"name": "3", "obsolete": 1.0}', "trains[0]: obsolete must be true or false, got 1.0"),
        ('{"name": "3", "multiplier": 1e3}', "trains[0]: multiplier must be at most 100, got 1000.0"),
    ],
)
def test_a_whole_number_written_with_a_fraction_is_quoted_so_by_all_three(client, tmp_path, capsys, train, message):
    """Read as the whole number it is, quoted as written (all three said 'got 1', 'got 1000')."""
    text = json.dumps(position()).replace('"trains": [', f'"trains": [{train}, ', 1)
    assert solved(text, client, tmp_path, capsys) == [("trains[0]", message)] * 3
