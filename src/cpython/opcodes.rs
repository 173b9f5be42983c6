//! The opcodes of each CPython version gotopy compiles for, as the interpreter itself
//! describes them: number, name, inline cache units, whether it takes an argument or jumps
//! relative, and its stack effect as `dis.stack_effect` gives it. The tables
//! (`opcodes/3.X.txt`) are written by `tools/cpython_opcodes.py`, run by that version's
//! interpreter; the unit test below runs it again on every version and compares.
//!
//! Nothing here knows what gotopy does with an opcode: which ones leave a frame, end a
//! block or load a name is `shapes`'s.

use std::collections::HashMap;
use std::sync::OnceLock;

/// A CPython version gotopy compiles for: [`Version::SUPPORTED`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    minor: u8,
}

/// The oldest and the newest minor version gotopy supports: adding a version starts here
/// (CONTRIBUTING.md says what follows).
const FIRST: u8 = 11;
const LAST: u8 = 15;

impl Version {
    /// How many versions gotopy supports.
    pub const COUNT: usize = (LAST - FIRST + 1) as usize;

    /// The versions gotopy supports, oldest first.
    pub const ALL: [Version; Version::COUNT] = {
        let mut all = [Version { minor: FIRST }; Version::COUNT];
        let mut at = 0;
        while at < Version::COUNT {
            all[at].minor = FIRST + at as u8;
            at += 1;
        }
        all
    };

    /// The supported versions in words, for messages (a unit test holds it to the first
    /// and the last of [`Version::ALL`]).
    pub const SUPPORTED: &str = "3.11 to 3.15";

    /// This version's place in [`Version::ALL`], for tables per version.
    pub fn index(self) -> usize {
        usize::from(self.minor - FIRST)
    }

    /// `major.minor`, if gotopy supports it.
    pub fn new(major: u32, minor: u32) -> Option<Version> {
        Version::ALL
            .into_iter()
            .find(|version| major == 3 && u32::from(version.minor) == minor)
    }

    /// Whether this is `3.minor` or later.
    pub fn at_least(self, minor: u8) -> bool {
        self.minor >= minor
    }

    /// The minor version.
    pub fn minor(self) -> u8 {
        self.minor
    }

    /// The opcode table of this version.
    pub fn opcodes(self) -> &'static Opcodes {
        static TABLES: [OnceLock<Opcodes>; Version::COUNT] =
            [const { OnceLock::new() }; Version::COUNT];
        TABLES[self.index()].get_or_init(|| Opcodes::parse(self, TEXTS[self.index()]))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "3.{}", self.minor)
    }
}

const TEXTS: [&str; Version::COUNT] = [
    include_str!("opcodes/3.11.txt"),
    include_str!("opcodes/3.12.txt"),
    include_str!("opcodes/3.13.txt"),
    include_str!("opcodes/3.14.txt"),
    include_str!("opcodes/3.15.txt"),
];

/// A stack effect as a formula in the argument: `base`, plus each term's factor times a
/// field of the argument's bits, except for the arguments listed.
#[derive(Clone, Debug, Default)]
struct Effect {
    base: i64,
    /// `(factor, first bit, width)`.
    terms: Vec<(i64, u32, u32)>,
    /// `(argument, effect)` where the formula does not hold.
    exceptions: Vec<(u32, i64)>,
}

impl Effect {
    fn of(&self, arg: u32) -> i64 {
        if let Some(&(_, effect)) = self.exceptions.iter().find(|(at, _)| *at == arg) {
            return effect;
        }
        let field = |shift: u32, width: u32| {
            let mask = if width >= 32 {
                u32::MAX
            } else {
                (1 << width) - 1
            };
            i64::from(arg.checked_shr(shift).unwrap_or(0) & mask)
        };
        self.base
            + self
                .terms
                .iter()
                .map(|&(factor, shift, width)| factor * field(shift, width))
                .sum::<i64>()
    }
}

/// One version's opcodes.
#[derive(Debug)]
pub struct Opcodes {
    version: Version,
    names: Vec<&'static str>,
    numbers: HashMap<&'static str, u8>,
    caches: [u8; 256],
    takes_arg: [bool; 256],
    jumps: [bool; 256],
    /// By `op * 2 + jump`; `None` where the interpreter gives none.
    effects: Vec<Option<Effect>>,
}

impl Opcodes {
    fn parse(version: Version, text: &'static str) -> Opcodes {
        let mut table = Opcodes {
            version,
            names: vec![""; 256],
            numbers: HashMap::new(),
            caches: [0; 256],
            takes_arg: [false; 256],
            jumps: [false; 256],
            effects: vec![None; 512],
        };
        for line in text.lines().filter(|line| !line.starts_with('#')) {
            // The committed tables are the tool's output; a malformed one fails every test.
            if table.parse_line(line).is_none() {
                panic!("src/cpython/opcodes/{version}.txt: malformed line {line:?}");
            }
        }
        table
    }

    /// Reads one line of a table into this one.
    fn parse_line(&mut self, line: &'static str) -> Option<()> {
        let (fields, taken) = line.split_once(" | ")?;
        let mut words = fields.split(' ');
        let op: u8 = words.next()?.parse().ok()?;
        let name = words.next()?;
        let caches = words.next()?.parse().ok()?;
        let flags = words.next()?;
        let fall: Vec<&str> = words.collect();
        let taken: Vec<&str> = taken.split(' ').collect();
        let index = usize::from(op);
        self.names[index] = name;
        self.numbers.insert(name, op);
        self.caches[index] = caches;
        self.takes_arg[index] = flags.contains('a');
        self.jumps[index] = flags.contains('j');
        self.effects[index * 2] = parse_effect(&fall)?;
        self.effects[index * 2 + 1] = parse_effect(&taken)?;
        Some(())
    }

    /// The version these opcodes are of.
    pub fn version(&self) -> Version {
        self.version
    }

    /// The number of the opcode `name`, if this version has it.
    pub fn op(&self, name: &str) -> Option<u8> {
        self.numbers.get(name).copied()
    }

    /// The name of opcode `op` (empty for a number that names none).
    pub fn name(&self, op: u8) -> &'static str {
        self.names[usize::from(op)]
    }

    /// The inline cache units after `op`.
    pub fn caches(&self, op: u8) -> u8 {
        self.caches[usize::from(op)]
    }

    /// Whether `op` uses its argument.
    pub fn takes_arg(&self, op: u8) -> bool {
        self.takes_arg[usize::from(op)]
    }

    /// Whether `op`'s argument is a relative jump (`opcode.hasjrel`).
    pub fn jumps(&self, op: u8) -> bool {
        self.jumps[usize::from(op)]
    }

    /// `dis.stack_effect(op, arg, jump=jump)`, `None` where the interpreter gives none.
    pub fn stack_effect(&self, op: u8, arg: u32, jump: bool) -> Option<i64> {
        let effect = self.effects[usize::from(op) * 2 + usize::from(jump)].as_ref()?;
        Some(effect.of(if self.takes_arg(op) { arg } else { 0 }))
    }
}

/// A formula of the tables (`tools/cpython_opcodes.py` says how it reads), `Some(None)` for
/// `?`, `None` when malformed.
fn parse_effect(words: &[&str]) -> Option<Option<Effect>> {
    let (first, rest) = words.split_first()?;
    if *first == "?" {
        return rest.is_empty().then_some(None);
    }
    let mut effect = Effect {
        base: first.parse().ok()?,
        ..Effect::default()
    };
    for word in rest {
        if let Some(exception) = word.strip_prefix('=') {
            let (arg, value) = exception.split_once(':')?;
            effect
                .exceptions
                .push((arg.parse().ok()?, value.parse().ok()?));
        } else {
            let (factor, field) = word.split_once('*')?;
            let (shift, width) = field.split_once(':')?;
            effect.terms.push((
                factor.parse().ok()?,
                shift.parse().ok()?,
                width.parse().ok()?,
            ));
        }
    }
    Some(Some(effect))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpython::testing::interpreters;

    #[test]
    fn the_supported_versions_in_words_are_the_table_s() {
        let (first, last) = (Version::ALL[0], Version::ALL[Version::COUNT - 1]);
        assert_eq!(Version::SUPPORTED, format!("{first} to {last}"));
        assert!(
            Version::ALL
                .iter()
                .enumerate()
                .all(|(at, v)| v.index() == at)
        );
        assert_eq!(Version::new(3, 10), None);
        assert_eq!(Version::new(3, u32::from(LAST) + 1), None);
    }

    #[test]
    fn the_tables_are_what_each_interpreter_says() {
        let tool = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/cpython_opcodes.py");
        for (version, python) in interpreters() {
            let output = std::process::Command::new(python)
                .arg(tool)
                .output()
                .unwrap_or_else(|error| panic!("cannot run {}: {error}", python.display()));
            assert!(
                output.status.success(),
                "{version}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            let index = usize::from(version.minor - 11);
            assert!(
                String::from_utf8_lossy(&output.stdout) == TEXTS[index],
                "src/cpython/opcodes/{version}.txt is not what CPython {version} says: run \
                 tools/cpython_opcodes.py again (tools/README.md)"
            );
        }
    }

    #[test]
    fn effects_follow_the_formula_of_the_table() {
        let opcodes = Version::new(3, 11).unwrap().opcodes();
        let effect =
            |name: &str, arg: u32| opcodes.stack_effect(opcodes.op(name).unwrap(), arg, false);
        assert_eq!(effect("BUILD_TUPLE", 3), Some(-2));
        assert_eq!(effect("BUILD_SLICE", 3), Some(-2));
        assert_eq!(effect("BUILD_SLICE", 2), Some(-1));
        assert_eq!(effect("MAKE_FUNCTION", 0b1011), Some(-3));
        assert_eq!(effect("UNPACK_EX", 0x0102), Some(3));
        assert_eq!(effect("POP_TOP", 0), Some(-1));
        assert_eq!(
            opcodes.stack_effect(opcodes.op("FOR_ITER").unwrap(), 4, true),
            Some(-1)
        );
        assert!(Version::new(3, 10).is_none() && Version::new(3, 16).is_none());
    }
}
