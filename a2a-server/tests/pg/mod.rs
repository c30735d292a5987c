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
        let url = url();
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
