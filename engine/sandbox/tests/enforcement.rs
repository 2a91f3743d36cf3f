#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! The sandbox tested the way an attacker would try it: every test runs real commands inside a
//! real sandbox, expects the forbidden thing to fail, and checks the disk (or the listener)
//! afterwards. Nothing is mocked, and nothing is skipped: a machine that cannot build the
//! sandbox fails these tests.
//!
//! Every file is created under temp dirs the test owns, removed when it ends.

use sixfold_sandbox::{prove, run, run_reporting, Environment, Network, Variables};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// A workspace, a home with secrets, and a directory outside both, all owned by the test.
struct World {
    _dirs: Vec<tempfile::TempDir>,
    root: PathBuf,
    home: PathBuf,
    outside: PathBuf,
}

impl World {
    /// A workspace whose protected paths all exist (so its top level stays writable).
    fn new() -> World {
        let world = World::bare();
        std::fs::create_dir_all(world.root.join(".git/hooks")).unwrap();
        std::fs::write(world.root.join(".git/config"), "[core]\n").unwrap();
        std::fs::create_dir_all(world.root.join(".claude")).unwrap();
        std::fs::write(world.root.join(".claude/settings.json"), "{}").unwrap();
        std::fs::write(world.root.join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
        std::fs::create_dir_all(world.root.join(".sixfold")).unwrap();
        std::fs::create_dir_all(world.root.join(".codex")).unwrap();
        world
    }

    /// A workspace with only `src/` and `.git/` (its other protected paths are missing).
    fn bare() -> World {
        let dirs: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let path = |i: usize| dirs[i].path().canonicalize().unwrap();
        let (root, home, outside) = (path(0), path(1), path(2));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(root.join(".env"), "TOKEN=root-env-secret\n").unwrap();
        std::fs::write(root.join("src/.env.local"), "TOKEN=nested-env-secret\n").unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "ssh-private-key-secret\n").unwrap();
        std::fs::create_dir_all(home.join(".aws")).unwrap();
        std::fs::write(home.join(".aws/credentials"), "aws-secret\n").unwrap();
        World {
            _dirs: dirs,
            root,
            home,
            outside,
        }
    }

    fn environment(&self) -> Environment {
        Environment {
            roots: vec![self.root.clone()],
            read_only_roots: Vec::new(),
            tmp: None,
            protected: vec![
                ".git/hooks/**".into(),
                ".git/config".into(),
                ".sixfold/**".into(),
                ".claude/**".into(),
                ".codex/**".into(),
                ".mcp.json".into(),
            ],
            secrets: vec!["~/.ssh".into(), "~/.aws".into(), "**/.env*".into()],
            network: Network::Cut,
            home: self.home.clone(),
            caches: Vec::new(),
            variables: Variables {
                pass: vec!["PATH".into(), "HOME".into()],
                never: Vec::new(),
            },
            placeholders: Vec::new(),
        }
    }

    /// Runs a bash script inside the sandbox, in the root; returns its exit status.
    fn bash(&self, script: &str) -> i32 {
        self.bash_in(&self.environment(), script)
    }

    fn bash_in(&self, environment: &Environment, script: &str) -> i32 {
        let argv: Vec<OsString> = vec!["bash".into(), "-c".into(), script.into()];
        run(environment, &argv, &self.root).unwrap()
    }

    /// What the script wrote to `out` in the root.
    fn out(&self) -> String {
        std::fs::read_to_string(self.root.join("out")).unwrap_or_default()
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_inside_the_root_works() {
    let world = World::new();
    let status =
        world.bash("echo made > new.txt && mkdir -p a/b && echo deep > a/b/c && sed -i 's/main/start/' src/main.rs");
    assert_eq!(status, 0);
    assert_eq!(std::fs::read_to_string(world.root.join("new.txt")).unwrap(), "made\n");
    assert_eq!(std::fs::read_to_string(world.root.join("a/b/c")).unwrap(), "deep\n");
    assert_eq!(
        std::fs::read_to_string(world.root.join("src/main.rs")).unwrap(),
        "fn start() {}\n"
    );
}

#[test]
fn writes_outside_every_root_are_denied_and_nothing_appears_on_disk() {
    let world = World::new();
    std::fs::write(world.outside.join("existing"), "before\n").unwrap();
    let outside = world.outside.display();
    let script = format!(
        "r=0
         echo x > {outside}/new && r=1
         touch {outside}/touched && r=1
         mkdir {outside}/dir && r=1
         echo after >> {outside}/existing && r=1
         : > {outside}/existing && r=1
         rm -f {outside}/existing; test -e {outside}/existing || r=1
         mv src/main.rs {outside}/moved && r=1
         cp src/main.rs {outside}/copied && r=1
         ln -s /etc/passwd {outside}/link && r=1
         truncate -s 0 {outside}/existing && r=1
         echo x > $HOME/in-home && r=1
         echo x > /etc/sixfold-probe && r=1
         echo $r > out"
    );
    assert_eq!(world.bash(&script), 0);
    assert_eq!(world.out(), "0\n", "a write outside worked");
    assert_eq!(entries(&world.outside), vec!["existing"]);
    assert_eq!(
        std::fs::read_to_string(world.outside.join("existing")).unwrap(),
        "before\n"
    );
    assert!(world.root.join("src/main.rs").exists());
    assert!(!Path::new("/etc/sixfold-probe").exists());
}

#[test]
fn protected_paths_stay_read_only() {
    let world = World::new();
    std::fs::write(world.root.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    let script = "r=0
         echo evil >> .git/config && r=1
         : > .git/config && r=1
         rm -f .git/config; test -e .git/config || r=1
         mv .git/config moved && r=1
         echo x > gitconfig; mv gitconfig .git/config && r=1
         echo evil > .git/hooks/post-checkout && r=1
         echo evil >> .git/hooks/pre-commit && r=1
         rm -rf .git/hooks; test -d .git/hooks || r=1
         echo '{\"hooks\":1}' > .claude/settings.json && r=1
         echo x > .claude/settings.local.json && r=1
         echo '{}' > .mcp.json && r=1
         rm -f .mcp.json; test -e .mcp.json || r=1
         echo $r > out";
    assert_eq!(world.bash(script), 0);
    assert_eq!(world.out(), "0\n", "a protected path changed");
    assert_eq!(
        std::fs::read_to_string(world.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert_eq!(entries(&world.root.join(".git/hooks")), vec!["pre-commit"]);
    assert_eq!(
        std::fs::read_to_string(world.root.join(".git/hooks/pre-commit")).unwrap(),
        "#!/bin/sh\n"
    );
    assert_eq!(entries(&world.root.join(".claude")), vec!["settings.json"]);
    assert_eq!(
        std::fs::read_to_string(world.root.join(".mcp.json")).unwrap(),
        "{\"mcpServers\":{}}"
    );
}

#[test]
fn protected_paths_that_do_not_exist_yet_cannot_be_created() {
    let world = World::bare();
    let script = "r=0
         echo '{}' > .mcp.json && r=1
         mkdir .claude && r=1
         mkdir -p .claude && echo '{}' > .claude/settings.json && r=1
         mkdir .codex && r=1
         mkdir .sixfold && r=1
         echo '{}' > src/staged.json; mv src/staged.json .mcp.json && r=1
         ln -s src .claude && r=1
         echo inside > src/still-writable || r=1
         echo $r > src/out";
    assert_eq!(world.bash(script), 0);
    assert_eq!(
        std::fs::read_to_string(world.root.join("src/out")).unwrap(),
        "0\n",
        "a protected path was created"
    );
    assert_eq!(entries(&world.root), vec![".env", ".git", "src"]);
    assert_eq!(
        std::fs::read_to_string(world.root.join("src/still-writable")).unwrap(),
        "inside\n"
    );
}

/// A missing protected path is kept by a placeholder, not by sealing the root: a build still
/// makes `target/` and a new file at the root, and nothing is left behind.
#[test]
fn a_missing_protected_path_leaves_the_root_writable() {
    let world = World::bare();
    assert_eq!(world.bash("mkdir target && touch target/x NEWFILE"), 0);
    assert_eq!(entries(&world.root), vec![".env", ".git", "NEWFILE", "src", "target"]);
}

#[test]
fn secrets_cannot_be_read() {
    let world = World::new();
    let home = world.home.display();
    let script = format!(
        "{{ cat {home}/.ssh/id_ed25519; ls -a {home}/.ssh; cat {home}/.aws/credentials; cat .env; cat src/.env.local;
           cat {home}/.ssh/../.ssh/id_ed25519; tar cf - {home}/.ssh; grep -r secret . {home}; }} > out 2>/dev/null; exit 0"
    );
    assert_eq!(world.bash(&script), 0);
    let out = world.out();
    for secret in [
        "ssh-private-key-secret",
        "aws-secret",
        "root-env-secret",
        "nested-env-secret",
    ] {
        assert!(!out.contains(secret), "`{secret}` was read:\n{out}");
    }
    // The host's files are untouched.
    assert_eq!(
        std::fs::read_to_string(world.home.join(".ssh/id_ed25519")).unwrap(),
        "ssh-private-key-secret\n"
    );
    assert_eq!(
        std::fs::read_to_string(world.root.join(".env")).unwrap(),
        "TOKEN=root-env-secret\n"
    );
}

#[test]
fn symlink_and_dotdot_escapes_are_denied() {
    let world = World::new();
    std::os::unix::fs::symlink(&world.outside, world.root.join("to-outside")).unwrap();
    std::os::unix::fs::symlink(world.home.join(".ssh/id_ed25519"), world.root.join("key")).unwrap();
    std::os::unix::fs::symlink(world.root.join(".git/config"), world.root.join("cfg")).unwrap();
    let up = "../".repeat(world.root.components().count());
    let outside = world.outside.strip_prefix("/").unwrap().display().to_string();
    let script = format!(
        "r=0
         echo x > to-outside/via-link && r=1
         echo x > src/../../$(basename {outside})/dotdot && r=1
         echo x > {up}{outside}/dotdot2 && r=1
         ln -s {up}{outside} src/later; echo x > src/later/made-later && r=1
         echo evil >> cfg && r=1
         cat key >> out 2>/dev/null
         echo $r >> out"
    );
    assert_eq!(world.bash(&script), 0);
    assert_eq!(world.out(), "0\n", "an escape worked");
    assert!(entries(&world.outside).is_empty(), "{:?}", entries(&world.outside));
    assert_eq!(
        std::fs::read_to_string(world.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn the_network_is_cut_even_to_the_hosts_loopback() {
    let world = World::new();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let (tcp_port, udp_port) = (tcp.local_addr().unwrap().port(), udp.local_addr().unwrap().port());
    let script = format!(
        "r=0
         (echo hello > /dev/tcp/127.0.0.1/{tcp_port}) 2>/dev/null && r=1
         (echo hello > /dev/udp/127.0.0.1/{udp_port}) 2>/dev/null && r=1
         python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {tcp_port}), timeout=2)' 2>/dev/null && r=1
         python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"127.0.0.1\", {udp_port}))' 2>/dev/null && r=1
         python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_STREAM)' 2>/dev/null && r=1
         python3 -c 'import socket; a, b = socket.socketpair(); a.send(b\"u\"); assert b.recv(1) == b\"u\"' || r=2
         echo $r > out"
    );
    assert_eq!(world.bash(&script), 0);
    assert_eq!(
        world.out(),
        "0\n",
        "1: a socket reached out; 2: Unix sockets are broken"
    );
    assert!(tcp.accept().is_err(), "the TCP listener received a connection");
    // The command's network namespace is its own (made apart from the others, then joined).
    let host = std::fs::read_link("/proc/self/ns/net").unwrap();
    assert_eq!(world.bash("readlink /proc/self/ns/net > out"), 0);
    let inside = world.out();
    assert!(inside.starts_with("net:["), "{inside}");
    assert_ne!(inside.trim(), host.to_str().unwrap());
    let mut buffer = [0u8; 16];
    assert!(
        udp.recv_from(&mut buffer).is_err(),
        "the UDP socket received a datagram"
    );
}

#[test]
fn the_command_sees_only_its_own_processes() {
    let world = World::new();
    let mut sleeper = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let host_pid = sleeper.id();
    let script = format!(
        "echo $$ > out
         kill -0 {host_pid} 2>/dev/null && echo visible >> out
         test -e /proc/{host_pid} && echo in-proc >> out
         ls /proc | grep -c '^[0-9]' >> out"
    );
    world.bash(&script);
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    let out = world.out();
    let lines: Vec<&str> = out.lines().collect();
    let own: u32 = lines[0].parse().unwrap();
    assert!(own <= 3, "the command is pid {own} in its namespace");
    assert!(!out.contains("visible") && !out.contains("in-proc"), "{out}");
    let count: u32 = lines.last().unwrap().parse().unwrap();
    assert!(count <= 6, "the command sees {count} processes");
}

#[test]
fn no_process_outlives_the_command() {
    let world = World::new();
    let marker = format!("{}.{}", 100 + std::process::id() % 800, std::process::id() % 997);
    let status = world.bash(&format!(
        "sleep {marker} & (setsid sleep {marker} &) ; nohup sleep {marker} >/dev/null 2>&1 & exit 0"
    ));
    assert_eq!(status, 0);
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok().map(|c| (e.file_name(), c)))
        .filter(|(_, c)| String::from_utf8_lossy(c).contains(&marker))
        .map(|(pid, c)| format!("{}: {}", pid.to_string_lossy(), String::from_utf8_lossy(&c)))
        .collect();
    assert!(survivors.is_empty(), "orphans survived: {survivors:?}");
}

#[test]
fn a_setuid_program_gains_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let program = world.root.join("suid-cat");
    std::fs::copy("/bin/cat", &program).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let own_uid = nix_free_uid();
    let script = "./suid-cat /proc/self/status > out
         mount -t tmpfs none src 2>/dev/null && echo mounted >> out
         unshare -r true 2>/dev/null; umount /proc 2>/dev/null && echo unmounted >> out
         exit 0";
    assert_eq!(world.bash(script), 0);
    let out = world.out();
    for line in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        let value = out
            .lines()
            .find(|l| l.starts_with(line))
            .unwrap_or_else(|| panic!("no {line} in:\n{out}"));
        assert!(value.ends_with("0000000000000000"), "{value}");
    }
    let uid_line = out.lines().find(|l| l.starts_with("Uid:")).unwrap();
    assert!(uid_line.split_whitespace().skip(1).all(|u| u == own_uid), "{uid_line}");
    assert!(
        out.lines().any(|l| l.starts_with("NoNewPrivs:") && l.ends_with('1')),
        "{out}"
    );
    assert!(!out.contains("mounted"), "{out}");
}

/// This process's uid, read from /proc (the test needs no libc binding for it).
fn nix_free_uid() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().to_string()
}

#[test]
fn the_exit_status_passes_through() {
    let world = World::new();
    assert_eq!(world.bash("exit 0"), 0);
    assert_eq!(world.bash("exit 42"), 42);
    assert_eq!(world.bash("exit 255"), 255);
    assert_eq!(world.bash("kill -TERM $$"), 128 + 15);
    assert_eq!(world.bash("kill -KILL $$"), 128 + 9);
}

#[test]
fn a_missing_program_is_an_error_not_a_status() {
    let world = World::new();
    let error = run(&world.environment(), &["sixfold-no-such-program".into()], &world.root).unwrap_err();
    assert_eq!(
        error.to_string(),
        "program `sixfold-no-such-program` not found on `$PATH`"
    );
    let error = run(&world.environment(), &["./src/main.rs".into()], &world.root).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("cannot start `./src/main.rs` in the sandbox: permission denied"),
        "{error}"
    );
}

#[test]
fn a_layout_that_fails_after_the_sandbox_started_runs_nothing() {
    // The protected paths are resolved while the namespaces are made: one that cannot be
    // (a wildcard outside the roots) stops the run before the command, with the reason.
    let world = World::new();
    let mut environment = world.environment();
    environment.protected.push(format!("{}/*", world.outside.display()));
    let argv: Vec<OsString> = vec!["bash".into(), "-c".into(), "echo ran > out".into()];
    let error = run(&environment, &argv, &world.root).unwrap_err();
    assert!(
        error.to_string().contains("has a wildcard outside the workspace roots"),
        "{error}"
    );
    assert_eq!(world.out(), "");
    // The same run without it goes ahead.
    assert_eq!(world.bash("echo ran > out"), 0);
    assert_eq!(world.out(), "ran\n");
}

#[test]
fn more_places_than_a_pipe_holds_are_all_mounted() {
    // The places reach init through a pipe (64 KiB here): more than that is written as init
    // reads, and every one is mounted before the command runs.
    let world = World::new();
    let many = world.root.join("many");
    std::fs::create_dir_all(&many).unwrap();
    for n in 0..1500 {
        std::fs::write(
            many.join(format!(".env.{n:04}-a-long-enough-name-for-the-pipe")),
            "secret\n",
        )
        .unwrap();
    }
    let script = "r=0; for f in many/.env.*; do cat \"$f\" >/dev/null 2>&1 && r=1; done; echo $r > out";
    assert_eq!(world.bash(script), 0);
    assert_eq!(world.out(), "0\n", "a secret past the pipe's first 64 KiB was readable");
    // And beside them, what is no secret still reads.
    assert_eq!(world.bash("cat src/main.rs > out"), 0);
    assert_eq!(world.out(), "fn main() {}\n");
}

/// Set by [`stdin_passes_through`] for the copy of this test binary it starts.
const STDIN_HELPER: &str = "SIXFOLD_SANDBOX_STDIN_ROOT";

#[test]
fn stdin_passes_through() {
    use std::io::Write;
    let world = World::new();
    let mut helper = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "stdin_helper", "--ignored", "--quiet", "--test-threads=1"])
        .env(STDIN_HELPER, &world.root)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    helper.stdin.take().unwrap().write_all(b"line one\nline two\n").unwrap();
    assert!(helper.wait().unwrap().success());
    assert_eq!(world.out(), "line one\nline two\n");
}

#[test]
#[ignore = "run by stdin_passes_through, with its stdin"]
fn stdin_helper() {
    let root = PathBuf::from(std::env::var_os(STDIN_HELPER).unwrap());
    let environment = Environment {
        roots: vec![root.clone()],
        ..Environment::default()
    };
    let argv: Vec<OsString> = vec!["bash".into(), "-c".into(), "cat > out".into()];
    assert_eq!(run(&environment, &argv, &root).unwrap(), 0);
}

#[test]
fn the_temp_dir_is_writable_only_when_the_environment_says_so() {
    let world = World::new();
    let scratch = tempfile::tempdir().unwrap();
    let scratch_path = scratch.path().canonicalize().unwrap();
    let mut environment = world.environment();
    let script = format!("echo x > {}/f; echo $? > out", scratch_path.display());
    world.bash_in(&environment, &script);
    assert_ne!(world.out(), "0\n");
    environment.tmp = Some(scratch_path.clone());
    world.bash_in(&environment, &script);
    assert_eq!(world.out(), "0\n");
    assert!(scratch_path.join("f").exists());
}

#[test]
fn a_workspace_write_environment_is_proven() {
    let world = World::bare();
    let mut environment = world.environment();
    let scratch = tempfile::tempdir().unwrap();
    environment.tmp = Some(scratch.path().to_path_buf());
    let proof = prove(&environment);
    assert!(proof.proven, "{proof:#?}");
    let names: Vec<&str> = proof.checks.iter().map(|c| c.name.as_str()).collect();
    for name in [
        "landlock",
        "sandbox",
        "write-inside-root",
        "write-outside-roots",
        "protected-read-only",
        "protected-not-creatable",
        "secret-hidden",
        "network-cut",
    ] {
        assert!(names.contains(&name), "no `{name}` check: {names:?}");
    }
    // The probe leaves nothing behind.
    assert_eq!(entries(&world.root), vec![".env", ".git", "src"]);
    assert!(entries(&world.outside).is_empty());
    assert!(entries(scratch.path()).is_empty());
}

#[test]
fn a_read_only_environment_is_proven() {
    let world = World::new();
    let environment = Environment {
        roots: Vec::new(),
        ..world.environment()
    };
    let proof = prove(&environment);
    assert!(proof.proven, "{proof:#?}");
    assert!(!proof.checks.iter().any(|c| c.name == "write-inside-root"));
    assert!(proof.checks.iter().any(|c| c.name == "write-outside-roots" && c.held));
}

#[test]
fn a_proof_with_no_secret_on_the_machine_uses_a_canary() {
    let world = World::new();
    let environment = Environment {
        secrets: vec!["~/.no-such-secret".into()],
        network: Network::Open,
        ..world.environment()
    };
    let proof = prove(&environment);
    assert!(proof.proven, "{proof:#?}");
    assert!(proof
        .checks
        .iter()
        .any(|c| c.name == "secret-hidden" && c.detail.contains("sixfold-probe")));
    assert!(!proof.checks.iter().any(|c| c.name == "network-cut"));
}

#[test]
fn an_environment_that_cannot_be_enforced_is_not_proven_and_says_why() {
    let world = World::new();
    let environment = Environment {
        protected: vec!["~/.claude/*.json".into()],
        ..world.environment()
    };
    let proof = prove(&environment);
    assert!(!proof.proven);
    let failed: Vec<&str> = proof.failed().map(|c| c.detail.as_str()).collect();
    assert!(failed.iter().any(|d| d.contains("has a wildcard")), "{failed:?}");
    assert!(run(&environment, &["true".into()], &world.root).is_err());
}

/// `.git` kept in place as an entry: its data writable, the entry itself not renamed, removed
/// or replaced; the directories above a protected path kept too.
fn with_repository_kept(world: &World) -> Environment {
    let mut environment = world.environment();
    environment
        .protected
        .extend([".git".to_string(), "src/deep/.sixfold/**".to_string()]);
    environment
}

#[test]
fn git_is_kept_in_place_while_its_data_stays_writable() {
    let world = World::new();
    std::fs::create_dir_all(world.root.join(".git/objects")).unwrap();
    std::fs::create_dir_all(world.root.join("src/deep/.sixfold")).unwrap();
    let environment = with_repository_kept(&world);
    let attacks = [
        "mv .git .git-old",
        "rmdir .git",
        "mv src src-old && mkdir -p src/deep/.sixfold && touch src/deep/.sixfold/planted",
        "mv src/deep src/deep-old",
        "ln -sfnT /tmp .git",
    ];
    for attack in attacks {
        assert_ne!(world.bash_in(&environment, attack), 0, "{attack}");
    }
    assert!(world.root.join(".git").is_dir() && !world.root.join(".git-old").exists());
    assert!(world.root.join("src/main.rs").is_file() && !world.root.join("src-old").exists());
    assert!(!world.root.join("src/deep/.sixfold/planted").exists());
    // Beside it: the repository's data is written as git writes it (a lock, then a rename).
    let status = world.bash_in(
        &environment,
        "echo obj > .git/objects/o.lock && mv .git/objects/o.lock .git/objects/o && echo idx > .git/index",
    );
    assert_eq!(status, 0);
    assert_eq!(
        std::fs::read_to_string(world.root.join(".git/objects/o")).unwrap(),
        "obj\n"
    );
}

#[test]
fn only_the_variables_the_environment_names_pass() {
    let world = World::new();
    std::env::set_var("SIXFOLD_ENFORCEMENT_API_KEY", "canary-credential");
    std::env::set_var("SIXFOLD_ENFORCEMENT_LANG", "kept");
    let mut environment = world.environment();
    environment.variables = Variables {
        pass: vec!["PATH".into(), "SIXFOLD_ENFORCEMENT_*".into()],
        never: vec!["*_KEY".into()],
    };
    assert_eq!(world.bash_in(&environment, "env > out"), 0);
    let env = world.out();
    assert!(!env.contains("canary-credential"), "{env}");
    assert!(env.contains("SIXFOLD_ENFORCEMENT_LANG=kept"), "{env}");
    assert!(!env.lines().any(|l| l.starts_with("HOME=")), "{env}");
}

#[test]
fn the_keyring_calls_are_refused_inside() {
    let world = World::new();
    let proof = prove(&world.environment());
    let keyring: Vec<_> = proof.checks.iter().filter(|c| c.name == "keyring").collect();
    assert!(!keyring.is_empty() && keyring.iter().all(|c| c.held), "{proof:#?}");
}

#[test]
fn a_host_socket_in_the_temp_dir_is_masked_and_a_socket_made_inside_works() {
    let world = World::new();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap().join("ssh-agent");
    std::fs::create_dir_all(&dir).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(dir.join("agent.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let mut environment = world.environment();
    environment.tmp = Some(tmp.path().to_path_buf());
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
        dir.join("agent.sock").display()
    );
    assert_ne!(world.bash_in(&environment, &connect), 0);
    assert!(listener.accept().is_err());
    let own = "python3 -c 'import socket; v = socket.socket(socket.AF_UNIX); v.bind(\"own.sock\"); v.listen(1); c = socket.socket(socket.AF_UNIX); c.connect(\"own.sock\")'";
    assert_eq!(world.bash_in(&environment, own), 0);
}

#[test]
fn a_repository_made_inside_is_renamed_aside_after_the_command() {
    let world = World::new();
    std::fs::create_dir_all(world.root.join("kept/.git")).unwrap();
    let argv: Vec<OsString> = vec![
        "bash".into(),
        "-c".into(),
        "mkdir -p made/.git && echo x > made/.git/config".into(),
    ];
    let outcome = run_reporting(&world.environment(), &argv, &world.root).unwrap();
    assert_eq!(outcome.status, 0);
    assert_eq!(outcome.quarantined.len(), 1, "{outcome:?}");
    assert_eq!(outcome.quarantined[0].path, world.root.join("made/.git"));
    assert!(!world.root.join("made/.git").exists());
    assert!(world.root.join("made/.git.sixfold-quarantined/config").is_file());
    assert!(world.root.join("kept/.git").is_dir());
}

/// A world whose tree (with `a/b/c/d` and `a/b/c/notes.txt`) has settled (changed long enough
/// ago for the walk's cache to trust it) and has been walked and cached by a first run.
fn cached_world() -> World {
    let world = World::new();
    std::fs::create_dir_all(world.root.join("a/b/c/d")).unwrap();
    std::fs::write(world.root.join("a/b/c/notes.txt"), "notes\n").unwrap();
    std::fs::write(world.outside.join("staged"), "TOKEN=renamed-secret\n").unwrap();
    std::fs::write(world.outside.join("plain"), "renamed-plain\n").unwrap();
    // The walk trusts only a directory that changed more than two seconds before it was read.
    std::thread::sleep(std::time::Duration::from_millis(2_200));
    assert_eq!(world.bash("true"), 0);
    assert!(
        cache_of(&world.root).is_some(),
        "the first run kept no cache for the root"
    );
    world
}

/// The tree cache kept for `root`, if any (its key names the root).
fn cache_of(root: &Path) -> Option<PathBuf> {
    let dir = sixfold_core::user_dirs::cache_dir()?.join("trees");
    let needle = format!("root {}\n", root.display()).into_bytes();
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::read(p).is_ok_and(|bytes| bytes.windows(needle.len()).any(|w| w == needle.as_slice())))
}

#[test]
fn a_secret_made_deep_down_after_a_cached_run_is_hidden_in_the_next_one() {
    let world = cached_world();
    std::fs::write(world.root.join("a/b/c/d/.env.production"), "TOKEN=deep-new-secret\n").unwrap();
    std::fs::write(world.root.join("a/b/c/d/plain.txt"), "deep-new-plain\n").unwrap();
    let script =
        "{ cat a/b/c/d/.env.production; cat a/b/c/d/plain.txt; cat a/b/c/notes.txt; } > out 2>/dev/null; exit 0";
    assert_eq!(world.bash(script), 0);
    let out = world.out();
    assert!(!out.contains("deep-new-secret"), "the new secret was read:\n{out}");
    // An ordinary file made the same way, and the cached tree's own, stay readable.
    assert!(out.contains("deep-new-plain") && out.contains("notes"), "{out}");
    // Still hidden on the run after (the walk that found it was kept too).
    assert_eq!(world.bash("cat a/b/c/d/.env.production > out 2>/dev/null; exit 0"), 0);
    assert!(!world.out().contains("deep-new-secret"));
}

#[test]
fn a_secret_renamed_into_place_after_a_cached_run_is_hidden_in_the_next_one() {
    let world = cached_world();
    std::fs::rename(world.outside.join("staged"), world.root.join("a/b/c/.env")).unwrap();
    std::fs::rename(world.outside.join("plain"), world.root.join("a/b/c/readme")).unwrap();
    // A directory renamed into place brings its secret with it.
    std::fs::create_dir_all(world.outside.join("moved/inner")).unwrap();
    std::fs::write(world.outside.join("moved/inner/.env"), "TOKEN=moved-dir-secret\n").unwrap();
    std::fs::write(world.outside.join("moved/inner/kept.txt"), "moved-dir-plain\n").unwrap();
    std::fs::rename(world.outside.join("moved"), world.root.join("a/b/moved")).unwrap();
    let script = "{ cat a/b/c/.env; cat a/b/c/readme; cat a/b/moved/inner/.env; cat a/b/moved/inner/kept.txt; } > out 2>/dev/null; exit 0";
    assert_eq!(world.bash(script), 0);
    let out = world.out();
    assert!(!out.contains("renamed-secret"), "the renamed secret was read:\n{out}");
    assert!(
        !out.contains("moved-dir-secret"),
        "the moved directory's secret was read:\n{out}"
    );
    assert!(
        out.contains("renamed-plain") && out.contains("moved-dir-plain"),
        "{out}"
    );
}

#[test]
fn a_host_socket_bound_after_a_cached_run_cannot_be_reached_from_the_next_one() {
    // A temp dir under /tmp, its socket three levels down (as ssh-agent's and tmux's are), and
    // too deep for the walk of /tmp itself to reach: only this temp dir's cached walk can find it.
    let scratch = tempfile::Builder::new()
        .prefix("sixfold-socket-")
        .tempdir_in("/tmp")
        .unwrap();
    let tmp = scratch.path().canonicalize().unwrap().join("t");
    let dir = tmp.join("a/agent");
    std::fs::create_dir_all(&dir).unwrap();
    let world = World::new();
    let mut environment = world.environment();
    environment.tmp = Some(tmp.clone());
    std::thread::sleep(std::time::Duration::from_millis(2_200));
    assert_eq!(world.bash_in(&environment, "true"), 0);
    assert!(cache_of(&tmp).is_some(), "the first run kept no cache for the temp dir");
    let listener = std::os::unix::net::UnixListener::bind(dir.join("agent.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::fs::write(dir.join("plain.txt"), "socket-dir-plain\n").unwrap();
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"{}\")'",
        dir.join("agent.sock").display()
    );
    assert_ne!(world.bash_in(&environment, &connect), 0);
    assert!(listener.accept().is_err(), "the host's listener took a connection");
    // A file made beside it stays readable.
    let read = format!("cat {} > out", dir.join("plain.txt").display());
    assert_eq!(world.bash_in(&environment, &read), 0);
    assert_eq!(world.out(), "socket-dir-plain\n");
}
