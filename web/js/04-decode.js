// ---- decode ---------------------------------------------------------------------------------
// The hex box, read into items and drawn as a list. A box may hold a whole ring (32k
// descriptors), so the list is drawn in slices of a few milliseconds with the browser's turn
// (typing, a frame) between them: each item as its heading first, its bit diagram and field
// table (04-bits.js) when it comes into view, or at once for the first few. A change to the box
// keeps the nodes of the items before and after the change: typing redraws one item, not the box.

const DECODE_MAX_CHARS = 1 << 20;
// One slice of drawing before the browser's turn; items drawn in full without waiting to be
// seen; refusals listed in #decode-error (each is shown at its own place in the list too).
const SLICE_MS = 8;
const DRAWN_AT_ONCE = 4;
const ERRORS_LISTED = 20;

// ---- reading the box ----
// Commas separate as lines do. A piece between them is read as the CLI reads one argument (hex
// bytes, little-endian, as `bytes_hex`; a `0x` number for a one-word decoder), a run of several
// units of the decoder split into them, or as words: `0x` numbers, or 8-digit groups (as the
// page's headings and `cce disasm` print words) several to a piece or, for a decoder of several
// words, one, taken as many at a time as the decoder has words (a descriptor's four may span
// lines). An 8-digit group alone under a one-word decoder is its bytes, as the CLI reads it.

const WORD_TOKEN = /^(?:0x[0-9a-f]{1,8}|[0-9a-f]{8})$/i;
const PREFIXED = /^0x/i;
const HEX_RUN = /^[0-9a-f]+$/i;

// Words per item of a decoder: its encoder's; a decoder beyond the encoders takes one word when
// the library reads a `0x` number with it (meta-ctrl), else none (bytes only).
const wordCounts = {};
function wordsPerItem(decoder) {
  if (!(decoder in wordCounts)) {
    const enc = encoderList.find((e) => e.name === decoder);
    wordCounts[decoder] = enc ? enc.words : api.decode(decoder, "0x0").error ? 0 : 1;
  }
  return wordCounts[decoder];
}

// The box's items: {src (what the library reads), key, line, spans ([start, end) in the text),
// form ("bytes" | "words"), prefixed (per word)} or {error, key, line, spans}.
function readBox(text, decoder) {
  const n = wordsPerItem(decoder);
  const r = { decoder, n, unit: 8 * n, items: [], words: [] };
  let line = 0;
  for (let at = 0; at <= text.length; ) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    line++;
    const s = text.slice(at, end);
    if (HEX_RUN.test(s) && !(r.n > 1 && s.length === 8)) {
      // The common line, one run of hex: read at once.
      endWords(r);
      addRun(r, { t: s, at, line });
    } else if (s) readLine(r, s, at, line);
    at = end + 1;
  }
  endWords(r);
  return r.items;
}

function readLine(r, s, offset, line) {
  if (!s.includes(",")) return readPiece(r, s, offset, line);
  let a = 0;
  for (const piece of s.split(",")) {
    readPiece(r, piece, offset + a, line);
    a += piece.length + 1;
  }
}

function areWords(r, tokens) {
  if (tokens.length > 1) return tokens.every((k) => WORD_TOKEN.test(k.t));
  return PREFIXED.test(tokens[0].t) || (r.n > 1 && WORD_TOKEN.test(tokens[0].t));
}

function tokensOf(s, offset, line) {
  const tokens = [];
  for (const m of s.matchAll(/\S+/g)) tokens.push({ t: m[0], at: offset + m.index, line });
  return tokens;
}

// A piece of a line: words, one argument as the CLI reads it, or several runs of units.
function readPiece(r, piece, offset, line) {
  const tokens = tokensOf(piece, offset, line);
  if (!tokens.length) return;
  if (r.n && areWords(r, tokens)) {
    for (const k of tokens) addWord(r, k);
    return;
  }
  endWords(r);
  if (tokens.length === 1 || (r.unit && tokens.every((k) => HEX_RUN.test(k.t) && k.t.length % r.unit === 0))) {
    for (const k of tokens) addRun(r, k);
  } else {
    const last = tokens[tokens.length - 1];
    r.items.push(bytesItem(piece.trim(), line, [tokens[0].at, last.at + last.t.length]));
  }
}

// One argument as the CLI reads it; a run of several units split into them.
function addRun(r, k) {
  const s = k.t;
  if (r.unit && HEX_RUN.test(s) && s.length > r.unit && s.length % r.unit === 0) {
    for (let i = 0; i < s.length; i += r.unit) r.items.push(bytesItem(s.slice(i, i + r.unit), k.line, [k.at + i, k.at + i + r.unit]));
  } else r.items.push(bytesItem(s, k.line, [k.at, k.at + s.length]));
}

function bytesItem(src, line, span) {
  return { src, key: src, line, spans: [span], form: "bytes" };
}

function addWord(r, k) {
  r.words.push(k);
  if (r.words.length === r.n) {
    r.items.push(wordsItem(r.words, r.n));
    r.words = [];
  }
}

// A group of words cut short (by bytes, or by the end of the box) is refused on its line.
function endWords(r) {
  if (!r.words.length) return;
  const w = r.words;
  r.words = [];
  refuseWords(r.items, w, `${r.decoder} takes ${r.n} words, got ${w.length}`);
}

function refuseWords(items, tokens, error) {
  const line = tokens[0].line;
  items.push({ error, key: `!${line}!${error}`, line, spans: tokens.map((k) => [k.at, k.at + k.t.length]) });
}

// Words as the library reads them: a word itself (`0x…`) when the decoder takes one, else their
// little-endian bytes.
function wordsItem(tokens, n) {
  const spans = tokens.map((k) => [k.at, k.at + k.t.length]);
  const prefixed = tokens.map((k) => PREFIXED.test(k.t));
  const item = { line: tokens[0].line, spans, form: "words", prefixed };
  if (n === 1) item.src = prefixed[0] ? tokens[0].t : `0x${tokens[0].t}`;
  else {
    const bad = tokens.find((k) => !WORD_TOKEN.test(k.t));
    if (bad) return { error: `'${bad.t}' is not a 32-bit word (0x and 1 to 8 hex digits)`, key: `!${item.line}!${bad.t}`, line: item.line, spans };
    item.src = wordBytes(tokens.map((k) => parseInt(k.t.replace(PREFIXED, ""), 16)));
  }
  item.key = item.src;
  return item;
}

function wordBytes(words) {
  const bytes = new Uint8Array(words.length * 4);
  const view = new DataView(bytes.buffer);
  words.forEach((x, k) => view.setUint32(4 * k, x >>> 0, true));
  return hexOf(bytes);
}

// ---- drawing the list ----
// Each item drawn has a cell: its node (a heading, a full article or a refusal) and what a flip
// needs. Items [0, front) and the last `tail` have cells; the ones between are drawn next. The
// nodes sit in chunks of CHUNK whose rendering the browser skips while they are out of view
// (content-visibility), so a frame's work does not grow with the list.

const CHUNK = 128;
// A box longer than this is read after the frame that shows the keystroke, not before it.
const READ_AT_ONCE_CHARS = 1 << 16;
// Items put in the link (their bytes, comma-separated) up to this many characters; a longer
// box's link holds the decoder only (a 1 MiB URL costs the page 50 ms at each change).
const LINK_MAX_CHARS = 1 << 16;
const SHOW_MS = 250;

const decodeList = { decoder: "", items: [], front: 0, tail: 0, anchor: null, fill: null, built: [], shown: 0, gen: 0, soon: false, reopen: new Set(), seen: new Set(), near: new Set(), observer: null, chunks: null, opening: 0, status: null, box: null };
const cellOf = new WeakMap();

function renderDecode() {
  const text = $("#decode-input").value;
  decodeList.gen++;
  if (text.length > READ_AT_ONCE_CHARS && text.length <= DECODE_MAX_CHARS) {
    if (!decodeList.soon) requestAnimationFrame(() => afterInput(readSoon));
    decodeList.soon = true;
    if (decodeList.status) decodeList.status.dataset.state = "reading";
    return;
  }
  drawDecode(text);
}

// A long box: read once per burst of keystrokes, after they are shown.
function readSoon() {
  decodeList.soon = false;
  drawDecode($("#decode-input").value);
}

function drawDecode(text) {
  const decoder = $("#decode-encoder").value;
  const gen = ++decodeList.gen;
  listNodes();
  if (text.length > DECODE_MAX_CHARS) {
    keepUnchanged([], "");
    decodeProgress(false);
    showError("decode", `${text.length} characters pasted: the decoder takes at most 1 MiB of hex (drop a ring dump file on the Rings view instead)`);
    return;
  }
  keepUnchanged(readBox(text, decoder), decoder);
  drawSlice(gen, text, true);
}

// The output's two parts: the count (several items; its data-items, data-drawn and data-state
// say how far the drawing is) and the list.
function listNodes() {
  if (decodeList.box && decodeList.box.isConnected) return;
  decodeList.status = el("p", { class: "note decode-status", "aria-live": "polite", hidden: true });
  decodeList.box = el("div", { class: "decode-list" });
  $("#decode-output").replaceChildren(decodeList.status, decodeList.box);
  decodeList.items = [];
  decodeList.front = decodeList.tail = 0;
}

// Takes the new items, keeping the cells of the unchanged ones before and after the change.
function keepUnchanged(items, decoder) {
  const old = decodeList.items, same = decoder === decodeList.decoder;
  const m = old.length, n = items.length;
  // Cells drawn but not yet put in the page are drawn again.
  const shownFront = decodeList.front - decodeList.built.length;
  decodeList.built = [];
  let p = 0, s = 0;
  while (same && p < shownFront && p < n && old[p].key === items[p].key) p++;
  while (same && s < decodeList.tail && s < n - p && m - 1 - s >= p && old[m - 1 - s].key === items[n - 1 - s].key) s++;
  decodeList.reopen = new Set();
  if (p === 0 && s === 0) dropAll();
  else {
    const drop = (i) => old[i].cell && dropCell(old[i].cell, i);
    for (let i = p; i < decodeList.front; i++) drop(i);
    for (let i = Math.max(p, m - decodeList.tail); i < m - s; i++) drop(i);
  }
  for (let i = 0; i < p; i++) carryCell(old[i].cell, items[i], i);
  for (let j = 0; j < s; j++) carryCell(old[m - 1 - j].cell, items[n - 1 - j], n - 1 - j);
  const anchor = s ? items[n - s].cell : null;
  if (anchor) splitChunk(anchor.node);
  const fill = p ? items[p - 1].cell.node.parentNode : null;
  Object.assign(decodeList, { decoder, items, front: p, tail: s, anchor, fill });
}

function dropAll() {
  if (decodeList.observer) decodeList.observer.disconnect();
  if (decodeList.chunks) decodeList.chunks.disconnect();
  decodeList.seen.clear();
  decodeList.near.clear();
  decodeList.box.replaceChildren();
}

function dropCell(cell, i) {
  if (cell.open) decodeList.reopen.add(i);
  if (decodeList.observer) decodeList.observer.unobserve(cell.node);
  decodeList.seen.delete(cell.node);
  const chunk = cell.node.parentNode;
  cell.node.remove();
  if (chunk && !chunk.firstChild) {
    decodeList.chunks.unobserve(chunk);
    decodeList.near.delete(chunk);
    chunk.remove();
  }
}

// A kept cell takes its new item, index and line.
function carryCell(cell, item, index) {
  item.cell = cell;
  cell.item = item;
  if (cell.index === index && cell.line === item.line) return;
  cell.index = index;
  cell.line = item.line;
  cell.node.dataset.index = index;
  cell.node.dataset.line = item.line;
  if (!cell.open) return;
  // What decodedArticle numbers by the item's index: a reading's article, a diagram's key.
  for (const a of cell.node.querySelectorAll("article.decoded article.decoded")) a.dataset.index = `${index}.${a.dataset.encoder}`;
  for (const m of cell.node.querySelectorAll(".bitmap[data-key]")) m.dataset.key = m.dataset.key.replace(/^decode:\d+/, `decode:${index}`);
}

function newChunk() {
  const chunk = el("div", { class: "decode-chunk" });
  // Out of view, a chunk is not laid out or painted; its height is then its last one (or a
  // guess of a heading per item until it is first drawn).
  chunk.style.contentVisibility = "auto";
  chunk.style.containIntrinsicSize = `auto ${CHUNK * 60}px`;
  decodeObservers().chunks.observe(chunk);
  return chunk;
}

// Makes `node` the first of its chunk (the kept items after a change start a chunk).
function splitChunk(node) {
  const chunk = node.parentNode;
  if (!node.previousSibling) return;
  const rest = newChunk();
  chunk.after(rest);
  while (node) {
    const next = node.nextSibling;
    rest.append(node);
    node = next;
  }
}

// The chunk the next item goes into: the last kept item's before the change while it has room,
// then new ones, before the kept items after the change.
function fillChunk() {
  const c = decodeList.fill;
  if (c && c.isConnected && c.childNodes.length < CHUNK) return c;
  const chunk = newChunk();
  decodeList.box.insertBefore(chunk, c && c.isConnected ? c.nextSibling : decodeList.anchor ? decodeList.anchor.node.parentNode : null);
  decodeList.fill = chunk;
  return chunk;
}

// Draws the next slice of items. They are put in the page a few times a second (and at once
// for the first slice and the last): each time the page changes the browser draws a frame, and
// a frame costs ~40 ms beside a box that holds a ring.
function drawSlice(gen, text, first) {
  if (gen !== decodeList.gen) return;
  const t0 = performance.now(), end = decodeList.items.length - decodeList.tail;
  while (decodeList.front < end) {
    const i = decodeList.front++;
    decodeList.built.push(drawItem(decodeList.items[i], i));
    // The first slice draws at least the items drawn in full: what the view opens with.
    if (performance.now() - t0 > SLICE_MS && !(first && i < DRAWN_AT_ONCE)) break;
  }
  const done = decodeList.front >= end;
  if (first || done || t0 - decodeList.shown > SHOW_MS) showBuilt();
  if (!done) afterInput(() => drawSlice(gen, text, false));
  else finishDecode(text);
}

function showBuilt() {
  let refused = false;
  for (const cell of decodeList.built) {
    refused = refused || cell.error !== undefined;
    const chunk = fillChunk();
    chunk.append(cell.node);
    if (!cell.open && cell.words && decodeList.near.has(chunk)) decodeList.observer.observe(cell.node);
  }
  decodeList.built = [];
  decodeList.shown = performance.now();
  decodeProgress(refused);
}

// Runs `f` in a task of its own: the browser's pending input and frames come first.
const sliceChannel = new MessageChannel();
let sliceNext = null;
sliceChannel.port1.onmessage = () => { const f = sliceNext; sliceNext = null; if (f) f(); };
function afterInput(f) {
  sliceNext = f;
  sliceChannel.port2.postMessage(0);
}

function drawItem(item, i) {
  const cell = { item, index: i, line: item.line, open: false, node: null, words: null, hex: null };
  item.cell = cell;
  const d = item.error ? { error: item.error } : api.decode(decodeList.decoder, item.src);
  if (d.error) {
    cell.error = d.error;
    cell.node = el("p", { class: "error refused", "data-index": i, "data-line": item.line, text: `line ${item.line}: ${d.error}` });
  } else {
    cell.words = d.words;
    cell.hex = d.bytes_hex;
    cell.node = i < DRAWN_AT_ONCE || decodeList.reopen.has(i) ? fullNode(cell, d) : headingNode(cell, d);
  }
  cellOf.set(cell.node, cell);
  return cell;
}

// An item not yet seen: the heading of its article, drawn in full when it comes into view.
function headingNode(cell, d) {
  return el("article", { class: "decoded folded", "data-index": cell.index, "data-line": cell.line, "data-encoder": d.encoder },
    el("h3", {}, `${d.encoder} `, el("span", { class: "mono", text: (d.words_hex || (d.words || []).map(hex32)).join(" ") })));
}

function fullNode(cell, d) {
  cell.open = true;
  const node = decodedArticle(d, cell.index, (w, b) => flipCell(cell, w, b));
  node.dataset.line = cell.line;
  return node;
}

// Two watchers: one of the chunks, and one of the headings in the chunks near the view (watching
// every heading of a ring costs the browser seconds per frame).
function decodeObservers() {
  if (!decodeList.observer) {
    decodeList.observer = new IntersectionObserver(decodeSeen, { rootMargin: "600px 0px" });
    decodeList.chunks = new IntersectionObserver(chunksSeen, { rootMargin: "600px 0px" });
  }
  return decodeList;
}

function chunksSeen(entries) {
  for (const e of entries) {
    const headings = () => e.target.querySelectorAll(":scope > article.folded");
    if (e.isIntersecting) {
      decodeList.near.add(e.target);
      for (const a of headings()) decodeList.observer.observe(a);
    } else if (decodeList.near.delete(e.target)) {
      for (const a of headings()) {
        decodeList.observer.unobserve(a);
        decodeList.seen.delete(a);
      }
    }
  }
}

function decodeSeen(entries) {
  for (const e of entries) {
    if (e.isIntersecting) decodeList.seen.add(e.target);
    else decodeList.seen.delete(e.target);
  }
  if (decodeList.seen.size && !decodeList.opening) decodeList.opening = requestAnimationFrame(openSeenItems);
}

// Draws the headings in view in full, a frame's share at a time. An item drawn in full is ten
// times its heading's height: the item at the middle of the view is held where it was (the page
// scrolls by what the items drawn above it grew), so what was scrolled to stays in view, as it
// would not if the items above pushed it away (the browser's own scroll anchoring loses its
// anchor when that node is the one replaced); a view at the page's end stays at its end (the
// last items, which cannot be in the middle, stay in view).
function openSeenItems() {
  const t0 = performance.now();
  decodeList.opening = 0;
  const page = document.documentElement;
  const atEnd = window.innerHeight + window.scrollY >= page.scrollHeight - 1;
  const anchor = atEnd ? null : viewAnchor();
  const before = anchor && anchor.node.getBoundingClientRect().top;
  for (const node of decodeList.seen) {
    if (performance.now() - t0 > 2 * SLICE_MS) {
      decodeList.opening = requestAnimationFrame(openSeenItems);
      break;
    }
    decodeList.seen.delete(node);
    decodeList.observer.unobserve(node);
    const cell = cellOf.get(node);
    if (!cell || cell.node !== node || cell.open) continue;
    const full = fullNode(cell, api.decode(decodeList.decoder, cell.item.src));
    cellOf.set(full, cell);
    node.replaceWith(full);
    cell.node = full;
  }
  if (atEnd) window.scrollTo(0, page.scrollHeight);
  else if (anchor && anchor.node.isConnected) window.scrollBy(0, anchor.node.getBoundingClientRect().top - before);
}

// The list's item at the middle of the view, if the view shows the list there: its cell (whose
// node is the one in the page, before and after it is drawn in full).
function viewAnchor() {
  const at = document.elementFromPoint(window.innerWidth / 2, window.innerHeight / 2);
  const node = at && at.closest(".decode-chunk > [data-index]");
  const cell = node && cellOf.get(node);
  return cell && cell.node === node ? cell : null;
}

// ---- what the list says: its count, its refusals, its link ----

function decodeProgress(refused) {
  const n = decodeList.items.length, drawn = decodeList.front + decodeList.tail;
  const st = decodeList.status;
  // The counts on the status line itself: an attribute changed on an ancestor of the list
  // would make the browser restyle the whole list at every slice.
  Object.assign(st.dataset, { items: n, drawn, state: drawn < n ? "drawing" : "done" });
  st.setAttribute("aria-busy", String(drawn < n));
  st.hidden = n < 2;
  st.textContent = drawn < n ? `${count(n)} items: ${count(drawn)} drawn…` : `${count(n)} items`;
  if (refused) showRefusals();
}

function finishDecode(text) {
  decodeProgress(false);
  const refusals = showRefusals();
  if (refusals) decodeList.status.textContent += `, ${refusals} refused`;
  const hexes = [];
  let chars = 0;
  for (const it of decodeList.items) {
    if (!it.cell.hex) continue;
    hexes.push(it.cell.hex);
    chars += it.cell.hex.length + 1;
    if (chars > LINK_MAX_CHARS) return setHash(["decode", decodeList.decoder]);
  }
  setHash(["decode", decodeList.decoder, hexes.join(",") || text.trim().replace(/\s+/g, "")]);
}

// Each refusal on a line of its own: alone, the library's message as the CLI gives it; among
// several items, with its line (and at its place in the list).
function showRefusals() {
  const refused = [];
  for (const it of decodeList.items) if (it.cell && it.cell.error !== undefined) refused.push(it.cell);
  const p = $("#decode-error");
  p.hidden = !refused.length;
  if (decodeList.items.length === 1 && refused.length) {
    refused[0].node.hidden = true;
    p.textContent = refused[0].error;
    return 1;
  }
  const lines = refused.slice(0, ERRORS_LISTED).map((c) => `line ${c.line}: ${c.error}`);
  if (refused.length > ERRORS_LISTED) lines.push(`… and ${refused.length - ERRORS_LISTED} more refused (each shown at its place below)`);
  p.replaceChildren(...lines.flatMap((l, k) => (k ? [el("br"), l] : [l])));
  for (const c of refused) c.node.hidden = false;
  return refused.length;
}

// ---- flipping a bit ----

// Flips bit `b` of word `w` of a cell's item: the item's text in the box is rewritten in its own
// form (words as words, bytes as bytes) and the list redrawn at once (that item only: the
// diagram's own code then finds the flipped bit again by its diagram's key).
function flipCell(cell, w, b) {
  if (!cell.words || w >= cell.words.length) return;
  const words = cell.words.slice();
  words[w] = (words[w] ^ (1 << b)) >>> 0;
  const box = $("#decode-input");
  box.value = rewriteItem(box.value, cell.item, words);
  drawDecode(box.value);
}

function rewriteItem(text, item, words) {
  const parts = item.form === "words"
    ? words.map((x, k) => (item.prefixed[k] ? "0x" : "") + hex32(x).slice(2))
    : [wordBytes(words)];
  let out = text;
  for (let k = item.spans.length - 1; k >= 0; k--) out = out.slice(0, item.spans[k][0]) + parts[k] + out.slice(item.spans[k][1]);
  return out;
}
