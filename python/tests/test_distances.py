"""checkers_egdb's distances (probe_dtc, probe_dtw, line) against published kings-only facts
(reference.md section 7, issue 33) and against the `egdb` command-line tool (`probe --dtc`,
`probe --dtw`, `line --json`: the Rust API behind a separate front end)."""

import json

import pytest

from checkers_egdb import ProbeError, Tablebase

from conftest import run_egdb
from test_probe import random_fens

# Published distances with no men on the board, where DTW = DTC: king v king, the longest win
# 11 plies; two kings v one king, the longest win 33 plies, the longest loss 34.
PUBLISHED = [
    ("B:WK13:BK1", ("win", 11)),
    ("B:WK14:BK1,K2", ("win", 33)),
    ("W:WK32:BK21,K29", ("loss", 34)),
    ("W:W29:B22,25", ("loss", 0)),  # White has no legal move
    ("B:WK32:BK26", ("draw", None)),  # Lasker, diagram 88, Black to move
]


@pytest.fixture(scope="module")
def dtb(dist_tables):
    return Tablebase(dist_tables)


def test_published_distances(dtb):
    for fen, want in PUBLISHED:
        assert dtb.probe_dtc(fen) == want, fen
        assert dtb.probe_dtw(fen) == want, fen
    # A crowning converts (DTC 1); the game then lasts the king v king depth after it.
    assert dtb.probe_dtc("W:W5:BK2") == ("win", 1)
    value, after = dtb.probe_dtw("B:WK1:BK2")
    assert value == "loss"
    assert dtb.probe_dtw("W:W5:BK2") == ("win", after + 1)


def test_distances_equal_the_tool(egdb, dist_tables, dtb):
    fens = random_fens(400, 4, seed=33)
    for flag, probe in (("--dtc", dtb.probe_dtc), ("--dtw", dtb.probe_dtw)):
        r = run_egdb(egdb, "probe", "--dir", str(dist_tables), flag, stdin="\n".join(fens) + "\n")
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert len(lines) == len(fens)
        for fen, line in zip(fens, lines):
            _, value, plies = line.split("\t")
            assert probe(fen) == (value, None if plies == "-" else int(plies)), (flag, fen)
    # DTW >= DTC at every decided position.
    for fen in fens:
        v, w = dtb.probe_dtw(fen)
        _, c = dtb.probe_dtc(fen)
        assert (w is None) == (c is None)
        if w is not None:
            assert w >= c, fen
            assert w % 2 == (1 if v == "win" else 0), fen


def test_line_by_metric(egdb, dist_tables, dtb):
    fen = "B:WK14:BK1,K2"
    for metric in ("dtw", "dtc", None):
        got = dtb.line(fen) if metric is None else dtb.line(fen, metric=metric)
        args = ["line", "--dir", str(dist_tables), "--json", fen]
        if metric:
            args += ["--metric", metric]
        r = run_egdb(egdb, *args)
        assert r.returncode == 0, r.stderr
        assert got == json.loads(r.stdout), metric
        key = got["metric"]
        assert key == (metric or "dtw")
        assert (got["value"], got[key]) == ("win", 33)
        assert len(got["moves"]) == 33 and got["end"] == "no_moves"
        assert got["moves"][-1][key] == 0
    # A 4-piece win where the metrics differ: the DTW line has exactly DTW(p) plies.
    fen = "B:W29,30:B2,15"
    value, depth = dtb.probe_dtw(fen)
    assert value == "win"
    got = dtb.line(fen, metric="dtw")
    assert len(got["moves"]) == depth and got["end"] == "no_moves"
    assert [m["dtw"] for m in got["moves"]] == list(range(depth - 1, -1, -1))
    assert dtb.line(fen, max_plies=3)["end"] == "max_plies"
    drawn = dtb.line("B:WK32:BK26", metric="dtw", max_plies=20)
    assert drawn["value"] == "draw" and drawn["end"] in ("repetition", "max_plies")
    with pytest.raises(ValueError, match="dtx"):
        dtb.line(fen, metric="dtx")


def test_missing_distance_files(egdb, tmp_path):
    r = run_egdb(egdb, "build", "--pieces", "2", "--dir", str(tmp_path), "--quiet")
    assert r.returncode == 0, r.stderr
    tb = Tablebase(tmp_path)
    with pytest.raises(ProbeError, match="--dtc"):
        tb.probe_dtc("B:WK13:BK1")
    with pytest.raises(ProbeError, match="--dtw"):
        tb.probe_dtw("B:WK13:BK1")
    with pytest.raises(ProbeError, match="--dtc"):
        tb.line("B:WK13:BK1")  # no .dtw files: the default is dtc, which is missing too
