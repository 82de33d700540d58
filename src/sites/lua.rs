//! Reads a Redis Lua script as the commands it sends.
//!
//! A small lexer (strings, comments, names, numbers, punctuation) finds every
//! `redis.call(...)` / `redis.pcall(...)` and the arguments it passes
//! (`KEYS[n]`, `ARGV[n]`, string literals). A command is *guarded* when an
//! earlier `GET` of the same key has been compared (`==` / `~=`) with an
//! `ARGV`: the compare-and-delete shape recommended on redis.io. A `SET`
//! of a key the script has already tested with `EXISTS` is a `SET .. NX`:
//! the script runs atomically, so the test decides who sets it. A hash lock
//! likewise: `HSET lock ARGV[1] ..` after `HEXISTS` / `HLEN` of that key is a
//! `SET lock owner NX`, and `HEXISTS lock ARGV[1]` tests who holds it.

/// One argument of a `redis.call`.
#[derive(Debug, Clone, PartialEq)]
pub enum LuaArg {
    Str(String),
    /// `KEYS[n]` (1-based, as in Lua).
    Key(usize),
    /// `ARGV[n]`.
    Argv(usize),
    Other(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LuaCommand {
    pub name: String,
    pub args: Vec<LuaArg>,
    /// An owner comparison precedes this command in the script.
    pub guarded: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Str(String),
    Num(String),
    Punct(String),
}

impl Tok {
    fn text(&self) -> &str {
        match self {
            Tok::Name(t) | Tok::Str(t) | Tok::Num(t) | Tok::Punct(t) => t,
        }
    }
}

fn lex(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if src[i..].starts_with("--") {
            // Long comments `--[[ ... ]]` and line comments.
            if src[i + 2..].starts_with("[[") {
                i = src[i..].find("]]").map_or(b.len(), |n| i + n + 2);
            } else {
                i = src[i..].find('\n').map_or(b.len(), |n| i + n);
            }
        } else if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            let mut s = String::new();
            while j < b.len() && b[j] != c {
                if b[j] == b'\\' {
                    j += 1;
                }
                if let Some(ch) = src.get(j..).and_then(|r| r.chars().next()) {
                    s.push(ch);
                    j += ch.len_utf8();
                } else {
                    j += 1;
                }
            }
            out.push(Tok::Str(s));
            i = j + 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let len = src[i..]
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(b.len() - i);
            out.push(Tok::Name(src[i..i + len].to_string()));
            i += len;
        } else if c.is_ascii_digit() {
            let len = src[i..]
                .find(|ch: char| !ch.is_ascii_alphanumeric())
                .unwrap_or(b.len() - i);
            out.push(Tok::Num(src[i..i + len].to_string()));
            i += len;
        } else {
            let two = src.get(i..i + 2).unwrap_or("");
            let len = if matches!(two, "==" | "~=" | "<=" | ">=" | "..") {
                2
            } else {
                // One character, however many bytes it takes.
                src[i..].chars().next().map_or(1, char::len_utf8)
            };
            out.push(Tok::Punct(src.get(i..i + len).unwrap_or("").to_string()));
            i += len;
        }
    }
    out
}

fn punct(t: Option<&Tok>, p: &str) -> bool {
    matches!(t, Some(Tok::Punct(x)) if x == p)
}

/// `KEYS[1]` / `ARGV[2]` starting at `i`: the argument and its length in tokens.
fn indexed(toks: &[Tok], i: usize) -> Option<(LuaArg, usize)> {
    let Some(Tok::Name(n)) = toks.get(i) else {
        return None;
    };
    if !punct(toks.get(i + 1), "[") || !punct(toks.get(i + 3), "]") {
        return None;
    }
    let Some(Tok::Num(num)) = toks.get(i + 2) else {
        return None;
    };
    let idx = num.parse().ok()?;
    match n.as_str() {
        "KEYS" => Some((LuaArg::Key(idx), 4)),
        "ARGV" => Some((LuaArg::Argv(idx), 4)),
        _ => None,
    }
}

/// The commands a script sends, in order.
pub fn analyze(src: &str) -> Vec<LuaCommand> {
    let toks = lex(src);
    let mut out = Vec::new();
    // Locals assigned from `redis.call("GET", KEYS[n])`, and whether an ARGV
    // comparison has been seen for a GET result so far.
    let mut get_locals: Vec<String> = Vec::new();
    // Names for script arguments: `local claimKey = KEYS[1]`.
    let mut aliases: Vec<(String, LuaArg)> = Vec::new();
    let alias = |aliases: &[(String, LuaArg)], t: Option<&Tok>| match t {
        Some(Tok::Name(n)) => aliases.iter().find(|(a, _)| a == n).map(|(_, v)| v.clone()),
        _ => None,
    };
    let mut compared = false;
    // Keys tested with `EXISTS` so far.
    let mut tested: Vec<LuaArg> = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if let (Some(Tok::Name(n)), true, Some((arg, _))) = (
            toks.get(i),
            punct(toks.get(i + 1), "="),
            indexed(&toks, i + 2),
        ) {
            aliases.push((n.clone(), arg));
        }
        // An owner comparison: `== ARGV[n]`, `ARGV[n] ==`, or a GET local compared with anything.
        if punct(toks.get(i), "==") || punct(toks.get(i), "~=") {
            let before = i.checked_sub(4).and_then(|s| indexed(&toks, s));
            let after = indexed(&toks, i + 1);
            let argv = |a: &Option<(LuaArg, usize)>| matches!(a, Some((LuaArg::Argv(_), _)));
            let prev = i.checked_sub(1).and_then(|k| toks.get(k));
            let named_argv = |t: Option<&Tok>| matches!(alias(&aliases, t), Some(LuaArg::Argv(_)));
            let local_cmp = matches!(prev, Some(Tok::Name(n)) if get_locals.contains(n))
                || matches!(toks.get(i + 1), Some(Tok::Name(n)) if get_locals.contains(n));
            let get_cmp =
                punct(prev, ")") && out.last().is_some_and(|c: &LuaCommand| c.name == "GET");
            if argv(&before)
                || argv(&after)
                || named_argv(prev)
                || named_argv(toks.get(i + 1))
                || local_cmp
                || get_cmp
            {
                compared = true;
            }
        }
        let is_call = matches!(toks.get(i), Some(Tok::Name(n)) if n == "redis")
            && punct(toks.get(i + 1), ".")
            && matches!(toks.get(i + 2), Some(Tok::Name(n)) if n == "call" || n == "pcall")
            && punct(toks.get(i + 3), "(");
        if !is_call {
            i += 1;
            continue;
        }
        // `local v = redis.call("GET", ...)`
        let local = match (toks.get(i.wrapping_sub(2)), toks.get(i.wrapping_sub(1))) {
            (Some(Tok::Name(n)), Some(Tok::Punct(eq))) if eq == "=" => Some(n.clone()),
            _ => None,
        };
        let mut j = i + 4;
        let mut args = Vec::new();
        let mut depth = 0usize;
        while j < toks.len() {
            match &toks[j] {
                Tok::Punct(p) if p == ")" && depth == 0 => break,
                Tok::Punct(p) if p == "(" => depth += 1,
                Tok::Punct(p) if p == ")" => depth -= 1,
                Tok::Punct(p) if p == "," => {}
                Tok::Str(s) if depth == 0 => args.push(LuaArg::Str(s.clone())),
                t if depth == 0 => {
                    if let Some((arg, len)) = indexed(&toks, j) {
                        args.push(arg);
                        j += len;
                        continue;
                    }
                    match alias(&aliases, Some(t)) {
                        Some(arg) => args.push(arg),
                        None => args.push(LuaArg::Other(t.text().to_string())),
                    }
                }
                _ => {}
            }
            j += 1;
        }
        if let Some(LuaArg::Str(name)) = args.first() {
            let name = name.to_ascii_uppercase();
            if name == "GET" {
                if let Some(l) = local {
                    get_locals.push(l);
                }
            }
            let mut args = args[1..].to_vec();
            let key = args
                .first()
                .filter(|k| !matches!(k, LuaArg::Other(_)))
                .cloned();
            let renamed = match (name.as_str(), key) {
                // Whether the caller already holds a hash lock (`HEXISTS lock
                // ARGV[1]`, Redisson's and sidekiq-unique-jobs' scripts) is
                // an owner test: a delete after it is guarded.
                ("HEXISTS", Some(key)) => {
                    compared |= matches!(args.get(1), Some(LuaArg::Argv(_)));
                    tested.push(key);
                    None
                }
                ("EXISTS" | "HLEN", Some(key)) => {
                    tested.push(key);
                    None
                }
                // A hash lock: the caller's id written as a field of a key the
                // script has tested (`HLEN lock >= limit` returns first) takes
                // the key as `SET key owner NX` does, the field naming the holder.
                ("HSET", Some(key))
                    if tested.contains(&key) && matches!(args.get(1), Some(LuaArg::Argv(_))) =>
                {
                    args.truncate(2);
                    args.push(LuaArg::Str("NX".into()));
                    Some("SET")
                }
                // An owner the caller passes (`ARGV[1]`), not a value the
                // script computed (`if EXISTS(counter) == 0 then SET counter
                // total` fills a cache).
                ("SET", Some(key))
                    if tested.contains(&key) && matches!(args.get(1), Some(LuaArg::Argv(_))) =>
                {
                    let nx =
                        |a: &LuaArg| matches!(a, LuaArg::Str(s) if s.eq_ignore_ascii_case("NX"));
                    if !args.iter().any(nx) {
                        args.push(LuaArg::Str("NX".into()));
                    }
                    None
                }
                _ => None,
            };
            let name = renamed.map_or(name, str::to_string);
            out.push(LuaCommand {
                name,
                args,
                guarded: compared,
            });
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_after_exists_of_the_same_key_is_set_nx() {
        let src = r#"local task = KEYS[1]
            if redis.call("exists", task) == 1 then return {"busy"} end
            redis.call("set", task, ARGV[1])
            redis.call("set", KEYS[2], ARGV[1])
            if redis.call("exists", KEYS[3]) == 0 then
              redis.call("set", KEYS[3], total, "EX", 60) end"#;
        let cmds = analyze(src);
        assert_eq!(cmds.len(), 5);
        // A computed value filling a counter: no lock.
        assert_eq!(cmds[4].args.len(), 4);
        assert_eq!(
            cmds[1].args,
            vec![LuaArg::Key(1), LuaArg::Argv(1), LuaArg::Str("NX".into())]
        );
        // Another key, never tested: a plain SET.
        assert_eq!(cmds[2].args, vec![LuaArg::Key(2), LuaArg::Argv(1)]);
    }

    #[test]
    fn compare_and_delete_is_guarded() {
        let src = r#"if redis.call("get", KEYS[1]) == ARGV[1] then
            return redis.call("del", KEYS[1]) else return 0 end"#;
        let cmds = analyze(src);
        assert_eq!(cmds.len(), 2);
        assert_eq!(cmds[1].name, "DEL");
        assert!(cmds[1].guarded);
        assert_eq!(cmds[1].args, vec![LuaArg::Key(1)]);
    }

    #[test]
    fn local_compare_is_guarded() {
        let src = "local v = redis.call('GET', KEYS[1])\nif v == ARGV[1] then redis.call('UNLINK', KEYS[1]) end";
        assert!(analyze(src)[1].guarded);
    }

    #[test]
    fn named_script_arguments_are_the_arguments() {
        let src = "local claimKey = KEYS[1]\nlocal token = ARGV[1]\n\
                   if redis.call('GET', claimKey) == token then return redis.call('DEL', claimKey) end";
        let cmds = analyze(src);
        assert_eq!(cmds[1].name, "DEL");
        assert_eq!(cmds[1].args, vec![LuaArg::Key(1)]);
        assert!(cmds[1].guarded);
        let blind = analyze("local k = KEYS[1]\nreturn redis.call('DEL', k, other)");
        assert_eq!(
            blind[0].args,
            vec![LuaArg::Key(1), LuaArg::Other("other".into())]
        );
        assert!(!blind[0].guarded);
    }

    #[test]
    fn blind_delete_is_not_guarded() {
        let cmds = analyze("-- release\nreturn redis.call('DEL', KEYS[1])");
        assert_eq!(cmds.len(), 1);
        assert!(!cmds[0].guarded);
    }

    #[test]
    fn non_ascii_punctuation_is_one_token() {
        // Found by fuzzing: a multi-byte character outside a string or name.
        let cmds = analyze(
            "if redis.call('get', KEYS[1]) == \u{2018}x then return redis.call('del', KEYS[1]) end",
        );
        assert_eq!(cmds.len(), 2);
    }

    #[test]
    fn setnx_then_expire_in_one_script() {
        let cmds = analyze("if redis.call('SETNX', KEYS[1], ARGV[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end");
        let names: Vec<_> = cmds.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["SETNX", "PEXPIRE"]);
    }

    #[test]
    fn hash_field_after_a_test_of_the_key_is_set_nx() {
        let src = "local locked = KEYS[1]\nlocal job_id = ARGV[1]\n\
                   if redis.call('HEXISTS', locked, job_id) == 1 then return job_id end\n\
                   if redis.call('HLEN', locked) >= 1 then return nil end\n\
                   redis.call('HSET', locked, job_id, ARGV[2])";
        let cmds = analyze(src);
        assert_eq!(cmds[2].name, "SET");
        assert_eq!(
            cmds[2].args,
            vec![LuaArg::Key(1), LuaArg::Argv(1), LuaArg::Str("NX".into())]
        );
        // A field written with no test of the key first is data.
        let blind = analyze("redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])");
        assert_eq!(blind[0].name, "HSET");
    }

    #[test]
    fn holder_field_test_guards_the_delete() {
        let src = "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return nil end\n\
                   redis.call('HDEL', KEYS[1], ARGV[1])\nredis.call('UNLINK', KEYS[1])";
        assert!(analyze(src)[2].guarded);
        let any = "if redis.call('HEXISTS', KEYS[1], 'x') == 0 then return end\nredis.call('DEL', KEYS[1])";
        assert!(!analyze(any)[1].guarded);
    }
}
