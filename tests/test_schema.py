"""The JSON Schemas: shipped files current, every bundled position and every
answer form valid, and the schema agreeing with the engine where they could
part (a position the schema accepts, the engine reads; one it refuses, the
engine refuses)."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import CORPUS, ROOT
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator
from pydantic import ValidationError

from routecalc import api, load_position
from routecalc.cli import main as cli_main
from routecalc.errors import PositionError
from routecalc.model import MAX_CELLS, MAX_INT, MAX_STRING
from routecalc.schema import NAMES, generated
from routecalc.schemas import schema_text
from service import schemas as service_schemas
from service.app import Settings, create_app

FIXTURES = ROOT / "fixtures"
POSITION = Draft202012Validator(json.loads(schema_text("position")))
ANSWER = Draft202012Validator(json.loads(schema_text("answer")))


def fixture(name: str) -> dict:
    data = json.loads((FIXTURES / name).read_text())
    return data.get("position", data)


def errors(validator: Draft202012Validator, instance: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300] for e in validator.iter_errors(instance)]


@pytest.mark.parametrize("name", NAMES)
def test_shipped_schema_is_what_the_models_generate(name):
    assert schema_text(name) == generated(name), f"run: python -m routecalc.schema ({name} is stale)"


def test_schemas_are_valid_json_schemas():
    for name in NAMES:
        Draft202012Validator.check_schema(json.loads(schema_text(name)))


def test_every_fixture_fits_the_schema():
    files = sorted(FIXTURES.glob("*.json")) + sorted((FIXTURES / "maps").glob("*.json"))
    games = set()
    for path in files:
        data = json.loads(path.read_text())
        position = data.get("position", data)
        games.add(position["game"])
        assert not errors(POSITION, position), (path, errors(POSITION, position)[:3])
    assert games == {"generic", "18Ireland", "18Lilliput", "18C2C-D", "18XS", "18Cuba"}


def test_every_corpus_position_fits_the_schema():
    """Each position against its game's branch of the schema (the branch the schema's own
    discriminator picks: the others refuse it by ``game`` alone), twice as fast as the whole."""
    schema = json.loads(schema_text("position"))
    branch = {
        game: Draft202012Validator({"$ref": ref, "$defs": schema["$defs"]})
        for game, ref in schema["discriminator"]["mapping"].items()
    }
    files = sorted(CORPUS.rglob("*.json"))
    assert len(files) == 500
    for path in files:
        position = json.loads(path.read_text())["position"]
        assert not errors(branch[position["game"]], position), (path, errors(branch[position["game"]], position)[:3])


def answer_fits(answer: dict) -> dict:
    assert not errors(ANSWER, answer), errors(ANSWER, answer)[:3]
    return answer


def first_corpus(game_dir: str) -> dict:
    return json.loads(next(iter(sorted((CORPUS / game_dir).rglob("*.json")))).read_text())


def test_every_answer_form_fits_the_answer_schema():
    generic = answer_fits(api.solve(first_corpus("generic/1830"), "reference", time_limit=20))
    assert generic["routes"] and "parts" not in generic
    ireland = answer_fits(api.solve(first_corpus("18Ireland"), time_limit=20))
    assert ireland["routes"]
    lilliput = answer_fits(api.solve(fixture("lilliput-mildendo-ring.json"), time_limit=20))
    assert lilliput["revenue"] == 290
    c2c = answer_fits(api.solve(fixture("c2c-d-destination.json"), time_limit=20))
    assert c2c["connect"]["possible"] is True
    xs = answer_fits(api.solve(fixture("xs-small.json"), time_limit=20))
    assert xs["plan"] and "routes" not in xs
    cuba = answer_fits(api.solve(fixture("cuba-small.json"), time_limit=20))
    assert cuba["parts"] and cuba["sugar"]["cubes"] == 2
    fc = fixture("cuba-small.json")
    fc["company"], fc["trains"] = "FC", ["2"]
    fc.get("options", {}).pop("machines", None)
    assert answer_fits(api.solve(fc))["fc_income"]["range"] == 2


def test_the_schema_refuses_what_it_should():
    """The answer schema is strict: a key it does not describe is an error, not a pass."""
    answer = api.solve(fixture("lilliput-mildendo-ring.json"))
    assert not errors(ANSWER, answer)
    assert errors(ANSWER, {**answer, "surprise": 1})
    assert errors(ANSWER, {**answer, "status": "good"})


def engine_accepts(position: dict) -> bool:
    try:
        load_position(position)
    except PositionError:
        return False
    return True


def agree(position: dict) -> bool:
    """Schema and engine give the same verdict on ``position``; returns it."""
    by_schema = not errors(POSITION, position)
    assert by_schema == engine_accepts(position), (by_schema, errors(POSITION, position)[:2])
    return by_schema


def changed(name: str, **keys) -> dict:
    position = copy.deepcopy(fixture(name))
    position.update(keys)
    return position


@pytest.mark.parametrize(
    "name, company_null_ok",
    [
        ("1830-late.json", False),
        ("lilliput-mildendo-ring.json", False),
        ("c2c-d-destination.json", False),
        ("cuba-small.json", False),
        ("xs-small.json", True),
    ],
)
def test_company_null_only_where_the_game_has_no_companies(name, company_null_ok):
    assert agree(changed(name, company=None)) is company_null_ok


@pytest.mark.parametrize("name", ["1830-late.json", "xs-small.json", "cuba-small.json"])
def test_options_null_means_none_for_both(name):
    assert agree(changed(name, options=None)) is True


def test_schema_and_engine_agree_on_optional_keys_that_are_never_null():
    c2c = changed("c2c-d-destination.json")
    c2c["options"]["connect"] = None
    assert agree(c2c) is False
    assert agree(changed("1830-late.json", trains=[{"name": "4", "distance": None}])) is False
    assert agree(changed("1830-late.json", trains=[{"name": "4", "price": 300, "rusts_on": "D"}])) is True
    assert agree(changed("1830-late.json", axes={"x": "letter", "y": "letter"})) is False
    assert agree(changed("1830-late.json", axes=None)) is True
    assert agree(changed("xs-small.json", trains=["2"])) is False
    assert agree(changed("1830-late.json", surprise=1)) is False
    phase = fixture("1830-late.json")["phase"]
    assert agree(changed("1830-late.json", phase={**phase, "name": 5})) is False
    assert agree(changed("1830-late.json", phase={**phase, "surprise": 1})) is False
    assert agree(changed("1830-late.json", phase={"colors": phase["colors"]})) is True


def test_schema_and_engine_agree_on_whole_numbers_written_as_floats():
    """JSON Schema reads 1.0 as an integer; the engine reads it as 1 too."""
    assert agree(changed("1830-late.json", format=1.0)) is True
    assert agree(changed("1830-late.json", format=1.5)) is False
    rotated = changed("lilliput-mildendo-ring.json")
    rotated["hexes"][0]["rotation"] = 1.0
    assert agree(rotated) is True
    four = {"name": "4", "distance": 4.0, "multiplier": 2.0}
    assert agree(changed("1830-late.json", trains=[four])) is True
    cuba = changed("cuba-small.json", trains=[{"name": "5", "wagon": 2.0}])
    cuba["options"].update(fc_fee=20.0, sugar={"A5-0": 3.0}, wagons=[1.0])
    assert agree(cuba) is True
    xs = changed("xs-small.json")
    xs["options"].update(locomotive=1.0, actions=2.0)
    assert agree(xs) is True


def with_cell_id(name: str, cell_id: str) -> dict:
    position = changed(name)
    position["hexes"][0]["id"] = cell_id
    return position


def test_schema_and_engine_agree_on_the_limits():
    """The limits the engine reads a position within, as the schema states them."""
    four = {"name": "4", "distance": 4}
    assert agree(changed("1830-late.json", trains=[{**four, "multiplier": 100}])) is True
    assert agree(changed("1830-late.json", trains=[{**four, "multiplier": 101}])) is False
    group = {"nodes": ["city"], "pay": 2, "visit": 2}
    assert agree(changed("1830-late.json", trains=[{**four, "distance": [{**group, "multiplier": 101}]}])) is False
    assert agree(changed("1830-late.json", trains=["2"] * 20)) is True
    assert agree(changed("1830-late.json", trains=["2"] * 21)) is False
    cell = fixture("1830-late.json")["hexes"][0]["id"]
    assert agree(with_cell_id("1830-late.json", cell)) is True
    assert agree(with_cell_id("1830-late.json", cell[0] + "0" + cell[1:])) is False  # a leading zero


def test_schema_and_engine_agree_on_the_input_limits():
    """Strings, whole numbers and the board's size: the limits ``check_json`` and
    ``load_position`` read within, in the schema as maxLength, maximum, maxItems."""
    long = "x" * (MAX_STRING + 1)
    assert agree(changed("1830-late.json", company="x" * MAX_STRING)) is True
    assert agree(changed("1830-late.json", company=long)) is False
    phase = fixture("1830-late.json")["phase"]
    assert agree(changed("1830-late.json", phase={**phase, "name": long})) is False
    tiled = changed("1830-late.json")
    tiled["hexes"][0]["tile"] = long
    assert agree(tiled) is False
    cuba = changed("cuba-small.json")
    cuba["options"]["fc_fee"] = MAX_INT
    assert agree(cuba) is True
    cuba["options"]["fc_fee"] = MAX_INT + 1
    assert agree(cuba) is False
    bonus = {"type": "visit", "cells": [fixture("1830-late.json")["hexes"][0]["id"]], "amount": MAX_INT + 1}
    assert agree(changed("1830-late.json", options={"bonuses": [bonus]})) is False
    board = fixture("1830-late.json")["hexes"]
    assert agree(changed("1830-late.json", hexes=board[:1] * (MAX_CELLS + 1))) is False


@pytest.mark.parametrize(
    "name, cell, ok",
    [
        ("lilliput-mildendo-ring.json", {"rotation": 3}, True),
        ("lilliput-mildendo-ring.json", {"rotation": 4}, False),
        ("lilliput-mildendo-ring.json", {"neighbors": {"3": "B2"}}, True),
        ("lilliput-mildendo-ring.json", {"neighbors": {"4": "B2"}}, False),
        ("cuba-small.json", {"rotation": 5}, True),
        ("cuba-small.json", {"neighbors": {"5": "A3"}}, True),
        ("cuba-small.json", {"neighbors": {"6": "A3"}}, False),
        ("cuba-small.json", {"neighbors": {"a": "A3"}}, False),
        ("cuba-small.json", {"neighbors": {"05": "A3"}}, False),
    ],
)
def test_schema_and_engine_agree_on_the_edges_of_a_cell(name, cell, ok):
    """Squares have edges 0-3, hexagons 0-5; a neighbour key is an edge as written ("5", not "05")."""
    position = changed(name)
    position["hexes"][0].update(cell)
    assert agree(position) is ok


@pytest.mark.parametrize("name", ["0", "1000", "9999", "0+1", "0E", "1000E", "2+01", "02"])
def test_a_generic_train_name_the_engine_does_not_know_is_refused_by_both(name):
    assert agree(changed("1830-late.json", trains=[name])) is False
    assert agree(changed("1830-late.json", trains=[{"name": name}])) is False


@pytest.mark.parametrize("name", ["1", "999", "2+0", "999+999", "D", "8E", "999E"])
def test_a_generic_train_name_the_engine_knows_is_accepted_by_both(name):
    assert agree(changed("1830-late.json", trains=[name, {"name": name}])) is True


@pytest.mark.parametrize(
    "name, known",
    [
        ("1830-late.json", "4"),
        ("ireland-gswr.json", "6H"),
        ("lilliput-mildendo-ring.json", "3D"),
        ("c2c-d-destination.json", "5D"),
        ("cuba-small.json", "3+"),
    ],
)
def test_a_train_object_without_distance_names_a_catalogue_train_for_both(name, known):
    assert agree(changed(name, trains=[{"name": known}])) is True
    assert agree(changed(name, trains=[{"name": "ZZ"}])) is False


def test_a_route_without_nodes_is_refused_by_both():
    position = fixture("1830-late.json")
    request = {"position": position, "routes": [{"train": "4"}]}
    assert service_schemas.ValidateRequest.model_json_schema()  # the OpenAPI model builds
    with pytest.raises(ValidationError):
        service_schemas.ValidateRequest.model_validate(request)
    with pytest.raises(PositionError, match="nodes"):
        api.validate(position, request["routes"])


def test_an_18xs_proposal_fits_the_request_schema():
    position = fixture("xs-small.json")
    plan = api.solve(position)["plan"]
    for routes in (plan, {"transports": plan}):
        service_schemas.ValidateRequest.model_validate({"position": position, "routes": routes})
        assert api.validate(position, routes)["revenue"] == sum(t["income"] for t in plan)


def test_the_request_bodies_describe_what_the_service_reads(client):
    """Each body the service answers fits its request schema in the OpenAPI
    document: the corpus wrapper, a bare position to draw, an 18XS plan to
    draw, routes in the object the validator answers with."""
    corpus = json.loads(next(iter(sorted((CORPUS / "18Ireland").glob("*.json")))).read_text())
    position, xs = fixture("1830-late.json"), fixture("xs-small.json")
    routes = api.solve(position)["routes"]
    bodies = [
        ("/v1/solve", service_schemas.SolveRequest, corpus),
        ("/v1/render", service_schemas.RenderRequest, position),
        ("/v1/render", service_schemas.RenderRequest, {"position": xs, "routes": api.solve(xs)["plan"]}),
        ("/v1/validate", service_schemas.ValidateRequest, {"position": position, "routes": {"routes": routes}}),
    ]
    for path, model, body in bodies:
        model.model_validate(body)
        assert client.post(path, json=body).status_code == 200, path
    with pytest.raises(ValidationError):
        service_schemas.SolveRequest.model_validate({**corpus, "note": 1})
    response = client.post("/v1/solve", json={**corpus, "note": 1})  # the engine refuses it as well
    assert (response.status_code, response.json()["where"]) == (422, "note")


@pytest.fixture(scope="module")
def client():
    with TestClient(create_app(Settings(max_time_limit=5.0))) as c:
        yield c


@pytest.mark.parametrize("name", NAMES)
def test_the_service_serves_the_shipped_schemas(client, name):
    response = client.get(f"/v1/schema/{name}")
    assert response.status_code == 200
    assert response.json() == json.loads(schema_text(name))
    assert client.get("/v1/schema/nothing").status_code == 422


def test_service_answers_fit_the_answer_schema(client):
    response = client.post("/v1/solve", json=fixture("cuba-small.json"))
    assert response.status_code == 200
    body = response.json()
    service_schemas.Answer.model_validate(body)
    assert not errors(ANSWER, {k: v for k, v in body.items() if k not in ("elapsed", "time_limit")})


@pytest.mark.parametrize("name", NAMES)
def test_cli_prints_the_schema(capsys, name):
    assert cli_main(["schema", name]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(schema_text(name))


def test_cli_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli_main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("routecalc ")


def leaf_errors(validator: Draft202012Validator, instance: object) -> list[str]:
    """The innermost messages (those of every branch of an ``anyOf``), each with its path."""
    found, stack = [], list(validator.iter_errors(instance))
    while stack:
        error = stack.pop()
        if error.context:
            stack.extend(error.context)
        else:
            found.append(f"{'/'.join(map(str, error.absolute_path))}: {error.message}")
    return found


#: The 18xx.games keys a train object may carry, not read: as the engine, the
#: schema refuses a value there past the limits of any value.
UNREAD_TRAIN_VALUES = [
    (
        {"price": 1e20},
        "trains[0].price: number 1e+20 out of range (at most 1,000,000,000 either way)",
        "price: 1e+20 is greater than the maximum of 1000000000",
    ),
    (
        {"price": -MAX_INT - 1},
        "trains[0].price: number -1000000001 out of range (at most 1,000,000,000 either way)",
        "price: -1000000001 is less than the minimum of -1000000000",
    ),
    (
        {"rusts_on": "x" * (MAX_STRING + 1)},
        "trains[0].rusts_on: a string of 10,001 characters (at most 10,000)",
        f"rusts_on: {'x' * (MAX_STRING + 1)!r} is too long",
    ),
    (
        {"events": [{"type": "rust", "after": [1, 10**10]}]},
        "trains[0].events[0].after[1]: number 10000000000 out of range (at most 1,000,000,000 either way)",
        "events/0/after/1: 10000000000 is greater than the maximum of 1000000000",
    ),
]


@pytest.mark.parametrize("game, fixture_name", [("GenericTrain", "1830-late.json"), ("CubaTrain", "cuba-small.json")])
@pytest.mark.parametrize("keys, engine_says, schema_says", UNREAD_TRAIN_VALUES)
def test_a_train_key_that_is_not_read_is_read_within_the_limits_by_both(
    game, fixture_name, keys, engine_says, schema_says
):
    """The schema gave these keys any value (price 1e20 fitted it; the engine refused it)."""
    train = {"name": "4", **keys}
    position = changed(fixture_name, trains=[train])
    assert agree(position) is False
    with pytest.raises(PositionError) as err:
        load_position(position)
    assert str(err.value) == engine_says
    schema = json.loads(schema_text("position"))
    train_schema = Draft202012Validator({"$ref": f"#/$defs/{game}", "$defs": schema["$defs"]})
    assert schema_says in leaf_errors(train_schema, train), leaf_errors(train_schema, train)


def test_a_train_key_that_is_not_read_takes_any_value_within_the_limits_for_both():
    within = {"price": MAX_INT, "rusts_on": "x" * MAX_STRING, "events": [{"type": "rust", "after": [None, -1.5]}]}
    assert agree(changed("1830-late.json", trains=[{"name": "4", **within, "num": None}])) is True
