//! The MCP set: exactly the servers the run declares (`--mcp-config`), else none. The launcher
//! writes the config file the provider's `mcp_args` point at, so nothing account-level is added.

use super::Scratch;
use crate::error::LaunchError;
use serde_json::{json, Value};
use sixfold_core::launch_facts::McpFacts;
use std::path::Path;

/// A declared MCP config file larger than this is refused.
const MAX_MCP_CONFIG_BYTES: u64 = 1024 * 1024;

/// Writes `<run>/mcp.json` (the declared servers, or an empty set) and gives the arguments
/// that impose it.
pub(crate) fn impose(scratch: &Scratch<'_>, declared: Option<&Path>) -> Result<McpFacts, LaunchError> {
    let id = scratch.provider;
    let spec = scratch.spec;
    let Some(args) = &spec.mcp_args else {
        if declared.is_some() {
            return Err(LaunchError::new(format!(
                "the provider `{id}` gives no way to impose an exact MCP set, so `--mcp-config` cannot be used"
            ))
            .hint(format!(
                "add `mcp_args` to `[hermetic]` in providers/{id}.toml, or leave the MCP servers out"
            )));
        }
        return Ok(McpFacts {
            reason: Some(format!(
                "the provider file gives no MCP arguments; a scratch {} holds no MCP servers",
                spec.config_home_env
            )),
            ..McpFacts::default()
        });
    };
    let key = spec.mcp_servers_key.clone().ok_or_else(|| {
        LaunchError::new(format!("providers/{id}.toml has `mcp_args` but no `mcp_servers_key`"))
            .hint("name the MCP config file's table of servers, e.g. `mcp_servers_key = \"mcpServers\"`")
    })?;
    let file = scratch.run_dir.join("mcp.json");
    let (text, servers) = match declared {
        Some(path) => read_config(path, &key)?,
        None => (json!({ key: {} }).to_string(), Vec::new()),
    };
    std::fs::write(&file, text).map_err(|e| format!("cannot write `{}`: {e}", file.display()))?;
    let shown = file.display().to_string();
    Ok(McpFacts {
        imposed: true,
        servers,
        args: Some(args.iter().map(|a| a.replace("{file}", &shown)).collect()),
        config: Some(shown),
        declared: declared.map(|p| p.display().to_string()),
        reason: None,
    })
}

/// The declared config's text and its servers' names, read bounded.
fn read_config(path: &Path, key: &str) -> Result<(String, Vec<String>), LaunchError> {
    let meta = std::fs::metadata(path).map_err(|e| format!("`--mcp-config {}`: {e}", path.display()))?;
    if meta.len() > MAX_MCP_CONFIG_BYTES {
        return Err(LaunchError::new(format!(
            "`--mcp-config {}` is larger than {MAX_MCP_CONFIG_BYTES} bytes",
            path.display()
        )));
    }
    let text = sixfold_core::bounded::read_text(path, MAX_MCP_CONFIG_BYTES)
        .map_err(|e| format!("`--mcp-config {}`: {e}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| LaunchError::new(format!("`--mcp-config {}` is not JSON: {e}", path.display())))?;
    let servers = value.get(key).and_then(Value::as_object).ok_or_else(|| {
        LaunchError::new(format!("`--mcp-config {}` has no `{key}` object", path.display()))
            .hint(format!("an MCP config is `{{\"{key}\": {{\"NAME\": {{…}}}}}}`"))
    })?;
    Ok((text, servers.keys().cloned().collect()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    #[test]
    fn exactly_the_declared_servers_else_none() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test(
            "config_home_env = \"CFG\"\nmcp_args = [\"--mcp-config\", \"{file}\", \"--strict-mcp-config\"]\nmcp_servers_key = \"mcpServers\"",
        );
        let scratch = Scratch::make("p", &spec, t.path(), t.path().to_path_buf()).unwrap();
        let none = impose(&scratch, None).unwrap();
        assert!(none.imposed && none.servers.is_empty());
        let file = t.path().join("mcp.json");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), r#"{"mcpServers":{}}"#);
        assert_eq!(none.args.unwrap()[1], file.display().to_string());
        let declared = t.path().join("declared.json");
        std::fs::write(&declared, r#"{"mcpServers": {"docs": {"command": "x"}}}"#).unwrap();
        assert_eq!(impose(&scratch, Some(&declared)).unwrap().servers, ["docs"]);
        std::fs::write(&declared, r#"{"servers": {}}"#).unwrap();
        assert!(impose(&scratch, Some(&declared))
            .unwrap_err()
            .message
            .contains("has no `mcpServers` object"));
    }

    #[test]
    fn a_provider_without_mcp_args_imposes_nothing_and_refuses_a_declared_set() {
        let t = tempfile::tempdir().unwrap();
        let spec = spec_for_test("config_home_env = \"CODEX_HOME\"");
        let scratch = Scratch::make("p", &spec, t.path(), t.path().to_path_buf()).unwrap();
        let facts = impose(&scratch, None).unwrap();
        assert!(!facts.imposed);
        assert!(facts.reason.unwrap().contains("CODEX_HOME"));
        assert!(impose(&scratch, Some(Path::new("/x.json"))).is_err());
    }
}
