//! Random streams. Every source of randomness gets its own ChaCha8 stream, derived from the
//! run seed and a fixed stream id, so adding a flow never shifts another flow's draws and a
//! run is bit-identical on any machine (ChaCha is portable; the crate version is pinned in
//! Cargo.lock).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Every stream id, in one place:
///
/// | use | stream id |
/// |---|---|
/// | tick phase of TCP connection `i` (`flow`) | [`STREAM_FLOW_BASE`]` + i` = `1 + i` |
/// | RED early drops of channel `c` (`queue`) | [`STREAM_RED_BASE`]` + c` = `(1 << 32) + c` |
/// | packet errors of channel `c` (`queue`) | [`STREAM_ERROR_BASE`]` + c` = `(2 << 32) + c` |
/// | UDP source `i` (`udp`) | [`STREAM_UDP_BASE`]` \| i` = `(3 << 32) \| i` |
/// | application of flow `f` (`apps`) | [`STREAM_APP_BASE`]` \| f` = `(4 << 32) \| f` |
/// | the tie order's hash key, `run.tie_order = "shuffled"` (`event`) | [`STREAM_TIES`] = `5 << 32` |
///
/// Channel `c` is the index of a link direction: link `l` gives channels `2l` (a -> b) and
/// `2l + 1` (b -> a).
pub const STREAM_FLOW_BASE: u64 = 1;
pub const STREAM_RED_BASE: u64 = 1 << 32;
pub const STREAM_ERROR_BASE: u64 = 2 << 32;
pub const STREAM_UDP_BASE: u64 = 3 << 32;
pub const STREAM_APP_BASE: u64 = 4 << 32;
pub const STREAM_TIES: u64 = 5 << 32;

pub fn stream(seed: u64, id: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(id);
    rng
}
