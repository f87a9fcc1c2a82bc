//! `ptxvm`: the command-line front of the PTX virtual machine.
fn main() {}
