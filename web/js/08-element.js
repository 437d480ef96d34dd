// ---- element --------------------------------------------------------------------------------

function elementParams() {
  const f = $("#element-form");
  const get = (n) => f.elements[n].value.trim();
  const params = { ranks: get("ranks"), algo: get("algo"), op: get("op"), dtype: get("dtype"), rounding: get("rounding"), seed: get("seed"), elems: get("elems"), element: get("element") };
  if (get("accum")) params.accum = get("accum");
  if (get("rank")) params.rank = get("rank");
  if (get("inputs") === "typed") params.values = get("values").split(",").map((s) => s.trim()).filter((s) => s !== "");
  return params;
}

function stepLine(s) {
  const rounded = s.rounding && s.rounding.mode !== "exact";
  const div = el("div", { class: `step${rounded ? " rounded" : ""}`, "data-rank": s.rank, "data-step": s.step });
  const p = s.packet || {};
  div.append(el("div", { class: "where", text: `rank ${s.rank} step ${s.step} ${s.kind} · packet ${p.packet} (tx desc ${p.tx_descriptor}, rx desc ${p.rx_descriptor}, ${p.op})` }));
  const ops = (s.operands || []).map((o) => `${o.expr} [${o.bits}] ${o.value}`).join("  +  ");
  const line = el("div", { class: "mono" }, `${ops}  →  ${s.rounded.bits} ${s.rounded.value}`);
  if (s.kind !== "copy") line.append(`  (exact ${s.exact}, error ${s.error})`);
  div.append(line);
  for (const a of s.accumulate || []) {
    if (a.rounding && a.rounding.mode !== "exact") div.append(el("div", { class: "rounding-mark", text: `accumulator rounded after source ${a.source}: ${a.exact} → ${a.rounded.bits} ${a.rounded.value} (${roundingText(a.rounding)})` }));
  }
  if (rounded) div.append(el("div", { class: "rounding-mark", text: `rounded to the output dtype: ${roundingText(s.rounding)}` }));
  return div;
}

function roundingText(r) {
  return Object.entries(r).map(([k, v]) => (k === "mode" ? v : `${k} ${v}`)).join(", ");
}

function storyArticle(story, algo) {
  const e = story.element;
  const art = el("article", { class: "story", "data-algo": algo });
  art.append(el("h3", { text: `${e.algo}: element ${e.index} of rank ${e.rank} — ${e.expr}` }));
  art.append(kv([["order", e.expr, "expr"], ["output", `${e.output.bits} = ${e.output.value}`, "output"], ["exact sum", e.reference, "reference"], ["error", e.error, "error"], ["configuration", `${e.collective} over ${e.ranks} ranks × ${e.elems} ${e.dtype} (accumulate ${e.accum}, ${e.rounding.mode})`, "config"]]));
  for (const s of e.steps) art.append(stepLine(s));
  return art;
}

function renderElement() {
  const out = $("#element-output");
  out.replaceChildren();
  showError("element", "");
  const params = elementParams();
  const compare = $("#element-form").elements.compare.value;
  const state = { ...params, values: params.values ? params.values.join(",") : "", compare };
  setHash(["element", query(state)]);
  const algos = compare ? [params.algo, compare] : [params.algo];
  for (const algo of algos) {
    // Orders over 16 leaves as their leaf count, as the CLI's text shows them: a ring's story
    // grows with the ranks, not their square (crates/cce-web/src/budget.rs).
    const r = api.element({ ...params, algo, orders: "short" });
    if (r.error) return showError("element", algos.length > 1 ? `${algo}: ${r.error}` : r.error);
    out.append(storyArticle(r, algo));
  }
}
