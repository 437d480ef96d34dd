//! The page's request messages (crates/cce-web): a request is a JSON object the page's script
//! builds, never a command line, so none of them is reachable from `cce`. Each is produced by
//! `crates/cce-web/tests/requests.rs` (natively) or by the browser test (tests/web/test_page.py).

const WHY: &str = "a request of the page's WebAssembly module (JSON from its script), not a command line; \
                   crates/cce-web/tests/requests.rs and tests/web produce it";

pub(crate) const UNREACHABLE: &[(&str, &str)] = &[
    ("a request of {} bytes: at most", WHY),
    ("unknown --fn '{other}'", WHY),
    ("--{key} must be a string or a number", WHY),
    ("--{key} must be an integer ≥ 0", WHY),
    ("--{key} must be true or false", WHY),
    ("--fields must be an object of field names", WHY),
    ("{} has no field --{name}", WHY),
    (
        "malformed hex: '{c}' at digit {at} is not 0-9 a-f",
        "cce_api::values::parse_hex, which only the page calls directly: the CLI's hex goes through \
         parse_hex_bytes, whose own checks refuse bad digits first; crates/cce-web/tests/requests.rs produces it",
    ),
    (
        "malformed hex: {} digits, an odd number",
        "cce_api::values::parse_hex, which only the page calls directly: the CLI's hex goes through \
         parse_hex_bytes, whose own length check refuses first; crates/cce-web/tests/requests.rs produces it",
    ),
    ("--values has {} values for {} ranks", WHY),
    ("--element {index} is past the {elems} elements", WHY),
    ("{what} {} of the page's memory, over its budget of {}", WHY),
    ("--orders '{other}': expected whole or short", WHY),
    ("--values [{r}] must be a string or a number", WHY),
    ("the request is not a JSON object", WHY),
    ("--values must be a list of one value per rank", WHY),
];
