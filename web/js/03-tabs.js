// ---- tabs -----------------------------------------------------------------------------------

const VIEWS = ["decode", "encode", "rings", "dtypes", "element"];
let current = "decode";

function show(view) {
  current = view;
  for (const v of VIEWS) $(`#view-${v}`).hidden = v !== view;
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.dataset.view === view));
}
