//! A `sed` script read by an allow-list: addresses, blocks, and the commands that only print,
//! delete, substitute or move text (`p`, `d`, `s///`, `y///`, `q`, `n`, `N`, `h`, `g`, `x`, `=`,
//! `a`/`i`/`c` text, labels and branches). Anything else — `w`, `W`, `r`, `R`, `e`, `F`-less
//! GNU extensions it does not know, an `s///` with the `w` or `e` flag — makes the script not
//! understood: those read or write files or run commands.

/// Whether `script` is understood; else why not.
pub(crate) fn understood(script: &str) -> Result<(), String> {
    let chars: Vec<char> = script.chars().collect();
    let mut at = 0;
    let mut depth = 0usize;
    loop {
        skip(&chars, &mut at, |c| c.is_whitespace() || c == ';');
        let Some(&c) = chars.get(at) else { break };
        if c == '#' {
            skip(&chars, &mut at, |c| c != '\n');
            continue;
        }
        address(&chars, &mut at)?;
        skip(&chars, &mut at, |c| c == ' ' || c == '\t');
        if chars.get(at) == Some(&',') {
            at += 1;
            skip(&chars, &mut at, |c| c == ' ' || c == '\t');
            address(&chars, &mut at)?;
        }
        skip(&chars, &mut at, |c| c == ' ' || c == '\t' || c == '!');
        let Some(&command) = chars.get(at) else {
            return Err("an address without a command".into());
        };
        at += 1;
        match command {
            '{' => {
                depth += 1;
                continue;
            }
            '}' => depth = depth.checked_sub(1).ok_or("an unmatched `}`")?,
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | '=' | 'z' => {}
            'q' | 'Q' | 'l' | 'L' => skip(&chars, &mut at, |c| c.is_ascii_digit() || c == ' '),
            // Text to print runs to the end of the line.
            'a' | 'i' | 'c' => skip(&chars, &mut at, |c| c != '\n'),
            ':' | 'b' | 't' | 'T' => skip(&chars, &mut at, |c| c != '\n' && c != ';' && c != '}'),
            's' => {
                let delimiter = delimiter(&chars, &mut at)?;
                delimited(&chars, &mut at, delimiter)?;
                delimited(&chars, &mut at, delimiter)?;
                while let Some(&flag) = chars.get(at) {
                    match flag {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => at += 1,
                        d if d.is_ascii_digit() => at += 1,
                        'w' | 'W' | 'e' => {
                            return Err(format!("the `s` flag `{flag}` writes a file or runs a command"))
                        }
                        _ => break,
                    }
                }
            }
            'y' => {
                let delimiter = delimiter(&chars, &mut at)?;
                delimited(&chars, &mut at, delimiter)?;
                delimited(&chars, &mut at, delimiter)?;
            }
            other => return Err(format!("the sed command `{other}` is not one sixfold understands")),
        }
        skip(&chars, &mut at, |c| c == ' ' || c == '\t');
        match chars.get(at) {
            None | Some(';' | '\n' | '}' | '#') => {}
            Some(c) => return Err(format!("`{c}` after a sed command")),
        }
    }
    if depth != 0 {
        return Err("an unclosed `{`".into());
    }
    Ok(())
}

fn skip(chars: &[char], at: &mut usize, while_: impl Fn(char) -> bool) {
    while chars.get(*at).is_some_and(|&c| while_(c)) {
        *at += 1;
    }
}

/// An optional address: a line number (`3`, `1~2`, `+2`), `$`, or a regular expression
/// (`/re/`, `\cREc`) with its `I`/`M` flags.
fn address(chars: &[char], at: &mut usize) -> Result<(), String> {
    match chars.get(*at) {
        Some(c) if c.is_ascii_digit() || *c == '+' || *c == '~' => {
            *at += 1;
            skip(chars, at, |c| c.is_ascii_digit() || c == '~');
        }
        Some('$') => *at += 1,
        Some('/') => {
            *at += 1;
            delimited(chars, at, '/')?;
            skip(chars, at, |c| c == 'I' || c == 'M');
        }
        Some('\\') => {
            *at += 1;
            let delimiter = *chars.get(*at).ok_or("a `\\` address without a delimiter")?;
            *at += 1;
            delimited(chars, at, delimiter)?;
            skip(chars, at, |c| c == 'I' || c == 'M');
        }
        _ => {}
    }
    Ok(())
}

fn delimiter(chars: &[char], at: &mut usize) -> Result<char, String> {
    match chars.get(*at) {
        Some(&c) if c != '\n' && c != '\\' => {
            *at += 1;
            Ok(c)
        }
        _ => Err("a substitution without a delimiter".into()),
    }
}

/// Skips past the next `delimiter` not escaped by a backslash.
fn delimited(chars: &[char], at: &mut usize, delimiter: char) -> Result<(), String> {
    while let Some(&c) = chars.get(*at) {
        *at += 1;
        if c == '\\' {
            *at += 1;
        } else if c == delimiter {
            return Ok(());
        }
    }
    Err(format!("an unterminated `{delimiter}`"))
}

#[cfg(test)]
mod tests {
    use super::understood;

    #[test]
    fn printing_deleting_and_substituting_are_understood() {
        for script in [
            "p",
            "1,10p",
            "$p",
            "/foo/,/bar/d",
            "s/a/b/g",
            "s|a|b|2p",
            "s/a\\/b/c/",
            "1d;$d",
            "/^#/!p",
            "y/abc/xyz/",
            "1~2p",
            "/x/{s/a/b/;p}",
            "$a hello",
            ":a;N;$!ba;s/\\n/ /g",
            "\\,x,p",
            "10q",
            "=",
        ] {
            assert_eq!(understood(script), Ok(()), "{script}");
        }
    }

    #[test]
    fn writing_reading_and_running_are_not() {
        for script in [
            "1w /root/x",
            "w /etc/x",
            "1e cmd",
            "e id",
            "s/a/b/w /etc/x",
            "s/a/b/e",
            "s/x/id/ge",
            "r /root/.ssh/id_rsa",
            "R f",
            "W out",
            "1,10p;w x",
            "/x/{w f\n}",
            "v",
            "s/a/b",
            "{p",
            "p x",
        ] {
            assert!(understood(script).is_err(), "{script}");
        }
    }
}
