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
