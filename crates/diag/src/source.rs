//! Source files: names, text and the line table that maps byte offsets to lines and columns.

use std::sync::Arc;

/// A 1-based line and column (columns count characters, as editors do).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct LineCol {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column number (in characters).
    pub column: u32,
}

/// One named source text with its line starts.
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: Arc<str>,
    text: Arc<str>,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Wraps `text` under the display name `name` (a path, or `<stdin>`).
    pub fn new(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> SourceFile {
        let text: Arc<str> = text.into();
        let mut line_starts = vec![0u32];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        SourceFile {
            name: name.into(),
            text,
            line_starts,
        }
    }
    /// The display name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The whole text.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// Byte offsets where each line starts (line 1 starts at 0).
    pub fn line_starts(&self) -> &[u32] {
        &self.line_starts
    }
    /// The line and column of a byte offset (clamped to the text).
    pub fn line_col(&self, offset: u32) -> LineCol {
        let offset = offset.min(self.text.len() as u32);
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() as u32 + 1;
        LineCol {
            line: line as u32 + 1,
            column,
        }
    }
    /// `name:line:column` of an offset.
    pub fn location(&self, offset: u32) -> String {
        let lc = self.line_col(offset);
        format!("{}:{}:{}", self.name, lc.line, lc.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let f = SourceFile::new("k.ptx", "ab\ncdé\nx");
        assert_eq!(f.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(f.line_col(3), LineCol { line: 2, column: 1 });
        assert_eq!(f.line_col(7), LineCol { line: 2, column: 4 });
        assert_eq!(f.line_col(8), LineCol { line: 3, column: 1 });
        assert_eq!(f.line_col(100), LineCol { line: 3, column: 2 });
        assert_eq!(f.location(4), "k.ptx:2:2");
    }
}
