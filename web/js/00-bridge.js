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
// Why no instance could be made (the bridge then answers every call with it, and makes none).
let broken = null;
// Instances made so far, the first included.
let instances = 0;

// The module's memory never shrinks: after a call that grew it past this, a fresh instance
// replaces the old one, whose memory the browser then frees. Every request is checked against
// the page's budget before it runs (crates/cce-web/src/budget.rs, 256 MiB), so one call grows
// it by at most a few times an answer.
const FRESH_ABOVE_BYTES = 64 << 20;

function base64Bytes(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

// A fresh instance of the compiled module in place of the one in use, made at once
// (synchronously: the next call already uses it, so no number of calls can start more than
// one). When none can be made, the one in use stays if it still `works`, else there is none.
function freshInstance(works) {
  try {
    const made = new WebAssembly.Instance(wasmModule, {});
    made.exports.cce_init();
    instance = made;
    instances++;
    return true;
  } catch (e) {
    if (!works) {
      instance = null;
      broken = String(e);
    }
    return false;
  }
}

async function start() {
  wasmModule = await WebAssembly.compile(base64Bytes(WASM_BASE64));
  if (!freshInstance(false)) throw new Error(broken);
}

function utf8(bytesView) {
  return new TextDecoder().decode(bytesView);
}

// Runs `use(exports)` on the instance and returns its answer. A trap (a bug in cce) becomes an
// {error} with the panic's message, returned by this call alone; exactly one fresh instance
// replaces the trapped one before it returns.
function invoke(use) {
  if (!instance) {
    return { error: broken ? `cce's module could not be started again (${broken}): reload the page` : "the WebAssembly module is not loaded yet" };
  }
  const ex = instance.exports;
  try {
    const answer = use(ex);
    if (ex.memory.buffer.byteLength > FRESH_ABOVE_BYTES) freshInstance(true);
    return answer;
  } catch (e) {
    // Not a trap (the script could not hold the answer, or the browser's stack ran out): the
    // module may be left mid-call all the same, so it is replaced too.
    if (!(e instanceof WebAssembly.RuntimeError)) {
      freshInstance(true);
      return { error: `the page could not hold the answer: ${e}` };
    }
    let why = String(e);
    try {
      const n = ex.cce_panic_len();
      if (n) why = utf8(new Uint8Array(ex.memory.buffer, ex.cce_panic(), n));
    } catch (_) { /* the message is the trap's */ }
    freshInstance(false);
    return { error: `internal error in cce (please report it): ${why}` };
  }
}

// One request object in, one answer object out; a refusal is {error}.
function call(request) {
  let req;
  try {
    req = new TextEncoder().encode(JSON.stringify(request));
  } catch (e) {
    return { error: `the request is not JSON: ${e}` };
  }
  return invoke((ex) => {
    const p = ex.cce_alloc(req.length);
    new Uint8Array(ex.memory.buffer, p, req.length).set(req);
    const n = ex.cce_call(p, req.length);
    return JSON.parse(utf8(new Uint8Array(ex.memory.buffer, ex.cce_answer(), n)));
  });
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
  // A trap on purpose, as a bug would make one: the recovery above, seen from outside.
  trap: () => invoke((ex) => ex.cce_trap()),
  // How many instances of the module the page has made (a trap or a grown memory adds one).
  instances: () => instances,
};
window.cce = api;
