// mpiscope view: live update, drill-down and the timeline. Text goes in
// with textContent only.
(function () {
"use strict";
var M = window.mpiscope, human = M.human, V = mpiscopeView;
function get(url, done) {
  fetch(url, {cache: "no-store"}).then(function (r) {
    return r.json().then(function (j) { done(r.ok ? null : (j.error || r.statusText), j); });
  }).catch(function (e) { done(String(e), null); });
}
function h(tag, text, parent) {
  var e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// Live update: reload when the job directory's data changes.
var age = document.getElementById("age"), state = document.getElementById("live-state");
function showAge() {
  if (!age) return;
  var mod = parseInt(age.getAttribute("data-mod"), 10);
  var s = Math.max(0, Math.round((Date.now() - mod) / 1000));
  age.textContent = s < 120 ? s + " s ago" : s < 7200 ? Math.round(s / 60) + " min ago" : Math.round(s / 3600) + " h ago";
}
showAge();
setInterval(showAge, 1000);
function poll() {
  get("/api/status", function (err, st) {
    if (err) {
      state.textContent = "The job directory cannot be read now: " + err;
    } else if (st.version !== V.version) {
      state.textContent = "Newer data: reloading.";
      location.reload();
      return;
    }
    setTimeout(poll, V.poll);
  });
}
setTimeout(poll, V.poll);

// Drill-down: function -> callsites -> ranks; rank -> partners.
var body = document.getElementById("drill-body");
function table(cols, rows, onclick) {
  var t = h("table"), tr = h("tr", null, h("thead", null, t));
  t.className = "t" + (onclick ? " clickable" : "");
  cols.forEach(function (c) { h("th", c, tr); });
  var tb = h("tbody", null, t);
  rows.forEach(function (r) {
    var row = h("tr", null, tb);
    r.cells.forEach(function (c) { h("td", c, row); });
    if (onclick) row.addEventListener("click", function () { onclick(r.key); });
  });
  return t;
}
function spread(s) { return [human(s.min) + " (" + s.min_rank + ")", human(s.mean), human(s.max) + " (" + s.max_rank + ")"]; }
function showFunc(name) {
  get("/api/func?name=" + encodeURIComponent(name), function (err, j) {
    body.textContent = "";
    if (err) { h("p", err, body); return; }
    h("h3", j.func + ": " + j.calls + " calls, " + human(j.time_ns) + ", " + j.bytes + " bytes; per rank min " + spread(j.rank_time).join(", mean ").replace(/, mean ([^,]*)$/, ", max $1"), body);
    h("p", "Its callsites (click one for its ranks):", body);
    body.appendChild(table(["Callsite", "Location", "Region", "Calls", "Time", "Rank min (rank)", "Rank mean", "Rank max (rank)"],
      j.sites.map(function (s) {
        return {key: s.callsite, cells: [s.callsite, s.location, s.region || "-", s.calls, human(s.time_ns)].concat(spread(s.rank_time))};
      }), showSite));
  });
}
function showSite(id) {
  get("/api/site?id=" + id, function (err, j) {
    body.textContent = "";
    if (err) { h("p", err, body); return; }
    h("h3", "Callsite " + id + ": " + j.sites[0].func + " at " + j.sites[0].location, body);
    h("p", "Time per rank at each of its addresses (click a rank for its partners):", body);
    var rows = [];
    j.sites.forEach(function (s) {
      rows.push({key: s.rank_time.min_rank, cells: ["min", s.rank_time.min_rank, human(s.rank_time.min), s.rank_time.ranks + " ranks"]});
      rows.push({key: s.rank_time.max_rank, cells: ["max", s.rank_time.max_rank, human(s.rank_time.max), "mean " + human(s.rank_time.mean)]});
    });
    body.appendChild(table(["", "Rank", "Time", ""], rows, showRank));
  });
}
function showRank(rank) {
  get("/api/rank?rank=" + rank, function (err, j) {
    body.textContent = "";
    if (err) { h("p", err, body); return; }
    h("h3", "Rank " + j.rank + " on " + (j.host || "-") + ": app " + human(j.app_ns) + ", MPI " + human(j.mpi_ns) + ", " + j.calls + " calls (" + j.state + ")", body);
    h("p", j.partners.length ? "Its point-to-point partners (click one):" : "No point-to-point traffic.", body);
    body.appendChild(table(["Peer", "Sent msgs", "Sent bytes", "Recv msgs", "Recv bytes"],
      j.partners.map(function (p) { return {key: p.peer, cells: [p.peer, p.sent_msgs, p.sent_bytes, p.recv_msgs, p.recv_bytes]}; }), showRank));
    if (j.comm_partners && j.comm_partners.length) {
      h("p", "Of which on communicators other than MPI_COMM_WORLD:", body);
      body.appendChild(table(["Communicator", "Peer", "Sent msgs", "Sent bytes", "Recv msgs", "Recv bytes"],
        j.comm_partners.map(function (p) { return {key: p.peer, cells: [p.comm, p.peer, p.sent_msgs, p.sent_bytes, p.recv_msgs, p.recv_bytes]}; }), showRank));
    }
    if (j.analysis) {
      var a = j.analysis;
      h("p", "Trace analysis: " + a.path_s.toFixed(6) + " s on the critical path (" + a.path_pct.toFixed(1) + " %)" +
        (a.patterns.length ? "; waiting: " + a.patterns.map(function (p) { return p.pattern + " " + p.seconds.toFixed(6) + " s"; }).join(", ") : "; no waiting"), body)
        .className = "rank-analysis";
      if (a.rows.length) {
        body.appendChild(table(["Wait state", "Function", "Callsite", "Comm", "Seconds", "Instances"],
          a.rows.map(function (r) { return {key: null, cells: [r.pattern, r.func, r.callsite || "-", r.comm || "-", r.seconds.toFixed(6), r.instances]}; }), null));
      }
    }
    if (j.funcs && j.funcs.length) {
      h("p", "Its MPI functions, per communicator:", body);
      body.appendChild(table(["Function", "Communicator", "Calls", "Time", "Bytes"],
        j.funcs.map(function (f) { return {key: null, cells: [f.func, f.comm || "-", f.calls, human(f.time_ns), f.bytes]}; }), null));
    }
  });
}
function rowsOf(id, attr, fn) {
  var t = document.getElementById(id);
  if (!t) return;
  t.classList.add("clickable");
  t.tBodies[0].addEventListener("click", function (e) {
    var tr = e.target.closest("tr");
    if (tr && tr.hasAttribute(attr)) { fn(tr.getAttribute(attr)); document.getElementById("drill").scrollIntoView(); }
  });
}
rowsOf("t-funcs", "data-func", showFunc);
["t-paths", "t-callers", "t-an-path-funcs", "t-comp-funcs"].forEach(function (id) { rowsOf(id, "data-func", showFunc); });
["t-an-rows", "t-an-path-ranks", "t-an-delays", "t-comp-ranks"].forEach(function (id) { rowsOf(id, "data-rank", showRank); });
rowsOf("t-sites", "data-site", showSite);
rowsOf("t-ranks", "data-rank", showRank);

// Timeline: the server sends calls or bins for the window asked.
var host = document.getElementById("plot-timeline");
if (!host) return;
var T = {t0: 0, t1: 0, end: 0, seq: 0}, W = 1100, L = 70;
var palette = ["#2f6fb5", "#e8590c", "#2b8a3e", "#c2255c", "#5f3dc4", "#0b7285", "#e67700", "#862e9c", "#5c940d", "#a61e4d", "#1864ab", "#495057"];
function color(i) { return palette[i % palette.length]; }
function load() {
  var seq = ++T.seq, q = "/api/timeline?w=" + (W - L) + (T.t1 > T.t0 ? "&t0=" + Math.floor(T.t0) + "&t1=" + Math.ceil(T.t1) : "");
  get(q, function (err, d) {
    if (seq !== T.seq) return;
    if (err) { host.textContent = err; return; }
    T.end = d.end_ns;
    if (!(T.t1 > T.t0)) { T.t0 = d.t0; T.t1 = d.t1; }
    draw(d);
    // Blocks still being summarized: ask again (unless the view moved).
    if (d.partial) setTimeout(function () { if (seq === T.seq) load(); }, 1000);
  });
}
function draw(d) {
  var n = d.lanes.length, lh = Math.max(6, Math.min(24, Math.floor(480 / Math.max(n, 1)))), H = n * lh + 30;
  var s = M.svg(host, W, H), span = d.t1 - d.t0;
  var x = function (t) { return L + (W - L) * (t - d.t0) / span; };
  d.lanes.forEach(function (l, i) {
    M.el("text", {x: 2, y: i * lh + lh - 2}, s, l[0] === l[1] ? "rank " + l[0] : l[0] + "-" + l[1]);
  });
  if (d.mode === "calls") {
    d.calls.forEach(function (c) {
      var x0 = x(Math.max(c[1], d.t0)), x1 = x(Math.min(c[2], d.t1));
      M.tip(M.el("rect", {x: x0, y: c[0] * lh + 1, width: Math.max(x1 - x0, 0.5), height: lh - 2, fill: color(c[3]), "class": "tl-call"}, s),
        d.funcs[c[3]] + " " + human(c[2] - c[1]) + (c[4] ? ", " + c[4] + " bytes" : "") + (c[5] >= 0 ? ", peer " + c[5] : ""));
    });
    d.msgs.forEach(function (m) {
      M.tip(M.el("line", {x1: x(m[1]), y1: m[0] * lh + lh / 2, x2: x(m[3]), y2: m[2] * lh + lh / 2, stroke: "#111", "stroke-width": 0.7, "class": "tl-msg"}, s),
        m[4] + " bytes");
    });
  } else {
    d.bins.forEach(function (b) {
      M.el("rect", {x: L + b[1], y: b[0] * lh + 1, width: 1, height: lh - 2, fill: color(b[3]), "fill-opacity": 0.25 + 0.75 * b[2], "class": "tl-bin"}, s);
    });
  }
  M.el("text", {x: L, y: H - 4}, s, human(d.t0));
  M.el("text", {x: W - 4, y: H - 4, "text-anchor": "end"}, s, human(d.t1));
  document.getElementById("tl-info").textContent = (d.mode === "bins" ? "about " : "") + d.total + " calls in view" +
    (d.mode === "bins" ? " (aggregated per pixel; zoom in for single calls)" : "") +
    (d.partial ? "; reading the trace: " + d.pending_blocks + " blocks of this view to go" : "") +
    (d.warnings.length ? "; " + d.warnings.join("; ") : "") + "; wheel: zoom, drag: pan";
}
function zoom(f, at) {
  var span = T.t1 - T.t0, c = at === undefined ? T.t0 + span / 2 : at, ns = Math.max(span * f, 1000);
  T.t0 = Math.max(0, c - (c - T.t0) * ns / span);
  T.t1 = Math.min(T.end + 1, T.t0 + ns);
  load();
}
document.getElementById("tl-in").addEventListener("click", function () { zoom(0.5); });
document.getElementById("tl-out").addEventListener("click", function () { zoom(2); });
document.getElementById("tl-reset").addEventListener("click", function () { T.t0 = 0; T.t1 = 0; load(); });
host.addEventListener("wheel", function (e) {
  e.preventDefault();
  var r = host.getBoundingClientRect(), fx = Math.max(0, (e.clientX - r.left - L) / (W - L));
  zoom(e.deltaY < 0 ? 0.8 : 1.25, T.t0 + fx * (T.t1 - T.t0));
}, {passive: false});
var drag = null;
host.addEventListener("mousedown", function (e) { drag = {x: e.clientX, t0: T.t0, t1: T.t1}; });
window.addEventListener("mouseup", function (e) {
  if (!drag) return;
  var dt = (drag.x - e.clientX) / (W - L) * (drag.t1 - drag.t0);
  if (Math.abs(e.clientX - drag.x) > 2) { T.t0 = Math.max(0, drag.t0 + dt); T.t1 = T.t0 + (drag.t1 - drag.t0); load(); }
  drag = null;
});
load();
})();
