// mpiscope HTML report: sortable and filterable tables, SVG plots drawn
// from the inline data. Text goes in with textContent only.
(function () {
"use strict";
var D = JSON.parse(document.getElementById("mpiscope-data").textContent);
var NS = "http://www.w3.org/2000/svg";
function el(tag, attrs, parent, text) {
  var e = document.createElementNS(NS, tag);
  for (var k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}
function tip(e, text) { el("title", {}, e, text); return e; }
function human(ns) {
  ns = Number(ns);
  if (ns >= 1e9) return (ns / 1e9).toFixed(3) + " s";
  if (ns >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
  return (ns / 1e3).toFixed(3) + " us";
}
function svg(host, w, h) {
  var s = el("svg", {width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img"});
  host.textContent = "";
  host.appendChild(s);
  return s;
}

// Tables: click a header to sort (numbers first descending), type to filter.
function cellKey(td) {
  var v = td.getAttribute("data-v");
  return v === null ? td.textContent.toLowerCase() : parseFloat(v);
}
function sortBy(table, col, th) {
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var fixed = rows.filter(function (r) { return r.classList.contains("total"); });
  rows = rows.filter(function (r) { return !r.classList.contains("total"); });
  var numeric = th.classList.contains("n");
  var dir = th.getAttribute("aria-sort");
  dir = dir ? (dir === "ascending" ? "descending" : "ascending") : (numeric ? "descending" : "ascending");
  var sign = dir === "ascending" ? 1 : -1;
  var keyed = rows.map(function (r, i) { return {r: r, i: i, k: cellKey(r.cells[col])}; });
  keyed.sort(function (a, b) {
    var c = a.k < b.k ? -1 : a.k > b.k ? 1 : 0;
    return c !== 0 ? sign * c : a.i - b.i;
  });
  Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
  th.setAttribute("aria-sort", dir);
  keyed.forEach(function (x) { body.appendChild(x.r); });
  fixed.forEach(function (r) { body.appendChild(r); });
}
function filter(input) {
  var table = document.getElementById(input.getAttribute("data-for"));
  var q = input.value.toLowerCase();
  var shown = 0, rows = table.tBodies[0].rows;
  for (var i = 0; i < rows.length; i++) {
    var ok = q === "" || rows[i].textContent.toLowerCase().indexOf(q) >= 0;
    rows[i].hidden = !ok;
    if (ok) shown++;
  }
  input.nextSibling.textContent = q === "" ? "" : shown + " of " + rows.length + " rows";
}
Array.prototype.forEach.call(document.querySelectorAll("table.t"), function (t) {
  Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
    th.addEventListener("click", function () { sortBy(t, i, th); });
  });
});
Array.prototype.forEach.call(document.querySelectorAll("input.flt"), function (inp) {
  inp.addEventListener("input", function () { filter(inp); });
});

// MPI time per rank: app time behind MPI time, rank order or sorted.
function drawRanks() {
  var host = document.getElementById("plot-ranks"), R = D.ranks;
  if (!host || !R) return;
  var sorted = document.getElementById("rank-order").value === "sorted";
  var withApp = document.getElementById("rank-scale").value === "app";
  var pts = sorted ? R.sorted : R.order;
  var W = 900, H = 230, L = 60, B = 24, n = pts.length;
  var s = svg(host, W, H);
  var maxv = 1;
  pts.forEach(function (p) {
    maxv = Math.max(maxv, sorted ? p[2] : p[5]);
    if (withApp) maxv = Math.max(maxv, sorted ? p[1] : p[2]);
  });
  var y = function (v) { return H - B - (H - B - 10) * v / maxv; };
  var bw = (W - L - 10) / n;
  el("text", {x: 4, y: 14}, s, human(maxv));
  el("text", {x: 4, y: H - B}, s, "0");
  pts.forEach(function (p, i) {
    var x = L + i * bw, app = sorted ? p[1] : p[2], mpi = sorted ? p[2] : p[3];
    var label = sorted ? "rank " + p[0] : (p[0] === p[1] ? "rank " + p[0] : "ranks " + p[0] + "-" + p[1] + " (mean)");
    var g = el("g", {"class": "rank-bar"}, s);
    if (withApp) el("rect", {x: x, y: y(app), width: Math.max(bw - (bw > 3 ? 1 : 0), 0.5), height: H - B - y(app), fill: "#c9d3df"}, g);
    el("rect", {x: x, y: y(mpi), width: Math.max(bw - (bw > 3 ? 1 : 0), 0.5), height: H - B - y(mpi), fill: "#2f6fb5"}, g);
    if (!sorted && p[0] !== p[1]) el("line", {x1: x + bw / 2, x2: x + bw / 2, y1: y(p[4]), y2: y(p[5]), stroke: "#123"}, g);
    tip(g, label + ": app " + human(app) + ", MPI " + human(mpi) + (!sorted && p[0] !== p[1] ? " (min " + human(p[4]) + ", max " + human(p[5]) + ")" : ""));
  });
  el("line", {x1: L, x2: W - 10, y1: y(R.mean_ns), y2: y(R.mean_ns), stroke: "#d9480f", "stroke-dasharray": "4 3"}, s);
  el("text", {x: W - 200, y: y(R.mean_ns) - 3}, s, "mean MPI " + human(R.mean_ns));
  [["min", R.min_rank, R.min_ns], ["max", R.max_rank, R.max_ns]].forEach(function (m) {
    var i = -1;
    pts.forEach(function (p, k) { if (sorted ? p[0] === m[1] : (p[0] <= m[1] && m[1] <= p[1])) i = k; });
    if (i < 0) return;
    var x = L + (i + 0.5) * bw;
    el("text", {x: Math.min(x, W - 120), y: H - 6, "class": "mark"}, s, "\u25B2 " + m[0] + " rank " + m[1] + " (" + human(m[2]) + ")");
  });
}
["rank-order", "rank-scale"].forEach(function (id) {
  var e = document.getElementById(id);
  if (e) e.addEventListener("change", drawRanks);
});
drawRanks();

// MPI time per rank stacked by function (bars of several ranks: sums).
var palette = ["#2f6fb5", "#e8590c", "#2b8a3e", "#c2255c", "#5f3dc4", "#0b7285", "#e67700", "#495057", "#adb5bd"];
function drawRankFuncs() {
  var host = document.getElementById("plot-rankfuncs"), P = D.rank_funcs;
  if (!host || !P) return;
  var sorted = document.getElementById("rank-order").value === "sorted";
  var bars = sorted ? P.sorted : P.order, nf = P.funcs.length;
  var W = 900, H = 230, L = 60, B = 24, T = 22;
  var s = svg(host, W, H);
  var maxv = 1;
  bars.forEach(function (b) { var t = 0; for (var j = 0; j < nf; j++) t += b[3 + j]; maxv = Math.max(maxv, t); });
  var y = function (v) { return (H - B - T) * v / maxv; };
  var bw = (W - L - 10) / Math.max(bars.length, 1);
  el("text", {x: 4, y: T + 4}, s, human(maxv));
  el("text", {x: 4, y: H - B}, s, "0");
  var lx = L;
  P.funcs.forEach(function (f, j) {
    el("rect", {x: lx, y: 4, width: 10, height: 10, fill: palette[j % palette.length]}, s);
    var t = el("text", {x: lx + 13, y: 13}, s, f);
    lx += 20 + 7 * f.length;
  });
  bars.forEach(function (b, i) {
    var x = L + i * bw, top = H - B, parts = [];
    var label = b[2] === 1 ? "rank " + b[0] : (sorted ? b[2] + " ranks (least MPI time: rank " + b[0] + ", most: rank " + b[1] + ")" : "ranks " + b[0] + "-" + b[1] + " (sum)");
    var g = el("g", {"class": "rankfunc-bar", "data-first": b[0], "data-last": b[1], "data-n": b[2]}, s);
    for (var j = 0; j < nf; j++) {
      var v = b[3 + j];
      if (v <= 0) continue;
      var h = y(v);
      top -= h;
      el("rect", {x: x, y: top, width: Math.max(bw - (bw > 3 ? 1 : 0), 0.5), height: h, fill: palette[j % palette.length],
        "class": "part", "data-func": P.funcs[j], "data-v": v}, g);
      parts.push(P.funcs[j] + " " + human(v));
    }
    tip(g, label + ": " + parts.join(", "));
  });
}
var ro = document.getElementById("rank-order");
if (ro) ro.addEventListener("change", drawRankFuncs);
drawRankFuncs();

// Functions: share of MPI time (stacked) and the spread over ranks.
function drawFuncs() {
  var host = document.getElementById("plot-funcs");
  if (!host || !D.funcs.length) return;
  var F = D.funcs, W = 900, rowH = 16, top = 44, L = 200;
  var s = svg(host, W, top + F.length * rowH + 10);
  var colors = ["#2f6fb5", "#e8590c", "#2b8a3e", "#c2255c", "#5f3dc4", "#0b7285", "#e67700", "#495057"];
  var x = 0, tot = Math.max(D.mpi_ns, 1);
  el("text", {x: 0, y: 12}, s, "share of MPI time");
  F.forEach(function (f, i) {
    var w = (W - 10) * f.time_ns / tot;
    tip(el("rect", {x: x, y: 16, width: Math.max(w, 0), height: 14, fill: colors[i % colors.length], "class": "func-share"}, s),
      f.name + ": " + human(f.time_ns) + " (" + (100 * f.time_ns / tot).toFixed(2) + "%)");
    x += w;
  });
  var maxv = 1;
  F.forEach(function (f) { maxv = Math.max(maxv, f.max); });
  el("text", {x: L, y: top - 2}, s, "time per rank: min - mean - max (0 to " + human(maxv) + ")");
  F.forEach(function (f, i) {
    var yy = top + i * rowH + 4, sc = function (v) { return L + (W - L - 20) * v / maxv; };
    el("text", {x: 0, y: yy + 9}, s, f.name.length > 30 ? f.name.slice(0, 29) + "\u2026" : f.name);
    var g = el("g", {"class": "func-spread"}, s);
    el("line", {x1: sc(f.min), x2: sc(f.max), y1: yy + 5, y2: yy + 5, stroke: colors[i % colors.length], "stroke-width": 3}, g);
    el("rect", {x: sc(f.mean) - 1.5, y: yy, width: 3, height: 10, fill: "#111"}, g);
    tip(g, f.name + ": min " + human(f.min) + " (rank " + f.min_rank + "), mean " + human(f.mean) + ", max " + human(f.max) + " (rank " + f.max_rank + ")");
  });
}
drawFuncs();

// Communication matrix: blocks of ranks, colour on a log scale.
var mc = document.getElementById("matrix-comm");
if (mc && D.comm_matrices) {
  D.comm_matrices.forEach(function (m, i) {
    var o = document.createElement("option"); // an HTML element (el makes SVG ones)
    o.value = String(i);
    o.textContent = m.label;
    mc.appendChild(o);
  });
  mc.addEventListener("change", drawMatrix);
}
function drawMatrix() {
  var host = document.getElementById("plot-matrix"), M = D.matrix;
  if (mc && D.comm_matrices) M = D.comm_matrices[mc.selectedIndex] || M;
  if (!host || !M) return;
  var metric = parseInt(document.getElementById("matrix-metric").value, 10);
  var nb = M.blocks, size = Math.max(2, Math.min(32, Math.floor(640 / nb))), L = 50, T = 20;
  var s = svg(host, L + nb * size + 160, T + nb * size + 30);
  var maxv = 1;
  M.cells.forEach(function (c) { maxv = Math.max(maxv, c[metric]); });
  var lm = Math.log(maxv + 1);
  function color(v) {
    var t = lm > 0 ? Math.log(v + 1) / lm : 0;
    return "hsl(" + Math.round(220 - 200 * t) + ",75%," + Math.round(88 - 45 * t) + "%)";
  }
  el("rect", {x: L, y: T, width: nb * size, height: nb * size, fill: "#f4f6f8"}, s);
  var span = function (b) { var lo = b * M.block, hi = Math.min(lo + M.block, M.n) - 1; return lo === hi ? "rank " + lo : "ranks " + lo + "-" + hi; };
  var what = metric === 2 ? " bytes" : " messages";
  M.cells.forEach(function (c) {
    tip(el("rect", {x: L + c[1] * size, y: T + c[0] * size, width: size, height: size, fill: color(c[metric]), "class": "cell",
      "data-from": c[0], "data-to": c[1], "data-v": c[metric]}, s), span(c[0]) + " -> " + span(c[1]) + ": " + c[metric] + what);
  });
  el("text", {x: L, y: 14}, s, "to \u2192 (" + M.n + " ranks" + (M.block > 1 ? ", blocks of " + M.block : "") + ")");
  el("text", {x: 2, y: T + 12}, s, "from \u2193");
  var lx = L + nb * size + 20;
  for (var i = 0; i <= 10; i++) el("rect", {x: lx, y: T + (10 - i) * 12, width: 14, height: 12, fill: color(Math.exp(lm * i / 10) - 1)}, s);
  el("text", {x: lx + 18, y: T + 10}, s, maxv + what);
  el("text", {x: lx + 18, y: T + 130}, s, "1");
}
var mm = document.getElementById("matrix-metric");
if (mm) mm.addEventListener("change", drawMatrix);
drawMatrix();

// Message-size histograms, one small plot per function.
function drawHists() {
  var host = document.getElementById("plot-hists");
  if (!host || !D.hists.length) return;
  var k = parseInt(document.getElementById("hist-metric").value, 10);
  host.textContent = "";
  D.hists.forEach(function (h) {
    var W = 280, H = 120, B = 18, n = Math.max(h.bins.length, 1), bw = (W - 10) / n;
    var s = el("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, "class": "hist", style: "display:inline-block;margin:2px"}, host);
    var maxv = 1;
    h.bins.forEach(function (b) { maxv = Math.max(maxv, Number(b[k])); });
    el("text", {x: 4, y: 12}, s, h.func);
    h.bins.forEach(function (b, i) {
      var v = Number(b[k]), hh = (H - B - 18) * v / maxv;
      tip(el("rect", {x: 5 + i * bw, y: H - B - hh, width: Math.max(bw - 2, 1), height: hh, fill: "#2f6fb5"}, s),
        b[0] + " bytes: " + b[1] + " calls, " + b[2] + " bytes, " + human(b[3]));
    });
    if (h.bins.length) {
      el("text", {x: 4, y: H - 4}, s, h.bins[0][0]);
      el("text", {x: W - 6, y: H - 4, "text-anchor": "end"}, s, h.bins[h.bins.length - 1][0]);
    }
  });
}
var hm = document.getElementById("hist-metric");
if (hm) hm.addEventListener("change", drawHists);
drawHists();
window.mpiscope = {data: D, human: human, svg: svg, el: el, tip: tip, sortBy: sortBy, filter: filter};
})();
