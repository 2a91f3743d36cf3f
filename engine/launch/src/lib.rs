//! The hermetic launcher: starts a provider's agent CLI headless, with the controls of the
//! hermetic contract imposed when asked, and gathers the facts its rows are checked over.
//!
//! A hermetic run shares credentials with the operator and nothing else. With `on` or `strict`
//! the launcher builds the child's environment from an allow-list and what the run declares,
//! makes a scratch config home (and a scratch `HOME`), copies a declared credentials file into it
//! as one file, gives the exact MCP set and plugins the run declares, excludes setting sources,
//! works in a directory it owns (a copy) or a declared root, installs sixfold's own hooks in the
//! scratch config home, pins the vendor's version, and hashes the governing documents before and
//! after. Which variables, flags, files and record fields those are is data in the provider file;
//! this crate is the mechanism. It writes what it imposed (the attestation: intent, not
//! evidence), reads the vendor's own record, and evaluates the bundle's launch rows over the
//! facts. It holds no policy: the rows are policy files.

pub mod files;
pub mod hooks;
pub mod probe;
pub mod record;

use serde::Serialize;
use serde_json::{json, Value};
use sixfold_core::bundle::Bundle;
use sixfold_core::format::{AmbientFile, FactsKind, HermeticFile, ProviderFile, RecordSource};
use sixfold_core::verdict::{exit_code, RowResult, Strictness};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A declared MCP config file larger than this is refused.
const MAX_MCP_CONFIG_BYTES: u64 = 1024 * 1024;

/// Each argument as the rows see it is cut to this many characters (a prompt can be long).
const MAX_FACT_ARG_CHARS: usize = 4096;

/// The exit code when the vendor could not be started at all.
pub const EXIT_NOT_STARTED: i32 = 127;

/// Where the run works.
#[derive(Debug, Clone)]
pub enum Workdir {
    /// In place, in a declared directory.
    Root(PathBuf),
    /// In a fresh copy of this tree, made inside the run directory.
    Copy(PathBuf),
    /// In place, in the current directory.
    Current,
}

/// `--env NAME[=VALUE]`: a declared input of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvArg {
    /// The variable.
    pub name: String,
    /// Its value; `None` passes the operator's value through.
    pub value: Option<String>,
}

impl EnvArg {
    /// Parses `NAME` or `NAME=VALUE`.
    pub fn parse(text: &str) -> Result<EnvArg, String> {
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (text, None),
        };
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(format!("`{name}` is not a variable name (letters, digits and `_`)"));
        }
        Ok(EnvArg {
            name: name.to_string(),
            value,
        })
    }
}

/// Where the vendor's standard output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdoutSink {
    /// To sixfold's standard output, as it comes.
    Forward,
    /// To `stdout.jsonl` in the run directory (sixfold's own output is then its report).
    File,
}

/// What to launch, and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The provider, as its file says.
    pub provider: ProviderFile,
    /// `off`, `on` or `strict`.
    pub hermetic: Strictness,
    /// Where it works.
    pub workdir: Workdir,
    /// The version it must be (absent: the version found at launch).
    pub pin: Option<String>,
    /// The one variable that may carry an API key.
    pub api_key_env: Option<String>,
    /// Declared inputs.
    pub env: Vec<EnvArg>,
    /// The exact MCP servers (a config file in the provider's format).
    pub mcp_config: Option<PathBuf>,
    /// The declared plugins: names, or plugin directories.
    pub plugins: Vec<String>,
    /// A credentials file, copied into the scratch config home.
    pub credentials: Option<PathBuf>,
    /// Extra governing documents to pin (relative to the working directory, or absolute).
    pub govern: Vec<PathBuf>,
    /// Where the CLI is, instead of searching `PATH`.
    pub binary: Option<PathBuf>,
    /// The run's own arguments to the CLI.
    pub vendor_args: Vec<String>,
    /// The running sixfold binary (the hook command).
    pub sixfold_exe: PathBuf,
    /// Where the vendor's standard output goes.
    pub stdout: StdoutSink,
    /// Where run directories are made (default: the system temp dir).
    pub runs_in: Option<PathBuf>,
}

/// Why a launch could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchError {
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl LaunchError {
    fn new(message: impl Into<String>) -> LaunchError {
        LaunchError {
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> LaunchError {
        self.hint = Some(hint.into());
        self
    }
}

impl From<String> for LaunchError {
    fn from(message: String) -> LaunchError {
        LaunchError::new(message)
    }
}

impl std::fmt::Display for LaunchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "error: {}", self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  = help: {hint}")?;
        }
        Ok(())
    }
}

/// A control this launcher does not impose, said so rather than left out.
#[derive(Debug, Clone, Serialize)]
pub struct Unclaimed {
    /// The control.
    pub control: &'static str,
    /// Always `unclaimed`: never a successful confinement result.
    pub status: &'static str,
    /// Why.
    pub why: &'static str,
}

/// What this launcher does not claim: shown beside every hermetic run.
pub const UNCLAIMED: [Unclaimed; 3] = [
    Unclaimed {
        control: "outer sandbox",
        status: "unclaimed",
        why: "the vendor's CLI is not placed inside an outer sandbox; its confinement is its own launch's",
    },
    Unclaimed {
        control: "network isolation",
        status: "unclaimed",
        why: "the run can reach whatever this machine can; nothing isolates its network",
    },
    Unclaimed {
        control: "mount enforcement",
        status: "unclaimed",
        why: "the filesystem outside the working directory is neither hidden nor made read-only",
    },
];

/// How the vendor's process went.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Vendor {
    /// Whether it was started.
    pub started: bool,
    /// Its exit code (`128 + N` when signal N ended it).
    pub exit: Option<i32>,
    /// Why it was not started, or did not end normally.
    pub reason: Option<String>,
    /// Where its standard output was written, when not forwarded.
    pub stdout_file: Option<String>,
}

/// A finished launch.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// What was imposed: intent, not evidence.
    pub attestation: Value,
    /// Each launch row's verdict, with its evidence.
    pub rows: Vec<RowResult>,
    /// What the run is exposed to that sixfold reports rather than removes.
    pub ambient_inputs: Vec<AmbientFile>,
    /// What this launcher does not claim.
    pub unclaimed: Vec<Unclaimed>,
    /// How the vendor's process went.
    pub vendor: Vendor,
    /// sixfold's exit code.
    pub exit: i32,
    /// Where the run's files are (config home, copy, attestation, report).
    pub run_dir: PathBuf,
    /// Things a person should know that are not rows.
    pub warnings: Vec<String>,
    /// The facts the rows were evaluated over.
    pub facts: Value,
}

/// The vendor's argv, constructed environment and working directory, with what went into them.
struct Prepared {
    binary: PathBuf,
    argv: Vec<String>,
    env: Option<Vec<(String, OsString)>>,
    workdir: PathBuf,
}

/// Launches the provider's CLI as asked and checks the run against the bundle's launch rows.
pub fn launch(req: &Request, bundle: &Bundle) -> Result<Outcome, LaunchError> {
    let provider = &req.provider;
    let id = provider.id.as_str();
    let binary = resolve_binary(req)?;
    let hermetic = match req.hermetic {
        Strictness::Off => None,
        _ => Some(provider.hermetic.clone().ok_or_else(|| {
            LaunchError::new(format!(
                "the provider `{id}` has no `[hermetic]` section, so a hermetic launch cannot be imposed"
            ))
            .hint(format!(
                "launch it with `--hermetic off`, or add `[hermetic]` to providers/{id}.toml (see docs/hermetic.md)"
            ))
        })?),
    };
    let run_dir = make_run_dir(req)?;
    let launched = launch_in(req, bundle, binary, hermetic, &run_dir);
    if launched.is_err() {
        // Nothing ran: the run directory holds nothing anybody needs.
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    launched
}

fn launch_in(
    req: &Request,
    bundle: &Bundle,
    binary: PathBuf,
    hermetic: Option<HermeticFile>,
    run_dir: &Path,
) -> Result<Outcome, LaunchError> {
    let provider = &req.provider;
    let id = provider.id.as_str();
    let run_dir = run_dir.to_path_buf();
    let mut warnings = Vec::new();
    let (workdir, workdir_facts) = prepare_workdir(req, &run_dir, &mut warnings)?;
    let headless = provider.launch.clone().unwrap_or_default();

    let Some(h) = hermetic else {
        // `off`: the operator's world, headless, and nothing else.
        let ignored: Vec<&str> = [
            ("--pin", req.pin.is_some()),
            ("--api-key-env", req.api_key_env.is_some()),
            ("--mcp-config", req.mcp_config.is_some()),
            ("--plugin", !req.plugins.is_empty()),
            ("--credentials", req.credentials.is_some()),
            ("--govern", !req.govern.is_empty()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect();
        if !ignored.is_empty() {
            warnings.push(format!(
                "{} impose(s) nothing with `--hermetic off`; use `--hermetic on` or `strict`",
                ignored.join(", ")
            ));
        }
        let mut argv = vec![binary.display().to_string()];
        argv.extend(headless.headless_args.iter().cloned());
        argv.extend(req.vendor_args.iter().cloned());
        let mut env: Vec<(String, OsString)> = std::env::vars_os()
            .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
            .collect();
        for e in &req.env {
            let value = declared_value(e)?;
            env.retain(|(k, _)| k != &e.name);
            env.push((e.name.clone(), value));
        }
        let prepared = Prepared {
            binary: binary.clone(),
            argv: argv.clone(),
            env: Some(env),
            workdir: workdir.clone(),
        };
        let attestation = json!({
            "what": "intent, not evidence: what sixfold imposed on this run",
            "provider": id,
            "hermetic": "off",
            "imposed": "nothing: the run inherits the operator's environment, config home and settings",
            "binary": binary.display().to_string(),
            "argv": argv,
            "workdir": workdir_facts,
            "run_dir": run_dir.display().to_string(),
        });
        write_json(&run_dir.join("attestation.json"), &attestation, &mut warnings);
        let vendor = run_vendor(&prepared, headless.close_stdin, req.stdout, &run_dir, None);
        let exit = vendor.exit.unwrap_or(EXIT_NOT_STARTED);
        let outcome = Outcome {
            attestation,
            rows: Vec::new(),
            ambient_inputs: Vec::new(),
            unclaimed: UNCLAIMED.to_vec(),
            vendor,
            exit,
            run_dir: run_dir.clone(),
            warnings,
            facts: Value::Null,
        };
        write_json(&run_dir.join("report.json"), &report_json(&outcome), &mut Vec::new());
        return Ok(outcome);
    };

    // ---- the controls -------------------------------------------------------------------------
    let config_home = run_dir.join("config");
    let home = run_dir.join("home");
    for dir in [&config_home, &home] {
        std::fs::create_dir(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let expand = |template: &str| {
        template
            .replace("{home}", &home.display().to_string())
            .replace("{config_home}", &config_home.display().to_string())
            .replace("{workdir}", &workdir.display().to_string())
    };

    // The environment: an allow-list, what the launcher sets, and what the run declares.
    let mut env: BTreeMap<String, OsString> = BTreeMap::new();
    let mut allowed = Vec::new();
    for key in &h.env_allow {
        if let Some(value) = std::env::var_os(key) {
            env.insert(key.clone(), value);
            allowed.push(key.clone());
        }
    }
    let mut set = Vec::new();
    for (key, template) in &h.env_set {
        env.insert(key.clone(), OsString::from(expand(template)));
        set.push(key.clone());
    }
    env.insert(h.config_home_env.clone(), config_home.clone().into_os_string());
    set.push(h.config_home_env.clone());
    let mut declared = Vec::new();
    for e in &req.env {
        if e.name == h.config_home_env {
            return Err(LaunchError::new(format!(
                "`--env {}` would replace the scratch config home the launcher makes for the run",
                e.name
            ))
            .hint("declare credentials with `--credentials FILE`; settings come from the scratch config home only"));
        }
        env.insert(e.name.clone(), declared_value(e)?);
        declared.push(e.name.clone());
    }
    if let Some(key) = &req.api_key_env {
        if !declared.contains(key) {
            let value = std::env::var_os(key).ok_or_else(|| {
                LaunchError::new(format!("`--api-key-env {key}` names a variable that is not set")).hint(format!(
                    "set {key} in sixfold's environment, or pass `--env {key}=…` too"
                ))
            })?;
            env.insert(key.clone(), value);
            declared.push(key.clone());
        }
    }
    let keys: Vec<String> = env.keys().cloned().collect();
    let api_keys_present: Vec<String> = h.api_key_env.iter().filter(|k| env.contains_key(*k)).cloned().collect();
    set.sort();
    set.dedup();

    // Credentials: one file, copied.
    let credentials = match (&req.credentials, &h.credentials_file) {
        (None, _) => json!({ "declared": false }),
        (Some(_), None) => {
            return Err(LaunchError::new(format!(
                "the provider `{id}` names no credentials file, so `--credentials` cannot be used"
            ))
            .hint(format!("add `credentials_file` to `[hermetic]` in providers/{id}.toml")))
        }
        (Some(from), Some(name)) => {
            if !from.is_file() {
                return Err(LaunchError::new(format!(
                    "`--credentials {}` is not a file",
                    from.display()
                )));
            }
            let to = config_home.join(name);
            std::fs::copy(from, &to)
                .map_err(|e| format!("cannot copy the credentials file `{}`: {e}", from.display()))?;
            restrict(&to);
            json!({ "declared": true, "source": from.display().to_string(), "copied_to": to.display().to_string() })
        }
    };

    // The exact MCP set.
    let mut extra_args: Vec<String> = Vec::new();
    let mcp = match (&h.mcp_args, &req.mcp_config) {
        (None, Some(_)) => {
            return Err(LaunchError::new(format!(
                "the provider `{id}` gives no way to impose an exact MCP set, so `--mcp-config` cannot be used"
            ))
            .hint(format!(
                "add `mcp_args` to `[hermetic]` in providers/{id}.toml, or leave the MCP servers out"
            )))
        }
        (None, None) => json!({
            "imposed": false,
            "servers": [],
            "reason": format!("the provider file gives no MCP arguments; a scratch {} holds no MCP servers", h.config_home_env),
        }),
        (Some(args), declared_file) => {
            let key = h.mcp_servers_key.clone().ok_or_else(|| {
                LaunchError::new(format!("providers/{id}.toml has `mcp_args` but no `mcp_servers_key`"))
                    .hint("name the MCP config file's table of servers, e.g. `mcp_servers_key = \"mcpServers\"`")
            })?;
            let file = run_dir.join("mcp.json");
            let servers = match declared_file {
                Some(path) => {
                    let (text, names) = read_mcp_config(path, &key)?;
                    std::fs::write(&file, text).map_err(|e| format!("cannot write `{}`: {e}", file.display()))?;
                    names
                }
                None => {
                    let empty = json!({ key.clone(): {} }).to_string();
                    std::fs::write(&file, empty).map_err(|e| format!("cannot write `{}`: {e}", file.display()))?;
                    Vec::new()
                }
            };
            let shown = file.display().to_string();
            let given: Vec<String> = args.iter().map(|a| a.replace("{file}", &shown)).collect();
            extra_args.extend(given.iter().cloned());
            json!({ "imposed": true, "config": shown, "servers": servers, "args": given,
                    "declared": declared_file.as_ref().map(|p| p.display().to_string()) })
        }
    };

    // Setting sources.
    let setting_sources = match &h.setting_sources_args {
        Some(args) => {
            extra_args.extend(args.iter().cloned());
            json!({ "imposed": true, "args": args })
        }
        None => json!({
            "imposed": false,
            "reason": format!("providers/{id}.toml gives no arguments that exclude setting sources (`setting_sources_args`)"),
        }),
    };

    // Plugins: declared names, and plugin directories loaded by the provider's arguments.
    let mut plugins = Vec::new();
    for given in &req.plugins {
        let path = Path::new(given);
        if path.is_dir() {
            let args = h.plugin_args.as_ref().ok_or_else(|| {
                LaunchError::new(format!(
                    "the provider `{id}` gives no way to load a plugin directory, so `--plugin {given}` cannot be used"
                ))
                .hint("give the plugin's name instead, or add `plugin_args` to the provider file")
            })?;
            let dir = path.canonicalize().map_err(|e| format!("cannot read `{given}`: {e}"))?;
            let name = plugin_name(&dir, h.plugin_manifest.as_deref());
            let shown = dir.display().to_string();
            extra_args.extend(args.iter().map(|a| a.replace("{path}", &shown)));
            plugins.push(json!({ "name": name, "path": shown }));
        } else {
            plugins.push(json!({ "name": given }));
        }
    }
    let plugin_names: Vec<Value> = plugins.iter().filter_map(|p| p.get("name").cloned()).collect();

    // sixfold's hooks in the scratch config home.
    let hooks = match &h.hooks {
        Some(spec) => match hooks::install(&config_home, spec, &req.sixfold_exe) {
            Ok(done) => json!({ "installed": true, "file": done.file, "events": done.events, "command": done.command }),
            Err(e) => return Err(LaunchError::new(format!("cannot install sixfold's hooks: {e}"))),
        },
        None => json!({
            "installed": false,
            "reason": format!("providers/{id}.toml says no way to install sixfold's hooks (no `[hermetic.hooks]`)"),
        }),
    };

    // The argv.
    let record_spec = provider.record.clone();
    let mut argv = vec![binary.display().to_string()];
    argv.extend(headless.headless_args.iter().cloned());
    argv.extend(h.args.iter().cloned());
    if let Some(r) = &record_spec {
        argv.extend(r.args.iter().cloned());
    }
    argv.extend(extra_args);
    argv.extend(req.vendor_args.iter().cloned());
    let skip_flags: Vec<String> = argv
        .iter()
        .skip(1)
        .filter(|a| {
            h.skip_flags
                .iter()
                .any(|f| *a == f || a.strip_prefix(f.as_str()).is_some_and(|rest| rest.starts_with('=')))
        })
        .cloned()
        .collect();
    let skip_env: Vec<String> = h.skip_env.iter().filter(|k| env.contains_key(*k)).cloned().collect();

    let env_list: Vec<(String, OsString)> = env.into_iter().collect();
    // The version, asked of the binary as it will run, and the pin.
    let found = probe::ask_version(provider, &binary, Some(&env_list), Some(&workdir));
    if let (Ok(version), Some(min)) = (&found, provider.readiness.as_ref().and_then(|r| r.min_version.as_ref())) {
        if probe::older_than(version, min) {
            warnings.push(format!(
                "{id} {version} is older than {min}, the oldest sixfold knows how to launch and read"
            ));
        }
    }
    let pinned = req.pin.clone().or_else(|| found.as_ref().ok().cloned());
    let pin = json!({
        "version": pinned,
        "declared": req.pin.is_some(),
        "found": found.as_ref().ok(),
        "found_error": found.as_ref().err(),
    });

    // The policy bundle that governs sixfold's hooks: a copy gets its own `.sixfold/` (so one
    // above it cannot govern it); in place, the nearest one upwards governs, wherever it is.
    let mut ambient = h.ambient.clone();
    let made_bundle_dir = matches!(req.workdir, Workdir::Copy(_)) && !workdir.join(".sixfold").is_dir();
    if made_bundle_dir {
        let dir = workdir.join(".sixfold");
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let project = files::bundle_project(&workdir);
    let governed_by = match &project {
        Some(p) => {
            let inside = p.starts_with(&workdir);
            if !inside {
                let why = format!(
                    "`{}` holds the nearest `.sixfold/` above the working directory: its mode and rules govern sixfold's hooks in this run, from outside the tree (its bundle files are pinned for H10)",
                    p.display()
                );
                warnings.push(why.clone());
                ambient.push(AmbientFile {
                    name: "policy bundle above the working directory".into(),
                    why,
                });
            }
            json!({ "project": p.display().to_string(), "inside": inside, "made": made_bundle_dir })
        }
        None => json!({ "project": null, "inside": true, "made": false,
                        "note": "no `.sixfold/` governs the run: the shipped bundle and its default mode do" }),
    };

    // Memory files above the working directory, and the governing documents.
    let memory_walk = files::memory_above(&workdir, &h.memory_files);
    for g in &req.govern {
        let path = if g.is_absolute() { g.clone() } else { workdir.join(g) };
        if !path.is_file() {
            return Err(LaunchError::new(format!(
                "`--govern {}`: there is no such file{}",
                g.display(),
                if g.is_absolute() {
                    String::new()
                } else {
                    format!(" in the working directory `{}`", workdir.display())
                }
            ))
            .hint("a relative `--govern` path names a file inside the working directory (the copy, or the root)"));
        }
    }
    let before = files::governing(&workdir, &h.governing, &req.govern);

    let strictness = req.hermetic;
    let mut launch_facts = json!({
        "binary": binary.display().to_string(),
        "argv": argv,
        "cwd": workdir.display().to_string(),
        "workdir": workdir_facts,
        "env": {
            "constructed": true,
            "keys": keys,
            "allowed": allowed,
            "declared": declared,
            "set": set,
            "api_key_env": req.api_key_env,
            "api_keys_present": api_keys_present,
        },
        "config_home": { "var": h.config_home_env, "path": config_home.display().to_string(), "scratch": true },
        "home": home.display().to_string(),
        "credentials": credentials,
        "mcp": mcp,
        "setting_sources": setting_sources,
        "plugins": plugins,
        "plugin_names": plugin_names,
        "hooks": hooks,
        "skips": { "flags": skip_flags, "env": skip_env },
        "pin": pin,
        "memory_walk": memory_walk,
        "bundle": governed_by,
    });
    let mut attestation = json!({
        "what": "intent, not evidence: what sixfold imposed on this run",
        "sixfold_version": env!("CARGO_PKG_VERSION"),
        "provider": id,
        "hermetic": strictness,
        "run_dir": run_dir.display().to_string(),
        "started_at": unix_now(),
    });
    merge(&mut attestation, &launch_facts);
    set_key(
        &mut attestation,
        "governing",
        json!({ "before": before.hashes, "complete": before.complete }),
    );
    write_json(&run_dir.join("attestation.json"), &attestation, &mut warnings);

    // ---- the run ------------------------------------------------------------------------------
    let prepared = Prepared {
        binary: binary.clone(),
        argv: argv_of(&launch_facts),
        env: Some(env_list),
        workdir: workdir.clone(),
    };
    let mismatch = match (&req.pin, &found) {
        (Some(pin), Ok(found)) if pin != found => Some((pin.clone(), found.clone())),
        _ => None,
    };
    let mut scanner = record_spec.as_ref().map(record::LineScanner::new);
    let stdout_scanner = match &record_spec {
        Some(r) if r.source == RecordSource::Stdout => scanner.as_mut(),
        _ => None,
    };
    let vendor = match (&mismatch, strictness) {
        (Some((pin, found)), Strictness::Strict) => Vendor {
            started: false,
            exit: None,
            reason: Some(format!(
                "not started: the run pins version {pin} and `{}` is {found} (strict refuses a run that cannot hold)",
                binary.display()
            )),
            stdout_file: None,
        },
        _ => run_vendor(&prepared, headless.close_stdin, req.stdout, &run_dir, stdout_scanner),
    };
    if let Some((pin, found)) = &mismatch {
        warnings.push(format!("the run pins version {pin}, and the binary is {found}"));
    }

    // ---- the evidence -------------------------------------------------------------------------
    let after = files::governing(&workdir, &h.governing, &req.govern);
    let (hash_before, hash_after) = files::pair(&before, &after);
    let hashes = json!({
        "before": &hash_before,
        "after": &hash_after,
        "pinned": before.hashes.iter().filter(|(_, h)| h.as_str() != files::ABSENT).map(|(k, _)| k.clone()).collect::<Vec<_>>(),
        "complete": before.complete && after.complete,
    });
    let record_facts = read_record(provider, record_spec.as_ref(), scanner.as_mut(), &vendor, &config_home);
    set_key(&mut launch_facts, "hermetic", json!(strictness));
    let facts = json!({
        "provider": { "id": id, "name": provider.name },
        "hermetic": strictness,
        "launch": launch_facts,
        "record": record_facts,
        "vendor": vendor,
        "hashes": hashes,
    });
    let ids = bundle.rows_about(FactsKind::Launch);
    let mut rows = bundle.evaluate_rows(&ids, &facts_for_rows(&facts));
    rows.sort_by_key(|a| natural_key(&a.id));
    if rows.is_empty() {
        warnings.push("the bundle has no launch rows (`facts = \"launch\"`), so nothing was checked".into());
    }
    let vendor_exit = vendor.exit.unwrap_or(EXIT_NOT_STARTED);
    let exit = match strictness {
        Strictness::Strict => match exit_code(&rows, Strictness::Strict) {
            0 => vendor_exit,
            gate => gate,
        },
        _ => vendor_exit,
    };
    set_key(
        &mut attestation,
        "governing",
        json!({ "before": hash_before, "after": hash_after, "complete": before.complete && after.complete }),
    );
    let outcome = Outcome {
        attestation,
        rows,
        ambient_inputs: ambient,
        unclaimed: UNCLAIMED.to_vec(),
        vendor,
        exit,
        run_dir: run_dir.clone(),
        warnings,
        facts,
    };
    write_json(&run_dir.join("attestation.json"), &outcome.attestation, &mut Vec::new());
    write_json(&run_dir.join("report.json"), &report_json(&outcome), &mut Vec::new());
    Ok(outcome)
}

/// The report as printed by `--json` and written as `report.json` beside the run.
pub fn report_json(outcome: &Outcome) -> Value {
    json!({
        "attestation": outcome.attestation,
        "rows": outcome.rows,
        "ambient_inputs": outcome.ambient_inputs,
        "unclaimed": outcome.unclaimed,
        "vendor": outcome.vendor,
        "warnings": outcome.warnings,
        "run_dir": outcome.run_dir.display().to_string(),
        "facts": outcome.facts,
        "exit": outcome.exit,
    })
}

fn resolve_binary(req: &Request) -> Result<PathBuf, LaunchError> {
    let provider = &req.provider;
    let found = match &req.binary {
        Some(b) => {
            if !probe::is_executable(b) {
                return Err(LaunchError::new(format!(
                    "`--binary {}` is not an executable file",
                    b.display()
                )));
            }
            Some(b.clone())
        }
        None => probe::find_binary(&provider.binary.names, std::env::var_os("PATH").as_deref()),
    };
    let found = found.ok_or_else(|| {
        let names: Vec<String> = provider.binary.names.iter().map(|n| format!("`{n}`")).collect();
        let hint = match &provider.binary.install_hint {
            Some(h) => format!("install it with `{h}` (sixfold never installs anything), or give `--binary PATH`"),
            None => "install it, or give `--binary PATH`".into(),
        };
        LaunchError::new(format!("{} is absent: no {} on PATH", provider.id, names.join(" or "))).hint(hint)
    })?;
    // Absolute, so the working directory does not change which binary runs.
    Ok(if found.is_absolute() {
        found
    } else {
        std::env::current_dir().map(|d| d.join(&found)).unwrap_or(found)
    })
}

fn make_run_dir(req: &Request) -> Result<PathBuf, LaunchError> {
    let base = req.runs_in.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create `{}`: {e}", base.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "sixfold-launch-{}-{}-{stamp}-{attempt}",
            req.provider.id,
            std::process::id()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => {
                return Ok(dir.canonicalize().unwrap_or(dir));
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(LaunchError::new(format!("cannot create `{}`: {e}", dir.display()))),
        }
    }
    Err(LaunchError::new(format!(
        "cannot make a run directory in `{}`",
        base.display()
    )))
}

fn prepare_workdir(req: &Request, run_dir: &Path, warnings: &mut Vec<String>) -> Result<(PathBuf, Value), LaunchError> {
    match &req.workdir {
        Workdir::Copy(src) => {
            let dst = run_dir.join("work");
            let stats = files::copy_tree(src, &dst).map_err(|e| {
                LaunchError::new(format!(
                    "cannot copy `{}` into the run's working directory: {e}",
                    src.display()
                ))
            })?;
            if !stats.symlinks_outside.is_empty() {
                warnings.push(format!(
                    "the copy keeps {} link(s) that point outside it: {}",
                    stats.symlinks_outside.len(),
                    stats.symlinks_outside.join(", ")
                ));
            }
            let dst = dst.canonicalize().unwrap_or(dst);
            let source = src.canonicalize().unwrap_or_else(|_| src.clone());
            Ok((
                dst.clone(),
                json!({ "kind": "copy", "path": dst.display().to_string(), "source": source.display().to_string(), "copy": stats }),
            ))
        }
        Workdir::Root(dir) => {
            let dir = dir
                .canonicalize()
                .map_err(|e| LaunchError::new(format!("`--root {}`: {e}", dir.display())))?;
            if !dir.is_dir() {
                return Err(LaunchError::new(format!(
                    "`--root {}` is not a directory",
                    dir.display()
                )));
            }
            Ok((
                dir.clone(),
                json!({ "kind": "root", "path": dir.display().to_string(), "declared": true }),
            ))
        }
        Workdir::Current => {
            let dir = std::env::current_dir()
                .and_then(|d| d.canonicalize())
                .map_err(|e| LaunchError::new(format!("cannot read the current directory: {e}")))?;
            Ok((
                dir.clone(),
                json!({ "kind": "root", "path": dir.display().to_string(), "declared": false }),
            ))
        }
    }
}

fn declared_value(e: &EnvArg) -> Result<OsString, LaunchError> {
    match &e.value {
        Some(v) => Ok(OsString::from(v)),
        None => std::env::var_os(&e.name).ok_or_else(|| {
            LaunchError::new(format!("`--env {}` passes a variable that is not set", e.name))
                .hint(format!("set it, or give its value: `--env {}=VALUE`", e.name))
        }),
    }
}

fn read_mcp_config(path: &Path, key: &str) -> Result<(String, Vec<String>), LaunchError> {
    let meta = std::fs::metadata(path).map_err(|e| format!("`--mcp-config {}`: {e}", path.display()))?;
    if meta.len() > MAX_MCP_CONFIG_BYTES {
        return Err(LaunchError::new(format!(
            "`--mcp-config {}` is larger than {MAX_MCP_CONFIG_BYTES} bytes",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("`--mcp-config {}`: {e}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| LaunchError::new(format!("`--mcp-config {}` is not JSON: {e}", path.display())))?;
    let servers = value.get(key).and_then(Value::as_object).ok_or_else(|| {
        LaunchError::new(format!("`--mcp-config {}` has no `{key}` object", path.display()))
            .hint(format!("an MCP config is `{{\"{key}\": {{\"NAME\": {{…}}}}}}`"))
    })?;
    Ok((text, servers.keys().cloned().collect()))
}

fn plugin_name(dir: &Path, manifest: Option<&str>) -> String {
    let from_manifest = manifest.and_then(|m| {
        let text = std::fs::read_to_string(dir.join(m)).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        v.get("name").and_then(Value::as_str).map(str::to_string)
    });
    from_manifest.unwrap_or_else(|| {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

#[cfg(unix)]
fn restrict(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict(_: &Path) {}

fn argv_of(launch: &Value) -> Vec<String> {
    launch
        .get("argv")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn merge(into: &mut Value, from: &Value) {
    if let (Some(into), Some(from)) = (into.as_object_mut(), from.as_object()) {
        for (k, v) in from {
            into.insert(k.clone(), v.clone());
        }
    }
}

fn set_key(into: &mut Value, key: &str, value: Value) {
    if let Some(map) = into.as_object_mut() {
        map.insert(key.to_string(), value);
    }
}

fn write_json(path: &Path, value: &Value, warnings: &mut Vec<String>) {
    let written = serde_json::to_string_pretty(value)
        .map_err(|e| e.to_string())
        .and_then(|text| std::fs::write(path, text + "\n").map_err(|e| e.to_string()));
    if let Err(e) = written {
        warnings.push(format!("cannot write `{}`: {e}", path.display()));
    }
}

/// Starts the vendor and waits for it, passing its standard output on and scanning it.
fn run_vendor(
    prepared: &Prepared,
    close_stdin: bool,
    sink: StdoutSink,
    run_dir: &Path,
    mut scanner: Option<&mut record::LineScanner>,
) -> Vendor {
    let mut vendor = Vendor::default();
    let mut command = Command::new(&prepared.binary);
    command
        .args(prepared.argv.iter().skip(1))
        .current_dir(&prepared.workdir)
        .stdin(if close_stdin { Stdio::null() } else { Stdio::inherit() })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(env) = &prepared.env {
        command.env_clear();
        command.envs(env.iter().map(|(k, v)| (k, v)));
    }
    let mut file = match sink {
        StdoutSink::Forward => None,
        StdoutSink::File => {
            let path = run_dir.join("stdout.jsonl");
            vendor.stdout_file = Some(path.display().to_string());
            match std::fs::File::create(&path) {
                Ok(f) => Some(f),
                Err(e) => {
                    vendor.reason = Some(format!("not started: cannot write `{}`: {e}", path.display()));
                    return vendor;
                }
            }
        }
    };
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            vendor.reason = Some(format!("not started: cannot run `{}`: {e}", prepared.binary.display()));
            return vendor;
        }
    };
    vendor.started = true;
    let mut forward_ok = true;
    if let Some(mut out) = child.stdout.take() {
        let mut buf = vec![0u8; 64 * 1024];
        let stdout = std::io::stdout();
        loop {
            let n = match out.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let chunk = buf.get(..n).unwrap_or_default();
            if let Some(s) = scanner.as_deref_mut() {
                s.feed(chunk);
            }
            match &mut file {
                Some(f) => forward_ok &= f.write_all(chunk).is_ok(),
                None if forward_ok => {
                    let mut lock = stdout.lock();
                    forward_ok = lock.write_all(chunk).and_then(|_| lock.flush()).is_ok();
                }
                None => {}
            }
        }
    }
    if let Some(s) = scanner {
        s.finish();
    }
    match child.wait() {
        Ok(status) => {
            vendor.exit = status.code().or_else(|| signal_of(&status).map(|s| 128 + s));
            if let Some(sig) = signal_of(&status) {
                vendor.reason = Some(format!("ended by signal {sig}"));
            }
        }
        Err(e) => vendor.reason = Some(format!("cannot wait for the vendor: {e}")),
    }
    vendor
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}

/// The record's facts: found (with its fields), or not, with why.
fn read_record(
    provider: &ProviderFile,
    spec: Option<&sixfold_core::format::RecordFile>,
    scanner: Option<&mut record::LineScanner>,
    vendor: &Vendor,
    config_home: &Path,
) -> Value {
    let id = &provider.id;
    let (Some(spec), Some(scanner)) = (spec, scanner) else {
        return record::not_found(format!("providers/{id}.toml says nothing of a record (no `[record]`)"));
    };
    if !vendor.started {
        return record::not_found(format!(
            "the vendor printed no record: it was {}",
            vendor.reason.clone().unwrap_or_else(|| "not started".into())
        ));
    }
    let ended = match vendor.exit {
        Some(code) => format!("exited with {code}"),
        None => "did not end normally".into(),
    };
    let where_ = match spec.source {
        RecordSource::Stdout => {
            if scanner.found.is_none() {
                let too_long = if scanner.too_long > 0 {
                    format!(", {} too long to read", scanner.too_long)
                } else {
                    String::new()
                };
                return record::not_found(format!(
                    "the vendor {ended} and printed no record: no line of its standard output has {} ({} line(s) read{too_long})",
                    scanner.wanted(),
                    scanner.lines
                ));
            }
            "its standard output".to_string()
        }
        RecordSource::ConfigHome => {
            let Some(glob) = &spec.path else {
                return record::not_found(format!("providers/{id}.toml: a `config-home` record needs a `path`"));
            };
            let found = match record::find_files(config_home, glob) {
                Ok(f) => f,
                Err(e) => return record::not_found(e),
            };
            if found.is_empty() {
                return record::not_found(format!(
                    "the vendor {ended} and wrote no record: no file under the config home matches `{glob}`"
                ));
            }
            let mut which = String::new();
            for file in &found {
                let mut fresh = record::LineScanner::new(spec);
                if record::scan_file(file, &mut fresh).is_ok() && fresh.found.is_some() {
                    scanner.found = fresh.found;
                    which = file.display().to_string();
                    break;
                }
            }
            if scanner.found.is_none() {
                return record::not_found(format!(
                    "the vendor {ended}; {} file(s) match `{glob}` and none has a line with {}",
                    found.len(),
                    scanner.wanted()
                ));
            }
            which
        }
    };
    let mut facts = scanner
        .found
        .as_ref()
        .map(|line| record::facts(spec, line))
        .unwrap_or(Value::Null);
    set_key(&mut facts, "source", Value::String(where_));
    facts
}

/// The facts as rows see them: long arguments cut, so a long prompt cannot hit a script's limits.
fn facts_for_rows(facts: &Value) -> Value {
    let mut out = facts.clone();
    if let Some(argv) = out.pointer_mut("/launch/argv").and_then(Value::as_array_mut) {
        for arg in argv.iter_mut() {
            if let Some(s) = arg.as_str() {
                if s.chars().count() > MAX_FACT_ARG_CHARS {
                    *arg = Value::String(s.chars().take(MAX_FACT_ARG_CHARS).collect());
                }
            }
        }
    }
    out
}

/// A key that sorts `H2` before `H10`: text, then the number after it, run by run.
pub fn natural_key(id: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut digits = String::new();
    for c in id.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
        } else {
            if !digits.is_empty() {
                out.push((std::mem::take(&mut text), digits.parse().unwrap_or(u64::MAX)));
                digits.clear();
            }
            text.push(c);
        }
    }
    if !text.is_empty() || !digits.is_empty() {
        out.push((text, digits.parse().unwrap_or(0)));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn env_args_parse() {
        assert_eq!(
            EnvArg::parse("A=b=c").unwrap(),
            EnvArg {
                name: "A".into(),
                value: Some("b=c".into())
            }
        );
        assert_eq!(EnvArg::parse("PATH").unwrap().value, None);
        assert!(EnvArg::parse("1A=x").is_err());
        assert!(EnvArg::parse("=x").is_err());
        assert!(EnvArg::parse("A-B").is_err());
    }

    #[test]
    fn rows_sort_naturally() {
        let mut ids = vec!["H10", "H2", "H1b", "H11", "H1a", "H9"];
        ids.sort_by_key(|a| natural_key(a));
        assert_eq!(ids, ["H1a", "H1b", "H2", "H9", "H10", "H11"]);
    }
}
