//! Dense perfect index of every slice: a bijection between the legal Black-to-move positions
//! of a [`Slice`] and `0..size`. (Implementation: issue 3.)
use crate::board::Position;
use crate::slice::Slice;

/// Why an index cannot be turned into a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// The index is not below the slice size.
    #[error("index {index} is out of range for slice {slice} (size {size})")]
    OutOfRange {
        /// Slice name.
        slice: String,
        /// The index asked for.
        index: u64,
        /// The slice size.
        size: u64,
    },
}

/// Precomputed ranking tables of one slice. Cheap to clone; build once per slice and reuse.
#[derive(Clone, Debug)]
pub struct SliceIndex {
    slice: Slice,
}

impl SliceIndex {
    /// Index tables of `slice` (which must satisfy [`Slice::is_valid`]).
    pub fn new(slice: Slice) -> SliceIndex {
        SliceIndex { slice }
    }
    /// The slice.
    pub fn slice(&self) -> Slice {
        self.slice
    }
    /// Number of legal positions in the slice (exact, no holes).
    pub fn size(&self) -> u64 {
        todo!()
    }
    /// Index of `p`, which must belong to this slice (`Slice::of(p) == self.slice()`); the side
    /// to move is ignored. Result is in `0..size()`.
    pub fn rank(&self, _p: &Position) -> u64 {
        todo!()
    }
    /// The position (Black to move) with index `index`.
    ///
    /// # Errors
    /// [`IndexError::OutOfRange`] if `index >= size()`.
    pub fn unrank(&self, _index: u64) -> Result<Position, IndexError> {
        todo!()
    }
}
