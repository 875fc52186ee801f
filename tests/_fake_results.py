"""A stand-in for a sweep's `spillway.store.Results` built from hand-made tables, for
tests of a reproduction's analysis on known numbers: `sql` answers from DuckDB over the
given DataFrames, as the store answers from its catalog's views."""

from __future__ import annotations

import duckdb
import pandas as pd


class FakeResults:
    def __init__(self, **tables: pd.DataFrame) -> None:
        self.con = duckdb.connect()
        for name, frame in tables.items():
            self.con.register(name, frame)

    def sql(self, query: str) -> pd.DataFrame:
        return self.con.execute(query).df()
