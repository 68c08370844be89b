//! A slow network link on loopback: a TCP relay from a port of its own to
//! another (sshd's), which carries what comes back from it (server to
//! client) at a bounded rate, and counts it. ssh reaches the relay
//! through an alias of its own (`Sshd::alias_through`), so everything a
//! window over `--host` receives crosses it, as over a slow network.
//! (`tc netem` is not in this kernel.)
//!
//! Threads in the test's process, two per connection; dropping the relay
//! closes its listener and every connection it carries.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub struct SlowLink {
    pub port: u16,
    down: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
}

impl SlowLink {
    /// A relay to 127.0.0.1:`to` whose server-to-client direction carries
    /// at most `bytes_per_sec`.
    pub fn start(to: u16, bytes_per_sec: u64) -> SlowLink {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a relay port");
        let port = listener.local_addr().unwrap().port();
        let down = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let (d, s, st) = (down.clone(), stop.clone(), streams.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.load(Ordering::Acquire) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", to)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                {
                    let mut all = st.lock().unwrap();
                    all.push(client.try_clone().unwrap());
                    all.push(server.try_clone().unwrap());
                }
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                std::thread::spawn(move || copy(c2, s2, None, None));
                let d = d.clone();
                std::thread::spawn(move || copy(server, client, Some(bytes_per_sec), Some(&d)));
            }
        });
        SlowLink {
            port,
            down,
            stop,
            streams,
        }
    }

    /// Bytes carried from the server to the client so far.
    pub fn down_bytes(&self) -> u64 {
        self.down.load(Ordering::Acquire)
    }
}

/// `from` to `to` until either ends, at most `rate` bytes a second.
fn copy(mut from: TcpStream, mut to: TcpStream, rate: Option<u64>, count: Option<&AtomicU64>) {
    // Small reads, so the rate holds within a fraction of a second; no
    // credit for a quiet spell (at most one read goes at once).
    let mut buf = vec![0u8; 4096];
    let mut next = Instant::now();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
        if let Some(c) = count {
            c.fetch_add(n as u64, Ordering::AcqRel);
        }
        if let Some(rate) = rate {
            let now = Instant::now();
            next = next.max(now) + Duration::from_secs_f64(n as f64 / rate as f64);
            std::thread::sleep(next - now);
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}

impl Drop for SlowLink {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for s in self.streams.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        // Wake the listener's accept, which then sees the stop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}
