//! Config booleans as git reads them, so a value git takes as "on" is
//! never read as "off" here.

/// A config value as git reads a boolean: true/yes/on, false/no/off and
/// the empty string (any case), or an integer (C syntax: `0x10`, `010`,
/// a sign) with an optional k/m/g unit, true when not zero. A bare key
/// (None) is true. Some(..) only where git would agree; None where git
/// would die on the value.
pub fn is_true(v: Option<&str>) -> Option<bool> {
    let Some(v) = v else { return Some(true) };
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" => return Some(true),
        "false" | "no" | "off" | "" => return Some(false),
        _ => {}
    }
    parse_int(v).map(|n| n != 0)
}

/// git_parse_int: strtoimax with base 0 (leading blanks, a sign, 0x hex,
/// 0 octal), then one optional unit letter; beyond an int's range (with
/// the unit) is an error.
fn parse_int(v: &str) -> Option<i128> {
    let t = v.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = t.to_ascii_lowercase();
    let (radix, digits) = match lower.strip_prefix("0x") {
        Some(h) if h.starts_with(|c: char| c.is_ascii_hexdigit()) => (16, h),
        _ if lower.starts_with('0') => (8, &lower[..]),
        _ => (10, &lower[..]),
    };
    let end = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let n = i128::from_str_radix(&digits[..end], radix).ok()?;
    let factor: i128 = match &digits[end..] {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    let n = n.checked_mul(factor)?;
    if n > i128::from(i32::MAX) {
        return None;
    }
    Some(if neg { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_parse_as_git_parses_them() {
        let rows: &[(Option<&str>, Option<bool>)] = &[
            (None, Some(true)),
            (Some("TRUE"), Some(true)),
            (Some("Yes"), Some(true)),
            (Some("on"), Some(true)),
            (Some("off"), Some(false)),
            (Some(""), Some(false)),
            (Some("1"), Some(true)),
            (Some("2"), Some(true)),
            (Some("0"), Some(false)),
            (Some("-0"), Some(false)),
            (Some("1k"), Some(true)),
            (Some("0G"), Some(false)),
            (Some("0x0"), Some(false)),
            (Some("0x1f"), Some(true)),
            (Some("08"), None),
            (Some("1kb"), None),
            (Some("0x"), None),
            (Some("99999999999999999999"), None),
            (Some("1g"), Some(true)),
            // Past an int: git fails on it.
            (Some("2g"), None),
            (Some("2147483648"), None),
            (Some("nope"), None),
        ];
        for (v, want) in rows {
            assert_eq!(is_true(*v), *want, "{v:?}");
        }
    }
}
