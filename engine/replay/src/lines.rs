//! Bounded line reading: a line longer than the limit is read through and reported, never held.

use std::io::BufRead;

/// The longest line kept; longer ones are malformed (a transcript line is a JSON object, and a
/// tool output past this size is not worth holding).
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Calls `f` with each line's 1-based number and its bytes (without the newline), or a reason
/// it could not be read.
pub(crate) fn for_each<R: BufRead>(mut input: R, mut f: impl FnMut(u64, Result<&[u8], String>)) {
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut too_long = false;
    loop {
        let (done, used) = match input.fill_buf() {
            Ok([]) => {
                if !line.is_empty() || too_long {
                    number += 1;
                    emit(number, &line, too_long, &mut f);
                }
                return;
            }
            Ok(buf) => match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    take(&mut line, buf.get(..i).unwrap_or(&[]), &mut too_long);
                    (true, i + 1)
                }
                None => {
                    take(&mut line, buf, &mut too_long);
                    (false, buf.len())
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                number += 1;
                f(number, Err(format!("the file could not be read further: {e}")));
                return;
            }
        };
        input.consume(used);
        if done {
            number += 1;
            emit(number, &line, too_long, &mut f);
            line.clear();
            too_long = false;
        }
    }
}

fn take(line: &mut Vec<u8>, bytes: &[u8], too_long: &mut bool) {
    if *too_long || line.len() + bytes.len() > MAX_LINE_BYTES {
        *too_long = true;
        line.clear();
    } else {
        line.extend_from_slice(bytes);
    }
}

fn emit(number: u64, line: &[u8], too_long: bool, f: &mut impl FnMut(u64, Result<&[u8], String>)) {
    if too_long {
        f(number, Err(format!("the line is longer than {MAX_LINE_BYTES} bytes")));
    } else {
        f(number, Ok(line.strip_suffix(b"\r").unwrap_or(line)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &[u8]) -> Vec<(u64, Result<String, String>)> {
        let mut out = Vec::new();
        for_each(std::io::BufReader::with_capacity(4, text), |n, l| {
            out.push((n, l.map(|b| String::from_utf8_lossy(b).into_owned())));
        });
        out
    }

    #[test]
    fn lines_are_numbered_and_the_last_needs_no_newline() {
        let got = collect(b"a\r\nbb\n\nccc");
        let want: Vec<(u64, Result<String, String>)> = vec![
            (1, Ok("a".into())),
            (2, Ok("bb".into())),
            (3, Ok("".into())),
            (4, Ok("ccc".into())),
        ];
        assert_eq!(got, want);
    }
}
