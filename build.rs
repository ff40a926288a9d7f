//! Links LibTorch so the binary runs without LD_LIBRARY_PATH.
//!
//! torch-sys finds LibTorch (here: the PyTorch wheel in the project's virtualenv, found with
//! LIBTORCH_USE_PYTORCH=1) and reports its lib directory. We add that directory as an rpath,
//! and link libtorch_cuda with --no-as-needed when it exists: nothing references its symbols
//! directly, so the linker would otherwise drop it and CUDA would be invisible at run time.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_TCH_LIBTORCH_LIB");
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB").unwrap_or_default();
    let version = torch_version(&lib);
    println!("cargo:rustc-env=TAFL_TORCH_VERSION={version}");
    println!("cargo:rustc-env=TAFL_TORCH_LIB={lib}");
    if lib.is_empty() {
        return;
    }
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // The rpath goes to every target (a binary that does not link LibTorch, like the
    // `tafl-lab` front, never loads it: the path alone loads nothing). Forcing libtorch_cuda
    // in goes only to what runs networks: `tafl-lab-torch`, the tests, the benches.
    if os == "linux" || os == "macos" {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    }
    if os == "linux" && std::path::Path::new(&lib).join("libtorch_cuda.so").exists() {
        for target in ["-bin=tafl-lab-torch=", "-tests=", "-benches="] {
            for a in ["-Wl,--no-as-needed", "-ltorch_cuda", "-Wl,--as-needed"] {
                println!("cargo:rustc-link-arg{target}{a}");
            }
        }
    }
}

/// The torch version from the wheel's `version.py` beside the lib directory, if present.
fn torch_version(lib: &str) -> String {
    let version_py = std::path::Path::new(lib).join("..").join("version.py");
    std::fs::read_to_string(version_py)
        .ok()
        .and_then(|t| t.lines().find(|l| l.starts_with("__version__")).and_then(|l| l.split('\'').nth(1).map(str::to_string)))
        .unwrap_or_else(|| "unknown".to_string())
}
