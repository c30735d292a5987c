//! A PostgreSQL database for a test: a schema of its own, dropped when the test ends (passed or
//! not). Without a reachable server the test is skipped with one line saying what to set, or
//! fails if `A2A_REQUIRE_POSTGRES=1` (as in CI).

#![allow(dead_code, unreachable_pub)]

use a2a_server::postgres::{PgOptions, PgStore};

/// The server the tests use: `A2A_TEST_POSTGRES_URL`, else the project machines' default.
pub fn url() -> String {
    std::env::var("A2A_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned())
}

/// A schema of this test's own on the test server.
pub struct TestSchema {
    pub url: String,
    pub schema: String,
}

impl TestSchema {
    /// A new schema name, and a check that the server answers; `None` (after one line on
    /// stderr) when it does not and PostgreSQL is not required.
    pub async fn new() -> Option<Self> {
        Self::at(url()).await
    }

    /// Like [`TestSchema::new`], on the server at `url`.
    pub async fn at(url: String) -> Option<Self> {
        let schema = format!("a2a_test_{}", uuid::Uuid::new_v4().simple());
        let options = PgOptions {
            schema: Some(schema.clone()),
            pool_size: 2,
            ..PgOptions::default()
        };
        match PgStore::connect_with(&url, options).await {
            Ok(_) => Some(Self { url, schema }),
            Err(e) if std::env::var("A2A_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") => {
                panic!("PostgreSQL at {url} is required (A2A_REQUIRE_POSTGRES=1) but: {e}")
            }
            Err(e) => {
                eprintln!(
                    "skipped: no PostgreSQL at {url} ({e}); set A2A_TEST_POSTGRES_URL to run \
                     the PostgreSQL tests (A2A_REQUIRE_POSTGRES=1 makes them fail instead)"
                );
                None
            }
        }
    }

    /// A raw connection to this schema (its `search_path` set), for what only SQL shows.
    pub async fn sql(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
            .await
            .expect("connects");
        tokio::spawn(connection);
        client
            .batch_execute(&format!("SET search_path = \"{}\"", self.schema))
            .await
            .expect("search_path");
        client
    }

    /// `SELECT count(*)` of `table` in this schema.
    pub async fn count(&self, table: &str) -> i64 {
        (self.sql().await)
            .query_one(&format!("SELECT count(*) FROM {table}"), &[])
            .await
            .expect("count")
            .get(0)
    }

    /// A store on this schema.
    pub async fn store(&self) -> PgStore {
        self.store_with(8).await
    }

    /// A store on this schema with a pool of `pool_size` connections.
    pub async fn store_with(&self, pool_size: usize) -> PgStore {
        let options = PgOptions {
            schema: Some(self.schema.clone()),
            pool_size,
            ..PgOptions::default()
        };
        PgStore::connect_with(&self.url, options)
            .await
            .expect("the test schema opens")
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        // Drop the schema even when the test failed, on a runtime of its own (this may run
        // inside the test's runtime, which cannot be blocked on).
        let (url, schema) = (self.url.clone(), self.schema.clone());
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async {
                let options = PgOptions {
                    schema: Some(schema),
                    pool_size: 1,
                    ..PgOptions::default()
                };
                if let Ok(store) = PgStore::connect_with(&url, options).await {
                    let _ = store.drop_schema().await;
                }
            });
        });
        let _ = dropped.join();
    }
}

/// A PostgreSQL server of the test's own (initdb in a temporary directory, on a free port),
/// which the test may restart; stopped when dropped. `None` (after one line on stderr) where
/// PostgreSQL's server programs are not installed, or cannot run here.
pub struct OwnServer {
    bin: std::path::PathBuf,
    dir: tempfile::TempDir,
    pub port: u16,
    /// Run the server programs as the `postgres` user (they refuse to run as root).
    as_postgres: bool,
}

impl OwnServer {
    pub fn start() -> Option<Self> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .find(|b| b.join("initdb").exists());
        let Some(bin) = bin else {
            eprintln!("skipped: no PostgreSQL server programs under /usr/lib/postgresql");
            return None;
        };
        let as_postgres = rustix::process::geteuid().is_root();
        let dir = tempfile::tempdir().ok()?;
        if as_postgres {
            let chown = std::process::Command::new("chown")
                .args(["-R", "postgres"])
                .arg(dir.path())
                .status();
            if !chown.is_ok_and(|s| s.success()) {
                eprintln!("skipped: cannot hand a data directory to the postgres user");
                return None;
            }
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let server = Self {
            bin,
            dir,
            port,
            as_postgres,
        };
        let data = server.dir.path().join("data");
        let initdb = server
            .run("initdb")
            .args(["-A", "trust", "-U", "postgres", "-D"])
            .arg(&data)
            .stdout(std::process::Stdio::null())
            .status();
        if !initdb.is_ok_and(|s| s.success()) {
            eprintln!("skipped: initdb failed");
            return None;
        }
        server.pg_ctl("start").then_some(server)
    }

    fn run(&self, program: &str) -> std::process::Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            std::process::Command::new(path)
        }
    }

    /// `pg_ctl start|restart|stop` (fast shutdown), waiting for it.
    pub fn pg_ctl(&self, action: &str) -> bool {
        let dir = self.dir.path();
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            dir.display()
        );
        self.run("pg_ctl")
            .args(["-w", "-m", "fast", "-D"])
            .arg(dir.join("data"))
            .args(["-o", &options, "-l"])
            .arg(dir.join("log"))
            .arg(action)
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = self.pg_ctl("stop");
    }
}
