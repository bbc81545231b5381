//! A user's file read with a bound (assembly, workload and configuration files, a trace's
//! `trace.json`): a file larger than the bound, a special file such as /dev/zero included, is
//! refused without being read whole.

use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// The file could not be opened or read.
    Io(std::io::Error),
    /// It is larger than the bound, or not UTF-8 text: the message says which, and where.
    Refused(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read: {e}"),
            ReadError::Refused(m) => f.write_str(m),
        }
    }
}

/// The message for text of `len` bytes over the bound `max` of `what` ("a workload file").
pub fn too_large(len: u64, what: &str, max: usize) -> String {
    format!("{len} bytes is too large: {what} holds at most {max} bytes ({} MiB)", max >> 20)
}

/// The bytes of the file at `path`, at most `max`: a regular file is refused by its size
/// before it is read, any other by reading one byte past the bound.
pub fn read_bytes(path: &Path, what: &str, max: usize) -> Result<Vec<u8>, ReadError> {
    let f = std::fs::File::open(path).map_err(ReadError::Io)?;
    if let Ok(m) = f.metadata() {
        if m.is_file() && m.len() > max as u64 {
            return Err(ReadError::Refused(too_large(m.len(), what, max)));
        }
    }
    let mut bytes = Vec::new();
    f.take(max as u64 + 1).read_to_end(&mut bytes).map_err(ReadError::Io)?;
    if bytes.len() > max {
        return Err(ReadError::Refused(format!("more than {max} bytes: {what} holds at most {max} bytes ({} MiB)", max >> 20)));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text; bytes that are not are refused at their line and column.
pub fn read_text(path: &Path, what: &str, max: usize) -> Result<String, ReadError> {
    String::from_utf8(read_bytes(path, what, max)?).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&valid[start..]).chars().count() + 1;
        ReadError::Refused(format!("line {line}, column {col}: not UTF-8 text"))
    })
}
