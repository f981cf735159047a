//! Hints to the CPU and the kernel that change speed, never results: prefetching a value
//! about to be read at a random place, and transparent huge pages under large arrays read at
//! random places. One place for both, used by the solver, the probe cache and the verifier.

/// Ask the CPU to bring the cache line holding `*r` into every cache level (`prefetcht0`);
/// nothing on targets other than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(r: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` is only a cache hint: it never faults and reads nothing the
    // program can observe, whatever the address; SSE is part of the x86-64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch(r as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Ask the kernel to back the page-aligned part of `s` with transparent huge pages
/// (`madvise(MADV_HUGEPAGE)`; a hint, ignored where unsupported, and a no-op for less than
/// 2 MiB): with 4 KiB pages nearly every random read of a multi-GB array is also a TLB miss
/// (a page walk). Given before the pages are first written, they are allocated huge.
pub(crate) fn advise_huge<T>(s: &[T]) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let start = s.as_ptr() as usize;
        let end = start + std::mem::size_of_val(s);
        let a = start.next_multiple_of(4096);
        if end > a + (2 << 20) {
            let len = (end - a) / 4096 * 4096;
            // SAFETY: the range lies inside the allocation of `s`; MADV_HUGEPAGE changes no
            // contents, only how the kernel backs the pages.
            unsafe {
                libc::madvise(a as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = s;
}
