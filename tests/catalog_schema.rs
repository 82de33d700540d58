//! The catalog's JSON Schema is generated from its types: the committed copy,
//! the YAML files and `rules/README.md` must all agree with it.
//! `UPDATE_SCHEMA=1 cargo test --test catalog_schema` rewrites the copy.

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema() -> serde_json::Value {
    serde_json::from_str(&lock_audit::catalog::schema()).expect("the schema is JSON")
}

#[test]
fn committed_schema_is_current() {
    let path = root().join("docs/catalog.schema.json");
    let generated = lock_audit::catalog::schema();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &generated).expect("write the schema");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/catalog.schema.json is stale: run UPDATE_SCHEMA=1 cargo test --test catalog_schema"
    );
}

fn rule_files() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("rules"))
        .expect("rules/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() > 20, "found the catalog files");
    files
}

#[test]
fn every_catalog_file_validates_and_names_the_schema() {
    let validator = jsonschema::validator_for(&schema()).expect("a valid JSON Schema");
    for file in rule_files() {
        let text = std::fs::read_to_string(&file).expect("readable");
        assert!(
            text.starts_with("# yaml-language-server: $schema=../docs/catalog.schema.json\n"),
            "{} does not start with the schema modeline",
            file.display()
        );
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).expect("YAML");
        let json = serde_json::to_value(yaml).expect("YAML as JSON");
        let errors: Vec<String> = validator
            .iter_errors(&json)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{}: {}",
            file.display(),
            errors.join("; ")
        );
    }
}

#[test]
fn the_schema_rejects_typos() {
    let validator = jsonschema::validator_for(&schema()).expect("a valid JSON Schema");
    let file = |ttl: serde_json::Value| {
        serde_json::json!({
            "library": "x",
            "apis": [{"id": "x.lock", "methods": ["lock"], "lock": {"acquires": "now", "ttl": ttl}}]
        })
    };
    let good = file(serde_json::json!({"pos": 1, "unit": "s", "default": "10s"}));
    assert!(validator.is_valid(&good));
    for bad in [
        serde_json::json!({"pos": 1, "unit": "sec"}),
        serde_json::json!({"pos": 1, "default": "nevr"}),
        serde_json::json!({"pos": 1, "unti": "s"}),
    ] {
        assert!(!validator.is_valid(&file(bad.clone())), "accepted {bad}");
    }
}

/// Every key of the schema is explained in `rules/README.md`.
#[test]
fn readme_documents_every_key() {
    let readme = std::fs::read_to_string(root().join("rules/README.md")).expect("rules/README.md");
    let mut keys = std::collections::BTreeSet::new();
    collect_keys(&schema(), &mut keys);
    let missing: Vec<&String> = keys
        .iter()
        .filter(|k| !readme.contains(&format!("`{k}`")) && !readme.contains(&format!("{k}:")))
        .collect();
    assert!(
        missing.is_empty(),
        "rules/README.md does not mention: {missing:?}"
    );
}

fn collect_keys(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|v| collect_keys(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_keys(v, out)),
        _ => {}
    }
}
