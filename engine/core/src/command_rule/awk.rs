//! An `awk` program read by an allow-list of what it may not contain: awk can run commands
//! (`system`, `| "cmd"`, `"cmd" | getline`), write files (`print > f`, `>>`), read them
//! (`getline < f`), and see the environment (`ENVIRON`, `PROCINFO`), and gawk can load
//! extensions (`@load`, `@include`). A program with none of those only reads its input and
//! prints; any other is not understood. `>` is refused even as a comparison: telling the two
//! apart needs awk's grammar, and a refusal there only asks.

/// Words and characters that make a program do more than read its input and print.
const NOT_UNDERSTOOD: [&str; 10] = [
    "system", "getline", "close", "fflush", "ENVIRON", "PROCINFO", "@", "|", ">", "<",
];

/// Whether `program` is understood; else why not.
pub(crate) fn understood(program: &str) -> Result<(), String> {
    match NOT_UNDERSTOOD.iter().find(|bad| program.contains(*bad)) {
        Some(bad) => Err(format!(
            "the awk program holds `{bad}`, which may run a command, read or write a file"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::understood;

    #[test]
    fn printing_is_understood() {
        for program in [
            "{print $1}",
            "NR==1",
            "{ s += $2 } END { print s }",
            "/foo/ { print NR\": \"$0 }",
            "{print $1 \"\\t\" $2}",
        ] {
            assert_eq!(understood(program), Ok(()), "{program}");
        }
    }

    #[test]
    fn running_writing_and_reading_are_not() {
        for program in [
            "BEGIN{system(\"id\")}",
            "{print | \"sh\"}",
            "{print > \"/etc/x\"}",
            "{print >> \"/etc/x\"}",
            "BEGIN{while ((\"id\" | getline l) > 0) print l}",
            "BEGIN{getline l < \"/root/.ssh/id_rsa\"; print l}",
            "BEGIN{print ENVIRON[\"HOME\"]}",
            "@load \"filefuncs\"",
        ] {
            assert!(understood(program).is_err(), "{program}");
        }
    }
}
