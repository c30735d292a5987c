//! The crate docs show every feature flag: the `# Features` table at the head of each library
//! crate's `lib.rs` (what `cargo doc` and docs.rs show on the crate's front page) lists exactly
//! the features its Cargo.toml declares, each marked `yes` or `no` as the `default` feature
//! set says, and docs.rs documents the crate with every feature on.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The section `[name]` of a Cargo.toml, line by line (comments dropped).
fn section<'a>(manifest: &'a str, name: &str) -> Vec<&'a str> {
    let header = format!("[{name}]");
    manifest
        .lines()
        .skip_while(|line| line.trim() != header)
        .skip(1)
        .take_while(|line| !line.trim_start().starts_with('['))
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
}

/// Each declared feature, and whether `default` turns it on.
fn declared(manifest: &str) -> BTreeMap<String, bool> {
    let mut features = BTreeMap::new();
    let mut defaults = Vec::new();
    for line in section(manifest, "features") {
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        let name = name.trim();
        if name == "default" {
            defaults = value
                .split('"')
                .skip(1)
                .step_by(2)
                .map(str::to_owned)
                .collect();
        } else {
            features.insert(name.to_owned(), false);
        }
    }
    for name in defaults {
        features.insert(name, true);
    }
    features
}

/// The rows of the `# Features` table of a crate's `lib.rs`: feature and its default column.
fn documented(lib: &str) -> BTreeMap<String, String> {
    lib.lines()
        .skip_while(|line| line.trim() != "//! # Features")
        .skip(1)
        .take_while(|line| !line.starts_with("//! #"))
        .filter_map(|line| line.strip_prefix("//! | `"))
        .filter_map(|row| {
            let (name, rest) = row.split_once('`')?;
            let default = rest.split('|').nth(1)?.trim().to_owned();
            Some((name.to_owned(), default))
        })
        .collect()
}

#[test]
fn every_crate_documents_every_feature_flag() {
    let mut failures = Vec::new();
    for krate in ["a2a-core", "a2a-server", "a2a-client"] {
        let dir = root().join(krate);
        let manifest = fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml");
        let lib = fs::read_to_string(dir.join("src/lib.rs")).expect("lib.rs");
        let declared = declared(&manifest);
        let documented = documented(&lib);
        assert!(!declared.is_empty(), "{krate}: no [features] read");
        for (name, default) in &declared {
            let want = if *default { "yes" } else { "no" };
            match documented.get(name) {
                None => failures.push(format!(
                    "{krate}: feature `{name}` is not in lib.rs's table"
                )),
                Some(shown) if shown != want => failures.push(format!(
                    "{krate}: feature `{name}` is shown as default {shown:?}, not {want:?}"
                )),
                Some(_) => {}
            }
        }
        for name in documented.keys() {
            if !declared.contains_key(name) {
                failures.push(format!(
                    "{krate}: lib.rs documents `{name}`, which Cargo.toml lacks"
                ));
            }
        }
        let docs_rs = section(&manifest, "package.metadata.docs.rs");
        if !docs_rs.contains(&"all-features = true") {
            failures.push(format!(
                "{krate}: [package.metadata.docs.rs] does not set all-features = true"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readers_read_what_they_should() {
    let manifest = "[package]\nname = \"x\"\n[features]\ndefault = [\"a\"]\n## doc\na = []\nb = [\"a\"]\n\n[dependencies]\nc = \"1\"\n";
    let declared = declared(manifest);
    assert_eq!(declared.get("a"), Some(&true));
    assert_eq!(declared.get("b"), Some(&false));
    assert_eq!(declared.len(), 2);
    let lib = "//! # Features\n//!\n//! | feature | default | what |\n//! |---|---|---|\n//! | `a` | yes | A |\n//! | `b` | no | B |\n//!\n//! # Next\n//! | `c` | no | not a feature row |\n";
    let documented = documented(lib);
    assert_eq!(documented.len(), 2);
    assert_eq!(documented["a"], "yes");
}
