//! The BPF objects one reading of a scenario has loaded, by the bytes and options they were
//! loaded with: a scenario naming one object in many flow entries loads (and JIT-compiles) it
//! once. Objects are immutable and shared by every controller built from them; each flow entry
//! keeps its own fault record (`super::bpf`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;
use vegaslab_bpf::{BpfObject, Engine, LoadError, LoadOptions};

/// What identifies a load: the file's SHA-256, the map, `CONFIG_HZ`, whether interpreted.
type Key = (String, Option<String>, u32, bool);

/// The objects loaded so far while reading one scenario.
#[derive(Default)]
pub struct LoadedObjects(RefCell<HashMap<Key, Arc<BpfObject>>>);

impl LoadedObjects {
    /// The object in `bytes` (whose SHA-256 is `sha256`) loaded with `options`: loaded now, or
    /// the one an earlier entry loaded from the same bytes with the same options.
    pub fn load(&self, bytes: &[u8], sha256: &str, options: &LoadOptions) -> Result<Arc<BpfObject>, LoadError> {
        let key = (sha256.to_string(), options.map.clone(), options.hz, options.engine == Engine::Interpreter);
        if let Some(object) = self.0.borrow().get(&key) {
            return Ok(object.clone());
        }
        let object = Arc::new(BpfObject::load(bytes, options)?);
        self.0.borrow_mut().insert(key, object.clone());
        Ok(object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kernel/build/vl_vegas.bpf.o` (from `make bpf`), or `None` (skipped unless
    /// `VEGASLAB_REQUIRE_BPF=1`).
    fn object() -> Option<Vec<u8>> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel/build/vl_vegas.bpf.o");
        match std::fs::read(&path) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                assert!(std::env::var("VEGASLAB_REQUIRE_BPF").as_deref() != Ok("1"), "{}: {e}", path.display());
                None
            }
        }
    }

    #[test]
    fn an_object_is_loaded_once_per_bytes_and_options() {
        let Some(bytes) = object() else { return };
        let cache = LoadedObjects::default();
        let defaults = LoadOptions::default();
        let a = cache.load(&bytes, "sha-a", &defaults).unwrap();
        assert!(Arc::ptr_eq(&a, &cache.load(&bytes, "sha-a", &defaults).unwrap()));
        let other_hz = LoadOptions { hz: 1000, ..LoadOptions::default() };
        assert!(!Arc::ptr_eq(&a, &cache.load(&bytes, "sha-a", &other_hz).unwrap()));
        let interpreted = LoadOptions { engine: Engine::Interpreter, ..LoadOptions::default() };
        assert!(!Arc::ptr_eq(&a, &cache.load(&bytes, "sha-a", &interpreted).unwrap()));
        assert!(!Arc::ptr_eq(&a, &cache.load(&bytes, "sha-b", &defaults).unwrap()));
    }
}
