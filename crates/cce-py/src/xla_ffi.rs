//! The XLA FFI handler behind `cce.jax`: each device's `psum` of a jitted `shard_map` calls it
//! with its shard; the devices of one call meet here, in Rust, without the GIL. The device that
//! brings the last shard runs the CCE all-reduce (cce-api, as `cce.allreduce`); every device
//! copies its rank's output into XLA's result buffer.
//!
//! The C structs are those of XLA's FFI C API (`xla/ffi/api/c_api.h`, API version 0.3, as
//! jaxlib ships it); `python/cce/jax.py` registers the handler with `jax.ffi` from its address.
//!
//! Guarantees: a call never panics into XLA (a panic becomes an FFI error naming it a bug); a
//! device that does not arrive within the call's timeout ends every waiting device's call with
//! an error naming it, and the meeting is dropped; a bad attribute, dtype or size is an FFI
//! error with the message the Python front would raise.
#![allow(unsafe_code, reason = "the C ABI of XLA's FFI: every unsafe block says why it holds")]

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use cce_api::AllreduceParams;

// --- The C API's structs (xla/ffi/api/c_api.h) -------------------------------------------------

#[repr(C)]
struct ExtensionBase {
    struct_size: usize,
    kind: i32,
    next: *mut ExtensionBase,
}

/// `XLA_FFI_Extension_Metadata`: XLA asks for the handler's API version and traits.
const EXTENSION_METADATA: i32 = 1;
/// `XLA_FFI_ExecutionStage_EXECUTE`.
const STAGE_EXECUTE: i32 = 3;
/// `XLA_FFI_AttrType_STRING`.
const ATTR_STRING: i32 = 4;
/// `XLA_FFI_Error_Code_INVALID_ARGUMENT`, `_DEADLINE_EXCEEDED`, `_INTERNAL`.
const INVALID_ARGUMENT: i32 = 3;
const DEADLINE_EXCEEDED: i32 = 4;
const INTERNAL: i32 = 13;
/// The FFI API version of the headers these structs follow.
const API_MAJOR: i32 = 0;
const API_MINOR: i32 = 3;

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    major: i32,
    minor: i32,
}

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
    state_type_id: i64,
}

#[repr(C)]
struct MetadataExtension {
    base: ExtensionBase,
    metadata: *mut Metadata,
}

#[repr(C)]
struct Buffer {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    dtype: i32,
    data: *mut c_void,
    rank: i64,
    dims: *const i64,
}

#[repr(C)]
struct ByteSpan {
    ptr: *const c_char,
    len: usize,
}

#[repr(C)]
struct List {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const i32,
    items: *const *mut c_void,
}

#[repr(C)]
struct Attrs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    size: i64,
    types: *const i32,
    names: *const *const ByteSpan,
    attrs: *const *mut c_void,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    message: *const c_char,
    errc: i32,
}

/// The head of `XLA_FFI_Api`: only its first function is called.
#[repr(C)]
struct Api {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api_version: ApiVersion,
    internal_api: *const c_void,
    error_create: Option<unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void>,
}

#[repr(C)]
struct CallFrame {
    struct_size: usize,
    extension_start: *mut ExtensionBase,
    api: *const Api,
    ctx: *mut c_void,
    stage: i32,
    args: List,
    rets: List,
    attrs: Attrs,
    future: *mut c_void,
}

/// XLA's dtype codes (`XLA_FFI_DataType`) the handler takes, with cce's names.
const DTYPES: [(i32, &str); 15] = [
    (2, "i8"),
    (3, "i16"),
    (4, "i32"),
    (5, "i64"),
    (6, "u8"),
    (7, "u16"),
    (8, "u32"),
    (9, "u64"),
    (10, "fp16"),
    (11, "fp32"),
    (16, "bf16"),
    (19, "fp8e5"),
    (20, "fp8e4fn"),
    (28, "fp8e4"),
    (29, "fp8e3"),
];

/// The handler's address, for `jax.ffi.register_ffi_target` (through ctypes).
pub(crate) fn handler_address() -> usize {
    cce_allreduce_ffi as *const () as usize
}

/// `XLA_FFI_Handler`: see the module doc.
extern "C" fn cce_allreduce_ffi(frame: *mut CallFrame) -> *mut c_void {
    if frame.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: XLA passes a valid call frame that outlives the call; it is read, and the
    // metadata it points to written, only during the call.
    let frame = unsafe { &*frame };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as above; a non-null extension starts with an `XLA_FFI_Extension_Base`.
        if !frame.extension_start.is_null() && unsafe { (*frame.extension_start).kind } == EXTENSION_METADATA {
            // SAFETY: an extension of this type is an `XLA_FFI_Metadata_Extension` whose
            // `metadata` XLA owns for the call.
            unsafe { write_metadata(frame.extension_start.cast::<MetadataExtension>()) };
            return Ok(());
        }
        if frame.stage != STAGE_EXECUTE {
            return Ok(());
        }
        // SAFETY: in the execute stage XLA's call frame holds the arguments, results and
        // attributes the call was lowered with; `run` checks their count, kinds and sizes.
        unsafe { run(frame) }
    }));
    match outcome {
        Ok(Ok(())) => std::ptr::null_mut(),
        Ok(Err((code, message))) => error(frame, code, &message),
        Err(_) => error(frame, INTERNAL, "internal error in cce's XLA handler (a bug, please report it)"),
    }
}

/// # Safety
/// `ext` points to XLA's metadata extension for this call.
unsafe fn write_metadata(ext: *mut MetadataExtension) {
    // SAFETY: the caller's promise; XLA sized `metadata` for the version it asks about.
    let metadata = unsafe { &mut *(*ext).metadata };
    metadata.api_version = ApiVersion {
        struct_size: std::mem::size_of::<ApiVersion>(),
        extension_start: std::ptr::null_mut(),
        major: API_MAJOR,
        minor: API_MINOR,
    };
    metadata.traits = 0;
}

fn error(frame: &CallFrame, code: i32, message: &str) -> *mut c_void {
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    let mut args = ErrorCreateArgs {
        struct_size: std::mem::size_of::<ErrorCreateArgs>(),
        extension_start: std::ptr::null_mut(),
        message: text.as_ptr(),
        errc: code,
    };
    // SAFETY: `api` is XLA's function table for this call; `XLA_FFI_Error_Create` copies the
    // message into the error it returns, so `text` may be dropped afterwards.
    match unsafe { frame.api.as_ref().and_then(|a| a.error_create) } {
        // SAFETY: as above; `args` is a valid `XLA_FFI_Error_Create_Args`.
        Some(create) => unsafe { create(&mut args) },
        None => std::ptr::null_mut(),
    }
}

type Failure = (i32, String);

fn bad(message: impl Into<String>) -> Failure {
    (INVALID_ARGUMENT, message.into())
}

/// # Safety
/// `frame` is XLA's call frame in the execute stage.
unsafe fn run(frame: &CallFrame) -> Result<(), Failure> {
    if frame.args.size != 2 || frame.rets.size != 1 {
        return Err(bad("cce.jax: the handler takes a shard and a device index and returns one array"));
    }
    // SAFETY: XLA's lists hold `size` entries, and every argument and result of this handler
    // is a buffer (the only kind the FFI has).
    let (shard, device, out) = unsafe {
        (
            &*(*frame.args.items).cast::<Buffer>(),
            &*(*frame.args.items.add(1)).cast::<Buffer>(),
            &*(*frame.rets.items).cast::<Buffer>(),
        )
    };
    // SAFETY: the attribute list holds `size` names, kinds and values.
    let config = unsafe { string_attr(&frame.attrs, "config") }.ok_or_else(|| bad("cce.jax: no config attribute"))?;
    let call = Call::parse(&config)?;
    let dtype = DTYPES
        .iter()
        .find(|(code, _)| *code == shard.dtype)
        .map(|(_, name)| *name)
        .ok_or_else(|| bad(format!("cce.jax: XLA dtype {} is not a CCE dtype", shard.dtype)))?;
    if out.dtype != shard.dtype || device.dtype != 4 {
        return Err(bad("cce.jax: the result must have the shard's dtype and the device index be int32"));
    }
    // SAFETY: a buffer's `dims` holds `rank` sizes.
    let elems = unsafe { elements(shard) }?;
    if unsafe { elements(out) }? != elems {
        return Err(bad("cce.jax: the result must have the shard's shape"));
    }
    let size = cce_api::dtype(dtype).map_err(|e| bad(crate::errors::api_message(&e)))?.bytes().max(1);
    let nbytes = elems * usize::from(size);
    if nbytes == 0 {
        return Ok(()); // nothing to reduce (every device of the call sees the same shape)
    }
    // SAFETY: XLA's buffers hold `elems` elements of their dtype (the int32 index: one).
    let (input, index) = unsafe {
        (std::slice::from_raw_parts(shard.data.cast::<u8>().cast_const(), nbytes), *device.data.cast::<i32>())
    };
    let index =
        usize::try_from(index).ok().filter(|&i| i < call.ranks).ok_or_else(|| bad("cce.jax: bad device index"))?;
    let output = meet(&call, dtype, index, input.to_vec())?;
    if output.len() != nbytes {
        return Err((INTERNAL, "cce.jax: the all-reduce returned a different size".into()));
    }
    // SAFETY: the result buffer holds `nbytes` bytes, and XLA gives it to this call alone.
    unsafe { std::ptr::copy_nonoverlapping(output.as_ptr(), out.data.cast::<u8>(), nbytes) };
    Ok(())
}

/// # Safety
/// `b.dims` holds `b.rank` sizes.
unsafe fn elements(b: &Buffer) -> Result<usize, Failure> {
    let rank = usize::try_from(b.rank).map_err(|_| bad("cce.jax: negative rank"))?;
    // SAFETY: the caller's promise.
    let dims = if rank == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(b.dims, rank) } };
    dims.iter()
        .try_fold(1usize, |n, &d| usize::try_from(d).ok().and_then(|d| n.checked_mul(d)))
        .ok_or_else(|| bad("cce.jax: bad shape"))
}

/// # Safety
/// `attrs` is XLA's attribute list for this call.
unsafe fn string_attr(attrs: &Attrs, name: &str) -> Option<String> {
    let n = usize::try_from(attrs.size).ok()?;
    (0..n).find_map(|i| {
        // SAFETY: the list holds `n` entries; names are byte spans, and a STRING attribute's
        // value is a byte span too.
        unsafe {
            let key = &**attrs.names.add(i);
            let key = std::slice::from_raw_parts(key.ptr.cast::<u8>(), key.len);
            if key != name.as_bytes() || *attrs.types.add(i) != ATTR_STRING {
                return None;
            }
            let value = &*(*attrs.attrs.add(i)).cast::<ByteSpan>();
            Some(String::from_utf8_lossy(std::slice::from_raw_parts(value.ptr.cast::<u8>(), value.len)).into_owned())
        }
    })
}

// --- One call's options (the `config` attribute python/cce/jax.py writes) --------------------

/// `key=value` pairs separated by `;`: position, ranks, timeout (seconds), algo, op, rounding,
/// seed (`explicit:S` or `derive:BASE`), arch, accum, compress, ranks_per_node, check, nodes,
/// intra, inter (empty values: not given).
struct Call {
    position: u64,
    ranks: usize,
    timeout: Duration,
    algo: String,
    op: String,
    rounding: String,
    seed: Seed,
    arch: u64,
    accum: Option<String>,
    compress: Option<String>,
    ranks_per_node: Option<u64>,
    check: String,
    /// A hierarchy's nodes, intra- and inter-node algorithms (`cce.allreduce`'s topology).
    topology: crate::allreduce::Topology,
}

enum Seed {
    Explicit(u64),
    Derived(u64),
}

impl Call {
    fn parse(config: &str) -> Result<Call, Failure> {
        let map: HashMap<&str, &str> = config.split(';').filter_map(|kv| kv.split_once('=')).collect();
        let get = |k: &str| map.get(k).copied().filter(|v| !v.is_empty());
        let num = |k: &str| -> Result<u64, Failure> {
            get(k)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(format!("cce.jax: config {k} missing or not a number")))
        };
        let seed = match get("seed").and_then(|s| s.split_once(':')) {
            Some(("explicit", s)) => Seed::Explicit(s.parse().map_err(|_| bad("cce.jax: bad seed"))?),
            Some(("derive", s)) => Seed::Derived(s.parse().map_err(|_| bad("cce.jax: bad seed"))?),
            _ => return Err(bad("cce.jax: config seed missing")),
        };
        let timeout: f64 = get("timeout")
            .and_then(|v| v.parse().ok())
            .filter(|t: &f64| *t >= 0.0)
            .ok_or_else(|| bad("cce.jax: bad timeout"))?;
        Ok(Call {
            position: num("position")?,
            ranks: usize::try_from(num("ranks")?).map_err(|_| bad("cce.jax: bad ranks"))?,
            timeout: Duration::from_secs_f64(timeout),
            algo: get("algo").unwrap_or("ring").to_string(),
            op: get("op").unwrap_or("add").to_string(),
            rounding: get("rounding").unwrap_or("rne").to_string(),
            seed,
            arch: get("arch").map_or(Ok(3), |_| num("arch"))?,
            accum: get("accum").map(str::to_string),
            compress: get("compress").map(str::to_string),
            ranks_per_node: get("ranks_per_node").map(|_| num("ranks_per_node")).transpose()?,
            check: get("check").unwrap_or("none").to_string(),
            topology: (
                get("nodes").map(|_| num("nodes")).transpose()?,
                get("intra").map(str::to_string),
                get("inter").map(str::to_string),
                None,
            ),
        })
    }

    /// The stochastic-rounding seed of run `step` (docs/MODEL.md C18).
    fn seed(&self, step: u64) -> u64 {
        match self.seed {
            Seed::Explicit(s) => s,
            Seed::Derived(base) if self.rounding.eq_ignore_ascii_case("sr") => {
                cce_api::collective::framework_seed(base, self.position, step)
            }
            Seed::Derived(_) => 0,
        }
    }

    fn params(&self, dtype: &str, step: u64) -> Result<AllreduceParams, Failure> {
        let keywords = (&*self.algo, &*self.op, dtype, self.accum.as_deref(), &*self.rounding, &*self.check);
        let mut p = crate::allreduce::params(
            self.ranks as u64,
            keywords,
            self.seed(step),
            self.arch,
            self.compress.as_deref(),
            self.ranks_per_node,
            None,
        )
        .map_err(|e| bad(crate::errors::api_message(&e)))?;
        crate::allreduce::with_topology(&mut p, self.topology.clone())
            .map_err(|e| bad(crate::errors::api_message(&e)))?;
        Ok(p)
    }
}

// --- The meeting ----------------------------------------------------------------------------

struct Meeting {
    shards: Vec<Option<Vec<u8>>>,
    /// Every device arrived and the last one runs the all-reduce: no one times out any more.
    computing: bool,
    result: Option<Result<Vec<Vec<u8>>, Failure>>,
    left: usize,
}

#[derive(Default)]
struct Table {
    meetings: HashMap<(u64, u64), Meeting>,
    /// Runs so far of (position, device): the step of the device's next run.
    runs: HashMap<(u64, usize), u64>,
}

fn table() -> &'static (Mutex<Table>, Condvar) {
    static TABLE: OnceLock<(Mutex<Table>, Condvar)> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// Device `device`'s output of its next run of `call`: see the module doc.
fn meet(call: &Call, dtype: &str, device: usize, shard: Vec<u8>) -> Result<Vec<u8>, Failure> {
    let (lock, bell) = table();
    let mut t = lock.lock().unwrap_or_else(PoisonError::into_inner);
    let step = {
        let runs = t.runs.entry((call.position, device)).or_insert(0);
        *runs += 1;
        *runs - 1
    };
    let key = (call.position, step);
    let m = t.meetings.entry(key).or_insert_with(|| Meeting {
        shards: vec![None; call.ranks],
        computing: false,
        result: None,
        left: call.ranks,
    });
    if let Some(Err(e)) = &m.result {
        return Err(e.clone()); // the call already failed: a late device fails with it
    }
    m.shards[device] = Some(shard);
    if m.shards.iter().all(Option::is_some) {
        m.computing = true;
        let shards: Vec<Vec<u8>> = m.shards.iter_mut().map(|s| s.take().unwrap_or_default()).collect();
        drop(t);
        let result = call.params(dtype, step).and_then(|p| {
            cce_api::allreduce_owned(&p, shards)
                .map(|r| r.outcome.outputs)
                .map_err(|e| bad(crate::errors::api_message(&e)))
        });
        t = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = t.meetings.get_mut(&key) {
            m.result = Some(result);
        }
        bell.notify_all();
    } else {
        let deadline = Instant::now() + call.timeout;
        loop {
            match t.meetings.get_mut(&key) {
                Some(m) if m.result.is_some() => break,
                Some(m) => {
                    let now = Instant::now();
                    if now >= deadline && !m.computing {
                        // The call failed. Every device that came takes the same error (the last
                        // to leave drops the meeting); a device arriving later fails with it.
                        let missing: Vec<usize> = (0..call.ranks).filter(|&r| m.shards[r].is_none()).collect();
                        m.left = call.ranks - missing.len();
                        m.result = Some(Err((
                            DEADLINE_EXCEEDED,
                            format!(
                                "cce.jax: device(s) {missing:?} of the axis did not bring their shards to call {} (run {step}) within {} s",
                                call.position,
                                call.timeout.as_secs_f64()
                            ),
                        )));
                        bell.notify_all();
                        break;
                    }
                    let wait = if m.computing { Duration::from_secs(1) } else { deadline - now };
                    t = bell.wait_timeout(t, wait).unwrap_or_else(PoisonError::into_inner).0;
                }
                None => return Err((INTERNAL, "cce.jax: the call's meeting ended".into())),
            }
        }
    }
    let m = t.meetings.get_mut(&key).ok_or_else(|| (INTERNAL, "cce.jax: the call's meeting ended".to_string()))?;
    m.left -= 1;
    let out = match &mut m.result {
        Some(Ok(outs)) => Ok(std::mem::take(&mut outs[device])),
        Some(Err(e)) => Err(e.clone()),
        None => Err((INTERNAL, "cce.jax: no result".to_string())),
    };
    if m.left == 0 {
        t.meetings.remove(&key);
    }
    out
}
