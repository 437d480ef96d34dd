// The page's script: the WebAssembly bridge (window.cce), the five views and their permalinks.
// Every number shown comes from the module (crates/cce-web, i.e. cce-api); this script only
// reads forms, calls it and draws its JSON. Text from an answer is always inserted as text
// (textContent), never as markup.

const WASM_BASE64 = "@WASM_BASE64@";
const VERSION = "@VERSION@";

// ---- the bridge -----------------------------------------------------------------------------

let wasmModule = null;
let instance = null;

function base64Bytes(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

async function start() {
  const { module, instance: inst } = await WebAssembly.instantiate(base64Bytes(WASM_BASE64), {});
  wasmModule = module;
  instance = inst;
  instance.exports.cce_init();
}

function utf8(bytesView) {
  return new TextDecoder().decode(bytesView);
}

// One request object in, one answer object out; a refusal is {error}. A trap (a bug in cce)
// becomes an {error} too, and a fresh instance replaces the trapped one.
function call(request) {
  if (!instance) return { error: "the WebAssembly module is not loaded yet" };
  const ex = instance.exports;
  const req = new TextEncoder().encode(JSON.stringify(request));
  try {
    const p = ex.cce_alloc(req.length);
    new Uint8Array(ex.memory.buffer, p, req.length).set(req);
    const n = ex.cce_call(p, req.length);
    return JSON.parse(utf8(new Uint8Array(ex.memory.buffer, ex.cce_answer(), n)));
  } catch (e) {
    let why = String(e);
    try {
      const n = ex.cce_panic_len();
      if (n) why = utf8(new Uint8Array(ex.memory.buffer, ex.cce_panic(), n));
    } catch (_) { /* the message is the trap's */ }
    const trapped = instance;
    WebAssembly.instantiate(wasmModule, {}).then((fresh) => {
      if (instance === trapped) { instance = fresh; instance.exports.cce_init(); }
    });
    return { error: `internal error in cce (please report it): ${why}` };
  }
}

function hexOf(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// The page's library: each function returns the object the CLI prints under --json.
const api = {
  version: VERSION,
  call,
  names: () => call({ fn: "names" }),
  encoders: () => call({ fn: "encoders" }),
  tables: () => call({ fn: "tables" }),
  decode: (encoder, hex) => call({ fn: "decode", encoder, hex: String(hex) }),
  encode: (encoder, fields = {}) => call({ fn: "encode", encoder, fields }),
  disasm: (bytes) => call({ fn: "disasm", hex: typeof bytes === "string" ? bytes : hexOf(bytes) }),
  convert: (dtype, value, options = {}) =>
    call({ fn: "value", dtype, value: String(value), saturate: !!options.saturate }),
  value: (dtype, value, options = {}) => api.convert(dtype, value, options),
  element: (params) => call({ fn: "element", ...params }),
};
window.cce = api;

// ---- small DOM helpers ----------------------------------------------------------------------

const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function tagBadge(tag) {
  return el("span", { class: `tag tag-${tag}`, text: tag });
}

function showError(view, message) {
  const p = $(`#${view}-error`);
  p.textContent = message || "";
  p.hidden = !message;
}

function kv(pairs) {
  const dl = el("dl", { class: "kv" });
  for (const [k, v, key] of pairs) {
    if (v === undefined) continue;
    dl.append(el("dt", { text: k }), el("dd", { "data-key": key || k, text: v === null ? "—" : String(v) }));
  }
  return dl;
}

const hex32 = (w) => "0x" + (w >>> 0).toString(16).padStart(8, "0");

// ---- permalinks -----------------------------------------------------------------------------
// #decode/<decoder>/<hex>[,<hex>…]   #encode/<encoder>/<field>=<value>&…   #rings/<hex>
// #dtypes/<dtype>/<value>[/saturate]  #element/<key>=<value>&…  (the element form's names)

let restoring = false;

// The URL follows the view once per burst of input (a task later), not per keystroke.
let pendingHash = null;

function flushHash() {
  if (pendingHash !== null && location.hash !== pendingHash) history.replaceState(null, "", pendingHash);
  pendingHash = null;
}

function setHash(parts) {
  if (restoring) return;
  const first = pendingHash === null;
  pendingHash = "#" + parts.map((p) => encodeURIComponent(p).replace(/%3D/g, "=").replace(/%26/g, "&").replace(/%2C/g, ",")).join("/");
  if (first) setTimeout(flushHash, 0);
}

function query(obj) {
  return Object.entries(obj)
    .filter(([, v]) => v !== "" && v !== undefined && v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

function parseQuery(q) {
  const out = {};
  for (const part of (q || "").split("&")) {
    if (!part) continue;
    const i = part.indexOf("=");
    const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
    out[k] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
  }
  return out;
}

// ---- tabs -----------------------------------------------------------------------------------

const VIEWS = ["decode", "encode", "rings", "dtypes", "element"];
let current = "decode";

function show(view) {
  current = view;
  for (const v of VIEWS) $(`#view-${v}`).hidden = v !== view;
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.dataset.view === view));
}

// ---- decode ---------------------------------------------------------------------------------

// "W2[25:24]" → {word: 2, hi: 25, lo: 24}; "[11:8]" → word 0.
function bitRange(bits) {
  const m = /^(?:W(\d+))?\[(\d+)(?::(\d+))?\]$/.exec(bits || "");
  if (!m) return null;
  const hi = Number(m[2]);
  return { word: m[1] ? Number(m[1]) : 0, hi, lo: m[3] === undefined ? hi : Number(m[3]) };
}

const FIELD_KEYS = new Set(["value", "bits", "tag", "note"]);

// A field's meaning: whatever its object says beyond value / bits / tag / note.
function meaning(f) {
  return Object.entries(f)
    .filter(([k]) => !FIELD_KEYS.has(k))
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}

function bitmap(words, fields, d, onFlip) {
  const owner = [];
  for (const [name, f] of Object.entries(fields || {})) {
    const r = bitRange(f.bits);
    if (!r) continue;
    for (let b = r.lo; b <= r.hi; b++) owner[r.word * 32 + b] = { name, tag: f.tag, start: b === r.hi };
  }
  const box = el("div", { class: "bitmap" });
  const nums = el("div", { class: "bitnums" });
  for (let b = 31; b >= 0; b--) nums.append(el("span", { text: b % 4 === 0 || b === 31 ? String(b) : "" }));
  box.append(nums);
  words.forEach((w, wi) => {
    const row = el("div", { class: "bitrow", "data-word": wi });
    row.append(el("span", { class: "label", text: words.length > 1 ? `W${wi}` : "word" }));
    for (let b = 31; b >= 0; b--) {
      const bit = (w >>> b) & 1;
      const o = owner[wi * 32 + b];
      const unexplained = d.unexplained_bits && (d.unexplained_bits[wi] >>> b) & 1;
      const fixed = d.fixed && (d.fixed.words[wi] >>> b) & 1;
      const cls = ["bit", o ? `tag-${o.tag}` : "reserved", o && o.start ? "field-start" : "", unexplained ? "unexplained" : "", fixed ? "fixed" : ""];
      const title = o ? `${o.name} — bit ${b} (click to flip)` : unexplained ? `bit ${b}: no field explains it` : fixed ? `bit ${b}: a fixed bit of the encoding` : `bit ${b}: reserved / no field`;
      row.append(el("button", { class: cls.join(" ").trim(), "data-bit": b, "data-field": o ? o.name : "", title, text: String(bit), onclick: () => onFlip(wi, b) }));
    }
    box.append(row);
  });
  return box;
}

function fieldTable(fields) {
  const t = el("table", { class: "fields" }, el("tr", {}, ["field", "bits", "value", "meaning", "tag", "note"].map((h) => el("th", { text: h }))));
  for (const [name, f] of Object.entries(fields || {})) {
    t.append(
      el("tr", { class: `field-${f.tag}`, "data-field": name },
        el("td", { class: "name", text: name }),
        el("td", { class: "bits", text: f.bits }),
        el("td", { class: "value", text: String(f.value) }),
        el("td", { class: "meaning", text: meaning(f) }),
        el("td", { class: "tag" }, tagBadge(f.tag)),
        el("td", { class: "note", text: f.note })));
  }
  return t;
}

function decodedArticle(d, index, onFlip) {
  const art = el("article", { class: "decoded", "data-index": index, "data-encoder": d.encoder });
  const words = d.words || [];
  art.append(el("h3", {}, `${d.encoder} `, el("span", { class: "mono", text: (d.words_hex || words.map(hex32)).join(" ") })));
  if (d.readings) {
    // meta-ctrl: every encoder that could have made the word.
    art.append(el("p", { class: "note", text: d.note || (d.ambiguous ? "several encoders could make this word" : "") }));
    for (const r of d.readings) art.append(decodedArticle(r, `${index}.${r.encoder}`, onFlip));
    if (!d.readings.length) art.append(bitmap(words, {}, {}, onFlip));
    return art;
  }
  if (d.fields) art.append(bitmap(words, d.fields, d, onFlip), fieldTable(d.fields));
  const facts = [["bytes", d.bytes_hex, "bytes_hex"]];
  if (d.exact !== undefined) facts.push(["exact encoding", d.exact ? "yes" : `no — ${d.problem}`, "exact"]);
  if (d.source) facts.push(["source", d.source, "source"]);
  art.append(kv(facts));
  if (!d.fields) art.append(el("pre", { class: "mono", text: JSON.stringify(d, null, 1) }));
  return art;
}

// The hex box: one item per line; a line of plain hex that holds several units of the decoder
// is split into them (a descriptor is 16 bytes, a word 4).
function decodeItems(text, decoder) {
  const enc = encoderList.find((e) => e.name === decoder);
  const unit = enc ? enc.words * 8 : 0;
  const items = [];
  for (const line of text.split(/\n/)) {
    const s = line.trim();
    if (!s) continue;
    if (unit && /^[0-9a-fA-F]+$/.test(s) && s.length > unit && s.length % unit === 0) {
      for (let i = 0; i < s.length; i += unit) items.push(s.slice(i, i + unit));
    } else items.push(s);
  }
  return items;
}

function renderDecode() {
  const decoder = $("#decode-encoder").value;
  const text = $("#decode-input").value;
  const out = $("#decode-output");
  out.replaceChildren();
  showError("decode", "");
  if (text.length > 1 << 20) {
    showError("decode", `${text.length} characters pasted: the decoder takes at most 1 MiB of hex (drop a ring dump file on the Rings view instead)`);
    return;
  }
  const items = decodeItems(text, decoder);
  const hexes = [];
  const errors = [];
  items.forEach((item, i) => {
    const d = api.decode(decoder, item);
    if (d.error) {
      errors.push(items.length > 1 ? `line ${i + 1}: ${d.error}` : d.error);
      return;
    }
    hexes.push(d.bytes_hex);
    out.append(decodedArticle(d, i, (w, b) => flip(i, d, w, b)));
  });
  if (errors.length) showError("decode", errors.join("\n"));
  setHash(["decode", decoder, hexes.join(",") || text.trim().replace(/\s+/g, "")]);
}

// Flips bit `b` of word `w` of item `i` and decodes again.
function flip(i, d, w, b) {
  const words = d.words.slice();
  words[w] = (words[w] ^ (1 << b)) >>> 0;
  const bytes = new Uint8Array(words.length * 4);
  words.forEach((x, k) => new DataView(bytes.buffer).setUint32(4 * k, x, true));
  const items = decodeItems($("#decode-input").value, $("#decode-encoder").value);
  items[i] = hexOf(bytes);
  $("#decode-input").value = items.join("\n");
  renderDecode();
}

// ---- encode ---------------------------------------------------------------------------------

let encoderList = [];
let decoderNames = [];

function encodeForm() {
  const name = $("#encode-encoder").value;
  const enc = encoderList.find((e) => e.name === name);
  const form = $("#encode-form");
  form.replaceChildren();
  $("#encode-source").textContent = enc ? enc.source : "";
  if (!enc) return;
  for (const f of enc.fields) {
    const id = `encode-field-${f.name}`;
    const hint = f.value === "N" ? `0..=${f.max}` : f.value === "DTYPE" ? "a dtype name or number" : f.value === "SEL" ? "stored, input, scale or 0..=3" : "a decimal or 0x bits";
    form.append(
      el("label", { for: id, class: "mono", text: f.name }),
      el("input", { id, name: f.name, placeholder: hint, "data-field": f.name, list: f.value === "DTYPE" ? "dtype-names" : f.value === "SEL" ? "selector-names" : undefined, oninput: renderEncode }),
      el("span", {}, tagBadge(f.tag), " ", el("span", { class: "bits", text: f.bits }), " ", f.note));
  }
}

function encodeFields() {
  const fields = {};
  for (const input of document.querySelectorAll("#encode-form input")) if (input.value.trim() !== "") fields[input.name] = input.value.trim();
  return fields;
}

function renderEncode() {
  const name = $("#encode-encoder").value;
  const fields = encodeFields();
  const out = $("#encode-output");
  out.replaceChildren();
  showError("encode", "");
  setHash(["encode", name, query(fields)]);
  const r = api.encode(name, fields);
  if (r.error) return showError("encode", r.error);
  out.append(
    el("article", { class: "encoded" },
      kv([["words", r.words_hex.join(" "), "words_hex"], ["bytes (little-endian)", r.bytes_hex, "bytes_hex"]]),
      el("p", {}, el("a", { class: "desc", href: `#decode/${name}/${r.bytes_hex}`, text: "open in the decoder" }))));
}

// ---- rings ----------------------------------------------------------------------------------

function renderRingBytes(hex) {
  const out = $("#rings-output");
  out.replaceChildren();
  showError("rings", "");
  if (!hex.trim()) return;
  const r = api.disasm(hex);
  if (r.error) return showError("rings", r.error);
  const compact = hex.replace(/\s+/g, "");
  setHash(compact.length <= 8192 ? ["rings", compact] : ["rings"]);
  out.append(kv([["arch", r.arch, "arch"], ["queues", r.queues.length, "queues"]]));
  for (const q of r.queues) out.append(queueArticle(q));
}

// The decoder of a listed descriptor kind: `fma` is `fma-descriptor`, `m2s-data` itself.
function decoderOf(kind) {
  return decoderNames.includes(kind) ? kind : decoderNames.includes(`${kind}-descriptor`) ? `${kind}-descriptor` : kind;
}

function descRow(side, d) {
  const kind = d.kind;
  const bytes = new Uint8Array(d.words.length * 4);
  d.words.forEach((x, k) => new DataView(bytes.buffer).setUint32(4 * k, x, true));
  const fields = Object.entries(d.fields || {})
    .filter(([, f]) => f.value !== 0 || meaning(f))
    .map(([n, f]) => `${n}=${meaning(f) ? meaning(f).replace(/^\w+ /, "") : f.value}${f.tag === "HIGH" ? "" : `[${f.tag}]`}`)
    .join(" ");
  return el("tr", { "data-side": side, "data-index": d.index },
    el("td", { text: side }), el("td", { text: String(d.index) }),
    el("td", { class: "bits" }, el("a", { class: "desc", href: `#decode/${decoderOf(kind)}/${hexOf(bytes)}`, title: "open in the decoder", text: d.words.map((w) => hex32(w).slice(2)).join(" ") })),
    el("td", { text: kind + (d.other_kinds && d.other_kinds.length ? ` (or ${d.other_kinds.join(", ")})` : "") }),
    el("td", { class: "value", text: fields }));
}

function queueArticle(q) {
  const art = el("article", { class: "queue", "data-queue": q.queue });
  art.append(el("h3", { text: `queue ${q.queue}: ring ${q.ring_size} descriptors, phase ${q.initial_phase}, doorbells rx ${q.doorbell.rx} then tx ${q.doorbell.tx}` }));
  const packets = el("ol", { start: 0 });
  for (const p of q.packet_list || []) {
    packets.append(el("li", { text: `${p.op} in=${p.in} accum=${p.accum} out=${p.out} elems=${p.elems} sources=${(p.sources || []).length} dests=${(p.dests || []).length}` }));
  }
  art.append(el("p", { text: `${q.packets} packet(s)` }), packets);
  const t = el("table", {}, el("tr", {}, ["ring", "#", "words (click: decode)", "kind", "fields"].map((h) => el("th", { text: h }))));
  for (const d of q.tx || []) t.append(descRow("tx", d));
  for (const d of q.rx || []) t.append(descRow("rx", d));
  art.append(t);
  return art;
}

async function readRingFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.length > 32 << 20) return showError("rings", `${file.name}: ${bytes.length} bytes; the page reads ring dumps of at most 32 MiB`);
  $("#rings-input").value = hexOf(bytes);
  show("rings");
  renderRingBytes($("#rings-input").value);
}

// ---- dtypes ---------------------------------------------------------------------------------

function valueRef(v) {
  return v ? `${v.bits_hex} = ${v.exact}` : "—";
}

function renderDtype() {
  const dtype = $("#dtypes-dtype").value;
  const value = $("#dtypes-value").value.trim();
  const saturate = $("#dtypes-saturate").checked;
  const out = $("#dtypes-output");
  out.replaceChildren();
  showError("dtypes", "");
  setHash(saturate ? ["dtypes", dtype, value, "saturate"] : ["dtypes", dtype, value]);
  if (!value) return;
  const r = api.convert(dtype, value, { saturate });
  if (r.error) return showError("dtypes", r.error);
  const width = 8 * (dtypeSizes[dtype] || 4);
  const fields = {};
  for (const f of r.fields || []) fields[f.name] = { value: f.value, bits: f.bits, tag: r.tag };
  const wordBits = width >= 32 ? [Number(BigInt(r.bits) & 0xffffffffn)] : [r.bits];
  const map = bitmap(wordBits, fields, {}, (_w, b) => {
    const flipped = BigInt(r.bits) ^ (1n << BigInt(b));
    $("#dtypes-value").value = "0x" + flipped.toString(16).padStart(width / 4, "0");
    renderDtype();
  });
  // Only the dtype's own bits are drawn.
  for (const row of map.querySelectorAll(".bitrow")) for (const b of row.querySelectorAll(".bit")) if (Number(b.dataset.bit) >= width) b.remove();
  for (const [i, s] of Array.from(map.querySelectorAll(".bitnums span")).entries()) if (31 - i >= width) s.remove();
  const art = el("article", { class: "dtype-value", "data-dtype": r.dtype });
  art.append(el("h3", {}, `${r.dtype} `, tagBadge(r.tag)));
  if (width <= 32) art.append(map);
  art.append(kv([
    ["bits", r.bits_hex, "bits_hex"], ["exact value", r.exact, "exact"], ["class", r.class, "class"],
    ["next down", valueRef(r.next_down), "next_down"], ["next up", valueRef(r.next_up), "next_up"], ["ulp", r.ulp, "ulp"],
  ]));
  if (r.rne) art.append(el("h4", { text: `round to nearest even of ${r.input}` }), kv([["result", `${r.rne.bits_hex} = ${r.rne.exact}`, "rne"], ["inexact", r.rne.inexact ? "yes" : "no", "rne_inexact"], ["error (input − result)", r.rne.error, "rne_error"]]));
  if (r.sr) {
    art.append(el("h4", { text: "stochastic rounding: the two outcomes" }),
      kv([["down", `${r.sr.down.bits_hex} = ${r.sr.down.exact}  p = ${r.sr.down.p}`, "sr_down"], ["up", `${r.sr.up.bits_hex} = ${r.sr.up.exact}  p = ${r.sr.up.p}`, "sr_up"], ["engine's p(up), 32 random bits", r.sr.p32_up, "sr_p32_up"]]));
  }
  const t = el("table", { class: "conversions" }, el("tr", {}, ["to", "bits", "value", "tag"].map((h) => el("th", { text: h }))));
  for (const c of r.conversions || []) {
    t.append(el("tr", { "data-dtype": c.dtype }, el("td", { text: c.dtype }), el("td", { class: "bits", text: c.bits_hex }), el("td", { class: "value", text: c.exact }), el("td", {}, tagBadge(c.tag))));
  }
  art.append(el("h4", { text: `converted to every dtype${saturate ? " (saturating)" : ""}` }), t);
  out.append(art);
}

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
    const r = api.element({ ...params, algo });
    if (r.error) return showError("element", algos.length > 1 ? `${algo}: ${r.error}` : r.error);
    out.append(storyArticle(r, algo));
  }
}

// ---- restoring a view from the URL ----------------------------------------------------------

function restore() {
  const [view, ...rest] = location.hash.slice(1).split("/");
  if (!VIEWS.includes(view)) return show(current);
  restoring = true;
  try {
    show(view);
    if (view === "decode") {
      if (rest[0]) $("#decode-encoder").value = decodeURIComponent(rest[0]);
      if (rest[1] !== undefined) $("#decode-input").value = decodeURIComponent(rest.slice(1).join("/")).split(",").join("\n");
    } else if (view === "encode") {
      if (rest[0]) { $("#encode-encoder").value = decodeURIComponent(rest[0]); encodeForm(); }
      for (const [k, v] of Object.entries(parseQuery(rest[1]))) { const i = $(`#encode-form input[name="${CSS.escape(k)}"]`); if (i) i.value = v; }
    } else if (view === "rings") {
      if (rest[0]) $("#rings-input").value = decodeURIComponent(rest[0]);
    } else if (view === "dtypes") {
      if (rest[0]) $("#dtypes-dtype").value = decodeURIComponent(rest[0]);
      if (rest[1] !== undefined) $("#dtypes-value").value = decodeURIComponent(rest[1]);
      $("#dtypes-saturate").checked = rest[2] === "saturate";
    } else if (view === "element") {
      const q = parseQuery(rest.join("/"));
      const f = $("#element-form");
      for (const [k, v] of Object.entries(q)) if (f.elements[k]) f.elements[k].value = v;
    }
  } finally {
    restoring = false;
  }
  render(view);
}

function render(view) {
  ({ decode: renderDecode, encode: renderEncode, rings: () => renderRingBytes($("#rings-input").value), dtypes: renderDtype, element: renderElement })[view]();
}

// ---- start ----------------------------------------------------------------------------------

const dtypeSizes = {};

function fillSelect(sel, names, keep) {
  for (const n of names) sel.append(el("option", { value: n, text: n }));
  if (keep) sel.value = keep;
}

async function main() {
  await start();
  $("#version").textContent = `cce ${VERSION}`;
  const names = api.names();
  encoderList = api.encoders().encoders;
  const decoders = api.encoders().decoders;
  decoderNames = decoders;
  for (const d of names.dtypes) dtypeSizes[d.name] = d.bytes;
  const dtypeNames = names.dtypes.map((d) => d.name);
  document.body.append(
    el("datalist", { id: "dtype-names" }, dtypeNames.map((n) => el("option", { value: n }))),
    el("datalist", { id: "selector-names" }, ["stored", "input", "scale"].map((n) => el("option", { value: n }))));
  fillSelect($("#decode-encoder"), decoders, "fma-meta-ctrl");
  fillSelect($("#encode-encoder"), encoderList.map((e) => e.name), "fma-descriptor");
  fillSelect($("#dtypes-dtype"), dtypeNames.filter((n) => dtypeSizes[n] > 0), "bf16");
  const f = $("#element-form");
  fillSelect(f.elements.algo, names.algos, "ring");
  fillSelect(f.elements.compare, names.algos.filter((a) => a !== "auto"));
  fillSelect(f.elements.dtype, dtypeNames.filter((n) => dtypeSizes[n] > 0), "bf16");
  fillSelect(f.elements.accum, dtypeNames.filter((n) => dtypeSizes[n] > 0));
  f.elements.op.replaceChildren();
  fillSelect(f.elements.op, names.ops, "add");
  encodeForm();

  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => { show(b.dataset.view); render(b.dataset.view); });
  $("#decode-encoder").addEventListener("change", renderDecode);
  $("#decode-input").addEventListener("input", renderDecode);
  $("#encode-encoder").addEventListener("change", () => { encodeForm(); renderEncode(); });
  $("#rings-input").addEventListener("input", () => renderRingBytes($("#rings-input").value));
  $("#rings-file").addEventListener("change", (e) => e.target.files[0] && readRingFile(e.target.files[0]));
  for (const id of ["#dtypes-dtype", "#dtypes-value", "#dtypes-saturate"]) $(id).addEventListener("input", renderDtype);
  f.addEventListener("input", renderElement);
  f.addEventListener("change", renderElement);
  for (const id of ["#decode-input", "#rings-input"]) {
    const t = $(id);
    t.addEventListener("dragover", (e) => { e.preventDefault(); t.classList.add("dragover"); });
    t.addEventListener("dragleave", () => t.classList.remove("dragover"));
    t.addEventListener("drop", (e) => { e.preventDefault(); t.classList.remove("dragover"); if (e.dataTransfer.files[0]) readRingFile(e.dataTransfer.files[0]); });
  }
  $("#copy-link").addEventListener("click", async () => {
    flushHash();
    try { await navigator.clipboard.writeText(location.href); $("#copy-state").textContent = " copied"; } catch (_) { $("#copy-state").textContent = ` ${location.href}`; }
  });
  window.addEventListener("hashchange", restore);
  $("#loading").remove();
  if (location.hash) restore();
  else { show("decode"); $("#decode-input").value = "0x021aa601"; renderDecode(); }
  document.body.dataset.ready = "true";
}

main().catch((e) => {
  const p = $("#loading");
  if (p) { p.textContent = `cce could not start: ${e}`; p.className = "error"; }
  throw e;
});
