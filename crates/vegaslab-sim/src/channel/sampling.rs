//! A monitored queue's samples: its waiting length, and a RED queue's average, at every
//! multiple of the sampling interval, taken as the channel's own clock passes each time.

use super::Channel;
use crate::queue::Discipline;
use vegaslab_cc::Nanos;

impl Channel {
    /// Monitor this queue: record its waiting length at every multiple of `interval` (from
    /// `interval` on).
    ///
    /// The queue samples itself as its own clock passes each sample time, not by a sampling
    /// event, which would see packets an express hop put here ahead of the simulation's clock
    /// (docs/decisions.md, "Queues sample themselves"). Arrivals at one channel come in time
    /// order, so when an arrival later than a sample time comes, the queue holds exactly the
    /// packets of that time: a sample at time T counts every packet that arrived at or
    /// before T and whose transmission starts after T. Nothing a monitor does can change a
    /// result (`monitors_change_no_result` in the tests).
    pub fn start_sampling(&mut self, interval: Nanos) {
        self.sample_interval = interval.max(1);
        self.next_sample = self.sample_interval;
    }

    /// Record the samples due before an arrival (or change) at `now`, if any are.
    #[inline]
    pub(super) fn sample_up_to(&mut self, now: Nanos) {
        if self.next_sample < now {
            self.sample_before(now);
        }
    }

    /// Record every sample due strictly before `t`.
    #[cold]
    pub(super) fn sample_before(&mut self, t: Nanos) {
        while self.next_sample < t {
            self.advance(self.next_sample);
            self.samples.push(self.waiting.len() as u64);
            if let Discipline::Red(red) = &mut *self.discipline {
                red.avg_samples.push(red.avg);
            }
            self.next_sample = self.next_sample.saturating_add(self.sample_interval);
        }
    }

    /// The run stopped at `stop`: the samples at every sample time up to and including `stop`
    /// (a channel whose clock ran ahead of `stop` may have taken later ones; they are cut).
    pub fn finish_sampling(&mut self, stop: Nanos) -> Vec<u64> {
        if self.sample_interval == 0 {
            return Vec::new(); // not monitored
        }
        self.sample_before(stop.saturating_add(1));
        let mut samples = std::mem::take(&mut self.samples);
        samples.truncate((stop / self.sample_interval) as usize);
        samples
    }

    /// A monitored RED queue's average at the sample times of `finish_sampling` (call it
    /// first); `None` for other queues.
    pub fn finish_avg_sampling(&mut self, stop: Nanos) -> Option<Vec<f64>> {
        let Discipline::Red(red) = &mut *self.discipline else { return None };
        let mut avg = std::mem::take(&mut red.avg_samples);
        avg.truncate((stop / self.sample_interval.max(1)) as usize);
        Some(avg)
    }
}
