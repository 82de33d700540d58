#!/usr/bin/env python3
"""Field test for lock-audit: extract pinned trees, run the analyzer, score it against labels.

Subcommands (see field/README.md):
  extract  write each pinned commit's tree from its bare snapshot into a work folder
  score    run `lock-audit check/audit --format json` on each extracted tree and compare
           with field/labels/*.yaml: per language and per rule TP/FP/FN, precision,
           recall, site recall, class accuracy, internal errors, and every untriaged
           finding or site (one that matches no label and no recorded false positive)
  same     run two builds on every tree and report any finding or site that differs
           (for changes meant to leave results alone: speed, structure)

Standard library + PyYAML only.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
RULES = ["LA101", "LA102", "LA103", "LA104", "LA105",
         "LA201", "LA202", "LA203", "LA301", "LA302", "LA303", "LA304"]
CLASSES = {"correctness", "efficiency", "unclear"}
LANGS = {
    ".py": "python", ".go": "go", ".java": "java", ".rb": "ruby", ".rs": "rust",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
}
# How far (in lines) a finding's site may be from a labeled line and still be that site.
SLACK = 2

# Test code, by path: the same patterns the precision issue names for the analyzer.
TEST_DIRS = {"test", "tests", "spec", "specs", "__tests__", "testdata", "fixtures", "testing",
             "test-utils", "testutils", "testutil", "e2e", "integration-tests", "it"}
TEST_FILES = ["*_test.go", "test_*.py", "*_test.py", "*Test.java", "*Tests.java", "*IT.java",
              "*_spec.rb", "*_test.rb", "*.test.ts", "*.test.js", "*.spec.ts", "*.spec.js",
              "*.test.tsx", "*.spec.tsx", "*.test.mjs", "conftest.py"]


def is_test_path(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    name = parts[-1]
    return any(fnmatch.fnmatchcase(name, pat) for pat in TEST_FILES)


def language_of(path: str) -> str:
    return LANGS.get(os.path.splitext(path)[1], "other")


def slug(repo: str) -> str:
    return repo.replace("/", "+")


# --------------------------------------------------------------------------- extract

def git_dir(snapshot: Path) -> Path:
    """A fetched snapshot is `<mirror>/<owner>+<name>/repo`, bare or with a `.git` inside."""
    return snapshot / ".git" if (snapshot / ".git").is_dir() else snapshot


def extract_tree(gitdir: Path, commit: str, out: Path) -> tuple[int, int]:
    """Write `commit`'s tree into `out` (replacing it); blobs absent from the snapshot are
    skipped and counted. Reads the snapshot only (git ls-tree / cat-file)."""
    listing = subprocess.run(["git", "--git-dir", str(gitdir), "ls-tree", "-r", "-z", commit],
                             check=True, capture_output=True).stdout
    entries = []
    for rec in listing.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind != b"blob":  # submodules (commit) are not part of the tree's text
            continue
        entries.append((mode.decode(), sha.decode(), path.decode("utf-8", "surrogateescape")))
    if out.exists():
        subprocess.run(["rm", "-rf", str(out)], check=True)
    out.mkdir(parents=True)
    proc = subprocess.Popen(["git", "--git-dir", str(gitdir), "cat-file", "--batch"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin and proc.stdout
    written = missing = 0
    # Feed and read one object at a time: the pipe never holds more than one blob.
    for mode, sha, path in entries:
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 2 or header[1] == b"missing":
            missing += 1
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after the object
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            try:
                os.symlink(data.decode("utf-8", "surrogateescape"), target)
            except OSError:
                missing += 1
                continue
        else:
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
        written += 1
    proc.stdin.close()
    proc.wait()
    return written, missing


def cmd_extract(args: argparse.Namespace) -> int:
    repos = load_repos(args.repos_file)
    wanted = set(args.repo or [])
    status = 0
    for entry in repos:
        repo = entry["repo"]
        if wanted and repo not in wanted:
            continue
        snap = Path(args.mirror) / slug(repo) / "repo"
        if not snap.exists():
            print(f"{repo}: no snapshot at {snap} (fetch it first)", file=sys.stderr)
            status = 1
            continue
        out = Path(args.out) / slug(repo)
        try:
            written, missing = extract_tree(git_dir(snap), entry["commit"], out)
        except subprocess.CalledProcessError as err:
            print(f"{repo}: git failed: {err.stderr.decode(errors='replace').strip()}",
                  file=sys.stderr)
            status = 1
            continue
        print(f"{repo}: {written} files -> {out}" + (f" ({missing} absent blobs skipped)"
                                                     if missing else ""))
    return status


# --------------------------------------------------------------------------- labels

@dataclass
class Site:
    path: str
    line: int
    library: str
    cls: str
    reason: str
    rules: dict
    release: list
    test: bool
    kind: str
    via: str | None = None


@dataclass
class FalsePositive:
    path: str
    line: int
    codes: set | None  # None: every code and the site itself
    reason: str


@dataclass
class Labels:
    repo: str
    commit: str
    sites: list = field(default_factory=list)
    false_positives: list = field(default_factory=list)
    non_production: list = field(default_factory=list)


class LabelError(Exception):
    pass


def load_repos(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def _int_list(value, where: str) -> list:
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, int) for v in values):
        raise LabelError(f"{where}: release must be a line number or a list of them")
    return values


def parse_labels(doc: dict, where: str) -> Labels:
    if not isinstance(doc, dict) or "repo" not in doc:
        raise LabelError(f"{where}: expected a mapping with `repo`")
    labels = Labels(repo=doc["repo"], commit=str(doc.get("commit", "")))
    for pattern in doc.get("non_production") or []:
        if not isinstance(pattern, dict) or "glob" not in pattern or "reason" not in pattern:
            raise LabelError(f"{where}: non_production entries need `glob` and `reason`")
        labels.non_production.append(pattern["glob"])
    for i, s in enumerate(doc.get("sites") or []):
        at = f"{where}: sites[{i}]"
        for key in ("path", "line", "library", "class", "reason", "rules"):
            if key not in s:
                raise LabelError(f"{at}: missing `{key}`")
        if s["class"] not in CLASSES:
            raise LabelError(f"{at}: class must be one of {sorted(CLASSES)}")
        rules = s["rules"] or {}
        unknown = set(rules) - set(RULES)
        if unknown:
            raise LabelError(f"{at}: unknown rules {sorted(unknown)}")
        missing = [r for r in RULES if r not in rules]
        if missing:
            raise LabelError(f"{at}: every rule needs a verdict (true/false/null); missing {missing}")
        if any(v not in (True, False, None) for v in rules.values()):
            raise LabelError(f"{at}: verdicts are true, false or null")
        kind = s.get("kind", "lock")
        if kind not in ("lock", "marker"):
            raise LabelError(f"{at}: kind is `lock` or `marker`")
        labels.sites.append(Site(path=s["path"], line=int(s["line"]), library=str(s["library"]),
                                 cls=s["class"], reason=str(s["reason"]), rules=rules,
                                 release=_int_list(s.get("release"), at),
                                 test=bool(s.get("test", False)), kind=kind, via=s.get("via")))
    for i, fp in enumerate(doc.get("false_positives") or []):
        at = f"{where}: false_positives[{i}]"
        for key in ("path", "line", "reason"):
            if key not in fp:
                raise LabelError(f"{at}: missing `{key}`")
        codes = fp.get("codes")
        labels.false_positives.append(FalsePositive(
            path=fp["path"], line=int(fp["line"]),
            codes=set(codes) if codes else None, reason=str(fp["reason"])))
    return labels


def load_labels(directory: Path) -> dict:
    out = {}
    for f in sorted(directory.glob("*.yaml")):
        with open(f, encoding="utf-8") as fh:
            labels = parse_labels(yaml.safe_load(fh), str(f))
        out[labels.repo] = labels
    return out


# --------------------------------------------------------------------------- running

def run_json(binary: str, command: str, tree: Path) -> tuple[dict, int, str]:
    proc = subprocess.run([binary, command, ".", "--format", "json", "--no-cache",
                           "--exit-zero"] if command == "check" else
                          [binary, command, ".", "--format", "json", "--no-cache"],
                          cwd=tree, capture_output=True, text=True)
    try:
        data = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except json.JSONDecodeError:
        data = {}
    return data, proc.returncode, proc.stderr


# --------------------------------------------------------------------------- scoring

@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    undecided: int = 0

    def add(self, other: "Counts") -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn
        self.undecided += other.undecided

    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class RepoScore:
    repo: str
    rules: dict = field(default_factory=lambda: defaultdict(Counts))  # (lang, rule) -> Counts
    sites_labeled: dict = field(default_factory=lambda: defaultdict(int))  # lang -> n
    sites_found: dict = field(default_factory=lambda: defaultdict(int))
    # (lang, "raw" | "wrapper") -> n: a site with `via` is a call of an in-house wrapper.
    shape_labeled: dict = field(default_factory=lambda: defaultdict(int))
    shape_found: dict = field(default_factory=lambda: defaultdict(int))
    sites_extra: dict = field(default_factory=lambda: defaultdict(int))  # audit sites not labeled
    class_total: dict = field(default_factory=lambda: defaultdict(int))
    class_right: dict = field(default_factory=lambda: defaultdict(int))
    unclassified: dict = field(default_factory=lambda: defaultdict(int))
    found_total: dict = field(default_factory=lambda: defaultdict(int))
    untriaged: list = field(default_factory=list)
    internal_errors: list = field(default_factory=list)
    test_findings: int = 0
    missed: list = field(default_factory=list)
    # found sites whose class differs from the label's: "path:line label -> verdict (evidence)"
    misclassed: list = field(default_factory=list)
    false_positives: list = field(default_factory=list)
    duplicates: list = field(default_factory=list)


def _production(labels: Labels, path: str) -> bool:
    return not is_test_path(path) and not any(
        fnmatch.fnmatchcase(path, g) for g in labels.non_production)


def _nearest(sites: list, path: str, line: int, also_release: bool = False):
    best, dist = None, SLACK + 1
    for s in sites:
        if s.path != path:
            continue
        lines = [s.line] + (s.release if also_release else [])
        d = min(abs(line - x) for x in lines)
        if d < dist:
            best, dist = s, d
    return best


def _recorded_fp(labels: Labels, path: str, line: int, code: str) -> FalsePositive | None:
    for fp in labels.false_positives:
        if fp.path == path and abs(fp.line - line) <= SLACK and (fp.codes is None
                                                                  or code in fp.codes):
            return fp
    return None


def score_repo(labels: Labels, check: dict, audit: dict, check_rc: int) -> RepoScore:
    score = RepoScore(repo=labels.repo)
    prod_sites = [s for s in labels.sites if not s.test and _production(labels, s.path)]
    locks = [s for s in prod_sites if s.kind == "lock"]
    for n in check.get("notices", []):
        if n.get("kind") == "internal":
            score.internal_errors.append(f"{n.get('path')}: {n.get('reason')}")
    if check_rc == 2 and not score.internal_errors:
        score.internal_errors.append("check exited 2")

    hit = defaultdict(set)  # id(site) -> rules that fired on it
    seen = set()
    for f in check.get("findings", []):
        # One finding per (rule, site, anchor): a repeat is a defect of its own.
        key = (f.get("code"), f.get("path"), f.get("site_line"), f.get("line"), f.get("column"))
        if key in seen:
            score.duplicates.append(f"{f.get('path')}:{f.get('line')}: {f.get('code')} twice")
        seen.add(key)
        code, path = f.get("code"), f.get("path", "")
        if code not in RULES:
            continue
        if not _production(labels, path):
            score.test_findings += 1
            continue
        lang = language_of(path)
        anchor = f.get("site_line") or f.get("line")
        # A finding with no site of its own (an unpaired release: `site_line` is its own
        # line) may sit on a labeled release line.
        no_site = not f.get("site_line") or f.get("site_line") == f.get("line")
        site = _nearest(prod_sites, path, anchor, also_release=no_site)
        counts = score.rules[(lang, code)]
        if site is not None:
            verdict = site.rules.get(code)
            hit[id(site)].add(code)
            if verdict is True:
                counts.tp += 1
            elif verdict is False:
                counts.fp += 1
                score.false_positives.append(f"{path}:{f.get('line')}: {code} on the site at "
                                             f"{site.line} (labeled false)")
            else:
                counts.undecided += 1
            continue
        counts.fp += 1
        recorded = _recorded_fp(labels, path, anchor, code) or \
            _recorded_fp(labels, path, f.get("line", anchor), code)
        if recorded is not None:
            score.false_positives.append(f"{path}:{f.get('line')}: {code}: {recorded.reason}")
        else:
            score.untriaged.append(f"{path}:{f.get('line')}: {code} (site line {anchor}) "
                                   f"{f.get('message', '')}")
    for s in prod_sites:
        for code in RULES:
            if s.rules.get(code) is True and code not in hit[id(s)]:
                score.rules[(language_of(s.path), code)].fn += 1

    matched = set()
    for a in audit.get("sites", []):
        path, line = a.get("path", ""), a.get("line", 0)
        if not _production(labels, path):
            continue
        lang = language_of(path)
        site = _nearest(prod_sites, path, line)
        if site is None:
            score.sites_extra[lang] += 1
            if _recorded_fp(labels, path, line, "site") is None:
                score.untriaged.append(f"{path}:{line}: site ({a.get('api')}) matches no label")
            continue
        if id(site) in matched:
            continue
        matched.add(id(site))
        if site.kind != "lock":
            continue
        score.found_total[lang] += 1
        if a.get("class") == "unclassified":
            score.unclassified[lang] += 1
        if site.cls in ("correctness", "efficiency"):
            score.class_total[lang] += 1
            if a.get("class") == site.cls:
                score.class_right[lang] += 1
            else:
                why = "; ".join(str(e) for e in a.get("evidence", [])[:3])
                score.misclassed.append(f"{path}:{line} labeled {site.cls}, "
                                        f"audit says {a.get('class')} ({why})")
    for s in locks:
        lang = language_of(s.path)
        shape = (lang, "wrapper" if s.via else "raw")
        score.sites_labeled[lang] += 1
        score.shape_labeled[shape] += 1
        if id(s) in matched:
            score.sites_found[lang] += 1
            score.shape_found[shape] += 1
        else:
            via = f" via {s.via}" if s.via else ""
            score.missed.append(f"{s.path}:{s.line} ({s.library}){via}")
    return score


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _ratio(a: int, b: int) -> str:
    return "-" if not b else f"{a / b:.2f}"


def report(scores: list, show_untriaged: bool, show_missed: bool,
           show_fp: bool = False, show_classes: bool = False) -> str:
    lines = []
    by_lang: dict = defaultdict(Counts)
    by_rule: dict = defaultdict(Counts)
    total = Counts()
    agg = defaultdict(lambda: defaultdict(int))
    for sc in scores:
        for (lang, rule), c in sc.rules.items():
            by_lang[lang].add(c)
            by_rule[rule].add(c)
            total.add(c)
        for name in ("sites_labeled", "sites_found", "sites_extra", "class_total",
                     "class_right", "unclassified", "found_total", "shape_labeled",
                     "shape_found"):
            for lang, n in getattr(sc, name).items():
                agg[name][lang] += n
    langs = sorted(set(by_lang) | set(agg["sites_labeled"]))
    lines.append("| language | labeled sites | site recall | extra sites | class acc. | "
                 "unclassified | TP | FP | FN | precision | recall |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for lang in langs + ["all"]:
        if lang == "all":
            pick = lambda name: sum(agg[name].values())  # noqa: E731
            c = total
        else:
            pick = lambda name, lang=lang: agg[name][lang]  # noqa: E731
            c = by_lang[lang]
        lines.append(
            f"| {lang} | {pick('sites_labeled')} | "
            f"{_ratio(pick('sites_found'), pick('sites_labeled'))} | {pick('sites_extra')} | "
            f"{_ratio(pick('class_right'), pick('class_total'))} | "
            f"{_ratio(pick('unclassified'), pick('found_total'))} | "
            f"{c.tp} | {c.fp} | {c.fn} | {_fmt(c.precision())} | {_fmt(c.recall())} |")
    lines.append("")
    lines.append("| language | raw-client sites | raw recall | wrapper-call sites | wrapper recall |")
    lines.append("|---|---|---|---|---|")
    for lang in langs + ["all"]:
        def shape(name, kind, lang=lang):
            return sum(n for (lg, k), n in agg[name].items()
                       if k == kind and (lang == "all" or lg == lang))
        lines.append(f"| {lang} | {shape('shape_labeled', 'raw')} | "
                     f"{_ratio(shape('shape_found', 'raw'), shape('shape_labeled', 'raw'))} | "
                     f"{shape('shape_labeled', 'wrapper')} | "
                     f"{_ratio(shape('shape_found', 'wrapper'), shape('shape_labeled', 'wrapper'))} |")
    lines.append("")
    lines.append("| rule | TP | FP | FN | undecided | precision | recall |")
    lines.append("|---|---|---|---|---|---|---|")
    for rule in RULES:
        c = by_rule.get(rule, Counts())
        lines.append(f"| {rule} | {c.tp} | {c.fp} | {c.fn} | {c.undecided} | "
                     f"{_fmt(c.precision())} | {_fmt(c.recall())} |")
    untriaged = sum(len(sc.untriaged) for sc in scores)
    internal = sum(len(sc.internal_errors) for sc in scores)
    duplicates = sum(len(sc.duplicates) for sc in scores)
    tests = sum(sc.test_findings for sc in scores)
    lines.append("")
    lines.append(f"repositories: {len(scores)}; labeled production lock sites: "
                 f"{sum(agg['sites_labeled'].values())}; untriaged: {untriaged}; "
                 f"internal errors: {internal}; duplicate findings: {duplicates}; "
                 f"findings in test code (not scored): {tests}")
    for sc in scores:
        for e in sc.internal_errors:
            lines.append(f"INTERNAL {sc.repo}: {e}")
        for d in sc.duplicates:
            lines.append(f"DUPLICATE {sc.repo}: {d}")
        if show_untriaged:
            for u in sc.untriaged:
                lines.append(f"UNTRIAGED {sc.repo}: {u}")
        if show_missed:
            for m in sc.missed:
                lines.append(f"MISSED {sc.repo}: {m}")
        if show_fp:
            for fp in sc.false_positives:
                lines.append(f"FP {sc.repo}: {fp}")
        if show_classes:
            for m in sc.misclassed:
                lines.append(f"CLASS {sc.repo}: {m}")
    return "\n".join(lines)


def check_label_places(labels: Labels, tree: Path) -> list:
    """Labels that point outside the tree (a typo, or a line past the end of the file)."""
    problems = []
    for s in labels.sites:
        f = tree / s.path
        if not f.is_file():
            problems.append(f"{labels.repo}: {s.path}: no such file")
            continue
        n = len(f.read_bytes().splitlines())
        if not 1 <= s.line <= n:
            problems.append(f"{labels.repo}: {s.path}:{s.line}: past the end ({n} lines)")
    return problems


def cmd_score(args: argparse.Namespace) -> int:
    all_labels = load_labels(Path(args.labels))
    wanted = set(args.repo or [])
    scores, problems = [], []
    for repo, labels in sorted(all_labels.items()):
        if wanted and repo not in wanted:
            continue
        tree = Path(args.trees) / slug(repo)
        if not tree.is_dir():
            problems.append(f"{repo}: no extracted tree at {tree} (run `extract`)")
            continue
        problems += check_label_places(labels, tree)
        check, rc, err = run_json(args.bin, "check", tree)
        audit, _, _ = run_json(args.bin, "audit", tree)
        if not check:
            problems.append(f"{repo}: lock-audit check printed no JSON: {err.strip()[:300]}")
        scores.append(score_repo(labels, check, audit, rc))
        if args.dump:
            dump = Path(args.dump)
            dump.mkdir(parents=True, exist_ok=True)
            (dump / f"{slug(repo)}.check.json").write_text(json.dumps(check, indent=1))
            (dump / f"{slug(repo)}.audit.json").write_text(json.dumps(audit, indent=1))
    print(report(scores, show_untriaged=not args.quiet, show_missed=args.missed,
                 show_fp=args.fp, show_classes=args.classes))
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    untriaged = sum(len(sc.untriaged) for sc in scores)
    return 1 if problems or (args.strict and untriaged) else 0


def _comparable(data: dict) -> dict:
    """A check/audit report without what may differ between equivalent runs: the
    time taken, how many files were parsed, and notices about files not parsed."""
    data = dict(data)
    data.pop("notices", None)
    if isinstance(data.get("summary"), dict):
        data["summary"] = {k: v for k, v in data["summary"].items()
                           if k not in ("elapsed_ms", "files_parsed")}
    return data


def cmd_same(args: argparse.Namespace) -> int:
    """Do two builds report the same findings and sites on every tree? (A change
    meant to be invisible: speed, structure.) Exit 1 and list the first
    differences otherwise."""
    differ = 0
    for tree in sorted(p for p in Path(args.trees).iterdir() if p.is_dir()):
        for command in ("check", "audit"):
            old = _comparable(run_json(args.before, command, tree)[0])
            new = _comparable(run_json(args.after, command, tree)[0])
            if old == new:
                continue
            differ += 1
            key = "findings" if command == "check" else "sites"
            was = {json.dumps(x, sort_keys=True) for x in old.get(key, [])}
            now = {json.dumps(x, sort_keys=True) for x in new.get(key, [])}
            print(f"{tree.name} {command}: {len(was - now)} gone, {len(now - was)} new")
            for x in sorted(was - now)[:3]:
                print(f"  - {x[:240]}")
            for x in sorted(now - was)[:3]:
                print(f"  + {x[:240]}")
    print(f"{differ} reports differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("extract", help="write pinned trees from bare snapshots")
    ex.add_argument("--mirror", default="/work/.mirror",
                    help="folder holding <owner>+<name>/repo snapshots")
    ex.add_argument("--out", default="/tmp/field")
    ex.add_argument("--repos-file", default=str(HERE / "repos.yaml"))
    ex.add_argument("repo", nargs="*", help="only these owner/name (default: all)")
    sc = sub.add_parser("score", help="run lock-audit on the trees and score it")
    sc.add_argument("--bin", default=str(HERE.parent / "target/release/lock-audit"))
    sc.add_argument("--trees", default="/tmp/field")
    sc.add_argument("--labels", default=str(HERE / "labels"))
    sc.add_argument("--dump", help="also write each repo's check/audit JSON here")
    sc.add_argument("--quiet", action="store_true", help="do not list untriaged findings")
    sc.add_argument("--missed", action="store_true", help="list labeled sites audit missed")
    sc.add_argument("--fp", action="store_true", help="list every false positive finding")
    sc.add_argument("--classes", action="store_true",
                    help="list found sites whose class differs from the label's")
    sc.add_argument("--strict", action="store_true", help="exit 1 when anything is untriaged")
    sc.add_argument("repo", nargs="*", help="only these owner/name (default: all labeled)")
    sm = sub.add_parser("same", help="do two builds report the same on every tree?")
    sm.add_argument("--before", required=True, help="the lock-audit binary before the change")
    sm.add_argument("--after", default=str(HERE.parent / "target/release/lock-audit"))
    sm.add_argument("--trees", default="/tmp/field")
    args = ap.parse_args(argv)
    commands = {"extract": cmd_extract, "score": cmd_score, "same": cmd_same}
    return commands[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
