//! A `find` expression read by an allow-list of its tests and actions. Tests (`-name`, `-type`,
//! `-newer`, …) and the actions that print to standard output (`-print`, `-printf`, `-ls`) are
//! understood; `-exec`, `-execdir`, `-ok`, `-okdir` run commands, `-delete` removes, and
//! `-fprint`, `-fprint0`, `-fprintf`, `-fls` write files: those, and any primary it does not
//! know, make the command not understood.

/// Primaries that take no argument.
const BARE: [&str; 33] = [
    "-print",
    "-print0",
    "-ls",
    "-prune",
    "-quit",
    "-true",
    "-false",
    "-empty",
    "-executable",
    "-readable",
    "-writable",
    "-nouser",
    "-nogroup",
    "-depth",
    "-d",
    "-mount",
    "-xdev",
    "-follow",
    "-noleaf",
    "-daystart",
    "-ignore_readdir_race",
    "-noignore_readdir_race",
    "-not",
    "!",
    "(",
    ")",
    "-a",
    "-and",
    "-o",
    "-or",
    ",",
    "-L",
    "-H",
];

/// Primaries that take one argument, which is neither a path written nor code.
const ONE: [&str; 37] = [
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-regextype",
    "-type",
    "-xtype",
    "-maxdepth",
    "-mindepth",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-newer",
    "-anewer",
    "-cnewer",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
    "-lname",
    "-ilname",
    "-printf",
    "-fstype",
    "-used",
    "-context",
];

/// Reads `find`'s arguments: the indices of its starting paths (what it reads), or why the
/// expression is not understood.
pub(crate) fn read(words: &[String], expanded: &[bool]) -> Result<Vec<usize>, String> {
    // INVARIANT (fail closed): an expanded word may split into primaries when it runs
    // (`-name $X` with `X='x -delete'`).
    if let Some(at) = expanded.iter().position(|&e| e) {
        let word = words.get(at).map(String::as_str).unwrap_or("");
        return Err(format!("`{word}` is expanded when run and may turn into primaries"));
    }
    let mut paths = Vec::new();
    let mut i = 0;
    // Leading options, then the starting paths, then the expression.
    while let Some(word) = words.get(i) {
        match word.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            w if w.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    while let Some(word) = words.get(i) {
        if word.starts_with('-') || word == "(" || word == "!" {
            break;
        }
        paths.push(i);
        i += 1;
    }
    while let Some(word) = words.get(i) {
        i += 1;
        if BARE.contains(&word.as_str()) {
            continue;
        }
        if ONE.contains(&word.as_str()) || is_newer_xy(word) {
            if words.get(i).is_none() {
                return Err(format!("`{word}` has no argument"));
            }
            i += 1;
            continue;
        }
        return Err(match word.as_str() {
            "-exec" | "-execdir" | "-ok" | "-okdir" => format!("`{word}` runs a command"),
            "-delete" => "`-delete` removes files".into(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls" => format!("`{word}` writes a file"),
            other => format!("`{other}` is not a find primary sixfold understands"),
        });
    }
    Ok(paths)
}

/// `-newerXY` (`-newermt`, `-newerct`, …).
fn is_newer_xy(word: &str) -> bool {
    word.strip_prefix("-newer")
        .is_some_and(|xy| xy.len() == 2 && xy.chars().all(|c| "aBcmt".contains(c)))
}

#[cfg(test)]
mod tests {
    use super::read;

    fn find(line: &str) -> Result<Vec<usize>, String> {
        let words: Vec<String> = line.split(' ').map(String::from).collect();
        let expanded: Vec<bool> = words.iter().map(|w| w.contains('$')).collect();
        read(&words, &expanded)
    }

    #[test]
    fn tests_and_printing_are_understood() {
        assert_eq!(find(". -name *.rs -type f"), Ok(vec![0]));
        assert_eq!(
            find("-L src tests -maxdepth 2 ( -name a -o -name b ) -print0"),
            Ok(vec![1, 2])
        );
        assert_eq!(find(". -newermt 2024-01-01 -printf %p"), Ok(vec![0]));
        assert_eq!(find("-name x"), Ok(vec![]));
    }

    #[test]
    fn running_writing_and_removing_are_not() {
        for line in [
            ". -exec rm {} ;",
            ". -execdir sh -c x ;",
            ". -ok rm {} ;",
            ". -delete",
            ". -fprintf /root/x %p",
            ". -fprint /etc/x",
            ". -fls /etc/x",
            ". -name x -frobnicate",
            "$DIR -name x",
            ". -name $X",
            ". -name",
        ] {
            assert!(find(line).is_err(), "{line}");
        }
    }
}
