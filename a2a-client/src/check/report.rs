//! [`Report`]: what a run found, and its table.

use super::{Finding, Level, Verdict};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// Everything a run found.
#[derive(Clone, Debug)]
pub struct Report {
    /// The URL checked.
    pub url: String,
    /// The findings, in the order the checks ran.
    pub findings: Vec<Finding>,
    /// Why some checks could not run: the deadline passed, the agent wanted credentials the
    /// checker was not given. Empty for a complete run.
    pub gaps: Vec<String>,
}

impl Report {
    /// Whether every check that applies could run.
    pub fn complete(&self) -> bool {
        self.gaps.is_empty()
    }

    /// Whether every MUST held (and the run was complete).
    pub fn passed(&self) -> bool {
        self.complete()
            && !self
                .findings
                .iter()
                .any(|f| f.level == Level::Must && f.verdict == Verdict::Fail)
    }

    /// The findings that did not pass, one [`Finding::line`] each.
    pub fn failures(&self) -> Vec<String> {
        self.findings
            .iter()
            .filter(|f| f.verdict == Verdict::Fail)
            .map(Finding::line)
            .collect()
    }

    /// The report as JSON: `{url, passed, complete, gaps, summary: {binding: {level: {verdict: n}}},
    /// findings: [{id, group, level, section, title, binding, verdict, detail, request,
    /// response}]}`.
    pub fn to_json(&self) -> Value {
        let findings: Vec<Value> = self
            .findings
            .iter()
            .map(|f| {
                json!({
                    "id": f.check.id,
                    "group": f.check.group.name(),
                    "level": f.level.to_string(),
                    "section": f.check.section,
                    "title": f.check.title,
                    "binding": f.binding,
                    "verdict": f.verdict.to_string().to_lowercase(),
                    "detail": f.detail,
                    "request": f.request,
                    "response": f.response,
                })
            })
            .collect();
        let mut summary = serde_json::Map::new();
        for (binding, counts) in self.summary() {
            let mut per = serde_json::Map::new();
            for (level, [pass, fail, skip]) in Level::ALL.into_iter().zip(counts) {
                per.insert(
                    level.to_string(),
                    json!({"pass": pass, "fail": fail, "skip": skip}),
                );
            }
            summary.insert(binding.to_owned(), Value::Object(per));
        }
        json!({
            "url": self.url,
            "passed": self.passed(),
            "complete": self.complete(),
            "gaps": self.gaps,
            "summary": summary,
            "findings": findings,
        })
    }

    /// Per [`Finding::place`]: the counts of passes, failures and skips per level
    /// (`counts[level as usize][verdict as usize]`).
    fn summary(&self) -> Vec<(&'static str, [[usize; 3]; 3])> {
        let mut out: Vec<(&'static str, [[usize; 3]; 3])> = Vec::new();
        for f in &self.findings {
            let place = f.place();
            let i = match out.iter().position(|(p, _)| *p == place) {
                Some(i) => i,
                None => {
                    out.push((place, [[0; 3]; 3]));
                    out.len() - 1
                }
            };
            out[i].1[f.level as usize][f.verdict as usize] += 1;
        }
        out
    }

    /// The report for a terminal: every finding that did not pass with what was sent and what
    /// came back, then a summary table per binding.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for f in &self.findings {
            let _ = writeln!(
                s,
                "{:<4} {:<6} {:<9} {:<30} §{}",
                f.verdict.to_string(),
                f.level.to_string(),
                f.place(),
                f.check.id,
                f.check.section
            );
            if f.verdict != Verdict::Pass {
                let _ = writeln!(s, "     {}", f.detail.replace('\n', "\n     "));
            }
            if f.verdict == Verdict::Fail {
                for (what, text) in [("sent", &f.request), ("got", &f.response)] {
                    if let Some(text) = text {
                        let _ = writeln!(s, "     {what}:");
                        for line in text.lines().take(24) {
                            let _ = writeln!(s, "       | {line}");
                        }
                    }
                }
            }
        }
        let _ = writeln!(
            s,
            "\n{:<10} {:>15} {:>15} {:>15}",
            "binding", "MUST p/f/s", "SHOULD p/f/s", "MAY p/f/s"
        );
        for (binding, counts) in self.summary() {
            let cell = |i: usize| {
                let [p, f, k] = counts[i];
                format!("{p}/{f}/{k}")
            };
            let _ = writeln!(
                s,
                "{binding:<10} {:>15} {:>15} {:>15}",
                cell(0),
                cell(1),
                cell(2)
            );
        }
        for gap in &self.gaps {
            let _ = writeln!(s, "\nincomplete: {gap}");
        }
        let failed = self
            .findings
            .iter()
            .filter(|f| f.level == Level::Must && f.verdict == Verdict::Fail)
            .count();
        let verdict = match (self.complete(), failed) {
            (false, _) => "incomplete: not every check could run".to_owned(),
            (true, 0) => "every MUST holds".to_owned(),
            (true, n) => format!("{n} MUST finding(s) fail"),
        };
        let _ = writeln!(s, "\n{}: {verdict}", self.url);
        s
    }
}
