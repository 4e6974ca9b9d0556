//! The lab's modules form no import cycle: each module's `crate::` references, tests
//! included, point only downwards. A cycle (plan and next naming each other, a report and
//! another's report) makes every change to one a change to the other; this test names the
//! cycle it finds.

use std::collections::BTreeMap;
use std::path::Path;

/// Module name -> the modules its code names through `crate::`, comments left out.
fn graph() -> BTreeMap<String, Vec<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut deps: Vec<String> = Vec::new();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let m: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !m.is_empty() && m != name && !deps.contains(&m) {
                    deps.push(m);
                }
            }
        }
        g.insert(name, deps);
    }
    g
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
