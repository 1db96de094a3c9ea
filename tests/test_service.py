"""The HTTP service through a real uvicorn server and httpx: every endpoint and error."""

from __future__ import annotations

import json
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest
from conftest import CORPUS
from live_server import serving

from routecalc import api, load_position_file, solvers
from routecalc.errors import PositionError
from routecalc.rules import RULES
from service import schemas
from service.app import Settings, create_app

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "fixtures" / "1830-late.json"
SVG = "{http://www.w3.org/2000/svg}"
MAX_TIME = 5.0
MAX_BODY = 300_000
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def client():
    """The service as deployed: solves in worker processes."""
    app = create_app(Settings(max_body=MAX_BODY, max_time_limit=MAX_TIME, solve_threads=2))
    with serving(app) as url, httpx.Client(base_url=url, timeout=120, headers=JSON) as c:
        yield c


@pytest.fixture(scope="module")
def thread_client():
    """Solves in threads of the test's process: where solvers the tests register are served."""
    app = create_app(Settings(max_body=MAX_BODY, max_time_limit=MAX_TIME, solve_threads=2, processes=False))
    with serving(app) as url, httpx.Client(base_url=url, timeout=120, headers=JSON) as c:
        yield c


@pytest.fixture(scope="module")
def demo_answer() -> dict:
    """The engine's own answer, computed in-process, that the service must repeat."""
    return api.solve(load_position_file(DEMO), solvers.DEFAULT_SOLVER)


def demo_text() -> str:
    return DEMO.read_text()


def svg_of(response: httpx.Response) -> ET.Element:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("image/svg+xml")
    return ET.fromstring(response.text)


def routes_drawn(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}polyline") if e.get("class") == "route"]


# -- solve -------------------------------------------------------------------


def test_solve_answers_what_the_engine_answers(client, demo_answer):
    r = client.post("/v1/solve", content=demo_text())
    assert r.status_code == 200
    answer = r.json()
    assert answer["revenue"] == demo_answer["revenue"]
    assert answer["status"] == "optimal" and answer["bound"] == answer["revenue"]
    assert [route["revenue"] for route in answer["routes"]] == [route["revenue"] for route in demo_answer["routes"]]
    assert answer["solver"] == demo_answer["solver"]
    assert answer["time_limit"] == MAX_TIME and answer["elapsed"] >= 0
    schemas.Answer.model_validate(answer)


def test_solve_corpus_wrapper_reaches_the_oracle(client):
    entry = json.loads((CORPUS / "generic" / "1830" / "1830_game_end_bank-a145.json").read_text())
    assert entry["reference"]["oracle"]["exact"]
    r = client.post("/v1/solve", json=entry)
    assert r.status_code == 200
    assert r.json()["revenue"] == entry["reference"]["oracle"]["total"] == 250


def test_solver_names_are_read_at_request_time_and_time_limit_is_capped(thread_client, monkeypatch, demo_answer):
    client = thread_client
    seen = []

    def probe(position, graph, limits):
        seen.append(limits.time_limit)
        answer = solvers.SOLVERS["reference"](position, graph, limits)
        return {**answer, "status": "feasible", "bound": answer["revenue"] + 10}

    monkeypatch.setitem(solvers.SOLVERS, "probe", probe)
    r = client.post("/v1/solve", params={"solver": "probe", "time_limit": 1000}, content=demo_text())
    assert r.status_code == 200
    # the solver gets what is left of the capped limit after reading and compiling
    assert len(seen) == 1 and MAX_TIME - 1 < seen[0] <= MAX_TIME
    assert r.json()["time_limit"] == MAX_TIME
    assert r.json()["status"] == "feasible" and r.json()["bound"] == demo_answer["revenue"] + 10
    r = client.post("/v1/solve", params={"solver": "probe", "time_limit": 0.5}, content=demo_text())
    assert 0 < seen[-1] <= 0.5
    assert "probe" in client.get("/healthz").json()["solvers"]


def test_a_solve_stopped_by_its_time_limit_answers_its_best_run(client):
    """navig18xx's CNR (optimum 1150, 67,948 paths) cannot be proven in 50 ms."""
    entry = json.loads((CORPUS / "generic" / "1867" / "navig18xx_1867_bc_CNR.json").read_text())
    optimum = entry["reference"]["oracle"]["total"]
    t0 = time.perf_counter()
    r = client.post("/v1/solve", params={"time_limit": 0.05}, json=entry)
    waited = time.perf_counter() - t0
    assert r.status_code == 200
    answer = r.json()
    assert answer["time_limit"] == 0.05
    if answer["status"] == "optimal":
        assert answer["revenue"] == optimum
    else:
        assert answer["status"] == "feasible"
        assert answer["revenue"] <= optimum <= answer["bound"]
        assert sum(route["revenue"] for route in answer["routes"]) == answer["revenue"]
    assert waited < 15, f"a 50 ms solve took {waited:.1f} s"


@pytest.mark.parametrize("solver", sorted(solvers.SOLVERS))
def test_every_solver_keeps_to_the_time_limit(client, solver):
    """The 1867 stress board (optimum 1490) explodes the enumeration; none
    may hang the request. CP-SAT and auto prove it in about a second of an
    idle core, so with a 1 s limit they may answer it proven or stop short;
    the others stop short with a true bound."""
    body = (ROOT / "fixtures" / "stress-1867-two-d.json").read_text()
    t0 = time.perf_counter()
    r = client.post("/v1/solve", params={"solver": solver, "time_limit": 1.0}, content=body)
    waited = time.perf_counter() - t0
    assert r.status_code == 200, r.text
    answer = r.json()
    if answer["status"] == "optimal":
        assert solver in ("auto", "cpsat")
        assert answer["revenue"] == 1490
    else:
        assert answer["status"] == "feasible"
        assert answer["revenue"] <= 1490 <= answer["bound"]
    assert waited < 6, f"a 1 s {solver} solve took {waited:.1f} s"


def test_healthz_answers_while_a_long_solve_runs_in_a_thread(thread_client, monkeypatch):
    client = thread_client
    started, release = threading.Event(), threading.Event()

    def blocking(position, graph, limits):
        started.set()
        release.wait(30)
        return solvers.SOLVERS["reference"](position, graph, limits)

    monkeypatch.setitem(solvers.SOLVERS, "blocking", blocking)
    result = {}
    solve = threading.Thread(
        target=lambda: result.update(r=client.post("/v1/solve", params={"solver": "blocking"}, content=demo_text()))
    )
    solve.start()
    try:
        assert started.wait(30)
        t0 = time.perf_counter()
        health = client.get("/healthz")
        waited = time.perf_counter() - t0
        assert health.status_code == 200 and health.json()["jobs_running"] == 1
        assert waited < 2.0, f"healthz took {waited:.2f} s while a solve ran"
    finally:
        release.set()
        solve.join(60)
    assert result["r"].status_code == 200
    assert client.get("/healthz").json()["jobs_running"] == 0


@pytest.mark.parametrize(
    "params, where",
    [
        ({"solver": "no-such-solver"}, "solver"),
        ({"time_limit": 0}, "query.time_limit"),
        ({"time_limit": "soon"}, "query.time_limit"),
    ],
)
def test_solve_bad_options_are_named(client, params, where):
    r = client.post("/v1/solve", params=params, content=demo_text())
    assert r.status_code == 422
    assert r.json()["where"] == where


def test_unreadable_json_is_400(client):
    r = client.post("/v1/solve", content=b'{"format": 1,')
    assert r.status_code == 400
    assert r.json()["where"] == "json"


def test_a_number_too_long_to_read_is_named_as_the_api_names_it(client):
    """Valid JSON whose number is over 30 characters: 422 naming the field, not 400 ``json``."""
    body = demo_text().replace('"trains": [', '"trains": [{"name": "4", "price": ' + "1" * 31 + "}, ", 1)
    r = client.post("/v1/solve", content=body)
    assert (r.status_code, r.json()["where"]) == (422, "trains[0].price"), r.text


def test_validate_names_a_position_field_as_solve_and_the_api_do(client):
    position = {**json.loads(demo_text()), "company": "x" * 10_001}
    with pytest.raises(PositionError) as err:
        api.validate(position, [])
    solved = client.post("/v1/solve", json=position)
    validated = client.post("/v1/validate", json={"position": position, "routes": []})
    wrapped = client.post("/v1/solve", json={"position": position, "reference": {}})
    assert [r.status_code for r in (solved, validated, wrapped)] == [422] * 3
    assert [r.json()["where"] for r in (solved, validated, wrapped)] == [err.value.where] * 3 == ["company"] * 3


def edited(change) -> dict:
    data = json.loads(demo_text())
    change(data)
    return data


@pytest.mark.parametrize(
    "change, where, words",
    [
        (lambda d: d.update(game="1899"), "game", "unknown game"),
        (lambda d: d["hexes"][3].update(rotation=9), "cell A19", "rotation 9"),
        (lambda d: d.update(trains=["4", "9Q"]), "trains[1]", "unknown train"),
        (lambda d: d["hexes"][0].update(code="city=revenue:20;path=a:0,b:_3"), "cell A9", "missing node"),
        (lambda d: d.pop("company"), "company", "missing"),
        (lambda d: d.update(game="18Cuba", trains=["4", "7"]), "trains[1]", "unknown 18Cuba train"),
        (lambda d: d.update(axes={"x": "number", "y": {}}), "axes", "must be"),
        (lambda d: d["hexes"][0].update(tile=[None]), "cell A9", "tile"),
    ],
)
def test_bad_position_gets_the_engines_named_error(client, change, where, words):
    r = client.post("/v1/solve", json=edited(change))
    assert r.status_code == 422
    body = r.json()
    assert body["where"].startswith(where), body
    assert words in body["error"], body


def test_body_over_the_limit_is_413(client):
    big = json.dumps({**json.loads(demo_text()), "options": {"padding": "x" * MAX_BODY}})
    r = client.post("/v1/solve", content=big)
    assert r.status_code == 413 and r.json()["where"] == "body"

    def chunks():  # no Content-Length: the limit is counted as the body arrives
        for _ in range(40):
            yield b" " * 10_000

    r = client.post("/v1/solve", content=chunks())
    assert r.status_code == 413


# -- validate ----------------------------------------------------------------


def test_validate_scores_the_solver_routes(client, demo_answer):
    routes = [{k: route[k] for k in ("train", "nodes", "hexes")} for route in demo_answer["routes"]]
    r = client.post("/v1/validate", json={"position": json.loads(demo_text()), "routes": routes})
    assert r.status_code == 200
    body = r.json()
    assert body["valid"] is True
    assert body["revenue"] == demo_answer["revenue"]
    assert [x["revenue"] for x in body["routes"]] == [x["revenue"] for x in demo_answer["routes"]]


def test_validate_names_the_broken_rule(client, demo_answer):
    first = demo_answer["routes"][0]
    mine = {k: first[k] for k in ("train", "nodes", "hexes")}
    other = next(t for t in ("4", "5") if t != mine["train"])
    twice = [mine, {**mine, "train": other}]  # the other train on the same track
    r = client.post("/v1/validate", json={"position": json.loads(demo_text()), "routes": twice})
    assert r.status_code == 200
    body = r.json()
    assert body["valid"] is False
    assert body["violation"]["rule"] == "track_reused"
    assert body["violation"]["route"] == 1
    reversed_route = {"train": first["train"], "nodes": [first["nodes"][0]]}
    r = client.post("/v1/validate", json={"position": json.loads(demo_text()), "routes": [reversed_route]})
    assert r.json()["violation"]["rule"] == "too_few_stops"


@pytest.mark.parametrize(
    "body, where",
    [
        ({"routes": []}, "position"),
        ({"position": "P"}, "routes"),
        ({"position": {}, "routes": [], "extra": 1}, "extra"),
        ([], "body"),
    ],
)
def test_validate_bad_request_is_named(client, body, where):
    r = client.post("/v1/validate", json=body)
    assert r.status_code == 422
    assert r.json()["where"] == where


def test_validate_unknown_node_is_named(client):
    r = client.post(
        "/v1/validate",
        json={"position": json.loads(demo_text()), "routes": [{"train": "4", "nodes": ["D14-0", "Z99-0"]}]},
    )
    assert r.status_code == 422
    assert r.json()["where"] == "routes[0].nodes[1]"


@pytest.mark.parametrize(
    "path, query", [("/v1/solve", "time_limt=1"), ("/v1/render", "solve=true&solvr=fast"), ("/v1/validate", "x=1")]
)
def test_a_misspelt_query_parameter_is_named(client, path, query):
    """Ignored, it ran the request on the default it meant to change."""
    r = client.post(f"{path}?{query}", content=demo_text(), headers={"Content-Type": "application/json"})
    name = query.split("&")[-1].split("=")[0]
    assert (r.status_code, r.json()["where"]) == (422, f"query.{name}")
    assert "unknown query parameter" in r.json()["error"]


# -- render ------------------------------------------------------------------


def test_render_board_only(client):
    root = svg_of(client.post("/v1/render", content=demo_text()))
    cells = [g for g in root.iter(f"{SVG}g") if g.get("class") == "cell"]
    assert len(cells) == len(json.loads(demo_text())["hexes"])
    assert routes_drawn(root) == []


def test_render_solve_draws_every_route(client, demo_answer):
    root = svg_of(client.post("/v1/render", params={"solve": "true"}, content=demo_text()))
    lines = routes_drawn(root)
    assert [(e.get("data-train"), int(e.get("data-revenue"))) for e in lines] == [
        (r["train"], r["revenue"]) for r in demo_answer["routes"]
    ]
    title = next(e for e in root.iter(f"{SVG}text") if e.get("class") == "legend-title")
    assert title.text == f"NYC: {demo_answer['revenue']} (optimal)"


def test_render_given_routes(client, demo_answer):
    route = {k: demo_answer["routes"][0][k] for k in ("train", "nodes", "hexes")}
    root = svg_of(client.post("/v1/render", json={"position": json.loads(demo_text()), "routes": [route]}))
    assert [int(e.get("data-revenue")) for e in routes_drawn(root)] == [demo_answer["routes"][0]["revenue"]]


def test_render_refuses_bad_routes_and_both_modes(client, demo_answer):
    route = {"train": "4", "nodes": ["D14-0"]}
    r = client.post("/v1/render", json={"position": json.loads(demo_text()), "routes": [route]})
    assert r.status_code == 422 and r.json()["violation"]["rule"] == "too_few_stops"
    r = client.post("/v1/render", params={"solve": "true"}, json={"position": json.loads(demo_text()), "routes": []})
    assert r.status_code == 422 and r.json()["where"] == "solve"


# -- games, fixtures, page, OpenAPI -------------------------------------------


def test_games_list_every_rule_set_and_its_trains(client):
    games = {g["name"]: g for g in client.get("/v1/games").json()}
    assert set(games) == set(RULES)
    generic = games["generic"]
    assert generic["route_engine"] is True and games["18XS"]["route_engine"] is False
    four = next(t for t in generic["trains"] if t["name"] == "4")
    assert four["distance"] == [{"nodes": ["city", "offboard", "town"], "pay": 4, "visit": 4, "multiplier": 1}]
    express = next(t for t in generic["trains"] if t["name"] == "6E")
    assert express["distance"][0]["pay"] == 6 and express["distance"][0]["visit"] >= 999
    assert games["18XS"]["has_companies"] is False


def test_fixtures_listed_and_served(client):
    listing = client.get("/v1/fixtures").json()
    names = {f["name"] for f in listing}
    assert names == {p.stem for p in (ROOT / "fixtures").glob("*.json")}
    # every game the engine reads has an example on the page
    assert {f["game"] for f in listing} == {g["name"] for g in client.get("/v1/games").json()}
    demo = next(f for f in listing if f["name"] == "1830-late")
    assert demo["company"] == "NYC" and demo["trains"] == ["4", "5"]
    assert client.get("/v1/fixtures/1830-late").json() == json.loads(demo_text())
    r = client.get("/v1/fixtures/..%2Fpyproject")
    assert r.status_code == 404


def test_page_and_static_files(client):
    page = client.get("/")
    assert page.status_code == 200 and 'id="solve"' in page.text and "/static/app.js" in page.text
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200


def test_openapi_examples_are_accepted(client):
    doc = client.get("/openapi.json").json()
    for path in ("/v1/solve", "/v1/validate", "/v1/render"):
        body = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]
        assert body["schema"]["$ref"].startswith("#/components/schemas/")
        assert body["examples"], path
        for example in body["examples"].values():
            r = client.post(path, json=example["value"])
            assert r.status_code == 200, (path, r.text)
            if path == "/v1/validate":
                assert r.json()["valid"] is True


def test_schemas_accept_the_fixtures_and_corpus():
    files = (
        sorted((ROOT / "fixtures").glob("*.json"))
        + sorted(CORPUS.glob("*/*.json"))[::25]
        + sorted(CORPUS.glob("*/*/*.json"))[::25]
    )
    assert len(files) > 10
    for f in files:
        data = json.loads(f.read_text())
        schemas.Position.model_validate(data.get("position", data))
