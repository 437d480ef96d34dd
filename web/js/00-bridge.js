// The page's script, in parts (web/js/*.js, joined in name order by scripts/lib/web_page.py
// into one script): this one is the WebAssembly bridge (window.cce); the others the DOM helpers,
// the permalinks, the tabs, the five views and the start. Every number shown comes from the
// module (crates/cce-web, i.e. cce-api); the script only reads forms, calls it and draws its
// JSON. Text from an answer is always inserted as text (textContent), never as markup.

const WASM_BASE64 = "@WASM_BASE64@";
const VERSION = "@VERSION@";

// ---- the bridge -----------------------------------------------------------------------------

let wasmModule = null;
let instance = null;

function base64Bytes(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

async function start() {
  const { module, instance: inst } = await WebAssembly.instantiate(base64Bytes(WASM_BASE64), {});
  wasmModule = module;
  instance = inst;
  instance.exports.cce_init();
}

function utf8(bytesView) {
  return new TextDecoder().decode(bytesView);
}

// One request object in, one answer object out; a refusal is {error}. A trap (a bug in cce)
// becomes an {error} too, and a fresh instance replaces the trapped one.
function call(request) {
  if (!instance) return { error: "the WebAssembly module is not loaded yet" };
  const ex = instance.exports;
  const req = new TextEncoder().encode(JSON.stringify(request));
  try {
    const p = ex.cce_alloc(req.length);
    new Uint8Array(ex.memory.buffer, p, req.length).set(req);
    const n = ex.cce_call(p, req.length);
    return JSON.parse(utf8(new Uint8Array(ex.memory.buffer, ex.cce_answer(), n)));
  } catch (e) {
    let why = String(e);
    try {
      const n = ex.cce_panic_len();
      if (n) why = utf8(new Uint8Array(ex.memory.buffer, ex.cce_panic(), n));
    } catch (_) { /* the message is the trap's */ }
    const trapped = instance;
    WebAssembly.instantiate(wasmModule, {}).then((fresh) => {
      if (instance === trapped) { instance = fresh; instance.exports.cce_init(); }
    });
    return { error: `internal error in cce (please report it): ${why}` };
  }
}

function hexOf(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

// The page's library: each function returns the object the CLI prints under --json.
const api = {
  version: VERSION,
  call,
  names: () => call({ fn: "names" }),
  encoders: () => call({ fn: "encoders" }),
  tables: () => call({ fn: "tables" }),
  decode: (encoder, hex) => call({ fn: "decode", encoder, hex: String(hex) }),
  encode: (encoder, fields = {}) => call({ fn: "encode", encoder, fields }),
  disasm: (bytes) => call({ fn: "disasm", hex: typeof bytes === "string" ? bytes : hexOf(bytes) }),
  convert: (dtype, value, options = {}) =>
    call({ fn: "value", dtype, value: String(value), saturate: !!options.saturate }),
  value: (dtype, value, options = {}) => api.convert(dtype, value, options),
  element: (params) => call({ fn: "element", ...params }),
};
window.cce = api;
