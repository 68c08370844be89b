//! How the long-running processes (the core and the holder) use glibc's
//! allocator, so memory that idle tabs gave back does not stay resident.
//!
//! - One arena: by default glibc gives a thread that meets a locked arena
//!   one of its own, up to 8 per core, and each keeps the pages it once
//!   used. The core and holder run a few async workers and short-lived
//!   blocking threads, so most arenas ended up holding freed screens. Their
//!   work is serialised by the core's state lock anyway.
//! - A trim after screens are compacted ([`release_freed`]): freed chunks in
//!   the middle of the heap are handed back to the kernel (`malloc_trim`
//!   madvises them), which a free alone never does.
//!
//! Elsewhere than glibc both are no-ops.

/// Set up the allocator for a service process; call before any thread
/// starts (mallopt is not meant to race with allocation in other threads).
pub fn for_a_service() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of the allocator; no other
    // thread exists yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Give the pages of freed memory back to the kernel. Walks the heap (a
/// millisecond or so for tens of MiB): call it after freeing much, never
/// on a hot path.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the allocator's own locks; it is safe to
    // call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
