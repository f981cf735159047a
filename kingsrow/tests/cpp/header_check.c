/* The driver header from C99: identify, open, one lookup (W:WK32:BK26, White wins), close.
 * Prints "type T pieces N value V". */
#include "egdb_kingsrow.h"

#include <stdio.h>

static void quiet(char *msg) { (void)msg; }

int main(int argc, char **argv) {
    EGDB_TYPE type;
    int pieces = 0;
    EGDB_DRIVER *d;
    EGDB_BITBOARD b = {{1u << 25, 1u << 31, (1u << 25) | (1u << 31)}};
    int v;
    if (argc != 2 || egdb_identify(argv[1], &type, &pieces) != 0) return 1;
    d = egdb_open(EGDB_NORMAL, pieces, 8, argv[1], quiet);
    if (!d) return 1;
    v = d->lookup(d, &b, EGDB_WHITE, 0);
    if (d->close(d) != 0) return 1;
    printf("type %d pieces %d value %d\n", (int)type, pieces, v);
    return 0;
}
