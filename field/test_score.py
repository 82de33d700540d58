#!/usr/bin/env python3
"""Unit test of the field scorer on a tiny tree it generates: extraction from a bare git
repository, label parsing, matching and the counts. Run: python3 field/test_score.py"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import score  # noqa: E402

ALL_FALSE = {r: False for r in score.RULES}


def verdicts(**true):
    v = dict(ALL_FALSE)
    v.update(true)
    return v


LABELS = {
    "repo": "acme/shop",
    "commit": "x",
    "sites": [
        {"path": "app/lock.py", "line": 3, "library": "redis-py", "class": "correctness",
         "reason": "stock", "release": [5], "rules": verdicts(LA201=True, LA301=True)},
        {"path": "app/jobs.py", "line": 10, "library": "redis-py", "class": "efficiency",
         "reason": "cache", "rules": verdicts(LA101=True, LA203=None)},
        {"path": "app/jobs.py", "line": 20, "library": "pg", "class": "correctness",
         "reason": "ledger", "rules": verdicts(LA104=True)},
        {"path": "tests/test_x.py", "line": 1, "library": "redis-py", "class": "unclear",
         "reason": "test", "test": True, "rules": verdicts(LA101=True)},
    ],
    "false_positives": [
        {"path": "app/backfill.py", "line": 7, "codes": ["LA104", "site"],
         "reason": "a backfill"},
    ],
}

CHECK = {"findings": [
    # TP on site 1 (anchored at the release, site_line names the acquisition)
    {"code": "LA201", "path": "app/lock.py", "line": 5, "site_line": 3},
    # FP on site 1: LA203 labeled false
    {"code": "LA203", "path": "app/lock.py", "line": 5, "site_line": 3},
    # TP on site 2 within the slack
    {"code": "LA101", "path": "app/jobs.py", "line": 11, "site_line": 12},
    # undecided on site 2 (null)
    {"code": "LA203", "path": "app/jobs.py", "line": 12, "site_line": 12},
    # recorded false positive
    {"code": "LA104", "path": "app/backfill.py", "line": 8, "site_line": 8},
    # untriaged
    {"code": "LA103", "path": "app/other.py", "line": 4, "site_line": 4},
    # test code: not scored
    {"code": "LA101", "path": "tests/test_x.py", "line": 1, "site_line": 1},
    # suppression findings are not field rules
    {"code": "LA001", "path": "app/jobs.py", "line": 1},
    # the same finding twice: counted (and listed) as a duplicate
    {"code": "LA001", "path": "app/jobs.py", "line": 1},
], "notices": [{"path": "app/broken.py", "kind": "internal", "reason": "panicked"}]}

AUDIT = {"sites": [
    {"path": "app/lock.py", "line": 3, "class": "correctness", "api": "redis.set"},
    {"path": "app/jobs.py", "line": 12, "class": "unclassified", "api": "redis.set"},
    {"path": "app/backfill.py", "line": 7, "class": "unclassified", "api": "sql"},
    {"path": "app/extra.py", "line": 9, "class": "efficiency", "api": "redis.set"},
]}


class ScoreTest(unittest.TestCase):
    def setUp(self):
        self.labels = score.parse_labels(LABELS, "acme+shop.yaml")
        self.sc = score.score_repo(self.labels, CHECK, AUDIT, check_rc=2)

    def counts(self, rule):
        return self.sc.rules[("python", rule)]

    def test_findings_are_matched_to_sites(self):
        self.assertEqual((self.counts("LA201").tp, self.counts("LA201").fp), (1, 0))
        self.assertEqual(self.counts("LA203").fp, 1)
        self.assertEqual(self.counts("LA203").undecided, 1)
        self.assertEqual(self.counts("LA101").tp, 1)
        # the recorded false positive and the untriaged one both count as FP
        self.assertEqual(self.counts("LA104").fp, 1)
        self.assertEqual(self.counts("LA103").fp, 1)

    def test_missing_findings_are_false_negatives(self):
        self.assertEqual(self.counts("LA301").fn, 1)
        self.assertEqual(self.counts("LA104").fn, 1)
        self.assertEqual(self.counts("LA201").fn, 0)

    def test_untriaged_lists_only_unexplained(self):
        joined = "\n".join(self.sc.untriaged)
        self.assertEqual(len(self.sc.untriaged), 2, joined)
        self.assertIn("app/other.py:4: LA103", joined)
        self.assertIn("app/extra.py:9: site", joined)

    def test_sites_and_classes(self):
        self.assertEqual(self.sc.sites_labeled["python"], 3)
        self.assertEqual(self.sc.sites_found["python"], 2)
        self.assertEqual(self.sc.class_total["python"], 2)  # unclassified counts as wrong
        self.assertEqual(self.sc.class_right["python"], 1)
        self.assertEqual(self.sc.unclassified["python"], 1)
        self.assertEqual(self.sc.missed, ["app/jobs.py:20 (pg)"])
        self.assertEqual(self.sc.test_findings, 1)

    def test_duplicates_are_reported(self):
        self.assertEqual(len(self.sc.duplicates), 1)
        text = score.report([self.sc], show_untriaged=False, show_missed=False)
        self.assertIn("duplicate findings: 1", text)

    def test_internal_errors_are_reported(self):
        self.assertEqual(self.sc.internal_errors, ["app/broken.py: panicked"])
        text = score.report([self.sc], show_untriaged=True, show_missed=False)
        self.assertIn("internal errors: 1", text)
        self.assertIn("UNTRIAGED acme/shop: app/other.py:4", text)

    def test_labels_are_validated(self):
        bad = json.loads(json.dumps(LABELS))
        del bad["sites"][0]["rules"]["LA304"]
        with self.assertRaisesRegex(score.LabelError, "LA304"):
            score.parse_labels(bad, "bad.yaml")
        bad = json.loads(json.dumps(LABELS))
        bad["sites"][0]["class"] = "correct"
        with self.assertRaisesRegex(score.LabelError, "class"):
            score.parse_labels(bad, "bad.yaml")

    def test_test_paths(self):
        for p in ["tests/a.py", "pkg/x_test.go", "src/FooTest.java", "spec/a_spec.rb",
                  "web/a.spec.ts", "pkg/test_a.py"]:
            self.assertTrue(score.is_test_path(p), p)
        for p in ["app/testimony.py", "src/Tester.java", "lib/contest.rb"]:
            self.assertFalse(score.is_test_path(p), p)


class ExtractAndRunTest(unittest.TestCase):
    """End to end on a generated bare repository and a stand-in analyzer."""

    def test_extract_then_score(self):
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            work = tmp / "src"
            work.mkdir()
            git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
            subprocess.run(["git", "init", "-q", str(work)], check=True)
            (work / "app").mkdir()
            (work / "app" / "lock.py").write_text("import redis\n\nr.set(k, 1, nx=True)\n")
            (work / "run.sh").write_text("#!/bin/sh\n")
            os.chmod(work / "run.sh", 0o755)
            subprocess.run(git + ["add", "."], check=True)
            subprocess.run(git + ["commit", "-qm", "one"], check=True)
            commit = subprocess.run(git + ["rev-parse", "HEAD"], check=True,
                                    capture_output=True, text=True).stdout.strip()
            # a later commit must not leak into the pinned tree
            (work / "app" / "later.py").write_text("x = 1\n")
            subprocess.run(git + ["add", "."], check=True)
            subprocess.run(git + ["commit", "-qm", "two"], check=True)
            mirror = tmp / "mirror" / "acme+shop"
            mirror.mkdir(parents=True)
            subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirror / "repo")],
                           check=True)
            repos = tmp / "repos.yaml"
            repos.write_text(f"- repo: acme/shop\n  commit: {commit}\n")
            trees = tmp / "trees"
            rc = score.main(["extract", "--mirror", str(tmp / "mirror"), "--out", str(trees),
                             "--repos-file", str(repos)])
            self.assertEqual(rc, 0)
            tree = trees / "acme+shop"
            self.assertTrue((tree / "app" / "lock.py").is_file())
            self.assertFalse((tree / "app" / "later.py").exists())
            self.assertTrue(os.stat(tree / "run.sh").st_mode & stat.S_IXUSR)

            fake = tmp / "fake-lock-audit"
            fake.write_text(textwrap.dedent("""\
                #!/usr/bin/env python3
                import json, sys
                if sys.argv[1] == "check":
                    print(json.dumps({"findings": [{"code": "LA101", "path": "app/lock.py",
                        "line": 3, "site_line": 3}], "notices": []}))
                else:
                    print(json.dumps({"sites": [{"path": "app/lock.py", "line": 3,
                        "class": "efficiency"}]}))
                """))
            fake.chmod(0o755)
            labels = tmp / "labels"
            labels.mkdir()
            (labels / "acme+shop.yaml").write_text(textwrap.dedent("""\
                repo: acme/shop
                commit: x
                sites:
                  - {path: app/lock.py, line: 3, library: redis-py, class: efficiency,
                     reason: cache, rules: {LA101: true, LA102: false, LA103: false,
                     LA104: false, LA105: null, LA201: false, LA202: false, LA203: false,
                     LA301: false, LA302: false, LA303: false, LA304: false}}
                """))
            rc = score.main(["score", "--bin", str(fake), "--trees", str(trees), "--labels",
                             str(labels), "--strict", "--quiet"])
            self.assertEqual(rc, 0)
            # a label pointing past the end of the file is a problem (exit 1)
            (labels / "acme+shop.yaml").write_text(
                (labels / "acme+shop.yaml").read_text().replace("line: 3", "line: 30"))
            rc = score.main(["score", "--bin", str(fake), "--trees", str(trees), "--labels",
                             str(labels), "--quiet"])
            self.assertEqual(rc, 1)


if __name__ == "__main__":
    unittest.main()
