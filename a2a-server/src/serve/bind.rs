//! [`bind`]: a TCP listener whose queue of connections waiting to be accepted is long enough
//! for a burst.

use std::io;
use tokio::net::{TcpListener, TcpSocket, ToSocketAddrs};

/// The length of the queue of connections the kernel has completed and the server not yet
/// accepted (`listen(2)`'s backlog), by [`bind`]. Linux caps it at `net.core.somaxconn`
/// (4,096 by default since 5.4).
pub const LISTEN_BACKLOG: u32 = 1024;

/// Binds a TCP listener on the first of `addr`'s addresses that binds, as
/// [`TcpListener::bind`] does (with `SO_REUSEADDR` off Windows), but with a backlog of
/// [`LISTEN_BACKLOG`] instead of 128.
///
/// When that queue is full the kernel drops new connections' SYNs, and each such client waits
/// for its retransmission, a whole second. A burst of connections that outruns the accept loop
/// fills 128 entries quickly, and at the [connection cap](super::Protections::max_connections)
/// every accept first closes a quiet connection: with a longer queue a flood of silent
/// sockets delays a real client's connect by the time the server takes to catch up, not by a
/// second. The server's command line binds with it.
///
/// # Errors
///
/// The last address's error when none binds (or that `addr` resolved to no address).
pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpListener> {
    let mut last = None;
    for addr in tokio::net::lookup_host(addr).await? {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        #[cfg(not(windows))]
        socket.set_reuseaddr(true)?;
        match socket
            .bind(addr)
            .and_then(|()| socket.listen(LISTEN_BACKLOG))
        {
            Ok(listener) => return Ok(listener),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "could not resolve to any address",
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn binds_a_free_port_and_accepts() {
        let listener = bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        assert_ne!(addr.port(), 0);
        let (client, accepted) =
            tokio::join!(tokio::net::TcpStream::connect(addr), listener.accept());
        assert_eq!(client.unwrap().local_addr().unwrap(), accepted.unwrap().1);
    }

    #[tokio::test]
    async fn a_taken_port_is_an_error() {
        let taken = bind("127.0.0.1:0").await.unwrap();
        let err = bind(taken.local_addr().unwrap()).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    }

    #[tokio::test]
    async fn no_address_is_an_error() {
        let none: &[std::net::SocketAddr] = &[];
        let err = bind(none).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
