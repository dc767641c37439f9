//! Rebuilds this crate when anything under `web/` changes, including files added or removed:
//! `rust-embed` tracks only the files that existed when it last expanded, so a new UI module
//! would otherwise be missing from the binary until an unrelated change forced a rebuild.

fn main() {
    println!("cargo:rerun-if-changed=../../web");
}
