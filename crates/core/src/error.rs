//! One error type for all library layers. The variant decides the exit code; the message is one
//! sentence naming the cause and the fix, because that is all a user sees.

/// Why an oltplab command stopped.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input or an unusable environment (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The measured thing failed, e.g. the device returned an I/O error (exit code 1).
    #[error("{0}")]
    Failed(String),
    /// The user pressed Ctrl-C; partial results were saved (exit code 130).
    #[error("interrupted")]
    Interrupted,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// The process exit code for this error: 2 for usage, 1 for a failed measurement, 130 for Ctrl-C.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) => 2,
            Error::Failed(_) => 1,
            Error::Interrupted => 130,
        }
    }
}

/// The text of an OS error number without Rust's "(os error N)" suffix, e.g. "No space left on device".
pub fn strerror(errno: i32) -> String {
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
