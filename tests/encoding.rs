//! Source encodings against python3's own codecs: every name and alias Python has for the
//! codecs gotopy decodes is accepted in a PEP 263 declaration, every byte of a single-byte
//! code page decodes as Python decodes it (or is refused as Python refuses it), and every
//! two-byte sequence Python decodes in a multi-byte encoding decodes to the same text.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use gotopy::source::{DecodeError, decode};

/// The codecs gotopy decodes, by Python's names (docs/encodings.md).
const SINGLE_BYTE: &[&str] = &[
    "ascii",
    "latin_1",
    "cp1250",
    "cp1251",
    "cp1252",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "cp874",
    "iso8859_2",
    "iso8859_3",
    "iso8859_4",
    "iso8859_5",
    "iso8859_6",
    "iso8859_7",
    "iso8859_8",
    "iso8859_9",
    "iso8859_10",
    "iso8859_11",
    "iso8859_13",
    "iso8859_14",
    "iso8859_15",
    "iso8859_16",
    "koi8_r",
    "koi8_u",
    "mac_roman",
    "mac_cyrillic",
    "cp866",
];
const MULTI_BYTE: &[&str] = &[
    "shift_jis",
    "cp932",
    "euc_jp",
    "gbk",
    "gb2312",
    "euc_kr",
    "cp949",
];

/// Runs a python3 program and gives its standard output.
fn python(program: &str) -> String {
    let child = Command::new("python3")
        .arg("-c")
        .arg(program)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let output = child.wait_with_output().expect("python3 finishes");
    assert!(output.status.success(), "python3 failed");
    String::from_utf8(output.stdout).expect("python3 prints UTF-8")
}

/// What gotopy decodes `bytes` to under a declaration of `name`, as python3 prints it
/// below: code points in hex, or `-` when refused.
fn gotopy_decodes(name: &str, bytes: &[u8]) -> String {
    let mut source = format!("# coding: {name}\n").into_bytes();
    source.extend_from_slice(bytes);
    match decode(&source) {
        Ok(text) => text
            .split_once('\n')
            .map(|(_, rest)| rest)
            .unwrap_or_default()
            .chars()
            .map(|c| format!("{:x}", u32::from(c)))
            .collect::<Vec<_>>()
            .join(","),
        Err(_) => "-".to_owned(),
    }
}

const PRINT_DECODED: &str = r#"
def shown(data, name):
    try:
        return ",".join(f"{ord(c):x}" for c in data.decode(name))
    except UnicodeDecodeError:
        return "-"
"#;

#[test]
fn every_python_alias_of_a_supported_codec_is_accepted_and_others_are_refused() {
    let supported: Vec<&str> = SINGLE_BYTE.iter().chain(MULTI_BYTE).copied().collect();
    let program = format!(
        "import encodings.aliases, codecs\n\
         supported = {supported:?}\n\
         names = set(encodings.aliases.aliases) | set(encodings.aliases.aliases.values())\n\
         for name in sorted(names):\n\
         \x20   try:\n\
         \x20       codec = codecs.lookup(name).name\n\
         \x20   except LookupError:\n\
         \x20       continue\n\
         \x20   ours = any(codecs.lookup(s).name == codec for s in supported + ['utf_8'])\n\
         \x20   print(name, name.replace('_', '-').upper(), int(ours))\n"
    );
    let listed = python(&program);
    let mut accepted = 0;
    for line in listed.lines() {
        let [name, spelled, ours] = line.split(' ').collect::<Vec<_>>()[..] else {
            panic!("unexpected line {line:?}");
        };
        for written in [name, spelled] {
            let result = decode(format!("# coding: {written}\nx = 1\n").as_bytes());
            if ours == "1" {
                assert!(result.is_ok(), "`{written}` is refused: {result:?}");
                accepted += 1;
            } else {
                // utf-16 and the like, and Python's codecs gotopy does not decode.
                assert!(
                    matches!(result, Err(DecodeError::UnknownEncoding { .. })),
                    "`{written}` gives {result:?}"
                );
            }
        }
    }
    assert!(accepted > 200, "only {accepted} names accepted");
}

#[test]
fn single_byte_code_pages_decode_every_byte_as_python_does() {
    let program = format!(
        "{PRINT_DECODED}\n\
         for name in {SINGLE_BYTE:?}:\n\
         \x20   print(name, ' '.join(shown(bytes([b]), name) for b in range(256)))\n"
    );
    for line in python(&program).lines() {
        let (name, expected) = line.split_once(' ').expect("a name, then bytes");
        for (byte, expected) in (0..=255u8).zip(expected.split(' ')) {
            assert_eq!(
                gotopy_decodes(name, &[byte]),
                expected,
                "{name}: byte 0x{byte:02x}"
            );
        }
    }
}

/// Every lead byte above 0x7f with every second byte, and three-byte JIS X 0212 sequences
/// in EUC-JP. gotopy may accept sequences Python refuses (WHATWG's tables are larger);
/// those are counted, not failed.
#[test]
fn multi_byte_encodings_decode_every_sequence_python_decodes_as_python_does() {
    let program = format!(
        "{PRINT_DECODED}\n\
         for name in {MULTI_BYTE:?}:\n\
         \x20   for lead in range(0x80, 0x100):\n\
         \x20       print(name, lead, ' '.join(shown(bytes([lead, b]), name) for b in range(256)))\n\
         \x20   if name == 'euc_jp':\n\
         \x20       for b in range(0xa1, 0xff):\n\
         \x20           print(name, 0x8f, b, ' '.join(shown(bytes([0x8f, b, c]), name) for c in range(256)))\n"
    );
    let mut accepted_beyond_python = BTreeMap::<&str, usize>::new();
    let output = python(&program);
    for line in output.lines() {
        let mut fields = line.split(' ');
        let name = fields.next().expect("a name");
        let mut prefix: Vec<u8> = vec![fields.next().and_then(|f| f.parse().ok()).expect("a lead")];
        let rest: Vec<&str> = fields.collect();
        let expected = if rest.len() == 257 {
            prefix.push(rest[0].parse().expect("a second byte"));
            &rest[1..]
        } else {
            &rest[..]
        };
        for (last, expected) in (0..=255u8).zip(expected) {
            let mut bytes = prefix.clone();
            bytes.push(last);
            let ours = gotopy_decodes(name, &bytes);
            if *expected == "-" {
                if ours != "-" {
                    *accepted_beyond_python.entry(name).or_default() += 1;
                }
            } else {
                assert_eq!(ours, *expected, "{name}: bytes {bytes:02x?}");
            }
        }
    }
    println!("sequences gotopy decodes and Python refuses: {accepted_beyond_python:?}");
}
