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

mod control;
mod error;
mod files;
pub mod hooks;
pub mod probe;
mod record;
mod reports;
mod request;
mod rows;
mod run_dir;
mod vendor;

pub use control::governed::Governed;
pub use error::LaunchError;
pub use request::{EnvArg, Request, StdoutSink, Workdir};
pub use vendor::{Vendor, EXIT_NOT_STARTED};

use control::Scratch;
use record::LineScanner;
use serde::Serialize;
use serde_json::{json, Value};
use sixfold_core::bundle::Bundle;
use sixfold_core::format::{AmbientFile, HermeticFile, RecordSource};
use sixfold_core::launch_facts::{ConfigHomeFacts, LaunchFacts};
use sixfold_core::verdict::{RowResult, Strictness};
use std::path::{Path, PathBuf};
use vendor::Spawn;

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

/// Launches the provider's CLI as asked and checks the run against the bundle's launch rows.
pub fn launch(req: &Request, bundle: &Bundle) -> Result<Outcome, LaunchError> {
    let id = req.provider.id.as_str();
    let binary = vendor::resolve_binary(req)?;
    // INVARIANT (fail closed): a hermetic launch the provider cannot impose is refused, never
    // quietly run `off`.
    let spec = match req.hermetic {
        Strictness::Off => None,
        _ => Some(req.provider.hermetic.as_ref().ok_or_else(|| {
            LaunchError::new(format!(
                "the provider `{id}` has no `[hermetic]` section, so a hermetic launch cannot be imposed"
            ))
            .hint(format!(
                "launch it with `--hermetic off`, or add `[hermetic]` to providers/{id}.toml (see docs/hermetic.md)"
            ))
        })?),
    };
    let run_dir = run_dir::make(id, req.runs_in.as_deref())?;
    let launched = match spec {
        None => launch_off(req, &binary, &run_dir),
        Some(spec) => launch_hermetic(req, bundle, &binary, spec, &run_dir),
    };
    if launched.is_err() {
        // Nothing ran: the run directory holds nothing anybody needs.
        let _ = std::fs::remove_dir_all(&run_dir);
    }
    launched
}

/// `off`: the operator's world, headless, and nothing else.
fn launch_off(req: &Request, binary: &Path, run_dir: &Path) -> Result<Outcome, LaunchError> {
    let mut warnings = Vec::new();
    let (workdir, workdir_facts) = control::workdir::prepare(&req.workdir, run_dir, &mut warnings)?;
    let headless = req.provider.launch.clone().unwrap_or_default();
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
    let governed = governed(req, &workdir, run_dir)?;
    let mut argv = vec![binary.display().to_string()];
    argv.extend(headless.headless_args.iter().cloned());
    argv.extend(governed.iter().flat_map(|g| g.args.iter().cloned()));
    argv.extend(req.vendor_args.iter().cloned());
    let mut env = control::env::inherited(&req.env)?;
    for (key, value) in governed.iter().flat_map(|g| g.env.iter()) {
        env.retain(|(k, _)| k != key);
        env.push((key.clone(), value.into()));
    }
    let attestation = json!({
        "what": "intent, not evidence: what sixfold imposed on this run",
        "provider": req.provider.id,
        "hermetic": "off",
        "imposed": "nothing: the run inherits the operator's environment, config home and settings",
        "binary": binary.display().to_string(),
        "argv": argv,
        "workdir": workdir_facts,
        "run_dir": run_dir.display().to_string(),
        "governed": governed.map(|g| g.facts),
    });
    run_dir::write_json(&run_dir.join("attestation.json"), &attestation, &mut warnings);
    let spawn = Spawn {
        binary,
        argv: &argv,
        env: &env,
        workdir: &workdir,
        close_stdin: headless.close_stdin,
        stdout: req.stdout,
    };
    let vendor = vendor::run(&spawn, run_dir, &mut |_| {});
    let outcome = Outcome {
        attestation,
        rows: Vec::new(),
        ambient_inputs: Vec::new(),
        unclaimed: UNCLAIMED.to_vec(),
        exit: vendor.exit_code(),
        vendor,
        run_dir: run_dir.to_path_buf(),
        warnings,
        facts: Value::Null,
    };
    run_dir::write_json(&run_dir.join("report.json"), &report_json(&outcome), &mut Vec::new());
    Ok(outcome)
}

/// `on` and `strict`: each control imposed in turn, the vendor run, the rows checked.
fn launch_hermetic(
    req: &Request,
    bundle: &Bundle,
    binary: &Path,
    spec: &HermeticFile,
    run_dir: &Path,
) -> Result<Outcome, LaunchError> {
    let provider = &req.provider;
    let headless = provider.launch.clone().unwrap_or_default();
    let mut warnings = Vec::new();

    // ---- the controls: each imposes itself and gives its facts ----------------------------------
    // INVARIANT (fail closed): a control that cannot be imposed as asked ends the launch here,
    // before anything runs: nothing runs half-imposed.
    let (workdir, workdir_facts) = control::workdir::prepare(&req.workdir, run_dir, &mut warnings)?;
    let scratch = Scratch::make(&provider.id, spec, run_dir, workdir)?;
    let operator = |key: &str| std::env::var_os(key);
    let mut env = control::env::impose(&scratch, &operator, &req.env, req.api_key_env.as_deref())?;
    let credentials = control::credentials::impose(&scratch, req.credentials.as_deref())?;
    let mcp = control::mcp::impose(&scratch, req.mcp_config.as_deref())?;
    let setting_sources = control::setting_sources::impose(&scratch);
    let plugins = control::plugins::impose(&scratch, &req.plugins)?;
    let hooks = control::hooks::impose(
        &scratch,
        provider.hooks.as_ref(),
        provider.record.as_ref(),
        &env.vars,
        &req.sixfold_exe,
    )?;
    let governed = governed(req, &scratch.workdir, run_dir)?;
    let mut mcp = mcp;
    if let Some(g) = &governed {
        // The governed servers are given by the launch too: the MCP row counts them as given.
        mcp.servers.extend(g.facts.servers.iter().cloned());
        // So are its variables: set by the launcher, accounted for like its own.
        for (key, value) in &g.env {
            env.vars.insert(key.clone(), value.into());
            env.facts.set.push(key.clone());
        }
        env.facts.set.sort();
        env.facts.set.dedup();
        env.facts.keys = env.vars.keys().cloned().collect();
    }
    let mut argv = vec![binary.display().to_string()];
    argv.extend(headless.headless_args.iter().cloned());
    argv.extend(spec.args.iter().cloned());
    if hooks.installed {
        // The hooks were written by this launch: where the CLI skips hooks nobody trusted, the
        // provider file's flag runs them (Codex's `--dangerously-bypass-hook-trust`).
        argv.extend(provider.hooks.iter().flat_map(|h| h.launch_args.iter().cloned()));
    }
    argv.extend(provider.record.iter().flat_map(|r| r.args.iter().cloned()));
    argv.extend(mcp.args.iter().flatten().cloned());
    argv.extend(setting_sources.args.iter().flatten().cloned());
    argv.extend(plugins.args.iter().cloned());
    argv.extend(governed.iter().flat_map(|g| g.args.iter().cloned()));
    argv.extend(req.vendor_args.iter().cloned());
    let skips = control::hooks::skips(spec, &argv, &env.vars);
    let env_vars: Vec<_> = env.vars.into_iter().collect();
    let pin = control::pin::impose(
        provider,
        binary,
        &env_vars,
        &scratch.workdir,
        req.pin.as_deref(),
        &mut warnings,
    );
    let copy = matches!(req.workdir, Workdir::Copy(_));
    let governing = control::governing::impose(&scratch, copy, &req.govern, &mut warnings)?;
    let launch = LaunchFacts {
        hermetic: req.hermetic,
        binary: binary.display().to_string(),
        argv,
        cwd: scratch.workdir.display().to_string(),
        workdir: workdir_facts,
        env: env.facts,
        config_home: ConfigHomeFacts {
            var: spec.config_home_env.clone(),
            path: scratch.config_home.display().to_string(),
            scratch: true,
        },
        home: scratch.home.display().to_string(),
        credentials,
        mcp,
        setting_sources,
        plugins: plugins.facts,
        plugin_names: plugins.names,
        hooks,
        skips,
        pin,
        memory_walk: governing.memory_walk,
        bundle: governing.bundle,
        governed: governed.map(|g| g.facts),
    };
    let launch_value = serde_json::to_value(&launch).map_err(|e| format!("cannot write the launch facts: {e}"))?;
    let mut attestation = json!({
        "what": "intent, not evidence: what sixfold imposed on this run",
        "sixfold_version": env!("CARGO_PKG_VERSION"),
        "provider": provider.id,
        "run_dir": run_dir.display().to_string(),
        "started_at": run_dir::unix_now(),
        "governing": { "before": governing.before.hashes, "complete": governing.before.complete },
    });
    if let (Some(into), Some(from)) = (attestation.as_object_mut(), launch_value.as_object()) {
        into.extend(from.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    run_dir::write_json(&run_dir.join("attestation.json"), &attestation, &mut warnings);

    // ---- the run -----------------------------------------------------------------------------------
    let mut scanner = provider.record.as_ref().map(LineScanner::new);
    let from_stdout = provider
        .record
        .as_ref()
        .is_some_and(|r| r.source == RecordSource::Stdout);
    let mismatch = control::pin::mismatch(&launch.pin);
    // INVARIANT (fail closed): under `strict`, a declared pin the binary does not match is not
    // started at all: the run could not hold.
    let vendor = match (mismatch, req.hermetic) {
        (Some((pin, found)), Strictness::Strict) => Vendor::not_started(format!(
            "not started: the run pins version {pin} and `{}` is {found} (strict refuses a run that cannot hold)",
            binary.display()
        )),
        _ => {
            let spawn = Spawn {
                binary,
                argv: &launch.argv,
                env: &env_vars,
                workdir: &scratch.workdir,
                close_stdin: headless.close_stdin,
                stdout: req.stdout,
            };
            let mut watch = |chunk: &[u8]| {
                if let Some(s) = scanner.as_mut().filter(|_| from_stdout) {
                    s.feed(chunk);
                }
            };
            vendor::run(&spawn, run_dir, &mut watch)
        }
    };
    if let Some(s) = scanner.as_mut().filter(|_| from_stdout) {
        s.finish();
    }
    if let Some((pin, found)) = mismatch {
        warnings.push(format!("the run pins version {pin}, and the binary is {found}"));
    }

    // ---- the evidence ------------------------------------------------------------------------------
    let hashes = control::governing::after(&scratch, &req.govern, &governing.before);
    let report_run = reports::ReportRun {
        binary,
        env: &env_vars,
        workdir: &scratch.workdir,
        run_args: &req.vendor_args,
    };
    let record = record::read(provider, scanner.as_mut(), &vendor, &scratch.config_home, &report_run);
    let facts = json!({
        "provider": { "id": provider.id, "name": provider.name },
        "hermetic": req.hermetic,
        "launch": launch_value,
        "record": record,
        "vendor": vendor,
        "hashes": hashes,
    });
    let rows = rows::check(bundle, &facts, &mut warnings);
    if let Some(map) = attestation.as_object_mut() {
        map.insert("governing".into(), hashes.attested());
    }
    let mut ambient_inputs = spec.ambient.clone();
    ambient_inputs.extend(governing.ambient);
    let outcome = Outcome {
        attestation,
        exit: rows::exit(&rows, req.hermetic, vendor.exit_code()),
        rows,
        ambient_inputs,
        unclaimed: UNCLAIMED.to_vec(),
        vendor,
        run_dir: run_dir.to_path_buf(),
        warnings,
        facts,
    };
    run_dir::write_json(&run_dir.join("attestation.json"), &outcome.attestation, &mut Vec::new());
    run_dir::write_json(&run_dir.join("report.json"), &report_json(&outcome), &mut Vec::new());
    Ok(outcome)
}

/// The governed controls, when the run is governed.
fn governed(req: &Request, workdir: &Path, run_dir: &Path) -> Result<Option<control::governed::Imposed>, LaunchError> {
    req.governed
        .as_ref()
        .map(|asked| {
            control::governed::impose(
                &req.provider.id,
                req.provider.governed.as_ref(),
                asked,
                &req.sixfold_exe,
                workdir,
                run_dir,
            )
        })
        .transpose()
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
