//! Durations as the catalog writes them: where a TTL or wait argument is,
//! its unit, and what an absent one means (split from `raw.rs`, which
//! re-exports these).

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

/// A duration argument: where it is, its unit, and what an absent one means.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDuration {
    pub pos: Option<usize>,
    pub kw: Option<String>,
    pub unit: Option<DurationUnit>,
    /// For a wait: the keyword that turns blocking off when passed `false`
    /// (redis-py `blocking=False`).
    pub blocking_kw: Option<String>,
    /// What an absent (or null) value means.
    pub default: Option<DurationDefault>,
    /// Older versions that read the value differently: the first entry whose
    /// `version` is above the one the project's manifest pins replaces `unit`
    /// and `default` (pottery before 3.0: milliseconds).
    #[serde(default)]
    pub before: Vec<RawBefore>,
}

/// What a duration meant before `version`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawBefore {
    /// The first version with the current meaning (`3.0.0`).
    pub version: String,
    pub unit: Option<DurationUnit>,
    pub default: Option<DurationDefault>,
}

/// The unit of a duration argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DurationUnit {
    /// A number of seconds.
    S,
    /// A number of milliseconds.
    Ms,
    /// A typed duration value (Go `30*time.Second`, Rust `Duration::from_secs(30)`);
    /// a bare Go number is nanoseconds.
    Duration,
    /// A number followed by a Java `TimeUnit` argument.
    Timeunit,
    /// An ISO-8601 string (`"PT30S"`).
    Iso8601,
    /// A Go `context.Context`: its deadline bounds the wait (`Background()` never ends).
    Context,
}

/// What an absent (or null) duration means.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "String")]
pub enum DurationDefault {
    /// No expiry; for a wait, blocks forever.
    Never,
    /// For a wait: returns at once.
    None,
    /// A watchdog or session keep-alive extends it.
    Renewed,
    /// Bound to the session.
    Session,
    /// A fixed default, as written (`10s`) and in milliseconds.
    After(String, i64),
}

/// The accepted spellings, for error messages and the schema.
const DEFAULT_PATTERN: &str =
    "^(never|none|renewed|session|([0-9.]+(ms|s|m|h|d))+|PT([0-9.]+[HMS])+)$";

impl TryFrom<String> for DurationDefault {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        Ok(match s.as_str() {
            "never" => DurationDefault::Never,
            "none" => DurationDefault::None,
            "renewed" => DurationDefault::Renewed,
            "session" => DurationDefault::Session,
            _ => match super::duration_text::parse(&s) {
                Some(ms) => DurationDefault::After(s, ms.round() as i64),
                None => {
                    return Err(format!(
                        "unknown default `{s}`, expected `never`, `none`, `renewed`, `session` or a duration such as `10s`, `30000ms`, `5m`"
                    ))
                }
            },
        })
    }
}

impl JsonSchema for DurationDefault {
    fn schema_name() -> Cow<'static, str> {
        "DurationDefault".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": DEFAULT_PATTERN,
            "description": "`never` (no expiry; a wait blocks forever), `none` (a wait returns at once), `renewed` (a watchdog extends it), `session`, or a duration such as `10s`, `30000ms`, `5m`."
        })
    }
}
