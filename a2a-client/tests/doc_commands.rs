//! Every `a2a` command line in README.md and the guide names a subcommand and flags the
//! binary accepts (checked against its `--help`), so that the documentation cannot drift from
//! the command.

#[path = "support/doc_commands.rs"]
mod doc_commands;

use std::collections::HashMap;
use std::process::Command;

/// `a2a <subcommand> --help`, or why it failed.
fn help(subcommand: &str) -> Result<String, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_a2a"))
        .args([subcommand, "--help"])
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Whether `help` lists `flag` itself, not only a longer flag it begins.
fn lists(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        help[at + flag.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '-'))
    })
}

#[test]
fn every_documented_a2a_command_is_one_the_binary_accepts() {
    let documented = doc_commands::documented(
        "a2a",
        &["cargo run -p a2a-client --features cli --bin a2a --"],
    );
    assert!(
        documented.len() >= 20,
        "only {} a2a command lines found in the docs: is the reader still finding them?",
        documented.len()
    );
    let mut helps: HashMap<String, Result<String, String>> = HashMap::new();
    let mut failures = Vec::new();
    for command in &documented {
        let Some(subcommand) = command.args.first() else {
            failures.push(format!("{}: `a2a` with no subcommand", command.place));
            continue;
        };
        let help = helps
            .entry(subcommand.clone())
            .or_insert_with(|| help(subcommand));
        match help {
            Err(why) => failures.push(format!("{}: a2a {subcommand}: {why}", command.place)),
            Ok(text) => {
                for flag in doc_commands::flags(&command.args) {
                    if !lists(text, &flag) {
                        failures.push(format!("{}: a2a {subcommand} has no {flag}", command.place));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "documented commands the binary refuses:\n{}",
        failures.join("\n")
    );
}

#[test]
fn a_flag_is_not_taken_for_a_longer_one() {
    assert!(lists("  --key <FILE>\n  --key-id", "--key"));
    assert!(!lists("  --key-id <ID>", "--key"));
    assert!(help("no-such-subcommand").is_err());
}
