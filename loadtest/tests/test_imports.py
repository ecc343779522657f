"""The lab's modules import one another without a circle: every import, at the top or in a function, read by ast."""

import ast
import os
import tempfile
import unittest
from typing import Dict, List, Set

LAB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lab")


def imports_of(folder: str) -> Dict[str, Set[str]]:
    """Per module of a package folder: the modules of the same package it imports, wherever the import stands."""
    modules = {name[:-3] for name in os.listdir(folder) if name.endswith(".py")}
    package = os.path.basename(folder)
    graph = {}
    for module in modules:
        with open(os.path.join(folder, module + ".py"), encoding="utf-8") as source:
            tree = ast.parse(source.read())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    parts = node.module.split(".") if node.module else []
                elif node.level == 0 and (node.module or "").split(".")[0] == package:
                    parts = node.module.split(".")[1:]
                else:
                    continue
                # `from . import a, b` imports modules a and b; `from .a import thing` module a.
                found.update(parts[:1] or [alias.name for alias in node.names])
            elif isinstance(node, ast.Import):
                found.update(alias.name.split(".")[1] for alias in node.names if alias.name.startswith(package + "."))
        graph[module] = found & modules - {module}
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


class ImportCircleTests(unittest.TestCase):
    def test_the_lab_has_no_import_circle(self):
        self.assertEqual(circles(imports_of(LAB)), [])

    def test_the_errors_import_nothing_of_the_lab(self):
        self.assertEqual(imports_of(LAB)["errors"], set())

    def test_the_catalogue_of_facts_imports_nothing_of_the_lab(self):
        self.assertEqual(imports_of(LAB)["catalogue"], set())

    def test_a_circle_through_an_import_inside_a_function_is_found(self):
        with tempfile.TemporaryDirectory() as root:
            package = os.path.join(root, "pkg")
            os.mkdir(package)
            sources = {
                "__init__": "",
                "a": "from . import b\n",
                "b": "from .c import thing\n",
                "c": "def thing():\n    from . import a\n    return a\n",
                "d": "import pkg.a\n",
            }
            for name, text in sources.items():
                with open(os.path.join(package, name + ".py"), "w") as handle:
                    handle.write(text)

            graph = imports_of(package)

        self.assertEqual(graph["d"], {"a"})
        self.assertEqual(circles(graph), [["a", "b", "c", "a"]])


if __name__ == "__main__":
    unittest.main()
