#!/usr/bin/env python3
"""Writes engine/cli/startup.order: the functions of the sixfold binary that `--version` and a
hook call run (with the sandbox and without, with a project mode of a thousand rules and with a
thousand kept rules), in the
order they first run. The sandbox's line is left out: under valgrind it cannot make its
namespaces, and ordering did not move it (docs/performance.md).

The build script hands the file to the linker (LLD's --symbol-ordering-file), which puts those
functions first in the binary's code, side by side: a hook call then faults in fewer pages of a
19 MB text segment (docs/performance.md, "Code order"). A name the build no longer has is
ignored, so a stale file costs only its gain; run this again after a toolchain or dependency
update, or a change to what a hook call runs.

    cargo build --release -p sixfold-cli
    python3 engine/cli/startup-order.py target/release/sixfold

Needs valgrind (callgrind names every function a run executes, where sampling misses the short
ones that still fault a page in).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "startup.order")


def executed(profile, binary):
    """Mangled names of the functions of `binary` a callgrind profile saw run, first seen first."""
    objects, names, current, seen = {}, {}, None, []
    for line in open(profile, errors="replace"):
        m = re.match(r"^(ob|cob|fn|cfn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if not m:
            continue
        kind, ident, name = m.groups()
        if kind in ("ob", "cob"):
            if name:
                objects[ident] = name
            if kind == "ob":
                current = objects.get(ident)
        else:
            if name:
                names[ident] = name
            fn = names.get(ident)
            # Valgrind's own names ("(below main)") and bare addresses are not symbols.
            if kind == "fn" and fn and current == binary and not fn.startswith(("0x", "(")):
                seen.append(fn)
    return seen


def main():
    if len(sys.argv) != 2 or shutil.which("valgrind") is None:
        sys.exit("usage: startup-order.py BINARY (a release build; needs valgrind)")
    binary = os.path.realpath(sys.argv[1])
    work = tempfile.mkdtemp(prefix="sixfold-order-")
    env = dict(
        os.environ,
        XDG_STATE_HOME=os.path.join(work, "state"),
        XDG_CACHE_HOME=os.path.join(work, "cache"),
        TMPDIR=os.path.join(work, "tmp"),
    )
    os.makedirs(env["TMPDIR"])
    fresh, rules, kept = (os.path.join(work, name) for name in ("fresh", "rules", "kept"))
    for project in (fresh, rules, kept):
        os.makedirs(os.path.join(project, ".git"))
        subprocess.run([binary, "mode", "set", "workspace-write"], cwd=project, env=env, check=True, capture_output=True)
    def write(project, relative, text):
        path = os.path.join(project, ".sixfold", relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)

    # A project mode of a thousand rules of place globs, as the process bench makes it.
    write(rules, "modes/bench.toml", 'id = "bench"\nextends = "workspace-write"\nenvironment = "workspace-write"\n' + "".join(
        f'\n[[rules]]\nid = "r{i}"\ndecision = "refuse"\nreason = "generated"\nwhen.writes = ["/some/glob/{i}/**"]\n'
        for i in range(1000)))
    subprocess.run([binary, "mode", "set", "bench"], cwd=rules, env=env, check=True, capture_output=True)
    # A thousand kept command rules, as `sixfold rules add` keeps them and the process bench makes them.
    write(kept, "policies/kept.toml", 'id = "kept"\n' + "".join(
        f'\n[[acts]]\nid = "kept-{i}"\ndecision = "allow"\ncommand = "tool-{i} run"\n' for i in range(1000)))

    def event(project):
        return json.dumps({"hook_event_name": "PreToolUse", "session_id": "order", "cwd": project,
                           "tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_use_id": "t"})

    # Each run twice: the first fills the caches the second reads, as every later call does.
    runs = [([binary, "--version"], None, {}, None)]
    for _ in range(2):
        runs += [
            ([binary, "hook", "claude-code"], fresh, {}, event(fresh)),
            ([binary, "hook", "claude-code"], fresh, {"SIXFOLD_SANDBOX": "off"}, event(fresh)),
            ([binary, "hook", "claude-code"], rules, {"SIXFOLD_SANDBOX": "off"}, event(rules)),
            ([binary, "hook", "claude-code"], kept, {"SIXFOLD_SANDBOX": "off"}, event(kept)),
        ]
    order, have = [], set()
    for n, (argv, cwd, extra, stdin) in enumerate(runs):
        profile = os.path.join(work, f"callgrind.{n}")
        valgrind = ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={profile}"]
        run = subprocess.run(valgrind + argv, cwd=cwd, env=dict(env, **extra), input=stdin, text=True,
                             capture_output=True)
        if run.returncode != 0:
            sys.exit(f"{' '.join(argv)} failed ({run.returncode}):\n{run.stderr[-2000:]}")
        for fn in executed(profile, binary):
            if fn not in have:
                have.add(fn)
                order.append(fn)
    shutil.rmtree(work, ignore_errors=True)
    with open(OUT, "w") as f:
        f.write("# What `--version` and a hook call run, first run first:\n")
        f.write("# written by engine/cli/startup-order.py, read by engine/cli/build.rs.\n")
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} functions written to {OUT}")


if __name__ == "__main__":
    main()
