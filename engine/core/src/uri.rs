//! Resource URIs made plain before a `resources/read` is judged: a server reads what the URI
//! means, not how it is spelt, so the judgement must too. RFC 3986 (the scheme's case, percent
//! decoding, dot segments) and RFC 8089 (`file:` URIs: no authority, an empty one or
//! `localhost`) say what it means; a URI that cannot be made plain is refused, never judged as
//! its text.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

/// What a resource URI names, once made plain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// A local file: its absolute path, decoded, without dot segments.
    File(String),
    /// Something on another machine (`http`, `https`).
    Remote,
    /// Some other scheme: a place the server alone knows.
    Other,
}

/// What is left encoded in a plain `file:` URI: every byte that is not unreserved or `/`.
const ENCODED: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Makes a URI plain. An error says why it cannot be judged.
///
/// `file://ROOT/%2Eenv` is the file `ROOT/.env`; `FILE://localhost/a/./b/../c` is `/a/c`.
pub fn plain(uri: &str) -> Result<Resource, String> {
    let (scheme, rest) = uri.split_once(':').ok_or_else(|| format!("`{uri}` has no scheme"))?;
    let valid = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !valid {
        return Err(format!("`{uri}` does not start with a valid scheme"));
    }
    match scheme.to_ascii_lowercase().as_str() {
        "file" => file_path(uri, rest).map(Resource::File),
        "http" | "https" => Ok(Resource::Remote),
        _ => Ok(Resource::Other),
    }
}

/// The path of a `file:` URI (what follows `file:`).
fn file_path(uri: &str, rest: &str) -> Result<String, String> {
    if rest.contains(['?', '#']) {
        return Err(format!("`{uri}`: a file URI with a query or a fragment is not read"));
    }
    let path = match rest.strip_prefix("//") {
        Some(after) => {
            let (host, path) = match after.find('/') {
                Some(i) => (after.get(..i).unwrap_or_default(), after.get(i..).unwrap_or_default()),
                None => (after, ""),
            };
            let host = decode(uri, host)?;
            // INVARIANT (fail closed): a file on another host (a share, `file://server/x`) is
            // not a path on this machine: it is refused, not judged as one.
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return Err(format!("`{uri}` names the host `{host}`, not this machine"));
            }
            path
        }
        // `file:/path` (RFC 8089's short form).
        None if rest.starts_with('/') => rest,
        None => return Err(format!("`{uri}` is not an absolute file URI")),
    };
    if path.is_empty() {
        return Err(format!("`{uri}` names no path"));
    }
    let decoded = decode(uri, path)?;
    Ok(without_dot_segments(&decoded))
}

/// Percent-decoded text; a malformed escape, a NUL or bytes that are not UTF-8 cannot be judged.
fn decode(uri: &str, text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3).unwrap_or_default();
            if hex.len() != 2 || !hex.iter().all(u8::is_ascii_hexdigit) {
                return Err(format!("`{uri}` has a malformed percent escape"));
            }
        }
    }
    let decoded = percent_decode_str(text)
        .decode_utf8()
        .map_err(|_| format!("`{uri}` does not decode to UTF-8"))?;
    if decoded.contains('\0') {
        return Err(format!("`{uri}` decodes to a NUL byte"));
    }
    Ok(decoded.into_owned())
}

/// An absolute path with `.` and `..` segments removed and repeated slashes folded (RFC 3986
/// section 5.2.4, over the decoded path: a server that decodes hands the decoded text to the OS,
/// which reads `%2E%2E` as `..`).
fn without_dot_segments(path: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                kept.pop();
            }
            s => kept.push(s),
        }
    }
    format!("/{}", kept.join("/"))
}

/// A plain path as the `file://` URI the server is sent, so it reads exactly what was judged.
pub fn file_uri(path: &str) -> String {
    format!("file://{}", utf8_percent_encode(path, ENCODED))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(uri: &str) -> String {
        match plain(uri) {
            Ok(Resource::File(p)) => p,
            other => panic!("{uri}: {other:?}"),
        }
    }

    #[test]
    fn encoded_and_dotted_spellings_name_the_file_they_mean() {
        assert_eq!(file("file:///w/%2Eenv"), "/w/.env");
        assert_eq!(file("file:///w/%2eenv"), "/w/.env");
        assert_eq!(file("FILE:///w/a"), "/w/a");
        assert_eq!(file("File://LocalHost/w/a"), "/w/a");
        assert_eq!(file("file:/w/a"), "/w/a");
        assert_eq!(file("file:///w/sub/../.env"), "/w/.env");
        assert_eq!(file("file:///w/sub/%2E%2E/.env"), "/w/.env");
        assert_eq!(file("file:///w/./a//b"), "/w/a/b");
        assert_eq!(file("file:///w/a%2F..%2F..%2Fetc/passwd"), "/etc/passwd");
        assert_eq!(file("file:///../../etc/passwd"), "/etc/passwd");
        // Must keep working: a plain file URI is its path.
        assert_eq!(file("file:///w/src/lib.rs"), "/w/src/lib.rs");
        assert_eq!(file("file:///w/a%20b.txt"), "/w/a b.txt");
    }

    #[test]
    fn what_cannot_be_made_plain_is_refused() {
        for bad in [
            "file://server/share/x",
            "file://evil.example/etc/passwd",
            "file:///w/%2",
            "file:///w/%zz",
            "file:///w/%00x",
            "file:///w/%ff",
            "file:relative/x",
            "file://",
            "file:///w/a?x=1",
            "file:///w/a#f",
            " file:///w/a",
            "1file:///w/a",
            "no-scheme",
        ] {
            assert!(plain(bad).is_err(), "{bad}: {:?}", plain(bad));
        }
    }

    #[test]
    fn other_schemes_are_told_apart_by_their_case_insensitive_name() {
        assert_eq!(plain("HTTPS://x.invalid/").unwrap(), Resource::Remote);
        assert_eq!(plain("http://x.invalid/").unwrap(), Resource::Remote);
        assert_eq!(plain("test://static/resource/1").unwrap(), Resource::Other);
    }

    #[test]
    fn the_uri_sent_on_reads_back_as_the_same_path() {
        for path in ["/w/a b.txt", "/w/.env", "/w/100%", "/w/é?#"] {
            assert_eq!(file(&file_uri(path)), path, "{}", file_uri(path));
        }
        assert_eq!(file_uri("/w/src/lib.rs"), "file:///w/src/lib.rs");
    }
}
