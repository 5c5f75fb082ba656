//! The schema both databases get: tables covering every column type family, collations
//! (PAD SPACE and NO PAD, binary and case-insensitive), composite, column-prefix, UNIQUE and
//! covering indexes, tables with and without a primary key, AUTO_INCREMENT; and the small
//! value domains their columns draw from (so keys collide, duplicates occur, joins match).

/// The database holding the RIPTIDE tables.
pub const RIP_DB: &str = "rip";
/// The database holding the same tables in InnoDB.
pub const INNO_DB: &str = "inno";

/// The domain of the join keys (`a` columns, `t1.id`): 0 ..= this.
pub const KEY_MAX: i64 = 59;

/// How a column's values are drawn (each variant knows its literals: `crate::values`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// An integer type: usual values `lo ..= hi`, type range `min ..= max` (edges and
    /// out-of-range values are drawn now and then).
    Int {
        /// Smallest usual value.
        lo: i64,
        /// Largest usual value.
        hi: i64,
        /// Smallest value of the type.
        min: i128,
        /// Largest value of the type.
        max: i128,
    },
    /// `DECIMAL(8,2)`.
    Decimal,
    /// `FLOAT` (only values exact in binary: a FLOAT compared with a decimal literal
    /// is otherwise answered differently by an index range and a scan, on any engine).
    Float,
    /// `DOUBLE`.
    Double,
    /// `BIT(6)`.
    Bit,
    /// `DATE`.
    Date,
    /// `TIME`.
    Time,
    /// `DATETIME(2)`.
    Datetime,
    /// `TIMESTAMP(1)`.
    Timestamp,
    /// `YEAR`.
    Year,
    /// `ENUM('x','y','z','w')`.
    Enum,
    /// `SET('p','q','r')`.
    Set,
    /// A character string (CHAR, VARCHAR, TEXT) of at most `len` characters.
    Str {
        /// Its character set is latin1 (else utf8mb4).
        latin1: bool,
        /// Equal values always look the same (a NO PAD binary collation): such a column
        /// may be grouped, DISTINCTed or MIN/MAXed without the answer depending on the plan.
        exact: bool,
        /// Longest value.
        len: usize,
    },
    /// A byte string (BINARY, VARBINARY, BLOB) of at most `len` bytes.
    Bin {
        /// Longest value.
        len: usize,
    },
}

/// One column.
#[derive(Clone, Debug)]
pub struct Column {
    /// Its name (never the name of a table).
    pub name: &'static str,
    /// Its SQL type with character set and collation.
    pub sql: &'static str,
    /// How its values are drawn.
    pub ty: Ty,
    /// `NOT NULL`.
    pub not_null: bool,
    /// `AUTO_INCREMENT`.
    pub auto_inc: bool,
    /// Percentage of NULLs among drawn values (nullable columns).
    pub null_pct: u8,
}

impl Column {
    /// Equal values of this column always look the same, so grouping, DISTINCT, MIN and MAX
    /// over it give the same rows whatever the plan (not so for `_ci` or PAD SPACE
    /// collations: 'a' and 'A ' compare equal and either may come out; nor for YEAR and BIT).
    pub fn exact(&self) -> bool {
        match self.ty {
            Ty::Str { exact, .. } => exact,
            // MIN(yr) of YEAR 0 shows as 0 through an index and 0000 through a temporary
            // table, MIN(bt) of BIT as a number or as bytes: the server's formatting follows
            // the plan, whatever the engine.
            Ty::Year | Ty::Bit => false,
            _ => true,
        }
    }

    /// An integer column.
    pub fn is_int(&self) -> bool {
        matches!(self.ty, Ty::Int { .. })
    }

    /// A character or byte string column.
    pub fn is_string(&self) -> bool {
        matches!(self.ty, Ty::Str { .. } | Ty::Bin { .. })
    }

    /// A string column in a NO PAD collation.
    pub fn is_nopad(&self) -> bool {
        self.is_string() && self.sql.contains("nopad")
    }
}

/// One index.
#[derive(Clone, Debug)]
pub struct Index {
    /// Its name (`PRIMARY` for the primary key).
    pub name: &'static str,
    /// Its parts: column and prefix length.
    pub parts: Vec<(&'static str, Option<u32>)>,
    /// UNIQUE (the primary key too).
    pub unique: bool,
}

impl Index {
    /// The primary key.
    pub fn primary(&self) -> bool {
        self.name == "PRIMARY"
    }

    /// The columns of its parts.
    pub fn columns(&self) -> Vec<&'static str> {
        self.parts.iter().map(|p| p.0).collect()
    }

    /// Every part is a whole column (a covering read can answer from it).
    pub fn whole_columns(&self) -> bool {
        self.parts.iter().all(|p| p.1.is_none())
    }
}

/// One table.
#[derive(Clone, Debug)]
pub struct Table {
    /// Its name.
    pub name: &'static str,
    /// Its columns in order.
    pub columns: Vec<Column>,
    /// Its indexes, the primary key first if it has one.
    pub indexes: Vec<Index>,
    /// Rows the initial load inserts.
    pub initial_rows: usize,
}

impl Table {
    /// The column named `name`.
    pub fn col(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The primary key, if any.
    pub fn pk(&self) -> Option<&Index> {
        self.indexes.iter().find(|i| i.primary())
    }

    /// The primary key's columns (empty without one).
    pub fn pk_columns(&self) -> Vec<&'static str> {
        self.pk().map(Index::columns).unwrap_or_default()
    }

    /// The auto-increment column, if any.
    pub fn auto_inc(&self) -> Option<&Column> {
        self.columns.iter().find(|c| c.auto_inc)
    }

    /// An ORDER BY list (without the keywords) that orders the table's rows totally, as
    /// they look: the primary key; without one, every column (strings by their bytes, so
    /// 'a' and 'A' do not tie), so only identical rows tie. `q` qualifies column names.
    pub fn total_order(&self, q: &str) -> String {
        if self.pk().is_some() {
            return self
                .pk_columns()
                .iter()
                .map(|c| self.order_term(c, q))
                .collect::<Vec<_>>()
                .join(", ");
        }
        self.columns
            .iter()
            .map(|c| {
                if c.is_string() {
                    format!("HEX({q}{})", c.name)
                } else {
                    format!("{q}{}", c.name)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Column `c` (qualified by `q`) as an ORDER BY term. A NO PAD string column is followed
    /// by its bytes: the server's filesort compares NO PAD strings by weights padded with
    /// zero bytes, so '' and CHAR(0) (or 'A' and 'a' + CHAR(0) under `_ci`) tie there and
    /// come out in the order they went in, while an index read gives them in the collation's
    /// order (the shorter first). Which of the two a plan uses is the optimizer's business
    /// (InnoDB reads an index where RIPTIDE, without extended keys, sorts): with the bytes
    /// as a second term both engines sort them one way.
    pub fn order_term(&self, c: &str, q: &str) -> String {
        match self.col(c) {
            Some(col) if col.is_nopad() => format!("{q}{c}, HEX({q}{c})"),
            _ => format!("{q}{c}"),
        }
    }

    /// `CREATE TABLE` for `engine`.
    pub fn ddl(&self, engine: &str) -> String {
        let mut defs: Vec<String> = self
            .columns
            .iter()
            .map(|c| {
                let mut d = format!("  {} {}", c.name, c.sql);
                if c.not_null {
                    d.push_str(" NOT NULL");
                } else if matches!(c.ty, Ty::Timestamp) {
                    d.push_str(" NULL DEFAULT NULL");
                }
                if c.auto_inc {
                    d.push_str(" AUTO_INCREMENT");
                }
                d
            })
            .collect();
        defs.extend(self.indexes.iter().map(|i| {
            let parts = i
                .parts
                .iter()
                .map(|(c, p)| match p {
                    Some(n) => format!("{c}({n})"),
                    None => (*c).to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ");
            if i.primary() {
                format!("  PRIMARY KEY ({parts})")
            } else if i.unique {
                format!("  UNIQUE KEY {} ({parts})", i.name)
            } else {
                format!("  KEY {} ({parts})", i.name)
            }
        }));
        format!(
            "CREATE TABLE {} (\n{}\n) ENGINE={engine} DEFAULT CHARSET=utf8mb4",
            self.name,
            defs.join(",\n")
        )
    }
}

fn int(name: &'static str, sql: &'static str, lo: i64, hi: i64, unsigned: bool) -> Column {
    let bits = match sql.split_whitespace().next().unwrap_or("INT") {
        "TINYINT" => 8,
        "SMALLINT" => 16,
        "MEDIUMINT" => 24,
        "BIGINT" => 64,
        _ => 32,
    };
    let (min, max) = if unsigned {
        (0, (1i128 << bits) - 1)
    } else {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    };
    Column {
        name,
        sql,
        ty: Ty::Int { lo, hi, min, max },
        not_null: false,
        auto_inc: false,
        null_pct: 10,
    }
}

fn col(name: &'static str, sql: &'static str, ty: Ty) -> Column {
    Column {
        name,
        sql,
        ty,
        not_null: false,
        auto_inc: false,
        null_pct: 10,
    }
}

fn s(name: &'static str, sql: &'static str, latin1: bool, exact: bool, len: usize) -> Column {
    col(name, sql, Ty::Str { latin1, exact, len })
}

impl Column {
    fn not_null(mut self) -> Column {
        self.not_null = true;
        self.null_pct = 0;
        self
    }
    fn auto_inc(mut self) -> Column {
        self.auto_inc = true;
        self
    }
    fn nulls(mut self, pct: u8) -> Column {
        self.null_pct = pct;
        self
    }
}

fn key(name: &'static str, parts: &[(&'static str, Option<u32>)]) -> Index {
    Index {
        name,
        parts: parts.to_vec(),
        unique: false,
    }
}

fn unique(name: &'static str, parts: &[(&'static str, Option<u32>)]) -> Index {
    Index {
        name,
        parts: parts.to_vec(),
        unique: true,
    }
}

fn primary(parts: &[(&'static str, Option<u32>)]) -> Index {
    Index {
        name: "PRIMARY",
        parts: parts.to_vec(),
        unique: true,
    }
}

/// The tables of the single-session stream (both databases get all of them).
pub fn tables() -> Vec<Table> {
    vec![
        // Integers and the other numeric families; primary key = the join domain.
        Table {
            name: "t1",
            columns: vec![
                int("id", "INT", 0, KEY_MAX, false).not_null(),
                int("a", "INT", 0, KEY_MAX, false),
                int("ti", "TINYINT", -3, 12, false),
                int("tu", "TINYINT UNSIGNED", 0, 12, true),
                int("si", "SMALLINT", -3, 12, false),
                int("su", "SMALLINT UNSIGNED", 0, 12, true),
                int("mi", "MEDIUMINT", -3, 12, false),
                int("mu", "MEDIUMINT UNSIGNED", 0, 12, true),
                int("i", "INT", -3, 12, false),
                int("bi", "BIGINT", -3, 12, false),
                int("bu", "BIGINT UNSIGNED", 0, 40, true).nulls(40),
                col("d", "DECIMAL(8,2)", Ty::Decimal),
                col("f", "FLOAT", Ty::Float),
                col("db", "DOUBLE", Ty::Double),
                col("bt", "BIT(6)", Ty::Bit),
            ],
            indexes: vec![
                primary(&[("id", None)]),
                key("k_a", &[("a", None)]),
                key("k_ti", &[("ti", None)]),
                key("k_si_mi", &[("si", None), ("mi", None)]),
                unique("u_bu", &[("bu", None)]),
                key("k_d", &[("d", None)]),
                key("k_tu_su_mu", &[("tu", None), ("su", None), ("mu", None)]),
                key("k_bi_i", &[("bi", None), ("i", None)]),
                key("k_f", &[("f", None)]),
                key("k_db", &[("db", None)]),
                key("k_bt", &[("bt", None)]),
            ],
            initial_rows: 30,
        },
        // Temporal types, ENUM and SET; AUTO_INCREMENT primary key.
        Table {
            name: "t2",
            columns: vec![
                int("id", "INT UNSIGNED", 1, 80, true).not_null().auto_inc(),
                int("a", "INT", 0, KEY_MAX, false),
                col("dt", "DATE", Ty::Date),
                col("tm", "TIME", Ty::Time),
                col("dtm", "DATETIME(2)", Ty::Datetime).nulls(30),
                col("ts", "TIMESTAMP(1)", Ty::Timestamp),
                col("yr", "YEAR", Ty::Year),
                col("e", "ENUM('x','y','z','w')", Ty::Enum),
                col("st", "SET('p','q','r')", Ty::Set),
            ],
            indexes: vec![
                primary(&[("id", None)]),
                key("k_a", &[("a", None)]),
                key("k_dt_tm", &[("dt", None), ("tm", None)]),
                unique("u_dtm", &[("dtm", None)]),
                key("k_ts", &[("ts", None)]),
                key("k_yr", &[("yr", None)]),
                key("k_e_a", &[("e", None), ("a", None)]),
                key("k_st", &[("st", None)]),
            ],
            initial_rows: 30,
        },
        // Strings in every kind of collation; composite primary key on a _ci VARCHAR.
        Table {
            name: "t3",
            columns: vec![
                s(
                    "name",
                    "VARCHAR(12) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                    false,
                    false,
                    12,
                )
                .not_null(),
                int("n", "INT", 0, 9, false).not_null(),
                s(
                    "nb",
                    "VARCHAR(12) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
                    false,
                    true,
                    12,
                )
                .nulls(30),
                s(
                    "gn",
                    "VARCHAR(12) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci",
                    false,
                    false,
                    12,
                ),
                s(
                    "l1",
                    "VARCHAR(12) CHARACTER SET latin1 COLLATE latin1_nopad_bin",
                    true,
                    true,
                    12,
                )
                .nulls(30),
                s(
                    "ch",
                    "CHAR(6) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
                    false,
                    false,
                    6,
                ),
                s(
                    "lc",
                    "VARCHAR(12) CHARACTER SET latin1 COLLATE latin1_swedish_ci",
                    true,
                    false,
                    12,
                ),
                s(
                    "b8",
                    "VARCHAR(12) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
                    false,
                    false,
                    12,
                ),
                col("vb", "VARBINARY(12)", Ty::Bin { len: 12 }),
                col("bn", "BINARY(4)", Ty::Bin { len: 4 }),
                s(
                    "tx",
                    "TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                    false,
                    false,
                    600,
                ),
                col("bl", "BLOB", Ty::Bin { len: 600 }),
            ],
            indexes: vec![
                primary(&[("name", None), ("n", None)]),
                unique("u_nb", &[("nb", None)]),
                key("k_gn", &[("gn", None)]),
                unique("u_l1", &[("l1", None)]),
                key("k_ch_n", &[("ch", None), ("n", None)]),
                key("k_lc", &[("lc", None)]),
                unique("u_b8p_n", &[("b8", Some(3)), ("n", None)]),
                key("k_vb", &[("vb", None)]),
                key("k_bn", &[("bn", None)]),
                key("k_tx", &[("tx", Some(3))]),
                key("k_bl", &[("bl", Some(2))]),
                key("k_namep", &[("name", Some(2))]),
                key("k_n", &[("n", None)]),
            ],
            initial_rows: 30,
        },
        // No primary key (hidden row ids): duplicate rows are possible.
        Table {
            name: "t4",
            columns: vec![
                int("a", "INT", 0, KEY_MAX, false),
                s(
                    "b",
                    "VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
                    false,
                    false,
                    10,
                ),
                int("c", "BIGINT UNSIGNED", 0, 40, true).nulls(40),
                col("d", "DATE", Ty::Date),
                s(
                    "e",
                    "VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
                    false,
                    true,
                    10,
                ),
            ],
            indexes: vec![
                key("k_a", &[("a", None)]),
                key("k_b_a", &[("b", None), ("a", None)]),
                unique("u_c", &[("c", None)]),
                key("k_d", &[("d", None)]),
                key("k_e", &[("e", None)]),
            ],
            initial_rows: 30,
        },
        // AUTO_INCREMENT BIGINT primary key, composite UNIQUE on the join domain.
        Table {
            name: "t5",
            columns: vec![
                int("id", "BIGINT UNSIGNED", 1, 80, true)
                    .not_null()
                    .auto_inc(),
                int("a", "INT", 0, KEY_MAX, false).not_null(),
                int("b", "INT", 0, 9, false),
                s(
                    "v",
                    "VARCHAR(10) CHARACTER SET latin1 COLLATE latin1_swedish_ci",
                    true,
                    false,
                    10,
                ),
                int("w", "INT", -3, 12, false),
            ],
            indexes: vec![
                primary(&[("id", None)]),
                unique("u_a_b", &[("a", None), ("b", None)]),
                key("k_b", &[("b", None)]),
                key("k_v_w", &[("v", None), ("w", None)]),
            ],
            initial_rows: 30,
        },
        // Composite primary key (INT, binary-collated VARCHAR); covering secondary indexes.
        Table {
            name: "t6",
            columns: vec![
                int("a", "INT", 0, KEY_MAX, false).not_null(),
                s(
                    "b",
                    "VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin",
                    false,
                    true,
                    8,
                )
                .not_null(),
                int("c", "INT", -3, 12, false),
                col("d", "DECIMAL(8,2)", Ty::Decimal),
                col("e", "DATETIME(2)", Ty::Datetime),
                int("g", "SMALLINT UNSIGNED", 0, 12, true),
            ],
            indexes: vec![
                primary(&[("a", None), ("b", None)]),
                key("k_c_d", &[("c", None), ("d", None)]),
                key("k_e", &[("e", None)]),
                key("k_g_c", &[("g", None), ("c", None)]),
                key("k_b", &[("b", None)]),
            ],
            initial_rows: 30,
        },
    ]
}

/// Pairs of columns that join sensibly (same type family, same collation, shared domain):
/// `(table, column, table, column)`. Every right-hand column leads an index (or is the
/// primary key), so the right side can be read by `eq_ref` or `ref`.
pub const JOINS: &[(&str, &str, &str, &str)] = &[
    ("t2", "a", "t1", "id"),
    ("t4", "a", "t1", "id"),
    ("t5", "a", "t1", "id"),
    ("t6", "a", "t1", "id"),
    ("t1", "id", "t2", "a"),
    ("t1", "a", "t2", "a"),
    ("t1", "id", "t4", "a"),
    ("t1", "id", "t5", "a"),
    ("t1", "a", "t6", "a"),
    ("t1", "ti", "t3", "n"),
    ("t3", "n", "t5", "b"),
    ("t5", "b", "t3", "n"),
    ("t4", "b", "t3", "name"),
    ("t3", "name", "t4", "b"),
    ("t2", "a", "t5", "a"),
    ("t5", "a", "t4", "a"),
    ("t6", "c", "t1", "ti"),
    ("t1", "si", "t6", "c"),
    ("t3", "nb", "t4", "e"),
    ("t4", "e", "t6", "b"),
    ("t6", "g", "t1", "tu"),
];

/// The table of the two-session schedules (`crate::concurrent`), reset before each one.
pub const CONC_TABLE: &str = "c1";

/// `CREATE TABLE` of the schedules' table for `engine`.
pub fn conc_ddl(engine: &str) -> String {
    format!(
        "CREATE TABLE {CONC_TABLE} (\n  id INT NOT NULL,\n  u INT,\n  k INT,\n  v INT,\n  \
         s VARCHAR(8) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_nopad_ci,\n  \
         PRIMARY KEY (id),\n  UNIQUE KEY cu (u),\n  KEY ck (k),\n  UNIQUE KEY cs (s)\n) \
         ENGINE={engine} DEFAULT CHARSET=utf8mb4"
    )
}
