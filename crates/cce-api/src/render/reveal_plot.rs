//! `cce reveal --plot`: the revealed trees as one SVG document ([`RevealAnswer::to_svg`]).
//!
//! ## Why by hand
//! plotters draws charts on axes; a tree has none. The document is written here directly: a
//! few lines, circles and `<text>` elements (`font-family="sans-serif"`: the viewer's renderer
//! picks the glyphs, no font is read, as in [`crate::plot`]).
//!
//! ## What is drawn
//! One drawing per distinct tree (classes with the same `expr` and accumulate dtype share one,
//! and its heading lists their element ranges), at most [`MAX_TREES`], with a line counting the
//! rest. A drawing reads the order grammar as a tree: a parenthesis with k operands is a node
//! with k children — one rounding to the buffer dtype — and every leaf is a rank, labelled with
//! its number, left to right in the order the ranks enter. Nodes sit at the height of their
//! longest path to a leaf (the leaves on one baseline, the root at the top); a node with more
//! than two children (several operands under one rounding) is drawn larger, in another colour,
//! with its k.
//!
//! ## What the document holds
//! - each drawing is a `<g class="tree" data-expr="…" data-accum="…">`, holding one
//!   `<text class="leaf">` per leaf (the rank number), one `<circle class="node">` per
//!   parenthesis, and a `<text class="heading">` with the ranges, the accumulate dtype and
//!   `equals`;
//! - an answer that is not revealed (or a plan that wants another run) is a document with its
//!   one-line reason and no tree.
//!
//! ## Guarantees
//! - Never panics, on any [`Order`] (the tree is walked with an explicit stack, never by
//!   recursion); the document is well-formed XML (text escaped, control characters dropped).

use std::collections::HashMap;
use std::fmt::Write as _;

use cce_numerics::NumType;
use cce_numerics::order::Order;

use crate::reveal::{Class, RevealAnswer};

/// The most distinct trees drawn; the rest are counted in a line at the end.
pub(crate) const MAX_TREES: usize = 16;
/// Element ranges a heading lists before it counts the rest.
const RANGES_SHOWN: usize = 6;
/// Horizontal room per leaf, pixels.
const LEAF_STEP: f64 = 24.0;
/// The document's least width, and its margin.
const MIN_WIDTH: f64 = 960.0;
const MARGIN: f64 = 20.0;
/// The height between two levels of a tree: at most / at least, and the height a tree aims at.
const LEVEL_MAX: f64 = 36.0;
const LEVEL_MIN: f64 = 9.0;
const TREE_AIM: f64 = 260.0;
/// Colours: two-operand roundings, several-operand roundings, edges, text.
const BINARY: &str = "#1f4e8c";
const MULTI: &str = "#d2691e";
const EDGE: &str = "#555555";
const INK: &str = "#111111";

/// One parenthesis (or rank) of an order, its children by index (post-order: children first).
struct Node {
    kids: Vec<usize>,
    rank: Option<u32>,
    gce: bool,
}

/// The order's nodes in post-order (the root last), without recursion.
fn flatten(order: &Order) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut finished: Vec<usize> = Vec::new();
    let mut stack: Vec<(&Order, bool)> = vec![(order, false)];
    while let Some((o, expanded)) = stack.pop() {
        let kids: &[Order] = match o {
            Order::Rank(r) => {
                nodes.push(Node { kids: Vec::new(), rank: Some(*r), gce: false });
                finished.push(nodes.len() - 1);
                continue;
            }
            Order::Round(v) => v,
            Order::Gce(inner) => std::slice::from_ref(inner.as_ref()),
        };
        if expanded {
            let at = finished.len().saturating_sub(kids.len());
            let kids = finished.split_off(at);
            nodes.push(Node { kids, rank: None, gce: matches!(o, Order::Gce(_)) });
            finished.push(nodes.len() - 1);
        } else {
            stack.push((o, true));
            stack.extend(kids.iter().rev().map(|k| (k, false)));
        }
    }
    nodes
}

/// Each node's x (in leaf steps, from 0) and level (0 for leaves; 1 + the highest child's).
fn layout(nodes: &[Node]) -> Vec<(f64, usize)> {
    let mut at: Vec<(f64, usize)> = Vec::with_capacity(nodes.len());
    let mut next_leaf = 0.0;
    for n in nodes {
        let place = match (n.kids.first(), n.kids.last()) {
            (Some(&a), Some(&b)) => {
                let level = n.kids.iter().map(|&k| at[k].1).max().unwrap_or(0) + 1;
                ((at[a].0 + at[b].0) / 2.0, level)
            }
            _ => {
                next_leaf += 1.0;
                (next_leaf - 1.0, 0)
            }
        };
        at.push(place);
    }
    at
}

/// `s` safe inside an XML text node or attribute.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Classes that share a tree (same expr and accumulate dtype), in order of first appearance.
struct Drawing<'a> {
    order: &'a Order,
    expr: String,
    accum: NumType,
    equals: Option<&'a str>,
    classes: Vec<&'a Class>,
}

fn drawings(classes: &[Class]) -> Vec<Drawing<'_>> {
    let mut out: Vec<Drawing<'_>> = Vec::new();
    let mut index: HashMap<(String, NumType), usize> = HashMap::new();
    for c in classes {
        let expr = c.order.to_string();
        let k = *index.entry((expr.clone(), c.accum)).or_insert_with(|| {
            out.push(Drawing { order: &c.order, expr, accum: c.accum, equals: None, classes: Vec::new() });
            out.len() - 1
        });
        let d = &mut out[k];
        d.equals = d.equals.or(c.equals.as_deref());
        d.classes.push(c);
    }
    out
}

/// The heading's first line: the element ranges (with their rank where ranks differ).
fn ranges_line(d: &Drawing<'_>) -> String {
    let shown: Vec<String> = d
        .classes
        .iter()
        .take(RANGES_SHOWN)
        .map(|c| match c.rank {
            Some(r) => format!("rank {r}: {}..={}", c.first, c.last),
            None => format!("{}..={}", c.first, c.last),
        })
        .collect();
    let more = d.classes.len().saturating_sub(RANGES_SHOWN);
    let tail = if more > 0 { format!(" (+{more} more)") } else { String::new() };
    let word = if d.classes.len() == 1 { "range" } else { "ranges" };
    format!("elements {}{tail} — {} {word}", shown.join(", "), d.classes.len())
}

/// The heading's second line: accumulate dtype, equals, leaves and roundings.
fn detail_line(d: &Drawing<'_>) -> String {
    let leaves = d.order.leaves().len();
    let equals = d.equals.map_or("equals no cce order".to_string(), |e| format!("equals {e}"));
    format!("accumulate {} · {equals} · {leaves} ranks, {} roundings", d.accum.name(), d.order.roundings())
}

/// One drawing at `top`, `width` wide: its SVG and its height.
fn draw_tree(d: &Drawing<'_>, top: f64, width: f64) -> (String, f64) {
    let nodes = flatten(d.order);
    let at = layout(&nodes);
    let leaves = nodes.iter().filter(|n| n.kids.is_empty()).count().max(1) as f64;
    let height_levels = at.last().map_or(0, |p| p.1).max(1) as f64;
    let dy = (TREE_AIM / height_levels).clamp(LEVEL_MIN, LEVEL_MAX);
    let step = ((width - 2.0 * MARGIN) / leaves).min(LEAF_STEP * 2.0);
    let left = (width - step * leaves) / 2.0 + step / 2.0;
    let tree_top = top + 52.0;
    let xy = |i: usize| (left + at[i].0 * step, tree_top + (height_levels - at[i].1 as f64) * dy);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<g class="tree" data-expr="{}" data-accum="{}"><title>{}</title>"#,
        esc(&d.expr),
        d.accum.name(),
        esc(&d.expr)
    );
    let _ = writeln!(
        s,
        r#"<text class="heading" x="{MARGIN}" y="{:.1}" font-size="14" font-weight="bold" fill="{INK}">{}</text>"#,
        top + 18.0,
        esc(&ranges_line(d))
    );
    let _ = writeln!(
        s,
        r#"<text class="heading" x="{MARGIN}" y="{:.1}" font-size="12" fill="{INK}">{}</text>"#,
        top + 36.0,
        esc(&detail_line(d))
    );
    // Edges first (elbows: up from each child, across at the parent's height), then nodes.
    for (i, n) in nodes.iter().enumerate() {
        let py = xy(i).1;
        if let (Some(&a), Some(&b)) = (n.kids.first(), n.kids.last()) {
            let (ax, bx) = (xy(a).0, xy(b).0);
            let _ = writeln!(
                s,
                r#"<line x1="{ax:.1}" y1="{py:.1}" x2="{bx:.1}" y2="{py:.1}" stroke="{EDGE}" stroke-width="1.5"/>"#
            );
            for &k in &n.kids {
                let (kx, ky) = xy(k);
                let _ = writeln!(
                    s,
                    r#"<line x1="{kx:.1}" y1="{ky:.1}" x2="{kx:.1}" y2="{py:.1}" stroke="{EDGE}" stroke-width="1.5"/>"#
                );
            }
        }
    }
    let font = (step * 0.55).clamp(8.0, 12.0);
    for (i, n) in nodes.iter().enumerate() {
        let (x, y) = xy(i);
        match n.rank {
            Some(r) => {
                let _ = writeln!(s, r#"<circle class="rank" cx="{x:.1}" cy="{y:.1}" r="2.5" fill="{INK}"/>"#);
                let _ = writeln!(
                    s,
                    r#"<text class="leaf" x="{x:.1}" y="{:.1}" font-size="{font:.1}" text-anchor="middle" fill="{INK}">{r}</text>"#,
                    y + font + 5.0
                );
            }
            None if n.gce => {
                let _ = writeln!(
                    s,
                    r#"<text class="gce" x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="{INK}">g</text>"#,
                    y - 5.0
                );
            }
            None if n.kids.len() > 2 => {
                let _ = writeln!(
                    s,
                    r#"<circle class="node" data-operands="{k}" cx="{x:.1}" cy="{y:.1}" r="8" fill="{MULTI}"/><text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="white">{k}</text>"#,
                    y + 3.5,
                    k = n.kids.len()
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    r#"<circle class="node" data-operands="{}" cx="{x:.1}" cy="{y:.1}" r="4" fill="{BINARY}"/>"#,
                    n.kids.len()
                );
            }
        }
    }
    s.push_str("</g>\n");
    (s, 52.0 + height_levels * dy + font + 22.0)
}

/// A line of text at `y`.
fn line(s: &mut String, y: f64, size: u32, text: &str) {
    let _ = writeln!(
        s,
        r#"<text class="note" x="{MARGIN}" y="{y:.1}" font-size="{size}" fill="{INK}">{}</text>"#,
        esc(text)
    );
}

/// The legend of the node marks, at `y`.
fn legend(s: &mut String, y: f64) {
    let _ = writeln!(
        s,
        r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="{BINARY}"/><text x="{:.1}" y="{y:.1}" font-size="12" fill="{INK}">2 operands</text>"#,
        MARGIN + 4.0,
        y - 4.0,
        MARGIN + 14.0
    );
    let _ = writeln!(
        s,
        r#"<circle cx="{:.1}" cy="{:.1}" r="7" fill="{MULTI}"/><text x="{:.1}" y="{y:.1}" font-size="12" fill="{INK}">k &gt; 2 operands, accumulated wider and rounded once (k inside)</text>"#,
        MARGIN + 114.0,
        y - 4.0,
        MARGIN + 126.0
    );
}

/// The width a drawing needs: its leaves' room, or its headings' (estimated at 0.6 em per
/// character, as no font is measured).
fn panel_width(d: &Drawing<'_>) -> f64 {
    let text =
        (ranges_line(d).chars().count() as f64 * 14.0 * 0.62).max(detail_line(d).chars().count() as f64 * 12.0 * 0.6);
    (LEAF_STEP * d.order.leaves().len() as f64).max(text) + 2.0 * MARGIN
}

/// The drawings in a grid of as many columns as fit the widest: their SVG and its height,
/// starting at `top`.
fn grid(shown: &[Drawing<'_>], top: f64, width: f64) -> (String, f64) {
    let panel = shown.iter().map(panel_width).fold(0.0, f64::max).max(1.0);
    let cols = ((width / panel).floor() as usize).clamp(1, 4);
    let cell = width / cols as f64;
    let mut s = String::new();
    let mut y = top;
    for row in shown.chunks(cols) {
        let _ = writeln!(
            s,
            r##"<line x1="{MARGIN}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#cccccc"/>"##,
            width - MARGIN
        );
        let mut tallest: f64 = 0.0;
        for (c, d) in row.iter().enumerate() {
            let (svg, h) = draw_tree(d, 0.0, cell);
            let _ = writeln!(s, r#"<g transform="translate({:.1},{y:.1})">"#, c as f64 * cell);
            s.push_str(&svg);
            s.push_str("</g>\n");
            tallest = tallest.max(h);
        }
        y += tallest;
    }
    (s, y - top)
}

impl RevealAnswer {
    /// `cce reveal --plot`'s SVG document (module docs of `render::reveal_plot`).
    pub fn to_svg(&self) -> String {
        let r = &self.revealed;
        let all = drawings(&r.classes);
        let shown = &all[..all.len().min(MAX_TREES)];
        let widest = shown.iter().map(panel_width).fold(0.0, f64::max);
        let width = widest.max(MIN_WIDTH).ceil();
        let mut body = String::new();
        let title = format!("cce reveal: {}", self.headline("×"));
        line(&mut body, 26.0, 16, &title);
        let mut y = 40.0;
        let status = match (&self.next_run, r.revealed) {
            (Some((k, _)), _) => Some(format!("not revealed yet: the plan wants run {k}")),
            (None, false) => Some(format!("not revealed: {}", r.reason.as_deref().unwrap_or("no reason given"))),
            (None, true) => None,
        };
        if let Some(status) = status {
            line(&mut body, y + 16.0, 13, &status);
            y += 30.0;
        } else {
            let classes = r.classes.len();
            let summary = format!(
                "{} distinct tree{} over {classes} class{} of elements; every node is one rounding to {}",
                all.len(),
                if all.len() == 1 { "" } else { "s" },
                if classes == 1 { "" } else { "es" },
                r.dtype.name()
            );
            line(&mut body, y + 14.0, 13, &summary);
            legend(&mut body, y + 34.0);
            y += 46.0;
            let (svg, h) = grid(shown, y, width);
            body.push_str(&svg);
            y += h;
            if all.len() > shown.len() {
                let rest = all.len() - shown.len();
                line(
                    &mut body,
                    y + 16.0,
                    13,
                    &format!(
                        "… {rest} more distinct trees not drawn ({} lists every class)",
                        crate::render::flag("json")
                    ),
                );
                y += 26.0;
            }
        }
        let height = (y + MARGIN).ceil();
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n{body}</svg>\n"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_puts_children_first_and_keeps_leaf_order() {
        let o = Order::parse("((3+1)+(0+2+5)+4)").unwrap();
        let nodes = flatten(&o);
        let ranks: Vec<u32> = nodes.iter().filter_map(|n| n.rank).collect();
        assert_eq!(ranks, o.leaves());
        assert_eq!(nodes.len(), 6 + 3);
        let root = nodes.last().unwrap();
        assert_eq!(root.kids.len(), 3);
        let at = layout(&nodes);
        assert_eq!(at.last().unwrap().1, 2);
    }

    #[test]
    fn a_deep_order_lays_out_without_recursion() {
        let ranks: Vec<u32> = (0..5000).collect();
        let o = Order::sequential(&ranks);
        let at = layout(&flatten(&o));
        assert_eq!(at.last().unwrap().1, 4999);
    }
}
