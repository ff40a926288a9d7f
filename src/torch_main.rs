//! `tafl-lab-torch`: every tafl-lab command, LibTorch linked. Users run `tafl-lab`, which
//! runs the rules-only commands itself and hands the rest to this binary beside it.

mod cli;

/// Keeps freed memory in the process for reuse. LibTorch allocates every activation of a
/// forward pass afresh (megabytes at batch 256); with glibc's defaults each such block is a
/// new `mmap`, paid again in page faults and zeroing on every network call. Measured on the
/// 2-core build machine, that was a fifth of the inference thread's time in self-play, in the
/// kernel. A fixed mmap threshold at glibc's maximum (32 MiB) and a high trim threshold
/// serve those blocks from the heap instead, once touched.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before any other thread
    // exists. A refused value (return 0) leaves glibc's default in place.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
    }
}

fn main() {
    keep_freed_memory();
    if let Err(e) = cli::run() {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
