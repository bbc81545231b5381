//! Checks every command makes of what the user gave before any simulation starts: where its
//! outputs go, how much work it asks for, and text quoted back to the user.
//!
//! One rule for outputs, the same in every command: a missing parent folder is created, and the
//! file (or folder) must then be writable, or the command stops before it simulates anything,
//! naming the flag and the path. A file that already exists is left as it is until the run
//! writes it.

use anyhow::{bail, Context, Result};
use std::path::Path;

/// Checks that `path` (given with `flag`) can be written as a file: creates its missing parent
/// folders, refuses a folder, and opens it for writing (a file that did not exist is removed
/// again, so a run that fails later leaves nothing behind).
pub(crate) fn output_file(path: &Path, flag: &str) -> Result<()> {
    if path.as_os_str().is_empty() {
        bail!("{flag}: expected a file name, got an empty path");
    }
    if path.is_dir() {
        bail!("{flag} {}: is a folder; expected a file name", path.display());
    }
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).with_context(|| format!("{flag} {}: cannot create the folder {}", path.display(), d.display()))?;
    }
    // (a symbolic link, dangling or not, is there: it is never removed)
    let existed = std::fs::symlink_metadata(path).is_ok();
    std::fs::OpenOptions::new().append(true).create(true).open(path).with_context(|| format!("{flag} {}: cannot write this file", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Checks that `dir` (given with `flag`) can take files: creates it with its missing parents,
/// refuses a file, and writes and removes a probe file in it.
pub(crate) fn output_dir(dir: &Path, flag: &str) -> Result<()> {
    if dir.as_os_str().is_empty() {
        bail!("{flag}: expected a folder name, got an empty path");
    }
    if dir.exists() && !dir.is_dir() {
        bail!("{flag} {}: is a file; expected a folder", dir.display());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("{flag} {}: cannot create this folder", dir.display()))?;
    let probe = dir.join(format!(".mpgpu-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("{flag} {}: cannot write into this folder", dir.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Refuses a command that would run more than `limit` `what` (simulations, points, runs)
/// unless the user raised the limit with `raise` (the flag that sets `limit`).
pub(crate) fn bounded(count: u128, what: &str, limit: u64, raise: &str) -> Result<()> {
    if count > limit as u128 {
        bail!("this would run {count} {what}, more than the limit of {limit}; ask for less, or raise the limit with {raise} N");
    }
    Ok(())
}

/// An error whose text already says it is one, as an assembler's `FILE:LINE:COL: error: ...`
/// lines do: printed as it is, without the command's `error:` prefix.
#[derive(Debug)]
pub(crate) struct Reported(pub String);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Reported {}

/// The most bytes of an assembly file read (the library's largest kernel is a few KB).
pub(crate) const MAX_ASM_BYTES: usize = 16 << 20;

/// The text of the assembly file `path`, read without taking more than [`MAX_ASM_BYTES`]
/// (a larger file, or a device such as /dev/zero, is refused).
pub(crate) fn read_asm(path: &Path) -> Result<String> {
    use mpgpu_ref::files::{read_text, ReadError};
    read_text(path, "an assembly file", MAX_ASM_BYTES).map_err(|e| match e {
        ReadError::Io(e) => anyhow::anyhow!("cannot read {}: {e}", path.display()),
        ReadError::Refused(m) => anyhow::anyhow!("{}: {m}", path.display()),
    })
}

/// Assembles `text` (read from `file`); the assembler's errors as [`Reported`].
pub(crate) fn assemble(file: &Path, text: &str) -> Result<Vec<mpgpu_ref::Kernel>> {
    mpgpu_ref::assemble(&file.display().to_string(), text).map_err(|e| Reported(e.to_string()).into())
}

/// A user's text in a message (cut, invisible characters escaped) and in a table (escaped):
/// the project's one rule, [`mpgpu_ref::text`].
pub(crate) use mpgpu_ref::text::{quoted, shown};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_checked_before_a_run() {
        let base = std::env::temp_dir().join(format!("mpgpu-checks-{}", std::process::id()));
        let f = base.join("new/deeper/r.json");
        output_file(&f, "--json").unwrap();
        assert!(f.parent().unwrap().is_dir() && !f.exists(), "the folder is made, the file not left behind");
        assert!(output_file(&base, "--json").unwrap_err().to_string().contains("is a folder"));
        assert!(output_file(Path::new("/proc/t.csv"), "--timeline").unwrap_err().to_string().contains("--timeline /proc/t.csv: cannot"));
        output_dir(&base.join("d"), "--svg").unwrap();
        assert!(output_dir(&base.join("d"), "--svg").is_ok());
        assert!(output_dir(Path::new("/proc/x"), "--svg").is_err());
        assert!(bounded(10_001, "points", 10_000, "--max-points").unwrap_err().to_string().contains("10001 points"));
        let _ = std::fs::remove_dir_all(&base);
    }
}
