// agentbus dashboard: reading an attribution snapshot, whatever its exact shape.
//
// Pure functions (interval, slotRows, normalizeSnapshot) that turn the attribution
// service's payload or an older one into rows of {model, slot, phi, lo, hi}.
// Loaded before app.js, which renders the rows; classic scripts share their globals.
"use strict";

// ---- attribution snapshots: tolerant of the payload's exact shape --------
const VALUE_KEYS = ["phi", "value", "estimate", "mean", "shapley"];
const LO_KEYS = ["lo", "low", "ci_low", "lower", "ci_lo"];
const HI_KEYS = ["hi", "high", "ci_high", "upper", "ci_hi"];
const CI_KEYS = ["ci", "ci95", "interval", "intervals"];
const SE_KEYS = ["se", "stderr", "std_err", "sem"];
const isNum = (x) => typeof x === "number" && Number.isFinite(x);
const first = (obj, keys) => { for (const k of keys) if (k in obj) return obj[k]; return undefined; };

function interval(x) {
  if (Array.isArray(x) && x.length === 2) return [x[0], x[1]];
  if (x && typeof x === "object") return [first(x, LO_KEYS), first(x, HI_KEYS)];
  return [undefined, undefined];
}

function entry(slot, value, payload) {
  let phi, lo, hi, se;
  if (value && typeof value === "object") {
    phi = first(value, VALUE_KEYS);
    lo = first(value, LO_KEYS); hi = first(value, HI_KEYS);
    if (!isNum(lo) || !isNum(hi)) [lo, hi] = interval(first(value, CI_KEYS));
    se = first(value, SE_KEYS);
  } else phi = value;
  if (!isNum(phi)) return null;
  if (!isNum(lo) || !isNum(hi)) {
    for (const k of CI_KEYS) {
      const t = payload[k];
      if (t && typeof t === "object" && !Array.isArray(t) && slot in t) { [lo, hi] = interval(t[slot]); break; }
    }
  }
  if (!isNum(se)) {
    for (const k of SE_KEYS) {
      const t = payload[k];
      if (t && typeof t === "object" && slot in t) { se = t[slot]; break; }
    }
  }
  if ((!isNum(lo) || !isNum(hi)) && isNum(se)) { lo = phi - 1.96 * se; hi = phi + 1.96 * se; }
  return { slot, phi, lo: isNum(lo) ? lo : null, hi: isNum(hi) ? hi : null };
}

function slotRows(payload) {
  for (const key of ["shapley", "phi", "estimates", "values_by_slot"]) {
    const t = payload[key];
    let rows = [];
    if (t && typeof t === "object" && !Array.isArray(t)) {
      const nested = ("phi" in t || "shapley" in t || "estimates" in t) && !Object.values(t).every(isNum);
      if (nested) rows = slotRows(t);
      else for (const [slot, v] of Object.entries(t)) { const r = entry(slot, v, payload); if (r) rows.push(r); }
    } else if (Array.isArray(t)) {
      for (const item of t) {
        if (item && typeof item === "object") {
          const name = item.slot ?? item.name;
          const r = name !== undefined ? entry(String(name), item, payload) : null;
          if (r) rows.push(r);
        }
      }
    }
    if (rows.length) return rows;
  }
  return [];
}

// The attribution service's shape: {models: {test_model: {shapley: {slot: {value, ci_low, ci_high}}}}}
function normalizeSnapshot(payload) {
  const models = payload.models;
  if (models && typeof models === "object" && !Array.isArray(models)) {
    const rows = [];
    for (const [model, summary] of Object.entries(models)) {
      if (summary && typeof summary === "object") for (const r of slotRows(summary)) rows.push({ ...r, model });
    }
    if (rows.length) return rows;
  }
  return slotRows(payload);
}
