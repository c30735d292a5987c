//! Runs of the built `a2a` command for `cli.rs` and `cli_check.rs`: its exit code and output, and
//! no color codes in either (the output is not a terminal here).

#![allow(dead_code)] // each test binary uses a part of it

use crate::common::{assert_no_colors, within};
use serde_json::Value;

/// What a run of `a2a` produced.
#[derive(Debug)]
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {:?}", self.stdout))
    }

    pub(crate) fn json_lines(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
            .collect()
    }

    pub(crate) fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code; the run: {self:#?}");
        self
    }
}

/// The `a2a` command with `args` and `env`, and no credential from the environment.
pub(crate) fn command(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a"));
    command
        .args(args)
        .env_remove("A2A_TOKEN")
        .env_remove("A2A_API_KEY")
        .env_remove("NO_COLOR")
        .kill_on_drop(true);
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

/// Runs `a2a` with `args` and `env` to its end.
pub(crate) async fn a2a_with_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let output = within(&format!("a2a {args:?}"), command(args, env).output())
        .await
        .expect("run a2a");
    let run = Run {
        code: output.status.code().expect("an exit code"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    };
    assert_no_colors(&run.stdout);
    assert_no_colors(&run.stderr);
    run
}

pub(crate) async fn a2a(args: &[&str]) -> Run {
    a2a_with_env(args, &[]).await
}
