//! Bad input never disturbs the core: bad config, malformed and oversized
//! frames, clients that vanish mid-frame, and many tabs opened and closed.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::support::local::{pid_alive, ptmx_fds, Local};
use crate::support::wait_until;

/// Connect to the client socket and read the challenge frame.
fn raw_client(l: &Local) -> UnixStream {
    let mut s = UnixStream::connect(l.client_socket()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = read_frame(&mut s).expect("challenge");
    assert!(body.contains("nonce"), "{body}");
    s
}

/// One frame's body as text, or None when the core closed the connection.
fn read_frame(s: &mut UnixStream) -> Option<String> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut body).ok()?;
    Some(String::from_utf8_lossy(&body[1..]).into_owned())
}

fn closed(s: &mut UnixStream) -> bool {
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0))
}

#[test]
fn bad_config_is_named_and_the_core_keeps_serving() {
    let l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\"]\ncomand = 1\n");
    let err = l.fails(&["agent", "sh"]);
    let file = l.path("config/nerdr/config.toml");
    assert!(err.contains(&format!("{}:3:1", file.display())), "{err}");
    assert!(err.contains("comand"), "{err}");
    l.write_config("[agents.sh]\nargs = \"not a list\"\n");
    let err = l.fails(&["agent", "sh"]);
    assert!(err.contains(":2:"), "{err}");
    assert!(l.tabs_json(&[]).is_empty(), "no half-started tab");
    l.write_config("");
    let err = l.fails(&["agent", "no-such-agent"]);
    assert!(err.contains("unknown agent \"no-such-agent\""), "{err}");
    l.write_config("[agents.gone]\ncommand = [\"nerdr-test-no-such-program\"]\n");
    let err = l.fails(&["agent", "gone"]);
    assert!(
        err.contains("`nerdr-test-no-such-program` is not an executable on PATH"),
        "{err}"
    );
    assert!(l.tabs_json(&[]).is_empty());
}

#[test]
fn malformed_frames_close_only_their_connection() {
    let l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\"]\n");
    let tab = l.ok(&["agent", "sh"]);
    let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
        (
            "oversized length",
            (64u32 << 20).to_be_bytes().to_vec(),
            Some("larger than the limit"),
        ),
        ("zero length", vec![0, 0, 0, 0], Some("empty frame")),
        (
            "unknown kind",
            vec![0, 0, 0, 1, 9],
            Some("unknown frame kind"),
        ),
        (
            "not json",
            [&[0u8, 0, 0, 4, 1][..], b"{{{"].concat(),
            Some("malformed hello"),
        ),
        // A client that disconnects mid-frame gets nothing; the core moves on.
        ("cut off", vec![0, 0, 0, 100, 1, b'{'], None),
    ];
    for (name, bytes, want) in cases {
        let mut s = raw_client(&l);
        s.write_all(&bytes).unwrap();
        match want {
            Some(want) => {
                let got = read_frame(&mut s).unwrap_or_default();
                assert!(got.contains(want), "{name}: {got}");
                assert!(closed(&mut s), "{name}: connection left open");
            }
            None => drop(s),
        }
        // The core and the tab are unharmed.
        assert_eq!(l.tabs_json(&[]).len(), 1, "after {name}");
    }
    l.ok(&["send", &tab, "echo still-$((1+1))"]);
    l.wait_screen(&tab, "still-2");
}

#[test]
fn a_wrong_key_is_refused() {
    let l = Local::started();
    let mut s = raw_client(&l);
    let hello = br#"{"version":2,"proof":"00"}"#;
    let mut frame = ((hello.len() + 1) as u32).to_be_bytes().to_vec();
    frame.push(1);
    frame.extend_from_slice(hello);
    s.write_all(&frame).unwrap();
    let got = read_frame(&mut s).unwrap();
    assert!(
        got.contains("refused") && got.contains("wrong client key"),
        "{got}"
    );
}

#[test]
fn bad_hook_lines_get_errors_and_the_connection_survives_them() {
    let l = Local::started();
    let s = UnixStream::connect(l.hook_socket()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut ask = |line: &[u8]| {
        w.write_all(line).unwrap();
        let mut reply = String::new();
        r.read_line(&mut reply).unwrap();
        serde_json::from_str::<serde_json::Value>(&reply).unwrap()
    };
    let v = ask(b"this is not json\n");
    assert_eq!(v["error"]["code"], "bad_request");
    let v = ask(b"{\"id\":5,\"method\":\"launch_missiles\"}\n");
    assert_eq!(
        (v["id"].as_i64(), v["error"]["code"].as_str()),
        (Some(5), Some("bad_request"))
    );
    let v = ask(b"{\"id\":6,\"method\":\"tabs\",\"params\":{\"folder\":\"/\"}}\n");
    assert_eq!(v["error"]["code"], "denied", "no NERDR_TAB, no service");
    // An endless line is cut off at the limit, with an error.
    let mut big = vec![b'x'; (1 << 20) + 10];
    big.push(b'\n');
    let v = ask(&big);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than"),
        "{v}"
    );
    assert!(l.tabs_json(&[]).is_empty());
}

#[test]
fn fifty_tabs_open_and_close_without_leaks() {
    let l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\"]\n");
    let core = l.core_pid();
    // Whoever owns the PTYs: the holder, or the core with NERDR_HOLDER=0.
    l.ok(&["tabs"]);
    let owner = l.holder_pid().unwrap_or(core);
    let ptys_before = ptmx_fds(owner);
    let tabs: Vec<String> = (0..50).map(|_| l.ok(&["agent", "sh"])).collect();
    let listed = l.tabs_json(&[]);
    assert_eq!(listed.len(), 50);
    let pids: Vec<u32> = listed
        .iter()
        .map(|t| t["pid"].as_u64().unwrap() as u32)
        .collect();
    assert!(pids.iter().all(|p| pid_alive(*p)));
    // Two per program: the one its terminal tasks read and write, and the
    // copy kept to pass on in a hand-over (`host::pty`).
    assert_eq!(ptmx_fds(owner), ptys_before + 2 * 50);
    for t in &tabs {
        l.ok(&["close", t]);
    }
    assert!(l.tabs_json(&[]).is_empty());
    for p in &pids {
        assert!(!pid_alive(*p), "pid {p} left behind");
    }
    wait_until(
        "every PTY master to be closed",
        Duration::from_secs(10),
        || ptmx_fds(owner) == ptys_before,
    );
    assert!(pid_alive(core));
}
