"""The import directions ARCHITECTURE.md draws, checked on the source with ``ast`` (imports inside functions
count too): scoring stands alone, vision may use scoring, pipeline joins the two, tables (storage) uses scoring,
api and datasets sit on top. The shells (api/) see the rules engine and the vision stages only through the
pipeline and the tables: one path per question, so the command line and the service cannot answer differently."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROJECT = {"scoring", "vision", "pipeline", "api", "datasets", "tables"}
ALLOWED = {
    "scoring": {"scoring"},
    "vision": {"vision", "scoring"},
    "pipeline": {"pipeline", "vision", "scoring"},
    "api": {"api", "pipeline", "tables"},
    "datasets": {"datasets", "vision", "scoring"},
    "tables": {"tables", "scoring", "pipeline"},
}
# What tables/ may take of the pipeline: the typed values it stores (the contract's round, settlement and
# calibration), not the stages.
TABLES_FROM_PIPELINE = {"pipeline.models", "pipeline.table_models"}


def imported_packages(path: Path) -> set[str]:
    """The project's top-level packages a module imports (absolute imports; the project uses no relative ones)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found |= {name.split(".")[0] for name in names} & PROJECT
    return found


def test_the_checker_sees_imports_at_any_depth(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom scoring.tiles import TILES\n\ndef f():\n    import api.cli\n"
                      "    from vision import detect\n", encoding="utf-8")
    assert imported_packages(module) == {"scoring", "api", "vision"}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_package_imports_only_what_it_may(package: str) -> None:
    wrong = {str(path.relative_to(ROOT)): sorted(imported_packages(path) - ALLOWED[package])
             for path in sorted((ROOT / package).rglob("*.py"))}
    assert not {k: v for k, v in wrong.items() if v}, f"{package}/ may import only {sorted(ALLOWED[package])}"


def test_tables_take_only_the_typed_values_of_the_pipeline() -> None:
    wrong = {}
    for path in sorted((ROOT / "tables").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        if found := {n for n in names if n.split(".")[0] == "pipeline"} - TABLES_FROM_PIPELINE:
            wrong[str(path.relative_to(ROOT))] = sorted(found)
    assert not wrong, f"tables/ may import only {sorted(TABLES_FROM_PIPELINE)} of the pipeline"


def test_what_runs_at_a_table_does_not_import_training() -> None:
    """vision/ runtime modules never import vision.training (torch, ultralytics and onnx stay out of run time)."""
    runtime = [p for p in (ROOT / "vision").glob("*.py")]
    assert runtime
    for path in runtime:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
        assert not [n for n in names if n.startswith("vision.training")], path.name


def test_no_import_circle_between_modules() -> None:
    """No cycle among the modules of the project (e.g. api.cli ↔ api.cli.vision_commands)."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p
               for pkg in PROJECT for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            deps |= {t for t in targets if t in modules and t != name}
        graph[name] = deps
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                raise AssertionError("import circle: " + " → ".join([*trail[trail.index(dep):], dep]))
            if dep not in state:
                visit(dep, [*trail, dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_no_sys_path_edits() -> None:
    """The package is installed (editable): nothing puts folders on sys.path by hand."""
    offenders = [str(p.relative_to(ROOT)) for folder in (*PROJECT, "tests", "benchmarks")
                 for p in (ROOT / folder).rglob("*.py") if "sys.path.insert" in p.read_text(encoding="utf-8")
                 and p != Path(__file__).resolve()]
    assert not offenders


def _imports(path: Path) -> list[ast.ImportFrom | ast.Import]:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Import | ast.ImportFrom)]


def test_the_command_line_answers_through_the_pipeline_not_the_service() -> None:
    """``zhuoji`` imports nothing of the HTTP service (api/service) except to start it (``zhuoji serve``)."""
    wrong = {}
    for path in sorted((ROOT / "api" / "cli").glob("*.py")):
        if path.name == "service_commands.py":  # `zhuoji serve` starts the service itself
            continue
        names = [a.name for n in _imports(path) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module for n in _imports(path) if isinstance(n, ast.ImportFrom) and n.module]
        found = sorted(n for n in names if n.startswith(("api.service", "api.live")))
        if found:
            wrong[path.name] = found
    assert not wrong, f"api/cli modules importing the service: {wrong}"


def test_route_modules_share_helpers_only_through_their_dependencies_module() -> None:
    """No route module imports another module's private names (``_store``, ``_errors``, ``_detector``)."""
    wrong = {}
    for path in sorted((ROOT / "api" / "service").glob("*.py")):
        private = [f"{n.module}.{a.name}" for n in _imports(path) if isinstance(n, ast.ImportFrom) and n.module
                   and n.module.startswith("api.") for a in n.names if a.name.startswith("_")]
        if private:
            wrong[path.name] = private
    assert not wrong, f"private helpers imported across modules: {wrong}"
