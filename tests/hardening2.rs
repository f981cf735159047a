//! Issue 36 (hardening, second round): certificates are refused when truncated or empty,
//! `check-proof` and `annotate` read bounded input, `annotate` tells a bad `[FEN]` tag from an
//! illegal move. Each check runs the `egdb` binary on a small table set built here.
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const EGDB: &str = env!("CARGO_BIN_EXE_egdb");

/// A table directory built once per test binary by `egdb build --quiet ARGS` (the cell keeps
/// it alive).
fn built(cell: &'static OnceLock<(tempfile::TempDir, PathBuf)>, args: &[&str]) -> &'static Path {
    &cell
        .get_or_init(|| {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("t");
            let mut a = vec!["build", "--quiet", "--dir", dir.to_str().unwrap()];
            a.extend_from_slice(args);
            let out = egdb(&a);
            assert!(out.status.success(), "{}", text(&out));
            (tmp, dir)
        })
        .1
}

/// The 3-piece tables (`egdb build --pieces 3`).
fn t3() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    built(&DIR, &["--pieces", "3"])
}

/// The 4-piece tables with their distance files (`egdb build --pieces 4 --dtc`, for
/// `/api/line`).
fn t4_dtc() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    built(&DIR, &["--pieces", "4", "--dtc"])
}

fn egdb(args: &[&str]) -> Output {
    run_bounded(Command::new(EGDB).args(args).env_remove("EGDB_DIR"), 120)
}

/// Run `c`, killed after `secs` seconds (a hang or runaway read fails the test, not the suite).
fn run_bounded(c: &mut Command, secs: u64) -> Output {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            let o = child.wait_with_output().unwrap();
            panic!("egdb ran past {secs} s and was killed: {}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// One `egdb: error:` line and exit status 1; the line.
fn one_error(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", text(o));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("egdb: error: "), "{err}");
    assert!(o.stdout.is_empty(), "{}", text(o));
    err
}

/// Three 4-piece wins and losses proven on the 3-piece tables, certified.
fn certificate(dir: &Path) -> String {
    let cert = dir.join("c.proof");
    let t3 = t3().to_str().unwrap();
    let out = egdb(&[
        "prove",
        "--dir",
        t3,
        "--cert",
        cert.to_str().unwrap(),
        "B:WK30:BK1,K2,K3",
        "W:WK30:BK1,K2,K3",
        "B:W30:B1,K2,K3",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    std::fs::read_to_string(cert).unwrap()
}

fn check(dir: &Path, cert: &str) -> Output {
    let p = dir.join("x.proof");
    std::fs::write(&p, cert).unwrap();
    egdb(&[
        "check-proof",
        "--dir",
        t3().to_str().unwrap(),
        p.to_str().unwrap(),
    ])
}

/// Item 4: a certificate cut anywhere between lines is refused: the header alone, between two
/// proofs, inside a proof; a certificate of no proofs is refused; version 1 (no trailer) is
/// refused with the reason. The whole one passes with its three roots.
#[test]
fn truncated_or_empty_certificates_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = certificate(tmp.path());
    let out = check(tmp.path(), &whole);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 3);
    let lines: Vec<&str> = whole.lines().collect();
    // Every cut at a line boundary short of the whole file.
    for cut in 0..lines.len() {
        let part: String = lines[..cut].iter().map(|l| format!("{l}\n")).collect();
        let err = one_error(&check(tmp.path(), &part));
        assert!(!err.contains("line 0"), "{err}");
        if cut >= 3 {
            assert!(
                err.contains("truncated") || err.contains("records"),
                "cut at {cut}: {err}"
            );
        }
    }
    // Zero proofs, even with a consistent trailer.
    let empty: String = lines[..3].iter().map(|l| format!("{l}\n")).collect();
    let err = one_error(&check(tmp.path(), &(empty.clone() + "proofs 0\n")));
    assert!(err.contains("no proofs"), "{err}");
    // A trailer that does not match the proofs.
    let last = lines.len() - 1;
    assert_eq!(lines[last], "proofs 3");
    let wrong = whole.replace("\nproofs 3\n", "\nproofs 2\n");
    one_error(&check(tmp.path(), &wrong));
    // Version 1 had no trailer: refused, saying why.
    let v1 = whole
        .replace("egdb-proof 2", "egdb-proof 1")
        .replace("\nproofs 3\n", "\n");
    let err = one_error(&check(tmp.path(), &v1));
    assert!(err.contains("version 1"), "{err}");
}

/// Item 5: `check-proof` and `annotate` on an endless input (`/dev/zero`) and on an overlong
/// line stop at once with one error line (killed after 60 s otherwise).
#[test]
fn endless_and_overlong_inputs_are_refused() {
    let t3 = t3().to_str().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let long = tmp.path().join("long");
    std::fs::write(&long, vec![b'a'; 100_000]).unwrap();
    for file in ["/dev/zero", long.to_str().unwrap()] {
        let o = run_bounded(
            Command::new(EGDB).args(["check-proof", "--dir", t3, file]),
            60,
        );
        let err = one_error(&o);
        assert!(err.contains("longer than 4096 bytes"), "{err}");
        let o = run_bounded(Command::new(EGDB).args(["annotate", "--dir", t3, file]), 60);
        let err = one_error(&o);
        assert!(err.contains("longer than"), "{err}");
    }
}

/// Item 9: `annotate` counts a game whose `[FEN]` tag is not a position apart from an illegal
/// move.
#[test]
fn annotate_counts_a_bad_fen_tag_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let pdn = tmp.path().join("g.pdn");
    std::fs::write(
        &pdn,
        "[Event \"bad fen\"]\n[FEN \"B:W99:B1\"]\n1. 1-5 *\n\n\
         [Event \"illegal\"]\n1. 11-18 *\n",
    )
    .unwrap();
    let o = egdb(&[
        "annotate",
        "--summary",
        "--dir",
        t3().to_str().unwrap(),
        pdn.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.starts_with("games 2 replayed 0 stopped_at_illegal_move 1 "),
        "{s}"
    );
    assert!(s.trim_end().ends_with(" bad_fen_tags 1"), "{s}");
}

/// A running `egdb serve`, killed on drop.
struct Server(std::process::Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(extra: &[&str]) -> Server {
    serve_in(t3(), extra)
}

fn serve_in(dir: &Path, extra: &[&str]) -> Server {
    use std::io::BufRead;
    let mut child = Command::new(EGDB)
        .args([
            "serve",
            "--dir",
            dir.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("egdb serve: listening on http://")
        .and_then(|s| s.strip_suffix('/'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Server(child, addr)
}

/// Read until the server closes the connection (or 10 s pass: then `None`).
fn read_to_close(s: &mut std::net::TcpStream) -> Option<Vec<u8>> {
    use std::io::Read;
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut buf = Vec::new();
    match s.read_to_end(&mut buf) {
        Ok(_) => Some(buf),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Some(buf),
        Err(_) => None,
    }
}

fn get(addr: &str, path: &str) -> String {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    String::from_utf8_lossy(&read_to_close(&mut s).expect("an answer")).into_owned()
}

/// Item 6: idle connections (nothing sent, or headers stopped halfway) are closed after
/// `--idle-timeout-ms`; past `--max-connections` open at once a new connection is answered 503
/// and closed; afterwards the server answers normally. Loopback only, 4 connections, seconds.
#[test]
fn serve_closes_idle_connections_and_caps_them() {
    use std::io::Write;
    let srv = serve(&["--max-connections", "3", "--idle-timeout-ms", "700"]);
    let start = Instant::now();
    let mut idle: Vec<std::net::TcpStream> = (0..3)
        .map(|_| std::net::TcpStream::connect(&srv.1).unwrap())
        .collect();
    idle[1]
        .write_all(b"GET /api/health HTTP/1.1\r\nHo")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // The fourth: refused at once.
    let mut extra = std::net::TcpStream::connect(&srv.1).unwrap();
    let answer = read_to_close(&mut extra).expect("the fourth connection is closed");
    assert!(
        String::from_utf8_lossy(&answer).starts_with("HTTP/1.1 503"),
        "{answer:?}"
    );
    // The idle ones are closed by the server, well before the 10 s read limit.
    for s in &mut idle {
        assert!(read_to_close(s).is_some(), "an idle connection stayed open");
    }
    assert!(start.elapsed() < Duration::from_secs(8));
    let body = get(&srv.1, "/api/health");
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
}

/// Slow loris: a client that trickles its request head one byte at a time, each byte well
/// within `--idle-timeout-ms` of the last, has its connection closed once the head has taken
/// longer than `--idle-timeout-ms` (docs/cli.md): its bytes do not keep it open for ever.
/// Idle timeout 1 s, a byte every 250 ms; closed well before 10 s (it used to stay open).
#[test]
fn serve_closes_a_trickled_request_head() {
    use std::io::{Read, Write};
    let srv = serve(&["--idle-timeout-ms", "1000"]);
    let mut s = std::net::TcpStream::connect(&srv.1).unwrap();
    let start = Instant::now();
    s.write_all(b"GET /api/health HTTP/1.1\r\n").unwrap();
    s.set_read_timeout(Some(Duration::from_millis(250)))
        .unwrap();
    let mut buf = [0u8; 1024];
    let closed_after = loop {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "a connection trickling its headers stayed open for 10 s"
        );
        match s.read(&mut buf) {
            // Closed (whatever it answered before closing).
            Ok(0) => break start.elapsed(),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break start.elapsed(),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                // Still open: one more byte of a header that never ends.
                if s.write_all(b"x").is_err() {
                    break start.elapsed();
                }
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert!(
        closed_after >= Duration::from_millis(900),
        "{closed_after:?}"
    );
    // The server answers normally afterwards.
    let body = get(&srv.1, "/api/health");
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
}

/// The status code of an HTTP answer (read until the server closes).
fn status_of(s: &mut std::net::TcpStream) -> u16 {
    let answer = String::from_utf8_lossy(&read_to_close(s).expect("an answer")).into_owned();
    answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer:?}"))
}

/// A request that times out (408) keeps its place among `--max-concurrent` while its table work
/// still runs: a request arriving meanwhile is refused at once (503 "busy": docs/cli.md,
/// "refused, never queued"), not admitted (it used to get 200, the timed-out work running on
/// beside it, and a second table request queued behind that work). With `--max-concurrent 1
/// --timeout-ms 1`, a line on cold tables (a few milliseconds of work) gets 408; the next
/// request, sent at once on a connection opened beforehand, is `/api/health` (no table work).
/// It gets 503 while the line's work runs, or 200 where that work already ended (the client
/// cannot see which: then the attempt proves nothing and is made again on a fresh server, with
/// cold tables); never 408. At least one 503 in 8 attempts (each one gets it about 9 times in
/// 10 on a loaded 2-core machine); afterwards the server is idle again (200).
#[test]
fn serve_counts_timed_out_work_until_it_ends() {
    use std::io::Write;
    let req = |path: &str| format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let mut seen = Vec::new();
    for _ in 0..8 {
        let srv = serve_in(t4_dtc(), &["--max-concurrent", "1", "--timeout-ms", "1"]);
        let mut slow = std::net::TcpStream::connect(&srv.1).unwrap();
        let mut next = std::net::TcpStream::connect(&srv.1).unwrap();
        slow.write_all(req("/api/line?fen=B:W32,28:B1,5&max=500").as_bytes())
            .unwrap();
        let first = status_of(&mut slow);
        if first != 408 {
            // The work ended within 1 ms: nothing left running.
            assert_eq!(first, 200);
            continue;
        }
        next.write_all(req("/api/health").as_bytes()).unwrap();
        let second = status_of(&mut next);
        assert!(second == 503 || second == 200, "{second}");
        seen.push(second);
        // The work ends and its place is given back.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !get(&srv.1, "/api/health").starts_with("HTTP/1.1 200") {
            assert!(Instant::now() < deadline, "the server stayed busy");
            std::thread::sleep(Duration::from_millis(20));
        }
        if second == 503 {
            break;
        }
    }
    assert!(seen.contains(&503), "{seen:?}");
}
