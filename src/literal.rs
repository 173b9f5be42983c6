//! Python string and bytes literals written from Rust: the one writer the CPython backend
//! (a case value in a message, as `repr` shows it) and `translate` (names and messages in
//! the code it writes) share.

/// A literal of `text` in `repr`'s manner: quoted with `preferred` (`'` as `repr` does, or
/// `"`) unless the text holds that quote and not the other; escapes for the quote, the
/// backslash and the characters that do not print.
pub(crate) fn str_literal(text: &str, preferred: char) -> String {
    let other = if preferred == '"' { '\'' } else { '"' };
    let quote = if text.contains(preferred) && !text.contains(other) {
        other
    } else {
        preferred
    };
    let mut out = String::from(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_control() => {
                let code = u32::from(c);
                if code < 0x100 {
                    out.push_str(&format!("\\x{code:02x}"));
                } else if code < 0x10000 {
                    out.push_str(&format!("\\u{code:04x}"));
                } else {
                    out.push_str(&format!("\\U{code:08x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `repr` of a `bytes`.
pub(crate) fn bytes_literal(bytes: &[u8]) -> String {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut out = String::from("b");
    out.push(char::from(quote));
    for &byte in bytes {
        match byte {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            byte if byte == quote => {
                out.push('\\');
                out.push(char::from(byte));
            }
            0x20..0x7f => out.push(char::from(byte)),
            byte => out.push_str(&format!("\\x{byte:02x}")),
        }
    }
    out.push(char::from(quote));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_read_back_as_their_text() {
        // What Python's `repr` gives for the same values (CPython 3.11).
        assert_eq!(str_literal("a'b", '\''), r#""a'b""#);
        assert_eq!(str_literal("a'b\"", '\''), r#"'a\'b"'"#);
        assert_eq!(str_literal("tab\there\n\u{7}", '\''), r"'tab\there\n\x07'");
        assert_eq!(str_literal("\u{85}", '\''), r"'\x85'");
        assert_eq!(bytes_literal(b"a'\x00\xff"), r#"b"a'\x00\xff""#);
        // The quote `translate` prefers.
        assert_eq!(str_literal("add", '"'), "\"add\"");
        assert_eq!(str_literal("say \"hi\"", '"'), "'say \"hi\"'");
    }
}
