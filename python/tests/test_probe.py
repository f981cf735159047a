"""checkers_egdb against published values (reference.md sections 3 and 4) and against the
`egdb` command-line tool (the Rust API behind a separate front end)."""

import random
import shutil
import threading

import numpy as np
import pytest

import checkers_egdb
from checkers_egdb import ProbeError, Tablebase

from conftest import run_egdb

# Published values (reference.md section 3) and rules cases (section 4), side to move's view.
PUBLISHED = [
    ("W:WK19,K23:BK28,12", "win"),  # First Position, White to move
    ("B:WK19,K23:BK28,12", "draw"),
    ("W:WK32:BK26", "win"),  # Lasker, diagram 88
    ("B:WK32:BK26", "draw"),
    ("W:W5:BK2", "win"),  # 5-1 crowns into king v king
    ("W:WK29:BK25", "win"),  # the capture 29x22
    ("B:WK29:BK25", "win"),  # Black wins in 3 plies
    ("W:WK4:BK12", "loss"),  # 4-8 forced, then 12x3
    ("B:W14,22:B1,9", "win"),  # 9x18x25 takes both men
    ("W:W17:B7,14", "win"),  # 17x10x3 takes both men
    ("W:W29:B22,25", "loss"),  # White has no legal move
    ("B:W32:B", "loss"),  # a side with no pieces to move has lost
]


@pytest.fixture(scope="module")
def tb(tables):
    return Tablebase(tables)


def too_many(tb):
    """A legal position with one piece more than the tables cover: black kings on 1..max,
    a white king on 32, White to move; as (fen, black, white, kings, side)."""
    n = tb.max_pieces
    black = (1 << n) - 1
    fen = f"W:WK32:B{','.join('K' + str(s) for s in range(1, n + 1))}"
    return fen, black, 1 << 31, black | (1 << 31), 1


def cli_values(egdb, tables, fens):
    """FEN -> value as printed by `egdb probe`, one line per input in input order."""
    r = run_egdb(egdb, "probe", "--dir", str(tables), stdin="\n".join(fens) + "\n")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(fens)
    return [line.split("\t")[1] for line in lines]


def random_fens(n, max_pieces, seed):
    """Random legal positions (1..max_pieces pieces, both sides to move) as FEN."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        squares = rng.sample(range(1, 33), rng.randint(1, max_pieces))
        black, white = [], []
        ok = True
        for s in squares:
            is_black = rng.random() < 0.5
            king = rng.random() < 1 / 3
            if not king and ((is_black and s >= 29) or (not is_black and s <= 4)):
                ok = False  # a man on its own crowning row
                break
            (black if is_black else white).append(("K" if king else "") + str(s))
        if ok:
            side = rng.choice("BW")
            out.append(f"{side}:W{','.join(white)}:B{','.join(black)}")
    return out


def test_published_values(tb):
    for fen, want in PUBLISHED:
        assert tb.probe(fen) == want, fen
    assert tb.probe_many([f for f, _ in PUBLISHED]) == [v for _, v in PUBLISHED]


def test_king_v_king_totals(tb):
    # 992 positions with White to move: 230 wins, 654 draws, 108 losses (published).
    fens = [f"W:WK{w}:BK{b}" for w in range(1, 33) for b in range(1, 33) if w != b]
    vals = tb.probe_many(fens)
    assert (vals.count("win"), vals.count("draw"), vals.count("loss")) == (230, 654, 108)
    white = np.array([1 << (w - 1) for w in range(1, 33) for b in range(1, 33) if w != b])
    black = np.array([1 << (b - 1) for w in range(1, 33) for b in range(1, 33) if w != b])
    v = tb.probe_bitboards(black, white, black | white, np.ones(992, dtype=np.uint8))
    assert v.dtype == np.int8 and v.shape == (992,)
    assert (int((v == 1).sum()), int((v == 0).sum()), int((v == -1).sum())) == (230, 654, 108)


def test_random_positions_match_the_cli(tb, egdb, tables):
    # 3000 random positions of at most 4 (or 5, on 5-piece tables) pieces, half of them with a capture for the side to
    # move (chosen by the presence of an 'x' move), both sides to move.
    pool = random_fens(30000, min(tb.max_pieces, 5), seed=13)
    capture = [f for f in pool if any("x" in m for m, _ in tb.moves(f))]
    quiet = [f for f in pool if f not in set(capture)]
    fens = capture[:1500] + quiet[:1500]
    assert len(fens) == 3000
    assert {f[0] for f in fens} == {"B", "W"}
    want = cli_values(egdb, tables, fens)
    assert tb.probe_many(fens) == want
    assert [tb.probe(f) for f in fens] == want
    boards = np.array([checkers_egdb.parse_fen(f) for f in fens], dtype=np.int64)
    v = tb.probe_bitboards(boards[:, 0], boards[:, 1], boards[:, 2], boards[:, 3])
    code = {"win": 1, "draw": 0, "loss": -1}
    assert v.tolist() == [code[w] for w in want]


def test_moves_match_the_cli_and_the_value(tb, egdb):
    fens = random_fens(300, min(tb.max_pieces, 5), seed=7) + [f for f, _ in PUBLISHED]
    for fen in fens:
        moves = tb.moves(fen)
        r = run_egdb(egdb, "moves", fen)
        assert r.returncode == 0, r.stderr
        assert [m for m, _ in moves] == r.stdout.split(), fen
        # The position's value is the best of its moves' values (no move: a loss).
        vals = {v for _, v in moves}
        best = "win" if "win" in vals else "draw" if "draw" in vals else "loss"
        assert tb.probe(fen) == best, fen


def test_published_moves(tb):
    # W:W5:BK2: the only move is 5-1, which crowns and wins; W:WK4:BK12: 4-8 is forced and
    # loses.
    assert tb.moves("W:W5:BK2") == [("5-1", "win")]
    assert tb.moves("W:WK4:BK12") == [("4-8", "loss")]
    assert tb.moves("W:W29:B22,25") == []


def test_probe_cached(tables):
    fresh = Tablebase(tables)
    fen = "W:WK19,K23:BK28,12"
    assert fresh.probe_cached(fen) is None  # nothing loaded yet: no file is read
    assert fresh.stats()["blocks_decoded"] == 0
    assert fresh.probe(fen) == "win"
    assert fresh.probe_cached(fen) == "win"


def test_stats_count_probes(tables):
    t = Tablebase(tables, cache_mb=8)
    assert t.stats()["probes"] == 0
    t.probe_many(["W:WK32:BK26"] * 5)
    s = t.stats()
    assert s["probes"] == 5 and s["slices_opened"] >= 1
    assert set(s) == {
        "probes", "cache_hits", "cache_misses", "blocks_decoded", "blocks_failed", "cached_blocks",
        "cached_bytes", "slices_opened", "threat_searches", "threat_memo_hits", "open_files",
        "files_reopened",
    }
    assert s["open_files"] <= 256


def test_fen_round_trip():
    assert checkers_egdb.parse_fen("W:WK19,K23:BK28,12") == (
        (1 << 27) | (1 << 11), (1 << 18) | (1 << 22), (1 << 27) | (1 << 18) | (1 << 22), 1,
    )
    assert checkers_egdb.to_fen(*checkers_egdb.parse_fen("b:w29-32:bk1-3")) == "B:W29,30,31,32:BK1,K2,K3"
    for fen in random_fens(200, 6, seed=3):
        assert checkers_egdb.parse_fen(checkers_egdb.to_fen(*checkers_egdb.parse_fen(fen))) == (
            checkers_egdb.parse_fen(fen)
        )


def test_probe_many_releases_the_gil(tb):
    # While one thread is inside probe_many, another runs Python code.
    fens = ["W:WK19,K23:BK28,12", "B:W14,22:B1,9", "W:WK4:BK12"] * 100000
    started, done = threading.Event(), threading.Event()
    result = []

    def work():
        started.set()
        result.append(tb.probe_many(fens))
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while not done.is_set():
        spins += 1
    t.join()
    assert result[0][:3] == ["win", "win", "loss"]
    assert spins > 1000, f"only {spins} iterations ran during probe_many"


def test_threads_share_a_tablebase(tb, egdb, tables):
    fens = random_fens(2000, min(tb.max_pieces, 5), seed=11)
    want = cli_values(egdb, tables, fens)
    out = [None] * 4

    def work(i):
        out[i] = [tb.probe(f) for f in fens] if i % 2 else tb.probe_many(fens)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(o == want for o in out)


# ---------------------------------------------------------------------------------------------
# Errors: same messages as the Rust library (shown by the CLI as "INPUT<TAB>error: <message>").


def cli_error(egdb, tables, fen):
    r = run_egdb(egdb, "probe", "--dir", str(tables), fen)
    assert r.returncode == 1
    line = r.stdout.strip()
    assert "\terror: " in line, line
    return line.split("\terror: ", 1)[1]


@pytest.mark.parametrize(
    "fen",
    ["W:WK4,WK5,33:B4", "W:W4:BK20", "X:W1:B2", ".", "W:W1-13:B20", "B:W21-32:B1-12"],
)
def test_bad_input_raises_value_error_with_the_cli_message(tb, egdb, tables, fen):
    with pytest.raises(ValueError) as e:
        tb.probe(fen)
    assert not isinstance(e.value, ProbeError)
    assert str(e.value) == cli_error(egdb, tables, fen)


def test_empty_fen(tb):
    with pytest.raises(ValueError, match="^bad FEN: empty FEN$"):
        tb.probe("  ")


def test_too_many_pieces(tb):
    fen, n = too_many(tb)[0], tb.max_pieces
    msg = f"position has {n + 1} pieces; the tables cover at most {n}"
    with pytest.raises(ValueError, match=f"^{msg}$"):
        tb.probe(fen)
    with pytest.raises(ValueError, match=f"^item 1: {msg}$"):
        tb.probe_many(["W:WK32:BK26", fen])
    with pytest.raises(ValueError, match=f"^{msg}$"):
        tb.moves(fen)
    with pytest.raises(ValueError, match="^item 0: bad FEN: bad side to move"):
        tb.probe_many(["X:W1:B2"])


def test_missing_table_is_named(tables, egdb, tmp_path):
    # W:WK22:B18,K1 must capture 22x15 into king v king: with that table gone the probe must
    # name it, never answer (reference.md sections 3 and 4).
    for f in tables.iterdir():
        if f.suffix == ".egdb" and not f.name.startswith("0101-"):
            shutil.copy(f, tmp_path / f.name)
    t = Tablebase(tmp_path)
    for call in (t.probe, t.moves):
        with pytest.raises(ProbeError) as e:
            call("W:WK22:B18,K1")
        assert str(e.value) == "missing table for slice 0101-nn"
        assert isinstance(e.value, OSError)
    assert str(e.value) == cli_error(egdb, tmp_path, "W:WK22:B18,K1")
    with pytest.raises(ProbeError, match="^item 1: missing table for slice 0101-nn$"):
        t.probe_many(["B:W14:B1,K9", "W:WK22:B18,K1"])
    assert t.probe("B:W14:B1,K9") == "win"  # needs no king v king


def test_corrupt_table(tables, egdb, tmp_path):
    files = sorted(
        (f for f in tables.iterdir() if f.suffix == ".egdb"), key=lambda f: f.stat().st_size
    )
    for f in files:
        shutil.copy(f, tmp_path / f.name)
    for f in files:  # one flipped byte in the middle of every file
        victim = tmp_path / f.name
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0xFF
        victim.write_bytes(bytes(data))
    t = Tablebase(tmp_path)
    fens = random_fens(3000, min(Tablebase(tables).max_pieces, 5), seed=5)
    want = cli_values(egdb, tables, fens)
    errors = 0
    for fen, w in zip(fens, want):
        try:
            assert t.probe(fen) == w, fen  # a value, when given, is right
        except ProbeError as e:
            assert "corrupt table" in str(e)
            errors += 1
    assert errors > 0, "no probe touched the damaged block"


def test_open_errors(tmp_path):
    with pytest.raises(ProbeError, match="no table files"):
        Tablebase(tmp_path)
    with pytest.raises(ProbeError, match=r"table directory .*missing"):
        Tablebase(tmp_path / "missing")
    with pytest.raises(ValueError, match="negative"):
        Tablebase(tmp_path, cache_mb=-1)


def test_probe_bitboards_input_checks(tb):
    one = np.array([1 << 25])
    w = np.array([1 << 31])
    k = one | w
    s = np.array([1])
    with pytest.raises(ValueError, match="differ in length"):
        tb.probe_bitboards(one, w, k, np.array([0, 1]))
    with pytest.raises(TypeError, match="must hold integers"):
        tb.probe_bitboards(one.astype(float), w, k, s)
    with pytest.raises(ValueError, match="outside"):
        tb.probe_bitboards(np.array([-1]), w, k, s)
    with pytest.raises(ValueError, match="outside"):
        tb.probe_bitboards(one, w, k, np.array([2]))
    with pytest.raises(ValueError, match="one-dimensional"):
        tb.probe_bitboards(one.reshape(1, 1), w, k, s)
    with pytest.raises(ValueError, match="^item 0: invalid position"):
        tb.probe_bitboards(one, one, k, s)  # square 26 holds both colours
    _, bb, wb, kb, sb = too_many(tb)
    args = (np.array([bb, 1 << 25]), np.array([wb, 1 << 31]),
            np.array([kb, (1 << 25) | (1 << 31)]), np.array([sb, 1]))
    with pytest.raises(ValueError, match=f"^item 0: position has {tb.max_pieces + 1} pieces"):
        tb.probe_bitboards(*args)
    assert tb.probe_bitboards(*args, unknown=-128).tolist() == [-128, 1]
    assert tb.probe_bitboards([], [], [], []).tolist() == []


def test_stub_lists_the_module(tmp_path):
    import ast
    import pathlib

    stub = pathlib.Path(__file__).resolve().parents[1] / "checkers_egdb.pyi"
    tree = ast.parse(stub.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    public = {
        n for n in dir(checkers_egdb)
        if not n.startswith("_") and not isinstance(getattr(checkers_egdb, n), type(ast))
    } | {"__version__"}
    assert public <= names | {"Value"}, public - names
    methods = {n.name for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "Tablebase"
               for n in c.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    assert methods == {n for n in dir(Tablebase) if not n.startswith("_")}
