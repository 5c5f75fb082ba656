//! Merging of several [`InternalIterator`]s into one ordered view. (Being written.)
