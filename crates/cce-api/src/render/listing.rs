//! `cce disasm`'s listing, as JSON and text: queues, packets, descriptors with their fields and
//! tags, and the walk's fault.

use crate::render;
use cce_format::SdmaDtype;
use cce_format::packet::{self, DescKind};
use serde_json::{Value, json};

use crate::listing::{Desc, Listing, PacketListing, QueueListing, RingSide};
use crate::reduce_rings::Built;

impl Desc {
    fn to_json(&self) -> Value {
        let layout = self.layout();
        json!({
            "index": self.index,
            "kind": self.kind.map_or("unknown", DescKind::name),
            "other_kinds": self.fits.iter().skip(1).map(|k| k.name()).collect::<Vec<_>>(),
            "words": self.words,
            "meta_ctrl": self.meta_ctrl(),
            "fields": layout.map_or(Value::Null, |l| render::fields_map(&self.fields(), l.words)),
            "meta_fields": self.meta_layout().zip(self.meta_fields()).map_or(Value::Null, |(l, f)| render::fields_map(&f, l.words)),
        })
    }

    /// The kind column of the listing.
    fn kind_text(&self) -> String {
        match (self.ring, self.in_packet()) {
            (RingSide::Tx, true) => self.kind.map_or("unknown", DescKind::name).to_string(),
            (RingSide::Rx, true) => DescKind::S2mData.name().to_string(),
            (RingSide::Tx, false) if self.fits.is_empty() => "(bad)".to_string(),
            (RingSide::Tx, false) => self.fits.iter().map(|k| k.name()).collect::<Vec<_>>().join("|"),
            (RingSide::Rx, false) => format!("{}?", DescKind::S2mData.name()),
        }
    }

    /// The fields column of the listing: the non-zero fields, then a data descriptor's length,
    /// address and meta-control word (or output dtype).
    fn fields_text(&self) -> String {
        if self.ring == RingSide::Tx && !self.in_packet() && self.fits.is_empty() {
            return String::new();
        }
        if self.layout().is_none() {
            return "(bad)".into();
        }
        let data = self.data();
        let skip: &[&str] = if data.is_some() {
            &["meta-ctrl", "buf-ptr-lo", "buf-ptr-hi", "buf1-ptr-lo", "buf1-ptr-hi", "buf2-ptr-lo", "length"]
        } else {
            &[]
        };
        let mut s = render::fields_text(&self.fields(), skip);
        if let Some((len, addr)) = data {
            if self.ring == RingSide::Tx {
                s = format!("{s} len={len} src=0x{addr:x}");
                let meta = self.words[1];
                match self.meta_fields() {
                    Some(f) => s.push_str(&format!(" meta=0x{meta:08x}({})", render::fields_text(&f, &[]))),
                    None => s.push_str(&format!(" meta=0x{meta:08x}")),
                }
            } else {
                s = format!("{s} len={len} dst=0x{addr:x}");
                let out = packet::RX_OUT_DT.get(&self.words);
                if out != 0 {
                    s.push_str(&format!(" out-dt={}[MODEL]", SdmaDtype::from_nibble(out).name()));
                }
                // Both readings of a set S2M bit the sources disagree on.
                for (bit, readings) in cce_format::layout::S2M_BIT_READINGS {
                    if self.words[0] >> bit & 1 != 0 {
                        s.push_str(&format!(" bit{bit}={{{readings}}}[MODEL]"));
                    }
                }
            }
        }
        s.trim().to_string()
    }

    fn to_text(&self) -> String {
        let ring = match self.ring {
            RingSide::Tx => "tx",
            RingSide::Rx => "rx",
        };
        let w = self.words;
        format!(
            "  {ring} {:>6}  {:08x} {:08x} {:08x} {:08x}  {:<12} {}\n",
            self.index,
            w[0],
            w[1],
            w[2],
            w[3],
            self.kind_text(),
            self.fields_text()
        )
    }
}

impl PacketListing {
    fn to_json(&self) -> Value {
        let p = &self.packet;
        json!({
            "op": p.op.name(),
            "in": p.in_dt.name(), "accum": p.accum_dt.name(), "out": p.out_dt.name(),
            "elems": p.elems,
            "sources": p.sources.iter().map(|s| json!({
                "addr": s.addr,
                "fma": s.fma.map(|f| json!({"a": f.a.name(), "b": f.b.name(), "c": f.c.name(), "scale": f32::from_bits(f.scale_bits).to_string()})),
            })).collect::<Vec<_>>(),
            "dests": p.dests,
            "clamp": p.clamp.map(|c| json!({"const_dt": c.const_dt.get(), "bits": c.bits})),
            "seed": p.seed,
            "gce": p.gce.map(|g| json!({"mode": g.mode.name(), "header": g.header, "mid": g.mid_dt.name(), "tag": "MODEL"})),
        })
    }

    fn header_text(&self, k: usize) -> String {
        let p = &self.packet;
        format!(
            " packet {k}: {} in={} accum={} out={} elems={} sources={} dests={}{}{}{}\n",
            p.op.name(),
            p.in_dt.name(),
            p.accum_dt.name(),
            p.out_dt.name(),
            p.elems,
            p.sources.len(),
            p.dests.len(),
            p.seed.map(|s| format!(" sr-seed={s}")).unwrap_or_default(),
            p.clamp.map(|c| format!(" clamp=0x{:x}", c.bits)).unwrap_or_default(),
            p.gce
                .map(|g| format!(" gce={} header=0x{:x} mid={} [MODEL]", g.mode.name(), g.header, g.mid_dt.name()))
                .unwrap_or_default(),
        )
    }
}

impl QueueListing {
    /// The queue as JSON: geometry, doorbells, packets, every descriptor and the fault (the
    /// object `cce build --json` prints, without its `file`).
    pub fn to_json(&self) -> Value {
        json!({
            "queue": self.queue, "ring_size": self.ring_size, "initial_phase": self.initial_phase,
            "doorbell": {"rx": self.rx_doorbell, "tx": self.tx_doorbell},
            "packets": self.packets.len(),
            "packet_list": self.packets.iter().map(PacketListing::to_json).collect::<Vec<_>>(),
            "tx": self.tx().map(Desc::to_json).collect::<Vec<_>>(),
            "rx": self.rx().map(Desc::to_json).collect::<Vec<_>>(),
            "fault": self.fault.as_ref().map_or(Value::Null, |f| json!({"tx": f.tx_start, "rx": f.rx_start, "error": f.error.to_string()})),
        })
    }

    /// The queue's part of the listing.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "queue {}: ring {} descriptors, phase {}, tx {} (doorbell {}), rx {} (doorbell {})\n",
            self.queue,
            self.ring_size,
            self.initial_phase,
            self.tx_descriptors,
            self.tx_doorbell,
            self.rx_descriptors,
            self.rx_doorbell
        );
        for (k, p) in self.packets.iter().enumerate() {
            out.push_str(&p.header_text(k));
            for d in p.tx.iter().chain(&p.rx) {
                out.push_str(&d.to_text());
            }
        }
        if let Some(f) = &self.fault {
            out.push_str(&format!(" ; fault at tx {} / rx {}: {}\n", f.tx_start, f.rx_start, f.error));
        }
        for d in self.tx_rest.iter().chain(&self.rx_rest) {
            out.push_str(&d.to_text());
        }
        out
    }
}

impl Listing {
    /// `{"arch", "queues": [...]}`: the object `cce disasm --json` prints.
    pub fn to_json(&self) -> Value {
        json!({
            "arch": self.arch,
            "queues": self.queues.iter().map(QueueListing::to_json).collect::<Vec<_>>(),
        })
    }

    /// The objdump-like listing `cce disasm` prints.
    pub fn to_text(&self) -> String {
        let mut out = format!(
            "; cce ring dump v{}, arch {}, {} queue(s)\n",
            cce_format::ringfile::VERSION,
            self.arch,
            self.queues.len()
        );
        for q in &self.queues {
            out.push_str(&q.to_text());
        }
        out
    }
}

impl Built {
    /// Every descriptor and packet: the object `cce build --json` prints, without `file`.
    pub fn to_json(&self) -> Value {
        self.listing().to_json()
    }

    /// The object `cce build --json` prints: [`Self::to_json`] with `file`, the ring dump's path
    /// as its user gave it (`null` when none was written).
    pub fn to_json_with_file(&self, file: Option<&str>) -> Value {
        let mut v = self.to_json();
        if let Value::Object(o) = &mut v {
            o.insert("file".into(), json!(file));
        }
        v
    }
}
