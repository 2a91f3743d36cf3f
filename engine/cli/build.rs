//! Links the unwinder statically on Linux with glibc, so that `sixfold` starts without `libgcc_s`.
//!
//! The hook starts once per tool call, and `libgcc_s.so.1` is a third shared library to map and
//! bind, whose constructor (`__cpu_indicator_init`) runs a dozen `cpuid` instructions: each one
//! traps to the hypervisor on a virtual machine (about 10 µs each where this was measured), which
//! `/bin/true` never pays. std only needs the library for its unwinder (`_Unwind_*`), which
//! `libgcc_eh.a` holds too: linked whole into the binary, it defines those symbols before the
//! linker reaches `-lgcc_s`, and `--as-needed` (rustc's default) then leaves `libgcc_s` out.
//! `crt-static` builds link `libgcc_eh` already; where the C compiler cannot name the archive
//! (another libc, a cross build without a configured linker), nothing changes.
//! docs/performance.md, "Start-up", has the figures.
//!
//! It also hands the linker `startup.order` where the linker is LLD (rustc's own on x86-64 Linux
//! since 1.90): the functions `--version` and a hook call run, placed first and side by side, so
//! a hook call faults in fewer pages of the code (docs/performance.md, "Code order"). Names the
//! build no longer has are ignored; `startup-order.py` writes the file again.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    if let Some(dir) = libgcc_eh_dir() {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static:+whole-archive=gcc_eh");
    }
    println!("cargo:rerun-if-changed=startup.order");
    if let Some(order) = startup_order() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// `startup.order`, when the binary is linked by rustc's own LLD, which reads it (GNU ld does
/// not know the option and would fail the link): x86-64 Linux with glibc, rustc 1.90 or later,
/// and no linker chosen by the build's configuration.
fn startup_order() -> Option<PathBuf> {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("TARGET") != "x86_64-unknown-linux-gnu" || env::var_os("RUSTC_LINKER").is_some() {
        return None;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
    {
        return None;
    }
    let version = Command::new(var("RUSTC")).arg("--version").output().ok()?;
    // `rustc 1.95.0 (…)`: the minor version.
    let minor: u32 = String::from_utf8(version.stdout)
        .ok()?
        .split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()?;
    let order = PathBuf::from(var("CARGO_MANIFEST_DIR")).join("startup.order");
    // `-Wl,` splits its argument at commas.
    (minor >= 90 && order.is_file() && !order.to_string_lossy().contains(',')).then_some(order)
}

/// The directory holding the target's `libgcc_eh.a`, when linking it is both possible and useful.
fn libgcc_eh_dir() -> Option<PathBuf> {
    let var = |name: &str| env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return None;
    }
    if var("CARGO_CFG_TARGET_FEATURE").split(',').any(|f| f == "crt-static") {
        return None;
    }
    // The host's compiler names the host's archive: ask it only for the host, or ask the linker
    // the build was given for the target.
    let linker = match env::var("RUSTC_LINKER") {
        Ok(linker) => linker,
        Err(_) if var("HOST") == var("TARGET") => "cc".to_owned(),
        Err(_) => return None,
    };
    let out = Command::new(linker).arg("-print-file-name=libgcc_eh.a").output().ok()?;
    if !out.status.success() {
        return None;
    }
    // A compiler that does not find the file prints its bare name back.
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    if !path.is_absolute() || !path.is_file() {
        return None;
    }
    path.parent().map(PathBuf::from)
}
