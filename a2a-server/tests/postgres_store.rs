//! `PgStore` against a real PostgreSQL: the public store suite, and what only a shared
//! database has (migrations applied once, leases between replicas, the bus's wake-ups and
//! cancels, a listener that reconnects).
#![cfg(all(feature = "postgres", feature = "testing"))]

mod pg;

use a2a_server::testing;
use pg::TestSchema;

#[tokio::test]
async fn the_postgres_store_passes_the_store_suite() {
    let Some(db) = TestSchema::new().await else {
        return;
    };
    // Each part of the suite wants an empty store: a schema each, dropped at the end.
    let schemas = std::sync::Mutex::new(Vec::new());
    testing::check_store(|| async {
        let schema = TestSchema::new()
            .await
            .expect("PostgreSQL answered a moment ago");
        let store = schema.store().await;
        schemas.lock().expect("schemas").push(schema);
        store
    })
    .await;
    drop(db);
}
