//! The Hive-style partition folders of the Parquet export's samples table. Outside the
//! `parquet` feature's code, so that a build without it still parses `--partition` and
//! can say what is missing.

/// The Hive-style partition folders of the samples table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Partition {
    /// `host=NAME/`: the recording's hostname (HOSTNAME feature).
    pub host: bool,
    /// `date=YYYY-MM-DD/`: the day the recording began (UTC).
    pub date: bool,
}

impl std::str::FromStr for Partition {
    type Err = String;
    /// A comma-separated list of `host` and `date`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut p = Partition::default();
        for key in s.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            match key {
                "host" => p.host = true,
                "date" => p.date = true,
                _ => return Err(format!("unknown partition key {key:?} (keys: host, date)")),
            }
        }
        Ok(p)
    }
}
