//! `sixfold judge`, `sixfold hook claude-code`, `sixfold sandbox run`, `sixfold check` and
//! `sixfold modes` timed as whole processes, the way an agent or a person calls them: spawn,
//! load the shipped bundle (the hook: only what its judgement needs), judge one step, print one
//! line, exit (the hook also reads the event on stdin, finds the project and appends to its event
//! log). The hook is timed in a fresh session, in sessions with 10,000 and 100,000 events on
//! record, and in projects with 1,000 kept rules and 1,000 rules of their own. `sandbox run --
//! true` is timed as a person writes it (the bundle loaded) and as the hook writes it (`--proof`:
//! the environment read from the cached proof).
//! `/bin/true` is timed the same way as the floor (what spawning and waiting for any process
//! costs here), and `sixfold --version` shows the binary's own start-up without a bundle. Each run
//! of the interleaved rounds is timed twice: wall clock, and CPU (user + system, the children's
//! rusage to the microsecond, read before and after it). CPU medians are what to compare when the
//! machine is shared: per run and interleaved, a burst of a neighbour's load touches every subject
//! alike (blocks of one subject's runs, as this bench first took, moved 20 % between blocks).
//!
//! Run with `cargo bench -p sixfold-cli --bench process` (`SIXFOLD_BENCH_RUNS=N` to change the
//! number of runs, 200 by default). `SIXFOLD_BENCH_BINARY=PATH` measures another build of
//! `sixfold` than the one cargo built with the bench (an installed one, a static one), and
//! `SIXFOLD_BENCH_AGAINST=PATH` adds that build's `--version`, fresh hook and sandbox line to the
//! same interleaved run, so two builds are compared in one sitting (an A/B, printed as ratios).
//! Speed is measured here, never asserted; the figures and the target are in
//! `docs/performance.md`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// The `sixfold` measured: the one cargo built with this bench, or `SIXFOLD_BENCH_BINARY`.
fn sixfold_binary() -> &'static str {
    static BINARY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    BINARY.get_or_init(|| {
        std::env::var("SIXFOLD_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_sixfold").to_string())
    })
}
const WARM_UP_RUNS: usize = 10;

/// One command to time.
struct Subject {
    label: &'static str,
    program: &'static str,
    args: Vec<String>,
    /// Text its stdout must hold, checked once before timing.
    expect: &'static str,
    /// What it reads on stdin, and where it runs.
    stdin: Option<String>,
    dir: Option<PathBuf>,
    /// Variables set for it.
    env: Vec<(&'static str, PathBuf)>,
    /// A file and a line appended to it before each run (the agent CLI's transcript growing by
    /// one message a step); the append is this process's work, not the subject's.
    grows: Option<(PathBuf, String)>,
    times: Vec<Duration>,
    /// CPU per run, where the children's rusage can be read.
    cpu: Vec<Duration>,
}

impl Subject {
    fn new(label: &'static str, program: &'static str, args: &'static [&'static str], expect: &'static str) -> Subject {
        Subject {
            label,
            program,
            args: args.iter().map(|a| a.to_string()).collect(),
            expect,
            stdin: None,
            dir: None,
            env: Vec::new(),
            grows: None,
            times: Vec::new(),
            cpu: Vec::new(),
        }
    }

    /// Runs it once with output captured (as a hook caller reads it); the wall-clock time.
    fn run(&self) -> Result<(Duration, String), String> {
        if let Some((file, line)) = &self.grows {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(file)
                .map_err(|e| format!("cannot grow {}: {e}", file.display()))?;
            f.write_all(line.as_bytes())
                .map_err(|e| format!("cannot grow {}: {e}", file.display()))?;
        }
        let start = Instant::now();
        let mut command = Command::new(self.program);
        command
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot run `{}`: {e}", self.label))?;
        if let (Some(input), Some(mut pipe)) = (&self.stdin, child.stdin.take()) {
            pipe.write_all(input.as_bytes())
                .map_err(|e| format!("cannot feed `{}`: {e}", self.label))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("cannot run `{}`: {e}", self.label))?;
        let took = start.elapsed();
        if !out.status.success() {
            return Err(format!(
                "`{}` exited with {}: {}",
                self.label,
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok((took, String::from_utf8_lossy(&out.stdout).into_owned()))
    }
}

/// Median, 90th percentile, minimum and mean of a sample.
struct Summary {
    median: Duration,
    p90: Duration,
    min: Duration,
    mean: Duration,
}

fn summarise(times: &[Duration]) -> Summary {
    let mut sorted = times.to_vec();
    sorted.sort();
    let at = |q: f64| {
        let index = ((sorted.len().saturating_sub(1)) as f64 * q).round() as usize;
        sorted.get(index).copied().unwrap_or_default()
    };
    let total: Duration = sorted.iter().sum();
    Summary {
        median: at(0.5),
        p90: at(0.9),
        min: sorted.first().copied().unwrap_or_default(),
        mean: total / u32::try_from(sorted.len().max(1)).unwrap_or(u32::MAX),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn signed_ms(a: Duration, b: Duration) -> String {
    format!("{:+.3} ms", (a.as_secs_f64() - b.as_secs_f64()) * 1e3)
}

fn bench() -> Result<(), String> {
    let runs: usize = match std::env::var("SIXFOLD_BENCH_RUNS") {
        Ok(n) => n
            .parse()
            .map_err(|_| format!("SIXFOLD_BENCH_RUNS=`{n}` is not a number"))?,
        Err(_) => 200,
    };
    let mut subjects = [
        Subject::new("/bin/true", "/bin/true", &[], ""),
        Subject::new("sixfold --version", sixfold_binary(), &["--version"], "sixfold"),
        Subject::new(
            "sixfold judge",
            sixfold_binary(),
            &[
                "judge",
                "--effects",
                r#"{"writes":["./src/x"]}"#,
                "--mode",
                "workspace-write",
                "--no-project",
            ],
            r#""decision":"allow""#,
        ),
        hook_subject("sixfold hook", "fresh", 0, Extra::None)?,
        hook_subject("hook, 10k events", "10k", 10_000, Extra::None)?,
        hook_subject("hook, 100k events", "100k", 100_000, Extra::None)?,
        hook_subject("hook, 1k kept rules", "kept", 0, Extra::KeptRules(1_000))?,
        hook_subject("hook, 1k project rules", "rules", 0, Extra::ProjectRules(1_000))?,
        hook_subject(
            "hook, transcript, no lease",
            "nolease",
            0,
            Extra::Transcript { lease: false },
        )?,
        hook_subject("hook, transcript, lease", "lease", 0, Extra::Transcript { lease: true })?,
        in_project(
            Subject::new(
                "sandbox run -- true",
                sixfold_binary(),
                &["sandbox", "run", "--mode", "workspace-write", "--", "true"],
                "",
            ),
            "sandbox",
        )?,
        hook_line_subject(LINE, sixfold_binary(), "hook-line")?,
        in_project(
            Subject::new("sixfold check", sixfold_binary(), &["check"], "ok"),
            "check",
        )?,
        Subject::new("sixfold modes", sixfold_binary(), &["modes"], "workspace-write"),
    ]
    .into_iter()
    .chain(sandbox_peers()?)
    .chain(against()?)
    .collect::<Vec<_>>();
    for subject in &subjects {
        let (_, stdout) = subject.run()?;
        if !stdout.contains(subject.expect) {
            return Err(format!(
                "`{}` printed {stdout:?}, expected it to hold {:?}",
                subject.label, subject.expect
            ));
        }
        for _ in 0..WARM_UP_RUNS {
            subject.run()?;
        }
    }
    // Interleaved, so drift in the machine's load touches every subject alike, and in a new
    // order each round, so that no subject always follows the same one: what ran just before a
    // start (the CPU's caches, the kernel's) can change what it costs.
    let mut order: Vec<usize> = (0..subjects.len()).collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    for _ in 0..runs {
        shuffle(&mut order, &mut seed);
        for &at in &order {
            let Some(subject) = subjects.get_mut(at) else { continue };
            let before = children_cpu();
            let (took, _) = subject.run()?;
            subject.times.push(took);
            if let (Some(before), Some(after)) = (before, children_cpu()) {
                subject.cpu.push(after.saturating_sub(before));
            }
        }
    }

    println!("process: {runs} runs each, interleaved, after {WARM_UP_RUNS} warm-up runs; wall-clock per run, output captured");
    println!("binary: {}", sixfold_binary());
    println!();
    println!("{:<26} {:>11} {:>11} {:>11} {:>11}", "", "median", "p90", "min", "mean");
    let summaries: Vec<(&str, Summary)> = subjects.iter().map(|s| (s.label, summarise(&s.times))).collect();
    for (label, s) in &summaries {
        println!(
            "{label:<26} {:>11} {:>11} {:>11} {:>11}",
            ms(s.median),
            ms(s.p90),
            ms(s.min),
            ms(s.mean)
        );
    }
    if let Some((_, floor)) = summaries.first() {
        for (label, s) in summaries.iter().skip(2) {
            println!(
                "{:<26} {:>11} {:>11} {:>11} {:>11}",
                format!("{} - /bin/true", label.trim_start_matches("sixfold ")),
                signed_ms(s.median, floor.median),
                signed_ms(s.p90, floor.p90),
                signed_ms(s.min, floor.min),
                signed_ms(s.mean, floor.mean),
            );
        }
    }

    if subjects.iter().any(|s| s.cpu.len() != runs) {
        println!("\n(the children's rusage cannot be read here, so no CPU times)");
        return Ok(());
    }
    println!();
    println!("CPU time (user + system) per run, median of the {runs} interleaved runs:");
    let cpu: Vec<Duration> = subjects.iter().map(|s| summarise(&s.cpu).median).collect();
    for (subject, per_run) in subjects.iter().zip(&cpu) {
        println!("{:<26} {:>11}", subject.label, ms(*per_run));
    }
    if let Some(floor) = cpu.first() {
        for (subject, took) in subjects.iter().zip(&cpu).skip(2) {
            let label = format!("{} - /bin/true", subject.label.trim_start_matches("sixfold "));
            println!("{label:<26} {:>11}", signed_ms(*took, *floor));
        }
        // The goals are ratios in one run: `--version` against `/bin/true`, everything else
        // against `--version`, the hook's variants against the hook in a fresh session.
        // A block that read as no time at all makes no ratio.
        let ratio = |a: &Duration, b: &Duration| match b.is_zero() {
            true => "    n/a".to_string(),
            false => format!("{:>6.2}x", a.as_secs_f64() / b.as_secs_f64()),
        };
        let version = cpu.get(1).copied().unwrap_or_default();
        let hook = cpu.get(3).copied().unwrap_or_default();
        println!();
        for (subject, took) in subjects.iter().zip(&cpu).skip(1) {
            let label = subject.label.trim_start_matches("sixfold ");
            print!("{label:<26} {} /bin/true", ratio(took, floor));
            if subject.label != "sixfold --version" {
                print!("  {} --version", ratio(took, &version));
            }
            if subject.label.starts_with("hook,") {
                print!("  {} the fresh session's hook", ratio(took, &hook));
            }
            println!();
        }
        // The lease clause: checking and charging (steps, seconds and cents, the transcript read
        // and priced) against the same hook and transcript with no lease.
        let of = |label: &str| {
            subjects
                .iter()
                .zip(&cpu)
                .find(|(s, _)| s.label == label)
                .map(|(_, t)| *t)
        };
        // The other build, where one was named: its start-up and its hook against this one's.
        for (label, ours) in [
            (AGAINST_VERSION, "sixfold --version"),
            (AGAINST_HOOK, "sixfold hook"),
            (AGAINST_LINE, LINE),
        ] {
            if let (Some(theirs), Some(ours)) = (of(label), of(ours)) {
                println!("{label:<26} {} this build's", ratio(&theirs, &ours));
            }
        }
        if let (Some(lease), Some(none)) = (of("hook, transcript, lease"), of("hook, transcript, no lease")) {
            println!();
            println!(
                "{:<26} {} the hook with no lease",
                "lease / no lease",
                ratio(&lease, &none)
            );
        }
    }
    Ok(())
}

/// Shuffles `order` (Fisher-Yates, a xorshift generator from `seed`): the same orders every run
/// of the bench, and no dependency for it.
fn shuffle(order: &mut [usize], seed: &mut u64) {
    for i in (1..order.len()).rev() {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let j = usize::try_from(*seed % (i as u64 + 1)).unwrap_or(0);
        order.swap(i, j);
    }
}

/// The peers of `sixfold sandbox run -- true`, where this machine has them: bubblewrap alone
/// (a read-only root, every namespace unshared) and Codex's own sandbox (`codex sandbox`, run
/// as a person runs it, through its Node launcher), from the repository's `node_modules`.
fn sandbox_peers() -> Result<Vec<Subject>, String> {
    let mut peers = Vec::new();
    let on_path = |name: &str| {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
    };
    if on_path("bwrap") {
        peers.push(Subject::new(
            "bwrap -- true",
            "bwrap",
            &[
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--unshare-all",
                "--",
                "true",
            ],
            "",
        ));
    } else {
        println!("(no bwrap on PATH: its figure is left out)");
    }
    let codex = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules/.bin/codex");
    if codex.is_file() {
        let program: &'static str = String::leak(codex.to_string_lossy().into_owned());
        peers.push(in_project(
            Subject::new(
                "codex sandbox -- true",
                program,
                &["sandbox", "-c", "sandbox_mode=\"workspace-write\"", "--", "true"],
                "",
            ),
            "codex",
        )?);
    } else {
        println!("(no node_modules/.bin/codex: `npm ci` first for Codex's figure)");
    }
    Ok(peers)
}

const AGAINST_VERSION: &str = "B: sixfold --version";
const AGAINST_HOOK: &str = "B: sixfold hook";
const AGAINST_LINE: &str = "B: the hook's line";
const LINE: &str = "sandbox run --proof -- true (the hook's line)";

/// Another build of `sixfold` (`SIXFOLD_BENCH_AGAINST`), timed in the same run as this one:
/// its `--version`, its hook in a fresh session of its own and its sandbox line.
fn against() -> Result<Vec<Subject>, String> {
    let Ok(other) = std::env::var("SIXFOLD_BENCH_AGAINST") else {
        return Ok(Vec::new());
    };
    let program: &'static str = String::leak(other);
    let version = Subject::new(AGAINST_VERSION, program, &["--version"], "sixfold");
    let mut hook = hook_subject(AGAINST_HOOK, "against", 0, Extra::None)?;
    hook.program = program;
    let line = hook_line_subject(AGAINST_LINE, program, "against-line")?;
    Ok(vec![version, hook, line])
}

/// What a scratch project holds besides its state.
enum Extra {
    None,
    /// This many kept rules (`.sixfold/policies/kept.toml`, as `sixfold rules add` keeps them).
    KeptRules(usize),
    /// A mode of the project's own over `workspace-write`, with this many rules.
    ProjectRules(usize),
    /// A Claude Code transcript carrying usage, one assistant message more before each call;
    /// with `lease`, a lease of steps, seconds and cents set for the project (never spent here).
    Transcript {
        lease: bool,
    },
}

/// A scratch project named `name` with `workspace-write` set the way a person sets it, so the
/// project's state is trusted (a state file written by anyone else is not). Its trust store and
/// caches live in a directory beside it, and its temp dir in another: the bench never touches
/// the user's own, and, as on a user's machine, the caches lie outside every root a sandboxed
/// command may write (the sandbox reads no cache from inside one: its walk of the roots would
/// then read every directory at every run).
fn scratch(name: &str) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("sixfold-bench-{}-{name}", std::process::id()));
    for made in scratch_dirs(&dir) {
        let _ = std::fs::remove_dir_all(&made);
        std::fs::create_dir_all(&made).map_err(|e| format!("cannot make {}: {e}", made.display()))?;
    }
    std::fs::create_dir_all(dir.join(".git")).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    sixfold(&dir, &["mode", "set", "workspace-write"])?;
    Ok(dir)
}

/// A scratch project, the directory of its user's state and caches, and its temp dir.
fn scratch_dirs(dir: &Path) -> [PathBuf; 3] {
    let beside = |what: &str| {
        let mut path = dir.as_os_str().to_owned();
        path.push(what);
        PathBuf::from(path)
    };
    [dir.to_path_buf(), beside("-home"), beside("-tmp")]
}

/// Runs `sixfold ARGS` in `dir` with the scratch's variables; an error where it fails.
fn sixfold(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new(sixfold_binary())
        .args(args)
        .current_dir(dir)
        .envs(scratch_env(dir))
        .output()
        .map_err(|e| format!("cannot run `sixfold {}`: {e}", args.join(" ")))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "`sixfold {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn scratch_env(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let [_, home, tmp] = scratch_dirs(dir);
    vec![
        ("XDG_STATE_HOME", home.join(".state")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("TMPDIR", tmp),
    ]
}

/// `subject` run in a scratch project of its own.
fn in_project(mut subject: Subject, name: &str) -> Result<Subject, String> {
    let dir = scratch(name)?;
    subject.env = scratch_env(&dir);
    subject.dir = Some(dir);
    Ok(subject)
}

/// `sixfold sandbox run … -- true` as the hook writes it: with `--proof`, the digest of the proof
/// the hook found (taken from `sixfold judge`, which answers as the hook does), so the run reads
/// the environment from the proof instead of loading the bundle.
fn hook_line_subject(label: &'static str, program: &'static str, name: &str) -> Result<Subject, String> {
    let dir = scratch(name)?;
    let out = Command::new(program)
        .args([
            "judge",
            "--mode",
            "workspace-write",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"true"}"#,
        ])
        .current_dir(&dir)
        .envs(scratch_env(&dir))
        .output()
        .map_err(|e| format!("cannot run `sixfold judge`: {e}"))?;
    let judged: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("`sixfold judge`: {e}"))?;
    let line = judged
        .pointer("/updated_input/command")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let digest = line
        .split(' ')
        .skip_while(|w| *w != "--proof")
        .nth(1)
        .ok_or_else(|| format!("no sandbox proven here to write `--proof` for: {line:?}"))?;
    let mut subject = Subject::new(label, program, &[], "");
    let root = dir.to_string_lossy().into_owned();
    subject.args = [
        "sandbox",
        "run",
        "--mode",
        "workspace-write",
        "--root",
        &root,
        "--proof",
        digest,
        "--",
        "true",
    ]
    .map(String::from)
    .to_vec();
    subject.env = scratch_env(&dir);
    subject.dir = Some(dir);
    Ok(subject)
}

/// `sixfold hook claude-code` answering a PreToolUse event for `cargo test` in a scratch
/// project, in a session with `prior` events on record already, and `extra` in the project.
fn hook_subject(label: &'static str, name: &str, prior: usize, extra: Extra) -> Result<Subject, String> {
    let dir = scratch(name)?;
    match extra {
        Extra::None => {}
        Extra::KeptRules(n) => {
            let mut kept = String::from("id = \"kept\"\n");
            for i in 0..n {
                kept.push_str(&format!(
                    "\n[[acts]]\nid = \"kept-{i}\"\ndecision = \"allow\"\ncommand = \"tool-{i} run\"\n"
                ));
            }
            write(&dir.join(".sixfold/policies/kept.toml"), &kept)?;
            sixfold(&dir, &["trust"])?;
        }
        Extra::ProjectRules(n) => {
            let mut mode =
                String::from("id = \"bench\"\nextends = \"workspace-write\"\nenvironment = \"workspace-write\"\n");
            for i in 0..n {
                mode.push_str(&format!(
                    "\n[[rules]]\nid = \"r{i}\"\ndecision = \"refuse\"\nreason = \"generated\"\nwhen.writes = [\"/some/glob/{i}/**\"]\n"
                ));
            }
            write(&dir.join(".sixfold/modes/bench.toml"), &mode)?;
            sixfold(&dir, &["mode", "set", "bench"])?;
        }
        Extra::Transcript { lease } => {
            if lease {
                let big = "1000000000";
                sixfold(
                    &dir,
                    &["lease", "set", "--steps", big, "--seconds", big, "--cents", big],
                )?;
            }
        }
    }
    let transcript = dir.join("transcript.jsonl");
    let grows = match extra {
        Extra::Transcript { .. } => {
            let message = |n: usize| {
                format!(
                    "{{\"type\":\"assistant\",\"message\":{{\"id\":\"msg-{n}\",\"model\":\"claude-sonnet-4-5\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{{\"command\":\"cargo test\"}}}}],\"usage\":{{\"input_tokens\":1200,\"output_tokens\":80,\"cache_read_input_tokens\":30000,\"cache_creation_input_tokens\":500}}}}}}\n"
                )
            };
            write(&transcript, &(0..50).map(message).collect::<String>())?;
            Some((transcript.clone(), message(50)))
        }
        _ => None,
    };
    if prior > 0 {
        write(&dir.join(".sixfold/runs/bench.jsonl"), &session_events(&dir, prior)?)?;
    }
    let event = serde_json::json!({
        "hook_event_name": "PreToolUse", "session_id": "bench", "cwd": dir,
        "tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_use_id": "t",
        "transcript_path": grows.as_ref().map(|_| &transcript),
    });
    let mut subject = Subject::new(
        label,
        sixfold_binary(),
        &["hook", "claude-code"],
        // `cargo test` writes the workspace, which holds the protected paths: asked, uncontained.
        r#""permissionDecision":"ask""#,
    );
    subject.stdin = Some(event.to_string());
    // No sandbox is proven for the hook here: the figure is the judgement's, not the probe's.
    let mut env = scratch_env(&dir);
    env.push(("SIXFOLD_SANDBOX", PathBuf::from("off")));
    subject.env = env;
    subject.dir = Some(dir);
    subject.grows = grows;
    Ok(subject)
}

fn write(file: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {}: {e}", parent.display()))?;
    }
    std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))
}

/// A session's record of `n` events as the hook writes them: a start, then judged steps (a
/// read, a command, now and then a sub-agent) each followed by its outcome.
fn session_events(dir: &Path, n: usize) -> Result<String, String> {
    use sixfold_core::decision::{DecidedBy, Decision, Judgement};
    use sixfold_core::trace::{Event, Outcome, Status, Step, StepAct};
    let root = dir.to_string_lossy();
    let mut text = String::new();
    let mut push = |event: &Event| -> Result<(), String> {
        text.push_str(&serde_json::to_string(event).map_err(|e| e.to_string())?);
        text.push('\n');
        Ok(())
    };
    push(&Event::Started {
        session: "bench".into(),
        cwd: Some(root.to_string()),
        mode: Some("workspace-write".into()),
        provider: Some("claude-code".into()),
        record: None,
    })?;
    for i in 1..n {
        if i % 2 == 0 {
            push(&Event::Observed {
                id: format!("t{}", i - 1),
                outcome: Outcome {
                    status: Status::Completed,
                    exit_code: Some(0),
                },
                edits: Vec::new(),
                output: None,
            })?;
            continue;
        }
        let (tool, kind, act) = match i % 7 {
            1 => ("Bash", "command", "cargo build".to_string()),
            3 => ("Task", "agent", "Explore".to_string()),
            _ => ("Read", "path", format!("{root}/src/file{i}.rs")),
        };
        push(&Event::Judged {
            step: Box::new(Step {
                id: format!("t{i}"),
                tool: tool.into(),
                act: StepAct {
                    kind: kind.into(),
                    text: act,
                },
                cwd: Some(root.to_string()),
                ..Step::default()
            }),
            judgement: Judgement {
                decision: if kind == "agent" {
                    Decision::Refuse
                } else {
                    Decision::Allow
                },
                reason: "allowed by the mode's default".into(),
                rules: Vec::new(),
                mode: "workspace-write".into(),
                by: DecidedBy::Default,
            },
        })?;
    }
    Ok(text)
}

/// The CPU time (user + system) of this process's waited-for children so far (`getrusage`, to
/// the microsecond); `None` where it cannot be read.
fn children_cpu() -> Option<Duration> {
    use nix::sys::resource::{getrusage, UsageWho};
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).ok()?;
    let micros = |t: nix::sys::time::TimeVal| -> Option<u64> {
        Some(u64::try_from(t.tv_sec()).ok()? * 1_000_000 + u64::try_from(t.tv_usec()).ok()?)
    };
    let total = micros(usage.user_time())? + micros(usage.system_time())?;
    Some(Duration::from_micros(total))
}

fn main() -> ExitCode {
    // `cargo bench` passes `--bench` (and any filter); there is nothing to filter here.
    let done = bench();
    // Every scratch directory this run made goes, whatever the run came to.
    let ours = format!("sixfold-bench-{}-", std::process::id());
    if let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) {
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(&ours) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
