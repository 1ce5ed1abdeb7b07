"""ns-2's random numbers as the bridge drives them: the seed of ns-2's default RNG for a
scenario seed (:func:`ns2_seed`), and the seed and stand-in tick with which ns-2 draws exactly
the tick-clock phase vegaslab uses (:func:`phase_reset`), from ns-2.35's MRG32k3a
(:func:`mrg_first_draw`).
"""
from __future__ import annotations

import hashlib
import math


def ns2_seed(seed: int) -> int:
    """The seed given to ns-2's default RNG (``$defaultRNG seed``) for a scenario seed: the
    first 8 bytes of SHA-256 of ``"vegaslab ns-2 seed <seed>"``, spread over 1..2**31-2 (the
    seeds ns-2 takes; 0 would ask for one from the clock).

    Why a hash (from ns-2.35's tools/rng.cc): the scenario seed itself is a biased choice:
    ``seed s`` sets all six words of MRG32k3a's state to ``s``, and the generator is linear, so
    the stream of seed ``s`` is ``s`` times the stream of seed 1 word by word: the first draw is
    about 0.00034 * s (a 1 % loss draw comes out "lose" for every seed up to 29), and the
    streams of seeds 1 and 2 agree draw after draw as ``u2 = 2 * u1 mod 1`` within 6e-6.  Hashed
    seeds start anywhere in (0, 1) and relate to each other only through large, unrelated
    multipliers.  Substreams (``next-substream`` k times from one seed, ns-2's own method for
    replications) would be independent by construction, but each jump is one Tcl call (about 6
    us) and scenario seeds are 64-bit, so seed k would cost k calls.
    """
    digest = hashlib.sha256(f"vegaslab ns-2 seed {int(seed)}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % (2**31 - 2)


# ns-2.35's MRG32k3a (tools/rng.cc, ``RNG::U01``), as far as the tick-phase rule needs it:
# the first draw of a generator whose state ``$rng seed s`` set to six times ``s``.  Every
# step is exact in doubles (products below 2**53), so this equals ns-2's draw bit for bit.
_MRG_M1 = 4294967087.0
_MRG_M2 = 4294944443.0
_MRG_NORM = 1.0 / (_MRG_M1 + 1.0)


def mrg_first_draw(s: int) -> float:
    x = float(s)
    p1 = 1403580.0 * x - 810728.0 * x
    p1 -= int(p1 / _MRG_M1) * _MRG_M1     # C's static_cast<long> truncates, as int() does
    if p1 < 0.0:
        p1 += _MRG_M1
    p2 = 527612.0 * x - 1370589.0 * x
    p2 -= int(p2 / _MRG_M2) * _MRG_M2
    if p2 < 0.0:
        p2 += _MRG_M2
    return (p1 - p2) * _MRG_NORM if p1 > p2 else (p1 - p2 + _MRG_M1) * _MRG_NORM


#: The smallest positive double: the tick used to make a phase of exactly 0 (see below).
_TINY = 5e-324


def phase_reset(phase: float) -> tuple[int, float]:
    """(seed of the bridge's phase RNG, ``tcpTick_`` during the phase reset) with which
    ns-2's ``boot_time_ = Random::uniform(tcp_tick_)``, i.e. ``tcpTick_ * u``, comes out as
    exactly ``phase``: ``u`` is the first draw after ``$rng seed s`` (:func:`mrg_first_draw`).

    The tick is ``phase / u`` or one of its neighbouring doubles; for ``phase = 0`` the
    smallest double, whose product with a draw below 1/2 rounds to 0.  Seeds 1, 2, ... are
    tried in turn; one of the first few always works (the products of neighbouring ticks
    are spaced by at most about one unit in the last place of ``phase``).
    """
    phase = float(phase)
    if not (math.isfinite(phase) and phase >= 0.0):
        raise ValueError(f"tick phase: must be a finite number >= 0, got {phase!r}")
    for s in range(1, 1000):
        u = mrg_first_draw(s)
        if phase == 0.0:
            if _TINY * u == 0.0:
                return s, _TINY
            continue
        t = phase / u
        candidates = [t]
        for direction in (0.0, math.inf):
            c = t
            for _ in range(3):
                c = math.nextafter(c, direction)
                candidates.append(c)
        for c in candidates:
            if c > 0.0 and math.isfinite(c) and c * u == phase:
                return s, c
    raise ValueError(f"tick phase {phase!r}: no ns-2 seed reproduces it")  # pragma: no cover
