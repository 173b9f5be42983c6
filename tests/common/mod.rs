//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
#[cfg(feature = "cli")]
use std::process::{Command, Output};

use gotopy::Options;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path as snapshots show it: relative to the repository, with forward slashes.
pub fn shown(path: &Path) -> String {
    let relative = path.strip_prefix(root()).unwrap_or(path);
    relative.to_string_lossy().replace('\\', "/")
}

/// The `.py` files of a directory of the repository, sorted.
pub fn python_files(dir: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "py"))
        .collect();
    paths.sort();
    paths
}

/// The header of a fixture: its leading docstring or comment lines.
pub fn header(text: &str) -> String {
    let mut lines = text.lines().map(str::trim);
    let mut header = String::new();
    if let Some(first) = lines.next() {
        header.push_str(first);
        header.push('\n');
        let docstring = first.starts_with("\"\"\"") || first.starts_with("'''");
        let closed = docstring && first.len() > 3 && first.ends_with(&first[..3]);
        if docstring && !closed {
            for line in lines.by_ref() {
                header.push_str(line);
                header.push('\n');
                if line.contains("\"\"\"") || line.contains("'''") {
                    break;
                }
            }
        }
    }
    for line in lines.take_while(|line| line.starts_with('#')) {
        header.push_str(line);
        header.push('\n');
    }
    header
}

/// Options a fixture asks for with a `# gotopy: all-scopes` line among its first lines.
pub fn fixture_options(text: &str) -> Options {
    Options::new().all_scopes(
        text.lines()
            .take(5)
            .any(|line| line.trim() == "# gotopy: all-scopes"),
    )
}

/// A scratch directory, or a file alone in one, under the system's temporary directory:
/// `gotopy-NAME-PID-N`, fresh for each value. Dropped, it removes its directory, unless the
/// test is failing: then the directory stays for a look, and the failure's output names it.
/// It derefs to its path: the directory's, or the file's.
pub struct Scratch {
    dir: PathBuf,
    path: PathBuf,
}

impl Scratch {
    /// An empty directory named after `name`.
    pub fn dir(name: &str) -> Scratch {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let made = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("gotopy-{name}-{}-{made}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch {
            path: dir.clone(),
            dir,
        }
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the scratch directory {} is kept", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The scratch file `name` holding `text`, in a directory of its own (see [`Scratch`]).
pub fn write(name: &str, text: &str) -> Scratch {
    let mut scratch = Scratch::dir("file");
    scratch.path = scratch.dir.join(name);
    std::fs::write(&scratch.path, text).unwrap();
    scratch
}

/// `work` applied to every item, all at once, a thread each; the results in the items'
/// order. A panic on any thread is the test's.
pub fn on_threads<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let work = &work;
    std::thread::scope(|scope| {
        let threads: Vec<_> = (items.iter())
            .map(|item| scope.spawn(move || work(item)))
            .collect();
        (threads.into_iter())
            .map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// `work` applied to every item, in two halves on a thread each (the machines have two
/// cores); the results in the items' order.
pub fn in_halves<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let halves: Vec<&[T]> = items.chunks(items.len().div_ceil(2).max(1)).collect();
    let results = on_threads(&halves, |half| half.iter().map(&work).collect::<Vec<R>>());
    results.into_iter().flatten().collect()
}

/// `gotopy run PATH ARGS...`, colour off.
#[cfg(feature = "cli")]
pub fn gotopy_run(path: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gotopy"))
        .arg("run")
        .arg(path)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Runs `command` with `input` on its standard input.
#[cfg(feature = "cli")]
pub fn output_with_stdin(command: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The child may exit before reading everything; what it read is what counts.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// Runs `with_goto` through `gotopy run` and `structured` through `python3`; both must
/// succeed and print the same, non-empty output.
#[cfg(feature = "cli")]
pub fn assert_same_as_cpython(name: &str, with_goto: &str, structured: &str) {
    let goto_path = write(&format!("{name}.py"), with_goto);
    let plain_path = write(&format!("{name}_plain.py"), structured);
    let ours = gotopy_run(&goto_path, &[]);
    assert_ran_the_same(
        ours,
        Command::new("python3").arg(&plain_path).output().unwrap(),
    );
}

/// What gotopy ran must have succeeded and printed what CPython printed for the structured
/// program (something).
pub fn assert_ran_the_same(ours: std::process::Output, cpython: std::process::Output) {
    assert!(
        cpython.status.success(),
        "{}",
        String::from_utf8_lossy(&cpython.stderr)
    );
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&cpython.stdout)
    );
    assert!(!cpython.stdout.is_empty());
}

/// A random test's seed and size. The seed is fixed, so that a red run replays from its log,
/// unless `{prefix}_SEED` says otherwise: a number replays that seed, `random` draws a new one
/// from the clock. `{prefix}_PROGRAMS` widens or narrows the run. Both are printed.
pub fn seed_and_size(prefix: &str, programs: usize) -> (u64, usize) {
    /// The seed every run uses unless told otherwise.
    const FIXED_SEED: u64 = 20261123;
    let variable = |name: String| std::env::var(name).ok();
    let seed = match variable(format!("{prefix}_SEED")).as_deref() {
        None | Some("") => FIXED_SEED,
        Some("random") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
        Some(number) => number.parse().unwrap_or_else(|_| {
            panic!("{prefix}_SEED must be a number or `random`, not {number:?}")
        }),
    };
    let programs = variable(format!("{prefix}_PROGRAMS")).map_or(programs, |n| {
        n.parse()
            .unwrap_or_else(|_| panic!("{prefix}_PROGRAMS must be a number"))
    });
    eprintln!("{prefix}_SEED={seed} {prefix}_PROGRAMS={programs}");
    (seed, programs)
}

/// Runs the differential test's generator (`tests/differential/programs.py`) for `count`
/// programs of `seed` into a scratch directory named after `name`, and returns it: there
/// are `programs.json`, `invalid.json`, `driver.py` and the reference's `expected.txt`.
pub fn generate_programs(name: &str, seed: u64, count: usize) -> Scratch {
    let dir = Scratch::dir(name);
    let generated = std::process::Command::new("python3")
        .arg(root().join("tests/differential/programs.py"))
        .args([seed.to_string(), count.to_string()])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    dir
}

/// What the embedding examples (`examples/embed.rs`, `examples/embed_cpython`) compute, as
/// a program without goto for CPython to run: their oracle, less the refusal line.
pub const EMBED_EXAMPLES_WITHOUT_GOTO: &str = r#"
slots, wanted = [1, 0, 1, 1, 0, 1, 1], 2
print("first free 2-hour slot:", next(s for s in range(len(slots)) if all(h < len(slots) and slots[h] for h in range(s, s + wanted))))
n, steps = 27, 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
print("collatz steps for 27:", steps)
"#;
