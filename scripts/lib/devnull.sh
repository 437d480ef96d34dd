# Sourced by .ci/run and scripts/test.
#
# On some sandboxes /dev/null is a regular file, not the null device: whatever a build script
# sends "to /dev/null" stays in it, and cargo's target probe (`rustc -`, whose stdin Rust opens as
# /dev/null) then compiles that text and fails ("failed to run `rustc` to learn about
# target-specific information"), caching the failure in the target directory.
#
# `ensure_null_device` puts the real character device (1, 3) in place when it can (root); where it
# cannot, `empty_null_file` empties the file, and the callers run it before each cargo step.

ensure_null_device() {
    [ -c /dev/null ] && return 0
    if mknod -m 666 /dev/null.cce-$$ c 1 3 2>/dev/null && mv -f /dev/null.cce-$$ /dev/null; then
        echo "note: /dev/null was a regular file; replaced it with the null device" >&2
    else
        rm -f /dev/null.cce-$$ 2>/dev/null || true
        echo "note: /dev/null is a regular file and cannot be replaced; emptying it before each cargo step" >&2
    fi
}

empty_null_file() {
    if [ -f /dev/null ] && [ -w /dev/null ]; then : > /dev/null; fi
}
