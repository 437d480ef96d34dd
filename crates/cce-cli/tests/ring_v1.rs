//! Ring dumps written by the previous version (version 1, whose S2M descriptors carry FIRST /
//! LAST) still load: `cce disasm` and `cce run` read them as version 2. The fixtures are files
//! that version wrote (`tests/fixtures/v1/`, from the fuzz seed corpus of commit 13a56a5).

mod common;

use common::{cce, ok, tmp};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/v1/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_fixtures_are_version_1_with_first_last_on_the_rx_side() {
    for name in ["add.ring", "fma.ring", "min.ring"] {
        let b = std::fs::read(fixture(name)).unwrap();
        assert_eq!(&b[..10], b"CCERING\0\x01\x00", "{name}: a version-1 dump");
        // The last rx descriptor of the file (before the checksum) has LAST (bit 27) set.
        let w0 = u32::from_le_bytes(b[b.len() - 24..b.len() - 20].try_into().unwrap());
        assert_ne!(w0 & 1 << 27, 0, "{name}: its S2M descriptors carry LAST");
    }
}

#[test]
fn version_1_dumps_disassemble_without_a_fault() {
    // add: two ADD packets; fma: one FMA combo packet with two destinations; min: two
    // clamped MIN packets with a seed-init each.
    for (name, packets) in [("add.ring", 2), ("fma.ring", 1), ("min.ring", 2)] {
        let v = ok(&["disasm", &fixture(name)]);
        for q in v["queues"].as_array().unwrap() {
            assert!(q["fault"].is_null(), "{name}: {}", q["fault"]);
            assert_eq!(q["packets"], packets, "{name}");
        }
    }
}

/// The version-1 ADD dump (3 bf16 sources at 0x1000, 0x2000, 0x3000, 3000 elements, into
/// 0x9000) runs exactly as the same rings built by this version: same listing, same bytes out.
#[test]
fn a_version_1_dump_runs_as_this_version_builds_it() {
    let new = tmp("v2-add.ring");
    let new = new.to_str().unwrap();
    let o = cce(&[
        "build", "--arch", "3", "--op", "add", "--in", "bf16", "--accum", "fp32", "--out", "bf16", "--elems", "3000",
        "--src", "0x1000", "0x2000", "0x3000", "--dst", "0x9000", "-o", new,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let old = fixture("add.ring");
    assert_eq!(ok(&["disasm", &old])["queues"], ok(&["disasm", new])["queues"]);
    // Sources: one region 0x1000..0x5770 of distinct bf16 values (the sources overlap there).
    let mem = tmp("v1-mem.bin");
    let words: Vec<u8> = (0..0x4770u32 / 2).flat_map(|i| ((0x3c00 + i % 0x300) as u16).to_le_bytes()).collect();
    std::fs::write(&mem, &words).unwrap();
    let load = format!("0x1000={}", mem.display());
    let mut outs = Vec::new();
    for (ring, out) in [(old.as_str(), "v1-out.bin"), (new, "v2-out.bin")] {
        let out = tmp(out);
        let dump = format!("0x9000:6000={}", out.display());
        let o = cce(&["run", ring, "--load", &load, "--dump", &dump]);
        assert_eq!(o.status.code(), Some(0), "{ring}: {}", String::from_utf8_lossy(&o.stderr));
        outs.push(std::fs::read(out).unwrap());
    }
    assert_eq!(outs[0], outs[1]);
    assert!(outs[0].iter().any(|&b| b != 0), "the run wrote the destination");
}
