//! The documentation holds together: every relative link and image in README.md, the guide
//! under docs/ and bench/'s Markdown points at a file that exists, and every `#anchor` at a
//! heading of that file (GitHub's heading ids). The README stays short and keeps its two
//! set-up commands word for word.
//!
//! Links to other sites are not fetched (a test must not depend on the network).

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The repository root (this package lives in `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![
        root.join("README.md"),
        root.join("bench/README.md"),
        root.join("bench/HISTORY.md"),
    ];
    let mut guide: Vec<PathBuf> = fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("a readable docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    guide.sort();
    files.extend(guide);
    files
}

/// The text outside fenced code blocks and inline code, line by line (links in code are
/// examples, not links).
fn prose(markdown: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            lines.push(String::new());
            continue;
        }
        if fenced {
            lines.push(String::new());
            continue;
        }
        let mut out = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                out.push('`');
            } else if !in_code {
                out.push(c);
            }
        }
        lines.push(out);
    }
    lines
}

/// Every `](target)` of the document, with its line number. A link's text may span lines;
/// its target does not.
fn links(markdown: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in prose(markdown).iter().enumerate() {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            found.push((number + 1, after[..end].trim().to_owned()));
            rest = &after[end..];
        }
    }
    found
}

/// GitHub's id for a heading: lower case, letters, digits, `-` and `_` kept, spaces turned
/// into `-`, everything else dropped; a repeated id gets `-1`, `-2`, ….
fn anchors(markdown: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let text = line.trim_start_matches('#');
        if !text.starts_with(' ') {
            continue;
        }
        let slug: String = text
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut id = slug.clone();
        let mut n = 0;
        while ids.contains(&id) {
            n += 1;
            id = format!("{slug}-{n}");
        }
        ids.insert(id);
    }
    ids
}

/// What is wrong with one link of `document`, if anything.
fn broken(document: &Path, target: &str) -> Option<String> {
    let target = target.split_whitespace().next().unwrap_or(""); // drop a "title"
    if target.is_empty() {
        return Some("an empty link".to_owned());
    }
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let file = if path.is_empty() {
        document.to_path_buf()
    } else {
        document
            .parent()
            .expect("a document's directory")
            .join(path)
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let anchor = anchor?;
    if file.extension().is_none_or(|ext| ext != "md") {
        return Some(format!(
            "#{anchor} points into {}, which is not Markdown",
            file.display()
        ));
    }
    let text = fs::read_to_string(&file).expect("a readable Markdown file");
    if anchors(&text).contains(anchor) {
        None
    } else {
        Some(format!("{} has no heading #{anchor}", file.display()))
    }
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let root = root();
    let mut failures = Vec::new();
    let mut checked = 0;
    for document in documents() {
        let text = fs::read_to_string(&document).expect("a readable document");
        for (line, target) in links(&text) {
            checked += 1;
            if let Some(why) = broken(&document, &target) {
                let name = document.strip_prefix(&root).unwrap_or(&document);
                failures.push(format!("{}:{line}: ({target}) {why}", name.display()));
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: is the parser still reading them?"
    );
    assert!(
        failures.is_empty(),
        "broken links:\n{}",
        failures.join("\n")
    );
}

#[test]
fn the_readme_is_short_and_keeps_its_set_up_commands() {
    let readme = fs::read_to_string(root().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; the guide under docs/ is for the rest"
    );
    for command in [
        "cargo run --release -p a2a-server --features cli\n",
        "cargo test --workspace --all-features\n",
    ] {
        assert!(
            readme.contains(command),
            "README.md lost its set-up command {command:?}"
        );
    }
}

#[test]
fn the_checker_finds_what_is_broken() {
    let root = root();
    let readme = root.join("README.md");
    assert_eq!(broken(&readme, "docs/README.md"), None);
    assert_eq!(broken(&readme, "https://example.com/nowhere"), None);
    assert!(broken(&readme, "docs/no-such-page.md").is_some());
    assert!(broken(&readme, "docs/deploying.md#no-such-heading").is_some());
    assert_eq!(broken(&readme, "docs/deploying.md#shutdown"), None);
    assert_eq!(
        links("see [a](b.md) and `[c](d.md)` and [e](f.md#g)\n```\n[h](i.md)\n```\n"),
        vec![(1, "b.md".to_owned()), (1, "f.md#g".to_owned())]
    );
    let ids = anchors("# One: `two` (3)\n## One: two (3)\n```\n# not a heading\n```\n");
    assert!(ids.contains("one-two-3") && ids.contains("one-two-3-1") && ids.len() == 2);
}
