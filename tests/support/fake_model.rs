//! A fake model server for the real agent CLIs: HTTP/1.1 on 127.0.0.1 (an
//! ephemeral port) serving the Anthropic Messages API (`POST /v1/messages`,
//! streamed or not, plus the `HEAD /`/`GET /` probes) for claude and the
//! OpenAI Responses API (`POST /v1/responses`) for codex, so both do whole
//! turns offline. `chat.rs` (OpenAI Chat Completions) and `gemini.rs` (the
//! Gemini API) serve the other agents the same way.
//!
//! ```ignore
//! let model = FakeModel::start();
//! model.when_user_says("DO-COMMIT", Turn::run("git commit -qam x"));
//! // point the CLI at model.url() (see `agent_home`), type "DO-COMMIT" ...
//! model.wait_for("the tool's result", Duration::from_secs(60), |r| r.after_tool());
//! eprintln!("{}", model.dump());
//! ```
//!
//! It is driven by the latest user message: one containing a marker gets
//! that marker's [`Turn`] (a shell command through the CLI's own shell
//! tool, or a slow answer), anything else a short text; after a tool's
//! result comes back it ends the turn with a short text. Side requests
//! (claude's session title, with a JSON schema) get JSON matching the
//! schema. Every request is logged (method, path, body) for the test to
//! read and print; unknown paths get a 404 (logged too) and unknown fields
//! are ignored, so new CLI versions show up in the log rather than break
//! it. The server stops when the value is dropped.

mod anthropic;
mod chat;
mod gemini;
mod http;
mod openai;
pub mod script;

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use script::decide;
pub use script::{Answer, Asked, Turn};

impl Turn {
    /// Run `command` through the CLI's shell tool, without asking for more
    /// than the CLI's default permissions.
    pub fn run(command: &str) -> Turn {
        Turn::Run {
            command: command.to_string(),
            escalate: false,
        }
    }
}

/// One server-sent event, and how long to wait before sending it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub name: Option<String>,
    pub data: Value,
    pub pause: Duration,
}

impl Event {
    fn new(name: Option<&str>, data: Value) -> Event {
        Event {
            name: name.map(str::to_string),
            data,
            pause: Duration::ZERO,
        }
    }

    fn wire(&self) -> String {
        match &self.name {
            Some(n) => format!("event: {n}\ndata: {}\n\n", self.data),
            None => format!("data: {}\n\n", self.data),
        }
    }
}

/// One request the server saw, and what it made of it.
#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    /// The body as text (lossy), as it came.
    pub body: String,
    /// The body as JSON, when it is JSON.
    pub json: Option<Value>,
    /// For the model endpoints: the request as the script saw it.
    pub asked: Option<Asked>,
    /// For the model endpoints: what the model answered.
    pub answer: Option<Answer>,
}

impl Logged {
    /// A model request that carried a tool's result.
    pub fn after_tool(&self) -> bool {
        self.asked.as_ref().is_some_and(|a| a.after_tool)
    }
}

#[derive(Default)]
struct Shared {
    rules: Mutex<Vec<(String, Turn)>>,
    /// Sent with every streamed answer (`FakeModel::send_headers`).
    headers: Mutex<Vec<(String, String)>>,
    log: Mutex<Vec<Logged>>,
    answered: AtomicU64,
    stop: AtomicBool,
}

/// The running server; see the module docs.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl FakeModel {
    pub fn start() -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        let accept = std::thread::Builder::new()
            .name("fake-model".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if s.stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(conn) = conn else { continue };
                    let s = s.clone();
                    let _ = std::thread::Builder::new()
                        .name("fake-model-conn".into())
                        .spawn(move || serve(conn, &s));
                }
            })
            .unwrap();
        FakeModel {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// Headers to send with every streamed answer from now on: a plan's
    /// rate limits (`anthropic-ratelimit-unified-*`, `x-codex-primary-*`),
    /// which the CLIs read from real servers' replies.
    pub fn send_headers(&self, headers: &[(&str, String)]) {
        *self.shared.headers.lock().unwrap() = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// From now on, a user message containing `marker` gets `turn` (the
    /// first matching rule wins).
    pub fn when_user_says(&self, marker: &str, turn: Turn) {
        self.shared
            .rules
            .lock()
            .unwrap()
            .push((marker.to_string(), turn));
    }

    /// Every request so far, oldest first.
    pub fn log(&self) -> Vec<Logged> {
        self.shared.log.lock().unwrap().clone()
    }

    /// The log as text, for a failing test's message.
    pub fn dump(&self) -> String {
        let mut out = String::new();
        for (i, r) in self.log().iter().enumerate() {
            let body: String = r.body.chars().take(600).collect();
            out.push_str(&format!(
                "#{i} {} {} asked={:?} answer={:?}\n    {body}{}\n",
                r.method,
                r.path,
                r.asked.as_ref().map(|a| (a.after_tool, a.has_shell)),
                r.answer,
                if r.body.chars().count() > 600 {
                    " ..."
                } else {
                    ""
                },
            ));
        }
        if out.is_empty() {
            out.push_str("(no requests)\n");
        }
        out
    }

    /// Poll until some logged request satisfies `cond`; panics after
    /// `timeout` with the log and `what`.
    pub fn wait_for(&self, what: &str, timeout: Duration, cond: impl Fn(&Logged) -> bool) {
        let seen = super::poll(timeout, || self.log().iter().any(&cond));
        assert!(
            seen,
            "the fake model never saw {what} within {timeout:?}; its log:\n{}",
            self.dump()
        );
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// Serve one connection's requests until it closes (or the server stops).
fn serve(conn: TcpStream, shared: &Shared) {
    // A kept-alive connection idle this long is dropped; clients reconnect.
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(mut w) = conn.try_clone() else { return };
    let mut r = BufReader::new(conn);
    while !shared.stop.load(Ordering::SeqCst) {
        let req = match http::read_request(&mut r) {
            Ok(Some(req)) => req,
            Ok(None) => return,
            Err(e) => {
                log(
                    shared,
                    "?",
                    "?",
                    format!("(unreadable request: {e})").into_bytes(),
                );
                let _ = http::reply(
                    &mut w,
                    "400 Bad Request",
                    "text/plain",
                    e.to_string().as_bytes(),
                );
                return;
            }
        };
        let close = req.wants_close();
        if respond(&req, &mut w, shared).is_err() || close {
            return;
        }
    }
}

fn log(shared: &Shared, method: &str, path: &str, body: Vec<u8>) -> usize {
    let json = serde_json::from_slice(&body).ok();
    let mut log = shared.log.lock().unwrap();
    log.push(Logged {
        method: method.to_string(),
        path: path.to_string(),
        body: String::from_utf8_lossy(&body).into_owned(),
        json,
        asked: None,
        answer: None,
    });
    log.len() - 1
}

fn respond(req: &http::Request, w: &mut TcpStream, shared: &Shared) -> std::io::Result<()> {
    let at = log(shared, &req.method, &req.path, req.body.clone());
    let path = req.path.split('?').next().unwrap_or("");
    let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
    let model = body["model"].as_str().unwrap_or("fake-model").to_string();
    let headers = shared.headers.lock().unwrap().clone();
    let stream = |w: &mut TcpStream, events: &[Event]| stream_then(w, events, "", &headers);
    let stream_chat =
        |w: &mut TcpStream, events: &[Event]| stream_then(w, events, "data: [DONE]\n\n", &headers);
    match (req.method.as_str(), path) {
        ("HEAD" | "GET", "/") => http::reply(w, "200 OK", "text/plain", b""),
        ("POST", "/v1/messages/count_tokens") => {
            http::reply(w, "200 OK", "application/json", br#"{"input_tokens": 10}"#)
        }
        ("POST", "/v1/messages") => {
            let asked = anthropic::asked(&body);
            let n = shared.answered.fetch_add(1, Ordering::SeqCst);
            let answer = decide(&asked, &shared.rules.lock().unwrap());
            record(shared, at, asked, &answer);
            if body["stream"] == true {
                stream(w, &anthropic::events(&answer, &model, n))
            } else {
                let msg = anthropic::message(&answer, &model, n).to_string();
                http::reply(w, "200 OK", "application/json", msg.as_bytes())
            }
        }
        ("POST", "/v1/responses") => {
            let asked = openai::asked(&body);
            let n = shared.answered.fetch_add(1, Ordering::SeqCst);
            let answer = decide(&asked, &shared.rules.lock().unwrap());
            record(shared, at, asked, &answer);
            stream(w, &openai::events(&body, &answer, n))
        }
        ("POST", "/v1/chat/completions") => {
            let asked = chat::asked(&body);
            let n = shared.answered.fetch_add(1, Ordering::SeqCst);
            let answer = decide(&asked, &shared.rules.lock().unwrap());
            record(shared, at, asked, &answer);
            if body["stream"] == true {
                stream_chat(w, &chat::events(&body, &answer, n))
            } else {
                let msg = chat::message(&body, &answer, n).to_string();
                http::reply(w, "200 OK", "application/json", msg.as_bytes())
            }
        }
        ("POST", p) if gemini::route(p).is_some() => {
            let asked = gemini::asked(&body);
            shared.answered.fetch_add(1, Ordering::SeqCst);
            let answer = decide(&asked, &shared.rules.lock().unwrap());
            record(shared, at, asked, &answer);
            if gemini::route(p).is_some_and(|(streamed, _)| streamed) {
                stream(w, &gemini::events(&body, &answer))
            } else {
                let msg = gemini::message(&body, &answer).to_string();
                http::reply(w, "200 OK", "application/json", msg.as_bytes())
            }
        }
        ("POST", p) if p.starts_with("/v1beta/models/") && p.ends_with(":countTokens") => {
            http::reply(w, "200 OK", "application/json", br#"{"totalTokens": 10}"#)
        }
        ("GET", "/v1/models") => http::reply(
            w,
            "200 OK",
            "application/json",
            chat::models().to_string().as_bytes(),
        ),
        _ => {
            let err = json!({"type": "error", "error": {"type": "not_found_error",
                             "message": format!("the fake model does not serve {} {path}", req.method)}});
            http::reply(
                w,
                "404 Not Found",
                "application/json",
                err.to_string().as_bytes(),
            )
        }
    }
}

fn record(shared: &Shared, at: usize, asked: Asked, answer: &Answer) {
    let mut log = shared.log.lock().unwrap();
    log[at].asked = Some(asked);
    log[at].answer = Some(answer.clone());
}

/// The events, then `tail` (Chat Completions streams end with `data:
/// [DONE]`), after `headers`.
fn stream_then(
    w: &mut TcpStream,
    events: &[Event],
    tail: &str,
    headers: &[(String, String)],
) -> std::io::Result<()> {
    let mut s = http::Stream::start(w, "text/event-stream", headers)?;
    for e in events {
        if !e.pause.is_zero() {
            std::thread::sleep(e.pause);
        }
        s.send(e.wire().as_bytes())?;
    }
    if !tail.is_empty() {
        s.send(tail.as_bytes())?;
    }
    s.finish()?;
    w.flush()
}
