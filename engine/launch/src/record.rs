//! The vendor's own record of a run: one JSON line, found in its standard output (Claude Code's
//! `system/init` line of `--output-format stream-json`) or in a file under the scratch config home
//! (Codex's rollout `session_meta`). Which line, and which of its fields are which facts, is data
//! in the provider file's `[record]`; this is the mechanism. Vendor output is untrusted: lines and
//! line counts are bounded.

use crate::reports::{self, ReportRun, Taken};
use crate::vendor::Vendor;
use globset::GlobBuilder;
use serde_json::{Map, Value};
use sixfold_core::format::{BuiltinPlugins, ProviderFile, RecordFieldFile, RecordFile, RecordSource};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A line longer than this is not parsed (the record line is a few kilobytes).
pub(crate) const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Lines looked at unless the provider file says.
pub(crate) const DEFAULT_MAX_LINES: usize = 10_000;

/// Entries of the config home looked at when searching for a record file.
const MAX_FILES: usize = 50_000;

/// Finds the record line in a stream of bytes, fed in chunks as they arrive.
#[derive(Debug)]
pub(crate) struct LineScanner {
    matches: BTreeMap<String, String>,
    max_lines: usize,
    buf: Vec<u8>,
    overlong: bool,
    /// Lines seen (complete, or cut off at the end).
    pub(crate) lines: usize,
    /// Lines longer than [`MAX_LINE_BYTES`], not parsed.
    pub(crate) too_long: usize,
    /// The matching line, once found.
    pub(crate) found: Option<Value>,
}

impl LineScanner {
    /// A scanner for the line whose top-level keys have these string values.
    pub(crate) fn new(record: &RecordFile) -> LineScanner {
        LineScanner {
            matches: record.matches.clone(),
            max_lines: record.max_lines.unwrap_or(DEFAULT_MAX_LINES),
            buf: Vec::new(),
            overlong: false,
            lines: 0,
            too_long: 0,
            found: None,
        }
    }

    /// True once the line is found or the line budget is spent: nothing more is looked at.
    pub(crate) fn done(&self) -> bool {
        self.found.is_some() || self.lines >= self.max_lines
    }

    /// Feeds the next bytes.
    pub(crate) fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() && !self.done() {
            match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => {
                    self.push(chunk.get(..at).unwrap_or_default());
                    self.end_line();
                    chunk = chunk.get(at + 1..).unwrap_or_default();
                }
                None => {
                    self.push(chunk);
                    chunk = &[];
                }
            }
        }
    }

    /// The stream ended: a last line without a newline still counts.
    pub(crate) fn finish(&mut self) {
        if (!self.buf.is_empty() || self.overlong) && !self.done() {
            self.end_line();
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.overlong {
            return;
        }
        if self.buf.len() + bytes.len() > MAX_LINE_BYTES {
            self.overlong = true;
            self.buf.clear();
            return;
        }
        self.buf.extend_from_slice(bytes);
    }

    fn end_line(&mut self) {
        self.lines += 1;
        if self.overlong {
            self.too_long += 1;
        } else if let Ok(value) = serde_json::from_slice::<Value>(&self.buf) {
            if self.is_record(&value) {
                self.found = Some(value);
            }
        }
        self.overlong = false;
        self.buf.clear();
    }

    fn is_record(&self, line: &Value) -> bool {
        line.is_object()
            && self
                .matches
                .iter()
                .all(|(key, want)| line.get(key).and_then(Value::as_str) == Some(want.as_str()))
    }

    /// What was looked for, for a person: `type = "system", subtype = "init"`.
    pub(crate) fn wanted(&self) -> String {
        self.matches
            .iter()
            .map(|(k, v)| format!("{k} = {v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The files under `home` whose path relative to it matches `glob`, sorted.
pub(crate) fn find_files(home: &Path, glob: &str) -> Result<Vec<PathBuf>, String> {
    let matcher = GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("the record's `path` `{glob}` is not a valid glob: {e}"))?
        .compile_matcher();
    let mut out = Vec::new();
    let mut seen = 0usize;
    let mut pending = vec![home.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            seen += 1;
            if seen > MAX_FILES {
                break;
            }
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() {
                let rel = path.strip_prefix(home).map(|r| r.to_string_lossy().replace('\\', "/"));
                if rel.is_ok_and(|r| matcher.is_match(r.as_str())) {
                    out.push(path);
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Scans a file for the record line, reading no more than the scanner's line budget needs.
pub(crate) fn scan_file(path: &Path, scanner: &mut LineScanner) -> Result<(), String> {
    let mut file = sixfold_core::bounded::open(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let mut buf = vec![0u8; 64 * 1024];
    while !scanner.done() {
        let n = file
            .read(&mut buf)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        scanner.feed(buf.get(..n).unwrap_or_default());
    }
    scanner.finish();
    Ok(())
}

/// A dotted path into JSON (`.` or empty: the whole), or a JSON pointer when it starts with `/`
/// (for keys that hold a dot); `None` when any step is missing or null.
pub(crate) fn dig<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    if path.starts_with('/') {
        return value.pointer(path).filter(|v| !v.is_null());
    }
    let mut at = value;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        at = match at {
            Value::Object(map) => map.get(part)?,
            Value::Array(items) => items.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    (!at.is_null()).then_some(at)
}

/// Entries of a list named by objects with a `name` (or by bare strings) as objects with `name`;
/// a table of entries by name (`{"up": {…}}`) is such a list too.
fn named_entries(value: &Value) -> Value {
    match value {
        Value::Object(table) => Value::Array(
            table
                .iter()
                .map(|(name, entry)| {
                    let mut item = entry.as_object().cloned().unwrap_or_default();
                    item.insert("name".into(), Value::String(name.clone()));
                    Value::Object(item)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| match item {
                    Value::String(s) => serde_json::json!({ "name": s }),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// One field's value, from the record line (`root`) or the report it names, or why it is missing.
fn field(
    name: &str,
    spec: &RecordFieldFile,
    at: Option<&str>,
    root: Option<&Value>,
    reports: &BTreeMap<String, Taken>,
    config_home: &Path,
) -> Result<Value, String> {
    let (source, place, prefix) = match &spec.report {
        Some(report) => match reports.get(report).map(|t| &t.report) {
            None => return Err(format!("the provider file declares no report `{report}`")),
            Some(Err(why)) => return Err(why.clone()),
            Some(Ok(value)) => (Some(value), format!("the report `{report}`"), String::new()),
        },
        None => (
            root,
            "the record".to_string(),
            at.map(|a| format!("{a}.")).unwrap_or_default(),
        ),
    };
    if !spec.cases.is_empty() {
        for case in &spec.cases {
            let Some(found) = source.and_then(|s| dig(s, &case.from)) else {
                continue;
            };
            let matched = match &case.pattern {
                None => Some(found.clone()),
                Some(pattern) => {
                    // `{config_home}` is the run's scratch config home, matched as written.
                    let expanded = pattern.replace("{config_home}", &regex::escape(&config_home.display().to_string()));
                    let re = regex::RegexBuilder::new(&expanded)
                        .size_limit(1 << 20)
                        .build()
                        .map_err(|e| format!("`{name}`: `{pattern}` is not a valid regular expression: {e}"))?;
                    found
                        .as_str()
                        .and_then(|text| re.captures(text))
                        .and_then(|c| c.get(1).or_else(|| c.get(0)))
                        .map(|m| Value::String(m.as_str().to_string()))
                }
            };
            if let Some(value) = matched {
                return Ok(case.value.clone().map(Value::String).unwrap_or(value));
            }
        }
        let places: Vec<String> = spec.cases.iter().map(|c| format!("`{prefix}{}`", c.from)).collect();
        return Err(format!(
            "{place} says nothing the provider file recognises at {}",
            places.join(", ")
        ));
    }
    match (&spec.from, &spec.absent) {
        (Some(from), _) => source
            .and_then(|s| dig(s, from))
            .cloned()
            .ok_or_else(|| format!("{place} has no `{prefix}{from}`")),
        (None, Some(why)) => Err(why.clone()),
        (None, None) => Err(format!(
            "the provider file says neither where `{name}` is nor why it is absent"
        )),
    }
}

/// The facts of a found record line, per the provider file: `fields` (by fact name), `missing`
/// (fact name → why it is not there), `defaults` (fact name → the value meaning nothing was
/// configured), `no_surface` (fact name → the versions that have no such surface) and `reports`
/// (each report taken, and whether it answered).
pub(crate) fn facts(record: &RecordFile, line: &Value, reports: &BTreeMap<String, Taken>, config_home: &Path) -> Value {
    let root = match record.at.as_deref() {
        Some(at) => dig(line, at),
        None => Some(line),
    };
    let mut fields = Map::new();
    let mut missing = Map::new();
    let mut defaults = Map::new();
    let mut no_surface = Map::new();
    for (name, spec) in &record.fields {
        if let Some(default) = &spec.default {
            defaults.insert(name.clone(), Value::String(default.clone()));
        }
        if !spec.no_surface_in.is_empty() {
            no_surface.insert(name.clone(), serde_json::json!(spec.no_surface_in));
        }
        match field(name, spec, record.at.as_deref(), root, reports, config_home) {
            Ok(value) => {
                let value = match name.as_str() {
                    "plugins" => plugins(record, &value),
                    "mcp_servers" => named_entries(&value),
                    "tools" => offered(value),
                    _ => value,
                };
                fields.insert(name.clone(), value);
            }
            Err(why) => {
                missing.insert(name.clone(), Value::String(why));
            }
        }
    }
    let taken: Map<String, Value> = reports
        .iter()
        .map(|(name, t)| {
            let entry = match &t.report {
                Ok(_) => serde_json::json!({ "args": t.args, "answered": true }),
                Err(why) => serde_json::json!({ "args": t.args, "answered": false, "reason": why }),
            };
            (name.clone(), entry)
        })
        .collect();
    serde_json::json!({
        "found": true,
        "fields": fields,
        "missing": missing,
        "defaults": defaults,
        "no_surface": no_surface,
        "reports": taken,
        "builtin_plugins": match record.builtin_plugins {
            BuiltinPlugins::Pinned => "pinned",
            BuiltinPlugins::Counted => "counted",
        },
    })
}

/// The tools offered: a list as it is; a table of tool name → whether it is offered (OpenCode's
/// agent report) as the names offered.
fn offered(value: Value) -> Value {
    match value {
        Value::Object(table) => Value::Array(
            table
                .into_iter()
                .filter(|(_, on)| on.as_bool() != Some(false))
                .map(|(name, _)| Value::String(name))
                .collect(),
        ),
        other => other,
    }
}

/// Plugin entries, each marked `builtin` when its `path` is one of the provider's built-in paths.
fn plugins(record: &RecordFile, value: &Value) -> Value {
    let Value::Array(items) = named_entries(value) else {
        return value.clone();
    };
    Value::Array(
        items
            .into_iter()
            .map(|mut item| {
                let builtin = item
                    .get("path")
                    .and_then(Value::as_str)
                    .is_some_and(|p| record.builtin_plugin_paths.iter().any(|b| b == p));
                if let Some(map) = item.as_object_mut() {
                    map.insert("builtin".into(), Value::Bool(builtin));
                }
                item
            })
            .collect(),
    )
}

/// The facts of a run whose record was not found, with why.
pub(crate) fn not_found(reason: String) -> Value {
    serde_json::json!({ "found": false, "reason": reason })
}

/// The record's facts after the run: found (with its fields and where), or not, with why. A
/// record in the standard output was scanned as it passed; one under the config home is looked
/// for now. The vendor's reports on the run's configuration are taken once the record is found
/// (with no record, nothing describes the run).
pub(crate) fn read(
    provider: &ProviderFile,
    scanner: Option<&mut LineScanner>,
    vendor: &Vendor,
    config_home: &Path,
    run: &ReportRun<'_>,
) -> Value {
    let id = &provider.id;
    let (Some(spec), Some(scanner)) = (provider.record.as_ref(), scanner) else {
        return not_found(format!("providers/{id}.toml says nothing of a record (no `[record]`)"));
    };
    // INVARIANT (fail closed): every way the record can be missing is `found: false` with the
    // reason, which the rows read as unk; nothing here stands in for a record.
    if !vendor.started {
        return not_found(format!(
            "the vendor printed no record: it was {}",
            vendor.reason.clone().unwrap_or_else(|| "not started".into())
        ));
    }
    let ended = match vendor.exit {
        Some(code) => format!("exited with {code}"),
        None => "did not end normally".into(),
    };
    let source = match spec.source {
        RecordSource::Stdout => {
            if scanner.found.is_none() {
                let too_long = if scanner.too_long > 0 {
                    format!(", {} too long to read", scanner.too_long)
                } else {
                    String::new()
                };
                return not_found(format!(
                    "the vendor {ended} and printed no record: no line of its standard output has {} ({} line(s) read{too_long})",
                    scanner.wanted(),
                    scanner.lines
                ));
            }
            "its standard output".to_string()
        }
        RecordSource::ConfigHome => {
            let Some(glob) = &spec.path else {
                return not_found(format!("providers/{id}.toml: a `config-home` record needs a `path`"));
            };
            let found = match find_files(config_home, glob) {
                Ok(f) => f,
                Err(e) => return not_found(e),
            };
            if found.is_empty() {
                return not_found(format!(
                    "the vendor {ended} and wrote no record: no file under the config home matches `{glob}`"
                ));
            }
            let mut which = String::new();
            for file in &found {
                let mut fresh = LineScanner::new(spec);
                if scan_file(file, &mut fresh).is_ok() && fresh.found.is_some() {
                    scanner.found = fresh.found;
                    which = file.display().to_string();
                    break;
                }
            }
            if scanner.found.is_none() {
                return not_found(format!(
                    "the vendor {ended}; {} file(s) match `{glob}` and none has a line with {}",
                    found.len(),
                    scanner.wanted()
                ));
            }
            which
        }
    };
    let taken = match &scanner.found {
        Some(line) => reports::take_all(spec, line, run),
        None => BTreeMap::new(),
    };
    let mut facts = scanner
        .found
        .as_ref()
        .map(|line| facts(spec, line, &taken, config_home))
        .unwrap_or(Value::Null);
    if let Some(map) = facts.as_object_mut() {
        map.insert("source".into(), Value::String(source));
    }
    facts
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    fn record() -> RecordFile {
        toml::from_str(
            r#"
            match = { type = "system", subtype = "init" }
            builtin_plugin_paths = ["builtin"]
            [fields.plugins]
            from = "plugins"
            [fields.version]
            from = "claude_code_version"
            [fields.output_style]
            from = "output_style"
            default = "default"
            [fields.mcp_servers]
            from = "mcp_servers"
            [fields.hooks]
            absent = "not recorded"
            "#,
        )
        .unwrap()
    }

    #[test]
    fn the_record_line_is_found_across_chunks() {
        let r = record();
        let mut s = LineScanner::new(&r);
        let text = b"{\"type\":\"system\",\"subtype\":\"hook_started\"}\nnot json\n{\"type\":\"system\",\"subtype\":\"init\",\"plugins\":[{\"name\":\"a\",\"path\":\"builtin\"},{\"name\":\"b\",\"path\":\"/p\"}],\"claude_code_version\":\"2.1.0\",\"mcp_servers\":[{\"name\":\"m\",\"status\":\"failed\"}]}\n{\"type\":\"result\"}\n";
        for chunk in text.chunks(7) {
            s.feed(chunk);
        }
        s.finish();
        assert_eq!(s.lines, 3, "scanning stops at the record");
        let line = s.found.clone().unwrap();
        let f = facts(&r, &line, &BTreeMap::new(), Path::new("/run/config"));
        assert_eq!(f["fields"]["version"], "2.1.0");
        assert_eq!(f["fields"]["plugins"][0]["builtin"], true);
        assert_eq!(f["fields"]["plugins"][1]["builtin"], false);
        assert_eq!(f["fields"]["mcp_servers"][0]["name"], "m");
        assert_eq!(f["missing"]["output_style"], "the record has no `output_style`");
        assert_eq!(f["missing"]["hooks"], "not recorded");
        assert_eq!(f["defaults"]["output_style"], "default");
    }

    #[test]
    fn overlong_lines_and_budgets_are_bounded() {
        let mut r = record();
        r.max_lines = Some(2);
        let mut s = LineScanner::new(&r);
        s.feed(&vec![b'x'; MAX_LINE_BYTES + 10]);
        s.feed(b"\n{}\n{\"type\":\"system\",\"subtype\":\"init\"}\n");
        s.finish();
        assert_eq!(s.too_long, 1);
        assert!(s.found.is_none(), "the record came after the line budget");
        let mut s = LineScanner::new(&record());
        s.feed(b"{\"type\":\"system\",\"subtype\":\"init\"}");
        s.finish();
        assert!(s.found.is_some(), "a last line without a newline counts");
    }

    #[test]
    fn record_files_are_found_by_glob() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("sessions/2026/01/02");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("rollout-x.jsonl"),
            "{\"type\":\"session_meta\",\"payload\":{\"cwd\":\"/w\"}}\n",
        )
        .unwrap();
        std::fs::write(t.path().join("rollout-top.jsonl"), "").unwrap();
        let found = find_files(t.path(), "sessions/**/rollout-*.jsonl").unwrap();
        assert_eq!(found, vec![dir.join("rollout-x.jsonl")]);
        let r: RecordFile =
            toml::from_str("match = { type = \"session_meta\" }\nat = \"payload\"\n[fields.cwd]\nfrom = \"cwd\"\n")
                .unwrap();
        let mut s = LineScanner::new(&r);
        scan_file(&found[0], &mut s).unwrap();
        assert_eq!(
            facts(&r, &s.found.unwrap(), &BTreeMap::new(), Path::new("/run/config"))["fields"]["cwd"],
            "/w"
        );
    }

    #[test]
    fn fields_are_read_from_the_vendors_reports_and_a_failed_report_leaves_them_missing() {
        let r: RecordFile = toml::from_str(
            r#"
            match = { type = "session_meta" }
            at = "payload"
            [reports.doctor]
            args = ["doctor", "--json"]
            [reports.mcp]
            args = ["mcp", "list", "--json"]
            [reports.plugins]
            args = ["plugin", "list", "--json"]
            [fields.version]
            from = "cli_version"
            [fields.mcp_servers]
            report = "mcp"
            from = "."
            [fields.plugins]
            report = "plugins"
            from = "installed"
            [fields.output_style]
            absent = "no output styles"
            no_surface_in = ["0.171.0"]
            [fields.api_key_source]
            report = "doctor"
            default = "none"
            [[fields.api_key_source.cases]]
            from = "/checks/auth.credentials/details/provider auth env var"
            pattern = '^(\S+) \(present\)$'
            [[fields.api_key_source.cases]]
            from = "/checks/auth.credentials/summary"
            pattern = "^no Codex credentials were found$"
            value = "none"
            [fields.nothing]
            report = "doctor"
            from = "/checks/nope"
            "#,
        )
        .unwrap();
        let line = serde_json::json!({ "type": "session_meta", "payload": { "cli_version": "0.171.0" } });
        let doctor = |details: Value, summary: &str| Taken {
            args: vec!["doctor".into()],
            report: Ok(
                serde_json::json!({ "checks": { "auth.credentials": { "summary": summary, "details": details } } }),
            ),
        };
        let mut reports = BTreeMap::from([
            (
                "doctor".to_string(),
                doctor(
                    serde_json::json!({ "provider auth env var": "X_KEY (present)" }),
                    "auth is provided",
                ),
            ),
            (
                "mcp".to_string(),
                Taken {
                    args: vec![],
                    report: Ok(serde_json::json!([{ "name": "docs" }])),
                },
            ),
            (
                "plugins".to_string(),
                Taken {
                    args: vec![],
                    report: Err("the report `plugins` failed: exited with 2".into()),
                },
            ),
        ]);
        let f = facts(&r, &line, &reports, Path::new("/run/config"));
        assert_eq!(f["fields"]["version"], "0.171.0");
        assert_eq!(f["fields"]["api_key_source"], "X_KEY");
        assert_eq!(f["fields"]["mcp_servers"][0]["name"], "docs");
        assert_eq!(f["missing"]["plugins"], "the report `plugins` failed: exited with 2");
        assert_eq!(f["missing"]["nothing"], "the report `doctor` has no `/checks/nope`");
        assert_eq!(f["no_surface"]["output_style"][0], "0.171.0");
        assert_eq!(f["reports"]["plugins"]["answered"], false);
        reports.insert(
            "doctor".into(),
            doctor(serde_json::json!({}), "no Codex credentials were found"),
        );
        assert_eq!(
            facts(&r, &line, &reports, Path::new("/run/config"))["fields"]["api_key_source"],
            "none"
        );
        reports.insert(
            "doctor".into(),
            doctor(serde_json::json!({ "provider auth env var": "X_KEY (missing)" }), "?"),
        );
        let f = facts(&r, &line, &reports, Path::new("/run/config"));
        assert!(
            f["fields"].get("api_key_source").is_none(),
            "no case matches: missing, never a guess"
        );
        assert!(f["missing"]["api_key_source"].as_str().unwrap().contains("recognises"));
    }

    /// OpenCode's record as shipped, over what its reports printed here (1.18.33, colours left
    /// in as it prints them): where a key came from (H4) and whether sixfold's plugin loaded (H8).
    #[test]
    fn opencodes_reports_say_where_a_key_came_from_and_whether_the_plugin_loaded() {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../providers/opencode.toml")).unwrap();
        let provider: ProviderFile = toml::from_str(&text).unwrap();
        let r = provider.record.unwrap();
        let line = serde_json::json!({ "type": "step_start", "sessionID": "ses_1" });
        let home = Path::new("/runs/sixfold-launch-opencode-1/config");
        let said = |auth: &str, config: Value| {
            let reports = BTreeMap::from([
                (
                    "auth".to_string(),
                    Taken {
                        args: vec![],
                        report: Ok(Value::String(auth.into())),
                    },
                ),
                (
                    "config".to_string(),
                    Taken {
                        args: vec![],
                        report: Ok(config),
                    },
                ),
            ]);
            let f = facts(&r, &line, &reports, home);
            (f["fields"]["api_key_source"].clone(), f["fields"]["hooks"].clone(), f)
        };
        let store = "\n┌  Credentials ~/.local/share/opencode/auth.json\n│\n";
        let none = format!("{store}└  0 credentials\n\n");
        let one_var = format!("{none}┌  Environment\n│\n●  OpenAI OPENAI_API_KEY\n│\n└  1 environment variable\n\n");
        let two_vars = format!("{none}┌  Environment\n│\n●  Anthropic ANTHROPIC_API_KEY\n│\n●  OpenAI OPENAI_API_KEY\n│\n└  2 environment variables\n\n");
        let stored = format!("{store}●  OpenAI api\n│\n└  1 credentials\n\n");
        let elsewhere = "\n┌  Credentials /home/me/.local/share/opencode/auth.json\n│\n└  0 credentials\n\n";
        let loaded = serde_json::json!({
            "permission": {},
            "plugin_origins": [{ "spec": format!("file://{}/plugin/sixfold.js", home.display()), "source": home, "scope": "global" }],
            "sixfold_plugin": format!("file://{}/plugin/sixfold.js", home.display()),
        });
        for (auth, want) in [
            (none.as_str(), Some("none")),
            (one_var.as_str(), Some("OPENAI_API_KEY")),
            (two_vars.as_str(), Some("several key variables")),
            (stored.as_str(), Some("auth.json (a stored credential)")),
            // A store the launcher did not make, or output it does not know: missing, never none.
            (elsewhere, None),
            ("Credentials\n", None),
            ("", None),
        ] {
            let (key, _, f) = said(auth, loaded.clone());
            assert_eq!(key.as_str(), want, "{auth:?}: {f}");
        }
        let (_, hooks, _) = said(&none, loaded.clone());
        assert_eq!(hooks, "loaded");
        // The rule the plugin lifts is still there: it did not load, whatever else is listed.
        let mut kept = loaded.clone();
        kept["permission"] = serde_json::json!({ "*": { "sixfold: the plugin did not load": "deny", "*": "deny" } });
        let (_, hooks, _) = said(&none, kept);
        assert!(hooks.as_str().unwrap().starts_with("not loaded"), "{hooks}");
        // The mark of a plugin from another file, or none (a plugin listed is not one that ran):
        // missing, never loaded.
        for mark in [
            serde_json::json!("file:///elsewhere/config/plugin/sixfold.js"),
            serde_json::json!(format!("file://{}/plugin/sixfold.js.bak", home.display())),
            serde_json::json!(format!("file://{}/plugin/sixfold.js", home.display()).to_uppercase()),
            Value::Null,
        ] {
            let mut config = loaded.clone();
            config["sixfold_plugin"] = mark.clone();
            let (_, hooks, f) = said(&none, config);
            assert!(hooks.is_null(), "{mark}: {f}");
            assert!(f["missing"]["hooks"].as_str().unwrap().contains("recognises"), "{f}");
        }
    }
}
