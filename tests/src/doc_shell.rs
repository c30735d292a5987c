//! The shell blocks of README.md and the guide under docs/, read so that
//! `tests/tests/doc_shell.rs` can run every `a2a-server` and `a2a` command line they show
//! against real servers on free ports.
//!
//! **What is read.** Every ```` ```sh ```` and ```` ```console ```` block (in `console`
//! blocks, only the `$ ` lines are commands; the rest is output). Continued lines (`\`) are
//! joined. A line runs when it starts the server (`a2a-server …`, or `cargo run [--release]
//! -p a2a-server --features cli [-- …]`) or runs the client (`a2a …`, or `cargo run -p
//! a2a-client --features cli --bin a2a -- …`); other lines (`cargo test`, `curl`, `bash …`)
//! are listed as not run.
//!
//! **Markers.** HTML comments right above a block's fence (invisible on GitHub) say what the
//! reader cannot see:
//! - `<!-- doc-shell: skip REASON -->`: the block is not run (listed with its reason);
//! - `<!-- doc-shell: expect TEXT -->`: TEXT appears in the output of the block's commands;
//! - `<!-- doc-shell: exit N TEXT -->`: the command line containing TEXT exits with N (by
//!   default every command must exit with 0);
//! - `<!-- doc-shell: server ARGS -->`: the block talks to `a2a-server ARGS`, started first;
//! - `<!-- doc-shell: stdin TEXT -->`: its commands read TEXT (`\n` for a new line) on
//!   standard input, as a host would write it (`a2a mcp`); otherwise they read nothing.
//!
//! **Rewrites**, the fewest that let the commands run side by side on one machine:
//! - the launchers above become the debug binaries, found in the target directory;
//! - each command runs with `sh -c` in a temporary directory of its page (so `./a2a-data`
//!   is fresh), with `TOKEN` and `KEY` set and every `A2A_*` variable of the test's
//!   environment removed;
//! - `--listen`, `--grpc-listen`, `--metrics-listen` and `--http` take `127.0.0.1:0`, and
//!   an `a2a-server` without `--listen` gets `--listen 127.0.0.1:0`: a free port, read from
//!   the line the server prints (`a2a-server listening on http://…`);
//! - in `a2a` lines, `http://127.0.0.1:8080`, `https://agent.example.com`,
//!   `https://agent.example` and the word `URL` become the URL of the page's server (the last
//!   one started on the page, else the demo agent `a2a-server --memory`), and `TASK_ID` the
//!   id of a task started for that line (`countdown 20`, so that it is still running);
//! - a server with `--postgres` gets a schema of its own (`A2A_POSTGRES_SCHEMA`), dropped
//!   afterwards;
//! - the files the pages name are written into the page's directory: `ec.pem` (a P-256
//!   key), `ed25519.pem` (an Ed25519 key), both PKCS#8 PEM, and `their-public-key.pem` (the
//!   public half of `ec.pem`).

use std::fs;
use std::path::{Path, PathBuf};

/// The marker that starts a directive comment.
const MARKER: &str = "<!-- doc-shell:";

/// One shell block of the documentation.
#[derive(Debug, Default)]
pub struct Block {
    /// `page:line` of the opening fence.
    pub place: String,
    /// The page's file name (`README.md`, `server.md`, …).
    pub page: String,
    /// Its command lines, in order.
    pub commands: Vec<Command>,
    /// Why it is not run, when it is not.
    pub skip: Option<String>,
    /// Texts its output must contain.
    pub expect: Vec<String>,
    /// `(text, code)`: the command containing `text` exits with `code`.
    pub exits: Vec<(String, i32)>,
    /// The `a2a-server` arguments of the server it talks to, when not the page's.
    pub server: Option<String>,
    /// What its commands read on standard input.
    pub stdin: Option<String>,
}

impl Block {
    /// The exit code the command `line` must end with.
    pub fn exit_code(&self, line: &str) -> i32 {
        self.exits
            .iter()
            .find(|(text, _)| line.contains(text.as_str()))
            .map_or(0, |(_, code)| *code)
    }
}

/// One command line of a block.
#[derive(Debug, Clone)]
pub struct Command {
    /// `page:line` where it starts.
    pub place: String,
    /// The line as written (continuations joined, the `$ ` prompt removed).
    pub text: String,
}

/// What a command line runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `a2a-server`, with the line rewritten to run it by that name.
    Server(String),
    /// `a2a`, likewise.
    Client(String),
}

/// The launchers the docs use, and the program each one runs.
const LAUNCHERS: [(&str, &str); 4] = [
    (
        "cargo run --release -p a2a-server --features cli --",
        "a2a-server",
    ),
    ("cargo run -p a2a-server --features cli --", "a2a-server"),
    (
        "cargo run --release -p a2a-server --features cli",
        "a2a-server",
    ),
    ("cargo run -p a2a-client --features cli --bin a2a --", "a2a"),
];

/// The repository root (this package lives in `tests/`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// README.md, then every page of docs/ by name.
pub fn pages() -> Vec<PathBuf> {
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

/// Every `sh` and `console` block of every page.
pub fn blocks() -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    for page in pages() {
        let name = page
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        let text = fs::read_to_string(&page).map_err(|e| format!("{name}: {e}"))?;
        blocks.extend(read(&name, &text)?);
    }
    Ok(blocks)
}

/// The `sh` and `console` blocks of one page, with their markers.
pub fn read(name: &str, text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut pending = Block::default();
    let mut marked = false;
    let mut open: Option<(Block, bool)> = None; // the block, and whether it is `console`
    let mut joined = String::new();
    let mut start = 0;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = line.trim();
        if let Some((mut block, console)) = open.take() {
            if trimmed.starts_with("```") {
                blocks.push(block);
                continue;
            }
            let command = if console {
                trimmed.strip_prefix("$ ").map(str::trim)
            } else if joined.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
                None
            } else {
                Some(trimmed)
            };
            if let Some(command) = command {
                if joined.is_empty() {
                    start = number;
                }
                joined.push_str(command.trim_end_matches('\\').trim_end());
                if command.ends_with('\\') {
                    joined.push(' ');
                } else {
                    block.commands.push(Command {
                        place: format!("{name}:{start}"),
                        text: std::mem::take(&mut joined),
                    });
                }
            }
            open = Some((block, console));
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix(MARKER) {
            let directive = rest
                .strip_suffix("-->")
                .ok_or_else(|| format!("{name}:{number}: a doc-shell marker ends with -->"))?
                .trim();
            directive_into(&mut pending, directive).map_err(|e| format!("{name}:{number}: {e}"))?;
            marked = true;
            continue;
        }
        if trimmed == "```sh" || trimmed == "```console" {
            let mut block = std::mem::take(&mut pending);
            block.place = format!("{name}:{number}");
            block.page = name.to_owned();
            open = Some((block, trimmed == "```console"));
            marked = false;
            continue;
        }
        if marked {
            return Err(format!(
                "{name}:{number}: a doc-shell marker must stand right above a ```sh or \
                 ```console fence"
            ));
        }
    }
    if open.is_some() {
        return Err(format!("{name}: a shell block is not closed"));
    }
    Ok(blocks)
}

/// Adds one `doc-shell:` directive to `block`.
fn directive_into(block: &mut Block, directive: &str) -> Result<(), String> {
    let (word, rest) = directive.split_once(' ').unwrap_or((directive, ""));
    let rest = rest.trim();
    if rest.is_empty() {
        return Err(format!("doc-shell: `{word}` needs an argument"));
    }
    match word {
        "skip" => block.skip = Some(rest.to_owned()),
        "expect" => block.expect.push(rest.to_owned()),
        "server" => block.server = Some(rest.to_owned()),
        "stdin" => block.stdin = Some(rest.replace("\\n", "\n") + "\n"),
        "exit" => {
            let (code, text) = rest
                .split_once(' ')
                .ok_or("doc-shell: `exit N TEXT`, with the text of the command line")?;
            let code = code
                .parse()
                .map_err(|_| format!("doc-shell: exit code {code:?} is not a number"))?;
            block.exits.push((text.trim().to_owned(), code));
        }
        other => {
            return Err(format!(
                "doc-shell: unknown directive `{other}` (skip, expect, exit, server, stdin)"
            ));
        }
    }
    Ok(())
}

/// What `line` runs, rewritten to name the program (`a2a-server …`, `a2a …`); `None` when it
/// runs neither.
pub fn program(line: &str) -> Option<Program> {
    let mut line = line.to_owned();
    for (launcher, program) in LAUNCHERS {
        if let Some(rest) = line.strip_prefix(launcher)
            && (rest.is_empty() || rest.starts_with(' '))
        {
            line = format!("{program}{rest}");
            break;
        }
    }
    let first = line.split_whitespace().next()?;
    match first {
        "a2a-server" => Some(Program::Server(line)),
        "a2a" => Some(Program::Client(line)),
        _ => None,
    }
}

/// `line` with the value after each of `flags` (or in `--flag=value`) replaced by `value`.
pub fn set_flags(line: &str, flags: &[&str], value: &str) -> String {
    let mut words: Vec<String> = line.split(' ').map(str::to_owned).collect();
    let mut index = 0;
    while index < words.len() {
        let word = words[index].clone();
        if flags.contains(&word.as_str()) {
            if let Some(next) = (index + 1..words.len()).find(|&i| !words[i].is_empty()) {
                words[next] = value.to_owned();
                index = next;
            }
        } else if let Some((flag, _)) = word.split_once('=')
            && flags.contains(&flag)
        {
            words[index] = format!("{flag}={value}");
        }
        index += 1;
    }
    words.join(" ")
}

/// An `a2a-server` line that listens on free ports only.
pub fn server_line(line: &str) -> String {
    let line = set_flags(
        line,
        &["--listen", "--grpc-listen", "--metrics-listen"],
        "127.0.0.1:0",
    );
    if line
        .split(' ')
        .any(|w| w == "--listen" || w.starts_with("--listen="))
    {
        line
    } else {
        line.replacen("a2a-server", "a2a-server --listen 127.0.0.1:0", 1)
    }
}

/// An `a2a` line aimed at the server at `url`, with `task` for `TASK_ID`, on free ports.
pub fn client_line(line: &str, url: &str, task: Option<&str>) -> String {
    let line = set_flags(line, &["--listen", "--http"], "127.0.0.1:0")
        .replace("http://127.0.0.1:8080", url)
        .replace("https://agent.example.com", url)
        .replace("https://agent.example", url);
    line.split(' ')
        .map(|word| match word {
            "URL" => url,
            "TASK_ID" => task.unwrap_or(word),
            _ => word,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the `a2a` line serves until stopped (`inspect`, `mcp --http`) instead of ending.
pub fn serves(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let subcommand = words.nth(1);
    subcommand == Some("inspect")
        || (subcommand == Some("mcp") && line.split_whitespace().any(|w| w == "--http"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_markers_and_continuations_are_read() {
        let page = "text\n<!-- doc-shell: expect echo: hi -->\n<!-- doc-shell: exit 5 greet -->\n\
                    <!-- doc-shell: stdin a\\nb -->\n\
                    ```sh\n# a comment\na2a send URL hi   # a note\ncargo run -p a2a-server \
                    --features cli -- \\\n  --memory\n```\n```console\n$ a2a card URL\nout\n```\n";
        let blocks = read("p.md", page).expect("read");
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].expect, ["echo: hi"]);
        assert_eq!(blocks[0].stdin.as_deref(), Some("a\nb\n"));
        assert_eq!(blocks[0].exit_code("a2a send URL greet"), 5);
        assert_eq!(blocks[0].exit_code("a2a send URL hi"), 0);
        assert_eq!(blocks[0].commands.len(), 2);
        assert_eq!(
            blocks[0].commands[1].text,
            "cargo run -p a2a-server --features cli -- --memory"
        );
        assert_eq!(blocks[0].commands[1].place, "p.md:8");
        assert_eq!(blocks[1].commands.len(), 1);
        assert_eq!(blocks[1].commands[0].text, "a2a card URL");
    }

    #[test]
    fn a_stray_or_unknown_marker_is_an_error() {
        assert!(read("p.md", "<!-- doc-shell: skip why -->\ntext\n").is_err());
        assert!(read("p.md", "<!-- doc-shell: run -->\n```sh\n```\n").is_err());
        assert!(read("p.md", "<!-- doc-shell: skip -->\n```sh\n```\n").is_err());
    }

    #[test]
    fn launchers_become_the_programs() {
        assert_eq!(
            program("cargo run --release -p a2a-server --features cli   # demo"),
            Some(Program::Server("a2a-server   # demo".into()))
        );
        assert_eq!(
            program("cargo run -p a2a-client --features cli --bin a2a -- card URL"),
            Some(Program::Client("a2a card URL".into()))
        );
        assert_eq!(program("cargo test --workspace"), None);
        assert_eq!(program("a2a-server-x"), None);
    }

    #[test]
    fn ports_and_urls_are_rewritten() {
        assert_eq!(
            server_line("a2a-server --grpc-listen 127.0.0.1:50051  # x"),
            "a2a-server --listen 127.0.0.1:0 --grpc-listen 127.0.0.1:0  # x"
        );
        assert_eq!(
            server_line("a2a-server --listen=0.0.0.0:8080 --memory"),
            "a2a-server --listen=127.0.0.1:0 --memory"
        );
        assert_eq!(
            client_line(
                "a2a card https://agent.example --jwks https://agent.example/.well-known/jwks.json",
                "http://127.0.0.1:1",
                None
            ),
            "a2a card http://127.0.0.1:1 --jwks http://127.0.0.1:1/.well-known/jwks.json"
        );
        assert_eq!(
            client_line("a2a get URL TASK_ID --wait", "http://h:1", Some("t1")),
            "a2a get http://h:1 t1 --wait"
        );
        assert!(serves("a2a inspect URL"));
        assert!(serves("a2a mcp URL --http 127.0.0.1:0"));
        assert!(!serves("a2a mcp URL"));
    }
}
