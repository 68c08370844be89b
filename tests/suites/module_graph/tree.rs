//! The crate's module tree, as rustc builds it: from the root file, each
//! `mod name;` found where rustc would look (`name.rs`, `name/mod.rs`, or a
//! `#[path]`), each inline `mod name { ... }` a module of its own. Plain data
//! in, plain data out: the files come as a map from path to text, so a test
//! can hand it a tree written inline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A module's path from the crate root (`[]` is the root, `["core", "state"]`
/// is `crate::core::state`).
pub type ModPath = Vec<String>;

pub fn display(path: &[String]) -> String {
    if path.is_empty() {
        "crate".to_string()
    } else {
        path.join("::")
    }
}

/// One module: the file its items are written in, and the items (a nested
/// `mod` among them is a module of its own, loaded separately).
pub struct Module {
    pub file: PathBuf,
    pub items: Vec<syn::Item>,
}

pub struct Tree {
    pub modules: BTreeMap<ModPath, Module>,
}

/// Loads the tree from `root` (a key of `files`, e.g. `main.rs`). Fails
/// naming the file that does not parse, the `mod` whose file is missing, or
/// the files no `mod` reaches (the check would not see them).
pub fn load(files: &BTreeMap<PathBuf, String>, root: &Path) -> Result<Tree, String> {
    let mut loader = Loader {
        files,
        modules: BTreeMap::new(),
        errors: Vec::new(),
        reached: Vec::new(),
    };
    loader.file(root, Vec::new(), root.parent().unwrap_or(Path::new("")));
    for file in files.keys() {
        if !loader.reached.contains(file) {
            loader.errors.push(format!(
                "{}: no `mod` declaration reaches this file; declare it or delete it",
                file.display()
            ));
        }
    }
    if loader.errors.is_empty() {
        Ok(Tree {
            modules: loader.modules,
        })
    } else {
        Err(loader.errors.join("\n"))
    }
}

struct Loader<'a> {
    files: &'a BTreeMap<PathBuf, String>,
    modules: BTreeMap<ModPath, Module>,
    errors: Vec<String>,
    reached: Vec<PathBuf>,
}

impl Loader<'_> {
    /// Loads the module `path` from `file`; its `mod name;` declarations
    /// are looked up in `dir`.
    fn file(&mut self, file: &Path, path: ModPath, dir: &Path) {
        self.reached.push(file.to_path_buf());
        let Some(text) = self.files.get(file) else {
            self.errors
                .push(format!("{}: file not found", file.display()));
            return;
        };
        let parsed = match syn::parse_file(text) {
            Ok(parsed) => parsed,
            Err(err) => {
                let at = err.span().start();
                self.errors.push(format!(
                    "{}:{}:{}: does not parse: {err}",
                    file.display(),
                    at.line,
                    at.column + 1
                ));
                return;
            }
        };
        self.module(file, path, dir, parsed.items);
    }

    fn module(&mut self, file: &Path, path: ModPath, dir: &Path, items: Vec<syn::Item>) {
        for item in &items {
            let syn::Item::Mod(m) = item else { continue };
            let name = m.ident.to_string();
            let mut child = path.clone();
            child.push(name.clone());
            match &m.content {
                Some((_, inner)) => self.module(file, child, &dir.join(&name), inner.clone()),
                None => match child_file(self.files, file, dir, &name, path_attr(m)) {
                    Ok((child_file, child_dir)) => self.file(&child_file, child, &child_dir),
                    Err(err) => self.errors.push(err),
                },
            }
        }
        self.modules.insert(
            path,
            Module {
                file: file.to_path_buf(),
                items,
            },
        );
    }
}

/// Where rustc finds `mod name;` declared in `file` (children of `file` live
/// in `dir`), and where that file's own children live.
fn child_file(
    files: &BTreeMap<PathBuf, String>,
    file: &Path,
    dir: &Path,
    name: &str,
    path_attr: Option<String>,
) -> Result<(PathBuf, PathBuf), String> {
    if let Some(rel) = path_attr {
        // Outside inline modules, `#[path]` is relative to the declaring
        // file's directory.
        let found = file.parent().unwrap_or(Path::new("")).join(rel);
        let child_dir = found.with_extension("");
        return Ok((found, child_dir));
    }
    let flat = dir.join(format!("{name}.rs"));
    let nested = dir.join(name).join("mod.rs");
    match (files.contains_key(&flat), files.contains_key(&nested)) {
        (true, false) => Ok((flat, dir.join(name))),
        (false, true) => Ok((nested, dir.join(name))),
        (true, true) => Err(format!(
            "{}: `mod {name};` is both {} and {}; delete one",
            file.display(),
            flat.display(),
            nested.display()
        )),
        (false, false) => Err(format!(
            "{}: `mod {name};` has no file (looked for {} and {})",
            file.display(),
            flat.display(),
            nested.display()
        )),
    }
}

fn path_attr(m: &syn::ItemMod) -> Option<String> {
    m.attrs.iter().find_map(|attr| {
        let syn::Meta::NameValue(nv) = &attr.meta else {
            return None;
        };
        if !nv.path.is_ident("path") {
            return None;
        }
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}
