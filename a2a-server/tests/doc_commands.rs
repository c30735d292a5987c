//! Every `a2a-server` command line in README.md and the guide, and every flag of the flag
//! table in docs/server.md, is one the binary accepts (checked against its `--help`), so
//! that the documentation cannot drift from the binary.

#[path = "../../a2a-client/tests/support/doc_commands.rs"]
mod doc_commands;

use std::process::Command;

fn help() -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_a2a-server"))
        .arg("--help")
        .output()
        .expect("a2a-server runs");
    assert!(out.status.success(), "a2a-server --help failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        help[at + flag.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-'))
    })
}

/// The flags named in the first column of docs/server.md's flag table.
fn table_flags() -> Vec<String> {
    let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/server.md");
    let text = std::fs::read_to_string(page).expect("docs/server.md");
    text.lines()
        .filter(|line| line.starts_with("| `--"))
        .flat_map(|line| {
            let first = line.split('|').nth(1).unwrap_or("").to_owned();
            first
                .split('`')
                .filter_map(|code| code.split_whitespace().next())
                .filter(|word| word.starts_with("--"))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn every_documented_server_flag_is_one_the_binary_accepts() {
    let help = help();
    let documented = doc_commands::documented(
        "a2a-server",
        &[
            "cargo run --release -p a2a-server --features cli --",
            "cargo run -p a2a-server --features cli --",
        ],
    );
    assert!(
        documented.len() >= 5,
        "only {} a2a-server command lines found",
        documented.len()
    );
    let table = table_flags();
    assert!(
        table.len() >= 25,
        "only {} flags found in docs/server.md's table",
        table.len()
    );
    let mut failures = Vec::new();
    for command in &documented {
        for flag in doc_commands::flags(&command.args) {
            if !lists(&help, &flag) {
                failures.push(format!("{}: a2a-server has no {flag}", command.place));
            }
        }
    }
    for flag in table {
        if !lists(&help, &flag) {
            failures.push(format!("server.md's table: a2a-server has no {flag}"));
        }
    }
    assert!(
        failures.is_empty(),
        "documented flags the binary refuses:\n{}",
        failures.join("\n")
    );
}
