//! Random streams. Every source of randomness gets its own ChaCha8 stream, derived from the
//! run seed and a fixed stream id, so adding a flow never shifts another flow's draws and a
//! run is bit-identical on any machine (ChaCha is portable; the crate version is pinned in
//! Cargo.lock).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub fn stream(seed: u64, id: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(id);
    rng
}
