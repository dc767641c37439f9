//! Tests of the real `switchboard` binary: started as a child process on 127.0.0.1:0 with a
//! temporary data dir, driven over HTTP and the CLI, stopped with signals (including SIGKILL).

mod chat;
mod cli;
mod durability;
mod kg_upstream;
mod kill_host;
mod log_escaping;
mod log_noise;
mod people_cli;
mod process;
mod replicas;
mod secrets;
mod servers_cli;
mod shutdown;
mod soak;
mod startup;
mod task_restart;
