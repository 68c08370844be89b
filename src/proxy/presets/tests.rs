use super::*;

#[test]
fn url_hosts_are_read_with_their_scheme_ports() {
    #[rustfmt::skip]
    let table: &[(&str, Option<(&str, u16)>)] = &[
        ("https://index.crates.io/", Some(("index.crates.io", 443))),
        ("sparse+https://Mirror.Example.com/index/", Some(("mirror.example.com", 443))),
        ("registry+https://github.com/rust-lang/crates.io-index", Some(("github.com", 443))),
        ("ssh://git@git.example.com:2222/reg.git", Some(("git.example.com", 2222))),
        ("http://10.0.0.5:3141/root/pypi/+simple/", Some(("10.0.0.5", 3141))),
        ("http://[fd00::5]/debian", Some(("fd00::5", 80))),
        ("https://user:pw@pkgs.example.com/simple", Some(("pkgs.example.com", 443))),
        ("\"https://quoted.example.com\"", Some(("quoted.example.com", 443))),
        ("file:///srv/mirror", None),
        ("cdrom:[Debian]/", None),
        ("not a url", None),
        ("https://example.com:notaport/", None),
    ];
    for (url, want) in table {
        let got = url_host(url);
        assert_eq!(got.as_ref().map(|(h, p)| (h.as_str(), *p)), *want, "{url}");
    }
}

#[test]
fn cargo_registries_and_source_replacement() {
    let text = r#"
[registries.company]
index = "sparse+https://cargo.company.test/index/"
[registries.other]
index = "ssh://git@git.company.test/index.git"
[source.crates-io]
replace-with = "mirror"
[source.mirror]
registry = "sparse+https://mirror.company.test/"
[source.vendored]
directory = "vendor"
[registry]
index = "https://legacy.company.test/index"
[build]
jobs = 2
"#;
    let mut urls = cargo_urls(text).unwrap();
    urls.sort();
    assert_eq!(
        urls,
        [
            "https://legacy.company.test/index",
            "sparse+https://cargo.company.test/index/",
            "sparse+https://mirror.company.test/",
            "ssh://git@git.company.test/index.git",
        ]
    );
    assert!(cargo_urls("[registries\nx").is_err());
}

#[test]
fn pip_conf_urls_with_continuation_lines() {
    let text = "[global]\nindex-url = https://pypi.company.test/simple\nextra-index-url =\n    https://extra1.test/simple\n    https://extra2.test/simple\ntimeout = 60\n    https://not-a-url-key.test\n[install]\nfind_links: https://links.test/\n# index-url = https://commented.test\n";
    assert_eq!(
        pip_urls(text),
        [
            "https://pypi.company.test/simple",
            "https://extra1.test/simple",
            "https://extra2.test/simple",
            "https://links.test/",
        ]
    );
}

#[test]
fn npmrc_registries() {
    let text = "registry=https://npm.company.test/\n@corp:registry = https://corp.npm.test/\n//npm.company.test/:_authToken=secret\nstrict-ssl=false\n";
    assert_eq!(
        npmrc_urls(text),
        ["https://npm.company.test/", "https://corp.npm.test/"]
    );
}

#[test]
fn apt_sources_in_both_styles() {
    let list = "deb http://deb.debian.org/debian bookworm main\n# deb http://commented.test/ x y\ndeb [arch=amd64 signed-by=/k.gpg] https://download.docker.test/linux/debian bookworm stable\ndeb-src [ trusted=yes ] http://src.test/debian x main\ndeb cdrom:[Debian]/ bookworm main\n";
    assert_eq!(
        apt_list_urls(list),
        [
            "http://deb.debian.org/debian",
            "https://download.docker.test/linux/debian",
            "http://src.test/debian",
            "cdrom:[Debian]/"
        ]
    );
    let sources = "Types: deb\nURIs: http://deb.debian.org/debian http://mirror2.test/debian\nSuites: bookworm\n\nTypes: deb\n# URIs: http://commented.test/\nURIs: https://security.test/debian-security\n";
    assert_eq!(
        apt_sources_urls(sources),
        [
            "http://deb.debian.org/debian",
            "http://mirror2.test/debian",
            "https://security.test/debian-security"
        ]
    );
}

#[test]
fn derive_merges_defaults_files_env_and_user_entries() {
    let configs = [
        ConfigText { manager: Manager::Cargo, path: "~/.cargo/config.toml".into(), text: "[source.m]\nregistry = \"sparse+https://mirror.test/\"\n".into() },
        ConfigText { manager: Manager::Cargo, path: "bad.toml".into(), text: "[x".into() },
        ConfigText { manager: Manager::AptList, path: "/etc/apt/sources.list".into(), text: "deb http://deb.debian.org/debian bookworm main\ndeb http://deb.debian.org/debian bookworm-updates main\n".into() },
        ConfigText { manager: Manager::Npm, path: "~/.npmrc".into(), text: "registry=https://npm.test/\n".into() },
    ];
    let env = [
        (
            "PIP_INDEX_URL".to_string(),
            "https://pip.test/simple".to_string(),
        ),
        ("UNRELATED".to_string(), "https://no.test/".to_string()),
    ];
    let (hosts, warnings) = derive(
        &configs,
        &env,
        &["downloads.example.com".to_string(), "bad entry".to_string()],
    );
    let got: Vec<(String, String)> = hosts
        .iter()
        .map(|h| (h.entry.text.clone(), h.source.clone()))
        .collect();
    let has = |text: &str, source: &str| got.contains(&(text.to_string(), source.to_string()));
    assert!(has("index.crates.io:443", "cargo default"), "{got:?}");
    assert!(has("pypi.org:443", "pip default"));
    assert!(has("registry.npmjs.org:443", "npm default"));
    assert!(has("mirror.test:443", "~/.cargo/config.toml"));
    assert!(has("deb.debian.org:80", "/etc/apt/sources.list"));
    assert!(has("npm.test:443", "~/.npmrc"));
    assert!(has("pip.test:443", "$PIP_INDEX_URL"));
    assert!(has("downloads.example.com", "user preset"));
    assert!(
        !got.iter().any(|(t, _)| t.starts_with("no.test")),
        "unrelated variables are not read"
    );
    assert_eq!(
        got.iter().filter(|(t, _)| t == "deb.debian.org:80").count(),
        1,
        "duplicates are merged"
    );
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("bad.toml"), "{warnings:?}");
    assert!(warnings[1].contains("\"bad entry\""), "{warnings:?}");
}
