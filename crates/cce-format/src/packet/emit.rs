//! Writing a packet's descriptors, in the convention's order.

use alloc::vec::Vec;

use super::{GCE_SCALE_DT, Gce, Packet, PacketOp, RX_OUT_DT, aux_mask};
use crate::bits::{U3, U8, U16, U24};
use crate::descriptor::{
    Descriptor, FmaDescriptor, GradientDescriptor, LenCtrl, M2sDataDescriptor, MinMaxDescriptor, ReplicationDescriptor,
    S2mDataDescriptor, SeedInitDescriptor,
};
use crate::dtype::SdmaDtype;
use crate::meta_ctrl::{
    AddMetaCtrl, CopyMetaCtrl, ExtMetaCtrl, FmaMetaCtrl, GradientMetaCtrl, MetaCtrl, MinMaxMetaCtrl,
};
use crate::op::SdmaCceType;

/// Where emitted descriptors go: a ring writer that knows each slot's ring-id phase.
pub trait DescSink {
    /// Appends one descriptor; `data` says whether it is a data descriptor (which carries the
    /// ring-id phase in len_ctrl `[25:24]`).
    fn push(&mut self, words: [u32; 4], data: bool);
}

/// A plain `Vec` sink with every data descriptor in phase 1 (the runtime's alloc callback
/// forces ring id 1).
impl DescSink for Vec<[u32; 4]> {
    fn push(&mut self, words: [u32; 4], _data: bool) {
        self.push(words);
    }
}

impl Packet {
    /// The meta-control word of source `i` of `n`.
    fn meta_ctrl(&self, i: usize, n: usize) -> u32 {
        let last = i + 1 == n;
        let write_barrier = last && self.flags.write_barrier;
        let sub = |op: SdmaCceType| U3::masked(op.value());
        match self.op {
            PacketOp::Copy => CopyMetaCtrl { write_barrier, ..CopyMetaCtrl::DRIVER_DEFAULT }.emit(),
            PacketOp::Cce(op @ SdmaCceType::Fma) => FmaMetaCtrl {
                sub: sub(op),
                in_dt: self.in_dt,
                scale_dt: SdmaDtype::Fp32,
                accum_dt: self.accum_dt,
                f4: last,
                f5: false,
                f6: false,
                write_barrier,
            }
            .emit(),
            PacketOp::Cce(op @ (SdmaCceType::Min | SdmaCceType::Max)) => MinMaxMetaCtrl {
                sub: sub(op),
                const_dt: self.clamp.map_or(U3::ZERO, |c| c.const_dt),
                in_dt: self.in_dt,
                out_dt: if self.clamp.is_some() { self.out_dt } else { SdmaDtype::Invalid },
                accum_dt: self.accum_dt,
                notif: false,
                wrbar: false,
                use_const: self.clamp.is_some(),
                last,
                write_barrier,
            }
            .emit(),
            PacketOp::Cce(op @ SdmaCceType::Gce) => GradientMetaCtrl {
                sub: sub(op),
                in_dt: self.in_dt,
                scale_dt: GCE_SCALE_DT,
                accum_dt: self.accum_dt,
                wrbar: false,
                f: false,
                last,
                write_barrier,
            }
            .emit(),
            // ADD (and, never emitted by the host, EXT): the ADD word with the source dtype in
            // [15:12].
            PacketOp::Cce(op) => AddMetaCtrl {
                sub: sub(op),
                out_dt: self.in_dt,
                accum_dt: self.accum_dt,
                last,
                wrbar: false,
                f: false,
                write_barrier,
            }
            .emit(),
        }
    }

    /// Writes the packet's tx and rx descriptors. Lengths must already be valid (each data
    /// descriptor at most 65536 bytes); the host checks before emitting.
    pub fn emit(&self, tx: &mut impl DescSink, rx: &mut impl DescSink) {
        let combo = self.is_combo();
        let n = self.sources.len();
        if let Some(seed) = self.seed {
            let d = SeedInitDescriptor { seed_en: true, seed, combo_member: combo, more: combo, ..Default::default() };
            tx.push(d.emit(), false);
        }
        let gradient = |g: &Gce, more: bool| GradientDescriptor {
            mode: U3::masked(g.mode.value()),
            length: U24::masked(self.elems),
            more,
            header: g.header,
            ..Default::default()
        };
        if let (Some(g), false) = (&self.gce, self.is_gce_combo()) {
            tx.push(gradient(g, false).emit(), false);
        }
        if let Some(c) = self.clamp {
            let d = MinMaxDescriptor {
                use_const: true,
                const_dt: c.const_dt,
                length: U24::masked(self.elems),
                constant: c.bits,
                more: combo,
                ..Default::default()
            };
            tx.push(d.emit(), false);
        }
        let src_len = LenCtrl::default().with_byte_len(self.src_bytes()).unwrap_or_default();
        for (i, s) in self.sources.iter().enumerate() {
            if let Some(f) = s.fma {
                let d = FmaDescriptor {
                    meta_idx: U8::masked(i as u32),
                    sub: U3::masked(SdmaCceType::Fma.value()),
                    a_sel: f.a,
                    b_sel: f.b,
                    c_sel: f.c,
                    scale_bits: f.scale_bits,
                    more: combo,
                    ..Default::default()
                };
                tx.push(d.emit(), false);
            }
            let last = i + 1 == n;
            let len_ctrl = LenCtrl { first: i == 0, last, dmb: last && self.flags.dmb, int_en: s.int_en, ..src_len };
            let meta_ctrl = self.meta_ctrl(i, n) | (s.meta_aux & aux_mask(self.op));
            let d = M2sDataDescriptor { len_ctrl, meta_ctrl, buf_ptr: s.addr };
            tx.push(d.emit(), true);
        }
        let m = self.dests.len();
        if combo {
            let op = match self.op {
                PacketOp::Cce(op) => op.value(),
                PacketOp::Copy => 0,
            };
            let mid_dt = self.gce.map_or(self.out_dt, |g| g.mid_dt);
            let ext = ExtMetaCtrl { sub: U3::masked(op), mid_dt, accum_dt: self.accum_dt }.emit();
            if let (Some(g), true) = (&self.gce, self.is_gce_combo()) {
                tx.push(gradient(g, true).emit(), false);
            }
            for j in 0..m {
                let d = ReplicationDescriptor {
                    meta_idx: U8::masked(j as u32),
                    mode: U3::masked(1),
                    count: U16::masked(m as u32),
                    more: j + 1 < m,
                    ext_meta: ext,
                    ..Default::default()
                };
                tx.push(d.emit(), false);
            }
        }
        let dst_len = LenCtrl::default().with_byte_len(self.dst_bytes()).unwrap_or_default();
        let out_word = if self.op == PacketOp::Copy { 0 } else { RX_OUT_DT.place(self.out_dt.value()) };
        for (j, &dst) in self.dests.iter().enumerate() {
            let last = j + 1 == m;
            let len_ctrl =
                LenCtrl { int_en: last && self.flags.int_en, strong_order: self.flags.strong_order, ..dst_len };
            rx.push(S2mDataDescriptor { len_ctrl, buf2_ptr_lo: out_word, buf1_ptr: dst }.emit(), true);
        }
    }
}
