"""The dependency rule of docs/architecture.md ("Layers"), every arrow of it.

Each test walks the imports (and, for core, the calls) of every module of the installed package
and fails with the offending module and import named. The rule:

- ``fullsend.core`` is pure: the standard library minus every module that does I/O, and
  ``fullsend.core`` itself; no reads of the environment or the clock.
- ``fullsend.adapters`` never imports ``fullsend.app`` or ``fullsend.simulator``.
- ``fullsend.simulator`` never imports ``fullsend.app``; only ``fullsend/app/commands`` imports the
  simulator.
- No two modules of ``core``, ``adapters`` or ``app`` import each other.
- No import loop between sibling folders of a layer; ``adapters/sandbox`` never imports
  ``adapters/runtimes`` and ``app/watch`` never imports ``app/action``.
- ``app/action`` is split by concept: the run's modules at its root, ``skip/``, ``agent/``,
  ``confinement/`` and ``status/``; ``skip/`` imports none of the others, ``status/`` and
  ``confinement/`` import neither ``agent/`` nor each other (nor ``skip/``); the confinement
  adapters (``adapters/confinement/``) import no other adapter folder.
- The rule registry (``fullsend/rules.py``) never imports ``fullsend.app``.
- ``fullsend explain`` and ``fullsend report`` read through the ``Forge`` port: only their command
  modules name an adapter.
- Nothing in the package imports the test doubles (``tests``).
- ``urllib3``, ``http.client``, ``requests`` and ``urllib.request`` are imported only by
  ``fullsend/adapters/github/client.py`` (and the agent CLI installer, which never talks to GitHub).
- The wall clock is read, and sleeping happens, only in ``fullsend/adapters/clock.py``.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "fullsend"

#: Standard-library modules that reach the environment, the clock, processes, files or the network.
IO_MODULES = frozenset(
    {
        "os",
        "subprocess",
        "socket",
        "time",
        "threading",
        "http",
        "urllib.request",
        "urllib.error",
        "shutil",
        "signal",
        "select",
        "selectors",
        "asyncio",
        "multiprocessing",
        "tempfile",
        "pathlib",
        "io",
        "sys",
        "logging",
        "ssl",
        "fcntl",
        "pty",
        "random",
        "secrets",
        "uuid",
    }
)
#: Attribute calls that read the clock or the environment.
IMPURE_CALLS = frozenset({"now", "utcnow", "today", "monotonic", "time", "getenv", "sleep", "perf_counter"})
CLOCK_CALLS = frozenset(
    {
        ("time", "sleep"),
        ("time", "monotonic"),
        ("time", "time"),
        ("datetime", "now"),
        ("time", "perf_counter"),
        ("datetime", "utcnow"),
    }
)
CLOCK_MODULE = PKG / "adapters" / "clock.py"


@dataclass(frozen=True)
class Import:
    """One import statement: the module that holds it, the line, and the imported dotted name."""

    path: Path
    line: int
    name: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(PKG.parent)}:{self.line} imports {self.name}"


def _modules(under: Path) -> list[Path]:
    return sorted(under.rglob("*.py"))


def _imports(path: Path) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(Import(path, node.lineno, node.module))
            found += [Import(path, node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _top(name: str) -> str:
    return name.split(".")[0]


def _is_under(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _offending(paths: list[Path], bad) -> list[str]:
    return sorted({str(i) for p in paths for i in _imports(p) if bad(i.name)})


def _assert_none(found: list[str]) -> None:
    if found:
        pytest.fail("the dependency rule is broken:\n" + "\n".join(found), pytrace=False)


def test_core_imports_only_pure_stdlib_and_core():
    def bad(name: str) -> bool:
        if _is_under(name, "fullsend.core") or _is_under(name, "__future__"):
            return False
        if _top(name) == "fullsend":
            return True
        return _top(name) not in sys.stdlib_module_names or any(_is_under(name, m) for m in IO_MODULES)

    _assert_none(_offending(_modules(PKG / "core"), bad))


#: The standard library core may use: an allow-list, so a module nobody thought of (``glob``,
#: ``tarfile``, ``ctypes`` …) is refused until someone checks it does no I/O and adds it here.
CORE_STDLIB = frozenset(
    {
        "__future__",
        "abc",
        "base64",
        "bisect",
        "collections",
        "contextlib",
        "copy",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "hmac",
        "ipaddress",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "re",
        "string",
        "textwrap",
        "types",
        "typing",
        "unicodedata",
        "urllib.parse",
    }
)
#: Builtins that reach the outside world (files, the terminal, code loading).
IO_BUILTINS = frozenset({"open", "input", "print", "exec", "eval", "compile", "__import__", "breakpoint"})


def test_core_stdlib_imports_are_on_the_allow_list():
    def bad(name: str) -> bool:
        if _top(name) == "fullsend":
            return False  # the package rule is the test above
        return not any(_is_under(name, allowed) for allowed in CORE_STDLIB)

    _assert_none(_offending(_modules(PKG / "core"), bad))


def test_core_calls_no_io_builtin():
    calls = []
    for path in _modules(PKG / "core"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in IO_BUILTINS:
                calls.append(f"{path.relative_to(PKG.parent)}:{node.lineno} calls {node.func.id}()")
    _assert_none(calls)


def test_core_reads_neither_clock_nor_environment():
    calls = []
    for path in _modules(PKG / "core"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and (node.attr in IMPURE_CALLS or node.attr == "environ"):
                calls.append(f"{path.relative_to(PKG.parent)}:{node.lineno} uses .{node.attr}")
    _assert_none(calls)


@pytest.mark.parametrize(
    ("layer", "forbidden"),
    [
        ("adapters", "fullsend.app"),
        ("adapters", "fullsend.simulator"),
        ("simulator", "fullsend.app"),
        ("core", "fullsend.adapters"),
    ],
)
def test_layer_does_not_import(layer, forbidden):
    _assert_none(_offending(_modules(PKG / layer), lambda n: _is_under(n, forbidden)))


#: ``app/action`` by concept (docs/architecture.md "Module index"): the run's own modules at its root,
#: every other module in the folder of its concept.
ACTION_ROOT_MODULES = {"__init__", "cancel", "finish", "lifecycle", "outputs", "plan", "providers", "tokens"}
ACTION_FOLDERS = {"agent", "confinement", "skip", "status"}


def test_app_action_is_split_by_concept():
    action = PKG / "app" / "action"
    assert {p.stem for p in action.glob("*.py")} == ACTION_ROOT_MODULES
    assert {p.name for p in action.iterdir() if p.is_dir() and p.name != "__pycache__"} == ACTION_FOLDERS
    confinement = {p.stem for p in (PKG / "adapters").glob("*.py")} & {"isolation", "capdrop", "proc", "reach"}
    assert confinement == set(), "the confinement modules live in fullsend/adapters/confinement/"


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        # the skip decides before anything of a working run is loaded (docs/architecture.md "Fast skip")
        ("app/action/skip", "fullsend.app.action.agent"),
        ("app/action/skip", "fullsend.app.action.status"),
        ("app/action/skip", "fullsend.app.action.confinement"),
        ("app/action/status", "fullsend.app.action.agent"),
        ("app/action/status", "fullsend.app.action.skip"),
        ("app/action/status", "fullsend.app.action.confinement"),
        ("app/action/confinement", "fullsend.app.action.agent"),
        ("app/action/confinement", "fullsend.app.action.status"),
        ("adapters/confinement", "fullsend.adapters.sandbox"),
        ("adapters/confinement", "fullsend.adapters.runtimes"),
        ("adapters/confinement", "fullsend.adapters.github"),
    ],
)
def test_concept_folder_does_not_import(folder, forbidden):
    _assert_none(_offending(_modules(PKG / folder), lambda n: _is_under(n, forbidden)))


def _folder(name: str) -> str | None:
    """The dotted name of the package (a folder, not a module) that ``name`` is or lies in."""
    parts = name.split(".")
    while parts:
        if (PKG.parent.joinpath(*parts)).is_dir():
            return ".".join(parts)
        parts.pop()
    return None


def _sibling_arrows() -> dict[tuple[str, str], list[str]]:
    """Every import from one folder into a sibling folder (two sub-packages of one package):
    ``(from folder, to folder) -> ["path:line imports name", ...]``."""
    arrows: dict[tuple[str, str], list[str]] = {}
    for path in _modules(PKG):
        here = ".".join(path.relative_to(PKG.parent).with_suffix("").parts)
        for imp in _imports(path):
            there = _folder(imp.name) if _is_under(imp.name, "fullsend") else None
            src = _folder(here)
            if there is None or src is None:
                continue
            a, b = src.split("."), there.split(".")
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            if common < len(a) and common < len(b):  # neither folder holds the other
                key = (".".join(a[: common + 1]), ".".join(b[: common + 1]))
                arrows.setdefault(key, []).append(str(imp))
    return arrows


def test_no_import_loop_between_sibling_folders():
    """Sibling folders of one layer (``core/delta`` and ``core/text``, ``app/action`` and
    ``app/watch``, ``adapters/sandbox`` and ``adapters/runtimes`` …) depend one way at most: a loop
    is named with one import of each direction."""
    arrows = _sibling_arrows()
    loops = sorted(
        f"{a} <-> {b}:\n  {arrows[(a, b)][0]}\n  {arrows[(b, a)][0]}" for (a, b) in arrows if a < b and (b, a) in arrows
    )
    if loops:
        pytest.fail("import loops between sibling folders:\n" + "\n".join(loops), pytrace=False)


def _module_name(path: Path) -> str:
    name = ".".join(path.relative_to(PKG.parent).with_suffix("").parts)
    return name.removesuffix(".__init__")


def test_no_two_product_modules_import_each_other():
    """No module of ``core``, ``adapters`` or ``app`` imports one that imports it back (lazy imports
    included: ``status.py`` and ``live_status.py`` once did, issue 44)."""
    paths = [p for layer in ("core", "adapters", "app") for p in _modules(PKG / layer)]
    names = {_module_name(p): p for p in paths}
    imported = {name: {i.name for i in _imports(path)} & names.keys() for name, path in names.items()}
    loops = sorted(f"{a} <-> {b}" for a in imported for b in imported[a] if a < b and a in imported[b])
    _assert_none(loops)


def test_the_sibling_walker_sees_folders_not_modules():
    arrows = _sibling_arrows()
    assert ("fullsend.adapters.runtimes", "fullsend.adapters.sandbox") in arrows
    assert all(_folder(a) == a and _folder(b) == b for a, b in arrows)


def test_only_the_commands_import_the_simulator():
    """``fullsend demo`` and ``fullsend simulator serve`` are the simulator's callers in the package."""
    others = [
        p for p in _modules(PKG) if (PKG / "app" / "commands") not in p.parents and (PKG / "simulator") not in p.parents
    ]
    _assert_none(_offending(others, lambda n: _is_under(n, "fullsend.simulator")))


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        (("adapters", "sandbox"), "fullsend.adapters.runtimes"),
        (("app", "watch"), "fullsend.app.action"),
    ],
)
def test_named_arrows_between_sibling_folders(folder, forbidden):
    """The sandboxes never import a runtime (runtimes drive sandboxes); the watcher never imports
    the action (the action starts the watcher)."""
    _assert_none(_offending(_modules(PKG.joinpath(*folder)), lambda n: _is_under(n, forbidden)))


def test_the_rule_registry_does_not_import_the_app_layer():
    _assert_none(_offending([PKG / "rules.py"], lambda n: _is_under(n, "fullsend.app")))


@pytest.mark.parametrize("command", ["explain", "report"])
def test_read_only_commands_read_only_through_the_forge_port(command: str):
    """Only the command module (the composition root) names an adapter; the readers, the
    counting and the renderers see the ``fullsend.ports.Forge`` port."""
    folder = PKG / "app" / "commands" / command
    readers = [p for p in _modules(folder) if p.name != "command.py"]
    assert readers, f"no modules under {folder}"
    _assert_none(_offending(readers, lambda n: _is_under(n, "fullsend.adapters")))


def test_nothing_in_the_package_imports_the_test_doubles():
    _assert_none(_offending(_modules(PKG), lambda n: _top(n) in {"tests", "conftest", "pytest", "hypothesis"}))


#: The HTTP libraries: whoever imports one can open a connection.
HTTP_LIBRARIES = ("urllib3", "http.client", "requests", "urllib.request")
#: The one module besides the client that sends HTTP, and why: it never talks to GitHub.
HTTP_EXCEPTIONS = {
    PKG / "adapters" / "agentcli" / "fetch.py": "never talks to GitHub",
    PKG / "simulator" / "agent" / "agentlog.py": "never talks to GitHub",
}


def test_only_the_client_opens_http_connections():
    """One HTTP client (docs/architecture.md "GitHub access"): ``fullsend/adapters/github/client.py``
    alone imports ``urllib3``, ``http.client``, ``requests`` or ``urllib.request``; the agent CLI
    installer (the npm registry) and the scripted agent's log (the simulator on loopback) say so
    in their docstrings."""
    client = PKG / "adapters" / "github" / "client.py"
    others = [p for p in _modules(PKG) if p != client and p not in HTTP_EXCEPTIONS]
    _assert_none(_offending(others, lambda n: any(_is_under(n, lib) for lib in HTTP_LIBRARIES)))
    for path, why in HTTP_EXCEPTIONS.items():
        assert why in ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=True).replace("\n", " ")


def test_the_http_rule_names_an_import_of_any_http_library(tmp_path):
    for line in ("import http.client", "from urllib import request", "import requests.utils", "from urllib3 import x"):
        (tmp_path / "m.py").write_text(line + "\n", encoding="utf-8")
        names = [i.name for i in _imports(tmp_path / "m.py")]
        assert any(_is_under(n, lib) for n in names for lib in HTTP_LIBRARIES), line


def test_nothing_in_the_package_imports_pygithub():
    """One HTTP stack (docs/architecture.md "GitHub access"): PyGithub is no dependency."""
    _assert_none(_offending(_modules(PKG), lambda n: _top(n) == "github"))


def test_only_the_clock_adapter_reads_the_wall_clock_or_sleeps():
    found = []
    for path in _modules(PKG):
        if path == CLOCK_MODULE or (PKG / "simulator") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and (node.value.id, node.attr) in CLOCK_CALLS
            ):
                found.append(f"{path.relative_to(PKG.parent)}:{node.lineno} uses {node.value.id}.{node.attr}")
    _assert_none(found)


def test_the_walker_names_an_offending_import(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nfrom fullsend.app import lint\n", encoding="utf-8")
    names = [i.name for i in _imports(sample)]
    assert names == ["os", "fullsend.app", "fullsend.app.lint"]
