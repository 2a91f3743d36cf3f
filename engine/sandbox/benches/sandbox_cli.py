#!/usr/bin/env python3
"""`sixfold sandbox run|check` as a whole process against `/bin/true` and bubblewrap: interleaved
runs, wall clock and CPU (user + system, of the process and its children).

Usage: python3 engine/sandbox/benches/sandbox_cli.py [RUNS] (after `cargo build --release -p
sixfold-cli`). Prints a Markdown table (median wall, p90 wall, min wall, median CPU). Figures:
docs/performance.md ("the sandbox").

The workspaces: `ws` has every protected path, `fresh` none (each run makes placeholders), and
`many` has 20,000 files in 1,000 nested directories, where a step's cost would grow with the
tree if the walk for `**/` secrets and new repositories read it every time (it reads only what
changed since the last run; the tree is left to settle for the walk's cache first).
"""
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# `$SIXFOLD_BIN`, else the release binary under `$CARGO_TARGET_DIR`, else under the repository.
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../target")
BINARY = os.environ.get("SIXFOLD_BIN") or os.path.join(TARGET, "release/sixfold")


def hook_line(env: dict, cwd: str) -> list:
    """The command line the hook writes for `true` in `workspace-write` (`sixfold judge` answers as
    the hook does), with `true` run directly instead of through `bash -c`."""
    judged = subprocess.run([BINARY, "judge", "--no-project", "--mode", "workspace-write", "--tool", "Bash",
                             "--input", json.dumps({"command": "true"})],
                            cwd=cwd, env=env, capture_output=True, check=True, text=True)
    words = shlex.split(json.loads(judged.stdout)["updated_input"]["command"])
    return words[:words.index("--") + 1] + ["true"]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    with tempfile.TemporaryDirectory() as scratch:
        ws, fresh = os.path.join(scratch, "ws"), os.path.join(scratch, "fresh")
        many = os.path.join(scratch, "many")
        for d in ["ws/.git/hooks", "ws/.sixfold", "ws/.claude", "ws/.codex", "fresh", "tmp", "cache", "state",
                  "many/.git/hooks"]:
            os.makedirs(os.path.join(scratch, d))
        for w in [ws, many]:
            open(os.path.join(w, ".git/config"), "w").close()
        with open(os.path.join(ws, ".mcp.json"), "w") as f:
            f.write('{"mcpServers": {}}')
        for i in range(1000):
            d = os.path.join(many, "src", f"m{i // 100}", f"n{(i // 10) % 10}", f"o{i % 10}")
            os.makedirs(d)
            for k in range(20):
                open(os.path.join(d, f"f{k}.rs"), "w").close()
        # The walk's cache trusts a directory only once it has not changed for two seconds.
        time.sleep(2.5)
        env = dict(os.environ, TMPDIR=os.path.join(scratch, "tmp"), XDG_CACHE_HOME=os.path.join(scratch, "cache"),
                   XDG_STATE_HOME=os.path.join(scratch, "state"))
        run = [BINARY, "sandbox", "run", "--no-project", "--mode"]
        subprocess.run(run + ["workspace-write", "--", "true"], cwd=ws, env=env, stdout=subprocess.DEVNULL, check=True)
        cases = [
            ("`/bin/true`", ["/bin/true"], ws),
            ("`sandbox run --mode full -- true`", run + ["full", "--", "true"], ws),
            ("`sandbox run --mode workspace-write -- true`, cached, protected paths present",
             run + ["workspace-write", "--", "true"], ws),
            ("the same in a fresh workspace (placeholders)", run + ["workspace-write", "--", "true"], fresh),
            ("the same as the hook writes it (`--proof`: the environment read from the proof, no bundle)",
             hook_line(env, ws), ws),
            ("the same, `--proof`, fresh workspace", hook_line(env, fresh), fresh),
            ("the same, `--proof`, 20,000 files in 1,000 directories", hook_line(env, many), many),
            ("`sandbox check --mode workspace-write`",
             [BINARY, "sandbox", "check", "--no-project", "--mode", "workspace-write"], ws),
        ]
        if shutil.which("bwrap"):
            cases.insert(1, ("`bwrap --ro-bind / / --dev /dev --unshare-all /bin/true`",
                             ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "/bin/true"], ws))
        times = {name: [] for name, _, _ in cases}
        cpu = {name: [] for name, _, _ in cases}
        for _, argv, cwd in cases:
            subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
        for _ in range(runs):
            for name, argv, cwd in cases:
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, check=True)
                times[name].append((time.perf_counter() - start) * 1000)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append((after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000)
        print("| | median | p90 | min | CPU (median) |\n|---|---|---|---|---|")
        for name, values in times.items():
            values.sort()
            p90 = values[int(len(values) * 0.9)]
            print(f"| {name} | {statistics.median(values):.2f} ms | {p90:.2f} ms | {values[0]:.2f} ms "
                  f"| {statistics.median(cpu[name]):.2f} ms |")


if __name__ == "__main__":
    main()
