#!/usr/bin/env python3
"""`nerdr search` over a large history: 10,000 generated conversation logs
(`--files`), shaped as claude 2.1 and codex 0.171 write them, against
ripgrep and grep over the same files, in one run. Prints figures and
ratios; asserts nothing about time.

The corpus (60% claude, 40% codex, last written over the past year):
- claude: `~/.claude/projects/<folder>/<session>.jsonl`, one JSON object
  a line: queue operations, the person's requests, assistant text and
  `tool_use` lines, `tool_result` lines whose output claude also copies
  into `toolUseResult` (most of a real log's bytes), attachments;
- codex: `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`: a
  `session_meta` line with codex's instructions (about 15 KB), developer and
  environment messages, the person's requests, `output_text` answers,
  `function_call`s and their output, encrypted reasoning, and the
  `event_msg` lines that repeat the conversation;
- sizes: turns per conversation and tool outputs per turn drawn from
  log-normal laws (a few huge logs, most small); see `--scale`.
Words planted at known rates: `periwinkle` in the requests of 3
conversations, `zircon` in the messages of 1% and in the tool output of 2%
more (which a search of what was said must not count), `quasar` in 3%.

Measured, each `--runs` (5) times after one warm-up run (so with the logs
in the page cache, as on a machine whose history is searched), process
start to exit:
  nerdr    `nerdr search QUERY --limit 10`: client, core, scan, ranking;
  rg       `rg -i -l -F -e WORD... DIRS` (ripgrep: files holding any word);
  grep     `grep -r -i -l -F -e WORD... DIRS`.
The peers only list files whose bytes hold a word; nerdr also reads the
matching lines as messages (tool calls and output left out), counts and
ranks. The last query (`the`) is the worst case: a word in every file, so
every message line of every log is parsed.

Everything runs under a fresh temporary root (HOME, XDG dirs, no systemd:
the client starts the core), removed at the end; the
core and holder are stopped with `nerdr quit` and by the PIDs they
recorded. Stdlib only, plus `rg` and `grep` on PATH.

    cargo build --release
    python3 bench/search.py [--bin target/release/nerdr] [--files 10000] [--runs 5]
"""

import argparse
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_states import Failure, Nerdr, run  # noqa: E402

WORDS = ("the of and to in is that for it with as on be this are by or from at "
         "function test file error parser lexer module build config value return "
         "struct impl fn let match string path folder branch commit review tab agent "
         "session worktree change line check output input result type name data "
         "request answer cargo npm python rust write read open close start stop "
         "index cache fast slow memory thread lock queue server client socket").split()


def pool(rng, size):
    """A long text of random words and a few code-ish bits, to slice."""
    out, n = [], 0
    while n < size:
        w = rng.choice(WORDS)
        if rng.random() < 0.08:
            w = f"{w}_{rng.randrange(1000)}"
        if rng.random() < 0.05:
            w += ".\n"
        out.append(w)
        n += len(w) + 1
    return " ".join(out)


class Text:
    def __init__(self, rng):
        self.rng = rng
        self.pool = pool(rng, 4 << 20)

    def take(self, n):
        n = max(1, min(int(n), len(self.pool) - 1))
        at = self.rng.randrange(len(self.pool) - n)
        return self.pool[at:at + n]

    def lognormal(self, median, sigma, cap):
        return min(cap, self.rng.lognormvariate(math.log(median), sigma))


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t))


def dumps(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":"))


def claude_log(tx, sid, cwd, t0, plant, scale):
    rng, lines, t = tx.rng, [], t0
    common = {"isSidechain": False, "userType": "external", "entrypoint": "cli", "cwd": cwd,
              "sessionId": sid, "version": "2.1.197", "gitBranch": "main"}
    turns = max(1, int(tx.lognormal(6 * scale, 0.9, 400)))
    parent = None
    for turn in range(turns):
        asked = tx.take(rng.randrange(40, 400))
        if turn == 0 and plant.get("request"):
            asked = f"{asked} {plant['request']} {tx.take(60)}"
        t += rng.randrange(5, 600)
        lines.append({"type": "queue-operation", "operation": "enqueue", "timestamp": iso(t),
                      "sessionId": sid, "content": asked})
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines.append({"parentUuid": parent, **common, "type": "user",
                      "message": {"role": "user", "content": asked}, "uuid": uid,
                      "timestamp": iso(t), "permissionMode": "default"})
        parent = uid
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
            tool = f"toolu_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
            cmd = f"cargo test {tx.take(30)}"
            lines.append({"parentUuid": parent, **common, "type": "assistant",
                          "message": {"model": "claude-opus-4", "id": f"msg_{tool[6:]}",
                                      "role": "assistant",
                                      "content": [{"type": "tool_use", "id": tool, "name": "Bash",
                                                   "input": {"command": cmd}}],
                                      "usage": {"input_tokens": 3, "output_tokens": 90}},
                          "uuid": str(uuid.UUID(int=rng.getrandbits(128))), "timestamp": iso(t)})
            out = tx.take(tx.lognormal(1500 * scale, 1.3, 200_000))
            if plant.get("tool"):
                out = f"{out} {plant['tool']} {tx.take(40)}"
            lines.append({"parentUuid": parent, **common, "type": "user",
                          "message": {"role": "user", "content": [
                              {"type": "tool_result", "tool_use_id": tool, "content": out}]},
                          "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False},
                          "uuid": str(uuid.UUID(int=rng.getrandbits(128))), "timestamp": iso(t)})
        answer = tx.take(rng.randrange(80, 1500))
        if plant.get("answer") and turn == turns - 1:
            answer = f"{answer} {plant['answer']} {tx.take(80)}"
        lines.append({"parentUuid": parent, **common, "type": "assistant",
                      "message": {"model": "claude-opus-4", "id": f"msg_{turn}", "role": "assistant",
                                  "content": [{"type": "text", "text": answer}],
                                  "usage": {"input_tokens": 3, "output_tokens": 200}},
                      "uuid": str(uuid.UUID(int=rng.getrandbits(128))), "timestamp": iso(t)})
        if rng.random() < 0.3:
            lines.append({"parentUuid": parent, **common, "type": "attachment",
                          "attachment": {"type": "skill_listing", "content": tx.take(800)},
                          "timestamp": iso(t)})
    return "".join(dumps(line) + "\n" for line in lines), t


def codex_log(tx, sid, cwd, t0, plant, scale, instructions):
    rng, t = tx.rng, t0
    lines = [{"timestamp": iso(t), "type": "session_meta",
              "payload": {"session_id": sid, "id": sid, "timestamp": iso(t), "cwd": cwd,
                          "originator": "codex-tui", "cli_version": "0.171.0", "source": "cli",
                          "model_provider": "openai", "base_instructions": {"text": instructions}}}]

    def item(payload):
        lines.append({"timestamp": iso(t), "type": "response_item", "payload": payload})

    def event(payload):
        lines.append({"timestamp": iso(t), "type": "event_msg", "payload": payload})

    item({"type": "message", "role": "developer",
          "content": [{"type": "input_text", "text": "<permissions instructions>" + tx.take(2000)}]})
    item({"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n"
                                        "  <shell>bash</shell>\n</environment_context>"}]})
    turns = max(1, int(tx.lognormal(5 * scale, 0.9, 400)))
    for turn in range(turns):
        t += rng.randrange(5, 600)
        asked = tx.take(rng.randrange(40, 400))
        if turn == 0 and plant.get("request"):
            asked = f"{asked} {plant['request']} {tx.take(60)}"
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": asked}]})
        event({"type": "user_message", "message": asked, "images": []})
        for _ in range(rng.choice([0, 1, 1, 2, 3, 4])):
            item({"type": "reasoning", "summary": [],
                  "encrypted_content": "gAAAAA" + uuid.UUID(int=rng.getrandbits(128)).hex * 40})
            call = f"call_{uuid.UUID(int=rng.getrandbits(128)).hex[:24]}"
            item({"type": "function_call", "name": "exec_command", "call_id": call,
                  "arguments": dumps({"cmd": f"rg {tx.take(30)}"})})
            out = tx.take(tx.lognormal(1500 * scale, 1.3, 200_000))
            if plant.get("tool"):
                out = f"{out} {plant['tool']} {tx.take(40)}"
            item({"type": "function_call_output", "call_id": call, "output": out})
        answer = tx.take(rng.randrange(80, 1500))
        if plant.get("answer") and turn == turns - 1:
            answer = f"{answer} {plant['answer']} {tx.take(80)}"
        item({"type": "message", "role": "assistant",
              "content": [{"type": "output_text", "text": answer}]})
        event({"type": "agent_message", "message": answer})
        event({"type": "token_count", "info": {"total_token_usage": {"input_tokens": 9000}}})
    return "".join(dumps(line) + "\n" for line in lines), t


def corpus(home, files, scale, seed):
    """Write the logs; their count, bytes and how many hold each planted word."""
    rng = random.Random(seed)
    tx = Text(rng)
    instructions = tx.take(15_000)
    now = time.time()
    folders = [f"/home/u/src/proj{i}" for i in range(40)]
    rare = set(rng.sample(range(files), 3))
    total = 0
    for i in range(files):
        plant = {}
        if i in rare:
            plant["request"] = "periwinkle"
        r = rng.random()
        if r < 0.01:
            plant["answer"] = "zircon"
        elif r < 0.03:
            plant["tool"] = "zircon"
        if rng.random() < 0.03:
            plant["request"] = (plant.get("request", "") + " quasar").strip()
        cwd = rng.choice(folders)
        t0 = now - rng.uniform(0, 365 * 86400)
        sid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        if i % 5 < 3:
            text, t = claude_log(tx, sid, cwd, t0, plant, scale)
            d = home / ".claude/projects" / "".join(c if c.isalnum() else "-" for c in cwd)
            path = d / f"{sid}.jsonl"
        else:
            text, t = codex_log(tx, sid, cwd, t0, plant, scale, instructions)
            day = time.strftime("%Y/%m/%d", time.gmtime(t0))
            stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(t0))
            path = home / ".codex/sessions" / day / f"rollout-{stamp}-{sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = text.encode()
        path.write_bytes(data)
        total += len(data)
        t = min(t, now)
        os.utime(path, (t, t))
        if (i + 1) % 1000 == 0:
            print(f"  {i + 1} logs, {total / 1e6:.0f} MB", file=sys.stderr)
    return total


def timed(argv, env, cwd, ok=(0,)):
    start = time.perf_counter()
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    if p.returncode not in ok:
        raise Failure(f"`{' '.join(map(str, argv))}` failed ({p.returncode}): {p.stderr.strip()}")
    return took, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("NERDR_BENCH_BIN", "target/release/nerdr"))
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiplies turns and tool output sizes (1: about 100 KB a log)")
    ap.add_argument("--seed", type=int, default=20)
    args = ap.parse_args()
    if not Path(args.bin).exists():
        sys.exit(f"no {args.bin}: run `cargo build --release` first, or pass --bin")
    for tool in ("rg", "grep"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not on PATH: the bench compares against it")

    n = Nerdr(args.bin)
    home = Path(n.env["HOME"])
    try:
        print(f"writing {args.files} logs under {home} ...", file=sys.stderr)
        start = time.perf_counter()
        size = corpus(home, args.files, args.scale, args.seed)
        print(f"  done in {time.perf_counter() - start:.0f}s", file=sys.stderr)
        dirs = [str(home / ".claude/projects"), str(home / ".codex/sessions")]
        queries = [
            ("a rare word", ["periwinkle"]),
            ("a word in 3% (1% said, 2% tool output)", ["zircon"]),
            ("two words", ["zircon", "quasar"]),
            ("a word in every log (worst case)", ["the"]),
        ]
        results = []
        for label, words in queries:
            nerdr = [n.bin, "search", *words, "--limit", "10", "--json"]
            pattern = [a for w in words for a in ("-e", w)]
            rg = ["rg", "-i", "-l", "-F", *pattern, *dirs]
            grep = ["grep", "-r", "-i", "-l", "-F", *pattern, *dirs]
            _, out = timed(nerdr, n.env, n.work)  # warm-up (and the core's start)
            found = json.loads(out)
            _, listed = timed(rg, n.env, n.work, ok=(0, 1))
            timed(grep, n.env, n.work, ok=(0, 1))
            times = {"nerdr": [], "rg": [], "grep": []}
            for _ in range(args.runs):
                times["nerdr"].append(timed(nerdr, n.env, n.work)[0])
                times["rg"].append(timed(rg, n.env, n.work, ok=(0, 1))[0])
                times["grep"].append(timed(grep, n.env, n.work, ok=(0, 1))[0])
            results.append((label, words, found["total"], len(listed.splitlines()), times))

        load = os.getloadavg()
        rg_v = run(["rg", "--version"], n.env, n.work).splitlines()[0]
        grep_v = run(["grep", "--version"], n.env, n.work).splitlines()[0]
        print(f"\nnerdr {run([n.bin, '--version'], n.env, n.work).strip()}, {rg_v}, {grep_v}, "
              f"{platform.machine()}, {os.cpu_count()} CPUs, "
              f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        print(f"{args.files} logs, {size / 1e6:.0f} MB ({size / args.files / 1e3:.0f} KB a log), "
              f"page cache warm; median of {args.runs} runs, ms\n")
        print(f"{'query':42} {'nerdr hits':>10} {'rg files':>9} "
              f"{'nerdr':>8} {'rg':>8} {'grep':>8} {'nerdr/rg':>9} {'nerdr/grep':>11}")
        for label, words, hits, files, times in results:
            med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
            print(f"{label:42} {hits:>10} {files:>9} {med['nerdr']:8.0f} {med['rg']:8.0f} "
                  f"{med['grep']:8.0f} {med['nerdr'] / med['rg']:8.2f}x "
                  f"{med['nerdr'] / med['grep']:10.2f}x")
        print("\nnerdr hits: conversations whose messages hold a word (ranked); rg files: "
              "files whose bytes do (tool output too)")
    finally:
        n.stop()


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        sys.exit(f"search bench failed: {e}")
