//! `sixfold install claude-code --mcp`: the project's `.mcp.json` rewritten so each stdio server
//! runs behind `sixfold mcp-proxy --server NAME`, the file as it was kept beside it;
//! `uninstall --mcp` puts that file back byte for byte.

use crate::output::{errln, outln};
use serde_json::{json, Value};
use sixfold_core::bounded;
use std::path::{Path, PathBuf};

/// `.mcp.json` larger than this is not rewritten: it lists a few servers.
const MAX_MCP_JSON_BYTES: u64 = 1024 * 1024;

/// The file that holds `.mcp.json` as it was before `install --mcp`.
fn backup_of(file: &Path) -> PathBuf {
    file.with_file_name(".mcp.json.sixfold-backup")
}

fn fail(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    1
}

/// Whether a server entry already runs behind the proxy.
fn wrapped(server: &Value) -> bool {
    server
        .get("args")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        == Some("mcp-proxy")
}

/// The `mcpServers` table with each stdio server, and each plain-http one, behind the proxy; the
/// names left as they were (https servers, servers with their own headers, entries already
/// wrapped).
fn wrap(config: &Value, binary: &str) -> Result<(Value, Vec<String>, Vec<String>), String> {
    let mut out = config.clone();
    let servers = out
        .get_mut("mcpServers")
        .and_then(Value::as_object_mut)
        .ok_or("`.mcp.json` has no `mcpServers` table")?;
    let (mut done, mut left) = (Vec::new(), Vec::new());
    for (name, server) in servers.iter_mut() {
        if wrapped(server) {
            left.push(name.clone());
            continue;
        }
        let command = server.get("command").and_then(Value::as_str).map(str::to_string);
        // A plain-http server without headers of its own becomes a stdio server: the proxy
        // reaches it with `--upstream-url`. One with headers (credentials) or https is left.
        let url = server
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| u.starts_with("http://") && server.get("headers").is_none())
            .map(str::to_string);
        let mut args = vec![json!("mcp-proxy"), json!("--server"), json!(name)];
        match (command, url) {
            (Some(command), _) => {
                args.extend([json!("--"), json!(command)]);
                if let Some(given) = server.get("args").and_then(Value::as_array) {
                    args.extend(given.iter().cloned());
                }
            }
            (None, Some(url)) => {
                args.extend([json!("--upstream-url"), json!(url)]);
                if let Some(entry) = server.as_object_mut() {
                    entry.retain(|k, _| k == "env");
                }
            }
            (None, None) => {
                left.push(name.clone());
                continue;
            }
        }
        if let Some(entry) = server.as_object_mut() {
            entry.insert("command".into(), json!(binary));
            entry.insert("args".into(), Value::Array(args));
        }
        done.push(name.clone());
    }
    Ok((out, done, left))
}

/// Rewrites the project's `.mcp.json`.
pub(crate) fn install(project: &Path, binary: &Path, dry_run: bool) -> u8 {
    let file = project.join(".mcp.json");
    let text = match bounded::read_text(&file, MAX_MCP_JSON_BYTES) {
        Ok(t) => t,
        Err(e) => return fail(&format!("cannot read `{}`: {e}", file.display()), "create it first"),
    };
    let backup = backup_of(&file);
    if backup.exists() {
        return fail(
            &format!(
                "`{}` is already wrapped (its original is `{}`)",
                file.display(),
                backup.display()
            ),
            "run `sixfold uninstall claude-code --mcp` first",
        );
    }
    let config: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                &format!("`{}` is not JSON: {e}", file.display()),
                "fix it by hand first",
            )
        }
    };
    let (after, done, left) = match wrap(&config, &binary.to_string_lossy()) {
        Ok(x) => x,
        Err(e) => return fail(&e, "fix it by hand first"),
    };
    let pretty = serde_json::to_string_pretty(&after).unwrap_or_default() + "\n";
    if dry_run {
        outln!("{pretty}");
        return 0;
    }
    if let Err(e) = std::fs::write(&backup, &text) {
        return fail(
            &format!("cannot keep `{}`: {e}", backup.display()),
            "check the permissions",
        );
    }
    if let Err(e) = std::fs::write(&file, pretty) {
        return fail(
            &format!("cannot write `{}`: {e}", file.display()),
            "check the permissions",
        );
    }
    outln!(
        "wrapped {} server(s) in {} behind `sixfold mcp-proxy` ({}); the original is kept as {}",
        done.len(),
        file.display(),
        done.join(", "),
        backup.display()
    );
    if !left.is_empty() {
        outln!(
            "left as they were (https, with headers of their own, or already wrapped): {}",
            left.join(", ")
        );
    }
    let unmapped = unmapped(project, &after, &done);
    if !unmapped.is_empty() {
        outln!(
            "no effect map for: {} (every tool of theirs is judged as reading and writing anywhere; map them in `.sixfold/policies/` as `[mcp.\"SERVER/TOOL\"]`, see docs/proxy.md)",
            unmapped.join(", ")
        );
    }
    0
}

/// The wrapped servers the bundle (shipped, with the project's `.sixfold/` over it) has no
/// effect map for.
fn unmapped(project: &Path, config: &Value, done: &[String]) -> Vec<String> {
    let layer = sixfold_hook::ProjectLayer::read(project);
    let (bundle, _) = sixfold_hook::load_over(Some(&layer), None);
    done.iter()
        .filter(|name| {
            let command: Vec<String> = config
                .pointer(&format!(
                    "/mcpServers/{}/args",
                    name.replace('~', "~0").replace('/', "~1")
                ))
                .and_then(Value::as_array)
                .map(|args| {
                    args.iter()
                        .skip_while(|a| a.as_str() != Some("--"))
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            !sixfold_proxy::has_map(&bundle, name, &command)
        })
        .cloned()
        .collect()
}

/// Puts the original `.mcp.json` back.
pub(crate) fn uninstall(project: &Path, dry_run: bool) -> u8 {
    let file = project.join(".mcp.json");
    let backup = backup_of(&file);
    if !backup.exists() {
        outln!("{} was not wrapped by sixfold; nothing done", file.display());
        return 0;
    }
    if dry_run {
        outln!("would restore {} from {}", file.display(), backup.display());
        return 0;
    }
    match std::fs::rename(&backup, &file) {
        Ok(()) => {
            outln!("restored {} as it was before `install --mcp`", file.display());
            0
        }
        Err(e) => fail(
            &format!("cannot restore `{}`: {e}", file.display()),
            "check the permissions",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_servers_are_wrapped_and_url_servers_left() {
        let config = json!({"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "srv", "."], "env": {"A": "1"}},
            "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
            "keyed": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "x"}},
            "tls": {"type": "http", "url": "https://127.0.0.1:1/mcp"},
        }});
        let (after, done, left) = wrap(&config, "/bin/sixfold").unwrap();
        assert_eq!(done, vec!["files", "web"]);
        assert_eq!(left, vec!["keyed", "tls"]);
        assert_eq!(
            after["mcpServers"]["web"],
            json!({"command": "/bin/sixfold", "args": ["mcp-proxy", "--server", "web", "--upstream-url", "http://127.0.0.1:1/mcp"]})
        );
        assert_eq!(after["mcpServers"]["files"]["command"], "/bin/sixfold");
        assert_eq!(
            after["mcpServers"]["files"]["args"],
            json!(["mcp-proxy", "--server", "files", "--", "npx", "-y", "srv", "."])
        );
        assert_eq!(after["mcpServers"]["files"]["env"]["A"], "1");
        let (_, again, _) = wrap(&after, "/bin/sixfold").unwrap();
        assert!(again.is_empty());
    }
}
