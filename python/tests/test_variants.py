"""checkers_egdb on the tables of other 8x8 variants (issue 34): `Tablebase(dir, rules=...)`,
the rules from the headers by default, a mismatch refused; moves and lines under the variant's
rules, against rule-book facts (a Russian man crowned during a capture goes on capturing as a
king; in giveaway a side without a move, or without pieces, wins; one king against one king is
never drawn in giveaway) and against the `egdb` command-line tool (`line --json`)."""

import json
import subprocess

import pytest

from checkers_egdb import ProbeError, Tablebase

from conftest import run_egdb


def build(egdb, tmp_path_factory, rules):
    d = tmp_path_factory.mktemp("egdb-" + rules)
    subprocess.run(
        [egdb, "build", "--rules", rules, "--pieces", "3", "--dtc", "--dir", str(d), "--quiet"],
        check=True,
    )
    return d


@pytest.fixture(scope="module")
def russian(egdb, tmp_path_factory):
    return build(egdb, tmp_path_factory, "russian")


@pytest.fixture(scope="module")
def giveaway(egdb, tmp_path_factory):
    return build(egdb, tmp_path_factory, "giveaway")


def test_rules_from_the_headers_and_mismatch(russian):
    assert Tablebase(russian).rules == "russian"
    assert Tablebase(russian, rules="russian").rules == "russian"
    assert 'rules="russian"' in repr(Tablebase(russian))
    with pytest.raises(ProbeError, match="russian.*english|english.*russian"):
        Tablebase(russian, rules="english")
    with pytest.raises(ValueError, match="unknown rules"):
        Tablebase(russian, rules="checkers")


def test_russian_crowning_capture_goes_on(russian):
    tb = Tablebase(russian)
    # 22x31 crowns, and the new king takes 24 from afar: White has no piece left.
    assert tb.moves("B:W24,26:B22") == [("22x31x20", "win")]
    assert tb.probe("B:W24,26:B22") == "win"
    assert tb.probe_dtc("B:W24,26:B22") == ("win", 1)


def test_giveaway_terminal_rule_and_line(giveaway, egdb):
    tb = Tablebase(giveaway)
    assert tb.rules == "giveaway"
    assert tb.probe("W:W:BK14") == "win"  # no pieces: White has won
    assert tb.moves("W:W:BK14") == []
    squares = range(1, 33)
    for b in squares:
        for w in squares:
            if b != w:
                for side in "BW":
                    assert tb.probe(f"{side}:WK{w}:BK{b}") != "draw"
    line = tb.line("B:WK32:BK1")
    assert line["rules"] == "giveaway"
    assert line["end"] == "no_moves"
    last = line["moves"][-1]
    assert last["value"] == "win" and last["dtc"] == 0
    # The start's winner is the side to move at the end (it has no move: it wins).
    winner = "B" if line["value"] == "win" else "W"
    assert last["after"][0] == winner
    r = run_egdb(egdb, "line", "--json", "--dir", str(giveaway), "B:WK32:BK1")
    assert r.returncode == 0, r.stderr
    cli = json.loads(r.stdout)
    assert cli == line
