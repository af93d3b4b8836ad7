// agentbus dashboard: the chart of each slot's Shapley value over the run.
//
// Loaded before app.js and sharing its globals ($, getJSON, isNum, signed, svgEl,
// notEstimableText); app.js calls pollHistory and renderHistory, and views.js
// uses COLORS.
"use strict";

// ---- the course of phi over the run ----------------------------------------
// Points come condensed from /api/attribution/history (the server folds every
// attribution.snapshot of the log into one small point), so a page opened
// mid-run or after the run draws the whole course. A point that is not
// estimable carries no numbers: its stretch stays empty.
const history = { points: [], lastSeq: -1, busy: false, again: false };
const COLORS = ["#4a78c2", "#d9822b", "#2f7d4f", "#b3412e", "#7b5ea7", "#3a9ca6", "#a0743b", "#c2477f"];

async function pollHistory() {
  // one request at a time, so no point arrives twice; a request made meanwhile runs after
  if (history.busy) { history.again = true; return; }
  history.busy = true;
  history.again = false;
  try {
    const h = await getJSON("api/attribution/history?after=" + history.lastSeq);
    const fresh = (h.points || []).filter((p) => isNum(p.seq) && p.seq > history.lastSeq);
    if (!fresh.length) return;
    history.points.push(...fresh);
    history.lastSeq = fresh[fresh.length - 1].seq;
    renderHistory();
  } catch (err) {
    // the next resync tries again
  } finally {
    history.busy = false;
    if (history.again) pollHistory();
  }
}

// each (model, slot): segments of consecutive estimable points [{x, v, lo, hi}]
function historySeries() {
  const series = new Map();
  let open = new Set();
  for (const p of history.points) {
    const x = p.episodes;
    if (!p.estimable || !isNum(x)) { open = new Set(); continue; }
    const now = new Set();
    for (const [model, slots] of Object.entries(p.models || {})) {
      for (const [slot, triple] of Object.entries(slots || {})) {
        const [v, lo, hi] = Array.isArray(triple) ? triple : [];
        if (!isNum(v)) continue;
        const key = model + "\u0000" + slot;
        if (!series.has(key)) series.set(key, { model, slot, segments: [] });
        const s = series.get(key);
        if (!open.has(key) || !s.segments.length) s.segments.push([]);
        s.segments[s.segments.length - 1].push({ x, v, lo: isNum(lo) ? lo : null, hi: isNum(hi) ? hi : null });
        now.add(key);
      }
    }
    open = now;
  }
  return [...series.values()];
}

function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const raw = span / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => span / s <= count) || 10 * mag;
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) ticks.push(Math.abs(t) < 1e-12 ? 0 : t);
  return ticks;
}

function renderHistory() {
  const box = $("phi-history");
  const series = historySeries();
  const last = history.points[history.points.length - 1];
  const empty = $("history-empty");
  empty.hidden = series.length > 0;
  if (!series.length) {
    empty.textContent = last ? notEstimableText(last.reason || "no estimate yet") : "no attribution snapshot yet";
    box.replaceChildren();
    return;
  }
  const models = [...new Set(series.map((s) => s.model))].sort();
  const slots = [];
  for (const s of series) if (!slots.includes(s.slot)) slots.push(s.slot);
  const charts = models.map((model) => historyChart(model, series.filter((s) => s.model === model), slots, models.length > 1));
  box.replaceChildren(...charts);
}

function historyChart(model, series, slots, titled) {
  const width = 720, height = 230, left = 52, right = 150, top = titled ? 24 : 10, bottom = 34;
  const pts = series.flatMap((s) => s.segments.flat());
  let x0 = 0, x1 = Math.max(...pts.map((p) => p.x));
  if (x1 <= x0) x1 = x0 + 1;
  let y0 = 0, y1 = 0;
  for (const p of pts) for (const v of [p.v, p.lo, p.hi]) if (isNum(v)) { y0 = Math.min(y0, v); y1 = Math.max(y1, v); }
  const pad = Math.max(0.02, (y1 - y0) * 0.06);
  y0 -= pad; y1 += pad;
  const X = (v) => left + ((v - x0) / (x1 - x0)) * (width - left - right);
  const Y = (v) => top + (1 - (v - y0) / (y1 - y0)) * (height - top - bottom);
  const svg = svgEl("svg", { class: "phi-history-chart", width, height, "data-model": model, role: "img",
    "aria-label": "Shapley value per slot over the run" + (titled ? " for " + model : "") });
  if (titled) svg.appendChild(svgEl("text", { class: "chart-title", x: left, y: 15 }, "test model " + model));
  for (const t of niceTicks(y0, y1, 5)) {
    svg.appendChild(svgEl("line", { class: t === 0 ? "axis zero" : "grid", x1: left, x2: width - right, y1: Y(t), y2: Y(t) }));
    svg.appendChild(svgEl("text", { class: "tick", x: left - 6, y: Y(t) + 4, "text-anchor": "end" }, t.toFixed(2)));
  }
  for (const t of niceTicks(x0, x1, 6)) {
    if (t !== Math.round(t)) continue;
    svg.appendChild(svgEl("line", { class: "axis", x1: X(t), x2: X(t), y1: height - bottom, y2: height - bottom + 4 }));
    svg.appendChild(svgEl("text", { class: "tick", x: X(t), y: height - bottom + 16, "text-anchor": "middle" }, String(t)));
  }
  svg.appendChild(svgEl("line", { class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }));
  svg.appendChild(svgEl("text", { class: "tick", x: (left + width - right) / 2, y: height - 4, "text-anchor": "middle" },
    "episodes in the estimate"));
  series.forEach((s) => {
    const color = COLORS[slots.indexOf(s.slot) % COLORS.length];
    const g = svgEl("g", { class: "phi-series", "data-slot": s.slot, "data-model": model,
      "data-points": String(s.segments.reduce((n, seg) => n + seg.length, 0)) });
    for (const seg of s.segments) {
      const banded = seg.filter((p) => p.lo !== null && p.hi !== null);
      if (banded.length) {
        const upper = banded.map((p) => X(p.x) + "," + Y(p.hi));
        const lower = banded.slice().reverse().map((p) => X(p.x) + "," + Y(p.lo));
        const pad1 = banded.length === 1 ? [(X(banded[0].x) + 3) + "," + Y(banded[0].hi), (X(banded[0].x) + 3) + "," + Y(banded[0].lo)] : [];
        g.appendChild(svgEl("polygon", { class: "band", fill: color, points: [...upper, ...pad1, ...lower].join(" ") }));
      }
      g.appendChild(svgEl("polyline", { class: "line", stroke: color, points: seg.map((p) => X(p.x) + "," + Y(p.v)).join(" ") }));
    }
    const lastSeg = s.segments[s.segments.length - 1];
    const end = lastSeg[lastSeg.length - 1];
    g.appendChild(svgEl("circle", { class: "dot", fill: color, cx: X(end.x), cy: Y(end.v), r: 3 }));
    const ly = top + 14 + slots.indexOf(s.slot) * 18;
    g.appendChild(svgEl("rect", { x: width - right + 12, y: ly - 9, width: 10, height: 10, fill: color }));
    const ci = end.lo !== null && end.hi !== null ? " [" + signed(end.lo) + ", " + signed(end.hi) + "]" : "";
    g.appendChild(svgEl("text", { class: "legend", x: width - right + 26, y: ly }, s.slot + " " + signed(end.v)));
    if (ci) g.appendChild(svgEl("title", {}, s.slot + ": " + signed(end.v) + ci + " at " + end.x + " episodes"));
    svg.appendChild(g);
  });
  return svg;
}
