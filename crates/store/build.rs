//! `sqlx::migrate!` embeds the migration files at compile time: rebuild when any of them changes
//! (another area adding `NNNN_name.sql` must not need a `touch` of our sources).

fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
