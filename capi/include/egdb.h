/* egdb.h - C interface to the checkers-egdb probe library (endgame tables of English checkers
 * and of the other 8x8 variants: Russian, Brazilian, Italian, giveaway, Pool, Spanish, Czech).
 *
 * Link with libegdb (cdylib .so or staticlib .a; the static library also needs
 * -lpthread -ldl -lm). All functions are thread-safe; one handle may be shared by all threads.
 *
 * Boards are bitboards: bit i (0..31) = square i+1 in standard PDN numbering; Black men move
 * toward square 32. Values are from the side to move's point of view; captures are resolved by
 * search inside the library.
 */
#ifndef EGDB_H
#define EGDB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes (KingsRow style). */
#define EGDB_UNKNOWN 0            /* position not covered: more pieces than the tables */
#define EGDB_WIN 1                /* side to move wins */
#define EGDB_LOSS 2               /* side to move loses */
#define EGDB_DRAW 3               /* draw */
#define EGDB_NOT_IN_CACHE (-1)    /* conditional lookup: needed block not cached */
#define EGDB_SUBDB_UNAVAILABLE (-2) /* a table file the answer needs is missing */
#define EGDB_ERROR (-3)           /* corrupt table file or I/O error */
#define EGDB_INVALID (-4)         /* bad arguments, illegal position or bad FEN */

#define EGDB_BLACK 0
#define EGDB_WHITE 1

typedef struct EgdbHandle EgdbHandle;

typedef struct EgdbStats {
    uint64_t probes;         /* probe calls */
    uint64_t cache_hits;     /* table lookups answered from the block cache */
    uint64_t cache_misses;   /* table lookups that missed the cache */
    uint64_t blocks_decoded; /* blocks decompressed */
} EgdbStats;

/* Open the tables (*.egdb) in directory dir with a block cache of cache_mb MiB (0 = no cache:
 * every lookup decodes its block and conditional lookups return EGDB_NOT_IN_CACHE; a budget
 * above half the physical memory is reduced to that; a negative size is an error). The value
 * cache and the distance cache each get this budget: a handle that also answers distances
 * (egdb_lookup_dtc, egdb_best_move) may hold up to twice cache_mb. Files are opened lazily on first use. Returns NULL on
 * failure with a message in errbuf (capacity errlen, may be NULL), also kept for
 * egdb_last_error. */
EgdbHandle *egdb_open(const char *dir, int cache_mb, char *errbuf, size_t errlen);

/* As egdb_open, under the rules named by rules ("english", "russian", "brazilian", "italian",
 * "giveaway", "pool", "spanish", "czech"), or with rules NULL under the rules recorded in the
 * table files' headers (a directory holds the tables of one variant). egdb_open itself opens
 * English tables only (tables of another variant are refused, naming both rules). Lookups,
 * distances and best moves of the handle follow its variant: its moves and captures (flying
 * kings, majority capture, Italian precedence) and its terminal rule (a side without a legal
 * move loses; in giveaway it wins). Positions use this library's board in every variant: the
 * side that moves first is Black on squares 1-12 (the side called White in Russian, Brazilian,
 * Italian ... notation); Italian square numbers map onto ours as docs/architecture.md says.
 * An unknown name, a directory of other rules or one mixing variants gives NULL and a
 * message. */
EgdbHandle *egdb_open_rules(const char *dir, int cache_mb, const char *rules, char *errbuf,
                            size_t errlen);

/* The name of the rules of the handle's tables ("english", "russian", ...: a static string),
 * or NULL for a null or closed handle. */
const char *egdb_rules(const EgdbHandle *h);

/* Value of a position for the side to move (color: EGDB_BLACK or EGDB_WHITE). With conditional
 * non-zero no file is read and EGDB_NOT_IN_CACHE is returned when a needed block is not cached. */
int egdb_lookup(const EgdbHandle *h, uint32_t black, uint32_t white, uint32_t kings, int color,
                int conditional);

/* egdb_lookup of a PDN FEN such as "W:WK32:BK26". */
int egdb_lookup_fen(const EgdbHandle *h, const char *fen, int conditional);

/* Distance to conversion (plies; a conversion is a capture or a man move) of a position given as
 * in egdb_lookup: returns EGDB_WIN, EGDB_LOSS or EGDB_DRAW and stores the distance in *plies
 * (-1 for a draw; plies may be NULL), or an error code (EGDB_SUBDB_UNAVAILABLE when a distance
 * file <slice>.dtc is missing). Needs the distance files of `egdb build --dtc`. */
int egdb_lookup_dtc(const EgdbHandle *h, uint32_t black, uint32_t white, uint32_t kings, int color,
                    int32_t *plies);

/* A move chosen by egdb_best_move. */
typedef struct EgdbMove {
    uint8_t from;      /* 1-32; 0 when the side to move has no move */
    uint8_t to;        /* 1-32 */
    uint32_t captured; /* captured pieces, bit i = square i+1 */
    int conversion;    /* 1 for a capture or man move */
    int32_t plies;     /* the move's distance for the mover (1 for a conversion); -1 for a draw */
    char pdn[64];      /* PDN text, e.g. "9-14" or "9x18x27", NUL-terminated */
} EgdbMove;

/* Best move of perfect play (wins by the smallest distance, then draws, then losses by the
 * largest) for a position given as in egdb_lookup, under the handle's rules: returns the move's
 * value for the mover (EGDB_WIN, EGDB_LOSS, EGDB_DRAW) with the move in *out; when the side to
 * move has no legal move, out->from == 0 and the value of the terminal rule (EGDB_LOSS; EGDB_WIN
 * in giveaway); or an error code. */
int egdb_best_move(const EgdbHandle *h, uint32_t black, uint32_t white, uint32_t kings, int color,
                   EgdbMove *out);

/* Largest piece count covered by the open tables. */
int egdb_max_pieces(const EgdbHandle *h);

/* Counters since opening; returns 0 or EGDB_INVALID (null handle or out). */
int egdb_get_stats(const EgdbHandle *h, EgdbStats *out);

/* The calling thread's last error message (NUL-terminated, truncated to len); returns its full
 * length. egdb_open, egdb_lookup, egdb_lookup_fen and egdb_get_stats set the message when they
 * fail and clear it when they succeed (a lookup succeeds when it returns EGDB_WIN, EGDB_LOSS or
 * EGDB_DRAW), so it describes the latest such call on this thread; 0 and an empty string when
 * that call succeeded or none was made. */
size_t egdb_last_error(char *buf, size_t len);

/* List the table directory again so that files added since egdb_open are used. Returns the
 * number of table files known (>= 0), EGDB_INVALID for a null or closed handle, EGDB_ERROR if
 * the directory cannot be listed. A slice that failed to open (damaged, or changed under the
 * handle) keeps its error: once repaired, close the handle and open a new one. */
int egdb_rescan(const EgdbHandle *h);

/* Close a handle (NULL is ignored). A second close, or any call on a closed handle, is
 * answered EGDB_INVALID with the message "handle is closed" (never a crash: the handle's small
 * shell stays allocated). Do not close a handle while another thread uses it. */
void egdb_close(EgdbHandle *h);

#ifdef __cplusplus
}
#endif

#endif /* EGDB_H */
