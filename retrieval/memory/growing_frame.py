"""A conversation frame that grows at its end in amortised constant time, as a Python list does.

A question asked right after an ``add`` reads the frame with the new row in it. ``pd.concat`` of a million rows
and one copies every column (about 90 ms at 1M rows, O(N) per question). Here each column lives in a NumPy
buffer with room to spare (doubling when full, so each row is copied O(1) times on average); the new rows are
written past the end, and the frame a question reads is a new DataFrame over the first ``n`` rows of the
buffers, built without consolidating or copying them (``copy=False``; the three tz-aware time columns are
converted, a few ms at 1M rows). Rows once visible are never written again, so a frame handed out earlier
keeps its contents; its columns are read-only views, so that no caller writes into the buffers by mistake.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MIN_CAPACITY = 1024
GROWTH = 2.0


def _kind(dtype) -> str:
    """How a column is buffered: "time" (tz-aware, as UTC datetime64), "numpy" (a plain numeric dtype) or
    "object" (strings, tuples, anything else: Python objects)."""
    if isinstance(dtype, pd.DatetimeTZDtype):
        return "time"
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        return "numpy"
    return "object"


def _values(series: pd.Series, kind: str, unit: str | None) -> np.ndarray:
    """A column's values as its buffer stores them."""
    if kind == "time":
        return series.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy().astype(f"datetime64[{unit}]")
    if kind == "object":
        return series.to_numpy(dtype=object, na_value=None) if series.dtype != object else series.to_numpy()
    return series.to_numpy()


class GrowingFrame:
    """The columns of a frame in growable buffers: :meth:`extend` appends rows, :meth:`frame` the frame of all."""

    def __init__(self, frame: pd.DataFrame):
        self.columns = list(frame.columns)
        self.dtypes = {c: frame[c].dtype for c in self.columns}
        self.kinds = {c: _kind(d) for c, d in self.dtypes.items()}
        self.n = 0
        self.buffers: dict[str, np.ndarray] = {}
        self.index = np.empty(0, dtype=np.int64)
        self._reserve(max(MIN_CAPACITY, int(len(frame) * GROWTH)))
        self.extend(frame)

    def _unit(self, name: str) -> str | None:
        return self.dtypes[name].unit if self.kinds[name] == "time" else None

    def _reserve(self, capacity: int) -> None:
        for name in self.columns:
            kind = self.kinds[name]
            dtype = f"datetime64[{self._unit(name)}]" if kind == "time" else object if kind == "object" \
                else self.dtypes[name]
            grown = np.empty(capacity, dtype=dtype)
            if name in self.buffers:
                grown[:self.n] = self.buffers[name][:self.n]
            self.buffers[name] = grown
        grown = np.empty(capacity, dtype=np.int64)
        grown[:self.n] = self.index[:self.n]
        self.index = grown

    def __len__(self) -> int:
        return self.n

    def extend(self, rows: pd.DataFrame) -> None:
        """Append ``rows`` (the same columns; values cast to the first frame's dtypes) after the last row."""
        if list(rows.columns) != self.columns:
            raise ValueError(f"rows have columns {list(rows.columns)}, the frame {self.columns}")
        k = len(rows)
        if self.n + k > len(self.index):
            self._reserve(max(int(len(self.index) * GROWTH), self.n + k))
        for name in self.columns:
            self.buffers[name][self.n:self.n + k] = _values(rows[name], self.kinds[name], self._unit(name))
        self.index[self.n:self.n + k] = rows.index.to_numpy(dtype=np.int64)
        self.n += k

    def frame(self) -> pd.DataFrame:
        """The first :attr:`n` rows as a DataFrame over read-only views of the buffers."""
        data = {}
        for name in self.columns:
            view = self.buffers[name][:self.n].view()
            view.flags.writeable = False
            kind = self.kinds[name]
            if kind == "time":
                data[name] = pd.Series(pd.DatetimeIndex(view).tz_localize("UTC").tz_convert(self.dtypes[name].tz),
                                       copy=False)
            else:
                data[name] = pd.Series(view, dtype=object if kind == "object" else view.dtype, copy=False)
        index = self.index[:self.n].view()
        index.flags.writeable = False
        frame = pd.DataFrame(data, copy=False)
        frame.index = pd.Index(index, copy=False)
        return frame
