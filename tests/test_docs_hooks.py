"""The site's hook that shows the docstrings' Sphinx roles as code."""

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location("docs_hooks", Path(__file__).parent.parent / "docs" / "hooks.py")
assert spec and spec.loader
hooks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hooks)


def test_a_role_reads_as_its_name_in_code():
    html = "see :func:<code>routecalc.solvers.warm_up</code> and :class:<code>~routecalc.errors.PositionError</code>"
    assert hooks.on_page_content(html) == ("see <code>routecalc.solvers.warm_up</code> and <code>PositionError</code>")


def test_other_code_is_left_as_it_is():
    html = "a <code>:func:</code> word and key:<code>x</code>"
    assert hooks.on_page_content(html) == html
