// ---- dtypes ---------------------------------------------------------------------------------

function valueRef(v) {
  return v ? `${v.bits_hex} = ${v.exact}` : "—";
}

// The fields as `cce value` prints them: "sign [15] 0, exponent [14:7] 127 (2^0), mantissa [6:0] 64"
// (the values read from the bits, a signed integer's as signed: a 64-bit dtype's field is past
// a JavaScript number's 53 bits).
function fieldsText(r, bits) {
  return (r.fields || []).map((f) => {
    const g = bitRange(f.bits);
    const n = g && g.hi - g.lo + 1;
    const raw = g && (bits >> BigInt(g.lo)) & ((1n << BigInt(n)) - 1n);
    const value = !g ? f.value : f.value < 0 ? BigInt.asIntN(n, raw) : raw;
    const unbiased = f.unbiased === undefined || f.unbiased === null ? "" : ` (2^${f.unbiased})`;
    return `${f.name} ${f.bits} ${value}${unbiased}`;
  }).join(", ");
}

// The value's bits: one row (8, 16 or 32 bits, its fields named under it) or, for a 64-bit
// dtype, two rows of 32 (bits 63–32, then 31–0). `onFlip(b)` gets the bit's number in the value.
function dtypeBitmap(r, width, bits, onFlip) {
  const fields = {};
  const opts = { key: "dtype", label: r.dtype, names: true };
  if (width <= 32) {
    for (const f of r.fields || []) fields[f.name] = { bits: f.bits, tag: r.tag };
    return bitmap([Number(bits)], fields, {}, (_w, b) => onFlip(b), { ...opts, width });
  }
  // 64 bits: a field's range in its two rows' parts (row W0 holds bits 63–32).
  for (const f of r.fields || []) {
    const g = bitRange(f.bits);
    if (!g) continue;
    const parts = [];
    if (g.hi >= 32) parts.push(`W0[${g.hi - 32}:${Math.max(g.lo, 32) - 32}]`);
    if (g.lo < 32) parts.push(`W1[${Math.min(g.hi, 31)}:${g.lo}]`);
    fields[f.name] = { bits: f.bits, parts, tag: r.tag };
  }
  const words = [Number(bits >> 32n), Number(bits & 0xffffffffn)];
  return bitmap(words, fields, {}, (w, b) => onFlip(w === 0 ? b + 32 : b), { ...opts, labels: ["63–32", "31–0"] });
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
  const bits = BigInt(r.bits_hex);
  const art = el("article", { class: "dtype-value", "data-dtype": r.dtype });
  art.append(el("h3", {}, `${r.dtype} `, tagBadge(r.tag)));
  art.append(dtypeBitmap(r, width, bits, (b) => {
    $("#dtypes-value").value = "0x" + (bits ^ (1n << BigInt(b))).toString(16).padStart(width / 4, "0");
    renderDtype();
  }));
  art.append(kv([
    ["bits", r.bits_hex, "bits_hex"], ["exact value", r.exact, "exact"], ["class", r.class, "class"], ["fields", fieldsText(r, bits), "fields"],
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
