// A KingsRow-API client, written the way engines use the driver: egdb_identify, egdb_open with
// each board layout, conditional then unconditional lookups, get_stats/reset_stats, verify,
// close, plus misuse. Run by kingsrow/tests/client.rs:
//
//   client TABLES MAX_PIECES RANDOM_FILE CORRUPT_DIR EMPTY_DIR [DISTANCE_FILE]
//
// TABLES holds complete tables of 1..MAX_PIECES pieces (MAX_PIECES >= 4); RANDOM_FILE has lines
// "black white king color expected" (normal layout, expected = a lookup code computed through
// the Rust API); CORRUPT_DIR is a copy of TABLES with one damaged file, named on its first line
// of CORRUPT_DIR/damaged.txt; EMPTY_DIR holds no tables. With DISTANCE_FILE (TABLES then also
// holds the .dtc and .dtw files) the MTC and DTW handles (TABLES/mtc, TABLES/dtw) are tested:
// published distances, and lines "black white king color mtc dtw" of expected answers. Prints
// "N failures" and exits non-zero when N > 0.

#include "egdb_kingsrow.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

static int failures = 0;
static std::vector<std::string> messages;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            ++failures;                                                    \
            std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
            std::printf(__VA_ARGS__);                                      \
            std::printf("\n");                                             \
        }                                                                  \
    } while (0)

// The callback type of the API: a non-const char pointer.
static void msg_fn(char *text) { messages.push_back(text); }

static bool any_message_contains(const char *needle) {
    for (const std::string &m : messages)
        if (m.find(needle) != std::string::npos) return true;
    return false;
}

// A position by its pieces in standard numbering (1-32).
struct Pos {
    const char *name;
    int color;
    std::vector<int> black_men, black_kings, white_men, white_kings;
    int expected;  // lookup code
};

static unsigned bit(int sq) { return 1u << (sq - 1); }

// Row-reversed bit of a square: row r = (sq-1)/4, column c = (sq-1)%4 -> bit 4r + 3 - c.
static unsigned rr_bit(int sq) { return 1u << (4 * ((sq - 1) / 4) + 3 - (sq - 1) % 4); }

static EGDB_BITBOARD board_of(const Pos &p, EGDB_BITBOARD_TYPE layout) {
    EGDB_BITBOARD b;
    std::memset(&b, 0, sizeof b);
    if (layout == EGDB_NORMAL) {
        for (int s : p.black_men) b.normal.black |= bit(s);
        for (int s : p.black_kings) b.normal.black |= bit(s), b.normal.king |= bit(s);
        for (int s : p.white_men) b.normal.white |= bit(s);
        for (int s : p.white_kings) b.normal.white |= bit(s), b.normal.king |= bit(s);
    } else {
        for (int s : p.black_men) b.row_reversed.black_man |= rr_bit(s);
        for (int s : p.black_kings) b.row_reversed.black_king |= rr_bit(s);
        for (int s : p.white_men) b.row_reversed.white_man |= rr_bit(s);
        for (int s : p.white_kings) b.row_reversed.white_king |= rr_bit(s);
    }
    return b;
}

// Pieces of a normal-layout board as square lists.
static Pos pos_of_normal(unsigned black, unsigned white, unsigned king, int color, int expected) {
    Pos p{"random", color, {}, {}, {}, {}, expected};
    for (int s = 1; s <= 32; ++s) {
        if (black & bit(s)) (king & bit(s) ? p.black_kings : p.black_men).push_back(s);
        if (white & bit(s)) (king & bit(s) ? p.white_kings : p.white_men).push_back(s);
    }
    return p;
}

// Published values (reference.md section 3 and the rules cases of section 4).
static const std::vector<Pos> &known() {
    static const std::vector<Pos> v = {
        // First Position (Lasker 1918): White to move wins, Black to move draws.
        {"First Position, W", EGDB_WHITE, {12}, {28}, {}, {19, 23}, EGDB_WIN},
        {"First Position, B", EGDB_BLACK, {12}, {28}, {}, {19, 23}, EGDB_DRAW},
        // Lasker diagram 88.
        {"W:WK32:BK26", EGDB_WHITE, {}, {26}, {}, {32}, EGDB_WIN},
        {"B:WK32:BK26", EGDB_BLACK, {}, {26}, {}, {32}, EGDB_DRAW},
        // 5-1 crowns into king v king.
        {"W:W5:BK2", EGDB_WHITE, {}, {2}, {5}, {}, EGDB_WIN},
        // Captures for the side to move (29x22), and Black's win in 3 plies.
        {"W:WK29:BK25", EGDB_WHITE, {}, {25}, {}, {29}, EGDB_WIN},
        {"B:WK29:BK25", EGDB_BLACK, {}, {25}, {}, {29}, EGDB_WIN},
        // 4-8 forced, then 12x3.
        {"W:WK4:BK12", EGDB_WHITE, {}, {12}, {}, {4}, EGDB_LOSS},
        // 9x18x25 takes both white men.
        {"B:W14,22:B1,9", EGDB_BLACK, {1, 9}, {}, {14, 22}, {}, EGDB_WIN},
        // 17x10x3 takes both black men.
        {"W:W17:B7,14", EGDB_WHITE, {7, 14}, {}, {17}, {}, EGDB_WIN},
        // White has no legal move.
        {"W:W29:B22,25", EGDB_WHITE, {22, 25}, {}, {}, {29}, EGDB_LOSS},
        // A side with no pieces to move has lost; the other side wins.
        {"B:W32:B", EGDB_BLACK, {}, {}, {32}, {}, EGDB_LOSS},
        {"W:W32:B", EGDB_WHITE, {}, {}, {32}, {}, EGDB_WIN},
    };
    return v;
}

static int lookup(EGDB_DRIVER *d, const Pos &p, EGDB_BITBOARD_TYPE layout, int conditional) {
    EGDB_BITBOARD b = board_of(p, layout);
    return d->lookup(d, &b, p.color, conditional);
}

static std::vector<Pos> read_random(const char *path) {
    std::vector<Pos> v;
    std::ifstream in(path);
    unsigned black, white, king;
    int color, expected;
    while (in >> black >> white >> king >> color >> expected)
        v.push_back(pos_of_normal(black, white, king, color, expected));
    return v;
}

static void stats_are(EGDB_DRIVER *d, unsigned requests, unsigned returns, unsigned not_present,
                      const char *when) {
    EGDB_STATS *s = d->get_stats(d);
    CHECK(s != nullptr, "%s", when);
    if (!s) return;
    CHECK(s->db_requests == requests, "%s: db_requests %u, expected %u", when, s->db_requests,
          requests);
    CHECK(s->db_returns == returns, "%s: db_returns %u, expected %u", when, s->db_returns, returns);
    CHECK(s->db_not_present_requests == not_present, "%s: db_not_present %u, expected %u", when,
          s->db_not_present_requests, not_present);
    CHECK(s->autoload_hits == 0, "%s", when);
}

static void test_layout(const char *dir, int max_pieces, EGDB_BITBOARD_TYPE layout,
                        const std::vector<Pos> &random) {
    const char *lname = layout == EGDB_NORMAL ? "normal" : "row-reversed";
    std::printf("layout %s\n", lname);
    messages.clear();
    EGDB_DRIVER *d = egdb_open(layout, max_pieces, 64, dir, msg_fn);
    CHECK(d != nullptr, "open %s", lname);
    if (!d) {
        for (const std::string &m : messages) std::printf("  msg: %s", m.c_str());
        return;
    }
    CHECK(!messages.empty() && messages.back().back() == '\n', "open reports one line");

    // Fresh handle: conditional lookups read no file, so answers are the value or NOT_IN_CACHE
    // and no block gets loaded.
    d->reset_stats(d);
    stats_are(d, 0, 0, 0, "after reset");
    unsigned n = 0, returned = 0, not_in_cache = 0;
    for (const Pos &p : known()) {
        int r = lookup(d, p, layout, 1);
        ++n;
        if (r == EGDB_NOT_IN_CACHE) {
            ++not_in_cache;
        } else {
            ++returned;
            CHECK(r == p.expected, "%s conditional on a fresh handle: %d, expected %d or -1", p.name,
                  r, p.expected);
        }
    }
    CHECK(not_in_cache > 0, "a fresh handle answered every conditional lookup");
    EGDB_STATS *s = d->get_stats(d);
    CHECK(s->lru_cache_loads == 0, "conditional lookups loaded %u blocks", s->lru_cache_loads);
    stats_are(d, n, returned, 0, "after conditional lookups");

    // Unconditional: the published values, then the same conditionally (now cached).
    for (const Pos &p : known()) {
        int r = lookup(d, p, layout, 0);
        CHECK(r == p.expected, "%s: %d, expected %d", p.name, r, p.expected);
        ++n;
        returned += r == p.expected;
    }
    s = d->get_stats(d);
    CHECK(s->lru_cache_loads > 0, "unconditional lookups loaded no block");
    for (const Pos &p : known()) {
        int r = lookup(d, p, layout, 1);
        CHECK(r == p.expected, "%s conditional after loading: %d, expected %d", p.name, r,
              p.expected);
        ++n;
        returned += r == p.expected;
    }
    stats_are(d, n, returned, 0, "after the known positions");

    // King v king, White to move: 230 wins, 654 draws, 108 losses (published).
    d->reset_stats(d);
    stats_are(d, 0, 0, 0, "after second reset");
    int win = 0, draw = 0, loss = 0, other = 0;
    for (int w = 1; w <= 32; ++w)
        for (int b = 1; b <= 32; ++b) {
            if (w == b) continue;
            Pos p{"KvK", EGDB_WHITE, {}, {b}, {}, {w}, 0};
            int r = lookup(d, p, layout, 0);
            win += r == EGDB_WIN, draw += r == EGDB_DRAW, loss += r == EGDB_LOSS;
            other += r != EGDB_WIN && r != EGDB_DRAW && r != EGDB_LOSS;
        }
    CHECK(win == 230 && draw == 654 && loss == 108 && other == 0,
          "king v king, White to move: %d wins, %d draws, %d losses, %d other", win, draw, loss,
          other);
    stats_are(d, 992, 992, 0, "after king v king");
    s = d->get_stats(d);
    CHECK(s->lru_cache_hits + s->lru_cache_loads > 0, "no table read counted");

    // Random positions against the Rust API: unconditional, then conditional.
    int wrong = 0;
    for (const Pos &p : random) {
        int r = lookup(d, p, layout, 0);
        int c = lookup(d, p, layout, 1);
        if (r != p.expected || c != p.expected) {
            if (++wrong <= 10)
                std::printf("  random position b=%08x w=%08x k=%08x color %d: %d/%d, expected %d\n",
                            board_of(p, EGDB_NORMAL).normal.black,
                            board_of(p, EGDB_NORMAL).normal.white,
                            board_of(p, EGDB_NORMAL).normal.king, p.color, r, c, p.expected);
        }
    }
    CHECK(wrong == 0, "%d of %zu random positions differ from the Rust API", wrong, random.size());
    std::printf("  %zu random positions compared\n", random.size());

    // Misuse on a live handle: each lookup answers EGDB_UNKNOWN and counts as not present.
    d->reset_stats(d);
    unsigned misuse = 0;
    auto unknown = [&](int r, const char *what) {
        ++misuse;
        CHECK(r == EGDB_UNKNOWN, "%s: %d", what, r);
    };
    if (max_pieces == 4)
        unknown(lookup(d, Pos{"5 pieces", EGDB_WHITE, {9, 10, 17, 18}, {}, {}, {6}, 0}, layout, 0),
                "5 pieces on 4-piece tables");
    unknown(lookup(d, Pos{"color 2", 2, {}, {1}, {}, {2}, 0}, layout, 0), "color 2");
    unknown(lookup(d, Pos{"color -1", -1, {}, {1}, {}, {2}, 0}, layout, 0), "color -1");
    unknown(d->lookup(d, nullptr, EGDB_BLACK, 0), "NULL position");
    unknown(lookup(d, Pos{"overlap", EGDB_BLACK, {}, {1}, {}, {1}, 0}, layout, 0), "square 1 twice");
    unknown(lookup(d, Pos{"man on 30", EGDB_BLACK, {30}, {}, {}, {1}, 0}, layout, 0),
            "black man on 30");
    unknown(lookup(d, Pos{"white man on 3", EGDB_WHITE, {}, {20}, {3}, {}, 0}, layout, 1),
            "white man on 3, conditional");
    if (layout == EGDB_ROW_REVERSED) {
        EGDB_BITBOARD b;
        std::memset(&b, 0, sizeof b);
        b.row_reversed.black_man = rr_bit(9);
        b.row_reversed.black_king = rr_bit(9);  // a man and a king on one square
        b.row_reversed.white_king = rr_bit(1);
        unknown(d->lookup(d, &b, EGDB_BLACK, 0), "man and king on square 9");
    }
    stats_are(d, misuse, 0, misuse, "after misuse");

    messages.clear();
    CHECK(d->verify(d) == 0, "verify on good tables");
    CHECK(d->close(nullptr) != 0, "close(NULL)");
    CHECK(d->close(d) == 0, "close");
}

// Distances of published kings-only endings (reference.md section 7): the expected MTC
// answer (plies rounded up to even, 1 below 10 plies or for a draw) and DTW answer (moves,
// plies / 2 rounded down; no men, so DTW = DTC here; -3 for a draw).
struct Dist {
    Pos p;
    int mtc, dtw;
};

static const std::vector<Dist> &known_distances() {
    static const std::vector<Dist> v = {
        // King v king: Black to move wins in 11 plies (the longest).
        {{"B:WK13:BK1", EGDB_BLACK, {}, {1}, {}, {13}, 0}, 12, 5},
        // Two kings v one: the longest win, 33 plies; the longest loss, 34 plies.
        {{"B:WK14:BK1,K2", EGDB_BLACK, {}, {1, 2}, {}, {14}, 0}, 34, 16},
        {{"W:WK32:BK21,K29", EGDB_WHITE, {}, {21, 29}, {}, {32}, 0}, 34, 17},
        // A capture that takes the last piece: converts and wins in 1 ply.
        {{"W:WK29:BK25", EGDB_WHITE, {}, {25}, {}, {29}, 0}, MTC_LESS_THAN_THRESHOLD, 0},
        // No legal move: lost, 0 plies.
        {{"W:W29:B22,25", EGDB_WHITE, {22, 25}, {}, {}, {29}, 0}, MTC_LESS_THAN_THRESHOLD, 0},
        // Draw (Lasker diagram 88, Black to move).
        {{"B:WK32:BK26", EGDB_BLACK, {}, {26}, {}, {32}, 0}, MTC_LESS_THAN_THRESHOLD,
         EGDB_DTW_NO_DEPTH},
    };
    return v;
}

static std::vector<std::pair<Pos, int>> read_distances(const char *path, bool mtc) {
    std::vector<std::pair<Pos, int>> v;
    std::ifstream in(path);
    unsigned black, white, king;
    int color, m, w;
    while (in >> black >> white >> king >> color >> m >> w)
        v.push_back({pos_of_normal(black, white, king, color, 0), mtc ? m : w});
    return v;
}

// The MTC and DTW handles: identify, open (both layouts), published distances, the random
// positions' expected answers, conditional lookups, misuse, verify, and a directory without
// distance files.
static void test_distances(const std::string &dir, int max_pieces, const char *file,
                           const char *corrupt) {
    for (int k = 0; k < 2; ++k) {
        const bool mtc = k == 0;
        const std::string sub = dir + (mtc ? "/mtc" : "/dtw");
        const char *name = mtc ? "mtc" : "dtw";
        const int none = mtc ? MTC_LESS_THAN_THRESHOLD : EGDB_DTW_NO_DEPTH;
        EGDB_TYPE type = EGDB_KINGSROW_WLD;
        int pieces = 0;
        CHECK(egdb_identify(sub.c_str(), &type, &pieces) == 0, "identify %s", sub.c_str());
        CHECK(type == (mtc ? EGDB_KINGSROW32_MTC : EGDB_KINGSROW_DTW), "%s type %d", name,
              (int)type);
        CHECK((int)type == (mtc ? 5 : 11), "%s type id %d", name, (int)type);
        CHECK(pieces == max_pieces, "%s: %d pieces", name, pieces);
        const std::vector<std::pair<Pos, int>> random = read_distances(file, mtc);
        CHECK(random.size() >= 1000, "%s: %zu random positions", name, random.size());
        for (EGDB_BITBOARD_TYPE layout : {EGDB_NORMAL, EGDB_ROW_REVERSED}) {
            messages.clear();
            EGDB_DRIVER *d = egdb_open(layout, max_pieces, 16, sub.c_str(), msg_fn);
            CHECK(d != nullptr, "open %s", sub.c_str());
            if (!d) {
                for (const std::string &m : messages) std::printf("  msg: %s", m.c_str());
                continue;
            }
            CHECK(any_message_contains(mtc ? "moves to conversion" : "depth to win"),
                  "%s open message", name);
            d->reset_stats(d);
            unsigned n = 0;
            for (const Dist &x : known_distances()) {
                int want = mtc ? x.mtc : x.dtw;
                int r = lookup(d, x.p, layout, 0);
                ++n;
                CHECK(r == want, "%s %s: %d, expected %d", name, x.p.name, r, want);
                CHECK(lookup(d, x.p, layout, 1) == EGDB_NOT_IN_CACHE, "%s %s conditional", name,
                      x.p.name);
                ++n;
            }
            int wrong = 0;
            for (const auto &x : random) {
                int r = lookup(d, x.first, layout, 0);
                ++n;
                if (r != x.second && ++wrong <= 5)
                    std::printf("  %s random b=%08x w=%08x k=%08x color %d: %d, expected %d\n",
                                name, board_of(x.first, EGDB_NORMAL).normal.black,
                                board_of(x.first, EGDB_NORMAL).normal.white,
                                board_of(x.first, EGDB_NORMAL).normal.king, x.first.color, r,
                                x.second);
            }
            CHECK(wrong == 0, "%s: %d of %zu random positions differ", name, wrong,
                  random.size());
            EGDB_STATS *s = d->get_stats(d);
            CHECK(s && s->db_requests == n, "%s: %u requests, expected %u", name,
                  s ? s->db_requests : 0, n);
            // Misuse: the "no distance" answer.
            CHECK(lookup(d, Pos{"color 2", 2, {}, {1}, {}, {2}, 0}, layout, 0) == none,
                  "%s color 2", name);
            CHECK(d->lookup(d, nullptr, EGDB_BLACK, 0) == none, "%s NULL position", name);
            if (max_pieces == 4)
                CHECK(lookup(d, Pos{"5", EGDB_WHITE, {9, 10, 17, 18}, {}, {}, {6}, 0}, layout, 0) ==
                          none,
                      "%s 5 pieces", name);
            CHECK(d->verify(d) == 0, "%s verify", name);
            CHECK(d->close(d) == 0, "%s close", name);
        }
        // Fewer pieces than the tables: larger positions have no distance.
        EGDB_DRIVER *d = egdb_open(EGDB_NORMAL, 2, 8, sub.c_str(), nullptr);
        CHECK(d != nullptr, "%s open with 2 pieces", name);
        if (d) {
            const Dist &two = known_distances()[0];
            const Dist &three = known_distances()[1];
            CHECK(lookup(d, two.p, EGDB_NORMAL, 0) == (mtc ? two.mtc : two.dtw), "%s 2 pieces",
                  name);
            CHECK(lookup(d, three.p, EGDB_NORMAL, 0) == none, "%s 3 pieces on 2", name);
            CHECK(d->close(d) == 0, "close");
        }
        // A directory of value files only: no distance handle.
        const std::string bare = std::string(corrupt) + (mtc ? "/mtc" : "/dtw");
        messages.clear();
        CHECK(egdb_open(EGDB_NORMAL, 2, 8, bare.c_str(), msg_fn) == nullptr, "%s without files",
              name);
        CHECK(any_message_contains(mtc ? "egdb build --dtc" : "egdb build --dtw"),
              "%s: no message naming the build", name);
        CHECK(egdb_identify(bare.c_str(), &type, &pieces) != 0, "identify %s", bare.c_str());
    }
}

int main(int argc, char **argv) {
    if (argc != 6 && argc != 7) {
        std::fprintf(stderr,
                     "usage: client TABLES MAX_PIECES RANDOM_FILE CORRUPT_DIR EMPTY_DIR "
                     "[DISTANCE_FILE]\n");
        return 2;
    }
    const char *dir = argv[1];
    const int max_pieces = std::atoi(argv[2]);
    const std::vector<Pos> random = read_random(argv[3]);
    const char *corrupt = argv[4];
    const char *empty = argv[5];
    CHECK(random.size() >= 1000, "only %zu random positions", random.size());
    CHECK(max_pieces >= 4, "tables of %d pieces", max_pieces);
    std::printf("driver version %u\n", egdb_version);
    CHECK(egdb_version >= 100, "egdb_version %u", egdb_version);

    // identify.
    EGDB_TYPE type = EGDB_KINGSROW_WLD;
    int pieces = 0;
    CHECK(egdb_identify(dir, &type, &pieces) == 0, "identify %s", dir);
    CHECK(type == EGDB_KINGSROW32_WLD && type == 4, "type %d", (int)type);
    CHECK(pieces == max_pieces, "identify says %d pieces, expected %d", pieces, max_pieces);
    type = EGDB_CAKE_WLD;
    pieces = -7;
    CHECK(egdb_identify(empty, &type, &pieces) != 0, "identify on a directory without tables");
    CHECK(type == EGDB_CAKE_WLD && pieces == -7, "outputs touched on failure");
    CHECK(egdb_identify(nullptr, &type, &pieces) != 0, "identify NULL");
    CHECK(egdb_identify("/nonexistent/egdb", &type, &pieces) != 0, "identify missing dir");

    test_layout(dir, max_pieces, EGDB_NORMAL, random);
    test_layout(dir, max_pieces, EGDB_ROW_REVERSED, random);

    // Opened for fewer pieces than the directory holds: larger positions are unknown.
    {
        EGDB_DRIVER *d = egdb_open(EGDB_NORMAL, 2, 8, dir, msg_fn);
        CHECK(d != nullptr, "open with 2 pieces");
        if (d) {
            const Pos &first = known()[0];  // 4 pieces
            CHECK(lookup(d, first, EGDB_NORMAL, 0) == EGDB_UNKNOWN, "4 pieces on a 2-piece open");
            CHECK(lookup(d, known()[2], EGDB_NORMAL, 0) == EGDB_WIN, "W:WK32:BK26 on 2 pieces");
            CHECK(d->close(d) == 0, "close");
        }
    }
    // No cache: unconditional lookups still answer; conditional ones need I/O.
    {
        EGDB_DRIVER *d = egdb_open(EGDB_ROW_REVERSED, max_pieces, 0, dir, nullptr);
        CHECK(d != nullptr, "open without cache or callback");
        if (d) {
            for (const Pos &p : known()) {
                CHECK(lookup(d, p, EGDB_ROW_REVERSED, 0) == p.expected, "%s without cache", p.name);
            }
            CHECK(d->close(d) == 0, "close");
        }
    }

    // Misuse of egdb_open: each returns NULL and says why.
    struct Bad {
        const char *what;
        int layout, pieces, cache;
        const char *dir;
        const char *needle;
    } bad[] = {
        {"NULL directory", EGDB_NORMAL, 4, 8, nullptr, "NULL"},
        {"too many pieces", EGDB_NORMAL, max_pieces + 1, 8, dir, "pieces"},
        {"zero pieces", EGDB_NORMAL, 0, 8, dir, "pieces"},
        {"layout 2", 2, 4, 8, dir, "bitboard type 2"},
        {"layout -1", -1, 4, 8, dir, "bitboard type -1"},
        {"negative cache", EGDB_ROW_REVERSED, 4, -1, dir, "negative"},
        {"missing directory", EGDB_NORMAL, 4, 8, "/nonexistent/egdb", "/nonexistent/egdb"},
        {"no tables", EGDB_NORMAL, 4, 8, empty, "no table files"},
    };
    for (const Bad &b : bad) {
        messages.clear();
        EGDB_DRIVER *d = egdb_open((EGDB_BITBOARD_TYPE)b.layout, b.pieces, b.cache, b.dir, msg_fn);
        CHECK(d == nullptr, "%s accepted", b.what);
        if (d) d->close(d);
        CHECK(any_message_contains(b.needle), "%s: no message containing '%s' (%s)", b.what,
              b.needle, messages.empty() ? "none" : messages.back().c_str());
        CHECK(egdb_open((EGDB_BITBOARD_TYPE)b.layout, b.pieces, b.cache, b.dir, nullptr) == nullptr,
              "%s without callback", b.what);
    }

    // A damaged file: verify fails naming it; lookups never return a wrong value.
    {
        std::string damaged;
        std::ifstream(std::string(corrupt) + "/damaged.txt") >> damaged;
        CHECK(!damaged.empty(), "damaged.txt");
        messages.clear();
        EGDB_DRIVER *d = egdb_open(EGDB_NORMAL, max_pieces, 64, corrupt, msg_fn);
        CHECK(d != nullptr, "open the damaged copy");
        if (d) {
            int wrong = 0;
            for (const Pos &p : random) {
                int r = lookup(d, p, EGDB_NORMAL, 0);
                wrong += r != p.expected && r != EGDB_UNKNOWN;
            }
            CHECK(wrong == 0, "%d wrong values from damaged tables", wrong);
            messages.clear();
            CHECK(d->verify(d) != 0, "verify on a damaged file");
            CHECK(any_message_contains(damaged.c_str()), "verify does not name %s",
                  damaged.c_str());
            CHECK(d->close(d) == 0, "close");
        }
    }

    if (argc == 7) test_distances(dir, max_pieces, argv[6], corrupt);

    std::printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
