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
