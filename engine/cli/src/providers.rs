//! `sixfold providers`: which agent CLIs this machine has, with versions and status, and
//! whether the Codex hooks `sixfold install codex` wrote are trusted (Codex skips untrusted
//! hooks without a word).

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, outln};
use sixfold_hook::install_codex;
use sixfold_launch::probe::{self, ProviderStatus, Status};

/// Show the providers the bundle knows (Claude Code, Codex, OpenCode, …) and what this machine
/// has of each: ready, signed-out, absent (with the install hint), unsupported (older than
/// sixfold knows how to launch and read) or unknown (nobody could ask). Only the exit code of
/// a provider's sign-in status command is read; its output may name an account and is never
/// read, kept or printed. Exit 0.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object: `{"providers": [{"id", "name", "status", "reason", "binary",
    /// "version", "install_hint", "hermetic", "hooks"?}]}`; `hooks` (Codex) lists the installed
    /// sixfold hooks: `[{"file", "event", "key", "hash", "trust"}]`, `trust` one of `trusted`,
    /// `untrusted`, `modified`, `disabled`.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bundle: BundleArgs,
}

pub(crate) fn run(args: Args) -> u8 {
    let (bundle, _, diagnostics) = bundles::load(&args.bundle);
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        errln!("error: the bundle has errors, so its providers cannot be trusted\n  = help: run `sixfold check` for the full report");
        return 2;
    }
    let found: Vec<ProviderStatus> = bundle.providers().map(|p| probe::status(&p.spec, None)).collect();
    let codex_hooks = codex_hooks();
    if args.json {
        let listed: Vec<serde_json::Value> = found
            .iter()
            .map(|p| {
                let mut v = serde_json::to_value(p).unwrap_or_default();
                if let (Some(fields), true) = (v.as_object_mut(), p.id == sixfold_hook::codex::PROVIDER) {
                    fields.insert("hooks".into(), serde_json::to_value(&codex_hooks).unwrap_or_default());
                }
                v
            })
            .collect();
        crate::output::json(&serde_json::json!({ "providers": listed }));
        return 0;
    }
    let id_width = found.iter().map(|p| p.id.len()).max().unwrap_or(0);
    for p in &found {
        let version = p.version.as_deref().unwrap_or("-");
        let hermetic = if p.hermetic {
            "hermetic launch"
        } else {
            "no hermetic launch"
        };
        outln!(
            "{:<id_width$}  {:<11}  {:<10}  {hermetic}",
            p.id,
            p.status.as_str(),
            version
        );
        match (&p.binary, p.status) {
            (_, Status::Absent) => {
                outln!("{:<id_width$}  {}", "", p.reason);
                if let Some(hint) = &p.install_hint {
                    outln!("{:<id_width$}  install: {hint}  (sixfold never installs anything)", "");
                }
            }
            (Some(binary), _) => {
                outln!("{:<id_width$}  {}", "", binary.display());
                outln!("{:<id_width$}  {}", "", p.reason);
            }
            (None, _) => outln!("{:<id_width$}  {}", "", p.reason),
        }
        if p.id == sixfold_hook::codex::PROVIDER {
            for line in hook_lines(&codex_hooks) {
                outln!("{:<id_width$}  {line}", "");
            }
        }
    }
    0
}

/// One of sixfold's hooks in a Codex config file.
#[derive(Debug, serde::Serialize)]
struct FoundHook {
    file: String,
    #[serde(flatten)]
    hook: install_codex::InstalledHook,
}

/// sixfold's hooks in the Codex config files that apply here: the user's, and the project's.
fn codex_hooks() -> Vec<FoundHook> {
    let Ok(spec) = crate::live::shipped_hooks(crate::live::Agent::Codex) else {
        return Vec::new();
    };
    let mut files = Vec::new();
    for user in [true, false] {
        if let Ok(path) = crate::live::settings_file(crate::live::Agent::Codex, user) {
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    let mut found = Vec::new();
    for file in files {
        let Ok(text) = sixfold_hook::install::read_text(&file) else {
            continue;
        };
        // Codex keys a hook by its config file's absolute path as it loads it.
        let keyed = file.canonicalize().unwrap_or_else(|_| file.clone());
        for hook in install_codex::installed(&keyed, &text, &spec) {
            found.push(FoundHook {
                file: file.display().to_string(),
                hook,
            });
        }
    }
    found
}

/// What to print about sixfold's Codex hooks: where they are and whether Codex runs them.
fn hook_lines(hooks: &[FoundHook]) -> Vec<String> {
    if hooks.is_empty() {
        return vec!["hooks: none installed (`sixfold install codex`)".into()];
    }
    let mut files: Vec<&str> = hooks.iter().map(|h| h.file.as_str()).collect();
    files.dedup();
    let mut lines = Vec::new();
    for file in files {
        let mine: Vec<&FoundHook> = hooks.iter().filter(|h| h.file == file).collect();
        let skipped: Vec<String> = mine
            .iter()
            .filter(|h| h.hook.trust != install_codex::Trust::Trusted)
            .map(|h| format!("{} {}", h.hook.event, h.hook.trust.as_str()))
            .collect();
        if skipped.is_empty() {
            lines.push(format!("hooks: {} trusted in {file}", mine.len()));
        } else {
            lines.push(format!(
                "hooks: {} of {} NOT trusted in {file} ({}): Codex skips them without a word; trust them with `/hooks` in `codex`",
                skipped.len(),
                mine.len(),
                skipped.join(", ")
            ));
        }
    }
    lines
}
