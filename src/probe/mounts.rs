//! nerdr's folders mounted at other paths. A wrapper may bind the runtime
//! dir, `$HOME` or `/` itself at a second path (`--bind $XDG_RUNTIME_DIR
//! /mnt/run`), where the probe, looking only at the usual paths, would not
//! see them. The core notes where each target lies in its filesystem (the
//! mount's device and the path inside it); the probe, from its own mount
//! table, lists every mount of that device whose root is the target or one
//! of its ancestors, and tries the target at each such path too. Pure: the
//! mount tables come in as text.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where a file lies: the device (`major:minor`, as the mount table says
/// it) and its path inside that filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spot {
    pub dev: String,
    pub root: PathBuf,
}

/// One line of `/proc/self/mountinfo`: which part (`root`) of which
/// filesystem (`dev`) is mounted where (`point`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub dev: String,
    pub root: PathBuf,
    pub point: PathBuf,
}

/// The mounts of a `mountinfo` text, in its order (later ones mounted
/// later, on top). Lines that do not parse are skipped.
pub fn parse(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let (_id, _parent) = (f.next()?, f.next()?);
            let dev = f.next()?.to_string();
            let root = unescape(f.next()?);
            let point = unescape(f.next()?);
            dev.contains(':').then_some(Mount {
                dev,
                root: root.into(),
                point: point.into(),
            })
        })
        .collect()
}

/// mountinfo writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where `path` (absolute, symlinks resolved) lies, by the mount it is
/// under: the deepest mount point above it, the last mounted if several.
pub fn spot(mounts: &[Mount], path: &Path) -> Option<Spot> {
    let m = mounts
        .iter()
        .enumerate()
        .filter(|(_, m)| path.starts_with(&m.point))
        .max_by_key(|(i, m)| (m.point.components().count(), *i))?
        .1;
    let rest = path.strip_prefix(&m.point).ok()?;
    Some(Spot {
        dev: m.dev.clone(),
        root: if rest.as_os_str().is_empty() {
            m.root.clone()
        } else {
            m.root.join(rest)
        },
    })
}

/// Every other path at which the file at `spot` shows in `mounts`: under
/// each mount of its device whose root is the file or above it. `usual`
/// itself is left out. What is really there is for the probe to check by
/// identity (a later mount may cover it).
pub fn aliases(mounts: &[Mount], spot: &Spot, usual: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = mounts
        .iter()
        .filter(|m| m.dev == spot.dev)
        .filter_map(|m| {
            let rest = spot.root.strip_prefix(&m.root).ok()?;
            Some(if rest.as_os_str().is_empty() {
                m.point.clone()
            } else {
                m.point.join(rest)
            })
        })
        .filter(|p| p != usual)
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "\
22 1 0:21 / / rw,relatime shared:1 - overlay overlay rw
23 22 0:22 / /proc rw shared:2 - proc proc rw
30 22 0:40 / /run/user/1000 rw shared:9 - tmpfs tmpfs rw
31 22 0:21 /srv/my\\040home /home/u rw shared:1 - overlay overlay rw
";

    /// Inside a sandbox: the root read-only, a tmpfs over the runtime dir,
    /// the runtime dir again at /mnt/run, the user's home at /mnt/h, the
    /// nerdr folder alone at /x, and another filesystem at /other.
    const SANDBOX: &str = "\
100 99 0:21 / / ro,relatime - overlay overlay rw
101 100 0:50 / /run/user/1000 rw - tmpfs tmpfs rw
102 100 0:40 / /mnt/run rw - tmpfs tmpfs rw
103 100 0:21 /srv/my\\040home /mnt/h rw - overlay overlay rw
104 100 0:40 /nerdr /x rw - tmpfs tmpfs rw
105 100 0:41 / /other rw - tmpfs tmpfs rw
106 100 0:40 /nerdr/sub /y rw - tmpfs tmpfs rw
";

    fn spot_of(path: &str) -> Spot {
        spot(&parse(HOST), Path::new(path)).unwrap()
    }

    #[test]
    fn where_each_path_lies() {
        let rows: &[(&str, &str, &str)] = &[
            ("/etc/passwd", "0:21", "/etc/passwd"),
            ("/", "0:21", "/"),
            ("/run/user/1000", "0:40", "/"),
            ("/run/user/1000/nerdr/key", "0:40", "/nerdr/key"),
            // A bind mount of part of a filesystem, with an escaped space.
            (
                "/home/u/.config/nerdr",
                "0:21",
                "/srv/my home/.config/nerdr",
            ),
            ("/run/user/10000", "0:21", "/run/user/10000"),
        ];
        for (path, dev, root) in rows {
            assert_eq!(
                spot_of(path),
                Spot {
                    dev: dev.to_string(),
                    root: root.into()
                },
                "{path}"
            );
        }
        assert_eq!(spot(&[], Path::new("/a")), None);
    }

    #[test]
    fn the_other_paths_of_each_target() {
        let inside = parse(SANDBOX);
        let rows: &[(&str, &[&str])] = &[
            // The runtime dir: hidden by a tmpfs at its own path, shown at
            // /mnt/run; the nerdr folder also alone at /x; /y (a part of
            // it) is not the folder itself.
            ("/run/user/1000/nerdr", &["/mnt/run/nerdr", "/x"]),
            (
                "/run/user/1000/nerdr/key",
                &["/mnt/run/nerdr/key", "/x/key"],
            ),
            ("/run/user/1000", &["/mnt/run"]),
            // The config folder, under the root and under the home's bind.
            (
                "/home/u/.config/nerdr",
                &["/mnt/h/.config/nerdr", "/srv/my home/.config/nerdr"],
            ),
            // Under the root filesystem only where it always is.
            ("/etc/passwd", &[]),
        ];
        for (path, want) in rows {
            let got = aliases(&inside, &spot_of(path), Path::new(path));
            let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
            assert_eq!(got, want, "{path}");
        }
    }
}
