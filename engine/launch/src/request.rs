//! What to launch, and how: the request a launch is made from.

use sixfold_core::format::ProviderFile;
use sixfold_core::verdict::Strictness;
use std::path::PathBuf;

/// Where the run works.
#[derive(Debug, Clone)]
pub enum Workdir {
    /// In place, in a declared directory.
    Root(PathBuf),
    /// In a fresh copy of this tree, made inside the run directory.
    Copy(PathBuf),
    /// In place, in the current directory.
    Current,
}

/// `--env NAME[=VALUE]`: a declared input of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvArg {
    /// The variable.
    pub name: String,
    /// Its value; `None` passes the operator's value through.
    pub value: Option<String>,
}

impl EnvArg {
    /// Parses `NAME` or `NAME=VALUE`.
    pub fn parse(text: &str) -> Result<EnvArg, String> {
        let (name, value) = match text.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (text, None),
        };
        let valid = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid {
            return Err(format!("`{name}` is not a variable name (letters, digits and `_`)"));
        }
        Ok(EnvArg {
            name: name.to_string(),
            value,
        })
    }
}

/// Where the vendor's standard output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdoutSink {
    /// To sixfold's standard output, as it comes.
    Forward,
    /// To `stdout.jsonl` in the run directory (sixfold's own output is then its report).
    File,
}

/// What to launch, and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The provider, as its file says.
    pub provider: ProviderFile,
    /// `off`, `on` or `strict`.
    pub hermetic: Strictness,
    /// Where it works.
    pub workdir: Workdir,
    /// The version it must be (absent: the version found at launch).
    pub pin: Option<String>,
    /// The one variable that may carry an API key.
    pub api_key_env: Option<String>,
    /// Declared inputs.
    pub env: Vec<EnvArg>,
    /// The exact MCP servers (a config file in the provider's format).
    pub mcp_config: Option<PathBuf>,
    /// The declared plugins: names, or plugin directories.
    pub plugins: Vec<String>,
    /// A credentials file, copied into the scratch config home.
    pub credentials: Option<PathBuf>,
    /// Extra governing documents to pin (relative to the working directory, or absolute).
    pub govern: Vec<PathBuf>,
    /// Where the CLI is, instead of searching `PATH`.
    pub binary: Option<PathBuf>,
    /// Run it governed (its own tools off, sixfold's served instead); `None`: not governed.
    pub governed: Option<crate::Governed>,
    /// The run's own arguments to the CLI.
    pub vendor_args: Vec<String>,
    /// The running sixfold binary (the hook command).
    pub sixfold_exe: PathBuf,
    /// Where the vendor's standard output goes.
    pub stdout: StdoutSink,
    /// Where run directories are made (default: the system temp dir).
    pub runs_in: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn env_args_parse() {
        assert_eq!(
            EnvArg::parse("A=b=c").unwrap(),
            EnvArg {
                name: "A".into(),
                value: Some("b=c".into())
            }
        );
        assert_eq!(EnvArg::parse("PATH").unwrap().value, None);
        assert!(EnvArg::parse("1A=x").is_err());
        assert!(EnvArg::parse("=x").is_err());
        assert!(EnvArg::parse("A-B").is_err());
    }
}
