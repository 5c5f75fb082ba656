//! The engines compared and their names.

/// The engines compared.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// Riptide (ha_riptide.so).
    Riptide,
    /// InnoDB (built into the server).
    Innodb,
    /// MyRocks (Debian's ha_rocksdb.so).
    #[value(alias = "myrocks")]
    Rocksdb,
}

impl Engine {
    /// The lower-case name: what `ENGINE=` and sysbench's `--mysql-storage-engine` take, and
    /// the name of the engine's folder and of its CSV rows.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Riptide => "riptide",
            Engine::Innodb => "innodb",
            Engine::Rocksdb => "rocksdb",
        }
    }

    /// The name in reports.
    pub fn display(self) -> &'static str {
        match self {
            Engine::Riptide => "Riptide",
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "MyRocks",
        }
    }

    /// The plugin file the server must load, if any.
    pub fn plugin(self) -> Option<&'static str> {
        match self {
            Engine::Riptide => Some("ha_riptide.so"),
            Engine::Innodb => None,
            Engine::Rocksdb => Some("ha_rocksdb.so"),
        }
    }

    /// The name in information_schema.ENGINES.
    pub fn schema_name(self) -> &'static str {
        match self {
            Engine::Riptide => "RIPTIDE",
            Engine::Innodb => "InnoDB",
            Engine::Rocksdb => "ROCKSDB",
        }
    }
}
