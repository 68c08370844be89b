//! The colours a program asking (OSC 4/10/11) is told: xterm's defaults,
//! light grey on black, since the person's own terminal is not asked.

use alacritty_terminal::vte::ansi::Rgb;

/// Cell size in pixels for `CSI 14 t`, as a common 8×16 font.
pub const CELL_WIDTH: usize = 8;
pub const CELL_HEIGHT: usize = 16;

const FOREGROUND: usize = 256;
const BACKGROUND: usize = 257;
const CURSOR: usize = 258;

const ANSI: [u32; 16] = [
    0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd, 0x00cdcd, 0xe5e5e5, 0x7f7f7f,
    0xff0000, 0x00ff00, 0xffff00, 0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff,
];

fn rgb(v: u32) -> Rgb {
    Rgb {
        r: (v >> 16) as u8,
        g: (v >> 8) as u8,
        b: v as u8,
    }
}

/// xterm's colour for a palette index (0..=255), or the default
/// foreground, background and cursor (256, 257, 258).
pub fn color(index: usize) -> Option<Rgb> {
    const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];
    Some(match index {
        0..=15 => rgb(ANSI[index]),
        16..=231 => {
            let i = index - 16;
            Rgb {
                r: CUBE[i / 36],
                g: CUBE[(i / 6) % 6],
                b: CUBE[i % 6],
            }
        }
        232..=255 => {
            let v = (8 + 10 * (index - 232)) as u8;
            Rgb { r: v, g: v, b: v }
        }
        FOREGROUND | CURSOR => rgb(ANSI[7]),
        BACKGROUND => rgb(ANSI[0]),
        _ => return None,
    })
}
