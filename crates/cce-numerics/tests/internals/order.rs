use cce_numerics::order::*;

#[test]
fn the_issues_examples() {
    assert_eq!(Order::sequential(&[0, 1, 2, 3]).to_string(), "(((0+1)+2)+3)");
    assert_eq!(Order::single(&[0, 1, 2, 3]).to_string(), "(0+1+2+3)");
    assert_eq!(Order::pairwise(&[0, 1, 2, 3]).to_string(), "((0+1)+(2+3))");
    assert_eq!(Order::pairwise(&[0, 1, 2]).to_string(), "((0+1)+2)");
    assert_eq!(Order::sequential(&[2, 1, 0, 3]).leaves(), [2, 1, 0, 3]);
    assert_eq!(Order::pairwise(&[4, 5, 6, 7, 0]).leaves(), [4, 5, 6, 7, 0]);
    assert_eq!(Order::sequential(&[0, 1, 2, 3]).roundings(), 3);
    assert_eq!(Order::single(&[0, 1, 2, 3]).roundings(), 1);
}

#[test]
fn parse_reads_what_display_writes() {
    for text in ["(((0+1)+2)+3)", "(0+1+2+3)", "((0+1)+(2+3))", "g((7+0))", "(g((0+1))+2)", "5", "(12)"] {
        assert_eq!(Order::parse(text).unwrap().to_string(), text);
    }
    assert_eq!(Order::parse(" ( 0 + 1 ) ").unwrap().to_string(), "(0+1)");
    let deep = Order::sequential(&(0..4096).collect::<Vec<_>>());
    assert_eq!(Order::parse(&deep.to_string()).unwrap(), deep);
}

#[test]
fn parse_refuses_what_is_not_an_order() {
    for (text, at) in [("", 0), ("(0+1", 4), ("(0+)", 3), ("0+1", 1), ("(0,1)", 2), ("g0", 1), ("()", 1)] {
        match Order::parse(text) {
            Err(OrderError::Unexpected { at: a, .. }) => assert_eq!(a, at, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert_eq!(Order::parse("99999999999"), Err(OrderError::RankTooLarge { at: 0 }));
    let too_deep = "(".repeat(Order::MAX_DEPTH + 2);
    assert!(matches!(Order::parse(&too_deep), Err(OrderError::TooDeep { .. })));
}
