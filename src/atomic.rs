//! Atomic replacement of a whole file: the bytes go to a temporary file beside the target
//! (`.NAME.tmp.PID.N`), which is flushed to disk (`fsync`) and renamed over the target, so a
//! reader or a crash sees the old file or the new one, never a part. Used for the files the
//! command line writes (pictures, SVG plots), certificates and the verification journal;
//! table files have their own writer with the same steps (`table::write`).

use std::io::Write;
use std::path::{Path, PathBuf};

/// The file a write to `path` replaces: `path` itself, or, when it is a symbolic link to a
/// regular file, the file it names (the link stays).
///
/// # Errors
/// `InvalidInput` when `path` exists and is not a regular file (a directory, a device such
/// as `/dev/null`, a FIFO or a socket: a rename would replace it by a file, or reading it
/// could block); `InvalidInput` for a path without a file name (`/`, `..`).
pub fn target(path: &Path) -> std::io::Result<PathBuf> {
    let invalid = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(invalid("is a directory")),
        Ok(m) if !m.is_file() => Err(invalid("not a regular file")),
        Ok(_) => std::fs::canonicalize(path),
        Err(_) => {
            if path.file_name().is_none() {
                return Err(invalid("not a file name"));
            }
            Ok(path.to_path_buf())
        }
    }
}

/// The `N` of the next temporary file name of this process ([`create_temp`]).
pub(crate) static TEMP_COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A new temporary file for `target`, `.NAME.tmp.PID.N` in the same directory, created empty
/// and open for writing (the one helper of every atomic writer here: this module, the table
/// writer, the split solver's and `egdb pack`'s files; the name is what
/// `generate::remove_stale_temp_files` removes once its writer is gone). A name that exists
/// is never opened (another writer's: another thread, or a process with the same id in
/// another container or on another host sharing the directory); the next `N` is tried, up to
/// 1,000 times.
///
/// # Errors
/// `InvalidInput` for a path without a file name; the error of creating the file.
pub(crate) fn create_temp(target: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let name = target
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut tries = 0;
    loop {
        let tmp = target.with_file_name(format!(
            ".{}.tmp.{}.{}",
            name.to_string_lossy(),
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 1000 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Take an advisory `flock` on `file` without waiting: exclusive or shared. `Ok(true)` when
/// taken, or when the filesystem has no `flock` (`ENOLCK`, `EOPNOTSUPP`: some network
/// filesystems; the caller goes on unlocked, [`LockOutcome`] says which); `Ok(false)` when
/// another open file holds a conflicting lock. Released when the file is closed (by the
/// kernel too, when the process ends in any way).
///
/// # Errors
/// Any other `flock` error.
pub(crate) fn try_lock(file: &std::fs::File, exclusive: bool) -> std::io::Result<LockOutcome> {
    use std::os::fd::AsRawFd;
    let op = if exclusive {
        libc::LOCK_EX
    } else {
        libc::LOCK_SH
    } | libc::LOCK_NB;
    // SAFETY: flock on a descriptor owned by `file`, open for the whole call.
    if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
        return Ok(LockOutcome::Locked);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(LockOutcome::Busy),
        Some(libc::ENOLCK) | Some(libc::EOPNOTSUPP) => Ok(LockOutcome::Unsupported),
        _ => Err(e),
    }
}

/// What [`try_lock`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LockOutcome {
    /// The lock is held.
    Locked,
    /// Another open file holds a conflicting lock.
    Busy,
    /// The filesystem does not support `flock`: nothing is locked.
    Unsupported,
}

/// Check, before any long work, that [`replace`] can write `path`: [`target`] accepts it and
/// a temporary file can be created beside it (it is removed again). Nothing is written to
/// `path`.
///
/// # Errors
/// As [`target`]; the error of creating the temporary file (a missing or read-only
/// directory).
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    let (tmp, f) = create_temp(&target(path)?)?;
    drop(f);
    let _ = std::fs::remove_file(&tmp);
    Ok(())
}

/// Replace the file at `path` by `bytes` atomically; returns the path written (the file a
/// link named, see `target`). The temporary file is removed if anything fails.
///
/// # Errors
/// As `target`; I/O errors of create, write, fsync or rename.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let target = target(path)?;
    let (tmp, f) = create_temp(&target)?;
    let result = (|| {
        let mut f = f;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_files_and_refuses_what_is_not_a_regular_file() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.txt");
        replace(&f, b"one").unwrap();
        replace(&f, b"two").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        // A user's own NAME.tmp is left alone.
        let mine = d.path().join("a.tmp");
        std::fs::write(&mine, b"mine").unwrap();
        replace(&f, b"three").unwrap();
        assert_eq!(std::fs::read(&mine).unwrap(), b"mine");
        // A link is followed and stays a link.
        #[cfg(unix)]
        {
            let link = d.path().join("link");
            std::os::unix::fs::symlink(&f, &link).unwrap();
            replace(&link, b"four").unwrap();
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(std::fs::read(&f).unwrap(), b"four");
        }
        assert!(replace(d.path(), b"x").is_err());
        assert!(check_writable(d.path()).is_err());
        #[cfg(unix)]
        {
            assert!(check_writable(Path::new("/dev/null")).is_err());
            assert!(replace(Path::new("/dev/null"), b"x").is_err());
        }
        assert!(check_writable(&d.path().join("no/such/dir/x")).is_err());
        check_writable(&d.path().join("new.txt")).unwrap();
        assert!(!d.path().join("new.txt").exists());
        // Nothing but the files made above.
        let mut names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.tmp", "a.txt", "link"]);
    }

    /// Another writer's temporary file under the name this process would use next is never
    /// opened or truncated (found by a code review; the name was `.NAME.tmp.PID` alone, so
    /// two threads, or two processes with the same id sharing the directory, collided).
    #[test]
    fn a_temporary_name_in_use_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("state.txt");
        let pid = std::process::id();
        let theirs: Vec<PathBuf> = (0..1000)
            .map(|n| d.path().join(format!(".state.txt.tmp.{pid}.{n}")))
            .chain([d.path().join(format!(".state.txt.tmp.{pid}"))])
            .collect();
        for t in &theirs {
            std::fs::write(t, b"theirs").unwrap();
        }
        replace(&f, b"mine").unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"mine");
        for t in &theirs {
            assert_eq!(std::fs::read(t).unwrap(), b"theirs", "{}", t.display());
        }
    }
}
