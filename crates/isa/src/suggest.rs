//! Did-you-mean suggestions over the names of the table.

use crate::{all_names, lookup, EntryKind};

/// Edit distance with adjacent transpositions (optimal string alignment), over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[n][m]
}

/// The closest of `candidates` to `word` within a distance that grows with its length
/// (1 for up to 4 characters, then about a third of the length). Ties go to the candidate
/// that shares the longer prefix, then to the shorter, then alphabetical.
pub(crate) fn closest<'a>(
    word: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    let prefix = |c: &str| {
        word.chars()
            .zip(c.chars())
            .take_while(|(x, y)| x == y)
            .count()
    };
    candidates
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|(d1, c1), (d2, c2)| {
            d1.cmp(d2)
                .then(prefix(c2).cmp(&prefix(c1)))
                .then(c1.len().cmp(&c2.len()))
                .then(c1.cmp(c2))
        })
        .map(|(_, c)| c)
}

/// The known opcode nearest to `unknown`, or `None` when nothing is close.
///
/// Only the opcode part is compared (`ld.glbal` is compared as `ld`, so it gives `ld`; use
/// [`suggest_modifier`] for the modifier). A known opcode suggests itself. Without a prefix
/// the candidates are instructions; a leading `%` or `.` limits them to special registers or
/// directives instead (the prefix is not part of the answer).
pub fn suggest(unknown: &str) -> Option<&'static str> {
    let (prefix, bare) = match unknown.chars().next() {
        Some(c @ ('%' | '.')) => (Some(c), &unknown[1..]),
        _ => (None, unknown.split('.').next().unwrap_or(unknown)),
    };
    // Without a prefix, only instructions are candidates (`lod` is `ld`, not `.loc`).
    let fits = |name: &str| match prefix {
        None => lookup(name)
            .iter()
            .any(|e| e.kind == EntryKind::Instruction),
        Some(p) => !lookup(&format!("{p}{name}")).is_empty(),
    };
    closest(bare, all_names().filter(|n| fits(n)))
}

/// The modifier of `opcode` nearest to `unknown` (`ld`, `.glbal` gives `.global`).
pub fn suggest_modifier(opcode: &str, unknown: &str) -> Option<&'static str> {
    let want = if unknown.starts_with('.') {
        unknown.to_string()
    } else {
        format!(".{unknown}")
    };
    let mut mods: Vec<&'static str> = Vec::new();
    for e in lookup(opcode) {
        for form in e.forms {
            for seg in form.path.split('.').skip(1) {
                // path segments are substrings of the static path
                let start = form.path.find(&format!(".{seg}")).unwrap_or(0);
                let s = &form.path[start..start + seg.len() + 1];
                if !mods.contains(&s) {
                    mods.push(s);
                }
            }
        }
        for m in e.modifiers() {
            if !mods.contains(&m) {
                mods.push(m);
            }
        }
    }
    closest(&want, mods.into_iter())
}
