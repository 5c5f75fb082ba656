//! The two-level iterator over a table: the index block selects data blocks, whose entries it
//! walks in both directions.

use std::sync::Arc;

use riptide_common::{Error, InternalIterator, Result};

use crate::block::{Block, BlockIter};
use crate::table::Table;

/// A bidirectional cursor over every entry of a [`Table`], in internal-key order. It owns an
/// `Arc` of the table and of the data block it is on (so cache eviction never invalidates it).
/// After an error it is invalid.
pub struct TableIterator {
    table: Arc<Table>,
    index: BlockIter<Arc<Block>>,
    data: Option<BlockIter<Arc<Block>>>,
    /// Offset of the block held in `data`.
    data_offset: u64,
}

impl std::fmt::Debug for TableIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableIterator")
            .field("table", &self.table.path())
            .field("valid", &self.valid())
            .finish()
    }
}

impl TableIterator {
    pub(crate) fn new(table: Arc<Table>) -> Self {
        let index = BlockIter::new(Arc::clone(table.index_block()));
        TableIterator {
            table,
            index,
            data: None,
            data_offset: 0,
        }
    }

    /// The table being iterated.
    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    fn fail(&mut self, e: Error) -> Error {
        self.data = None;
        self.index.invalidate();
        e
    }

    fn index_error(&mut self, e: Error) -> Error {
        let e = self
            .table
            .block_error(e, "index", self.table.index_offset());
        self.fail(e)
    }

    fn data_error(&mut self, e: Error) -> Error {
        let e = self.table.block_error(e, "data", self.data_offset);
        self.fail(e)
    }

    /// Loads the data block the index is on (none if the index is invalid); returns whether a
    /// block is loaded.
    fn load_block(&mut self) -> Result<bool> {
        if !self.index.valid() {
            self.data = None;
            return Ok(false);
        }
        let handle = match self.table.decode_handle(self.index.value()) {
            Ok(h) => h,
            Err(e) => return Err(self.fail(e)),
        };
        if self.data.is_some() && self.data_offset == handle.offset {
            return Ok(true);
        }
        match self.table.data_block(handle) {
            Ok(block) => {
                self.data = Some(BlockIter::new(block));
                self.data_offset = handle.offset;
                Ok(true)
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Applies `f` to the data iterator, adding context to its errors.
    fn with_data(
        &mut self,
        f: impl FnOnce(&mut BlockIter<Arc<Block>>) -> Result<()>,
    ) -> Result<()> {
        let r = match self.data.as_mut() {
            Some(d) => f(d),
            None => Ok(()),
        };
        r.map_err(|e| self.data_error(e))
    }

    fn data_valid(&self) -> bool {
        self.data.as_ref().is_some_and(|d| d.valid())
    }

    /// While the data iterator is exhausted, moves to the start of the next block.
    fn skip_forward(&mut self) -> Result<()> {
        while !self.data_valid() {
            if !self.index.valid() {
                self.data = None;
                return Ok(());
            }
            if let Err(e) = self.index.next() {
                return Err(self.index_error(e));
            }
            if !self.load_block()? {
                return Ok(());
            }
            self.with_data(|d| d.seek_to_first())?;
        }
        Ok(())
    }

    /// While the data iterator is exhausted, moves to the end of the previous block.
    fn skip_backward(&mut self) -> Result<()> {
        while !self.data_valid() {
            if !self.index.valid() {
                self.data = None;
                return Ok(());
            }
            if let Err(e) = self.index.prev() {
                return Err(self.index_error(e));
            }
            if !self.load_block()? {
                return Ok(());
            }
            self.with_data(|d| d.seek_to_last())?;
        }
        Ok(())
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.data_valid()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        if let Err(e) = self.index.seek_to_first() {
            return Err(self.index_error(e));
        }
        if self.load_block()? {
            self.with_data(|d| d.seek_to_first())?;
        }
        self.skip_forward()
    }

    fn seek_to_last(&mut self) -> Result<()> {
        if let Err(e) = self.index.seek_to_last() {
            return Err(self.index_error(e));
        }
        if self.load_block()? {
            self.with_data(|d| d.seek_to_last())?;
        }
        self.skip_backward()
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        if let Err(e) = self.index.seek(target) {
            return Err(self.index_error(e));
        }
        if self.load_block()? {
            self.with_data(|d| d.seek(target))?;
        }
        self.skip_forward()
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        if let Err(e) = self.index.seek(target) {
            return Err(self.index_error(e));
        }
        if !self.index.valid() {
            // Every separator, hence every key, is < target.
            return self.seek_to_last();
        }
        if self.load_block()? {
            self.with_data(|d| d.seek_for_prev(target))?;
        }
        self.skip_backward()
    }

    fn next(&mut self) -> Result<()> {
        self.with_data(|d| d.next())?;
        self.skip_forward()
    }

    fn prev(&mut self) -> Result<()> {
        self.with_data(|d| d.prev())?;
        self.skip_backward()
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }
}
