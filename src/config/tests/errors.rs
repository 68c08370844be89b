//! Every way a config can be wrong, as text and the exact message: file,
//! line and column, the dotted key, what was found and what would be valid.

use std::path::Path;

use super::{AGENT_KEYS, BUILTINS, PATH};
use crate::config::parse;

#[test]
fn errors_name_file_line_column_key_and_what_is_valid() {
    let cases: &[(&str, &str, String)] = &[
        (
            "unknown top-level key",
            "agent = \"codex\"\n",
            format!("{PATH}:1:1: unknown key `agent` in the top-level table; valid keys: agents, client, hosts, notify, plugins, review, sandbox, tabs"),
        ),
        (
            "unknown [tabs] key",
            "[tabs]\nworktrees = false\n",
            format!("{PATH}:2:1: unknown key `worktrees` in [tabs]; valid keys: worktree"),
        ),
        (
            "unknown agent key lists the valid keys",
            "[agents.x]\ncommand = [\"x\"]\ncomand = [\"y\"]\n",
            format!("{PATH}:3:1: unknown key `comand` in [agents.x]; valid keys: {AGENT_KEYS}"),
        ),
        (
            "unknown client key",
            "[client]\nprefix = \"C-a\"\nmouse = true\n",
            format!("{PATH}:3:1: unknown key `mouse` in [client]; valid keys: prefix"),
        ),
        (
            "unknown plugins key",
            "[plugins]\ntimeout = 5\n",
            format!("{PATH}:2:1: unknown key `timeout` in [plugins]; valid keys: approval_timeout_secs"),
        ),
        (
            "plugin approval timeout out of range",
            "[plugins]\napproval_timeout_secs = 0\n",
            format!("{PATH}:2:1: `plugins.approval_timeout_secs` must be a whole number of seconds (1 to 86400), found an integer (0); for example: approval_timeout_secs = 120"),
        ),
        (
            "unknown sandbox key",
            "[sandbox]\ntimeout = 5\n",
            format!("{PATH}:2:1: unknown key `timeout` in [sandbox]; valid keys: ask_timeout_secs"),
        ),
        (
            "network question timeout too long",
            "[sandbox]\nask_timeout_secs = 601\n",
            format!("{PATH}:2:1: `sandbox.ask_timeout_secs` is 601 s, longer than a connection may wait; use at most 600"),
        ),
        (
            "unknown review key",
            "[review]\nagent = \"codex\"\nmodel = \"x\"\n",
            format!("{PATH}:3:1: unknown key `model` in [review]; valid keys: agent, args, automatic"),
        ),
        (
            "args given as a string",
            "[agents.claude]\nargs = \"x\"\n",
            format!("{PATH}:2:1: `agents.claude.args` must be an array of strings, found a string (\"x\"); for example: args = [\"--flag\", \"value\"]"),
        ),
        (
            "args holding a number",
            "[agents.claude]\nargs = [\"--model\", 3]\n",
            format!("{PATH}:2:1: `agents.claude.args` must be an array of strings, found an array holding an integer (3) at index 1; for example: args = [\"--flag\", \"value\"]"),
        ),
        (
            "sandboxed given as a string",
            "[agents.codex]\nsandboxed = \"yes\"\n",
            format!("{PATH}:2:1: `agents.codex.sandboxed` must be true or false, found a string (\"yes\"); for example: sandboxed = true"),
        ),
        (
            "agent given as a value, not a table",
            "agents.claude = \"opus\"\n",
            format!("{PATH}:1:8: `agents.claude` must be a table, found a string (\"opus\"); for example: [agents.claude]"),
        ),
        (
            "env given as a list",
            "[agents.claude]\nenv = [\"A=b\"]\n",
            format!("{PATH}:2:1: `agents.claude.env` must be a table of strings, found an array; for example: env = {{ NAME = \"value\" }}"),
        ),
        (
            "env value given as a number",
            "[agents.claude]\nenv = { PORT = 8080 }\n",
            format!("{PATH}:2:9: `agents.claude.env.PORT` must be a string, found an integer (8080); for example: PORT = \"text\""),
        ),
        (
            "prefix given as a date-time",
            "[client]\nprefix = 1979-05-27\n",
            format!("{PATH}:2:1: `client.prefix` must be a string, found a date-time (1979-05-27); for example: prefix = \"text\""),
        ),
        (
            "reserved NERDR_ env key, column counted",
            "[agents.claude]\nenv = { FOO = \"1\", NERDR_TAB = \"x\" }\n",
            format!("{PATH}:2:20: `agents.claude.env.NERDR_TAB` sets `NERDR_TAB`, but NERDR_* and HERDR_* variables are reserved: nerdr sets them for every agent; remove it or use another name"),
        ),
        (
            "reserved HERDR_ env key in an env table",
            "[agents.claude.env]\nHERDR_SOCKET = \"/x\"\n",
            format!("{PATH}:2:1: `agents.claude.env.HERDR_SOCKET` sets `HERDR_SOCKET`, but NERDR_* and HERDR_* variables are reserved: nerdr sets them for every agent; remove it or use another name"),
        ),
        (
            "env name with `=`",
            "[agents.claude]\nenv = { \"A=B\" = \"x\" }\n",
            format!("{PATH}:2:9: `agents.claude.env.\"A=B\"` is not a usable environment variable name; use letters, digits and `_`, without `=`"),
        ),
        (
            "NUL in an argument",
            "[agents.claude]\nargs = [\"a\\u0000b\"]\n",
            format!("{PATH}:2:1: `agents.claude.args` contains a NUL character (\\u0000); remove it: a NUL byte cannot be passed to a program"),
        ),
        (
            "agent name with a space",
            "[agents.\"my agent\"]\ncommand = [\"x\"]\n",
            format!("{PATH}:1:9: agent name \"my agent\" may only contain letters, digits, `-` and `_` (it becomes part of unit names and command lines); rename it, e.g. [agents.my-agent]"),
        ),
        (
            "agent name with a dot",
            "[agents.\"a.b\"]\ncommand = [\"x\"]\n",
            format!("{PATH}:1:9: agent name \"a.b\" may only contain letters, digits, `-` and `_` (it becomes part of unit names and command lines); rename it, e.g. [agents.a-b]"),
        ),
        (
            "custom agent without command",
            "[agents.my-agent]\nargs = [\"-v\"]\n",
            format!("{PATH}:1:9: [agents.my-agent] is not a built-in agent ({BUILTINS}), so it needs a `command`; add one, e.g. command = [\"my-agent\"]"),
        ),
        (
            "empty command",
            "[agents.claude]\ncommand = []\n",
            format!("{PATH}:2:1: `agents.claude.command` must start with the program to run; e.g. command = [\"claude\"], or a wrapper such as [\"nerdr\", \"sandbox\", \"--\", \"claude\"]"),
        ),
        (
            "config_model on claude",
            "[agents.claude]\nconfig_model = \"anthropic/claude-sonnet\"\n",
            format!("{PATH}:2:1: `agents.claude.config_model` is only valid for opencode (it is merged into OPENCODE_CONFIG_CONTENT); remove it, or pass the model to `claude` in `args`"),
        ),
        (
            "config_model on a custom agent",
            "[agents.amp]\ncommand = [\"amp\"]\nconfig_model = \"m\"\n",
            format!("{PATH}:3:1: `agents.amp.config_model` is only valid for opencode (it is merged into OPENCODE_CONFIG_CONTENT); remove it, or pass the model to `amp` in `args`"),
        ),
        (
            "program on a built-in",
            "[agents.claude]\nprogram = \"claude\"\n",
            format!("{PATH}:2:1: `agents.claude.program` is only for custom agents: nerdr already knows the program of the built-in `claude`; remove it, or define a custom agent under another name with its own `command`"),
        ),
        (
            "program that no word of the command runs",
            "[agents.sbsh]\nprogram = \"zsh\"\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\n",
            format!("{PATH}:2:1: `agents.sbsh.program` is \"zsh\", but no word of `command` [\"nerdr\", \"sandbox\", \"--\", \"bash\"] runs a program of that name; set it to the program the command runs, e.g. program = \"bash\""),
        ),
        (
            "program that no word runs, the command ending in an option",
            "[agents.sbsh]\nprogram = \"zsh\"\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\", \"--norc\"]\n",
            format!("{PATH}:2:1: `agents.sbsh.program` is \"zsh\", but no word of `command` [\"nerdr\", \"sandbox\", \"--\", \"bash\", \"--norc\"] runs a program of that name; set it to the program the command runs, e.g. program = \"bash\" ([\"--norc\"] are its arguments: move them from `command` to `args`, e.g. args = [\"--norc\"])"),
        ),
        (
            "program given as a path",
            "[agents.sbsh]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"/bin/bash\"]\nprogram = \"/bin/bash\"\n",
            format!("{PATH}:3:1: `agents.sbsh.program` is a path; write the file name alone: program = \"bash\""),
        ),
        (
            "empty program",
            "[agents.sbsh]\ncommand = [\"bash\"]\nprogram = \"\"\n",
            format!("{PATH}:3:1: `agents.sbsh.program` is empty; give it a value or remove the key"),
        ),
        (
            "resume_args on a built-in",
            "[agents.codex]\nresume_args = [\"resume\"]\n",
            format!("{PATH}:2:1: `agents.codex.resume_args` is only for custom agents: nerdr already knows how to resume the built-in `codex`; remove it, or define a custom agent under another name with its own `command`"),
        ),
        (
            "detect on a built-in",
            "[agents.gemini]\ndetect = \"claude\"\n",
            format!("{PATH}:2:1: `agents.gemini.detect` is only for custom agents: nerdr already recognises the built-in `gemini`; remove it, or define a custom agent under another name with its own `command`"),
        ),
        (
            "empty detect",
            "[agents.amp]\ncommand = [\"amp\"]\ndetect = \"\"\n",
            format!("{PATH}:3:1: `agents.amp.detect` is empty; give it a value or remove the key"),
        ),
        (
            "prefix not a control key",
            "[client]\nprefix = \"Ctrl-b\"\n",
            format!("{PATH}:2:1: `client.prefix` is \"Ctrl-b\", which is not a control key; write C-<letter>, e.g. prefix = \"C-a\""),
        ),
        (
            "prefix with a digit",
            "[client]\nprefix = \"C-1\"\n",
            format!("{PATH}:2:1: `client.prefix` is \"C-1\", which is not a control key; write C-<letter>, e.g. prefix = \"C-a\""),
        ),
        (
            "review names an unknown agent",
            "[review]\nagent = \"nope\"\n",
            format!("{PATH}:2:1: `review.agent` names `nope`, which is neither built in nor under [agents]; use a built-in ({BUILTINS}) or add [agents.nope] with a `command`"),
        ),
        (
            "review args as one list for every agent",
            "[review]\nargs = [\"--full-auto\"]\n",
            format!("{PATH}:2:1: `review.args` is an array, but it takes the words per reviewing agent; write a table with one key per agent, e.g. [review.args] then codex = [\"--full-auto\"]"),
        ),
        (
            "review args for an unknown agent",
            "[review]\nagent = \"codex\"\n[review.args]\ncodex = [\"-q\"]\nnope = [\"x\"]\n",
            format!("{PATH}:5:1: `review.args.nope` names `nope`, which is neither built in nor under [agents]; use a built-in ({BUILTINS}) or add [agents.nope] with a `command`"),
        ),
        (
            "review args for an agent that are not words",
            "[review.args]\ncodex = \"--full-auto\"\n",
            format!("{PATH}:2:1: `review.args.codex` must be an array of strings, found a string (\"--full-auto\"); for example: codex = [\"--flag\", \"value\"]"),
        ),
        (
            "review automatic not a boolean",
            "[review]\nautomatic = \"yes\"\n",
            format!("{PATH}:2:1: `review.automatic` must be true or false, found a string (\"yes\"); for example: automatic = true"),
        ),
        (
            "review agent empty",
            "[review]\nagent = \"\"\n",
            format!("{PATH}:2:1: `review.agent` is empty; give it a value or remove the key"),
        ),
        (
            "unclosed array",
            "[agents.claude]\nargs = [\n",
            format!("{PATH}:2:9: not valid TOML: invalid array; expected `]`; fix the syntax (see https://toml.io)"),
        ),
        (
            "missing comma inside an array",
            "[agents.claude]\nargs = [\"--model\" \"opus\"]\n",
            format!("{PATH}:2:19: not valid TOML: invalid array; expected `]`; fix the syntax (see https://toml.io)"),
        ),
        (
            "bare word as a value",
            "[client]\nprefix = C-a\n",
            format!("{PATH}:2:10: not valid TOML: invalid string; expected `\"`, `'`; fix the syntax (see https://toml.io)"),
        ),
        (
            "duplicate key",
            "[agents.claude]\nsandboxed = true\nsandboxed = false\n",
            format!("{PATH}:3:1: not valid TOML: duplicate key `sandboxed` in table `agents.claude`; fix the syntax (see https://toml.io)"),
        ),
        (
            "columns count characters, not bytes",
            "# café\n[agents.claude]\n  env = { \"é\" = \"x\", NERDR_X = \"y\" }\n",
            format!("{PATH}:3:22: `agents.claude.env.NERDR_X` sets `NERDR_X`, but NERDR_* and HERDR_* variables are reserved: nerdr sets them for every agent; remove it or use another name"),
        ),
        (
            "CRLF line endings",
            "[agents.claude]\r\n\r\n    args = 1\r\n",
            format!("{PATH}:3:5: `agents.claude.args` must be an array of strings, found an integer (1); for example: args = [\"--flag\", \"value\"]"),
        ),
        (
            "install neither home nor worktree",
            "[agents.claude]\ninstall = \"repo\"\n",
            format!("{PATH}:2:1: `agents.claude.install` is \"repo\", which is neither \"home\" nor \"worktree\"; write install = \"home\" (the agent's settings in your home, the default) or install = \"worktree\" (each tab's worktree)"),
        ),
        (
            "install given as a boolean",
            "[agents.claude]\ninstall = true\n",
            format!("{PATH}:2:1: `agents.claude.install` must be a string, found a boolean (true); for example: install = \"text\""),
        ),
        (
            "data_dir leaving the worktree",
            "[agents.claude]\ninstall = \"worktree\"\ndata_dir = \"x/../../up\"\n",
            format!("{PATH}:3:1: `agents.claude.data_dir` is \"x/../../up\", which leaves the worktree (`..`); name a folder inside the worktree, e.g. data_dir = \".nerdr\""),
        ),
        (
            "data_dir absolute",
            "[agents.claude]\ninstall = \"worktree\"\ndata_dir = \"/tmp/n\"\n",
            format!("{PATH}:3:1: `agents.claude.data_dir` is \"/tmp/n\", an absolute path; name a folder inside the worktree, e.g. data_dir = \".nerdr\""),
        ),
        (
            "data_dir in .git",
            "[agents.claude]\ninstall = \"worktree\"\ndata_dir = \"./.git/nerdr\"\n",
            format!("{PATH}:3:1: `agents.claude.data_dir` is \"./.git/nerdr\", inside git's own folder; name a folder inside the worktree, e.g. data_dir = \".nerdr\""),
        ),
        (
            "data_dir the worktree itself",
            "[agents.claude]\ninstall = \"worktree\"\ndata_dir = \"./\"\n",
            format!("{PATH}:3:1: `agents.claude.data_dir` is \"./\", which is the worktree itself; name a folder inside the worktree, e.g. data_dir = \".nerdr\""),
        ),
        (
            "data_dir without a worktree install, install coming after it",
            "[agents.claude]\ndata_dir = \".nerdr\"\ninstall = \"home\"\n",
            format!("{PATH}:2:1: `agents.claude.data_dir` is set, but only a worktree install has a data folder; add install = \"worktree\", or remove data_dir"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, want) in cases {
        match parse(text, Path::new(PATH)) {
            Ok(config) => failures.push(format!("{name}: parsed, want error\n  got  {config:?}")),
            Err(e) if e.to_string() != *want => {
                failures.push(format!("{name}:\n  want {want}\n  got  {e}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
