-- Tasks: the snapshot of each task (the task as last written whole) and the columns that
-- listings, recovery and retention filter and order by. `version` counts every write; the
-- events after `snapshot_version` are folded onto the snapshot at read time.
CREATE TABLE a2a_tasks (
    id               text   PRIMARY KEY,
    context_id       text   NOT NULL,
    tenant           text,
    owner            text,
    state            text   NOT NULL,
    status_ms        bigint NOT NULL,
    version          bigint NOT NULL,
    snapshot_version bigint NOT NULL,
    snapshot         json   NOT NULL
);
-- Listings: newest status first, ties by id, under the scope, then a context or a state.
CREATE INDEX a2a_tasks_by_scope ON a2a_tasks (tenant, owner, status_ms DESC, id);
CREATE INDEX a2a_tasks_by_scope_state ON a2a_tasks (tenant, owner, state, status_ms DESC, id);
CREATE INDEX a2a_tasks_by_context ON a2a_tasks (context_id, status_ms DESC, id);
-- Recovery: the active tasks, by id (only they are in it, so a task leaves it when it
-- finishes).
CREATE INDEX a2a_tasks_active ON a2a_tasks (id)
    WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');
-- Retention: finished tasks, oldest first.
CREATE INDEX a2a_tasks_finished ON a2a_tasks (status_ms, id)
    WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED',
                    'TASK_STATE_REJECTED');

-- Each task's event log: seq 1 is the task as created, seq n the event of write n.
CREATE TABLE a2a_events (
    task_id text   NOT NULL,
    seq     bigint NOT NULL,
    event   json   NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- Message claims (idempotent sends), expired by receipt time.
CREATE TABLE a2a_claims (
    key         text   PRIMARY KEY,
    task_id     text   NOT NULL,
    reply       json,
    received_ms bigint NOT NULL
);
CREATE INDEX a2a_claims_by_time ON a2a_claims (received_ms);

-- Webhook registrations with their delivery cursor (the log is the outbox); `position` keeps
-- registration order across replacements.
CREATE TABLE a2a_push_configs (
    task_id     text      NOT NULL,
    config_id   text      NOT NULL,
    position    bigserial NOT NULL,
    config      json      NOT NULL,
    v03         boolean   NOT NULL,
    delivered   bigint    NOT NULL,
    dead_letter json,
    PRIMARY KEY (task_id, config_id)
);

-- Who posts to each webhook: one owner at a time until the lease expires (database time).
CREATE TABLE a2a_delivery_leases (
    task_id   text        NOT NULL,
    config_id text        NOT NULL,
    owner     text        NOT NULL,
    expires   timestamptz NOT NULL,
    PRIMARY KEY (task_id, config_id)
);

-- Replicas and their heartbeats: a replica is alive until `expires` (database time).
CREATE TABLE a2a_replicas (
    id      text        PRIMARY KEY,
    expires timestamptz NOT NULL
);

-- Execution leases: which replica runs each active task's agent. A lease is held while its
-- owner is alive; the leases of a replica that stopped heartbeating are free to take.
CREATE TABLE a2a_leases (
    task_id text        PRIMARY KEY,
    owner   text        NOT NULL,
    since   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX a2a_leases_by_owner ON a2a_leases (owner);
