//! What a `[sweep]` table says, read and checked field by field but not yet expanded: the
//! axes with their members, each member's values as listed or as a range. Shared by the reader
//! that makes these, the size check that counts them and the expansion that generates their
//! values.

use super::path::PathStep;
use super::plan::Origin;
use super::range::RangeSpec;
use super::value::ParamValue;

/// A member's values: listed, or a range generated later.
pub(super) enum Source {
    List(Vec<ParamValue>),
    Range(RangeSpec),
}

/// One swept field: a one-path axis, or one entry of a zip.
pub(super) struct MemberSpec {
    pub(super) name: Option<String>,
    pub(super) path: String,
    /// The path's steps; `None` when it does not read as a path (reported when the point is
    /// validated, by the override code).
    pub(super) steps: Option<Vec<PathStep>>,
    pub(super) source: Source,
    pub(super) origin: Origin,
}

/// One `[[sweep.axis]]`.
pub(super) struct AxisSpec {
    pub(super) name: Option<String>,
    /// `sweep.axis[1]`.
    pub(super) at: String,
    pub(super) members: Vec<MemberSpec>,
}
