//! Asks that wait for a person: a pending call is a file under the project's
//! `.sixfold/approvals/` (`<id>.json`), its answer another (`<id>.answer.json`), each written
//! atomically and read bounded. The server parks the call until the answer file appears or the
//! timeout refuses it; `sixfold approvals list` and `sixfold approvals answer` read and write
//! them from another terminal.
//!
//! The agent cannot answer its own ask: `.sixfold/**` is a protected path that every shipped
//! mode but `full` refuses to let a step write, and the sandbox keeps it read-only. Under `full`
//! nothing asks, so there is nothing to answer.

use serde::{Deserialize, Serialize};
use sixfold_core::bounded::{self, ReadError};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A pending or answer file larger than this is not one sixfold wrote: it is ignored.
pub const MAX_APPROVAL_BYTES: u64 = 256 * 1024;
/// Arguments longer than this are cut in a pending file (the record keeps the step whole).
const MAX_ARGUMENT_TEXT: usize = 16 * 1024;

/// A call waiting for a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    /// Its id, what `sixfold approvals answer` names.
    pub id: String,
    /// The session that asked.
    pub session: String,
    /// The tool.
    pub tool: String,
    /// The tool's arguments (long strings cut).
    pub arguments: serde_json::Value,
    /// The act, in words (a command, a path).
    pub act: String,
    /// Its effects.
    pub effects: sixfold_core::EffectProfile,
    /// The rules that asked.
    pub rules: Vec<String>,
    /// Why it asks.
    pub reason: String,
    /// The mode it was judged under.
    pub mode: String,
    /// When it was asked, in seconds since the epoch.
    pub asked_at: u64,
    /// When the timeout refuses it, in seconds since the epoch.
    pub expires_at: u64,
}

/// A person's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Answer {
    /// Run it this once.
    Allow,
    /// Refuse it.
    Deny,
    /// Run it, and keep a rule that allows the same act from now on (within the mode's ceiling).
    AllowAndKeep,
}

impl Answer {
    /// Reads `allow`, `deny` or `allow-and-keep`.
    pub fn parse(text: &str) -> Option<Answer> {
        match text {
            "allow" => Some(Answer::Allow),
            "deny" => Some(Answer::Deny),
            "allow-and-keep" => Some(Answer::AllowAndKeep),
            _ => None,
        }
    }

    /// The word.
    pub fn word(self) -> &'static str {
        match self {
            Answer::Allow => "allow",
            Answer::Deny => "deny",
            Answer::AllowAndKeep => "allow-and-keep",
        }
    }
}

/// An answer on file: what, by whom, when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answered {
    /// The answer.
    pub answer: Answer,
    /// The OS user who gave it.
    pub user: String,
    /// When, in seconds since the epoch.
    pub at: u64,
    /// For `allow-and-keep`: the rule the person's command kept (`kept/rule-N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The name of the OS user running this process (from the user database, not `$USER`, which the
/// caller sets), or its uid when it has no name.
pub fn os_user() -> String {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(user)) => user.name,
        _ => format!("uid {uid}"),
    }
}

/// Where a project's approvals live.
pub fn dir(project: &Path) -> PathBuf {
    sixfold_core::project::dir(project).join("approvals")
}

/// An id a person can type: letters and digits only, so it is safe as a file name.
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric())
}

fn pending_path(project: &Path, id: &str) -> PathBuf {
    dir(project).join(format!("{id}.json"))
}

fn answer_path(project: &Path, id: &str) -> PathBuf {
    dir(project).join(format!("{id}.answer.json"))
}

/// Writes `text` to `path` through a temporary file: with `exclusive`, only if nothing is there
/// yet (a hard link fails on an existing name), so a second answer never replaces the first.
fn write_atomically(path: &Path, text: &str, exclusive: bool) -> Result<(), String> {
    let parent = path.parent().ok_or("no directory")?;
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
    let tmp = parent.join(format!(".tmp-{}-{}", std::process::id(), now_nanos()));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    let placed = if exclusive {
        std::fs::hard_link(&tmp, path)
    } else {
        std::fs::rename(&tmp, path)
    };
    let _ = std::fs::remove_file(&tmp);
    placed.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => format!("`{}` is already answered", path.display()),
        _ => format!("cannot write `{}`: {e}", path.display()),
    })
}

fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

/// A string value cut to a bound (recursively), so a pending file stays small.
fn cut(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::String(s) if s.len() > MAX_ARGUMENT_TEXT => {
            let mut end = MAX_ARGUMENT_TEXT;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            serde_json::Value::String(format!(
                "{}… [{} bytes in all]",
                s.get(..end).unwrap_or_default(),
                s.len()
            ))
        }
        serde_json::Value::Array(a) => a.iter().map(cut).collect(),
        serde_json::Value::Object(o) => o.iter().map(|(k, v)| (k.clone(), cut(v))).collect(),
        other => other.clone(),
    }
}

impl Pending {
    /// A new id: the time and this process, in hexadecimal.
    pub fn new_id() -> String {
        format!("{:x}{:x}", now_nanos() & 0xffff_ffff_ffff, std::process::id())
    }

    /// Puts it on file.
    pub fn park(&self, project: &Path) -> Result<(), String> {
        let mut shown = self.clone();
        shown.arguments = cut(&self.arguments);
        let text = serde_json::to_string_pretty(&shown).map_err(|e| format!("cannot write a pending ask: {e}"))?;
        if text.len() as u64 > MAX_APPROVAL_BYTES {
            return Err("the pending ask is too large to put on file".into());
        }
        write_atomically(&pending_path(project, &self.id), &text, false)
    }

    /// Waits for an answer until `timeout`, looking every `poll`; `None` at the timeout. The
    /// files are removed either way: the answer is then on the session's record.
    pub fn wait(&self, project: &Path, timeout: Duration, poll: Duration) -> Option<Answered> {
        let deadline = std::time::Instant::now() + timeout;
        let found = loop {
            if let Some(answer) = read_answer(project, &self.id) {
                break Some(answer);
            }
            if std::time::Instant::now() >= deadline {
                break None;
            }
            std::thread::sleep(poll);
        };
        let _ = std::fs::remove_file(pending_path(project, &self.id));
        let _ = std::fs::remove_file(answer_path(project, &self.id));
        found
    }
}

fn read_answer(project: &Path, id: &str) -> Option<Answered> {
    let text = bounded::read_text(&answer_path(project, id), MAX_APPROVAL_BYTES).ok()?;
    serde_json::from_str(&text).ok()
}

/// The asks pending in a project, oldest first. Files that are not sixfold's are skipped.
pub fn list(project: &Path) -> Result<Vec<Pending>, String> {
    let d = dir(project);
    let entries = match std::fs::read_dir(&d) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot read `{}`: {e}", d.display())),
    };
    let mut out = Vec::new();
    for entry in entries.take(10_000).flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".json") else { continue };
        if !valid_id(id) || answer_path(project, id).exists() {
            continue;
        }
        // A server that died while it waited leaves its ask behind: past its time it is not pending.
        if let Ok(text) = bounded::read_text(&entry.path(), MAX_APPROVAL_BYTES) {
            if let Ok(p) = serde_json::from_str::<Pending>(&text) {
                if p.expires_at >= now() {
                    out.push(p);
                }
            }
        }
    }
    out.sort_by(|a, b| (a.asked_at, &a.id).cmp(&(b.asked_at, &b.id)));
    Ok(out)
}

/// The ask `id` if it is pending: on file, not answered, not expired.
pub fn pending(project: &Path, id: &str) -> Result<Pending, String> {
    if !valid_id(id) {
        return Err(format!("`{id}` is not an approval id"));
    }
    let pending = match bounded::read_text(&pending_path(project, id), MAX_APPROVAL_BYTES) {
        Ok(text) => {
            serde_json::from_str::<Pending>(&text).map_err(|e| format!("the pending ask `{id}` cannot be read: {e}"))?
        }
        Err(ReadError::Missing) => {
            return Err(format!("no ask `{id}` is pending (answered, timed out or never asked)"))
        }
        Err(e) => return Err(format!("the pending ask `{id}` cannot be read: {e}")),
    };
    if pending.expires_at < now() {
        return Err(format!("the ask `{id}` timed out and was refused"));
    }
    if answer_path(project, id).exists() {
        return Err(format!("the ask `{id}` is already answered"));
    }
    Ok(pending)
}

/// Answers a pending ask as this OS user (with the rule kept, for `allow-and-keep`); the pending
/// ask it answered. A second answer to the same ask is refused.
pub fn answer(project: &Path, id: &str, answer: Answer, kept: Option<String>) -> Result<Pending, String> {
    let pending = pending(project, id)?;
    let answered = Answered {
        answer,
        user: os_user(),
        at: now(),
        kept,
    };
    let text = serde_json::to_string(&answered).map_err(|e| format!("cannot write the answer: {e}"))?;
    write_atomically(&answer_path(project, id), &text, true)?;
    Ok(pending)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(id: &str) -> Pending {
        Pending {
            id: id.into(),
            session: "s".into(),
            tool: "write_file".into(),
            arguments: serde_json::json!({"path": "a", "content": "x".repeat(MAX_ARGUMENT_TEXT + 10)}),
            act: "a".into(),
            effects: sixfold_core::EffectProfile::default(),
            rules: vec!["writes-workspace".into()],
            reason: "writes inside the workspace".into(),
            mode: "ask".into(),
            asked_at: now(),
            expires_at: now() + 5,
        }
    }

    #[test]
    fn an_ask_is_listed_answered_once_and_then_gone() {
        let t = tempfile::tempdir().unwrap();
        let p = pending("abc1");
        p.park(t.path()).unwrap();
        let listed = list(t.path()).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].arguments["content"]
            .as_str()
            .unwrap()
            .contains("bytes in all"));
        answer(t.path(), "abc1", Answer::Deny, None).unwrap();
        assert!(list(t.path()).unwrap().is_empty(), "an answered ask is not pending");
        assert!(answer(t.path(), "abc1", Answer::Allow, None)
            .unwrap_err()
            .contains("already answered"));
        let got = p
            .wait(t.path(), Duration::from_secs(1), Duration::from_millis(10))
            .unwrap();
        assert_eq!(got.answer, Answer::Deny);
        assert!(!got.user.is_empty());
        assert!(std::fs::read_dir(dir(t.path())).unwrap().next().is_none());
    }

    #[test]
    fn an_unanswered_ask_times_out_and_bad_ids_are_refused() {
        let t = tempfile::tempdir().unwrap();
        let p = pending("abc2");
        p.park(t.path()).unwrap();
        assert!(p
            .wait(t.path(), Duration::from_millis(50), Duration::from_millis(10))
            .is_none());
        assert!(answer(t.path(), "abc2", Answer::Allow, None)
            .unwrap_err()
            .contains("no ask"));
        assert!(answer(t.path(), "../x", Answer::Allow, None)
            .unwrap_err()
            .contains("not an approval id"));
    }
}
