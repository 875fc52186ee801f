"""The generated parts of the documentation: the scenario key reference
(docs/reference.md, from the simulator's key table) and the column and counter tables of
docs/outputs.md (from the output schemas), so neither can drift from the code.

In docs/outputs.md a generated table sits between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``; the prose around it is written by hand."""

from __future__ import annotations

import re

from spillway import _core

TABLES = ("flows", "queries", "ports", "timeseries", "flow_throughput", "pings", "counters")
_BLOCK = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated -->)", re.S)


def keys() -> str:
    """docs/reference.md: every scenario key, its values, default and meaning."""
    return _core.reference()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table(name: str) -> str:
    """The Markdown table of one output table's columns, or of the run's counters."""
    schemas = _core.schemas()
    if name not in TABLES:
        raise KeyError(f"no output table {name!r}; the tables are {', '.join(TABLES)}")
    if name == "counters":
        rows = ["| counter | meaning |", "|---|---|"]
        rows += [f"| `{n}` | {_cell(doc)} |" for n, doc in schemas["counters"]]
        return "\n".join(rows) + "\n"
    rows = ["| column | type | meaning |", "|---|---|---|"]
    for c in schemas[name]:
        ty = "dictionary" if c["labels"] is not None else c["type"]
        if c["null"] != "never":
            ty += ", null"
        rows.append(f"| `{c['name']}` | {ty} | {_cell(c['doc'])} |")
    return "\n".join(rows) + "\n"


def fill_outputs(text: str) -> str:
    """docs/outputs.md's text with every generated table made afresh."""
    found = _BLOCK.findall(text)
    if not found:
        raise ValueError("no '<!-- generated: NAME -->' block in the text")
    return _BLOCK.sub(lambda m: m.group(1) + table(m.group(2)) + m.group(4), text)
