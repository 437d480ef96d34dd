//! Reading a file: XML (roxmltree; no DTDs, so no entity expansion) into an [`AlgoFile`], every
//! element and attribute the executor reads, each number as written. Shapes and ranges are
//! [`crate::check`]'s; here only what cannot be read at all is refused: malformed XML, another
//! root, an unknown element, type, buffer or protocol, a missing attribute, a number that does
//! not parse. Never panics.

use roxmltree::{Document, Node};

use crate::error::{MscclError, Where};
use crate::model::{AlgoFile, Buf, Coll, Gpu, Kind, Operand, Proto, Step, Tb};

/// Most `<step>` elements a file may hold (the checks' tables grow with them).
pub const MAX_STEPS: usize = 1 << 18;

/// Reads an MSCCL XML file (the old format msccl-tools writes with `old_format=True`).
pub fn parse(text: &str) -> Result<AlgoFile, MscclError> {
    let doc = Document::parse(text).map_err(|e| {
        let p = e.pos();
        MscclError::new(Where::line(p.row), format!("not well-formed XML: {e}"))
    })?;
    // Line starts, once (roxmltree's own position lookup scans from the file's start).
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.bytes().enumerate().filter(|b| b.1 == b'\n').map(|b| b.0 + 1)).collect();
    let line = |n: Node| starts.partition_point(|&s| s <= n.range().start) as u32;
    // The size first: nothing grows with the steps before they are counted.
    if let Some(over) = doc.descendants().filter(|n| n.has_tag_name("step")).nth(MAX_STEPS) {
        return Err(MscclError::new(Where::line(line(over)), format!("more than {MAX_STEPS} steps")));
    }
    let root = doc.root_element();
    if root.tag_name().name() != "algo" {
        return Err(MscclError::new(
            Where::line(line(root)),
            format!("the root element is <{}>, expected <algo>", root.tag_name().name()),
        ));
    }
    let at = Where::line(line(root));
    let algo_attr = |name: &str| attr(root, name, at, "algo");
    let coll_name = algo_attr("coll")?;
    let coll = Coll::from_name(coll_name).ok_or_else(|| {
        MscclError::new(at, format!("coll \"{coll_name}\": cce runs allreduce, reducescatter and allgather schedules"))
    })?;
    let proto_name = algo_attr("proto")?;
    let proto = Proto::from_name(proto_name).ok_or_else(|| {
        MscclError::new(at, format!("proto \"{proto_name}\": the executor knows Simple, LL and LL128"))
    })?;
    let inplace = int(root, "inplace", at, "algo")?;
    let outofplace = match root.attribute("outofplace") {
        None => i64::from(inplace == 0),
        Some(_) => int(root, "outofplace", at, "algo")?,
    };
    let optional = |name: &str| -> Result<i64, MscclError> {
        if root.attribute(name).is_some() { int(root, name, at, "algo") } else { Ok(0) }
    };
    let flag = |name: &str, v: i64| -> Result<bool, MscclError> {
        match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(MscclError::new(at, format!("{name}=\"{v}\": 0 or 1"))),
        }
    };
    let mut file = AlgoFile {
        name: algo_attr("name")?.to_string(),
        proto,
        nchannels: int(root, "nchannels", at, "algo")?,
        nchunksperloop: int(root, "nchunksperloop", at, "algo")?,
        ngpus: int(root, "ngpus", at, "algo")?,
        coll,
        inplace: flag("inplace", inplace)?,
        outofplace: flag("outofplace", outofplace)?,
        min_bytes: optional("minBytes")?,
        max_bytes: optional("maxBytes")?,
        gpus: Vec::new(),
        line: line(root),
    };
    for g in elements(root, "gpu", &line)? {
        let at = Where::line(line(g));
        let mut gpu = Gpu {
            id: int(g, "id", at, "gpu")?,
            i_chunks: int(g, "i_chunks", at, "gpu")?,
            o_chunks: int(g, "o_chunks", at, "gpu")?,
            s_chunks: int(g, "s_chunks", at, "gpu")?,
            tbs: Vec::new(),
            line: line(g),
        };
        for t in elements(g, "tb", &line)? {
            let at = Where::line(line(t));
            let mut tb = Tb {
                id: int(t, "id", at, "tb")?,
                send: int(t, "send", at, "tb")?,
                recv: int(t, "recv", at, "tb")?,
                chan: int(t, "chan", at, "tb")?,
                steps: Vec::new(),
                line: line(t),
            };
            for s in elements(t, "step", &line)? {
                tb.steps.push(step(s, Where::line(line(s)))?);
            }
            gpu.tbs.push(tb);
        }
        file.gpus.push(gpu);
    }
    Ok(file)
}

/// The child elements of `parent`, which must all be `<name>` (comments and text between them
/// are skipped).
fn elements<'a, 'i>(
    parent: Node<'a, 'i>,
    name: &str,
    line: &dyn Fn(Node) -> u32,
) -> Result<Vec<Node<'a, 'i>>, MscclError> {
    let mut out = Vec::new();
    for c in parent.children().filter(Node::is_element) {
        let got = c.tag_name().name();
        if got != name {
            let hint = if got == "op" && name == "step" {
                " (msccl-tools' newer <op> format is not read: write the old format, <step>)"
            } else {
                ""
            };
            return Err(MscclError::new(
                Where::line(line(c)),
                format!("unknown element <{got}> in <{}>, expected <{name}>{hint}", parent.tag_name().name()),
            ));
        }
        out.push(c);
    }
    Ok(out)
}

fn step(s: Node, at: Where) -> Result<Step, MscclError> {
    let type_name = attr(s, "type", at, "step")?;
    let kind = Kind::from_name(type_name).ok_or_else(|| {
        MscclError::new(
            at,
            format!("unknown step type \"{type_name}\": expected s, r, rcs, rrs, rrc, rrcs, re, cpy or nop"),
        )
    })?;
    let buf = |name: &str| -> Result<Buf, MscclError> {
        let v = attr(s, name, at, "step")?;
        Buf::from_letter(v).ok_or_else(|| MscclError::new(at, format!("{name}=\"{v}\": expected i, o or s")))
    };
    Ok(Step {
        s: int(s, "s", at, "step")?,
        kind,
        src: Operand { buf: buf("srcbuf")?, off: int(s, "srcoff", at, "step")? },
        dst: Operand { buf: buf("dstbuf")?, off: int(s, "dstoff", at, "step")? },
        cnt: int(s, "cnt", at, "step")?,
        depid: int(s, "depid", at, "step")?,
        deps: int(s, "deps", at, "step")?,
        hasdep: int(s, "hasdep", at, "step")?,
        line: at.line.unwrap_or(0),
    })
}

fn attr<'a>(n: Node<'a, '_>, name: &str, at: Where, element: &str) -> Result<&'a str, MscclError> {
    n.attribute(name).ok_or_else(|| MscclError::new(at, format!("<{element}> lacks the attribute {name}")))
}

/// A decimal integer: an optional `-`, then digits (surrounding blanks allowed).
fn int(n: Node, name: &str, at: Where, element: &str) -> Result<i64, MscclError> {
    let v = attr(n, name, at, element)?;
    let t = v.trim();
    let digits = t.strip_prefix('-').unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(MscclError::new(at, format!("{name}=\"{v}\" is not a decimal integer")));
    }
    t.parse().map_err(|_| MscclError::new(at, format!("{name}=\"{v}\" is out of range")))
}
