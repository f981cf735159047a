//! Scratch files for the codec experiments in `examples/` (included with `#[path]`; not an
//! example of its own).

#![allow(dead_code)]

use checkers_egdb::format::{write_table_with, TableMeta, WriteOptions};

/// A fresh file name in this run's scratch directory (under /dev/shm where there is one, so
/// that writing the files costs no disk time).
pub fn scratch_path() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = DIR.get_or_init(|| {
        let shm = std::path::Path::new("/dev/shm");
        if shm.is_dir() {
            tempfile::tempdir_in(shm).unwrap()
        } else {
            tempfile::tempdir().unwrap()
        }
    });
    dir.path()
        .join(format!("{}.tmp", N.fetch_add(1, Ordering::Relaxed)))
}

/// Bytes of the file the public writer makes of `values` with `opts` ([`write_table_with`]
/// into [`scratch_path`]; the file is removed again).
pub fn encoded_len(meta: &TableMeta, values: &[u8], opts: &WriteOptions) -> u64 {
    let path = scratch_path();
    let n = write_table_with(&path, meta, values, opts).unwrap();
    std::fs::remove_file(&path).ok();
    n
}
