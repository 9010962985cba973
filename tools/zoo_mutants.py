#!/usr/bin/env python3
"""The generated zoo: the small faults of tests/zoo/zoo_kernels.c, made mechanically.

Each mutant is one textual change of the bug-free zoo kernels (ZOO_BUG_ID = none):
  cmp    a comparison of a bounds, window or clip test flipped strict <-> non-strict
  round  a rounding function swapped (floorf, ceilf, truncf, roundf, rintf; an (int64_t) cast of a
         float is a trunc and is swapped for the others)
  size   +-1 on a size or count field of an op's parameters (p->H, p->K, ...)
  index  +-1 on an array subscript
  lit    +-1 on an integral literal in an expression
  count  +-1 on a loop's bound (the bound + 1 is also the < -> <= flip of the loop test); not + 1
         on a loop over a local array's whole length, whose one more iteration only reaches past
         the array: undefined behaviour that gcc rejects, folds away, or turns into a read of the
         stack that changes from process to process (no verdict of the judge could be repeated)
  attr   a pair of same-typed attributes of one op read the other way round (names read from
         the attr_*(at, "name") calls of the source, types from `conform list --json`)

A mutant's id is `L<line>:<function>:<kind>:<original> -> <mutated>` (with `#2`, `#3` when the
same text changes twice on a line); it is deterministic: the same source gives the same list in
the same order. Its ops are the ops whose entry (run_*) reaches its function in the call graph;
a helper used by several ops (rule_a, adaptive_count, ...) counts once in each op's row, judged on
that op's cases only, and once in the total. The plugin's glue (attribute lookup, output zeroing,
dispatch) is not mutated.

Every mutant is compiled as its own plugin (build/zoo_mutants/<hash>.so) together with the bug-free
kernels (tests/zoo/mutant_diff.c): the plugin returns the mutant's outputs and logs, per call, how
many elements differ from the bug-free build's and by how much (ZOO_MUTANT_DIFF). A mutant whose
object code is byte-identical to the bug-free build's is equivalent by construction and not run;
one that does not compile is reported with the compiler's first error. Each other mutant runs the
default suite's cases of its ops (conform run --op ..., isolated, one thread, --timeout 20).

Per op a mutant is: killed (a case of the op does not pass), equivalent (identical object code, or
no output of the op changed on the suite and tests/zoo/mutant_reasons.json says why it cannot on
any input), within rounding (outputs changed, every case passed, and the reasons file says why the
change is a rounding), or unexplained (a survivor without a reason: a finding). --write-docs puts
the table into docs/zoo_mutants.json, docs/zoo_power.json ("mutants") and docs/zoo.md.
--check-list (make test) only regenerates the list and compares it with docs/zoo_mutants.json.
Standard library only.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SOURCE = "tests/zoo/zoo_kernels.c"
RECORD, REPLAY, PLUGIN = "tests/zoo/mutant_record.c", "tests/zoo/mutant_replay.c", "tests/zoo/mutant_plugin.c"
REASONS = "tests/zoo/mutant_reasons.json"
TABLE = "docs/zoo_mutants.json"
DOC_BEGIN, DOC_END = "<!-- zoo mutants table: begin (tools/zoo_mutants.py --write-docs) -->", "<!-- zoo mutants table: end -->"
CFLAGS = ["-std=c11", "-D_GNU_SOURCE", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wstrict-prototypes",
          "-Wno-unused-parameter", "-Wno-format-truncation", "-O2", "-fPIC", "-Iharness", "-Itests/zoo"]
# the plugin's glue: attribute lookup, sizes of outputs, dispatch (not kernel arithmetic)
GLUE = {"attr", "attr_int", "attr_float", "attr_list", "numel", "zero", "supports", "run", "conform_plugin_entry"}
ROUNDING = ["floorf", "ceilf", "truncf", "roundf", "rintf"]  # nearbyintf is rintf under the default mode
VERDICTS = ("killed", "equivalent", "within_rounding", "unexplained", "did_not_compile")

TOKEN = re.compile(r"""
    (?P<ws>\s+) | (?P<comment>/\*.*?\*/|//[^\n]*) | (?P<pp>^[ \t]*\#[^\n]*(?:\\\n[^\n]*)*)
  | (?P<str>"(?:\\.|[^"\\])*") | (?P<chr>'(?:\\.|[^'\\])*')
  | (?P<num>(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[fFuUlL]*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<op>->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|[-+*/%<>=!~&|^?:;,.(){}\[\]])
""", re.S | re.M | re.X)


class Tok:
    def __init__(self, kind, text, pos):
        self.kind, self.text, self.pos = kind, text, pos


def lex(src):
    toks, pos = [], 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            sys.exit(f"zoo_mutants: {SOURCE}: cannot read the source at offset {pos}: {src[pos:pos + 20]!r}")
        if m.lastgroup not in ("ws", "comment", "pp"):
            toks.append(Tok(m.lastgroup, m.group(), pos))
        pos = m.end()
    return toks


def match_close(toks, i):
    """index of the bracket closing toks[i]"""
    pair = {"(": ")", "[": "]", "{": "}"}[toks[i].text]
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == toks[i].text:
            depth += 1
        elif toks[j].text == pair:
            depth -= 1
            if depth == 0:
                return j
    sys.exit(f"zoo_mutants: unbalanced {toks[i].text} at offset {toks[i].pos}")


class Func:
    def __init__(self, name, ret, params, body):
        self.name, self.ret, self.params, self.body = name, ret, params, body  # token index ranges


def functions(toks):
    """the file-scope functions: name, return type text, (param start, end), (body start, end)"""
    out, i, stmt = [], 0, 0
    while i < len(toks):
        t = toks[i]
        if t.text == "{":
            end = match_close(toks, i)
            if toks[i - 1].text == ")":
                depth, j = 0, i - 1
                while True:  # back to the parameter list's "("
                    depth += {")": 1, "(": -1}.get(toks[j].text, 0)
                    if depth == 0:
                        break
                    j -= 1
                out.append(Func(toks[j - 1].text, " ".join(x.text for x in toks[stmt:j - 1]), (j, i - 1), (i, end)))
            i = end + 1
            continue
        if t.text in (";", "}"):
            stmt = i + 1
        i += 1
    return out


def struct_fields(toks):
    """int64_t fields of the typedef'd structs: {field: struct name}, and every float field name"""
    ints, floats = {}, set()
    for i, t in enumerate(toks):
        if t.text == "struct" and toks[i + 1].text == "{" and toks[i - 1].text == "typedef":
            end = match_close(toks, i + 1)
            name = toks[end + 1].text
            j = i + 2
            while j < end:
                k = j
                while toks[k].text != ";":
                    k += 1
                typ = toks[j].text if toks[j].text != "const" else toks[j + 1].text
                names = [toks[m].text for m in range(j + 1, k) if toks[m].kind == "id" and toks[m - 1].text in (",", typ, "*")
                         and toks[m + 1].text in (",", ";", "[") and toks[m - 1].text != "*"]
                for n in names:
                    (ints.__setitem__(n, name) if typ == "int64_t" else floats.add(n) if typ == "float" else None)
                j = k + 1
    return ints, floats


SCALARS = ("float", "int64_t", "int", "double")


def nest(depth, text):
    """the bracket depth after the token text; -1 when it closes a bracket opened before the scan"""
    return depth + 1 if text in ("(", "[", "{") else depth - 1 if text in (")", "]", "}") else depth


def declared(toks, lo, hi):
    """{name: type} of the scalar (non-pointer, non-array) declarations in toks[lo:hi], and the
    token indices of array declarators' brackets (not subscripts)"""
    types, declarator_brackets = {}, set()
    for i in range(lo, hi):
        t = toks[i]
        if t.text not in SCALARS or toks[i - 1].text not in ("{", ";", "}", "(", ",", "const", ")"):
            continue
        if toks[i - 1].text in ("(", ")") and toks[i + 1].kind != "id":
            continue  # a cast
        j, depth = i + 1, 0
        while j < hi:  # the declarator list up to ";" or the closing ")" of a parameter list
            x = toks[j].text
            depth = nest(depth, x)
            if depth < 0 or (depth == 0 and x == ";"):
                break
            if depth == 0 and x == "," and toks[i - 1].text in ("(", ","):  # a parameter
                break
            if depth == 0 and toks[j].kind == "id" and (toks[j - 1].text in (t.text, ",") or toks[j - 1].text == "*"):
                pointer = toks[j - 1].text == "*"
                if toks[j + 1].text == "[":
                    declarator_brackets.add(j + 1)
                elif not pointer:
                    types[toks[j].text] = t.text
                # skip the initializer
                k = j + 1
                if toks[k].text == "[":
                    k = match_close(toks, k) + 1
                if toks[k].text == "=":
                    d2 = 0
                    while k < hi:
                        y = toks[k].text
                        d2 = nest(d2, y)
                        if d2 < 0 or (d2 == 0 and y in (",", ";")):
                            break
                        k += 1
                j = k
                continue
            j += 1
    return types, declarator_brackets


def call_graph(toks, funcs):
    names = {f.name for f in funcs}
    return {f.name: sorted({toks[i].text for i in range(*f.body) if toks[i].text in names and toks[i + 1].text == "("
                            and toks[i - 1].text not in ("->", ".")}) for f in funcs}


def op_entries(src, ops):
    """{run_* function: [ops]} from run()'s dispatch on op-name prefixes, in its order"""
    out, taken = {}, set()
    for prefix, fn in re.findall(r'if \(!strncmp\(op, "(\w+)", \d+\)\) return (\w+)\(', src):
        mine = [o for o in ops if o.startswith(prefix) and o not in taken]
        taken.update(mine)
        out[fn] = mine
    if taken != set(ops):
        sys.exit(f"zoo_mutants: run() of {SOURCE} dispatches {sorted(taken)}, conform has {sorted(ops)}")
    return out


def reach(graph, entries):
    ops_of = {}
    for fn, ops in entries.items():
        seen, todo = set(), [fn]
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            todo.extend(graph.get(f, []))
        for f in seen:
            ops_of.setdefault(f, set()).update(ops)
    return ops_of


def line_of(src, pos):
    return src.count("\n", 0, pos) + 1


class Gen:
    """collects the mutants of one function"""

    def __init__(self, src, toks, func, ops, out):
        self.src, self.toks, self.func, self.ops, self.out = src, toks, func, ops, out

    def add(self, kind, start, end, new, shown_old=None, shown_new=None, lo=None, hi=None):
        """replace src[start:end] by new; the id shows the tokens lo..hi around it"""
        t = self.toks
        lo = max(lo if lo is not None else self.at(start) - 1, 0)
        hi = min(hi if hi is not None else self.at_end(end) + 1, len(t) - 1)
        before = self.src[t[lo].pos:t[hi].pos + len(t[hi].text)]
        a, b = start - t[lo].pos, end - t[lo].pos
        after = before[:a] + new + before[b:]
        self.out.append(dict(func=self.func.name, line=line_of(self.src, start), kind=kind, orig=" ".join(before.split()),
                             mut=" ".join(after.split()), ops=sorted(self.ops), edit=[start, end, new]))

    def at(self, pos):
        return next(i for i, x in enumerate(self.toks) if x.pos == pos)

    def at_end(self, end):
        return next(i for i, x in enumerate(self.toks) if x.pos + len(x.text) == end)


def for_headers(toks, lo, hi):
    """{index of a for's "(": its ")"}"""
    return {i + 1: match_close(toks, i + 1) for i in range(lo, hi) if toks[i].text == "for"}


def loop_test(toks, a, b):
    """token index of the comparison a for's test bounds its variable with (< or <=), or -1"""
    semis = [k for k in range(a, b) if toks[k].text == ";"]
    return next((k for k in range(semis[0] + 1, semis[1]) if toks[k].text in ("<", "<=")), -1)


def statement_end(toks, k):
    """index of the last token of the statement starting at toks[k]"""
    if toks[k].text == "{":
        return match_close(toks, k)
    if toks[k].text in ("for", "while", "if"):
        return statement_end(toks, match_close(toks, k + 1) + 1)
    depth = 0
    while not (depth == 0 and toks[k].text == ";"):
        depth = nest(depth, toks[k].text)
        k += 1
    return k


def runs_past_array(toks, test, close, sizes):
    """a loop `v < N` (N a literal) whose body subscripts an array of N elements by v alone: one
    more iteration does nothing but reach past the array"""
    var, bound = toks[test - 1].text, toks[test + 1]
    if toks[test].text != "<" or bound.kind != "num" or toks[test + 2].text != ";":
        return False
    body = range(close + 1, statement_end(toks, close + 1))
    return any(toks[k].text == "[" and toks[k + 1].text == var and toks[k + 2].text == "]"
               and sizes.get(toks[k - 1].text) == bound.text for k in body)


def coefficient(toks, i, types, int_fields):
    """a literal that multiplies or divides something that is not an integer variable: a
    coefficient or scale of the arithmetic, not an index, count or size"""
    for op_at, partner in ((i - 1, i - 2), (i + 1, i + 2)):
        if toks[op_at].text in ("*", "/"):
            p = toks[partner]
            if not (types.get(p.text) in ("int64_t", "int") or p.text in int_fields):
                return True
    return False


def inside_any(i, spans):
    return any(a < i < b for a, b in spans)


def operand_end(toks, i):
    """end token of the primary expression starting at toks[i] (an identifier, a call, a
    parenthesised expression, with -> and . fields and subscripts)"""
    j = i
    if toks[j].text == "(":
        j = match_close(toks, j)
    elif toks[j].kind == "id" and toks[j + 1].text == "(":
        j = match_close(toks, j + 1)
    while toks[j + 1].text in ("->", ".", "["):
        j = match_close(toks, j + 1) if toks[j + 1].text == "[" else j + 2
    return j


def mutate_function(src, toks, f, ops, int_fields, float_fields, float_funcs, out):
    g = Gen(src, toks, f, ops, out)
    lo, hi = f.body
    types, decl_brackets = declared(toks, f.params[0], hi)
    fors = for_headers(toks, lo, hi)
    loop_tests = {loop_test(toks, a, b) for a, b in fors.items()}
    sizes = {toks[k - 1].text: toks[k + 1].text for k in decl_brackets if toks[k + 1].kind == "num"}
    int_ret = f.ret.split()[-1] == "int" if f.ret else False
    for i in range(lo + 1, hi):
        t = toks[i]
        in_for = inside_any(i, fors.items())
        # cmp: strict <-> non-strict (a loop's own test is a count, below)
        if t.text in ("<", "<=", ">", ">=") and i not in loop_tests:
            new = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}[t.text]
            right = i + 2 if toks[i + 1].text in ("-", "(", "!") else i + 1
            left = i - 2 if toks[i - 1].text == ")" or toks[i - 2].text in ("->", ".") else i - 1
            g.add("cmp", t.pos, t.pos + len(t.text), new, lo=left, hi=right)
        # round: swap a rounding function, or an (int64_t) cast of a float for one
        if t.kind == "id" and t.text in ROUNDING + ["nearbyintf"] and toks[i + 1].text == "(":
            for new in ROUNDING:
                if new != t.text and not (t.text == "nearbyintf" and new == "rintf"):
                    g.add("round", t.pos, t.pos + len(t.text), new, lo=i, hi=match_close(toks, i + 1))
        if t.text == "(" and toks[i + 1].text == "int64_t" and toks[i + 2].text == ")":
            j = operand_end(toks, i + 3)
            body = toks[i + 3:j + 1]
            is_float = any(x.text in types and types[x.text] == "float" or x.text in float_fields or
                           x.text in float_funcs or x.text in ROUNDING or (x.kind == "num" and ("." in x.text or "f" in x.text))
                           for x in body)
            if is_float and toks[i + 3].text not in ROUNDING + ["nearbyintf"]:  # else a swap above
                a, b = toks[i + 3].pos, toks[j].pos + len(toks[j].text)
                for new in ("floorf", "ceilf", "roundf", "rintf"):
                    g.add("round", a, b, f"{new}({src[a:b]})", lo=i, hi=j)
        # size: +-1 on an int64 field of the op's parameters, where it is read
        if t.kind == "id" and toks[i - 1].text in ("->", ".") and t.text in int_fields and \
                int_fields[t.text].endswith("_params") and toks[i + 1].text not in ("=", "+=", "-=", "++", "--") and \
                not (toks[i - 1].text == "." and toks[i - 3].text == "{"):
            a = toks[i - 2].pos
            for d in ("+ 1", "- 1"):
                g.add("size", a, t.pos + len(t.text), f"({src[a:t.pos + len(t.text)]} {d})", lo=i - 3, hi=i + 1)
        # index: +-1 on a subscript (not an array's declared size)
        if t.text == "[" and i not in decl_brackets and toks[i - 1].kind in ("id",) or t.text == "[" and toks[i - 1].text in ("]", ")"):
            if i in decl_brackets:
                continue
            j = match_close(toks, i)
            inner = src[toks[i + 1].pos:toks[j].pos]
            if any(toks[k].text in ("?", "&&", "||", "<<", ">>", "&", "|", "^") for k in range(i + 1, j)):
                inner = f"({inner})"
            for d in ("+ 1", "- 1"):
                g.add("index", toks[i].pos, toks[j].pos + 1, f"[{inner} {d}]", lo=i - 1, hi=j)
        # lit: +-1 on an integer literal (an index, count or size), or on an integral float
        # literal that bounds a comparison (a window or clip bound such as -1.0f); not a declared
        # size, not a status returned
        near_cmp = any(toks[k].text in ("<", "<=", ">", ">=") for k in (i - 1, i - 2, i + 1))
        if t.kind == "num" and (re.fullmatch(r"\d+", t.text) or re.fullmatch(r"\d+\.0*[fF]?", t.text) and near_cmp) \
                and not in_for and not (toks[i - 1].text == "return" and int_ret) \
                and not (toks[i - 1].text == "=" and toks[i + 1].text in (";", ",")) \
                and not (toks[i - 1].text == "[" and toks[i + 1].text == "]") and not coefficient(toks, i, types, int_fields):
            v, flt = int(t.text.split(".")[0].rstrip("fF")), "." in t.text or t.text.endswith(("f", "F"))
            for d in (1, -1):
                w = v + d
                text = (f"{w}.0f" if flt else str(w))
                g.add("lit", t.pos, t.pos + len(t.text), text if w >= 0 else f"({text})")
        # count: +-1 on a loop's bound
        if i in fors:
            k = loop_test(toks, i, fors[i])
            end = next(m for m in range(k, fors[i]) if toks[m].text == ";") - 1
            if k >= 0:
                a, b = toks[k + 1].pos, toks[end].pos + len(toks[end].text)
                for d in ("+ 1", "- 1"):
                    # not past a local array's end: that is undefined behaviour, which the compiler
                    # may reject, fold away or turn into a read of the stack (a verdict that changes
                    # from process to process), not a fault a judge can be measured on
                    if not (d == "+ 1" and runs_past_array(toks, k, fors[i], sizes)):
                        g.add("count", a, b, f"{src[a:b]} {d}", lo=k - 1, hi=end)


def attr_swaps(src, toks, funcs, ops_of, schema, out):
    """each pair of same-typed attributes of one op read in one function, read the other way"""
    for f in funcs:
        if f.name not in ops_of or f.name in GLUE:
            continue
        reads = {}
        for i in range(*f.body):
            if toks[i].text in ("attr_int", "attr_float", "attr_list", "attr") and toks[i + 1].text == "(" \
                    and toks[i + 4].kind == "str":
                reads.setdefault(toks[i + 4].text.strip('"'), []).append(i + 4)
        names = sorted(reads, key=lambda n: reads[n][0])
        for x in range(len(names)):
            for y in range(x + 1, len(names)):
                a, b = names[x], names[y]
                ops = sorted(o for o in ops_of[f.name] if a in schema[o] and b in schema[o] and schema[o][a] == schema[o][b])
                if not ops:
                    continue
                edits = [[toks[i].pos, toks[i].pos + len(toks[i].text), f'"{b}"'] for i in reads[a]] + \
                        [[toks[i].pos, toks[i].pos + len(toks[i].text), f'"{a}"'] for i in reads[b]]
                out.append(dict(func=f.name, line=line_of(src, toks[reads[a][0]].pos), kind="attr", orig=f"{a}, {b}",
                                mut=f"{b}, {a}", ops=ops, edit=sorted(edits)))


def generate(src, schema):
    toks = lex(src)
    funcs = functions(toks)
    int_fields, float_fields = struct_fields(toks)
    float_funcs = {f.name for f in funcs if f.ret.split() and f.ret.split()[-1] == "float"}
    entries = op_entries(src, list(schema))
    ops_of = reach(call_graph(toks, funcs), entries)
    out = []
    for f in funcs:
        if f.name in ops_of and f.name not in GLUE:
            mutate_function(src, toks, f, ops_of[f.name], int_fields, float_fields, float_funcs, out)
    attr_swaps(src, toks, funcs, ops_of, schema, out)
    out.sort(key=lambda m: (m["line"], m["edit"][0] if m["kind"] != "attr" else m["edit"][0][0], m["kind"], m["mut"]))
    seen = {}
    for m in out:
        base = f"L{m['line']}:{m['func']}:{m['kind']}:{m['orig']} -> {m['mut']}"
        seen[base] = seen.get(base, 0) + 1
        m["id"] = base if seen[base] == 1 else f"{base} #{seen[base]}"
        m["hash"] = hashlib.sha1(m["id"].encode()).hexdigest()[:12]
    return out


def apply(src, m):
    edits = m["edit"] if m["kind"] == "attr" else [m["edit"]]
    for a, b, new in sorted(edits, reverse=True):
        src = src[:a] + new + src[b:]
    return src


def op_schema(conform):
    p = subprocess.run([conform, "list", "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"zoo_mutants: {conform} list --json exited {p.returncode}:\n{p.stderr}")
    d = json.loads(p.stdout)
    return ({o["name"]: {a["name"]: a["type"] for a in o["attrs"]} for o in d["ops"]},
            tuple(s["name"] for s in d["statuses"] if not s["fails"]))


# ---- building and running ---------------------------------------------------------------------

def cc(args, cwd=ROOT, link=False):
    flags = [f if not f.startswith("-I") else "-I" + os.path.join(ROOT, f[2:]) for f in CFLAGS]
    return subprocess.run(["cc"] + flags + args + (["-lm"] if link else []), cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def compile_kernels(text, where, entry, obj):
    """text as where/zoo_kernels.c, compiled from there: the object names the same file whatever
    the mutant, so identical code gives identical bytes"""
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, "zoo_kernels.c"), "w") as fh:
        fh.write(text)
    return cc([f"-Dconform_plugin_entry={entry}", "-c", "-o", obj, "zoo_kernels.c"], cwd=where)


def build_common(out):
    """the bug-free kernels twice (as a mutant's entry: the object code a mutant is compared with,
    and the recording plugin; as the clean entry of the replay), the replay's main and the
    mutant plugin's entry"""
    with open(os.path.join(ROOT, SOURCE)) as fh:
        src = fh.read()
    o = {k: os.path.join(out, k) for k in ("reference_mutant.o", "clean.o", "replay.o", "plugin.o", "record.o", "record.so")}
    steps = [lambda: compile_kernels(src, os.path.join(out, "src", "reference"), "zoo_mutant_entry", o["reference_mutant.o"]),
             lambda: compile_kernels(src, os.path.join(out, "src", "clean"), "zoo_clean_entry", o["clean.o"]),
             lambda: cc(["-c", "-o", o["replay.o"], REPLAY]),
             lambda: cc(["-c", "-o", o["plugin.o"], PLUGIN]),
             lambda: cc(["-c", "-o", o["record.o"], RECORD]),
             lambda: cc(["-shared", "-o", o["record.so"], o["reference_mutant.o"], o["record.o"]], link=True)]
    for step in steps:
        p = step()
        if p.returncode:
            sys.exit(f"zoo_mutants: the bug-free build does not compile:\n{p.stderr}")
    return o


def record_calls(args, out, objs, ops):
    """runs the suite once against the bug-free kernels, recording every call per op
    (OUT/calls/<op>.bin); returns {op: [case id of the k-th call]}. Cases run in suite order
    (--jobs 1, in-process); a case that makes no call (a refused bad input) is recognised by its
    outputs' shapes not matching the next call's, and a wrong guess only costs a full run later."""
    calls = os.path.join(out, "calls")
    shutil.rmtree(calls, ignore_errors=True)
    os.makedirs(calls)
    rdir = os.path.join(out, "record-report")
    cmd = [args.conform, "run", args.suite, "--impl", "plugin:" + objs["record.so"], "--quiet", "--threads", "1", "--jobs",
           "1", "--no-isolate", "--waivers", args.waivers, "--report-dir", rdir]
    env = dict(os.environ, ZOO_MUTANT_RECORD=calls)
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode:
        sys.exit(f"zoo_mutants: the bug-free build does not pass {args.suite} (exit {p.returncode}):\n{p.stderr[-2000:]}")
    with open(os.path.join(rdir, "report.json")) as fh:
        cases = json.load(fh)["cases"]
    shapes = {op: replay_shapes(objs, os.path.join(calls, op + ".bin")) for op in ops}
    ids = {}
    for op in ops:
        mine, k = [c for c in cases if c["op"] == op], 0
        ids[op] = []
        for c in mine:
            if k < len(shapes[op]) and shapes[op][k] == [o["shape"] for o in c.get("outputs", [])]:
                ids[op].append(c["id"])
                k += 1
        if k != len(shapes[op]):
            sys.exit(f"zoo_mutants: {op}: {len(shapes[op])} calls recorded, only {k} matched to cases")
    return ids


def replay_shapes(objs, path):
    """the output shapes of every recorded call (the bug-free kernels replayed against themselves)"""
    if not os.path.exists(path):
        return []
    exe = os.path.join(os.path.dirname(path), "self_replay")
    if not os.path.exists(exe):
        p = cc(["-o", exe, objs["reference_mutant.o"], objs["clean.o"], objs["replay.o"]], link=True)
        if p.returncode:
            sys.exit(f"zoo_mutants: cannot link the replay:\n{p.stderr}")
    p = subprocess.run([exe, "--shapes", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"zoo_mutants: replaying {path}: {p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines()]


def coverage(args, out, objs, ops):
    """{op: set of source lines the bug-free kernels run on op's recorded calls} (gcov of a replay
    built with --coverage): which op's branch of a shared function a line is in"""
    where = os.path.join(out, "coverage")
    shutil.rmtree(where, ignore_errors=True)
    with open(os.path.join(ROOT, SOURCE)) as fh:
        src = fh.read()
    os.makedirs(where)
    with open(os.path.join(where, "zoo_kernels.c"), "w") as fh:
        fh.write(src)
    flags = [f if not f.startswith("-I") else "-I" + os.path.join(ROOT, f[2:]) for f in CFLAGS if f != "-O2"]
    exe = os.path.join(where, "replay")
    p = subprocess.run(["cc"] + flags + ["-O0", "--coverage", "-Dconform_plugin_entry=zoo_mutant_entry", "-c", "zoo_kernels.c"],
                       cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if not p.returncode:
        p = subprocess.run(["cc", "--coverage", "zoo_kernels.o", objs["clean.o"], objs["replay.o"], "-o", exe, "-lm"],
                           cwd=where, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode:
        sys.exit(f"zoo_mutants: the coverage build does not compile:\n{p.stderr}")
    lines = {}
    for op in ops:
        for f in os.listdir(where):
            if f.endswith((".gcda", ".gcov")):
                os.remove(os.path.join(where, f))
        path = os.path.join(out, "calls", op + ".bin")
        if os.path.exists(path):
            subprocess.run([exe, path, "0"], cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        g = subprocess.run(["gcov", "-o", where, "zoo_kernels.c"], cwd=where, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        ran = set()
        gcov = os.path.join(where, "zoo_kernels.c.gcov")
        if g.returncode == 0 and os.path.exists(gcov):
            with open(gcov) as fh:
                for line in fh:
                    count, no = line.split(":", 2)[:2]
                    if count.strip() not in ("-", "#####", "=====") and int(no) > 0:
                        ran.add(int(no))
        lines[op] = sorted(ran)
    return lines


def first_error(text):
    lines = [l for l in text.splitlines() if "error" in l]
    return (lines[0] if lines else text.strip().splitlines()[0] if text.strip() else "?").split(": ", 1)[-1][:200]


def build_mutant(src, m, out, objs):
    """compiles one mutant: ('ok', its object), ('same', None) when its object code is the
    bug-free build's, or ('error', the compiler's first error)"""
    o = os.path.join(out, m["hash"] + ".o")
    p = compile_kernels(apply(src, m), os.path.join(out, "src", m["hash"]), "zoo_mutant_entry", o)
    shutil.rmtree(os.path.join(out, "src", m["hash"]), ignore_errors=True)
    if p.returncode:
        return "error", first_error(p.stderr)
    with open(o, "rb") as a, open(objs["reference_mutant.o"], "rb") as b:
        if a.read() == b.read():
            os.remove(o)
            return "same", None
    return "ok", o


def replay(args, m, obj, out, objs, op):
    """the mutant against the bug-free kernels on op's recorded calls: (changed calls [(k, n
    differing, max diff, scale)], the call that crashed or hung or None, how)"""
    exe = os.path.join(out, m["hash"] + ".replay")
    if not os.path.exists(exe):
        p = cc(["-o", exe, obj, objs["clean.o"], objs["replay.o"]], link=True)
        if p.returncode:
            return None, None, "link: " + first_error(p.stderr)
    path = os.path.join(out, "calls", op + ".bin")
    try:
        p = subprocess.run([exe, path, str(args.timeout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60 * args.timeout)
        rc, text = p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        rc, text = "hung", (e.stdout or b"").decode(errors="replace")
    changed, done, garbled = {}, -1, False
    for line in text.splitlines():
        f = line.split()
        if len(f) < 5 or not f[0].isdigit() or (f[2] != "status" and len(f) != 8):
            garbled = True  # a line the mutant garbled (it overwrote the record): conform judges every case
            continue
        k = int(f[0])
        done = max(done, k)
        if f[2] == "status":
            changed[k] = (k, -1, "inf", 0.0)
        elif int(f[4]) > 0 or f[7] == "1":
            old = changed.get(k, (k, 0, 0.0, 0.0, 0))
            d = float(f[5])
            changed[k] = (k, old[1] + int(f[4]), max(old[2], d) if old[2] != "inf" else "inf", max(old[3], float(f[6])),
                          old[4] + int(f[7]))
    if garbled:
        return sorted(changed.values()), -1, "garbled the replay's output"
    if rc == 0:
        return sorted(changed.values()), None, None
    how = "hung" if rc == "hung" else "timeout" if rc == -14 else f"signal {-rc}" if rc < 0 else f"exit {rc}"
    return sorted(changed.values()), done + 1, how


def conform_cases(args, m, so, not_failures, op, case_ids, extra=(), jobs=1):
    """conform's own verdict on some cases (or every case of op when case_ids is None), isolated:
    (cases run, [(id, status)] of those not passed)"""
    rdir = os.path.join(args.out, "reports", m["hash"] + "-" + op)
    shutil.rmtree(rdir, ignore_errors=True)
    os.makedirs(rdir)
    cmd = [args.conform, "run", args.suite, "--impl", "plugin:" + so, "--quiet", "--threads", "1", "--jobs", str(jobs),
           "--timeout", str(args.timeout), "--waivers", args.waivers, "--report-dir", rdir, "--op", op]
    if case_ids and len(case_ids) == 1:   # run takes one --filter: several ids run the op, the report picks them
        cmd += ["--filter", case_ids[0]]
    p = subprocess.run(cmd + list(extra), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode not in (0, 1):
        return 0, [("?", f"conform exited {p.returncode}: {p.stderr.strip()[:200]}")]
    with open(os.path.join(ROOT, rdir, "report.json")) as fh:
        cases = [c for c in json.load(fh)["cases"] if c["op"] == op and (not case_ids or c["id"] in case_ids)]
    shutil.rmtree(os.path.join(ROOT, rdir), ignore_errors=True)
    return len(cases), [(c["id"], c["status"]) for c in cases if c["status"] not in not_failures]


def judge_op(args, m, obj, out, objs, op, ids, not_failures):
    """one op of one mutant: the replay says which calls changed (or crashed); conform judges the
    first such case, then (if it passes) every changed case, then (if the mapping to cases was
    wrong) every case of the op. Every kill is conform's verdict on a case."""
    changed, crashed, how = replay(args, m, obj, out, objs, op)
    r = {"calls": len(ids), "changed_calls": len(changed or []), "n_failed": 0, "first_failed": None,
         "guard_calls": sum(1 for c in changed or [] if c[4]),
         "max_diff": max((c[2] for c in changed or []), key=lambda v: float(v), default=0.0),
         "scale": max((c[3] for c in changed or []), default=0.0)}
    if changed is None:
        r["error"] = how
        return r
    if crashed is not None:
        r["replay"] = f"call {crashed} ({ids[crashed] if 0 <= crashed < len(ids) else '?'}) {how}"
    suspects = ([crashed] if crashed is not None and 0 <= crashed < len(ids) else []) + [c[0] for c in changed]
    if not suspects and crashed is None:
        return r  # every output bitwise the bug-free build's: conform's verdict is the bug-free build's (passed)
    so = os.path.join(out, m["hash"] + ".so")
    if not os.path.exists(so):
        p = cc(["-shared", "-o", so, obj, objs["plugin.o"]], link=True)
        if p.returncode:
            r["error"] = "link: " + first_error(p.stderr)
            return r
    tries = [[ids[suspects[0]]]] if suspects else []
    tries += [sorted({ids[k] for k in suspects if k < len(ids)})] if len(suspects) > 1 else []
    tries += [None]
    for t in tries:
        n, failed = conform_cases(args, m, so, not_failures, op, t)
        if failed:
            r["n_failed"], r["first_failed"], r["cases_run"] = len(failed), list(failed[0]), n
            return r
    r["cases_run"] = n
    return r


def measure(args, src, mutants, not_failures, ops):
    out = os.path.join(ROOT, args.out)
    os.makedirs(out, exist_ok=True)
    objs = build_common(out)
    ids = record_calls(args, out, objs, ops)
    results = {"__coverage__": coverage(args, out, objs, ops)}

    def one(m):
        try:
            return one_mutant(m)
        except Exception as e:  # noqa: BLE001 -- one mutant's trouble is reported, never the run's end
            return m["id"], {"build": "ok", "ops": {op: {"error": f"zoo_mutants: {type(e).__name__}: {e}"} for op in m["ops"]}}

    def one_mutant(m):
        t0 = time.time()
        state, what = build_mutant(src, m, out, objs)
        r = {"build": state}
        if state == "error":
            r["compile_error"] = what
        elif state == "ok":
            r["ops"] = {op: judge_op(args, m, what, out, objs, op, ids[op], not_failures) for op in m["ops"]}
            for ext in (".o", ".so", ".replay"):
                if os.path.exists(os.path.join(out, m["hash"] + ext)):
                    os.remove(os.path.join(out, m["hash"] + ext))
        r["seconds"] = round(time.time() - t0, 2)
        return m["id"], r

    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for mid, r in pool.map(one, mutants):
            results[mid] = r
            done += 1
            if done % 100 == 0 or done == len(mutants):
                print(f"zoo_mutants: {done} of {len(mutants)} measured", flush=True)
                write(os.path.join(out, "partial.json"), json.dumps(results) + "\n")
    return results


# ---- how many cases kill a killed mutant (for docs/hunt.md) -------------------------------------

def killed_pairs(every):
    """the killed (mutant id, op) pairs of the committed table in its order; every k-th of them
    (the 1st, (k+1)-th, ...) for a deterministic sample"""
    with open(os.path.join(ROOT, TABLE)) as fh:
        doc = json.load(fh)
    pairs = [(r["id"], op) for r in doc["mutants"] for op, v in r["per_op"].items() if v["verdict"] == "killed"]
    return pairs[::max(1, every)], len(pairs)


def count_failing(args, src, mutants, not_failures):
    """--count-failing: per killed pair, how many of the suite's cases of the op do not pass, over
    every case of the op (the measurement stops at the first). Cached per pair in
    OUT/failing.json under the source digest; each mutant's plugin stays in OUT/plugins/ for
    tools/hunt_zoo.py --mutants."""
    out = os.path.join(ROOT, args.out)
    path = os.path.join(out, "failing.json")
    digest, (pairs, n_killed) = source_digest(), killed_pairs(args.every)
    doc = {}
    if os.path.exists(path):
        with open(path) as fh:
            doc = json.load(fh)
    if doc.get("source_sha256") != digest or doc.get("suite") != args.suite:
        doc = {"source_sha256": digest, "suite": args.suite, "pairs": {}}
    doc.update(killed_pairs=n_killed, every=args.every, sample=[f"{mid}\t{op}" for mid, op in pairs])
    os.makedirs(os.path.join(out, "plugins"), exist_ok=True)
    objs = build_common(out)
    by_id = {m["id"]: m for m in mutants}
    todo = {}
    for mid, op in pairs:
        r = doc["pairs"].get(f"{mid}\t{op}", {})
        if r.get("first") and r["first"][0] == "?":  # an older cache's count of a run that did not finish
            doc["pairs"][f"{mid}\t{op}"] = {"hash": r["hash"], "error": r["first"][1]}
        if f"{mid}\t{op}" not in doc["pairs"] or "error" in doc["pairs"][f"{mid}\t{op}"]:
            todo.setdefault(mid, []).append(op)

    def one(mid):
        m = by_id[mid]
        so = os.path.join(out, "plugins", m["hash"] + ".so")
        rows = {}
        if not os.path.exists(so):
            state, obj = build_mutant(src, m, out, objs)
            p = cc(["-shared", "-o", so, obj, objs["plugin.o"]], link=True) if state == "ok" else None
            if state == "ok":
                os.remove(obj)
            if state != "ok" or p.returncode:
                return mid, {op: {"error": f"build: {state}"} for op in todo[mid]}
        for op in todo[mid]:
            n, failed = conform_cases(args, m, so, not_failures, op, None, ("--no-proofs",))
            rows[op] = {"hash": m["hash"], "cases": n, "failing": len(failed), "first": failed[0] if failed else None}
            if failed and failed[0][0] == "?":
                # conform --jobs 1 itself aborts (SIGABRT) on some plugins that crash in many cases;
                # with two jobs it judges every case (a crash is a case's status), so count from that
                n, again = conform_cases(args, m, so, not_failures, op, None, ("--no-proofs",), jobs=2)
                rows[op] = {"hash": m["hash"], "cases": n, "failing": len(again), "first": again[0] if again else None,
                            "jobs_1": failed[0][1]}
                if again and again[0][0] == "?":  # conform did not finish either way: no count
                    rows[op] = {"hash": m["hash"], "error": again[0][1]}
        return mid, rows

    done, c0, cpu0 = 0, os.times(), doc.get("cpu_s", 0.0)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for mid, rows in pool.map(one, list(todo)):
            for op, r in rows.items():
                doc["pairs"][f"{mid}\t{op}"] = r
            done += 1
            c1 = os.times()  # the compilers' and conform's CPU, summed over every run that filled the cache
            doc["cpu_s"] = round(cpu0 + c1.children_user + c1.children_system - c0.children_user - c0.children_system, 1)
            write(path, json.dumps(doc, indent=1) + "\n")
            if done % 10 == 0 or done == len(todo):
                print(f"zoo_mutants: failing cases counted for {done} of {len(todo)} mutants", flush=True)
    write(path, json.dumps(doc, indent=1) + "\n")  # the sample, also when every pair was cached
    counted = [doc["pairs"][k] for k in doc["sample"] if "failing" in doc["pairs"].get(k, {})]
    weak = [r for r in counted if 0 < r["failing"] < 12]
    print(f"zoo_mutants: {len(counted)} of {len(pairs)} sampled killed pairs counted ({n_killed} killed pairs, every "
          f"{args.every}); {len(weak)} killed by 1 to 11 cases; {path}")
    return 0


# ---- verdicts and tables ----------------------------------------------------------------------

def read_reasons(path=REASONS):
    """{"rules": [{"match": regex over ids, "verdict": equivalent|within_rounding, "reason": why, optional
    "ops": the ops it speaks for, "other_op_kills": only when another op of the mutant kills it}]}"""
    with open(os.path.join(ROOT, path)) as fh:
        rules = json.load(fh)["rules"]
    for r in rules:
        if r["verdict"] not in ("equivalent", "within_rounding", "unexplained") or not r.get("reason"):
            sys.exit(f"zoo_mutants: {path}: a rule needs a verdict (equivalent, within_rounding, or unexplained for a "
                     f"finding written down) and a reason: {r}")
        r["re"] = re.compile(r["match"])
    return rules


def verdict(m, r, op, rules, ran=None):
    """(verdict, reason) of mutant m on op from its measurement r; ran: {op: lines run}"""
    if r["build"] == "error":
        return "did_not_compile", r["compile_error"]
    if r["build"] == "same":
        return "equivalent", "identical object code: the compiler proves the change has no effect (dead or folded)"
    o = r["ops"][op]
    if "error" in o:
        return "unexplained", o["error"]
    if o["n_failed"]:
        return "killed", f"{o['first_failed'][0]} {o['first_failed'][1]}" + (f" ({o['replay']} in the replay)" if o.get("replay") else "")
    changed = o["changed_calls"] > 0
    killed_elsewhere = any(o != op and isinstance(v, dict) and v.get("n_failed") for o, v in r["ops"].items())
    rule = next((x for x in rules if x["re"].search(m["id"]) and (op in x.get("ops", [op]))
                 and (killed_elsewhere or not x.get("other_op_kills"))), None)
    fact = (f"outputs changed in {o['changed_calls']} of {o['calls']} calls, by at most {o['max_diff']} "
            f"(largest |value| {o['scale']:.3g}), every case passes" if changed else
            f"no output changed in {o['calls']} calls")
    others = sorted(o for o in m["ops"] if o != op and ran and m["line"] in ran.get(o, ()))
    if not changed and not rule and ran and m["line"] not in ran.get(op, ()) and others:
        return "equivalent", (f"{op} never runs line {m['line']} (only {', '.join(others)} does: that op's branch of a "
                              f"shared function; line coverage of the suite's calls) ({fact})")
    if rule and rule["verdict"] == "unexplained":  # a finding, written down: still counted as one
        return "unexplained", f"{rule['reason']} ({fact})"
    if changed and not rule and o.get("guard_calls") == 0 and o["max_diff"] == 0.0:
        return "equivalent", f"equal values: only the sign of a zero output differs ({fact})"
    if rule and (rule["verdict"] == "within_rounding") == changed:
        return rule["verdict"], f"{rule['reason']} ({fact})"
    if rule:
        return "unexplained", f"{fact}; the reason given ({rule['verdict']}) does not fit"
    return "unexplained", fact


def tabulate(mutants, results, rules):
    ran = {op: set(v) for op, v in results.get("__coverage__", {}).items()}
    rows = []
    for m in mutants:
        r = results.get(m["id"])
        if r is None:
            vs = {op: ("not_measured", "not measured: the run was cut short (make zoo-mutants-docs)") for op in m["ops"]}
        else:
            vs = {op: verdict(m, r, op, rules, ran) for op in m["ops"]}
        kinds = {v for v, _ in vs.values()}
        overall = next(v for v in ("killed", "did_not_compile", "unexplained", "not_measured", "within_rounding", "equivalent")
                       if v in kinds)
        rows.append(dict(id=m["id"], func=m["func"], kind=m["kind"], ops=m["ops"], verdict=overall,
                         per_op={op: {"verdict": v, "why": why} for op, (v, why) in vs.items()}))
    return count(rows) + (rows,)


def count(rows):
    """(per op, total) verdict counts of the table's rows: a mutant counts once in each of its ops'
    rows, by its verdict there, and once in the total, by its overall verdict"""
    keys = ("generated",) + VERDICTS + ("not_measured",)
    per_op, total = {}, dict.fromkeys(keys, 0)
    for r in rows:
        for op, v in r["per_op"].items():
            c = per_op.setdefault(op, dict.fromkeys(keys, 0))
            c["generated"] += 1
            c[v["verdict"]] += 1
        total["generated"] += 1
        total[r["verdict"]] += 1
    return per_op, total


def carry_over(args, src, schema, mutants):
    """{new id: old result} for the mutants killed on every op by an earlier run, matched by
    function, kind, text and rank within the function (not by line), where the function's text
    is unchanged"""
    with open(args.carry_over[0]) as fh:
        old_src = fh.read()
    with open(args.carry_over[1]) as fh:
        old_res = json.load(fh)
    old_res = old_res.get("results", old_res)

    def keyed(text, ms):
        toks, out, seen = lex(text), {}, {}
        bodies = {f.name: text[toks[f.body[0]].pos:toks[f.body[1]].pos] for f in functions(toks)}
        for m in ms:
            k = (m["func"], m["kind"], m["orig"], m["mut"])
            seen[k] = seen.get(k, 0) + 1
            out[k + (seen[k],)] = (m, bodies.get(m["func"]))
        return out
    old = keyed(old_src, generate(old_src, schema))
    new = keyed(src, mutants)
    carried = {}
    for k, (m, body) in new.items():
        if k not in old or old[k][1] != body:
            continue
        r = old_res.get(old[k][0]["id"])
        if r and r.get("build") == "ok" and all(isinstance(o, dict) and o.get("n_failed") for o in r["ops"].values()) \
                and sorted(r["ops"]) == m["ops"]:
            carried[m["id"]] = dict(r, carried_from=old[k][0]["id"])
    return carried


def source_digest():
    h = hashlib.sha256()
    for p in (SOURCE, RECORD, REPLAY, PLUGIN):
        with open(os.path.join(ROOT, p), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def markdown(doc):
    cols = ("generated",) + VERDICTS + (("not_measured",) if doc["total"].get("not_measured") else ())
    names = {"did_not_compile": "did not compile", "within_rounding": "survived: within rounding",
             "equivalent": "survived: equivalent", "unexplained": "survived: unexplained", "not_measured": "not measured"}
    out = [f"{doc['total']['generated']} mutants of `{SOURCE}`, each run against the `{doc['suite']}` suite's cases "
           f"of its ops (`make zoo-mutants`; {doc['timing']}).", "",
           "| op | " + " | ".join(names.get(c, c) for c in cols) + " |", "|---|" + "---|" * len(cols)]
    for op in sorted(doc["per_op"]):
        out.append(f"| {op} | " + " | ".join(str(doc["per_op"][op][c]) for c in cols) + " |")
    out.append("| **all (each mutant once)** | " + " | ".join(f"**{doc['total'][c]}**" for c in cols) + " |")
    out += ["", "A mutant in a helper that several ops call counts in each of their rows, judged on that op's cases.", ""]
    surv = [r for r in doc["mutants"] if r["verdict"] not in ("killed", "not_measured")]
    same = [r for r in surv if all(v["why"].startswith("identical object code") for v in r["per_op"].values())]
    if same:
        by = {}
        for r in same:
            by.setdefault(r["func"], []).append(r)
        out += [f"**Equivalent by identical object code** ({len(same)}; the change is dead code under the bug-free "
                "build, e.g. inside a listed bug's branch, or the compiler folds it away): "
                + "; ".join(f"`{f}` {len(v)}" for f, v in sorted(by.items())) + f" (ids in `{TABLE}`).", ""]
    rest = [r for r in surv if r not in same]
    if rest:
        out += ["| mutant | ops | verdict | why |", "|---|---|---|---|"]
        for r in rest:
            for op, v in r["per_op"].items():
                if v["verdict"] == "killed":
                    continue
                out.append(f"| `{r['id']}` | {op} | {v['verdict'].replace('_', ' ')} | {v['why'].replace('|', '/')} |")
    return "\n".join(out) + "\n"


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


def write_docs(doc):
    write(os.path.join(ROOT, TABLE), json.dumps(doc, indent=1) + "\n")
    power_path = os.path.join(ROOT, "docs", "zoo_power.json")
    with open(power_path) as fh:
        power = json.load(fh)
    summary = {"generator": "tools/zoo_mutants.py", "table": TABLE, "source_sha256": doc["source_sha256"],
               "per_op": doc["per_op"], "total": doc["total"]}
    for p in power if isinstance(power, list) else [power]:
        if p.get("suite") == doc["suite"]:
            p["mutants"] = summary
    write(power_path, json.dumps(power, indent=1) + "\n")
    md = os.path.join(ROOT, "docs", "zoo.md")
    with open(md) as fh:
        text = fh.read()
    a, b = text.find(DOC_BEGIN), text.find(DOC_END)
    if a < 0 or b < a:
        sys.exit(f"{md}: the mutants table markers are missing")
    write(md, text[:a + len(DOC_BEGIN)] + "\n" + markdown(doc) + text[b:])


def prune_docs(mutants):
    """the generator dropped some mutants and nothing else changed (same source, the rest listed in
    the same order): take their rows out of the committed table and count again. Each mutant is
    built and judged alone, so no other row's measurement depends on the dropped ones."""
    with open(os.path.join(ROOT, TABLE)) as fh:
        doc = json.load(fh)
    want = [m["id"] for m in mutants]
    kept = set(want)
    rows = [r for r in doc["mutants"] if r["id"] in kept]
    if doc.get("source_sha256") != source_digest() or [r["id"] for r in rows] != want:
        print(f"zoo_mutants: --prune-docs needs the committed table's source and every mutant still generated "
              f"in it; here the source or the list changed otherwise: make zoo-mutants-docs")
        return 1
    dropped = len(doc["mutants"]) - len(rows)
    per_op, total = count(rows)
    doc.update(per_op=per_op, total=total, mutants=rows,
               timing=doc["timing"] + f"; {dropped} mutants the generator no longer makes taken out since")
    write_docs(doc)
    print(f"zoo_mutants: {dropped} rows taken out of {TABLE}; {total['generated']} mutants left")
    return 0


def check_list(mutants):
    """the committed table lists exactly the mutants the source gives now"""
    try:
        with open(os.path.join(ROOT, TABLE)) as fh:
            doc = json.load(fh)
    except (OSError, ValueError) as e:
        print(f"zoo_mutants: cannot read {TABLE}: {e}: make zoo-mutants-docs")
        return 1
    have, want = [r["id"] for r in doc["mutants"]], [m["id"] for m in mutants]
    if have == want and doc.get("source_sha256") == source_digest():
        print(f"zoo_mutants: {TABLE} lists the {len(want)} mutants of the current {SOURCE}")
        return 0
    gone, new = sorted(set(have) - set(want)), sorted(set(want) - set(have))
    print(f"zoo_mutants: {TABLE} is stale ({SOURCE} or the replay changed since it was measured): "
          f"{len(new)} mutants new, {len(gone)} gone; run make zoo-mutants-docs and commit")
    for x in new[:5]:
        print(f"  new:  {x}")
    for x in gone[:5]:
        print(f"  gone: {x}")
    return 1


def self_test():
    """the generator on a small source: the kinds it must find, stable ids"""
    src = ('typedef struct { int64_t H, W; int f; } t_params;\n'
           'static int64_t k(const t_params *p, float y) {\n'
           '    int64_t s = 0;\n'
           '    for (int64_t i = 0; i < p->H; i++) s += (int64_t)floorf(y) + (y >= -1.0f ? 1 : 0);\n'
           '    return s;\n}\n'
           'static int run_k(const char *op, const attrs_t *at) { t_params p; p.H = attr_int(at, "a"); '
           'p.W = attr_int(at, "b"); return (int)k(&p, 0.5f); }\n'
           'static int run(const char *op) { if (!strncmp(op, "k", 1)) return run_k(op, 0); return 1; }\n')
    ms = generate(src, {"k": {"a": "int", "b": "int"}})
    kinds = sorted({m["kind"] for m in ms})
    assert kinds == ["attr", "cmp", "count", "lit", "round", "size"], kinds
    ids = [m["id"] for m in ms]
    assert len(set(ids)) == len(ids) and ids == [m["id"] for m in generate(src, {"k": {"a": "int", "b": "int"}})]
    assert "L4:k:cmp:y >= -1.0f -> y > -1.0f" in ids, ids
    assert "L4:k:count:i < p->H -> i < p->H + 1" in ids, ids
    assert "L7:run_k:attr:a, b -> b, a" in ids, ids
    assert all(m["ops"] == ["k"] for m in ms)
    # a loop over a local array's 4 elements is not run a fifth time (past the array); a loop whose
    # body reads the array at another index, or one of 5 elements, still is
    past = ('static int64_t k(const t_params *p) {\n    int64_t a[4], b[5], s = 0;\n'
            '    for (int i = 0; i < 4; i++) s += a[i];\n    for (int j = 0; j < 4; j++) s += b[j];\n'
            '    for (int u = 0; u < 4; u++) { s += a[0]; }\n    return s + p->H;\n}\n'
            'static int run_k(const char *op, const attrs_t *at) { return (int)k(0); }\n'
            'static int run(const char *op) { if (!strncmp(op, "k", 1)) return run_k(op, 0); return 1; }\n')
    counts = {m["id"].split(":", 3)[3] for m in generate(src.split("static")[0] + past, {"k": {}}) if m["kind"] == "count"}
    assert counts == {"i < 4 -> i < 4 - 1", "j < 4 -> j < 4 + 1", "j < 4 -> j < 4 - 1", "u < 4 -> u < 4 + 1",
                      "u < 4 -> u < 4 - 1"}, counts
    # verdicts: conform's kill, a reason that fits, one that does not, no reason, the compiler's
    rules = [{"re": re.compile("^a$"), "verdict": "equivalent", "reason": "why"},
             {"re": re.compile("^b$"), "verdict": "equivalent", "reason": "why"}]
    op = {"calls": 3, "changed_calls": 0, "n_failed": 0, "max_diff": 0.0, "scale": 1.0}
    cases = {"a": {"build": "ok", "ops": {"k": op}}, "b": {"build": "ok", "ops": {"k": dict(op, changed_calls=1)}},
             "c": {"build": "ok", "ops": {"k": op}}, "d": {"build": "error", "compile_error": "e"},
             "e": {"build": "same"}, "f": {"build": "ok", "ops": {"k": dict(op, n_failed=2, first_failed=["s/x", "failed"])}}}
    got = {i: verdict({"id": i, "ops": ["k"], "line": 1}, r, "k", rules)[0] for i, r in cases.items()}
    assert got == {"a": "equivalent", "b": "unexplained", "c": "unexplained", "d": "did_not_compile", "e": "equivalent",
                   "f": "killed"}, got


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--conform", default="build/conform")
    ap.add_argument("--suite", default="cases/conformance.json")
    ap.add_argument("--waivers", default="tests/zoo/waivers.json")
    ap.add_argument("--out", default="build/zoo_mutants")
    ap.add_argument("--jobs", type=int, default=2, help="mutants measured at a time (each conform run on one core)")
    ap.add_argument("--timeout", type=int, default=20, help="seconds per case (the bug-free build needs well under 1)")
    ap.add_argument("--only", help="a regex over mutant ids: measure only these (for iterating)")
    ap.add_argument("--list", action="store_true", help="print the mutants and exit")
    ap.add_argument("--check-list", action="store_true", help="compare the mutant list with the committed table")
    ap.add_argument("--prune-docs", action="store_true",
                    help="take the mutants the generator no longer makes out of the committed table (no run)")
    ap.add_argument("--from-results", action="store_true", help="tabulate OUT/results.json again without running")
    ap.add_argument("--write-docs", action="store_true", help="write docs/zoo_mutants.json, zoo_power.json, zoo.md")
    ap.add_argument("--allow-partial", action="store_true",
                    help="with --write-docs: count the mutants a cut-short run did not reach as not measured")
    ap.add_argument("--count-failing", action="store_true",
                    help="count the failing cases of the killed (mutant, op) pairs over the whole suite into OUT/failing.json "
                         "(for tools/hunt_zoo.py --mutants)")
    ap.add_argument("--every", type=int, default=1, help="with --count-failing: every k-th killed pair of the table only")
    ap.add_argument("--carry-over", nargs=2, metavar=("OLD_SOURCE", "OLD_RESULTS"),
                    help="reuse the kills of an earlier run (its zoo_kernels.c and results): a mutant killed on every op "
                         "there, in a function whose text has not changed, is not run again (its killing cases still exist)")
    args = ap.parse_args()

    self_test()
    schema, not_failures = op_schema(args.conform)
    with open(os.path.join(ROOT, SOURCE)) as fh:
        src = fh.read()
    mutants = generate(src, schema)
    if args.list:
        for m in mutants:
            print(m["id"], "|", ",".join(m["ops"]))
        return 0
    if args.check_list:
        return check_list(mutants)
    if args.prune_docs:
        return prune_docs(mutants)
    if args.count_failing:
        return count_failing(args, src, mutants, not_failures)
    rules = read_reasons()
    results_path = os.path.join(ROOT, args.out, "results.json")
    if args.from_results:
        with open(results_path) as fh:
            saved = json.load(fh)
        results, timing = saved.get("results", saved), saved.get("timing", "a run cut short: its partial results")
    else:
        chosen = [m for m in mutants if not args.only or re.search(args.only, m["id"])]
        carried = carry_over(args, src, schema, chosen) if args.carry_over else {}
        chosen = [m for m in chosen if m["id"] not in carried]
        t0, c0 = time.time(), os.times()
        results = measure(args, src, chosen, not_failures, list(schema))
        c1 = os.times()
        cpu = (c1.children_user + c1.children_system) - (c0.children_user + c0.children_system)
        timing = (f"{len(chosen)} mutants in {time.time() - t0:.0f} s wall, {cpu:.0f} s CPU, --jobs {args.jobs}, "
                  f"load average {os.getloadavg()[0]:.1f} at the end")
        results.update(carried)
        if carried:
            timing += f"; {len(carried)} kills carried over from an earlier run of an older suite and source"
        if args.only:
            old = {}
            if os.path.exists(results_path):
                with open(results_path) as fh:
                    old = json.load(fh)["results"]
            results = dict(old, **results)
        write(results_path, json.dumps({"timing": timing, "results": results}, indent=1) + "\n")
        print(f"zoo_mutants: {timing}")
    missing = [m["id"] for m in mutants if m["id"] not in results]
    if missing:
        print(f"zoo_mutants: {len(missing)} mutants not measured (e.g. {missing[0]}); the table needs a full run")
        if args.write_docs and not args.allow_partial:
            return 1
    per_op, total, rows = tabulate(mutants, results, rules)
    doc = {"schema": "conform-zoo-mutants", "schema_version": 1, "generator": "tools/zoo_mutants.py",
           "source": SOURCE, "source_sha256": source_digest(), "suite": args.suite.split("/")[-1].replace(".json", ""),
           "timing": timing, "per_op": per_op, "total": total, "mutants": rows}
    write(os.path.join(ROOT, args.out, "mutants.md"), markdown(doc))
    if args.write_docs:
        write_docs(doc)
    print(f"zoo_mutants: {total['generated']} mutants: " + ", ".join(f"{k.replace('_', ' ')} {total[k]}" for k in VERDICTS))
    print(f"zoo_mutants: table in {args.out}/mutants.md")
    silent = [r["id"] for r in rows for v in r["per_op"].values() if v["verdict"] == "unexplained"
              and not any(x["verdict"] == "unexplained" and x["re"].search(r["id"]) for x in rules)]
    for i in silent[:20]:
        print(f"zoo_mutants: survivor without a reason: {i}")
    return 1 if silent else 0


if __name__ == "__main__":
    sys.exit(main())
