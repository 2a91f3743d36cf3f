//! `sixfold judge`: one step's effects in, one judgement out.

use crate::bundles::{self, BundleArgs};
use crate::output::{errln, out};
use serde_json::{json, Value};
use sixfold_core::bundle::Needs;
use sixfold_core::call::{Call, Called, Layers, Sandboxes, Sandboxing, Under};
use sixfold_core::effects::EffectProfile;
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use sixfold_core::{Bundle, Judgement};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// Effects JSON larger than this is refused: it is untrusted input.
const MAX_EFFECTS_BYTES: u64 = 1024 * 1024;

/// Judge one step's effects under a mode, or a tool call as the hook judges it: the one path
/// the hook takes (the provider's tool map, the command classifier, kept rules, the proven
/// sandbox, the untrusted project's narrowing). Prints one JSON object
/// `{"decision","reason","rules","mode","by"}` (`by`: what decided it, `ceiling`, `rules`,
/// `default` or `unjudgeable`; a tool call adds `act`, `effects` as judged, `contained`,
/// `updated_input` (what would run instead, or null), `parts` and `opaque`) and exits 0 whatever
/// the decision (2 for a usage or bundle error). With `--batch`, one step per line of stdin, one
/// answer per line of stdout, the bundle loaded once. With `--explain`, the judgement of one tool
/// call step by step: each rule considered, the ceiling, and what decided.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example:\n  sixfold judge --mode workspace-write --effects '{\"writes\":[\"/etc/passwd\"]}'\n  \
sixfold judge --tool Bash --input '{\"command\":\"cargo build\"}' --explain\n  \
printf '%s\\n' '{\"tool\":\"Bash\",\"input\":{\"command\":\"git status\"}}' | sixfold judge --batch --mode ask\n\n\
Effects are an object with `reads` and `writes` (named scopes such as `workspace`, `tmp`, `*`, a root's \
name, or paths), and `reaches`, `reversible`, `contained`, `costs`. Missing fields take the empty/false \
defaults, except `reversible`, which defaults to true.\n\n\
A batch line is an object: `mode` (else --mode), and either `effects` or `tool` with `input`; an optional \
`cwd` (absolute, else the primary root) is where a tool call runs. Each answer line carries the input's \
`line` number; a line that cannot be read answers a refusal saying why."
)]
pub(crate) struct Args {
    /// The mode to judge under (see `sixfold modes`); in a batch, the default for lines that name
    /// none. Defaults to the project's active mode (`sixfold mode show`), as the hook judges; a
    /// project whose `.sixfold/` is not trusted is judged as the hook judges it, narrowed to
    /// what the default mode allows.
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// Whether a command step runs in the mode's sandbox where this machine proves it (`auto`, as
    /// the hook does: judged contained and rewritten, see `updated_input`), or is judged as it
    /// is (`off`).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    sandbox: SandboxWhen,
    /// Print, for one tool call, each rule considered in order with whether it matched and why,
    /// the ceiling check, and what decided.
    #[arg(long, requires = "tool")]
    explain: bool,
    /// A workspace root: `DIR` for the primary one (where relative paths resolve), `NAME=DIR` for a
    /// named one (repeatable). Defaults to the current directory.
    #[arg(long = "root", value_name = "[NAME=]DIR")]
    roots: Vec<String>,
    /// The effects as JSON; read from stdin when neither they nor `--tool` are given.
    #[arg(long, value_name = "JSON", conflicts_with_all = ["tool", "batch"])]
    effects: Option<String>,
    /// A tool call's name (`Bash`, `Write`, …), judged as the hook would with `--input`.
    #[arg(long, value_name = "NAME", requires = "input", conflicts_with = "batch")]
    tool: Option<String>,
    /// The tool call's input, a JSON object (`{"command":"…"}` for `Bash`).
    #[arg(long, value_name = "JSON", requires = "tool")]
    input: Option<String>,
    /// The provider whose tool map reads a tool call.
    #[arg(long, value_name = "ID", default_value = sixfold_hook::claude_code::PROVIDER)]
    provider: String,
    /// Judge one step per line of stdin (JSON lines), answering one line each.
    #[arg(long)]
    batch: bool,
    /// Extra context for scripts, as a JSON object.
    #[arg(long, value_name = "JSON")]
    context: Option<String>,
    #[command(flatten)]
    bundle: BundleArgs,
}

/// Whether a command step is judged inside the proven sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SandboxWhen {
    /// As the hook does: contained where this machine proves the mode's environment.
    Auto,
    /// Never contained: every step judged as it is.
    Off,
}

fn usage_error(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    2
}

/// The workspace from `--root` flags: the first unnamed root is primary (the current directory
/// when there is none); named roots are added beside it.
pub(crate) fn workspace(roots: &[String]) -> Result<Workspace, String> {
    let mut primary: Option<PathBuf> = None;
    let mut named = Vec::new();
    for root in roots {
        match root.split_once('=') {
            Some((name, _)) if ["workspace", "tmp", "*"].contains(&name) => {
                return Err(format!("`{name}` is a reserved scope name and cannot name a root"))
            }
            Some((name, dir)) if !name.is_empty() && !name.contains('/') => {
                named.push((name.to_string(), PathBuf::from(dir)))
            }
            _ if primary.is_none() => primary = Some(PathBuf::from(root)),
            _ => return Err(format!("`{root}` is a second primary root; name it as NAME=DIR")),
        }
    }
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let primary = match primary {
        Some(p) if p.is_absolute() => p,
        Some(p) => cwd.join(p),
        None => cwd.clone(),
    };
    let mut ws = Workspace::new(primary).with_process_environment();
    for (name, dir) in named {
        let dir = if dir.is_absolute() { dir } else { cwd.join(dir) };
        ws = ws.with_root(&name, dir);
    }
    Ok(ws)
}

/// One step to judge.
enum StepInput {
    /// Effects as given.
    Effects(EffectProfile),
    /// A tool call, mapped through the provider.
    Tool {
        tool: String,
        input: Value,
        cwd: Option<PathBuf>,
    },
}

/// What judges: the bundle (and, for an untrusted project, the bundle without it), loaded once,
/// and the facts the hook would gather: the project's active mode and pattern, the sandbox layer.
struct Judger {
    bundle: Bundle,
    without: Option<Bundle>,
    context: Context,
    provider: String,
    /// The project's active mode and pattern (the defaults where there is no project state).
    active: (String, String),
    sandboxes: Option<&'static dyn Sandboxes>,
}

impl Judger {
    /// The modes a step is judged under: `mode` (else the active one) with the project's layer
    /// and, while it is untrusted, without it: the same mode where the user named one the layers
    /// without the project have, else the default mode, as the hook judges.
    fn modes<'a>(&'a self, mode: Option<&'a str>) -> (&'a str, Option<&'a str>) {
        let layered = mode.unwrap_or(&self.active.0);
        let without = self.without.as_ref().map(|without| match mode {
            Some(m) if without.mode(m).is_some() => m,
            _ => sixfold_hook::DEFAULT_MODE,
        });
        (layered, without)
    }

    /// The facts of a tool call, for the core's one path.
    fn call<'a>(&'a self, tool: &'a str, input: &'a Value, cwd: &'a Path) -> Call<'a> {
        Call {
            called: Called::Tool {
                provider: &self.provider,
                name: tool,
                input,
            },
            id: "",
            cwd,
            context: &self.context,
            planned_writes: None,
            spawns: 0,
            leasing: None,
        }
    }

    fn layers<'a>(&'a self, mode: Option<&'a str>) -> Layers<'a> {
        let (layered, without_mode) = self.modes(mode);
        Layers {
            layered: Under {
                bundle: &self.bundle,
                mode: layered,
                pattern: &self.active.1,
            },
            without: self.without.as_ref().zip(without_mode).map(|(bundle, mode)| Under {
                bundle,
                mode,
                pattern: sixfold_hook::DEFAULT_PATTERN,
            }),
        }
    }

    fn cwd<'a>(&'a self, cwd: &'a Option<PathBuf>) -> &'a Path {
        cwd.as_deref().unwrap_or_else(|| self.context.workspace.primary())
    }

    /// The judgement of one step under `mode` (else the active mode), as a JSON object.
    fn judge(&self, mode: Option<&str>, step: &StepInput) -> Value {
        let (tool, input, cwd) = match step {
            StepInput::Effects(effects) => return self.judge_effects(mode, effects),
            StepInput::Tool { tool, input, cwd } => (tool, input, cwd),
        };
        let call = self.call(tool, input, self.cwd(cwd));
        let judged = sixfold_core::call::judge(
            &call,
            self.layers(mode),
            Sandboxing {
                sandboxes: self.sandboxes,
            },
        );
        if let Some(ignored) = &judged.ignored {
            errln!("note: untrusted project bundle ignored: {ignored}");
        }
        let mut out = serde_json::to_value(&judged.judgement).unwrap_or(Value::Null);
        if let Value::Object(out) = &mut out {
            out.insert(
                "act".into(),
                json!({"kind": judged.step.act.kind, "text": judged.step.act.text}),
            );
            out.insert("contained".into(), json!(judged.step.effects.contained));
            out.insert("updated_input".into(), judged.updated_input.unwrap_or(Value::Null));
            out.insert("effects".into(), json!(judged.step.effects));
            let parts = (!judged.step.parts.is_empty()).then_some(&judged.step.parts);
            out.insert("parts".into(), json!(parts));
            out.insert("opaque".into(), json!(judged.opaque));
        }
        out
    }

    /// Effects as given, judged under the mode (narrowed while the project is untrusted).
    fn judge_effects(&self, mode: Option<&str>, effects: &EffectProfile) -> Value {
        let (layered, without_mode) = self.modes(mode);
        let mut judgement = self.bundle.judge(layered, effects, &self.context);
        if let (Some(without), Some(mode)) = (&self.without, without_mode) {
            let narrowed = sixfold_core::narrow::narrowed(without.judge(mode, effects, &self.context), judgement);
            if let Some(ignored) = &narrowed.ignored {
                errln!("note: untrusted project bundle ignored: {ignored}");
            }
            judgement = narrowed.judgement;
        }
        serde_json::to_value(&judgement).unwrap_or(Value::Null)
    }

    /// The judgement of one tool call, explained for a person.
    fn explain(&self, mode: Option<&str>, tool: &str, input: &Value) -> String {
        let cwd = self.context.workspace.primary().to_path_buf();
        let call = self.call(tool, input, &cwd);
        let explained = sixfold_core::call::explain(
            &call,
            self.layers(mode),
            Sandboxing {
                sandboxes: self.sandboxes,
            },
        );
        crate::explain::text(tool, &self.provider, &explained)
    }
}

/// Reads effects JSON (untrusted, bounded).
fn effects_from(text: &str) -> Result<EffectProfile, (String, &'static str)> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        (
            format!(
                "the effects are not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
            "pass an object such as {\"writes\":[\"workspace\"]}",
        )
    })?;
    if !value.is_object() {
        return Err((
            "the effects must be a JSON object".into(),
            "pass an object such as {\"reads\":[\"workspace\"],\"reaches\":false}",
        ));
    }
    serde_json::from_value(value).map_err(|e| {
        (
            format!("the effects do not fit the effect profile: {e}"),
            "the fields are reads, writes (lists of scopes), reaches, reversible, contained, costs (booleans)",
        )
    })
}

/// Reads stdin to a bound.
fn read_stdin(bound: u64) -> Result<String, String> {
    let mut buf = String::new();
    std::io::stdin()
        .take(bound + 1)
        .read_to_string(&mut buf)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if buf.len() as u64 > bound {
        return Err(format!("stdin is larger than {bound} bytes"));
    }
    Ok(buf)
}

/// One batch line read into a mode and a step, or why it cannot be.
fn batch_step(line: &str, default_mode: Option<&str>) -> Result<(Option<String>, StepInput), (Option<String>, String)> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| (None, format!("not JSON (column {}): {e}", e.column())))?;
    let Value::Object(mut fields) = value else {
        return Err((None, "a batch line must be a JSON object".into()));
    };
    let mode = match fields.get("mode") {
        Some(Value::String(m)) => Some(m.clone()),
        None => default_mode.map(String::from),
        Some(_) => return Err((None, "`mode` is not a string".into())),
    };
    if let Some(effects) = fields.remove("effects") {
        let effects = effects_from(&effects.to_string()).map_err(|(why, _)| (mode.clone(), why))?;
        return Ok((mode, StepInput::Effects(effects)));
    }
    let tool = match fields.get("tool") {
        Some(Value::String(t)) => t.clone(),
        _ => return Err((mode, "the line has neither `effects` nor a string `tool`".into())),
    };
    let cwd = match fields.get("cwd") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if Path::new(c).is_absolute() => Some(PathBuf::from(c)),
        Some(_) => return Err((mode, "`cwd` is not an absolute path".into())),
    };
    let input = fields.remove("input").unwrap_or(Value::Null);
    Ok((mode, StepInput::Tool { tool, input, cwd }))
}

/// `sixfold judge`: prints the judgement of one step, or of each step of a batch.
pub(crate) fn run(args: Args) -> u8 {
    let single = if args.batch {
        None
    } else if let (Some(tool), Some(input)) = (&args.tool, &args.input) {
        match serde_json::from_str::<Value>(input) {
            Ok(input) => Some(StepInput::Tool {
                tool: tool.clone(),
                input,
                cwd: None,
            }),
            Err(e) => {
                return usage_error(
                    &format!("--input is not valid JSON (column {}): {e}", e.column()),
                    "pass the tool input as an object, e.g. {\"command\":\"ls\"}",
                )
            }
        }
    } else {
        let text = match &args.effects {
            Some(t) => t.clone(),
            None => match read_stdin(MAX_EFFECTS_BYTES) {
                Ok(t) => t,
                Err(why) => return usage_error(&why, "effects are a small JSON object; pass them with --effects JSON"),
            },
        };
        match effects_from(&text) {
            Ok(effects) => Some(StepInput::Effects(effects)),
            Err((message, hint)) => return usage_error(&message, hint),
        }
    };
    let workspace = match workspace(&args.roots) {
        Ok(ws) => ws,
        Err(message) => return usage_error(&message, "--root DIR for the primary root, --root NAME=DIR for others"),
    };
    let mut context = Context::new(workspace);
    if let Some(extra) = &args.context {
        match serde_json::from_str::<Value>(extra) {
            Ok(Value::Object(map)) => context.extra = map,
            _ => {
                return usage_error(
                    "--context must be a JSON object",
                    "e.g. --context '{\"session\":\"abc\"}'",
                )
            }
        }
    }
    let active = match active(&args.bundle) {
        Ok(active) => active,
        Err(why) => return usage_error(&why, "pass --mode ID (see `sixfold modes`)"),
    };
    // One step loads what the hook would load for it (its mode, provider, pattern and tool): a
    // broken file it does not read is `sixfold check`'s to report, as for the hook. A batch may
    // name any mode on any line: it loads the whole bundle.
    let needs = single.as_ref().map(|step| {
        let needs = Needs::mode(args.mode.as_deref().unwrap_or(&active.0))
            .with_provider(&args.provider)
            .with_pattern(&active.1)
            .with_prices(false);
        match step {
            StepInput::Tool { tool, .. } => needs.with_tool(tool),
            StepInput::Effects(_) => needs,
        }
    });
    let (bundle, _, diagnostics) = bundles::load_selected(&args.bundle, needs.as_ref());
    if !diagnostics.is_empty() {
        bundles::report(&diagnostics);
        return usage_error(
            "the bundle has errors, so nothing was judged",
            "run `sixfold check` for the full report",
        );
    }
    // What is not there is named against the whole bundle (the modes and providers it has).
    if let Some(mode) = args.mode.as_deref().filter(|m| bundle.mode(m).is_none()) {
        return crate::names::report(&whole(&args.bundle, bundle, needs.is_some()).unknown_mode(mode));
    }
    if bundle.provider(&args.provider).is_none() {
        return crate::names::report(&whole(&args.bundle, bundle, needs.is_some()).unknown_provider(&args.provider));
    }
    let judger = Judger {
        without: without(&args.bundle, args.mode.as_deref(), needs.as_ref()),
        bundle,
        context,
        provider: args.provider.clone(),
        active,
        sandboxes: match args.sandbox {
            SandboxWhen::Auto => crate::sandbox::for_hook(),
            SandboxWhen::Off => None,
        },
    };
    let code = match single {
        Some(StepInput::Tool { tool, input, .. }) if args.explain => {
            out!("{}", judger.explain(args.mode.as_deref(), &tool, &input));
            0
        }
        Some(step) => {
            let answer = judger.judge(args.mode.as_deref(), &step);
            crate::output::json(&answer);
            0
        }
        None => batch(&judger, args.mode.as_deref()),
    };
    // The process ends right after printing: freeing the bundle would be wasted work on the
    // path whose latency is measured.
    std::mem::forget(judger);
    code
}

/// `bundle`, or where only a selection was loaded, the whole bundle.
fn whole(args: &BundleArgs, bundle: Bundle, selected: bool) -> Bundle {
    if selected {
        bundles::load(args).0
    } else {
        bundle
    }
}

/// For an untrusted project, the bundle without it (see [`Judger::modes`]): with `needs`, only
/// what judging under the mode named (where those layers have it) or else the default mode reads.
fn without(args: &BundleArgs, named: Option<&str>, needs: Option<&Needs>) -> Option<Bundle> {
    let Some(needs) = needs else {
        return bundles::without_untrusted_project(args, None);
    };
    let under = |mode: &str| Needs {
        mode: mode.to_string(),
        pattern: Some(sixfold_hook::DEFAULT_PATTERN.to_string()),
        ..needs.clone()
    };
    let mode = named.unwrap_or(sixfold_hook::DEFAULT_MODE);
    let bundle = bundles::without_untrusted_project(args, Some(&under(mode)))?;
    if bundle.mode(mode).is_some() || named.is_none() {
        return Some(bundle);
    }
    bundles::without_untrusted_project(args, Some(&under(sixfold_hook::DEFAULT_MODE)))
}

/// The project's active mode and pattern, as the hook reads them (the project's state), or the
/// defaults where the project's layer is not read; an error where the state cannot be read.
fn active(args: &BundleArgs) -> Result<(String, String), String> {
    let defaults = (
        sixfold_hook::DEFAULT_MODE.to_string(),
        sixfold_hook::DEFAULT_PATTERN.to_string(),
    );
    if args.no_project {
        return Ok(defaults);
    }
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    let Ok(project) = sixfold_hook::project_of(&cwd) else {
        return Ok(defaults);
    };
    let state = sixfold_hook::state::State::load(&project)?;
    Ok((state.mode_for(None), state.pattern()))
}

/// Judges each line of stdin; a line that cannot be read answers a refusal saying why.
fn batch(judger: &Judger, default_mode: Option<&str>) -> u8 {
    let mut stdin = std::io::stdin().lock();
    let mut number = 0usize;
    loop {
        let mut buf = Vec::new();
        let read = (&mut stdin).take(MAX_EFFECTS_BYTES + 1).read_until(b'\n', &mut buf);
        match read {
            Ok(0) => return 0,
            Ok(_) => {}
            Err(e) => return usage_error(&format!("cannot read stdin: {e}"), "pass one JSON object per line"),
        }
        number += 1;
        if buf.len() as u64 > MAX_EFFECTS_BYTES {
            return usage_error(
                &format!("line {number} of stdin is longer than 1 MiB"),
                "a batch line is one small JSON object",
            );
        }
        let line = String::from_utf8_lossy(&buf);
        if line.trim().is_empty() {
            continue;
        }
        let mut answer = match batch_step(&line, default_mode) {
            Ok((mode, step)) => judger.judge(mode.as_deref(), &step),
            // INVARIANT (fail closed): a line that cannot be read is answered with a refusal.
            Err((mode, why)) => {
                let why = format!("line {number} of the batch cannot be read: {why}");
                serde_json::to_value(Judgement::refuse_unjudgeable(mode.as_deref().unwrap_or(""), why))
                    .unwrap_or(Value::Null)
            }
        };
        if let Value::Object(fields) = &mut answer {
            fields.insert("line".into(), json!(number));
        }
        crate::output::json(&answer);
    }
}
