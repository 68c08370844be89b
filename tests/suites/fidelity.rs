//! Fidelity (issue 17): a program in a nerdr tab, seen through a real
//! window in a tmux pane, against the same program in a tmux pane of its
//! own, cell and attribute for cell (`support::twin`): terminal queries
//! answered, every style, DEC line drawing, tab stops and origin mode.
//! vttest is in `fidelity_vttest.rs`; the alternate screen across a
//! re-attach and a core restart in `fidelity_reattach.rs`.

use std::time::Duration;

use crate::support::sysenv::SystemdEnv;
use crate::support::tmux::have_tmux;
use crate::support::twin::{program, side_by_side, Capture, Twin};

/// The private `systemd --user` the twins run in, when tmux is here too
/// (else a loud skip, a failure under `NERDR_MUST_TEST=1`).
pub fn twin_env() -> Option<SystemdEnv> {
    if !have_tmux() {
        return None;
    }
    SystemdEnv::start()
}

/// Whether `tool` is on the test user's PATH (the suites' programs run
/// as that user); if not, a loud skip (a failure under
/// `NERDR_MUST_TEST=1`) naming the package.
pub fn have(tool: &str) -> bool {
    let ok = ["/usr/bin", "/bin", "/usr/local/bin"]
        .iter()
        .any(|d| std::path::Path::new(d).join(tool).is_file());
    if !ok {
        crate::support::sysenv::skip(&format!(
            "{tool} is not installed (apt-get install {tool}; .ci/run does)"
        ));
    }
    ok
}

/// Runs `bytes` (written to a file, `cat` as it is) in both terminals of
/// `rows` x `cols`, then idles; returns the twin once both are compared.
fn same_drawing(env: &SystemdEnv, name: &str, bytes: &[u8], rows: u16, cols: u16) {
    let file = program(env, name, bytes);
    let twin = Twin::start(
        env,
        rows,
        cols,
        &format!("cat {}; exec sleep 600", file.display()),
    );
    twin.assert_same(name);
}

/// Asks its terminal seven questions one at a time in raw mode, 2 s each,
/// and prints one line per question: the reply in a form that is the same
/// on every terminal that answers right (CPR at its own cursor, 18t its
/// own size), the terminal's identity reduced to its form, or TIMEOUT.
const QUERIES: &str = r#"
import os, re, select, sys, termios, time, tty
fd = 0
old = termios.tcgetattr(fd)
tty.setraw(fd)
size = os.get_terminal_size(1)
rows, cols = size.lines, size.columns

def ask(q):
    os.write(1, q)
    got = b""
    end = time.monotonic() + 2
    while not re.search(rb"(\x1b\[[0-9;?>]*[cnRt]|\x1b\][^\x07\x1b]*(\x07|\x1b\\))$", got):
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        got += os.read(fd, 1024)
    return got

def verdict(name, got):
    if not got:
        return "TIMEOUT"
    if name == "CPR":
        return "at its own cursor 3;7" if got == b"\x1b[3;7R" else "not its cursor 3;7: %r" % got
    if name == "DA1":
        return "ESC[?...c" if re.fullmatch(rb"\x1b\[\?[0-9;]*c", got) else "bad: %r" % got
    if name == "DA2":
        return "ESC[>...c" if re.fullmatch(rb"\x1b\[>[0-9;]*c", got) else "bad: %r" % got
    if name == "DSR":
        return "ESC[0n" if got == b"\x1b[0n" else "bad: %r" % got
    if name == "18t":
        want = b"\x1b[8;%d;%dt" % (rows, cols)
        return "its own size" if got == want else "not its size %r: %r" % (want, got)
    n = name[3:].encode()
    rgb = rb"\x1b\]" + n + rb";rgb:[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}/[0-9a-fA-F]{1,4}(\x07|\x1b\\)"
    return "rgb:R/G/B" if re.fullmatch(rgb, got) else "bad: %r" % got

asked = [("CPR", b"\x1b[6n"), ("DA1", b"\x1b[c"), ("DA2", b"\x1b[>c"), ("DSR", b"\x1b[5n"),
         ("18t", b"\x1b[18t"), ("OSC10", b"\x1b]10;?\x1b\\"), ("OSC11", b"\x1b]11;?\x1b\\")]
lines = []
for name, q in asked:
    os.write(1, b"\x1b[3;7H")
    lines.append("%s: %s" % (name, verdict(name, ask(q))))
termios.tcsetattr(fd, termios.TCSADRAIN, old)
sys.stdout.write("\x1b[5;1H" + "\n".join(lines) + "\nDONE\n")
sys.stdout.flush()
"#;

/// The verdict `QUERIES` printed for `name`.
fn answer(c: &Capture, name: &str) -> String {
    let prefix = format!("{name}: ");
    c.text()
        .iter()
        .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim_end().to_string()))
        .unwrap_or_else(|| "<no line>".into())
}

#[test]
fn fidelity_queries_are_answered_as_tmux_answers_them() {
    if !have("python3") {
        return;
    }
    let Some(env) = twin_env() else { return };
    let script = program(&env, "queries.py", QUERIES.as_bytes());
    let twin = Twin::start(
        &env,
        24,
        80,
        &format!("python3 {}; exec sleep 600", script.display()),
    );
    // Seven questions at up to 2 s each.
    let (tmux, nerdr) = twin.wait_both("DONE", Duration::from_secs(40));
    let mut wrong = Vec::new();
    // The same as tmux: where a terminal has one right answer.
    for name in ["CPR", "DA1", "DA2", "DSR"] {
        let (t, n) = (answer(&tmux, name), answer(&nerdr, name));
        if t != n {
            wrong.push(format!("{name}: tmux {t:?}, nerdr {n:?}"));
        }
    }
    // tmux 3.3a answers 18t with columns and rows swapped, and OSC 10/11
    // only from an attached client's terminal: nerdr alone, against the
    // right answer.
    for (name, want) in [
        ("18t", "its own size"),
        ("OSC10", "rgb:R/G/B"),
        ("OSC11", "rgb:R/G/B"),
    ] {
        let n = answer(&nerdr, name);
        if n != want {
            wrong.push(format!("{name}: nerdr {n:?}, want {want:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "queries from a program in a nerdr tab (TIMEOUT: nothing answered within 2 s):\n  {}\n{}",
        wrong.join("\n  "),
        side_by_side(&tmux.text(), &nerdr.text(), &[])
    );
}

/// What every emulator draws alike: plain lines, the eight colours, bold
/// and underline, a cursor moved with CUP. The control: it passes on any
/// nerdr that shows text, so a failure of the others is about what they
/// test, not the comparison.
const PLAIN: &[u8] = b"plain line one\r\nline two with \x1b[1mbold\x1b[0m and \
\x1b[4munderline\x1b[0m\r\n\x1b[31mred\x1b[0m \x1b[32;44mgreen on blue\x1b[0m\r\n\
\x1b[10;20Hat row 10, column 20\x1b[12;5H";

#[test]
fn fidelity_control_plain_text_and_colours_match_tmux() {
    let Some(env) = twin_env() else { return };
    same_drawing(&env, "plain text and colours", PLAIN, 24, 80);
}

/// Every attribute a program may set, each on its own words, but overline
/// (SGR 53): the emulator (alacritty_terminal) keeps none, a known gap.
const STYLES: &[u8] = b"\x1b[2mdim\x1b[0m \x1b[9mstrike\x1b[0m \x1b[4mul\x1b[0m \
\x1b[4:1mul1\x1b[0m \x1b[4:2mdouble\x1b[0m \x1b[4:3mcurly\x1b[0m \x1b[4:4mdotted\x1b[0m \
\x1b[4:5mdashed\x1b[0m \x1b[21mul21\x1b[0m\r\n\
\x1b[4:3;58:2::255:0:0mcurly red\x1b[0m \x1b[4;58;5;33mul colour 33\x1b[0m \
\x1b[4:4;58:2::0:128:255mdotted rgb\x1b[0m \x1b[4mplain\x1b[59m ul no colour\x1b[0m\r\n\
\x1b[5mblink\x1b[0m \x1b[8mhidden\x1b[0m \x1b[7minverse\x1b[0m \x1b[3mitalic\x1b[0m \
\x1b[1;2mbold+dim\x1b[22mnone\x1b[0m \x1b[1mbold\x1b[0m\r\n\
\x1b[31mred\x1b[42mon green\x1b[0m \x1b[91mbright\x1b[104mon blue\x1b[0m \
\x1b[38;5;196mfg196\x1b[48;5;22mbg22\x1b[0m \x1b[38:5:46mfg46:\x1b[48:5:17mbg17:\x1b[0m\r\n\
\x1b[38;2;10;20;30mrgb;\x1b[48;2;200;190;180mbg rgb;\x1b[0m \
\x1b[38:2::200:100:50mrgb:\x1b[48:2::1:2:3mbg rgb:\x1b[0m \x1b[38:2:9:8:7mrgb:no-cs\x1b[0m\r\n\
\x1b[1;3;4;7;9;38;5;208;48;2;0;0;90mall at once\x1b[27m not inverse\x1b[23m not italic\
\x1b[24m\x1b[29m\x1b[39m\x1b[49m bold only\x1b[0m\r\n\
\x1b[44m\x1b[Kbackground to the end of the line\x1b[0m\r\n\
\x1b[7m      \x1b[0m trailing:\x1b[41m   \x1b[0m\r\n\
wide: \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82 combining: e\xcc\x81 \x1b[1m\xe4\xb8\xad\x1b[0m\r\n";

#[test]
fn fidelity_styles_reach_the_window_cell_for_cell() {
    let Some(env) = twin_env() else { return };
    same_drawing(&env, "styles", STYLES, 24, 100);
}

/// A box in DEC special graphics through G0, the whole set, and G1
/// through SO/SI.
const LINE_DRAWING: &[u8] = b"\x1b(0lqqqqqqk\x1b(B top\r\n\
\x1b(0x\x1b(B inside \x1b(0x\x1b(B\r\n\
\x1b(0tqqnqqqu\x1b(B\r\n\
\x1b(0mqqvqqqj\x1b(B after ESC(B: lqqk\r\n\
\x1b(0`abcdefghijklmnopqrstuvwxyz{|}~\x1b(B\r\n\
\x1b)0G1 ready \x0elqk\x0f shifted in \x0exqx\x0f \x0emqj\x0f back: lqk\r\n\
\x1b[1;4m\x1b(0lqwqk\x1b(B\x1b[0m styled graphics\r\n\
\x1b(0\x1b[2;30Hqqq\x1b(B moved then ASCII: qqq\r\n";

#[test]
fn fidelity_dec_line_drawing_is_drawn_as_tmux_draws_it() {
    let Some(env) = twin_env() else { return };
    same_drawing(&env, "line-drawing", LINE_DRAWING, 24, 80);
}

/// Tab stops set, cleared and moved over; REP, HPA, CHA, CNL/CPL; insert
/// and delete at the last column; wrap-around with a pending wrap; DECALN
/// underneath; then origin mode inside a scroll region, left on, so the
/// cursor's end position is relative to it.
const TABS_AND_ORIGIN: &[u8] = b"\x1b#8\
\x1b[2;1H\x1b[2K\x1b[3g\x1b[2;5H\x1bH\x1b[2;15H\x1bH\x1b[2;33H\x1bH\
\x1b[2;1H\tA\tB\tC\tD\
\x1b[3;1H\x1b[2K\x1b[2IX\x1b[ZY\x1b[3ZW\
\x1b[2;15H\x1b[0g\x1b[4;1H\x1b[2K\tP\tQ\
\x1b[5;1H\x1b[2K\x1b[3gno stops\tZ\
\x1b[6;1H\x1b[2Kr\x1b[5b \x1b[1;31m=\x1b[3b\x1b[0m\
\x1b[7;1H\x1b[2K\x1b[40`H40\x1b[10GG10\x1b[70`HPA70\
\x1b[8;1H\x1b[2Kcnl\x1b[2Eafter CNL 2\x1b[Fafter CPL 1\
\x1b[12;1H0123456789012345678901234567890123456789012345678901234567890123456789012345678Z\
\x1b[12;80H\x1b[@\
\x1b[13;1H0123456789012345678901234567890123456789012345678901234567890123456789012345678Z\
\x1b[13;80H\x1b[P\x1b[13;79H\x1b[3P\
\x1b[14;1H0123456789012345678901234567890123456789012345678901234567890123456789012345678Z\
\x1b[14;78H\x1b[5@\x1b[14;1H\x1b[4X\
\x1b[15;75Hwrap-around-text\
\x1b[17;1H0123456789012345678901234567890123456789012345678901234567890123456789012345678Z\rX\
\x1b[?7l\x1b[18;75Hno-wrap-here\x1b[?7h\
\x1b[20;23r\x1b[?6h\x1b[1;1Hregion top\x1b[2;1Hregion 2\x1b[9;1Hclamped\
\x1b[4;1H\x1b[2Kbottom\nscrolled\x1b[H\x1b[Lin\x1b[2;5H";

/// Row 14 of `TABS_AND_ORIGIN` before its edits.
const LONG: &str =
    "0123456789012345678901234567890123456789012345678901234567890123456789012345678Z";

/// Where tmux 3.3a draws `TABS_AND_ORIGIN` wrong, the rows a VT terminal
/// draws: it ignores CHT (`CSI 2 I`), so row 3 is W at the line's start
/// and Y on the second stop; and an ICH of 5 two columns before the right
/// margin leaves the line as it was, where the last three cells must go.
fn tmux_fixed(c: &mut Capture) {
    c.rows[2] = format!("W{}Y", " ".repeat(13));
    c.rows[13] = format!("    {}", &LONG[4..77]);
}

#[test]
fn fidelity_tab_stops_origin_mode_and_edge_cases_match_tmux() {
    let Some(env) = twin_env() else { return };
    let file = program(&env, "tabs-and-origin", TABS_AND_ORIGIN);
    let twin = Twin::start(
        &env,
        24,
        80,
        &format!("cat {}; exec sleep 600", file.display()),
    );
    twin.assert_like_within(
        "tab stops, origin mode and edge cases (rows 3 and 14 as a VT terminal draws them, \
         where tmux 3.3a is wrong)",
        Duration::from_secs(6),
        &tmux_fixed,
    );
}
