//! The schema's versioned migrations, embedded in the crate and applied at connect.

use super::{backend, backend_msg};
use crate::store::StoreError;

/// Every migration, in order: version `i + 1` is `MIGRATIONS[i]`. Append only: a database
/// records the versions it has applied, and a released migration never changes.
const MIGRATIONS: &[(&str, &str)] = &[
    ("init", include_str!("migrations/0001_init.sql")),
    (
        "push_generations",
        include_str!("migrations/0002_push_generations.sql"),
    ),
];

/// The advisory lock key that serializes migrations across replicas ("a2a" in ASCII).
const LOCK: i64 = 0x0061_3261;

/// Drops every table the migrations create (for `PgStore::drop_schema` in `public`).
pub(super) const DROP_ALL: &str = "DROP TABLE IF EXISTS a2a_tasks, a2a_events, a2a_claims, \
     a2a_push_configs, a2a_delivery_leases, a2a_replicas, a2a_leases, a2a_schema_migrations";

/// Applies the migrations this database lacks, in one transaction under an advisory lock, so
/// that replicas starting together apply each one once, and a failed migration leaves nothing.
pub(super) async fn run(
    client: &mut deadpool_postgres::Object,
    schema: Option<&str>,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(backend)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
        .await
        .map_err(backend)?;
    if let Some(schema) = schema {
        // The name was checked: letters, digits and `_`.
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
            .await
            .map_err(backend)?;
    }
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS a2a_schema_migrations (
             version    integer     PRIMARY KEY,
             name       text        NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now()
         )",
    )
    .await
    .map_err(backend)?;
    let applied: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM a2a_schema_migrations",
            &[],
        )
        .await
        .map_err(backend)?
        .get(0);
    let known = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
    if applied > known {
        return Err(backend_msg(format!(
            "the database schema is at version {applied}, newer than this server knows \
             ({known}): upgrade the server, or use another database"
        )));
    }
    for (version, (name, sql)) in (1..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(applied).unwrap_or(0))
    {
        tx.batch_execute(sql)
            .await
            .map_err(|e| backend_msg(format!("migration {version} ({name}) failed: {e}")))?;
        tx.execute(
            "INSERT INTO a2a_schema_migrations (version, name) VALUES ($1, $2)",
            &[&version, name],
        )
        .await
        .map_err(backend)?;
        tracing::info!(version, name, "applied a database migration");
    }
    tx.commit().await.map_err(backend)
}
