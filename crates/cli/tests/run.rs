//! Run tests: placeholder until the harness lands (see tests/run/README.md).
fn main() {}
