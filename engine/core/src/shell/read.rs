//! The walk over a bash syntax tree (tree-sitter-bash) into simple commands.
//!
//! The walk is an allow-list: every node kind it reads is named in a `match` below, and any
//! other kind (an arithmetic context, `case`, a C-style `for`, `coproc`, a parse error) makes
//! the line opaque, so the classifier gives it the conservative profile.

use super::word::{self, Piece};
use super::{CommandLine, Redirect, Scope, ScopeKind, SimpleCommand};
use tree_sitter::Node;

/// Shell text longer than this is not read (opaque): the reader's work stays bounded.
const MAX_TEXT: usize = 256 * 1024;

/// How deeply the walk may descend before the text counts as not understood.
const MAX_DEPTH: usize = 96;

/// The most words one word may become through a loop variable's values.
const MAX_VARIANTS: usize = 64;

/// Reads shell text into a [`CommandLine`].
pub(super) fn read(text: &str) -> CommandLine {
    let mut line = CommandLine::default();
    if text.len() > MAX_TEXT {
        line.opaque = Some("the command is too long to read".into());
        return line;
    }
    if crashes_the_grammar(text) {
        line.opaque = Some("the command holds text the shell grammar cannot read safely".into());
        return line;
    }
    let Some(tree) = with_parser(|parser| parser.parse(text, None)).flatten() else {
        line.opaque = Some("the command cannot be read".into());
        return line;
    };
    let root = tree.root_node();
    // INVARIANT (fail closed): text the grammar cannot read whole is not understood.
    if root.has_error() {
        line.opaque = Some("the command is not valid shell".into());
        return line;
    }
    let mut reader = Reader {
        src: text,
        line,
        next_scope: 0,
        next_chain: 0,
        bindings: Vec::new(),
    };
    let ctx = Ctx::default();
    reader.sequence(root, &ctx, 0, &[]);
    reader.line
}

/// Whether `text` holds what makes tree-sitter-bash's scanner read out of bounds: its brace
/// range check (`{1..9}`) calls C's `isdigit` on the character after `{`, its digits and `..`,
/// which is undefined past U+00FF and crashed the process for `{\u{E0000}`. A hook that crashes
/// lets the agent's CLI run the tool, so such text is never parsed (INVARIANT (fail closed)), even
/// where quotes would have kept the scanner away from it: reading quotes here would be a second
/// shell grammar, and a wide character right after `{` is rare in the commands agents write.
pub(super) fn crashes_the_grammar(text: &str) -> bool {
    fn after_digits(s: &str) -> &str {
        s.trim_start_matches(|c: char| c.is_ascii_digit())
    }
    let wide_first = |s: &str| s.chars().next().is_some_and(|c| u32::from(c) > 0xFF);
    text.match_indices('{').any(|(at, _)| {
        let rest = after_digits(&text[at + 1..]);
        wide_first(rest) || rest.strip_prefix("..").is_some_and(|r| wide_first(after_digits(r)))
    })
}

thread_local! {
    /// One parser per thread: making one and loading the grammar is most of a short line's cost.
    static PARSER: std::cell::RefCell<Option<tree_sitter::Parser>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with this thread's parser, made on first use; `None` when the grammar cannot be
/// loaded.
fn with_parser<T>(f: impl FnOnce(&mut tree_sitter::Parser) -> T) -> Option<T> {
    let fresh = || {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .map(|_| parser)
    };
    PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => {
            if kept.is_none() {
                *kept = fresh();
            }
            let parser = kept.as_mut()?;
            parser.reset();
            Some(f(parser))
        }
        // Never re-entered; if it were, a parser of its own.
        Err(_) => fresh().map(|mut parser| f(&mut parser)),
    })
}

/// Where a statement runs.
#[derive(Debug, Clone, Default)]
struct Ctx {
    scopes: Vec<Scope>,
    chain: usize,
    gated: bool,
    fed: bool,
    /// Redirections of an enclosing group, which every command in it has.
    redirects: Vec<Redirect>,
}

/// What redirections gathered: files, substitutions they run, and whether standard input is
/// text the line supplies.
#[derive(Debug, Default)]
struct Gathered<'t> {
    redirects: Vec<Redirect>,
    substitutions: Vec<CommandLine>,
    fed: bool,
    /// What follows a here-document's start on its line (`| sh`, `&& ls`).
    tails: Vec<Node<'t>>,
}

struct Reader<'t> {
    src: &'t str,
    line: CommandLine,
    next_scope: usize,
    next_chain: usize,
    /// `for` variables and the words they take, innermost last.
    bindings: Vec<(String, Vec<Vec<Piece>>)>,
}

fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

impl<'t> Reader<'t> {
    fn text(&self, node: Node<'_>) -> &'t str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn opaque(&mut self, why: impl Into<String>) {
        if self.line.opaque.is_none() {
            self.line.opaque = Some(why.into());
        }
    }

    fn not_understood(&mut self, node: Node<'_>) {
        let kind = node.kind().to_string();
        self.opaque(format!("`{kind}` is not understood"));
    }

    /// Notes an operator after the last simple command.
    fn after(&mut self, op: &str) {
        if let Some(last) = self.line.commands.last_mut() {
            last.after.push(op.to_string());
        }
    }

    fn scoped(&mut self, ctx: &Ctx, kind: ScopeKind) -> Ctx {
        self.next_scope += 1;
        let mut inner = ctx.clone();
        inner.scopes.push(Scope {
            id: self.next_scope,
            kind,
        });
        inner
    }

    fn new_chain(&mut self, ctx: &Ctx) -> Ctx {
        self.next_chain += 1;
        Ctx {
            chain: self.next_chain,
            gated: true,
            ..ctx.clone()
        }
    }

    /// Statements separated by terminators (a program, a group, a body); `tokens` are the other
    /// anonymous tokens the parent allows (`(`, `do`, `then` …).
    fn sequence(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize, tokens: &[&str]) {
        let mut previous_statement = false;
        for child in children(node) {
            if child.is_named() {
                if child.kind() == "comment" {
                    continue;
                }
                if previous_statement {
                    self.after("\n");
                }
                let inner = self.new_chain(ctx);
                self.statement(child, &inner, depth + 1);
                previous_statement = true;
                continue;
            }
            match child.kind() {
                ";" | "&" | "\n" => {
                    let op = child.kind().to_string();
                    self.after(&op);
                    previous_statement = false;
                }
                kind if tokens.contains(&kind) => {}
                _ => self.not_understood(child),
            }
        }
    }

    fn statement(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("commands nest too deeply");
            return;
        }
        match node.kind() {
            "comment" => {}
            "command" | "declaration_command" | "unset_command" | "variable_assignment" | "variable_assignments" => {
                self.command(node, ctx, Gathered::default(), depth)
            }
            "redirected_statement" => self.redirected(node, ctx, depth, false),
            "list" => self.list(node, ctx, depth),
            "pipeline" => self.pipeline(&[node], ctx, depth),
            "subshell" => {
                let inner = self.scoped(ctx, ScopeKind::Subshell);
                self.sequence(node, &inner, depth, &["(", ")"]);
            }
            "compound_statement" => self.sequence(node, ctx, depth, &["{", "}"]),
            "negated_command" => {
                for child in children(node) {
                    match (child.is_named(), child.kind()) {
                        (true, _) => self.statement(child, ctx, depth + 1),
                        (false, "!") => {}
                        _ => self.not_understood(child),
                    }
                }
                // Its status is the inverse of what ran: never a part's own.
                self.after("!");
            }
            "function_definition" => self.function(node, ctx, depth),
            "for_statement" => self.for_loop(node, ctx, depth),
            "while_statement" => {
                let inner = self.scoped(ctx, ScopeKind::Loop);
                for child in children(node) {
                    match (child.is_named(), child.kind()) {
                        (true, "do_group") => self.sequence(child, &inner, depth + 1, &["do", "done"]),
                        (true, _) => self.statement(child, &inner, depth + 1),
                        (false, "while" | "until" | ";" | "\n" | "&") => {}
                        _ => self.not_understood(child),
                    }
                }
                self.after("while");
            }
            "if_statement" => {
                let inner = self.scoped(ctx, ScopeKind::Branch);
                for child in children(node) {
                    match (child.is_named(), child.kind()) {
                        (true, "elif_clause") => self.sequence(child, &inner, depth + 1, &["elif", "then"]),
                        (true, "else_clause") => self.sequence(child, &inner, depth + 1, &["else"]),
                        (true, _) => {
                            let each = self.new_chain(&inner);
                            self.statement(child, &each, depth + 1)
                        }
                        (false, "if" | "then" | "fi" | ";" | "\n" | "&") => {}
                        _ => self.not_understood(child),
                    }
                }
                self.after("if");
            }
            "test_command" => self.test(node, ctx, depth),
            _ => self.not_understood(node),
        }
    }

    /// `a && b || c`: flattened (the grammar nests to the left); a command is gated while every
    /// operator before it in the list is `&&`.
    fn list(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) {
        let (last, gated) = self.list_lead(node, ctx, depth);
        if let Some(last) = last {
            self.statement(last, &Ctx { gated, ..ctx.clone() }, depth + 1);
        }
    }

    /// Reads every item of a list but its last; returns the last and whether it is gated. The
    /// grammar reads `a && b 2>&1 | c` as `(a && b 2>&1) | c` where bash runs `a && (b | c)`:
    /// a pipeline's first element that is a list is read this way, only its last item piped.
    fn list_lead(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) -> (Option<Node<'t>>, bool) {
        let mut items = Vec::new();
        self.flatten(node, &mut items, depth);
        let last = match items.pop() {
            Some(Ok(last)) => Some(last),
            _ => {
                self.opaque("a list is not understood");
                None
            }
        };
        let mut gated = ctx.gated;
        for item in items {
            match item {
                Ok(statement) => {
                    let inner = Ctx { gated, ..ctx.clone() };
                    self.statement(statement, &inner, depth + 1);
                }
                Err("&&") => self.after("&&"),
                Err("||") => {
                    self.after("||");
                    gated = false;
                }
                Err(_) => self.opaque("an operator in a list is not understood"),
            }
        }
        (last, gated)
    }

    fn flatten(&mut self, node: Node<'t>, items: &mut Vec<Result<Node<'t>, &'static str>>, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("commands nest too deeply");
            return;
        }
        for child in children(node) {
            match (child.is_named(), child.kind()) {
                (true, "list") => self.flatten(child, items, depth + 1),
                (true, "comment") => {}
                (true, _) => items.push(Ok(child)),
                (false, "&&") => items.push(Err("&&")),
                (false, "||") => items.push(Err("||")),
                _ => items.push(Err("?")),
            }
        }
    }

    /// A pipeline: each element in its own subshell, every element after the first fed by the
    /// one before it.
    fn pipeline(&mut self, nodes: &[Node<'t>], ctx: &Ctx, depth: usize) {
        let mut elements = Vec::new();
        for node in nodes {
            self.pipe_elements(*node, &mut elements, depth);
        }
        for (i, element) in elements.into_iter().enumerate() {
            if i > 0 {
                self.after("|");
            }
            if i == 0 {
                self.first_element(element, ctx, depth + 1);
                continue;
            }
            let mut inner = self.scoped(ctx, ScopeKind::Subshell);
            inner.fed = true;
            self.statement(element, &inner, depth + 1);
        }
    }

    /// A pipeline's first element, in its own subshell (see [`Reader::list_lead`]).
    fn first_element(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) {
        match node.kind() {
            "list" => {
                let (last, gated) = self.list_lead(node, ctx, depth);
                if let Some(last) = last {
                    let inner = self.scoped(&Ctx { gated, ..ctx.clone() }, ScopeKind::Subshell);
                    self.statement(last, &inner, depth + 1);
                }
            }
            "redirected_statement" => self.redirected(node, ctx, depth, true),
            _ => {
                let inner = self.scoped(ctx, ScopeKind::Subshell);
                self.statement(node, &inner, depth + 1);
            }
        }
    }

    fn pipe_elements(&mut self, node: Node<'t>, elements: &mut Vec<Node<'t>>, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("commands nest too deeply");
            return;
        }
        if node.kind() != "pipeline" {
            elements.push(node);
            return;
        }
        for child in children(node) {
            match (child.is_named(), child.kind()) {
                (true, _) => self.pipe_elements(child, elements, depth + 1),
                (false, "|" | "|&") => {}
                _ => self.not_understood(child),
            }
        }
    }

    /// A statement with redirections; `element` when it is a pipeline's first element (its
    /// last command then runs in a subshell of its own).
    fn redirected(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize, element: bool) {
        let mut gathered = Gathered::default();
        let mut body = None;
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("body") => body = Some(child),
                Some("redirect") => self.redirect(child, &mut gathered, depth + 1),
                _ if child.kind() == "herestring_redirect" => self.redirect(child, &mut gathered, depth + 1),
                _ => self.not_understood(child),
            }
        }
        let tails = std::mem::take(&mut gathered.tails);
        let piped = element || tails.iter().any(|t| t.kind() == "pipeline");
        // The grammar hangs a redirection after `a && b` on the whole list; bash gives it to
        // the last command (and only that one is piped).
        let (body, ctx_for_body) = match body {
            Some(b) if b.kind() == "list" => {
                let (last, gated) = self.list_lead(b, ctx, depth + 1);
                (last, Ctx { gated, ..ctx.clone() })
            }
            other => (other, ctx.clone()),
        };
        let mut body_ctx = if piped {
            self.scoped(&ctx_for_body, ScopeKind::Subshell)
        } else {
            ctx_for_body
        };
        match body {
            Some(b) if matches!(b.kind(), "command" | "declaration_command" | "unset_command") => {
                self.command(b, &body_ctx, gathered, depth + 1)
            }
            // `a | b > f`: the redirection is the last command's.
            Some(b) if matches!(b.kind(), "list" | "pipeline") => {
                self.statement(b, &body_ctx, depth + 1);
                if let Some(last) = self.line.commands.last_mut() {
                    last.redirects.extend(gathered.redirects);
                    last.substitutions.append(&mut gathered.substitutions);
                    last.fed |= gathered.fed;
                }
            }
            Some(b) => {
                body_ctx.redirects.extend(gathered.redirects);
                body_ctx.fed |= gathered.fed;
                if !gathered.substitutions.is_empty() {
                    // Substitutions in a group's redirections run before it: a carrier command.
                    self.push(SimpleCommand {
                        substitutions: gathered.substitutions,
                        ..self.blank(&body_ctx)
                    });
                }
                self.statement(b, &body_ctx, depth + 1);
            }
            // `> f` alone opens (and truncates) `f`.
            None => {
                let mut command = self.blank(&body_ctx);
                command.redirects.extend(gathered.redirects);
                command.substitutions.append(&mut gathered.substitutions);
                command.fed |= gathered.fed;
                self.push(command);
            }
        }
        self.tails(tails, ctx, depth);
    }

    /// What follows a here-document's start on its line (`Gathered::tails`): the rest of its
    /// pipeline or list, read as bash reads it (a pipeline's elements fed, each in a subshell).
    fn tails(&mut self, tails: Vec<Node<'t>>, ctx: &Ctx, depth: usize) {
        for tail in tails {
            match tail.kind() {
                "pipeline" => {
                    let mut elements = Vec::new();
                    self.pipe_elements(tail, &mut elements, depth + 1);
                    for element in elements {
                        self.after("|");
                        let mut inner = self.scoped(ctx, ScopeKind::Subshell);
                        inner.fed = true;
                        self.statement(element, &inner, depth + 1);
                    }
                }
                "&&" => self.after("&&"),
                "||" => self.after("||"),
                _ => {
                    let inner = Ctx {
                        gated: ctx.gated
                            && self
                                .line
                                .commands
                                .last()
                                .is_some_and(|c| !c.after.iter().any(|op| op == "||")),
                        ..ctx.clone()
                    };
                    self.statement(tail, &inner, depth + 1);
                }
            }
        }
    }

    /// One redirection into `gathered`.
    fn redirect(&mut self, node: Node<'t>, gathered: &mut Gathered<'t>, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("commands nest too deeply");
            return;
        }
        match node.kind() {
            "file_redirect" => {
                let mut op = "";
                let mut destination = Vec::new();
                let mut cursor = node.walk();
                for (i, child) in node.children(&mut cursor).enumerate() {
                    match (node.field_name_for_child(i as u32), child.is_named()) {
                        (Some("descriptor"), _) => {}
                        (Some("destination"), _) => destination.push(child),
                        (_, false) => op = child.kind(),
                        _ => self.not_understood(child),
                    }
                }
                self.file_redirect(op, &destination, gathered, depth);
            }
            "heredoc_redirect" => self.heredoc(node, gathered, depth),
            "herestring_redirect" => {
                gathered.fed = true;
                for child in children(node) {
                    match (child.is_named(), child.kind()) {
                        (false, "<<<") => {}
                        (true, "file_descriptor") => {}
                        (true, _) => {
                            // The word is expanded (its substitutions run); its value is input.
                            let mut sink = SimpleCommand::default();
                            let _ = self.words(child, &mut sink, depth + 1);
                            gathered.substitutions.append(&mut sink.substitutions);
                        }
                        _ => self.not_understood(child),
                    }
                }
            }
            _ => self.not_understood(node),
        }
    }

    fn file_redirect(&mut self, op: &str, destination: &[Node<'t>], gathered: &mut Gathered<'t>, depth: usize) {
        let (output, duplicates) = match op {
            ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => (true, false),
            "<" => (false, false),
            ">&" => (true, true),
            "<&" => (false, true),
            // `>&-`, `<&-`: a descriptor closed.
            ">&-" | "<&-" => return,
            _ => {
                self.opaque(format!("the redirection `{op}` is not understood"));
                return;
            }
        };
        let [target] = destination else {
            self.opaque("a redirection's target is not understood");
            return;
        };
        if target.kind() == "process_substitution" {
            let mut sink = SimpleCommand::default();
            let _ = self.words(*target, &mut sink, depth + 1);
            gathered.substitutions.append(&mut sink.substitutions);
            return;
        }
        let mut sink = SimpleCommand::default();
        let values = self.words(*target, &mut sink, depth + 1);
        gathered.substitutions.append(&mut sink.substitutions);
        // `>&2`, `<&0`, `>&-`: a descriptor, not a file.
        if let [one] = values.as_slice() {
            if duplicates && !one.unknown && (one.text == "-" || one.text.chars().all(|c| c.is_ascii_digit())) {
                return;
            }
        }
        // Several values (a loop variable's) are each a target; bash refuses a brace expansion's
        // several words, so counting each is only more.
        if !values.is_empty() && values.iter().all(|v| !v.unknown) {
            for value in values {
                gathered.redirects.push(Redirect {
                    output,
                    target: value.text,
                });
            }
            return;
        }
        // INVARIANT (fail closed): a target the text does not fix is every file.
        gathered.redirects.push(Redirect {
            output,
            target: "*".into(),
        });
    }

    fn heredoc(&mut self, node: Node<'t>, gathered: &mut Gathered<'t>, depth: usize) {
        gathered.fed = true;
        let mut quoted = false;
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match (node.field_name_for_child(i as u32), child.kind()) {
                (_, "<<" | "<<-" | "heredoc_end") => {}
                (_, "heredoc_start") => {
                    quoted = self.text(child).contains(['\'', '"', '\\']);
                }
                (Some("redirect"), _) => self.redirect(child, gathered, depth + 1),
                (Some("operator"), "&&" | "||") | (Some("right"), _) => gathered.tails.push(child),
                (_, "pipeline") => gathered.tails.push(child),
                (_, "heredoc_body") => {
                    if !quoted {
                        self.heredoc_body(child, gathered, depth + 1);
                    }
                }
                _ => self.not_understood(child),
            }
        }
    }

    /// An unquoted here-document's body is expanded: its substitutions run.
    fn heredoc_body(&mut self, node: Node<'t>, gathered: &mut Gathered<'t>, depth: usize) {
        let text = self.text(node);
        // INVARIANT (fail closed): forms the grammar does not split out of a body (backticks,
        // arithmetic) are not understood.
        if text.contains('`') || text.contains("$((") || text.contains("$[") {
            self.opaque("a here-document's body runs what the reader cannot see");
            return;
        }
        let mut sink = SimpleCommand::default();
        let before = text.matches("$(").count();
        let mut found = 0;
        for child in children(node) {
            match child.kind() {
                "heredoc_content" => {}
                "simple_expansion" | "expansion" | "command_substitution" => {
                    found += self.text(child).matches("$(").count();
                    let _ = self.words(child, &mut sink, depth + 1);
                }
                _ => self.not_understood(child),
            }
        }
        if found != before {
            self.opaque("a here-document's body runs what the reader cannot see");
        }
        gathered.substitutions.append(&mut sink.substitutions);
    }

    fn blank(&self, ctx: &Ctx) -> SimpleCommand {
        SimpleCommand {
            redirects: ctx.redirects.clone(),
            scopes: ctx.scopes.clone(),
            chain: ctx.chain,
            gated: ctx.gated,
            fed: ctx.fed,
            ..SimpleCommand::default()
        }
    }

    fn push(&mut self, command: SimpleCommand) {
        self.line.commands.push(command);
    }

    /// A simple command (or a declaration, `unset`, a bare assignment) with the redirections
    /// gathered around it.
    fn command(&mut self, node: Node<'t>, ctx: &Ctx, mut gathered: Gathered<'t>, depth: usize) {
        let mut command = self.blank(ctx);
        let mut cursor = node.walk();
        let kids: Vec<(Option<&str>, Node<'t>)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, c)| (node.field_name_for_child(i as u32), c))
            .collect();
        if node.kind() == "variable_assignment" {
            self.assignment(node, &mut command, depth);
        }
        for (field, child) in kids {
            if node.kind() == "variable_assignment" {
                break;
            }
            match (field, child.is_named(), child.kind()) {
                (Some("redirect"), _, _) => self.redirect(child, &mut gathered, depth + 1),
                (_, true, "variable_assignment") => self.assignment(child, &mut command, depth),
                (_, true, "command_name") => {
                    for name in children(child) {
                        self.push_words(name, &mut command, depth + 1);
                    }
                }
                (_, true, "variable_name") => command.words.push(self.text(child).to_string()),
                (_, true, "comment") => {}
                (Some("argument"), true, _) => self.push_words(child, &mut command, depth + 1),
                (None, true, "herestring_redirect" | "file_redirect" | "heredoc_redirect") => {
                    self.redirect(child, &mut gathered, depth + 1)
                }
                // declaration_command and unset_command: the keyword, then words.
                (None, false, "export" | "declare" | "local" | "readonly" | "typeset" | "unset" | "unsetenv") => {
                    command.words.push(child.kind().to_string())
                }
                (None, true, _) if node.kind() != "command" => self.push_words(child, &mut command, depth + 1),
                _ => self.not_understood(child),
            }
        }
        command.redirects.extend(gathered.redirects);
        command.substitutions.append(&mut gathered.substitutions);
        command.fed |= gathered.fed;
        self.check_names(&command);
        let tails = std::mem::take(&mut gathered.tails);
        self.push(command);
        self.tails(tails, ctx, depth);
    }

    /// `NAME=value` (or `NAME+=value`) as one word; the value is one word (no braces, no
    /// splitting), unknown where it expands.
    fn assignment(&mut self, node: Node<'t>, command: &mut SimpleCommand, depth: usize) {
        let mut name = String::new();
        let mut op = "=";
        let mut value: Option<word::Value> = None;
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match (node.field_name_for_child(i as u32), child.is_named()) {
                (Some("name"), _) if child.kind() == "variable_name" => name = self.text(child).to_string(),
                (Some("value"), _) => {
                    let mut variants = vec![Vec::new()];
                    self.pieces(child, command, &mut variants, depth + 1);
                    let written: Vec<word::Value> = variants.iter().map(|v| word::literal(v)).collect();
                    value = Some(match written.as_slice() {
                        [one] => one.clone(),
                        _ => word::Value {
                            text: self.text(child).to_string(),
                            unknown: true,
                        },
                    });
                }
                (_, false) if matches!(child.kind(), "=" | "+=") => op = child.kind(),
                _ => self.not_understood(child),
            }
        }
        if name.is_empty() {
            self.opaque("an assignment to a subscript is not understood");
            return;
        }
        let value = value.unwrap_or(word::Value {
            text: String::new(),
            unknown: false,
        });
        if value.unknown {
            command.expanded.push(command.words.len());
        }
        command.words.push(format!("{name}{op}{}", value.text));
    }

    /// Expands a word node and appends its words.
    fn push_words(&mut self, node: Node<'t>, command: &mut SimpleCommand, depth: usize) {
        for value in self.words(node, command, depth) {
            if value.unknown {
                command.expanded.push(command.words.len());
            }
            command.words.push(value.text);
        }
    }

    /// The words a word node expands to; substitutions it runs go to `command`.
    fn words(&mut self, node: Node<'t>, command: &mut SimpleCommand, depth: usize) -> Vec<word::Value> {
        let mut variants = vec![Vec::new()];
        self.pieces(node, command, &mut variants, depth);
        variants.iter().flat_map(|v| word::expand(v)).collect()
    }

    fn pieces(&mut self, node: Node<'t>, command: &mut SimpleCommand, variants: &mut Vec<Vec<Piece>>, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("words nest too deeply");
            return;
        }
        let text = self.text(node);
        let push = |variants: &mut Vec<Vec<Piece>>, f: &dyn Fn(&mut Vec<Piece>)| {
            for v in variants.iter_mut() {
                f(v);
            }
        };
        match node.kind() {
            "word" | "extglob_pattern" | "brace_expression" => push(variants, &|v| word::push_unquoted(v, text)),
            "number" if node.named_child_count() == 0 => push(variants, &|v| word::push_unquoted(v, text)),
            "raw_string" => {
                let inner = text.get(1..text.len().saturating_sub(1)).unwrap_or("");
                push(variants, &|v| word::push_text(v, inner, true));
            }
            "string" | "translated_string" => {
                for child in children(node) {
                    match (child.is_named(), child.kind()) {
                        (false, "\"" | "$") => {}
                        (true, "string_content") => {
                            let content = self.text(child);
                            push(variants, &|v| word::push_double_quoted(v, content));
                        }
                        (true, "string") => self.pieces(child, command, variants, depth + 1),
                        (true, "simple_expansion" | "expansion" | "command_substitution") => {
                            self.expansion(child, command, variants, true, depth + 1)
                        }
                        _ => self.not_understood(child),
                    }
                }
            }
            "concatenation" => {
                for child in children(node) {
                    self.pieces(child, command, variants, depth + 1);
                }
            }
            "simple_expansion" | "expansion" | "command_substitution" | "process_substitution" => {
                self.expansion(node, command, variants, false, depth + 1)
            }
            // `$'…'` is literal, but its escapes are not decoded here: its value is unknown.
            "ansi_c_string" => push(variants, &|v| v.push(Piece::Unknown(text.to_string()))),
            "array" => {
                let mut sink = SimpleCommand::default();
                for child in children(node) {
                    if child.is_named() {
                        let _ = self.words(child, &mut sink, depth + 1);
                    }
                }
                command.substitutions.append(&mut sink.substitutions);
                push(variants, &|v| v.push(Piece::Unknown(text.to_string())));
            }
            _ => self.not_understood(node),
        }
    }

    /// A parameter expansion or a substitution inside a word: a bound loop variable gives its
    /// words; a substitution is read as a command line of its own; the value is unknown.
    fn expansion(
        &mut self,
        node: Node<'t>,
        command: &mut SimpleCommand,
        variants: &mut Vec<Vec<Piece>>,
        quoted: bool,
        depth: usize,
    ) {
        let text = self.text(node);
        match node.kind() {
            "command_substitution" | "process_substitution" => {
                let inner = self.substitution(node, depth);
                command.substitutions.push(inner);
            }
            _ => {
                if !expansion_understood(text) {
                    self.opaque(format!("the expansion `{text}` is not understood"));
                    return;
                }
                if let Some(values) = self.bound(text, quoted) {
                    let mut next = Vec::new();
                    for v in variants.iter() {
                        for value in &values {
                            let mut joined = v.clone();
                            joined.extend(value.iter().cloned());
                            next.push(joined);
                        }
                    }
                    if next.len() <= MAX_VARIANTS {
                        *variants = next;
                        return;
                    }
                }
                // Substitutions inside (`${x:-$(cmd)}`) run.
                self.nested_substitutions(node, command, depth + 1);
            }
        }
        for v in variants.iter_mut() {
            v.push(Piece::Unknown(text.to_string()));
        }
    }

    fn nested_substitutions(&mut self, node: Node<'t>, command: &mut SimpleCommand, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("words nest too deeply");
            return;
        }
        for child in children(node) {
            match child.kind() {
                "command_substitution" | "process_substitution" => {
                    let inner = self.substitution(child, depth + 1);
                    command.substitutions.push(inner);
                }
                "arithmetic_expansion" | "subscript" => self.not_understood(child),
                _ => self.nested_substitutions(child, command, depth + 1),
            }
        }
    }

    /// The values of a bound `for` variable referenced as `$f`/`${f}`: quoted characters (no
    /// braces, no tilde after expansion); unquoted, a value with a blank would split: unknown.
    fn bound(&self, text: &str, quoted: bool) -> Option<Vec<Vec<Piece>>> {
        let name = text
            .strip_prefix("${")
            .and_then(|t| t.strip_suffix('}'))
            .or_else(|| text.strip_prefix('$'))?;
        let (_, values) = self.bindings.iter().rev().find(|(n, _)| n == name)?;
        let splits = values
            .iter()
            .any(|v| v.iter().any(|p| matches!(p, Piece::Char(' ' | '\t' | '\n', _))));
        if !quoted && splits {
            return None;
        }
        Some(values.clone())
    }

    /// A substitution's commands, read as a command line of their own (a subshell).
    fn substitution(&mut self, node: Node<'t>, depth: usize) -> CommandLine {
        let text = self.text(node);
        // INVARIANT (fail closed): escapes inside backticks change what runs (a nested
        // substitution hides as `\``); not understood.
        if text.starts_with('`') && text.contains('\\') {
            self.opaque("a backquoted substitution with escapes is not understood");
        }
        let outer = std::mem::take(&mut self.line);
        let mut gathered = Gathered::default();
        let mut cursor = node.walk();
        let kids: Vec<(Option<&str>, Node<'t>)> = node
            .children(&mut cursor)
            .enumerate()
            .map(|(i, c)| (node.field_name_for_child(i as u32), c))
            .collect();
        let ctx = self.new_chain(&Ctx::default());
        let mut previous = false;
        for (field, child) in kids {
            match (field, child.is_named(), child.kind()) {
                (Some("redirect"), _, _) => self.redirect(child, &mut gathered, depth + 1),
                (_, false, "$(" | ")" | "`" | "<(" | ">(") => {}
                (_, false, ";" | "&" | "\n") => {
                    self.after(child.kind());
                    previous = false;
                }
                (_, true, "comment") => {}
                (_, true, _) => {
                    if previous {
                        self.after("\n");
                    }
                    let each = self.new_chain(&ctx);
                    self.statement(child, &each, depth + 1);
                    previous = true;
                }
                _ => self.not_understood(child),
            }
        }
        if !gathered.redirects.is_empty() || !gathered.substitutions.is_empty() {
            // `$(< file)` reads the file.
            let command = SimpleCommand {
                redirects: gathered.redirects,
                substitutions: gathered.substitutions,
                chain: ctx.chain,
                gated: true,
                ..SimpleCommand::default()
            };
            self.push(command);
        }
        let inner = std::mem::replace(&mut self.line, outer);
        if let Some(why) = &inner.opaque {
            self.opaque(why.clone());
        }
        inner
    }

    /// `f() { …; }`: the body may run any number of times, wherever `f` is named later.
    fn function(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) {
        let inner = self.scoped(ctx, ScopeKind::Loop);
        for child in children(node) {
            match (child.is_named(), child.kind()) {
                (true, "word") => {
                    let name = self.text(child).to_string();
                    self.line.functions.push(name);
                }
                (true, "compound_statement" | "subshell") => self.statement(child, &inner, depth + 1),
                (true, "file_redirect") => self.not_understood(child),
                (false, "function" | "(" | ")") => {}
                _ => self.not_understood(child),
            }
        }
        self.after("function");
    }

    /// `for NAME in WORDS; do …; done`: inside the body `$NAME` takes the words' values, when
    /// the body never assigns it and the words are known and few.
    fn for_loop(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) {
        let mut name = None;
        let mut listed = false;
        let mut values: Option<Vec<Vec<Piece>>> = Some(Vec::new());
        let mut carrier = self.blank(ctx);
        let mut body = None;
        let mut cursor = node.walk();
        for (i, child) in node.children(&mut cursor).enumerate() {
            match (node.field_name_for_child(i as u32), child.kind()) {
                (Some("variable"), "variable_name") => name = Some(self.text(child).to_string()),
                (Some("value"), _) => {
                    let words = self.words(child, &mut carrier, depth + 1);
                    if let Some(vs) = values.as_mut() {
                        for w in words {
                            if w.unknown || vs.len() >= MAX_VARIANTS {
                                values = None;
                                break;
                            }
                            vs.push(w.text.chars().map(|c| Piece::Char(c, true)).collect());
                        }
                    }
                }
                (Some("body"), "do_group") => body = Some(child),
                (None, "in") => listed = true,
                (None, "for" | "select" | ";" | "\n") => {}
                _ => self.not_understood(child),
            }
        }
        if !carrier.substitutions.is_empty() {
            self.push(carrier);
        }
        let (Some(name), Some(body)) = (name, body) else {
            self.opaque("a `for` loop is not understood");
            return;
        };
        let body_text = self.text(body);
        let values = values.filter(|_| listed && only_expanded(body_text, &name));
        let bound = values.is_some();
        if let Some(values) = values {
            self.bindings.push((name, values));
        }
        let inner = self.scoped(ctx, ScopeKind::Loop);
        self.sequence(body, &inner, depth + 1, &["do", "done"]);
        if bound {
            self.bindings.pop();
        }
        self.after("for");
    }

    /// `[ … ]` and `[[ … ]]` as the words of `[`; `[[` evaluates arithmetic for `-eq` and the
    /// like, and `-v` evaluates a subscript: not understood.
    fn test(&mut self, node: Node<'t>, ctx: &Ctx, depth: usize) {
        let mut command = self.blank(ctx);
        let double = children(node).first().is_some_and(|c| c.kind() == "[[");
        command.words.push("[".into());
        self.test_words(node, &mut command, double, depth + 1);
        command.words.push("]".into());
        self.check_names(&command);
        self.push(command);
    }

    fn test_words(&mut self, node: Node<'t>, command: &mut SimpleCommand, double: bool, depth: usize) {
        if depth > MAX_DEPTH {
            self.opaque("commands nest too deeply");
            return;
        }
        for child in children(node) {
            match (child.is_named(), child.kind()) {
                (false, "[" | "]" | "[[" | "]]") => {}
                (true, "unary_expression" | "binary_expression" | "parenthesized_expression") => {
                    self.test_words(child, command, double, depth + 1)
                }
                (true, "test_operator") => {
                    let op = self.text(child);
                    if double && matches!(op, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v" | "-R") {
                        self.opaque(format!("`[[ … {op} … ]]` evaluates arithmetic"));
                    }
                    command.words.push(op.to_string());
                }
                (true, "regex") => command.words.push(self.text(child).to_string()),
                (false, op) if matches!(op, "!" | "&&" | "||" | "==" | "=" | "!=" | "<" | ">" | "=~" | "(" | ")") => {
                    command.words.push(op.to_string())
                }
                (true, _) => self.push_words(child, command, depth + 1),
                _ => self.not_understood(child),
            }
        }
    }

    /// Builtins that take a variable name evaluate a subscript in it (`a[$(cmd)]` runs `cmd`),
    /// and `declare -i`, `let` evaluate arithmetic: not understood.
    fn check_names(&mut self, command: &SimpleCommand) {
        let start = command
            .words
            .iter()
            .position(|w| !is_assignment_word(w))
            .unwrap_or(command.words.len());
        let words = command.words.get(start..).unwrap_or(&[]);
        let Some(program) = words.first() else { return };
        let subscript = |w: &String| w.contains('[');
        let after_flag = |flags: &[&str]| {
            words
                .windows(2)
                .any(|pair| matches!(pair, [f, name] if flags.contains(&f.as_str()) && subscript(name)))
                || words.iter().any(|w| {
                    flags
                        .iter()
                        .any(|f| w.len() > f.len() && w.starts_with(f) && subscript(w))
                })
        };
        let why = match program.as_str() {
            "let" => Some("`let` evaluates arithmetic"),
            "declare" | "typeset" | "local"
                if words
                    .iter()
                    .skip(1)
                    .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('i')) =>
            {
                Some("an integer variable evaluates arithmetic")
            }
            "declare" | "typeset" | "local" | "export" | "readonly" | "read" | "unset" | "mapfile" | "readarray"
            | "getopts" | "wait"
                if words.iter().skip(1).any(subscript) =>
            {
                Some("a variable name with a subscript evaluates it")
            }
            "printf" if after_flag(&["-v"]) => Some("a variable name with a subscript evaluates it"),
            "test" | "[" if after_flag(&["-v", "-R"]) => Some("a variable name with a subscript evaluates it"),
            _ => None,
        };
        if let Some(why) = why {
            self.opaque(why);
        }
    }
}

fn is_assignment_word(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let name = name.strip_suffix('+').unwrap_or(name);
            !name.is_empty()
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Whether every mention of `name` in `body` is an expansion (`$name`, `${name}`): then the
/// body never assigns it, and its values stay the loop's.
fn only_expanded(body: &str, name: &str) -> bool {
    let is_ident = |c: char| c == '_' || c.is_ascii_alphanumeric();
    let mut mentions = 0;
    let mut expansions = 0;
    for (at, _) in body.match_indices(name) {
        let before = body.get(..at).and_then(|b| b.chars().next_back());
        let after = body.get(at + name.len()..).and_then(|a| a.chars().next());
        // A mention is the name as a word of its own (`f=…`, `read f`) or expanded; `-f`,
        // `src/f` and `file` are not.
        let starts_word = before.is_none_or(|c| c.is_whitespace() || ";&|(){}'\"`$".contains(c));
        if !starts_word || after.is_some_and(is_ident) {
            continue;
        }
        mentions += 1;
        let braced = body.get(..at).is_some_and(|b| b.ends_with("${")) && after == Some('}');
        if before == Some('$') || braced {
            expansions += 1;
        }
    }
    mentions == expansions
}

/// The parameter expansions read: `${name}`, `${#name}`, `${name[@]}`, and the operators that
/// only choose or trim a value (`:-`, `-`, `:=`, `=`, `:?`, `?`, `:+`, `+`, `#`, `%`, `/`, `^`,
/// `,`). Indirection (`${!x}`), substrings (`${x:1}`, arithmetic), subscripts that are not
/// literal (arithmetic) and transformations (`${x@P}` runs prompt expansion) are not.
fn expansion_understood(text: &str) -> bool {
    let Some(body) = text.strip_prefix('$') else {
        return false;
    };
    let Some(body) = body.strip_prefix('{').and_then(|b| b.strip_suffix('}')) else {
        // `$name`, `$1`, `$?`.
        return true;
    };
    let special = |c: char| "@*#?$!-".contains(c) || c.is_ascii_digit();
    if body.len() == 1 && body.chars().all(special) {
        return true;
    }
    let body = body.strip_prefix('#').filter(|b| !b.is_empty()).unwrap_or(body);
    let name_end = match body.chars().next() {
        Some(c) if c == '_' || c.is_ascii_alphabetic() => body
            .find(|c: char| !(c == '_' || c.is_ascii_alphanumeric()))
            .unwrap_or(body.len()),
        Some(c) if c.is_ascii_digit() => body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len()),
        Some(c) if special(c) => 1,
        _ => return false,
    };
    let mut rest = body.get(name_end..).unwrap_or("");
    if let Some(after) = rest.strip_prefix('[') {
        let Some((index, tail)) = after.split_once(']') else {
            return false;
        };
        if !(index == "@" || index == "*" || (!index.is_empty() && index.chars().all(|c| c.is_ascii_digit()))) {
            return false;
        }
        rest = tail;
    }
    rest.is_empty()
        || [":-", ":=", ":?", ":+", "-", "=", "?", "+", "#", "%", "/", "^", ","]
            .iter()
            .any(|op| rest.starts_with(op))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_crashes_the_grammar_is_never_parsed() {
        // Each of these made the process die of SIGSEGV inside the grammar's scanner.
        for crash in [
            "echo {\u{E0000}..1}",
            "echo {\u{10FFFF}",
            "ls {12\u{E0000}",
            "echo {1..\u{E0000}}",
            "rm -rf ~; echo a{9..99\u{10FFFF}",
        ] {
            assert!(crashes_the_grammar(crash), "{crash:?}");
            let line = read(crash);
            assert!(line.opaque.is_some(), "{crash:?}");
        }
        // Wide text elsewhere, and Latin-1 after a brace, is read as before.
        for fine in [
            "git commit -m '修复 {a,b}'",
            "echo {a,b} 中文",
            "echo {é..1}",
            "echo {1..3} \u{E0000}",
            "echo {",
            "echo {1..",
        ] {
            assert!(!crashes_the_grammar(fine), "{fine:?}");
        }
        assert!(read("git commit -m '修复 {a,b}'").opaque.is_none());
        assert!(read("echo {1..3}").opaque.is_none());
    }

    #[test]
    fn expansions_read() {
        for ok in [
            "$x", "${x}", "${#x}", "${x:-d}", "${x%.rs}", "${a[@]}", "${a[0]}", "${#}", "${x/a/b}", "$1", "${10}",
        ] {
            assert!(expansion_understood(ok), "{ok}");
        }
        for no in [
            "${!x}", "${x:1}", "${x: -1}", "${a[$i]}", "${a[i]}", "${x@P}", "${x@Q}", "${}",
        ] {
            assert!(!expansion_understood(no), "{no}");
        }
    }

    #[test]
    fn loop_variables_are_only_expanded() {
        assert!(only_expanded("do wc -l \"$f\"; done", "f"));
        assert!(only_expanded("do echo ${f}; done", "f"));
        assert!(!only_expanded("do f=/etc/x; cat $f; done", "f"));
        assert!(!only_expanded("do read f; cat $f; done", "f"));
        assert!(only_expanded("do echo $file; done", "f"));
        assert!(only_expanded("do rm -f \"$f\"; done", "f"));
        assert!(!only_expanded("do printf -v f x; done", "f"));
    }
}
