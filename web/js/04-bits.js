// ---- a decoded item drawn: its bit diagram and its field table ------------------------------

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

// The diagram is one grid (style.css): a ruler, then one row per word, bit b of every word in the
// same column. On a narrow card a 32-bit grid folds in two blocks (bits 31–16 of every word, then
// 15–0, each under its own ruler): each cell of a row is `hi` or `lo`, and the row says which
// grid row each half goes to (--hi, --lo). The whole diagram is one tab stop (roving tabindex):
// arrow keys move between bits, Space or Enter flips one, and the flipped bit keeps the focus.

// The bit to focus when its diagram is drawn again after a flip: {key, word, bit}.
let bitFocus = null;

function half(b, width) {
  return width === 32 ? (b >= 16 ? "hi" : "lo") : "";
}

// The row's label cell (and its twin for the folded grid's lower block).
function labelCells(text, width) {
  if (width !== 32) return [el("span", { class: "label", text })];
  return [el("span", { class: "label hi", text }), el("span", { class: "label lo", text })];
}

// Grid rows of the folded layout: the upper block's rows are 1..n+1 (the ruler first), the
// lower block's follow.
function foldRows(row, rowsPerBlock) {
  return `--hi: ${row + 1}; --lo: ${row + rowsPerBlock + 1}`;
}

function ruler(width, rowsPerBlock) {
  const r = el("div", { class: "bitnums", "aria-hidden": "true", style: foldRows(0, rowsPerBlock) }, labelCells("", width));
  for (let b = width - 1; b >= 0; b--) {
    // Every fourth bit and the top one; 15 tops the folded grid's lower block.
    const fold = width === 32 && b === 15;
    r.append(el("span", { class: fold ? "lo fold-label" : half(b, width), text: b === width - 1 || fold || b % 4 === 0 ? String(b) : "" }));
  }
  return r;
}

// The names of a dtype's fields under its one row (sign, exponent, mantissa), each spanning its
// bits; a field across the fold is named in both blocks.
function nameRow(fields, width, row, rowsPerBlock) {
  const r = el("div", { class: "bitnames", "aria-hidden": "true", style: foldRows(row, rowsPerBlock) }, labelCells("", width));
  const cell = (name, hi, lo, cls) => el("span", { class: cls, style: `grid-column-end: span ${hi - lo + 1}`, title: name, text: name });
  for (const [name, f] of Object.entries(fields)) {
    const g = bitRange(f.bits);
    if (!g) continue;
    if (width === 32 && g.hi >= 16 && g.lo < 16) {
      r.append(cell(name, g.hi, g.lo, "wide-only"), cell(name, g.hi, 16, "hi fold-only"), cell(name, 15, g.lo, "lo fold-only"));
    } else r.append(cell(name, g.hi, g.lo, half(g.hi, width)));
  }
  return r;
}

// A diagram draws 32 to 128 of these at each keystroke: each a copy of one made once, its
// classes and text set as properties (the general `el` took a third of a word's drawing time).
const BIT_BUTTON = el("button", { type: "button", tabindex: "-1" });
function bitButton(w, wi, b, o, d, label) {
  const bit = (w >>> b) & 1;
  const unexplained = d.unexplained_bits && (d.unexplained_bits[wi] >>> b) & 1;
  const fixed = d.fixed && (d.fixed.words[wi] >>> b) & 1;
  let cls = "bit";
  const h = half(b, d.width);
  if (h) cls += " " + h;
  cls += o ? ` tag-${o.tag}` : " reserved";
  if (o && o.start) cls += " field-start";
  if (unexplained) cls += " unexplained";
  if (fixed) cls += " fixed";
  const what = o ? `${o.name} (${o.tag})` : unexplained ? "set, but no field explains it" : fixed ? "a fixed bit of the encoding" : "reserved / no field";
  const e = BIT_BUTTON.cloneNode(false);
  e.className = cls;
  e.setAttribute("data-bit", b);
  e.setAttribute("data-field", o ? o.name : "");
  e.title = `${label} bit ${b} = ${bit}: ${what}; click to flip`;
  e.textContent = bit ? "1" : "0";
  return e;
}

// opts: key (names the diagram, so a flipped bit is found again), width (bits per row, 32),
// labels (one per row), names (a row naming the fields under a one-row diagram), label.
function bitmap(words, fields, d, onFlip, opts = {}) {
  const width = opts.width || 32;
  const key = opts.key || "";
  const owner = [];
  for (const [name, f] of Object.entries(fields || {})) {
    // `parts`: a field drawn over several rows (a 64-bit dtype's), each part "W<row>[hi:lo]".
    for (const part of f.parts || [f.bits]) {
      const r = bitRange(part);
      if (!r) continue;
      for (let b = r.lo; b <= r.hi; b++) owner[r.word * 32 + b] = { name, tag: f.tag, start: b === r.hi };
    }
  }
  const labels = opts.labels || words.map((_, wi) => (words.length > 1 ? `W${wi}` : "word"));
  const named = opts.names && words.length === 1;
  const rowsPerBlock = words.length + (named ? 1 : 0) + 1;
  const grid = el("div", { class: `bitgrid${width === 32 ? " fold" : ""}`, style: `--cols: ${width}` }, ruler(width, rowsPerBlock));
  const draw = { ...d, width };
  words.forEach((w, wi) => {
    const row = el("div", { class: "bitrow", "data-word": wi, style: foldRows(wi + 1, rowsPerBlock) }, labelCells(labels[wi], width));
    for (let b = width - 1; b >= 0; b--) row.append(bitButton(w, wi, b, owner[wi * 32 + b], draw, labels[wi]));
    grid.append(row);
  });
  if (named) grid.append(nameRow(fields, width, words.length + 1, rowsPerBlock));
  const box = el("div", { class: "bitmap", role: "group", "aria-label": `${opts.label || "the"} bits: arrow keys move, Space flips`, "data-key": key }, grid);
  box.addEventListener("click", (e) => {
    const bit = e.target.closest(".bit");
    if (bit) flipBit(box, bit, onFlip);
  });
  box.addEventListener("keydown", bitKey);
  box.addEventListener("focusin", (e) => e.target.classList.contains("bit") && takeTabStop(e.target));
  takeTabStop(pendingBit(box, key) || box.querySelector(".bit"));
  return box;
}

// The bit a flip wants focused, if this diagram is the one it was in (drawn after the flip
// returned: a view drawn later still gets its focus back).
function pendingBit(box, key) {
  if (!bitFocus || bitFocus.key !== key) return null;
  const bit = box.querySelector(`.bitrow[data-word="${bitFocus.word}"] .bit[data-bit="${bitFocus.bit}"]`);
  bitFocus = null;
  if (bit) requestAnimationFrame(() => bit.isConnected && document.activeElement === document.body && bit.focus());
  return bit;
}

function takeTabStop(bit) {
  if (!bit) return;
  const old = bit.closest(".bitmap").querySelector('.bit[tabindex="0"]');
  if (old && old !== bit) old.tabIndex = -1;
  bit.tabIndex = 0;
}

function flipBit(box, bit, onFlip) {
  const want = { key: box.dataset.key, word: Number(bit.closest(".bitrow").dataset.word), bit: Number(bit.dataset.bit) };
  const focused = document.activeElement === bit;
  bitFocus = focused ? want : null;
  onFlip(want.word, want.bit);
  if (!focused) return;
  const again = Array.from(document.querySelectorAll(".bitmap")).find((m) => m.dataset.key === want.key && m.isConnected);
  const next = again && again.querySelector(`.bitrow[data-word="${want.word}"] .bit[data-bit="${want.bit}"]`);
  if (next) {
    bitFocus = null;
    takeTabStop(next);
    next.focus();
  }
}

function bitKey(e) {
  const bit = e.target.closest(".bit");
  if (!bit || e.altKey || e.ctrlKey || e.metaKey) return;
  const row = bit.closest(".bitrow");
  const bits = Array.from(row.querySelectorAll(".bit"));
  const i = bits.indexOf(bit);
  let to;
  if (e.key === "ArrowLeft") to = bits[i - 1];
  else if (e.key === "ArrowRight") to = bits[i + 1];
  else if (e.key === "Home") to = bits[0];
  else if (e.key === "End") to = bits[bits.length - 1];
  else if (e.key === "ArrowUp" || e.key === "ArrowDown") {
    const rows = Array.from(e.currentTarget.querySelectorAll(".bitrow"));
    const other = rows[rows.indexOf(row) + (e.key === "ArrowUp" ? -1 : 1)];
    to = other && other.querySelector(`.bit[data-bit="${bit.dataset.bit}"]`);
  } else return;
  e.preventDefault();
  if (to) {
    takeTabStop(to);
    to.focus();
  }
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
  art.append(el("h3", {}, `${d.encoder} `, el("span", { class: "mono", text: (d.words_hex || words.map(hex32)).join(" ") }), d.tag ? [" ", tagBadge(d.tag)] : null));
  const opts = { key: `decode:${index}`, label: d.encoder };
  if (d.readings) {
    // meta-ctrl: every encoder that could have made the word, each drawn on the word itself.
    art.append(el("p", { class: "note", text: d.note || (d.ambiguous ? "several encoders could make this word" : "") }));
    for (const r of d.readings) art.append(decodedArticle({ words, ...r }, `${index}.${r.encoder}`, onFlip));
    if (!d.readings.length) art.append(bitmap(words, {}, {}, onFlip, opts));
    return art;
  }
  if (d.fields) art.append(bitmap(words, d.fields, d, onFlip, opts), fieldTable(d.fields));
  const facts = [["bytes", d.bytes_hex, "bytes_hex"]];
  if (d.exact !== undefined) facts.push(["exact encoding", d.exact ? "yes" : `no — ${d.problem}`, "exact"]);
  if (d.source) facts.push(["source", d.source, "source"]);
  art.append(kv(facts));
  if (!d.fields) art.append(el("pre", { class: "mono", text: JSON.stringify(d, null, 1) }));
  return art;
}
