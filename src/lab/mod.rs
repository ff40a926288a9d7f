//! Experiments that play games: a match between two agents ([`matches`]: played whole or in
//! shards, stopped by an SPRT), the balance atlas over trained models ([`atlas`]), balance runs ([`balance`]: an agent against itself, per
//! variant, budget and rule change), balance against strength ([`ladder`]: a training run's
//! checkpoints and matches between neighbours), the search handicap that evens a variant
//! ([`handicap`]) and round-robin tournaments ([`tournament`]:
//! crosstable and joint ratings, with the state that lets a killed run resume), with the
//! files each writes; and [`calibrate`], which measures a model on recorded games instead
//! (value calibration per side, its search against its prior, where games end).
//!
//! The games come from [`crate::arena`]; the figures from [`crate::stats`] (Wilson, Elo, the
//! Bradley-Terry fit, which take numbers alone); charts and HTML from [`crate::report`]. The
//! command line only parses arguments and prints.

pub mod atlas;
pub mod balance;
pub mod calibrate;
pub mod handicap;
pub mod ladder;
pub mod matches;
pub mod tournament;
