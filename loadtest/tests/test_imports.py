"""The lab's layers import in one direction, and its modules import one another without a circle: every import, at
the top or in a function, read by ast. Where a new piece belongs: loadtest/README.md, "Where things go"."""

import ast
import os
import tempfile
import unittest
from typing import Dict, List, Set

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")

# Each layer and the layers it may import, lowest first: results reads results.json and imports only core, so that a
# report of any folder runs without starting anything.
LAYERS = {
    "core": {"core"},
    "host": {"core", "host"},
    "load": {"core", "host", "load"},
    "stage": {"core", "host", "load", "stage"},
    "measure": {"core", "host", "load", "stage", "measure"},
    "results": {"core", "results"},
    "experiments": {"core", "host", "load", "stage", "measure", "results", "experiments"},
}
# The entry point, which hands each command to its experiment.
TOP = {"__main__", "__init__"}
# At most this many modules directly in lab/: the rest in the layers' packages.
MOST_AT_TOP = 8


def modules_of(root: str) -> Dict[str, str]:
    """Every module below root by its dotted name within the package (core.errors, __main__), with its file."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                relative = os.path.relpath(os.path.join(folder, name[:-3]), root)
                found[relative.replace(os.sep, ".")] = os.path.join(folder, name)
    return found


def imports_of(root: str) -> Dict[str, Set[str]]:
    """Per module below root (a package folder): the modules of the package it imports, wherever the import stands."""
    modules = modules_of(root)
    package = os.path.basename(root)
    graph = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        here = module.split(".")[:-1]
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - node.level + 1]
                elif (node.module or "").split(".")[0] == package:
                    base = []
                else:
                    continue
                parts = base + (
                    [part for part in (node.module or "").split(".") if part]
                    if node.level
                    else (node.module or "").split(".")[1:]
                )
                target = ".".join(parts)
                # `from .pkg import a, b` imports modules pkg.a and pkg.b; `from .pkg.a import thing` module pkg.a.
                if target in modules:
                    found.add(target)
                else:
                    found.update(target + "." + alias.name if target else alias.name for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(
                    alias.name[len(package) + 1 :] for alias in node.names if alias.name.startswith(package + ".")
                )
        graph[module] = {name for name in found if name in modules} - {module}
    return graph


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The import circles a depth-first walk meets, each as its modules back to the first: [] only when there is
    none."""
    found, finished = [], set()

    def visit(module: str, trail: List[str]) -> None:
        if module in trail:
            circle = trail[trail.index(module) :]
            first = circle.index(min(circle))
            rotated = circle[first:] + circle[:first]
            if rotated + [rotated[0]] not in found:
                found.append(rotated + [rotated[0]])
            return
        if module in finished:
            return
        for imported in sorted(graph[module]):
            visit(imported, trail + [module])
        finished.add(module)

    for module in sorted(graph):
        visit(module, [])
    return found


def against_the_layers(graph: Dict[str, Set[str]]) -> List[str]:
    """Every import of a layer's module that reaches a layer it may not import, as "module -> imported"."""
    found = []
    for module, imported in sorted(graph.items()):
        layer = module.split(".")[0]
        if layer in TOP:
            continue
        found += ["%s -> %s" % (module, name) for name in sorted(imported) if name.split(".")[0] not in LAYERS[layer]]
    return found


class LayerTests(unittest.TestCase):
    def test_every_module_is_in_a_layer_or_the_entry_point(self):
        at_top = [name for name in modules_of(LAB) if "." not in name]
        self.assertLessEqual(len(at_top), MOST_AT_TOP, at_top)
        self.assertEqual([], [name for name in modules_of(LAB) if name.split(".")[0] not in set(LAYERS) | TOP])

    def test_each_layer_imports_only_the_layers_below_it(self):
        self.assertEqual([], against_the_layers(imports_of(LAB)))

    def test_the_lab_has_no_import_circle(self):
        self.assertEqual(circles(imports_of(LAB)), [])

    def test_the_errors_and_the_catalogue_import_nothing_of_the_lab(self):
        graph = imports_of(LAB)
        self.assertEqual((graph["core.errors"], graph["core.catalogue"]), (set(), set()))

    def test_a_circle_and_an_import_against_the_layers_inside_a_function_are_found(self):
        with tempfile.TemporaryDirectory() as root:
            package = os.path.join(root, "pkg")
            for layer in ("core", "results"):
                os.makedirs(os.path.join(package, layer))
            sources = {
                "__init__": "",
                "core/__init__": "",
                "results/__init__": "",
                "core/a": "from . import b\n",
                "core/b": "from .c import thing\n",
                "core/c": "def thing():\n    from . import a\n    return a\n",
                "core/d": "import pkg.core.a\n",
                "results/e": "from ..core import a\n",
                "core/f": "def later():\n    from ..results import e\n",
            }
            for name, text in sources.items():
                with open(os.path.join(package, name + ".py"), "w") as handle:
                    handle.write(text)

            graph = imports_of(package)

        self.assertEqual(graph["core.d"], {"core.a"})
        self.assertEqual(graph["results.e"], {"core.a"})
        self.assertEqual(circles(graph), [["core.a", "core.b", "core.c", "core.a"]])
        self.assertEqual(against_the_layers(graph), ["core.f -> results.e"])


if __name__ == "__main__":
    unittest.main()
