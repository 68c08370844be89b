//! Real network parts for the proxy suite, all on loopback: a DNS server
//! that answers from a table and logs every query, an HTTP origin that logs
//! every request, and `nerdr proxy-serve` run as a child process whose
//! decisions are collected.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::local::BIN;
use super::wait_until;

/// A UDP DNS server for A queries: names in the table get their address,
/// others NXDOMAIN; AAAA queries get an empty answer.
pub struct DnsServer {
    pub addr: SocketAddr,
    pub queries: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl DnsServer {
    pub fn start(table: &[(&str, Ipv4Addr)]) -> DnsServer {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let addr = sock.local_addr().unwrap();
        let table: HashMap<String, Ipv4Addr> =
            table.iter().map(|(n, a)| (n.to_string(), *a)).collect();
        let queries = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (q, s) = (queries.clone(), stop.clone());
        thread::spawn(move || {
            let mut buf = [0u8; 1500];
            while !s.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                if let Some((name, reply)) = answer(&buf[..n], &table) {
                    q.lock().unwrap().push(name);
                    let _ = sock.send_to(&reply, from);
                }
            }
        });
        DnsServer {
            addr,
            queries,
            stop,
        }
    }

    /// The names asked so far (one entry per query, A and AAAA alike).
    pub fn asked(&self) -> Vec<String> {
        self.queries.lock().unwrap().clone()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn answer(q: &[u8], table: &HashMap<String, Ipv4Addr>) -> Option<(String, Vec<u8>)> {
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = *q.get(at)? as usize;
        at += 1;
        if len == 0 {
            break;
        }
        labels.push(String::from_utf8_lossy(q.get(at..at + len)?).to_string());
        at += len;
    }
    let qtype = u16::from_be_bytes([*q.get(at)?, *q.get(at + 1)?]);
    let question_end = at + 4;
    let name = labels.join(".").to_ascii_lowercase();
    let mut r = q.get(..question_end)?.to_vec();
    r[2] = 0x81; // response, recursion desired
    r[3] = 0x80; // recursion available, no error
    match table.get(&name) {
        None => r[3] |= 3,
        Some(a) if qtype == 1 => {
            r[7] = 1;
            r.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4]);
            r.extend_from_slice(&a.octets());
        }
        Some(_) => {}
    }
    Some((name, r))
}

/// An HTTP/1.1 origin answering every request with `origin saw PATH`,
/// keeping connections alive; it logs request lines and connections.
pub struct Origin {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<String>>>,
    pub connections: Arc<Mutex<usize>>,
}

impl Origin {
    pub fn start(bind: &str) -> std::io::Result<Origin> {
        let listener = TcpListener::bind(bind)?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(Mutex::new(0));
        let (r, c) = (requests.clone(), connections.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                *c.lock().unwrap() += 1;
                let r = r.clone();
                thread::spawn(move || serve_origin(stream, r));
            }
        });
        Ok(Origin {
            addr,
            requests,
            connections,
        })
    }

    pub fn seen(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve_origin(stream: TcpStream, log: Arc<Mutex<Vec<String>>>) {
    let mut w = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut host = String::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                break;
            }
            if let Some(v) = h.strip_prefix("Host: ") {
                host = v.trim().to_string();
            }
        }
        let path = line.split(' ').nth(1).unwrap_or("").to_string();
        log.lock()
            .unwrap()
            .push(format!("{} host={host}", line.trim()));
        let body = format!("origin saw {path}");
        let reply = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if w.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// `nerdr proxy-serve` on a loopback TCP port (and a Unix socket if asked).
pub struct ProxyProc {
    pub addr: SocketAddr,
    pub decisions: Arc<Mutex<Vec<serde_json::Value>>>,
    child: Child,
    /// Closing it stops the proxy (`--until-stdin-closes`).
    stdin: Option<ChildStdin>,
    reader: Option<thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl ProxyProc {
    pub fn start(network: serde_json::Value, dns: SocketAddr, unix: Option<&Path>) -> ProxyProc {
        ProxyProc::start_with(network, dns, unix, &[])
    }

    /// With more `proxy-serve` arguments (`--max-connections`, …).
    pub fn start_with(
        network: serde_json::Value,
        dns: SocketAddr,
        unix: Option<&Path>,
        extra: &[&str],
    ) -> ProxyProc {
        let dir = tempfile::tempdir().unwrap();
        let file: PathBuf = dir.path().join("network.json");
        std::fs::write(&file, network.to_string()).unwrap();
        let mut cmd = Command::new(BIN);
        cmd.args([
            "proxy-serve",
            "--tcp",
            "127.0.0.1:0",
            "--dns",
            &dns.to_string(),
            "--network",
        ])
        .arg(&file);
        if let Some(u) = unix {
            cmd.arg("--unix").arg(u);
        }
        cmd.arg("--until-stdin-closes").args(extra);
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        out.read_line(&mut first).unwrap();
        let addr = first
            .trim()
            .strip_prefix("listening on tcp ")
            .unwrap_or_else(|| panic!("proxy-serve did not say where it listens: {first:?}"))
            .parse()
            .unwrap();
        let decisions = Arc::new(Mutex::new(Vec::new()));
        let d = decisions.clone();
        let reader = thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { return };
                if let Ok(v) = serde_json::from_str(&line) {
                    d.lock().unwrap().push(v);
                }
            }
        });
        ProxyProc {
            addr,
            decisions,
            child,
            stdin,
            reader: Some(reader),
            _dir: dir,
        }
    }

    /// Stops the proxy as `nerdr sandbox` does when its program ends, and
    /// waits for it to exit; returns every decision it wrote.
    pub fn stop(&mut self) -> Vec<serde_json::Value> {
        drop(self.stdin.take());
        wait_until("proxy-serve to exit", Duration::from_secs(10), || {
            matches!(self.child.try_wait(), Ok(Some(_)))
        });
        // The last lines: the reader ends at the end of the output.
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        self.decisions.lock().unwrap().clone()
    }

    /// Waits until `n` decisions have been reported, and returns them all.
    pub fn decisions_at_least(&self, n: usize) -> Vec<serde_json::Value> {
        wait_until(
            &format!("{n} proxy decisions"),
            Duration::from_secs(10),
            || self.decisions.lock().unwrap().len() >= n,
        );
        self.decisions.lock().unwrap().clone()
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s
    }
}

impl Drop for ProxyProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one HTTP response (head and a Content-Length body) from `r`.
pub fn read_response(r: &mut impl BufRead) -> (u16, String) {
    let mut status = String::new();
    r.read_line(&mut status).unwrap();
    let code = status
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {status:?}"));
    let mut len = 0;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        if h == "\r\n" || h.is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse().unwrap();
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).unwrap();
    (code, String::from_utf8_lossy(&body).into_owned())
}
