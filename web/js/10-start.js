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
  // Every dtype `cce value` takes (the Dtypes view), and the SDMA dtypes of a size (the element).
  for (const d of [...names.dtypes, ...names.value_dtypes]) if (d.bytes > 0) dtypeSizes[d.name] = d.bytes;
  const dtypeNames = names.dtypes.map((d) => d.name);
  const valueDtypes = names.value_dtypes.map((d) => d.name);
  document.body.append(
    el("datalist", { id: "dtype-names" }, dtypeNames.map((n) => el("option", { value: n }))),
    el("datalist", { id: "selector-names" }, ["stored", "input", "scale"].map((n) => el("option", { value: n }))));
  fillSelect($("#decode-encoder"), decoders, "fma-meta-ctrl");
  fillSelect($("#encode-encoder"), encoderList.map((e) => e.name), "fma-descriptor");
  fillSelect($("#dtypes-dtype"), valueDtypes, "bf16");
  const f = $("#element-form");
  fillSelect(f.elements.algo, names.algos, "ring");
  fillSelect(f.elements.compare, names.algos.filter((a) => a !== "auto"));
  const sized = names.dtypes.filter((d) => d.bytes > 0).map((d) => d.name);
  fillSelect(f.elements.dtype, sized, "bf16");
  fillSelect(f.elements.accum, sized);
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
    const loss = linkLoss();
    if (loss) return ($("#copy-state").textContent = ` not copied: ${loss}`);
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
