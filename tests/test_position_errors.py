"""Bad positions give a PositionError that names the field or cell and what
is wrong, never a traceback."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from boards import cell, city, column, position
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from routecalc import PositionError, api, load_position
from routecalc.model import read_json


def good() -> dict:
    return position(column(city(20), city(30, slots=2)), trains=["2", "3"], options={"no_hex_twice": True})


def fails(data, where: str, *fragments: str) -> PositionError:
    with pytest.raises(PositionError) as err:
        load_position(data)
    assert err.value.where == where, err.value
    for fragment in fragments:
        assert fragment in err.value.message, err.value
    return err.value


def with_(path: tuple, value, data: dict | None = None) -> dict:
    """A copy of ``data`` (default: the good position) with one value replaced."""
    data = copy.deepcopy(data or good())
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def without(key: str) -> dict:
    data = good()
    del data[key]
    return data


def test_the_good_position_loads():
    loaded = load_position(good())
    assert list(loaded.cells) == ["A1", "A3"]
    assert [t.name for t in loaded.trains] == ["2", "3"]


# -- JSON and the top level -------------------------------------------------------------


def test_invalid_json():
    with pytest.raises(PositionError) as err:
        read_json('{"format": 1,')
    assert err.value.where == "json"
    assert "invalid JSON" in err.value.message


def test_missing_file(tmp_path):
    with pytest.raises(PositionError) as err:
        read_json(tmp_path / "nope.json")
    assert "file not found" in err.value.message


@pytest.mark.parametrize("data", [[], "position", 3, None])
def test_position_must_be_an_object(data):
    fails(data, "position", "JSON object")


@pytest.mark.parametrize("key", ["format", "game", "layout", "phase", "hexes", "company", "trains"])
def test_missing_keys(key):
    fails(without(key), key, "missing")


def test_unknown_top_level_key():
    fails(with_(("trian",), ["2"]), "trian", "unknown top-level key")


@pytest.mark.parametrize(
    "key, value, fragment",
    [
        ("format", 2, "unsupported format 2"),
        ("format", "1", "unsupported format"),
        ("format", True, "unsupported format"),
        ("format", 1.5, "unsupported format"),
        ("layout", "hexagonal", "unknown layout 'hexagonal'"),
        ("layout", ["flat"], "unknown layout"),
        ("phase", ["yellow"], "colors"),
        ("phase", {"name": "2", "colors": "yellow"}, "colors"),
        ("phase", {"name": "2", "colors": ["yellow", 3]}, "colors"),
        ("hexes", {"A1": {}}, "list of cells"),
        ("company", 7, "must be a string"),
        ("trains", "2", "must be a list"),
        ("options", [], "must be an object"),
    ],
)
def test_mistyped_top_level_values(key, value, fragment):
    fails(with_((key,), value), key, fragment)


@pytest.mark.parametrize(
    "phase, where, fragment",
    [
        ({"name": 5, "colors": ["yellow"]}, "phase.name", "must be a string"),
        ({"name": None, "colors": ["yellow"]}, "phase.name", "must be a string"),
        ({"name": "2", "colors": ["yellow"], "surprise": 1}, "phase", "unknown key 'surprise'"),
    ],
)
def test_a_phase_name_that_is_no_string_or_an_unknown_phase_key(phase, where, fragment):
    """As the schema says: a typo in ``phase`` is refused, not ignored."""
    fails(with_(("phase",), phase), where, fragment)


def test_a_phase_colour_that_is_no_tile_colour():
    """A misspelt phase colour would never match a revenue's entry."""
    fails(with_(("phase", "colors"), ["yellow", "gren"]), "phase.colors", "unknown colour 'gren'")


@pytest.mark.parametrize("game", ["1830", "Generic", None, ["generic"]])
def test_unknown_game(game):
    fails(with_(("game",), game), "game", "unknown game", "generic")


def test_wrapper_is_unwrapped():
    loaded = load_position({"position": good(), "reference": {"oracle": {"total": 1}}})
    assert list(loaded.cells) == ["A1", "A3"]


def test_errors_inside_the_wrapper_name_the_field():
    fails({"position": without("trains"), "reference": {}}, "trains", "missing")


# -- cells ----------------------------------------------------------------------------------


@pytest.mark.parametrize("cell_id", ["1A", "a1", "F", "F1.5", "É1", ""])
def test_bad_cell_id(cell_id):
    fails(with_(("hexes", 0, "id"), cell_id), f"cell {cell_id!r}", "bad cell id")


def test_cell_id_must_be_a_string():
    fails(with_(("hexes", 0, "id"), 11), "hexes[0]", "'id'")
    fails(with_(("hexes", 1), "A3"), "hexes[1]", "must be an object")


def test_duplicate_cell():
    data = good()
    data["hexes"].append(cell("A1", city(50)))
    fails(data, "cell A1", "duplicate cell")


def test_unknown_cell_key():
    fails(with_(("hexes", 0, "rotaton"), 1), "cell A1", "unknown key 'rotaton'")


def test_missing_code():
    data = good()
    del data["hexes"][1]["code"]
    fails(data, "cell A3", "missing 'code'")


def test_code_must_be_a_string():
    fails(with_(("hexes", 0, "code"), ["city"]), "cell A1", "code must be a string")


@pytest.mark.parametrize(
    "rotation, written",
    [(6, "6"), (-1, "-1"), (2.5, "2.5"), (6.0, "6.0"), ("2", "'2'"), (True, "true"), (None, "null")],
)
def test_rotation_out_of_range_on_hexes(rotation, written):
    """The value as the JSON wrote it: 6.0 (not the 6 it is read as), true, null."""
    err = fails(with_(("hexes", 1, "rotation"), rotation), "cell A3")
    assert err.message == f"rotation {written} out of range 0-5"


def test_rotation_out_of_range_on_squares():
    data = position([cell("A1", "town=revenue:10;path=a:0,b:_0", rotation=4)], layout="square")
    fails(data, "cell A1", "rotation 4", "0-3")


def test_unknown_tile_part_names_the_cell():
    err = fails(
        with_(("hexes", 1, "code"), "city=revenue:20;path=a:0,b:_0;tunnel=a:1"),
        "cell A3 part 'tunnel=a:1'",
        "unknown tile part 'tunnel'",
    )
    assert "A3" in str(err)


def test_unknown_tile_key_names_the_cell():
    fails(
        with_(("hexes", 0, "code"), "city=revenue:20,slot:2"),
        "cell A1 part 'city=revenue:20,slot:2'",
        "unknown city key 'slot'",
    )


def test_path_to_missing_node_names_the_cell():
    fails(with_(("hexes", 0, "code"), "city=revenue:20;path=a:0,b:_3"), "cell A1 part 'path=a:0,b:_3'", "missing node")


@pytest.mark.parametrize("terrain", ["swamp", 3, ["forest"]])
def test_unknown_terrain(terrain):
    fails(with_(("hexes", 0, "terrain"), terrain), "cell A1", "terrain")


# -- tokens ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tokens, fragment",
    [
        ([["A"], ["B"]], "one list per city: the code has 1 cities"),
        ([], "one list per city"),
        ("A", "one list per city"),
        ([["A", "B"]], "tokens[0] has 2 entries but city 0 has 1 slots"),
        ([[]], "tokens[0] has 0 entries"),
        ([[3]], "tokens[0] must be a list of company ids or null"),
        (["A"], "tokens[0] must be a list"),
    ],
)
def test_tokens_must_match_cities_and_slots(tokens, fragment):
    fails(with_(("hexes", 0, "tokens"), tokens), "cell A1", fragment)


def test_tokens_fill_every_slot_of_two_slot_city():
    loaded = load_position(with_(("hexes", 1, "tokens"), [["B", None]]))
    assert loaded.nodes[loaded.node("A3-0")].tokens == ("B", None)
    fails(with_(("hexes", 1, "tokens"), [["B"]]), "cell A3", "has 1 entries but city 0 has 2 slots")


def test_tokens_on_a_cell_without_cities():
    data = position([cell("A1", "town=revenue:10;path=a:0,b:_0", tokens=[["A"]])])
    fails(data, "cell A1", "the code has 0 cities")


def test_tokens_per_city_in_code_order():
    code = "city=revenue:20;town=revenue:10;city=revenue:40,slots:2;path=a:0,b:_0"
    loaded = load_position(position([cell("A1", code, tokens=[["A"], ["B", None]])]))
    assert [loaded.nodes[loaded.node(f"A1-{i}")].tokens for i in range(3)] == [("A",), (), ("B", None)]


# -- trains ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["4H", "Q", "2+", "E", ""])
def test_unknown_train_name(name):
    fails(with_(("trains", 1), name), "trains[1]", f"unknown train {name!r}")


@pytest.mark.parametrize(
    "spec, where, fragment",
    [
        (3, "trains[0]", "a train is a name or an object"),
        ({"distance": 3}, "trains[0]", "needs a string 'name'"),
        ({"name": "2", "speed": 3}, "trains[0]", "unknown train key 'speed'"),
        ({"name": "9Q"}, "trains[0]", "unknown train '9Q'"),
        ({"name": "x", "distance": 0}, "trains[0]", "distance must be a whole number >= 1"),
        ({"name": "x", "distance": []}, "trains[0]", "non-empty list"),
        ({"name": "x", "distance": [{"nodes": ["city"], "pay": 2}]}, "trains[0] distance[0]", "needs pay and visit"),
        (
            {"name": "x", "distance": [{"nodes": ["port"], "pay": 2, "visit": 2}]},
            "trains[0] distance[0]",
            "nodes must be a list of city, town, offboard",
        ),
        (
            {
                "name": "x",
                "distance": [
                    {"nodes": ["city"], "pay": 2, "visit": 2},
                    {"nodes": ["city", "town"], "pay": 1, "visit": 1},
                ],
            },
            "trains[0] distance[1]",
            "appears in two groups",
        ),
        (
            {"name": "x", "distance": [{"nodes": ["city"], "pay": -1, "visit": 2}]},
            "trains[0] distance[0]",
            "pay must be a whole number >= 0",
        ),
        (
            {"name": "x", "distance": [{"nodes": ["city"], "pay": 1, "visit": 2, "bonus": 1}]},
            "trains[0] distance[0]",
            "unknown key 'bonus'",
        ),
        ({"name": "2", "multiplier": 0}, "trains[0]", "multiplier must be a whole number >= 1"),
        ({"name": "2", "fill": "yes"}, "trains[0]", "fill must be true or false"),
    ],
)
def test_bad_train_objects(spec, where, fragment):
    fails(with_(("trains", 0), spec), where, fragment)


# -- neighbours -------------------------------------------------------------------------


def test_neighbour_override_to_a_missing_cell():
    fails(with_(("hexes", 0, "neighbors"), {"0": "A5"}), "cell A1", "missing cell 'A5'")


@pytest.mark.parametrize(
    "override, fragment",
    [
        ({"6": "A3"}, "edge '6' out of range"),
        ({"x": "A3"}, "edge 'x' out of range"),
        (["A3"], "neighbors must be an object"),
        ({"0": ["A3"]}, "missing cell"),
        ({"0": None}, "missing cell"),
    ],
)
def test_bad_neighbour_override(override, fragment):
    fails(with_(("hexes", 0, "neighbors"), override), "cell A1", fragment)


# -- options ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, where, fragment",
    [
        ({"no_hex_twice": "yes"}, "options.no_hex_twice", "true or false"),
        ({"no_hex_twice": True, "machines": {}}, "options.machines", "unknown option for generic"),
        ({"bonuses": {}}, "options.bonuses", "must be a list"),
        ({"bonuses": [3]}, "options.bonuses[0]", "must be an object"),
        ({"bonuses": [{"type": "visit", "cells": ["A1"]}]}, "options.bonuses[0]", "amount"),
        ({"bonuses": [{"type": "visit", "cells": ["A1"], "amount": -5}]}, "options.bonuses[0]", "amount"),
        (
            {"bonuses": [{"type": "visit", "cells": ["A1"], "amount": 10, "multiplied": 1}]},
            "options.bonuses[0]",
            "multiplied must be true or false",
        ),
        ({"bonuses": [{"type": "visit", "cells": ["Z9"], "amount": 10}]}, "options.bonuses[0].cells", "no cell 'Z9'"),
        ({"bonuses": [{"type": "visit", "cells": [], "amount": 10}]}, "options.bonuses[0].cells", "non-empty"),
        ({"bonuses": [{"type": "visit", "cells": "A1", "amount": 10}]}, "options.bonuses[0].cells", "non-empty"),
        ({"bonuses": [{"type": "connect", "sets": [], "amount": 10}]}, "options.bonuses[0].sets", "non-empty"),
        (
            {"bonuses": [{"type": "connect", "sets": [["A1"], ["B9"]], "amount": 10}]},
            "options.bonuses[0].sets[1]",
            "no cell 'B9'",
        ),
        (
            {"bonuses": [{"type": "route", "cells": ["A1"], "amount": 10}]},
            "options.bonuses[0].type",
            "unknown bonus type 'route'",
        ),
        (
            {"bonuses": [{"type": "visit", "cells": ["A1"], "amount": 10, "note": "x"}]},
            "options.bonuses[0]",
            "unknown key 'note'",
        ),
    ],
)
def test_bad_options(options, where, fragment):
    fails(with_(("options",), options), where, fragment)


def test_good_bonuses_load():
    options = {
        "bonuses": [
            {"type": "visit", "cells": ["A1"], "amount": 10},
            {"type": "connect", "sets": [["A1"], ["A3"]], "amount": 20, "multiplied": True},
        ]
    }
    loaded = load_position(with_(("options",), options))
    visit, connect = loaded.options["bonuses"]
    assert (visit.type, visit.sets, visit.amount, visit.multiplied) == ("visit", (frozenset({"A1"}),), 10, False)
    assert (connect.type, connect.sets, connect.amount, connect.multiplied) == (
        "connect",
        (frozenset({"A1"}), frozenset({"A3"})),
        20,
        True,
    )


# -- no input gives a traceback ----------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 8) | st.sampled_from(["", "A1", "A3", "x", "city", "2", "_0"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["0", "a", "id", "name"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, prefix + (i,))


FUZZ_BASE = position(
    [cell("A1", city(20), tokens=[["A"]], neighbors={"0": "A3"}), cell("A3", city(30, slots=2), rotation=3)],
    trains=["2", {"name": "x", "distance": [{"nodes": ["city"], "pay": 1, "visit": 2}]}],
    options={"no_hex_twice": True, "bonuses": [{"type": "visit", "cells": ["A1"], "amount": 10}]},
)
FUZZ_PATHS = [p for p in _paths(FUZZ_BASE) if p]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FUZZ_PATHS), JSON_VALUES)
def test_any_one_bad_value_is_a_position_error(path, value):
    data = with_(path, value, FUZZ_BASE)
    try:
        load_position(data)
    except PositionError as err:
        assert err.where or err.message
    # Round-tripping through JSON text goes the same way.
    try:
        load_position(read_json(json.dumps(data)))
    except PositionError:
        pass


# -- hostile input (issue 15): limits where JSON is read, ranges where numbers are read --------


def read_fails(text: str | bytes, *fragments: str) -> PositionError:
    with pytest.raises(PositionError) as err:
        read_json(text)
    for fragment in fragments:
        assert fragment in str(err.value), err.value
    return err.value


@pytest.mark.parametrize("depth", [34, 2_000, 200_000])
def test_deep_nesting_is_a_named_error(depth):
    read_fails("[" * depth + "]" * depth, "nested deeper than 32")


def test_numbers_of_thousands_of_digits_and_non_numbers_are_refused():
    read_fails('{"format": ' + "9" * 5000 + "}", "5000 digits")
    read_fails('{"a": 1e999}', "out of range")
    read_fails('{"a": NaN}', "NaN is not JSON")
    err = read_fails('{"trains": [{"name": "2", "multiplier": 10000000000}]}', "out of range")
    assert err.where == "trains[0].multiplier"


def test_numbers_past_their_length_or_range_name_their_field():
    """A number of over 30 characters, or past a float's range, is valid JSON:
    refused naming its field, as the API names it for parsed JSON (it was
    ``where: json``, which the service answers with 400)."""
    err = read_fails('{"trains": [{"name": "3", "price": ' + "1" * 31 + "}]}", "a number of 31 digits")
    assert err.where == "trains[0].price"
    assert read_fails('{"options": {"fc_fee": 1.' + "0" * 30 + "}}", "32 characters").where == "options.fc_fee"
    assert read_fails('{"a": [1e999]}', "out of range").where == "a[0]"
    assert read_fails("-1e999", "out of range").where == "json"


def test_a_wrapper_position_is_named_as_the_position():
    """In the corpus wrapper or a service body, a position's field is named as
    ``load_position`` names it (``company``), the other keys by their own name."""
    long = "x" * 10_001
    assert read_fails(json.dumps({"position": {"company": long}, "reference": {}})).where == "company"
    assert read_fails(json.dumps({"position": {}, "routes": [{"train": long}]})).where == "routes[0].train"
    assert read_fails(json.dumps({"position": {}, "reference": {"note": long}})).where == "reference.note"
    assert read_fails(json.dumps({"position": long})).where == "position"
    assert read_fails(json.dumps({"hexes": [], "position": long})).where == "position"


def test_long_strings_big_arrays_and_lone_surrogates_are_named():
    assert read_fails(json.dumps({"company": "x" * 10_001})).where == "company"
    assert read_fails(json.dumps({"hexes": [0] * 20_001})).where == "hexes"
    err = read_fails('{"company": "A\\ud800"}', "lone surrogate U+D800")
    assert err.where == "company"
    err = read_fails('{"trains": ["2", "\\udfff"]}', "lone surrogate")
    assert err.where == "trains[1]"
    assert read_fails('{"\\ud800": 1}', "lone surrogate").where == "a key"
    assert read_fails('{"hexes": [{"\\ud800": 1}]}', "lone surrogate").where == "hexes[0] key"
    # the error itself can be encoded (the service and the CLI send it)
    str(err).encode("utf-8")


def test_control_characters_that_xml_cannot_hold_are_named():
    """Text of a position reaches the drawn board (XML 1.0 holds no C0
    control but tab, line feed and carriage return): refused, named. Other
    JSON (a corpus wrapper's reference, a batch line) may hold them."""
    fails(with_(("company",), "A\x1b[31m"), "company", "control character U+001B at character 1")
    fails(with_(("phase", "name"), "\x00"), "phase.name", "U+0000")
    assert load_position(with_(("phase", "name"), "late\tphase")).phase_name == "late\tphase"
    read_json('{"note": "one\\u000ctwo"}')


def test_whole_numbers_written_as_floats_are_read_as_whole_numbers():
    """JSON has one kind of number (and JSON Schema reads 1.0 as an integer): 1.0 is 1."""
    data = with_(("format",), 1.0)
    data["hexes"][1]["rotation"] = 3.0
    data["trains"] = ["2", {"name": "x", "distance": 3.0, "multiplier": 2.0}]
    data["options"]["bonuses"] = [{"type": "visit", "cells": ["A1"], "amount": 1e1}]
    loaded = load_position(data)
    rotation = loaded.cells["A3"].rotation  # an int (a Whole: shown in a message as written, 3.0)
    assert (rotation, isinstance(rotation, int), str(rotation), repr(rotation)) == (3, True, "3", "3.0")
    assert (loaded.trains[1].groups[0].visit, loaded.trains[1].multiplier) == (3, 2)
    whole = json.loads(json.dumps(data).replace(".0", ""))
    assert [api.solve(d)[k] for d in (data, whole) for k in ("revenue", "routes")] == [
        api.solve(whole)[k] for k in ("revenue", "routes")
    ] * 2
    fails(with_(("hexes", 1, "rotation"), 2.5), "cell A3", "rotation 2.5")
    fails(with_(("trains",), [{"name": "x", "distance": 2.5}]), "trains[0]", "got 2.5")


def test_positions_built_in_python_are_checked_too():
    fails(with_(("company",), "A\udc80"), "company", "lone surrogate")
    fails(with_(("trains",), [{"name": "x", "distance": 10**5000}]), "trains[0].distance", "some 5001 digits")
    fails(with_(("options",), {"no_hex_twice": float("nan")}), "options.no_hex_twice", "out of range")
    fails(with_(("trains",), [{"name": "2", "multiplier": 2**59}]), "trains[0].multiplier", "out of range")
    fails(with_(("trains",), ("2",)), "trains", "not a JSON value")


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ({"name": "2", "multiplier": 101}, "multiplier must be at most 100"),
        ({"name": "x", "distance": 0}, "distance must be a whole number >= 1"),
        ({"name": "x", "distance": [{"nodes": ["city"], "pay": -1, "visit": 5}]}, "pay must be a whole number >= 0"),
        ("99999999999999999999", "unknown train"),
        ("2\u0663", "unknown train"),  # an Arabic-Indic digit is not a distance
    ],
)
def test_train_numbers_are_range_checked(spec, fragment):
    error = fails(with_(("trains",), [spec]), error_where(spec), fragment)
    assert error


@pytest.mark.parametrize(
    "spec, visit, pay",
    [
        ({"name": "x", "distance": 1000}, 999, 999),
        ({"name": "x", "distance": 10**9}, 999, 999),
        ({"name": "x", "distance": [{"nodes": ["city"], "pay": 2, "visit": 5000}]}, 999, 2),
        ({"name": "x", "distance": [{"nodes": ["city"], "pay": 1000, "visit": 998}]}, 998, 999),
    ],
)
def test_999_stops_or_more_is_unlimited(spec, visit, pay):
    """The position format: 999 or more means unlimited, so larger counts are read, as 999."""
    (group,) = load_position(with_(("trains",), [spec])).trains[0].groups
    assert (group.visit, group.pay) == (visit, pay)


def error_where(spec) -> str:
    return "trains[0] distance[0]" if isinstance(spec, dict) and isinstance(spec.get("distance"), list) else "trains[0]"


@pytest.mark.parametrize(
    "code, fragment",
    [
        ("city=revenue:20;path=a:0,b:3,lanes:1000000", "lanes 1000000 is over the limit of 8"),
        ("city=revenue:" + "9" * 500, "revenue must be a whole number"),
        ("city=revenue:1000001", "revenue 1000001 is over the limit"),
        ("city=revenue:yellow_20|brown_99999999", "over the limit"),
        ("city=revenue:20,slots:17", "slots 17 is over the limit of 16"),
        ("city=revenue:+20", "whole number"),
        ("city=revenue:1e3", "whole number"),
        ("path=a:0,b:3,a_lane:2.5", "lane index 5 is over the limit of 1"),
        ("path=a:0,b:3," + "x" * 2000, "a tile code of 2,0"),
    ],
)
def test_tile_code_numbers_are_range_checked(code, fragment):
    with pytest.raises(PositionError) as err:
        load_position(position([cell("A1", code)]))
    assert err.value.where.startswith("cell A1") and fragment in err.value.message, err.value


@pytest.mark.parametrize("alias", ["A01", "A1\n", "A+1", "A-0", "a1", "A\u0661", "AAAA1", "A12345"])
def test_cell_ids_are_canonical(alias):
    data = position([cell("A1", city(20), tokens=[["A"]]), cell("A3", city(30)), cell(alias, city(400))], trains=["2"])
    with pytest.raises(PositionError) as err:
        load_position(data)
    assert err.value.where == f"cell {alias!r}" and "bad cell id" in err.value.message


def test_size_limits_are_named():
    many = [cell(f"A{2 * i + 1}", "") for i in range(2_001)]
    fails(position(many), "hexes", "2,001 cells", "at most 2,000")
    fails(with_(("trains",), ["2"] * 21), "trains", "21 trains", "at most 20")


def test_a_company_without_a_token_earns_nothing_and_the_answer_says_why():
    """Not an error (a company may have no station yet), but most often a
    misspelt company: the answer names it instead of a bare 0."""
    data = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "1830-late.json").read_text())
    data["company"] = "XYZ"
    answer = api.solve(data)
    assert answer["revenue"] == 0 and answer["status"] == "optimal"
    assert answer["stats"]["auto"]["why"] == "no stop holds a token of XYZ, so no train can run"


@pytest.mark.parametrize(
    "path, value, where, message",
    [
        (("trains",), [{"name": "3", "multiplier": 101.0}], "trains[0]", "multiplier must be at most 100, got 101.0"),
        (("trains",), [{"name": "3", "distance": 0.0}], "trains[0]", "distance must be a whole number >= 1, got 0.0"),
        (("trains",), [{"name": "3", "fill": None}], "trains[0]", "fill must be true or false"),
        (("format",), 2.0, "format", "unsupported format 2.0 (only 1)"),
        (("format",), True, "format", "unsupported format true (only 1)"),
        (("layout",), None, "layout", "unknown layout null (flat, pointy or square)"),
        (("hexes", 0, "terrain"), False, "cell A1", "unknown terrain false"),
    ],
)
def test_a_refused_value_is_quoted_as_the_json_wrote_it(path, value, where, message):
    """Not as read: 101.0 is read as the whole number 101 (JSON has one kind of
    number), but a message that quotes it says 101.0; true, false and null are
    JSON's words, not Python's (it said 'got 101', 'format True', 'layout None')."""
    assert fails(with_(path, value), where).message == message


@pytest.mark.parametrize(
    "game_fixture, change, where, message",
    [
        ("lilliput-mildendo-ring.json", {"trains": [{"name": "3", "obsolete": 1.0}]}, "trains[0]",
         "obsolete must be true or false, got 1.0"),
        ("lilliput-mildendo-ring.json", {"options": {"last_round": None}}, "options.last_round",
         "must be true or false, got null"),
        ("cuba-small.json", {"trains": [{"name": "5", "wagon": -1.0}]}, "trains[0].wagon",
         "must be a whole number >= 0 (cubes), got -1.0"),
        ("cuba-small.json", {"trains": [{"name": "5", "wagon": True}]}, "trains[0].wagon",
         "must be a whole number >= 0 (cubes), got true"),
        ("cuba-small.json", {"trains": [{"name": "5", "obsolete": 0.0}]}, "trains[0].obsolete",
         "must be true or false, got 0.0"),
        ("ireland-gswr.json", {"trains": [{"name": "x", "distance": 0.0}]}, "trains[0]",
         "an 18Ireland train's distance is the number of cell edges it may cross, a whole number >= 1; got 0.0"),
    ],
)  # fmt: skip
def test_a_game_option_or_train_state_is_quoted_as_the_json_wrote_it(game_fixture, change, where, message):
    data = json.loads((Path(__file__).parent.parent / "fixtures" / game_fixture).read_text())
    data = {**data.get("position", data), **change}
    assert fails(data, where).message == message


@pytest.mark.parametrize(
    "train, message",
    [
        (1, "must be a train's name (a string), got 1"),
        (1.0, "must be a train's name (a string), got 1.0"),
        (True, "must be a train's name (a string), got true"),
        ([1], "must be a train's name (a string), got [1]"),
    ],
)
def test_a_route_naming_its_train_by_no_string_is_refused_in_plain_words(train, message):
    """It said 'must be a train's name, not a int' (and 'not a Whole' for 1.0)."""
    with pytest.raises(PositionError) as err:
        api.validate(good(), [{"train": train, "nodes": ["A1-0", "A3-0"]}])
    assert (err.value.where, err.value.message) == ("routes[0].train", message)


def test_a_value_no_json_holds_is_named_with_its_article():
    err = fails(with_(("options",), {"no_hex_twice": object()}), "options.no_hex_twice")
    assert err.message == "an object is not a JSON value"


def test_a_kind_on_the_wrong_node_type_is_named_with_its_article():
    """'not an offboard' (it said 'not a offboard')."""
    from types import SimpleNamespace

    from routecalc.rules.base import check_kinds
    from routecalc.rules.cuba import KIND_TYPES

    node = SimpleNamespace(kind="sugar", type="offboard", cell="A1", id="A1-0")
    with pytest.raises(PositionError) as err:
        check_kinds(SimpleNamespace(nodes=[node], game="18Cuba"), KIND_TYPES)
    assert str(err.value) == "cell A1: node A1-0: a sugar is a town in 18Cuba, not an offboard"
