//! `handler_sequence`: random sequences of calls of the MariaDB handler layer of the C ABI
//! (`riptide_handler_*`, `riptide_htable_*`, `riptide_hsession_*`, `riptide_hinterrupt_*`,
//! `riptide_hcursor_*`, `riptide_handler_calls`; called as Rust `unsafe extern "C"`
//! functions) over a few tables: the data dictionary (create, temporary tables, drop,
//! rename, truncate, key formats, waiting for prepared transactions), table handles
//! (auto-increment, estimates, ANALYZE, OPTIMIZE), up to four sessions (statements,
//! savepoints by id, two-phase commit, KILL, lock timeouts, inserts with unique checks and
//! hidden row ids, updates with and without a scan cursor, deletes, point reads in every
//! lock mode, unlocking rows, value locks, CHECK TABLE through a callback) and up to six
//! cursors (every mode, keys-only reads, range ends, seeks, steps within a tuple), with NULL
//! handles and out-parameters, NULL data with a nonzero length, unknown enum values, calls
//! on finished or prepared sessions, cursors read through one session after another, and
//! DDL while cursors and table handles are alive. Key tuples come from a small domain, so
//! rows collide: duplicates, updates of existing rows, deletes of missing ones.
//!
//! Every call must return a status (never crash, never `RIPTIDE_INTERNAL`, which is a caught
//! panic, i.e. a bug); a failure must come with a message (when `errmsg` is given) and a
//! success without one; a NULL required handle or out-parameter, NULL data with a nonzero
//! length and an unknown enum value must fail with `RIPTIDE_INVALID_ARGUMENT`. A model
//! checks what is cheap and sound: the committed rows of every table (a fresh snapshot
//! session's full scan of the primary key equals them, every one is found by `get_row`, a
//! point read and an exact seek, the secondary indexes agree with them, CHECK TABLE finds
//! nothing, the range estimate counts them), a session's own writes as it reads them back,
//! the newest committed rows as read committed and locking reads see them, duplicate primary
//! keys (`RIPTIDE_DUPLICATE_KEY` with `dup_index` 0, or a lock wait that failed) and the
//! index a duplicate names, savepoint ids, dictionary statuses (`NOT_FOUND`, `BUSY`,
//! `existed`), fresh hidden row ids, auto-increment bounds and prepared transactions that
//! make DDL wait. What a failed write may have left (a row without its secondary entries)
//! is "unknown" in the model until a fresh scan shows it.
//!
//! The harness keeps to what the C contract makes the caller's job and the library cannot
//! check: one thread; never a dangling or foreign pointer; never a double free; a
//! `riptide_hrow_t` read before the next call on its cursor; lock waits of a few
//! milliseconds (a wait of the 50 s default would hang a single thread); table handles
//! released before their handler is freed (two handlers would each count row ids); every
//! handle freed before the database is destroyed.

#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{CStr, c_char, c_void};
use std::ptr::{null, null_mut};

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use riptide_capi::riptide_status_t::{
    RIPTIDE_BUSY, RIPTIDE_CONFLICT, RIPTIDE_DEADLOCK, RIPTIDE_DUPLICATE_KEY, RIPTIDE_INTERRUPTED,
    RIPTIDE_INVALID_ARGUMENT, RIPTIDE_NOT_FOUND, RIPTIDE_OK, RIPTIDE_TIMED_OUT,
};
use riptide_capi::*;
use riptide_fuzz::capi::{Bytes, Pick, ValueOut, checked_call, pick, set_small_options, take};
use riptide_fuzz::temp_dir;

/// Table names (the empty one can only be reached by a rename).
const NAMES: [&[u8]; 4] = [b"t1", b"t2", b"t3", b""];
/// Primary key tuples: some are prefixes of others, some have no successor.
const PK_DOMAIN: [&[u8]; 7] = [
    b"",
    b"\x00",
    b"\x01",
    b"\x01\x00",
    b"\x02",
    b"\xff",
    b"\xff\xff",
];
/// A row starting with this byte cannot be decoded by the CHECK TABLE callback.
const UNDECODABLE: u8 = 0xfe;
/// At most this many live sessions, cursors, table handles and interrupters.
const MAX_SESSIONS: usize = 4;
const MAX_CURSORS: usize = 6;
const MAX_TABLES: usize = 6;
const MAX_INTERRUPTERS: usize = 4;
/// At most this many operations per input.
const MAX_OPS: usize = 96;

/// The two table layouts: a primary key with a UNIQUE (index 1) and a non-unique (index 2)
/// secondary index, or a hidden primary key with a UNIQUE secondary index.
#[derive(Arbitrary, Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    Pk,
    Hidden,
}

impl Layout {
    /// Number of secondary indexes.
    fn secondary(self) -> usize {
        match self {
            Layout::Pk => 2,
            Layout::Hidden => 1,
        }
    }
}

/// The secondary keys of a row, as the harness (the "server") computes them: the UNIQUE key
/// from its second byte (a NULL part one time in four), the other from its length. Every
/// key is 2 bytes, so keys are prefix-free within an index.
fn keys_of(row: &[u8]) -> [([u8; 2], bool); 2] {
    let u = row.get(1).copied().unwrap_or(0) % 4;
    let unique = if u == 3 {
        ([0, 0], true)
    } else {
        ([1, u], false)
    };
    [unique, ([1, (row.len() % 3) as u8], false)]
}

/// `v` mapped onto `valid` most of the time, else onto a value none of them is.
fn pick_enum(v: u8, valid: &[i32]) -> i32 {
    const UNKNOWN: [i32; 4] = [-1, 7, i32::MIN, i32::MAX];
    if v % 8 == 7 {
        let u = UNKNOWN[usize::from(v / 8) % UNKNOWN.len()];
        if valid.contains(&u) { 100 } else { u }
    } else {
        valid[usize::from(v) % valid.len()]
    }
}

/// A flag set one time in eight: NULL for a handle or out-parameter the call needs.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Rare(u8);

impl Rare {
    fn set(self) -> bool {
        // Not on 0: the bytes past the end of the input read as zeros.
        self.0 % 8 == 7
    }
}

/// One time in eight, some of the low three bits of `v` (out-parameters passed as NULL).
fn rare_bits(v: u8) -> u8 {
    if v % 8 == 7 { (v / 8) % 7 + 1 } else { 0 }
}

/// A table name argument.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum NameArg {
    Name(u8),
    /// `(NULL, 0)`: the empty name.
    Null,
    /// `(NULL, n > 0)`: refused.
    NullWithLen(u8),
}

impl NameArg {
    /// The name (None when refused) and the `(pointer, length)` pair.
    fn arg(self) -> (Option<&'static [u8]>, *const c_char, usize) {
        match self {
            NameArg::Name(i) => {
                let n = NAMES[usize::from(i) % NAMES.len()];
                (Some(n), n.as_ptr().cast(), n.len())
            }
            NameArg::Null => (Some(b""), null(), 0),
            NameArg::NullWithLen(n) => (None, null(), usize::from(n).max(1)),
        }
    }
}

/// The index specs of a CREATE.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum SpecArg {
    Good(Layout),
    /// A layout's specs with NULL names.
    Unnamed(Layout),
    /// No index (`n` 0).
    NoIndex,
    SecondaryFirst,
    TwoPrimaries,
    UnknownKind(i32),
    /// NULL specs with a nonzero count.
    NullSpecs(u8),
}

impl SpecArg {
    /// The specs, their count (NULL pointer when `None`) and the layout they make, if any.
    fn specs(self) -> (Option<Vec<riptide_index_spec_t>>, usize, Option<Layout>) {
        let spec = |kind, unique, name: &'static CStr, named: bool| riptide_index_spec_t {
            kind,
            unique,
            key_parts: 1,
            name: if named { name.as_ptr() } else { null() },
        };
        let of = |layout: Layout, named: bool| -> Vec<riptide_index_spec_t> {
            match layout {
                Layout::Pk => vec![
                    spec(RIPTIDE_INDEX_PRIMARY, true, c"PRIMARY", named),
                    spec(RIPTIDE_INDEX_SECONDARY, true, c"u", named),
                    spec(RIPTIDE_INDEX_SECONDARY, false, c"n", named),
                ],
                Layout::Hidden => vec![
                    spec(RIPTIDE_INDEX_HIDDEN_PK, false, c"", named),
                    spec(RIPTIDE_INDEX_SECONDARY, true, c"u", named),
                ],
            }
        };
        let some = |v: Vec<riptide_index_spec_t>, layout| {
            let n = v.len();
            (Some(v), n, layout)
        };
        match self {
            SpecArg::Good(l) => some(of(l, true), Some(l)),
            SpecArg::Unnamed(l) => some(of(l, false), Some(l)),
            SpecArg::NoIndex => (None, 0, None),
            SpecArg::SecondaryFirst => {
                let mut v = of(Layout::Pk, true);
                v.swap(0, 1);
                some(v, None)
            }
            SpecArg::TwoPrimaries => {
                let mut v = of(Layout::Pk, true);
                v[2].kind = RIPTIDE_INDEX_PRIMARY;
                some(v, None)
            }
            SpecArg::UnknownKind(k) => {
                let mut v = of(Layout::Hidden, true);
                v[1].kind = if (1..=3).contains(&k) { 0 } else { k };
                some(v, None)
            }
            SpecArg::NullSpecs(n) => (None, usize::from(n).max(1), None),
        }
    }
}

/// The row bytes of a write.
#[derive(Debug, Clone)]
enum RowArg {
    Data(Vec<u8>),
    /// `(NULL, 0)`: the empty row.
    Null,
    /// `(NULL, n > 0)`: refused.
    NullWithLen(u8),
}

/// Mostly bytes.
impl<'a> Arbitrary<'a> for RowArg {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let v = u.arbitrary::<u8>()?;
        Ok(match v {
            0..=219 => RowArg::Data(u.arbitrary()?),
            220..=243 => RowArg::Null,
            _ => RowArg::NullWithLen(v),
        })
    }
}

impl RowArg {
    fn owned(&self) -> Option<Vec<u8>> {
        match self {
            RowArg::Data(v) => Some(v.iter().copied().take(32).collect()),
            RowArg::Null | RowArg::NullWithLen(_) => None,
        }
    }

    fn is_bad(&self) -> bool {
        matches!(self, RowArg::NullWithLen(_))
    }

    fn arg(&self, owned: &Option<Vec<u8>>) -> (*const c_char, usize) {
        match (self, owned) {
            (RowArg::NullWithLen(n), _) => (null(), usize::from(*n).max(1)),
            (_, Some(v)) => (v.as_ptr().cast(), v.len()),
            _ => (null(), 0),
        }
    }
}

/// A primary key argument.
#[derive(Debug, Clone, Copy)]
enum PkArg {
    Domain(u8),
    /// A key the model knows in the table (a hidden row id, or a committed primary key).
    Ref(u8),
    Null,
    NullWithLen(u8),
    /// Longer than a secondary entry can hold (64 KiB).
    Long,
}

/// Mostly keys of the domain or known ones; NULL with a length and long keys now and then.
impl<'a> Arbitrary<'a> for PkArg {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let v = u.arbitrary::<u8>()?;
        Ok(match v {
            0..=127 => PkArg::Domain(v),
            128..=223 => PkArg::Ref(v),
            224..=243 => PkArg::Null,
            244..=252 => PkArg::NullWithLen(v),
            _ => PkArg::Long,
        })
    }
}

impl PkArg {
    fn is_bad(self) -> bool {
        matches!(self, PkArg::NullWithLen(_))
    }

    /// Longer than the secondary entries of a table of `layout` can hold: a write with it
    /// is refused before anything is written.
    fn too_long(self, layout: Option<Layout>) -> bool {
        matches!(self, PkArg::Long) && layout.is_some_and(|l| l.secondary() > 0)
    }
}

/// A key tuple argument (seeks, steps within, range ends, estimates).
#[derive(Arbitrary, Debug, Clone)]
enum TupleArg {
    Domain(u8),
    /// A whole secondary key.
    Key(u8),
    /// The first byte of a secondary key (0: a NULL part).
    Prefix(bool),
    Null,
    NullWithLen(u8),
    Raw(Vec<u8>),
}

impl TupleArg {
    fn owned(&self) -> Option<Vec<u8>> {
        match self {
            TupleArg::Domain(i) => Some(PK_DOMAIN[usize::from(*i) % PK_DOMAIN.len()].to_vec()),
            TupleArg::Key(k) => Some(vec![1, k % 4]),
            TupleArg::Prefix(p) => Some(vec![u8::from(*p)]),
            TupleArg::Null | TupleArg::NullWithLen(_) => None,
            TupleArg::Raw(v) => Some(v.iter().copied().take(16).collect()),
        }
    }

    fn is_bad(&self) -> bool {
        matches!(self, TupleArg::NullWithLen(_))
    }

    fn arg(&self, owned: &Option<Vec<u8>>) -> (*const c_char, usize) {
        match (self, owned) {
            (TupleArg::NullWithLen(n), _) => (null(), usize::from(*n).max(1)),
            (_, Some(v)) => (v.as_ptr().cast(), v.len()),
            _ => (null(), 0),
        }
    }
}

/// An optional tuple: absent and `Null` both pass `(NULL, 0)`, which means "no tuple".
fn opt_tuple(t: &Option<TupleArg>) -> (Option<Vec<u8>>, bool) {
    match t {
        None => (None, false),
        Some(t) => (t.owned(), t.is_bad()),
    }
}

/// The `(pointer, length)` pair of an optional tuple.
fn opt_tuple_arg(t: &Option<TupleArg>, owned: &Option<Vec<u8>>) -> (*const c_char, usize) {
    t.as_ref().map_or((null(), 0), |t| t.arg(owned))
}

/// The secondary keys passed with a row.
#[derive(Debug, Clone)]
enum KeysArg {
    /// What `keys_of` computes (from the row as the session reads it, for an old row).
    Computed,
    /// A wrong number of keys: refused.
    Count(u8),
    /// NULL keys with a nonzero count: refused.
    NullArray(u8),
    /// One key with NULL data and a nonzero length: refused.
    NullData(u8),
    /// Keys that need not match the row (the table's indexes may then disagree with it).
    Arbitrary(Vec<(u8, bool)>),
}

/// Mostly the computed keys: a call refused for its keys tests less than one that runs.
impl<'a> Arbitrary<'a> for KeysArg {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.arbitrary::<u8>()? {
            0..=183 => KeysArg::Computed,
            184..=215 => KeysArg::Arbitrary(u.arbitrary()?),
            216..=231 => KeysArg::Count(u.arbitrary()?),
            232..=243 => KeysArg::NullArray(u.arbitrary()?),
            _ => KeysArg::NullData(u.arbitrary()?),
        })
    }
}

/// The count passed with a NULL key array (1 to 3).
fn null_array_count(c: u8) -> usize {
    usize::from(c % 3) + 1
}

/// A converted key array and the storage its pointers point into.
struct KeyArray {
    _bytes: Box<[[u8; 2]]>,
    keys: Vec<riptide_hkey_t>,
    /// Pass NULL with this count.
    null_count: Option<usize>,
    /// Refused by the library.
    bad: bool,
    /// Keys that may not match the row.
    arbitrary: bool,
}

impl KeyArray {
    /// The keys `arg` says for a table with `n` secondary indexes and `row`.
    fn new(arg: &KeysArg, n: usize, row: &[u8]) -> KeyArray {
        let computed = keys_of(row);
        let mut list: Vec<([u8; 2], bool)> = computed.iter().copied().take(n).collect();
        let (mut null_count, mut bad, mut arbitrary, mut null_data) = (None, false, false, None);
        match arg {
            KeysArg::Computed => {}
            KeysArg::Count(c) => {
                let c = usize::from(*c) % 4;
                // (`c` entries either way, computed ones when `c` is right.)
                if c != n {
                    list = (0..c).map(|i| computed[i % 2]).collect();
                    bad = true;
                }
            }
            KeysArg::NullArray(c) => {
                null_count = Some(null_array_count(*c));
                bad = true;
            }
            KeysArg::NullData(i) => {
                null_data = Some(usize::from(*i) % n.max(1));
                bad = n > 0;
            }
            KeysArg::Arbitrary(v) => {
                for (i, k) in list.iter_mut().enumerate() {
                    if let Some(&(b, null)) = v.get(i) {
                        *k = if null {
                            ([0, 0], true)
                        } else {
                            ([1, b % 4], false)
                        };
                    }
                }
                arbitrary = true;
            }
        }
        let bytes: Box<[[u8; 2]]> = list.iter().map(|(b, _)| *b).collect();
        let keys = list
            .iter()
            .enumerate()
            .map(|(i, (_, has_null))| {
                let nul = null_data == Some(i);
                riptide_hkey_t {
                    data: if nul {
                        null()
                    } else {
                        bytes[i].as_ptr().cast()
                    },
                    len: 2,
                    has_null: *has_null,
                }
            })
            .collect();
        KeyArray {
            _bytes: bytes,
            keys,
            null_count,
            bad,
            arbitrary,
        }
    }

    /// The `(keys, nkeys)` pair to pass.
    fn ptr(&self) -> (*const riptide_hkey_t, usize) {
        match self.null_count {
            Some(n) => (null(), n),
            None if self.keys.is_empty() => (null(), 0),
            None => (self.keys.as_ptr(), self.keys.len()),
        }
    }
}

/// A part of an xid.
#[derive(Debug, Clone)]
enum XidPart {
    /// Unused so far (`g<n>`, `b<n>`).
    Fresh,
    Null,
    /// NULL with a nonzero length.
    NullWithLen,
    /// 65 bytes: too long.
    Long,
    Given(Vec<u8>),
}

/// Mostly fresh: a prepare refused for its xid tests less than one that runs.
impl<'a> Arbitrary<'a> for XidPart {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(match u.arbitrary::<u8>()? {
            0..=199 => XidPart::Fresh,
            200..=215 => XidPart::Null,
            216..=223 => XidPart::NullWithLen,
            224..=231 => XidPart::Long,
            _ => XidPart::Given(u.arbitrary()?),
        })
    }
}

/// One step of a sequence: half the time one of the operations on rows, which make and
/// check the data.
#[derive(Arbitrary, Debug, Clone)]
enum Step {
    Row(RowOp),
    Other(Op),
}

/// Operations on rows.
#[derive(Arbitrary, Debug, Clone)]
enum RowOp {
    /// Commits (three times in four) or rolls back the session; then, unless the flag is
    /// set, frees it and begins a new one of the same isolation in its place (a
    /// connection's next transaction).
    Finish(Pick, u8, Rare),
    /// Inserts `count % 8` rows with computed keys: primary keys from the domain from `first`
    /// on (hidden row ids in a table without a primary key), row bytes from `row`.
    Fill {
        session: Pick,
        table: Pick,
        first: u8,
        count: u8,
        row: u8,
    },
    Insert {
        session: Pick,
        table: Pick,
        pk: PkArg,
        keys: KeysArg,
        row: RowArg,
        null_ref: Rare,
        null_dup: Rare,
    },
    Update {
        session: Pick,
        table: Pick,
        old_pk: PkArg,
        /// None: the same key.
        new_pk: Option<PkArg>,
        keys: KeysArg,
        row: RowArg,
        scan: Pick,
        null_dup: Rare,
    },
    Delete {
        session: Pick,
        table: Pick,
        pk: PkArg,
        keys: KeysArg,
    },
    GetRow {
        session: Pick,
        table: Pick,
        pk: PkArg,
        lock: u8,
        nulls: u8,
    },
    Seek {
        session: Pick,
        cursor: Pick,
        tuple: TupleArg,
        how: u8,
        exact: bool,
        null_row: Rare,
    },
    Step {
        session: Pick,
        cursor: Pick,
        forward: bool,
        within: Option<TupleArg>,
        null_row: Rare,
    },
    /// Checks a table against the model through a fresh snapshot session (reusing the cursor
    /// when it is over the table's primary key).
    Verify(Pick, Pick),
}

/// The other operations: the handler and its dictionary, table handles, sessions,
/// statements and savepoints, KILL, cursors.
#[derive(Arbitrary, Debug, Clone)]
enum Op {
    /// Opens the handler when there is none (then the temporary tables go); with one, an
    /// open with a NULL database and out-parameter.
    HandlerOpen(Rare, Rare),
    HandlerClose(Rare),
    /// Releases the table handles, then frees the handler (after `riptide_handler_close`
    /// with the flag) and, unless the rare flag is set, opens it again (a server restart
    /// without the process ending: the temporary tables go) and opens every table.
    HandlerReopen(bool, Rare),
    SetKeyFormat(Rare, u8),
    Create {
        name: NameArg,
        specs: SpecArg,
        temporary: bool,
        autoinc: u64,
        null_handler: Rare,
    },
    Drop(NameArg, Rare),
    MarkTemporary(NameArg, bool),
    Rename(NameArg, NameArg),
    Truncate(NameArg),
    WaitPrepared(NameArg, bool),
    OpenTable(NameArg, Rare),
    ReleaseTable(Pick),
    TableInfo(Pick),
    ReserveAutoinc(Pick, u64, u64, u64, Rare),
    CapAutoinc(Pick, u64),
    ObserveAutoinc(Pick, u64),
    EstimateRange {
        table: Pick,
        index: u8,
        lower: Option<TupleArg>,
        lower_after: bool,
        upper: Option<TupleArg>,
        upper_inclusive: bool,
        limit: u16,
        null_count: Rare,
    },
    RefreshStatistics(Pick, Rare),
    Compact(Pick),
    Begin {
        isolation: u8,
        snapshot: bool,
        timeout: u8,
        null_out: Rare,
        null_handler: Rare,
    },
    SessionDestroy(Pick),
    SessionInfo(Pick),
    Interrupter(Pick, Rare),
    Fire(Pick),
    InterrupterDestroy(Pick),
    ClearInterrupt(Pick),
    SetLockTimeout(Pick, u8),
    Prepare(Pick, u8, XidPart, XidPart),
    BeginStatement(Pick),
    EndStatement(Pick, bool),
    /// Set, roll back to or release savepoint `id`.
    Savepoint(Pick, u8, u8),
    UnlockRow(Pick, Pick, PkArg, Rare),
    LockValue(Pick, Pick, u8, Bytes),
    CheckTable {
        session: Pick,
        table: Pick,
        null_fn: Rare,
        max: u8,
        nulls: u8,
    },
    CursorCreate(Pick, u8, Rare),
    CursorDestroy(Pick),
    SetMode(Pick, u8),
    SetKeysOnly(Pick, Pick, bool),
    SetRangeEnd(Pick, Option<TupleArg>, bool),
    Reset(Pick),
    /// First (`false`) or last.
    FirstLast(Pick, Pick, bool, Rare),
    CursorGet(Pick, Pick, PkArg, Rare),
    UnlockCurrent(Pick, Pick),
    /// Commits or rolls back, by xid, a transaction left prepared by a freed session.
    FinishPrepared(u8, bool),
    Calls,
    ToggleErrmsg,
}

/// What the model knows of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    Row(Vec<u8>),
    Absent,
    /// A failed write may or may not have written it.
    Unknown,
}

/// What a session wrote and has not committed, by (incarnation, primary key).
#[derive(Debug, Clone, Default)]
struct Overlay {
    writes: BTreeMap<(usize, Vec<u8>), Val>,
    /// Incarnations the session may have written rows of that `writes` does not name (a
    /// hidden-key insert whose row id it does not know).
    wild: BTreeSet<usize>,
    /// Incarnations whose secondary indexes may disagree with rows after these writes.
    tainted: BTreeSet<usize>,
}

impl Overlay {
    /// Whether it holds nothing.
    fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.wild.is_empty() && self.tainted.is_empty()
    }

    /// Whether it may hold a write to `inc`.
    fn touches(&self, inc: usize) -> bool {
        self.wild.contains(&inc) || self.writes.keys().any(|(i, _)| *i == inc)
    }

    /// Whether it surely holds a write to `inc`.
    fn writes_surely(&self, inc: usize) -> bool {
        self.writes
            .iter()
            .any(|((i, _), v)| *i == inc && *v != Val::Unknown)
    }

    /// A write of `keys` of `inc` failed: it may have written some of them, and a row
    /// without all its entries.
    fn failed(&mut self, inc: usize, keys: impl IntoIterator<Item = Vec<u8>>) {
        for k in keys {
            self.writes.insert((inc, k), Val::Unknown);
        }
        self.tainted.insert(inc);
    }

    /// Its writes to `inc` become unknown (a prepared transaction across a range delete).
    fn forget(&mut self, inc: usize) {
        for ((i, _), v) in self.writes.iter_mut() {
            if *i == inc {
                *v = Val::Unknown;
            }
        }
    }

    /// Its writes all become unknown.
    fn forget_all(&mut self) {
        for v in self.writes.values_mut() {
            *v = Val::Unknown;
        }
    }
}

/// One table as created: index ids never come back, so a dropped or truncated table is a
/// new incarnation, and handles of the old one go on reading (and writing) its key space.
#[derive(Debug)]
struct Incarnation {
    layout: Layout,
    key_format: u32,
    /// Committed rows: `Row` or `Unknown`.
    rows: BTreeMap<Vec<u8>, Val>,
    /// Committed rows may exist that `rows` does not name.
    wild: bool,
    /// The secondary indexes may disagree with the rows.
    tainted: bool,
    /// `tainted` was ever true (an old snapshot may still see it).
    ever_tainted: bool,
    /// Hidden row ids handed out by inserts.
    ids: Vec<Vec<u8>>,
}

impl Incarnation {
    /// A new, empty table.
    fn new(layout: Layout, key_format: u32) -> Incarnation {
        Incarnation {
            layout,
            key_format,
            rows: BTreeMap::new(),
            wild: false,
            tainted: false,
            ever_tainted: false,
            ids: Vec::new(),
        }
    }

    /// The committed value of `pk`, if known.
    fn committed(&self, pk: &[u8]) -> Option<Val> {
        match self.rows.get(pk) {
            Some(Val::Row(r)) => Some(Val::Row(r.clone())),
            Some(_) => None,
            None if self.wild => None,
            None => Some(Val::Absent),
        }
    }

    /// The number of committed rows, if known.
    fn count(&self) -> Option<usize> {
        (!self.wild && self.rows.values().all(|v| matches!(v, Val::Row(_))))
            .then_some(self.rows.len())
    }
}

/// Where a session's transaction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Active,
    Prepared,
    /// Committed or rolled back.
    Done,
}

/// An xid as its parts.
type Xid = (i32, Vec<u8>, Vec<u8>);

/// A live session and what the model knows of it.
struct SessionM {
    ptr: *mut riptide_hsession_t,
    /// Its `RIPTIDE_HISO_*`.
    isolation: i32,
    phase: Phase,
    /// Its results are checked (false after a status that may have ended its transaction).
    sure: bool,
    xid: Option<Xid>,
    overlay: Overlay,
    /// The savepoint stack as the session keeps it: (SQL savepoint id, overlay when set).
    marks: Vec<(Option<u64>, Overlay)>,
    /// Depth of the open statement's savepoint.
    statement: Option<usize>,
}

impl SessionM {
    /// A session just begun.
    fn new(ptr: *mut riptide_hsession_t, isolation: i32) -> SessionM {
        SessionM {
            ptr,
            isolation,
            phase: Phase::Active,
            sure: true,
            xid: None,
            overlay: Overlay::default(),
            marks: Vec::new(),
            statement: None,
        }
    }

    /// READ UNCOMMITTED or READ COMMITTED: plain reads see the newest committed rows.
    fn read_committed(&self) -> bool {
        self.isolation <= RIPTIDE_HISO_READ_COMMITTED
    }

    /// Whether its results are checked against the model: active, and nothing may have
    /// ended its transaction behind the model's back.
    fn checked(&self) -> bool {
        self.phase == Phase::Active && self.sure
    }

    /// The open statement ends with its savepoint (as the session does).
    fn fix_statement(&mut self) {
        if self.statement.is_some_and(|d| d > self.marks.len()) {
            self.statement = None;
        }
    }

    /// Releases the newest savepoint.
    fn release_top(&mut self) {
        self.marks.pop();
        self.fix_statement();
    }

    /// Rolls back to the newest savepoint and removes it.
    fn rollback_top(&mut self) {
        if let Some((_, o)) = self.marks.pop() {
            self.overlay = o;
        }
        self.fix_statement();
    }

    /// `riptide_hsession_end_statement` (also the first step of a prepare).
    fn end_statement(&mut self, success: bool) {
        let Some(d) = self.statement else {
            return;
        };
        while self.marks.len() > d {
            self.release_top();
        }
        if self.marks.len() == d {
            if success {
                self.release_top();
            } else {
                self.rollback_top();
            }
        }
        self.statement = None;
    }

    /// Committed or rolled back: nothing of it is left.
    fn finish(&mut self) {
        self.phase = Phase::Done;
        self.overlay = Overlay::default();
        self.marks.clear();
        self.statement = None;
    }
}

/// A live cursor: the incarnation and index it reads, its mode, and whether it reads keys
/// only (granted by `riptide_hcursor_set_keys_only`, until the mode changes or a reset).
#[derive(Debug, Clone, Copy)]
struct CursorH {
    ptr: *mut riptide_hcursor_t,
    inc: usize,
    index: usize,
    mode: i32,
    keys_only: bool,
}

/// An empty `riptide_hrow_t`.
const NO_ROW: riptide_hrow_t = riptide_hrow_t {
    found: false,
    pk: null(),
    pk_len: 0,
    key: null(),
    key_len: 0,
    row: null(),
    row_len: 0,
};

/// A row a cursor read, copied out of the cursor.
#[derive(Debug)]
struct RowView {
    pk: Vec<u8>,
    key: Vec<u8>,
    row: Option<Vec<u8>>,
}

/// What the CHECK TABLE callback works with.
struct CheckCtx {
    keys: [[u8; 2]; 2],
    undecodable: u64,
    wrong_count: bool,
}

/// The CHECK TABLE callback: the keys of a row as `keys_of` computes them.
///
/// # Safety
///
/// `ctx` is a `CheckCtx` nothing else uses during the check; `pk` and `row` are NULL or
/// readable for their lengths; `keys` has `nkeys` writable entries.
unsafe extern "C" fn keys_callback(
    ctx: *mut c_void,
    pk: *const c_char,
    pk_len: usize,
    row: *const c_char,
    row_len: usize,
    keys: *mut riptide_hkey_t,
    nkeys: usize,
) -> bool {
    // SAFETY: the harness passes its own `CheckCtx`, used by nothing else during the check.
    let ctx = unsafe { &mut *ctx.cast::<CheckCtx>() };
    // SAFETY: the library passes readable bytes for the lengths (or NULL with length 0).
    let (pk, row) = unsafe { (view(pk, pk_len), view(row, row_len)) };
    std::hint::black_box(pk.iter().map(|&b| u32::from(b)).sum::<u32>());
    if row.first() == Some(&UNDECODABLE) {
        ctx.undecodable += 1;
        return false;
    }
    let computed = keys_of(row);
    if nkeys > computed.len() {
        ctx.wrong_count = true;
        return false;
    }
    for (i, (k, has_null)) in computed.iter().take(nkeys).enumerate() {
        ctx.keys[i] = *k;
        // SAFETY: `keys` has `nkeys` writable entries; the data stays in `ctx` until the next
        // call.
        unsafe {
            *keys.add(i) = riptide_hkey_t {
                data: ctx.keys[i].as_ptr().cast(),
                len: 2,
                has_null: *has_null,
            };
        }
    }
    true
}

/// `len` bytes at `p` (NULL: none).
///
/// # Safety
///
/// `p` is NULL or readable for `len` bytes during `'a`.
unsafe fn view<'a>(p: *const c_char, len: usize) -> &'a [u8] {
    if p.is_null() {
        assert_eq!(len, 0, "NULL bytes with a length");
        return &[];
    }
    // SAFETY: per this function's contract.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// Whether `RIPTIDE_FUZZ_TRACE` is set: then every call and its status is printed (to read
/// what a crashing input does: `RIPTIDE_FUZZ_TRACE=1 cargo +nightly fuzz run
/// handler_sequence <input>`).
fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var_os("RIPTIDE_FUZZ_TRACE").is_some())
}

/// A status of a lock wait that failed (nothing else may replace a duplicate key error).
fn lock_failure(st: riptide_status_t) -> bool {
    matches!(
        st,
        RIPTIDE_TIMED_OUT | RIPTIDE_INTERRUPTED | RIPTIDE_DEADLOCK
    )
}

/// Live handles and the model. Slots are removed on free, so a freed pointer is never used
/// again.
struct State {
    db: *mut riptide_db_t,
    handler: *mut riptide_handler_t,
    key_format: u32,
    incs: Vec<Incarnation>,
    /// Table name -> (incarnation, temporary).
    names: BTreeMap<Vec<u8>, (usize, bool)>,
    /// Table handles and their incarnations.
    tables: Vec<(*mut riptide_htable_t, usize)>,
    cursors: Vec<CursorH>,
    sessions: Vec<SessionM>,
    interrupters: Vec<*mut riptide_hinterrupt_t>,
    /// Transactions left prepared by freed sessions.
    orphans: Vec<(Xid, Overlay)>,
    xids: u64,
    errmsg_null: bool,
}

impl State {
    /// Runs one fallible call and checks its status and message ([`checked_call`]).
    fn call(
        &self,
        what: &str,
        f: impl FnOnce(*mut *mut c_char) -> riptide_status_t,
    ) -> riptide_status_t {
        let st = checked_call(what, self.errmsg_null, f);
        if trace() {
            eprintln!("{what} -> {st:?}");
        }
        st
    }

    /// When `refused`, the call must have failed with `RIPTIDE_INVALID_ARGUMENT`.
    fn expect_invalid(st: riptide_status_t, refused: bool, what: &str) {
        if refused {
            assert_eq!(
                st, RIPTIDE_INVALID_ARGUMENT,
                "{what}: accepted a NULL handle or out-parameter, NULL data with a length \
                 or an unknown value"
            );
        }
    }

    /// The session `p` names (its slot, or None and NULL).
    fn session(&self, p: Pick) -> (Option<usize>, *mut riptide_hsession_t) {
        if p.0 == 0 || self.sessions.is_empty() {
            return (None, null_mut());
        }
        let i = usize::from(p.0 - 1) % self.sessions.len();
        (Some(i), self.sessions[i].ptr)
    }

    /// The table handle `p` names (its incarnation, or None and NULL).
    fn table(&self, p: Pick) -> (Option<usize>, *const riptide_htable_t) {
        match pick(&self.tables, p) {
            Some((t, inc)) => (Some(inc), t.cast_const()),
            None => (None, null()),
        }
    }

    /// The cursor `p` names (its slot, or None and NULL).
    fn cursor(&self, p: Pick) -> (Option<usize>, *mut riptide_hcursor_t) {
        if p.0 == 0 || self.cursors.is_empty() {
            return (None, null_mut());
        }
        let i = usize::from(p.0 - 1) % self.cursors.len();
        (Some(i), self.cursors[i].ptr)
    }

    /// The bytes of a primary key argument for incarnation `inc` (None when refused).
    fn pk_bytes(&self, pk: PkArg, inc: Option<usize>) -> Option<Vec<u8>> {
        match pk {
            PkArg::Domain(i) => Some(PK_DOMAIN[usize::from(i) % PK_DOMAIN.len()].to_vec()),
            PkArg::Ref(i) => {
                let known: Vec<&Vec<u8>> = match inc.map(|i| &self.incs[i]) {
                    Some(m) if m.layout == Layout::Hidden => m.ids.iter().collect(),
                    Some(m) => m.rows.keys().collect(),
                    None => Vec::new(),
                };
                Some(match known.get(usize::from(i) % known.len().max(1)) {
                    Some(k) => (*k).clone(),
                    None => PK_DOMAIN[usize::from(i) % PK_DOMAIN.len()].to_vec(),
                })
            }
            PkArg::Null => Some(Vec::new()),
            PkArg::NullWithLen(_) => None,
            PkArg::Long => Some(vec![1; 65_536]),
        }
    }

    /// The `(pointer, length)` pair of a primary key argument.
    fn pk_arg(pk: PkArg, owned: &Option<Vec<u8>>) -> (*const c_char, usize) {
        match (pk, owned) {
            (PkArg::NullWithLen(n), _) => (null(), usize::from(n).max(1)),
            (PkArg::Null, _) | (_, None) => (null(), 0),
            (_, Some(v)) => (v.as_ptr().cast(), v.len()),
        }
    }

    /// What session `si` sees of `pk` in `inc` by a current read (its own write, else the
    /// newest committed row), if the model knows.
    fn current(&self, si: usize, inc: usize, pk: &[u8]) -> Option<Val> {
        let o = &self.sessions[si].overlay;
        match o.writes.get(&(inc, pk.to_vec())) {
            Some(Val::Unknown) => None,
            Some(v) => Some(v.clone()),
            None if o.wild.contains(&inc) => None,
            None => self.incs[inc].committed(pk),
        }
    }

    /// Notes a status that may have ended the session's transaction.
    fn after(&mut self, si: Option<usize>, st: riptide_status_t) {
        if let Some(si) = si
            && matches!(st, RIPTIDE_CONFLICT | RIPTIDE_DEADLOCK)
        {
            self.sessions[si].sure = false;
        }
    }

    /// Every prepared transaction's writes (sessions and orphans).
    fn prepared_overlays(&mut self) -> impl Iterator<Item = &mut Overlay> {
        self.sessions
            .iter_mut()
            .filter(|s| s.phase == Phase::Prepared)
            .map(|s| &mut s.overlay)
            .chain(self.orphans.iter_mut().map(|(_, o)| o))
    }

    /// A committed range delete of every index of `inc` (DROP, TRUNCATE, CREATE over a name).
    fn range_delete(&mut self, inc: usize) {
        let m = &mut self.incs[inc];
        m.rows.clear();
        m.wild = false;
        m.tainted = false;
        // Whether a transaction prepared before the range delete keeps its rows of it when
        // committed afterwards is not for the model to say.
        for o in self.prepared_overlays() {
            o.forget(inc);
        }
    }

    /// A committed transaction's writes.
    fn apply(&mut self, o: Overlay) {
        for ((inc, pk), v) in o.writes {
            let rows = &mut self.incs[inc].rows;
            match v {
                Val::Row(r) => rows.insert(pk, Val::Row(r)),
                Val::Absent => rows.remove(&pk),
                Val::Unknown => rows.insert(pk, Val::Unknown),
            };
        }
        for inc in o.wild {
            self.incs[inc].wild = true;
        }
        for inc in o.tainted {
            self.incs[inc].tainted = true;
            self.incs[inc].ever_tainted = true;
        }
    }

    /// The handler opened: temporary tables are dropped.
    fn drop_temporaries(&mut self) {
        let temps: Vec<Vec<u8>> = self
            .names
            .iter()
            .filter(|(_, (_, t))| *t)
            .map(|(n, _)| n.clone())
            .collect();
        for n in temps {
            if let Some((inc, _)) = self.names.remove(&n) {
                self.range_delete(inc);
            }
        }
    }

    /// Releases every table handle (before the handler goes: see the module docs).
    fn release_tables(&mut self) {
        for (t, _) in self.tables.drain(..) {
            // SAFETY: live, removed from the list.
            unsafe { riptide_htable_release(t) };
        }
    }

    /// Frees every handle, children first, then the handler and the database.
    fn free_all(&mut self) {
        // SAFETY (all blocks below): each pointer is live, came from the library, and is
        // removed from its list as it is freed, so it is freed exactly once.
        for c in self.cursors.drain(..) {
            unsafe { riptide_hcursor_destroy(c.ptr) };
        }
        for i in self.interrupters.drain(..) {
            unsafe { riptide_hinterrupt_destroy(i) };
        }
        for s in self.sessions.drain(..) {
            unsafe { riptide_hsession_destroy(s.ptr) };
        }
        self.release_tables();
        unsafe { riptide_handler_destroy(self.handler) };
        self.handler = null_mut();
        unsafe { riptide_db_destroy(self.db) };
        self.db = null_mut();
    }

    /// Reads a cursor's row out of `row` after a read returned `st` (the views are read
    /// now, before the next call on the cursor).
    fn row_view(&self, what: &str, st: riptide_status_t, row: &riptide_hrow_t) -> Option<RowView> {
        if st != RIPTIDE_OK || !row.found {
            assert!(
                !row.found
                    && row.pk.is_null()
                    && row.pk_len == 0
                    && row.key.is_null()
                    && row.key_len == 0
                    && row.row.is_null()
                    && row.row_len == 0,
                "{what}: {st:?} left a row {row:?}"
            );
            return None;
        }
        assert!(
            !row.pk.is_null() && !row.key.is_null(),
            "{what}: NULL views"
        );
        // SAFETY: views into the cursor, readable for their lengths until its next call.
        unsafe {
            Some(RowView {
                pk: view(row.pk, row.pk_len).to_vec(),
                key: view(row.key, row.key_len).to_vec(),
                row: (!row.row.is_null()).then(|| view(row.row, row.row_len).to_vec()),
            })
        }
    }

    /// Checks a row cursor `ci` read through session `si`: its shape, and the session's own
    /// writes.
    fn check_read(&self, what: &str, si: usize, ci: usize, r: &RowView) {
        let c = self.cursors[ci];
        if c.index == 0 {
            assert!(r.key.is_empty(), "{what}: a primary key entry with a key");
        } else {
            assert_eq!(r.key.len(), 2, "{what}: a secondary key of {:?}", r.key);
        }
        assert_eq!(
            r.row.is_none(),
            c.keys_only,
            "{what}: row bytes {} with keys only {}",
            r.row.is_some(),
            c.keys_only
        );
        let s = &self.sessions[si];
        if !s.checked() {
            return;
        }
        match (s.overlay.writes.get(&(c.inc, r.pk.clone())), &r.row) {
            (Some(Val::Row(mine)), Some(got)) => {
                assert_eq!(got, mine, "{what}: the session's own row reads back wrong")
            }
            (Some(Val::Absent), _) if c.index > 0 => {
                panic!("{what}: a row the session deleted was returned")
            }
            _ => {}
        }
    }

    /// Runs one of the other operations and checks what it returned.
    fn step(&mut self, op: &Op) {
        let what = format!("{op:?}");
        if trace() {
            eprintln!("== {what}");
        }
        match op {
            Op::HandlerOpen(null_db, null_out) => {
                if !self.handler.is_null() {
                    // SAFETY: NULL database and out-parameter.
                    let st = self.call(&what, |e| unsafe {
                        riptide_handler_open(null_mut(), null_mut(), e)
                    });
                    assert_eq!(st, RIPTIDE_INVALID_ARGUMENT);
                    return;
                }
                let db = if null_db.set() { null_mut() } else { self.db };
                let mut h = null_mut();
                let out: *mut *mut riptide_handler_t =
                    if null_out.set() { null_mut() } else { &mut h };
                // SAFETY: `db` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe { riptide_handler_open(db, out, e) });
                Self::expect_invalid(st, null_db.set() || null_out.set(), &what);
                if st == RIPTIDE_OK {
                    assert!(!h.is_null());
                    self.handler = h;
                    // A new handler starts at key format 0.
                    self.key_format = 0;
                    self.drop_temporaries();
                } else if !null_out.set() {
                    assert!(h.is_null(), "{what}: a failed open left a handle");
                }
                if !null_db.set() && !null_out.set() {
                    assert_eq!(st, RIPTIDE_OK, "{what}");
                }
            }
            Op::HandlerClose(null) => {
                let h = if null.set() { null_mut() } else { self.handler };
                // SAFETY: NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_handler_close(h, e) });
                Self::expect_invalid(st, h.is_null(), &what);
                if !h.is_null() {
                    assert_eq!(st, RIPTIDE_OK, "{what}");
                }
            }
            Op::HandlerReopen(close, stay_closed) => {
                self.release_tables();
                let h = self.handler;
                if *close && !h.is_null() {
                    // SAFETY: live.
                    let st = self.call(&what, |e| unsafe { riptide_handler_close(h, e) });
                    assert_eq!(st, RIPTIDE_OK, "{what}");
                }
                // SAFETY: NULL or live, not used afterwards.
                unsafe { riptide_handler_destroy(h) };
                self.handler = null_mut();
                if stay_closed.set() {
                    return;
                }
                self.step(&Op::HandlerOpen(Rare(0), Rare(0)));
                let names: Vec<Vec<u8>> = self.names.keys().cloned().collect();
                for n in names {
                    if let Some(i) = NAMES.iter().position(|k| *k == n.as_slice()) {
                        self.step(&Op::OpenTable(NameArg::Name(i as u8), Rare(0)));
                    }
                }
            }
            Op::SetKeyFormat(null, v) => {
                let h = if null.set() { null_mut() } else { self.handler };
                let format = if *v < 250 {
                    u32::from(*v % 4)
                } else {
                    127 + u32::from(*v - 249)
                };
                // SAFETY: NULL or live.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_set_key_format(h, format, e)
                });
                Self::expect_invalid(st, h.is_null() || format > 127, &what);
                if !h.is_null() && format <= 127 {
                    assert_eq!(st, RIPTIDE_OK, "{what}");
                    self.key_format = format;
                }
            }
            Op::Create {
                name,
                specs,
                temporary,
                autoinc,
                null_handler,
            } => {
                let h = if null_handler.set() {
                    null_mut()
                } else {
                    self.handler
                };
                let (n, np, nl) = name.arg();
                let (list, count, layout) = specs.specs();
                let sp = list.as_ref().map_or(null(), |v| v.as_ptr());
                let st = self.call(&what, |e| {
                    // SAFETY: `h` NULL or live; the name and specs readable for their lengths
                    // (or NULL), the spec names NUL-terminated or NULL.
                    unsafe {
                        if *temporary {
                            riptide_handler_create_temporary_table(
                                h, np, nl, sp, count, *autoinc, e,
                            )
                        } else {
                            riptide_handler_create_table(h, np, nl, sp, count, *autoinc, e)
                        }
                    }
                });
                let refused = h.is_null() || layout.is_none() || n.is_none_or(<[u8]>::is_empty);
                Self::expect_invalid(st, refused, &what);
                let (Some(n), Some(layout)) = (n, layout) else {
                    return;
                };
                if refused {
                    return;
                }
                assert_eq!(st, RIPTIDE_OK, "{what}");
                if let Some((old, _)) = self.names.remove(n) {
                    self.range_delete(old);
                }
                self.incs.push(Incarnation::new(layout, self.key_format));
                self.names
                    .insert(n.to_vec(), (self.incs.len() - 1, *temporary));
            }
            Op::Drop(name, null_existed) => {
                let h = self.handler;
                let (n, np, nl) = name.arg();
                let mut existed = false;
                let out: *mut bool = if null_existed.set() {
                    null_mut()
                } else {
                    &mut existed
                };
                // SAFETY: `h` NULL or live; the name per contract; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_drop_table(h, np, nl, out, e)
                });
                Self::expect_invalid(st, h.is_null() || n.is_none(), &what);
                let Some(n) = n else { return };
                if h.is_null() {
                    return;
                }
                assert_eq!(st, RIPTIDE_OK, "{what}");
                let bound = self.names.remove(n);
                if !null_existed.set() {
                    assert_eq!(existed, bound.is_some(), "{what}: existed");
                }
                if let Some((inc, _)) = bound {
                    self.range_delete(inc);
                }
            }
            Op::MarkTemporary(name, temporary) => {
                let h = self.handler;
                let (n, np, nl) = name.arg();
                // SAFETY: `h` NULL or live; the name per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_mark_temporary(h, np, nl, *temporary, e)
                });
                Self::expect_invalid(st, h.is_null() || n.is_none(), &what);
                let Some(n) = n else { return };
                if h.is_null() {
                    return;
                }
                match self.names.get_mut(n) {
                    Some((_, t)) => {
                        assert_eq!(st, RIPTIDE_OK, "{what}");
                        *t = *temporary;
                    }
                    None => assert_eq!(st, RIPTIDE_NOT_FOUND, "{what}"),
                }
            }
            Op::Rename(from, to) => {
                let h = self.handler;
                let ((f, fp, fl), (t, tp, tl)) = (from.arg(), to.arg());
                // SAFETY: `h` NULL or live; the names per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_rename_table(h, fp, fl, tp, tl, e)
                });
                Self::expect_invalid(st, h.is_null() || f.is_none() || t.is_none(), &what);
                let (Some(f), Some(t)) = (f, t) else { return };
                if h.is_null() {
                    return;
                }
                if !self.names.contains_key(f) {
                    assert_eq!(st, RIPTIDE_NOT_FOUND, "{what}");
                } else if self.names.contains_key(t) {
                    assert_eq!(st, RIPTIDE_BUSY, "{what}");
                } else {
                    assert_eq!(st, RIPTIDE_OK, "{what}");
                    if let Some(v) = self.names.remove(f) {
                        self.names.insert(t.to_vec(), v);
                    }
                }
            }
            Op::Truncate(name) => {
                let h = self.handler;
                let (n, np, nl) = name.arg();
                // SAFETY: `h` NULL or live; the name per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_truncate_table(h, np, nl, e)
                });
                Self::expect_invalid(st, h.is_null() || n.is_none(), &what);
                let Some(n) = n else { return };
                if h.is_null() {
                    return;
                }
                let Some(&(old, temporary)) = self.names.get(n) else {
                    assert_eq!(st, RIPTIDE_NOT_FOUND, "{what}");
                    return;
                };
                assert_eq!(st, RIPTIDE_OK, "{what}");
                self.range_delete(old);
                let layout = self.incs[old].layout;
                self.incs.push(Incarnation::new(layout, self.key_format));
                self.names
                    .insert(n.to_vec(), (self.incs.len() - 1, temporary));
            }
            Op::WaitPrepared(name, wait) => {
                let h = self.handler;
                let (n, np, nl) = name.arg();
                let ms = u64::from(*wait);
                // SAFETY: `h` NULL or live; the name per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_wait_prepared(h, np, nl, ms, e)
                });
                Self::expect_invalid(st, h.is_null() || n.is_none(), &what);
                let Some(n) = n else { return };
                if h.is_null() {
                    return;
                }
                let Some(&(inc, _)) = self.names.get(n) else {
                    assert_eq!(st, RIPTIDE_OK, "{what}: an unknown table");
                    return;
                };
                let (mut maybe, mut surely) = (false, false);
                for o in self.prepared_overlays() {
                    maybe |= o.touches(inc);
                    surely |= o.writes_surely(inc);
                }
                if surely {
                    assert_eq!(st, RIPTIDE_TIMED_OUT, "{what}: a prepared write");
                } else if !maybe {
                    assert_eq!(st, RIPTIDE_OK, "{what}: no prepared write");
                }
            }
            Op::OpenTable(name, null_out) => {
                let h = self.handler;
                let (n, np, nl) = name.arg();
                let mut t = null_mut();
                let out: *mut *mut riptide_htable_t =
                    if null_out.set() { null_mut() } else { &mut t };
                // SAFETY: `h` NULL or live; the name per contract; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_handler_open_table(h, np, nl, out, e)
                });
                Self::expect_invalid(st, h.is_null() || n.is_none() || null_out.set(), &what);
                if st == RIPTIDE_OK {
                    assert!(!t.is_null());
                } else {
                    assert!(t.is_null(), "{what}: a failed open left a handle");
                }
                let Some(n) = n else { return };
                if h.is_null() || null_out.set() {
                    return;
                }
                let Some(&(inc, _)) = self.names.get(n) else {
                    assert_eq!(st, RIPTIDE_NOT_FOUND, "{what}");
                    return;
                };
                assert_eq!(st, RIPTIDE_OK, "{what}");
                let m = &self.incs[inc];
                // SAFETY: live.
                unsafe {
                    assert_eq!(riptide_htable_index_count(t), 1 + m.layout.secondary());
                    assert_eq!(riptide_htable_key_format(t), m.key_format, "{what}");
                }
                if self.tables.len() < MAX_TABLES {
                    self.tables.push((t, inc));
                } else {
                    // SAFETY: live, not kept.
                    unsafe { riptide_htable_release(t) };
                }
            }
            Op::ReleaseTable(p) => {
                if let Some((t, _)) = take(&mut self.tables, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_htable_release(t) };
                }
            }
            Op::TableInfo(p) => {
                let (inc, t) = self.table(*p);
                // SAFETY: NULL or live.
                let (n, f, rows, next) = unsafe {
                    (
                        riptide_htable_index_count(t),
                        riptide_htable_key_format(t),
                        riptide_htable_row_estimate(t),
                        riptide_htable_autoinc_next(t),
                    )
                };
                std::hint::black_box(rows);
                match inc {
                    None => assert_eq!((n, f, rows, next), (0, 0, 0, 0), "{what}: NULL"),
                    Some(inc) => {
                        let m = &self.incs[inc];
                        assert_eq!(n, 1 + m.layout.secondary(), "{what}");
                        assert_eq!(f, m.key_format, "{what}");
                        assert!(next >= 1, "{what}: auto-increment at 0");
                    }
                }
            }
            Op::ReserveAutoinc(p, count, offset, increment, null_first) => {
                let (_, t) = self.table(*p);
                // SAFETY: NULL or live.
                let before = unsafe { riptide_htable_autoinc_next(t) };
                let mut first = 0u64;
                let out: *mut u64 = if null_first.set() {
                    null_mut()
                } else {
                    &mut first
                };
                // SAFETY: `t` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_htable_reserve_autoinc(t, *count, *offset, *increment, out, e)
                });
                Self::expect_invalid(st, t.is_null() || null_first.set(), &what);
                if st == RIPTIDE_OK {
                    // SAFETY: live.
                    let after = unsafe { riptide_htable_autoinc_next(t) };
                    assert!(
                        first >= before,
                        "{what}: {first} below the counter {before}"
                    );
                    assert!(after >= first, "{what}: the counter {after} below {first}");
                }
            }
            Op::CapAutoinc(p, max) => {
                let (_, t) = self.table(*p);
                // SAFETY: NULL or live.
                unsafe {
                    let before = riptide_htable_autoinc_next(t);
                    riptide_htable_cap_autoinc(t, *max);
                    let after = riptide_htable_autoinc_next(t);
                    assert!(
                        after <= before && after <= max.saturating_add(1),
                        "{what}: {before} -> {after}"
                    );
                }
            }
            Op::ObserveAutoinc(p, value) => {
                let (_, t) = self.table(*p);
                // SAFETY: NULL or live.
                let st = self.call(&what, |e| unsafe {
                    riptide_htable_observe_autoinc(t, *value, e)
                });
                Self::expect_invalid(st, t.is_null(), &what);
                if st == RIPTIDE_OK {
                    // SAFETY: live.
                    let after = unsafe { riptide_htable_autoinc_next(t) };
                    assert!(after >= value.saturating_add(1), "{what}: next {after}");
                }
            }
            Op::EstimateRange {
                table,
                index,
                lower,
                lower_after,
                upper,
                upper_inclusive,
                limit,
                null_count,
            } => {
                let (inc, t) = self.table(*table);
                let index = usize::from(*index % 4);
                let ((lo, lbad), (hi, hbad)) = (opt_tuple(lower), opt_tuple(upper));
                let ((lp, ll), (hp, hl)) = (opt_tuple_arg(lower, &lo), opt_tuple_arg(upper, &hi));
                let mut count = u64::MAX;
                let out: *mut u64 = if null_count.set() {
                    null_mut()
                } else {
                    &mut count
                };
                let limit = if *limit == 0 {
                    1 << 20
                } else {
                    u64::from(*limit)
                };
                // SAFETY: `t` NULL or live; bounds per contract; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_htable_estimate_range(
                        t,
                        index,
                        lp,
                        ll,
                        *lower_after,
                        hp,
                        hl,
                        *upper_inclusive,
                        limit,
                        out,
                        e,
                    )
                });
                let bad_index = inc.is_some_and(|i| index > self.incs[i].layout.secondary());
                Self::expect_invalid(
                    st,
                    t.is_null() || null_count.set() || lbad || hbad || bad_index,
                    &what,
                );
                let Some(inc) = inc else { return };
                // The whole primary key (or an untainted secondary index): every committed row.
                let m = &self.incs[inc];
                if st == RIPTIDE_OK
                    && lo.is_none()
                    && hi.is_none()
                    && (index == 0 || !m.tainted)
                    && limit == 1 << 20
                    && let Some(n) = m.count()
                {
                    assert_eq!(count, n as u64, "{what}: committed rows");
                }
            }
            Op::RefreshStatistics(p, null_rows) => {
                let (inc, t) = self.table(*p);
                let mut rows = u64::MAX;
                let out: *mut u64 = if null_rows.set() {
                    null_mut()
                } else {
                    &mut rows
                };
                // SAFETY: `t` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_htable_refresh_statistics(t, out, e)
                });
                Self::expect_invalid(st, t.is_null(), &what);
                if st == RIPTIDE_OK && !null_rows.set() {
                    // SAFETY: live.
                    assert_eq!(unsafe { riptide_htable_row_estimate(t) }, rows, "{what}");
                    if let Some(n) = inc.and_then(|i| self.incs[i].count()) {
                        assert_eq!(rows, n as u64, "{what}: committed rows");
                    }
                }
            }
            Op::Compact(p) => {
                let (_, t) = self.table(*p);
                // SAFETY: NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_htable_compact(t, e) });
                Self::expect_invalid(st, t.is_null(), &what);
            }
            Op::Begin {
                isolation,
                snapshot,
                timeout,
                null_out,
                null_handler,
            } => {
                if self.sessions.len() >= MAX_SESSIONS {
                    return;
                }
                let h = if null_handler.set() {
                    null_mut()
                } else {
                    self.handler
                };
                let iso = pick_enum(*isolation, &[0, 1, 2, 3]);
                // 0 is the 50 s default: replaced right after.
                let ms = u64::from(timeout % 4);
                let mut s = null_mut();
                let out: *mut *mut riptide_hsession_t =
                    if null_out.set() { null_mut() } else { &mut s };
                let st = self.call(&what, |e| {
                    // SAFETY: `h` NULL or live; `out` NULL or writable.
                    unsafe {
                        if *snapshot {
                            riptide_hsession_begin_snapshot(h, iso, ms, out, e)
                        } else {
                            riptide_hsession_begin(h, iso, ms, out, e)
                        }
                    }
                });
                Self::expect_invalid(
                    st,
                    h.is_null() || null_out.set() || !(0..4).contains(&iso),
                    &what,
                );
                if st != RIPTIDE_OK {
                    assert!(s.is_null(), "{what}: a failed begin left a handle");
                    return;
                }
                assert!(!s.is_null());
                if ms == 0 {
                    // SAFETY: live.
                    let st = self.call(&what, |e| unsafe {
                        riptide_hsession_set_lock_timeout(s, 1, e)
                    });
                    assert_eq!(st, RIPTIDE_OK);
                }
                if *snapshot {
                    // SAFETY: live.
                    assert!(unsafe { riptide_hsession_has_snapshot(s) }, "{what}");
                }
                self.sessions.push(SessionM::new(s, iso));
            }
            Op::SessionDestroy(p) => {
                if let Some(s) = take(&mut self.sessions, *p) {
                    if s.phase == Phase::Prepared
                        && let Some(x) = s.xid
                    {
                        self.orphans.push((x, s.overlay));
                    }
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_hsession_destroy(s.ptr) };
                }
            }
            Op::SessionInfo(p) => {
                let (_, s) = self.session(*p);
                // SAFETY: NULL or live.
                let (snap, mem) = unsafe {
                    (
                        riptide_hsession_has_snapshot(s),
                        riptide_hsession_approximate_memory(s),
                    )
                };
                if s.is_null() {
                    assert!(!snap && mem == 0, "{what}: NULL");
                }
            }
            Op::Interrupter(p, null_out) => {
                if self.interrupters.len() >= MAX_INTERRUPTERS {
                    return;
                }
                let (_, s) = self.session(*p);
                let mut i = null_mut();
                let out: *mut *mut riptide_hinterrupt_t =
                    if null_out.set() { null_mut() } else { &mut i };
                // SAFETY: `s` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_hsession_interrupter(s, out, e)
                });
                Self::expect_invalid(st, s.is_null() || null_out.set(), &what);
                if st == RIPTIDE_OK {
                    assert!(!i.is_null());
                    self.interrupters.push(i);
                }
            }
            Op::Fire(p) => {
                let i = pick(&self.interrupters, *p).unwrap_or(null_mut());
                // SAFETY: NULL or live (its session may be gone).
                unsafe { riptide_hinterrupt_fire(i) };
            }
            Op::InterrupterDestroy(p) => {
                if let Some(i) = take(&mut self.interrupters, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_hinterrupt_destroy(i) };
                }
            }
            Op::ClearInterrupt(p) => {
                let (_, s) = self.session(*p);
                // SAFETY: NULL or live.
                unsafe { riptide_hsession_clear_interrupt(s) };
            }
            Op::SetLockTimeout(p, ms) => {
                let (_, s) = self.session(*p);
                let ms = u64::from(ms % 4);
                // SAFETY: NULL or live.
                let st = self.call(&what, |e| unsafe {
                    riptide_hsession_set_lock_timeout(s, ms, e)
                });
                Self::expect_invalid(st, s.is_null(), &what);
                if !s.is_null() {
                    assert_eq!(st, RIPTIDE_OK, "{what}");
                }
            }
            Op::Prepare(p, fid, gtrid, bqual) => {
                let (si, s) = self.session(*p);
                let fid = if fid % 8 == 7 {
                    -1
                } else {
                    i32::from(*fid % 8)
                };
                self.xids += 1;
                let part = |x: &XidPart, fresh: String| -> (Option<Vec<u8>>, bool) {
                    match x {
                        XidPart::Fresh => (Some(fresh.into_bytes()), false),
                        XidPart::Null => (None, false),
                        XidPart::NullWithLen => (None, true),
                        XidPart::Long => (Some(vec![b'x'; 65]), false),
                        XidPart::Given(v) => (Some(v.iter().copied().take(70).collect()), false),
                    }
                };
                let (g, gbad) = part(gtrid, format!("g{}", self.xids));
                let (b, bbad) = part(bqual, format!("b{}", self.xids));
                let arg = |v: &Option<Vec<u8>>, bad: bool| match (v, bad) {
                    (_, true) => (null(), 3),
                    (Some(v), _) => (v.as_ptr().cast::<c_char>(), v.len()),
                    (None, _) => (null(), 0),
                };
                let ((gp, gl), (bp, bl)) = (arg(&g, gbad), arg(&b, bbad));
                // SAFETY: `s` NULL or live; the xid parts per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_hsession_prepare(s, fid, gp, gl, bp, bl, e)
                });
                let bad_xid = gbad || bbad || fid == -1 || !(1..=64).contains(&gl) || bl > 64;
                Self::expect_invalid(st, s.is_null() || bad_xid, &what);
                self.after(si, st);
                let Some(si) = si else { return };
                if bad_xid {
                    return;
                }
                let sm = &mut self.sessions[si];
                match sm.phase {
                    Phase::Active => {
                        sm.end_statement(true);
                        if st == RIPTIDE_OK {
                            sm.phase = Phase::Prepared;
                            sm.xid = Some((fid, g.unwrap_or_default(), b.unwrap_or_default()));
                        } else {
                            sm.finish();
                        }
                    }
                    _ => assert!(
                        !sm.sure || st != RIPTIDE_OK,
                        "{what}: a finished or prepared session prepared"
                    ),
                }
            }
            Op::BeginStatement(p) | Op::EndStatement(p, _) | Op::Savepoint(p, _, _) => {
                self.savepoints(op, &what, *p)
            }
            Op::UnlockRow(session, table, pk, null_released) => {
                let (si, s) = self.session(*session);
                let (inc, t) = self.table(*table);
                let key = self.pk_bytes(*pk, inc);
                let (kp, kl) = Self::pk_arg(*pk, &key);
                let mut released = usize::MAX;
                let out: *mut usize = if null_released.set() {
                    null_mut()
                } else {
                    &mut released
                };
                // SAFETY: handles NULL or live; the key per contract; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_hsession_unlock_row(s, t, kp, kl, out, e)
                });
                Self::expect_invalid(st, s.is_null() || t.is_null() || pk.is_bad(), &what);
                self.after(si, st);
                if st == RIPTIDE_OK && !null_released.set() {
                    assert!(released <= 1, "{what}: released {released}");
                    if let Some(si) = si
                        && !self.sessions[si].read_committed()
                    {
                        assert_eq!(released, 0, "{what}: repeatable read released a lock");
                    }
                }
            }
            Op::LockValue(session, table, index, key) => {
                let (si, s) = self.session(*session);
                let (inc, t) = self.table(*table);
                let index = usize::from(index % 4);
                let ko = key.owned();
                let (kp, kl) = key.arg(&ko);
                // SAFETY: handles NULL or live; the key per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_hsession_lock_value(s, t, index, kp, kl, e)
                });
                let bad_index =
                    inc.is_some_and(|i| index == 0 || index > self.incs[i].layout.secondary());
                Self::expect_invalid(
                    st,
                    s.is_null() || t.is_null() || key.is_bad() || bad_index,
                    &what,
                );
                self.after(si, st);
            }
            Op::CheckTable {
                session,
                table,
                null_fn,
                max,
                nulls,
            } => self.check_table(
                &what,
                *session,
                *table,
                null_fn.set(),
                usize::from(*max % 4),
                rare_bits(*nulls),
            ),
            Op::CursorCreate(table, index, null_out) => {
                if self.cursors.len() >= MAX_CURSORS {
                    return;
                }
                let (inc, t) = self.table(*table);
                let index = usize::from(index % 4);
                let mut c = null_mut();
                let out: *mut *mut riptide_hcursor_t =
                    if null_out.set() { null_mut() } else { &mut c };
                // SAFETY: `t` NULL or live; `out` NULL or writable.
                let st = self.call(&what, |e| unsafe {
                    riptide_hcursor_create(t, index, out, e)
                });
                let bad_index = inc.is_some_and(|i| index > self.incs[i].layout.secondary());
                Self::expect_invalid(st, t.is_null() || null_out.set() || bad_index, &what);
                if st == RIPTIDE_OK {
                    assert!(!c.is_null());
                    if let Some(inc) = inc {
                        self.cursors.push(CursorH {
                            ptr: c,
                            inc,
                            index,
                            mode: RIPTIDE_HCURSOR_SNAPSHOT,
                            keys_only: false,
                        });
                    }
                } else if !null_out.set() {
                    assert!(c.is_null(), "{what}: a failed create left a handle");
                }
            }
            Op::CursorDestroy(p) => {
                if let Some(c) = take(&mut self.cursors, *p) {
                    // SAFETY: live, removed from the list.
                    unsafe { riptide_hcursor_destroy(c.ptr) };
                }
            }
            Op::SetMode(p, mode) => {
                let (ci, c) = self.cursor(*p);
                let mode = pick_enum(*mode, &[0, 1, 2, 3, 4, 5, 6]);
                // SAFETY: NULL or live.
                let st = self.call(&what, |e| unsafe { riptide_hcursor_set_mode(c, mode, e) });
                Self::expect_invalid(st, c.is_null() || !(0..=6).contains(&mode), &what);
                if let Some(ci) = ci
                    && st == RIPTIDE_OK
                {
                    let h = &mut self.cursors[ci];
                    if h.mode != mode {
                        h.mode = mode;
                        h.keys_only = false;
                    }
                }
            }
            Op::SetKeysOnly(session, cursor, want) => {
                let (_, s) = self.session(*session);
                let (ci, c) = self.cursor(*cursor);
                // SAFETY: NULL or live.
                let granted = unsafe { riptide_hcursor_set_keys_only(s, c, *want) };
                match ci {
                    Some(ci) if !s.is_null() => {
                        let h = &mut self.cursors[ci];
                        assert!(
                            !granted
                                || (*want && h.index > 0 && h.mode == RIPTIDE_HCURSOR_SNAPSHOT),
                            "{what}: granted"
                        );
                        h.keys_only = granted;
                    }
                    _ => assert!(!granted, "{what}: granted with a NULL handle"),
                }
            }
            Op::SetRangeEnd(p, tuple, inclusive) => {
                let (_, c) = self.cursor(*p);
                let (to, bad) = opt_tuple(tuple);
                let (tp, tl) = opt_tuple_arg(tuple, &to);
                // SAFETY: `c` NULL or live; the tuple per contract.
                let st = self.call(&what, |e| unsafe {
                    riptide_hcursor_set_range_end(c, tp, tl, *inclusive, e)
                });
                Self::expect_invalid(st, c.is_null() || bad, &what);
            }
            Op::Reset(p) => {
                let (ci, c) = self.cursor(*p);
                // SAFETY: NULL or live.
                unsafe { riptide_hcursor_reset(c) };
                if let Some(ci) = ci {
                    self.cursors[ci].keys_only = false;
                }
            }
            Op::FirstLast(session, cursor, last, null_row) => {
                self.cursor_read(
                    &what,
                    *session,
                    *cursor,
                    null_row.set(),
                    false,
                    |s, c, r, e| {
                        // SAFETY: handles NULL or live; `r` NULL or writable.
                        let st = unsafe {
                            if *last {
                                riptide_hcursor_last(s, c, r, e)
                            } else {
                                riptide_hcursor_first(s, c, r, e)
                            }
                        };
                        (st, None)
                    },
                );
            }
            Op::CursorGet(session, cursor, pk, null_row) => {
                let (ci, _) = self.cursor(*cursor);
                let inc = ci.map(|ci| self.cursors[ci].inc);
                let key = self.pk_bytes(*pk, inc);
                let (kp, kl) = Self::pk_arg(*pk, &key);
                let not_primary = ci.is_some_and(|ci| self.cursors[ci].index != 0);
                let got = self.cursor_read(
                    &what,
                    *session,
                    *cursor,
                    null_row.set(),
                    pk.is_bad() || not_primary,
                    |s, c, r, e| {
                        // SAFETY: handles NULL or live; the key per contract; `r` NULL or
                        // writable.
                        let st = unsafe { riptide_hcursor_get(s, c, kp, kl, r, e) };
                        (st, None)
                    },
                );
                if let (Some(r), Some(k)) = (got, key) {
                    assert_eq!(r.pk, k, "{what}: another key");
                }
            }
            Op::UnlockCurrent(session, cursor) => {
                let (si, s) = self.session(*session);
                let (_, c) = self.cursor(*cursor);
                // SAFETY: handles NULL or live.
                let st = self.call(&what, |e| unsafe {
                    riptide_hcursor_unlock_current(s, c, e)
                });
                Self::expect_invalid(st, s.is_null() || c.is_null(), &what);
                self.after(si, st);
            }
            Op::FinishPrepared(i, commit) => {
                if self.orphans.is_empty() {
                    return;
                }
                let i = usize::from(*i) % self.orphans.len();
                let ((fid, g, b), _) = &self.orphans[i];
                let (gp, gl, bp, bl) = (g.as_ptr().cast(), g.len(), b.as_ptr().cast(), b.len());
                let db = self.db;
                let st = self.call(&what, |e| {
                    // SAFETY: `db` live; the xid parts readable for their lengths.
                    unsafe {
                        if *commit {
                            riptide_commit_prepared(db, *fid, gp, gl, bp, bl, e)
                        } else {
                            riptide_rollback_prepared(db, *fid, gp, gl, bp, bl, e)
                        }
                    }
                });
                let (_, o) = self.orphans.remove(i);
                if st == RIPTIDE_OK && *commit {
                    self.apply(o);
                }
            }
            Op::Calls => {
                let before = riptide_handler_calls();
                // SAFETY: a NULL session is refused.
                let st = self.call(&what, |e| unsafe {
                    riptide_hsession_set_lock_timeout(null_mut(), 0, e)
                });
                assert_eq!(st, RIPTIDE_INVALID_ARGUMENT);
                assert!(
                    riptide_handler_calls() > before,
                    "{what}: a call not counted"
                );
            }
            Op::ToggleErrmsg => self.errmsg_null = !self.errmsg_null,
        }
    }

    /// Frees session `si` and begins a new one of the same isolation in its place.
    fn renew(&mut self, si: usize) {
        let old = std::mem::replace(&mut self.sessions[si].ptr, null_mut());
        // SAFETY: live, replaced in its slot.
        unsafe { riptide_hsession_destroy(old) };
        let (h, iso) = (self.handler, self.sessions[si].isolation);
        let mut s = null_mut();
        // SAFETY: `h` NULL or live; `s` writable.
        let st = self.call("renew", |e| unsafe {
            riptide_hsession_begin(h, iso, 1, &mut s, e)
        });
        if st != RIPTIDE_OK {
            assert!(h.is_null(), "renew: {st:?}");
            self.sessions.remove(si);
            return;
        }
        self.sessions[si] = SessionM::new(s, iso);
    }

    /// Runs one operation on rows and checks what it returned.
    fn row_step(&mut self, op: &RowOp) {
        let what = format!("{op:?}");
        if trace() {
            eprintln!("== {what}");
        }
        match op {
            RowOp::Finish(p, commit, keep) => {
                let (si, s) = self.session(*p);
                let commit = commit % 4 != 3;
                let st = self.call(&what, |e| {
                    // SAFETY: NULL or live.
                    unsafe {
                        if commit {
                            riptide_hsession_commit(s, e)
                        } else {
                            riptide_hsession_rollback(s, e)
                        }
                    }
                });
                Self::expect_invalid(st, s.is_null(), &what);
                let Some(si) = si else { return };
                let sm = &mut self.sessions[si];
                let (phase, sure, overlay) = (sm.phase, sm.sure, std::mem::take(&mut sm.overlay));
                sm.finish();
                match (phase, commit, st) {
                    (Phase::Done, true, _) => {
                        assert!(
                            !sure || st != RIPTIDE_OK,
                            "{what}: a finished session committed"
                        )
                    }
                    (Phase::Active | Phase::Prepared, true, RIPTIDE_OK) => self.apply(overlay),
                    (Phase::Active | Phase::Prepared, true, _) => {
                        // Whether anything of it stayed is not for the model to say.
                        let mut o = overlay;
                        o.forget_all();
                        o.tainted.extend(o.writes.keys().map(|(i, _)| *i));
                        self.apply(o);
                    }
                    (Phase::Prepared, false, st) if st != RIPTIDE_OK => {
                        // It may still be prepared.
                        if let Some(x) = self.sessions[si].xid.clone() {
                            let mut o = overlay;
                            o.forget_all();
                            self.orphans.push((x, o));
                        }
                    }
                    _ => {}
                }
                if !keep.set() {
                    self.renew(si);
                }
            }
            RowOp::Fill {
                session,
                table,
                first,
                count,
                row,
            } => {
                let hidden = self
                    .table(*table)
                    .0
                    .is_some_and(|i| self.incs[i].layout == Layout::Hidden);
                for i in 0..count % 8 {
                    let pk = if hidden {
                        PkArg::Null
                    } else {
                        PkArg::Domain(first.wrapping_add(i) % 128)
                    };
                    let data = RowArg::Data(vec![*row, row.wrapping_add(i), i]);
                    self.insert(
                        &what,
                        *session,
                        *table,
                        pk,
                        &KeysArg::Computed,
                        &data,
                        false,
                        false,
                    );
                }
            }
            RowOp::Insert {
                session,
                table,
                pk,
                keys,
                row,
                null_ref,
                null_dup,
            } => self.insert(
                &what,
                *session,
                *table,
                *pk,
                keys,
                row,
                null_ref.set(),
                null_dup.set(),
            ),
            RowOp::Update {
                session,
                table,
                old_pk,
                new_pk,
                keys,
                row,
                scan,
                null_dup,
            } => self.update(
                &what,
                *session,
                *table,
                *old_pk,
                *new_pk,
                keys,
                row,
                *scan,
                null_dup.set(),
            ),
            RowOp::Delete {
                session,
                table,
                pk,
                keys,
            } => self.delete(&what, *session, *table, *pk, keys),
            RowOp::GetRow {
                session,
                table,
                pk,
                lock,
                nulls,
            } => {
                let (si, s) = self.session(*session);
                let (inc, t) = self.table(*table);
                let lock = pick_enum(*lock, &[0, 1, 2, 3, 4]);
                let key = self.pk_bytes(*pk, inc);
                self.get_row(&what, si, s, inc, t, *pk, key, lock, rare_bits(*nulls));
            }
            RowOp::Seek {
                session,
                cursor,
                tuple,
                how,
                exact,
                null_row,
            } => {
                let how = pick_enum(*how, &[0, 1, 2, 3]);
                let to = tuple.owned();
                let (tp, tl) = tuple.arg(&to);
                let refused = tuple.is_bad() || !(0..4).contains(&how);
                let prefix = to.clone().unwrap_or_default();
                self.cursor_read(
                    &what,
                    *session,
                    *cursor,
                    null_row.set(),
                    refused,
                    |s, c, r, e| {
                        // SAFETY: handles NULL or live; the tuple per contract; `r` NULL or
                        // writable.
                        let st = unsafe { riptide_hcursor_seek(s, c, tp, tl, how, *exact, r, e) };
                        (st, exact.then(|| prefix.clone()))
                    },
                );
            }
            RowOp::Step {
                session,
                cursor,
                forward,
                within,
                null_row,
            } => {
                let (wo, bad) = opt_tuple(within);
                let (wp, wl) = opt_tuple_arg(within, &wo);
                self.cursor_read(
                    &what,
                    *session,
                    *cursor,
                    null_row.set(),
                    bad,
                    |s, c, r, e| {
                        // SAFETY: handles NULL or live; `within` per contract; `r` NULL or
                        // writable.
                        let st = unsafe {
                            if *forward {
                                riptide_hcursor_next(s, c, wp, wl, r, e)
                            } else {
                                riptide_hcursor_prev(s, c, wp, wl, r, e)
                            }
                        };
                        (st, wo.clone())
                    },
                );
            }
            RowOp::Verify(table, cursor) => self.verify(*table, *cursor),
        }
    }

    /// Statements and savepoints.
    fn savepoints(&mut self, op: &Op, what: &str, p: Pick) {
        let (si, s) = self.session(p);
        let st = self.call(what, |e| {
            // SAFETY: NULL or live.
            unsafe {
                match op {
                    Op::BeginStatement(_) => riptide_hsession_begin_statement(s, e),
                    Op::EndStatement(_, ok) => riptide_hsession_end_statement(s, *ok, e),
                    Op::Savepoint(_, how, id) => {
                        let id = u64::from(id % 4);
                        match how % 3 {
                            0 => riptide_hsession_savepoint_set(s, id, e),
                            1 => riptide_hsession_savepoint_rollback(s, id, e),
                            _ => riptide_hsession_savepoint_release(s, id, e),
                        }
                    }
                    _ => RIPTIDE_OK,
                }
            }
        });
        Self::expect_invalid(st, s.is_null(), what);
        self.after(si, st);
        let Some(si) = si else { return };
        let sm = &mut self.sessions[si];
        if sm.phase != Phase::Active {
            return;
        }
        let checked = sm.checked();
        match op {
            Op::BeginStatement(_) if st == RIPTIDE_OK => {
                if sm.statement.is_none() {
                    sm.marks.push((None, sm.overlay.clone()));
                    sm.statement = Some(sm.marks.len());
                }
            }
            Op::EndStatement(_, ok) if st == RIPTIDE_OK => sm.end_statement(*ok),
            Op::Savepoint(_, how, id) => {
                let id = u64::from(id % 4);
                let at = sm.marks.iter().rposition(|(n, _)| *n == Some(id));
                if how % 3 != 0 && at.is_none() && checked {
                    assert_eq!(st, RIPTIDE_NOT_FOUND, "{what}: no such savepoint");
                }
                if st != RIPTIDE_OK {
                    return;
                }
                match (how % 3, at) {
                    (0, _) => sm.marks.push((Some(id), sm.overlay.clone())),
                    (1, Some(at)) => {
                        while sm.marks.len() > at {
                            sm.rollback_top();
                        }
                        sm.marks.push((Some(id), sm.overlay.clone()));
                    }
                    (_, Some(at)) if at + 1 == sm.marks.len() => sm.release_top(),
                    (_, Some(at)) => {
                        sm.marks.remove(at);
                        sm.statement = match sm.statement {
                            Some(d) if d == at + 1 => None,
                            Some(d) if d > at + 1 => Some(d - 1),
                            other => other,
                        };
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The row a write with computed `keys` replaces, as the session reads it first with
    /// an exclusive lock (a handler reads the row before it updates or deletes it), and
    /// whether it was found (`None`: not read, or the read failed). Empty when not found.
    fn old_row(
        &mut self,
        si: Option<usize>,
        t: *const riptide_htable_t,
        pk: &Option<Vec<u8>>,
        keys: &KeysArg,
    ) -> (Vec<u8>, Option<bool>) {
        let (Some(si), Some(pk), false, KeysArg::Computed) = (si, pk, t.is_null(), keys) else {
            return (Vec::new(), None);
        };
        match self.read_old_row(si, t, pk) {
            Some(Some(r)) => (r, Some(true)),
            Some(None) => (Vec::new(), Some(false)),
            None => (Vec::new(), None),
        }
    }

    /// Reads the row `pk` of `t` through session `si` with an exclusive lock: `Some(row or
    /// None)`, or None if the read failed.
    fn read_old_row(
        &mut self,
        si: usize,
        t: *const riptide_htable_t,
        pk: &[u8],
    ) -> Option<Option<Vec<u8>>> {
        let s = self.sessions[si].ptr;
        let mut out = ValueOut::default();
        let (vp, lp, fp) = out.ptrs(0);
        // SAFETY: live handles; `pk` readable; out-parameters writable.
        let st = self.call("read the old row", |e| unsafe {
            riptide_hsession_get_row(
                s,
                t,
                pk.as_ptr().cast(),
                pk.len(),
                RIPTIDE_ROW_LOCK_EXCLUSIVE,
                vp,
                lp,
                fp,
                e,
            )
        });
        let got = out.take(st);
        self.after(Some(si), st);
        (st == RIPTIDE_OK).then_some(got)
    }

    /// After a row write through session `si` into `inc` that was not refused and returned
    /// `st`: checks the index a duplicate names (`dup`, when asked for) and, in a table with
    /// a primary key, that the key the write adds (`added`) is a duplicate exactly when it
    /// exists. Returns the session's writes if the call may have changed them (an active
    /// session); a finished or prepared session must not have written.
    fn written(
        &mut self,
        what: &str,
        si: usize,
        inc: usize,
        st: riptide_status_t,
        dup: Option<usize>,
        added: Option<&[u8]>,
    ) -> Option<&mut Overlay> {
        let layout = self.incs[inc].layout;
        if st == RIPTIDE_DUPLICATE_KEY
            && let Some(dup) = dup
        {
            match layout {
                Layout::Pk => assert!(dup <= 1, "{what}: duplicate in index {dup}"),
                Layout::Hidden => assert_eq!(dup, 1, "{what}: duplicate index"),
            }
        }
        let sm = &self.sessions[si];
        if sm.phase != Phase::Active {
            assert!(
                !sm.sure || st != RIPTIDE_OK,
                "{what}: a finished or prepared session wrote"
            );
            return None;
        }
        if let (true, Layout::Pk, Some(dup), Some(key)) = (sm.checked(), layout, dup, added) {
            match self.current(si, inc, key) {
                Some(Val::Row(_)) => assert!(
                    (st == RIPTIDE_DUPLICATE_KEY && dup == 0) || lock_failure(st),
                    "{what}: an existing primary key gave {st:?} (dup_index {dup})"
                ),
                Some(Val::Absent) => assert!(
                    st != RIPTIDE_DUPLICATE_KEY || dup != 0,
                    "{what}: a missing primary key is a duplicate"
                ),
                _ => {}
            }
        }
        Some(&mut self.sessions[si].overlay)
    }

    /// An insert (a new hidden row id when the table has no primary key and `pk` is empty).
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        what: &str,
        session: Pick,
        table: Pick,
        pk: PkArg,
        keys: &KeysArg,
        row: &RowArg,
        null_ref: bool,
        null_dup: bool,
    ) {
        let (si, s) = self.session(session);
        let (inc, t) = self.table(table);
        let layout = inc.map(|i| self.incs[i].layout);
        let key = self.pk_bytes(pk, inc);
        let (kp, kl) = Self::pk_arg(pk, &key);
        let ro = row.owned();
        let (rp, rl) = row.arg(&ro);
        let row_bytes = ro.clone().unwrap_or_default();
        let ka = KeyArray::new(keys, layout.map_or(2, Layout::secondary), &row_bytes);
        let (ksp, kn) = ka.ptr();
        let mut hidden = [0xa5u8; 8];
        let mut dup = usize::MAX;
        let hp: *mut u8 = if null_ref {
            null_mut()
        } else {
            hidden.as_mut_ptr()
        };
        let dp: *mut usize = if null_dup { null_mut() } else { &mut dup };
        // SAFETY: handles NULL or live; byte strings and keys per contract; `hp` NULL or 8
        // writable bytes; `dp` NULL or writable.
        let st = self.call(what, |e| unsafe {
            riptide_hsession_insert(s, t, kp, kl, ksp, kn, rp, rl, hp, dp, e)
        });
        let refused = s.is_null() || t.is_null() || pk.is_bad() || row.is_bad() || ka.bad;
        Self::expect_invalid(st, refused, what);
        self.after(si, st);
        if pk.too_long(layout) {
            assert_ne!(
                st, RIPTIDE_OK,
                "{what}: a primary key too long for the entries"
            );
            return;
        }
        let (Some(si), Some(inc), Some(key), false) = (si, inc, key, refused) else {
            return;
        };
        let hidden_pk = self.incs[inc].layout == Layout::Hidden;
        let allocate = hidden_pk && key.is_empty();
        let added = (!allocate).then_some(key.as_slice());
        let Some(o) = self.written(what, si, inc, st, (!null_dup).then_some(dup), added) else {
            return;
        };
        match (st, allocate) {
            (RIPTIDE_OK, true) if null_ref => {
                o.wild.insert(inc);
            }
            (RIPTIDE_OK, true) => {
                let id = hidden.to_vec();
                o.writes.insert((inc, id.clone()), Val::Row(row_bytes));
                let m = &mut self.incs[inc];
                assert!(
                    !m.ids.contains(&id),
                    "{what}: row id {id:?} handed out twice"
                );
                m.ids.push(id);
            }
            (RIPTIDE_OK, false) => {
                o.writes.insert((inc, key), Val::Row(row_bytes));
                // An explicit row id may replace a row and its entries.
                if hidden_pk {
                    o.tainted.insert(inc);
                }
            }
            (RIPTIDE_DUPLICATE_KEY, _) => return,
            (_, true) => {
                o.wild.insert(inc);
                o.tainted.insert(inc);
            }
            (_, false) => o.failed(inc, [key]),
        }
        if ka.arbitrary {
            self.sessions[si].overlay.tainted.insert(inc);
        }
    }

    /// An update (with computed keys: of the row as the session reads it first).
    #[allow(clippy::too_many_arguments)]
    fn update(
        &mut self,
        what: &str,
        session: Pick,
        table: Pick,
        old_pk: PkArg,
        new_pk: Option<PkArg>,
        keys: &KeysArg,
        row: &RowArg,
        scan: Pick,
        null_dup: bool,
    ) {
        let (si, s) = self.session(session);
        let (inc, t) = self.table(table);
        let layout = inc.map(|i| self.incs[i].layout);
        let old = self.pk_bytes(old_pk, inc);
        let new_arg = new_pk.unwrap_or(old_pk);
        let new = self.pk_bytes(new_arg, inc);
        let (op, ol) = Self::pk_arg(old_pk, &old);
        let (np, nl) = Self::pk_arg(new_arg, &new);
        let ro = row.owned();
        let (rp, rl) = row.arg(&ro);
        let row_bytes = ro.clone().unwrap_or_default();
        let n = layout.map_or(2, Layout::secondary);
        // The old keys: from the row as the session reads it now. An update of a missing row
        // (which a server never makes) writes the row without its entries when the keys are
        // the same.
        let (old_row, found) = self.old_row(si, t, &old, keys);
        // Both arrays hold the one count passed: a NULL old array's count is what the new
        // one holds.
        let old_keys = KeyArray::new(
            match keys {
                KeysArg::NullData(_) => &KeysArg::Computed,
                k => k,
            },
            n,
            &old_row,
        );
        let new_keys_arg = match keys {
            KeysArg::NullArray(c) => KeysArg::Count(null_array_count(*c) as u8),
            KeysArg::Arbitrary(_) => KeysArg::Computed,
            k => k.clone(),
        };
        let new_keys = KeyArray::new(&new_keys_arg, n, &row_bytes);
        let (okp, kn) = old_keys.ptr();
        let (nkp, _) = new_keys.ptr();
        let (_, c) = self.cursor(scan);
        let mut dup = usize::MAX;
        let dp: *mut usize = if null_dup { null_mut() } else { &mut dup };
        // SAFETY: handles NULL or live; byte strings and keys per contract (both key arrays
        // have `kn` entries, or `old` is NULL with `kn`); `dp` NULL or writable.
        let st = self.call(what, |e| unsafe {
            riptide_hsession_update(s, t, op, ol, okp, np, nl, nkp, kn, rp, rl, c, dp, e)
        });
        let refused = s.is_null()
            || t.is_null()
            || old_pk.is_bad()
            || new_arg.is_bad()
            || row.is_bad()
            || old_keys.bad
            || new_keys.bad;
        Self::expect_invalid(st, refused, what);
        self.after(si, st);
        if old_pk.too_long(layout) || new_arg.too_long(layout) {
            assert_ne!(
                st, RIPTIDE_OK,
                "{what}: a primary key too long for the entries"
            );
            return;
        }
        let (Some(si), Some(inc), Some(old), Some(new), false) = (si, inc, old, new, refused)
        else {
            return;
        };
        let moved = old != new;
        let dup = (!null_dup).then_some(dup);
        let Some(o) = self.written(what, si, inc, st, dup, moved.then_some(new.as_slice())) else {
            return;
        };
        match st {
            RIPTIDE_OK => {
                let taint = old_keys.arbitrary
                    || found != Some(true)
                    || (moved && layout == Some(Layout::Hidden));
                if moved {
                    o.writes.insert((inc, old), Val::Absent);
                }
                o.writes.insert((inc, new), Val::Row(row_bytes));
                if taint {
                    o.tainted.insert(inc);
                }
            }
            RIPTIDE_DUPLICATE_KEY => {}
            _ => o.failed(inc, [old, new]),
        }
    }

    /// A delete; with computed keys, of the row as the session reads it first.
    fn delete(&mut self, what: &str, session: Pick, table: Pick, pk: PkArg, keys: &KeysArg) {
        let (si, s) = self.session(session);
        let (inc, t) = self.table(table);
        let layout = inc.map(|i| self.incs[i].layout);
        let key = self.pk_bytes(pk, inc);
        let (kp, kl) = Self::pk_arg(pk, &key);
        // A missing row has no entries to delete.
        let (old_row, found) = self.old_row(si, t, &key, keys);
        let ka = KeyArray::new(keys, layout.map_or(2, Layout::secondary), &old_row);
        let (ksp, kn) = ka.ptr();
        // SAFETY: handles NULL or live; the key and keys per contract.
        let st = self.call(what, |e| unsafe {
            riptide_hsession_delete(s, t, kp, kl, ksp, kn, e)
        });
        let refused = s.is_null() || t.is_null() || pk.is_bad() || ka.bad;
        Self::expect_invalid(st, refused, what);
        self.after(si, st);
        if pk.too_long(layout) {
            assert_ne!(
                st, RIPTIDE_OK,
                "{what}: a primary key too long for the entries"
            );
            return;
        }
        let (Some(si), Some(inc), Some(key), false) = (si, inc, key, refused) else {
            return;
        };
        let Some(o) = self.written(what, si, inc, st, None, None) else {
            return;
        };
        if st != RIPTIDE_OK {
            o.failed(inc, [key]);
            return;
        }
        o.writes.insert((inc, key), Val::Absent);
        if ka.arbitrary || found.is_none() {
            o.tainted.insert(inc);
        }
    }

    /// A point read: its own writes, and for a read committed or a locking read the newest
    /// committed row.
    #[allow(clippy::too_many_arguments)]
    fn get_row(
        &mut self,
        what: &str,
        si: Option<usize>,
        s: *mut riptide_hsession_t,
        inc: Option<usize>,
        t: *const riptide_htable_t,
        pk: PkArg,
        key: Option<Vec<u8>>,
        lock: i32,
        nulls: u8,
    ) {
        let (kp, kl) = Self::pk_arg(pk, &key);
        let mut out = ValueOut::default();
        let (vp, lp, fp) = out.ptrs(nulls);
        // SAFETY: handles NULL or live; the key per contract; out-parameters NULL or writable.
        let st = self.call(what, |e| unsafe {
            riptide_hsession_get_row(s, t, kp, kl, lock, vp, lp, fp, e)
        });
        let found = out.found();
        let got = out.take(st);
        let refused =
            s.is_null() || t.is_null() || pk.is_bad() || nulls & 7 != 0 || !(0..=4).contains(&lock);
        Self::expect_invalid(st, refused, what);
        self.after(si, st);
        if st == RIPTIDE_BUSY {
            assert!(lock >= 3 && !found, "{what}: busy without skip locked");
        }
        let (Some(si), Some(inc), Some(key)) = (si, inc, key) else {
            return;
        };
        if st != RIPTIDE_OK || !self.sessions[si].checked() {
            return;
        }
        let sm = &self.sessions[si];
        // Its own write; else, for a read committed or a locking read, the newest committed
        // row.
        let expect = match sm.overlay.writes.get(&(inc, key.clone())) {
            Some(Val::Unknown) => None,
            Some(v) => Some(v.clone()),
            None if sm.overlay.wild.contains(&inc) => None,
            None if sm.read_committed() || lock != 0 => self.incs[inc].committed(&key),
            None => None,
        };
        match expect {
            Some(Val::Row(r)) => assert_eq!(got, Some(r), "{what}: the row"),
            Some(Val::Absent) => assert_eq!(got, None, "{what}: a missing row was found"),
            _ => {}
        }
    }

    /// CHECK TABLE through a session: no problem where the session's view of the table is
    /// consistent as far as the model knows.
    fn check_table(
        &mut self,
        what: &str,
        session: Pick,
        table: Pick,
        null_fn: bool,
        max: usize,
        nulls: u8,
    ) {
        let (si, s) = self.session(session);
        let (inc, t) = self.table(table);
        let (st, problems, text, ctx) = self.run_check(what, s, t, null_fn, max, nulls);
        Self::expect_invalid(
            st,
            s.is_null() || t.is_null() || null_fn || nulls & 3 != 0,
            what,
        );
        self.after(si, st);
        if st != RIPTIDE_OK {
            return;
        }
        let (Some(si), Some(inc)) = (si, inc) else {
            return;
        };
        let sm = &self.sessions[si];
        let m = &self.incs[inc];
        let clean_view = if sm.read_committed() {
            !m.tainted
        } else {
            // An older snapshot may see what a range delete removed since.
            !m.ever_tainted && sm.overlay.is_empty()
        };
        if sm.checked() && clean_view && !sm.overlay.tainted.contains(&inc) && ctx.undecodable == 0
        {
            assert_eq!(problems, 0, "{what}: {text:?}");
        }
    }

    /// Runs CHECK TABLE through session `s` on table `t` with the harness's callback (NULL
    /// with `null_fn`) and out-parameters (some NULL per the bits of `nulls`), and checks
    /// the report against the count. Returns the status, the count, the report and what the
    /// callback saw.
    fn run_check(
        &self,
        what: &str,
        s: *mut riptide_hsession_t,
        t: *const riptide_htable_t,
        null_fn: bool,
        max: usize,
        nulls: u8,
    ) -> (riptide_status_t, u64, Option<String>, CheckCtx) {
        let mut ctx = CheckCtx {
            keys: [[0; 2]; 2],
            undecodable: 0,
            wrong_count: false,
        };
        let (mut problems, mut report) = (u64::MAX, null_mut());
        let pp: *mut u64 = if nulls & 1 != 0 {
            null_mut()
        } else {
            &mut problems
        };
        let rp: *mut *mut c_char = if nulls & 2 != 0 {
            null_mut()
        } else {
            &mut report
        };
        let f: riptide_hkeys_fn = if null_fn { None } else { Some(keys_callback) };
        let ctx_p: *mut c_void = (&raw mut ctx).cast();
        // SAFETY: handles NULL or live; the callback honours its contract with `ctx`, which
        // outlives the call; out-parameters NULL or writable.
        let st = self.call(what, |e| unsafe {
            riptide_hsession_check_table(s, t, f, ctx_p, max, pp, rp, e)
        });
        let text = (!report.is_null()).then(|| {
            // SAFETY: a NUL-terminated malloc'd report.
            let text = unsafe { CStr::from_ptr(report) }
                .to_string_lossy()
                .into_owned();
            // SAFETY: freed once.
            unsafe { riptide_free(report.cast()) };
            text
        });
        assert!(
            !ctx.wrong_count,
            "{what}: the callback got a wrong key count"
        );
        if st == RIPTIDE_OK {
            let lines = text.as_deref().map_or(0, |t| t.lines().count());
            assert_eq!(
                lines as u64,
                problems.min(max as u64),
                "{what}: {problems} problems, report {text:?}"
            );
        }
        (st, problems, text, ctx)
    }

    /// A cursor read: checks the status (`refused`: an argument the library must refuse
    /// besides NULL handles), the row, and what the read says it matched (`Some(tuple)`:
    /// the entry starts with it). Returns the row.
    fn cursor_read(
        &mut self,
        what: &str,
        session: Pick,
        cursor: Pick,
        null_row: bool,
        refused: bool,
        f: impl FnOnce(
            *mut riptide_hsession_t,
            *mut riptide_hcursor_t,
            *mut riptide_hrow_t,
            *mut *mut c_char,
        ) -> (riptide_status_t, Option<Vec<u8>>),
    ) -> Option<RowView> {
        let (si, s) = self.session(session);
        let (ci, c) = self.cursor(cursor);
        let mut row = riptide_hrow_t {
            found: true,
            pk: c"x".as_ptr(),
            pk_len: 1,
            key: null(),
            key_len: 7,
            row: null(),
            row_len: 3,
        };
        let rp: *mut riptide_hrow_t = if null_row { null_mut() } else { &mut row };
        let mut prefix = None;
        let st = self.call(what, |e| {
            let (st, p) = f(s, c, rp, e);
            prefix = p;
            st
        });
        Self::expect_invalid(st, s.is_null() || c.is_null() || null_row || refused, what);
        self.after(si, st);
        if null_row {
            return None;
        }
        let r = self.row_view(what, st, &row)?;
        let (Some(si), Some(ci)) = (si, ci) else {
            return Some(r);
        };
        if let Some(p) = prefix {
            let mut entry = r.key.clone();
            entry.extend_from_slice(&r.pk);
            if self.cursors[ci].index > 0 {
                entry.extend_from_slice(&(r.pk.len() as u16).to_be_bytes());
            }
            assert!(
                entry.starts_with(&p),
                "{what}: {r:?} does not start with {p:?}"
            );
        }
        self.check_read(what, si, ci, &r);
        Some(r)
    }

    /// The rows a full scan of cursor `c` through session `s` returns (first, then next
    /// until nothing is found).
    fn scan(
        &self,
        what: &str,
        s: *mut riptide_hsession_t,
        c: *mut riptide_hcursor_t,
    ) -> Vec<RowView> {
        let mut out = Vec::new();
        let mut row = NO_ROW;
        for i in 0..100_000 {
            let st = self.call(what, |e| {
                // SAFETY: live handles; `row` writable.
                unsafe {
                    if i == 0 {
                        riptide_hcursor_first(s, c, &mut row, e)
                    } else {
                        riptide_hcursor_next(s, c, null(), 0, &mut row, e)
                    }
                }
            });
            assert_eq!(st, RIPTIDE_OK, "{what}: scan step {i}");
            match self.row_view(what, st, &row) {
                Some(r) => out.push(r),
                None => return out,
            }
        }
        panic!("{what}: a scan that does not end");
    }

    /// A new cursor over index `index` of the live table `t`.
    fn new_cursor(&self, t: *const riptide_htable_t, index: usize) -> *mut riptide_hcursor_t {
        let mut cur = null_mut();
        // SAFETY: live table; `cur` writable.
        let st = self.call("verify", |e| unsafe {
            riptide_hcursor_create(t, index, &mut cur, e)
        });
        assert_eq!(st, RIPTIDE_OK, "verify: cursor");
        cur
    }

    /// Checks table `t` against the model through a fresh snapshot session: a full scan of
    /// the primary key (through cursor `c` when it is over that index, else a new one) is
    /// the committed rows (unknown ones are learnt from it); each row is found by `get_row`,
    /// a point read and an exact seek; each secondary index has exactly one entry per row
    /// with the row's key (unless tainted); CHECK TABLE finds nothing; the range estimate
    /// counts the rows.
    fn verify(&mut self, t: Pick, c: Pick) {
        let Some((tp, inc)) = pick(&self.tables, t) else {
            return;
        };
        if self.handler.is_null() {
            return;
        }
        let what = "verify";
        let h = self.handler;
        let mut s = null_mut();
        // SAFETY: live handler; `s` writable.
        let st = self.call(what, |e| unsafe {
            riptide_hsession_begin_snapshot(h, RIPTIDE_HISO_REPEATABLE_READ, 1, &mut s, e)
        });
        assert_eq!(st, RIPTIDE_OK, "{what}: begin");
        // SAFETY: live.
        assert!(unsafe { riptide_hsession_has_snapshot(s) });
        let reuse = self
            .cursor(c)
            .0
            .filter(|&ci| self.cursors[ci].inc == inc && self.cursors[ci].index == 0);
        let cur = match reuse {
            Some(ci) => {
                let cur = self.cursors[ci].ptr;
                // SAFETY: live.
                unsafe { riptide_hcursor_reset(cur) };
                // SAFETY: live.
                let st = self.call(what, |e| unsafe {
                    riptide_hcursor_set_mode(cur, RIPTIDE_HCURSOR_SNAPSHOT, e)
                });
                assert_eq!(st, RIPTIDE_OK);
                self.cursors[ci].mode = RIPTIDE_HCURSOR_SNAPSHOT;
                self.cursors[ci].keys_only = false;
                cur
            }
            None => self.new_cursor(tp, 0),
        };
        let scanned = self.scan(what, s, cur);
        let m = &self.incs[inc];
        let mut rows: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for r in &scanned {
            assert!(r.key.is_empty(), "{what}: a key on the primary key");
            let Some(row) = &r.row else {
                panic!("{what}: a primary key row without its bytes");
            };
            if let Some((last, _)) = rows.last_key_value() {
                assert!(*last < r.pk, "{what}: {:?} after {last:?}", r.pk);
            }
            match m.rows.get(&r.pk) {
                Some(Val::Row(want)) => assert_eq!(row, want, "{what}: row {:?}", r.pk),
                Some(_) => {}
                None => assert!(m.wild, "{what}: a row {:?} the model lacks: {row:?}", r.pk),
            }
            rows.insert(r.pk.clone(), row.clone());
        }
        for (pk, v) in &m.rows {
            if matches!(v, Val::Row(_)) {
                assert!(
                    rows.contains_key(pk),
                    "{what}: committed row {pk:?} is missing"
                );
            }
        }
        if trace() {
            eprintln!("{what}: incarnation {inc}: {} rows", rows.len());
        }
        let m = &mut self.incs[inc];
        m.rows = rows
            .iter()
            .map(|(k, v)| (k.clone(), Val::Row(v.clone())))
            .collect();
        m.wild = false;
        let (layout, tainted) = (m.layout, m.tainted);
        if layout == Layout::Hidden {
            for pk in rows.keys() {
                if !m.ids.contains(pk) {
                    m.ids.push(pk.clone());
                }
            }
        }
        // Point reads of every row and of the absent keys of the domain.
        let mut keys: Vec<Vec<u8>> = rows.keys().cloned().collect();
        keys.extend(PK_DOMAIN.iter().map(|k| k.to_vec()));
        for k in &keys {
            let want = rows.get(k);
            let mut out = ValueOut::default();
            let (vp, lp, fp) = out.ptrs(0);
            // SAFETY: live handles; `k` readable; out-parameters writable.
            let st = self.call(what, |e| unsafe {
                riptide_hsession_get_row(
                    s,
                    tp,
                    k.as_ptr().cast(),
                    k.len(),
                    RIPTIDE_ROW_LOCK_NONE,
                    vp,
                    lp,
                    fp,
                    e,
                )
            });
            assert_eq!(st, RIPTIDE_OK, "{what}: get_row");
            assert_eq!(out.take(st).as_ref(), want, "{what}: get_row {k:?}");
            let mut row = NO_ROW;
            // SAFETY: live handles; `k` readable; `row` writable.
            let st = self.call(what, |e| unsafe {
                riptide_hcursor_get(s, cur, k.as_ptr().cast(), k.len(), &mut row, e)
            });
            assert_eq!(st, RIPTIDE_OK, "{what}: cursor get");
            let got = self.row_view(what, st, &row);
            assert_eq!(
                got.as_ref().and_then(|r| r.row.as_ref()),
                want,
                "{what}: cursor get {k:?}"
            );
            // SAFETY: live handles; `k` readable; `row` writable.
            let st = self.call(what, |e| unsafe {
                riptide_hcursor_seek(
                    s,
                    cur,
                    k.as_ptr().cast(),
                    k.len(),
                    RIPTIDE_HSEEK_AT_OR_AFTER,
                    true,
                    &mut row,
                    e,
                )
            });
            assert_eq!(st, RIPTIDE_OK, "{what}: seek");
            match (self.row_view(what, st, &row), want) {
                (Some(r), Some(w)) => {
                    assert_eq!((&r.pk, r.row.as_ref()), (k, Some(w)), "{what}: seek {k:?}")
                }
                (Some(r), None) => assert!(
                    r.pk.starts_with(k) && rows.contains_key(&r.pk),
                    "{what}: an exact seek of {k:?} found {r:?}"
                ),
                (None, Some(_)) => panic!("{what}: an exact seek missed {k:?}"),
                (None, None) => {}
            }
        }
        // The secondary indexes: one entry per row, with the row's key.
        if !tainted {
            for n in 1..=layout.secondary() {
                let sc = self.new_cursor(tp, n);
                let entries = self.scan(what, s, sc);
                // SAFETY: live, not kept.
                unsafe { riptide_hcursor_destroy(sc) };
                let mut seen = BTreeSet::new();
                for r in &entries {
                    let Some(row) = rows.get(&r.pk) else {
                        panic!("{what}: index {n} entry {r:?} has no row");
                    };
                    assert_eq!(r.row.as_ref(), Some(row), "{what}: index {n} row");
                    assert_eq!(
                        r.key,
                        keys_of(row)[n - 1].0,
                        "{what}: index {n} key of {r:?}"
                    );
                    assert!(
                        seen.insert(r.pk.clone()),
                        "{what}: index {n}: two entries of {r:?}"
                    );
                }
                assert_eq!(seen.len(), rows.len(), "{what}: index {n} entries");
            }
        }
        let (st, problems, text, ctx) = self.run_check(what, s, tp, false, 4, 0);
        assert_eq!(st, RIPTIDE_OK, "{what}: check table");
        if !tainted && ctx.undecodable == 0 {
            assert_eq!(problems, 0, "{what}: check table: {text:?}");
        }
        let mut count = u64::MAX;
        // SAFETY: live table; `count` writable.
        let st = self.call(what, |e| unsafe {
            riptide_htable_estimate_range(
                tp,
                0,
                null(),
                0,
                false,
                null(),
                0,
                false,
                1 << 20,
                &mut count,
                e,
            )
        });
        assert_eq!(st, RIPTIDE_OK);
        assert_eq!(count, rows.len() as u64, "{what}: range estimate");
        if reuse.is_none() {
            // SAFETY: live, not kept.
            unsafe { riptide_hcursor_destroy(cur) };
        }
        // SAFETY: live.
        let st = self.call(what, |e| unsafe { riptide_hsession_rollback(s, e) });
        assert_eq!(st, RIPTIDE_OK);
        // SAFETY: live, not used afterwards.
        unsafe { riptide_hsession_destroy(s) };
    }
}

fn run(ops: &[Step]) {
    let dir = temp_dir();
    let opts = riptide_options_create();
    assert!(!opts.is_null());
    let path =
        match std::ffi::CString::new(dir.path().join("db").into_os_string().into_encoded_bytes()) {
            Ok(p) => p,
            Err(e) => panic!("database path: {e}"),
        };
    let mut db = null_mut();
    // SAFETY: live options; NUL-terminated strings; `db` writable; NULL errmsg.
    unsafe {
        set_small_options(opts);
        let (name, on) = (c"create_if_missing", c"ON");
        let st = riptide_options_set_by_name(opts, name.as_ptr(), on.as_ptr(), null_mut());
        assert_eq!(st, RIPTIDE_OK);
        assert_eq!(
            riptide_db_open(path.as_ptr(), opts, &mut db, null_mut()),
            RIPTIDE_OK
        );
        riptide_options_destroy(opts);
    }
    let mut st = State {
        db,
        handler: null_mut(),
        key_format: 0,
        incs: Vec::new(),
        names: BTreeMap::new(),
        tables: Vec::new(),
        cursors: Vec::new(),
        sessions: Vec::new(),
        interrupters: Vec::new(),
        orphans: Vec::new(),
        xids: 0,
        errmsg_null: false,
    };
    // Start with the handler open, a table of each layout and a handle on each, a
    // repeatable read and a read committed session, and a cursor over the first table's
    // primary key.
    for op in [
        Op::HandlerOpen(Rare(0), Rare(0)),
        Op::Create {
            name: NameArg::Name(0),
            specs: SpecArg::Good(Layout::Pk),
            temporary: false,
            autoinc: 0,
            null_handler: Rare(0),
        },
        Op::Create {
            name: NameArg::Name(1),
            specs: SpecArg::Good(Layout::Hidden),
            temporary: false,
            autoinc: 0,
            null_handler: Rare(0),
        },
        Op::OpenTable(NameArg::Name(0), Rare(0)),
        Op::OpenTable(NameArg::Name(1), Rare(0)),
        Op::Begin {
            isolation: 2,
            snapshot: false,
            timeout: 1,
            null_out: Rare(0),
            null_handler: Rare(0),
        },
        Op::Begin {
            isolation: 1,
            snapshot: false,
            timeout: 1,
            null_out: Rare(0),
            null_handler: Rare(0),
        },
        Op::CursorCreate(Pick(1), 0, Rare(0)),
    ] {
        st.step(&op);
    }
    for op in ops {
        match op {
            Step::Row(r) => st.row_step(r),
            Step::Other(o) => st.step(o),
        }
    }
    // A last check of every table handle against the model.
    for i in 0..st.tables.len() {
        st.verify(Pick(i as u8 + 1), Pick(0));
    }
    st.free_all();
    // SAFETY: NULL is a no-op everywhere.
    unsafe {
        riptide_hcursor_destroy(null_mut());
        riptide_hinterrupt_destroy(null_mut());
        riptide_hsession_destroy(null_mut());
        riptide_htable_release(null_mut());
        riptide_handler_destroy(null_mut());
        riptide_hcursor_reset(null_mut());
        riptide_hinterrupt_fire(null());
        riptide_hsession_clear_interrupt(null_mut());
    }
    drop(dir);
}

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        // Pseudo-random steps of a few lengths (xorshift).
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0usize..8)
            .map(|i| {
                let bytes: Vec<u8> = (0..200 * (i % 4 + 1))
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        x as u8
                    })
                    .collect();
                (format!("steps-{i}"), bytes)
            })
            .collect()
    }),
    |data: &[u8]| {
    // Steps until the input is used up (no continuation flags to guess).
    let mut u = Unstructured::new(data);
    let mut ops = Vec::new();
    while !u.is_empty() && ops.len() < MAX_OPS {
        match Step::arbitrary(&mut u) {
            Ok(op) => ops.push(op),
            Err(_) => break,
        }
    }
    run(&ops);
}
);
