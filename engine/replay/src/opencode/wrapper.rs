//! sixfold's own sandbox wrapper, undone. OpenCode's plugin rewrites an allowed shell command in
//! place to run inside the proven sandbox, and OpenCode records the rewritten arguments; replay
//! judges the command the agent wrote, so the wrapper the core writes
//! (`'<sixfold>' sandbox run --mode M --root R [--root N=P]… [--no-project] -- bash -c '<command>'`)
//! is recognised word by word and the command inside it restored.

use sixfold_core::shell;

/// The command inside sixfold's sandbox wrapper, when `command` is exactly that wrapper; `None`
/// for anything else (kept as written).
///
/// Only one wrapper is undone: a command the agent itself wrapped, then wrapped again by the
/// plugin, is restored to the agent's own wrapper, not further.
pub(super) fn unwrapped(command: &str) -> Option<String> {
    // Cheap refusal first: every wrapper holds these words.
    if !command.contains(" sandbox run ") || !command.contains(" -- bash -c ") {
        return None;
    }
    let line = shell::parse(command);
    // INVARIANT (fail closed): anything beyond one plain simple command (a redirection, an
    // expansion, a second command, a substitution) is not the wrapper the core writes.
    if line.opaque.is_some() || line.commands.len() != 1 {
        return None;
    }
    let simple = line.commands.first()?;
    if !simple.redirects.is_empty() || !simple.expanded.is_empty() || !simple.substitutions.is_empty() {
        return None;
    }
    let words: Vec<&str> = simple.words.iter().map(String::as_str).collect();
    let (inner, prefix) = match words.as_slice() {
        [prefix @ .., "bash", "-c", inner] => (*inner, prefix),
        _ => return None,
    };
    let [program, "sandbox", "run", "--mode", mode, options @ .., "--"] = prefix else {
        return None;
    };
    if !program.starts_with('/') || program.rsplit('/').next() != Some("sixfold") || mode.is_empty() {
        return None;
    }
    let mut roots = 0;
    let mut options = options.iter();
    while let Some(option) = options.next() {
        match *option {
            "--root" if options.next().is_some_and(|r| !r.is_empty()) => roots += 1,
            "--no-project" => {}
            _ => return None,
        }
    }
    if roots == 0 || inner.trim().is_empty() {
        return None;
    }
    // The core writes each word with `shell::quote` and the command as one quoted word: words
    // that only parse the same but are spelled otherwise are not its wrapper.
    if format!(
        "{} bash -c {}",
        shell::join(prefix.iter().copied()),
        shell::quote(inner)
    ) != command
    {
        return None;
    }
    Some(inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(prefix: &[&str], command: &str) -> String {
        format!(
            "{} bash -c {}",
            shell::join(prefix.iter().copied()),
            shell::quote(command)
        )
    }

    const PREFIX: [&str; 8] = [
        "/opt/six fold/sixfold",
        "sandbox",
        "run",
        "--mode",
        "workspace-write",
        "--root",
        "/w",
        "--",
    ];

    #[test]
    fn the_cores_wrapper_is_undone() {
        assert_eq!(unwrapped(&wrap(&PREFIX, "cargo test")).as_deref(), Some("cargo test"));
        let quoted = "echo 'it''s' > \"a b\" && rm -f x; $(date)";
        assert_eq!(unwrapped(&wrap(&PREFIX, quoted)).as_deref(), Some(quoted));
        let more = [
            "/usr/bin/sixfold",
            "sandbox",
            "run",
            "--mode",
            "m",
            "--root",
            "/w",
            "--root",
            "lib=/l",
            "--no-project",
            "--",
        ];
        assert_eq!(unwrapped(&wrap(&more, "make")).as_deref(), Some("make"));
    }

    #[test]
    fn only_one_wrapper_is_undone() {
        let agents = wrap(&PREFIX, "rm -rf /");
        let twice = wrap(&PREFIX, &agents);
        assert_eq!(unwrapped(&twice), Some(agents));
    }

    #[test]
    fn anything_else_is_kept_as_written() {
        for command in [
            "cargo test".to_string(),
            // Not sixfold, or not by an absolute path.
            wrap(
                &[
                    "/usr/bin/sixfold2",
                    "sandbox",
                    "run",
                    "--mode",
                    "m",
                    "--root",
                    "/w",
                    "--",
                ],
                "ls",
            ),
            wrap(
                &["sixfold", "sandbox", "run", "--mode", "m", "--root", "/w", "--"],
                "ls",
            ),
            // No root, an unknown option, another shell.
            wrap(&["/b/sixfold", "sandbox", "run", "--mode", "m", "--"], "ls"),
            wrap(
                &[
                    "/b/sixfold",
                    "sandbox",
                    "run",
                    "--mode",
                    "m",
                    "--root",
                    "/w",
                    "--net",
                    "--",
                ],
                "ls",
            ),
            "/b/sixfold sandbox run --mode m --root /w -- sh -c ls".into(),
            // Something after the command, before the wrapper, or around it.
            format!("{} extra", wrap(&PREFIX, "ls")),
            format!("{} > out", wrap(&PREFIX, "ls")),
            format!("cd /; {}", wrap(&PREFIX, "ls")),
            format!("{} && rm -rf /", wrap(&PREFIX, "ls")),
            // The same words spelled otherwise than the core writes them.
            "/b/sixfold sandbox run --mode m --root /w -- bash -c \"ls\"".into(),
            "/b/sixfold sandbox run --mode m --root /w -- bash -c $X".into(),
            wrap(&PREFIX, " "),
        ] {
            assert_eq!(unwrapped(&command), None, "{command}");
        }
        // The plain wrapper spelled as the core spells it is undone.
        assert_eq!(
            unwrapped("/b/sixfold sandbox run --mode m --root /w -- bash -c ls").as_deref(),
            Some("ls")
        );
    }
}
