//! Bit gather and scatter (`pext` / `pdep`) for the index's king ranking, with the BMI2
//! instructions chosen at run time.
//!
//! The index ranks kings among the squares the men leave free ([`crate::index`]): a rank is a
//! bit gather (`pext`, close the gaps left by the occupied squares) followed by a colex rank, an
//! unrank is a colex unrank followed by a bit scatter (`pdep`). One instruction each on a CPU
//! with BMI2, a loop of one step per set bit (or per occupied square) without.
//!
//! The default build targets x86-64-v2 (`.cargo/config.toml`), which has no BMI2, so the
//! instructions are issued through inline assembly behind a run-time test made once per process
//! ([`fast`]): true where CPUID reports BMI2 and the CPU is not an AMD or Hygon design before
//! Zen 3 (family 19h), whose `pext` / `pdep` are microcoded at up to hundreds of cycles (AMD,
//! "Software Optimization Guide for AMD Family 17h Processors", instruction latencies). A build
//! for a BMI2 target (`RUSTFLAGS="-C target-cpu=native"` on such a CPU) uses the intrinsics
//! directly and skips the test. Either way the results are the same bits, so tables do not
//! depend on the path taken (unit tests compare both on random inputs).
//!
//! Measured (issue 11, docs/build-profile.md): the 9 units of `egdb build --pieces 6 --slice
//! 2202-6n --with-deps` on the 5-piece files take 0.88x of the user CPU with BMI2 enabled.

/// `pext(s, mask)`: the bits of `s` at the set bits of `mask`, packed into the low bits in
/// order (Intel SDM vol. 2, PEXT).
#[inline(always)]
#[cfg(test)]
pub fn pext(s: u32, mask: u32) -> u32 {
    if fast() {
        // SAFETY: `fast()` is true.
        unsafe { pext_insn(s, mask) }
    } else {
        pext_portable(s, mask)
    }
}

/// `pdep(c, mask)`: the low bits of `c`, in order, deposited at the set bits of `mask` (Intel
/// SDM vol. 2, PDEP).
#[inline(always)]
pub fn pdep(c: u32, mask: u32) -> u32 {
    if fast() {
        // SAFETY: `fast()` is true.
        unsafe { pdep_insn(c, mask) }
    } else {
        pdep_portable(c, mask)
    }
}

/// The `pext` instruction, for a caller that has tested [`fast`] itself (the index does, once
/// per rank, and then takes either this or its own fused portable loop).
///
/// # Safety
/// [`fast`] must have returned true (the CPU has BMI2).
#[inline(always)]
pub(crate) unsafe fn pext_insn(s: u32, mask: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let r: u32;
        // SAFETY: the caller guarantees BMI2; the instruction reads and writes registers only
        // (no memory, no flags, no stack).
        unsafe {
            std::arch::asm!(
                "pext {r:e}, {s:e}, {m:e}",
                r = lateout(reg) r,
                s = in(reg) s,
                m = in(reg) mask,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    pext_portable(s, mask)
}

/// The `pdep` instruction (see [`pext_insn`]).
///
/// # Safety
/// [`fast`] must have returned true (the CPU has BMI2).
#[inline(always)]
pub(crate) unsafe fn pdep_insn(c: u32, mask: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        let r: u32;
        // SAFETY: as in `pext_insn`.
        unsafe {
            std::arch::asm!(
                "pdep {r:e}, {c:e}, {m:e}",
                r = lateout(reg) r,
                c = in(reg) c,
                m = in(reg) mask,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    pdep_portable(c, mask)
}

/// [`pext`] without BMI2: one step per set bit of `s & mask`.
#[inline(always)]
#[cfg(any(test, not(target_arch = "x86_64")))]
pub fn pext_portable(s: u32, mask: u32) -> u32 {
    let mut bits = s & mask;
    let mut out = 0;
    while bits != 0 {
        let p = bits.trailing_zeros();
        out |= 1 << (mask & ((1u32 << p) - 1)).count_ones();
        bits &= bits - 1;
    }
    out
}

/// [`pdep`] without BMI2: one step per clear bit of `mask` (the squares skipped), which is
/// the short loop for the index (few occupied squares).
#[inline(always)]
pub fn pdep_portable(mut c: u32, mask: u32) -> u32 {
    let mut skip = !mask;
    while skip != 0 {
        let o = skip.trailing_zeros();
        let low = (1u32 << o) - 1;
        c = (c & low) | ((c & !low) << 1);
        skip &= skip - 1;
    }
    c & mask
}

/// Whether the BMI2 instructions are used: CPUID reports BMI2, the CPU is not an AMD or
/// Hygon design before family 19h (see the module docs), and the environment variable
/// `EGDB_NO_BMI2` is unset, empty or `0` (set it to compare the portable path on a BMI2 CPU). Tested once per process; later calls
/// are one relaxed load. Always true in a build for a BMI2 target; false off x86-64.
#[inline(always)]
pub fn fast() -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        true
    }
    #[cfg(all(target_arch = "x86_64", not(target_feature = "bmi2")))]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        static FAST: AtomicU8 = AtomicU8::new(0);
        match FAST.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => {
                let f = detect();
                FAST.store(if f { 2 } else { 1 }, Ordering::Relaxed);
                f
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

#[cfg(all(target_arch = "x86_64", not(target_feature = "bmi2")))]
#[cold]
#[inline(never)]
fn detect() -> bool {
    if std::env::var_os("EGDB_NO_BMI2").is_some_and(|v| !v.is_empty() && v != "0") {
        return false;
    }
    if !std::arch::is_x86_feature_detected!("bmi2") {
        return false;
    }
    // SAFETY: CPUID leaves 0 and 1 exist on every x86-64 CPU (`__cpuid` is a safe function
    // from Rust 1.94; this crate's minimum version is older).
    #[allow(unused_unsafe)]
    let (l0, l1) = unsafe { (std::arch::x86_64::__cpuid(0), std::arch::x86_64::__cpuid(1)) };
    let mut vendor = [0u8; 12];
    vendor[..4].copy_from_slice(&l0.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&l0.edx.to_le_bytes());
    vendor[8..].copy_from_slice(&l0.ecx.to_le_bytes());
    let base_family = (l1.eax >> 8) & 0xF;
    let family = if base_family == 0xF {
        base_family + ((l1.eax >> 20) & 0xFF)
    } else {
        base_family
    };
    let amd_like = &vendor == b"AuthenticAMD" || &vendor == b"HygonGenuine";
    !(amd_like && family < 0x19)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A reference gather / scatter written from the instruction's definition, bit by bit.
    pub(crate) fn pext_ref(s: u32, mask: u32) -> u32 {
        let (mut out, mut k) = (0, 0);
        for i in 0..32 {
            if mask >> i & 1 == 1 {
                out |= (s >> i & 1) << k;
                k += 1;
            }
        }
        out
    }

    /// The reference scatter (see `pext_ref`).
    pub(crate) fn pdep_ref(c: u32, mask: u32) -> u32 {
        let (mut out, mut k) = (0, 0);
        for i in 0..32 {
            if mask >> i & 1 == 1 {
                out |= (c >> k & 1) << i;
                k += 1;
            }
        }
        out
    }

    /// A reproducible stream of `u32` (xorshift64, fixed seed) for the bit-helper tests.
    pub(crate) fn xorshift() -> impl FnMut() -> u32 {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        }
    }

    #[test]
    fn both_paths_match_the_definition() {
        let mut next = xorshift();
        let edge = [0, 1, 0x8000_0000, u32::MAX, 0x5555_5555, 0xAAAA_AAAA];
        for i in 0..200_000 {
            let (s, m) = if i < 36 {
                (edge[i / 6], edge[i % 6])
            } else {
                // Sparse masks and values as well as dense ones.
                let (a, b, c) = (next(), next(), next());
                match i % 3 {
                    0 => (a, b),
                    1 => (a & b, c),
                    _ => (a, !(b & c)),
                }
            };
            let (e, d) = (pext_ref(s, m), pdep_ref(s, m));
            assert_eq!(pext(s, m), e, "pext({s:#x}, {m:#x})");
            assert_eq!(pext_portable(s, m), e, "pext_portable({s:#x}, {m:#x})");
            assert_eq!(pdep(s, m), d, "pdep({s:#x}, {m:#x})");
            assert_eq!(pdep_portable(s, m), d, "pdep_portable({s:#x}, {m:#x})");
        }
    }
}
