//! What an MCP call does, and its judgement: a tool's effects from the bundle's `[mcp]` maps,
//! else from the server's annotations where the server is trusted, else the conservative
//! profile; `resources/read` as a read of its URI.

use rmcp::model::ToolAnnotations;
use serde_json::Value;
use sixfold_core::bundle::Bundle;
use sixfold_core::call::{Called, Layers, Sandboxing, Under};
use sixfold_core::decision::{Decision, Judgement};
use sixfold_core::effects::EffectProfile;
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use sixfold_core::trace::Step;
use std::path::{Path, PathBuf};

/// The policy setting (in any policy's `[settings]`) listing the servers whose tool annotations
/// are trusted: `trust_annotations = ["files"]`.
pub use sixfold_core::call::TRUST_SETTING;

/// The policy setting (in any policy's `[settings]`) naming the maps of a server by the program
/// or package that runs it: `mcp_known_as = { "mcp-server-git" = "git" }`. A server whose
/// command holds such a word is mapped by `[mcp."git/TOOL"]` when its own name has no map.
pub const KNOWN_AS_SETTING: &str = "mcp_known_as";

/// What a call is judged under: the bundle and mode, and, while the project's `.sixfold/` is not
/// trusted, the bundle and mode without it (the stricter judgement is kept).
#[derive(Debug)]
pub struct Judging {
    /// The active mode.
    pub mode: String,
    /// The active pattern (it decides about sub-agents).
    pub pattern: String,
    /// The shipped bundle with the project's layer over it.
    pub bundle: Bundle,
    /// Without the untrusted project layer: its bundle and the mode it runs in. `None` when the
    /// project layer is trusted (or empty).
    pub without: Option<(Bundle, String)>,
    /// Where the call's paths are placed.
    pub workspace: Workspace,
    /// The working directory relative paths resolve against.
    pub cwd: PathBuf,
}

/// One MCP call as the proxy sees it.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// The server's name (`--server`).
    pub server: &'a str,
    /// The tool's name, or for `resources/read` the URI.
    pub tool: &'a str,
    /// The call's arguments.
    pub input: &'a Value,
    /// The JSON-RPC id, as the record's step id.
    pub id: String,
    /// The server's annotations of the tool, cached from `tools/list`.
    pub annotations: Option<&'a ToolAnnotations>,
    /// `--trust-annotations`: this run trusts the server's annotations.
    pub trust_annotations: bool,
    /// A `resources/read`, not a `tools/call`.
    pub resource: bool,
    /// The names of further maps that fit the server, from the program that runs it
    /// ([`Judging::known_as`]), tried in order after its own name.
    pub known_as: &'a [String],
}

/// The tool's name on the record, as the agents name MCP tools (`mcp__SERVER__TOOL`), so the
/// invariants read proxied steps as they read hooked ones.
pub fn record_name(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}

/// Whether a bundle trusts a server's annotations (a policy's `trust_annotations` setting).
pub use sixfold_core::call::trusts;

/// The effects the specification's annotations describe, absent hints read with its defaults
/// (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false, `openWorldHint` true).
/// An annotation never says where a tool reads or writes, so the places are unknown (`*`).
pub fn from_annotations(a: &ToolAnnotations) -> EffectProfile {
    let read_only = a.read_only_hint.unwrap_or(false);
    let destructive = a.destructive_hint.unwrap_or(true);
    let open_world = a.open_world_hint.unwrap_or(true);
    EffectProfile {
        reads: vec!["*".into()],
        writes: if read_only { Vec::new() } else { vec!["*".into()] },
        reaches: open_world,
        reversible: read_only || !destructive,
        contained: false,
        costs: false,
    }
}

impl Call<'_> {
    /// The call as the core's one path takes it.
    fn called(&self) -> Called<'_> {
        if self.resource {
            return Called::Resource {
                server: self.server,
                uri: self.tool,
            };
        }
        Called::Mcp {
            server: self.server,
            tool: self.tool,
            input: self.input,
            annotations: self.annotations.map(from_annotations),
            trust_annotations: self.trust_annotations,
            known_as: self.known_as,
        }
    }
}

/// The names of the maps that fit a server started with `command`: each word of it (as written,
/// without an `@version`, and its file name) looked up in the bundle's `mcp_known_as`
/// settings, in the order the words come.
pub fn known_as(bundle: &Bundle, command: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    for word in command {
        // `name@1.2` and `@scope/name@1.2` without their version: an `@` inside the last part.
        let last = word.rfind('/').map_or(0, |i| i + 1);
        let bare = match word.get(last..).and_then(|tail| tail.rfind('@')) {
            Some(at) if at > 0 => word.get(..last + at).unwrap_or(word),
            _ => word.as_str(),
        };
        let file = Path::new(bare).file_name().and_then(|f| f.to_str()).unwrap_or(bare);
        // A script inside an installed package (`…/@scope/name/dist/index.js`) names it.
        let parts: Vec<&str> = bare.split('/').collect();
        let packages = parts
            .windows(2)
            .filter(|w| w.first().is_some_and(|s| s.starts_with('@')))
            .map(|w| w.join("/"));
        let mut candidates: Vec<String> = vec![word.clone(), bare.to_string(), file.to_string()];
        candidates.extend(packages);
        for policy in bundle.policies() {
            let Some(known) = policy.settings.get(KNOWN_AS_SETTING).and_then(Value::as_object) else {
                continue;
            };
            for candidate in candidates.iter().map(String::as_str) {
                if let Some(name) = known.get(candidate).and_then(Value::as_str) {
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                }
            }
        }
    }
    names
}

/// Whether the bundle maps a server named `server` started with `command` (by its name, or by
/// a map its program is known as). One it does not map has every tool judged as reading and
/// writing anywhere.
pub fn has_map(bundle: &Bundle, server: &str, command: &[String]) -> bool {
    bundle.maps_mcp_server(server) || known_as(bundle, command).iter().any(|n| bundle.maps_mcp_server(n))
}

impl Judging {
    /// Judges a call as the hooks do: under the layered bundle, and, while the project's
    /// `.sixfold/` is untrusted, also without it, keeping the stricter. The step is as the
    /// record keeps it; the notes say what an untrusted project layer had no say in.
    pub fn judge(&self, call: &Call<'_>) -> (Judgement, Step, Option<String>) {
        let judged = self.judge_leased(call, None);
        (judged.judgement, judged.step, judged.ignored)
    }

    /// [`Judging::judge`], with the session's lease checked (where the proxy charges one).
    pub fn judge_leased(
        &self,
        call: &Call<'_>,
        leasing: Option<sixfold_core::call::Leasing<'_>>,
    ) -> sixfold_core::call::Judged {
        let context = Context::new(self.workspace.clone());
        let facts = sixfold_core::call::Call {
            called: call.called(),
            id: &call.id,
            cwd: &self.cwd,
            context: &context,
            planned_writes: None,
            // The proxy's session holds no sub-agents of its own to count.
            spawns: 0,
            leasing,
        };
        let layers = Layers {
            layered: Under {
                bundle: &self.bundle,
                mode: &self.mode,
                pattern: &self.pattern,
            },
            without: self.without.as_ref().map(|(bundle, mode)| Under {
                bundle,
                mode,
                pattern: &self.pattern,
            }),
        };
        // A proxied call runs where its server runs it: nothing is contained.
        sixfold_core::call::judge(&facts, layers, Sandboxing::default())
    }

    /// The names of the maps that fit a server started with `command` ([`known_as`]).
    pub fn known_as(&self, command: &[String]) -> Vec<String> {
        known_as(&self.bundle, command)
    }

    /// Whether a tool's effects come from nowhere but the conservative profile: no map in the
    /// bundle, and no annotations believed. A refusal then says so, and how to map it.
    pub fn unmapped(&self, call: &Call<'_>) -> bool {
        !call.resource && !sixfold_core::call::understood(&self.bundle, &call.called(), &self.cwd)
    }

    /// Whether the mode refuses a tool whatever its arguments: judged with every argument it
    /// reads placed in the workspace and, again, in the temp dir; listed when either is not
    /// refused. Listing is advice: every call is judged anyway.
    pub fn hides(
        &self,
        server: &str,
        tool: &str,
        annotations: Option<&ToolAnnotations>,
        trust: bool,
        known_as: &[String],
    ) -> bool {
        let tmp = self
            .workspace
            .tmp()
            .first()
            .cloned()
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let places = [
            self.workspace.primary().join("sixfold-probe"),
            tmp.join("sixfold-probe"),
        ];
        places.iter().all(|place| {
            let probe = Probe(place.to_string_lossy().into_owned());
            let input = probe.input();
            let call = Call {
                server,
                tool,
                input: &input,
                id: String::new(),
                annotations,
                trust_annotations: trust,
                resource: false,
                known_as,
            };
            self.judge(&call).0.decision == Decision::Refuse
        })
    }
}

/// Arguments that answer every field an argument template may read with one path.
struct Probe(String);

impl Probe {
    fn input(&self) -> Value {
        // The reference servers' path fields; a template reading another field sees it absent,
        // which is unknown (`*`): such a tool is listed only where the mode allows anything.
        let mut map = serde_json::Map::new();
        for field in ["path", "file_path", "source", "destination", "uri", "url"] {
            map.insert(field.to_string(), Value::String(self.0.clone()));
        }
        map.insert("paths".to_string(), Value::Array(vec![Value::String(self.0.clone())]));
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sixfold_core::bundle::BundleSource;

    fn judging(mode: &str, extra: &str) -> (tempfile::TempDir, Judging) {
        let t = tempfile::tempdir().unwrap();
        let mut sources = vec![sixfold_core::shipped::source()];
        if !extra.is_empty() {
            sources.push(BundleSource::from_files("test", [("policies/mcp.toml", extra)]));
        }
        let (bundle, diags) = Bundle::load(&sources);
        assert!(diags.is_empty(), "{diags:?}");
        let ws = Workspace::new(t.path()).with_tmp("/tmp");
        let j = Judging {
            mode: mode.into(),
            pattern: "single".into(),
            bundle,
            without: None,
            workspace: ws,
            cwd: t.path().to_path_buf(),
        };
        (t, j)
    }

    fn call<'a>(tool: &'a str, input: &'a Value, a: Option<&'a ToolAnnotations>, trust: bool) -> Call<'a> {
        Call {
            server: "files",
            tool,
            input,
            id: "1".into(),
            annotations: a,
            trust_annotations: trust,
            resource: false,
            known_as: &[],
        }
    }

    const MAP: &str = "id = \"mcp\"\n[mcp.\"files/read_text_file\"]\nreads = [\"{path}\"]\n[mcp.\"files/write_file\"]\nwrites = [\"{path}\"]\n";

    #[test]
    fn a_mapped_tool_is_judged_by_its_arguments() {
        let (t, j) = judging("workspace-write", MAP);
        let inside = json!({"path": t.path().join("a.txt")});
        let (d, step, _) = j.judge(&call("read_text_file", &inside, None, false));
        assert_eq!(d.decision, Decision::Allow, "{d:?}");
        assert_eq!(step.tool, "mcp__files__read_text_file");
        let outside = json!({"path": "/etc/passwd.d/x"});
        let (d, _, _) = j.judge(&call("write_file", &outside, None, false));
        assert_eq!(d.decision, Decision::Refuse, "{d:?}");
    }

    #[test]
    fn annotations_count_only_for_a_trusted_server() {
        let (_t, j) = judging("read-only", "");
        let input = json!({});
        let ro: ToolAnnotations =
            serde_json::from_value(json!({"readOnlyHint": true, "openWorldHint": false})).unwrap();
        let (untrusted, step, _) = j.judge(&call("peek", &input, Some(&ro), false));
        assert_eq!(step.effects, EffectProfile::unknown());
        let (trusted, step, _) = j.judge(&call("peek", &input, Some(&ro), true));
        assert!(step.effects.writes.is_empty());
        assert!(trusted.decision <= untrusted.decision);
        assert_eq!(untrusted.decision, Decision::Refuse);
    }

    #[test]
    fn absent_hints_take_the_specifications_defaults() {
        let p = from_annotations(&ToolAnnotations::default());
        assert_eq!(p.writes, vec!["*".to_string()]);
        assert!(p.reaches);
        assert!(!p.reversible);
    }

    #[test]
    fn a_policy_setting_trusts_a_servers_annotations() {
        let (_t, j) = judging("ask", "id = \"t\"\n[settings]\ntrust_annotations = [\"files\"]\n");
        assert!(trusts(&j.bundle, "files"));
        assert!(!trusts(&j.bundle, "other"));
    }

    #[test]
    fn a_server_is_mapped_by_the_program_that_runs_it() {
        let (t, j) = judging("workspace-write", "");
        let npx = [
            "npx".to_string(),
            "-y".into(),
            "@modelcontextprotocol/server-filesystem@2025.8.21".into(),
            ".".into(),
        ];
        assert_eq!(j.known_as(&npx), vec!["filesystem".to_string()]);
        let bin = ["/w/node_modules/.bin/mcp-server-filesystem".to_string(), "/w".into()];
        assert_eq!(j.known_as(&bin), vec!["filesystem".to_string()]);
        let script = [
            "node".to_string(),
            "/w/node_modules/@modelcontextprotocol/server-everything/dist/index.js".into(),
        ];
        assert_eq!(j.known_as(&script), vec!["everything".to_string()]);
        let input = json!({"path": t.path().join("a.txt")});
        let mut c = call("read_text_file", &input, None, false);
        c.known_as = &bin[..0];
        assert_eq!(j.judge(&c).0.decision, Decision::Refuse, "unmapped: conservative");
        let names = j.known_as(&bin);
        c.known_as = &names;
        assert_eq!(j.judge(&c).0.decision, Decision::Allow);
        assert!(has_map(&j.bundle, "files", &bin));
        assert!(has_map(&j.bundle, "filesystem", &[]));
        assert!(!has_map(&j.bundle, "files", &["my-server".to_string()]));
        assert!(!has_map(&j.bundle, "file", &[]), "a prefix of a name is not the name");
    }

    #[test]
    fn read_only_hides_a_writing_tool_and_lists_a_reading_one() {
        let (_t, j) = judging("read-only", MAP);
        assert!(j.hides("files", "write_file", None, false, &[]));
        assert!(!j.hides("files", "read_text_file", None, false, &[]));
        let (_t, j) = judging("workspace-write", MAP);
        assert!(!j.hides("files", "write_file", None, false, &[]));
    }

    #[test]
    fn a_file_resource_reads_its_path() {
        let (_t, j) = judging("full", "");
        let read = |uri: &'static str| {
            let input = Value::Null;
            let call = Call {
                resource: true,
                ..call(uri, &input, None, false)
            };
            j.judge(&call).1.effects
        };
        assert_eq!(read("file:///w/a").reads, vec!["/w/a".to_string()]);
        assert!(read("https://x.invalid/").reaches);
        assert_eq!(read("db://x").reads, vec!["*".to_string()]);
        assert_eq!(read("file:///w/%2Eenv").reads, vec!["/w/.env".to_string()]);
        assert!(read("HTTPS://x.invalid/").reaches);
        assert_eq!(read("file://host/w/a"), EffectProfile::unknown());
    }
}
