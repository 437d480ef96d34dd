// ---- decode ---------------------------------------------------------------------------------

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
