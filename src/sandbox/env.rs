//! The environment a sandboxed program gets: the caller's, cleaned of what
//! would let it act as the user elsewhere (provider keys, tokens, the ssh
//! agent, the user bus, the host's runtime dir). Pure: names in, verdicts
//! out.

use std::ffi::OsString;

/// Why a variable is kept or dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Keep,
    Drop(&'static str),
}

/// Variables that name the agent's own configuration or its own provider:
/// the agent had them before it was sandboxed and needs them to work.
fn own_prefixes(agent: &str) -> &'static [&'static str] {
    match agent {
        "claude" => &["CLAUDE_", "ANTHROPIC_"],
        "codex" => &["CODEX_", "OPENAI_"],
        "opencode" => &["OPENCODE_"],
        "gemini" => &["GEMINI_"],
        "copilot" => &["COPILOT_"],
        "cursor-agent" => &["CURSOR_"],
        "grok" => &["GROK_", "XAI_"],
        "agy" => &["ANTIGRAVITY_"],
        _ => &[],
    }
}

/// Reach outside the sandbox through a socket or a credential file.
const DROP_EXACT: &[(&str, &str)] = &[
    ("SSH_AUTH_SOCK", "the ssh agent"),
    ("SSH_AGENT_PID", "the ssh agent"),
    ("GPG_AGENT_INFO", "the gpg agent"),
    ("DBUS_SESSION_BUS_ADDRESS", "the user bus"),
    ("DBUS_SYSTEM_BUS_ADDRESS", "the system bus"),
    (
        "XDG_RUNTIME_DIR",
        "the host's runtime dir (hidden in the sandbox)",
    ),
    ("KRB5CCNAME", "a Kerberos ticket"),
    ("DOCKER_HOST", "the docker daemon"),
    ("KUBECONFIG", "a Kubernetes credential"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "a cloud credential"),
    ("NETRC", "a credential file"),
    ("GIT_ASKPASS", "a credential helper"),
    ("SSH_ASKPASS", "a credential helper"),
];

/// Cloud and forge credentials travel under these prefixes.
const DROP_PREFIX: &[&str] = &[
    "AWS_", "AZURE_", "GCP_", "GCLOUD_", "GH_", "GITHUB_", "GITLAB_", "HF_", "VAULT_",
];

/// Parts of a name that mark a secret, whatever the provider.
const DROP_PART: &[&str] = &[
    "API_KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE_KEY",
    "ACCESS_KEY",
    "SESSION",
    "_PWD",
    "_DSN",
    "DATABASE_URL",
];

/// The verdict for one variable name, for the agent named `agent`.
pub fn verdict(name: &str, agent: &str) -> Verdict {
    if name.starts_with("NERDR_") {
        return Verdict::Keep;
    }
    if own_prefixes(agent).iter().any(|p| name.starts_with(p)) {
        return Verdict::Keep;
    }
    if let Some((_, why)) = DROP_EXACT.iter().find(|(n, _)| *n == name) {
        return Verdict::Drop(why);
    }
    let upper = name.to_ascii_uppercase();
    if DROP_PREFIX.iter().any(|p| upper.starts_with(p)) {
        return Verdict::Drop("a cloud or forge credential");
    }
    if DROP_PART.iter().any(|p| upper.contains(p)) {
        return Verdict::Drop("looks like a secret");
    }
    Verdict::Keep
}

/// The variables to pass, in their original order. Names that are not
/// UTF-8 are dropped: no rule can vouch for them.
pub fn clean(vars: &[(OsString, OsString)], agent: &str) -> Vec<(OsString, OsString)> {
    vars.iter()
        .filter(|(k, _)| {
            k.to_str()
                .is_some_and(|k| verdict(k, agent) == Verdict::Keep)
        })
        .cloned()
        .collect()
}

/// The agent's name from its command: the file name of the first word.
pub fn agent_name(cmd: &[OsString]) -> String {
    cmd.first()
        .map(std::path::Path::new)
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_row() {
        let rows: &[(&str, &str, Verdict)] = &[
            // nerdr's own variables always pass
            ("NERDR_TAB", "claude", Verdict::Keep),
            ("NERDR_SOCKET", "", Verdict::Keep),
            ("NERDR_API_TOKEN", "", Verdict::Keep),
            // the agent's own variables pass, even its provider key
            ("ANTHROPIC_API_KEY", "claude", Verdict::Keep),
            ("CLAUDE_CONFIG_DIR", "claude", Verdict::Keep),
            ("OPENAI_API_KEY", "codex", Verdict::Keep),
            ("CODEX_HOME", "codex", Verdict::Keep),
            ("OPENCODE_CONFIG_CONTENT", "opencode", Verdict::Keep),
            ("XAI_API_KEY", "grok", Verdict::Keep),
            // another provider's key does not
            (
                "OPENAI_API_KEY",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "ANTHROPIC_API_KEY",
                "codex",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "ANTHROPIC_API_KEY",
                "my-agent",
                Verdict::Drop("looks like a secret"),
            ),
            // sockets and credential files
            ("SSH_AUTH_SOCK", "claude", Verdict::Drop("the ssh agent")),
            ("SSH_AGENT_PID", "claude", Verdict::Drop("the ssh agent")),
            ("GPG_AGENT_INFO", "claude", Verdict::Drop("the gpg agent")),
            (
                "DBUS_SESSION_BUS_ADDRESS",
                "claude",
                Verdict::Drop("the user bus"),
            ),
            (
                "DBUS_SYSTEM_BUS_ADDRESS",
                "claude",
                Verdict::Drop("the system bus"),
            ),
            (
                "XDG_RUNTIME_DIR",
                "claude",
                Verdict::Drop("the host's runtime dir (hidden in the sandbox)"),
            ),
            ("KRB5CCNAME", "claude", Verdict::Drop("a Kerberos ticket")),
            ("DOCKER_HOST", "claude", Verdict::Drop("the docker daemon")),
            (
                "KUBECONFIG",
                "claude",
                Verdict::Drop("a Kubernetes credential"),
            ),
            (
                "GOOGLE_APPLICATION_CREDENTIALS",
                "claude",
                Verdict::Drop("a cloud credential"),
            ),
            ("NETRC", "claude", Verdict::Drop("a credential file")),
            (
                "GIT_ASKPASS",
                "claude",
                Verdict::Drop("a credential helper"),
            ),
            (
                "SSH_ASKPASS",
                "claude",
                Verdict::Drop("a credential helper"),
            ),
            // cloud and forge prefixes
            (
                "AWS_PROFILE",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "AWS_SECRET_ACCESS_KEY",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "AZURE_CLIENT_ID",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "GCP_PROJECT",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "GCLOUD_PROJECT",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "GH_TOKEN",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "GITHUB_TOKEN",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "GITLAB_TOKEN",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "HF_TOKEN",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            (
                "VAULT_ADDR",
                "claude",
                Verdict::Drop("a cloud or forge credential"),
            ),
            // secret-looking names, any case
            (
                "STRIPE_API_KEY",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "MISTRAL_APIKEY",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            ("NPM_TOKEN", "claude", Verdict::Drop("looks like a secret")),
            (
                "OP_SESSION_my",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            ("BW_SESSION", "claude", Verdict::Drop("looks like a secret")),
            ("MYSQL_PWD", "claude", Verdict::Drop("looks like a secret")),
            ("SENTRY_DSN", "claude", Verdict::Drop("looks like a secret")),
            (
                "DATABASE_URL",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "npm_config__authToken",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "CLIENT_SECRET",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "DB_PASSWORD",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            ("FTP_PASSWD", "claude", Verdict::Drop("looks like a secret")),
            (
                "SERVICE_CREDENTIALS",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "SIGNING_PRIVATE_KEY",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            (
                "MINIO_ACCESS_KEY",
                "claude",
                Verdict::Drop("looks like a secret"),
            ),
            // what a program needs to run
            ("PATH", "claude", Verdict::Keep),
            ("HOME", "claude", Verdict::Keep),
            ("TERM", "claude", Verdict::Keep),
            ("COLORTERM", "claude", Verdict::Keep),
            ("LANG", "claude", Verdict::Keep),
            ("LC_ALL", "claude", Verdict::Keep),
            ("USER", "claude", Verdict::Keep),
            ("SHELL", "claude", Verdict::Keep),
            ("EDITOR", "claude", Verdict::Keep),
            ("TERM_PROGRAM", "claude", Verdict::Keep),
        ];
        for (name, agent, want) in rows {
            assert_eq!(verdict(name, agent), *want, "{name} for {agent:?}");
        }
    }

    #[test]
    fn clean_keeps_order_and_drops_non_utf8_names() {
        use std::os::unix::ffi::OsStringExt;
        let vars: Vec<(OsString, OsString)> = vec![
            ("PATH".into(), "/bin".into()),
            ("SSH_AUTH_SOCK".into(), "/run/x".into()),
            (OsString::from_vec(b"X\xff".to_vec()), "v".into()),
            ("NERDR_TAB".into(), "t".into()),
        ];
        let got = clean(&vars, "claude");
        assert_eq!(
            got,
            vec![
                ("PATH".into(), "/bin".into()),
                ("NERDR_TAB".into(), "t".into())
            ]
        );
    }

    #[test]
    fn the_agent_name_is_the_file_name_of_the_first_word() {
        assert_eq!(
            agent_name(&["/usr/local/bin/claude".into(), "-p".into()]),
            "claude"
        );
        assert_eq!(agent_name(&["codex".into()]), "codex");
        assert_eq!(agent_name(&[]), "");
    }
}
