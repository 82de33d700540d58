//! JUnit XML: one test case per finding, for CI systems that show test reports.

use super::position;
use crate::lines::LineIndex;
use crate::outcome::Report;

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub fn render(report: &Report) -> String {
    let mut cases = String::new();
    let mut count = 0;
    for file in &report.files {
        let index = LineIndex::new(&file.text);
        for f in &file.findings {
            let p = position(&index, f);
            count += 1;
            cases.push_str(&format!(
                "    <testcase classname=\"{}\" name=\"{} {}:{}:{}\">\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                xml(&file.rel),
                f.rule.code,
                xml(&file.rel),
                p.line,
                p.column,
                f.severity.name(),
                xml(&f.message),
                xml(&f.help),
            ));
        }
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"lock-audit\" tests=\"{count}\" failures=\"{count}\" errors=\"0\">\n{cases}  </testsuite>\n</testsuites>\n"
    )
}
