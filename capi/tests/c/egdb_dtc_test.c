/* C test program for the distance calls of include/egdb.h (egdb_lookup_dtc, egdb_best_move).
 * Usage: egdb_dtc_test DIR   (DIR holds the tables of at most 3 pieces built with
 * `--dtc`: see tests/ffi.rs). Expected values are published facts (issue 9, reference.md).
 * Prints one line per check and exits non-zero if any check fails. */
#include "egdb.h"
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(const char *what, long got, long want) {
    printf("%s %s: got %ld want %ld\n", got == want ? "ok  " : "FAIL", what, got, want);
    if (got != want) failures++;
}

#define SQ(s) (1u << ((s) - 1))

int main(int argc, char **argv) {
    char err[256];
    int32_t plies = 0;
    EgdbMove m;
    if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }
    EgdbHandle *h = egdb_open(argv[1], 4, err, sizeof err);
    if (!h) { fprintf(stderr, "open failed: %s\n", err); return 1; }

    /* W:W5:BK2: the crowning 5-1 wins, DTC 1. */
    expect("W:W5:BK2 value", egdb_lookup_dtc(h, SQ(2), SQ(5), SQ(2), EGDB_WHITE, &plies), EGDB_WIN);
    expect("W:W5:BK2 dtc", plies, 1);
    expect("W:W5:BK2 best", egdb_best_move(h, SQ(2), SQ(5), SQ(2), EGDB_WHITE, &m), EGDB_WIN);
    expect("best from", m.from, 5);
    expect("best to", m.to, 1);
    expect("best conversion", m.conversion, 1);
    expect("best plies", m.plies, 1);
    expect("best pdn", strcmp(m.pdn, "5-1"), 0);
    /* B:WK13:BK1: the longest king-v-king win, 11 plies. */
    expect("B:WK13:BK1 value", egdb_lookup_dtc(h, SQ(1), SQ(13), SQ(1) | SQ(13), EGDB_BLACK, &plies),
           EGDB_WIN);
    expect("B:WK13:BK1 dtc", plies, 11);
    expect("B:WK13:BK1 best", egdb_best_move(h, SQ(1), SQ(13), SQ(1) | SQ(13), EGDB_BLACK, &m),
           EGDB_WIN);
    expect("best plies 11", m.plies, 11);
    /* W:WK29:BK25: the capture 29x22 wins, DTC 1. */
    expect("W:WK29:BK25", egdb_lookup_dtc(h, SQ(25), SQ(29), SQ(25) | SQ(29), EGDB_WHITE, &plies),
           EGDB_WIN);
    expect("W:WK29:BK25 dtc", plies, 1);
    expect("capture best", egdb_best_move(h, SQ(25), SQ(29), SQ(25) | SQ(29), EGDB_WHITE, &m), EGDB_WIN);
    expect("capture captured", m.captured, SQ(25));
    expect("capture pdn", strcmp(m.pdn, "29x22"), 0);
    /* A draw: B:WK32:BK1. */
    expect("draw", egdb_lookup_dtc(h, SQ(1), SQ(32), SQ(1) | SQ(32), EGDB_BLACK, &plies), EGDB_DRAW);
    expect("draw plies", plies, -1);
    /* No legal move: lost, no move. */
    expect("no move", egdb_best_move(h, 0, SQ(32), SQ(32), EGDB_BLACK, &m), EGDB_LOSS);
    expect("no move from", m.from, 0);
    expect("bad colour", egdb_lookup_dtc(h, SQ(1), SQ(32), 0, 7, NULL), EGDB_INVALID);
    expect("null out", egdb_best_move(h, SQ(1), SQ(32), 0, 0, NULL), EGDB_INVALID);
    egdb_close(h);
    printf("%d failures\n", failures);
    return failures != 0;
}
