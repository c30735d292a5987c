//! The Rust blocks of README.md and the guide under docs/, compiled (and, unless marked
//! `no_run`, run) as this crate's doctests, so that what the documentation shows compiles
//! against the code it documents. `tests/tests/doc_links.rs` checks their links.

macro_rules! pages {
    ($($name:ident = $path:literal;)*) => {
        $(
            #[doc = include_str!(concat!("../../", $path))]
            struct $name;
        )*
    };
}

pages! {
    Readme = "README.md";
    Client = "docs/client.md";
    Deploying = "docs/deploying.md";
    Grpc = "docs/grpc.md";
    Push = "docs/push.md";
    Securing = "docs/securing.md";
    WritingAnAgent = "docs/writing-an-agent.md";
}
