/* egdb_kingsrow.h - the KingsRow endgame-driver interface, served from checkers-egdb tables.
 *
 * Written for checkers-egdb from the published driver API (the egdb_identify / egdb_open
 * interface that Cake, GuiNN Checkers, GuiCheckers and DarkHorse call); the type, constant and
 * member names are the ones client source code uses, so an engine written against that API
 * compiles unchanged with this header on Linux (GCC or Clang, C or C++).
 *
 * Link with libegdb_kingsrow.so, e.g.
 *   g++ engine.cpp -I<repo>/kingsrow/include -L<repo>/target/release -legdb_kingsrow \
 *       -Wl,-rpath,<repo>/target/release
 *
 * English checkers only: the driver API has no notion of variant, so it opens English tables
 * (tables of Russian, Brazilian, Italian, giveaway ... draughts are refused); the other
 * variants are served by egdb.h's egdb_open_rules, the Python module and `egdb probe --rules`.
 *
 * Boards: 32 playable squares in standard numbering 1-32; Black men start on 1-12 and move
 * toward 32. Values are for the side to move (`color`). Unlike KingsRow's own tables, these
 * answer capture positions too (the driver resolves captures by search), so a client needs no
 * capture test before calling lookup.
 *
 * Thread safety: one driver handle may be used by any number of threads at once (lookup,
 * get_stats, reset_stats, verify); close it once, after every other call on it has returned.
 */
#ifndef EGDB_KINGSROW_H
#define EGDB_KINGSROW_H

#ifdef __cplusplus
extern "C" {
#endif

/* Side to move, the `color` argument of lookup. */
typedef enum {
    EGDB_BLACK = 0,
    EGDB_WHITE = 1
} EGDB_COLOR;

/* Results of lookup (values for the side to move). */
#define EGDB_SUBDB_UNAVAILABLE (-2) /* a table file the answer needs is missing */
#define EGDB_NOT_IN_CACHE (-1)      /* conditional lookup: the answer needs file I/O */
#define EGDB_UNKNOWN 0              /* not covered: too many pieces, bad arguments, file error */
#define EGDB_WIN 1
#define EGDB_LOSS 2
#define EGDB_DRAW 3
#define EGDB_DRAW_OR_LOSS 4         /* partial tables only; never returned by this driver */
#define EGDB_WIN_OR_DRAW 5          /* partial tables only; never returned by this driver */

/* Database kinds reported by egdb_identify. This driver reports EGDB_KINGSROW32_WLD (4) for a
 * table directory, EGDB_KINGSROW32_MTC (5) for `<tables>/mtc` and EGDB_KINGSROW_DTW (11) for
 * `<tables>/dtw` (see egdb_open). */
typedef enum {
    EGDB_KINGSROW_WLD = 0,
    EGDB_KINGSROW_MTC,
    EGDB_CAKE_WLD,
    EGDB_CHINOOK_WLD,
    EGDB_KINGSROW32_WLD,
    EGDB_KINGSROW32_MTC,
    EGDB_CHINOOK_ITALIAN_WLD,
    EGDB_KINGSROW32_ITALIAN_WLD,
    EGDB_KINGSROW32_ITALIAN_MTC,
    EGDB_KINGSROW32_WLD_TUN,
    EGDB_KINGSROW32_ITALIAN_WLD_TUN,
    EGDB_KINGSROW_DTW,
    EGDB_KINGSROW_ITALIAN_DTW
} EGDB_TYPE;

/* Answers of lookup on a moves-to-conversion handle (`<tables>/mtc`, KingsRow's published MTC
 * semantics; conversion = a capture or a man move): for a won or lost position whose distance
 * to conversion d (plies) is at least MTC_THRESHOLD, d rounded up to even (the true distance
 * is the answer or one less); MTC_LESS_THAN_THRESHOLD for d < MTC_THRESHOLD, for a draw and
 * for a position not covered (more pieces than opened for, illegal, a file error); also
 * EGDB_SUBDB_UNAVAILABLE (a file missing) and EGDB_NOT_IN_CACHE (every conditional lookup). */
#define MTC_LESS_THAN_THRESHOLD 1
#define MTC_THRESHOLD 10

/* Answers of lookup on a depth-to-win handle (`<tables>/dtw`): the depth in moves, plies / 2
 * rounded down (a win of d plies, d odd, answers (d - 1) / 2; a loss, d even, d / 2: a client
 * knowing the value takes 2v + 1 or 2v plies), capture positions included; every other answer
 * is negative: EGDB_DTW_NO_DEPTH (a draw, or a position not covered), EGDB_SUBDB_UNAVAILABLE,
 * EGDB_NOT_IN_CACHE (every conditional lookup). */
#define EGDB_DTW_NO_DEPTH (-3)

/* Layout of the boards passed to lookup, fixed when the driver is opened. */
typedef enum {
    EGDB_NORMAL = 0,      /* EGDB_NORMAL_BITBOARD: bit i = square i+1 */
    EGDB_ROW_REVERSED = 1 /* EGDB_ROW_REVERSED_BITBOARD: each row's four bits reversed */
} EGDB_BITBOARD_TYPE;

/* Bit i = square i+1. `king` marks the kings of both colours. */
typedef struct {
    unsigned int black;
    unsigned int white;
    unsigned int king;
} EGDB_NORMAL_BITBOARD;

/* Cake's layout: men and kings of each colour apart; within each row of four squares the bit
 * order is reversed (square 1 = bit 3, 2 = bit 2, 3 = bit 1, 4 = bit 0, 5 = bit 7, ...). */
typedef struct {
    unsigned int black_man;
    unsigned int black_king;
    unsigned int white_man;
    unsigned int white_king;
} EGDB_ROW_REVERSED_BITBOARD;

/* The normal layout comes first, so `EGDB_BITBOARD b = {{black, white, king}};` works. */
typedef union {
    EGDB_NORMAL_BITBOARD normal;
    EGDB_ROW_REVERSED_BITBOARD row_reversed;
} EGDB_BITBOARD;

/* Counters since the driver was opened or since the last reset_stats (saturating at
 * UINT_MAX):
 *   lru_cache_hits          table reads answered from the block cache
 *   lru_cache_loads         blocks read from disk and decompressed into the cache
 *   autoload_hits           always 0 (no separately preloaded tables)
 *   db_requests             lookup calls
 *   db_returns              lookups answered WIN, LOSS or DRAW
 *   db_not_present_requests lookups answered UNKNOWN or SUBDB_UNAVAILABLE */
typedef struct {
    unsigned int lru_cache_hits;
    unsigned int lru_cache_loads;
    unsigned int autoload_hits;
    unsigned int db_requests;
    unsigned int db_returns;
    unsigned int db_not_present_requests;
} EGDB_STATS;

/* An open database: call through the function pointers, passing the handle itself. */
typedef struct egdb_driver {
    /* Value of `position` (in the layout given to egdb_open) with `color` to move. With
     * `conditional` non-zero no file is read and no block is decompressed: the answer comes
     * from the cache or is EGDB_NOT_IN_CACHE. Returns EGDB_WIN, EGDB_LOSS, EGDB_DRAW,
     * EGDB_NOT_IN_CACHE, EGDB_SUBDB_UNAVAILABLE, or EGDB_UNKNOWN (more pieces than the
     * `pieces` given to egdb_open, an illegal position or color, a NULL argument, a corrupt
     * or unreadable file: the last two are also reported once through msg_fn). */
    int (*lookup)(struct egdb_driver *handle, EGDB_BITBOARD *position, int color,
                  int conditional);
    /* Set every counter of get_stats to zero. */
    void (*reset_stats)(struct egdb_driver *handle);
    /* The counters, in a struct owned by the handle (valid until close; refreshed by each
     * call). */
    EGDB_STATS *(*get_stats)(struct egdb_driver *handle);
    /* Check the whole-file checksum of every table file up to `pieces` pieces: 0 when all
     * are good, else non-zero with each bad file reported through msg_fn. Reads every file. */
    int (*verify)(struct egdb_driver *handle);
    /* Release the handle: 0 on success, non-zero for NULL or a handle already closed. */
    int (*close)(struct egdb_driver *handle);
    /* The driver's own data; clients must not touch it. */
    void *internal_data;
} EGDB_DRIVER;

/* Look for tables in `directory`. Returns 0 when found, with *egdb_type = EGDB_KINGSROW32_WLD
 * and *max_pieces = the largest n such that every table of 1..n pieces is present; for
 * `<tables>/mtc` (a path that need not exist) EGDB_KINGSROW32_MTC and the largest n whose
 * tables all have their .dtc files (egdb build --dtc), for `<tables>/dtw` EGDB_KINGSROW_DTW
 * (.dtw files, egdb build --dtw); non-zero when the directory is missing or holds no complete
 * set (outputs then untouched). */
int egdb_identify(const char *directory, EGDB_TYPE *egdb_type, int *max_pieces);

/* Open the tables in `directory` for positions of at most `pieces` pieces (1 up to what
 * egdb_identify reports): a win/loss/draw handle, or for `<tables>/mtc` and `<tables>/dtw`
 * a moves-to-conversion or depth-to-win handle (answers above), with a block cache of
 * `cache_mb` MiB (0 = no cache; more than half
 * the physical memory is reduced to that; a moves-to-conversion or depth-to-win handle keeps
 * a value cache and a distance cache of this budget each, up to twice cache_mb). Tables are opened lazily on first use. Returns
 * NULL on failure (NULL or missing directory, no complete tables, `pieces` out of range, a
 * negative cache, a layout other than EGDB_NORMAL or EGDB_ROW_REVERSED) after passing the
 * reason to msg_fn (may be NULL); msg_fn also receives one line on success. Messages end
 * with a newline. */
EGDB_DRIVER *egdb_open(EGDB_BITBOARD_TYPE bitboard_type, int pieces, int cache_mb,
                       const char *directory, void (*msg_fn)(char *));

/* Driver version: major * 10000 + minor * 100 + patch. */
extern unsigned int egdb_version;

#ifdef __cplusplus
}
#endif

#endif /* EGDB_KINGSROW_H */
