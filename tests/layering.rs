#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The layering rule, as a test: the core knows nothing of any vendor, transport or
//! operating-system mechanism; layers depend on the core and never on each other; the CLI wires
//! them.
//!
//! Crates are discovered from the root `Cargo.toml`'s `members`, so a new layer is checked as
//! soon as it joins the workspace.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CORE: &str = "sixfold-core";
const CLI: &str = "sixfold-cli";

/// Crates that bring a runtime, a transport or an OS mechanism: none belongs in the core.
const NOT_IN_CORE: &[&str] = &[
    // async runtimes and transports
    "tokio",
    "async-std",
    "smol",
    "mio",
    "hyper",
    "reqwest",
    "ureq",
    "curl",
    "isahc",
    "surf",
    "h2",
    "tonic",
    "axum",
    "actix-web",
    "warp",
    "tungstenite",
    "tokio-tungstenite",
    "rmcp",
    "openssl",
    "native-tls",
    "rustls",
    // protocol SDKs (the MCP proxy layer's)
    "rmcp",
    // operating-system mechanisms
    "nix",
    "libc",
    "rustix",
    "winapi",
    "windows",
    "windows-sys",
    "signal-hook",
    "notify",
    "inotify",
    "landlock",
    "seccompiler",
    "libseccomp",
    "caps",
    "procfs",
    "sysinfo",
    "nsjail",
    "birdcage",
];

/// Vendor names: no crate the core depends on and no line of its code mentions them.
const VENDORS: &[&str] = &["claude", "codex", "anthropic", "openai"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn read_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse::<toml::Table>()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One workspace member.
#[derive(Debug)]
struct Member {
    /// The package name.
    name: String,
    /// The directory, relative to the workspace root, `/`-separated.
    dir: String,
    manifest: toml::Table,
}

/// One dependency of a member: which table it is in, and the package it names.
#[derive(Debug, Clone)]
struct Dependency {
    table: String,
    package: String,
}

struct Workspace {
    root: toml::Table,
    members: Vec<Member>,
}

impl Workspace {
    fn load() -> Workspace {
        let dir = workspace_root();
        let root = read_toml(&dir.join("Cargo.toml"));
        let ws = root
            .get("workspace")
            .and_then(|w| w.as_table())
            .expect("the root Cargo.toml has [workspace]");
        let strings = |key: &str| -> Vec<String> {
            ws.get(key)
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .map(|m| m.as_str().expect("a member is a string").to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        let excluded: BTreeSet<String> = strings("exclude").into_iter().collect();
        let mut dirs = Vec::new();
        for pattern in strings("members") {
            dirs.extend(expand(&dir, &pattern));
        }
        // The root itself may be a package too.
        if root.contains_key("package") {
            dirs.push(String::new());
        }
        let members = dirs
            .into_iter()
            .filter(|d| !excluded.contains(d))
            .map(|d| {
                let manifest = read_toml(&dir.join(&d).join("Cargo.toml"));
                let name = manifest
                    .get("package")
                    .and_then(|p| p.get("name"))
                    .and_then(|n| n.as_str())
                    .unwrap_or_else(|| panic!("{d}/Cargo.toml has no package name"))
                    .to_string();
                Member { name, dir: d, manifest }
            })
            .collect();
        Workspace { root, members }
    }

    fn names(&self) -> BTreeSet<String> {
        self.members.iter().map(|m| m.name.clone()).collect()
    }

    fn member(&self, name: &str) -> &Member {
        self.members
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no workspace member `{name}`"))
    }

    /// The package a dependency entry names: `package = …` when renamed, and for
    /// `x.workspace = true` whatever `[workspace.dependencies] x` names.
    fn package_of(&self, key: &str, spec: &toml::Value) -> String {
        if let Some(p) = spec.get("package").and_then(|p| p.as_str()) {
            return p.to_string();
        }
        if spec.get("workspace").and_then(|w| w.as_bool()) == Some(true) {
            let inherited = self
                .root
                .get("workspace")
                .and_then(|w| w.get("dependencies"))
                .and_then(|d| d.get(key))
                .unwrap_or_else(|| panic!("`{key}.workspace = true`, but [workspace.dependencies] has no `{key}`"));
            if let Some(p) = inherited.get("package").and_then(|p| p.as_str()) {
                return p.to_string();
            }
        }
        key.to_string()
    }

    /// Every dependency of a member, of every kind (normal, dev, build, and per target).
    fn dependencies(&self, member: &Member) -> Vec<Dependency> {
        let mut tables: Vec<(String, &toml::Table)> = Vec::new();
        for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(t) = member.manifest.get(kind).and_then(|t| t.as_table()) {
                tables.push((kind.to_string(), t));
            }
        }
        if let Some(targets) = member.manifest.get("target").and_then(|t| t.as_table()) {
            for (target, spec) in targets {
                for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
                    if let Some(t) = spec.get(kind).and_then(|t| t.as_table()) {
                        tables.push((format!("target.{target}.{kind}"), t));
                    }
                }
            }
        }
        let mut out = Vec::new();
        for (table, deps) in tables {
            for (key, spec) in deps {
                out.push(Dependency {
                    table: table.clone(),
                    package: self.package_of(key, spec),
                });
            }
        }
        out
    }

    /// The workspace crates a member depends on (any kind), with the table each is in.
    fn workspace_dependencies(&self, member: &Member) -> Vec<Dependency> {
        let names = self.names();
        self.dependencies(member)
            .into_iter()
            .filter(|d| names.contains(&d.package) && d.package != member.name)
            .collect()
    }
}

/// Expands a `members` entry: a directory, or a directory ending in `/*`.
fn expand(root: &Path, pattern: &str) -> Vec<String> {
    let pattern = pattern.trim_end_matches('/');
    match pattern.strip_suffix("/*") {
        Some(parent) => {
            let mut found: Vec<String> = std::fs::read_dir(root.join(parent))
                .unwrap_or_else(|e| panic!("members `{pattern}`: {e}"))
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join("Cargo.toml").is_file())
                .map(|e| format!("{parent}/{}", e.file_name().to_string_lossy()))
                .collect();
            found.sort();
            found
        }
        None => {
            assert!(
                !pattern.contains(['*', '?', '[']),
                "members `{pattern}`: only `dir` and `dir/*` are understood here"
            );
            vec![pattern.to_string()]
        }
    }
}

#[test]
fn the_members_are_discovered() {
    let ws = Workspace::load();
    let names = ws.names();
    assert!(names.contains(CORE), "{names:?}");
    assert!(names.contains(CLI), "{names:?}");
    assert_eq!(ws.member(CORE).dir, "engine/core");
    assert_eq!(names.len(), ws.members.len(), "two members share a package name");
    // The dependency reading works (so the rules below are not vacuous): the CLI uses the core.
    let cli = ws.workspace_dependencies(ws.member(CLI));
    assert!(
        cli.iter().any(|d| d.package == CORE && d.table == "dependencies"),
        "{cli:?}"
    );
}

/// The governed tool server is a layer like the others: on the core only, the CLI wiring it to
/// the hook layer's state and the sandbox (which it runs as `sixfold sandbox run`).
#[test]
fn the_governed_tools_are_a_layer_on_the_core() {
    let ws = Workspace::load();
    let tools = ws.member("sixfold-tools");
    assert_eq!(tools.dir, "engine/tools");
    let deps: Vec<String> = ws
        .workspace_dependencies(tools)
        .into_iter()
        .map(|d| d.package)
        .collect();
    assert_eq!(deps, vec![CORE.to_string()], "{deps:?}");
}

#[test]
fn the_core_depends_on_no_other_workspace_crate() {
    let ws = Workspace::load();
    let core = ws.member(CORE);
    let found = ws.workspace_dependencies(core);
    assert!(
        found.is_empty(),
        "the core (`{}`) must depend on no other workspace crate; it depends on: {}",
        core.dir,
        found
            .iter()
            .map(|d| format!("`{}` ([{}])", d.package, d.table))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// The layers that exist are checked: a renamed or dropped member would silently escape the rule.
#[test]
fn every_known_layer_is_a_member() {
    let ws = Workspace::load();
    for layer in [
        "sixfold-replay",
        "sixfold-hook",
        "sixfold-launch",
        "sixfold-sandbox",
        "sixfold-proxy",
    ] {
        assert!(
            ws.members.iter().any(|m| m.name == layer),
            "`{layer}` is not a workspace member"
        );
    }
}

#[test]
fn layers_depend_on_the_core_and_on_no_other_layer() {
    let ws = Workspace::load();
    let layers: Vec<&Member> = ws
        .members
        .iter()
        .filter(|m| m.dir.starts_with("engine/") && m.name != CORE && m.name != CLI)
        .collect();
    if layers.is_empty() {
        println!("note: no layer crates under engine/ yet; only the core and the CLI");
    }
    let mut problems = Vec::new();
    for layer in layers {
        for dep in ws.workspace_dependencies(layer) {
            if dep.package != CORE {
                problems.push(format!(
                    "`{}` ({}) depends on `{}` ([{}]): a layer may depend on `{CORE}` only; the CLI wires layers together",
                    layer.name, layer.dir, dep.package, dep.table
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn nothing_in_the_workspace_depends_on_the_cli() {
    let ws = Workspace::load();
    let mut problems = Vec::new();
    for member in ws.members.iter().filter(|m| m.name != CLI) {
        for dep in ws.workspace_dependencies(member) {
            if dep.package == CLI {
                problems.push(format!("`{}` depends on the CLI ([{}])", member.name, dep.table));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_core_depends_on_no_vendor_or_os_mechanism() {
    let ws = Workspace::load();
    let core = ws.member(CORE);
    let mut problems = Vec::new();
    for dep in ws.dependencies(core) {
        if dep.table.starts_with("target.") {
            problems.push(format!(
                "`{}` is a platform-specific dependency ([{}])",
                dep.package, dep.table
            ));
        }
        // Test-only crates never ship in the core.
        if dep.table == "dev-dependencies" {
            continue;
        }
        let lower = dep.package.to_lowercase();
        if NOT_IN_CORE.contains(&lower.as_str()) {
            problems.push(format!(
                "`{}` ([{}]) is a runtime, transport or OS mechanism",
                dep.package, dep.table
            ));
        }
        if let Some(vendor) = VENDORS.iter().find(|v| lower.contains(*v)) {
            problems.push(format!(
                "`{}` ([{}]) is vendor-specific (`{vendor}`)",
                dep.package, dep.table
            ));
        }
    }
    assert!(problems.is_empty(), "the core must stay pure:\n{}", problems.join("\n"));
}

/// Every file under `dir`, recursively, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_core_source_names_no_vendor() {
    let root = workspace_root();
    let src = root.join(&Workspace::load().member(CORE).dir).join("src");
    let mut hits = BTreeMap::new();
    for file in files(&src) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            // Comments (doc comments included) may name a vendor as an example; code may not.
            if line.trim_start().starts_with("//") {
                continue;
            }
            let lower = line.to_lowercase();
            if let Some(vendor) = VENDORS.iter().find(|v| lower.contains(*v)) {
                let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
                hits.insert(format!("{shown}:{}", n + 1), format!("`{vendor}` in: {}", line.trim()));
            }
        }
    }
    assert!(
        hits.is_empty(),
        "the core knows no vendor; these lines name one (move the knowledge into a provider file):\n{}",
        hits.iter()
            .map(|(at, what)| format!("{at}: {what}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The core's top-level module a source file belongs to: `bundle` for `bundle/compile/modes.rs`,
/// `scope` for `scope.rs`; `None` for `lib.rs`.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_string_lossy().into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib").then_some(name)
}

/// No module of the core imports one that imports it back, however long the way round: the
/// core's top-level modules form a graph without cycles. Tests inside a file are left out (they
/// may use anything).
#[test]
fn no_core_module_imports_one_that_imports_it_back() {
    let src = workspace_root().join(&Workspace::load().member(CORE).dir).join("src");
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files(&src)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let Some(module) = top_module(&src, &file) else {
            continue;
        };
        // A module's tests file (`bundle/tests.rs`, `effect_space/tests.rs`) is tests too.
        if file.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let entry = uses.entry(module.clone()).or_default();
        for (at, _) in code.match_indices("crate::") {
            let name: String = code[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                entry.insert(name);
            }
        }
    }
    // Depth-first search for a way back to the start.
    let mut cycles = Vec::new();
    for start in uses.keys() {
        let mut stack = vec![vec![start.clone()]];
        while let Some(path) = stack.pop() {
            let last = path.last().unwrap();
            for next in uses.get(last).into_iter().flatten() {
                if next == start {
                    cycles.push(format!("{} -> {start}", path.join(" -> ")));
                } else if !path.contains(next) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push(longer);
                }
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "modules of the core import each other round in a circle:\n{}",
        cycles.join("\n")
    );
    // The search saw the modules it should: a typo in the walk would make it vacuous.
    assert!(uses.contains_key("bundle") && uses.contains_key("judge") && uses.contains_key("scope"));
    assert!(uses["bundle"].contains("judge"), "{uses:?}");
}
