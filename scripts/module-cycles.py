#!/usr/bin/env python3
"""Import circles between the top-level modules of each crate (issue 33, item 6).

Usage: scripts/module-cycles.py [--crate NAME] [--edges] [--check] [ROOT]

Reads every crates/*/src/**/*.rs under ROOT (default: the repository this script is in). Per
crate, a file's module is its first directory or file under src/ (src/tpcc/run.rs -> tpcc,
src/cli.rs -> cli); lib.rs and main.rs are the crate's root and no module. In a family directory
(FAMILIES: src/plugins/, the workloads' plug-ins) each child is a module of its own
(src/plugins/tpcc/run.rs -> plugins/tpcc), and the family's mod.rs is the module plugins. An edge A -> B is a
`crate::B` path (in a `use`, grouped `use crate::{B, ...}` included, or in code), a `super::`
chain that climbs to the crate root and names B, or a path to an item the root re-exports from B
(`crate::parse_spec` for lib.rs's `pub use spec::parse_spec`), written in a file of A. Comments and string
literals are skipped; `#[cfg(test)]` code counts like any other (a test module is part of its
file's module). Standard library only.

Prints, per crate, every strongly connected component of more than one module (an import
circle), with each edge inside it and the file:line places that make it. --edges prints every
edge between modules instead; --crate limits to one crate (its directory name under crates/);
--check exits 1 when a circle is found (0 otherwise), for a test.
"""

import os
import re
import sys
from collections import defaultdict

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Directories whose children are modules of their own: no child may import another's way up.
FAMILIES = ("plugins",)


def strip(text):
    """The source with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            j = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a): only blank the former.
            m = re.match(r"'(\\.[^']*|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tree_parts(tree):
    """The top-level parts of a braced use tree (`{a::b, c::{d, e}}` -> [a::b, c::{d, e}]), or
    None when the tree is not braced."""
    tree = tree.strip()
    if not tree.startswith("{"):
        return None
    inner, depth, part, parts = tree[1:tree.rfind("}")], 0, "", []
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        part += ch
    parts.append(part)
    return [p for p in parts if p.strip()]


def use_roots(tree):
    """The first segments of each path in a use tree's text (`{a::b, c}` -> [a, c])."""
    tree = tree.strip()
    parts = tree_parts(tree)
    if parts is not None:
        return [r for p in parts for r in use_roots(p)]
    m = IDENT.match(tree)
    return [m.group(0)] if m else []


def file_module_path(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib", "main") and (rel[-1] == "mod" or len(rel) == 1):
        rel = rel[:-1]
    return rel


def module_key(segments):
    """The module a path under the crate root names: its first segment, or in a family
    directory the family and the child (`plugins/tpcc`)."""
    if not segments:
        return None
    if segments[0] in FAMILIES and len(segments) > 1 and segments[1]:
        return f"{segments[0]}/{segments[1]}"
    return segments[0]


def references(src, path):
    """(line, first segment under the crate root) for every crate-root path in a file."""
    text = strip(open(path, encoding="utf-8").read())
    base = file_module_path(src, path)
    # Inline `mod x {` blocks deepen `super::`: track them by brace depth.
    found = []
    depth, inline = 0, []  # inline: [(brace depth inside, name)]
    line = 1
    pos = 0
    token = re.compile(
        r"\n|\{|\}|\bmod\s+([A-Za-z_]\w*)\s*\{"
        r"|\buse\s+((?:crate|super|self)\b[^;]*);"
        r"|\b(crate|(?:super\s*::\s*)+super|super)\s*::\s*([A-Za-z_]\w*)(?:\s*::\s*([A-Za-z_]\w*))?"
    )
    while True:
        m = token.search(text, pos)
        if not m:
            break
        s = m.group(0)
        if s == "\n":
            line += 1
        elif s == "{":
            depth += 1
        elif s == "}":
            depth -= 1
            while inline and inline[-1][0] > depth:
                inline.pop()
        elif m.group(1):
            depth += 1
            inline.append((depth, m.group(1)))
        else:
            here = base + [name for _, name in inline]
            if m.group(2):
                stmt = re.sub(r"\s+", "", m.group(2))
                head = re.match(r"((?:crate|self|super)(?:::super)*)::(.*)", stmt, re.S)
                if head:
                    roots = [(head.group(1), a, b) for a, b in use_heads(head.group(2))]
                else:
                    roots = []
                targets = {resolve(here, prefix, name, after) for prefix, name, after in roots}
                for target in sorted(t for t in targets if t):
                    found.append((line, target))
                line += m.group(0).count("\n")
            else:
                prefix = re.sub(r"\s+", "", m.group(3))
                target = resolve(here, prefix, m.group(4), m.group(5))
                if target:
                    found.append((line, target))
                line += m.group(0).count("\n")
        pos = m.end()
    return found


def resolve(here, prefix, name, after=None):
    """The module a path `prefix::name[::after]` written in module `here` reaches (its key, see
    module_key), or None when it stays inside `here`'s own module."""
    if prefix == "crate":
        return module_key([name, after])
    if prefix == "self":
        base = here
    else:
        ups = prefix.count("super")
        if ups > len(here):
            return None
        base = here[: len(here) - ups]
    if not base:
        return module_key([name, after])
    # From a family's child (plugins/brokerage), `super::tpcc` is a sibling child.
    if len(base) == 1 and base[0] in FAMILIES:
        return module_key([base[0], name])
    return None


def scc(nodes, edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def use_heads(tree):
    """The first two segments of each path in a use tree's text (`{a::b, c::{d, e}}` ->
    [(a, b), (c, d), (c, e)]; a path of one segment gives (a, None))."""
    out = []
    tree = tree.strip()
    parts = tree_parts(tree)
    if parts is not None:
        return [h for p in parts for h in use_heads(p)]
    m = IDENT.match(tree)
    if not m:
        return out
    rest = tree[m.end():].strip()
    if rest.startswith("::"):
        rest = rest[2:].strip()
        if rest.startswith("{"):
            return [(m.group(0), second) for second in use_roots(rest)]
        m2 = IDENT.match(rest)
        return [(m.group(0), m2.group(0) if m2 else None)]
    return [(m.group(0), None)]


def use_leaves(tree):
    """The names a use tree brings in (`{a::b, c as d, e::{f}}` -> [b, d, f])."""
    tree = tree.strip()
    parts = tree_parts(tree)
    if parts is not None:
        return [n for p in parts for n in use_leaves(p)]
    if "{" in tree:
        return use_leaves(tree[tree.index("{"):])
    if " as " in tree:
        return [tree.split(" as ")[-1].strip()]
    return [tree.split("::")[-1].strip()]


def root_reexports(src, modules):
    """Names the crate root re-exports from its modules (`pub use spec::{parse_spec, Spec}` in
    lib.rs): a `crate::parse_spec` elsewhere is an import of `spec`."""
    out = {}
    for name in ("lib.rs", "main.rs"):
        path = os.path.join(src, name)
        if not os.path.exists(path):
            continue
        text = strip(open(path, encoding="utf-8").read())
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+(?:(?:crate|self)::)?([A-Za-z_]\w*)::([^;]*);", text):
            if m.group(1) in modules:
                for leaf in use_leaves(re.sub(r"\s+", " ", m.group(2))):
                    if leaf and leaf != "self" and leaf != "*":
                        out[leaf] = m.group(1)
    return out


def crate_graph(root, crate):
    src = os.path.join(root, "crates", crate, "src")
    modules = set()
    for entry in os.listdir(src):
        full = os.path.join(src, entry)
        if os.path.isdir(full):
            modules.add(entry)
            if entry in FAMILIES:
                for child in os.listdir(full):
                    if os.path.isdir(os.path.join(full, child)):
                        modules.add(f"{entry}/{child}")
                    elif child.endswith(".rs") and child != "mod.rs":
                        modules.add(f"{entry}/{child[:-3]}")
        elif entry.endswith(".rs") and entry not in ("lib.rs", "main.rs"):
            modules.add(entry[:-3])
    reexports = root_reexports(src, modules)
    places = defaultdict(list)  # (from, to) -> ["path:line"]
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            key = module_key(file_module_path(src, path))
            if key not in modules:
                continue
            for line, target in references(src, path):
                target = reexports.get(target, target)
                if target in modules and target != key:
                    places[(key, target)].append(f"{os.path.relpath(path, root)}:{line}")
    edges = defaultdict(set)
    for a, b in places:
        edges[a].add(b)
    return modules, edges, places


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    flags = {a for a in argv if a.startswith("--") and "=" not in a}
    only = None
    if "--crate" in argv:
        i = argv.index("--crate")
        if i + 1 >= len(argv):
            print("module-cycles: --crate needs a crate's directory name, e.g. --crate oltplab", file=sys.stderr)
            return 2
        only = argv[i + 1]
        args = [a for a in args if a != only]
    root = args[0] if args else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    crates_dir = os.path.join(root, "crates")
    if not os.path.isdir(crates_dir):
        print(f"module-cycles: {root} has no crates/ directory; give the repository's root", file=sys.stderr)
        return 2
    crates = sorted(c for c in os.listdir(crates_dir) if os.path.isdir(os.path.join(crates_dir, c, "src")))
    if only is not None:
        if only not in crates:
            print(f"module-cycles: no crate {only} under {crates_dir}; use one of {', '.join(crates)}", file=sys.stderr)
            return 2
        crates = [only]
    circles = 0
    for crate in crates:
        modules, edges, places = crate_graph(root, crate)
        if "--edges" in flags:
            for (a, b), where in sorted(places.items()):
                print(f"{crate}: {a} -> {b}  ({len(where)}: {', '.join(where[:3])}{' …' if len(where) > 3 else ''})")
            continue
        for comp in scc(modules, edges):
            if len(comp) < 2:
                continue
            circles += 1
            members = set(comp)
            print(f"{crate}: circle of {len(comp)} modules: {', '.join(comp)}")
            for a in comp:
                for b in sorted(edges[a] & members):
                    where = places[(a, b)]
                    print(f"  {a} -> {b}: {', '.join(where)}")
    if "--edges" not in flags:
        print(f"module-cycles: {circles} circle(s)")
    return 1 if circles and "--check" in flags else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
