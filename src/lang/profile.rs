//! What the analysis needs to know about a language beyond its syntax tree:
//! comments, negation, "this object", how a function leaves early, how
//! modules and constants are named across files, and typed durations. The
//! lowering records what it can as facts in the model; `sites`, `checks` and
//! the editor server ask the profile for the rest. Nothing outside `lang/`
//! branches on a language.

use crate::model::{ExitKind, Language};

pub struct Profile {
    /// The line comment marker lock-audit writes (suppressions, class annotations).
    pub line_comment: &'static str,
    /// How a line that holds only a comment starts.
    pub comment_starts: &'static [&'static str],
    /// A condition starting with one of these tests for failure (`not x`, `!x`).
    pub negation_prefixes: &'static [&'static str],
    /// A condition containing one of these tests for failure (`x is None`, `x == nil`).
    pub negation_tests: &'static [&'static str],
    /// Receivers meaning "this object" (`self`, `this`, `@`).
    pub self_names: &'static [&'static str],
    /// Parameters that are the object itself, not arguments (`self`, `cls`).
    pub self_params: &'static [&'static str],
    /// Method names of a class's constructor (besides the class's own name,
    /// Java's): `__init__`, `initialize`, `constructor`.
    pub constructors: &'static [&'static str],
    /// A constructor is named after its class (Java's `Lease(..)` in `class Lease`).
    pub class_named_constructor: bool,
    /// The class method that builds an object (Ruby's `Lease.new(..)`), where
    /// callers do not call the class itself (`Lease(..)`, `new Lease(..)`).
    pub builder: Option<&'static str>,
    /// The prefix of a function that builds the type its name goes on to
    /// spell, by convention (Go's `NewMutex(..)` returns a `Mutex`,
    /// `manager.NewMutex(..)` too, whatever `manager` is).
    pub constructor_prefix: Option<&'static str>,
    /// Locals, fields or parameters may declare a type (annotations count):
    /// a receiver can be held as an interface or base class.
    pub declared_types: bool,
    /// Any call may raise (exceptions); otherwise errors are values and only
    /// the exits of `early_exits` leave a function early.
    pub calls_may_raise: bool,
    /// The exits that leave a function before a release further down.
    pub early_exits: &'static [ExitKind],
    /// Methods that raise, where raising is a call (Ruby `raise` / `fail`, Go
    /// `panic`), not a statement the model records as an exit.
    pub raise_calls: &'static [&'static str],
    /// Methods that end the program or the test on any receiver (Go
    /// `log.Fatalf`, `b.Fatalf`, `os.Exit`).
    pub exit_methods: &'static [&'static str],
    /// A method's last statement is its value with no `return` written
    /// (Ruby), which the model does not record as an exit.
    pub last_statement_returns: bool,
    /// Other files name a file by its folder (Go packages), not its stem.
    pub module_is_folder: bool,
    /// A call may name its function through its module's path
    /// (`crate::queue::try_lock(..)`, Rust).
    pub path_calls: bool,
    /// A method named without a call (`retry(m.applier.LockTable)`) is a
    /// reference to it; in Rust such a name is always a field.
    pub method_references: bool,
    /// Functions and constants of the same package (folder) are visible
    /// without an import (Go).
    pub package_scope: bool,
    /// A call passes exactly the parameters a signature without variadics
    /// declares: no defaults, no overloads, no blocks passed to any method
    /// (Rust, Go).
    pub exact_arity: bool,
    /// Another class's or module's constants are written `Class.NAME` without
    /// an import (Java; Ruby's `Scripts::LOCK_SCRIPT`, which Bundler or an
    /// autoloader loads).
    pub qualified_constants: bool,
    /// Duration constants and their milliseconds (Go `time.Second`).
    pub duration_names: &'static [(&'static str, f64)],
    /// Duration constructors taking a number, and the milliseconds per unit
    /// (`Duration::from_secs`, `Duration.ofSeconds`, Ruby `30.seconds`).
    pub duration_calls: &'static [(&'static str, f64)],
    /// A constructor taking a duration in the typed unit (`time.Duration(n)`).
    pub duration_casts: &'static [&'static str],
    /// Files may be minified bundles (skipped unless asked for).
    pub minified_bundles: bool,
    /// Test files by name (globs), besides the test folders of any language.
    pub test_files: &'static [&'static str],
    /// A method names its object's fields without `this.` (Java).
    pub implicit_fields: bool,
    /// The dependency manifests that state a project's library versions, lock
    /// files first (`*` stands for any text: `requirements*.txt`).
    pub manifests: &'static [&'static str],
    /// A class header extending one of `CLASSES` (a regex alternation put in
    /// its place), as a prefilter for files that may inherit a wrapper
    /// called through the subclass's own name (`LockService.call`, Ruby and
    /// Python class methods). `None` elsewhere: Go, Rust and SQL have no
    /// such inheritance, and Java and JavaScript callers reach a method
    /// through instances (re-reading ruoyi's 400 `extends BaseMapperX`
    /// mappers found no site the wrapper's name had not found already).
    pub subclass_header: Option<&'static str>,
    /// The keyword a function definition's line starts with (`def`, `func`,
    /// `fn`), where there is one: a file is read for another file's writer
    /// only where a name follows it. `None`: Java and JavaScript define
    /// methods by name alone.
    pub definition_keyword: Option<&'static str>,
    /// The macro that embeds another file's text at build time, with its `!`
    /// (Rust `include_str!`): the named file's text is the expression's value.
    pub embed_macro: Option<&'static str>,
    /// The comment directive that embeds a file into the variable declared
    /// after it (Go `//go:embed lock.lua` above `var lockScript string`).
    pub embed_directive: Option<&'static str>,
}

const ALL_EXITS: &[ExitKind] = &[
    ExitKind::Return,
    ExitKind::Raise,
    ExitKind::Break,
    ExitKind::Continue,
    ExitKind::Try,
];
const HASH: &[&str] = &["#"];
const SLASHES: &[&str] = &["//", "/*", "*"];
const BANG: &[&str] = &["!"];

/// What most languages share: C-style comments, `!`, exceptions, no package
/// scope; each profile states where it differs.
const C_STYLE: Profile = Profile {
    line_comment: "//",
    comment_starts: SLASHES,
    negation_prefixes: BANG,
    negation_tests: &["== false"],
    self_names: &["this"],
    self_params: &["this"],
    constructors: &["constructor"],
    class_named_constructor: false,
    builder: None,
    constructor_prefix: None,
    declared_types: true,
    calls_may_raise: true,
    early_exits: ALL_EXITS,
    raise_calls: &[],
    exit_methods: &[],
    last_statement_returns: false,
    module_is_folder: false,
    path_calls: false,
    method_references: true,
    package_scope: false,
    exact_arity: false,
    qualified_constants: false,
    duration_names: &[],
    duration_calls: &[],
    duration_casts: &[],
    test_files: &[],
    minified_bundles: false,
    implicit_fields: false,
    manifests: &[],
    subclass_header: None,
    definition_keyword: None,
    embed_macro: None,
    embed_directive: None,
};

static PYTHON: Profile = Profile {
    line_comment: "#",
    comment_starts: HASH,
    negation_prefixes: &["not "],
    negation_tests: &["is None", "is False", "== false"],
    self_names: &["self"],
    self_params: &["self", "cls"],
    constructors: &["__init__"],
    class_named_constructor: false,
    builder: None,
    test_files: &["test_*.py", "*_test.py"],
    manifests: &["poetry.lock", "requirements*.txt", "pyproject.toml"],
    // Or the class imported under another name (`import DatabaseBackedObject
    // as dbo`), which the header then extends.
    subclass_header: Some(
        r"\bclass\s+\w+\s*\([^)]*?\b(?:CLASSES)\b|\bimport\s[^\n]*\b(?:CLASSES)\s+as\s",
    ),
    definition_keyword: Some("def"),
    ..C_STYLE
};

static RUBY: Profile = Profile {
    line_comment: "#",
    comment_starts: HASH,
    negation_prefixes: &["not ", "!"],
    negation_tests: &["== false", "== nil", ".nil?"],
    self_names: &["self", "@"],
    constructors: &["initialize"],
    class_named_constructor: false,
    builder: Some("new"),
    declared_types: false,
    last_statement_returns: true,
    // Kernel#raise and its alias #fail.
    raise_calls: &["raise", "fail"],
    qualified_constants: true,
    self_params: &["self"],
    duration_calls: &[
        // ActiveSupport's Numeric durations, singular and plural.
        ("seconds", 1000.0),
        ("second", 1000.0),
        ("milliseconds", 1.0),
        ("minutes", 60_000.0),
        ("minute", 60_000.0),
        ("hours", 3_600_000.0),
        ("hour", 3_600_000.0),
        ("days", 86_400_000.0),
        ("day", 86_400_000.0),
        ("weeks", 604_800_000.0),
        ("week", 604_800_000.0),
    ],
    test_files: &["*_spec.rb"],
    manifests: &["Gemfile.lock"],
    subclass_header: Some(r"\bclass\s+[\w:]+\s*<\s*(?:[\w:]*::)?(?:CLASSES)\b"),
    definition_keyword: Some("def"),
    ..C_STYLE
};

/// SQL files: no clients, no exceptions to follow; `--` comments.
static SQL: Profile = Profile {
    line_comment: "--",
    comment_starts: &["--", "/*"],
    negation_prefixes: &["NOT ", "not "],
    self_names: &[],
    self_params: &[],
    calls_may_raise: false,
    early_exits: &[ExitKind::Return],
    ..C_STYLE
};

static JAVASCRIPT: Profile = Profile {
    negation_tests: &["== false", "=== false"],
    test_files: &[
        "*.test.ts",
        "*.test.tsx",
        "*.test.js",
        "*.test.jsx",
        "*.test.mjs",
        "*.spec.ts",
        "*.spec.tsx",
        "*.spec.js",
        "*.spec.jsx",
        "*.spec.mjs",
    ],
    minified_bundles: true,
    manifests: &["package.json"],
    ..C_STYLE
};

static JAVA: Profile = Profile {
    class_named_constructor: true,
    negation_tests: &["== false", "=== false"],
    qualified_constants: true,
    implicit_fields: true,
    test_files: &["*Test.java", "*Tests.java"],
    manifests: &["pom.xml"],
    duration_calls: &[
        ("ofSeconds", 1000.0),
        ("ofMillis", 1.0),
        ("ofMinutes", 60_000.0),
        ("ofHours", 3_600_000.0),
    ],
    ..C_STYLE
};

static GO: Profile = Profile {
    negation_tests: &["== false", "== nil"],
    raise_calls: &["panic"],
    exit_methods: &[
        "Fatal", "Fatalf", "Fatalln", "Panic", "Panicf", "Panicln", "Exit", "FailNow",
    ],
    // Go names its receiver; `s` is the commonest spelling in the corpus.
    self_names: &["s"],
    self_params: &[],
    calls_may_raise: false,
    early_exits: &[ExitKind::Return],
    module_is_folder: true,
    package_scope: true,
    exact_arity: true,
    constructor_prefix: Some("New"),
    duration_names: &[
        ("Nanosecond", 1e-6),
        ("Microsecond", 1e-3),
        ("Millisecond", 1.0),
        ("Second", 1000.0),
        ("Minute", 60_000.0),
        ("Hour", 3_600_000.0),
    ],
    duration_casts: &["Duration"],
    test_files: &["*_test.go"],
    manifests: &["go.mod"],
    definition_keyword: Some("func"),
    embed_directive: Some("//go:embed"),
    ..C_STYLE
};

static RUST: Profile = Profile {
    self_names: &["self"],
    self_params: &["self"],
    calls_may_raise: false,
    duration_calls: &[
        ("from_secs", 1000.0),
        ("from_millis", 1.0),
        ("from_mins", 60_000.0),
        ("from_secs_f64", 1000.0),
        ("from_secs_f32", 1000.0),
    ],
    manifests: &["Cargo.lock"],
    definition_keyword: Some("fn"),
    embed_macro: Some("include_str!"),
    path_calls: true,
    method_references: false,
    exact_arity: true,
    ..C_STYLE
};

/// Every profile's [`Profile::subclass_header`], once each.
pub fn subclass_headers() -> Vec<&'static str> {
    let mut all: Vec<&str> = [
        &C_STYLE,
        &PYTHON,
        &RUBY,
        &SQL,
        &JAVASCRIPT,
        &JAVA,
        &GO,
        &RUST,
    ]
    .iter()
    .filter_map(|p| p.subclass_header)
    .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The profile of `language` (TypeScript shares JavaScript's).
pub fn profile(language: Language) -> &'static Profile {
    match language {
        Language::Python => &PYTHON,
        Language::Ruby => &RUBY,
        Language::Sql => &SQL,
        Language::JavaScript | Language::TypeScript => &JAVASCRIPT,
        Language::Java => &JAVA,
        Language::Go => &GO,
        Language::Rust => &RUST,
    }
}

impl Profile {
    /// Does a condition test for failure (`not acquired`, `lock == nil`)?
    pub fn is_negative(&self, condition: &str) -> bool {
        let t = condition.trim_start_matches('(').trim();
        self.negation_prefixes.iter().any(|p| t.starts_with(p))
            || self.negation_tests.iter().any(|n| t.contains(n))
    }

    /// Milliseconds of a duration constant (`time.Second`).
    pub fn named_duration(&self, name: &str) -> Option<f64> {
        let last = name.rsplit('.').next()?;
        self.duration_names
            .iter()
            .find(|(n, _)| *n == last)
            .map(|(_, ms)| *ms)
    }

    /// Milliseconds per unit of a duration constructor (`from_secs`).
    pub fn duration_call(&self, name: &str) -> Option<f64> {
        self.duration_calls
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, ms)| *ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negation_is_per_language() {
        assert!(profile(Language::Python).is_negative("not acquired"));
        assert!(profile(Language::Python).is_negative("(token is None)"));
        assert!(!profile(Language::Python).is_negative("acquired"));
        assert!(profile(Language::Go).is_negative("!ok"));
        assert!(profile(Language::Ruby).is_negative("lock.nil?"));
        assert!(profile(Language::TypeScript).is_negative("got === false"));
        assert!(!profile(Language::Go).is_negative("err != nil"));
    }

    #[test]
    fn durations_are_per_language() {
        assert_eq!(
            profile(Language::Go).named_duration("time.Second"),
            Some(1000.0)
        );
        assert_eq!(profile(Language::Rust).named_duration("time.Second"), None);
        assert_eq!(
            profile(Language::Rust).duration_call("from_secs"),
            Some(1000.0)
        );
        assert_eq!(
            profile(Language::Java).duration_call("ofMinutes"),
            Some(60_000.0)
        );
        assert_eq!(
            profile(Language::Ruby).duration_call("minutes"),
            Some(60_000.0)
        );
    }

    /// A Python file extending a wrapper's class under another name is one
    /// to re-read for the callers it inherits; one that only imports the
    /// class, or another class, is not.
    #[test]
    fn python_subclass_through_an_alias() {
        let header = profile(Language::Python)
            .subclass_header
            .unwrap_or_default();
        let re = regex::Regex::new(&header.replace("CLASSES", "DatabaseBackedObject"));
        let re = re.expect("the header compiles");
        assert!(re.is_match("from sf.baseobject import DatabaseBackedObject as dbo\n"));
        assert!(re.is_match("class Op(DatabaseBackedObject):\n"));
        assert!(!re.is_match("from sf.baseobject import DatabaseBackedObject\n"));
        assert!(!re.is_match("from sf.baseobject import DatabaseBackedObjectIterator as it\n"));
    }
}
