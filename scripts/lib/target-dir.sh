# shellcheck shell=bash
# Where cargo builds: CARGO_TARGET_DIR, or whatever else cargo's configuration says, or target/
# (cargo metadata's own answer, so every script agrees with cargo). Prints the absolute path.
# The Python that reads the JSON is $1, python3 by default.
cargo_target_dir() {
    cargo metadata --no-deps --format-version 1 |
        "${1:-python3}" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])'
}
