"""The engine's layers point one way: no module imports a higher layer, at
module level or inside a function, and no import circle exists at all.

The order is the one the architecture page documents (docs/architecture.md).
Imports under ``if TYPE_CHECKING:`` are annotations only (never run) and are
left out: the one such upward reference is the board's ``Position.rules``
annotation naming the rule-set base class.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "routecalc"

#: Lowest first, read from the architecture page's layer table (its second
#: column): a module may import its own layer and the layers below.
LAYERS: list[list[str]] = [
    [name.strip(" `/") for name in row.split("|")[2].split(",") if name.strip("` /") != "service"]
    for row in (ROOT / "docs" / "architecture.md")
    .read_text()
    .split("| layer | modules | holds |")[1]
    .split("\n\n")[0]
    .splitlines()[2:]
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The layer of ``routecalc.x[.y]``: its top-level part below ``routecalc``."""
    top = module.split(".")[1] if module != "routecalc" else "__init__"
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise AssertionError(f"{module} is in no layer: add it to the table of docs/architecture.md")


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: str) -> list[tuple[str, int, bool]]:
    """(imported routecalc module, line, inside a function) for every run-time import."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for rest in child.orelse:
                    visit(rest, in_function)
                continue
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, inner) for a in child.names if a.name.startswith("routecalc"))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith("routecalc"):
                    for alias in child.names:  # "from . import c2c" and "from ..kernels import combination"
                        sub = f"{target}.{alias.name}"
                        found.append((sub if sub in MODULES else target, child.lineno, inner))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module: str) -> None:
    upward = [
        f"{target} (line {line}{', in a function' if inner else ''})"
        for target, line, inner in imports_of(module)
        if layer_of(target) > layer_of(module)
    ]
    assert not upward, f"{module} (layer {layer_of(module)}) imports a higher layer: {', '.join(upward)}"


def test_no_import_circle() -> None:
    graph = {m: {t for t, _, _ in imports_of(m) if t != m} for m in MODULES}
    state: dict[str, int] = {}  # 1 on the stack, 2 done

    def walk(m: str, stack: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                raise AssertionError("import circle: " + " -> ".join(stack[stack.index(t) :] + [t]))
            if t not in state:
                walk(t, stack + [t])
        state[m] = 2

    for m in sorted(MODULES):
        if m not in state:
            walk(m, [m])


def test_the_checker_sees_function_level_and_upward_imports(tmp_path: Path) -> None:
    """The walk above must catch what it guards against: a rule module that
    reaches up to the validator inside a function."""
    fake = "routecalc.rules.fake"
    MODULES[fake] = tmp_path / "fake.py"
    MODULES[fake].write_text("def f():\n    from ..validate import check_route\n    return check_route\n")
    try:
        assert imports_of(fake) == [("routecalc.validate", 2, True)]
        assert layer_of("routecalc.validate") > layer_of(fake)
    finally:
        del MODULES[fake]
