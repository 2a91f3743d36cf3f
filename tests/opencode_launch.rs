//! End-to-end: `sixfold launch opencode` with the real OpenCode (pinned in package.json) driven
//! by the scripted model server on loopback: a hermetic launch whose rows are evidenced from
//! OpenCode's own output and reports (strict exits 0), one whose plugin did not load and whose
//! key came from OpenCode's store (strict fails, naming the rows), and a governed launch that
//! offers the model sixfold's tools only.
//!
//! The CLI is found by `SIXFOLD_OPENCODE_BIN`, else `node_modules/.bin/opencode`, else PATH; when
//! absent a test prints `skipped: <reason>` and returns, unless `SIXFOLD_REQUIRE_E2E=1`. OpenCode
//! is kept off the network by the launcher itself (no models.dev fetch, no update, no plugin
//! install: see providers/opencode.toml); the model is a loopback provider the run declares, and
//! every run declares proxies on a dead loopback port besides, so nothing else is reachable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{agent_cli, json_lines, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// A test's scratch: `runs/` (TMPDIR: the run directories), `home/`, `server/`, the project.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["runs", "home", "server"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Scratch { _dir: dir, root }
    }

    /// A project that tries to configure OpenCode itself: a plugin and an MCP server in its
    /// `opencode.json`, and a local plugin in `.opencode/plugins/` that would leave a marker.
    fn project(&self) -> PathBuf {
        let dir = self.root.join("project");
        let marker = self.root.join("project-plugin-ran");
        let files = [
            ("README.md", "hello\n".to_string()),
            (
                "opencode.json",
                json!({"plugin": ["some-npm-plugin"], "mcp": {"projmcp": {"type": "local", "command": ["true"]}}})
                    .to_string(),
            ),
            (
                ".opencode/plugins/marker.js",
                format!(
                    "import {{ writeFileSync }} from \"fs\";\nexport const Marker = async () => {{ writeFileSync({:?}, \"ran\"); return {{}}; }};\n",
                    marker.display().to_string()
                ),
            ),
        ];
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        dir
    }

    /// The run's own configuration: the loopback model, as an OpenCode config file.
    fn model_config(&self, server: &ModelServer) -> PathBuf {
        let file = self.root.join("model.json");
        let config = json!({
            "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": format!("{}/v1", server.url()), "apiKey": "test-key"},
                "models": {"scripted-model": {"name": "Scripted model", "tool_call": true}}}},
            "model": "scripted/scripted-model",
            "small_model": "scripted/scripted-model",
        });
        std::fs::write(&file, config.to_string()).unwrap();
        file
    }
}

fn plain_path() -> String {
    let node = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).find(|d| d.join("node").is_file()))
        .map(|d| format!("{}:", d.display()))
        .unwrap_or_default();
    format!("{node}/usr/local/bin:/usr/bin:/bin")
}

struct Launched {
    code: i32,
    report: Value,
    stderr: String,
}

impl Launched {
    fn verdicts(&self) -> BTreeMap<String, String> {
        self.report["rows"]
            .as_array()
            .unwrap_or_else(|| panic!("no rows: {}\n{}", self.report, self.stderr))
            .iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn summary(&self) -> String {
        self.report["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| format!("{} {}: {}", r["id"], r["verdict"], r["evidence"]))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn vendor_lines(&self) -> Vec<Value> {
        let file = self.report["vendor"]["stdout_file"].as_str().expect("a stdout file");
        json_lines(&std::fs::read_to_string(file).unwrap())
    }
}

fn launch(s: &Scratch, args: &[&str]) -> Launched {
    let out = Command::new(SIXFOLD)
        .args(["launch", "opencode", "--json", "--no-project"])
        // Belt and braces: anything but the loopback model goes to a dead loopback port.
        .args([
            "--env",
            "HTTPS_PROXY=http://127.0.0.1:9",
            "--env",
            "HTTP_PROXY=http://127.0.0.1:9",
        ])
        .args(["--env", "NO_PROXY=127.0.0.1,localhost"])
        .args(args)
        .current_dir(&s.root)
        .env_clear()
        .env("PATH", plain_path())
        .env("HOME", s.root.join("home"))
        .env("TMPDIR", s.root.join("runs"))
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    Launched {
        code: out.status.code().unwrap_or(-1),
        report: serde_json::from_str(stdout.trim()).unwrap_or(Value::Null),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The model requests the server saw that offered tools, and the tools each offered.
fn offered(log: &Path) -> Vec<Vec<String>> {
    json_lines(&std::fs::read_to_string(log).unwrap_or_default())
        .iter()
        .filter(|r| r["tools"] == true)
        .map(|r| {
            r["tool_names"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|n| n.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

#[test]
fn a_hermetic_launch_ignores_the_projects_config_and_holds_its_rows() {
    let Some(bin) = agent_cli("SIXFOLD_OPENCODE_BIN", "opencode") else {
        return;
    };
    let s = Scratch::new();
    let project = s.project();
    let server = ModelServer::start(
        &json!({"turns": [
            [{"text": "Let me look."}, {"tool_use": {"name": "read", "input": {"filePath": "README.md"}}}],
            [{"text": "It says hello."}]
        ]}),
        &project,
        &s.root,
        &s.root.join("server"),
    );
    let model = s.model_config(&server);
    let env = format!("OPENCODE_CONFIG={}", model.display());
    let run = launch(
        &s,
        &[
            "--hermetic",
            "on",
            "--copy",
            project.to_str().unwrap(),
            "--binary",
            bin.to_str().unwrap(),
            "--env",
            &env,
            "--",
            "read the readme",
        ],
    );
    let verdicts = run.verdicts();
    // Every gating row is evidenced by OpenCode's own output and reports, and holds.
    for row in ["H1a", "H1b", "H2", "H3", "H4", "H5", "H7", "H8", "H9", "H10", "H11"] {
        assert_eq!(verdicts[row], "ok", "{row}\n{}\n{}", run.summary(), run.stderr);
    }
    assert_eq!(run.code, 0, "`on` exits with the vendor's code\n{}", run.stderr);
    // The run went through the scripted model: it read the file and answered. The read ran, so
    // sixfold's plugin loaded, lifted the deny-all rule and had sixfold's hook allow the call.
    let lines = run.vendor_lines();
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "tool_use" && l["part"]["state"]["status"] == "completed"),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l["part"]["text"] == "It says hello."));
    // The project's own plugin never ran, and nothing was installed into the config directory.
    assert!(!s.root.join("project-plugin-ran").exists(), "the project's plugin ran");
    let run_dir = PathBuf::from(run.report["run_dir"].as_str().unwrap());
    assert!(!run_dir.join("config/node_modules/@opencode-ai").exists());
    // sixfold's plugin, and the rule it lifts, in the scratch config home.
    assert!(run_dir.join("config/plugin/sixfold.js").is_file());
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("config/opencode.json")).unwrap()).unwrap();
    assert_eq!(config["permission"]["*"]["*"], "deny", "{config}");
    // The record's facts name what the rows read.
    let fields = &run.report["facts"]["record"]["fields"];
    assert_eq!(fields["version"], "1.18.33", "{fields}");
    assert_eq!(fields["plugins"], json!([]), "{fields}");
    assert_eq!(fields["mcp_servers"], json!([]), "{fields}");
    assert_eq!(fields["api_key_source"], "none", "{fields}");
    assert_eq!(fields["hooks"], "loaded", "{fields}");

    // strict, with a key the run declares: every gating row ok, exit 0.
    let server2 = ModelServer::start(
        &json!({"turns": [[{"text": "Hi."}]]}),
        &project,
        &s.root,
        &s.root.join("server"),
    );
    let model2 = s.model_config(&server2);
    let env2 = format!("OPENCODE_CONFIG={}", model2.display());
    let strict = launch(
        &s,
        &[
            "--hermetic",
            "strict",
            "--copy",
            project.to_str().unwrap(),
            "--binary",
            bin.to_str().unwrap(),
            "--env",
            &env2,
            "--env",
            "OPENAI_API_KEY=sk-declared",
            "--api-key-env",
            "OPENAI_API_KEY",
            "--",
            "hello",
        ],
    );
    assert_eq!(strict.code, 0, "{}\n{}", strict.summary(), strict.stderr);
    let verdicts = strict.verdicts();
    assert!(!verdicts.values().any(|v| v != "ok"), "{}", strict.summary());
    assert_eq!(
        strict.report["facts"]["record"]["fields"]["api_key_source"],
        "OPENAI_API_KEY",
        "{}",
        strict.summary()
    );
}

/// A wrapper around OpenCode that the launcher cannot see into: it skips every external plugin
/// (`OPENCODE_PURE`, set inside it) and stores a credential in OpenCode's store before it runs.
fn undermining(s: &Scratch, bin: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = s.root.join("opencode-undermined");
    let script = format!(
        "#!/bin/sh\nmkdir -p \"$XDG_DATA_HOME/opencode\"\nprintf '{{\"openai\":{{\"type\":\"api\",\"key\":\"sk-stored\"}}}}' > \"$XDG_DATA_HOME/opencode/auth.json\"\nOPENCODE_PURE=1 exec {:?} \"$@\"\n",
        bin.display().to_string()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[test]
fn a_plugin_that_did_not_load_or_a_key_from_elsewhere_fails_strict_naming_the_row() {
    let Some(bin) = agent_cli("SIXFOLD_OPENCODE_BIN", "opencode") else {
        return;
    };
    let s = Scratch::new();
    let project = s.project();
    let server = ModelServer::start(
        &json!({"turns": [
            [{"text": "Let me look."}, {"tool_use": {"name": "read", "input": {"filePath": "README.md"}}}],
            [{"text": "Done."}]
        ]}),
        &project,
        &s.root,
        &s.root.join("server"),
    );
    let model = s.model_config(&server);
    let env = format!("OPENCODE_CONFIG={}", model.display());
    let wrapper = undermining(&s, &bin);
    let run = launch(
        &s,
        &[
            "--hermetic",
            "strict",
            "--copy",
            project.to_str().unwrap(),
            "--binary",
            wrapper.to_str().unwrap(),
            "--env",
            &env,
            "--",
            "read the readme",
        ],
    );
    let verdicts = run.verdicts();
    assert_eq!(verdicts["H8"], "gap", "{}\n{}", run.summary(), run.stderr);
    assert_eq!(verdicts["H4"], "gap", "{}\n{}", run.summary(), run.stderr);
    assert_eq!(run.code, 1, "strict fails on a gating gap\n{}", run.summary());
    // The gating rows that fail it are named, and they are exactly these two.
    let failing: Vec<&str> = run.report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["severity"] == "gating" && r["verdict"] != "ok")
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(failing, ["H4", "H8"], "{}", run.summary());
    let fields = &run.report["facts"]["record"]["fields"];
    assert_eq!(fields["api_key_source"], "auth.json (a stored credential)", "{fields}");
    assert!(fields["hooks"].as_str().unwrap().starts_with("not loaded"), "{fields}");
    // Fail closed all the same: with the plugin skipped, the deny-all rule stood, so the model
    // was offered no tool and the read never ran.
    assert!(offered(&server.log).is_empty(), "{:?}", offered(&server.log));
    assert!(!run
        .vendor_lines()
        .iter()
        .any(|l| l["type"] == "tool_use" && l["part"]["state"]["status"] == "completed"));
}

#[test]
fn a_hermetic_launch_refuses_to_let_the_run_read_the_projects_config() {
    let Some(bin) = agent_cli("SIXFOLD_OPENCODE_BIN", "opencode") else {
        return;
    };
    let s = Scratch::new();
    let project = s.project();
    let run = launch(
        &s,
        &[
            "--hermetic",
            "on",
            "--copy",
            project.to_str().unwrap(),
            "--binary",
            bin.to_str().unwrap(),
            "--env",
            "OPENCODE_DISABLE_PROJECT_CONFIG=0",
            "--",
            "hello",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("OPENCODE_DISABLE_PROJECT_CONFIG"), "{}", run.stderr);
    // A configuration the run declares that would keep the deny-all rule's place (a `*` rule,
    // merged before it) is refused too, before anything runs.
    let star = s.root.join("star.json");
    std::fs::write(&star, r#"{"permission": {"*": "allow", "bash": "allow"}}"#).unwrap();
    let env = format!("OPENCODE_CONFIG={}", star.display());
    let run = launch(
        &s,
        &[
            "--hermetic",
            "on",
            "--copy",
            project.to_str().unwrap(),
            "--binary",
            bin.to_str().unwrap(),
            "--env",
            &env,
            "--",
            "hello",
        ],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`*` permission rule"), "{}", run.stderr);
    assert!(
        std::fs::read_dir(s.root.join("runs")).unwrap().next().is_none(),
        "no run directory is left"
    );
}

#[test]
fn a_governed_launch_offers_sixfolds_tools_only() {
    let Some(bin) = agent_cli("SIXFOLD_OPENCODE_BIN", "opencode") else {
        return;
    };
    let s = Scratch::new();
    let project = s.project();
    let server = ModelServer::start(
        &json!({"turns": [
            [{"mcp_call": {"server": "sixfold", "tool": "read_file", "arguments": {"path": "README.md"}}}],
            [{"text": "Read it."}]
        ]}),
        &project,
        &s.root,
        &s.root.join("server"),
    );
    let model = s.model_config(&server);
    let model_env = format!("OPENCODE_CONFIG={}", model.display());
    let run = launch(
        &s,
        &[
            "--hermetic",
            "on",
            "--governed",
            "--mode",
            "workspace-write",
            "--copy",
            project.to_str().unwrap(),
            "--binary",
            bin.to_str().unwrap(),
            "--env",
            &model_env,
            "--",
            "read the readme",
        ],
    );
    let verdicts = run.verdicts();
    assert_eq!(verdicts["G1"], "ok", "{}\n{}", run.summary(), run.stderr);
    assert_eq!(
        verdicts["H5"],
        "ok",
        "sixfold's server is given by the launch\n{}",
        run.summary()
    );
    // What the model was offered: sixfold's tools, none of OpenCode's own.
    let offered = offered(&server.log);
    assert!(!offered.is_empty(), "no model request offered tools");
    for tools in &offered {
        assert!(tools.iter().all(|t| t.starts_with("sixfold_")), "{tools:?}");
        assert!(tools.iter().any(|t| t == "sixfold_read_file"), "{tools:?}");
    }
    // The governed read ran through sixfold's server.
    let lines = run.vendor_lines();
    let call = lines
        .iter()
        .find(|l| l["part"]["tool"] == "sixfold_read_file")
        .unwrap_or_else(|| panic!("no governed call: {lines:?}"));
    assert_eq!(call["part"]["state"]["status"], "completed", "{call}");
    assert!(call["part"]["state"]["output"].to_string().contains("hello"), "{call}");
}
