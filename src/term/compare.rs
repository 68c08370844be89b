//! Which emulator: alacritty_terminal (behind `term::Screen`) against vt100
//! 0.15 and avt (asciinema's), measured in one run:
//!
//! `cargo test --release --bin nerdr term::compare -- --ignored --nocapture`
//!
//! Throughput over a generated ~20 MB stream of what tabs show (shell
//! output with colours, a full-screen program's redraws, boxes, wide
//! characters), and the bytes an idle 40×120 screen keeps allocated,
//! counted by this thread's allocations. The completeness table printed
//! last is read from each crate's source (vt100 0.15, avt 0.19,
//! alacritty_terminal 0.26); "layer" is what `emulator` adds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

use super::testgen::Rng;
use super::Screen;

/// Counts the bytes this thread has allocated and not freed.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|l| l.set(l.get() + delta));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        count(new as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn live() -> isize {
    LIVE.with(|l| l.get())
}

/// Bytes still allocated by what `make` returns.
fn kept<T>(make: impl FnOnce() -> T) -> (isize, T) {
    let before = live();
    let t = make();
    (live() - before, t)
}

const ROWS: u16 = 40;
const COLS: u16 = 120;

/// About `size` bytes of what tabs show, valid UTF-8 (avt takes text).
fn workload(size: usize) -> String {
    let mut rng = Rng::new(17);
    let mut s = String::with_capacity(size + 4096);
    let words = [
        "src/main.rs",
        "cargo",
        "build",
        "error:",
        "warning",
        "ok",
        "│",
        "中文",
        "→",
    ];
    while s.len() < size {
        match rng.below(3) {
            // Shell output: coloured lines that scroll.
            0 => {
                for _ in 0..20 {
                    for _ in 0..1 + rng.below(12) {
                        let w = words[rng.below(words.len() as u64) as usize];
                        s.push_str(&format!("\x1b[{}m{w}\x1b[0m ", 31 + rng.below(7)));
                    }
                    s.push_str("\r\n");
                }
            }
            // A full-screen program's redraw: every row placed and styled.
            1 => {
                s.push_str("\x1b[?2026h\x1b[H");
                for r in 1..=ROWS {
                    s.push_str(&format!(
                        "\x1b[{r};1H\x1b[38;2;{};{};200m\x1b[48;5;{}m",
                        rng.below(256),
                        r,
                        rng.below(256)
                    ));
                    for _ in 0..COLS / 10 {
                        s.push_str(words[rng.below(words.len() as u64) as usize]);
                        s.push(' ');
                    }
                    s.push_str("\x1b[K");
                }
                s.push_str("\x1b[m\x1b[?2026l");
            }
            // Boxes and cursor moves.
            _ => {
                s.push_str("\x1b(0lqqqqqqqqk\x1b(B");
                for _ in 0..10 {
                    let (r, c) = (1 + rng.below(ROWS as u64), 1 + rng.below(COLS as u64));
                    s.push_str(&format!("\x1b[{r};{c}H\x1b[1;4mx\x1b[A\x1b[2Cy\x1b[m"));
                }
            }
        }
    }
    s
}

fn mb_per_s(bytes: usize, secs: f64) -> f64 {
    bytes as f64 / secs / 1e6
}

/// One screenful of a shell session, what an idle tab holds.
fn idle_screen() -> String {
    let mut s = String::new();
    for i in 0..38 {
        s.push_str(&format!(
            "\x1b[32m$\x1b[m ls -l file{i}\r\n-rw-r--r-- 1 me me {i} Dec 2 x\r\n"
        ));
    }
    s.push_str("$ ");
    s
}

#[test]
#[ignore = "a measurement: run with --release --ignored --nocapture"]
fn emulators() {
    let stream = workload(20_000_000);
    let n = stream.len();
    let chunks: Vec<&[u8]> = stream.as_bytes().chunks(4096).collect();

    let t = Instant::now();
    let mut ours = Screen::new(ROWS, COLS);
    for c in &chunks {
        ours.process(c);
        ours.take_replies();
    }
    let alacritty = mb_per_s(n, t.elapsed().as_secs_f64());

    let t = Instant::now();
    let mut v = vt100::Parser::new(ROWS, COLS, 0);
    for c in &chunks {
        v.process(c);
    }
    let vt100 = mb_per_s(n, t.elapsed().as_secs_f64());

    // avt takes text: cut at character boundaries.
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < n {
        let mut end = (at + 4096).min(n);
        while !stream.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&stream[at..end]);
        at = end;
    }
    let t = Instant::now();
    let mut a = avt::Terminal::new(COLS as usize, ROWS as usize).unwrap();
    for p in &pieces {
        a.feed(*p);
    }
    let avt = mb_per_s(n, t.elapsed().as_secs_f64());

    // The frame a window paints from, after each burst.
    let t = Instant::now();
    let mut frames = 0;
    let mut before = ours.frame();
    let mut painted = 0;
    for c in chunks.iter().take(2000) {
        ours.process(c);
        let now = ours.frame();
        painted += super::paint(&now, Some(&before)).len();
        before = now;
        frames += 1;
    }
    let per_frame = t.elapsed().as_secs_f64() / frames as f64 * 1e6;

    let idle = idle_screen();
    let (ours_live, mut s) = kept(|| {
        let mut s = Screen::new(ROWS, COLS);
        s.process(idle.as_bytes());
        s
    });
    let before = live();
    s.compact();
    let ours_compact = ours_live + (live() - before);
    let (vt100_bytes, _v) = kept(|| {
        let mut p = vt100::Parser::new(ROWS, COLS, 0);
        p.process(idle.as_bytes());
        p
    });
    let (avt_bytes, _a) = kept(|| {
        let mut t = avt::Terminal::new(COLS as usize, ROWS as usize).unwrap();
        t.feed(idle.as_str());
        t
    });

    println!(
        "stream: {:.1} MB in 4 KiB reads; screen {ROWS}x{COLS}",
        n as f64 / 1e6
    );
    println!("| emulator                      | MB/s   | bytes per idle screen |");
    println!("|-------------------------------|--------|-----------------------|");
    println!("| alacritty_terminal (Screen)   | {alacritty:6.1} | {ours_live:21} |");
    println!("|   ... after Screen::compact() |        | {ours_compact:21} |");
    println!("| vt100 0.15                    | {vt100:6.1} | {vt100_bytes:21} |");
    println!("| avt 0.19                      | {avt:6.1} | {avt_bytes:21} |");
    println!(
        "frame+paint per 4 KiB burst: {per_frame:.1} µs ({} bytes painted on average)",
        painted / frames
    );
    println!("snapshot of the idle screen: {} bytes", s.snapshot().len());
    println!("| feature                               | alacritty | vt100 | avt |");
    println!("|---------------------------------------|-----------|-------|-----|");
    for (f, x, y, z) in [
        ("underline styles 4:2..4:5, 21", "yes", "no", "no"),
        ("underline colour 58", "yes", "no", "no"),
        ("dim, strikethrough, hidden", "yes", "dim: no", "yes"),
        ("blink", "layer", "no", "yes"),
        ("overline 53", "no", "no", "no"),
        ("combining marks", "yes", "yes", "no"),
        ("DEC special graphics, SO/SI", "yes", "no", "yes"),
        ("tab stops HTS/TBC/CHT/CBT", "yes", "no", "yes"),
        ("origin mode, DECALN, REP", "yes", "no", "yes"),
        ("47/1047/1049 alternate screens", "1049+layer", "yes", "yes"),
        (
            "mouse 1000/2/3/6, 1004, 2004, DECCKM",
            "yes",
            "no 1004",
            "no",
        ),
        ("queries DA/DSR/CPR/18t/OSC 4,10,11", "yes", "no", "no"),
        ("cursor shape DECSCUSR", "yes", "no", "no"),
    ] {
        println!("| {f:37} | {x:9} | {y:5} | {z:3} |");
    }
}
