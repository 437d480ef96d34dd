// ---- tabs -----------------------------------------------------------------------------------
// An ARIA tablist: the selected tab is the list's one tab stop; the arrow keys (and Home, End)
// move to another tab and open it, through the tab's own click (the start's listener renders).

const VIEWS = ["decode", "encode", "rings", "dtypes", "element"];
let current = "decode";

function show(view) {
  current = view;
  for (const v of VIEWS) $(`#view-${v}`).hidden = v !== view;
  for (const b of document.querySelectorAll("#tabs button")) {
    const selected = b.dataset.view === view;
    b.setAttribute("aria-selected", String(selected));
    b.tabIndex = selected ? 0 : -1;
  }
}

function tabKey(e) {
  const tabs = Array.from(document.querySelectorAll("#tabs [role=tab]"));
  const i = tabs.indexOf(document.activeElement);
  if (i < 0) return;
  const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  const tab = tabs[(to + tabs.length) % tabs.length];
  tab.focus();
  if (tab.getAttribute("aria-selected") !== "true") tab.click();
}

$("#tabs").addEventListener("keydown", tabKey);
