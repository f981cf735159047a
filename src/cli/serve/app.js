// egdb explorer: plain JavaScript, no build step. State: the position (32 squares), the side to
// move and the orientation; the URL's ?fen= always holds the position.
"use strict";
const S = 60; // square size in SVG units
const board = new Array(33).fill(null); // 1..32: null, "b", "B", "w", "W"
let side = "B";
let flipped = false;
let timer = null;
let lastProbe = null;

const $ = (id) => document.getElementById(id);

function sqXY(s) {
  // Row r = (s-1)/4; even rows have their dark squares on columns 1,3,5,7.
  const r = Math.floor((s - 1) / 4), k = (s - 1) % 4;
  const c = r % 2 === 0 ? 2 * k + 1 : 2 * k;
  return flipped ? [7 - c, 7 - r] : [c, r];
}

function toFen() {
  const list = (col) => {
    const out = [];
    for (let s = 1; s <= 32; s++) {
      const p = board[s];
      if (p && p.toLowerCase() === col) out.push((p === col.toUpperCase() ? "K" : "") + s);
    }
    return out.join(",");
  };
  return side + ":W" + list("w") + ":B" + list("b");
}

function parseFen(fen) {
  const parts = fen.trim().replace(/^\[FEN\s+"|"\]$/g, "").replace(/\.$/, "").split(":");
  if (parts.length < 1 || !/^[BW]$/i.test(parts[0].trim())) throw new Error("FEN must start with B or W");
  const nb = new Array(33).fill(null);
  for (const part of parts.slice(1)) {
    const t = part.trim();
    if (!t) continue;
    const col = t[0].toUpperCase();
    if (col !== "B" && col !== "W") throw new Error("bad colour in " + t);
    for (let item of t.slice(1).split(",")) {
      item = item.trim();
      if (!item) continue;
      const king = /^K/i.test(item);
      if (king) item = item.slice(1);
      const m = item.match(/^(\d+)(?:-(\d+))?$/);
      if (!m) throw new Error("bad square " + item);
      const a = +m[1], b = m[2] ? +m[2] : a;
      for (let s = a; s <= b; s++) {
        if (s < 1 || s > 32) throw new Error("square out of range " + s);
        nb[s] = king ? col : col.toLowerCase();
      }
    }
  }
  side = parts[0].trim().toUpperCase();
  for (let s = 1; s <= 32; s++) board[s] = nb[s];
}

function crown(x, y, fill) {
  // A vector crown: three points on a band.
  const d = `M${x - 14},${y + 8} L${x - 16},${y - 8} L${x - 7},${y} L${x},${y - 12} L${x + 7},${y} L${x + 16},${y - 8} L${x + 14},${y + 8} Z`;
  return `<path d="${d}" fill="${fill}" stroke="${fill === "#fff" ? "#444" : "#000"}" stroke-width="1"/>`;
}

function render() {
  let svg = "";
  for (let r = 0; r < 8; r++)
    for (let c = 0; c < 8; c++)
      svg += `<rect x="${c * S}" y="${r * S}" width="${S}" height="${S}" fill="${(r + c) % 2 ? "#7a5230" : "#f0d9b5"}"/>`;
  for (let s = 1; s <= 32; s++) {
    const [c, r] = sqXY(s);
    const x = c * S, y = r * S;
    svg += `<g class="sq" data-sq="${s}"><rect x="${x}" y="${y}" width="${S}" height="${S}" fill="transparent"/>`;
    svg += `<text x="${x + 3}" y="${y + 13}" font-size="12" fill="#f0d9b5" font-family="sans-serif">${s}</text>`;
    const p = board[s];
    if (p) {
      const black = p.toLowerCase() === "b";
      const fill = black ? "#1c1c1c" : "#fff";
      const cx = x + S / 2, cy = y + S / 2 + 2;
      svg += `<circle class="piece ${black ? "black" : "white"}${p === p.toUpperCase() ? " king" : ""}" cx="${cx}" cy="${cy}" r="23" fill="${fill}" stroke="${black ? "#000" : "#444"}" stroke-width="2"/>`;
      svg += `<circle cx="${cx}" cy="${cy}" r="17" fill="none" stroke="${black ? "#555" : "#bbb"}" stroke-width="1.5"/>`;
      if (p === p.toUpperCase()) svg += crown(cx, cy, black ? "#d4af37" : "#c8102e");
    }
    svg += "</g>";
  }
  $("board").innerHTML = svg;
  $("fen-in").value = toFen();
}

function setStatus(state, text) {
  $("status").dataset.state = state;
  $("status").textContent = text;
}

function updateUrl() {
  const u = new URL(window.location.href);
  u.searchParams.set("fen", toFen());
  u.searchParams.delete("play");
  if (flipped) u.searchParams.set("flip", "1"); else u.searchParams.delete("flip");
  history.replaceState(null, "", u.toString());
}

async function probe() {
  const fen = toFen();
  updateUrl();
  render();
  setStatus("loading", "probing " + fen);
  $("error").textContent = "";
  for (const w of ["win", "draw", "loss"]) $("moves-" + w).innerHTML = "";
  let resp, data;
  try {
    resp = await fetch("/api/probe?fen=" + encodeURIComponent(fen));
    data = await resp.json();
  } catch (e) {
    $("error").textContent = "request failed: " + e;
    setStatus("error", "error");
    return null;
  }
  if (!resp.ok) {
    lastProbe = null;
    $("error").textContent = data.error || ("HTTP " + resp.status);
    $("value").textContent = "-"; $("value").className = "";
    $("dtc").textContent = "-";
    $("dtw").textContent = "-";
    $("fen-out").textContent = fen;
    $("side").textContent = side === "B" ? "Black" : "White";
    document.title = "egdb explorer: " + fen + " (" + (data.kind || "error") + ")";
    setStatus("error", data.kind || "error");
    return null;
  }
  lastProbe = data;
  $("side").textContent = data.side === "black" ? "Black" : "White";
  $("value").textContent = data.value;
  $("value").className = data.value;
  $("dtc").textContent = data.dtc === null ? "-" : data.dtc + " plies";
  $("dtw").textContent = data.dtw === null || data.dtw === undefined ? "-" : data.dtw + " plies";
  $("fen-out").textContent = data.fen;
  for (const m of data.moves) {
    const b = document.createElement("button");
    b.className = "move";
    b.dataset.move = m.move;
    const dists = [];
    if (m.dtc !== null) dists.push("dtc " + m.dtc);
    if (m.dtw !== null && m.dtw !== undefined) dists.push("dtw " + m.dtw);
    b.textContent = m.move + (dists.length ? " (" + dists.join(", ") + ")" : "");
    b.title = m.fen + (m.capture ? " capture" : "") + (m.crowns ? " crowns" : "");
    b.addEventListener("click", () => playMove(m.move));
    $("moves-" + m.value).appendChild(b);
  }
  document.title = "egdb explorer: " + data.fen + " " + data.value;
  setStatus("ready", "ready");
  return data;
}

async function playMove(text) {
  if (!lastProbe) return false;
  const m = lastProbe.moves.find((x) => x.move === text);
  if (!m) {
    $("error").textContent = "no legal move " + text;
    return false;
  }
  parseFen(m.fen);
  $("line").textContent = "played " + text;
  await probe();
  return true;
}

// The perfect line: by DTW where the tables have it (the server's default), else DTC; with
// `metric` "dtw", the fastest win against the longest defence (an error without .dtw files).
async function perfectLine(metric) {
  stopLine();
  const m = typeof metric === "string" ? "&metric=" + metric : "";
  const resp = await fetch("/api/line?fen=" + encodeURIComponent(toFen()) + "&max=200" + m);
  const data = await resp.json();
  if (!resp.ok) { $("error").textContent = data.error; return; }
  const moves = data.moves.map((m) => m.move);
  $("line").textContent = "line by " + data.metric + " (" + data.end + "): " + (moves.join(" ") || "no moves");
  let i = 0;
  const step = async () => {
    if (i >= data.moves.length) { timer = null; return; }
    parseFen(data.moves[i++].fen);
    await probe();
    timer = setTimeout(step, 700);
  };
  timer = setTimeout(step, 300);
}

function stopLine() { if (timer) { clearTimeout(timer); timer = null; } }

function tool() { return document.querySelector('input[name="tool"]:checked').value; }

$("board").addEventListener("click", (ev) => {
  const g = ev.target.closest(".sq");
  if (!g) return;
  stopLine();
  const s = +g.dataset.sq, t = tool();
  if (t === "-" || board[s] === t) board[s] = null;
  else if ((t === "b" && s >= 29) || (t === "w" && s <= 4)) { $("error").textContent = "a man cannot stand on its crowning row"; return; }
  else board[s] = t;
  probe();
});
$("clear").onclick = () => { stopLine(); board.fill(null); probe(); };
$("start").onclick = () => { stopLine(); parseFen("B:W21-32:B1-12"); probe(); };
$("swap").onclick = () => { stopLine(); side = side === "B" ? "W" : "B"; probe(); };
$("flip").onclick = () => { flipped = !flipped; updateUrl(); render(); };
$("set-fen").onclick = () => {
  stopLine();
  try { parseFen($("fen-in").value); probe(); } catch (e) { $("error").textContent = "bad FEN: " + e.message; }
};
$("copy-fen").onclick = async () => {
  const fen = toFen();
  try { await navigator.clipboard.writeText(fen); setStatus("ready", "copied " + fen); }
  catch (e) { $("fen-in").value = fen; $("fen-in").select(); setStatus("ready", "select and copy the FEN field"); }
};
$("perfect").onclick = () => perfectLine();
$("fastest").onclick = () => perfectLine("dtw");
$("stop").onclick = stopLine;

// Start-up: ?fen=FEN sets the position, ?flip=1 turns the board, ?play=9-14,18x9 plays moves
// (for links and the headless browser test).
(async () => {
  const q = new URLSearchParams(window.location.search);
  try { parseFen(q.get("fen") || "W:WK32:BK26"); } catch (e) { $("error").textContent = "bad FEN: " + e.message; parseFen("W:WK32:BK26"); }
  flipped = q.get("flip") === "1";
  const play = (q.get("play") || "").split(",").map((s) => s.trim()).filter(Boolean);
  await probe();
  for (const mv of play) if (!(await playMove(mv))) break;
})();
