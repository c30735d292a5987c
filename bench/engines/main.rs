//! What one durable echo `SendMessage` asks of the store, on several embedded stores: the
//! writes `SledStore` makes per request (measured with callgrind's call counts on the server),
//! with values shaped like the real records (JSON with the request's own ids, so that a
//! compressing store gets no free ride), single-threaded, and a flush every `FLUSH_EVERY`
//! requests (default 5: group commit at c=16 shares one flush among ~4.7 requests; 0 never
//! flushes, which leaves the write path alone). Prints the process's CPU time per request
//! (user + system, the stores' background threads included) and the wall time.
//!
//! Usage: store-engines sled034|sled1|fjall|redb REQUESTS DIR
//!
//! Per request, in `SledStore`'s trees: the message claim (inserted if absent); the task's
//! head and its creation event; then, at COMPLETED, the head again, the status event and the
//! retention key; then the two listing keys a relist writes. Not modelled: the one read of the
//! head per request (served from `SledStore`'s own cache of recent tasks).

use redb::ReadableTable;
use std::time::Instant;

/// The trees of `SledStore` this pattern writes, by number.
const TREES: [&str; 5] = [
    "message_claims",
    "tasks",
    "task_events",
    "task_index",
    "task_lists",
];

/// The CPU time of this process so far, in seconds (from /proc/self/stat: utime + stime).
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| fields[i].parse::<f64>().expect("a tick count");
    (ticks(11) + ticks(12)) / 100.0
}

struct Request {
    task: String,
    context: String,
    message: String,
    millis: i64,
}

fn request(i: usize) -> Request {
    let id = || uuid::Uuid::now_v7().hyphenated().to_string();
    Request {
        task: id(),
        context: id(),
        message: id(),
        millis: 1_800_000_000_000 + i as i64,
    }
}

/// `SledStore`'s event key: id length, id, sequence number.
fn event_key(task: &str, seq: u64) -> Vec<u8> {
    let mut key = (task.len() as u16).to_be_bytes().to_vec();
    key.extend(task.as_bytes());
    key.extend(seq.to_be_bytes());
    key
}

/// The writes of one request, in order: (tree, key, value).
fn writes(r: &Request) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
    let (id, cx, ms) = (&r.task, &r.context, r.millis % 1000);
    let scope = b"default".to_vec();
    let inverted = (i64::MAX - r.millis).to_be_bytes();
    let mut claim = scope.clone();
    claim.push(0);
    claim.extend(r.message.as_bytes());
    let claim_value = format!(r#"{{"taskId":"{id}","receivedMs":{}}}"#, r.millis);
    let status = |state: &str| {
        format!(r#"{{"state":"TASK_STATE_{state}","timestamp":"2026-11-26T18:00:00.{ms:03}Z"}}"#)
    };
    let head = format!(
        r#"{{"v":1,"id":"{id}","contextId":"{cx}","status":{},"scope":"default"}}"#,
        status("SUBMITTED")
    );
    let head_done = format!(
        r#"{{"v":2,"id":"{id}","contextId":"{cx}","status":{},"scope":"default"}}"#,
        status("COMPLETED")
    );
    let text = format!("message number {} from the benchmark", r.millis);
    let creation = format!(
        r#"{{"task":{{"id":"{id}","contextId":"{cx}","status":{},"artifacts":[{{"artifactId":"{}","name":"echo","parts":[{{"text":"echo: {text}"}}]}}],"history":[{{"messageId":"{}","contextId":"{cx}","taskId":"{id}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}]}}}}"#,
        status("WORKING"),
        r.message,
        r.message
    );
    let completion = format!(
        r#"{{"statusUpdate":{{"taskId":"{id}","contextId":"{cx}","status":{}}}}}"#,
        status("COMPLETED")
    );
    let mut retention = inverted.to_vec();
    retention.extend(id.as_bytes());
    let mut by_state = scope.clone();
    by_state.push(3);
    by_state.extend(inverted);
    by_state.extend(id.as_bytes());
    let mut by_context = scope;
    by_context.extend(cx.as_bytes());
    by_context.push(3);
    by_context.extend(inverted);
    by_context.extend(id.as_bytes());
    vec![
        (0, claim, claim_value.into_bytes()),
        (1, id.as_bytes().to_vec(), head.into_bytes()),
        (2, event_key(id, 1), creation.into_bytes()),
        (1, id.as_bytes().to_vec(), head_done.into_bytes()),
        (2, event_key(id, 2), completion.into_bytes()),
        (3, retention, vec![]),
        (4, by_state, vec![]),
        (4, by_context, vec![]),
    ]
}

/// A store under test: a write (the claim, tree 0, only if its key is absent) and a flush that
/// makes every earlier write durable.
trait Store {
    fn write(&mut self, tree: usize, key: &[u8], value: &[u8]);
    fn flush(&mut self);
}

/// sled 0.34.7 as `SledStore` opens it (a 64 MiB page cache, everything else default).
struct Sled034(sled::Db, Vec<sled::Tree>);

/// sled 1.0.0-alpha.124 (its own flusher off: flushes only when asked).
struct Sled1(sled1::Db<1024>, Vec<sled1::Tree<1024>>);

/// The two sled versions: the same calls on different types.
macro_rules! sled_store {
    ($store:ty) => {
        impl Store for $store {
            fn write(&mut self, tree: usize, key: &[u8], value: &[u8]) {
                let t = &self.1[tree];
                if tree == 0 {
                    let _ = t
                        .compare_and_swap(key, None::<&[u8]>, Some(value))
                        .expect("sled cas");
                } else {
                    t.insert(key, value).expect("sled insert");
                }
            }
            fn flush(&mut self) {
                self.0.flush().expect("sled flush");
            }
        }
    };
}
sled_store!(Sled034);
sled_store!(Sled1);

/// fjall 2.11.2 (an LSM tree: each write goes to its journal and a memtable; a flush is the
/// journal's `fdatasync`), default configuration.
struct Fjall(fjall::Keyspace, Vec<fjall::PartitionHandle>);

impl Store for Fjall {
    fn write(&mut self, tree: usize, key: &[u8], value: &[u8]) {
        let p = &self.1[tree];
        if tree == 0 && p.get(key).expect("fjall get").is_some() {
            return;
        }
        p.insert(key, value).expect("fjall insert");
    }
    fn flush(&mut self) {
        self.0
            .persist(fjall::PersistMode::SyncData)
            .expect("fjall persist");
    }
}

/// redb 2.6.4 (a copy-on-write B-tree): a write transaction is durable when it commits, so
/// the writes between two flushes go into one transaction (as group commit would).
struct Redb(redb::Database, Vec<(usize, Vec<u8>, Vec<u8>)>);

const TABLES: [redb::TableDefinition<&[u8], &[u8]>; 5] = [
    redb::TableDefinition::new(TREES[0]),
    redb::TableDefinition::new(TREES[1]),
    redb::TableDefinition::new(TREES[2]),
    redb::TableDefinition::new(TREES[3]),
    redb::TableDefinition::new(TREES[4]),
];

impl Store for Redb {
    fn write(&mut self, tree: usize, key: &[u8], value: &[u8]) {
        self.1.push((tree, key.to_vec(), value.to_vec()));
    }
    fn flush(&mut self) {
        let tx = self.0.begin_write().expect("redb transaction");
        {
            let mut tables: Vec<_> = TABLES
                .iter()
                .map(|d| tx.open_table(*d).expect("redb table"))
                .collect();
            for (tree, key, value) in self.1.drain(..) {
                let t = &mut tables[tree];
                if tree == 0 && t.get(key.as_slice()).expect("redb get").is_some() {
                    continue;
                }
                t.insert(key.as_slice(), value.as_slice())
                    .expect("redb insert");
            }
        }
        tx.commit().expect("redb commit");
    }
}

fn open(which: &str, dir: &str) -> Box<dyn Store> {
    match which {
        "sled034" => {
            let db = sled::Config::new()
                .path(dir)
                .cache_capacity(64 << 20)
                .open()
                .expect("sled");
            let trees = TREES
                .iter()
                .map(|n| db.open_tree(n).expect("tree"))
                .collect();
            Box::new(Sled034(db, trees))
        }
        "sled1" => {
            let db: sled1::Db<1024> = sled1::Config::new()
                .path(dir)
                .cache_capacity_bytes(64 << 20)
                .flush_every_ms(None)
                .open()
                .expect("sled 1.0");
            let trees = TREES
                .iter()
                .map(|n| db.open_tree(n).expect("tree"))
                .collect();
            Box::new(Sled1(db, trees))
        }
        "fjall" => {
            let ks = fjall::Config::new(dir).open().expect("fjall");
            let parts = TREES
                .iter()
                .map(|n| ks.open_partition(n, Default::default()).expect("partition"))
                .collect();
            Box::new(Fjall(ks, parts))
        }
        "redb" => {
            std::fs::create_dir_all(dir).expect("directory");
            let db = redb::Database::create(format!("{dir}/tasks.redb")).expect("redb");
            Box::new(Redb(db, Vec::new()))
        }
        other => panic!("unknown store {other}: sled034, sled1, fjall or redb"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, which, n, dir] = &args[..] else {
        eprintln!("usage: store-engines sled034|sled1|fjall|redb REQUESTS DIR");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("REQUESTS: a number");
    let warmup = n / 4;
    let flush_every: usize =
        std::env::var("FLUSH_EVERY").map_or(5, |s| s.parse().expect("FLUSH_EVERY"));
    let mut store = open(which, dir);
    let requests: Vec<Request> = (0..warmup + n).map(request).collect();
    let (mut cpu0, mut t0) = (cpu_seconds(), Instant::now());
    for (i, r) in requests.iter().enumerate() {
        if i == warmup {
            (cpu0, t0) = (cpu_seconds(), Instant::now());
        }
        for (tree, key, value) in writes(r) {
            store.write(tree, &key, &value);
        }
        if flush_every > 0 && (i + 1) % flush_every == 0 {
            store.flush();
        }
    }
    if flush_every > 0 {
        store.flush();
    }
    let (cpu, wall) = (cpu_seconds() - cpu0, t0.elapsed().as_secs_f64());
    println!(
        "{which}: {:.1} µs CPU per request, {:.1} µs wall per request ({n} requests after {warmup}, a flush every {flush_every})",
        cpu * 1e6 / n as f64,
        wall * 1e6 / n as f64
    );
}
