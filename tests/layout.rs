//! The source layout's rules (`docs/adding-a-block.md`), checked on the workspace's own files:
//! no source file is over [`MAX_LINES`] lines (generated code included), and no crate has an
//! import circle between its modules.
//!
//! `cargo test --release --test layout -- --nocapture` prints the largest files and any circle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Lines a source file may have at most.
const MAX_LINES: usize = 1_000;

/// The workspace's crates: the folder of each one's sources.
const CRATES: &[(&str, &str)] = &[("mpgpu", "src"), ("mpgpu-ref", "sim-ref/src"), ("mpgpu-spec", "sim-ref/spec/src"), ("mpgpu-rtl", "rtl/src"), ("mpgpu-tb", "testbenches/src")];

/// Folders of Rust sources besides the crates' own (tests, benches).
const OTHER_SOURCES: &[&str] = &["tests", "sim-ref/tests", "sim-ref/spec/tests", "rtl/tests", "testbenches/tests"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every Rust source of the workspace, relative to its root.
fn all_sources() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in CRATES.iter().map(|c| c.1).chain(OTHER_SOURCES.iter().copied()) {
        rust_files(&root().join(d), &mut v);
    }
    v.into_iter().map(|p| p.strip_prefix(root()).unwrap().to_path_buf()).collect()
}

fn line_count(p: &Path) -> usize {
    fs::read_to_string(root().join(p)).map(|s| s.lines().count()).unwrap_or(0)
}

#[test]
fn no_source_file_is_over_the_line_limit() {
    let mut sizes: Vec<(usize, PathBuf)> = all_sources().into_iter().map(|p| (line_count(&p), p)).collect();
    sizes.sort_by(|a, b| b.cmp(a));
    println!("largest source files:");
    for (n, p) in sizes.iter().take(10) {
        println!("{n:>6}  {}", p.display());
    }
    let over: Vec<String> = sizes.iter().filter(|(n, _)| *n > MAX_LINES).map(|(n, p)| format!("{} ({n} lines)", p.display())).collect();
    assert!(over.is_empty(), "over {MAX_LINES} lines: {}", over.join(", "));
}

/// A crate's module path of a source file (`timing/sm/zorua.rs` -> `timing::sm::zorua`; the
/// crate root is empty).
fn module_of(rel: &Path) -> String {
    let s = rel.with_extension("").to_string_lossy().replace(std::path::MAIN_SEPARATOR, "::");
    let s = s.strip_suffix("::mod").unwrap_or(&s).to_string();
    if s == "lib" || s == "main" {
        String::new()
    } else {
        s
    }
}

/// The text of `src` without comments and string literals (so that a path in a doc comment or
/// a message is not read as a dependency).
fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'"' {
            // (a raw string's hashes are not followed: the sources have no `"#` inside one)
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if b[i] == b'\'' && i + 2 < b.len() && (b[i + 2] == b'\'' || b[i + 1] == b'\\') {
            // (a char literal, not a lifetime)
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            let c = src[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The paths a `use` tree names, expanded (`a::{b, c::d}` -> `a::b`, `a::c::d`).
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let body = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let base = join(prefix, head);
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&body[start..k], &base, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand_use(&body[start..], &base, out);
    } else if !tree.is_empty() {
        let path = tree.split(" as ").next().unwrap().trim();
        out.push(join(prefix, path));
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_string(),
        (_, true) => a.to_string(),
        _ => format!("{a}::{b}"),
    }
}

/// The paths a module's code names that start at the crate root or a parent (`crate::`,
/// `super::`), made absolute; `pub use` re-exports are left out (a module re-exporting its
/// children's items is their facade, not their user).
fn named_paths(module: &str, code: &str) -> Vec<String> {
    let mut raw = Vec::new();
    // `use` statements, which may group paths in braces; the rest of the code is kept in `body`
    let (mut rest, mut body) = (code, String::new());
    while let Some(k) = find_word(rest, "use") {
        let before = rest[..k].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.rsplit_once("pub").is_some_and(|(_, t)| t.trim_start().starts_with('('));
        let stmt_end = rest[k..].find(';').map(|e| k + e).unwrap_or(rest.len());
        if !public {
            expand_use(&rest[k + 3..stmt_end], "", &mut raw);
        }
        body.push_str(&rest[..k]);
        rest = &rest[(stmt_end + 1).min(rest.len())..];
    }
    body.push_str(rest);
    let code = body.as_str();
    // paths written in the code
    let idents = |s: &str| s.chars().all(|c| c.is_alphanumeric() || c == '_' || c == ':');
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(k) = code[from..].find(start) {
            let at = from + k;
            let prev = code[..at].chars().next_back();
            if prev.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':')) {
                let end = code[at..].find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map_or(code.len(), |e| at + e);
                let p = code[at..end].trim_end_matches(':');
                if idents(p) {
                    raw.push(p.to_string());
                }
            }
            from = at + start.len();
        }
    }
    raw.into_iter()
        .filter_map(|p| {
            let segs: Vec<&str> = p.split("::").collect();
            let mut base: Vec<&str> = if module.is_empty() { vec![] } else { module.split("::").collect() };
            let mut k = 0;
            match segs.first() {
                Some(&"crate") => {
                    base.clear();
                    k = 1;
                }
                Some(&"super") => {
                    while segs.get(k) == Some(&"super") {
                        base.pop();
                        k += 1;
                    }
                }
                _ => return None,
            }
            base.extend(&segs[k..]);
            Some(base.join("::"))
        })
        .collect()
}

fn find_word(s: &str, w: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = s[from..].find(w) {
        let at = from + k;
        let before = s[..at].chars().next_back();
        let after = s[at + w.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if edge(before) && edge(after) {
            return Some(at);
        }
        from = at + w.len();
    }
    None
}

/// The module a path names: the longest of `modules` that is a prefix of it.
fn owner<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    let segs: Vec<&str> = path.split("::").collect();
    (1..=segs.len()).rev().find_map(|n| modules.get(&segs[..n].join("::")))
}

/// One crate's import circles: its strongly connected groups of more than one module, each
/// with one edge of it as an example (`a -> b`).
fn circles(krate: &str, dir: &str) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root().join(dir), &mut files);
    let mut code = BTreeMap::new();
    for f in &files {
        let rel = f.strip_prefix(root().join(dir)).unwrap();
        code.insert(module_of(rel), code_only(&fs::read_to_string(f).unwrap()));
    }
    let modules: BTreeSet<String> = code.keys().cloned().collect();
    let mut edges: BTreeMap<&String, BTreeSet<&String>> = BTreeMap::new();
    for (m, c) in &code {
        let e = edges.entry(m).or_default();
        for p in named_paths(m, c) {
            if let Some(o) = owner(&p, &modules) {
                // (a module naming its own descendants or the crate root is not a circle's
                // half: the root only declares modules and re-exports)
                let descendant = m.is_empty() || o.starts_with(&format!("{m}::"));
                if o != m && !descendant && !o.is_empty() {
                    e.insert(o);
                }
            }
        }
    }
    // Tarjan's strongly connected components
    let names: Vec<&String> = modules.iter().collect();
    let index_of: BTreeMap<&String, usize> = names.iter().enumerate().map(|(k, n)| (*n, k)).collect();
    let n = names.len();
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut next, mut groups) = (Vec::new(), 0, Vec::new());
    fn visit(v: usize, g: &[Vec<usize>], st: &mut (&mut Vec<usize>, &mut Vec<usize>, &mut Vec<bool>, &mut Vec<usize>, &mut usize, &mut Vec<Vec<usize>>)) {
        st.0[v] = *st.4;
        st.1[v] = *st.4;
        *st.4 += 1;
        st.3.push(v);
        st.2[v] = true;
        for &w in &g[v] {
            if st.0[w] == usize::MAX {
                visit(w, g, st);
                st.1[v] = st.1[v].min(st.1[w]);
            } else if st.2[w] {
                st.1[v] = st.1[v].min(st.0[w]);
            }
        }
        if st.1[v] == st.0[v] {
            let mut comp = Vec::new();
            loop {
                let w = st.3.pop().unwrap();
                st.2[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                st.5.push(comp);
            }
        }
    }
    let graph: Vec<Vec<usize>> = names.iter().map(|m| edges.get(m).map(|s| s.iter().map(|t| index_of[t]).collect()).unwrap_or_default()).collect();
    for v in 0..n {
        if index[v] == usize::MAX {
            visit(v, &graph, &mut (&mut index, &mut low, &mut on, &mut stack, &mut next, &mut groups));
        }
    }
    groups
        .into_iter()
        .map(|mut comp| {
            comp.sort();
            let members: Vec<&str> = comp.iter().map(|&k| names[k].as_str()).collect();
            let example = comp.iter().find_map(|&a| graph[a].iter().find(|b| comp.contains(b)).map(|&b| format!("{} -> {}", names[a], names[b]))).unwrap_or_default();
            format!("{krate}: {} (e.g. {example})", members.join(", "))
        })
        .collect()
}

#[test]
fn no_crate_has_an_import_circle() {
    let found: Vec<String> = CRATES.iter().flat_map(|(k, d)| circles(k, d)).collect();
    for c in &found {
        println!("circle: {c}");
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn the_circle_finder_finds_a_planted_circle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    fs::create_dir_all(src.join("a")).unwrap();
    fs::write(src.join("lib.rs"), "pub mod a; pub mod b; pub mod c;").unwrap();
    fs::write(src.join("a/mod.rs"), "// crate::c::X in a comment is no dependency\nuse crate::{b::{Y, self}, c};\npub mod d;").unwrap();
    fs::write(src.join("a/d.rs"), "use super::super::c::Z; fn f() { let s = \"crate::b\"; }").unwrap();
    fs::write(src.join("b.rs"), "fn g() { crate::a::d::h(); }").unwrap();
    fs::write(src.join("c.rs"), "pub use crate::a::Q; // (a re-export)\n").unwrap();
    // a -> b, a -> c, a::d -> c, b -> a::d: no circle yet (c only re-exports a)
    let under = src.to_string_lossy().into_owned();
    let run = |d: &str| {
        let mut files = Vec::new();
        rust_files(Path::new(d), &mut files);
        assert_eq!(files.len(), 5);
        circles_in(d)
    };
    assert!(run(&under).is_empty(), "{:?}", run(&under));
    fs::write(src.join("c.rs"), "fn k() { crate::b::g(); }").unwrap();
    fs::write(src.join("b.rs"), "use crate::a::d::h; fn g() { h() }").unwrap();
    fs::write(src.join("a/d.rs"), "use super::super::c::Z;").unwrap();
    // a::d -> c -> b -> a::d
    let found = run(&under);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("a::d, b, c"), "{found:?}");
}

/// [`circles`] for a folder given by its absolute path (`root().join` of one is itself).
fn circles_in(dir: &str) -> Vec<String> {
    circles("test", dir)
}
