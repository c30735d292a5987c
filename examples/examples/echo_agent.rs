//! Run with: cargo run -p a2a-examples --example echo_agent
fn main() {}
