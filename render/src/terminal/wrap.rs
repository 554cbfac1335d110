//! Word wrapping for the terminal: reasons, tool lists and coverage lines
//! run to several hundred characters, and a terminal folds them mid-word.

/// `text` as lines of at most `width` characters, broken at spaces; a word
/// longer than `width` (a JSON value, a URL) keeps a line of its own whole.
/// Line breaks already in `text` are kept.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = String::new();
        let mut len = 0;
        for word in paragraph.split(' ').filter(|w| !w.is_empty()) {
            let n = word.chars().count();
            if len > 0 && len + 1 + n > width {
                lines.push(std::mem::take(&mut line));
                len = 0;
            }
            if len > 0 {
                line.push(' ');
                len += 1;
            }
            line.push_str(word);
            len += n;
        }
        lines.push(line);
    }
    lines
}

/// `text` wrapped to `width` after `lead` (printed before the first line),
/// the other lines indented as deep as `lead` is wide.
pub(super) fn hanging(lead: &str, text: &str, width: usize) -> String {
    let indent = lead.chars().count();
    let mut out = String::new();
    for (i, line) in wrap(text, width.saturating_sub(indent).max(20))
        .into_iter()
        .enumerate()
    {
        if i == 0 {
            out.push_str(lead);
        } else {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_break_at_spaces_and_long_words_stay_whole() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(
            wrap("a {\"long\":\"json\"} b", 6),
            ["a", "{\"long\":\"json\"}", "b"]
        );
        assert_eq!(wrap("one\ntwo", 80), ["one", "two"]);
        assert_eq!(
            hanging("  why: ", "aaaaaaaaaa bbbbbbbbbb cccc", 30),
            "  why: aaaaaaaaaa bbbbbbbbbb\n       cccc\n"
        );
    }
}
