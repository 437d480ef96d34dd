// ---- rings ----------------------------------------------------------------------------------
// A ring dump shown as `cce disasm` prints it: the library's own text (the disasm request with
// `text`), line for line. The page only marks it up: each descriptor's words open it in the
// decoder, and the tags ([MED], [LOW], [MODEL]) take their colours. A dump of a whole ring is
// drawn in chunks of lines between the browser's turns, as the decoder's list is.

const RING_CHUNK = 256;
// A descriptor's line: ring, index, its four words, its kind, then its fields.
const DESC_LINE = /^(\s+)(tx|rx)(\s+)(\d+)(\s+)([0-9a-f]{8}(?: [0-9a-f]{8}){3})(\s+)(\S+)(.*)$/s;
const TAG_MARK = /(\[(?:HIGH|MED|LOW|MODEL)\])/;

let ringsGen = 0;
const ringsChannel = new MessageChannel();
let ringsNext = null;
ringsChannel.port1.onmessage = () => { const f = ringsNext; ringsNext = null; if (f) f(); };

// A long box (a whole ring's hex) is read once per burst of keystrokes, after they are shown.
let ringsSoon = null;
function renderRingBytes(hex) {
  if (hex.length > READ_AT_ONCE_CHARS) {
    if (ringsSoon === null) requestAnimationFrame(() => afterInput(() => { const h = ringsSoon; ringsSoon = null; drawRing(h); }));
    ringsSoon = hex;
    ringsGen++;
    const status = $("#rings-output .rings-status");
    if (status) status.dataset.state = "reading";
    return;
  }
  drawRing(hex);
}

function drawRing(hex) {
  const out = $("#rings-output");
  const gen = ++ringsGen;
  out.replaceChildren();
  showError("rings", "");
  if (!hex.trim()) return;
  const r = api.call({ fn: "disasm", hex, text: true });
  if (r.error) return showError("rings", r.error);
  const compact = hex.replace(/\s+/g, "");
  setHash(compact.length <= 8192 ? ["rings", compact] : ["rings"]);
  const lines = r.text.split(/(?<=\n)/);
  // The count of lines drawn on a line of its own (data-lines, data-drawn, data-state), so the
  // listing itself stays the CLI's text.
  const status = el("p", { class: "note rings-status", "aria-live": "polite", hidden: lines.length <= RING_CHUNK });
  const pre = el("pre", { class: "listing mono" });
  out.append(status, pre);
  drawListing(gen, lines, 0, pre, status);
}

// Draws the lines from `from` on, a slice at a time; the chunks drawn in a slice are put in the
// page at once.
function drawListing(gen, lines, from, pre, status) {
  if (gen !== ringsGen) return;
  const t0 = performance.now();
  const frag = document.createDocumentFragment();
  let i = from;
  while (i < lines.length && (i === from || performance.now() - t0 < SHOW_MS / 4)) {
    const chunk = el("div", { class: "listing-chunk" });
    // Out of view, a chunk is not laid out or painted (its height then its last one, or a guess).
    chunk.style.contentVisibility = "auto";
    chunk.style.containIntrinsicSize = `auto ${1.2 * Math.min(RING_CHUNK, lines.length - i)}em`;
    for (const line of lines.slice(i, i + RING_CHUNK)) chunk.append(listingLine(line));
    frag.append(chunk);
    i += RING_CHUNK;
  }
  pre.append(frag);
  const drawn = Math.min(i, lines.length);
  Object.assign(status.dataset, { lines: lines.length, drawn, state: drawn < lines.length ? "drawing" : "done" });
  status.textContent = `${count(lines.length)} lines${drawn < lines.length ? `: ${count(drawn)} drawn…` : ""}`;
  if (drawn < lines.length) {
    ringsNext = () => drawListing(gen, lines, i, pre, status);
    ringsChannel.port2.postMessage(0);
  }
}

// One line of the listing, its text unchanged: a descriptor's words link to the decoder.
function listingLine(line) {
  const m = DESC_LINE.exec(line);
  if (!m) return el("span", { class: "line" }, tagMarks(line));
  const [, lead, side, gap1, index, gap2, words, gap3, kind, rest] = m;
  const decoder = listedDecoder(kind);
  const bytes = wordBytes(words.split(" ").map((w) => parseInt(w, 16)));
  const wordsNode = decoder
    ? el("a", { class: "desc", href: `#decode/${decoder}/${bytes}`, title: "open in the decoder", text: words })
    : el("span", { class: "words", text: words });
  return el("span", { class: "line desc-line", "data-side": side, "data-index": index },
    lead, el("span", { class: "ring", text: side }), gap1, el("span", { class: "index", text: index }), gap2,
    wordsNode, gap3, el("span", { class: "kind", text: kind }), el("span", { class: "fields" }, tagMarks(rest)));
}

// Text with its tags as the page's tag badges (the same text: "[MED]" stays "[MED]").
function tagMarks(text) {
  return text.split(TAG_MARK).map((part, k) => (k % 2 ? el("span", { class: `tag tag-${part.slice(1, -1)}`, text: part }) : part)).filter((p) => p !== "");
}

// The decoder of a listed kind: `fma` is `fma-descriptor`, `m2s-data` itself; of several kinds
// the bits fit (`fma|m2s-data`), the first; `s2m-data?` (after the last packet) is `s2m-data`.
function listedDecoder(kind) {
  const d = decoderOf(kind.split("|")[0].replace(/\?$/, ""));
  return decoderNames.includes(d) ? d : null;
}

function decoderOf(kind) {
  return decoderNames.includes(kind) ? kind : decoderNames.includes(`${kind}-descriptor`) ? `${kind}-descriptor` : kind;
}

async function readRingFile(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  // Choosing the same file again (rewritten since) is a change too.
  $("#rings-file").value = "";
  if (bytes.length > 32 << 20) return showError("rings", `${file.name}: ${bytes.length} bytes; the page reads ring dumps of at most 32 MiB`);
  $("#rings-input").value = hexOf(bytes);
  show("rings");
  renderRingBytes($("#rings-input").value);
}
