//! Which modules each module names, and where: every `use` tree (braces,
//! `self`, renames, globs) and every path in a type, expression, pattern or
//! bound, resolved to the module that holds the item it names.
//!
//! Resolution follows what rustc does for the paths this crate writes:
//! `crate::`, `super::`, `self::`, a child module's name, or a name a `use`
//! brought in (also through a parent's `use` re-export and through
//! `use ...::*`). A path whose first segment is none of these names another
//! crate, a prelude item or a local item, and is no edge.
//!
//! Macro arguments are token streams to syn; the ones that parse as a
//! comma-separated list of expressions (`format!`, `assert_eq!`, `vec!`) are
//! read, others (`tokio::select!`, `matches!` patterns) are not.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use syn::visit::Visit;

use super::tree::{ModPath, Tree};

/// A name written in one module that resolves to another.
pub struct Reference {
    pub from: ModPath,
    pub to: ModPath,
    pub file: std::path::PathBuf,
    pub line: usize,
    /// The path as written (`crate::core::state::SCROLLBACK`).
    pub written: String,
}

/// Every reference from a module to another one (a module naming its own
/// items is left out).
pub fn references(tree: &Tree) -> Vec<Reference> {
    let scopes: BTreeMap<&ModPath, Scope> = tree
        .modules
        .iter()
        .map(|(path, module)| (path, Scope::of(&module.items)))
        .collect();
    let resolver = Resolver {
        tree,
        scopes,
        seen: RefCell::default(),
    };
    let mut out = Vec::new();
    for (path, module) in &tree.modules {
        let mut written = Written::default();
        for item in &module.items {
            written.visit_item(item);
        }
        for (segments, line) in written.paths {
            for to in resolver.holders(path, &segments) {
                if &to == path {
                    continue;
                }
                out.push(Reference {
                    from: path.clone(),
                    to,
                    file: module.file.clone(),
                    line,
                    written: segments.join("::"),
                });
            }
        }
    }
    out
}

/// The names one module's `use` declarations bind (also those inside
/// function bodies: rustc scopes them to the block, and counting them for
/// the whole module only adds ways to resolve a path, never an edge that the
/// `use` itself does not already make).
#[derive(Default)]
struct Scope {
    children: BTreeSet<String>,
    /// `name` → the paths the `use`s binding it wrote, relative to this
    /// module (two under `#[cfg]` alternatives).
    aliases: BTreeMap<String, Vec<Vec<String>>>,
    /// `use path::*`: paths relative to this module.
    globs: Vec<Vec<String>>,
}

impl Scope {
    fn of(items: &[syn::Item]) -> Scope {
        let mut scope = Scope::default();
        for item in items {
            if let syn::Item::Mod(m) = item {
                scope.children.insert(m.ident.to_string());
            }
        }
        let mut uses = Uses::default();
        for item in items {
            uses.visit_item(item);
        }
        for binding in uses.bindings {
            match binding.name {
                Bound::Name(name) => {
                    scope.aliases.entry(name).or_default().push(binding.path);
                }
                Bound::Glob => scope.globs.push(binding.path),
                Bound::Nothing => {}
            }
        }
        scope
    }
}

struct Resolver<'a> {
    tree: &'a Tree,
    scopes: BTreeMap<&'a ModPath, Scope>,
    /// The names looked up while resolving one path: globs can reach a
    /// module again (`use super::*` in a child whose parent globs the
    /// child), and each (module, name) needs looking at once.
    seen: RefCell<BTreeSet<(ModPath, String)>>,
}

/// How many aliases a resolution may follow: a `use` loop (which rustc
/// rejects) must not hang the check.
const MAX_HOPS: usize = 32;

impl Resolver<'_> {
    /// The modules holding what `segments`, written in `module`, names:
    /// more than one when `#[cfg]` alternatives bind the same name
    /// (`use systemd as platform;` and `use launchd as platform;`).
    fn holders(&self, module: &ModPath, segments: &[String]) -> Vec<ModPath> {
        self.seen.borrow_mut().clear();
        let mut out: Vec<ModPath> = self
            .absolute(module, segments, MAX_HOPS)
            .iter()
            .flat_map(|absolute| self.holding(absolute, MAX_HOPS))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// `segments` as paths from the crate root; none when it does not start
    /// in this crate.
    fn absolute(&self, module: &ModPath, segments: &[String], hops: usize) -> Vec<Vec<String>> {
        let (Some(hops), Some((first, rest))) = (hops.checked_sub(1), segments.split_first())
        else {
            return Vec::new();
        };
        match first.as_str() {
            "crate" => vec![rest.to_vec()],
            "self" => vec![concat(module, rest)],
            "super" => {
                let mut base = module.clone();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    if base.pop().is_none() {
                        return Vec::new();
                    }
                    rest = &rest[1..];
                }
                vec![concat(&base, rest)]
            }
            _ => self
                .lookup(module, first, hops)
                .into_iter()
                .map(|base| concat(&base, rest))
                .collect(),
        }
    }

    /// What `name` means in `module`: a child module, what `use` aliases
    /// bind it to, or a name a glob import brings in.
    fn lookup(&self, module: &ModPath, name: &str, hops: usize) -> Vec<Vec<String>> {
        let first_time = self
            .seen
            .borrow_mut()
            .insert((module.clone(), name.to_string()));
        let (true, Some(scope)) = (first_time, self.scopes.get(module)) else {
            return Vec::new();
        };
        if scope.children.contains(name) {
            return vec![concat(module, &[name.to_string()])];
        }
        if let Some(paths) = scope.aliases.get(name) {
            return paths
                .iter()
                .flat_map(|path| self.absolute(module, path, hops))
                .collect();
        }
        let mut found = Vec::new();
        for glob in &scope.globs {
            for target in self.absolute(module, glob, hops) {
                if self.tree.modules.contains_key(&target) {
                    found.extend(self.lookup(&target, name, hops.saturating_sub(1)));
                }
            }
        }
        found
    }

    /// The modules that hold the item at `absolute`: the longest prefix that
    /// is a module, following a `use` that re-exports the next segment.
    fn holding(&self, absolute: &[String], hops: usize) -> Vec<ModPath> {
        let mut module: ModPath = Vec::new();
        for (i, segment) in absolute.iter().enumerate() {
            let mut child = module.clone();
            child.push(segment.clone());
            if self.tree.modules.contains_key(&child) {
                module = child;
                continue;
            }
            let alias = self
                .scopes
                .get(&module)
                .and_then(|s| s.aliases.get(segment));
            if let (Some(paths), Some(hops)) = (alias, hops.checked_sub(1)) {
                return paths
                    .iter()
                    .flat_map(|path| self.absolute(&module, path, hops))
                    .flat_map(|target| self.holding(&concat(&target, &absolute[i + 1..]), hops))
                    .collect();
            }
            break;
        }
        vec![module]
    }
}

fn concat(base: &[String], rest: &[String]) -> Vec<String> {
    base.iter().chain(rest).cloned().collect()
}

enum Bound {
    Name(String),
    Glob,
    /// `use x as _;` binds no name.
    Nothing,
}

struct Binding {
    name: Bound,
    /// For a glob, the module globbed; else the path to the item.
    path: Vec<String>,
    line: usize,
}

/// Flattens `use` trees into one binding per leaf.
#[derive(Default)]
struct Uses {
    bindings: Vec<Binding>,
}

impl Uses {
    fn tree(&mut self, prefix: &[String], tree: &syn::UseTree) {
        let mut path = prefix.to_vec();
        match tree {
            syn::UseTree::Path(p) => {
                path.push(p.ident.to_string());
                self.tree(&path, &p.tree);
            }
            syn::UseTree::Name(n) => {
                let line = n.ident.span().start().line;
                if n.ident == "self" {
                    // `use a::b::{self}` binds `b`.
                    let name = path.last().cloned().map_or(Bound::Nothing, Bound::Name);
                    self.bindings.push(Binding { name, path, line });
                } else {
                    path.push(n.ident.to_string());
                    let name = Bound::Name(n.ident.to_string());
                    self.bindings.push(Binding { name, path, line });
                }
            }
            syn::UseTree::Rename(r) => {
                let line = r.ident.span().start().line;
                if r.ident != "self" {
                    path.push(r.ident.to_string());
                }
                let name = if r.rename == "_" {
                    Bound::Nothing
                } else {
                    Bound::Name(r.rename.to_string())
                };
                self.bindings.push(Binding { name, path, line });
            }
            syn::UseTree::Glob(g) => {
                let line = g.star_token.spans[0].start().line;
                self.bindings.push(Binding {
                    name: Bound::Glob,
                    path,
                    line,
                });
            }
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    self.tree(&path, tree);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Uses {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let prefix = if u.leading_colon.is_some() {
            // `use ::x` names an extern crate: no binding into this crate.
            return;
        } else {
            Vec::new()
        };
        self.tree(&prefix, &u.tree);
    }

    /// A nested module has a scope of its own.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}

/// Every path written in one module, with its line.
#[derive(Default)]
struct Written {
    paths: Vec<(Vec<String>, usize)>,
}

impl<'ast> Visit<'ast> for Written {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut uses = Uses::default();
        uses.visit_item_use(u);
        for binding in uses.bindings {
            self.paths.push((binding.path, binding.line));
        }
    }

    /// A path of one segment names either something a `use` brought in
    /// (the `use` made that edge) or something local; only longer paths can
    /// name another module.
    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            if let Some(first) = path.segments.first() {
                let segments = path.segments.iter().map(|s| s.ident.to_string()).collect();
                self.paths.push((segments, first.ident.span().start().line));
            }
        }
        syn::visit::visit_path(self, path);
    }

    /// A macro's arguments are tokens; read them when they are expressions.
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(exprs) = mac.parse_body_with(parser) {
            for expr in &exprs {
                self.visit_expr(expr);
            }
        }
    }

    /// A nested module is visited as a module of its own.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}
