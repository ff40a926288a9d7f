//! Presentation of results: charts ([`plot`], SVG and PNG), self-contained HTML pages
//! ([`html`]), and a training run's learning report ([`learning`]) from the lines of its
//! `metrics.jsonl` ([`metrics`]). Nothing here plays a game: the experiments of [`crate::lab`]
//! and the trainer hand their numbers in.
//!
//! Apart from [`crate::stats`], which is mathematics alone (no files, no plotters, no agents):
//! a chart is drawn with a font and written to disk, and the same drawing serves balance runs,
//! ladders and training runs.

pub mod html;
pub mod learning;
pub mod metrics;
pub mod plot;
