//! A bounded set of open file descriptors shared by the readers of a [`crate::probe::Tablebase`]
//! (issue 32): at most `capacity` table files stay open, the least recently read is closed when
//! another must be opened, and a closed file is opened again on its next read, after a check
//! that it is still the same file.
//!
//! Only [`super::Access::Pread`] readers hold a descriptor after opening; memory-mapped readers
//! ([`super::Access::Mmap`] and the distance files, [`super::DtcFile`]) close theirs right after
//! mapping. The pool is touched only when a block is read from disk (a block decode, never a
//! probe answered from the block cache): one mutex lock and one hash-map look-up, no lock held
//! during the read itself.

use super::error::{Fault, TableError};
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Default of [`crate::probe::TablebaseBuilder::max_open_files`]: open table files a
/// tablebase keeps at most (plus, briefly, those being read by other threads at the time one
/// is closed).
pub const DEFAULT_MAX_OPEN_FILES: usize = 256;

/// What makes a reopened file "the same file" as the one validated at open: device, inode,
/// length, modification time and the 64-byte header (which holds the checksum of the header
/// and offset table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    pub(crate) header: Vec<u8>,
}

impl Identity {
    /// The identity of the open file `f` with header bytes `header`.
    pub(crate) fn of(f: &File, header: Vec<u8>) -> std::io::Result<Identity> {
        let md = f.metadata()?;
        Ok(Identity {
            dev: md.dev(),
            ino: md.ino(),
            len: md.len(),
            mtime: (md.mtime(), md.mtime_nsec()),
            header,
        })
    }
}

struct Entry {
    file: Arc<File>,
    used: u64,
}

struct State {
    open: HashMap<u64, Entry>,
    tick: u64,
    reopens: u64,
}

/// A bounded pool of open table files (least recently used closed first). `Send + Sync`;
/// shared through an `Arc` by the [`super::TableFile`]s of one tablebase.
pub struct FilePool {
    capacity: usize,
    state: Mutex<State>,
}

impl std::fmt::Debug for FilePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilePool")
            .field("capacity", &self.capacity)
            .field("open", &self.open_files())
            .finish()
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl FilePool {
    /// A pool keeping at most `capacity` files open (at least 1).
    pub fn new(capacity: usize) -> Arc<FilePool> {
        Arc::new(FilePool {
            capacity: capacity.max(1),
            state: Mutex::new(State {
                open: HashMap::new(),
                tick: 0,
                reopens: 0,
            }),
        })
    }

    /// The most files kept open.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Files open in the pool now.
    pub fn open_files(&self) -> usize {
        self.lock().open.len()
    }

    /// Files opened again after having been closed to make room, since the pool was made.
    pub fn reopens(&self) -> u64 {
        self.lock().reopens
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves the map consistent (no invariant spans two
        // statements), so a poisoned lock is used as is.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Put `file` in the pool under `id`, closing the least recently used file if full.
    fn insert(&self, id: u64, file: Arc<File>) {
        let mut s = self.lock();
        s.tick += 1;
        let used = s.tick;
        s.open.insert(id, Entry { file, used });
        while s.open.len() > self.capacity {
            let Some((&old, _)) = s.open.iter().min_by_key(|(_, e)| e.used) else {
                break;
            };
            s.open.remove(&old);
        }
    }

    fn get(&self, id: u64) -> Option<Arc<File>> {
        let mut s = self.lock();
        s.tick += 1;
        let tick = s.tick;
        let e = s.open.get_mut(&id)?;
        e.used = tick;
        Some(e.file.clone())
    }

    fn remove(&self, id: u64) {
        self.lock().open.remove(&id);
    }
}

/// A reader's handle on its file: its own descriptor, or a place in a [`FilePool`].
pub(crate) enum Handle {
    Own(File),
    Pooled {
        pool: Arc<FilePool>,
        id: u64,
        path: PathBuf,
        /// Set once the header is read (at open); until then the descriptor stays in the pool.
        identity: std::sync::OnceLock<Identity>,
    },
}

/// A descriptor borrowed from a [`Handle`] for one read.
pub(crate) enum FileRef<'a> {
    Own(&'a File),
    Shared(Arc<File>),
}

impl std::ops::Deref for FileRef<'_> {
    type Target = File;
    fn deref(&self) -> &File {
        match self {
            FileRef::Own(f) => f,
            FileRef::Shared(f) => f,
        }
    }
}

impl Handle {
    /// A handle in `pool` for `file`, just opened from `path`.
    pub(crate) fn pooled(pool: &Arc<FilePool>, path: &Path, file: File) -> Handle {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        pool.insert(id, Arc::new(file));
        Handle::Pooled {
            pool: pool.clone(),
            id,
            path: path.to_path_buf(),
            identity: std::sync::OnceLock::new(),
        }
    }

    /// Record the header read at open (what a reopened file must still have).
    pub(crate) fn set_identity(&self, header: &[u8]) -> Result<(), TableError> {
        if let Handle::Pooled {
            pool,
            id,
            path,
            identity,
        } = self
        {
            let f = pool.get(*id).map(Ok).unwrap_or_else(|| {
                crate::table::read::open_file(path)
                    .map(Arc::new)
                    .map_err(|e| TableError::io(path, "open", e))
            })?;
            let ident =
                Identity::of(&f, header.to_vec()).map_err(|e| TableError::io(path, "stat", e))?;
            let _ = identity.set(ident);
        }
        Ok(())
    }

    /// The descriptor to read from: the pooled one, or the file opened again and checked to be
    /// the same (device, inode, length, modification time, header bytes).
    ///
    /// # Errors
    /// [`TableError::Io`] if the open fails; [`TableError::Corrupt`] with [`Fault::Changed`]
    /// if the file at the path is no longer the one validated at open.
    pub(crate) fn file(&self) -> Result<FileRef<'_>, TableError> {
        match self {
            Handle::Own(f) => Ok(FileRef::Own(f)),
            Handle::Pooled {
                pool,
                id,
                path,
                identity,
            } => {
                if let Some(f) = pool.get(*id) {
                    return Ok(FileRef::Shared(f));
                }
                let f = crate::table::read::open_file(path)
                    .map_err(|e| TableError::io(path, "open", e))?;
                if let Some(want) = identity.get() {
                    let changed =
                        |now: u64| TableError::corrupt(path, Fault::Changed { was: want.len, now });
                    let md = f.metadata().map_err(|e| TableError::io(path, "stat", e))?;
                    let mut header = vec![0u8; want.header.len()];
                    use std::os::unix::fs::FileExt;
                    let same = md.dev() == want.dev
                        && md.ino() == want.ino
                        && md.len() == want.len
                        && (md.mtime(), md.mtime_nsec()) == want.mtime
                        && f.read_exact_at(&mut header, 0).is_ok()
                        && header == want.header;
                    if !same {
                        return Err(changed(md.len()));
                    }
                }
                let f = Arc::new(f);
                pool.lock().reopens += 1;
                pool.insert(*id, f.clone());
                Ok(FileRef::Shared(f))
            }
        }
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Handle::Pooled { pool, id, .. } = self {
            pool.remove(*id);
        }
    }
}
