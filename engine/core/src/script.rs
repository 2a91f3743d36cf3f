//! The hardened Rhai host: the one place the script engine is configured.
//!
//! Scripts are compiled once per bundle load and called many times. They cannot import modules
//! or `eval` text, their output is captured rather than printed, and every call is bounded in
//! operations, call depth, expression depth, string/array/map sizes and wall-clock time. A call
//! that errors or hits a limit is an error the caller turns into a fail-closed outcome.

use crate::diag::Diagnostic;
use rhai::{Dynamic, Engine, EvalAltResult, Position, Scope, AST};
use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Explicit limits on every script call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptLimits {
    /// Operations per call.
    pub max_operations: u64,
    /// Nested function calls.
    pub max_call_levels: usize,
    /// Expression nesting, at top level and inside functions.
    pub max_expr_depth: usize,
    /// Bytes in one string.
    pub max_string_size: usize,
    /// Items in one array.
    pub max_array_size: usize,
    /// Entries in one map.
    pub max_map_size: usize,
    /// Wall-clock time per call.
    pub deadline: Duration,
    /// Lines of `print`/`debug` output kept per call.
    pub max_printed_lines: usize,
}

impl Default for ScriptLimits {
    fn default() -> Self {
        ScriptLimits {
            max_operations: 1_000_000,
            max_call_levels: 32,
            max_expr_depth: 64,
            max_string_size: 64 * 1024,
            max_array_size: 10_000,
            max_map_size: 10_000,
            deadline: Duration::from_millis(250),
            max_printed_lines: 64,
        }
    }
}

/// Compiled patterns kept per thread, so a script calling `regex_match` in a loop compiles once.
const PATTERN_CACHE: usize = 512;

impl ScriptLimits {
    /// Limits for row scripts, which read a whole run's facts. The facts are data the script did
    /// not make, and Rhai's size limits count every string and item inside a container, again at
    /// every change to it: over a long run's facts they would fail every row and cost time
    /// quadratic in its length. So rows run without size limits (0), with an operation budget
    /// scaled to long runs; the wall-clock deadline still bounds every call.
    pub fn for_facts() -> ScriptLimits {
        ScriptLimits {
            max_operations: 500_000_000,
            max_string_size: 0,
            max_array_size: 0,
            max_map_size: 0,
            deadline: Duration::from_secs(20),
            ..ScriptLimits::default()
        }
    }
}

thread_local! {
    static REGEXES: RefCell<std::collections::HashMap<String, regex::Regex>> = RefCell::new(std::collections::HashMap::new());
    static GLOBS: RefCell<std::collections::HashMap<String, globset::GlobMatcher>> = RefCell::new(std::collections::HashMap::new());
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    static PRINTED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// How often (in operations) the wall clock is read: reading it on every operation would cost
/// more than most scripts.
const CLOCK_EVERY: u64 = 512;

/// What compiling a script gave: its AST, or where and why it failed.
type Compiled = Result<Arc<AST>, (Option<(usize, usize)>, String)>;

/// A script: compiled when loaded, or (for files checked at build time, such as the shipped
/// bundle's) on first use. Clones share the compilation.
#[derive(Debug, Clone)]
pub struct Script {
    /// The file it came from, for diagnostics.
    pub file: String,
    text: Arc<str>,
    ast: Arc<OnceLock<Compiled>>,
}

impl Script {
    /// True when the script defines `name` taking `arity` parameters; `None` when it is not
    /// compiled yet.
    pub fn has_function(&self, name: &str, arity: usize) -> Option<bool> {
        match self.ast.get()? {
            Ok(ast) => Some(ast.iter_functions().any(|f| f.name == name && f.params.len() == arity)),
            Err(_) => Some(false),
        }
    }
}

/// Why a script call gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// The script's file.
    pub file: String,
    /// 1-based line and column inside the script, when known.
    pub position: Option<(usize, usize)>,
    /// What happened.
    pub message: String,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// The result of one call: its value and anything it printed.
#[derive(Debug, Clone)]
pub struct CallOutput {
    /// What the function returned.
    pub value: Dynamic,
    /// Lines it printed with `print` or `debug`.
    pub printed: Vec<String>,
}

/// The configured engine. One per bundle; shared by every call. The engine itself is built on
/// first use, so a bundle whose scripts never run pays nothing for it.
pub struct ScriptHost {
    engine: OnceLock<Engine>,
    limits: ScriptLimits,
}

impl fmt::Debug for ScriptHost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScriptHost").field("limits", &self.limits).finish()
    }
}

impl Default for ScriptHost {
    fn default() -> Self {
        ScriptHost::new(ScriptLimits::default())
    }
}

impl ScriptHost {
    /// An engine with the given limits.
    pub fn new(limits: ScriptLimits) -> ScriptHost {
        ScriptHost {
            engine: OnceLock::new(),
            limits,
        }
    }

    fn engine(&self) -> &Engine {
        self.engine.get_or_init(|| build_engine(self.limits))
    }
}

fn build_engine(limits: ScriptLimits) -> Engine {
    let mut engine = Engine::new();
    // `import` is compiled out (`no_module`); `eval` is refused at parse time.
    engine.disable_symbol("eval");
    engine.set_strict_variables(true);
    engine.set_max_operations(limits.max_operations);
    engine.set_max_call_levels(limits.max_call_levels);
    engine.set_max_expr_depths(limits.max_expr_depth, limits.max_expr_depth);
    engine.set_max_string_size(limits.max_string_size);
    engine.set_max_array_size(limits.max_array_size);
    engine.set_max_map_size(limits.max_map_size);
    let max_lines = limits.max_printed_lines;
    let keep = move |line: String| {
        PRINTED.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < max_lines {
                p.push(line);
            }
        })
    };
    let keep_debug = keep;
    engine.on_print(move |s| keep(s.to_string()));
    engine.on_debug(move |s, _, _| keep_debug(s.to_string()));
    engine.on_progress(|ops| {
        if ops % CLOCK_EVERY != 0 {
            return None;
        }
        let late = DEADLINE.with(|d| d.get().is_some_and(|at| Instant::now() >= at));
        late.then(|| Dynamic::from("the wall-clock deadline passed"))
    });
    engine.register_fn("regex_match", regex_match);
    engine.register_fn("regex_captures", regex_captures);
    engine.register_fn("glob_match", glob_match);
    register_helpers(&mut engine);
    engine
}

/// The helpers every policy script needs, registered once here so no script restates them
/// (documented in docs/bundles.md, "Script helpers").
fn register_helpers(engine: &mut Engine) {
    engine.register_fn("fact", fact);
    engine.register_fn("recorded", recorded);
    engine.register_fn("minus", minus);
    engine.register_fn("names_of", names_of);
    engine.register_fn("listed", listed);
    engine.register_fn("matches_any", matches_any);
    engine.register_fn("extension", extension);
    engine.register_fn("ok", |why: Dynamic| verdict("ok", why));
    engine.register_fn("gap", |why: Dynamic| verdict("gap", why));
    engine.register_fn("unk", |why: Dynamic| verdict("unk", why));
}

/// `fact(facts, "a.b.c")`: the value at a dotted path, or `()` when any part of it is missing or
/// not a map.
fn fact(facts: Dynamic, path: &str) -> Dynamic {
    let mut value = facts;
    for part in path.split('.') {
        let next = match value.read_lock::<rhai::Map>() {
            Some(map) => map.get(part).cloned(),
            None => None,
        };
        match next {
            Some(v) => value = v,
            None => return Dynamic::UNIT,
        }
    }
    value
}

/// `recorded(facts, "name")`: a field of the vendor's record (`facts.record.fields.NAME`) as
/// `#{value}`, or `#{missing}` saying why it cannot be read (no record, not found, or a field the
/// record cannot evidence, in the provider file's words).
fn recorded(facts: Dynamic, name: &str) -> rhai::Map {
    let record = fact(facts, "record");
    let missing = |why: String| {
        let mut out = rhai::Map::new();
        out.insert("missing".into(), Dynamic::from(why));
        out
    };
    if !record.is_map() {
        return missing("there is no record in the facts".into());
    }
    if fact(record.clone(), "found").as_bool() != Ok(true) {
        return missing(match fact(record, "reason").into_immutable_string() {
            Ok(why) => why.to_string(),
            Err(_) => "the vendor's record was not found".into(),
        });
    }
    let value = fact(record.clone(), &format!("fields.{name}"));
    if value.is_unit() {
        return missing(match fact(record, &format!("missing.{name}")).into_immutable_string() {
            Ok(why) => format!("the record cannot evidence `{name}`: {why}"),
            Err(_) => format!("the record has no `{name}`"),
        });
    }
    let mut out = rhai::Map::new();
    out.insert("value".into(), value);
    out
}

/// `minus(a, b)`: the items of `a` that are not in `b`, in order (set difference). Anything but
/// a list counts as an empty one.
fn minus(a: Dynamic, b: Dynamic) -> rhai::Array {
    let b = b.into_array().unwrap_or_default();
    a.into_array()
        .unwrap_or_default()
        .into_iter()
        .filter(|x| !b.iter().any(|y| same(x, y)))
        .collect()
}

/// Script values compared as `==` compares the values facts hold (strings, numbers, booleans).
fn same(a: &Dynamic, b: &Dynamic) -> bool {
    a.type_name() == b.type_name() && a.to_string() == b.to_string()
}

/// `names_of(list)`: each item's `name` when it is a map, else the item as text. Anything but a
/// list gives an empty list.
fn names_of(items: Dynamic) -> rhai::Array {
    items
        .into_array()
        .unwrap_or_default()
        .into_iter()
        .map(|item| {
            let name = match item.read_lock::<rhai::Map>() {
                Some(map) => map.get("name").map(ToString::to_string).unwrap_or_default(),
                None => item.to_string(),
            };
            Dynamic::from(name)
        })
        .collect()
}

/// `listed(list)`: the items in backticks, joined with `, `; `none` for an empty list (or
/// anything but a list).
fn listed(items: Dynamic) -> String {
    let shown: Vec<String> = items
        .into_array()
        .unwrap_or_default()
        .iter()
        .map(|item| format!("`{item}`"))
        .collect();
    if shown.is_empty() {
        "none".into()
    } else {
        shown.join(", ")
    }
}

/// `matches_any(text, patterns)`: true when any of the regular expressions matches in `text`.
fn matches_any(text: &str, patterns: rhai::Array) -> Result<bool, Box<EvalAltResult>> {
    for pattern in patterns {
        // INVARIANT (fail closed): a pattern that is not text is a script error (the row is unk,
        // the rule refuses), never a pattern that silently matches nothing.
        let pattern = pattern
            .into_immutable_string()
            .map_err(|kind| format!("`matches_any` takes a list of patterns; one is {kind}"))?;
        if regex_match(text, &pattern)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `extension(path)`: what follows the last `.` of the path's last component (`gz` for
/// `a/b.tar.gz`), or `""`.
fn extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or_default();
    name.rsplit_once('.')
        .map(|(_, ext)| ext.to_string())
        .unwrap_or_default()
}

/// `ok(why)`, `gap(why)`, `unk(why)`: a row's answer, `#{verdict, evidence}`.
fn verdict(verdict: &str, why: Dynamic) -> rhai::Map {
    let mut out = rhai::Map::new();
    out.insert("verdict".into(), Dynamic::from(verdict.to_string()));
    out.insert("evidence".into(), Dynamic::from(why.to_string()));
    out
}

/// `regex_match(text, pattern)`: true when the regular expression matches anywhere in `text`.
fn regex_match(text: &str, pattern: &str) -> Result<bool, Box<EvalAltResult>> {
    with_regex(pattern, |re| re.is_match(text))
}

/// Matches read per `regex_captures` call: the text is data the script did not make.
const MAX_CAPTURES: usize = 256;

/// `regex_captures(text, pattern)`: for each match (the first 256), the whole match and then the
/// text of each capture group in order (`""` for a group that did not take part).
fn regex_captures(text: &str, pattern: &str) -> Result<rhai::Array, Box<EvalAltResult>> {
    with_regex(pattern, |re| {
        re.captures_iter(text)
            .take(MAX_CAPTURES)
            .map(|caps| {
                let groups: rhai::Array = (0..caps.len())
                    .map(|i| Dynamic::from(caps.get(i).map_or("", |m| m.as_str()).to_string()))
                    .collect();
                Dynamic::from_array(groups)
            })
            .collect()
    })
}

/// Runs `f` on the compiled pattern, compiling it once per thread.
fn with_regex<T>(pattern: &str, f: impl FnOnce(&regex::Regex) -> T) -> Result<T, Box<EvalAltResult>> {
    REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(re) = cache.get(pattern) {
            return Ok(f(re));
        }
        let re = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("`{pattern}` is not a valid regular expression: {e}"))?;
        let found = f(&re);
        if cache.len() >= PATTERN_CACHE {
            cache.clear();
        }
        cache.insert(pattern.to_string(), re);
        Ok(found)
    })
}

/// `glob_match(path, pattern)`: true when the path matches the glob (`*` does not cross `/`).
fn glob_match(path: &str, pattern: &str) -> Result<bool, Box<EvalAltResult>> {
    GLOBS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(g) = cache.get(pattern) {
            return Ok(g.is_match(path));
        }
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| format!("`{pattern}` is not a valid glob: {e}"))?
            .compile_matcher();
        let found = glob.is_match(path);
        if cache.len() >= PATTERN_CACHE {
            cache.clear();
        }
        cache.insert(pattern.to_string(), glob);
        Ok(found)
    })
}

impl ScriptHost {
    /// The limits in force.
    pub fn limits(&self) -> ScriptLimits {
        self.limits
    }

    /// Compiles a script now; a syntax error is a diagnostic at its line and column.
    pub fn compile(&self, file: &str, text: &str) -> Result<Script, Diagnostic> {
        let script = ScriptHost::deferred(file, text);
        match self.ensure(&script) {
            Ok(_) => Ok(script),
            Err((position, message)) => {
                let (line, column) = position.unwrap_or((0, 0));
                Err(Diagnostic::at_line(file, line, column, message)
                    .with_hint("scripts are Rhai; `import` and `eval` are not available"))
            }
        }
    }

    /// A script compiled on first use.
    pub fn deferred(file: &str, text: &str) -> Script {
        Script {
            file: file.to_string(),
            text: Arc::from(text),
            ast: Arc::new(OnceLock::new()),
        }
    }

    fn ensure<'s>(&self, script: &'s Script) -> &'s Compiled {
        script.ast.get_or_init(|| {
            self.engine().compile(&*script.text).map(Arc::new).map_err(|err| {
                (
                    position(err.position()),
                    format!("script does not compile: {}", err.err_type()),
                )
            })
        })
    }

    /// Compiles a deferred script if it is not yet; the diagnostic when it does not compile.
    pub fn check(&self, script: &Script) -> Option<Diagnostic> {
        self.ensure(script).as_ref().err().map(|(position, message)| {
            let (line, column) = position.unwrap_or((0, 0));
            Diagnostic::at_line(&script.file, line, column, message.clone())
        })
    }

    /// Calls `function` with arguments, under the limits.
    pub fn call(&self, script: &Script, function: &str, args: Vec<Dynamic>) -> Result<CallOutput, ScriptError> {
        let ast = match self.ensure(script) {
            Ok(ast) => ast.clone(),
            Err((position, message)) => {
                return Err(ScriptError {
                    file: script.file.clone(),
                    position: *position,
                    message: message.clone(),
                })
            }
        };
        PRINTED.with(|p| p.borrow_mut().clear());
        DEADLINE.with(|d| d.set(Some(Instant::now() + self.limits.deadline)));
        let mut scope = Scope::new();
        let options = rhai::CallFnOptions::new().eval_ast(false).rewind_scope(true);
        let result = self
            .engine()
            .call_fn_with_options::<Dynamic>(options, &mut scope, &ast, function, args);
        DEADLINE.with(|d| d.set(None));
        let printed = PRINTED.with(|p| std::mem::take(&mut *p.borrow_mut()));
        result
            .map(|value| CallOutput { value, printed })
            .map_err(|err| ScriptError {
                file: script.file.clone(),
                position: position(err.position()),
                message: describe(&err),
            })
    }
}

fn position(pos: Position) -> Option<(usize, usize)> {
    pos.line().map(|line| (line, pos.position().unwrap_or(0)))
}

fn describe(err: &EvalAltResult) -> String {
    match err {
        EvalAltResult::ErrorTooManyOperations(_) => "the script hit its operations limit".to_string(),
        EvalAltResult::ErrorStackOverflow(_) => "the script recursed past its call-depth limit".to_string(),
        EvalAltResult::ErrorTerminated(why, _) => format!("the script was stopped: {why}"),
        EvalAltResult::ErrorDataTooLarge(what, _) => format!("the script hit a size limit: {what}"),
        EvalAltResult::ErrorInFunctionCall(name, _, inner, _) => format!("in `{name}`: {}", describe(inner)),
        other => other.to_string().lines().next().unwrap_or("script error").to_string(),
    }
}

/// Converts JSON into a script value (maps, arrays, strings, numbers, booleans, `()` for null).
pub fn to_dynamic(value: &serde_json::Value) -> Dynamic {
    match value {
        serde_json::Value::Null => Dynamic::UNIT,
        serde_json::Value::Bool(b) => Dynamic::from_bool(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Dynamic::from_int(i),
            None => Dynamic::from_float(n.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(s) => Dynamic::from(s.clone()),
        serde_json::Value::Array(items) => Dynamic::from_array(items.iter().map(to_dynamic).collect()),
        serde_json::Value::Object(map) => {
            let mut out = rhai::Map::new();
            for (k, v) in map {
                out.insert(k.as_str().into(), to_dynamic(v));
            }
            Dynamic::from_map(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host() -> ScriptHost {
        ScriptHost::new(ScriptLimits {
            deadline: Duration::from_millis(200),
            ..ScriptLimits::default()
        })
    }

    fn call(text: &str, f: &str) -> Result<CallOutput, ScriptError> {
        let h = host();
        let s = h.compile("t.rhai", text).unwrap();
        h.call(&s, f, vec![])
    }

    #[test]
    fn eval_and_import_do_not_compile() {
        let h = host();
        let err = h.compile("e.rhai", "fn f() { eval(\"1\") }").unwrap_err();
        assert_eq!(err.line, 1);
        assert!(h.compile("i.rhai", "import \"x\" as y;\nfn f() { 1 }").is_err());
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let err = host().compile("s.rhai", "fn f() {\n  let x = ;\n}").unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.column > 0);
        assert!(err.message.contains("does not compile"));
    }

    #[test]
    fn endless_loops_hit_a_limit() {
        let err = call("fn f() { loop { } }", "f").unwrap_err();
        assert!(
            err.message.contains("limit") || err.message.contains("stopped"),
            "{err}"
        );
    }

    #[test]
    fn the_deadline_stops_a_slow_script() {
        let h = ScriptHost::new(ScriptLimits {
            max_operations: u64::MAX,
            deadline: Duration::from_millis(20),
            ..ScriptLimits::default()
        });
        let s = h.compile("slow.rhai", "fn f() { loop { } }").unwrap();
        let err = h.call(&s, "f", vec![]).unwrap_err();
        assert!(err.message.contains("deadline"), "{err}");
    }

    #[test]
    fn endless_recursion_hits_the_depth_limit() {
        let err = call("fn f() { f() }", "f").unwrap_err();
        assert!(err.message.contains("call-depth"), "{err}");
    }

    #[test]
    fn big_strings_and_arrays_hit_size_limits() {
        let err = call("fn f() { let s = \"x\"; loop { s = s + s; } }", "f").unwrap_err();
        assert!(err.message.contains("size limit"), "{err}");
        let err = call("fn f() { let a = [1]; loop { a = a + a; } }", "f").unwrap_err();
        assert!(err.message.contains("limit"), "{err}");
    }

    #[test]
    fn print_is_captured() {
        let out = call("fn f() { print(\"hello\"); debug(1); 7 }", "f").unwrap();
        assert_eq!(out.value.as_int().unwrap(), 7);
        assert_eq!(out.printed.len(), 2);
        assert_eq!(out.printed[0], "hello");
    }

    #[test]
    fn undefined_variables_are_compile_errors() {
        assert!(host().compile("u.rhai", "fn f() { nope }").is_err());
    }

    #[test]
    fn regex_and_glob_helpers() {
        let out = call(r#"fn f() { [regex_match("all tests pass", "(?i)ALL TESTS"), glob_match("tests/a/b.rs", "tests/**"), glob_match("src/a.rs", "*.rs")] }"#, "f").unwrap();
        let flags: Vec<bool> = out
            .value
            .into_array()
            .unwrap()
            .into_iter()
            .map(|d| d.as_bool().unwrap())
            .collect();
        assert_eq!(flags, [true, true, false]);
        let caps = call(
            r#"fn f() { [regex_captures("left: 5\nright: 6", "(?m)^(left|right): (.+)$"), regex_captures("a1b22", "[0-9]+"), regex_captures("x", "y")] }"#,
            "f",
        )
        .unwrap();
        let caps: serde_json::Value = rhai::serde::from_dynamic(&caps.value).unwrap();
        assert_eq!(
            caps,
            serde_json::json!([
                [["left: 5", "left", "5"], ["right: 6", "right", "6"]],
                [["1"], ["22"]],
                []
            ])
        );
        let err = call(r#"fn f() { regex_match("x", "(") }"#, "f").unwrap_err();
        assert!(err.message.contains("not a valid regular expression"), "{err}");
    }

    /// Calls `f()` in `text` and gives its value as JSON, for comparing.
    fn value(text: &str) -> serde_json::Value {
        let out = call(text, "f").unwrap_or_else(|e| panic!("{text}: {e}"));
        rhai::serde::from_dynamic(&out.value).unwrap()
    }

    #[test]
    fn fact_reads_a_dotted_path_or_gives_unit() {
        let facts = r#"#{ launch: #{ env: #{ keys: ["PATH"] }, home: "/h" } }"#;
        let read = |path: &str| {
            value(&format!(
                "fn f() {{ let x = fact({facts}, \"{path}\"); if x == () {{ \"absent\" }} else {{ x }} }}"
            ))
        };
        assert_eq!(read("launch.env.keys"), serde_json::json!(["PATH"]));
        assert_eq!(read("launch.home"), "/h");
        assert_eq!(read("launch.nope"), "absent");
        assert_eq!(read("launch.home.deeper"), "absent");
        assert_eq!(value("fn f() { fact(3, \"a\") == () }"), true);
    }

    #[test]
    fn recorded_gives_a_value_or_why_it_is_missing() {
        let read = |record: &str| value(&format!("fn f() {{ recorded(#{{ record: {record} }}, \"cwd\") }}"));
        assert_eq!(
            read(r#"#{ found: true, fields: #{ cwd: "/w" } }"#),
            serde_json::json!({ "value": "/w" })
        );
        assert_eq!(
            read(r#"#{ found: false, reason: "not started" }"#),
            serde_json::json!({ "missing": "not started" })
        );
        assert_eq!(
            read("#{ found: false }"),
            serde_json::json!({ "missing": "the vendor's record was not found" })
        );
        assert_eq!(
            read(r#"#{ found: true, fields: #{}, missing: #{ cwd: "never recorded" } }"#),
            serde_json::json!({ "missing": "the record cannot evidence `cwd`: never recorded" })
        );
        assert_eq!(
            read("#{ found: true, fields: #{} }"),
            serde_json::json!({ "missing": "the record has no `cwd`" })
        );
        assert_eq!(
            value("fn f() { recorded(#{}, \"cwd\") }"),
            serde_json::json!({ "missing": "there is no record in the facts" })
        );
    }

    #[test]
    fn set_difference_names_and_lists() {
        assert_eq!(
            value(r#"fn f() { minus(["a", "b", "c"], ["b"]) }"#),
            serde_json::json!(["a", "c"])
        );
        assert_eq!(value(r#"fn f() { minus((), ["b"]) }"#), serde_json::json!([]));
        assert_eq!(value(r#"fn f() { minus([1, "1"], ["1"]) }"#), serde_json::json!([1]));
        assert_eq!(
            value(r#"fn f() { names_of([#{ name: "docs", status: "failed" }, "plain"]) }"#),
            serde_json::json!(["docs", "plain"])
        );
        assert_eq!(value(r#"fn f() { listed(["a", 2]) }"#), "`a`, `2`");
        assert_eq!(value(r#"fn f() { listed([]) }"#), "none");
        assert_eq!(value(r#"fn f() { listed(()) }"#), "none");
    }

    #[test]
    fn matches_any_and_extension() {
        assert_eq!(
            value(r#"fn f() { matches_any("cargo test", ["^npm", "^cargo test"]) }"#),
            true
        );
        assert_eq!(value(r#"fn f() { matches_any("cargo test", []) }"#), false);
        let err = call(r#"fn f() { matches_any("x", [1]) }"#, "f").unwrap_err();
        assert!(err.message.contains("list of patterns"), "{err}");
        for (path, ext) in [
            ("a/b.tar.gz", "gz"),
            ("src/lib.rs", "rs"),
            ("Makefile", ""),
            (".bashrc", "bashrc"),
            ("a.d/b", ""),
            ("a.", ""),
        ] {
            assert_eq!(extension(path), ext, "{path}");
        }
        assert_eq!(value(r#"fn f() { extension("tests/t.py") }"#), "py");
    }

    #[test]
    fn verdicts_are_made_with_their_evidence() {
        assert_eq!(
            value(r#"fn f() { [ok("held"), gap("did not"), unk(3)] }"#),
            serde_json::json!([
                { "verdict": "ok", "evidence": "held" },
                { "verdict": "gap", "evidence": "did not" },
                { "verdict": "unk", "evidence": "3" }
            ])
        );
    }

    #[test]
    fn json_becomes_script_values() {
        let v = to_dynamic(&serde_json::json!({"a": [1, "x", null, true, 1.5]}));
        let map = v.cast::<rhai::Map>();
        assert_eq!(map["a"].clone().into_array().unwrap().len(), 5);
    }
}
