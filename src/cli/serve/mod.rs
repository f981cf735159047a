//! `egdb serve [--dir DIR]... [--bind ADDR]`: the endgame explorer, a JSON API and one page.
//!
//! One server serves one directory per variant (`--dir` repeated; each directory's rules read
//! from its tables' headers; two directories of the same rules are refused at start-up). The
//! first directory's variant is the default; every API route takes an optional `rules=NAME`
//! (400 `unknown_rules` for a name no variant has, 404 `rules_not_served` for a variant no
//! directory holds).
//!
//! Routes (all `GET`; JSON shapes in docs/cli.md):
//! - `/` the page (HTML, CSS, JavaScript embedded with `include_str!`), `/app.js`, `/app.css`;
//! - `/api/probe?fen=FEN` value, distance and every legal move, best first;
//! - `/api/line?fen=FEN[&max=N]` the line of best moves (at most [`MAX_LINE`] plies);
//! - `/api/stats`, `/api/stats/{material}` (e.g. `2101`) statistics read once at start-up;
//! - `/api/health` requests in flight, the peak, the limits and the variants served.
//!
//! Errors are JSON `{"error": MESSAGE, "kind": KIND}`: 400 `bad_fen` (the parser's message) or
//! `bad_request`, 404 `outside_tables` (too many pieces, a missing slice) or `no_such_material`,
//! 503 `busy` (more than `--max-concurrent` requests in flight: refused, never queued; a
//! request that timed out counts until its table work ends), 408 after `--timeout-ms`, 500
//! `table_error` for a damaged file (named by its file name, never the server's path).
//! Nothing from a request names a file: the tables are opened once from the `--dir`
//! directories, and the page is compiled into the binary. At most
//! `--max-connections` connections are open at once (one more gets 503 and is closed), one
//! idle for `--idle-timeout-ms` (nothing read or written) is closed, and so is one whose
//! request head has not arrived whole within `--idle-timeout-ms`, however it is trickled.
use super::values::{self, Eval, ScoredMove};
use super::CliResult;
use axum::extract::{Extension, Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use checkers_egdb::rules::paths::KingRange;
use checkers_egdb::rules::{Rules, Variant};
use checkers_egdb::{
    format_move, material_stats, read_dir_info, AnyTablebase, Color, Material, MaterialStats,
    Position, ProbeError, Tablebase,
};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// Longest FEN accepted (characters); a longer one is refused with 400 before parsing.
pub const MAX_FEN_LEN: usize = 256;
/// Most plies `/api/line` plays.
pub const MAX_LINE: usize = 500;
/// Largest request body accepted (bytes); every route is a `GET`, so bodies are not needed.
pub const MAX_BODY: usize = 1024;

const PAGE_HTML: &str = include_str!("page.html");
const PAGE_JS: &str = include_str!("app.js");
const PAGE_CSS: &str = include_str!("app.css");

/// Arguments of `egdb serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Table directory (opened once at start-up). Repeat it to serve several variants, one
    /// directory each (each directory's rules are read from its tables' headers; two
    /// directories of the same rules are refused); the first is the default variant, the
    /// others are chosen with `rules=NAME` on each request (the page's variant picker).
    #[arg(long, env = "EGDB_DIR", default_value = super::DEFAULT_DIR)]
    pub dir: Vec<PathBuf>,
    /// The game the tables are of (english, russian, brazilian, italian, giveaway, pool,
    /// spanish, czech): moves, captures and the end of the game follow its rules. Default:
    /// the rules in the files' headers; given and not those, the server refuses to start,
    /// naming both. Only with a single `--dir`.
    #[arg(long)]
    pub rules: Option<String>,
    /// Address to listen on; port 0 picks a free port (the address is printed on stdout).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Most requests handled at once (a request that timed out counts until its table work
    /// ends); more are answered 503 at once.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_concurrent: u32,
    /// Time limit of one request in milliseconds (408 after it).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub timeout_ms: u64,
    /// Most connections open at once; one more is answered 503 and closed at once.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub max_connections: u32,
    /// A connection on which nothing is read or written for this many milliseconds is closed
    /// (a client that sends no request, or stops in the middle of its headers). Also the most
    /// time a request's head (request line and headers) may take to arrive, from the
    /// connection's opening or the previous answer, however slowly it is trickled.
    #[arg(long, default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub idle_timeout_ms: u64,
}

/// The listener of `egdb serve`: at most `permits` connections open at once (one more is
/// answered 503 and closed), each closed after `idle` without a byte read or written.
struct Guarded {
    listener: tokio::net::TcpListener,
    permits: Arc<Semaphore>,
    idle: Duration,
}

impl Guarded {
    /// The next connection within the limit (accept errors are retried as `axum::serve`
    /// does: at once for the client's, after 1 s for the server's own, e.g. too many files).
    async fn accept(&mut self) -> IdleIo {
        loop {
            let (stream, _) = axum::serve::Listener::accept(&mut self.listener).await;
            match self.permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    return IdleIo {
                        inner: stream,
                        idle: self.idle,
                        deadline: Box::pin(tokio::time::sleep(self.idle)),
                        _permit: permit,
                    }
                }
                Err(_) => {
                    // Best effort, never waiting: the socket is closed on drop.
                    let _ = stream.try_write(
                        b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\
                          connection: close\r\n\r\n",
                    );
                }
            }
        }
    }
}

/// Serve `router` on the connections of `listener` until Ctrl-C, then finish the requests
/// under way (each connection closes after its current answer) and return.
///
/// Each connection is HTTP/1 (hyper) with a header read timeout of `head`: a request's head
/// (request line and headers) must arrive whole within `head` of the connection being ready
/// for it (opened, or the previous answer sent), however slowly it is trickled; otherwise the
/// connection is closed. [`IdleIo`]'s idle timeout alone is reset by every byte, so a client
/// sending one header byte now and then would hold its connection for ever. (`axum::serve`
/// builds hyper without a timer, which turns hyper's header read timeout off.)
async fn serve_connections(
    mut listener: Guarded,
    router: Router,
    head: Duration,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(());
    let mut conns = tokio::task::JoinSet::new();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            io = listener.accept() => {
                let service = hyper_util::service::TowerToHyperService::new(router.clone());
                let mut stop = stop_rx.clone();
                conns.spawn(async move {
                    let mut builder = hyper::server::conn::http1::Builder::new();
                    builder
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(head);
                    let conn =
                        builder.serve_connection(hyper_util::rt::TokioIo::new(io), service);
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => return,
                        _ = stop.changed() => conn.as_mut().graceful_shutdown(),
                    }
                    // A failed connection (reset, timed out, bad request) concerns its client.
                    let _ = conn.await;
                });
            }
            r = &mut ctrl_c => {
                r?;
                break;
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
        }
    }
    drop(listener);
    let _ = stop_tx.send(());
    while conns.join_next().await.is_some() {}
    Ok(())
}

/// A connection that fails with `TimedOut` (and is then closed) once `idle` has passed
/// without a byte read or written; it holds one of the listener's connection permits. (A
/// trickled request head is bounded by hyper's header read timeout: [`serve_connections`].)
struct IdleIo {
    inner: tokio::net::TcpStream,
    idle: Duration,
    deadline: std::pin::Pin<Box<tokio::time::Sleep>>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl IdleIo {
    fn progress(&mut self) {
        let at = tokio::time::Instant::now() + self.idle;
        self.deadline.as_mut().reset(at);
    }
    fn expired(&mut self, cx: &mut std::task::Context<'_>) -> bool {
        std::future::Future::poll(self.deadline.as_mut(), cx).is_ready()
    }
}

fn idle_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "connection idle")
}

impl tokio::io::AsyncRead for IdleIo {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let before = buf.filled().len();
        match std::pin::Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    self.progress();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(idle_error())),
            other => other,
        }
    }
}

impl tokio::io::AsyncWrite for IdleIo {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        data: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        use std::task::Poll;
        match std::pin::Pin::new(&mut self.inner).poll_write(cx, data) {
            Poll::Ready(Ok(n)) => {
                self.progress();
                Poll::Ready(Ok(n))
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(idle_error())),
            other => other,
        }
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The tables of one variant: one `--dir`.
struct Served {
    tb: AnyTablebase,
    stats: Vec<MaterialStats>,
}

/// Longest `rules` parameter echoed back in an error (a variant name is at most 9 letters).
const MAX_RULES_LEN: usize = 16;

/// Shared state of the server.
struct App {
    /// One entry per variant served, in `--dir` order; the first is the default.
    served: Vec<Served>,
    permits: Arc<Semaphore>,
    limit: usize,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
    timeout_ms: u64,
}

impl App {
    /// The index in `served` of the variant a request asks for with `rules=NAME` (the first,
    /// the default, without it).
    ///
    /// # Errors
    /// 400 `unknown_rules` for a name no variant has; 404 `rules_not_served` for a variant
    /// whose tables this server does not hold (the message lists those it does).
    fn pick(&self, q: &HashMap<String, String>) -> Result<usize, ApiError> {
        let Some(name) = q.get("rules") else {
            return Ok(0);
        };
        let v = if name.len() > MAX_RULES_LEN {
            None
        } else {
            name.parse::<Variant>().ok()
        };
        let Some(v) = v else {
            let shown: String = name.chars().take(MAX_RULES_LEN).collect();
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "unknown_rules",
                format!(
                    "unknown rules {shown:?}: expected one of {}",
                    Variant::ALL.map(Variant::name).join(", ")
                ),
            ));
        };
        self.served
            .iter()
            .position(|s| s.tb.variant() == v)
            .ok_or_else(|| {
                ApiError(
                    StatusCode::NOT_FOUND,
                    "rules_not_served",
                    format!(
                        "no {v} tables on this server; it serves {}",
                        self.variant_names().join(", ")
                    ),
                )
            })
    }

    /// The names of the variants served, default first.
    fn variant_names(&self) -> Vec<&'static str> {
        self.served.iter().map(|s| s.tb.variant().name()).collect()
    }
}

/// An error answer: status and `{"error", "kind"}`.
struct ApiError(StatusCode, &'static str, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({"error": self.2, "kind": self.1}))).into_response()
    }
}

impl From<ProbeError> for ApiError {
    fn from(e: ProbeError) -> ApiError {
        match e {
            ProbeError::TooManyPieces { .. } | ProbeError::MissingSlice { .. } => {
                ApiError(StatusCode::NOT_FOUND, "outside_tables", e.to_string())
            }
            // A perfect line needs the distance files (`egdb build --dtc`).
            ProbeError::MissingDtc { .. } | ProbeError::MissingDtw { .. } => {
                ApiError(StatusCode::NOT_FOUND, "no_distances", e.to_string())
            }
            ProbeError::InvalidPosition(_) => {
                ApiError(StatusCode::BAD_REQUEST, "bad_fen", e.to_string())
            }
            _ => ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                "table_error",
                public_message(&e),
            ),
        }
    }
}

/// The query parameters of a request, each name at most once: a repeated name (`fen=..&fen=..`)
/// is 400 `bad_request` naming it, never silently the last one; a query that does not decode
/// is 400 `bad_request`.
struct Params(HashMap<String, String>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &S,
    ) -> Result<Self, Self::Rejection> {
        let Query(pairs) = Query::<Vec<(String, String)>>::from_request_parts(parts, state)
            .await
            .map_err(|e| ApiError(StatusCode::BAD_REQUEST, "bad_request", e.body_text()))?;
        let mut q = HashMap::with_capacity(pairs.len());
        for (k, v) in pairs {
            if q.contains_key(&k) {
                return Err(ApiError(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    format!("query parameter {k} given more than once"),
                ));
            }
            q.insert(k, v);
        }
        Ok(Params(q))
    }
}

/// Every error answer as JSON (`{"error", "kind"}`), including those the layers below the
/// handlers make as plain text or an empty body: 413 of the body limit (`too_large`), 408 of
/// the timeout (`timeout`), 405 (`method_not_allowed`). Answers already JSON pass unchanged.
async fn json_errors(req: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let res = next.run(req).await;
    let status = res.status();
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return res;
    }
    let kind = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        s if s.is_client_error() => "bad_request",
        _ => "internal",
    };
    let text = match status {
        StatusCode::PAYLOAD_TOO_LARGE => format!("request body over {MAX_BODY} bytes"),
        StatusCode::REQUEST_TIMEOUT => "the request took longer than --timeout-ms".to_string(),
        s => s.canonical_reason().unwrap_or("error").to_string(),
    };
    ApiError(status, kind, text).into_response()
}

/// The text of `e` for a client: a table file named by its file name (the slice), never by
/// the server's path.
fn public_message(e: &ProbeError) -> String {
    use checkers_egdb::format::TableError as T;
    let path = match e {
        ProbeError::Table(
            T::Io { path, .. }
            | T::Corrupt { path, .. }
            | T::WrongSlice { path, .. }
            | T::NotAFile { path },
        ) => Some(path),
        ProbeError::Io { dir, .. } | ProbeError::NoTables { dir } => Some(dir),
        _ => None,
    };
    let text = e.to_string();
    match path {
        Some(p) => {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "the table directory".into());
            text.replace(&p.display().to_string(), &name)
        }
        None => text,
    }
}

fn color_word(c: Color) -> &'static str {
    match c {
        Color::Black => "black",
        Color::White => "white",
    }
}

/// `Eval` as JSON fields: `value` (`win`/`loss`/`draw`), `dtc` and `dtw` (plies or null).
fn eval_json(e: Eval) -> (Value, Value, Value) {
    (json!(e.wld.as_str()), json!(e.plies), json!(e.dtw))
}

/// One move of `/api/probe` or `/api/line`, values from the mover's view.
fn move_json(m: &ScoredMove) -> Value {
    let (value, dtc, dtw) = eval_json(m.value);
    json!({
        "move": format_move(&m.mv),
        "fen": m.after.to_fen(),
        "value": value,
        "dtc": dtc,
        "dtw": dtw,
        "capture": m.mv.is_capture(),
        "crowns": m.mv.crowns,
    })
}

/// Parse the `fen` query parameter: 400 when missing, too long or not a legal position of
/// `variant` ([`Variant::parse_fen`]).
fn parse_fen_param(q: &HashMap<String, String>, variant: Variant) -> Result<Position, ApiError> {
    let fen = q.get("fen").ok_or_else(|| {
        ApiError(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "missing query parameter fen".into(),
        )
    })?;
    if fen.len() > MAX_FEN_LEN {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            "bad_fen",
            format!("FEN longer than {MAX_FEN_LEN} characters"),
        ));
    }
    variant
        .parse_fen(fen)
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, "bad_fen", e.to_string()))
}

/// The JSON of `/api/probe` for `p`: `rules` is the variant's name (`"english"`, ...), the
/// moves are the variant's.
pub fn probe_json<R: Rules>(tb: &Tablebase<R>, p: &Position) -> Result<Value, ProbeError> {
    let e = values::eval(tb, p)?;
    let moves = values::scored_moves(tb, p)?;
    let (value, dtc, dtw) = eval_json(e);
    Ok(json!({
        "rules": R::NAME,
        "fen": p.to_fen(),
        "side": color_word(p.side),
        "pieces": (p.black | p.white).count_ones(),
        "value": value,
        "dtc": dtc,
        "dtw": dtw,
        "moves": moves.iter().map(move_json).collect::<Vec<_>>(),
    }))
}

/// Run blocking table work off the async threads, holding the request's `slot` until the work
/// ends: a request that times out (408) drops this future, not the work, and the work keeps
/// its place among the `--max-concurrent` until it is done.
async fn blocking<T: Send + 'static>(
    slot: Slot,
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        f()
    })
    .await
    .map_err(|e| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            format!("worker failed: {e}"),
        )
    })?
}

async fn api_probe(
    State(app): State<Arc<App>>,
    Extension(slot): Extension<Slot>,
    Params(q): Params,
) -> Result<Json<Value>, ApiError> {
    let i = app.pick(&q)?;
    let p = parse_fen_param(&q, app.served[i].tb.variant())?;
    blocking(slot, move || {
        Ok(Json(
            checkers_egdb::with_tablebase!(&app.served[i].tb, tb => probe_json(tb, &p))?,
        ))
    })
    .await
}

async fn api_line(
    State(app): State<Arc<App>>,
    Extension(slot): Extension<Slot>,
    Params(q): Params,
) -> Result<Json<Value>, ApiError> {
    let i = app.pick(&q)?;
    let p = parse_fen_param(&q, app.served[i].tb.variant())?;
    let max = match q.get("max") {
        None => 200,
        Some(s) => match s.parse::<usize>() {
            Ok(n) if n <= MAX_LINE => n,
            _ => {
                return Err(ApiError(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    format!("max must be a number from 0 to {MAX_LINE}"),
                ))
            }
        },
    };
    let metric = match q.get("metric") {
        None => None,
        Some(s) => Some(
            s.parse::<checkers_egdb::Metric>()
                .map_err(|e| ApiError(StatusCode::BAD_REQUEST, "bad_request", e.to_string()))?,
        ),
    };
    blocking(slot, move || {
        let tb = &app.served[i].tb;
        let (start, line) = checkers_egdb::with_tablebase!(tb, tb => {
            (values::eval(tb, &p)?, values::line(tb, &p, max, metric)?)
        });
        let (value, dtc, dtw) = eval_json(start);
        Ok(Json(json!({
            "rules": tb.variant().name(),
            "start": line.start.to_fen(),
            "metric": line.metric.as_str(),
            "value": value,
            "dtc": dtc,
            "dtw": dtw,
            "moves": line.moves.iter().map(move_json).collect::<Vec<_>>(),
            "end": line.end.as_str(),
        })))
    })
    .await
}

async fn api_stats(
    State(app): State<Arc<App>>,
    Params(q): Params,
) -> Result<Json<Value>, ApiError> {
    let i = app.pick(&q)?;
    Ok(Json(json!(app.served[i].stats)))
}

async fn api_stats_material(
    State(app): State<Arc<App>>,
    UrlPath(name): UrlPath<String>,
    Params(q): Params,
) -> Result<Json<Value>, ApiError> {
    let i = app.pick(&q)?;
    let m = name
        .parse::<Material>()
        .map_err(|e| ApiError(StatusCode::BAD_REQUEST, "bad_request", e.to_string()))?;
    let rows: Vec<&MaterialStats> = app.served[i]
        .stats
        .iter()
        .filter(|s| (s.bm, s.bk, s.wm, s.wk) == (m.bm, m.bk, m.wm, m.wk))
        .collect();
    if rows.is_empty() {
        return Err(ApiError(
            StatusCode::NOT_FOUND,
            "no_such_material",
            format!("no tables for material {m}"),
        ));
    }
    Ok(Json(json!(rows)))
}

/// `/api/health`: the counters and limits; `rules` and `max_pieces` of the variant asked for
/// (the default without `rules=`), `default` the default variant's name, and `variants` every
/// variant served (default first) with its largest piece count and start position.
async fn api_health(
    State(app): State<Arc<App>>,
    Params(q): Params,
) -> Result<Json<Value>, ApiError> {
    let i = app.pick(&q)?;
    let variants: Vec<Value> = app
        .served
        .iter()
        .map(|s| {
            json!({
                "rules": s.tb.variant().name(),
                "max_pieces": s.tb.max_pieces(),
                "kings": match s.tb.variant().game().kings {
                    KingRange::Flying => "flying",
                    KingRange::Short => "short",
                },
                // The same 24 men on this crate's board in every variant (the side that
                // moves first is Black: docs/architecture.md, "Variants").
                "start": Position::START.to_fen(),
            })
        })
        .collect();
    Ok(Json(json!({
        "in_flight": app.in_flight.load(Ordering::SeqCst),
        "peak_in_flight": app.peak.load(Ordering::SeqCst),
        "max_concurrent": app.limit,
        "timeout_ms": app.timeout_ms,
        "max_pieces": app.served[i].tb.max_pieces(),
        "rules": app.served[i].tb.variant().name(),
        "default": app.served[0].tb.variant().name(),
        "variants": variants,
    })))
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

/// One request's place among the `--max-concurrent`: its permit and its count in `in_flight`,
/// both given back when the last clone is dropped. [`limit`] holds one for the request, and
/// the request's table work ([`blocking`]) another until the work ends, so that work left
/// running by a timeout (408) still counts: new requests are refused (503) meanwhile.
#[derive(Clone)]
struct Slot(#[allow(dead_code)] Arc<SlotHeld>);

struct SlotHeld {
    app: Arc<App>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Drop for SlotHeld {
    fn drop(&mut self) {
        self.app.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Refuse (503) instead of queueing when `--max-concurrent` requests (or their table work,
/// still running after a timeout) are in flight; count the peak for `/api/health`. The
/// request gets its [`Slot`] as an extension.
async fn limit(
    State(app): State<Arc<App>>,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Ok(permit) = app.permits.clone().try_acquire_owned() else {
        return ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "busy",
            format!("more than {} requests in flight; retry", app.limit),
        )
        .into_response();
    };
    // Counted down when the slot is dropped, so a request whose client went away is not
    // counted for ever.
    let now = app.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    app.peak.fetch_max(now, Ordering::SeqCst);
    let slot = Slot(Arc::new(SlotHeld {
        app: app.clone(),
        _permit: permit,
    }));
    req.extensions_mut().insert(slot);
    next.run(req).await
}

/// The router over opened tables (used by `run` and the tests).
fn router(app: Arc<App>) -> Router {
    let timeout = Duration::from_millis(app.timeout_ms);
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", PAGE_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", PAGE_JS) }),
        )
        .route(
            "/app.css",
            get(|| async { asset("text/css; charset=utf-8", PAGE_CSS) }),
        )
        .route("/api/probe", get(api_probe))
        .route("/api/line", get(api_line))
        .route("/api/stats", get(api_stats))
        .route("/api/stats/{material}", get(api_stats_material))
        .route("/api/health", get(api_health))
        .fallback(|| async { ApiError(StatusCode::NOT_FOUND, "not_found", "no such page".into()) })
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(axum::middleware::from_fn_with_state(app.clone(), limit))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(json_errors))
        .with_state(app)
}

/// Open each of `dirs` (one variant each, its rules from its headers; `rules`, only with one
/// directory, the rules it must hold) with its statistics.
///
/// # Errors
/// No directory; `rules` with several; a directory that does not open (as
/// [`AnyTablebase::open`]); two directories of the same rules (naming both).
fn open_served(
    dirs: &[PathBuf],
    rules: Option<Variant>,
) -> Result<Vec<Served>, Box<dyn std::error::Error + Send + Sync>> {
    if dirs.is_empty() {
        return Err("no table directory: give --dir DIR".into());
    }
    if rules.is_some() && dirs.len() > 1 {
        return Err(
            "--rules applies to a single --dir; with several directories each \
                    directory's rules are read from its tables' headers"
                .into(),
        );
    }
    let mut served: Vec<(Served, &PathBuf)> = Vec::with_capacity(dirs.len());
    for dir in dirs {
        let tb = AnyTablebase::open(dir, rules)?;
        let v = tb.variant();
        if let Some((_, other)) = served.iter().find(|(s, _)| s.tb.variant() == v) {
            return Err(format!(
                "{} and {} both hold {v} tables: serve one directory per variant",
                other.display(),
                dir.display()
            )
            .into());
        }
        let stats = material_stats(&read_dir_info(dir)?);
        served.push((Served { tb, stats }, dir));
    }
    Ok(served.into_iter().map(|(s, _)| s).collect())
}

/// Run `egdb serve` until interrupted (Ctrl-C).
pub fn run(args: Args) -> CliResult {
    let rules = args
        .rules
        .as_deref()
        .map(str::parse::<Variant>)
        .transpose()?;
    let served = open_served(&args.dir, rules)?;
    let limit = args.max_concurrent as usize;
    let app = Arc::new(App {
        served,
        permits: Arc::new(Semaphore::new(limit)),
        limit,
        in_flight: AtomicUsize::new(0),
        peak: AtomicUsize::new(0),
        timeout_ms: args.timeout_ms,
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(limit.max(1))
        .build()?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.bind))?;
        let addr = tokio::net::TcpListener::local_addr(&listener)?;
        println!("egdb serve: listening on http://{addr}/");
        std::io::stdout().flush()?;
        let listener = Guarded {
            listener,
            permits: Arc::new(Semaphore::new(args.max_connections as usize)),
            idle: Duration::from_millis(args.idle_timeout_ms),
        };
        serve_connections(
            listener,
            router(app),
            Duration::from_millis(args.idle_timeout_ms),
        )
        .await?;
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36 item 9: an error answer names the table file, never the server's path.
    #[test]
    fn error_answers_hide_the_server_paths() {
        let e = ProbeError::Table(checkers_egdb::format::TableError::NotAFile {
            path: "/srv/secret/tables/0201-nn.egdb".into(),
        });
        let ApiError(status, kind, text) = ApiError::from(e);
        assert_eq!(
            (status, kind),
            (StatusCode::INTERNAL_SERVER_ERROR, "table_error")
        );
        assert!(!text.contains("/srv"), "{text}");
        assert!(text.contains("0201-nn.egdb"), "{text}");
    }
}
