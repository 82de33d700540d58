//! Content digests shared by the catalog fingerprint and the cache keys.

/// Hex BLAKE3 of `parts`, each length-prefixed so that boundaries count.
pub fn hash(parts: &[&[u8]]) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().to_hex().to_string()
}
