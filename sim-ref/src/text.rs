//! A user's text quoted back in messages and tables, by one rule everywhere (the assembler,
//! the readers, the trace reader, the command line): characters that are invisible or move the
//! text around them (controls, bidirectional embeddings, overrides and isolates, zero-width
//! format characters) are escaped as `\u{202e}`, and a quote stops at [`QUOTE_CHARS`]
//! characters with `…` and the full length, so a megabyte-long token makes a one-line message.

use std::borrow::Cow;

/// The most characters of a user's text a message quotes.
pub const QUOTE_CHARS: usize = 40;

/// `text` cut to at most `max` characters, with `…` after a cut.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((at, _)) => format!("{}…", &text[..at]).into(),
    }
}

/// Whether `c` is invisible or reorders the text around it.
pub fn invisible(c: char) -> bool {
    c.is_control() || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{061c}')
}

/// `s` with every invisible character escaped (for a table cell: nothing cut).
pub fn shown(s: &str) -> Cow<'_, str> {
    if !s.chars().any(invisible) {
        return s.into();
    }
    s.chars().map(|c| if invisible(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect::<String>().into()
}

/// `s` in backticks for a message: shown, cut at [`QUOTE_CHARS`] characters (and then its
/// length said).
pub fn quoted(s: &str) -> String {
    match clip(s, QUOTE_CHARS) {
        Cow::Borrowed(t) => format!("`{}`", shown(t)),
        cut => format!("`{}` ({} characters)", shown(&cut), s.chars().count()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_escaped_and_long_text_cut() {
        assert_eq!(shown("a\u{202e}b\tc\u{1b}[31m"), "a\\u{202e}b\\u{9}c\\u{1b}[31m");
        assert_eq!(shown("ordinary name é"), "ordinary name é");
        assert_eq!(quoted("r7"), "`r7`");
        let q = quoted(&"x".repeat(1_000_000));
        assert!(q.chars().count() < 70 && q.ends_with("…` (1000000 characters)"), "{q}");
    }
}
