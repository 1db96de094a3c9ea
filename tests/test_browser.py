"""The web page in headless Chromium (Debian's, driven by Playwright): pick a fixture, solve, read the page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import CORPUS
from live_server import serving
from playwright.sync_api import sync_playwright

from routecalc import api, load_position_file, solvers
from routecalc.errors import RouteViolation
from service.app import Settings, create_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
DEMO = Path(__file__).resolve().parent.parent / "fixtures" / "1830-late.json"
CORPUS_FILE = CORPUS / "generic" / "1830" / "1830_game_end_bank-a145.json"


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed: run the Makefile's set-up (make test installs it)")
    app = create_app(Settings(max_time_limit=30.0))
    with serving(app) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url + "/")
        yield page, errors
        browser.close()


def test_solve_a_fixture_on_the_page(page):
    page, errors = page
    expected = api.solve(load_position_file(DEMO), solvers.DEFAULT_SOLVER)
    page.wait_for_selector("#fixture option[value='1830-late']", state="attached")
    page.select_option("#fixture", "1830-late")
    page.wait_for_function("document.getElementById('position').value.includes('\"hexes\"')")
    page.click("#solve")
    page.wait_for_selector("#status[data-revenue]", timeout=60_000)
    assert page.get_attribute("#status", "data-revenue") == str(expected["revenue"])
    assert page.get_attribute("#status", "data-state") == expected["status"]
    status = page.text_content("#status")
    assert f"revenue {expected['revenue']}" in status and "solved in" in status
    assert page.text_content("#revenue-total") == str(expected["revenue"])
    rows = page.locator("#revenue tbody tr")
    assert rows.count() == len(expected["routes"])
    for k, route in enumerate(expected["routes"]):
        cells = rows.nth(k).locator("td")
        assert cells.nth(0).text_content() == route["train"]
        assert cells.nth(2).text_content() == str(route["revenue"])
    lines = page.locator("#board svg polyline.route")
    assert lines.count() == len(expected["routes"])
    assert [lines.nth(k).get_attribute("data-train") for k in range(lines.count())] == [
        r["train"] for r in expected["routes"]
    ]
    assert page.locator("#board svg g.cell").count() == len(load_position_file(DEMO).cells)
    # the route really shows: drawn with a size on screen
    box = lines.nth(0).bounding_box()
    assert box and box["width"] > 20 and box["height"] > 5
    # a failed solve after it leaves no stale board or revenue beside its error
    page.fill("#position", "{not json")
    page.click("#solve")
    page.wait_for_selector("#status.error")
    assert page.locator("#board svg").count() == 0 and page.locator("#revenue").is_hidden()
    assert page.get_attribute("#status", "data-revenue") is None
    assert errors == []


def test_bad_input_shows_the_named_error(page):
    page, errors = page
    text = DEMO.read_text().replace('"game": "generic"', '"game": "1899"')
    assert '"1899"' in text
    page.fill("#position", text)
    page.click("#solve")
    page.wait_for_selector("#status.error")
    assert page.text_content("#status").startswith("422: game: unknown game '1899'")
    page.fill("#position", "{not json")
    page.click("#solve")
    page.wait_for_selector("#status.error")
    assert page.text_content("#status").startswith("Not JSON")
    assert errors == []


def test_upload_a_corpus_file_and_solve(page):
    page, errors = page
    oracle = json.loads(CORPUS_FILE.read_text())["reference"]["oracle"]
    assert oracle["exact"]
    page.set_input_files("#upload", str(CORPUS_FILE))
    page.wait_for_function("document.getElementById('position').value.includes('reference')")
    page.click("#solve")
    page.wait_for_function(f"document.getElementById('revenue-total').textContent === '{oracle['total']}'")
    assert page.get_attribute("#status", "data-revenue") == str(oracle["total"])
    assert page.locator("#board svg polyline.route").count() == page.locator("#revenue tbody tr").count() > 0
    assert errors == []


def test_solve_an_18xs_fixture_shows_the_transports(page):
    page, errors = page
    fixture = DEMO.parent / "xs-small.json"
    expected = api.solve(load_position_file(fixture))
    page.select_option("#fixture", "xs-small")
    page.wait_for_function("document.getElementById('position').value.includes('\"18XS\"')")
    page.click("#solve")
    page.wait_for_function(f"document.getElementById('revenue-total').textContent === '{expected['revenue']}'")
    assert page.text_content("#status").startswith(f"18XS: revenue {expected['revenue']}, optimal")
    rows = page.locator("#revenue tbody tr")
    assert rows.count() == len(expected["plan"]) > 0
    for k, transport in enumerate(expected["plan"]):
        cells = rows.nth(k).locator("td")
        assert cells.nth(0).text_content() == f"{transport['cube']['color']} cube"
        assert cells.nth(2).text_content() == str(transport["income"])
    assert page.locator("#board svg polyline.transport").count() == len(expected["plan"])
    assert page.text_content("#revenue thead th") == "cube"
    assert errors == []


def test_revenue_parts_show_beside_the_routes(page):
    page, errors = page
    expected = api.solve(load_position_file(DEMO.parent / "cuba-small.json"))
    page.select_option("#fixture", "cuba-small")
    page.wait_for_function("document.getElementById('position').value.includes('\"18Cuba\"')")
    page.click("#solve")
    page.wait_for_function(f"document.getElementById('revenue-total').textContent === '{expected['revenue']}'")
    parts = page.locator("#revenue tbody tr.part")
    assert parts.count() == len(expected["parts"]) > 0
    for k, part in enumerate(expected["parts"]):
        cells = parts.nth(k).locator("td")
        assert cells.nth(0).text_content() == part["name"] and cells.nth(2).text_content() == str(part["amount"])
    assert page.locator("#board svg polyline.route").count() == len(expected["routes"])
    assert errors == []


def test_an_answer_never_shows_under_another_position(page):
    """Picking another example while a solve runs drops that solve's answer
    (it showed the old company's board and revenue under the new position),
    and a loaded example clears the last answer."""
    page, errors = page
    page.select_option("#fixture", "1830-late")
    page.wait_for_function("document.getElementById('position').value.includes('\"hexes\"')")
    page.click("#solve")
    page.wait_for_selector("#status[data-revenue]", timeout=60_000)
    page.select_option("#fixture", "stress-1867-two-d")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Example stress-1867-two-d')")
    assert page.locator("#board svg").count() == 0 and page.locator("#revenue").is_hidden()
    # a reference search of two D trains runs to its limit: pick another example while it runs
    page.select_option("#solver", "reference")
    page.fill("#time-limit", "3")
    page.click("#solve")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Solving')")
    page.select_option("#fixture", "xs-small")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Example xs-small')")
    page.wait_for_timeout(4_000)
    assert page.text_content("#status") == "Example xs-small loaded: press Solve."
    assert page.locator("#board svg").count() == 0 and page.locator("#revenue").is_hidden()
    assert not page.is_disabled("#solve")
    page.select_option("#solver", solvers.DEFAULT_SOLVER)
    page.fill("#time-limit", "10")
    # the keyboard: Solve pressed with Enter keeps the focus for the next press
    page.focus("#solve")
    page.keyboard.press("Enter")
    page.wait_for_selector("#status[data-state='optimal']", timeout=60_000)
    assert page.evaluate("document.activeElement.id") == "solve"
    assert errors == []


def test_check_proposed_routes_on_the_page(page):
    """The answer's routes copied into the routes box are valid and earn the
    answer's revenue; a route given twice breaks a named rule."""
    page, errors = page
    expected = api.solve(load_position_file(DEMO), solvers.DEFAULT_SOLVER)
    page.select_option("#fixture", "1830-late")
    page.wait_for_function("document.getElementById('position').value.includes('\"hexes\"')")
    page.click("#solve")
    page.wait_for_selector("#status[data-revenue]", timeout=60_000)
    page.click("#copy-routes")
    page.click("#check")
    page.wait_for_selector("#status[data-state='valid']")
    assert page.text_content("#status") == f"Valid: revenue {expected['revenue']}"
    assert page.locator("#board svg polyline.route").count() == len(expected["routes"])
    routes = json.loads(page.input_value("#routes"))
    page.fill("#routes", json.dumps(routes + routes[:1]))
    page.click("#check")
    page.wait_for_selector("#status[data-state='invalid']")
    scored = api_violation(DEMO, routes + routes[:1])
    assert page.text_content("#status").startswith("Not valid: ")
    assert f"{scored['rule']}: {scored['detail']}" in page.text_content("#status")
    assert page.locator("#board svg").count() == 0
    assert errors == []


def api_violation(path: Path, routes: list) -> dict:
    try:
        api.validate(load_position_file(path), routes)
    except RouteViolation as exc:
        return exc.to_json()
    raise AssertionError("the routes are valid")


def test_time_limit_field_and_a_cut_search_are_named(page):
    page, errors = page
    page.select_option("#fixture", "stress-1867-two-d")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('Example stress-1867-two-d')")
    page.fill("#time-limit", "")
    page.click("#solve")
    page.wait_for_selector("#status.error")
    assert page.text_content("#status").startswith("Time limit (s):")
    # a limit too short for any route: the table does not claim that no train can run
    page.fill("#time-limit", "0.000001")
    page.press("#time-limit", "Enter")  # Enter in the field solves
    page.wait_for_selector("#status[data-state='feasible']", timeout=60_000)
    assert page.get_attribute("#status", "class") == "cut"
    assert page.text_content("#revenue-total") == "0"
    assert page.text_content("#revenue tbody tr td:nth-child(2)") == "no route found before the time limit"
    page.fill("#time-limit", "10")
    assert errors == []


def test_a_company_without_tokens_is_named_on_the_page(page):
    page, errors = page
    position = json.loads(DEMO.read_text())
    position["company"] = "XYZ"  # no such company on the board: a typo, most often
    expected = api.solve(position, solvers.DEFAULT_SOLVER)
    assert expected["revenue"] == 0 and expected["routes"] == []
    page.fill("#position", json.dumps(position))
    page.click("#solve")
    page.wait_for_selector("#status[data-revenue]", timeout=60_000)
    assert page.text_content("#revenue tbody tr td:nth-child(2)") == expected["stats"]["auto"]["why"]
    assert expected["stats"]["auto"]["why"] == "no stop holds a token of XYZ, so no train can run"
    assert page.text_content("#revenue-total") == "0"
    assert errors == []


def test_check_sends_the_position_as_typed_and_shows_an_ambiguous_routes_tracks(page):
    """Check sent the position parsed and written again, so a ``"format": 1.0``
    that Solve and the API refused passed as valid (1.0 now reads as 1; a
    ``1e400``, which the page's parse would turn into null, shows the same);
    an ambiguous route's tracks, which the API gives, were not shown."""
    from boards import position as board
    from boards import route
    from test_violations import TWO_TRACKS

    page, errors = page
    page.fill("#position", json.dumps(board(TWO_TRACKS, trains=["2"])).replace('"format": 1', '"format": 1e400'))
    page.fill("#routes", json.dumps([route("2", "A1-0", "A3-0", hexes=[["A1", "A3"]])]))
    page.click("#check")
    page.wait_for_function("!document.getElementById('status').classList.contains('busy')")
    assert page.text_content("#status") == (
        "Routes to check: 422: format: number 1e400 out of range (at most 1,000,000,000 either way)"
    )
    page.fill("#position", json.dumps(board(TWO_TRACKS, trains=["2"])))
    page.fill("#routes", json.dumps([route("2", "A1-0", "A3-0")]))
    page.click("#check")
    page.wait_for_selector("#status[data-state='invalid']")
    assert page.text_content("#status").endswith('(the tracks: ["A1","A3"] or ["A1","B2","A3"])')
    assert errors == []


def test_typing_wins_over_an_example_still_downloading(page):
    """A position typed while a picked example is still on its way stays in
    the box: the example arriving afterwards replaced what was typed."""
    page, errors = page
    held = []  # the example's download, answered only once the player has typed
    page.route("**/v1/fixtures/xs-small", lambda route: held.append(route))
    try:
        page.select_option("#fixture", "xs-small")
        for _ in range(100):
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the example's download never started"
        typed = '{"format": 1, "game": "typed by the player"}'
        page.fill("#position", typed)
        held[0].continue_()
        page.wait_for_timeout(1_000)
        assert page.input_value("#position") == typed
        assert page.text_content("#status") == "Position edited: press Solve."
    finally:
        page.unroute("**/v1/fixtures/xs-small")
    assert errors == []
