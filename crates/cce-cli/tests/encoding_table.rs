//! One table of encodings, checked in both directions (after Cranelift's encoding tests). Each
//! row names an encoder, the fields given to `cce encode`, the words the study's (or the public
//! driver's) formula gives for them — worked by hand in the row's comment, never taken from
//! our encoder — and one line `cce decode` prints for those words. `cce encode` must print
//! exactly those words; `cce decode` of their bytes must give back every field given, by value,
//! and print the line (whitespace runs compared as one space).

mod common;

use common::{cce, ok};

struct Row {
    encoder: &'static str,
    /// (flag, argument, the value `cce decode --json` reports for the field: the field's raw
    /// bits, so a flag that sets a two-bit constant such as `use-const`'s 0x6000000 reads 3).
    fields: &'static [(&'static str, &'static str, u64)],
    words: &'static [u32],
    /// A line of `cce decode`'s text.
    line: &'static str,
}

const ROWS: &[Row] = &[
    // Study §2.6 FMA: sub 1 | in bf16 (6) << 8 | scale fp32 (10) << 12 | accum fp32 (10) << 16
    // | 0x2100000 = 0x1 | 0x600 | 0xA000 | 0xA0000 | 0x2100000.
    Row {
        encoder: "fma-meta-ctrl",
        fields: &[("sub", "1", 1), ("in-dt", "bf16", 6), ("scale-dt", "fp32", 10), ("accum-dt", "fp32", 10)],
        words: &[0x021A_A601],
        line: "in-dt [11:8] 6 (bf16) HIGH input dtype nibble [11:8] (study §2.6, §3.3)",
    },
    // Study §2.6 MIN/MAX: sub 3 (MIN) | const_dt 4 << 20 | in i16 (4) << 8 | out i16 << 12
    // | accum i16 << 16 | use_const 1 << 5 | 0x2000000 = 0x3 | 0x400000 | 0x400 | 0x4000
    // | 0x40000 | 0x20 | 0x2000000.
    Row {
        encoder: "min-max-meta-ctrl",
        fields: &[
            ("sub", "3", 3),
            ("use-const", "1", 1),
            ("in-dt", "i16", 4),
            ("out-dt", "i16", 4),
            ("accum-dt", "i16", 4),
            ("const-dt", "i16", 4),
        ],
        words: &[0x0244_4423],
        line: "const-dt [22:20] 4 (i16) HIGH",
    },
    // Study §2.6 ADD and §9.1's last source: out bf16 (6) << 12 | accum fp32 (10) << 16
    // | last 1 << 7 | 0x2000000 = 0x6000 | 0xA0000 | 0x80 | 0x2000000.
    Row {
        encoder: "add-meta-ctrl",
        fields: &[("last", "1", 1), ("out-dt", "bf16", 6), ("accum-dt", "fp32", 10)],
        words: &[0x020A_6080],
        line: "accum-dt [19:16] 10 (fp32) HIGH",
    },
    // Study §2.6 GCE/gradient: sub 5 | in bf16 (6) << 8 | scale u8 (3) << 12 | accum fp32 (10)
    // << 16 | last 1 << 7 | 0x2500000 = 0x5 | 0x600 | 0x3000 | 0xA0000 | 0x80 | 0x2500000.
    Row {
        encoder: "gradient-meta-ctrl",
        fields: &[
            ("sub", "5", 5),
            ("last", "1", 1),
            ("in-dt", "bf16", 6),
            ("scale-dt", "u8", 3),
            ("accum-dt", "fp32", 10),
        ],
        words: &[0x025A_3685],
        line: "scale-dt [15:12] 3 (u8) HIGH",
    },
    // Study §2.6 EXT: mid bf16 (6) << 12 | accum fp32 (10) << 16 | 0x2400000.
    Row {
        encoder: "ext-meta-ctrl",
        fields: &[("mid-dt", "bf16", 6), ("accum-dt", "fp32", 10)],
        words: &[0x024A_6000],
        line: "mid-dt [15:12] 6 (bf16) HIGH",
    },
    // Public driver udma_m2m.c: a plain copy's meta_ctrl 0x01080003 (last block, first block,
    // copy source data), 0x05080003 with the write barrier (bit 26) on a copy's last chunk.
    Row {
        encoder: "copy-meta-ctrl",
        fields: &[
            ("last-block", "1", 1),
            ("first-block", "1", 1),
            ("copy-source-data", "1", 1),
            ("write-barrier", "1", 1),
        ],
        words: &[0x0508_0003],
        line: "write-barrier [26] 1 HIGH write barrier, CME meta_ctrl bit 26 (public driver udma_m2m.c; GAPS.md §12)",
    },
    // Study §2.3 and §9.2's BD[0]: W0 = 0x800000 (meta_idx 0); W1 = sub 1 | 0x2100000;
    // W2 = a_sel input (1) << 24 | b_sel scale (2) << 26 | c_sel stored (0) << 28;
    // W3 = 0.5f = 0x3F000000.
    Row {
        encoder: "fma-descriptor",
        fields: &[
            ("sub", "1", 1),
            ("a-sel", "input", 1),
            ("b-sel", "scale", 2),
            ("c-sel", "stored", 0),
            ("scale", "0.5", 0x3F00_0000),
        ],
        words: &[0x0080_0000, 0x0210_0001, 0x0900_0000, 0x3F00_0000],
        line: "scale W3[31:0] 0x3f000000 (0.5) HIGH W3: the per-source fp32 scale (study §2.3, §3.2)",
    },
    // Study §2.4: W0 = 0x800000; with use_const, W1 = (const_dt 4 & 7) << 20 | 0x6000000;
    // W2 = length 992 (0x3E0) | 0x2000000; W3 = the constant 5.
    Row {
        encoder: "min-max-descriptor",
        fields: &[("const-dt", "i16", 4), ("use-const", "1", 3), ("length", "992", 992), ("constant", "5", 5)],
        words: &[0x0080_0000, 0x0640_0000, 0x0200_03E0, 0x0000_0005],
        line: "length W2[23:0] 992 HIGH",
    },
    // Study §2.5: seed_init W0 |= 0x800000; seed enabled, W1 = 0x6000000; the seed in W3 (MODEL).
    Row {
        encoder: "seed-init-descriptor",
        fields: &[("seed-en", "1", 3), ("seed", "7", 7)],
        words: &[0x0080_0000, 0x0600_0000, 0, 7],
        line: "seed-en W1[26:25] 3 (set: true) HIGH W1 = 0x6000000 when the seed is loaded (study §2.5)",
    },
    // Public driver udma.h: M2S len_ctrl length [15:0] 4096 | ring id 1 << 24 | FIRST 1 << 26
    // | LAST 1 << 27 | INT_EN 1 << 28 = 0x1000 | 0x1000000 | 0x4000000 | 0x8000000 | 0x10000000;
    // meta_ctrl the copy default; buf_ptr 0x1000.
    Row {
        encoder: "m2s-data",
        fields: &[
            ("length", "4096", 4096),
            ("ring-id", "1", 1),
            ("first", "1", 1),
            ("last", "1", 1),
            ("int-en", "1", 1),
            ("meta-ctrl", "0x01080003", 0x0108_0003),
            ("buf-ptr-lo", "0x1000", 0x1000),
        ],
        words: &[0x1D00_1000, 0x0108_0003, 0x0000_1000, 0],
        line: "int-en W0[28] 1 MED",
    },
    // Public driver udma.h: an S2M carries only length, ring id and INT_EN: 0x1000 | 1 << 24
    // | 1 << 28; buf2_ptr_lo 0; buf1_ptr 0x2000.
    Row {
        encoder: "s2m-data",
        fields: &[("length", "4096", 4096), ("ring-id", "1", 1), ("int-en", "1", 1), ("buf1-ptr-lo", "0x2000", 0x2000)],
        words: &[0x1100_1000, 0, 0x0000_2000, 0],
        line: "ring-id W0[25:24] 1 MED",
    },
];

fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_row_encodes_to_its_words_and_decodes_to_its_fields() {
    for row in ROWS {
        let flags: Vec<String> = row.fields.iter().map(|(flag, _, _)| format!("--{flag}")).collect();
        let mut args = vec!["encode", row.encoder];
        for ((_, arg, _), flag) in row.fields.iter().zip(&flags) {
            args.extend([flag.as_str(), arg]);
        }
        let encoded = ok(&args);
        let words: Vec<u32> = encoded["words"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap() as u32).collect();
        assert_eq!(words, row.words, "{}: encode", row.encoder);
        // Decode the formula's words, not the encoder's.
        let hex: String = row.words.iter().flat_map(|w| w.to_le_bytes()).map(|b| format!("{b:02x}")).collect();
        let decoded = ok(&["decode", row.encoder, &hex]);
        for (flag, _, value) in row.fields {
            assert_eq!(decoded["fields"][*flag]["value"].as_u64(), Some(*value), "{}: decode {flag}", row.encoder);
        }
        let out = cce(&["decode", row.encoder, &hex]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.lines().any(|l| squeeze(l).starts_with(&squeeze(row.line))),
            "{}: no line `{}` in\n{text}",
            row.encoder,
            row.line
        );
    }
}
