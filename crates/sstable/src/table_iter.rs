//! The two-level iterator over a table: the index block selects data blocks, whose entries it
//! walks in both directions.

use std::sync::Arc;

use riptide_common::key::user_key;
use riptide_common::{Error, InternalIterator, Result};

use crate::block::{Block, BlockIter};
use crate::format::{BLOCK_TRAILER_LEN, BlockHandle};
use crate::table::{AutoReadahead, Readahead, SPAN_READAHEAD_MAX, Table};

/// A bidirectional cursor over every entry of a [`Table`], in internal-key order. It owns an
/// `Arc` of the table, of its index block (fetched at the first positioning call, through the
/// block cache when the table keeps its index there) and of the data block it is on, so cache
/// eviction never invalidates it. After an error it is invalid.
pub struct TableIterator {
    table: Arc<Table>,
    /// `None` until the first positioning call loads the index.
    index: Option<BlockIter<Arc<Block>>>,
    data: Option<BlockIter<Arc<Block>>>,
    /// Offset of the block held in `data`.
    data_offset: u64,
    /// How blocks missing from the cache are read.
    reads: BlockReads,
    /// The user key forward scans are known to end before
    /// ([`InternalIterator::set_readahead_limit`]).
    readahead_limit: Option<Vec<u8>>,
}

/// How a [`TableIterator`] reads the blocks the block cache does not have.
#[derive(Debug)]
enum BlockReads {
    /// A user's iterator: one block per read, reading ahead by itself once it reads
    /// consecutive blocks; what it reads enters the cache.
    Auto(AutoReadahead),
    /// A scan that reads ahead from the start and leaves the block cache alone
    /// ([`Table::scan_iter`]).
    Scan(Readahead),
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
        TableIterator {
            table,
            index: None,
            data: None,
            data_offset: 0,
            reads: BlockReads::Auto(AutoReadahead::new()),
            readahead_limit: None,
        }
    }

    pub(crate) fn new_scan(table: Arc<Table>, readahead: Readahead) -> Self {
        TableIterator {
            reads: BlockReads::Scan(readahead),
            ..Self::new(table)
        }
    }

    /// The table being iterated.
    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    fn fail(&mut self, e: Error) -> Error {
        self.data = None;
        if let Some(i) = self.index.as_mut() {
            i.invalidate();
        }
        e
    }

    fn index_valid(&self) -> bool {
        self.index.as_ref().is_some_and(|i| i.valid())
    }

    /// Applies `op` to the index iterator, loading the index block first if needed, and adds
    /// context to its errors.
    fn index_op(
        &mut self,
        op: impl FnOnce(&mut BlockIter<Arc<Block>>) -> Result<()>,
    ) -> Result<()> {
        if self.index.is_none() {
            match self.table.index_arc() {
                Ok(b) => self.index = Some(BlockIter::new(b)),
                Err(e) => return Err(self.fail(e)),
            }
        }
        let r = match self.index.as_mut() {
            Some(i) => op(i),
            None => Ok(()),
        };
        r.map_err(|e| self.index_error(e))
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
    /// block is loaded. `forward`: for a forward move, which may read ahead to the
    /// read-ahead limit.
    fn load_block(&mut self, forward: bool) -> Result<bool> {
        let Some(index) = self.index.as_ref().filter(|i| i.valid()) else {
            self.data = None;
            return Ok(false);
        };
        let handle = match self.table.decode_handle(index.value()) {
            Ok(h) => h,
            Err(e) => return Err(self.fail(e)),
        };
        if self.data.is_some() && self.data_offset == handle.offset {
            return Ok(true);
        }
        let table = &self.table;
        let limit = self.readahead_limit.as_deref().filter(|_| forward);
        let block = match &mut self.reads {
            BlockReads::Scan(ra) => table.data_block_for_scan(handle, ra),
            BlockReads::Auto(auto) => table.data_block_auto(handle, auto, || {
                limit.map_or(Ok(None), |l| span_end(table, index, l).map(Some))
            }),
        };
        match block {
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
            if !self.index_valid() {
                self.data = None;
                return Ok(());
            }
            self.index_op(|i| i.next())?;
            if !self.load_block(true)? {
                return Ok(());
            }
            self.with_data(|d| d.seek_to_first())?;
        }
        Ok(())
    }

    /// While the data iterator is exhausted, moves to the end of the previous block.
    fn skip_backward(&mut self) -> Result<()> {
        while !self.data_valid() {
            if !self.index_valid() {
                self.data = None;
                return Ok(());
            }
            self.index_op(|i| i.prev())?;
            if !self.load_block(false)? {
                return Ok(());
            }
            self.with_data(|d| d.seek_to_last())?;
        }
        Ok(())
    }
}

/// The offset just past the blocks a forward scan from the block `index` is on needs when
/// it ends before user key `limit`: that block, and each next one while the separator
/// before it (at least every key of the block before, and below every key of the next)
/// sorts below `limit`; at most [`SPAN_READAHEAD_MAX`] bytes from the first.
fn span_end(table: &Table, index: &BlockIter<Arc<Block>>, limit: &[u8]) -> Result<u64> {
    let mut it = BlockIter::new(index.block());
    it.seek(index.key())?;
    let first = table.decode_handle(it.value())?;
    let block_end = |h: BlockHandle| h.offset + h.size + BLOCK_TRAILER_LEN as u64;
    let mut end = block_end(first);
    while it.valid() && user_key(it.key()) < limit {
        it.next()?;
        if !it.valid() {
            break;
        }
        let next = block_end(table.decode_handle(it.value())?);
        if next.saturating_sub(first.offset) > SPAN_READAHEAD_MAX as u64 {
            break;
        }
        end = next;
    }
    Ok(end)
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.data_valid()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.index_op(|i| i.seek_to_first())?;
        if self.load_block(true)? {
            self.with_data(|d| d.seek_to_first())?;
        }
        self.skip_forward()
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.index_op(|i| i.seek_to_last())?;
        if self.load_block(false)? {
            self.with_data(|d| d.seek_to_last())?;
        }
        self.skip_backward()
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.index_op(|i| i.seek(target))?;
        if self.load_block(true)? {
            self.with_data(|d| d.seek(target))?;
        }
        self.skip_forward()
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.index_op(|i| i.seek(target))?;
        if !self.index_valid() {
            // Every separator, hence every key, is < target.
            return self.seek_to_last();
        }
        if self.load_block(false)? {
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

    fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        if self.readahead_limit.as_deref() != limit {
            self.readahead_limit = limit.map(<[u8]>::to_vec);
        }
    }
}
