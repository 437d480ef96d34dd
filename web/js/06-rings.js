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
