//! The library API without a command line: each entry point against the layer below it, the
//! text and JSON renderings of one listing against each other, and the error policy's fields.
//! `api/dtype_value.rs`: `cce value`'s library function on vectors checked by hand.

#[path = "api/dtype_value.rs"]
mod dtype_value;

use cce_api::params::{Algo, RedOp};
use cce_api::render::flag;
use cce_api::{
    AlgoChoice, AllreduceParams, ApiError, BuildOp, BuildParams, Decoded, ErrorKind, LoadProblem, NumType, OpOptions,
    ReduceOp, ReduceParams, RingSide, RoundingMode, SampleKind, SdmaDtype, dtype,
};
use cce_format::packet::DescKind;
use serde_json::{Value, json};

const BF16: SdmaDtype = SdmaDtype::Bf16;
const FP32: SdmaDtype = SdmaDtype::Fp32;

fn add_build(elems: u64, srcs: Vec<u64>, dsts: Vec<u64>) -> BuildParams {
    BuildParams::new(BuildOp::Add, (BF16, FP32, BF16), elems, srcs, dsts)
}

#[test]
fn encode_from_text_equals_encode_from_values() {
    let text =
        cce_api::encode("fma-descriptor", &[("a-sel", "input"), ("scale", "-0.5"), ("meta-idx", "0x7")]).unwrap();
    let values = cce_api::encode_values(
        "fma-descriptor",
        &[("a-sel", 1), ("scale", (-0.5f32).to_bits() as u64), ("meta-idx", 7)],
    )
    .unwrap();
    assert_eq!(text, values);
    assert_eq!(text.encoder, "fma-descriptor");
    // Decoding the words, or their hex, gives back the fields.
    let by_words = cce_api::decode_words("fma-descriptor", &text.words).unwrap();
    let by_hex = cce_api::decode("fma-descriptor", &text.bytes_hex).unwrap();
    assert_eq!(by_words, by_hex);
    let Decoded::Layout(d) = &by_hex else { panic!("not a layout: {by_hex:?}") };
    assert_eq!(d.reading.fields, text.fields);
    let field = |name: &str| d.reading.fields.iter().find(|f| f.name == name).unwrap();
    assert_eq!(field("a-sel").operand, Some("input"));
    assert_eq!(field("scale").float, Some(-0.5));
    assert_eq!(field("scale").value_text(), "0xbf000000 (-0.5)");
    assert!(d.reading.exact);
    // The JSON is the typed value's: fields by name, readable forms beside the raw value.
    let v = serde_json::to_value(&by_hex).unwrap();
    assert_eq!(v["fields"]["a-sel"]["operand"], "input");
    assert_eq!(v["fields"]["scale"]["float"], json!(-0.5));
    assert_eq!(v["exact"], true);
    assert_eq!(v["problem"], Value::Null);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "encoder",
            "words",
            "bytes_hex",
            "words_hex",
            "fields",
            "fixed",
            "exact",
            "problem",
            "unexplained_bits",
            "missing_fixed_bits",
            "source"
        ]
    );
    let enc = serde_json::to_value(&text).unwrap();
    let keys: Vec<&str> = enc.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["encoder", "words", "bytes_hex", "words_hex"]);
}

/// Every bits result: its JSON written directly (the CLI's line) and through
/// `serde_json::to_value` (Python's dicts) say the same, NaN and infinite scales included.
#[test]
fn bits_results_serialise_alike_directly_and_as_values() {
    fn same<T: serde::Serialize>(x: &T) {
        assert_eq!(serde_json::to_string(x).unwrap(), serde_json::to_value(x).unwrap().to_string());
    }
    for e in cce_api::encoders() {
        let encoded = cce_api::encode(e.name, &[]).unwrap();
        same(&encoded);
        same(&cce_api::decode_words(e.name, &encoded.words).unwrap());
        same(&cce_api::decode_words(e.name, &vec![0xffff_ffff; e.words as usize]).unwrap());
        same(&cce_api::decode_words(e.name, &vec![0x7fc0_0001; e.words as usize]).unwrap());
        same(&cce_api::decode_words(e.name, &vec![0x3dcc_cccd; e.words as usize]).unwrap());
    }
    for w in [0, 0x0200_0000, 0x7f80_0000, 0xffff_ffff] {
        same(&cce_api::decode_words("meta-ctrl", &[w]).unwrap());
    }
    let mut info = [0x3dcc_cccd_u32; 35];
    info[3] = 0x7f80_0000;
    info[4] = 0xffc0_0000;
    same(&cce_api::decode_words("cce-info", &info).unwrap());
    same(&cce_api::tables());
    same(&cce_api::packet_size(BF16, 1000, 0, None).unwrap());
    same(&cce_api::dtype_gate(BF16, FP32, true));
}

#[test]
fn encode_refuses_as_the_cli_does() {
    let e = cce_api::encode("fma-meta-ctrl", &[("sub", "8")]).unwrap_err();
    assert_eq!(e.message_with(flag), "invalid value '8' for '--sub <N>': 8 does not fit 3 bits (0..=7)");
    let e = cce_api::encode("fma-meta-ctrl", &[("bogus", "1")]).unwrap_err();
    assert_eq!(e.message_with(flag), "unexpected argument '--bogus' found");
    assert!(cce_api::encode("no-such", &[]).unwrap_err().to_string().starts_with("unknown encoder 'no-such'"));
    assert_eq!(cce_api::encode_values("fma-meta-ctrl", &[("bogus", 1)]).unwrap_err().kind(), ErrorKind::BadInput);
    let e = cce_api::decode_words("fma-descriptor", &[1, 2]).unwrap_err();
    assert_eq!(e.to_string(), "fma-descriptor takes 4 words, got 2");
}

#[test]
fn encoder_fields_list_bits_tags_and_kinds() {
    let fields = cce_api::encoder_fields("min-max-meta-ctrl").unwrap();
    let const_dt = fields.iter().find(|f| f.name == "const-dt").unwrap();
    assert_eq!(const_dt.value, cce_api::ValueKind::Dtype3);
    assert_eq!(const_dt.parse("bf16"), Ok(6));
    assert!(const_dt.parse("fp32").unwrap_err().contains("3-bit"));
    assert!(const_dt.help().starts_with(&format!("{} [", const_dt.bits)));
    assert_eq!(cce_api::encoders().count(), 14);
    let Decoded::CceInfo(info) = cce_api::decode_words("cce-info", &[0; 35]).unwrap() else { panic!("not cce-info") };
    assert_eq!(info.num_sources, 0);
    assert_eq!(cce_api::tables().max_sources, 32);
}

#[test]
fn a_build_lists_the_same_from_its_rings_and_from_its_dump() {
    let p = BuildParams {
        op: BuildOp::Fma,
        opts: OpOptions { scales: vec![0.5], rounding: RoundingMode::Sr, seed: Some(9), ..OpOptions::default() },
        queue: 2,
        ..add_build(300, vec![0x1000, 0x8000], vec![0x10000])
    };
    let built = cce_api::build(&p).unwrap();
    let listing = cce_api::disasm(&built.file_bytes()).unwrap();
    assert_eq!(listing.arch, 3);
    assert_eq!(listing.queues.len(), 1);
    let q = &listing.queues[0];
    assert_eq!(q.to_json(), built.to_json());
    assert_eq!(q.queue, 2);
    let s = built.summary();
    assert_eq!(
        (s.packets, s.tx_descriptors as usize, s.rx_descriptors as usize),
        (q.packets.len() as u64, q.tx_descriptors, q.rx_descriptors)
    );
    // Every descriptor once, in program order, each in its packet; no fault.
    assert!(q.fault.is_none() && q.tx_rest.is_empty() && q.rx_rest.is_empty());
    let tx: Vec<usize> = q.tx().map(|d| d.index).collect();
    assert_eq!(tx, (0..q.tx_descriptors).collect::<Vec<_>>());
    for p in &q.packets {
        assert_eq!(p.packet.seed, Some(9));
        assert_eq!(p.tx.first().and_then(|d| d.kind), Some(DescKind::SeedInit));
        // A data descriptor's address is its source's.
        let data: Vec<u64> = p.tx.iter().filter_map(|d| d.data()).map(|(_, a)| a).collect();
        assert_eq!(data, p.packet.sources.iter().map(|s| s.addr).collect::<Vec<_>>());
        assert!(p.rx.iter().all(|d| d.ring == RingSide::Rx && d.meta_ctrl().is_none()));
    }
    let text = listing.to_text();
    assert!(text.starts_with("; cce ring dump v2, arch 3, 1 queue(s)\nqueue 2: ring "));
    assert!(text.contains(" packet 0: fma in=bf16 accum=fp32 out=bf16 elems="));
    assert!(text.contains(" sr-seed=9"));
    assert_eq!(text.lines().filter(|l| l.starts_with("  tx ")).count(), q.tx_descriptors);
}

#[test]
fn a_listing_keeps_the_fault_and_the_descriptors_after_it() {
    let built = cce_api::build(&add_build(8, vec![0x1000], vec![0x2000])).unwrap();
    let mut rings = built.rings.clone();
    // Drop the LAST bit of the only tx data descriptor: the packet never ends.
    let mut w0 = u32::from_le_bytes(rings.tx[0..4].try_into().unwrap());
    w0 &= !(1 << 27);
    rings.tx[0..4].copy_from_slice(&w0.to_le_bytes());
    let q = cce_api::QueueListing::of(&rings.queue(0), 3);
    let fault = q.fault.as_ref().expect("a fault");
    assert_eq!((fault.tx_start, fault.rx_start), (0, 0));
    assert!(q.packets.is_empty());
    assert_eq!(q.tx_rest.len(), 1);
    assert_eq!(q.tx_rest[0].kind, Some(DescKind::M2sData));
    assert!(!q.tx_rest[0].in_packet());
    let v = q.to_json();
    assert_eq!(v["fault"]["tx"], 0);
    assert_eq!(v["tx"][0]["kind"], "m2s-data");
    assert!(q.to_text().contains(" ; fault at tx 0 / rx 0: "));
    assert!(q.to_text().contains("s2m-data?"));
}

#[test]
fn build_checks_its_options_in_the_cli_words() {
    let bad = |p: BuildParams| cce_api::build(&p).unwrap_err().message_with(flag);
    let base = || add_build(64, vec![0x1000, 0x2000, 0x3000], vec![0x9000]);
    // An op is parsed by its type, its refusal after the flag the front names it by.
    assert_eq!(
        format!("--op {}", "sub".parse::<BuildOp>().unwrap_err()),
        "--op 'sub': expected add, fma, min, max, copy or transpose"
    );
    assert_eq!(
        bad(BuildParams { opts: OpOptions { scales: vec![2.0], ..OpOptions::default() }, ..base() }),
        "--scale is for --op fma only"
    );
    assert_eq!(
        bad(BuildParams {
            op: BuildOp::Fma,
            opts: OpOptions { scales: vec![1.0, 2.0], ..OpOptions::default() },
            ..base()
        }),
        "--scale: 2 scales for 3 sources (give one, or one per source)"
    );
    assert_eq!(
        bad(BuildParams { opts: OpOptions { seed: Some(1), ..OpOptions::default() }, ..base() }),
        "--seed is for --rounding sr"
    );
    assert_eq!(
        bad(BuildParams { queue: 16, ..base() }),
        "invalid value '16' for '--queue <QUEUE>': 16 does not fit 4 bits (0..=15)"
    );
    assert_eq!(
        bad(BuildParams { opts: OpOptions { constant: Some("1".into()), ..OpOptions::default() }, ..base() }),
        "a clamp constant is for MIN and MAX only"
    );
    assert_eq!(bad(BuildParams { op: BuildOp::Copy, ..base() }), "Unsupported CCE Op! 0");
}

fn bf16_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes()).collect()
}

#[test]
fn reduce_broadcasts_scales_and_refuses_a_wrong_count() {
    let a = bf16_bytes(&[1.0, 2.0, 3.0, 4.0]);
    let b = bf16_bytes(&[0.5, 0.5, 0.5, 0.5]);
    let fma = |scales: Vec<f32>| ReduceParams {
        opts: OpOptions { scales, ..OpOptions::default() },
        ..ReduceParams::new(ReduceOp::Fma, BF16, FP32, BF16)
    };
    let one = cce_api::reduce(&fma(vec![2.0]), &[&a, &b]).unwrap();
    let each = cce_api::reduce(&fma(vec![2.0, 2.0]), &[&a, &b]).unwrap();
    assert_eq!(one.outcome.outputs, each.outcome.outputs);
    assert_eq!(one.outcome.outputs[0], bf16_bytes(&[3.0, 5.0, 7.0, 9.0]));
    let none = cce_api::reduce(&fma(vec![]), &[&a, &b]).unwrap();
    let add = cce_api::reduce(&ReduceParams::new(ReduceOp::Add, BF16, FP32, BF16), &[&a, &b]).unwrap();
    assert_eq!(none.outcome.outputs, add.outcome.outputs);
    assert_eq!(add.to_json()["elements"], 4);
    let e = cce_api::reduce(&fma(vec![1.0, 2.0, 3.0]), &[&a, &b]).unwrap_err();
    assert_eq!(e.to_string(), "3 scales for 2 sources (give one, or one per source)");
    assert_eq!(e.exit_code(), 2);
    let e = cce_api::reduce(&ReduceParams { threads: 0, ..fma(vec![]) }, &[&a]).unwrap_err();
    assert_eq!(e.message_with(flag), "--threads must be at least 1");
    let e = "copy".parse::<ReduceOp>().unwrap_err();
    assert_eq!(format!("--op {e}"), "--op 'copy': expected add, fma, min or max");
}

#[test]
fn run_reports_queues_names_loads_by_index_and_faults_by_field() {
    let built = cce_api::build(&add_build(4, vec![0x1000, 0x2000], vec![0x3000])).unwrap();
    let file = built.file_bytes();
    let (a, b) = (bf16_bytes(&[1.0, 2.0, 3.0, 4.0]), bf16_bytes(&[1.0; 4]));
    let r = cce_api::run_ring(&file, &[(0x1000, &a), (0x2000, &b)], &[(0x3000, 8)], 1).unwrap();
    assert!(r.check().is_ok());
    assert_eq!(r.dumps, vec![bf16_bytes(&[2.0, 3.0, 4.0, 5.0])]);
    assert_eq!(r.queues[0].state_name(), "idle");
    assert_eq!(r.to_json()["queues"][0]["semaphore"], 1);

    let e = cce_api::run_ring(&file, &[(0x1000, &a), (0x1004, &b)], &[], 1).unwrap_err();
    match &e {
        ApiError::Load { index: 1, addr: 0x1004, problem: LoadProblem::Region { overlaps: Some(0), .. } } => {}
        other => panic!("{other:?}"),
    }
    let e = cce_api::run_ring(&file, &[(0x1000, &[])], &[], 1).unwrap_err();
    assert!(matches!(e, ApiError::Load { index: 0, problem: LoadProblem::Empty, .. }), "{e:?}");

    // No sources mapped: the queue faults; the run reports it, check() makes it an error.
    let r = cce_api::run_ring(&file, &[], &[(0x3000, 8)], 1).unwrap();
    let e = r.check().unwrap_err();
    assert_eq!((e.kind(), e.exit_code()), (ErrorKind::EngineFault, 1));
    let f = e.fault().expect("the fault");
    assert_eq!((f.queue, f.tx_index, f.rx_index), (0, 0, 0));
    assert!(e.to_string().starts_with("1 queue(s) faulted: queue 0: packet at tx descriptor 0"));
    assert!(matches!(cce_api::run_ring(b"CCERING", &[], &[], 1), Err(ApiError::RingFile(_))));
}

#[test]
fn convert_and_generate_resolve_names_as_the_cli() {
    let t = |name: &str| cce_api::num_type(name).unwrap();
    let g = cce_api::generate(t("bf16"), 64, 3, SampleKind::Uniform).unwrap();
    assert_eq!(
        g.data,
        cce_numerics::sample::sample(cce_numerics::NumType::Bf16, 64, 3, cce_numerics::sample::SampleKind::Uniform)
            .unwrap()
    );
    // Streamed in blocks (several rounds of the writer and the generating threads, a short
    // last one): the same bytes as the whole array.
    let n = 2_600_001;
    let request = cce_api::generation(t("bf16"), n, 11, SampleKind::Uniform).unwrap();
    let mut streamed = Vec::new();
    assert_eq!(request.write_to(&mut streamed).unwrap(), 2 * n);
    assert_eq!(streamed, request.clone().collect().unwrap().data);
    // A writer that fails part-way: its error, and nothing written after it.
    struct Full(usize);
    impl std::io::Write for Full {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0 == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::StorageFull, "full"));
            }
            let n = b.len().min(self.0);
            self.0 -= n;
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut full = Full(3 << 20);
    assert_eq!(request.write_to(&mut full).unwrap_err().kind(), std::io::ErrorKind::StorageFull);
    let f32s = cce_api::convert(t("bf16"), t("f32"), &g.data, RoundingMode::Rne, None, false, 2).unwrap();
    let back = cce_api::convert(t("fp32"), t("bf16"), &f32s, RoundingMode::Sr, Some(5), false, 1).unwrap();
    assert_eq!(back, g.data);
    let e = cce_api::convert(t("fp32"), t("bf16"), &[0; 7], RoundingMode::Rne, None, false, 1).unwrap_err();
    assert_eq!(e.to_string(), "7 bytes is not a multiple of the fp32 element size (4)");
    assert!(cce_api::num_type("f64").is_err());
    assert_eq!(
        format!("--values {}", "sine".parse::<SampleKind>().unwrap_err()),
        "--values 'sine': expected uniform, ramp or bits"
    );
    assert_eq!(t("f32"), NumType::F32);
    assert_eq!(dtype("bf16").unwrap(), BF16);
    assert!(dtype("bfloat16").unwrap_err().to_string().starts_with("unknown dtype 'bfloat16'"));
}

#[test]
fn allreduce_runs_and_reports_a_failed_rank_by_field() {
    let p = AllreduceParams::new(0, AlgoChoice::Algo(Algo::Ring), RedOp::Add, BF16);
    let inputs: Vec<Vec<u8>> = (0..4).map(|r| bf16_bytes(&[r as f32; 16])).collect();
    let r = cce_api::allreduce(&p, &inputs).unwrap();
    assert!(r.outcome.outputs.iter().all(|o| *o == bf16_bytes(&[6.0; 16])));
    let v = r.to_json();
    assert_eq!(v["ranks_identical"], true);
    assert_eq!(v["memory_bytes"], r.memory_bytes);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys[..5], ["ranks_identical", "max_abs_err", "max_rel_err", "max_ulp_err", "mean_ulp_err"]);
    let e = cce_api::allreduce(&AllreduceParams { fail: Some((1, 0)), ..p.clone() }, &inputs).unwrap_err();
    assert_eq!((e.kind(), e.exit_code(), e.rank_failure()), (ErrorKind::RankFailed, 1, Some((1, 0))));
    let e = cce_api::allreduce(&AllreduceParams { cce_rate: Some(-1.0), ..p.clone() }, &inputs).unwrap_err();
    assert_eq!(e.message_with(flag), "--cce-rate must be a positive number");
    let e = "tree".parse::<AlgoChoice>().unwrap_err();
    assert_eq!(
        format!("--algo {e}"),
        "--algo 'tree': expected ring, ring-2r2w, kangaring, mesh, rdh, hier, hier(INTRA/INTER) or auto"
    );
    assert_eq!(v["algo"], "ring");
    assert_eq!(keys[keys.len() - 2..], ["algo", "check"], "new keys come after the original ones");
    assert_eq!(v["check"], "exact");
    assert_eq!(cce_api::collective::sweep_counts("1:64", 4).unwrap(), vec![1, 2, 4, 8, 16]);
}

/// An S2M bit the sources read differently shows both readings in the listing (docs/MODEL.md
/// P15): bit 29 (strong-order, accepted) on every rx descriptor of a build.
#[test]
fn the_listing_shows_both_readings_of_s2m_bit_29() {
    use cce_format::ringfile::{QueueRings, RingFile};
    let built = cce_api::build(&add_build(300, vec![0x1000], vec![0x10000])).unwrap();
    let bytes = built.file_bytes();
    let file = RingFile::parse(&bytes).unwrap();
    let mut rx = file.queues[0].rx.to_vec();
    for d in rx.chunks_exact_mut(16) {
        d[3] |= 1 << 5; // len_ctrl bit 29
    }
    let q = QueueRings { rx: &rx, ..file.queues[0].clone() };
    let edited = RingFile { arch: file.arch, queues: vec![q] }.to_bytes();
    let text = cce_api::disasm(&edited).unwrap().to_text();
    assert!(!text.contains("; fault"), "{text}");
    let rx_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("  rx ")).collect();
    assert!(!rx_lines.is_empty());
    for l in rx_lines {
        assert!(
            l.contains("strong-order[MODEL]")
                && l.contains("bit29={STRONG_ORDER_WR v3+ (companion chapter) | NO_SNOOP_H (Annapurna HAL)}[MODEL]"),
            "{l}"
        );
    }
}

/// Every name `decoder_names` lists is one `decode` takes (zero bytes of the right length:
/// decoded, or refused for its bits, never as an unknown name), and a name it does not list is
/// refused as unknown.
#[test]
fn every_listed_decoder_decodes() {
    for name in cce_api::decoder_names() {
        let bytes = if name == "cce-info" { 140 } else { cce_api::encoder(name).map_or(4, |e| 4 * e.words as usize) };
        let r = cce_api::decode(name, &"00".repeat(bytes));
        assert!(r.as_ref().err().is_none_or(|e| !e.to_string().contains("unknown encoder")), "{name}: {r:?}");
    }
    assert!(cce_api::decode("no-such", "00").unwrap_err().to_string().contains("unknown encoder"));
}
