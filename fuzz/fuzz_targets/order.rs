//! Any text as an order of the order grammar (`cce_numerics::order::Order::parse`): never a
//! panic, and an order that parses prints back to text that parses to the same order.
#![no_main]

use cce_numerics::order::Order;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(order) = Order::parse(&text) {
        let printed = order.to_string();
        assert_eq!(Order::parse(&printed).as_ref(), Ok(&order), "{printed}");
        let _ = (order.leaves(), order.roundings());
    }
});
