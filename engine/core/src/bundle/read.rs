//! Reading a bundle's documents: each file parsed into its format, layered by id over the
//! sources before it, with a diagnostic for each file that does not parse. Scripts are read here
//! too, and compiled (or, for the shipped bundle, set up to compile on first use).
//!
//! A [`Selection`] reads only the documents one judgement needs; everything else is left unread.

use super::parsed::{ParseCache, ParsedDoc, Stored};
use super::select::{Needs, Selection};
use super::source::{BundleSource, Origin, Text};
use crate::built::Leave;
use crate::diag::Diagnostic;
use crate::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};
use crate::script::{Script, ScriptHost};
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;

/// One parsed file and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct Doc {
    pub(crate) source: usize,
    pub(crate) relative: String,
    pub(crate) display: String,
    /// The TOML text spans point into (a `.md` mode's front matter).
    pub(crate) text: Text,
    /// Lines before `text` in the file.
    pub(crate) line_offset: usize,
    /// The shipped command rules: only the text before them was parsed, the rules are left to
    /// the classifier to compile by need (`classify::unread`).
    pub(crate) unread_commands: bool,
    /// A stored layer's kept command rules, left out of the parsed policy: one judgement reads
    /// those its step names (`unread_acts::UnreadActs`).
    pub(crate) unread_acts: Option<std::sync::Arc<super::unread_acts::UnreadActs>>,
    /// The rules of place globs alone of the mode judged under, left out of a stored mode: a
    /// judgement reads those its step's places may reach (`unread_rules::UnreadRules`).
    pub(crate) unread_rules: Option<std::sync::Arc<super::unread_rules::UnreadRules>>,
}

impl Doc {
    /// A diagnostic at a span of this document.
    pub(crate) fn diag(&self, span: Range<usize>, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::at(&self.display, &self.text, span, message);
        d.line += self.line_offset;
        d
    }

    /// The directory of this file inside its bundle, for scripts named beside it.
    pub(crate) fn sibling(&self, name: &str) -> String {
        match self.relative.rsplit_once('/') {
            Some((dir, _)) => normalise(&format!("{dir}/{name}")),
            None => normalise(name),
        }
    }
}

fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

/// A place in a file, turned into a diagnostic only when something there fails (locating is
/// not free, and a bundle carries many examples).
#[derive(Debug, Clone)]
pub(crate) struct Located {
    display: String,
    text: Text,
    span: Range<usize>,
    line_offset: usize,
    message: String,
}

impl Located {
    pub(crate) fn new(doc: &Doc, span: Range<usize>, message: impl Into<String>) -> Located {
        Located {
            display: doc.display.clone(),
            text: doc.text.clone(),
            span,
            line_offset: doc.line_offset,
            message: message.into(),
        }
    }

    pub(crate) fn diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::at(&self.display, &self.text, self.span.clone(), self.message.clone());
        d.line += self.line_offset;
        d
    }
}

/// Parsed files of one kind, by id, later sources replacing earlier ones.
pub(crate) struct Layered<T> {
    pub(crate) items: BTreeMap<String, (Doc, T)>,
    seen_in_source: HashMap<(usize, String), String>,
}

impl<T> Layered<T> {
    pub(crate) fn new() -> Self {
        Layered {
            items: BTreeMap::new(),
            seen_in_source: HashMap::new(),
        }
    }

    fn insert(&mut self, id: String, doc: Doc, item: T, diagnostics: &mut Vec<Diagnostic>) {
        if let Some(first) = self.seen_in_source.get(&(doc.source, id.clone())) {
            diagnostics.push(
                Diagnostic::file(&doc.display, format!("`{id}` is defined twice in one bundle"))
                    .with_hint(format!("it is also defined in {first}; rename one of them")),
            );
            return;
        }
        self.seen_in_source
            .insert((doc.source, id.clone()), doc.display.clone());
        self.items.insert(id, (doc, item));
    }

    /// The items in the order their files load (source, then path): the order in which items
    /// that are not replaced by id but added up (command rules, act rules, path sets) apply.
    pub(crate) fn in_load_order(&self) -> Vec<&(Doc, T)> {
        let mut ordered: Vec<&(Doc, T)> = self.items.values().collect();
        ordered.sort_by(|(a, _), (b, _)| (a.source, &a.relative).cmp(&(b.source, &b.relative)));
        ordered
    }
}

/// The shipped file of command rules, cut at build time so a judgement compiles only the rules it
/// needs.
const COMMANDS: &str = "policies/commands.toml";

/// A mode as written, with the role prompt from a `.md` mode's body.
pub(crate) type ModeDoc = (ModeFile, Option<String>);

/// A script file: compiled (`None` when it did not compile, already reported), or still text
/// when only a selection was read and no rule has named it yet.
#[derive(Debug, Clone)]
pub(crate) enum ScriptFile {
    Compiled(Option<Script>),
    Unread { display: String, text: Text, shipped: bool },
}

/// Every document read, by kind.
pub(crate) struct Documents {
    pub(crate) modes: Layered<ModeDoc>,
    pub(crate) policies: Layered<PolicyFile>,
    pub(crate) patterns: Layered<PatternFile>,
    pub(crate) providers: Layered<ProviderFile>,
    /// By source index and path relative to that source's root.
    pub(crate) scripts: HashMap<(usize, String), ScriptFile>,
}

/// Reads the sources in order. With needs, only the files they need are parsed, and scripts are
/// left as text until a rule names them. With a cache, a document of a layer other than the
/// shipped one that was parsed before is taken from it, and one parsed now is added to it.
pub(crate) fn read(
    sources: &[BundleSource],
    host: &ScriptHost,
    needs: Option<&Needs>,
    cache: Option<&ParseCache>,
    d: &mut Vec<Diagnostic>,
) -> Documents {
    let mut docs = Documents {
        modes: Layered::new(),
        policies: Layered::new(),
        patterns: Layered::new(),
        providers: Layered::new(),
        scripts: HashMap::new(),
    };
    let mut wanted = needs.map(Selection::new);
    // Opened on the first document a layer parses, so a layer with nothing wanted is not hashed.
    let mut stored: Vec<Option<Stored>> = sources.iter().map(|_| None).collect();
    // A selected mode may extend one not selected yet: read again for the modes it names, until
    // no new one is named. Without a selection, one pass reads everything.
    loop {
        // Once the modes are read, the one environment they name, if one: the shipped policies
        // declaring it are read without their other environments (never compiled by this load).
        let environment = wanted.as_ref().and_then(|_| named_environment(&docs.modes));
        for (index, source) in sources.iter().enumerate() {
            let label = source.label();
            let shipped = source.origin == Origin::Shipped;
            for (file, (relative, text)) in source.files.iter().enumerate() {
                if let Some(wanted) = &mut wanted {
                    // A shipped file still as embedded was read by the build.
                    let built = match text {
                        Text::Embedded(text) if shipped => crate::built::facts(file, relative, text),
                        _ => None,
                    };
                    if !wanted.take((index, file), relative, text, built) {
                        continue;
                    }
                }
                // Pushed, not formatted: a judgement's load names a few dozen files.
                let label = label.trim_end_matches('/');
                let mut display = String::with_capacity(label.len() + 1 + relative.len());
                display.extend([label, "/", relative]);
                if relative.ends_with(".rhai") {
                    let file = if wanted.is_some() {
                        ScriptFile::Unread {
                            display,
                            text: text.clone(),
                            shipped,
                        }
                    } else {
                        ScriptFile::Compiled(compile(host, &display, text.as_ref(), shipped, d))
                    };
                    docs.scripts.insert((index, relative.clone()), file);
                    continue;
                }
                // One judgement's load leaves the shipped command rules unparsed: the classifier
                // compiles those of the programs a step names.
                let cut = match crate::classify::shipped_commands_cut() {
                    Some((whole, first, _))
                        if wanted.is_some() && shipped && relative == COMMANDS && text.as_ref() == whole =>
                    {
                        whole.get(..first)
                    }
                    _ => None,
                };
                let text = match cut {
                    Some(cut) => Text::Embedded(cut),
                    None => text.clone(),
                };
                let doc = Doc {
                    source: index,
                    relative: relative.clone(),
                    display,
                    text,
                    line_offset: 0,
                    unread_commands: cut.is_some(),
                    unread_acts: None,
                    unread_rules: None,
                };
                // Never the shipped bundle: it holds every mode's ceiling, which no file outside the
                // binary may stand in for (and in a compact form it decodes no faster than it parses).
                let entry = match (cache, stored.get_mut(index)) {
                    (Some(cache), Some(slot)) if !shipped => {
                        Some(slot.get_or_insert_with(|| Stored::open(cache, source)))
                    }
                    _ => None,
                };
                let needed = needs.map(|needs| Needed {
                    needs,
                    environment: environment.as_deref(),
                });
                read_document(&mut docs, doc, shipped, entry, needed, d);
            }
        }
        let Some(wanted) = &mut wanted else { break };
        if !wanted.next_round(|id| docs.modes.items.get(id).map(|(_, (mode, _))| mode)) {
            break;
        }
    }
    for entry in stored.into_iter().flatten() {
        entry.save();
    }
    docs
}

/// Compiles a script file; the shipped bundle's compile on first use (they are checked when it
/// is built and tested), everyone else's now.
pub(crate) fn compile(
    host: &ScriptHost,
    display: &str,
    text: &str,
    shipped: bool,
    d: &mut Vec<Diagnostic>,
) -> Option<Script> {
    if shipped {
        Some(ScriptHost::deferred(display, text))
    } else {
        // INVARIANT (fail closed): a script that does not compile is `None`: rules naming it refuse.
        host.compile(display, text).map_err(|diag| d.push(diag)).ok()
    }
}

/// What one judgement's load needs: its needs, and the one environment its modes name.
#[derive(Clone, Copy)]
struct Needed<'n> {
    needs: &'n Needs,
    environment: Option<&'n str>,
}

/// The environment the modes read name, when they name exactly one.
fn named_environment(modes: &Layered<ModeDoc>) -> Option<String> {
    let mut named = modes
        .items
        .values()
        .filter_map(|(_, (mode, _))| mode.environment.as_ref().map(|e| e.get_ref()));
    let first = named.next()?;
    named.all(|other| other == first).then(|| first.clone())
}

fn read_document(
    docs: &mut Documents,
    mut doc: Doc,
    shipped: bool,
    mut stored: Option<&mut Stored>,
    needed: Option<Needed<'_>>,
    d: &mut Vec<Diagnostic>,
) {
    let needs = needed.map(|n| n.needs);
    let relative = doc.relative.clone();
    match relative.split('/').next().unwrap_or("") {
        "modes" => {
            let mut role = None;
            if relative.ends_with(".md") {
                let whole = doc.text.clone();
                let Some((matter, body)) = front_matter(&whole) else {
                    d.push(
                        Diagnostic::at_line(&doc.display, 1, 1, "a mode written as Markdown needs TOML front matter")
                            .with_hint("start the file with a line `+++`, the mode's keys, then another `+++`; the body is the role prompt"),
                    );
                    return;
                };
                doc.text = whole.part(matter);
                doc.line_offset = 1;
                role = Some(body.trim().to_string()).filter(|b| !b.is_empty());
            }
            // One judgement's load leaves the rules of place globs alone of the mode it judges
            // under in a stored layer's entry (a mode it extends, or any other, is read whole).
            let unread = match (stored.as_deref_mut(), needs) {
                (Some(entry), Some(needs)) if !shipped && file_stem(&relative) == needs.mode => {
                    entry.unread_rules(&relative)
                }
                _ => None,
            };
            let items = unread.as_ref().map(|u| ("rules", u.nodes()));
            if let Some((ParsedDoc::Mode(mode), from_entry)) = parse_stored(&doc, shipped, stored, needed, items, d) {
                // Parsed from its TOML instead, it holds them all.
                doc.unread_rules = unread.filter(|_| from_entry).map(std::sync::Arc::new);
                if mode.id != file_stem(&relative) {
                    d.push(
                        Diagnostic::file(
                            &doc.display,
                            format!("the mode's id `{}` is not its file's name", mode.id),
                        )
                        .with_hint(format!("name the file `{}` or change the id", mode.id)),
                    );
                }
                docs.modes.insert(mode.id.clone(), doc, (mode, role), d);
            }
        }
        "policies" => {
            // One judgement's load leaves a stored layer's kept command rules in its entry.
            let unread = match (stored.as_deref_mut(), needs) {
                (Some(entry), Some(_)) if !shipped => entry.unread_acts(&relative),
                _ => None,
            };
            let items = unread.as_ref().map(|u| ("acts", u.nodes()));
            if let Some((ParsedDoc::Policy(policy), from_entry)) = parse_stored(&doc, shipped, stored, needed, items, d)
            {
                // Parsed from its TOML instead, it holds them all.
                doc.unread_acts = unread.filter(|_| from_entry).map(std::sync::Arc::new);
                docs.policies.insert(policy.id.clone(), doc, policy, d);
            }
        }
        "patterns" => {
            if let Some((ParsedDoc::Pattern(pattern), _)) = parse_stored(&doc, shipped, stored, needed, None, d) {
                docs.patterns.insert(pattern.id.clone(), doc, pattern, d);
            }
        }
        "providers" => {
            if let Some((ParsedDoc::Provider(provider), _)) = parse_stored(&doc, shipped, stored, needed, None, d) {
                docs.providers.insert(provider.id.clone(), doc, *provider, d);
            }
        }
        _ => {}
    }
}

/// The document as its folder's kind: a shipped one as the build parsed it, else from the layer's
/// stored entry when it holds it, else parsed from its TOML (and then stored, when it parsed);
/// and whether it was read from the entry. Read from the entry, it leaves out the kept command
/// items `items` names (`built::Leave::items`).
fn parse_stored(
    doc: &Doc,
    shipped: bool,
    stored: Option<&mut Stored>,
    needed: Option<Needed<'_>>,
    items: Option<(&str, &[u32])>,
    d: &mut Vec<Diagnostic>,
) -> Option<(ParsedDoc, bool)> {
    let kind = doc.relative.split('/').next().unwrap_or("");
    let unread = needed
        .map(|n| leave_for_one_judgement(kind, n.needs))
        .unwrap_or_default();
    if shipped {
        // Of a shipped policy declaring the environment the modes name, only that one: the
        // others are never compiled by this load, and, that one declared, no diagnostic lists
        // the known environments (a whole load's would list every one).
        let environment = needed.and_then(|n| n.environment).filter(|name| {
            kind == "policies" && crate::built::has_entry(&doc.relative, &doc.text, "environments", name)
        });
        let unread = Leave {
            all_but: environment.map(|name| ("environments", name)).or(unread.all_but),
            ..unread
        };
        if let Some(built) = built_without(kind, &doc.relative, &doc.text, unread) {
            return Some((built, false));
        }
    }
    let unread = Leave { items, ..unread };
    match kind {
        "modes" => layer_doc::<ModeFile>(doc, stored, unread, d).map(|(m, e)| (ParsedDoc::Mode(m), e)),
        "policies" => layer_doc::<PolicyFile>(doc, stored, unread, d).map(|(p, e)| (ParsedDoc::Policy(p), e)),
        "patterns" => layer_doc::<PatternFile>(doc, stored, unread, d).map(|(p, e)| (ParsedDoc::Pattern(p), e)),
        "providers" => {
            layer_doc::<ProviderFile>(doc, stored, unread, d).map(|(p, e)| (ParsedDoc::Provider(Box::new(p)), e))
        }
        _ => None,
    }
}

/// A document of a layer: from its stored entry, else parsed (and stored when it parsed); and
/// whether it came from the entry.
fn layer_doc<T: serde::de::DeserializeOwned>(
    doc: &Doc,
    stored: Option<&mut Stored>,
    unread: Leave<'_>,
    d: &mut Vec<Diagnostic>,
) -> Option<(T, bool)> {
    let Some(stored) = stored else {
        return parse::<T>(doc, d).map(|t| (t, false));
    };
    if let Some(found) = stored.get::<T>(&doc.relative, unread) {
        return Some((found, true));
    }
    let parsed = parse::<T>(doc, d)?;
    stored.put::<T>(&doc.relative, &doc.text);
    Some((parsed, false))
}

/// What one judgement's load leaves unread of a document of `kind`: the examples and rows only a
/// whole load compiles (`sixfold check`'s, and the rows runs are checked against); for a call of
/// one tool, the provider's other tools and the tables only a launch reads (how its CLI is found,
/// started, recorded and governed: most of a provider's file), and the `[mcp]` maps unless it is
/// an MCP server's tool (the only calls that read them: `provider::mcp_tool`).
pub(crate) fn leave_for_one_judgement<'n>(kind: &str, needs: &'n Needs) -> Leave<'n> {
    const EXAMPLES: &[&str] = &["examples"];
    const CHECKING: &[&str] = &["examples", "row_examples", "rows"];
    const CHECKING_AND_MCP: &[&str] = &["examples", "row_examples", "rows", "mcp"];
    // Each an optional table of `ProviderFile`, read by `sixfold launch` and `doctor` alone.
    const LAUNCHING: &[&str] = &["readiness", "launch", "hermetic", "record", "governed"];
    let tool = needs.tool.as_deref();
    match kind {
        "modes" | "patterns" => Leave {
            keys: EXAMPLES,
            ..Leave::default()
        },
        "policies" => Leave {
            keys: match tool {
                Some(tool) if crate::provider::mcp_tool(tool).is_none() => CHECKING_AND_MCP,
                _ => CHECKING,
            },
            ..Leave::default()
        },
        "providers" => Leave {
            keys: if tool.is_some() { LAUNCHING } else { &[] },
            all_but: tool.map(|tool| ("tools", tool)),
            ..Leave::default()
        },
        _ => Leave::default(),
    }
}

/// A shipped document of `kind` as the build parsed it, when `text` is the text it parsed.
#[cfg(test)]
pub(crate) fn built(kind: &str, relative: &str, text: &str) -> Option<ParsedDoc> {
    built_without(kind, relative, text, Leave::default())
}

/// As [`built`], without what `unread` names.
pub(crate) fn built_without(kind: &str, relative: &str, text: &str, unread: Leave<'_>) -> Option<ParsedDoc> {
    use crate::built::document_without as document;
    match kind {
        "modes" => document::<ModeFile>(relative, text, unread).map(ParsedDoc::Mode),
        "policies" => document::<PolicyFile>(relative, text, unread).map(ParsedDoc::Policy),
        "patterns" => document::<PatternFile>(relative, text, unread).map(ParsedDoc::Pattern),
        "providers" => document::<ProviderFile>(relative, text, unread).map(|p| ParsedDoc::Provider(Box::new(p))),
        _ => None,
    }
}

fn parse<T: serde::de::DeserializeOwned>(doc: &Doc, diagnostics: &mut Vec<Diagnostic>) -> Option<T> {
    match toml::from_str::<T>(&doc.text) {
        Ok(v) => Some(v),
        Err(err) => {
            let message = err.message().trim_end_matches('\n').replace('\n', "; ");
            // Text that is not TOML at all is a syntax error, whatever serde would add.
            let syntax = toml::from_str::<toml::Table>(&doc.text).is_err();
            let hint = if syntax {
                "check the TOML syntax near this point"
            } else if message.contains("unknown field") {
                "remove the key, or check its spelling against `sixfold schema`"
            } else if message.contains("missing field") {
                "add the key; `sixfold schema` lists what each file needs"
            } else if message.contains("invalid type") || message.contains("expected") {
                "check the value's type against `sixfold schema`"
            } else {
                "check the TOML syntax near this point"
            };
            let d = match err.span() {
                Some(span) => doc.diag(span, message),
                None => Diagnostic::file(&doc.display, message),
            };
            diagnostics.push(d.with_hint(hint));
            None
        }
    }
}

/// Splits `+++\n<toml>\n+++\n<body>`; `None` when there is no front matter.
pub(crate) fn front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("+++\n").or_else(|| text.strip_prefix("+++\r\n"))?;
    let end = rest.find("\n+++")?;
    let matter = rest.get(..=end)?;
    let after = rest.get(end + 4..)?;
    let body = after.split_once('\n').map(|(_, b)| b).unwrap_or("");
    Some((matter, body))
}

fn file_stem(relative: &str) -> &str {
    let name = relative.rsplit('/').next().unwrap_or(relative);
    name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name)
}

/// True for a valid mode or provider id.
pub(crate) fn is_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' || c.is_ascii_uppercase())
}

/// A TOML table as JSON (settings, example facts and context).
pub(crate) fn toml_table_to_json(map: &BTreeMap<String, toml::Value>) -> serde_json::Value {
    serde_json::to_value(map).unwrap_or(serde_json::Value::Null)
}

#[cfg(test)]
mod tests {
    use super::Text;

    /// A shipped file's text and its front matter stay the binary's; a read file's part is its own.
    #[test]
    fn an_embedded_text_and_its_parts_are_never_copied() {
        static FILE: &str = "+++\nid = \"x\"\n+++\nbody\n";
        let embedded = Text::Embedded(FILE);
        let (matter, _) = super::front_matter(&embedded).unwrap();
        let part = embedded.part(matter);
        assert!(matches!(part, Text::Embedded(p) if std::ptr::eq(p.as_ptr(), FILE[4..].as_ptr())));
        assert_eq!(&*part, "id = \"x\"\n");
        // Text from elsewhere, even equal, is not a part of it.
        let other = String::from(matter);
        assert!(matches!(embedded.part(&other), Text::Read(_)));
        let read = Text::from(FILE.to_string());
        let (matter, _) = super::front_matter(&read).unwrap();
        assert!(matches!(read.part(matter), Text::Read(ref t) if &**t == "id = \"x\"\n"));
    }
}
