//! Sizes as a person reads them, in the limits nerdr names when it
//! refuses something too large. A leaf module: the wire (`protocol`) and
//! the spinoffs both name limits with it.

/// `bytes` for a person: in KiB or MiB, rounded up, so a size just over a
/// limit never reads as the limit.
pub fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 20 => format!(
            "{:.1} MiB",
            (b as f64 * 10.0 / f64::from(1 << 20)).ceil() / 10.0
        ),
        b if b >= 1 << 10 => format!("{} KiB", b.div_ceil(1 << 10)),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::size;

    #[test]
    fn sizes_read_rounded_up() {
        for (bytes, said) in [
            (0, "0 bytes"),
            (1023, "1023 bytes"),
            (1024, "1 KiB"),
            (1025, "2 KiB"),
            (256 << 10, "256 KiB"),
            ((256 << 10) + 1, "257 KiB"),
            (1 << 20, "1 MiB"),
            ((1 << 20) + 1, "1.1 MiB"),
            (3 << 20, "3 MiB"),
            ((5 << 20) / 2, "2.5 MiB"),
        ] {
            assert_eq!(size(bytes), said, "{bytes}");
        }
    }
}
