//! Run with: cargo run -p a2a-examples --example trip_booker [ADDR]
//!
//! A multi-turn agent: it books a trip, and asks for the date when the request lacks one
//! (INPUT_REQUIRED); the caller answers in the same task and the booking completes.
//!
//! ```text
//! a2a send http://127.0.0.1:9002 "book a trip to Lisbon"        # asks: which date?
//! a2a send http://127.0.0.1:9002 "2026-12-24" --task <TASK_ID>  # completes
//! ```

use a2a_examples::agents::TripBooker;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The agent itself is in examples/src/agents/trip_booker.rs.
    let url = a2a_examples::serve(
        TripBooker,
        TripBooker::card(),
        &a2a_examples::addr_arg("127.0.0.1:9002"),
    )
    .await?;
    println!("trip booker at {url}; Ctrl-C to stop");
    tokio::signal::ctrl_c().await?;
    Ok(())
}
