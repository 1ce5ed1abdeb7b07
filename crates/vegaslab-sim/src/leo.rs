//! An Iridium-like polar LEO constellation: the propagation delay of the path between two
//! ground terminals over time, as satellites move and the terminals hand off.
//!
//! Vegas-A §5.3 ran ns-2's satellite extensions with "altitude of 780 km, orbital period of
//! 6206.9 s, inter-satellite separation of 32.72° and seam separation of 22°" and terminals at
//! Berkeley and Boston: ns-2's `tcl/ex/sat-iridium.tcl` set-up. This module reproduces that
//! geometry with ns-2's constants and conventions (`satellite/satgeometry.h`,
//! `satposition.cc`, `sathandoff.cc`); `docs/satellite-model.md` lists every choice and
//! simplification. In short:
//!
//! - 6 planes x 11 satellites (360/11 = 32.73° apart in a plane), inclination 86.4°, ascending
//!   nodes 31.6° apart so the counter-rotating seam is 180 - 5 x 31.6 = 22°; odd planes are
//!   phased half a slot (16.36°), all as ns-2's `sat-iridium-nodes.tcl`.
//! - Circular orbits; the period is Kepler's for the altitude (ns-2 computes it so and ignores
//!   any stated period: 6027 s at 780 km; the paper's "6206.9 s" looks like a transposition of
//!   the "6026.9 sec" in ns-2's script) unless given.
//! - The Earth rotates under the orbits (terminals move east, sidereal day 86164 s, as ns-2).
//! - Links: each satellite to its two neighbours in its plane (always up); to the satellite of
//!   the same index in each adjacent plane, except across the seam, up only while both are
//!   within 60° of latitude (ns-2's `latitude_threshold_`). Terminal to satellite while the
//!   satellite is at least 8.2° above the horizon.
//! - Handoff (ns-2's terminal rule, checked every 10 s): keep the satellite while it stays
//!   above the elevation mask; when it sets, take the next satellite in the same plane if it is
//!   visible, else the highest visible one. (`Handoff::Nearest`: the highest at every check.)
//! - Route: shortest path by propagation delay (speed of light 299,793 km/s), recomputed when a
//!   terminal hands off or an inter-plane link changes state (ns-2 recomputes on topology
//!   changes); between changes the same satellites carry the path and its delay follows their
//!   motion continuously.

use std::f64::consts::PI;

/// ns-2 `satgeometry.h` constants.
pub const EARTH_RADIUS_KM: f64 = 6378.0;
pub const MU_KM3_S2: f64 = 398_601.2;
pub const LIGHT_KM_S: f64 = 299_793.0;
pub const EARTH_PERIOD_S: f64 = 86_164.0;

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}
fn rad(deg: f64) -> f64 {
    deg * PI / 180.0
}

/// Kepler's period of a circular orbit at `altitude_km`.
pub fn kepler_period_s(altitude_km: f64) -> f64 {
    let r = EARTH_RADIUS_KM + altitude_km;
    2.0 * PI * (r * r * r / MU_KM3_S2).sqrt()
}

/// A ground terminal.
#[derive(Clone, Debug, PartialEq)]
pub struct Terminal {
    pub name: String,
    /// Degrees, north positive.
    pub lat: f64,
    /// Degrees, east positive.
    pub lon: f64,
}

impl Terminal {
    pub fn new(name: &str, lat: f64, lon: f64) -> Self {
        Terminal { name: name.to_string(), lat, lon }
    }

    /// Position (km, Earth-centred inertial frame) at time `t` s, the Earth turning east.
    pub fn position(&self, t: f64, rotate: bool) -> V3 {
        let lon = rad(self.lon) + if rotate { 2.0 * PI * (t % EARTH_PERIOD_S) / EARTH_PERIOD_S } else { 0.0 };
        let lat = rad(self.lat);
        [EARTH_RADIUS_KM * lat.cos() * lon.cos(), EARTH_RADIUS_KM * lat.cos() * lon.sin(), EARTH_RADIUS_KM * lat.sin()]
    }
}

/// Berkeley and Boston as ns-2's `sat-iridium.tcl` places them (37.9 N 122.3 W; 42.3 N 71.1 W).
pub fn berkeley() -> Terminal {
    Terminal::new("Berkeley", 37.9, -122.3)
}
pub fn boston() -> Terminal {
    Terminal::new("Boston", 42.3, -71.1)
}

/// How a terminal picks its satellite at a handoff check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handoff {
    /// ns-2: keep the satellite until it sets below the mask.
    Sticky,
    /// The highest visible satellite at every check.
    Nearest,
}

/// The constellation and the model's knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct Constellation {
    pub altitude_km: f64,
    pub period_s: f64,
    pub inclination_deg: f64,
    pub planes: usize,
    pub sats_per_plane: usize,
    /// Ascending-node spacing of adjacent co-rotating planes.
    pub plane_spacing_deg: f64,
    /// Phase offset of odd planes, as a fraction of the in-plane spacing.
    pub odd_plane_phase: f64,
    pub elevation_mask_deg: f64,
    /// Inter-plane links are down while either satellite is above this latitude.
    pub isl_latitude_limit_deg: f64,
    pub handoff: Handoff,
    pub handoff_interval_s: f64,
    pub earth_rotation: bool,
}

impl Constellation {
    /// Iridium as ns-2's example: 780 km, 6 x 11, seam 22°, inclination 86.4°.
    pub fn iridium() -> Self {
        Constellation::from_separations(780.0, None, 360.0 / 11.0, 22.0, 6)
    }

    /// From the paper's quantities: altitude, period (None = Kepler), in-plane separation and
    /// seam separation, and the number of planes: `sats_per_plane = round(360 / separation)`,
    /// plane spacing `(180 - seam) / (planes - 1)`.
    pub fn from_separations(altitude_km: f64, period_s: Option<f64>, separation_deg: f64, seam_deg: f64, planes: usize) -> Self {
        Constellation {
            altitude_km,
            period_s: period_s.unwrap_or_else(|| kepler_period_s(altitude_km)),
            inclination_deg: 86.4,
            planes,
            sats_per_plane: (360.0 / separation_deg).round() as usize,
            plane_spacing_deg: if planes > 1 { (180.0 - seam_deg) / (planes - 1) as f64 } else { 0.0 },
            odd_plane_phase: 0.5,
            elevation_mask_deg: 8.2,
            isl_latitude_limit_deg: 60.0,
            handoff: Handoff::Sticky,
            handoff_interval_s: 10.0,
            earth_rotation: true,
        }
    }

    pub fn satellites(&self) -> usize {
        self.planes * self.sats_per_plane
    }

    /// Orbital speed (km/s).
    pub fn speed_km_s(&self) -> f64 {
        2.0 * PI * (EARTH_RADIUS_KM + self.altitude_km) / self.period_s
    }

    /// Position (km, inertial) of satellite `k` of plane `p` at time `t` s.
    pub fn sat_position(&self, p: usize, k: usize, t: f64) -> V3 {
        let r = EARTH_RADIUS_KM + self.altitude_km;
        let spacing = 360.0 / self.sats_per_plane as f64;
        let phase0 = k as f64 * spacing + if p % 2 == 1 { self.odd_plane_phase * spacing } else { 0.0 };
        let theta = rad(phase0) + 2.0 * PI * (t % self.period_s) / self.period_s;
        let node = rad(p as f64 * self.plane_spacing_deg);
        let inc = rad(self.inclination_deg);
        [
            r * (node.cos() * theta.cos() - node.sin() * theta.sin() * inc.cos()),
            r * (node.sin() * theta.cos() + node.cos() * theta.sin() * inc.cos()),
            r * theta.sin() * inc.sin(),
        ]
    }

    fn all_positions(&self, t: f64) -> Vec<V3> {
        let mut out = Vec::with_capacity(self.satellites());
        for p in 0..self.planes {
            for k in 0..self.sats_per_plane {
                out.push(self.sat_position(p, k, t));
            }
        }
        out
    }

    /// Inter-satellite links `(i, j, inter_plane)` by satellite index `p * sats_per_plane + k`.
    pub fn isls(&self) -> Vec<(usize, usize, bool)> {
        let s = self.sats_per_plane;
        let mut out = Vec::new();
        for p in 0..self.planes {
            for k in 0..s {
                if s > 1 && (s > 2 || k == 0) {
                    out.push((p * s + k, p * s + (k + 1) % s, false));
                }
                if p + 1 < self.planes {
                    out.push((p * s + k, (p + 1) * s + k, true));
                }
            }
        }
        out
    }
}

/// Elevation (degrees) of a satellite at `sat` seen from a ground point `ground`.
pub fn elevation_deg(ground: V3, sat: V3) -> f64 {
    let v = sub(sat, ground);
    let up = dot(v, ground) / (norm(v) * norm(ground));
    up.clamp(-1.0, 1.0).asin() * 180.0 / PI
}

fn latitude_deg(p: V3) -> f64 {
    (p[2] / norm(p)).clamp(-1.0, 1.0).asin() * 180.0 / PI
}

/// One sample of the path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathSample {
    pub t: f64,
    /// One-way propagation delay terminal to terminal (s); None if no path.
    pub delay_s: Option<f64>,
    /// Satellites carrying the path, first to last.
    pub route: Vec<usize>,
    /// The route changed at this sample (handoff or a link changing state).
    pub changed: bool,
}

/// Dijkstra from `src` to `dst` over the satellites with the given up links; distances in km.
fn shortest(pos: &[V3], links: &[(usize, usize)], src: usize, dst: usize) -> Option<Vec<usize>> {
    let n = pos.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in links {
        adj[a].push(b);
        adj[b].push(a);
    }
    let mut dist = vec![f64::INFINITY; n];
    let mut prev = vec![usize::MAX; n];
    let mut done = vec![false; n];
    dist[src] = 0.0;
    for _ in 0..n {
        // O(n^2) selection: 66 nodes, lowest index on ties (deterministic).
        let u = (0..n).filter(|&i| !done[i] && dist[i].is_finite()).min_by(|&a, &b| dist[a].total_cmp(&dist[b]))?;
        if u == dst {
            break;
        }
        done[u] = true;
        for &v in &adj[u] {
            let d = dist[u] + norm(sub(pos[u], pos[v]));
            if d < dist[v] {
                dist[v] = d;
                prev[v] = u;
            }
        }
    }
    if !dist[dst].is_finite() {
        return None;
    }
    let mut route = vec![dst];
    while *route.last().unwrap() != src {
        route.push(prev[*route.last().unwrap()]);
    }
    route.reverse();
    Some(route)
}

/// The path between two terminals over `[0, duration_s]` sampled every `step_s`, starting the
/// constellation clock at `epoch_s` (ns-2's `time_advance_`).
pub fn path_delays(c: &Constellation, a: &Terminal, b: &Terminal, duration_s: f64, step_s: f64, epoch_s: f64) -> Vec<PathSample> {
    let n_steps = (duration_s / step_s).floor() as usize;
    let isls = c.isls();
    let mut up_sat: [Option<usize>; 2] = [None, None];
    let mut isl_up: Vec<bool> = Vec::new();
    let mut route: Option<Vec<usize>> = None;
    let mut next_check = 0.0f64;
    let mut out = Vec::with_capacity(n_steps + 1);
    let s = c.sats_per_plane;
    for i in 0..=n_steps {
        let t_rel = i as f64 * step_s;
        let t = epoch_s + t_rel;
        let pos = c.all_positions(t);
        let ground = [a.position(t, c.earth_rotation), b.position(t, c.earth_rotation)];
        let mut changed = i == 0;
        if t_rel + 1e-9 >= next_check {
            next_check += c.handoff_interval_s;
            // Terminal handoffs.
            for (g, slot) in ground.iter().zip(up_sat.iter_mut()) {
                let elev = |j: usize| elevation_deg(*g, pos[j]);
                let keep = matches!(c.handoff, Handoff::Sticky) && slot.is_some_and(|j| elev(j) >= c.elevation_mask_deg);
                if keep {
                    continue;
                }
                let next_in_plane = slot.map(|j| (j / s) * s + (j % s + s - 1) % s);
                let pick = match (c.handoff, next_in_plane) {
                    (Handoff::Sticky, Some(nx)) if elev(nx) >= c.elevation_mask_deg => Some(nx),
                    _ => (0..pos.len()).filter(|&j| elev(j) >= c.elevation_mask_deg).max_by(|&x, &y| elev(x).total_cmp(&elev(y)).then(y.cmp(&x))),
                };
                if pick != *slot {
                    *slot = pick;
                    changed = true;
                }
            }
            // Inter-plane links up or down with latitude.
            let now_up: Vec<bool> = isls
                .iter()
                .map(|&(x, y, inter)| !inter || (latitude_deg(pos[x]).abs() <= c.isl_latitude_limit_deg && latitude_deg(pos[y]).abs() <= c.isl_latitude_limit_deg))
                .collect();
            if now_up != isl_up {
                isl_up = now_up;
                changed = true;
            }
            if changed {
                let links: Vec<(usize, usize)> = isls.iter().zip(&isl_up).filter(|(_, &u)| u).map(|(&(x, y, _), _)| (x, y)).collect();
                let new_route = match up_sat {
                    [Some(x), Some(y)] => shortest(&pos, &links, x, y),
                    _ => None,
                };
                changed = new_route != route || i == 0;
                route = new_route;
            }
        }
        let delay_s = route.as_ref().map(|r| {
            let mut km = norm(sub(pos[r[0]], ground[0])) + norm(sub(pos[*r.last().unwrap()], ground[1]));
            for w in r.windows(2) {
                km += norm(sub(pos[w[0]], pos[w[1]]));
            }
            km / LIGHT_KM_S
        });
        out.push(PathSample { t: t_rel, delay_s, route: route.clone().unwrap_or_default(), changed });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separations_give_iridium_six_planes_of_eleven() {
        let c = Constellation::iridium();
        assert_eq!((c.planes, c.sats_per_plane, c.satellites()), (6, 11, 66));
        assert!((c.plane_spacing_deg - 31.6).abs() < 1e-12);
        assert_eq!(Constellation::from_separations(780.0, None, 32.72, 22.0, 6).sats_per_plane, 11);
    }

    #[test]
    fn isls_have_no_cross_seam_links() {
        let c = Constellation::iridium();
        let isls = c.isls();
        // 66 intra-plane ring links + 5 x 11 inter-plane links.
        assert_eq!(isls.len(), 66 + 55);
        assert!(!isls.iter().any(|&(a, b, _)| (a / 11 == 0 && b / 11 == 5) || (a / 11 == 5 && b / 11 == 0)));
    }
}
