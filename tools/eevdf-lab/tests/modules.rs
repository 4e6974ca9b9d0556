//! The lab's modules form no import cycle: each module's references to the others
//! (`crate::x`, `crate::{x, y::z}`, and `super::` outside its test module, which names the
//! crate root, main.rs), tests included, point only downwards. A cycle (plan and next
//! naming each other, a report and another's report) makes every change to one a change to
//! the other; this test names the cycle it finds.

use std::collections::BTreeMap;
use std::path::Path;

/// The module a file at the crate root is (main.rs is the root itself).
const ROOT: &str = "main";

/// The modules `code` (one module's text, comments left out) names, given the crate's
/// modules: `crate::x` and each entry of `crate::{x, y::{..}}` name `x` and `y` (or the
/// root, for an item of main.rs), `super::` names the root.
fn names(code: &str, modules: &[String]) -> Vec<String> {
    let module = |m: &str| {
        if modules.iter().any(|x| x == m) {
            m.to_string()
        } else {
            ROOT.to_string()
        }
    };
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut out: Vec<String> = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            out.push(module(&ident(rest)));
            continue;
        };
        // The group's top-level entries, each up to a comma at depth 0.
        let mut depth = 0;
        let mut start = 0;
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    out.push(module(&ident(group[start..j].trim())));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(module(&ident(group[start..j].trim())));
                    start = j + 1;
                }
                _ => {}
            }
        }
    }
    if code.contains("super::") {
        out.push(ROOT.to_string());
    }
    out.retain(|m| !m.is_empty() && m != "self");
    out.sort();
    out.dedup();
    out
}

/// Module name -> the modules its code names, comments left out.
fn graph() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        files.insert(name, std::fs::read_to_string(&path).unwrap());
    }
    let modules: Vec<String> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(name, text)| {
            // Comments out; a module's `mod tests` (its last item) may say `use super::*`.
            let code: String = text
                .lines()
                .take_while(|l| !l.starts_with("mod tests"))
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            let tests: String = text
                .lines()
                .skip_while(|l| !l.starts_with("mod tests"))
                .map(|l| l.split("//").next().unwrap_or("").replace("super::", ""))
                .collect::<Vec<_>>()
                .join("\n");
            let mut deps = names(&code, &modules);
            deps.extend(names(&tests, &modules));
            // `mod x;` (main.rs's) names x: the root sits above every module it declares.
            deps.extend(code.lines().filter_map(|l| {
                let m = l.trim().trim_start_matches("pub ").strip_prefix("mod ")?;
                Some(m.strip_suffix(';')?.to_string())
            }));
            deps.sort();
            deps.dedup();
            deps.retain(|d| d != name);
            (name.clone(), deps)
        })
        .collect()
}

/// A cycle of `g`, as the path that closes it, if there is one.
fn cycle(g: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    // 0: not seen, 1: on the current path, 2: done.
    fn visit(
        g: &BTreeMap<String, Vec<String>>,
        n: &str,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n).copied().unwrap_or(0) {
            1 => {
                let start = path.iter().position(|p| p == n).unwrap();
                let mut c = path[start..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            2 => return None,
            _ => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, d, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = visit(g, n, &mut state, &mut Vec::new()) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_import_cycles() {
    let g = graph();
    assert!(g.contains_key("plan") && g.contains_key("report"), "{g:?}");
    // main.rs declares every module: it is the top, above all of them.
    assert_eq!(g[ROOT].len(), g.len() - 1, "{g:?}");
    if let Some(c) = cycle(&g) {
        panic!("import cycle: {}", c.join(" -> "));
    }
}

#[test]
fn a_cycle_is_found() {
    let g: BTreeMap<String, Vec<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec![]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycle(&g).unwrap().join(" -> "), "a -> b -> c -> a");
}

#[test]
fn groups_and_the_root_are_read() {
    let modules: Vec<String> = ["main", "plan", "next", "seeds"].map(String::from).to_vec();
    let code = "use crate::{next::{A, B}, plan, Thing};\nlet x = crate::seeds::f();";
    assert_eq!(names(code, &modules), ["main", "next", "plan", "seeds"]);
    assert_eq!(names("use super::fmt_dur;", &modules), ["main"]);
    assert!(names("use std::fmt;", &modules).is_empty());
}
