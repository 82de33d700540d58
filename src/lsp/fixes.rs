//! Quick fixes that rewrite a call's text: offered only for the call shapes
//! they are known to fit, and never preferred (they change behaviour).

use crate::model::Language;

/// The redis.io compare-and-delete release.
const CAS: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// `recv.method(args)` split into its parts, when `call` is exactly that.
fn method_call<'t>(call: &'t str, methods: &[&str]) -> Option<(&'t str, &'t str, &'t str)> {
    let inner = call.strip_suffix(')')?;
    let open = inner.find('(')?;
    let (head, args) = (&inner[..open], &inner[open + 1..]);
    let dot = head.rfind('.')?;
    let (recv, method) = (&head[..dot], &head[dot + 1..]);
    methods
        .contains(&method)
        .then_some((recv.trim(), method, args.trim()))
}

/// `SET key value NX` with an expiry added: `None` unless `call` is a SET
/// with an NX option in a client whose option syntax is known.
pub fn add_ttl(language: Language, call: &str) -> Option<String> {
    let (_, _, args) = method_call(call, &["set"])?;
    let extra = match language {
        Language::Python if args.contains("nx=True") => ", px=30000",
        Language::Ruby if args.contains("nx: true") => ", px: 30000",
        Language::JavaScript | Language::TypeScript
            if args.contains("'NX'") || args.contains("\"NX\"") =>
        {
            ", 'PX', 30000"
        }
        _ => return None,
    };
    let body = call.strip_suffix(')')?;
    Some(format!("{body}{extra})"))
}

/// A plain `DEL key` release as a compare-and-delete script; `token` is a
/// placeholder for the value the lock was set with.
pub fn owner_checked_release(language: Language, call: &str) -> Option<String> {
    let (recv, _, key) = method_call(call, &["delete", "del", "unlink"])?;
    if key.is_empty() || key.contains(',') {
        return None;
    }
    Some(match language {
        Language::Python | Language::JavaScript | Language::TypeScript => {
            format!("{recv}.eval(\"{CAS}\", 1, {key}, token)")
        }
        Language::Ruby => format!("{recv}.eval(\"{CAS}\", keys: [{key}], argv: [token])"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_is_added_in_each_client_syntax() {
        assert_eq!(
            add_ttl(Language::Python, "r.set('lock:a', t, nx=True)").as_deref(),
            Some("r.set('lock:a', t, nx=True, px=30000)")
        );
        assert_eq!(
            add_ttl(Language::Ruby, "R.set('lock:a', t, nx: true)").as_deref(),
            Some("R.set('lock:a', t, nx: true, px: 30000)")
        );
        assert_eq!(
            add_ttl(Language::TypeScript, "r.set('lock:a', t, 'NX')").as_deref(),
            Some("r.set('lock:a', t, 'NX', 'PX', 30000)")
        );
        // Shapes it does not know are left alone.
        assert_eq!(add_ttl(Language::Python, "r.setnx('lock:a', t)"), None);
        assert_eq!(add_ttl(Language::Go, "rdb.SetNX(ctx, k, v, 0)"), None);
    }

    #[test]
    fn del_becomes_compare_and_delete() {
        let fixed = owner_checked_release(Language::Python, "self.r.delete('lock:a')").unwrap();
        assert!(
            fixed.starts_with("self.r.eval(\"if redis.call('get'"),
            "{fixed}"
        );
        assert!(fixed.ends_with(", 1, 'lock:a', token)"), "{fixed}");
        let ruby = owner_checked_release(Language::Ruby, "R.del(key)").unwrap();
        assert!(ruby.ends_with("keys: [key], argv: [token])"), "{ruby}");
        // Several keys, or a language without a template: no fix.
        assert_eq!(
            owner_checked_release(Language::Python, "r.delete(a, b)"),
            None
        );
        assert_eq!(
            owner_checked_release(Language::Java, "jedis.del(key)"),
            None
        );
    }
}
