// ---- permalinks -----------------------------------------------------------------------------
// #decode/<decoder>/<hex>[,<hex>…]   #encode/<encoder>/<field>=<value>&…   #rings/<hex>
// #dtypes/<dtype>/<value>[/saturate]  #element/<key>=<value>&…  (the element form's names)

let restoring = false;

// The URL follows the view once per burst of input (a task later), not per keystroke.
let pendingHash = null;

function flushHash() {
  if (pendingHash !== null && location.hash !== pendingHash) history.replaceState(null, "", pendingHash);
  pendingHash = null;
}

function setHash(parts) {
  if (restoring) return;
  const first = pendingHash === null;
  pendingHash = "#" + parts.map((p) => encodeURIComponent(p).replace(/%3D/g, "=").replace(/%26/g, "&").replace(/%2C/g, ",")).join("/");
  if (first) setTimeout(flushHash, 0);
}

function query(obj) {
  return Object.entries(obj)
    .filter(([, v]) => v !== "" && v !== undefined && v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

function parseQuery(q) {
  const out = {};
  for (const part of (q || "").split("&")) {
    if (!part) continue;
    const i = part.indexOf("=");
    const k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
    out[k] = i < 0 ? "" : decodeURIComponent(part.slice(i + 1));
  }
  return out;
}
