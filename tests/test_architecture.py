"""The shape docs/architecture.md promises: the files it names exist, the simulator's
modules have no import cycles, no source file grows past what a reader can hold, and
the engine stays a loop."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "crates" / "spillway-core" / "src"
ARCHITECTURE = ROOT / "docs" / "architecture.md"

# A file past this many code lines (comments, blank lines and its unit-test module
# excluded) holds more than one concept; split it.
MAX_CODE_LINES = 1000
# The engine is the loop and its dispatch; mechanisms live in their components.
MAX_ENGINE_LINES = 450

Module = tuple[str, ...]


def named_files(text: str) -> list[str]:
    """Every file path in backquotes in the mechanism table of architecture.md."""
    start = text.index("## Where each mechanism is")
    end = text.index("\n## ", start + 1)
    names = re.findall(r"`([\w/.-]+\.(?:rs|py))`", text[start:end])
    return sorted(set(names))


def resolve_named(name: str) -> Path:
    if name.startswith(("crates/", "python/")):
        return ROOT / name
    return CORE / name


def test_every_file_the_architecture_names_exists() -> None:
    names = named_files(ARCHITECTURE.read_text())
    # The table covers every mechanism: dozens of files, not a parse that found none.
    assert len(names) > 30
    missing = [n for n in names if not resolve_named(n).is_file()]
    assert not missing, f"docs/architecture.md names files that do not exist: {missing}"


def _module_of(root: Path, path: Path) -> Module:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts == ["lib"]:
        parts = []
    return tuple(parts)


def _strip(text: str) -> str:
    """Source without its unit-test module and comments."""
    cut = re.search(r"#\[cfg\(test\)\]\s*mod tests", text)
    if cut:
        text = text[: cut.start()]
    return re.sub(r"//[^\n]*", "", text)


def module_graph(root: Path) -> dict[Module, set[Module]]:
    """Which module of a crate uses which, from `crate::` and `super::` paths and a
    parent's uses of its children. tests.rs files are test code and left out."""
    files = {
        _module_of(root, p): p
        for p in root.rglob("*.rs")
        if "bin" not in p.relative_to(root).parts and p.name != "tests.rs"
    }

    def longest_prefix(segs: list[str]) -> Module | None:
        for n in range(len(segs), 0, -1):
            if tuple(segs[:n]) in files:
                return tuple(segs[:n])
        return None

    def absolute(module: Module, kind: str, segs: list[str]) -> list[str]:
        if kind == "crate":
            return segs
        base = list(module[:-1])
        while segs and segs[0] == "super":
            segs = segs[1:]
            base = base[:-1]
        return base + segs

    graph: dict[Module, set[Module]] = {}
    for module, path in files.items():
        text = _strip(path.read_text())
        deps: set[Module] = set()
        for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
            target = longest_prefix(absolute(module, m.group(1), m.group(2).split("::")[1:]))
            if target is not None:
                deps.add(target)
        for m in re.finditer(r"\buse (crate|super)((?:::\w+)*)::\{([^}]*)\}", text):
            prefix = absolute(module, m.group(1), m.group(2).split("::")[1:])
            for item in m.group(3).split(","):
                segs = [s.strip() for s in item.split("::") if s.strip()]
                target = longest_prefix(prefix + segs) if segs else None
                if target is not None:
                    deps.add(target)
        for m in re.finditer(r"\buse (\w+)::", text):
            child = module + (m.group(1),)
            if child in files:
                deps.add(child)
        deps.discard(module)
        graph[module] = deps
    return graph


def cycles(graph: dict[Module, set[Module]]) -> list[list[Module]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[Module, int] = {}
    low: dict[Module, int] = {}
    stack: list[Module] = []
    on_stack: set[Module] = set()
    found: list[list[Module]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_planted_cycle(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    (src / "lib.rs").write_text("mod a;\nmod b;\n")
    (src / "a" / "mod.rs").write_text("mod c;\nuse c::Thing;\n")
    (src / "a" / "c.rs").write_text("use super::Other; // a child using its parent\n")
    (src / "b.rs").write_text("use crate::a::{c::Thing};\n")
    graph = module_graph(src)
    assert ("a", "c") in graph[("b",)]
    assert cycles(graph) == [[("a",), ("a", "c")]]
    (src / "a" / "c.rs").write_text("pub struct Thing;\n")
    assert cycles(module_graph(src)) == []


def test_the_simulator_has_no_import_cycles() -> None:
    graph = module_graph(CORE)
    assert len(graph) > 50
    found = cycles(graph)
    named = [["::".join(m) or "lib" for m in c] for c in found]
    assert not found, f"modules that use each other: {named}"


def code_lines(path: Path) -> int:
    text = path.read_text()
    if path.suffix == ".rs":
        text = _strip(text)
        comment = "//"
    else:
        comment = "#"
    lines = (line.strip() for line in text.splitlines())
    return sum(1 for line in lines if line and not line.startswith(comment))


def test_no_source_file_holds_more_than_one_concept() -> None:
    sources = [
        p
        for p in list((ROOT / "crates").rglob("*.rs")) + list((ROOT / "python").rglob("*.py"))
        if "target" not in p.parts and p.name != "tests.rs" and "tests" not in p.parts
    ]
    assert len(sources) > 80
    big = {str(p.relative_to(ROOT)): n for p in sources if (n := code_lines(p)) > MAX_CODE_LINES}
    assert not big, f"split these by concept: {big}"


def test_the_engine_is_a_loop() -> None:
    engine = CORE / "engine" / "mod.rs"
    assert code_lines(engine) <= MAX_ENGINE_LINES
    # It names no mechanism: those are the components'.
    text = _strip(engine.read_text()).lower()
    for mechanism in ("fastlane", "pfabric", "dctcp", "cubic", "codel", "quench", "cut_payload"):
        assert mechanism not in text, mechanism


def test_the_architecture_has_nothing_left_to_come() -> None:
    """docs/architecture.md listed DeTail as "to come" long after it was built: every
    system in its first table names where it lives, and nothing is still to come."""
    text = ARCHITECTURE.read_text()
    assert "to come" not in text and "nothing more yet" not in text
    table = text[text.index("| system |"):text.index("\n\n", text.index("| system |"))]
    rows = [r for r in table.splitlines()[2:] if r.startswith("|")]
    assert [r.split("|")[1].strip() for r in rows] == [
        "FastLane", "CP (cutting payload)", "Fastpass", "DeTail", "Turbo"]
    for r in rows:
        where = re.findall(r"`([\w/.-]+)`", r.split("|")[3])
        assert where, f"names no file: {r}"
        missing = [w for w in where if not resolve_named(w).exists()]
        assert not missing, f"{r.split('|')[1].strip()}: {missing} do not exist"
