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
