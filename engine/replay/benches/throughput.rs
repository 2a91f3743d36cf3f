//! Replay throughput and memory on a large Claude Code stream-json corpus.
//!
//! A corpus is generated from `tests/fixtures/replay/claude/fix-then-suite-pass.jsonl` and streamed
//! to disk (never held in memory): its init line once, then its Read/Edit/Write/Bash line groups
//! over and over with fresh tool-use ids and tool outputs padded to realistic sizes (cargo test
//! output of 8–32 KiB, read files of 4–12 KiB, written files of 2–6 KiB), then its final text and
//! result lines. On it this measures:
//!
//! 1. single-core throughput of `sixfold_replay::read_file`, and separately the time of
//!    `Trace::facts` and of evaluating the bundle's trace rows (both also run once per file);
//! 2. scaling over files: the corpus split into 8 files, each read (and then read, facts and rows,
//!    as `sixfold replay` does) by 1 thread and by every core, each thread taking whole files;
//! 3. peak resident memory of the release binary (`sixfold replay FILE --json`) on the fixture,
//!    a 64 MiB corpus and the full corpus, to show memory stays flat as a transcript grows.
//!
//! Run with `cargo build --release -p sixfold-cli && cargo bench -p sixfold-replay --bench
//! throughput`. `SIXFOLD_BENCH_MB=N` sets the corpus size in MiB (256 by default;
//! `SIXFOLD_BENCH_MB=1024` reproduces the 1 GiB transcript of the memory target) and
//! `SIXFOLD_BENCH_RUNS=N` the repetitions (3 by default; medians are reported). MB here is
//! MiB (2^20 bytes). Wall-clock and CPU time are both reported: on a machine busy with other work
//! the wall-clock figures (and the speedup) are lower than the code allows. The targets (≥ 100 MB/s on one core, near-linear over files, a 1 GiB
//! transcript under 100 MB resident) are measured here, never asserted. Files go under Cargo's
//! target tmp dir (else the system temp dir) and are removed at the end, unless
//! `SIXFOLD_BENCH_KEEP` is set (to profile `sixfold replay` on them).

// A bench, not library code: a broken set-up should stop it loudly, and the fixture's shape is known.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::Value;
use sixfold_core::bundle::Bundle;
use sixfold_core::format::FactsKind;
use sixfold_core::scope::Workspace;
use sixfold_core::verdict::{RowResult, Verdict};
use sixfold_replay::{Format, ReadContext, Trace};
use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const FIXTURE: &str = include_str!("../../../tests/fixtures/replay/claude/fix-then-suite-pass.jsonl");
const FIXTURE_PATH: &str = "../../tests/fixtures/replay/claude/fix-then-suite-pass.jsonl";
/// Replaced by the repetition's number in every tool-use id of a group.
const MARK: &str = "@@REP@@";
const MIB: u64 = 1024 * 1024;
/// Files the corpus is split into for the scaling run.
const SPLIT_FILES: u64 = 8;
/// The smaller corpus of the memory run, to compare with the full one.
const SMALL_MB: u64 = 64;

fn main() {
    let size_mb: u64 = env_number("SIXFOLD_BENCH_MB", 256).max(1);
    let runs = usize::try_from(env_number("SIXFOLD_BENCH_RUNS", 3)).unwrap_or(3).max(1);
    let dir = TempDir::new();
    let corpus = Corpus::from_fixture(FIXTURE);
    let (bundle, diagnostics) = Bundle::load(&[sixfold_core::shipped::source()]);
    assert!(diagnostics.is_empty(), "the shipped bundle has errors: {diagnostics:?}");
    let rows = bundle.rows_about(FactsKind::Trace);
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!("replay throughput: {size_mb} MiB corpus, {runs} runs each (medians), {cores} cores");
    println!("load average at start: {}", load_average());
    println!("files under {}", dir.path.display());

    // The fixture alone: what the rows say of the run the corpus repeats.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE_PATH);
    let small = replay(&fixture, &bundle, &rows);
    println!("fixture verdicts: {}", verdicts(&small));

    // 1. Single core.
    let big = dir.path.join("corpus.jsonl");
    let (bytes, generated) = timed(|| corpus.write(&big, size_mb * MIB));
    println!(
        "generated {} in {:.1?} ({:.0} MB/s)",
        show_bytes(bytes),
        generated.wall,
        mb_per_s(bytes, generated.wall)
    );
    let cx = ReadContext { bundle: &bundle };
    let mut read_times = Vec::new();
    let mut trace = None;
    for _ in 0..runs {
        let (t, took) = timed(|| sixfold_replay::read_file(&big, None, &cx).expect("the corpus is readable"));
        read_times.push(took);
        trace = Some(t);
    }
    let trace = trace.expect("at least one run");
    assert_eq!(
        trace.format,
        Format::ClaudeStream.name(),
        "the corpus is detected as stream-json"
    );
    let workspace = workspace_of(&trace);
    let mut facts_times = Vec::new();
    let mut facts = Value::Null;
    for _ in 0..runs {
        let (f, took) = timed(|| trace.facts(&workspace));
        facts_times.push(took);
        facts = f;
    }
    let mut rows_times = Vec::new();
    let mut results = Vec::new();
    for _ in 0..runs {
        let (r, took) = timed(|| bundle.evaluate_rows(&rows, &facts));
        rows_times.push(took);
        results = r;
    }
    let read = median(&mut read_times);
    let facts_took = median(&mut facts_times);
    let rows_took = median(&mut rows_times);
    let edit_lines: usize = trace
        .steps
        .iter()
        .flat_map(|s| &s.edits)
        .map(|e| e.added.len() + e.removed.len())
        .sum();
    let invisible = trace.steps.iter().flat_map(|s| &s.edits).filter(|e| !e.visible).count();
    println!(
        "corpus trace: {} lines, {} steps, {} malformed, ended {}, {} edit lines kept ({} bytes budgeted), {} edits not visible",
        trace.lines,
        trace.steps.len(),
        trace.malformed.len(),
        trace.ended,
        edit_lines,
        trace.edit_bytes,
        invisible
    );
    println!(
        "corpus facts: {} of JSON",
        show_bytes(serde_json::to_vec(&facts).map(|v| v.len() as u64).unwrap_or(0))
    );
    println!("corpus verdicts: {}", verdicts(&results));
    let steps = trace.steps.len();
    drop(facts);
    drop(trace);

    // 2. Scaling over files.
    let parts: Vec<PathBuf> = (0..SPLIT_FILES)
        .map(|i| dir.path.join(format!("part-{i}.jsonl")))
        .collect();
    let part_bytes: u64 = parts
        .iter()
        .map(|p| corpus.write(p, (size_mb * MIB / SPLIT_FILES).max(MIB)))
        .sum();
    let mut threads = vec![1];
    if cores > 1 {
        threads.push(cores);
    }
    let mut scaling = Vec::new();
    for whole in [false, true] {
        for &n in &threads {
            let mut times: Vec<Timed> = (0..runs)
                .map(|_| timed(|| replay_files(&parts, n, &bundle, &rows, whole)).1)
                .collect();
            scaling.push((whole, n, median(&mut times)));
        }
    }

    // 3. Memory of the release binary.
    let binary = release_binary();
    let mut memory = Vec::new();
    match &binary {
        Some(binary) => {
            let mid = dir.path.join("corpus-small.jsonl");
            let mut subjects = vec![(fixture.clone(), std::fs::metadata(&fixture).map(|m| m.len()).unwrap_or(0))];
            if size_mb > SMALL_MB {
                let b = corpus.write(&mid, SMALL_MB * MIB);
                subjects.push((mid, b));
            }
            subjects.push((big, bytes));
            for (path, b) in subjects {
                memory.push((b, peak_rss(binary, &path)));
            }
        }
        None => println!(
            "note: no release binary at {}; build it with `cargo build --release -p sixfold-cli` for the memory figures",
            release_path().display()
        ),
    }
    println!("load average at end: {}", load_average());

    // The table. MB/s by wall-clock time, and by CPU time (what this process got of a core; on a
    // busy machine the wall-clock figure is lower).
    println!();
    println!(
        "{:<44} {:>12} {:>10} {:>12} {:>10}",
        "single core (in process)", "wall", "MB/s", "CPU", "MB/s CPU"
    );
    let whole = Timed {
        wall: read.wall + facts_took.wall + rows_took.wall,
        cpu: read.cpu + facts_took.cpu + rows_took.cpu,
    };
    for (label, took) in [
        (format!("read_file, {}", show_bytes(bytes)), read),
        (format!("trace.facts, {steps} steps"), facts_took),
        (format!("evaluate_rows, {} trace rows", rows.len()), rows_took),
        ("all three".to_string(), whole),
    ] {
        println!(
            "{:<44} {:>12} {:>10.1} {:>12} {:>10.1}",
            label,
            format!("{:.2?}", took.wall),
            mb_per_s(bytes, took.wall),
            format!("{:.2?}", took.cpu),
            mb_per_s(bytes, took.cpu)
        );
    }
    for whole in [false, true] {
        println!();
        println!(
            "{:<44} {:>12} {:>10} {:>8} {:>12} {:>9}",
            format!(
                "{SPLIT_FILES} files, {}, {}",
                show_bytes(part_bytes),
                if whole { "read+facts+rows" } else { "read only" }
            ),
            "wall",
            "MB/s",
            "speedup",
            "CPU",
            "CPU/wall"
        );
        let one = scaling
            .iter()
            .find(|s| s.0 == whole)
            .map(|s| s.2.wall)
            .unwrap_or_default();
        for (_, n, took) in scaling.iter().filter(|s| s.0 == whole) {
            println!(
                "{:<44} {:>12} {:>10.1} {:>7.2}x {:>12} {:>9.2}",
                format!("{n} thread{}", if *n == 1 { "" } else { "s" }),
                format!("{:.2?}", took.wall),
                mb_per_s(part_bytes, took.wall),
                one.as_secs_f64() / took.wall.as_secs_f64().max(1e-9),
                format!("{:.2?}", took.cpu),
                took.cpu.as_secs_f64() / took.wall.as_secs_f64().max(1e-9)
            );
        }
    }
    if !memory.is_empty() {
        println!();
        println!(
            "{:<44} {:>12} {:>10} {:>8}",
            "sixfold replay FILE --json (release)", "wall", "peak RSS", "steps"
        );
        for (b, m) in &memory {
            println!(
                "{:<44} {:>12} {:>10} {:>8}",
                show_bytes(*b),
                format!("{:.2?}", m.wall),
                format!("{:.1} MiB", m.peak_kib as f64 / 1024.0),
                m.steps.map(|s| s.to_string()).unwrap_or_else(|| "?".into())
            );
        }
        println!("(peak RSS from {})", memory.first().map(|m| m.1.source).unwrap_or(""));
    }
}

/// Wall-clock and CPU time (of this whole process) of one measurement.
#[derive(Clone, Copy, Default)]
struct Timed {
    wall: Duration,
    cpu: Duration,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Timed) {
    let (cpu, wall) = (cpu_time(), Instant::now());
    let out = f();
    let took = Timed {
        wall: wall.elapsed(),
        cpu: cpu_time().saturating_sub(cpu),
    };
    (out, took)
}

/// User and system time of this process so far, from `/proc/self/stat` (in clock ticks, taken
/// as 100 a second as on Linux); zero where it cannot be read.
fn cpu_time() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // The fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// A number from the environment, or the default.
fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v} is not a whole number")),
        Err(_) => default,
    }
}

/// The run of median wall-clock time.
fn median(times: &mut [Timed]) -> Timed {
    times.sort_by_key(|t| t.wall);
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn mb_per_s(bytes: u64, took: Duration) -> f64 {
    bytes as f64 / MIB as f64 / took.as_secs_f64().max(1e-9)
}

fn show_bytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

fn verdicts(results: &[RowResult]) -> String {
    let count = |v: Verdict| results.iter().filter(|r| r.verdict == v).count();
    let mut out = format!(
        "{} ok, {} gap, {} unk",
        count(Verdict::Ok),
        count(Verdict::Gap),
        count(Verdict::Unk)
    );
    for r in results {
        out.push_str(&format!(
            "\n  {:<3} {}: {}",
            r.verdict.as_str(),
            r.id,
            short(&r.evidence)
        ));
    }
    out
}

fn short(text: &str) -> String {
    let mut out: String = text.chars().take(140).collect();
    if text.chars().count() > 140 {
        out.push('…');
    }
    out
}

/// The recorded working directory, as `sixfold replay` takes it.
fn workspace_of(trace: &Trace) -> Workspace {
    Workspace::new(trace.cwd.clone().unwrap_or_else(|| "/".into())).with_process_environment()
}

/// One file as `sixfold replay` handles it: read, facts, rows.
fn replay(path: &Path, bundle: &Bundle, rows: &[&str]) -> Vec<RowResult> {
    let trace = sixfold_replay::read_file(path, None, &ReadContext { bundle }).expect("readable");
    let facts = trace.facts(&workspace_of(&trace));
    bundle.evaluate_rows(rows, &facts)
}

/// Replays whole files on `threads` threads, each taking the next file: only read, or read,
/// facts and rows (`whole`).
fn replay_files(files: &[PathBuf], threads: usize, bundle: &Bundle, rows: &[&str], whole: bool) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(file) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if whole {
                        std::hint::black_box(replay(file, bundle, rows));
                    } else {
                        let cx = ReadContext { bundle };
                        std::hint::black_box(sixfold_replay::read_file(file, None, &cx).expect("readable"));
                    }
                }
            });
        }
    });
}

/// The corpus's lines, each split at [`MARK`] so a repetition's number can be put in its ids.
struct Corpus {
    init: String,
    /// Padding variants, each the group's lines in pieces.
    variants: Vec<Vec<Vec<String>>>,
    tail: Vec<String>,
}

impl Corpus {
    /// The fixture's first line is the init line; the last two are the final text and the
    /// result; the lines between are the groups that are repeated.
    fn from_fixture(text: &str) -> Corpus {
        assert!(!text.contains(MARK));
        let lines: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("the fixture is JSON lines"))
            .collect();
        assert!(lines.len() > 3, "the fixture is too short");
        let init = serde_json::to_string(&lines[0]).unwrap();
        let group = &lines[1..lines.len() - 2];
        let tail = lines[lines.len() - 2..]
            .iter()
            .map(|l| serde_json::to_string(l).unwrap())
            .collect();
        let variants = (0..3)
            .map(|k| {
                let sizes = Sizes {
                    bash: (8 << 10) << k,
                    read: 4096 * (k + 1),
                    write: 2048 * (k + 1),
                };
                pad_group(group, &sizes)
                    .iter()
                    .map(|line| {
                        serde_json::to_string(line)
                            .unwrap()
                            .split(MARK)
                            .map(String::from)
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Corpus { init, variants, tail }
    }

    /// Writes a transcript of at least `target` bytes (whole groups), streamed; its size.
    fn write(&self, path: &Path, target: u64) -> u64 {
        let file = std::fs::File::create(path).expect("the temp dir is writable");
        let mut out = Counting {
            inner: BufWriter::with_capacity(1 << 20, file),
            bytes: 0,
        };
        writeln!(out, "{}", self.init).unwrap();
        let mut rep = 0u64;
        while out.bytes < target {
            let group = &self.variants[(rep % self.variants.len() as u64) as usize];
            for pieces in group {
                for (i, piece) in pieces.iter().enumerate() {
                    if i > 0 {
                        write!(out, "{rep:06}").unwrap();
                    }
                    out.write_all(piece.as_bytes()).unwrap();
                }
                out.write_all(b"\n").unwrap();
            }
            rep += 1;
        }
        for line in &self.tail {
            writeln!(out, "{line}").unwrap();
        }
        out.flush().unwrap();
        out.bytes
    }
}

struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Bytes of padded content per kind of tool output.
struct Sizes {
    bash: usize,
    read: usize,
    write: usize,
}

/// The group's lines with marked ids and padded tool inputs and outputs.
fn pad_group(group: &[Value], sizes: &Sizes) -> Vec<Value> {
    let mut tools: HashMap<String, String> = HashMap::new();
    let written = rust_source(sizes.write, "notes");
    let read = rust_source(sizes.read, "lib");
    let numbered: String = read
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}\t{l}\n", i + 1))
        .collect();
    let cargo = cargo_test_output(sizes.bash);
    group
        .iter()
        .map(|line| {
            let mut line = line.clone();
            let kind = line["type"].as_str().unwrap_or("").to_string();
            let structured = line.get("tool_use_result").is_some();
            let Some(blocks) = line.pointer_mut("/message/content").and_then(|c| c.as_array_mut()) else {
                return line;
            };
            let mut result_tool = None;
            for block in blocks.iter_mut() {
                match block["type"].as_str() {
                    Some("tool_use") => {
                        let id = block["id"].as_str().unwrap().to_string();
                        let name = block["name"].as_str().unwrap().to_string();
                        block["id"] = Value::from(format!("{id}_{MARK}"));
                        if name == "Write" {
                            block["input"]["content"] = Value::from(written.clone());
                        }
                        tools.insert(id, name);
                    }
                    Some("tool_result") => {
                        let id = block["tool_use_id"].as_str().unwrap().to_string();
                        block["tool_use_id"] = Value::from(format!("{id}_{MARK}"));
                        let tool = tools.get(&id).cloned().unwrap_or_default();
                        match tool.as_str() {
                            "Read" => block["content"] = Value::from(numbered.clone()),
                            "Bash" => block["content"] = Value::from(cargo.clone()),
                            _ => {}
                        }
                        result_tool = Some(tool);
                    }
                    _ => {}
                }
            }
            if kind == "user" && structured {
                let result = &mut line["tool_use_result"];
                match result_tool.as_deref() {
                    Some("Read") => {
                        let lines = read.lines().count();
                        result["file"]["content"] = Value::from(read.clone());
                        result["file"]["numLines"] = Value::from(lines);
                        result["file"]["totalLines"] = Value::from(lines);
                    }
                    Some("Bash") => result["stdout"] = Value::from(cargo.clone()),
                    Some("Write") => result["content"] = Value::from(written.clone()),
                    _ => {}
                }
            }
            line
        })
        .collect()
}

/// Plausible Rust source of about `bytes` bytes.
fn rust_source(bytes: usize, module: &str) -> String {
    let mut out = format!("//! The {module} module of the scratch crate.\n\nuse std::collections::BTreeMap;\n\n");
    let mut n = 0;
    while out.len() < bytes {
        out.push_str(&format!(
            "/// Computes value {n} from its inputs.\npub fn value_{n}(a: i64, b: i64) -> i64 {{\n    let table: BTreeMap<i64, i64> = (0..a).map(|i| (i, i * b)).collect();\n    table.values().sum::<i64>() + {n}\n}}\n\n"
        ));
        n += 1;
    }
    out
}

/// `cargo test` output of about `bytes` bytes, all passing.
fn cargo_test_output(bytes: usize) -> String {
    let mut tests = String::new();
    let mut n = 0;
    while tests.len() + 600 < bytes {
        tests.push_str(&format!("test module_{}::case_{n}_computes_its_value ... ok\n", n % 17));
        n += 1;
    }
    format!(
        "   Compiling scratch v0.1.0 (/tmp/sixfold-replay.mDziUB/ws)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 3.71s\n     Running unittests src/lib.rs (target/debug/deps/scratch-eac2f1ee85d95d2d)\n\nrunning {n} tests\n{tests}\ntest result: ok. {n} passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.02s\n\n   Doc-tests scratch\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"
    )
}

/// A directory removed when dropped.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> TempDir {
        let base = option_env!("CARGO_TARGET_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let path = base.join(format!("sixfold-replay-throughput-{}", std::process::id()));
        std::fs::create_dir_all(&path).expect("the temp dir can be made");
        TempDir { path }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var_os("SIXFOLD_BENCH_KEEP").is_some() {
            println!("kept the corpus files in {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn release_path() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("release/sixfold")
}

fn release_binary() -> Option<PathBuf> {
    let path = release_path();
    path.is_file().then_some(path)
}

struct Peak {
    peak_kib: u64,
    wall: Duration,
    steps: Option<u64>,
    source: &'static str,
}

/// Runs `sixfold replay FILE --json` and reads its peak resident set size: from
/// `/usr/bin/time -v` where it is installed, else by polling the child's `VmHWM` until it exits.
fn peak_rss(binary: &Path, file: &Path) -> Peak {
    let time = Path::new("/usr/bin/time");
    let started = Instant::now();
    let (stdout, peak_kib, source) = if time.is_file() {
        let out = Command::new(time)
            .arg("-v")
            .arg(binary)
            .arg("replay")
            .arg(file)
            .arg("--json")
            .stdin(Stdio::null())
            .output()
            .expect("`/usr/bin/time -v sixfold replay` runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let kib = stderr
            .lines()
            .find_map(|l| l.trim().strip_prefix("Maximum resident set size (kbytes):"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no peak RSS in `/usr/bin/time -v` output:\n{stderr}"));
        (out.stdout, kib, "/usr/bin/time -v, Maximum resident set size")
    } else {
        let mut child = Command::new(binary)
            .arg("replay")
            .arg(file)
            .arg("--json")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("`sixfold replay` runs");
        let status = format!("/proc/{}/status", child.id());
        let reader = {
            let mut stdout = child.stdout.take().expect("piped");
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                std::io::Read::read_to_end(&mut stdout, &mut buf)
                    .map(|_| buf)
                    .unwrap_or_default()
            })
        };
        let mut kib = 0u64;
        loop {
            if let Ok(text) = std::fs::read_to_string(&status) {
                if let Some(v) = text
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                {
                    kib = kib.max(v);
                }
            }
            if child.try_wait().expect("the child can be waited for").is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (
            reader.join().unwrap_or_default(),
            kib,
            "polling /proc/<pid>/status VmHWM",
        )
    };
    let wall = started.elapsed();
    let steps = serde_json::from_slice::<Value>(&stdout)
        .ok()
        .and_then(|v| v.pointer("/steps/total").and_then(Value::as_u64));
    Peak {
        peak_kib,
        wall,
        steps,
        source,
    }
}
