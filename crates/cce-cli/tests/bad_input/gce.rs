//! Matrix rows for GCE (see `bad_input.rs`): gradient packets and the EXT + GCE combo whose
//! rings, headers or buffers break a rule. Ring rows run `cce run` over a crafted copy of a
//! built ring, with memory loaded from scratch files, and fault before any write (exit 1);
//! build rows are refused (exit 2).

use cce_format::gce::{GceHeader, fnv1a32};

use crate::common::tmp;
use crate::{Row, sv};

/// Messages no command line can produce, with the reason (matched as template prefixes).
pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    (
        "gce input has {len} bytes",
        "the engine gives compress_le the f32 bytes it widened itself, four per element, so the length is always \
         whole values",
    ),
    (
        "gce output has {got} bytes",
        "the engine gives decompress_le a buffer it sized itself, four bytes per payload byte",
    ),
    (
        "bad gradient descriptor",
        "a descriptor is only taken as a gradient descriptor when tx_kinds found GradientDescriptor::parse \
         succeeds (otherwise \"does not fit its place\"), so the second parse cannot fail",
    ),
    (
        "gce header needs {HEADER_BYTES} bytes",
        "the engine reads all 32 header bytes from mapped memory (an unmapped header is \"invalid decompression \
         header addr\") before it decodes them",
    ),
    (
        "gce block size is 0",
        "the engine passes the block of a header it decoded (32, 64, 128 or 256); tests in cce-numerics' gce.rs \
         check the refusal",
    ),
    (
        "gce scale table has {got} bytes",
        "the engine sizes the scale table from the header it decoded; cce-numerics' gce.rs tests the refusal",
    ),
    ("gce payload has {got} bytes", "the engine reads one payload byte per element of the packet"),
    ("gce output has {got} values", "the engine sizes the output from the packet's elements"),
    (
        "gce: ",
        "cce_job::gradient is called by the Python package only (cce.gce_compress / gce_decompress); \
         tests/python/test_gce.py checks a refusal",
    ),
];

/// An edit of a header's bytes.
type HeaderEdit = fn(&mut Vec<u8>);

const HEADER: u64 = 0x3_0000;
const ELEMS: usize = 64;

/// `cce build --arch 3 <args> -o <tmp(name)>` (packets.rs's builder); the dump's path.
fn built(name: &str, args: &str) -> String {
    crate::packets::built(name, args);
    tmp(name).display().to_string()
}

/// A copy of the dump at `path` with `edit` applied to its tx descriptors (packets.rs's
/// crafting: counts, doorbells and the checksum follow).
fn crafted(name: &str, path: &str, edit: impl FnOnce(&mut Vec<[u32; 4]>)) -> String {
    crate::packets::crafted(name, &std::fs::read(path).unwrap(), |tx, _| edit(tx))
}

/// A scratch file with `bytes`; its path.
fn file(name: &str, bytes: &[u8]) -> String {
    let p = tmp(name);
    std::fs::write(&p, bytes).unwrap();
    p.display().to_string()
}

/// A valid header (and scale table) for the 64-element payload, with `edit` applied.
fn header(edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let h = GceHeader::new(cce_format::SdmaDtype::Bf16, ELEMS as u32, 32).unwrap();
    let mut b = h.encode().to_vec();
    b.extend_from_slice(&[127, 127]);
    edit(&mut b);
    b
}

/// The dumps and files the rows run (scratch files); each group of rows takes its own copy of
/// the ones it names.
#[derive(Clone)]
struct GceFiles {
    /// A bf16 compress packet (payload at 0x20000, header at 0x30000).
    compress: String,
    /// The matching decompress packet into bf16 at 0x40000.
    decompress: String,
    /// An EXT + GCE combo: a reduce compressed.
    combo: String,
    /// The compress packet's source values.
    src: String,
    /// The decompress packet's payload.
    payload: String,
}

/// Builds the dumps and writes the files of [`GceFiles`].
fn gce_files() -> GceFiles {
    let bf16 = "--in bf16 --accum fp32 --out-dtype fp8e5";
    let compress =
        built("g-c.ring", &format!("--op gce-compress {bf16} --elems 64 --src 0x10000 --dst 0x20000 --header 0x30000"));
    let decompress = built(
        "g-d.ring",
        "--op gce-decompress --in fp8e5 --accum fp32 --out-dtype bf16 --elems 64 --src 0x20000 --dst 0x40000 --header 0x30000",
    );
    let combo = built(
        "g-x.ring",
        "--op add --in bf16 --accum fp32 --out-dtype fp32 --elems 64 --src 0x10000 --dst 0x20000 --header 0x30000",
    );
    let src = file("g-src.bin", &[0x3f; 2 * ELEMS]);
    let payload = file("g-payload.bin", &[0x3c; ELEMS]);
    GceFiles { compress, decompress, combo, src, payload }
}

pub(crate) fn rows(rows: &mut Vec<Row>) {
    let g = gce_files();
    header_rows(&g, rows);
    convention_rows(&g, rows);
    builder_rows(rows);
}

/// The rows of the header (its address and contents) and the buffers.
fn header_rows(g: &GceFiles, rows: &mut Vec<Row>) {
    let GceFiles { compress, decompress, src, payload, .. } = g.clone();
    // `cce run` over `ring` with the payload, a header file and the output mapped.
    let decompress_run = |ring: &str, head: &str| {
        sv(&["run", ring, "--load", &format!("0x20000={payload}"), "--load", &format!("0x{HEADER:x}={head}")])
            .into_iter()
            .chain(sv(&["--dump", "0x40000:128=/dev/null"]))
            .collect::<Vec<String>>()
    };
    let fault = |want: &'static str| want;

    // The header's address: unmapped, when compressing and when decompressing.
    rows.push((
        sv(&["run", &compress, "--load", &format!("0x10000={src}"), "--dump", "0x20000:64=/dev/null"]),
        fault("invalid compression header addr 30000"),
        1,
    ));
    rows.push((
        sv(&["run", &decompress, "--load", &format!("0x20000={payload}"), "--dump", "0x40000:128=/dev/null"]),
        fault("invalid decompression header addr 30000"),
        1,
    ));
    // The header's contents, field by field (checked in byte order, the check last).
    let cases: [(&str, &'static str, HeaderEdit); 12] = [
        ("magic", "gce header magic is", |b| b[0] ^= 1),
        ("version", "gce header version 2 is not supported", |b| b[4] = 2),
        ("payload-dt", "gce header payload dtype 14 (fp8e4) is not fp8e5", |b| b[6] = 14),
        ("source-dt", "gce header source dtype 11 (fp32r) is not bf16", |b| b[7] = 11),
        ("count", "gce header element count is 0", |b| b[8..12].copy_from_slice(&[0; 4])),
        ("block", "gce header block elements 33 is not 32, 64, 128 or 256", |b| b[12] = 33),
        ("format", "gce header scale format 2 is not 1", |b| b[14] = 2),
        ("reserved", "gce header reserved byte is 1, expected 0", |b| b[15] = 1),
        ("offset", "gce header scale table offset 33 is not 32", |b| b[16] = 33),
        ("scales", "gce header scale count 9 is not ceil", |b| b[20] = 9),
        ("payload", "gce header payload bytes 9 is not the element count 64", |b| b[24] = 9),
        ("check", "gce header check 0x", |b| b[28] ^= 1),
    ];
    for (name, want, edit) in cases {
        let head = file(&format!("g-h-{name}.bin"), &header(edit));
        rows.push((decompress_run(&decompress, &head), fault(want), 1));
    }
    // A well-formed header for another element count.
    let head = file(
        "g-h-elems.bin",
        &header(|b| {
            b[8] = 65;
            b[20] = 3;
            b[24] = 65;
            let check = fnv1a32(&b[..28]);
            b[28..32].copy_from_slice(&check.to_le_bytes());
            b.push(127);
        }),
    );
    rows.push((
        decompress_run(&decompress, &head),
        fault("Failed to build decompression header: it holds 65 elements, the packet 64"),
        1,
    ));
    // The buffers: a decompress whose payload reads as u8, not fp8e5.
    let ok_head = file("g-h-ok.bin", &header(|_| {}));
    let u8_payload = crafted("g-u8.ring", &decompress, |tx| tx[1][1] = (tx[1][1] & !0xF00) | 0x300);
    rows.push((
        decompress_run(&u8_payload, &ok_head),
        fault("Failed to build buffer packet for gce op: decompressing reads one fp8e5 payload"),
        1,
    ));
}

/// The rows of the packet convention.
fn convention_rows(g: &GceFiles, rows: &mut Vec<Row>) {
    let GceFiles { decompress, combo, .. } = g.clone();
    let fault = |want: &'static str| want;
    // The packet convention: a gradient packet without its gradient descriptor; mode 3; a
    // seed-init in it; a second (trailing) gradient descriptor; a combo that decompresses.
    let no_gradient = crafted("g-nograd.ring", &decompress, |tx| {
        tx.remove(0);
    });
    rows.push((sv(&["run", &no_gradient]), fault("a gradient packet without its gradient descriptor"), 1));
    let mode3 = crafted("g-mode3.ring", &decompress, |tx| tx[0][1] = (tx[0][1] & !(7 << 29)) | (3 << 29));
    rows.push((
        sv(&["run", &mode3]),
        fault("gradient descriptor mode: the model knows compress (1) and decompress (2)"),
        1,
    ));
    let seeded = crafted("g-seed.ring", &decompress, |tx| tx.insert(0, [0x0080_0000, 0x0600_0000, 0, 42]));
    rows.push((sv(&["run", &seeded]), fault("a gradient packet takes no seed-init and no replication"), 1));
    let second = crafted("g-second.ring", &decompress, |tx| {
        let mut g = tx[0];
        g[2] |= 1 << 30;
        tx.push(g);
        tx.push([0x0080_0000, 0x24a0_0001, 0, 0x024a_a000]);
    });
    rows.push((sv(&["run", &second]), fault("a second gradient descriptor, or one after the replication"), 1));
    let combo_de = crafted("g-xde.ring", &combo, |tx| {
        let g = tx.iter().position(|w| w[1] & 0x0FFF_FFFF == 0x0650_0001).unwrap();
        tx[g][1] = (tx[g][1] & !(7 << 29)) | (2 << 29);
    });
    rows.push((
        sv(&["run", &combo_de]),
        fault("a gradient descriptor in an EXT combo compresses, and replication descriptors follow it"),
        1,
    ));
}

/// The rows of the builder.
fn builder_rows(rows: &mut Vec<Row>) {
    // The builder.
    let gb = |extra: &str| -> Vec<String> {
        let mut v = sv(&["build", "--arch", "3", "--elems", "64", "--src", "0x10000", "--accum", "fp32"]);
        v.extend(extra.split_whitespace().map(str::to_string));
        v
    };
    rows.push((
        gb("--op gce-compress --in bf16 --out-dtype fp8e5 --dst 0x20000"),
        "--op gce-compress: --header ADDR is required",
        2,
    ));
    rows.push((
        gb("--op gce-compress --in bf16 --out-dtype fp8e5 --dst 0x20000 0x28000 --header 0x30000"),
        "--op gce-compress: one --dst (the payload or the values)",
        2,
    ));
    rows.push((
        gb("--op gce-compress --in i32 --out-dtype fp8e5 --dst 0x20000 --header 0x30000"),
        "Failed to build buffer packet for gce op: the values must be bf16, fp16 or fp32",
        2,
    ));
}
