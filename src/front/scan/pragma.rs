//! The line by which a module asks for every scope itself.

/// The line by which a module asks every scope to be rewritten, module and class bodies
/// too, on every route: the front end honours it as it honours [`Options::all_scopes`](super::Options::all_scopes).
pub const ALL_SCOPES: &[u8] = b"# gotopy: all-scopes";

/// Whether one of the first five lines of a module's source is [`ALL_SCOPES`] (blanks around
/// it allowed).
pub fn asks_all_scopes(data: &[u8]) -> bool {
    let mut lines = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < data.len() && lines.len() < 5 {
        match data[at] {
            b'\n' | b'\r' => {
                lines.push(&data[start..at]);
                if data[at] == b'\r' && data.get(at + 1) == Some(&b'\n') {
                    at += 1;
                }
                start = at + 1;
            }
            _ => {}
        }
        at += 1;
    }
    if lines.len() < 5 && start < data.len() {
        lines.push(&data[start..]);
    }
    lines.iter().any(|line| line.trim_ascii() == ALL_SCOPES)
}
