//! The binary's allocator, and how memory freed after a burst goes back to the system.
//!
//! mimalloc: the allocator is a large share of a request's CPU (a task is a few dozen small
//! allocations); mimalloc's thread-local free lists make them several times cheaper than glibc's.
//!
//! mimalloc (v3) returns freed memory to the system ("purges" it) one purge delay (1 s) after
//! it was freed, but only from inside a later call that frees one of its pages: it has no
//! thread of its own. A server that goes quiet after a burst (the clients that held 200
//! unread answers have left) would keep that memory for good. [`return_freed_memory`] makes
//! that later call itself, twice a second: it allocates and frees a block too large for
//! mimalloc's size classes, whose page is freed at once, and that free purges whatever is
//! past its delay. So RSS is back near its baseline about a second and a half after a burst,
//! whatever the traffic. Its cost is two allocator calls every 500 ms. (Setting
//! `MIMALLOC_PURGE_DELAY=0` purges at each free instead, a system call each time a page is
//! freed under load, which mimalloc's documentation warns costs speed; its options are read
//! from the environment at load, or set through `unsafe` calls, so the binary does not.)

use std::time::Duration;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How often freed memory past mimalloc's purge delay is returned.
const PERIOD: Duration = Duration::from_millis(500);

/// A block over mimalloc's largest size class (512 KiB): its page is its own, and freeing the
/// block frees the page, which is when mimalloc purges. Allocated, never written: only its
/// page header is touched.
const PAGE_FREEING_BLOCK: usize = 1 << 20;

/// Returns memory freed more than mimalloc's purge delay ago to the system, every
/// [`PERIOD`], for as long as the runtime runs.
pub(crate) fn return_freed_memory() {
    tokio::spawn(async {
        let mut tick = tokio::time::interval(PERIOD);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            // `black_box`: an allocation nothing uses could be optimized away.
            drop(std::hint::black_box(Vec::<u8>::with_capacity(
                PAGE_FREEING_BLOCK,
            )));
        }
    });
}
