//! `cce_api::plot`: the SVG is well-formed XML with an `<svg>` root, every series is one tagged
//! line with its own colour and a legend entry, log axes tick where they should, and no input
//! (empty, NaN, infinite, non-positive on a log axis, huge, any text) panics.

use cce_api::ApiError;
use cce_api::plot::{Chart, LIMIT, MAX_SERIES, Mark, Scale, Series, svg};

fn series(name: &str, points: &[(f64, f64)], dashed: bool) -> Series {
    Series { name: name.into(), points: points.to_vec(), dashed }
}

fn chart(x_scale: Scale, y_scale: Scale, series: Vec<Series>) -> Chart {
    Chart {
        title: "a chart".into(),
        x_label: "x".into(),
        y_label: "y".into(),
        x_scale,
        y_scale,
        series,
        marks: Vec::new(),
    }
}

/// The document parsed, its root checked to be `<svg>`.
fn parse(doc: &str) -> roxmltree::Document<'_> {
    let d = roxmltree::Document::parse(doc).unwrap_or_else(|e| panic!("not XML: {e}\n{doc}"));
    assert_eq!(d.root_element().tag_name().name(), "svg");
    d
}

/// Elements of series `i` with role `role`.
fn tagged<'a>(d: &'a roxmltree::Document<'a>, i: usize, role: &str) -> Vec<roxmltree::Node<'a, 'a>> {
    let i = i.to_string();
    d.descendants()
        .filter(|n| n.attribute("data-series") == Some(i.as_str()) && n.attribute("data-role") == Some(role))
        .collect()
}

/// The texts of the document, trimmed.
fn texts(d: &roxmltree::Document<'_>) -> Vec<String> {
    d.descendants().filter(|n| n.has_tag_name("text")).filter_map(|n| n.text()).map(|t| t.trim().to_string()).collect()
}

#[test]
fn three_series_are_three_tagged_lines_with_legend_entries() {
    let pts = |f: fn(f64) -> f64| (1..=6).map(|k| (2f64.powi(k), f(2f64.powi(k)))).collect::<Vec<_>>();
    let c = chart(
        Scale::Log2,
        Scale::Log10,
        vec![
            series("rne", &pts(|r| 1e-3 * r), false),
            series("sr", &pts(|r| 1e-3 * r.sqrt()), false),
            series("a model", &pts(|r| 1e-4 * r), true),
        ],
    );
    let doc = svg(&c).unwrap();
    let d = parse(&doc);
    let mut strokes = Vec::new();
    for (i, s) in c.series.iter().enumerate() {
        let lines = tagged(&d, i, "line");
        assert_eq!(lines.len(), 1, "series {i}: one line");
        let line = lines[0];
        assert_eq!(line.tag_name().name(), "polyline");
        assert_eq!(line.attribute("points").map(|p| p.split_whitespace().count()), Some(6), "series {i}: 6 points");
        assert_eq!(line.attribute("stroke-dasharray").is_some(), s.dashed, "series {i}: dashed iff asked");
        strokes.push(line.attribute("stroke").unwrap().to_string());
        assert_eq!(tagged(&d, i, "point").len(), 6, "series {i}: a marker per point");
        assert_eq!(tagged(&d, i, "legend").len(), 3, "series {i}: its legend swatch");
        assert!(texts(&d).contains(&s.name), "the legend names {:?}", s.name);
    }
    strokes.sort();
    strokes.dedup();
    assert_eq!(strokes.len(), 3, "every series has its own colour");
    // Nothing else is tagged as a series line.
    assert_eq!(d.descendants().filter(|n| n.attribute("data-role") == Some("line")).count(), 3);
}

#[test]
fn the_legend_covers_no_line_when_a_place_is_free() {
    let rising: Vec<(f64, f64)> = (0..10).map(|k| (f64::from(k), f64::from(k))).collect();
    let flat: Vec<(f64, f64)> = (0..10).map(|k| (f64::from(k), 9.0)).collect();
    let doc = svg(&chart(Scale::Linear, Scale::Linear, vec![series("up", &rising, false), series("top", &flat, true)]))
        .unwrap();
    let d = parse(&doc);
    // The legend's frame: the translucent white box.
    let frame =
        d.descendants().find(|n| n.has_tag_name("rect") && n.attribute("opacity") == Some("0.85")).expect("frame");
    let num = |a: &str| frame.attribute(a).unwrap().parse::<i64>().unwrap();
    let (x, y, w, h) = (num("x"), num("y"), num("width"), num("height"));
    for i in 0..2 {
        for n in tagged(&d, i, "point") {
            let (cx, cy) = (
                n.attribute("cx").unwrap().parse::<i64>().unwrap(),
                n.attribute("cy").unwrap().parse::<i64>().unwrap(),
            );
            assert!(
                !(x..=x + w).contains(&cx) || !(y..=y + h).contains(&cy),
                "series {i} point ({cx}, {cy}) under the legend"
            );
        }
    }
}

#[test]
fn log_axes_tick_at_powers_of_their_base() {
    let pts: Vec<(f64, f64)> = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0].iter().map(|&r| (r, 1e-6 * r * r)).collect();
    let d_doc = svg(&chart(Scale::Log2, Scale::Log10, vec![series("s", &pts, false)])).unwrap();
    let t = texts(&parse(&d_doc));
    for want in ["2", "4", "8", "16", "32", "64", "1e-5", "1e-3"] {
        assert!(t.iter().any(|x| x == want), "tick {want} in {t:?}");
    }
    // On a linear x axis the same points place 64 at the right and 2 near the left: the
    // log axis spaces 2, 4, 8 … equally.
    let lin = svg(&chart(Scale::Log2, Scale::Linear, vec![series("s", &pts, false)])).unwrap();
    let xs: Vec<i64> =
        tagged(&parse(&lin), 0, "point").iter().map(|n| n.attribute("cx").unwrap().parse().unwrap()).collect();
    let gaps: Vec<i64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|g| (g - gaps[0]).abs() <= 1), "equal steps on a log2 axis: {gaps:?}");
}

#[test]
fn marks_are_drawn_and_tagged() {
    let mut c = chart(Scale::Linear, Scale::Linear, vec![series("s", &[(0.0, 0.0), (1.0, 1.0)], false)]);
    c.marks =
        vec![Mark { label: "auto choice".into(), x: 0.5, y: 0.5 }, Mark { label: "gone".into(), x: f64::NAN, y: 1.0 }];
    let doc = svg(&c).unwrap();
    let d = parse(&doc);
    let marks: Vec<_> = d.descendants().filter(|n| n.attribute("class") == Some("mark")).collect();
    assert_eq!(marks.iter().filter(|n| n.has_tag_name("circle")).count(), 1, "the NaN mark is not drawn");
    assert!(marks.iter().any(|n| n.has_tag_name("text") && n.text().is_some_and(|t| t.trim() == "auto choice")));
}

/// (what, chart, lines drawn per series).
fn degenerate() -> Vec<(&'static str, Chart, Vec<usize>)> {
    let one = |x_scale, y_scale, points: &[(f64, f64)]| chart(x_scale, y_scale, vec![series("s", points, false)]);
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    vec![
        ("no series", chart(Scale::Linear, Scale::Linear, vec![]), vec![]),
        ("an empty series", one(Scale::Linear, Scale::Log10, &[]), vec![0]),
        ("one point", one(Scale::Linear, Scale::Linear, &[(1.0, 2.0)]), vec![1]),
        ("one point, log-log", one(Scale::Log2, Scale::Log10, &[(1.0, 2.0)]), vec![1]),
        ("equal points", one(Scale::Linear, Scale::Linear, &[(3.0, 3.0), (3.0, 3.0)]), vec![1]),
        ("all zero", one(Scale::Linear, Scale::Linear, &[(0.0, 0.0), (0.0, 0.0)]), vec![1]),
        ("NaN and inf", one(Scale::Linear, Scale::Linear, &[(nan, 1.0), (1.0, nan), (inf, 0.0), (0.0, -inf)]), vec![0]),
        ("NaN among points", one(Scale::Linear, Scale::Linear, &[(0.0, 1.0), (nan, nan), (2.0, 3.0)]), vec![1]),
        ("non-positive x on log", one(Scale::Log2, Scale::Linear, &[(-1.0, 1.0), (0.0, 2.0), (4.0, 3.0)]), vec![1]),
        ("only non-positive on log", one(Scale::Log10, Scale::Log10, &[(-1.0, 1.0), (0.0, 0.0)]), vec![0]),
        ("huge", one(Scale::Linear, Scale::Linear, &[(-LIMIT, -LIMIT), (LIMIT, LIMIT), (f64::MAX, 1.0)]), vec![1]),
        (
            "tiny and huge on log",
            one(Scale::Log10, Scale::Log2, &[(1.0 / LIMIT, 1.0 / LIMIT), (LIMIT, LIMIT)]),
            vec![1],
        ),
        ("subnormal", one(Scale::Log10, Scale::Linear, &[(5e-324, 1.0), (1e-310, 2.0)]), vec![0]),
        ("beyond the limit on log", one(Scale::Log2, Scale::Log10, &[(1e-300, 1.0), (1e300, 2.0)]), vec![0]),
        (
            "a narrow range far from 0",
            one(Scale::Linear, Scale::Linear, &[(1e15, 1.0), (1e15 + 1.0, 1.0 + 1e-15)]),
            vec![1],
        ),
        (
            "text to escape",
            Chart {
                title: "<&\"'>\u{0}\u{7}\u{FFFF}".into(),
                x_label: "\n\t".into(),
                y_label: "x".repeat(10_000),
                ..one(Scale::Linear, Scale::Linear, &[(0.0, 1.0)])
            },
            vec![1],
        ),
        (
            "names to escape",
            chart(
                Scale::Linear,
                Scale::Linear,
                vec![series("</text>&amp;", &[(0.0, 0.0)], false), series("", &[(1.0, 1.0)], true)],
            ),
            vec![1, 1],
        ),
        (
            "the most series",
            chart(
                Scale::Linear,
                Scale::Log10,
                (0..MAX_SERIES).map(|i| series(&format!("s{i}"), &[(i as f64, 1.0 + i as f64)], i % 2 == 1)).collect(),
            ),
            vec![1; MAX_SERIES],
        ),
    ]
}

#[test]
fn degenerate_charts_give_well_formed_svg() {
    for (what, c, lines) in degenerate() {
        let doc = svg(&c).unwrap_or_else(|e| panic!("{what}: {e}"));
        let d = parse(&doc);
        for (i, &want) in lines.iter().enumerate() {
            assert_eq!(tagged(&d, i, "line").len(), want, "{what}: series {i}");
            assert_eq!(tagged(&d, i, "legend").len(), 3, "{what}: series {i} keeps its legend entry");
        }
    }
}

#[test]
fn too_many_series_are_refused() {
    let c = chart(Scale::Linear, Scale::Linear, vec![Series::default(); MAX_SERIES + 1]);
    match svg(&c) {
        Err(e @ ApiError::Input(_)) => assert!(e.to_string().contains("at most 64 series, got 65"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// xorshift64, for the random charts below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn value(&mut self) -> f64 {
        const SPECIAL: [f64; 12] = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            LIMIT,
            1.0 / LIMIT,
        ];
        match self.below(4) {
            0 => SPECIAL[self.below(SPECIAL.len() as u64) as usize],
            1 => f64::from_bits(self.next()),
            // Nearly equal values at a large magnitude: spans of a few ulps.
            2 => [LIMIT, 1e15, -1e100][self.below(3) as usize] * (1.0 + self.below(4) as f64 * f64::EPSILON),
            _ => (self.below(2_000_000) as f64 - 1e6) * 10f64.powi(self.below(40) as i32 - 20),
        }
    }
}

#[test]
fn random_charts_never_panic_and_always_parse() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let scales = [Scale::Linear, Scale::Log10, Scale::Log2];
    for _ in 0..3000 {
        let n = rng.below(5) as usize;
        let series = (0..n)
            .map(|k| Series {
                name: format!("s{k}"),
                points: (0..rng.below(6)).map(|_| (rng.value(), rng.value())).collect(),
                dashed: rng.below(2) == 1,
            })
            .collect();
        let marks = (0..rng.below(3)).map(|_| Mark { label: "m".into(), x: rng.value(), y: rng.value() }).collect();
        let c = Chart {
            x_scale: scales[rng.below(3) as usize],
            y_scale: scales[rng.below(3) as usize],
            marks,
            ..chart(Scale::Linear, Scale::Linear, series)
        };
        let doc = svg(&c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
        parse(&doc);
    }
}
