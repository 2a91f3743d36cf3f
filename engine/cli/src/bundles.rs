//! Which bundles a command loads: the shipped one, the project's `.sixfold/`, then `--bundle`s.

use crate::output::errln;
use sixfold_core::bundle::{Bundle, BundleSource, Needs};
use sixfold_core::diag::Diagnostic;
use sixfold_hook::trust::Standing;
use std::path::{Path, PathBuf};

/// `--bundle DIR`, shared by the commands that load a bundle.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BundleArgs {
    /// A bundle directory to layer over the shipped bundle and the project's `.sixfold/`
    /// (repeatable; later ones win).
    #[arg(long = "bundle", value_name = "DIR")]
    pub bundles: Vec<PathBuf>,
    /// Do not layer the project's `.sixfold/` (the nearest one from the current directory up to
    /// its repository's root).
    #[arg(long)]
    pub no_project: bool,
}

/// The `.sixfold/` of the project `start` belongs to, found as the hook finds it: bounded by its
/// repository, never in `/` or above the user's home (see `sixfold_hook::project`).
pub(crate) fn project_bundle(start: &Path) -> Option<PathBuf> {
    let project = sixfold_hook::project::place(start).ok()?;
    Some(sixfold_hook::project::dir(&project)).filter(|p| p.is_dir())
}

/// The sources in load order, with any diagnostics from reading them.
pub(crate) fn sources(args: &BundleArgs) -> (Vec<BundleSource>, Vec<Diagnostic>) {
    let mut sources = vec![sixfold_core::shipped::source()];
    let mut diagnostics = Vec::new();
    let mut dirs = Vec::new();
    if !args.no_project {
        if let Some(project) = std::env::current_dir().ok().and_then(|cwd| project_bundle(&cwd)) {
            dirs.push(project);
        }
    }
    dirs.extend(args.bundles.iter().cloned());
    for dir in dirs {
        let (source, mut found) = BundleSource::read_dir(&dir);
        diagnostics.append(&mut found);
        sources.push(source);
    }
    (sources, diagnostics)
}

/// Loads the bundle; diagnostics from reading and from loading, together.
pub(crate) fn load(args: &BundleArgs) -> (Bundle, Vec<BundleSource>, Vec<Diagnostic>) {
    load_selected(args, None)
}

/// [`load`], or with `needs` only what judging one step under them reads, as the hook loads:
/// a broken file the step does not need is not read, so it is not reported.
pub(crate) fn load_selected(args: &BundleArgs, needs: Option<&Needs>) -> (Bundle, Vec<BundleSource>, Vec<Diagnostic>) {
    let (sources, mut diagnostics) = sources(args);
    let (bundle, mut found) = load_sources(&sources, needs);
    diagnostics.append(&mut found);
    (bundle, sources, diagnostics)
}

/// When the project's `.sixfold/` is layered but not trusted on this machine: the bundle without
/// it (the shipped bundle and the `--bundle`s, the user's own), so a judgement can be narrowed to
/// what that allows (`sixfold_core::narrow`). `None` when the project layer is trusted, empty or
/// not layered.
/// With `needs`, only what they read is loaded (see [`load_selected`]).
pub(crate) fn without_untrusted_project(args: &BundleArgs, needs: Option<&Needs>) -> Option<Bundle> {
    if args.no_project {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    project_bundle(&cwd)?;
    let project = sixfold_hook::project::place(&cwd).ok()?;
    let standing = match crate::trust::store() {
        Ok(store) => store.standing(&project).unwrap_or(Standing::Untrusted),
        Err(_) => Standing::Untrusted,
    };
    if standing != Standing::Untrusted {
        return None;
    }
    let without = BundleArgs {
        bundles: args.bundles.clone(),
        no_project: true,
    };
    let (sources, _) = sources(&without);
    Some(load_sources(&sources, needs).0)
}

/// Loads sources (whole, or what `needs` read), taking layers parsed before from the user's
/// cache (the same bundle and diagnostics, without parsing their TOML again).
pub(crate) fn load_sources(sources: &[BundleSource], needs: Option<&Needs>) -> (Bundle, Vec<Diagnostic>) {
    match (sixfold_core::bundle::ParseCache::user(), needs) {
        (Some(cache), needs) => Bundle::load_cached(sources, needs, &cache),
        (None, Some(needs)) => Bundle::load_for(sources, needs),
        (None, None) => Bundle::load(sources),
    }
}

/// Prints diagnostics to stderr.
pub(crate) fn report(diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        errln!("{d}\n");
    }
}
