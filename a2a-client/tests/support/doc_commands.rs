//! The command lines the documentation shows (README.md and the guide under docs/), read
//! from its `sh` blocks, so that a test can hold each one against the binary it runs: every
//! subcommand and `--flag` written in the docs must be one the binary accepts. Shared by
//! `a2a-client/tests/doc_commands.rs` (`a2a`) and `a2a-server/tests/doc_commands.rs`
//! (`a2a-server`).

use std::fs;
use std::path::{Path, PathBuf};

/// One documented command: where it is, and its words after the program's name.
#[derive(Debug)]
pub(crate) struct Documented {
    pub(crate) place: String,
    pub(crate) args: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("a crate of the workspace")
        .to_path_buf()
}

/// README.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root.join("README.md"));
    pages
}

/// The words of one shell line: quotes grouped, a trailing comment dropped, and the
/// synopsis marks `[`, `]` and `…` removed.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if word.is_empty() => break,
            (None, c) if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            (None, '[' | ']' | '…') => {}
            (None, c) => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Every line of a `sh` block that runs `program`, directly or through one of `launchers`
/// (e.g. `cargo run -p a2a-client --features cli --bin a2a --`), continued lines joined.
pub(crate) fn documented(program: &str, launchers: &[&str]) -> Vec<Documented> {
    let mut found = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).expect("a readable page");
        let name = page
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        let mut in_sh = false;
        let mut pending = String::new();
        for (number, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.starts_with("```") {
                in_sh = !in_sh && trimmed == "```sh";
                continue;
            }
            if !in_sh {
                continue;
            }
            pending.push_str(trimmed.trim_end_matches('\\'));
            pending.push(' ');
            if trimmed.ends_with('\\') {
                continue;
            }
            let line = std::mem::take(&mut pending);
            let mut rest = line.trim();
            for prefix in launchers {
                if let Some(after) = rest.strip_prefix(prefix) {
                    rest = after.trim_start();
                    let words = words(rest);
                    found.push(Documented {
                        place: format!("{name}:{}", number + 1),
                        args: words,
                    });
                    rest = "";
                    break;
                }
            }
            if let Some(after) = rest.strip_prefix(program).filter(|a| a.starts_with(' ')) {
                found.push(Documented {
                    place: format!("{name}:{}", number + 1),
                    args: words(after),
                });
            }
        }
    }
    found
}

/// The `--flags` among `args`, without their `=value`.
pub(crate) fn flags(args: &[String]) -> Vec<String> {
    args.iter()
        .filter(|a| a.starts_with("--") && a.len() > 2)
        .map(|a| a.split('=').next().unwrap_or(a).to_owned())
        .collect()
}
