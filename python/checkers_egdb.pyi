"""Endgame tables of English checkers (8x8, short kings): win/loss/draw values for the side to
move, from directories built by `egdb build`.

Values are ``"win"``, ``"loss"`` or ``"draw"`` for the side to move (``probe_bitboards``: 1, -1,
0). Positions are PDN FEN (``"W:WK19,K23:BK28,12"``) or bitboards (bit i = square i+1, squares
1-32 in standard numbering; side 0 = Black to move, 1 = White). Captures are resolved by search,
so capture positions get their true value.

Errors keep the messages of the Rust library: ``ValueError`` for bad input (bad FEN, illegal
position, more pieces than the tables cover), ``ProbeError`` (an ``OSError``) for table problems.
"""

import os
import pathlib
from typing import Any, Literal, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

Value = Literal["win", "loss", "draw"]

class ProbeError(OSError):
    """No tables in the directory, a missing table (named), a corrupt file or an I/O error."""

class Tablebase:
    """Tables opened from ``directory`` (files opened lazily) with a block cache of
    ``cache_mb`` MiB (0 = none; the value, distance and depth-to-win caches get this budget
    each, so up to three times ``cache_mb`` with ``probe_dtc``, ``probe_dtw`` and ``line``),
    under ``rules`` (``"english"``, ``"russian"``,
    ``"brazilian"``, ``"italian"``, ``"giveaway"``, ``"pool"``, ``"spanish"``, ``"czech"``;
    default ``None``: the rules in the files' headers). Probes, moves and lines follow the
    variant's rules. Thread-safe; batch calls release the GIL.

    Raises ``ProbeError`` if the directory cannot be read, holds no ``*.egdb`` file, or holds
    tables of other rules than ``rules``; ``ValueError`` for a negative ``cache_mb`` or an
    unknown rules name."""

    def __init__(
        self,
        directory: Union[str, os.PathLike[str]],
        cache_mb: int = 64,
        rules: Optional[str] = None,
    ) -> None: ...
    @property
    def directory(self) -> pathlib.Path:
        """The table directory."""
    @property
    def rules(self) -> str:
        """The rules the tables are of (``"english"``, ``"russian"``, ...)."""
    @property
    def max_pieces(self) -> int:
        """Largest piece count of any table file found."""
    def probe(self, fen: str) -> Value:
        """Value of ``fen`` for the side to move."""
    def probe_cached(self, fen: str) -> Optional[Value]:
        """As ``probe`` without reading files or decoding blocks: ``None`` when not cached."""
    def probe_many(self, fens: Sequence[str]) -> list[Value]:
        """Values of many FENs in input order (parallel, GIL released). The first failing item
        raises, its message prefixed ``item <i>: ``."""
    def probe_bitboards(
        self,
        black: npt.ArrayLike,
        white: npt.ArrayLike,
        kings: npt.ArrayLike,
        side: npt.ArrayLike,
        unknown: Optional[int] = None,
    ) -> npt.NDArray[np.int8]:
        """Values of positions given as equal-length 1-D integer arrays (bitboards below 2**32,
        side 0 or 1): a new int8 array, 1 win, 0 draw, -1 loss (parallel, GIL released). With
        ``unknown`` set, positions with more pieces than the tables get that value instead of
        raising; other failures raise for the first failing item (``item <i>: ...``)."""
    def moves(self, fen: str) -> list[tuple[str, Value]]:
        """Legal moves under the tables' rules (``"9-14"``, ``"9x18x27"``; every capture path,
        generator order) with their values for the side to move. Empty when the side to move
        has no move (it has lost; in giveaway it has won)."""
    def probe_dtc(self, fen: str) -> tuple[Value, Optional[int]]:
        """Distance to conversion (plies; a capture or man move converts): ``(value, plies)``,
        plies ``None`` for a draw. Needs the ``.dtc`` files of ``egdb build --dtc``
        (``ProbeError`` naming the slice otherwise)."""
    def probe_dtw(self, fen: str) -> tuple[Value, Optional[int]]:
        """Depth to win (plies to the end of the game, fastest win against the longest
        defence): ``(value, plies)``, wins odd, losses even, plies ``None`` for a draw. Needs
        the ``.dtw`` files of ``egdb build --dtw`` (``ProbeError`` otherwise)."""
    def line(
        self,
        fen: str,
        metric: Optional[Literal["dtw", "dtc"]] = None,
        max_plies: int = 1000,
    ) -> dict[str, Any]:
        """The perfect line by ``metric`` (default ``"dtw"`` where the position's ``.dtw``
        file is present, else ``"dtc"``), as ``egdb line --json``: ``start``, ``metric``,
        ``value``, the distance under the metric's name, ``moves`` (each ``move``,
        ``conversion``, ``after``, ``value`` and the distance after it for the side to move
        there) and ``end`` (``"no_moves"``, ``"repetition"``, ``"max_plies"``). A line by DTW
        from a won or lost position has exactly its depth in moves and ends ``"no_moves"``.
        ``ValueError`` for another metric."""
    def stats(self) -> dict[str, int]:
        """Counters since opening: probes, cache_hits, cache_misses, blocks_decoded,
        blocks_failed, cached_blocks, cached_bytes, slices_opened, threat_searches,
        threat_memo_hits."""

def parse_fen(fen: str) -> tuple[int, int, int, int]:
    """``(black, white, kings, side)`` bitboards of a FEN; raises ``ValueError``."""

def to_fen(black: int, white: int, kings: int, side: int) -> str:
    """Canonical FEN of bitboards; raises ``ValueError`` for an illegal position."""
