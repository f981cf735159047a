//! HTTP tests of `egdb serve` on a loopback port: every endpoint's JSON shape, 400/404 cases,
//! the embedded page, and a request flood that stays within `--max-concurrent`.
//!
//! Values asserted are published facts (/work/shared/reference.md: Lasker's diagram 88, the
//! First Position, `W:WK4:BK12`, `W:WK29:BK25`, king v king counts), not outputs of the code.
use checkers_egdb::{build, BuildOptions, Position};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// A running server, killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Tables of at most 4 pieces with their distance files, built once per test binary.
fn tables() -> &'static std::path::Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let mut o = BuildOptions::new(d.path(), 4);
        o.dtc = true;
        build(&o).unwrap();
        d
    })
    .path()
}

fn start(extra: &[&str]) -> Server {
    start_in(tables(), extra)
}

fn start_in(dir: &std::path::Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .arg("serve")
        .arg("--dir")
        .arg(dir)
        .args(["--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("egdb serve: listening on http://")
        .and_then(|s| s.strip_suffix('/'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Server { child, addr }
}

/// One HTTP/1.1 GET (connection closed after): status, content type, body.
fn get_raw(addr: &str, path: &str) -> (u16, String, String) {
    send_raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
    )
}

/// Send `request` as it is; the answer's status, content type and body.
fn send_raw(addr: &str, request: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let ctype = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    (status, ctype, body.to_string())
}

fn get_json(addr: &str, path: &str) -> (u16, Value) {
    let (status, ctype, body) = get_raw(addr, path);
    assert!(ctype.starts_with("application/json"), "{path}: {ctype}");
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}")),
    )
}

fn moves_of(v: &Value) -> Vec<&str> {
    v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["move"].as_str().unwrap())
        .collect()
}

#[test]
fn probe_endpoint_shapes_and_values() {
    let srv = start(&[]);
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=W:WK32:BK26");
    assert_eq!(st, 200, "{v}");
    // Lasker, diagram 88: White to move wins.
    assert_eq!(v["value"], "win");
    assert_eq!(v["fen"], "W:WK32:BK26");
    assert_eq!(v["side"], "white");
    assert_eq!(v["pieces"], 2);
    assert!(
        v["dtc"].as_u64().is_some(),
        "a won position has a distance: {v}"
    );
    let moves = v["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 2); // 32-27 and 32-28
    for m in moves {
        for k in ["move", "fen", "value", "dtc", "capture", "crowns"] {
            assert!(m.get(k).is_some(), "move lacks {k}: {m}");
        }
        // The resulting FEN is the position after the move, canonical.
        let after = Position::from_fen(m["fen"].as_str().unwrap()).unwrap();
        assert_eq!(after.to_fen(), m["fen"]);
    }
    // Best first: the winning move leads.
    assert_eq!(moves[0]["value"], "win");
    // Black to move in the same position: a draw.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=B:WK32:BK26");
    assert_eq!(v["value"], "draw");
    // The First Position (Lasker 1918), White to move: win; Black to move: draw.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=W:WK19,K23:BK28,12");
    assert_eq!(v["value"], "win");
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=B:WK19,K23:BK28,12");
    assert_eq!(v["value"], "draw");
    // W:WK4:BK12: loss, 4-8 forced.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=W:WK4:BK12");
    assert_eq!(v["value"], "loss");
    assert_eq!(moves_of(&v), ["4-8"]);
    assert_eq!(v["moves"][0]["value"], "loss");
    // W:WK29:BK25: the capture 29x22 wins; flags say capture.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=W:WK29:BK25");
    assert_eq!(v["value"], "win");
    assert_eq!(moves_of(&v), ["29x22"]);
    assert_eq!(v["moves"][0]["capture"], true);
    // W:W5:BK2: the only move 5-1 crowns.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=W:W5:BK2");
    assert_eq!(v["value"], "win");
    assert_eq!(moves_of(&v), ["5-1"]);
    assert_eq!(v["moves"][0]["crowns"], true);
}

/// Distances to conversion (reference.md §3, §7): a crowning or a capture is a conversion
/// (DTC 1); `W:WK4:BK12` loses in 2 (4-8 forced, then Black must capture); K v K `B:WK13:BK1`
/// wins in 11, the longest.
#[test]
fn probe_endpoint_distances() {
    let srv = start(&[]);
    for (fen, value, dtc) in [
        ("W:W5:BK2", "win", 1),
        ("W:WK29:BK25", "win", 1),
        ("W:WK4:BK12", "loss", 2),
        ("B:WK13:BK1", "win", 11),
    ] {
        let (st, v) = get_json(&srv.addr, &format!("/api/probe?fen={fen}"));
        assert_eq!(st, 200, "{v}");
        assert_eq!(
            (v["value"].as_str(), v["dtc"].as_u64()),
            (Some(value), Some(dtc)),
            "{fen}: {v}"
        );
    }
    // The winning king v king line ends with the loser to move and no move, the distance
    // falling by one per ply.
    let (_, v) = get_json(&srv.addr, "/api/line?fen=B:WK13:BK1");
    assert_eq!(v["end"], "no_moves", "{v}");
    assert_eq!(v["moves"].as_array().unwrap().len(), 11, "{v}");
}

/// Without distance files the explorer still answers, from win/loss/draw alone.
#[test]
fn probe_endpoint_without_distance_files() {
    let d = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(d.path(), 2)).unwrap();
    let srv = start_in(d.path(), &[]);
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=W:WK32:BK26");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["value"], "win");
    assert!(v["dtc"].is_null(), "no distance files, no distance: {v}");
    assert_eq!(v["moves"][0]["value"], "win");
    // No perfect line without distances (a line by value alone may never convert).
    let (st, v) = get_json(&srv.addr, "/api/line?fen=W:WK32:BK26");
    assert_eq!((st, v["kind"].as_str()), (404, Some("no_distances")), "{v}");
}

#[test]
fn probe_errors() {
    let srv = start(&[]);
    // A bad FEN: 400 with the parser's own message.
    let bad = "X:W1:B2";
    let (st, v) = get_json(&srv.addr, &format!("/api/probe?fen={bad}"));
    assert_eq!(st, 400);
    assert_eq!(v["kind"], "bad_fen");
    assert_eq!(
        v["error"],
        Position::from_fen(bad).unwrap_err().to_string().as_str()
    );
    // A man on its own crowning row is not a position.
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:W1:B29");
    assert_eq!(st, 400, "{v}");
    // Missing parameter, over-long FEN.
    let (st, v) = get_json(&srv.addr, "/api/probe");
    assert_eq!((st, v["kind"].as_str()), (400, Some("bad_request")));
    let long = format!("B:W{}:B1", "1,".repeat(1000));
    let (st, _) = get_json(&srv.addr, &format!("/api/probe?fen={long}"));
    assert_eq!(st, 400);
    // Five pieces with tables of four: 404 naming why.
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:W21,22,23:B1,2");
    assert_eq!(st, 404);
    assert_eq!(v["kind"], "outside_tables");
    assert!(v["error"].as_str().unwrap().contains("5 pieces"), "{v}");
    let (st, _) = get_json(&srv.addr, "/api/line?fen=B:W21-32:B1-12");
    assert_eq!(st, 404);
    let (st, v) = get_json(&srv.addr, "/api/line?fen=W:WK4:BK12&max=abc");
    assert_eq!((st, v["kind"].as_str()), (400, Some("bad_request")));
    // Unknown routes answer JSON 404; nothing reads a file named by the request.
    let (st, v) = get_json(&srv.addr, "/../../etc/passwd");
    assert_eq!((st, v["kind"].as_str()), (404, Some("not_found")));
    // A parameter given twice is refused, not read as one of them (tester's finding).
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=W:WK4:BK12&fen=B:W21,22,23:B1,2");
    assert_eq!((st, v["kind"].as_str()), (400, Some("bad_request")), "{v}");
    assert!(v["error"].as_str().unwrap().contains("fen"), "{v}");
    // The answers the layers make are JSON too: a body over the limit (413), another method.
    let body = "x".repeat(4096);
    let (st, ct, text) = send_raw(
        &srv.addr,
        &format!(
            "POST /api/probe?fen=W:WK4:BK12 HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            srv.addr,
            body.len()
        ),
    );
    assert!(ct.starts_with("application/json"), "{st} {ct} {text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(st, 413, "{v}");
    assert_eq!(v["kind"], "too_large");
    assert!(v["error"].is_string() && v["kind"].is_string(), "{v}");
    let (st, ct, text) = send_raw(
        &srv.addr,
        &format!(
            "DELETE /api/probe?fen=W:WK4:BK12 HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            srv.addr
        ),
    );
    assert_eq!(st, 405, "{text}");
    assert!(ct.starts_with("application/json"), "{ct} {text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["kind"], "method_not_allowed");
}

#[test]
fn line_endpoint() {
    let srv = start(&[]);
    // W:WK4:BK12 loses in 2 plies: 4-8 forced, then 12x3; White has nothing left.
    let (st, v) = get_json(&srv.addr, "/api/line?fen=W:WK4:BK12");
    assert_eq!(st, 200);
    assert_eq!(v["start"], "W:WK4:BK12");
    assert_eq!(v["value"], "loss");
    assert_eq!(moves_of(&v), ["4-8", "12x3"]);
    assert_eq!(v["end"], "no_moves");
    assert_eq!(v["moves"][1]["fen"], "W:W:BK3");
    // max bounds the line.
    let (_, v) = get_json(&srv.addr, "/api/line?fen=W:WK4:BK12&max=1");
    assert_eq!(moves_of(&v), ["4-8"]);
    assert_eq!(v["end"], "max_plies");
    // A drawn king v king line keeps the draw until a position repeats.
    let (_, v) = get_json(&srv.addr, "/api/line?fen=B:WK32:BK26");
    assert_eq!(v["end"], "repetition");
    for m in v["moves"].as_array().unwrap() {
        assert_eq!(m["value"], "draw");
    }
}

#[test]
fn stats_endpoints() {
    let srv = start(&[]);
    let (st, v) = get_json(&srv.addr, "/api/stats");
    assert_eq!(st, 200);
    let rows = v.as_array().unwrap();
    assert!(!rows.is_empty());
    // King v king, White to move: 992 positions, 230 wins, 654 draws, 108 losses; longest
    // win 11 plies.
    let (st, v) = get_json(&srv.addr, "/api/stats/0101");
    assert_eq!(st, 200);
    let w = v
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["stm"] == "W")
        .unwrap()
        .clone();
    assert_eq!(
        (&w["positions"], &w["wins"], &w["draws"], &w["losses"]),
        (&992.into(), &230.into(), &654.into(), &108.into())
    );
    assert_eq!(w["longest"], 11);
    let (st, _) = get_json(&srv.addr, "/api/stats/3300");
    assert_eq!(st, 404);
    let (st, _) = get_json(&srv.addr, "/api/stats/..%2F..");
    assert_eq!(st, 400);
}

#[test]
fn page_and_assets() {
    let srv = start(&[]);
    let (st, ct, body) = get_raw(&srv.addr, "/");
    assert_eq!(st, 200);
    assert!(ct.starts_with("text/html"), "{ct}");
    assert!(body.contains("<svg id=\"board\""));
    let (st, ct, body) = get_raw(&srv.addr, "/app.js");
    assert_eq!(st, 200);
    assert!(ct.starts_with("text/javascript"), "{ct}");
    assert!(body.contains("/api/probe"));
    let (st, ct, _) = get_raw(&srv.addr, "/app.css");
    assert_eq!((st, ct.starts_with("text/css")), (200, true));
}

#[test]
fn flood_stays_bounded() {
    let srv = start(&["--max-concurrent", "2"]);
    let addr = srv.addr.clone();
    let threads: Vec<_> = (0..64)
        .map(|i| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let path = if i % 2 == 0 {
                    "/api/line?fen=B:WK32:BK26&max=500"
                } else {
                    "/api/probe?fen=W:WK19,K23:BK28,12"
                };
                get_raw(&addr, path).0
            })
        })
        .collect();
    let codes: Vec<u16> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    // Every request is answered, either served or refused at once; never queued without end.
    assert!(codes.iter().all(|c| *c == 200 || *c == 503), "{codes:?}");
    assert!(codes.contains(&200));
    let (st, v) = get_json(&addr, "/api/health");
    assert_eq!(st, 200);
    assert_eq!(v["max_concurrent"], 2);
    assert!(v["peak_in_flight"].as_u64().unwrap() <= 2, "{v}");
    // The server still answers normally afterwards.
    let (st, v) = get_json(&addr, "/api/probe?fen=W:WK32:BK26");
    assert_eq!((st, v["value"].as_str()), (200, Some("win")));
}

/// Depth to win in the explorer (issue 33): `/api/probe` gives `dtw` beside `dtc`, moves carry
/// both and are ordered by DTW; `/api/line` plays the fastest win by default where the `.dtw`
/// files are there (`metric` in the answer, `metric=dtc|dtw` to choose); the page shows the DTW
/// and offers the fastest line. Facts: 2K v K `B:WK14:BK1,K2` is won in 33 plies in both metrics
/// (published); `B:WK10:BK1,K2` has DTC 11 but DTW 13 (the independent oracles of
/// tests/dtc_oracle and tests/dtw_oracle: the lone king's best defence captures a king into a
/// lost K v K, a conversion DTC's loser avoids).
#[test]
fn depth_to_win_in_the_explorer() {
    let d = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(d.path(), 3);
    o.dtc = true;
    o.dtw = true;
    build(&o).unwrap();
    let srv = start_in(d.path(), &[]);
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:WK14:BK1,K2");
    assert_eq!(st, 200, "{v}");
    assert_eq!((v["dtc"].as_u64(), v["dtw"].as_u64()), (Some(33), Some(33)));
    let moves = v["moves"].as_array().unwrap();
    assert!(moves
        .iter()
        .all(|m| m["dtw"].is_u64() || m["value"] == "draw"));
    assert_eq!(moves[0]["dtw"], 33);
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=B:WK10:BK1,K2");
    assert_eq!(
        (v["dtc"].as_u64(), v["dtw"].as_u64()),
        (Some(11), Some(13)),
        "{v}"
    );
    // Moves best first by DTW.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=W:WK10:BK1,K2");
    let d: Vec<(String, u64)> = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["value"].as_str().unwrap().to_string(),
                m["dtw"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(d.iter().all(|(v, _)| v == "loss"), "{d:?}");
    assert!(d.windows(2).all(|w| w[0].1 >= w[1].1), "{d:?}");
    // Lines.
    for (q, metric, len) in [
        ("", "dtw", 13),
        ("&metric=dtw", "dtw", 13),
        ("&metric=dtc", "dtc", 11),
    ] {
        let (st, v) = get_json(&srv.addr, &format!("/api/line?fen=B:WK10:BK1,K2{q}"));
        assert_eq!(st, 200, "{v}");
        assert_eq!(v["metric"], metric);
        assert_eq!(v["end"], "no_moves");
        assert_eq!(v["moves"].as_array().unwrap().len(), len, "{q}: {v}");
        let last = v["moves"].as_array().unwrap().last().unwrap();
        assert_eq!(last["value"], "win");
        assert_eq!(
            last[metric], 1,
            "{q}: the last move wins in 1 for the mover"
        );
    }
    let (st, v) = get_json(&srv.addr, "/api/line?fen=B:WK10:BK1,K2&metric=dtx");
    assert_eq!(st, 400, "{v}");
    let (st, _, page) = get_raw(&srv.addr, "/");
    assert_eq!(st, 200);
    assert!(page.contains("id=\"dtw\"") && page.contains("id=\"fastest\""));
    let (_, _, js) = get_raw(&srv.addr, "/app.js");
    assert!(js.contains("perfectLine(\"dtw\")"));
}

/// Variant tables (issue 34): the server takes the directory's rules, says which in every
/// answer, and generates the variant's moves: a Russian man crowned during a capture goes on
/// capturing as a king (rule book), taking White's last pieces; in giveaway the side left
/// without pieces wins, and the perfect line ends with it to move. Other rules than the
/// directory's: the server refuses to start, naming both.
#[test]
fn variant_tables_are_served_under_their_rules() {
    let build_variant = |v: checkers_egdb::rules::Variant| {
        let d = tempfile::tempdir().unwrap();
        let mut o = BuildOptions::new(d.path(), 3);
        o.rules = v;
        o.dtc = true;
        build(&o).unwrap();
        d
    };
    let ru = build_variant(checkers_egdb::rules::Variant::Russian);
    let srv = start_in(ru.path(), &[]);
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:W24,26:B22");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["rules"], "russian");
    assert_eq!(v["value"], "win");
    assert_eq!(moves_of(&v), ["22x31x20"]);
    assert_eq!(v["moves"][0]["fen"], "W:W:BK20");
    let (_, h) = get_json(&srv.addr, "/api/health");
    assert_eq!(h["rules"], "russian");
    let (st, l) = get_json(&srv.addr, "/api/line?fen=B:W24,26:B22");
    assert_eq!(
        (st, &l["rules"], &l["end"]),
        (200, &json_str("russian"), &json_str("no_moves"))
    );
    drop(srv);

    let ga = build_variant(checkers_egdb::rules::Variant::Giveaway);
    let srv = start_in(ga.path(), &["--rules", "giveaway"]);
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=W:W:BK14");
    assert_eq!(
        (&v["rules"], &v["value"]),
        (&json_str("giveaway"), &json_str("win"))
    );
    let (st, l) = get_json(&srv.addr, "/api/line?fen=B:WK32:BK1");
    assert_eq!(st, 200, "{l}");
    assert_eq!(l["end"], "no_moves");
    let last = l["moves"].as_array().unwrap().last().unwrap().clone();
    // The last move's value is the mover's: the mover left the opponent without a move, so in
    // giveaway the mover has lost.
    assert_eq!(last["value"], "loss", "{l}");
    drop(srv);

    let o = Command::new(env!("CARGO_BIN_EXE_egdb"))
        .args([
            "serve",
            "--rules",
            "english",
            "--bind",
            "127.0.0.1:0",
            "--dir",
        ])
        .arg(ga.path())
        .output()
        .unwrap();
    assert!(!o.status.success());
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(msg.contains("giveaway") && msg.contains("english"), "{msg}");
}

fn json_str(s: &str) -> Value {
    Value::String(s.to_string())
}

/// Sorted move texts of an answer.
fn sorted_moves(v: &Value) -> Vec<String> {
    let mut m: Vec<String> = moves_of(v).into_iter().map(String::from).collect();
    m.sort();
    m
}

/// Tables of `variant` of at most `pieces` pieces with their DTC files, in a fresh directory.
fn built(variant: checkers_egdb::rules::Variant, pieces: u32) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let mut o = BuildOptions::new(d.path(), pieces);
    o.rules = variant;
    o.dtc = true;
    build(&o).unwrap();
    d
}

/// One server, several variants (issue 34, the explorer's variant picker): `--dir` repeated,
/// each directory's rules read from its headers, the first the default; `rules=NAME` on every
/// API route picks the variant. Facts decided from the rule books, not by the code: a king on
/// square 1 with the long diagonal 1-6-10-15-19-24-28 and square 5 open moves one square in
/// English (1-5, 1-6) and anywhere along them when it flies (Russian: seven moves); a Black man
/// on 22 jumping 26 reaches the crowning row on 31: in English the move ends there (22x31), in
/// Russian it goes on as a king and takes 24 too (22x31x20).
#[test]
fn several_variants_on_one_server() {
    use checkers_egdb::rules::Variant;
    let en = built(Variant::English, 3);
    let ru = built(Variant::Russian, 3);
    let srv = start_multi(&[en.path(), ru.path()], &[]);

    let (st, h) = get_json(&srv.addr, "/api/health");
    assert_eq!(st, 200, "{h}");
    assert_eq!(
        (&h["rules"], &h["default"]),
        (&json_str("english"), &json_str("english"))
    );
    let vs = h["variants"].as_array().unwrap();
    let names: Vec<&str> = vs.iter().map(|v| v["rules"].as_str().unwrap()).collect();
    assert_eq!(names, ["english", "russian"]);
    assert_eq!(
        (&vs[0]["kings"], &vs[1]["kings"]),
        (&json_str("short"), &json_str("flying"))
    );
    for v in vs {
        assert_eq!(v["max_pieces"], 3, "{v}");
        let start = Position::from_fen(v["start"].as_str().unwrap()).unwrap();
        assert_eq!(start, Position::from_fen("B:W21-32:B1-12").unwrap(), "{v}");
    }
    let (_, h) = get_json(&srv.addr, "/api/health?rules=russian");
    assert_eq!(
        (&h["rules"], &h["default"]),
        (&json_str("russian"), &json_str("english"))
    );

    // The default is the first directory's variant; rules= picks the other.
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:W32:BK1");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["rules"], "english");
    assert_eq!(sorted_moves(&v), ["1-5", "1-6"]);
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:W32:BK1&rules=russian");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["rules"], "russian");
    assert_eq!(
        sorted_moves(&v),
        ["1-10", "1-15", "1-19", "1-24", "1-28", "1-5", "1-6"]
    );
    // Each move's FEN is the position after it (the flying king lands on the far square).
    let m = v["moves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["move"] == "1-28")
        .unwrap();
    assert_eq!(m["fen"], "W:W32:BK28");
    // Names are case-insensitive; the explicit default is the default.
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=B:W24,26:B22&rules=English");
    assert_eq!(
        (v["rules"].as_str(), moves_of(&v)),
        (Some("english"), vec!["22x31"])
    );
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=B:W24,26:B22&rules=russian");
    assert_eq!(
        (v["rules"].as_str(), moves_of(&v)),
        (Some("russian"), vec!["22x31x20"])
    );
    assert_eq!(v["value"], "win");
    // The line follows the variant asked for.
    let (st, l) = get_json(&srv.addr, "/api/line?fen=B:W24,26:B22&rules=russian");
    assert_eq!(st, 200, "{l}");
    assert_eq!(
        (l["rules"].as_str(), l["end"].as_str()),
        (Some("russian"), Some("no_moves"))
    );
    assert_eq!(moves_of(&l), ["22x31x20"]);
    // Statistics per variant: K v K has 32 x 31 = 992 positions with White to move in both;
    // English's 230 wins (published) are the English table's.
    let white_row = |v: &Value| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["stm"] == "W")
            .unwrap()
            .clone()
    };
    let (st, e) = get_json(&srv.addr, "/api/stats/0101");
    assert_eq!(st, 200);
    let (st, r) = get_json(&srv.addr, "/api/stats/0101?rules=russian");
    assert_eq!(st, 200, "{r}");
    let (e, r) = (white_row(&e), white_row(&r));
    assert_eq!((&e["positions"], &e["wins"]), (&992.into(), &230.into()));
    assert_eq!(r["positions"], 992);
    assert_ne!(r, e, "the Russian rows are not the English ones");
    let (st, all) = get_json(&srv.addr, "/api/stats?rules=russian");
    assert_eq!(st, 200);
    assert!(!all.as_array().unwrap().is_empty());

    // Unknown and not-served rules: 4xx JSON on every route, naming what is served.
    for route in [
        "/api/probe?fen=B:W32:BK1",
        "/api/line?fen=B:W32:BK1",
        "/api/stats",
        "/api/stats/0101",
        "/api/health",
    ] {
        let sep = if route.contains('?') { '&' } else { '?' };
        let (st, v) = get_json(&srv.addr, &format!("{route}{sep}rules=chess"));
        assert_eq!(
            (st, v["kind"].as_str()),
            (400, Some("unknown_rules")),
            "{route}: {v}"
        );
        let (st, v) = get_json(&srv.addr, &format!("{route}{sep}rules=italian"));
        assert_eq!(
            (st, v["kind"].as_str()),
            (404, Some("rules_not_served")),
            "{route}: {v}"
        );
        let msg = v["error"].as_str().unwrap();
        assert!(
            msg.contains("italian") && msg.contains("english, russian"),
            "{msg}"
        );
        let (st, v) = get_json(
            &srv.addr,
            &format!("{route}{sep}rules={}", "x".repeat(5000)),
        );
        assert_eq!(
            (st, v["kind"].as_str()),
            (400, Some("unknown_rules")),
            "{route}"
        );
        assert!(v["error"].as_str().unwrap().len() < 200, "{v}");
        let (st, v) = get_json(&srv.addr, &format!("{route}{sep}rules="));
        assert_eq!(st, 400, "{route}: {v}");
    }
    // A position that is illegal in every variant is still refused as such.
    let (st, v) = get_json(&srv.addr, "/api/probe?fen=B:W1:B29&rules=russian");
    assert_eq!((st, v["kind"].as_str()), (400, Some("bad_fen")), "{v}");
    // The page has the picker and asks the server with rules=.
    let (_, _, page) = get_raw(&srv.addr, "/");
    assert!(page.contains("id=\"variant\""), "{page}");
    let (_, _, js) = get_raw(&srv.addr, "/app.js");
    assert!(js.contains("&rules=") && js.contains("clickToMove"));
    drop(srv);

    // The first directory is the default, whichever variant it holds.
    let srv = start_multi(&[ru.path(), en.path()], &[]);
    let (_, h) = get_json(&srv.addr, "/api/health");
    assert_eq!(
        (&h["rules"], &h["default"]),
        (&json_str("russian"), &json_str("russian"))
    );
    let (_, v) = get_json(&srv.addr, "/api/probe?fen=B:W24,26:B22");
    assert_eq!(moves_of(&v), ["22x31x20"]);
    drop(srv);

    // Refused at start-up, with a clear message: two directories of the same rules, and
    // --rules with several directories.
    let en2 = built(Variant::English, 2);
    let fail = |dirs: &[&std::path::Path], extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_egdb"));
        c.args(["serve", "--bind", "127.0.0.1:0"]).args(extra);
        for d in dirs {
            c.arg("--dir").arg(d);
        }
        let o = c.output().unwrap();
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let msg = fail(&[en.path(), ru.path(), en2.path()], &[]);
    assert!(msg.contains("both hold english tables"), "{msg}");
    assert!(msg.contains(&en2.path().display().to_string()), "{msg}");
    let msg = fail(&[en.path(), ru.path()], &["--rules", "english"]);
    assert!(msg.contains("--rules applies to a single --dir"), "{msg}");
}

fn start_multi(dirs: &[&std::path::Path], extra: &[&str]) -> Server {
    let (first, rest) = dirs.split_first().unwrap();
    let mut args: Vec<String> = Vec::new();
    for d in rest {
        args.push("--dir".into());
        args.push(d.display().to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    start_in(first, &refs)
}
