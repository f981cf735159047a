/* C test program for include/egdb.h: probes known positions through the C ABI.
 * Usage: egdb_test DIR   (DIR holds the tables of at most 2 pieces, K v K missing: see
 * tests/ffi.rs). Prints one line per check and exits non-zero if any check fails. */
#include "egdb.h"
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(const char *what, int got, int want) {
    printf("%s %s: got %d want %d\n", got == want ? "ok  " : "FAIL", what, got, want);
    if (got != want) failures++;
}

#define SQ(s) (1u << ((s) - 1))

int main(int argc, char **argv) {
    char err[256];
    if (argc != 2) { fprintf(stderr, "usage: %s DIR\n", argv[0]); return 2; }

    expect("open missing dir", egdb_open("/nonexistent/egdb", 1, err, sizeof err) == NULL, 1);
    expect("open error text", strlen(err) > 0, 1);
    expect("open error kept", egdb_last_error(NULL, 0) > 0, 1);

    /* A negative cache size is refused with a message. */
    err[0] = 0;
    expect("open negative cache", egdb_open(argv[1], -5, err, sizeof err) == NULL, 1);
    expect("negative cache message", strstr(err, "negative") != NULL, 1);
    egdb_last_error(err, sizeof err);
    expect("negative cache last error", strstr(err, "negative") != NULL, 1);

    EgdbHandle *h = egdb_open(argv[1], 4, err, sizeof err);
    if (!h) { fprintf(stderr, "open failed: %s\n", err); return 1; }
    /* A successful call clears the previous failure's message. */
    expect("open success clears last error", egdb_last_error(err, sizeof err), 0);
    expect("cleared message is empty", err[0] == 0, 1);
    expect("max pieces", egdb_max_pieces(h), 2);

    /* Lasker diagram 88: W:WK32:BK26 win, B:WK32:BK26 draw. */
    expect("conditional before load", egdb_lookup(h, SQ(26), SQ(32), SQ(26) | SQ(32), EGDB_WHITE, 1),
           EGDB_NOT_IN_CACHE);
    expect("W:WK32:BK26", egdb_lookup(h, SQ(26), SQ(32), SQ(26) | SQ(32), EGDB_WHITE, 0), EGDB_WIN);
    expect("B:WK32:BK26", egdb_lookup(h, SQ(26), SQ(32), SQ(26) | SQ(32), EGDB_BLACK, 0), EGDB_DRAW);
    expect("conditional after load", egdb_lookup(h, SQ(26), SQ(32), SQ(26) | SQ(32), EGDB_WHITE, 1),
           EGDB_WIN);
    expect("fen W:WK29:BK25", egdb_lookup_fen(h, "W:WK29:BK25", 0), EGDB_WIN);
    expect("fen B:WK29:BK25", egdb_lookup_fen(h, "B:WK29:BK25", 0), EGDB_WIN);
    expect("fen W:WK4:BK12", egdb_lookup_fen(h, "W:WK4:BK12", 0), EGDB_LOSS);
    expect("fen W:W5:BK2", egdb_lookup_fen(h, "W:W5:BK2", 0), EGDB_WIN);
    expect("fen B:W32:B (no pieces)", egdb_lookup_fen(h, "B:W32:B", 0), EGDB_LOSS);
    expect("3 pieces unknown", egdb_lookup_fen(h, "W:WK19,K23:BK28", 0), EGDB_UNKNOWN);
    expect("bad fen", egdb_lookup_fen(h, "W:WK33:B1", 0), EGDB_INVALID);
    expect("bad fen message", egdb_last_error(err, sizeof err) > 0, 1);
    expect("lookup after error", egdb_lookup_fen(h, "W:WK4:BK12", 0), EGDB_LOSS);
    expect("lookup success clears last error", egdb_last_error(err, sizeof err), 0);
    expect("bad color again", egdb_lookup(h, SQ(26), SQ(32), 0, 7, 0), EGDB_INVALID);
    expect("bad color message", egdb_last_error(err, sizeof err) > 0, 1);
    expect("bitboard lookup after error",
           egdb_lookup(h, SQ(26), SQ(32), SQ(26) | SQ(32), EGDB_BLACK, 0), EGDB_DRAW);
    expect("bitboard success clears last error", egdb_last_error(NULL, 0), 0);
    expect("stats null out", egdb_get_stats(h, NULL), EGDB_INVALID);
    expect("stats null message", egdb_last_error(NULL, 0) > 0, 1);
    expect("overlap", egdb_lookup(h, SQ(1), SQ(1), 0, EGDB_BLACK, 0), EGDB_INVALID);
    expect("bad color", egdb_lookup(h, SQ(26), SQ(32), 0, 7, 0), EGDB_INVALID);
    expect("null handle", egdb_lookup(NULL, SQ(26), SQ(32), 0, 0, 0), EGDB_INVALID);

    EgdbStats st;
    expect("stats", egdb_get_stats(h, &st), 0);
    expect("stats success clears last error", egdb_last_error(NULL, 0), 0);
    expect("stats probes", st.probes >= 8, 1);
    egdb_close(h);

    /* A directory without the K v K table: a man crowning into K v K is unavailable. */
    if (argc == 2) {
        char dir2[1024];
        snprintf(dir2, sizeof dir2, "%s/nokvk", argv[1]);
        EgdbHandle *h2 = egdb_open(dir2, 1, err, sizeof err);
        if (!h2) { fprintf(stderr, "open nokvk failed: %s\n", err); return 1; }
        expect("W:W5:BK2 without K v K still stored", egdb_lookup_fen(h2, "W:W5:BK2", 0), EGDB_WIN);
        expect("K v K missing", egdb_lookup_fen(h2, "W:WK32:BK26", 0), EGDB_SUBDB_UNAVAILABLE);
        egdb_last_error(err, sizeof err);
        expect("missing slice named", strstr(err, "0101-nn") != NULL, 1);
        egdb_close(h2);
    }
    egdb_close(NULL);
    printf("%d failures\n", failures);
    return failures != 0;
}
