//! The registry of queue disciplines: what a discipline's file declares ([`Kind`]: its `kind`
//! names, its keys with their kinds, ranges, units, meanings and sources, how it reads a
//! queue table and how it is built on a link) and the one macro, [`disciplines!`], that turns
//! the list of registered files into the scenario's [`QueueSpec`](super::QueueSpec) and the
//! running [`Discipline`](super::Discipline), dispatched by `match` (static dispatch, no `dyn`).
//!
//! Adding a discipline is one file implementing [`super::QueueDiscipline`] and [`Kind`], and
//! one line in the list in `queue/mod.rs`. The scenario reader, the docs' tables, the Python
//! package's `vegaslab.registry.queues()` and the registry's tests read the declarations; the
//! defaults are not restated anywhere but in the discipline's `read` (the value it takes when
//! a key is absent), read back from the normalised scenario by whoever shows them
//! (`crate::registry`).

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use vegaslab_cc::params::{Param, ParamError, ParamSource};
use vegaslab_cc::Nanos;

use super::QueueDiscipline;

/// The packets a queue holds when its table leaves `limit` out: ns-2's default `limit_` of 50
/// (`Queue set limit_ 50` in `ns-default.tcl`).
pub const DEFAULT_LIMIT: u32 = 50;

/// One key of a queue table, declared once in its discipline's file.
#[derive(Debug)]
pub struct QueueKey {
    /// Its name in the scenario, kind, range, unit, meaning and source.
    pub param: Param,
    /// Where the normalised scenario holds its value (the scenario's `min` is `min_th`).
    pub field: &'static str,
    /// The table is refused without it.
    pub required: bool,
}

impl QueueKey {
    /// A queue's `limit` (this key, declared as a whole number of packets), or
    /// [`DEFAULT_LIMIT`] when absent.
    pub fn limit(&self, table: &dyn ParamSource) -> Result<u32, ParamError> {
        Ok(self.param.integer(table)?.map_or(DEFAULT_LIMIT, |l| l as u32))
    }

    /// The key's number; an error naming it and what it sets when it is required and absent.
    pub fn required_number(&self, table: &dyn ParamSource) -> Result<f64, ParamError> {
        let unit = if self.param.unit.is_empty() { String::new() } else { format!(", {}", self.param.unit) };
        self.param.number(table)?.ok_or_else(|| table.error(self.param.name, format!("is required ({}{unit})", self.param.doc)))
    }
}

/// One `kind` a scenario may name.
#[derive(Debug)]
pub struct KindDoc {
    pub name: &'static str,
    /// What it is, in one sentence.
    pub about: &'static str,
    /// Where its rules come from.
    pub cite: &'static str,
    /// Its keys besides `kind`.
    pub keys: &'static [QueueKey],
    /// The smallest valid table of this kind, in TOML (`kind` and the required keys): what
    /// the docs show and what the registry reads the other keys' defaults from.
    pub minimal: &'static str,
    /// Other names people use for its keys, for suggestions only, never accepted:
    /// `(name, key, note)`, the name compared without case and trailing underscores.
    pub aliases: &'static [(&'static str, &'static str, &'static str)],
}

/// The link direction a discipline runs on.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub bandwidth_bps: f64,
    /// Propagation delay.
    pub delay: Nanos,
    /// The run's seed and the channel's number, from which a discipline's random stream is
    /// derived (`crate::rng`).
    pub seed: u64,
    pub channel: usize,
}

/// What a discipline's file gives the registry.
pub trait Kind: QueueDiscipline + Clone + fmt::Debug + Sized {
    /// Its validated configuration, as the normalised scenario holds it (after `kind`).
    type Spec: Clone + fmt::Debug + PartialEq + Serialize + JsonSchema;
    /// The `kind` names it answers to, with their keys.
    const KINDS: &'static [KindDoc];
    /// Its configuration from a queue table of kind `kind` (one of [`Kind::KINDS`]); the
    /// registry has refused keys the kind does not declare. Every error is made by `table`,
    /// so it names the file and field.
    fn read(kind: &str, table: &dyn ParamSource) -> Result<Self::Spec, ParamError>;
    /// The `kind` name of a configuration (results' `kind` column).
    fn kind_of(spec: &Self::Spec) -> &'static str;
    /// The most packets the queue holds (results' `limit` column).
    fn limit(spec: &Self::Spec) -> u32;
    /// The running discipline on one link direction.
    fn build(spec: &Self::Spec, on: &Placement) -> Self;
}

/// The declaration of `kind`, if a registered discipline answers to it.
pub fn kind_doc(kind: &str) -> Option<&'static KindDoc> {
    super::kinds().find(|k| k.name == kind)
}

/// Declares the registered disciplines, one line each: `Variant in module`, where `module.rs`
/// (in `queue/`) defines the type `Variant` implementing [`Kind`]. Generates the module and
/// its re-exports, [`QueueSpec`](super::QueueSpec) (one variant each, holding its `Spec`,
/// serialised with a `kind` tag of the variant's name in lower case), the running
/// [`Discipline`](super::Discipline), the dispatch of [`QueueDiscipline`], and
/// [`kinds`](super::kinds), every declared kind in registry order.
macro_rules! disciplines {
    ($($(#[$doc:meta])* $variant:ident in $module:ident),+ $(,)?) => {
        $(mod $module; pub use $module::*;)+

        /// A link direction's queue, as a scenario gives it and the normalised scenario holds
        /// it: one variant per registered discipline (`queue/registry.rs`).
        #[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        pub enum QueueSpec {
            $($(#[$doc])* $variant(<$variant as registry::Kind>::Spec),)+
        }

        impl QueueSpec {
            /// The `kind` name (results' `kind` column).
            pub fn kind(&self) -> &'static str {
                match self { $(QueueSpec::$variant(s) => <$variant as registry::Kind>::kind_of(s),)+ }
            }
            /// The most packets the queue holds (results' `limit` column).
            pub fn limit(&self) -> u32 {
                match self { $(QueueSpec::$variant(s) => <$variant as registry::Kind>::limit(s),)+ }
            }
            /// The configuration of a queue table of kind `kind`, or `None` when no registered
            /// discipline answers to `kind`.
            pub fn read(kind: &str, table: &dyn vegaslab_cc::params::ParamSource)
                -> Option<Result<QueueSpec, vegaslab_cc::params::ParamError>> {
                $(if <$variant as registry::Kind>::KINDS.iter().any(|k| k.name == kind) {
                    return Some(<$variant as registry::Kind>::read(kind, table).map(QueueSpec::$variant));
                })+
                None
            }
        }

        /// Every declared `kind`, in registry order.
        pub fn kinds() -> impl Iterator<Item = &'static registry::KindDoc> {
            [$(<$variant as registry::Kind>::KINDS,)+].into_iter().flatten()
        }

        /// A channel's running queue discipline. Its variants differ in size (RED's random
        /// stream is large); the channel holds it boxed, off its hot lines, so none is boxed
        /// again here.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug)]
        pub enum Discipline {
            $($variant($variant),)+
        }

        impl Discipline {
            /// The discipline `spec` names for channel number `channel` of a run with this
            /// `seed`, on a link of this bandwidth and propagation delay.
            pub fn new(spec: &QueueSpec, bandwidth_bps: f64, delay: vegaslab_cc::Nanos, seed: u64, channel: usize) -> Self {
                let on = registry::Placement { bandwidth_bps, delay, seed, channel };
                match spec { $(QueueSpec::$variant(s) => Discipline::$variant(<$variant as registry::Kind>::build(s, &on)),)+ }
            }
        }

        impl QueueDiscipline for Discipline {
            #[inline]
            fn enqueue(&mut self, a: &Arrival) -> Verdict {
                match self { $(Discipline::$variant(q) => q.enqueue(a),)+ }
            }
            #[inline]
            fn dequeue(&mut self, d: &Departure) -> Verdict {
                match self { $(Discipline::$variant(q) => q.dequeue(d),)+ }
            }
            #[inline]
            fn idle(&mut self, now: vegaslab_cc::Nanos) {
                match self { $(Discipline::$variant(q) => q.idle(now),)+ }
            }
            fn drops_at_dequeue(&self) -> bool {
                match self { $(Discipline::$variant(q) => q.drops_at_dequeue(),)+ }
            }
        }
    };
}
pub(crate) use disciplines;
