//! The `tafl-lab` package's integration tests, in one program so that the suite links
//! LibTorch once rather than once per file. Each module is one area; `cargo test --test it
//! AREA::` runs one of them (e.g. `cargo test --release --test it fault::`). The tests of the
//! search, the protocols and the statistics, which need no LibTorch, are in
//! crates/tafl-search/tests; the rules' in crates/tafl-rules/tests.

mod common;

mod balance;
mod calibrate;
mod cli;
mod engine_htp;
mod engine_input;
mod external;
mod fault;
mod front;
mod fuzz;
mod hardening;
mod models_readme;
mod nn;
mod opentafl;
mod outside;
mod pretrain;
mod run_dir;
mod selfplay_search;
mod shard;
mod slurm;
mod tournament;
mod train;
mod train_config;
mod view;
