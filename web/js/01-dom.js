// ---- small DOM helpers ----------------------------------------------------------------------

const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const k in attrs) {
    const v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// Counts as the page prints them (1,024): one formatter, made once (toLocaleString makes one
// per call, a tenth of a millisecond each).
const COUNT_FORMAT = new Intl.NumberFormat("en");
const count = (n) => COUNT_FORMAT.format(n);

function tagBadge(tag) {
  return el("span", { class: `tag tag-${tag}`, text: tag });
}

function showError(view, message) {
  const p = $(`#${view}-error`);
  p.textContent = message || "";
  p.hidden = !message;
}

function kv(pairs) {
  const dl = el("dl", { class: "kv" });
  for (const [k, v, key] of pairs) {
    if (v === undefined) continue;
    dl.append(el("dt", { text: k }), el("dd", { "data-key": key || k, text: v === null ? "—" : String(v) }));
  }
  return dl;
}

const hex32 = (w) => "0x" + (w >>> 0).toString(16).padStart(8, "0");
