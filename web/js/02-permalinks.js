// ---- permalinks -----------------------------------------------------------------------------
// #decode/<decoder>/<hex>[,<hex>…]   #encode/<encoder>/<field>=<value>&…   #rings/<hex>
// #dtypes/<dtype>/<value>[/saturate]  #element/<key>=<value>&…  (the element form's names)
//
// Every link opens the page (09-restore.js): what cannot be read is said in the view it names.

let restoring = false;

// The URL follows the view once per burst of input (a task later), not per keystroke.
let pendingHash = null;

function flushHash() {
  if (pendingHash !== null && location.hash !== pendingHash) history.replaceState(null, "", pendingHash);
  pendingHash = null;
}

function setHash(parts) {
  if (restoring) return;
  // A decoder's link holds the box's items as they were typed (a word stays a word, not its
  // bytes), unless the view leaves them out (too many for a link).
  if (parts[0] === "decode" && parts.length > 2) parts = [parts[0], parts[1], decodeLinkItems($("#decode-input").value)];
  const first = pendingHash === null;
  pendingHash = "#" + parts.map((p) => encodeURIComponent(p).replace(/%3D/g, "=").replace(/%26/g, "&").replace(/%2C/g, ",")).join("/");
  if (first) setTimeout(flushHash, 0);
}

// The hex box's items for a link: one per line, separated by `,` (as the box reads commas),
// the spaces inside a line kept as one.
function decodeLinkItems(text) {
  return text.split(/[\n,]/).map((l) => l.trim().replace(/\s+/g, " ")).filter((l) => l !== "").join(",");
}

function query(obj) {
  return Object.entries(obj)
    .filter(([, v]) => v !== "" && v !== undefined && v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

// `s` with its escapes decoded; a bad one (`%zz`, a cut `%e2%82`) is kept as it stands and
// said in `problems` (a list of messages), so a mangled link still opens.
function linkText(s, problems) {
  try {
    return decodeURIComponent(s);
  } catch (_) {
    problems.push(`'${clip(s)}' has a bad escape (an escape is % and two hex digits, of UTF-8 bytes): read as it stands`);
    return s.replace(/(?:%[0-9a-f]{2})+/gi, (m) => {
      try { return decodeURIComponent(m); } catch (_) { return m; }
    });
  }
}

function parseQuery(q, problems = []) {
  const out = {};
  for (const part of (q || "").split("&")) {
    if (!part) continue;
    const i = part.indexOf("=");
    const k = linkText(i < 0 ? part : part.slice(0, i), problems);
    out[k] = i < 0 ? "" : linkText(part.slice(i + 1), problems);
  }
  return out;
}

// The most a link holds: a ring dump's hex (4 KiB, as the Rings view writes its link) and the
// decoder's items (as the decoder writes its link).
const RING_LINK_HEX = 8192;
const DECODE_LINK_CHARS = 1 << 16;

// Brings the link of the view shown up to date with its box (a view that refused the box did
// not write it) and returns null; or says why a link cannot hold the box (too large: the view
// left it out of the link, which would reopen the view without it).
function linkLoss() {
  flushHash();
  const parts = location.hash.slice(1).split("/");
  if (current === "rings") {
    const hex = $("#rings-input").value.replace(/\s+/g, "");
    if (hex && linkText(parts.slice(1).join("/"), []) !== hex) {
      if (hex.length > RING_LINK_HEX) {
        return `a link cannot hold this ring dump (${count(Math.floor(hex.length / 2))} bytes; links hold dumps of up to 4 KiB): it would open an empty Rings view, so attach the dump file instead`;
      }
      setHash(["rings", hex]);
    }
  }
  if (current === "decode") {
    const items = decodeLinkItems($("#decode-input").value);
    if (items && linkText(parts.slice(2).join("/"), []) !== items) {
      if (items.length > DECODE_LINK_CHARS) {
        return `a link cannot hold these ${count(items.length)} characters of hex: it would open the decoder without them, so share the hex itself`;
      }
      setHash(["decode", $("#decode-encoder").value, items]);
    }
  }
  flushHash();
  return null;
}
