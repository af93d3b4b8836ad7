// agentbus dashboard: the projected cost, the --pareto front and the --vary variants.
//
// Loaded before app.js and sharing its globals ($, withToken, state, fmt, isNum,
// runModels); app.js's main() starts watchCost and watchVariants.
"use strict";

// ---- cost: the projected run cost and the --pareto front ------------------
// Their own stream, from the start of the log and filtered to the two types,
// so a page opened late still shows them (each is published once or twice).
const usd = (x) => (isNum(x) ? "$" + (Math.abs(x) >= 1 ? x.toFixed(2) : x.toPrecision(3)) : "-");
function ci(row, f) {
  if (!row || !isNum(row.mean)) return "n/a";
  return isNum(row.ci_low) ? f(row.mean) + " [" + f(row.ci_low) + ", " + f(row.ci_high) + "]" : f(row.mean);
}
function showCost(ev) {
  $("cost-panel").hidden = false;
  if (ev.type === "cost.estimate") {
    const range = isNum(ev.usd_low) ? " [" + usd(ev.usd_low) + ", " + usd(ev.usd_high) + "]" : "";
    const simulated = runModels.length > 0 && runModels.every((m) => String(m).startsWith("sim:"));
    const priced = simulated ? " at list prices (simulated models: nothing is billed), " : " at list prices, ";
    $("cost-estimate").textContent = "whole run, projected: " + usd(ev.usd) + range + priced +
      Math.round(ev.tokens).toLocaleString() + " tokens sent (" + Math.round(100 * ev.confidence) +
      "% interval, from the first " + ev.blocks + " of " + ev.of + " task blocks)";
  } else if (ev.type === "pareto.front") {
    $("pareto-panel").hidden = false;
    $("pareto-n").textContent = "(" + (ev.front || []).length + " of " + ev.assignments + " assignments)";
    const chosen = new Set((ev.chosen || []).map((p) => p.label));
    const body = $("pareto").querySelector("tbody");
    body.replaceChildren();
    for (const p of ev.front || []) {
      const tr = document.createElement("tr");
      for (const text of [p.label, p.source, ci(p.acc, (x) => fmt(x)), ci(p.cost_usd, usd),
        chosen.has(p.label) ? "yes" : ""]) {
        const td = document.createElement("td"); td.textContent = text; tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    $("pareto-cheapest").textContent = ev.cheapest_overlapping
      ? "cheapest assignment whose accuracy interval overlaps the best one's: " + ev.cheapest_overlapping : "";
  }
}
function watchCost() {
  const es = new EventSource(withToken("events?from=0&type=cost.estimate,pareto.front"));
  es.onmessage = (msg) => {
    try { showCost(JSON.parse(msg.data)); } catch (err) { console.error(err); }
  };
  es.onerror = () => { if (state && (state.finished || state.readOnly)) es.close(); };
}

// ---- variants: what each varied slot runs on each side (--vary) -----------
// From run.started (the whole log, that one type), so a late page shows them;
// a run without --vary has none and the line stays hidden.
function showVariants(ev) {
  const byModel = ev.variants || {};
  const lines = [];
  for (const [model, slots] of Object.entries(byModel)) {
    const parts = Object.entries(slots || {}).map(([slot, v]) => slot + ": " + v.default + " \u2192 " + v.test);
    if (parts.length) lines.push((Object.keys(byModel).length > 1 ? model + " \u2014 " : "") + parts.join("; "));
  }
  $("variants").hidden = lines.length === 0;
  $("variants").textContent = lines.length ? "variants (default \u2192 test): " + lines.join(" | ") : "";
}
function watchVariants() {
  const es = new EventSource(withToken("events?from=0&type=run.started"));
  es.onmessage = (msg) => {
    try { showVariants(JSON.parse(msg.data)); } catch (err) { console.error(err); }
  };
  es.onerror = () => { if (state && (state.finished || state.readOnly)) es.close(); };
}
