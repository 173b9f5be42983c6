//! Source bytes to text, decoded as CPython decodes a module: a UTF-8 byte order mark, else a
//! PEP 263 declaration on line 1 (or on line 2 after a comment or blank line 1), else UTF-8.
//!
//! The codecs come from `encoding_rs`, which implements the WHATWG Encoding Standard. Where
//! WHATWG and Python disagree, Python wins: `latin-1` is ISO-8859-1 byte for byte (WHATWG
//! reads it as windows-1252), `ascii` refuses bytes above 0x7f, Python's `cp125x` code pages
//! refuse the bytes they leave undefined, and the few characters Python's Japanese and
//! Chinese codecs map differently are mapped as Python maps them. This module knows nothing
//! of files: it takes bytes and gives text or a [`DecodeError`].

use encoding_rs::{DecoderResult, Encoding};

/// Why source bytes are not text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A UTF-8 byte order mark, then a declaration of another encoding (CPython refuses
    /// this too: "encoding problem: ... with BOM").
    #[error(
        "the file starts with a UTF-8 byte order mark but line {line} declares encoding \
         `{name}`; remove one of them"
    )]
    DeclarationAfterBom {
        /// The declared name, as written.
        name: String,
        /// The line of the declaration.
        line: usize,
    },
    /// A declaration names an encoding gotopy cannot decode: unknown to Python too, or one
    /// of Python's codecs that `encoding_rs` does not implement as Python does.
    #[error(
        "line {line} declares encoding `{name}`, which gotopy cannot decode (it decodes {})",
        supported()
    )]
    UnknownEncoding {
        /// The declared name, as written.
        name: String,
        /// The line of the declaration.
        line: usize,
    },
    /// Bytes that are not valid in the source's encoding.
    #[error(
        "not valid {encoding}: undecodable byte 0x{byte:02x} at line {line}, column {column} \
         ({})",
        match declared {
            Some(at) => format!("declared on line {at}"),
            None => "no encoding is declared, so Python reads the file as UTF-8; \
                     see PEP 263".to_owned(),
        }
    )]
    Undecodable {
        /// The encoding, as declared, or `UTF-8`.
        encoding: String,
        /// The first byte that cannot be decoded.
        byte: u8,
        /// Its one-based line.
        line: usize,
        /// Its one-based column, in characters.
        column: usize,
        /// The line of the declaration, if there is one.
        declared: Option<usize>,
    },
}

/// Decodes a Python source file's bytes as CPython does (see the module documentation).
pub fn decode(bytes: &[u8]) -> Result<String, DecodeError> {
    let (bom, bytes) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    let Some(declaration) = declaration(bytes) else {
        return decode_utf8(bytes, "UTF-8".to_owned(), None);
    };
    let line = declaration.line;
    let name = String::from_utf8_lossy(declaration.name).into_owned();
    let normal = normal_name(&name);
    if bom && normal != "utf-8" {
        return Err(DecodeError::DeclarationAfterBom { name, line });
    }
    let decoded = match codec(&normal) {
        None => return Err(DecodeError::UnknownEncoding { name, line }),
        Some(Codec::Utf8) => return decode_utf8(bytes, name, Some(line)),
        Some(Codec::SingleByte(table)) => table.decode(bytes),
        Some(Codec::MultiByte(table)) => table.decode(bytes),
    };
    decoded.map_err(|(at, before)| {
        let (line, column) = position(&before);
        DecodeError::Undecodable {
            encoding: name,
            byte: bytes[at],
            line,
            column,
            declared: Some(declaration.line),
        }
    })
}

/// The encoding that a module's `bytes` declare (PEP 263, as [`decode`] reads it), by the
/// name it is written with; `None` for UTF-8: none declared, or a byte order mark first.
/// A module given as text (decoded already) is encoded back in it, for [`decode`].
pub fn declared_encoding(bytes: &[u8]) -> Option<&str> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return None;
    }
    std::str::from_utf8(declaration(bytes)?.name).ok()
}

fn decode_utf8(
    bytes: &[u8],
    encoding: String,
    declared: Option<usize>,
) -> Result<String, DecodeError> {
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|error| {
            let at = error.valid_up_to();
            let (line, column) = position(&String::from_utf8_lossy(&bytes[..at]));
            DecodeError::Undecodable {
                encoding,
                byte: bytes[at],
                line,
                column,
                declared,
            }
        })
}

/// The one-based line and character column just after `text`.
fn position(text: &str) -> (usize, usize) {
    let line = text.matches('\n').count() + 1;
    let line_start = text.rfind('\n').map_or(0, |at| at + 1);
    (line, text[line_start..].chars().count() + 1)
}

/// A PEP 263 encoding declaration: the name and the line it is on.
struct Declaration<'a> {
    name: &'a [u8],
    line: usize,
}

/// The declaration on line 1, or on line 2 when line 1 holds only a comment or blanks.
fn declaration(bytes: &[u8]) -> Option<Declaration<'_>> {
    let mut lines = bytes.split_inclusive(|&byte| byte == b'\n');
    let first = lines.next()?;
    if let Some(name) = declared_name(first) {
        return Some(Declaration { name, line: 1 });
    }
    let rest = skip_blanks(first);
    if !matches!(rest.first(), None | Some(b'#' | b'\r' | b'\n')) {
        return None;
    }
    let name = declared_name(lines.next()?)?;
    Some(Declaration { name, line: 2 })
}

/// The name in `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`, the pattern CPython and PEP 263
/// use (`\w` in ASCII only, as CPython's tokenizer reads it).
fn declared_name(line: &[u8]) -> Option<&[u8]> {
    let comment = skip_blanks(line).strip_prefix(b"#")?;
    let mut rest = comment;
    while let Some(at) = find(rest, b"coding") {
        let after = &rest[at + b"coding".len()..];
        rest = after;
        let Some(after) = after
            .strip_prefix(b":")
            .or_else(|| after.strip_prefix(b"="))
        else {
            continue;
        };
        let start = after
            .iter()
            .position(|&byte| byte != b' ' && byte != b'\t')
            .unwrap_or(after.len());
        let name = &after[start..];
        let length = name
            .iter()
            .position(|&byte| !(byte.is_ascii_alphanumeric() || b"-_.".contains(&byte)))
            .unwrap_or(name.len());
        if length > 0 {
            return Some(&name[..length]);
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// `line` without its leading spaces, tabs and form feeds.
fn skip_blanks(line: &[u8]) -> &[u8] {
    let start = line
        .iter()
        .position(|byte| !b" \t\x0c".contains(byte))
        .unwrap_or(line.len());
    &line[start..]
}

/// The name CPython's tokenizer compares with the byte order mark's `utf-8`: lowercase,
/// `_` as `-`, and every `utf-8-*` read as `utf-8`, every `latin-1-*` as `iso-8859-1`.
fn normal_name(name: &str) -> String {
    let name = name.to_ascii_lowercase().replace('_', "-");
    let starts = |prefix: &str| name == prefix || name.starts_with(&format!("{prefix}-"));
    if starts("utf-8") {
        "utf-8".to_owned()
    } else if starts("latin-1") || starts("iso-8859-1") || starts("iso-latin-1") {
        "iso-8859-1".to_owned()
    } else {
        name
    }
}

/// The codec Python's `codecs.lookup` finds for `name` (its `encodings.normalize_encoding`
/// and alias table), among those gotopy decodes.
fn codec(name: &str) -> Option<Codec> {
    // Runs of anything but ASCII letters, digits and `.` become one `_`, and none is kept
    // at either end, as `encodings.normalize_encoding` does.
    let mut normal = String::new();
    for part in name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.')) {
        if !part.is_empty() {
            if !normal.is_empty() {
                normal.push('_');
            }
            normal.push_str(part);
        }
    }
    let normal = normal.to_ascii_lowercase();
    let underscored = normal.replace('.', "_");
    CODECS
        .iter()
        .find(|(_, names)| {
            names.contains(&normal.as_str()) || names.contains(&underscored.as_str())
        })
        .map(|(codec, _)| *codec)
}

/// The Python codec names gotopy decodes, for messages.
fn supported() -> String {
    let names: Vec<&str> = CODECS.iter().map(|(_, names)| names[0]).collect();
    names.join(", ")
}

#[derive(Clone, Copy)]
enum Codec {
    Utf8,
    SingleByte(SingleByte),
    MultiByte(MultiByte),
}

/// A single-byte code page: bytes below 0x80 are ASCII; the upper half is described by a
/// base table and Python's differences from it.
#[derive(Clone, Copy)]
struct SingleByte {
    base: Base,
    /// How bytes 0x80 to 0x9f decode.
    c1: C1,
    /// Bytes Python decodes otherwise than the base table, to a character or not at all.
    overrides: &'static [(u8, Option<char>)],
}

#[derive(Clone, Copy)]
enum Base {
    /// No byte above 0x7f decodes (ASCII).
    Nothing,
    /// Each byte is the code point of the same number (ISO-8859-1).
    Identity,
    /// A WHATWG single-byte encoding.
    Whatwg(&'static Encoding),
}

#[derive(Clone, Copy)]
enum C1 {
    /// As the base table says.
    Base,
    /// The C1 control characters U+0080 to U+009F, as in Python's ISO-8859 codecs.
    Controls,
    /// As the base table says, except that a C1 control there is a byte Python leaves
    /// undefined (WHATWG fills the holes of Windows code pages with C1 controls).
    BaseWithoutControls,
}

impl SingleByte {
    /// The text, or the offset of the first undecodable byte and the text before it.
    fn decode(&self, bytes: &[u8]) -> Result<String, (usize, String)> {
        let upper = self.upper_half();
        let mut text = String::with_capacity(bytes.len());
        for (at, &byte) in bytes.iter().enumerate() {
            let decoded = match byte.checked_sub(0x80) {
                None => Some(char::from(byte)),
                Some(high) => upper[usize::from(high)],
            };
            match decoded {
                Some(decoded) => text.push(decoded),
                None => return Err((at, text)),
            }
        }
        Ok(text)
    }

    /// What bytes 0x80 to 0xff decode to.
    fn upper_half(&self) -> [Option<char>; 128] {
        let mut upper = [None; 128];
        for (slot, byte) in upper.iter_mut().zip(0x80..=0xFF_u8) {
            let base = match self.base {
                Base::Nothing => None,
                Base::Identity => Some(char::from(byte)),
                Base::Whatwg(encoding) => encoding
                    .decode_without_bom_handling_and_without_replacement(&[byte])
                    .and_then(|text| text.chars().next()),
            };
            let control = ('\u{80}'..='\u{9f}').contains(&char::from(byte));
            *slot = match self.c1 {
                C1::Controls if control => Some(char::from(byte)),
                C1::BaseWithoutControls => {
                    base.filter(|decoded| !('\u{80}'..='\u{9f}').contains(decoded))
                }
                C1::Base | C1::Controls => base,
            };
            if let Some((_, decoded)) = self.overrides.iter().find(|(at, _)| *at == byte) {
                *slot = *decoded;
            }
        }
        upper
    }
}

/// A multi-byte encoding decoded by `encoding_rs`, with the characters Python maps
/// differently mapped as Python does, and the bytes WHATWG refuses as lead bytes but
/// Python decodes alone (to private-use characters) decoded as Python does.
#[derive(Clone, Copy)]
struct MultiByte {
    encoding: &'static Encoding,
    /// WHATWG's character, Python's character.
    remapped: &'static [(char, char)],
    /// Bytes Python decodes alone where a sequence would start, and to what.
    lone: &'static [(u8, char)],
    /// Byte sequences that are a whole character wherever they stand, which Python decodes
    /// otherwise than WHATWG (and than `remapped` would).
    whole: &'static [(&'static [u8], char)],
}

impl MultiByte {
    /// The text, or the offset of the first undecodable byte and the text before it.
    fn decode(&self, bytes: &[u8]) -> Result<String, (usize, String)> {
        let mut text = String::with_capacity(bytes.len());
        let mut start = 0;
        let mut at = 0;
        while at < bytes.len() {
            let whole = self
                .whole
                .iter()
                .find(|(sequence, _)| bytes[at..].starts_with(sequence));
            match whole {
                Some((sequence, decoded)) => {
                    self.decode_run(&bytes[start..at], &mut text)
                        .map_err(|bad| (start + bad, text.clone()))?;
                    text.push(*decoded);
                    at += sequence.len();
                    start = at;
                }
                None => at += 1,
            }
        }
        self.decode_run(&bytes[start..], &mut text)
            .map_err(|bad| (start + bad, text.clone()))?;
        Ok(text)
    }

    /// Decodes `bytes` onto `text`; the offset of the first undecodable byte.
    fn decode_run(&self, bytes: &[u8], text: &mut String) -> Result<(), usize> {
        let mut decoder = self.encoding.new_decoder_without_bom_handling();
        let mut run = String::with_capacity(
            decoder
                .max_utf8_buffer_length_without_replacement(bytes.len())
                .unwrap_or(bytes.len()),
        );
        let mut read = 0;
        let outcome = loop {
            let (result, consumed) =
                decoder.decode_to_string_without_replacement(&bytes[read..], &mut run, true);
            read += consumed;
            match result {
                DecoderResult::InputEmpty => break Ok(()),
                DecoderResult::OutputFull => run.reserve(bytes.len() - read + 16),
                DecoderResult::Malformed(length, after) => {
                    let at = read.saturating_sub(usize::from(length) + usize::from(after));
                    // A byte WHATWG refuses as a lead byte and Python decodes alone.
                    let lone = (length, after) == (1, 0);
                    match self
                        .lone
                        .iter()
                        .find(|(byte, _)| lone && *byte == bytes[at])
                    {
                        Some((_, decoded)) => run.push(*decoded),
                        None => break Err(at),
                    }
                }
            }
        };
        text.push_str(&self.remap(&run));
        outcome
    }

    fn remap(&self, text: &str) -> String {
        text.chars()
            .map(|decoded| {
                self.remapped
                    .iter()
                    .find(|(whatwg, _)| *whatwg == decoded)
                    .map_or(decoded, |(_, python)| *python)
            })
            .collect()
    }
}

const fn whatwg(encoding: &'static Encoding) -> Codec {
    Codec::SingleByte(SingleByte {
        base: Base::Whatwg(encoding),
        c1: C1::Base,
        overrides: &[],
    })
}

/// A Windows code page: WHATWG's table without the C1 controls it puts in its holes.
const fn windows(encoding: &'static Encoding, overrides: &'static [(u8, Option<char>)]) -> Codec {
    Codec::SingleByte(SingleByte {
        base: Base::Whatwg(encoding),
        c1: C1::BaseWithoutControls,
        overrides,
    })
}

/// An ISO-8859 part WHATWG has only as the Windows code page that extends it.
const fn iso_8859(encoding: &'static Encoding) -> Codec {
    Codec::SingleByte(SingleByte {
        base: Base::Whatwg(encoding),
        c1: C1::Controls,
        overrides: &[],
    })
}

/// JIS X 0208 as Python maps it, where WHATWG follows Microsoft's code page 932.
const JIS_X_0208: &[(char, char)] = &[
    ('\u{FF5E}', '\u{301C}'),
    ('\u{2225}', '\u{2016}'),
    ('\u{FF0D}', '\u{2212}'),
    ('\u{FFE0}', '\u{00A2}'),
    ('\u{FFE1}', '\u{00A3}'),
    ('\u{FFE2}', '\u{00AC}'),
];

const fn multi(
    encoding: &'static Encoding,
    remapped: &'static [(char, char)],
    lone: &'static [(u8, char)],
) -> Codec {
    Codec::MultiByte(MultiByte {
        encoding,
        remapped,
        lone,
        whole: &[],
    })
}

/// Every codec gotopy decodes, each with Python's name first and then Python's aliases
/// (`encodings.aliases`), all normalised as `encodings.normalize_encoding` does.
/// `tests/encoding.rs` compares each, byte by byte, with python3's own codec.
static CODECS: &[(Codec, &[&str])] = {
    use encoding_rs::*;
    &[
        (
            Codec::Utf8,
            &[
                "utf_8",
                "utf_8_sig",
                "u8",
                "utf",
                "utf8",
                "utf8_ucs2",
                "utf8_ucs4",
                "cp65001",
            ],
        ),
        (
            Codec::SingleByte(SingleByte {
                base: Base::Identity,
                c1: C1::Base,
                overrides: &[],
            }),
            &[
                "latin_1",
                "iso8859_1",
                "8859",
                "cp819",
                "csisolatin1",
                "ibm819",
                "iso8859",
                "iso_8859_1",
                "iso_8859_1_1987",
                "iso_ir_100",
                "l1",
                "latin",
                "latin1",
            ],
        ),
        (
            Codec::SingleByte(SingleByte {
                base: Base::Nothing,
                c1: C1::Base,
                overrides: &[],
            }),
            &[
                "ascii",
                "646",
                "ansi_x3.4_1968",
                "ansi_x3_4_1968",
                "ansi_x3.4_1986",
                "cp367",
                "csascii",
                "ibm367",
                "iso646_us",
                "iso_646.irv_1991",
                "iso_ir_6",
                "us",
                "us_ascii",
            ],
        ),
        (
            windows(WINDOWS_1250, &[]),
            &["cp1250", "1250", "windows_1250"],
        ),
        (
            windows(WINDOWS_1251, &[]),
            &["cp1251", "1251", "windows_1251"],
        ),
        (
            windows(WINDOWS_1252, &[]),
            &["cp1252", "1252", "windows_1252"],
        ),
        (
            windows(WINDOWS_1253, &[]),
            &["cp1253", "1253", "windows_1253"],
        ),
        (
            windows(WINDOWS_1254, &[]),
            &["cp1254", "1254", "windows_1254"],
        ),
        // Python leaves 0xca undefined; WHATWG has the Hebrew point holam haser there.
        (
            windows(WINDOWS_1255, &[(0xCA, None)]),
            &["cp1255", "1255", "windows_1255"],
        ),
        (
            windows(WINDOWS_1256, &[]),
            &["cp1256", "1256", "windows_1256"],
        ),
        (
            windows(WINDOWS_1257, &[]),
            &["cp1257", "1257", "windows_1257"],
        ),
        (
            windows(WINDOWS_1258, &[]),
            &["cp1258", "1258", "windows_1258"],
        ),
        (windows(WINDOWS_874, &[]), &["cp874"]),
        (
            whatwg(ISO_8859_2),
            &[
                "iso8859_2",
                "csisolatin2",
                "iso_8859_2",
                "iso_8859_2_1987",
                "iso_ir_101",
                "l2",
                "latin2",
            ],
        ),
        (
            whatwg(ISO_8859_3),
            &[
                "iso8859_3",
                "csisolatin3",
                "iso_8859_3",
                "iso_8859_3_1988",
                "iso_ir_109",
                "l3",
                "latin3",
            ],
        ),
        (
            whatwg(ISO_8859_4),
            &[
                "iso8859_4",
                "csisolatin4",
                "iso_8859_4",
                "iso_8859_4_1988",
                "iso_ir_110",
                "l4",
                "latin4",
            ],
        ),
        (
            whatwg(ISO_8859_5),
            &[
                "iso8859_5",
                "csisolatincyrillic",
                "cyrillic",
                "iso_8859_5",
                "iso_8859_5_1988",
                "iso_ir_144",
            ],
        ),
        (
            whatwg(ISO_8859_6),
            &[
                "iso8859_6",
                "arabic",
                "asmo_708",
                "csisolatinarabic",
                "ecma_114",
                "iso_8859_6",
                "iso_8859_6_1987",
                "iso_ir_127",
            ],
        ),
        (
            whatwg(ISO_8859_7),
            &[
                "iso8859_7",
                "csisolatingreek",
                "ecma_118",
                "elot_928",
                "greek",
                "greek8",
                "iso_8859_7",
                "iso_8859_7_1987",
                "iso_ir_126",
            ],
        ),
        (
            whatwg(ISO_8859_8),
            &[
                "iso8859_8",
                "csisolatinhebrew",
                "hebrew",
                "iso_8859_8",
                "iso_8859_8_1988",
                "iso_ir_138",
            ],
        ),
        (
            iso_8859(WINDOWS_1254),
            &[
                "iso8859_9",
                "csisolatin5",
                "iso_8859_9",
                "iso_8859_9_1989",
                "iso_ir_148",
                "l5",
                "latin5",
            ],
        ),
        (
            whatwg(ISO_8859_10),
            &[
                "iso8859_10",
                "csisolatin6",
                "iso_8859_10",
                "iso_8859_10_1992",
                "iso_ir_157",
                "l6",
                "latin6",
            ],
        ),
        (
            iso_8859(WINDOWS_874),
            &["iso8859_11", "iso_8859_11", "iso_8859_11_2001", "thai"],
        ),
        (
            whatwg(ISO_8859_13),
            &["iso8859_13", "iso_8859_13", "l7", "latin7"],
        ),
        (
            whatwg(ISO_8859_14),
            &[
                "iso8859_14",
                "iso_8859_14",
                "iso_8859_14_1998",
                "iso_celtic",
                "iso_ir_199",
                "l8",
                "latin8",
            ],
        ),
        (
            whatwg(ISO_8859_15),
            &["iso8859_15", "iso_8859_15", "l9", "latin9"],
        ),
        (
            whatwg(ISO_8859_16),
            &[
                "iso8859_16",
                "iso_8859_16",
                "iso_8859_16_2001",
                "iso_ir_226",
                "l10",
                "latin10",
            ],
        ),
        (whatwg(KOI8_R), &["koi8_r", "cskoi8r"]),
        // WHATWG's KOI8-U is KOI8-RU, which has two more Cyrillic letters.
        (
            Codec::SingleByte(SingleByte {
                base: Base::Whatwg(KOI8_U),
                c1: C1::Base,
                overrides: &[(0xAE, Some('\u{255D}')), (0xBE, Some('\u{256C}'))],
            }),
            &["koi8_u"],
        ),
        (whatwg(MACINTOSH), &["mac_roman", "macintosh", "macroman"]),
        (whatwg(X_MAC_CYRILLIC), &["mac_cyrillic", "maccyrillic"]),
        (whatwg(IBM866), &["cp866", "866", "csibm866", "ibm866"]),
        (
            multi(SHIFT_JIS, JIS_X_0208, &[]),
            &[
                "shift_jis",
                "csshiftjis",
                "s_jis",
                "shiftjis",
                "sjis",
                "x_mac_japanese",
            ],
        ),
        (
            multi(
                SHIFT_JIS,
                &[],
                &[
                    (0xA0, '\u{F8F0}'),
                    (0xFD, '\u{F8F1}'),
                    (0xFE, '\u{F8F2}'),
                    (0xFF, '\u{F8F3}'),
                ],
            ),
            &["cp932", "932", "ms932", "ms_kanji", "mskanji"],
        ),
        (
            Codec::MultiByte(MultiByte {
                encoding: EUC_JP,
                remapped: JIS_X_0208,
                lone: &[],
                // JIS X 0212's tilde, which WHATWG reads as the fullwidth tilde. `0x8f` is
                // never a second or third byte, so the sequence cannot straddle others.
                whole: &[(b"\x8f\xa2\xb7", '~')],
            }),
            &["euc_jp", "eucjp", "u_jis", "ujis"],
        ),
        (multi(GBK, &[], &[]), &["gbk", "936", "cp936", "ms936"]),
        (
            multi(
                GBK,
                &[('\u{00B7}', '\u{30FB}'), ('\u{2014}', '\u{2015}')],
                &[],
            ),
            &[
                "gb2312",
                "chinese",
                "csiso58gb231280",
                "euc_cn",
                "euccn",
                "eucgb2312_cn",
                "gb2312_1980",
                "gb2312_80",
                "iso_ir_58",
                "x_mac_simp_chinese",
            ],
        ),
        (
            multi(EUC_KR, &[], &[]),
            &[
                "euc_kr",
                "euckr",
                "korean",
                "ks_c_5601",
                "ks_c_5601_1987",
                "ks_x_1001",
                "ksc5601",
                "ksx1001",
                "x_mac_korean",
            ],
        ),
        (multi(EUC_KR, &[], &[]), &["cp949", "949", "ms949", "uhc"]),
    ]
};
