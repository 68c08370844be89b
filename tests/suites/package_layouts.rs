//! The other packages' layouts against the .deb's: the RPM's file list
//! (`rpm -qlp`), and the paths the Arch PKGBUILD and the Homebrew formula
//! install, which this machine can only check for syntax and layout.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::packages::{build_deb, have, need, PACKAGING, ROOT};
use crate::support::sysenv::{must_test, skip, NERDR_BIN};

/// The files a .deb installs, as absolute paths.
fn deb_files(deb: &Path) -> Vec<String> {
    let o = Command::new("dpkg-deb")
        .arg("-c")
        .arg(deb)
        .output()
        .unwrap();
    assert!(o.status.success(), "dpkg-deb -c: {o:?}");
    let mut files: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| !l.starts_with('d'))
        .filter_map(|l| l.split_whitespace().last())
        .map(|p| p.trim_start_matches('.').to_string())
        .collect();
    files.sort();
    files
}

/// The RPM installs exactly the .deb's files (but Debian's copyright file),
/// as `rpm -qlp` lists them.
#[test]
fn the_rpm_has_the_debs_layout() {
    if !need(
        &["cargo-deb", "dpkg-deb", "cargo-generate-rpm", "rpm"],
        "`cargo install cargo-deb cargo-generate-rpm --locked`; `apt-get install rpm`",
    ) {
        return;
    }
    let out = tempfile::Builder::new()
        .prefix("rpm")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let deb = build_deb(out.path());
    let rpm = {
        let _one = PACKAGING.lock().unwrap_or_else(|e| e.into_inner());
        let bin = Path::new(NERDR_BIN);
        let o = Command::new(format!("{ROOT}/packaging/rpm.sh"))
            .args(["--profile", "dev", "--no-build", "-o"])
            .arg(out.path())
            .env("CARGO_TARGET_DIR", bin.parent().unwrap().parent().unwrap())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "rpm.sh: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let o = Command::new("rpm").arg("-qlp").arg(&rpm).output().unwrap();
    assert!(o.status.success(), "rpm -qlp: {o:?}");
    let mut rpm_files: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    rpm_files.sort();
    let want: Vec<String> = deb_files(&deb)
        .into_iter()
        .filter(|f| f != "/usr/share/doc/nerdr/copyright")
        .collect();
    assert_eq!(rpm_files, want);
    assert!(want.contains(&"/usr/share/man/man1/nerdr-agent.1.gz".to_string()));
    let o = Command::new("rpm")
        .args(["-qp", "--recommends"])
        .arg(&rpm)
        .output()
        .unwrap();
    let recommends = String::from_utf8_lossy(&o.stdout);
    assert!(
        recommends.contains("bubblewrap") && recommends.contains("git"),
        "{recommends}"
    );
}

/// packaging/PKGBUILD and packaging/nerdr.rb cannot be built here (no
/// makepkg, no macOS): their syntax is checked, the PKGBUILD's package()
/// is run for real into a temporary pkgdir, and the paths both install are
/// compared with the .deb's. The differences allowed are each system's own
/// directories, listed below.
#[test]
fn the_pkgbuild_and_the_formula_install_the_debs_paths() {
    if !need(
        &["cargo-deb", "dpkg-deb"],
        "`cargo install cargo-deb --locked`",
    ) {
        return;
    }
    let out = tempfile::Builder::new()
        .prefix("arch")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let deb = build_deb(out.path());
    let deb: Vec<String> = deb_files(&deb)
        .into_iter()
        .filter(|f| f != "/usr/share/doc/nerdr/copyright")
        .collect();

    // PKGBUILD: syntax, then package() with $srcdir/gen the generated files.
    let pkgbuild = format!("{ROOT}/packaging/PKGBUILD");
    let o = Command::new("bash")
        .args(["-n", &pkgbuild])
        .output()
        .unwrap();
    assert!(o.status.success(), "bash -n PKGBUILD: {o:?}");
    let src = out.path().join("src");
    let pkg = out.path().join("pkg");
    std::fs::create_dir_all(&src).unwrap();
    let gen = src.join("gen");
    {
        let _one = PACKAGING.lock().unwrap_or_else(|e| e.into_inner());
        let o = Command::new(format!("{ROOT}/packaging/generate.sh"))
            .arg(NERDR_BIN)
            .arg(&gen)
            .output()
            .unwrap();
        assert!(o.status.success(), "generate.sh: {o:?}");
    }
    let o = Command::new("bash")
        .args(["-euc", "source \"$1\"; package", "pkgbuild", &pkgbuild])
        .env("srcdir", &src)
        .env("pkgdir", &pkg)
        .env("startdir", format!("{ROOT}/packaging"))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "PKGBUILD package(): {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut arch = Vec::new();
    let mut stack = vec![pkg.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e.path().strip_prefix(&pkg).unwrap().display().to_string();
                arch.push(format!("/{rel}"));
            }
        }
    }
    arch.sort();
    // Arch's zsh reads /usr/share/zsh/site-functions, Debian's
    // vendor-completions.
    let as_debian: Vec<String> = arch
        .iter()
        .map(|f| {
            f.replace(
                "/usr/share/zsh/site-functions/",
                "/usr/share/zsh/vendor-completions/",
            )
        })
        .collect();
    assert_eq!(
        as_debian, deb,
        "the PKGBUILD installs other paths than the .deb"
    );

    // The formula: syntax where ruby exists, then each install line's
    // Homebrew directory, as it maps onto the .deb's (under /usr, which is
    // Homebrew's prefix), must hold the same files.
    let formula_path = format!("{ROOT}/packaging/nerdr.rb");
    if have("ruby") {
        let o = Command::new("ruby")
            .args(["-c", &formula_path])
            .output()
            .unwrap();
        assert!(o.status.success(), "ruby -c nerdr.rb: {o:?}");
    } else {
        let why = "ruby is not installed: packaging/nerdr.rb's syntax is NOT checked (apt-get install ruby)";
        if must_test() {
            panic!("{why}");
        }
        skip(why);
    }
    let formula = std::fs::read_to_string(&formula_path).unwrap();
    // Homebrew's helper, the file it installs, and where the .deb has it.
    // The units are not installed by the formula: macOS runs the launchd
    // agent `nerdr service install` writes.
    let table: &[(&str, &str, &str)] = &[
        (
            "system \"cargo\", \"install\"",
            "std_cargo_args",
            "/usr/bin/nerdr",
        ),
        (
            "bash_completion.install",
            "completions/nerdr\"",
            "/usr/share/bash-completion/completions/nerdr",
        ),
        (
            "zsh_completion.install",
            "completions/_nerdr\"",
            "/usr/share/zsh/vendor-completions/_nerdr",
        ),
        (
            "fish_completion.install",
            "completions/nerdr.fish\"",
            "/usr/share/fish/vendor_completions.d/nerdr.fish",
        ),
        (
            "man1.install",
            "man/*.1.gz",
            "/usr/share/man/man1/nerdr.1.gz",
        ),
        (
            "doc.install",
            "\"README.md\", \"SECURITY.md\"",
            "/usr/share/doc/nerdr/README.md",
        ),
    ];
    for (helper, what, deb_path) in table {
        let line = formula
            .lines()
            .find(|l| l.contains(helper))
            .unwrap_or_else(|| panic!("the formula has no `{helper}` line"));
        assert!(line.contains(what), "{helper}: {line}");
        assert!(
            deb.contains(&deb_path.to_string()),
            "{deb_path} not in the .deb"
        );
    }
    let brew_dirs: Vec<&str> = deb
        .iter()
        .filter(|f| !f.starts_with("/usr/lib/systemd/user/"))
        .map(|f| f.rsplit_once('/').unwrap().0)
        .collect();
    for dir in brew_dirs {
        assert!(
            table
                .iter()
                .any(|(_, _, p)| p.starts_with(&format!("{dir}/"))),
            "the .deb installs into {dir}, which the formula does not"
        );
    }
}
